//! What was recorded: the per-process records the interposer wrote
//! (`records/`), with what processes kept in the staging folder
//! ([`staged`](super::staged)), and whether each one's counts are whole.

use super::layout::strip_dir;
use super::staged::{self, Staged};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_record::CHUNK_SLOTS;

/// Every process record of the capture `dir`, sorted by host and pid;
/// problems met go to `warnings`. What processes staged is written into
/// the capture first (those that ended), or read where it is.
pub fn read_records(dir: &Path, warnings: &mut Vec<String>) -> Vec<ProcessRecord> {
    let found = staged::find(dir, warnings);
    let adopted = staged::adopt(found, warnings);
    let left = adopted.left;
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
    } else if left.is_empty() {
        warnings.push(format!(
            "no {}/ folder: nothing was recorded",
            xpu_asm_record::RECORDS_DIR
        ));
        Vec::new()
    } else {
        Vec::new()
    };
    // The chunks written from staging into the counts file count as read.
    let mut read: Vec<BTreeSet<u32>> = recs
        .iter()
        .map(|r| {
            adopted
                .written
                .iter()
                .filter(|(events, _)| same_record(events, &r.events_path))
                .flat_map(|(_, chunks)| chunks.iter().copied())
                .collect()
        })
        .collect();
    for s in &left {
        let (rec, chunks) = staged_into(&mut recs, &mut read, s);
        chunks.extend(staged::overlay(rec, s));
    }
    for (r, chunks) in recs.iter_mut().zip(&read) {
        judge_counts(r, chunks);
    }
    for r in &recs {
        warnings.extend(r.warnings.iter().map(|w| strip_dir(dir, w)));
        for n in &r.notes {
            warnings.push(format!("process {} on {}: {n}", r.pid, r.host));
        }
    }
    // A record without a readable header has no process to speak of.
    recs.retain(|r| r.pid != 0 || !r.host.is_empty());
    recs.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    recs
}

/// The record `s` belongs to (a new one when the capture has none of it),
/// and the set of its chunks read from staging.
fn staged_into<'a>(
    recs: &'a mut Vec<ProcessRecord>,
    read: &'a mut Vec<BTreeSet<u32>>,
    s: &Staged,
) -> (&'a mut ProcessRecord, &'a mut BTreeSet<u32>) {
    let i = match recs
        .iter()
        .position(|r| same_record(&r.events_path, &s.owner.events))
    {
        Some(i) => i,
        None => {
            recs.push(ProcessRecord {
                events_path: s.owner.events.clone(),
                ..Default::default()
            });
            read.push(BTreeSet::new());
            recs.len() - 1
        }
    };
    (&mut recs[i], &mut read[i])
}

/// Whether two paths of events files name one record (their names are
/// unique: host, pid and token), however the capture folder is spelled.
fn same_record(a: &Path, b: &Path) -> bool {
    a.file_name() == b.file_name()
}

/// Whether `r`'s counts are whole, and which kernels' are not: a chunk of
/// counters kept out of the counts file and not found (in memory when the
/// process ended without exit; staged, and the staged file is gone), a
/// process that still runs, launches of kernels whose events were lost, a
/// counts file that cannot be read. `staged_read`: the chunks read from
/// the staging folder.
fn judge_counts(r: &mut ProcessRecord, staged_read: &BTreeSet<u32>) {
    let mut why = Vec::new();
    if let Some(m) = &r.counts_missing {
        why.push(m.clone());
    }
    let mut lost = BTreeSet::new();
    for (c, p) in &r.counts_places {
        let gone = match p.place.as_str() {
            "memory" => Some(format!(
                "the counts of kernels {}-{} were kept in memory ({}) and never reached the capture",
                *c as usize * CHUNK_SLOTS,
                (*c as usize + 1) * CHUNK_SLOTS - 1,
                p.reason
            )),
            "staged" if !staged_read.contains(c) => Some(format!(
                "the counts of kernels {}-{} were kept in node-local memory on {} ({}) and are not there any more",
                *c as usize * CHUNK_SLOTS,
                (*c as usize + 1) * CHUNK_SLOTS - 1,
                r.host,
                p.reason
            )),
            _ => None,
        };
        if let Some(g) = gone {
            why.push(g);
            lost.insert(*c);
        }
    }
    let running = r.host == xpu_asm_record::host_name()
        && r.pid != 0
        && !r.exited
        && staged::still_running(r.pid, r.start_ticks)
        && r.start_ticks.is_some();
    if running {
        why.push("it was still running when collected".into());
    }
    if r.unattributed_launches > 0 {
        why.push(format!(
            "{} launches of kernels whose creation events were lost",
            r.unattributed_launches
        ));
    }
    let whole_process = running || r.counts_missing.is_some();
    for k in r.kernels.values_mut() {
        k.incomplete = whole_process || lost.contains(&(k.id / CHUNK_SLOTS as u32));
    }
    r.counts_incomplete = why;
}
