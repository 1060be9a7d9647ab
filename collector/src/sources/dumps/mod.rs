//! IGC dump folders: what is in them and what the `.asm` headers say.
//!
//! IGC 1.0.12504 (checked here with `ocloc` and with NEO's JIT, for pvc, dg2
//! and tgllp) names a module's files after a 64-bit hash of its SPIR-V:
//!
//! * `OCL_asm<hash>.spv`: the module's SPIR-V, byte-identical to what the
//!   program passed to `zeModuleCreate`.
//! * `OCL_asm<hash>[_<retry>]_simd<W>_entry_<NNNN>.asm`: a finished
//!   compilation of one kernel at SIMD width W. `_<retry>` (1, 2, ...) marks
//!   IGC's recompilations of a module whose kernels spilled; the first
//!   attempt has none. A SIMD width that aborted on spills leaves only a
//!   `.visaasm`, no `.asm`.
//! * `OCL_asm<hash>[_<retry>]_simd<W>_entry_<NNNN>.dat`: that attempt's
//!   machine code, and `OCL_asm<hash>_entry_<NNNN>.kernbin`: the kernel
//!   binary IGC finally emitted (a patch-token header, the kernel's name,
//!   then that machine code). Comparing the two tells which attempt IGC
//!   kept.
//!
//! Newer IGCs put more segments around these (shader numbers, pass names,
//! a kernel-name postfix), so names are parsed leniently: what ties a file
//! to a module is `asm<hash>`, and what ties it to a kernel is its header's
//! `//.kernel` line read against the exact names of that module's kernels
//! (the entry points of its `.spv`, the kernels its records name:
//! [`ModuleNames`]; see `xpu_asm_isa::header`): a name's own lines are
//! never read as fields, and a file whose line names no kernel of its
//! module is no kernel's.

pub mod file_names;
mod keys;
mod location;
mod names;
mod reading;

pub use keys::{dump_key, is_linked};
pub use location::{resolve_dump_dir, DumpLocation};
pub use names::ModuleNames;
use names::{known_names, read_spvs};
use reading::{open_folder_fd, read_files, AsmRead, Scanned};

use super::{AsmFile, AsmName, IsaSource, IsaSourceKind, Lookup, Status};
use crate::capture::files::{open_noatime, Listing};
use crate::capture::layout::Stopped;
use crate::names::short_sha;
use file_names::{
    kernbin_entry, parse_asm_file_name, parse_kernbin, parse_kernbin_file_name, parse_spv_file_name,
};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use xpu_asm_isa::header::{AsmHeader, Unresolved};
use xpu_asm_record::read::{Module, ProcessRecord};

/// `.kernbin`/`.dat` files bigger than this are not compared.
const BINARY_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// What one process's dump folder holds.
#[derive(Debug, Clone, Default)]
pub struct DumpFolder {
    pub path: PathBuf,
    pub shown: String,
    pub exists: bool,
    /// SHA-256 (lower-case hex) of each dumped `.spv` -> the module hashes
    /// IGC named it by.
    pub spv_by_sha: BTreeMap<String, Vec<String>>,
    /// module hash -> SHA-256 of its `.spv`
    pub sha_by_hash: BTreeMap<String, String>,
    /// Every `.asm` with a module hash in its name, sorted by file name.
    /// Lookups go through an index built from it on first use: after
    /// changing it, call [`DumpFolder::reindex`].
    pub asm: Vec<Arc<AsmFile>>,
    /// `.asm` files whose name has no module hash.
    pub other_asm: usize,
    /// The size of each `.spv` the scan hashed, by file name.
    pub spv_sizes: HashMap<String, u64>,
    /// The folder's entries as the scan listed them, for measuring and
    /// pruning it after (`None` when it was not listed).
    pub listing: Option<Listing>,
    pub warnings: Vec<String>,
    index: OnceLock<AsmIndex>,
}

