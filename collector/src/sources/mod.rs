//! Stage 2 of a collection: the sources of ISA.
//!
//! Two kinds, one interface ([`IsaSource`]): IGC's dump folders, one per
//! process ([`crate::dumps`]), and the module binaries the interposer saved,
//! one per module ([`crate::binaries`]). For a launched kernel, each source
//! answers with the `.asm` files it has for it, or why it has none
//! ([`Lookup`]). The dump is asked first (it is the richer text: vISA
//! header, `// Line` comments of `-g` builds); the binary when the dump has
//! nothing, or alone with `--isa binary`.

pub mod binaries;
pub mod dumps;
pub mod native;

use crate::binaries::{BinaryKey, ModuleBinaries};
use crate::dumps::{AsmFile, DumpFolder};
use crate::matching::Status;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};
use xpu_asm_record::read::{Module, ProcessRecord};

/// Where a kernel's ISA text comes from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum IsaSourceKind {
    /// An `.asm` IGC wrote while compiling the module in this run.
    #[default]
    IgcDump,
    /// IGA's disassembly of the module's binary, saved at run time.
    ModuleBinary,
}

impl IsaSourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IsaSourceKind::IgcDump => "igc-dump",
            IsaSourceKind::ModuleBinary => "module-binary",
        }
    }
}

/// Which binary a disassembled kernel comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryOrigin {
    /// SHA-256 of the module binary (`modules/<sha256>.bin`).
    pub sha256: String,
    /// `zebin`, `patch-tokens` or `patch-tokens-elf`.
    pub format: String,
    /// The fat binary's member the kernel was taken from.
    pub fat_entry: Option<String>,
}

/// What a source has for one kernel.
#[derive(Debug, Clone)]
pub enum Lookup<'a> {
    /// Its `.asm` files (more than one when IGC compiled it more than once).
    Found(Vec<&'a AsmFile>),
    /// Nothing: why, and what to do.
    Missing(Status, String),
}

/// A source of kernels' ISA.
pub trait IsaSource {
    fn kind(&self) -> IsaSourceKind;

    /// The ISA of kernel `name` of `module`, as launched by the process of
    /// `rec`.
    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a>;
}

impl IsaSource for DumpFolder {
    fn kind(&self) -> IsaSourceKind {
        IsaSourceKind::IgcDump
    }

    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a> {
        crate::matching::find_in_dumps(self, rec, module, name)
    }
}

impl IsaSource for ModuleBinaries {
    fn kind(&self) -> IsaSourceKind {
        IsaSourceKind::ModuleBinary
    }

    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a> {
        match binaries::request(rec, module, name) {
            Ok(r) => self.lookup(&r.key, name),
            Err(miss) => miss,
        }
    }
}

/// The binary `module` is looked up by, for [`ModuleBinaries::prepare`].
pub fn binary_key(rec: &ProcessRecord, module: &Module) -> Option<BinaryKey> {
    binaries::request(rec, module, b"").ok().map(|r| r.key)
}

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

/// Each process's dump folder, scanned (a folder shared by a forked child
/// and its parent once), in the order of `recs`.
pub fn scan_dumps(
    dir: &Path,
    recs: &[ProcessRecord],
    known_final: &std::collections::BTreeMap<String, bool>,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(&str),
    warnings: &mut Vec<String>,
) -> Result<(Vec<DumpLocation>, Vec<DumpFolder>), crate::dumps::Stopped> {
    use rayon::prelude::*;
    let locations: Vec<DumpLocation> = recs
        .iter()
        .map(|rec| resolve_dump_dir(dir, rec, warnings))
        .collect();
    // A forked child shares its parent's dump folder: each folder is
    // scanned once. Folders are scanned side by side (a job's capture has
    // one per rank, each small), and the files of each folder too.
    let mut first_of: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    let unique: Vec<usize> = (0..locations.len())
        .filter(|&i| first_of.insert(locations[i].path.as_path(), i).is_none())
        .collect();
    // The kernels launched by the processes of each folder: their files
    // are read whole in the scan, for their source lines and mix.
    let mut launched: std::collections::HashMap<&Path, std::collections::HashSet<&[u8]>> =
        std::collections::HashMap::with_capacity(unique.len());
    for (rec, loc) in recs.iter().zip(&locations) {
        launched.entry(loc.path.as_path()).or_default().extend(
            rec.kernels
                .values()
                .filter(|k| k.launches > 0)
                .map(|k| k.name.as_slice()),
        );
    }
    let none = std::collections::HashSet::new();
    progress(&format!("scanning {} dump folders", unique.len()));
    let scanned: Vec<Result<DumpFolder, crate::dumps::Stopped>> = unique
        .par_iter()
        .map(|&i| {
            let loc = &locations[i];
            let launched = launched.get(loc.path.as_path()).unwrap_or(&none);
            crate::dumps::scan_folder(&loc.path, &loc.shown, known_final, launched, stop)
        })
        .collect();
    drop(launched);
    let mut by_path: std::collections::HashMap<&Path, DumpFolder> =
        std::collections::HashMap::with_capacity(unique.len());
    for (&i, f) in unique.iter().zip(scanned) {
        let f = f?;
        warnings.extend(f.warnings.iter().cloned());
        by_path.insert(locations[i].path.as_path(), f);
    }
    // The last process of a folder takes it; the others (forked children
    // sharing their parent's) get a copy.
    let mut last_of: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    for (i, loc) in locations.iter().enumerate() {
        last_of.insert(loc.path.as_path(), i);
    }
    let mut folders = Vec::with_capacity(locations.len());
    for (i, loc) in locations.iter().enumerate() {
        let p = loc.path.as_path();
        let f = if last_of.get(p) == Some(&i) {
            by_path.remove(p)
        } else {
            by_path.get(p).cloned()
        };
        // Every path was scanned above.
        folders.push(f.unwrap_or_default());
    }
    Ok((locations, folders))
}
