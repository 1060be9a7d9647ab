//! The files of a parallel job whose ranks share the capture folder
//! (`job.json`, `instances/rank-<R>.json`): written by each rank's
//! xpu-asm-run (`crate::run::job`), read by `merge` and by collection.

use super::files::write_atomic;
use super::layout::{CollectError, INSTANCES_DIR, JOB_FILE};
use super::run::Exit;
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `DIR/job.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobFile {
    pub schema: u32,
    pub launcher: String,
    /// The launcher's job id; null for Hydra, which gives none.
    pub id: Option<String>,
    pub size: Option<u32>,
    pub started_unix: u64,
}

/// `DIR/instances/rank-<R>.json`: one rank's xpu-asm-run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    pub schema: u32,
    pub rank: u32,
    pub local_rank: Option<u32>,
    pub host: String,
    pub command: Vec<String>,
    /// The command's pid.
    pub pid: Option<u32>,
    /// `running`, `ended` or `not-started`.
    pub state: String,
    pub exit: Option<Exit>,
    pub error: Option<String>,
    /// As `run.json`'s: processes whose record could be written nowhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<super::run::Notice>,
    #[serde(default, skip_serializing_if = "super::run::is_zero")]
    pub notices_refused: u64,
}

pub fn instance_path(dir: &Path, rank: u32) -> PathBuf {
    dir.join(INSTANCES_DIR).join(format!("rank-{rank:06}.json"))
}

pub fn read_job(dir: &Path) -> Option<JobFile> {
    let bytes = std::fs::read(dir.join(JOB_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Every instance file of `dir`, by rank.
pub fn instances(dir: &Path) -> Vec<Instance> {
    let Ok(rd) = std::fs::read_dir(dir.join(INSTANCES_DIR)) else {
        return Vec::new();
    };
    let mut v: Vec<Instance> = rd
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name();
            let n = n.as_bytes();
            n.starts_with(b"rank-") && n.ends_with(b".json")
        })
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    v.sort_by_key(|i| i.rank);
    v
}

/// Writes this rank's instance file (replacing it whole).
pub fn write_instance(dir: &Path, inst: &Instance) -> Result<(), CollectError> {
    let mut json = serde_json::to_vec_pretty(inst).unwrap_or_default();
    json.push(b'\n');
    write_atomic(&instance_path(dir, inst.rank), &json)
}
