//! Writing and measuring the files of a capture: every file is written
//! under a temporary name and renamed into place ([`write_atomic`],
//! [`write_pending`]), copies are hard links where the filesystem allows
//! ([`link_or_copy`]), and dump folders are measured ([`usage`]) and pruned
//! ([`prune_measured`]) without ever following a symbolic link; files
//! are read without updating their access time ([`open_noatime`]).

use super::layout::{CollectError, Stopped};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

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

/// A hard link at `dest` to `src` (replacing whatever `dest` is, a file
/// left in a folder that could not be cleared), else a copy.
pub fn link_or_copy(src: &Path, dest: &Path) -> std::io::Result<()> {
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

/// Bytes and regular files under `root` (symlinks not followed, not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub bytes: u64,
    pub files: u64,
}

impl Usage {
    /// What is left of `self` once `gone` was deleted.
    pub fn minus(self, gone: Usage) -> Usage {
        Usage {
            bytes: self.bytes.saturating_sub(gone.bytes),
            files: self.files.saturating_sub(gone.files),
        }
    }
}

/// A folder's regular files and folders, in the order one listing gave
/// them (symbolic links and other entries left out: measuring and pruning
/// never follow nor count them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub files: Vec<OsString>,
    pub dirs: Vec<OsString>,
}

impl Listing {
    /// `dir` listed now, or `None` when it cannot be.
    pub fn of(dir: &Path) -> Option<Listing> {
        let rd = std::fs::read_dir(dir).ok()?;
        let mut l = Listing::default();
        for e in rd.flatten() {
            l.add(&e);
        }
        Some(l)
    }

    /// Takes in `e` (a regular file or a folder; `DirEntry::file_type`
    /// does not follow a symbolic link).
    pub fn add(&mut self, e: &std::fs::DirEntry) {
        match e.file_type() {
            Ok(t) if t.is_file() => self.files.push(e.file_name()),
            Ok(t) if t.is_dir() => self.dirs.push(e.file_name()),
            _ => {}
        }
    }
}

/// What a scan already learned of the folders under a root: measuring and
/// pruning take it instead of listing and measuring again.
pub trait Known: Sync {
    /// The size of file `name` of folder `dir`, when measured.
    fn size(&self, dir: &Path, name: &OsStr) -> Option<u64>;
    /// The entries of folder `dir`, when listed.
    fn listing(&self, dir: &Path) -> Option<&Listing>;
}

/// The entries of `dir`: known, or listed now.
fn listing_of<'a>(known: &'a dyn Known, dir: &Path) -> Option<std::borrow::Cow<'a, Listing>> {
    match known.listing(dir) {
        Some(l) => Some(std::borrow::Cow::Borrowed(l)),
        None => Listing::of(dir).map(std::borrow::Cow::Owned),
    }
}

/// Nothing known: every folder listed, every file measured.
pub struct NothingKnown;

impl Known for NothingKnown {
    fn size(&self, _: &Path, _: &OsStr) -> Option<u64> {
        None
    }
    fn listing(&self, _: &Path) -> Option<&Listing> {
        None
    }
}

pub fn usage(root: &Path) -> Usage {
    usage_knowing(root, &NothingKnown)
}

/// [`usage`], with what `known` knows of the folders under `root`.
pub fn usage_knowing(root: &Path, known: &dyn Known) -> Usage {
    let mut u = Usage::default();
    if !is_real_dir(root) {
        return u;
    }
    // Folder by folder; each folder's files measured on every core.
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Some(listing) = listing_of(known, &d) else {
            continue;
        };
        dirs.extend(listing.dirs.iter().map(|n| d.join(n)));
        for len in listing
            .files
            .par_iter()
            .map(|name| match known.size(&d, name) {
                Some(len) => len,
                None => std::fs::symlink_metadata(d.join(name)).map_or(0, |m| m.len()),
            })
            .collect::<Vec<_>>()
        {
            u.files += 1;
            u.bytes += len;
        }
    }
    u
}