/// The `.asm` files of a folder by module hash and kernel name.
#[derive(Debug, Clone, Default)]
struct AsmIndex {
    /// Indices into `asm`, sorted by (module hash, `//.kernel` name), then
    /// by index: each module's, and each of its kernels', files are one run
    /// in the folder's order.
    order: Vec<usize>,
}

fn index_key(a: &AsmFile) -> (&str, Option<&[u8]>) {
    (
        a.name.hash.as_str(),
        a.header.as_ref().and_then(|h| h.kernel.as_deref()),
    )
}

impl AsmIndex {
    fn build(asm: &[Arc<AsmFile>]) -> Self {
        let mut order: Vec<usize> = (0..asm.len()).collect();
        // Stable: equal keys keep the folder's order.
        order.sort_by(|&i, &j| index_key(&asm[i]).cmp(&index_key(&asm[j])));
        AsmIndex { order }
    }

    /// Files of module `hash`, in the folder's order.
    fn module(&self, asm: &[Arc<AsmFile>], hash: &str) -> &[usize] {
        let lo = self
            .order
            .partition_point(|&i| asm[i].name.hash.as_str() < hash);
        let hi = self
            .order
            .partition_point(|&i| asm[i].name.hash.as_str() <= hash);
        &self.order[lo..hi]
    }

    /// Files of module `hash` whose `//.kernel` line is `name`, in the
    /// folder's order.
    fn kernel(&self, asm: &[Arc<AsmFile>], hash: &str, name: &[u8]) -> &[usize] {
        let key = (hash, Some(name));
        let lo = self.order.partition_point(|&i| index_key(&asm[i]) < key);
        // A kernel has a file or a few: the run's end found by walking it
        // (long names, with long prefixes in common, compared once more
        // each rather than a search's many times).
        let n = self.order[lo..]
            .iter()
            .take_while(|&&i| index_key(&asm[i]) == key)
            .count();
        &self.order[lo..lo + n]
    }
}

impl DumpFolder {
    fn index(&self) -> &AsmIndex {
        self.index.get_or_init(|| AsmIndex::build(&self.asm))
    }

    /// Rebuilds the lookup index after `asm` was changed.
    pub fn reindex(&mut self) {
        self.index = OnceLock::new();
    }

    /// The module hashes IGC named the `.spv` with SHA-256 `sha` by.
    fn hashes(&self, sha: &str) -> &[String] {
        self.spv_by_sha
            .get(lower(sha).as_ref())
            .map_or(&[], |h| h.as_slice())
    }

    /// Indices into `asm` of the files of the modules named `hashes`, in
    /// the folder's order.
    fn indices<'a>(&'a self, hashes: &[String], each: impl Fn(&str) -> &'a [usize]) -> Vec<usize> {
        match hashes {
            [] => Vec::new(),
            [h] => each(h).to_vec(),
            // Two names for the same SPIR-V: merge, in the folder's order.
            _ => {
                let mut all: Vec<usize> = hashes.iter().flat_map(|h| each(h)).copied().collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        }
    }

    /// The `.asm` files of the module whose SPIR-V has SHA-256 `sha`.
    pub fn module_asm<'a>(&'a self, sha: &str) -> impl Iterator<Item = &'a Arc<AsmFile>> + 'a {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.module(&self.asm, h))
            .into_iter()
            .map(move |i| &self.asm[i])
    }

    /// The `.asm` files of the module whose SPIR-V has SHA-256 `sha` whose
    /// `//.kernel` line is exactly `name`, in the folder's order.
    pub fn kernel_asm(&self, sha: &str, name: &[u8]) -> Vec<&Arc<AsmFile>> {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.kernel(&self.asm, h, name))
            .into_iter()
            .map(|i| &self.asm[i])
            .collect()
    }

    /// Indices into `asm` of the files of the module whose SPIR-V has
    /// SHA-256 `sha` whose `//.kernel` line is exactly `name`, in the
    /// folder's order.
    pub fn kernel_asm_indices(&self, sha: &str, name: &[u8]) -> Vec<usize> {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.kernel(&self.asm, h, name))
    }

    /// Indices into `asm` of the files of the module whose SPIR-V has
    /// SHA-256 `sha`, in the folder's order.
    pub fn module_asm_indices(&self, sha: &str) -> Vec<usize> {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.module(&self.asm, h))
    }

    /// The `OCL_asm<hash>.spv` of the module whose SPIR-V has SHA-256
    /// `sha`, when the folder has it.
    pub fn spv_path(&self, sha: &str) -> Option<PathBuf> {
        self.hashes(sha)
            .iter()
            .map(|h| self.path.join(format!("OCL_asm{h}.spv")))
            .find(|p| p.is_file())
    }

    pub fn has_module(&self, sha: &str) -> bool {
        self.spv_by_sha.contains_key(lower(sha).as_ref())
    }
}

