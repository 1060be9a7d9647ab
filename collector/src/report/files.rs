//! The files a collection writes: `report.json`, the readable copies
//! under `asm/`, `collect.json` (what the first collection learned from
//! dump files it then pruned), and the pruning itself ([`Keep`]). Every
//! file is written under a temporary name and renamed into place.

use super::export::json;
use super::Report;
use crate::capture::files::{
    is_real_dir, link_or_copy, prune_measured, usage_knowing, write_atomic, write_pending, Known,
    Listing, Pending, Usage,
};
use crate::capture::layout::{strip_dir, CollectError, Stopped, ASM_DIR};
use crate::capture::rebuilt::MARKER;
use crate::capture::state::CollectState;
use crate::matching::Matching;
use crate::sources::dumps::file_names::parse_spv_file_name;
use crate::sources::dumps::{DumpFolder, DumpLocation};
use crate::sources::rebuilt::Rebuilt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use xpu_asm_isa::fast::{FastMap, FastSet};

/// Which dump files survive collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// Every `.asm` and `.spv`; the other intermediates (LLVM IR, vISA,
    /// binaries...) are deleted.
    #[default]
    Asm,
    /// Only the launched kernels' `.asm` files and their modules' `.spv`.
    Launched,
    /// Everything IGC wrote.
    All,
}

impl Keep {
    pub fn as_str(self) -> &'static str {
        match self {
            Keep::Asm => "asm",
            Keep::Launched => "launched",
            Keep::All => "all",
        }
    }
}

/// The copies `asm/` holds unless told otherwise (`--asm-copies`), of
/// the first listed kernels in report order (the most launched first). A
/// copy is a hard link, one insertion into the folder each: on a parallel
/// file system, a request to its metadata server each, and 11 us of CPU
/// each on ext4 here. Past the limit a kernel's `asm` names its file, kept
/// as every launched kernel's is. More kernels than real workloads launch
/// (thousands); the 100,000 of a synthetic capture would take a second of
/// CPU and a folder nobody lists.
pub const DEFAULT_ASM_COPIES: usize = 10_000;

/// `report` as `report.json` (pretty JSON and a newline), written next to
/// `path`, to be put in place by [`Pending::commit`].
pub fn write_report(path: &Path, report: &Report) -> Result<Pending, CollectError> {
    write_report_from(path, report, None)
}

/// [`write_report`], the kernels' JSON taken from `shared` when given.
pub fn write_report_from(
    path: &Path,
    report: &Report,
    mut shared: Option<crate::report::export::pieces::Reader>,
) -> Result<Pending, CollectError> {
    write_pending(path, |w| json::write_from(w, report, shared.as_mut()))
}

/// The dump folders of a collection: each process's, where its record
/// says, and those of modules compiled again for their source lines.
pub struct Dumps<'a> {
    pub folders: &'a [DumpFolder],
    pub locations: &'a [DumpLocation],
    pub rebuilt: &'a Rebuilt,
}

/// Measures the dumps, saves in `collect.json` what pruning is about to
/// destroy, then prunes as `keep` says. Returns the pruning's warnings
/// and the dumps' size after it.
#[allow(clippy::too_many_arguments)]
pub fn save_state_and_prune(
    dir: &Path,
    keep: Keep,
    state_path: &Path,
    state: &mut CollectState,
    dumps: Dumps,
    matching: &Matching,
    stop: &dyn Fn() -> bool,
    progress: &dyn Fn(&str),
) -> Result<(Vec<String>, Usage), CollectError> {
    let interrupted = || CollectError::Interrupted(dir.to_path_buf());
    let dumps_root = dir.join(xpu_asm_record::DUMPS_DIR);
    let folders = || dumps.folders.iter().chain(&dumps.rebuilt.folders);
    let scanned = Scanned::new(folders());
    let dumps_now = usage_knowing(&dumps_root, &scanned);
    if let Err(e) = save_state(state_path, state, folders(), dumps_now) {
        // What pruning would delete is what collect.json keeps the facts
        // of: without it, nothing is pruned.
        let w = format!("{e}; the dumps are not pruned");
        return Ok((vec![w], dumps_now));
    }
    if stop() {
        return Err(interrupted());
    }
    if keep == Keep::All || !is_real_dir(&dumps_root) {
        return Ok((Vec::new(), dumps_now));
    }
    progress("pruning dumps");
    let (mut warnings, mut deleted) =
        prune_dumps(dir, keep, dumps.locations, matching, &scanned, stop)
            .map_err(|_| interrupted())?;
    // A compile again keeps its .asm (each kernel's, whether taken or
    // not: a later collection says the same) and what it was.
    let (w, d) = prune_dumps(
        dir,
        Keep::Asm,
        &dumps.rebuilt.locations,
        matching,
        &scanned,
        stop,
    )
    .map_err(|_| interrupted())?;
    warnings.extend(w);
    deleted.files += d.files;
    deleted.bytes += d.bytes;
    Ok((warnings, dumps_now.minus(deleted)))
}

