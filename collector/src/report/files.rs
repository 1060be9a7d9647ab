//! Stage 4 of a collection, the writing: `report.json`, the readable
//! copies under `asm/`, `collect.json` (what the first collection learned
//! from dump files it then pruned), and the pruning itself. Every file is
//! written under a temporary name and renamed into place.

use crate::dumps::{self, DumpFolder, Usage};
use crate::matching;
use crate::report::Report;
use crate::sources::DumpLocation;
use crate::{strip_dir, CollectError, Keep, Options, ASM_DIR};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectState {
    pub schema: u32,
    pub dumps_before: Option<Usage>,
    /// shown `.asm` path -> whether its code is the final binary
    #[serde(default)]
    pub final_binary: BTreeMap<String, bool>,
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that
/// a reader never sees half a file and a symlink at `path` is replaced, not
/// followed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CollectError> {
    let err = |source| CollectError::Write {
        path: path.to_path_buf(),
        source,
    };
    let tmp = temp_path(path);
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    let mut f = opts.open(&tmp).map_err(err)?;
    std::io::Write::write_all(&mut f, bytes).map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}

/// `.<name>.tmp.<pid>` next to `path`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp.{}", std::process::id()))
}

/// A file written next to its destination, not yet in place: what
/// [`write_atomic`] does in two steps, so that the file can be written
/// ahead and then put in place ([`Pending::commit`]) or dropped (deleted).
pub struct Pending {
    tmp: PathBuf,
    path: PathBuf,
}

/// Writes what `write` writes (through a buffer) next to `path`.
pub fn write_pending(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<Pending, CollectError> {
    let err = |source| CollectError::Write {
        path: path.to_path_buf(),
        source,
    };
    let pending = Pending {
        tmp: temp_path(path),
        path: path.to_path_buf(),
    };
    let _ = std::fs::remove_file(&pending.tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    let f = opts.open(&pending.tmp).map_err(err)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    write(&mut w).map_err(err)?;
    w.into_inner().map_err(|e| err(e.into_error()))?;
    Ok(pending)
}

impl Pending {
    /// Renames the file into place.
    pub fn commit(self) -> Result<(), CollectError> {
        std::fs::rename(&self.tmp, &self.path).map_err(|source| CollectError::Write {
            path: self.path.clone(),
            source,
        })
        // On failure, dropping `self` deletes the temporary file.
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Gone already once committed.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// `report` as `report.json` (pretty JSON and a newline), written next to
/// `path`, to be put in place by [`Pending::commit`].
pub fn write_report(path: &Path, report: &Report) -> Result<Pending, CollectError> {
    write_pending(path, |w| {
        serde_json::to_writer_pretty(&mut *w, report)?;
        w.write_all(b"\n")
    })
}

/// Measures the dumps, saves in `collect.json` what pruning is about to
/// destroy, then prunes as `opts.keep` says. Returns the pruning's warnings
/// and the dumps' size after it.
#[allow(clippy::too_many_arguments)]
pub fn save_state_and_prune(
    dir: &Path,
    opts: &Options,
    state_path: &Path,
    state: &mut CollectState,
    folders: &[DumpFolder],
    locations: &[DumpLocation],
    matching: &matching::Matching,
    stop: &dyn Fn() -> bool,
    progress: &dyn Fn(&str),
) -> Result<(Vec<String>, Usage), CollectError> {
    let interrupted = || CollectError::Interrupted(dir.to_path_buf());
    let dumps_root = dir.join(xpu_asm_record::DUMPS_DIR);
    let dumps_now = dumps::usage(&dumps_root);
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
    if stop() {
        return Err(interrupted());
    }

    let mut warnings = Vec::new();
    let mut deleted = Usage::default();
    if opts.keep != Keep::All && dumps::is_real_dir(&dumps_root) {
        progress("pruning dumps");
        // Launched kernels' .asm files, and the hashes of their modules
        // (all launched kernels: --filter limits the report, not the data).
        let launched_only = opts.keep == Keep::Launched;
        let keep_files: BTreeSet<&Path> = matching
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
        let keep_hashes: BTreeSet<&str> = matching
            .launched
            .iter()
            .filter(|_| launched_only)
            .flat_map(|k| k.candidates.iter().map(|a| a.name.hash.as_str()))
            .collect();
        let keep_mode = opts.keep;
        let keep = |p: &Path| -> bool {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            match keep_mode {
                Keep::All => true,
                Keep::Asm => name.ends_with(".asm") || name.ends_with(".spv"),
                Keep::Launched => {
                    keep_files.contains(p)
                        || dumps::parse_spv_file_name(&name)
                            .is_some_and(|h| keep_hashes.contains(h.as_str()))
                }
            }
        };
        for loc in locations.iter().filter(|l| l.prunable) {
            // Only real folders under <dir>/dumps, never through a link.
            let mut cur = dir.to_path_buf();
            let mut real = true;
            for c in Path::new(&loc.shown).components() {
                cur.push(c);
                real &= dumps::is_real_dir(&cur);
            }
            if !real {
                continue;
            }
            let (gone, errs) =
                dumps::prune_measured(&loc.path, &keep, stop).map_err(|_| interrupted())?;
            deleted.files += gone.files;
            deleted.bytes += gone.bytes;
            warnings.extend(errs.iter().map(|e| strip_dir(dir, e)));
        }
    }
    Ok((warnings, dumps_now.minus(deleted)))
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
pub fn copy_asm(
    dir: &Path,
    links: &[Link],
    stop: &dyn Fn() -> bool,
) -> Result<Copied, dumps::Stopped> {
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
    for l in links {
        if stop() {
            return Err(dumps::Stopped);
        }
        let dest = asm_dir.join(&l.file);
        // A file outside the capture (a dump folder the user chose) is
        // copied: a hard link would let an edit of the copy change it.
        done.push(if l.path.starts_with(dir) {
            link_or_copy(&l.path, &dest)
        } else {
            copy_fresh(&l.path, &dest)
        });
    }
    Ok(Copied {
        links: done,
        warnings,
    })
}

/// A hard link at `dest` to `src` (replacing whatever `dest` is, a file
/// left in a folder that could not be cleared), else a copy.
pub(crate) fn link_or_copy(src: &Path, dest: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(src, dest) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(dest);
            if std::fs::hard_link(src, dest).is_ok() {
                return Ok(());
            }
        }
        Err(_) => {}
    }
    std::fs::copy(src, dest).map(|_| ())
}

/// A copy of `src` at `dest`, replacing whatever `dest` is.
fn copy_fresh(src: &Path, dest: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dest);
    std::fs::copy(src, dest).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{self, DumpsInfo, Exit, Totals};

    #[test]
    fn a_pending_file_is_in_place_only_once_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, b"old").unwrap();
        let p = write_pending(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        p.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        // Dropped uncommitted: nothing left behind, the file untouched.
        drop(write_pending(&path, |w| w.write_all(b"newer")).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

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
            dumps: DumpsInfo {
                keep: "asm".into(),
                before: Usage { bytes: 1, files: 2 },
                after: Usage::default(),
            },
            warnings: vec!["w".into()],
        };
        write_report(&path, &report).unwrap().commit().unwrap();
        let mut expected = serde_json::to_vec_pretty(&report).unwrap();
        expected.push(b'\n');
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