/// A folder that is not a symlink (pruning never goes through links).
pub fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Deletes every regular file under `root` for which `keep` says no, and
/// counts what it deleted (sizes as [`usage`] counts them), with what
/// `known` knows of the folders; never follows symlinks, so it cannot
/// reach outside `root`. Returns one message per file it could not delete.
pub fn prune_measured(
    root: &Path,
    keep: &dyn Fn(&Path) -> bool,
    known: &dyn Known,
    stop: &dyn Fn() -> bool,
) -> Result<(Usage, Vec<String>), Stopped> {
    let mut deleted = Usage::default();
    let mut errors = Vec::new();
    if !is_real_dir(root) {
        return Ok((deleted, errors));
    }
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Some(listing) = listing_of(known, &d) else {
            continue;
        };
        for name in &listing.files {
            if stop() {
                return Err(Stopped);
            }
            let path = d.join(name);
            if keep(&path) {
                continue;
            }
            let len = known
                .size(&d, name)
                .or_else(|| std::fs::symlink_metadata(&path).ok().map(|m| m.len()))
                .unwrap_or(0);
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    deleted.files += 1;
                    deleted.bytes += len;
                }
                // Gone since the listing (a folder pruned twice, as two
                // processes' folder): what pruning wanted.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => errors.push(format!("{}: cannot delete: {err}", path.display())),
            }
        }
        // In listing order: the first subfolder is pruned first.
        dirs.extend(listing.dirs.iter().rev().map(|n| d.join(n)));
    }
    Ok((deleted, errors))
}

/// `open(O_NOATIME)`, or `open(0)` where that is refused: `O_NOATIME` is
/// refused (EPERM) on a file of another user.
pub fn without_atime(
    open: impl Fn(libc::c_int) -> std::io::Result<std::fs::File>,
) -> std::io::Result<std::fs::File> {
    match open(libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(0),
        other => other,
    }
}

/// The file at `path` opened for reading, as [`File::open`] does, but
/// without updating its access time when the file is ours (`O_NOATIME`;
/// else opened as usual): reading a dump is no use of it, and the update
/// is an inode written back per file (a tenth of a large capture's
/// header reads, after `cp -al` or a fresh dump made its times newer).
pub fn open_noatime(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    without_atime(|flags| {
        std::fs::File::options()
            .read(true)
            .custom_flags(flags)
            .open(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Listings taken before, as a scan keeps them.
    struct Listed(std::collections::HashMap<PathBuf, Listing>);

    impl Known for Listed {
        fn size(&self, _: &Path, _: &OsStr) -> Option<u64> {
            None
        }
        fn listing(&self, dir: &Path) -> Option<&Listing> {
            self.0.get(dir)
        }
    }

    #[test]
    fn pruning_counts_what_it_deletes_as_usage_does_listed_again_or_not() {
        use std::os::unix::ffi::OsStrExt;
        for listed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("dumps");
            let p = root.join("h-1");
            std::fs::create_dir_all(p.join("sub/deeper")).unwrap();
            std::fs::write(p.join("a.asm"), b"12345").unwrap();
            std::fs::write(p.join("a.ll"), b"123").unwrap();
            std::fs::write(p.join(OsStr::from_bytes(b"\xff.ll")), b"12").unwrap();
            std::fs::write(p.join("sub/b.ll"), b"1234567").unwrap();
            std::fs::write(p.join("sub/deeper/c.asm"), b"1").unwrap();
            std::fs::write(root.join("top.txt"), b"1").unwrap();
            std::os::unix::fs::symlink(p.join("a.ll"), p.join("link.ll")).unwrap();
            // Only h-1 listed by the scan: the rest is listed again.
            let known: Box<dyn Known> = match listed {
                true => Box::new(Listed([(p.clone(), Listing::of(&p).unwrap())].into())),
                false => Box::new(NothingKnown),
            };
            let before = usage_knowing(&root, known.as_ref());
            let want = Usage {
                bytes: 19,
                files: 6,
            };
            assert_eq!(before, want, "listed: {listed}");
            assert_eq!(usage(&root), want);
            let keep = |f: &Path| f.extension().is_some_and(|e| e == "asm");
            let (gone, errors) = prune_measured(&p, &keep, known.as_ref(), &|| false).unwrap();
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(
                gone,
                Usage {
                    bytes: 12,
                    files: 3
                },
                "listed: {listed}"
            );
            assert_eq!(before.minus(gone), usage(&root));
            assert!(p.join("a.asm").exists() && p.join("sub/deeper/c.asm").exists());
            assert!(!p.join("sub/b.ll").exists() && !p.join("a.ll").exists());
            assert!(p.join("link.ll").symlink_metadata().is_ok());
            // Pruned again, from the same listing when listed (two
            // processes' folder): nothing more, and no error for what is gone.
            let (again, errors) = prune_measured(&p, &keep, known.as_ref(), &|| false).unwrap();
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(again, Usage::default());
        }
        assert_eq!(usage(Path::new("/nonexistent/dumps")), Usage::default());
    }
}
