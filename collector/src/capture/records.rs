//! What was recorded: the per-process records the interposer wrote
//! (`records/`).

use super::layout::strip_dir;
use rayon::prelude::*;
use std::path::Path;
use xpu_asm_record::read::ProcessRecord;

/// Every process record of the capture `dir`, sorted by host and pid;
/// problems met go to `warnings`.
pub fn read_records(dir: &Path, warnings: &mut Vec<String>) -> Vec<ProcessRecord> {
    let records_dir = dir.join(xpu_asm_record::RECORDS_DIR);
    let mut recs: Vec<ProcessRecord> = if records_dir.is_dir() {
        // Each process's record on a core of its own (a job has hundreds).
        match xpu_asm_record::read::events_paths(&records_dir) {
            Ok(paths) => paths
                .par_iter()
                .map(|p| xpu_asm_record::read::read_process(p))
                .collect(),
            Err(e) => {
                warnings.push(strip_dir(dir, &e));
                Vec::new()
            }
        }
    } else {
        warnings.push(format!(
            "no {}/ folder: nothing was recorded",
            xpu_asm_record::RECORDS_DIR
        ));
        Vec::new()
    };
    for r in &recs {
        warnings.extend(r.warnings.iter().map(|w| strip_dir(dir, w)));
    }
    // A record without a readable header has no process to speak of.
    recs.retain(|r| r.pid != 0 || !r.host.is_empty());
    recs.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    recs
}