/// What the scan learned of `folders`: their listings and the sizes it
/// measured, by folder and file name.
struct Scanned<'a> {
    by_path: HashMap<&'a Path, ScannedFolder<'a>>,
}

struct ScannedFolder<'a> {
    asm: FastMap<&'a str, u64>,
    spv: &'a HashMap<String, u64>,
    listing: Option<&'a Listing>,
}

impl<'a> Scanned<'a> {
    fn new(folders: impl Iterator<Item = &'a DumpFolder>) -> Self {
        let by_path = folders
            .map(|f| {
                let asm = f
                    .asm
                    .iter()
                    .filter_map(|a| Some((a.file_name.as_str(), a.size?)))
                    .collect();
                let folder = ScannedFolder {
                    asm,
                    spv: &f.spv_sizes,
                    listing: f.listing.as_ref(),
                };
                (f.path.as_path(), folder)
            })
            .collect();
        Scanned { by_path }
    }
}

impl Known for Scanned<'_> {
    fn size(&self, dir: &Path, name: &std::ffi::OsStr) -> Option<u64> {
        let name = name.to_str()?;
        let f = self.by_path.get(dir)?;
        f.asm.get(name).or_else(|| f.spv.get(name)).copied()
    }

    fn listing(&self, dir: &Path) -> Option<&Listing> {
        self.by_path.get(dir)?.listing
    }
}

/// Saves in `collect.json` (when they changed) the dumps' size before the
/// first pruning and the final-binary verdicts of `folders`' files.
fn save_state<'a>(
    state_path: &Path,
    state: &mut CollectState,
    folders: impl Iterator<Item = &'a DumpFolder>,
    dumps_now: Usage,
) -> Result<(), CollectError> {
    let mut new_state = state.clone();
    new_state.schema = 1;
    if new_state.dumps_before.is_none() {
        new_state.dumps_before = Some(dumps_now);
    }
    for f in folders {
        for a in &f.asm {
            if let Some(v) = a.final_binary {
                new_state.final_binary.insert(a.shown.clone(), v);
            }
        }
    }
    if new_state.dumps_before != state.dumps_before || new_state.final_binary != state.final_binary
    {
        let bytes = serde_json::to_vec_pretty(&new_state).unwrap_or_default();
        write_atomic(state_path, &bytes)?;
        *state = new_state;
    }
    Ok(())
}