/// `s` in lower case, copied only when it is not already.
fn lower(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(s.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Lists the top level of `path` (IGC writes its dumps flat): hashes every
/// `.spv` and reads its entry points, reads every `.asm` header against
/// the names of its module's kernels (those of its `.spv` and those
/// `names` gives its module; a file of a module without a `.spv`, against
/// every name of the folder), and compares attempts' machine code with
/// final `.kernbin` binaries. `shown` is how paths are displayed;
/// `known_final` gives verdicts learned by an earlier collection (whose
/// evidence files may since have been pruned), keyed by shown path. The
/// files of kernels named in `launched` are also read whole, for their
/// [`AsmFile::analysis`]; the others' headers are read whole with
/// `all_headers` (`--all` lists those kernels), else up to their
/// `//.kernel` line ([`AsmHeader::kernel_only`]).
pub fn scan_folder(
    path: &Path,
    shown: &str,
    known_final: &BTreeMap<String, bool>,
    names: &ModuleNames,
    launched: &HashSet<&[u8]>,
    all_headers: bool,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<DumpFolder, Stopped> {
    let mut f = DumpFolder {
        path: path.to_path_buf(),
        shown: shown.to_string(),
        ..Default::default()
    };
    let Some(entries) = open_folder(&mut f) else {
        return Ok(f);
    };
    let files = list_files(entries, &mut f);
    let folder = open_folder_fd(&f.path);
    let spvs = read_spvs(&files, stop);
    let known = known_names(&spvs, names);
    let scanned = read_files(
        &files,
        spvs,
        &known,
        folder.as_ref(),
        launched,
        all_headers,
        stop,
    );
    drop(folder);
    let kernbins = put_together(&mut f, files, scanned, known_final)?;
    verify_final_binaries(&mut f, &kernbins, stop)?;
    Ok(f)
}

/// The folder's entries, or `None` (and why, in its warnings, unless it
/// does not exist) when it cannot be listed.
fn open_folder(f: &mut DumpFolder) -> Option<std::fs::ReadDir> {
    let shown = &f.shown;
    match std::fs::symlink_metadata(&f.path) {
        Ok(m) if m.is_dir() => f.exists = true,
        Ok(_) => {
            f.warnings
                .push(format!("{shown}: not a folder; its dumps are ignored"));
            return None;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            f.warnings.push(format!("{shown}: cannot read: {e}"));
            return None;
        }
    }
    match std::fs::read_dir(&f.path) {
        Ok(rd) => Some(rd),
        Err(e) => {
            f.warnings.push(format!("{shown}: cannot list: {e}"));
            None
        }
    }
}

/// The regular files of the folder, sorted by name. Only regular files: a
/// symlink, FIFO or folder is not IGC's output (and a FIFO would block a
/// read); one named like IGC's is reported.
fn list_files(entries: std::fs::ReadDir, f: &mut DumpFolder) -> Vec<(String, PathBuf)> {
    let shown = &f.shown;
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut odd: Vec<String> = Vec::new();
    let mut listing = Listing::default();
    for e in entries {
        let Ok(e) = e else { continue };
        listing.add(&e);
        let file_type = e.file_type();
        if !file_type.as_ref().is_ok_and(|t| t.is_file()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let igc_like = parse_asm_file_name(&name).is_some()
                || parse_spv_file_name(&name).is_some()
                || parse_kernbin_file_name(&name).is_some();
            if igc_like {
                let kind = match file_type {
                    Ok(t) if t.is_dir() => "a folder",
                    Ok(t) if t.is_symlink() => "a symbolic link",
                    _ => "not a regular file",
                };
                odd.push(format!(
                    "{shown}/{name}: {kind}, not a file IGC wrote; ignored"
                ));
            }
            continue;
        }
        // IGC's names are ASCII; anything else is not one of its files.
        if let Ok(name) = e.file_name().into_string() {
            files.push((name, e.path()));
        }
    }
    files.sort();
    odd.sort();
    f.warnings.extend(odd);
    f.listing = Some(listing);
    files
}

/// The files read, put together in file order, exactly as one pass over
/// the sorted names would; returns the final binaries (`.kernbin`) found,
/// to compare.
fn put_together(
    f: &mut DumpFolder,
    files: Vec<(String, PathBuf)>,
    scanned: Vec<Scanned>,
    known_final: &BTreeMap<String, bool>,
) -> Result<Vec<(String, PathBuf, String)>, Stopped> {
    f.asm.reserve_exact(
        scanned
            .iter()
            .filter(|s| matches!(s, Scanned::Asm(..)))
            .count(),
    );
    let mut kernbins = Vec::new();
    for ((name, p), scanned) in files.into_iter().zip(scanned) {
        let shown_file = format!("{}/{name}", f.shown);
        match scanned {
            Scanned::Stopped => return Err(Stopped),
            Scanned::Spv(hash, Ok((sha, size))) => {
                f.spv_sizes.insert(name.clone(), size);
                f.spv_by_sha
                    .entry(sha.clone())
                    .or_default()
                    .push(hash.clone());
                f.sha_by_hash.insert(hash, sha);
            }
            Scanned::Spv(_, Err(e)) => f.warnings.push(format!("{shown_file}: cannot read: {e}")),
            Scanned::Asm(asm_name, read) => {
                let a = asm_file(f, p, shown_file, name, asm_name, read, known_final);
                f.asm.push(Arc::new(a));
            }
            Scanned::OtherAsm => f.other_asm += 1,
            Scanned::Kernbin(hash) => kernbins.push((hash, p, shown_file)),
            Scanned::Other => {}
        }
    }
    Ok(kernbins)
}

/// One `.asm` of the folder as read (a warning when it could not be, or
/// has no `//.kernel` line).
fn asm_file(
    f: &mut DumpFolder,
    path: PathBuf,
    shown_file: String,
    file_name: String,
    name: AsmName,
    read: std::io::Result<AsmRead>,
    known_final: &BTreeMap<String, bool>,
) -> AsmFile {
    let (header, analysis, size) = match read {
        Ok((h, analysis, size)) => {
            match h.unresolved {
                None => {}
                Some(Unresolved::NoKernelLine) => f.warnings.push(format!(
                    "{shown_file}: no `//.kernel` line in its header; cannot tell its kernel, ignored"
                )),
                Some(why) => f.warnings.push(format!(
                    "{shown_file}: {}; cannot tell its kernel, ignored",
                    why.why()
                )),
            }
            (Some(h), analysis.map(Arc::new), size)
        }
        Err(e) => {
            f.warnings.push(format!("{shown_file}: cannot read: {e}"));
            (None, None, None)
        }
    };
    let final_binary = known_final.get(&shown_file).copied();
    AsmFile {
        path,
        shown: shown_file,
        file_name,
        name,
        header,
        final_binary,
        source: IsaSourceKind::IgcDump,
        binary: None,
        analysis,
        size,
    }
}

/// Each final binary against the attempts of its kernel (same module
/// hash, same `//.kernel` name), on every core; verdicts applied in file
/// order (a later binary's verdict on a file replaces an earlier one's).
/// A final binary names its kernel by length, which no name can forge:
/// an attempt of its entry (`_entry_<N>`) whose header was read as
/// another kernel's is no kernel's.
fn verify_final_binaries(
    f: &mut DumpFolder,
    kernbins: &[(String, PathBuf, String)],
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<(), Stopped> {
    let index = AsmIndex::build(&f.asm);
    let asm = &f.asm;
    let verdicts = kernbins
        .par_iter()
        .map(|(hash, p, shown_file)| {
            if stop() {
                return Err(Stopped);
            }
            let kb = match read_small(p) {
                Ok(b) => parse_kernbin(&b),
                Err(e) => return Ok(Err(format!("{shown_file}: cannot read: {e}"))),
            };
            let (mut found, mut other) = (Vec::new(), Vec::new());
            if let Some(kb) = kb {
                for &i in index.kernel(asm, hash, &kb.name) {
                    let dat = asm[i].path.with_extension("dat");
                    if let Ok(code) = read_small(&dat) {
                        found.push((i, code == kb.machine_code));
                    }
                }
                let entry = p
                    .file_name()
                    .and_then(|n| kernbin_entry(&n.to_string_lossy()));
                other.extend(index.module(asm, hash).iter().copied().filter(|&i| {
                    let kernel = asm[i].header.as_ref().and_then(|h| h.kernel.as_deref());
                    entry.is_some()
                        && asm[i].name.entry == entry
                        && kernel.is_some_and(|k| k != kb.name.as_slice())
                }));
            }
            Ok(Ok((found, other, shown_file)))
        })
        .collect::<Vec<_>>();
    let mut reread = false;
    for v in verdicts {
        match v? {
            Ok((found, other, kernbin)) => {
                for (i, same) in found {
                    Arc::make_mut(&mut f.asm[i]).final_binary = Some(same);
                }
                for i in other {
                    let a = Arc::make_mut(&mut f.asm[i]);
                    a.header = Some(AsmHeader {
                        unresolved: Some(Unresolved::OtherKernel),
                        ..Default::default()
                    });
                    a.analysis = None;
                    f.warnings.push(format!(
                        "{}: {} ({kernbin}); cannot tell its kernel, ignored",
                        a.shown,
                        Unresolved::OtherKernel.why()
                    ));
                    reread = true;
                }
            }
            Err(warning) => f.warnings.push(warning),
        }
    }
    f.index = if reread {
        OnceLock::new()
    } else {
        OnceLock::from(index)
    };
    Ok(())
}

fn read_small(p: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    open_noatime(p)?
        .take(BINARY_MAX_BYTES + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > BINARY_MAX_BYTES {
        return Err(std::io::Error::other("too large to compare"));
    }
    Ok(buf)
}
/// Lower-case hex SHA-256 of a file, read in chunks.
pub fn sha256_file(p: &Path) -> std::io::Result<String> {
    sha256_file_sized(p).map(|(sha, _)| sha)
}

/// [`sha256_file`], and how many bytes the file has (all of them read).
fn sha256_file_sized(p: &Path) -> std::io::Result<(String, u64)> {
    names::read_spv_with(p, |_| {})
}

/// The kernels launched by the processes of each folder: their files are
/// read whole in the scan, for their source lines and mix.
fn launched_by_folder<'a>(
    recs: &'a [ProcessRecord],
    locations: &'a [DumpLocation],
) -> HashMap<&'a Path, HashSet<&'a [u8]>> {
    let mut launched: HashMap<&Path, HashSet<&[u8]>> = HashMap::new();
    for (rec, loc) in recs.iter().zip(locations) {
        launched.entry(loc.path.as_path()).or_default().extend(
            rec.kernels
                .values()
                .filter(|k| k.launches > 0)
                .map(|k| k.name.as_slice()),
        );
    }
    launched
}

/// The kernel names of the modules of the processes of each folder.
fn names_by_folder<'a>(
    recs: &'a [ProcessRecord],
    locations: &'a [DumpLocation],
) -> HashMap<&'a Path, ModuleNames> {
    let mut by: HashMap<&Path, Vec<&ProcessRecord>> = HashMap::new();
    for (rec, loc) in recs.iter().zip(locations) {
        by.entry(loc.path.as_path()).or_default().push(rec);
    }
    by.into_iter()
        .map(|(p, recs)| (p, ModuleNames::of(recs)))
        .collect()
}

/// Each process's dump folder, scanned (a folder shared by a forked child
/// and its parent once), in the order of `recs`.
pub fn scan_dumps(
    dir: &Path,
    recs: &[ProcessRecord],
    known_final: &std::collections::BTreeMap<String, bool>,
    all_headers: bool,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(&str),
    warnings: &mut Vec<String>,
) -> Result<(Vec<DumpLocation>, Vec<DumpFolder>), Stopped> {
    use rayon::prelude::*;
    let locations: Vec<DumpLocation> = recs
        .iter()
        .map(|rec| resolve_dump_dir(dir, rec, warnings))
        .collect();
    users_dump_filters(recs, warnings);
    // A forked child shares its parent's dump folder: each folder is
    // scanned once. Folders are scanned side by side (a job's capture has
    // one per rank, each small), and the files of each folder too.
    let mut first_of: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    let unique: Vec<usize> = (0..locations.len())
        .filter(|&i| first_of.insert(locations[i].path.as_path(), i).is_none())
        .collect();
    let launched = launched_by_folder(recs, &locations);
    let names = names_by_folder(recs, &locations);
    let none = std::collections::HashSet::new();
    let no_names = ModuleNames::default();
    progress(&format!("scanning {} dump folders", unique.len()));
    let scanned: Vec<Result<DumpFolder, Stopped>> = super::with_readers(|| {
        unique
            .par_iter()
            .map(|&i| {
                let loc = &locations[i];
                let launched = launched.get(loc.path.as_path()).unwrap_or(&none);
                let names = names.get(loc.path.as_path()).unwrap_or(&no_names);
                scan_folder(
                    &loc.path,
                    &loc.shown,
                    known_final,
                    names,
                    launched,
                    all_headers,
                    stop,
                )
            })
            .collect()
    });
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

impl IsaSource for DumpFolder {
    fn kind(&self) -> IsaSourceKind {
        IsaSourceKind::IgcDump
    }

    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a> {
        find_in_dumps(self, rec, module, name)
    }
}

/// Says which processes ran with a dump filter of the user's, which the
/// interposer kept next to its own.
fn users_dump_filters(recs: &[ProcessRecord], warnings: &mut Vec<String>) {
    use xpu_asm_record::{DUMP_FILTER, DUMP_FILTER_ENV};
    for rec in recs.iter().filter(|r| !r.isa_binary) {
        if let Some(v) = user_env(rec, DUMP_FILTER_ENV) {
            warnings.push(format!(
                "process {}: {DUMP_FILTER_ENV} was set by the user to {v:?}; xpu-asm kept it next to its own, so IGC wrote the dump files either matches ({v}|{DUMP_FILTER})",
                rec.pid
            ));
        }
    }
}

/// Values of `IGC_ShaderDumpEnable` that IGC reads as "off".
fn is_false(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false" | "off" | "no"
    )
}

fn user_env<'a>(rec: &'a ProcessRecord, name: &str) -> Option<&'a str> {
    rec.env
        .iter()
        .find(|e| e.by_user && e.name == name)
        .map(|e| e.value.as_str())
}

