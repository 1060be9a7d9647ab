//! The files a collection writes: `report.json` and the readable copies
//! under `asm/` (`collect.json` and the pruning of the dump folders are
//! [`crate::prune`]'s). Every file is written under a temporary name and
//! renamed into place.

use super::export::json;
use super::Report;
use crate::capture::files::{link_or_copy, write_pending, Pending};
use crate::capture::layout::{CollectError, Stopped, ASM_DIR};
use std::path::{Path, PathBuf};

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
    use crate::report::{self, DumpsInfo, Totals, Usage};

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
            time: None,
            warnings: vec!["w".into()],
        };
        write_report(&path, &report).unwrap().commit().unwrap();
        let mut expected = serde_json::to_vec_pretty(&report).unwrap();
        expected.push(b'\n');
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
