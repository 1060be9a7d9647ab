//! The capture folder: its layout ([`layout`]), how its files are written
//! ([`files`]), and the files xpu-asm-run writes there besides the report:
//! `run.json` ([`run`]), a job's `job.json` and rank files ([`job`]),
//! `merged.json` ([`merged`]), `collect.json` ([`state`]), the folders of
//! modules compiled again for their source lines ([`rebuilt`]); and reading the
//! interposer's records ([`records`]); whether a folder or file is the
//! user's ([`trust`]).

pub mod files;
pub mod job;
pub mod layout;
pub mod merged;
pub mod rebuilt;
pub mod records;
pub mod run;
pub mod staged;
pub mod state;
pub mod trust;

use run::Exit;
use std::path::Path;

/// `(host, pid, exit)` of each command an instance waited for: how those
/// processes ended, as their parents saw it.
pub fn waited(dir: &Path) -> Vec<(String, u32, Exit)> {
    let mut v: Vec<(String, u32, Exit)> = job::instances(dir)
        .into_iter()
        .filter_map(|i| Some((i.host, i.pid?, i.exit?)))
        .collect();
    v.extend(merged::waited(dir));
    v
}
