//! The capture folder's layout: the name of everything in it, how to tell
//! a folder is a capture, and what can go wrong with one.
//!
//! A capture folder holds:
//!
//! * `run.json`: the command and how it ended ([`super::run::RunInfo`]);
//! * `records/`: what the interposer recorded per process;
//! * `dumps/<host>-<pid>-<token>/`: IGC's dumps per process;
//! * `modules/<sha256>.bin`: each module's GPU binary, once per content;
//! * `isa/<sha256>/`: kernels disassembled from those binaries;
//! * `job.json`, `instances/`: the parallel job whose ranks share the
//!   folder, one file per rank ([`super::job`]); `merged.json`: the
//!   captures `merge` brought together ([`super::merged`]);
//! * `report.json`: the report;
//! * `asm/`: a readable copy of each launched kernel's ISA;
//! * `collect.json`: facts the first collection read from dump files it then
//!   pruned (dump sizes before pruning, which attempt IGC kept), so that a
//!   later `collect` reports the same ([`super::state`]).

use std::path::{Path, PathBuf};

/// File names inside a capture folder.
pub const RUN_FILE: &str = "run.json";
pub const REPORT_FILE: &str = "report.json";
pub const STATE_FILE: &str = "collect.json";
pub const ASM_DIR: &str = "asm";

/// Folder of the capture where disassembled kernels are written.
pub const ISA_DIR: &str = "isa";

/// The job a capture folder belongs to.
pub const JOB_FILE: &str = "job.json";
/// One file per rank, and the collector's claim.
pub const INSTANCES_DIR: &str = "instances";

/// The inputs of a merged capture.
pub const MERGED_FILE: &str = "merged.json";

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("{0}: no such folder")]
    NotFound(PathBuf),
    #[error(
        "{0} is a file, not a capture folder; give the folder that `xpu-asm-run -o DIR` wrote{1}"
    )]
    NotAFolder(PathBuf, String),
    #[error(
        "{0} is not an xpu-asm capture (it has no {marks}); give the folder that \
         `xpu-asm-run -o DIR` wrote",
        marks = capture_marks()
    )]
    NotACapture(PathBuf),
    #[error("interrupted; {0} is intact: run `xpu-asm-run collect {0}` to finish the report")]
    Interrupted(PathBuf),
    /// A capture folder another user owns or can write: its records may
    /// be theirs (docs/limits.md, "Security").
    #[error(
        "{path} {why}: its records could be another user's, and collecting writes into it. \
         Copy the capture to a folder only you can write (cp -r {path} DIR) and collect that, \
         or, if it is yours, `chmod go-w {path}`"
    )]
    NotYours { path: PathBuf, why: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Raised when the user asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// The files that make a folder a capture, beside `records/`.
const CAPTURE_FILES: [&str; 3] = [JOB_FILE, REPORT_FILE, RUN_FILE];

/// What makes a folder a capture, as `-o`'s help and the refusals say it:
/// `records/, job.json, report.json or run.json`.
pub fn capture_marks() -> String {
    let mut marks = vec![format!("{}/", xpu_asm_record::RECORDS_DIR)];
    marks.extend(CAPTURE_FILES.iter().map(|f| f.to_string()));
    let last = marks.pop().unwrap_or_default();
    format!("{} or {last}", marks.join(", "))
}

/// Entries of a capture that `--force` deletes (`job.json` first: ranks
/// of a new job wait until the folder is empty).
pub const CAPTURE_ENTRIES: [&str; 10] = [
    JOB_FILE,
    INSTANCES_DIR,
    xpu_asm_record::RECORDS_DIR,
    xpu_asm_record::DUMPS_DIR,
    xpu_asm_record::MODULES_DIR,
    ISA_DIR,
    ASM_DIR,
    RUN_FILE,
    REPORT_FILE,
    STATE_FILE,
];

/// The entries `--force` deletes, as its help and docs/usage.md name them
/// (`job.json instances/ records/ ...`, folders with a `/`).
pub fn force_entries() -> String {
    let dirs = [
        INSTANCES_DIR,
        xpu_asm_record::RECORDS_DIR,
        xpu_asm_record::DUMPS_DIR,
        xpu_asm_record::MODULES_DIR,
        ISA_DIR,
        ASM_DIR,
    ];
    CAPTURE_ENTRIES
        .iter()
        .map(|e| match dirs.contains(e) {
            true => format!("{e}/"),
            false => e.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--force`'s long help, from [`CAPTURE_ENTRIES`].
pub fn force_help() -> String {
    format!(
        "Reuse the earlier capture given with -o: its {} are deleted first (other files are \
         left alone, and so is an interposer written into the folder)",
        force_entries()
    )
}

/// `-o`'s long help, with what makes a folder a capture.
pub fn out_help() -> String {
    format!(
        "Capture folder [default: ./xpu-asm-<command>-<YYYYmmdd-HHMMSS>]\n\nIt must not exist, \
         or be empty. An earlier capture (a folder with {}) is reused only with --force; any \
         other non-empty folder is refused. One instance per rank of a parallel job: required, \
         the same for every rank (on a filesystem all hosts share).",
        capture_marks()
    )
}

/// True when `dir` holds an earlier capture.
pub fn is_capture(dir: &Path) -> bool {
    dir.join(xpu_asm_record::RECORDS_DIR).is_dir()
        || CAPTURE_FILES.iter().any(|f| dir.join(f).is_file())
}

/// Whether an entry named `name` (a folder when `is_dir`) is one of those
/// that make its folder a capture, as [`is_capture`] looks for them: for
/// a listing of the folder, read in one go.
pub fn marks_capture(name: &[u8], is_dir: bool) -> bool {
    if name == xpu_asm_record::RECORDS_DIR.as_bytes() {
        is_dir
    } else {
        !is_dir && CAPTURE_FILES.iter().any(|f| name == f.as_bytes())
    }
}

/// For a capture folder given as the file `file`: where the folder to
/// give instead is (`: here DIR, which holds it`) when the file is a
/// capture's own (`DIR/report.json`), else nothing.
pub fn folder_instead_of(file: &Path) -> String {
    let parent = file.parent().filter(|p| is_capture(p));
    parent.map_or(String::new(), |p| {
        let shown = match p.as_os_str().is_empty() {
            true => ".".to_string(),
            false => p.display().to_string(),
        };
        format!(": here {shown}, which holds it")
    })
}

pub(crate) fn strip_dir(dir: &Path, s: &str) -> String {
    let prefix = format!("{}/", dir.display());
    s.replace(&prefix, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--force`'s and `-o`'s help and docs/usage.md name the same entries,
    /// those that `--force` deletes and those that make a capture.
    #[test]
    fn the_docs_name_what_force_deletes_as_the_help_does() {
        let usage = include_str!("../../../docs/usage.md").replace("\n  ", " ");
        let (entries, marks) = (force_entries(), capture_marks());
        assert_eq!(
            entries,
            "job.json instances/ records/ dumps/ modules/ isa/ asm/ run.json report.json collect.json"
        );
        assert_eq!(marks, "records/, job.json, report.json or run.json");
        assert!(
            usage.contains(&format!("deletes its `{entries}`")),
            "usage.md"
        );
        assert!(
            usage.contains(&format!("(a folder with {marks})")),
            "usage.md"
        );
        assert!(force_help().contains(&entries) && out_help().contains(&marks));
    }
}
