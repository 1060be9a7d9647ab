//! Reading back the process records of a capture.

use crate::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_record::read::ProcessRecord;

/// Every process record under `out/records`.
pub fn records(out: &Path) -> Vec<ProcessRecord> {
    let dir = out.join(xpu_asm_record::RECORDS_DIR);
    xpu_asm_record::read::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "no records: {e}\nfiles under {}:\n  {}",
            out.display(),
            list_files(out).join("\n  ")
        )
    })
}

/// The one record under `out`, which must have been read without warnings.
pub fn only_record(out: &Path) -> ProcessRecord {
    let mut recs = records(out);
    assert_eq!(
        recs.len(),
        1,
        "expected the record of exactly one process, found {}:\n{recs:#?}\nfiles under {}:\n  {}",
        recs.len(),
        out.display(),
        list_files(out).join("\n  ")
    );
    let rec = recs.pop().expect("length checked above");
    assert!(
        rec.warnings.is_empty(),
        "reading the record gave warnings: {:#?}\nrecord: {rec:#?}",
        rec.warnings
    );
    rec
}

/// `(kernel name, module sha256)`: how a kernel is told apart across handles.
pub type KernelKey = (String, String);

/// `(launches, appended)` summed over every kernel handle of the same name in
/// the same module (threads, re-creation), keyed by name and module sha256.
pub fn counts(rec: &ProcessRecord) -> BTreeMap<KernelKey, (u64, u64)> {
    let mut m = BTreeMap::new();
    for k in rec.kernels.values() {
        let sha = match rec.modules.get(&k.module) {
            Some(module) => module.sha256.clone(),
            None => format!("<module id {} not in the record>", k.module),
        };
        let e = m
            .entry((String::from_utf8_lossy(&k.name).into_owned(), sha))
            .or_insert((0, 0));
        e.0 += k.launches;
        e.1 += k.appended;
    }
    m
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    xpu_asm_record::hex(&Sha256::digest(bytes))
}

/// Lower-case hex SHA-256 of a file's contents.
pub fn sha256_file(path: &Path) -> String {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    xpu_asm_record::hex(&Sha256::digest(&bytes))
}
