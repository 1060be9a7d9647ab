//! `merged.json`: the captures `merge` brought into one ([`Merged`]).

use super::job::JobFile;
use super::layout::MERGED_FILE;
use super::run::{Exit, RunInfo};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedInput {
    pub path: String,
    pub run: Option<RunInfo>,
    pub job: Option<JobFile>,
    pub records: u64,
    pub dump_folders: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Merged {
    pub schema: u32,
    pub inputs: Vec<MergedInput>,
    /// Names changed because another input had the same name.
    pub renamed: Vec<String>,
}

/// The single runs among a merged capture's inputs: `(host, pid, exit)` of
/// each command an xpu-asm-run waited for.
pub fn waited(dir: &Path) -> Vec<(String, u32, Exit)> {
    let Some(m) = std::fs::read(dir.join(MERGED_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice::<Merged>(&b).ok())
    else {
        return Vec::new();
    };
    m.inputs
        .into_iter()
        .filter_map(|i| {
            let r = i.run?;
            Some((r.host?, r.pid?, r.exit?))
        })
        .collect()
}