/// The variables that switch a persistent cache on or off (NEO 26's,
/// NEO 22.43's Level Zero cache, SYCL's), quoted when the user set them.
const CACHE_VARS: [&str; 3] = [
    "NEO_CACHE_PERSISTENT",
    "l0_cache_dir",
    "SYCL_CACHE_PERSISTENT",
];

/// Why a linked module has no dump in `folder`.
fn missing_linked<'a>(module: &Module, folder: &DumpFolder) -> Lookup<'a> {
    Lookup::Missing(
        Status::NotCompiledHere,
        format!(
            "its module was linked from {} SPIR-V inputs, and no module IGC dumped in {} without a .spv of its own has this module's kernels with the code of its binary (the module was compiled before or outside this run, its binary was not saved, or IGC did not dump it)",
            module.inputs.len(),
            folder.shown
        ),
    )
}

/// Why a module that is not SPIR-V has no dump.
fn not_spirv<'a>(module: &xpu_asm_record::read::Module) -> Lookup<'a> {
    let what = if module.format == "native" {
        "a native binary (ZE_MODULE_FORMAT_NATIVE)".to_string()
    } else {
        format!("of format {:?}, not SPIR-V", module.format)
    };
    Lookup::Missing(
        Status::NotCompiledHere,
        format!("its module is {what}: IGC does not compile it at run time, so there is no dump"),
    )
}

