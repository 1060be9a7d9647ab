//! Where a process's IGC dumps are: the folder its record names, refused
//! when it would lead out of the capture.

use std::path::{Component, Path, PathBuf};
use xpu_asm_record::read::ProcessRecord;

/// Where a process's dumps are, as its record says.
pub struct DumpLocation {
    pub path: PathBuf,
    pub shown: String,
    /// Inside `<dir>/dumps/`: pruning may touch it.
    pub prunable: bool,
}

/// The dump folder of `rec`, refusing paths that would lead out of the
/// capture (a record is input, and input may be hostile).
pub fn resolve_dump_dir(
    dir: &Path,
    rec: &ProcessRecord,
    warnings: &mut Vec<String>,
) -> DumpLocation {
    let rel = if rec.dump_dir.is_empty() {
        xpu_asm_record::dump_dir_name(&rec.host, rec.pid)
    } else {
        rec.dump_dir.clone()
    };
    let p = Path::new(&rel);
    if p.is_absolute() {
        warnings.push(format!(
            "process {}: dump folder {rel} is outside the capture; it is read but never pruned",
            rec.pid
        ));
        return DumpLocation {
            path: p.to_path_buf(),
            shown: rel,
            prunable: false,
        };
    }
    let safe = p.components().all(|c| matches!(c, Component::Normal(_)))
        && !rel.contains('\0')
        && p.components().next().is_some();
    if !safe {
        warnings.push(format!(
            "process {}: dump folder {rel:?} in its record is not a plain path inside the capture; ignored",
            rec.pid
        ));
        return DumpLocation {
            // A path that cannot exist: the process is treated as having no dumps.
            path: dir.join(xpu_asm_record::DUMPS_DIR).join("\u{0}invalid"),
            shown: format!("{rel:?}"),
            prunable: false,
        };
    }
    let prunable = p
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == xpu_asm_record::DUMPS_DIR)
        && p.components().count() >= 2;
    DumpLocation {
        path: dir.join(p),
        shown: rel,
        prunable,
    }
}
