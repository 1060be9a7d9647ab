//! Stage 1 of a collection: what was recorded. The per-process records the
//! interposer wrote (`records/`), `run.json` (the command and how it ended)
//! and `collect.json` (what an earlier collection learned).

use crate::output::CollectState;
use crate::{strip_dir, STATE_FILE};
use std::path::Path;
use xpu_asm_record::read::ProcessRecord;

/// Every process record of the capture `dir`, sorted by host and pid;
/// problems met go to `warnings`.
pub fn read_records(dir: &Path, warnings: &mut Vec<String>) -> Vec<ProcessRecord> {
    let records_dir = dir.join(xpu_asm_record::RECORDS_DIR);
    let mut recs: Vec<ProcessRecord> = if records_dir.is_dir() {
        match xpu_asm_record::read::read_dir(&records_dir) {
            Ok(r) => r,
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

/// `collect.json` of an earlier collection, or nothing learned yet.
pub fn read_state(dir: &Path, warnings: &mut Vec<String>) -> CollectState {
    match std::fs::read(dir.join(STATE_FILE)) {
        Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|e| {
            warnings.push(format!(
                "{STATE_FILE}: unreadable ({e}); rebuilt from the dumps"
            ));
            CollectState::default()
        }),
        Err(_) => CollectState::default(),
    }
}