/// Deletes from the prunable dump folders of `locations` what `keep` does
/// not keep: the warnings, and what was deleted.
fn prune_dumps(
    dir: &Path,
    keep: Keep,
    locations: &[DumpLocation],
    matching: &Matching,
    known: &dyn Known,
    stop: &dyn Fn() -> bool,
) -> Result<(Vec<String>, Usage), Stopped> {
    // Launched kernels' .asm files, and the hashes of their modules
    // (all launched kernels: --filter limits the report, not the data).
    let launched_only = keep == Keep::Launched;
    // Looked up once per dump file: hashed (a tree compared 100,000 long
    // paths component by component 17 times each).
    let keep_files: FastSet<&Path> = matching
        .launched
        .iter()
        .filter(|_| launched_only)
        .flat_map(|k| {
            k.candidates
                .iter()
                .map(|a| a.path.as_path())
                .chain(k.same_files.iter().map(|p| p.as_path()))
        })
        .collect();
    let keep_hashes: FastSet<&str> = matching
        .launched
        .iter()
        .filter(|_| launched_only)
        .flat_map(|k| k.candidates.iter().map(|a| a.name.hash.as_str()))
        .collect();
    let kept = |p: &Path| -> bool {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        match keep {
            _ if name == MARKER => true,
            Keep::All => true,
            Keep::Asm => name.ends_with(".asm") || name.ends_with(".spv"),
            Keep::Launched => {
                keep_files.contains(p)
                    || parse_spv_file_name(&name).is_some_and(|h| keep_hashes.contains(h.as_str()))
            }
        }
    };
    let mut warnings = Vec::new();
    let mut deleted = Usage::default();
    for loc in locations.iter().filter(|l| l.prunable) {
        // Only real folders under <dir>/dumps, never through a link.
        let mut cur = dir.to_path_buf();
        let mut real = true;
        for c in Path::new(&loc.shown).components() {
            cur.push(c);
            real &= is_real_dir(&cur);
        }
        if !real {
            continue;
        }
        let (gone, errs) = prune_measured(&loc.path, &kept, known, stop)?;
        deleted.files += gone.files;
        deleted.bytes += gone.bytes;
        warnings.extend(errs.iter().map(|e| strip_dir(dir, e)));
    }
    Ok((warnings, deleted))
}

/// One launched kernel's chosen `.asm` and its readable copy.
pub struct Link {
    /// Index of the kernel in the report.
    pub entry: usize,
    pub path: PathBuf,
    pub shown: String,
    /// File name under `asm/`.
    pub file: String,
}

/// What [`copy_asm`] did: a result per link, in order (none at all when
/// `asm/` could not be made), and warnings about the folder itself.
pub struct Copied {
    pub links: Vec<std::io::Result<()>>,
    pub warnings: Vec<String>,
}

/// Rebuilds `asm/` with one readable copy (a hard link when possible) of
/// each chosen `.asm` of `links`.
pub fn copy_asm(dir: &Path, links: &[Link], stop: &dyn Fn() -> bool) -> Result<Copied, Stopped> {
    let mut warnings = Vec::new();
    let asm_dir = dir.join(ASM_DIR);
    // The folder is ours: rebuilt each time. A link in its place is removed,
    // never followed.
    match std::fs::symlink_metadata(&asm_dir) {
        Ok(m) if m.is_dir() => {
            if let Err(e) = std::fs::remove_dir_all(&asm_dir) {
                warnings.push(format!("{ASM_DIR}/: cannot clear: {e}"));
            }
        }
        Ok(_) => {
            let _ = std::fs::remove_file(&asm_dir);
        }
        Err(_) => {}
    }
    if let Err(e) = std::fs::create_dir_all(&asm_dir) {
        warnings.push(format!("{ASM_DIR}/: cannot create: {e}"));
        return Ok(Copied {
            links: Vec::new(),
            warnings,
        });
    }
    let mut done = Vec::with_capacity(links.len());
    let mut folders = Folders::open(&asm_dir);
    for l in links {
        if stop() {
            return Err(Stopped);
        }
        // A file outside the capture (a dump folder the user chose) is
        // copied: a hard link would let an edit of the copy change it.
        done.push(if !l.path.starts_with(dir) {
            copy_fresh(&l.path, &asm_dir.join(&l.file))
        } else if folders.link(&l.path, &l.file) {
            Ok(())
        } else {
            link_or_copy(&l.path, &asm_dir.join(&l.file))
        });
    }
    Ok(Copied {
        links: done,
        warnings,
    })
}