/// The `.asm` files IGC dumped for kernel `name` of `module` in `folder`.
pub fn find_in_dumps<'a>(
    folder: &'a DumpFolder,
    rec: &ProcessRecord,
    module: &xpu_asm_record::read::Module,
    name: &[u8],
) -> Lookup<'a> {
    let sha = Some(dump_key(module)).filter(|s| !s.is_empty());
    if module.format != "spirv" {
        return not_spirv(module);
    }
    if let Some(v) = user_env(rec, "IGC_ShaderDumpEnable").filter(|v| is_false(v)) {
        return Lookup::Missing(
            Status::DumpsDisabled,
            format!(
                "IGC_ShaderDumpEnable was set to {v:?} by the user, so IGC wrote no dumps; unset it and run again"
            ),
        );
    }
    if !folder.exists {
        let mut why = format!(
            "the dump folder {} does not exist: IGC compiled nothing in process {}",
            folder.shown, rec.pid
        );
        if let Some(d) = user_env(rec, "IGC_DumpToCustomDir") {
            why.push_str(&format!(
                " there, or wrote elsewhere (IGC_DumpToCustomDir was set by the user to {d:?})"
            ));
        } else {
            why.push_str(" (every module came from a cache, or IGC did not run)");
        }
        return Lookup::Missing(Status::DumpFolderMissing, why);
    }
    let Some(sha_s) = sha.as_deref() else {
        return Lookup::Missing(
            Status::NotCompiledHere,
            "the record has no SHA-256 for its module, so its dumps cannot be found".into(),
        );
    };
    if !folder.has_module(sha_s) && is_linked(module) {
        return missing_linked(module, folder);
    }
    if !folder.has_module(sha_s) {
        let mut why = format!(
            "no OCL_asm*.spv in {} has its module's SHA-256 ({}…): the module was compiled before or outside this run (a persistent cache) or IGC did not dump it",
            folder.shown,
            short_sha(sha_s)
        );
        for var in CACHE_VARS {
            if let Some(v) = user_env(rec, var) {
                why.push_str(&format!("; {var} was set by the user to {v:?}"));
            }
        }
        return Lookup::Missing(Status::NotCompiledHere, why);
    }
    let candidates = folder.kernel_asm(sha_s, name);
    if candidates.is_empty() {
        let module_files = folder.module_asm(sha_s).count();
        let hashes = folder
            .spv_by_sha
            .get(sha_s)
            .map(|h| h.join(", "))
            .unwrap_or_default();
        return Lookup::Missing(
            Status::NoAsm,
            format!(
                "IGC dumped its module (OCL_asm{hashes}.spv in {}) but none of that module's {} .asm files has this exact `//.kernel` line",
                folder.shown, module_files
            ),
        );
    }
    Lookup::Found(candidates)
}

#[cfg(test)]
mod tests;