/// The folders links are made between, open: `asm/` and the last few
/// dump folders linked from. A link made through them skips looking up
/// each folder of both paths again (100,000 links into `asm/` are the
/// collection's longest serial step).
struct Folders {
    asm: Option<std::os::fd::OwnedFd>,
    /// Most recently used last.
    from: Vec<(PathBuf, std::os::fd::OwnedFd)>,
    /// The two names of the last link, each NUL-terminated (reused: no
    /// allocation per link).
    names: (Vec<u8>, Vec<u8>),
}

/// Dump folders kept open at most.
const OPEN_FOLDERS: usize = 16;

impl Folders {
    fn open(asm_dir: &Path) -> Folders {
        Folders {
            asm: open_dir(asm_dir),
            from: Vec::new(),
            names: Default::default(),
        }
    }

    /// Makes `asm/<file>` a hard link to `src` (linkat(2), as
    /// [`std::fs::hard_link`] does: a symbolic link is not followed). False
    /// when not made, for any reason: the caller then does what it does
    /// without these folders.
    fn link(&mut self, src: &Path, file: &str) -> bool {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let (Some(asm), Some(parent), Some(name)) = (&self.asm, src.parent(), src.file_name())
        else {
            return false;
        };
        let at = match self.from.iter().rposition(|(p, _)| p == parent) {
            Some(i) => {
                let f = self.from.remove(i);
                self.from.push(f);
                self.from.len() - 1
            }
            None => {
                let Some(fd) = open_dir(parent) else {
                    return false;
                };
                if self.from.len() == OPEN_FOLDERS {
                    self.from.remove(0);
                }
                self.from.push((parent.to_path_buf(), fd));
                self.from.len() - 1
            }
        };
        let (from_name, to_name) = &mut self.names;
        let (Some(name), Some(file)) = (
            c_name(from_name, name.as_bytes()),
            c_name(to_name, file.as_bytes()),
        ) else {
            return false;
        };
        // SAFETY: two open folder descriptors and two NUL-terminated names.
        let r = unsafe {
            libc::linkat(
                self.from[at].1.as_raw_fd(),
                name.as_ptr(),
                asm.as_raw_fd(),
                file.as_ptr(),
                0,
            )
        };
        r == 0
    }
}

/// `name` NUL-terminated in `buf` (`None` when it holds a NUL).
fn c_name<'a>(buf: &'a mut Vec<u8>, name: &[u8]) -> Option<&'a std::ffi::CStr> {
    if memchr::memchr(0, name).is_some() {
        return None;
    }
    buf.clear();
    buf.extend_from_slice(name);
    buf.push(0);
    std::ffi::CStr::from_bytes_with_nul(buf).ok()
}

/// `path` opened as a folder (for the `*at` calls), not through a link.
fn open_dir(path: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .ok()
        .map(std::os::fd::OwnedFd::from)
}

/// A copy of `src` at `dest`, replacing whatever `dest` is.
fn copy_fresh(src: &Path, dest: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dest);
    std::fs::copy(src, dest).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::run::Exit;
    use crate::report::{self, DumpsInfo, Totals};

    #[test]
    fn the_report_is_streamed_as_it_was_printed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        let report = Report {
            schema: report::SCHEMA,
            tool: "t".into(),
            command: Some(vec!["a b".into(), "\u{1b}".into()]),
            exit: Some(Exit::Signal(9)),
            emulate: None,
            processes: Vec::new(),
            kernels: Vec::new(),
            totals: Totals::default(),
            unlaunched_compiled: 3,
            unlaunched_listed: false,
            filter: Some("x|y".into()),
            isa: None,
            dumps: DumpsInfo {
                keep: "asm".into(),
                before: Usage { bytes: 1, files: 2 },
                after: Usage::default(),
            },
            asm_copies: None,
            page_kernels: None,
            counts_incomplete: vec!["process 1 on h: it was still running".into()],
            counts_kept: Vec::new(),
            warnings: vec!["w".into()],
        };
        write_report(&path, &report).unwrap().commit().unwrap();
        let mut expected = serde_json::to_vec_pretty(&report).unwrap();
        expected.push(b'\n');
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
