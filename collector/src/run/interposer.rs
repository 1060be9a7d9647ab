//! The interposer that `xpu-asm-run` carries inside (build.rs embeds the
//! workspace's cdylib): one file to copy. Written out when it is needed,
//! once per content, into a folder only the user can write, and checked
//! byte for byte against what the binary carries before every preload.
//!
//! The library every rank preloads is code that runs in every rank, so:
//! - it lives in `<cache>/xpu-asm/interposer-<sha256>/`, where `<cache>` is
//!   `$XDG_CACHE_HOME` or `~/.cache`; the two folders of ours are made with
//!   mode 0700 and must be the user's own, not writable by others, and not
//!   links; every folder above them up to the user's home (or to `/` when
//!   the cache is not inside it) must belong to the user or root and not be
//!   writable by others (a sticky folder such as `/tmp` is fine);
//! - it is written under a temporary name, synced, and renamed, under a lock
//!   (many ranks starting at once write it once; where the filesystem has
//!   no locks the rename alone keeps it whole);
//! - an existing file is opened with `O_NOFOLLOW` and must be a regular file
//!   of the user's, not writable by others, with exactly the embedded bytes;
//!   anything else there ([`PlaceError::Refused`]) is never loaded nor
//!   replaced: the run stops and says what to remove.
//!
//! A cache that cannot hold it (read-only, not private: [`PlaceError::Unusable`])
//! leaves the capture folder, `<out>/interposer-<sha256>/`, under the same rules.

use std::ffi::OsString;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// File name of the interposer library.
pub const FILE_NAME: &str = "libxpu_asm_interposer.so";

static EMBEDDED: &[u8] = include_bytes!(env!("XPU_ASM_EMBEDDED_INTERPOSER"));

/// sha256 of the embedded library, hex.
pub const SHA256: &str = env!("XPU_ASM_EMBEDDED_INTERPOSER_SHA256");

/// The library this binary carries.
pub fn embedded() -> &'static [u8] {
    EMBEDDED
}

/// `interposer-<first 16 hex digits of its sha256>`: one folder per content.
pub fn folder_name() -> String {
    format!("interposer-{}", &SHA256[..16])
}

/// Why the embedded library was not placed in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceError {
    /// Something that is not ours is where it goes: never loaded.
    Refused(String),
    /// The folder cannot hold it (not writable, not private): another may.
    Unusable(String),
}

/// The library in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Absolute, without links.
    pub path: PathBuf,
    /// This run wrote it (the first run of this content there).
    pub written: bool,
}

/// The user's cache folder: `$XDG_CACHE_HOME` when it is an absolute path
/// (the XDG rule), else `$HOME/.cache`.
pub fn cache_home(xdg: Option<OsString>, home: Option<&Path>) -> Option<PathBuf> {
    xdg.map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".cache")))
}

/// The user's home (`$HOME`), without links.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok())
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Every folder from `dir` up to `home` (inclusive; up to `/` when `dir` is
/// not inside it) belongs to the user or root and cannot be written by
/// others, unless it is sticky (others cannot rename what is ours there).
fn check_ancestors(dir: &Path, home: Option<&Path>) -> Result<(), PlaceError> {
    let me = euid();
    let stop = home.filter(|h| dir.starts_with(h));
    for a in dir.ancestors() {
        let m = std::fs::symlink_metadata(a)
            .map_err(|e| PlaceError::Unusable(format!("cannot read {}: {e}", a.display())))?;
        if m.uid() != me && m.uid() != 0 {
            return Err(PlaceError::Unusable(format!(
                "{} belongs to another user (uid {})",
                a.display(),
                m.uid()
            )));
        }
        if m.mode() & 0o022 != 0 && m.mode() & 0o1000 == 0 {
            return Err(PlaceError::Unusable(format!(
                "{} can be written by other users (mode {:o})",
                a.display(),
                m.mode() & 0o7777
            )));
        }
        if Some(a) == stop {
            break;
        }
    }
    Ok(())
}

/// Makes `dir` (mode 0700) unless it exists; then it must be a folder of
/// the user's (not a link) that others cannot write.
fn private_dir(dir: &Path) -> Result<(), PlaceError> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(PlaceError::Unusable(format!(
                "cannot create {}: {e}",
                dir.display()
            )))
        }
    }
    let m = std::fs::symlink_metadata(dir)
        .map_err(|e| PlaceError::Unusable(format!("cannot read {}: {e}", dir.display())))?;
    let why = if m.file_type().is_symlink() {
        "is a symbolic link".to_string()
    } else if !m.is_dir() {
        "is not a folder".to_string()
    } else if m.uid() != euid() {
        format!("belongs to another user (uid {})", m.uid())
    } else if m.mode() & 0o022 != 0 {
        format!(
            "can be written by other users (mode {:o})",
            m.mode() & 0o7777
        )
    } else {
        return Ok(());
    };
    Err(refused(dir, &why))
}

fn refused(path: &Path, why: &str) -> PlaceError {
    PlaceError::Refused(format!(
        "refusing to preload the interposer from {}: it {why}; xpu-asm-run did not make it so. \
         Remove it (rm -r {}) and run again, or give a library with --interposer PATH",
        path.display(),
        path.display()
    ))
}

/// `Ok(true)` when `path` is the embedded library: a regular file of the
/// user's that others cannot write, opened without following a link, with
/// exactly the embedded bytes; `Ok(false)` when nothing is there.
fn check_file(path: &Path) -> Result<bool, PlaceError> {
    let opened = OpenOptions::new()
        .read(true)
        // O_NONBLOCK: a FIFO planted there cannot hang the open.
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refused(path, "is a symbolic link"))
        }
        Err(e) => return Err(refused(path, &format!("cannot be read ({e})"))),
    };
    let m = f
        .metadata()
        .map_err(|e| refused(path, &format!("cannot be read ({e})")))?;
    let why = if !m.is_file() {
        "is not a regular file".to_string()
    } else if m.uid() != euid() {
        format!("belongs to another user (uid {})", m.uid())
    } else if m.mode() & 0o022 != 0 {
        format!(
            "can be written by other users (mode {:o})",
            m.mode() & 0o7777
        )
    } else if m.len() != EMBEDDED.len() as u64 || !same_bytes(&mut f) {
        format!(
            "is not the interposer this xpu-asm-run carries (sha256 {SHA256}, {} bytes)",
            EMBEDDED.len()
        )
    } else {
        return Ok(true);
    };
    Err(refused(path, &why))
}

fn same_bytes(f: &mut File) -> bool {
    let mut buf = Vec::with_capacity(EMBEDDED.len() + 1);
    f.read_to_end(&mut buf).is_ok() && buf == EMBEDDED
}

/// Holds `dir/.lock` exclusively until dropped. A filesystem without locks
/// gives `None`: the rename alone keeps the file whole then.
fn lock(dir: &Path) -> Result<Option<File>, PlaceError> {
    let path = dir.join(".lock");
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(&path);
    let f = match f {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refused(&path, "is a symbolic link"))
        }
        Err(e) => {
            return Err(PlaceError::Unusable(format!(
                "cannot create {}: {e}",
                path.display()
            )))
        }
    };
    loop {
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(Some(f));
        }
        if std::io::Error::last_os_error().kind() != ErrorKind::Interrupted {
            return Ok(None);
        }
    }
}

/// Writes the embedded library to `path` in `dir`: a temporary name of this
/// host and process, synced, renamed.
fn write_new(dir: &Path, path: &Path) -> Result<(), PlaceError> {
    let tmp = dir.join(format!(
        ".{FILE_NAME}.{}.{}.tmp",
        crate::names::safe_component(&xpu_asm_record::host_name(), 64),
        std::process::id()
    ));
    let unusable = |what: &str, e: std::io::Error| {
        let _ = std::fs::remove_file(&tmp);
        PlaceError::Unusable(format!("cannot {what} {}: {e}", tmp.display()))
    };
    // A leftover of a killed run of the same host and pid.
    let _ = std::fs::remove_file(&tmp);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(|e| unusable("create", e))?;
    f.write_all(EMBEDDED).map_err(|e| unusable("write", e))?;
    f.sync_all().map_err(|e| unusable("write", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| unusable("rename", e))
}

/// The embedded library in `dir` (a private folder already checked): the
/// file there when it is ours, else written there.
fn place_in(dir: &Path) -> Result<Placed, PlaceError> {
    let path = dir.join(FILE_NAME);
    let found = |path| Placed {
        path,
        written: false,
    };
    if check_file(&path)? {
        return Ok(found(path));
    }
    let _lock = lock(dir)?;
    // Another rank may have written it while this one waited.
    if check_file(&path)? {
        return Ok(found(path));
    }
    write_new(dir, &path)?;
    if !check_file(&path)? {
        return Err(PlaceError::Unusable(format!(
            "{} is gone right after it was written",
            path.display()
        )));
    }
    Ok(Placed {
        path,
        written: true,
    })
}

/// `path` can go in `LD_PRELOAD`, which splits at spaces and colons.
pub fn preloadable(path: &Path) -> bool {
    !path
        .as_os_str()
        .as_bytes()
        .iter()
        .any(|b| *b == b' ' || *b == b':')
}

/// Checks `base` (which must exist) and its folders up to the home, then
/// places the library in `base/<sub>.../interposer-<sha>/`.
fn place_below(base: &Path, sub: &[&str], home: Option<&Path>) -> Result<Placed, PlaceError> {
    let real = std::fs::canonicalize(base)
        .map_err(|e| PlaceError::Unusable(format!("cannot open {}: {e}", base.display())))?;
    check_ancestors(&real, home)?;
    let mut dir = real;
    for s in sub {
        dir.push(s);
        private_dir(&dir)?;
    }
    dir.push(folder_name());
    if !preloadable(&dir) {
        return Err(PlaceError::Unusable(format!(
            "{} holds a space or colon, which LD_PRELOAD cannot carry",
            dir.display()
        )));
    }
    private_dir(&dir)?;
    place_in(&dir)
}

/// `<cache>/xpu-asm/interposer-<sha>/libxpu_asm_interposer.so`; the cache
/// folder is made (mode 0700) when missing.
pub fn place_in_cache(cache: &Path, home: Option<&Path>) -> Result<Placed, PlaceError> {
    if let Err(e) = DirBuilder::new().recursive(true).mode(0o700).create(cache) {
        return Err(PlaceError::Unusable(format!(
            "cannot create {}: {e}",
            cache.display()
        )));
    }
    place_below(cache, &["xpu-asm"], home)
}

/// `<out>/interposer-<sha>/libxpu_asm_interposer.so`, for a run whose cache
/// cannot hold it.
pub fn place_in_capture(out: &Path, home: Option<&Path>) -> Result<Placed, PlaceError> {
    place_below(out, &[], home)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "xpu-asm-embed-{name}-{}-{}",
            std::process::id(),
            super::SHA256.len()
        ));
        let _ = std::fs::remove_dir_all(&d);
        DirBuilder::new().mode(0o700).create(&d).unwrap();
        d
    }

    #[test]
    fn the_embedded_library_is_a_shared_object_with_its_hash() {
        assert_eq!(&EMBEDDED[..4], b"\x7fELF");
        assert_eq!(SHA256.len(), 64);
        assert_eq!(folder_name(), format!("interposer-{}", &SHA256[..16]));
    }

    #[test]
    fn cache_home_follows_xdg() {
        let h = Path::new("/home/u");
        assert_eq!(
            cache_home(Some("/c".into()), Some(h)),
            Some(PathBuf::from("/c"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the XDG rule says.
        assert_eq!(
            cache_home(Some("rel".into()), Some(h)),
            Some(PathBuf::from("/home/u/.cache"))
        );
        assert_eq!(cache_home(None, None), None);
    }

    #[test]
    fn written_once_then_found_and_private() {
        let d = scratch("once");
        let cache = d.join("cache");
        let first = place_in_cache(&cache, None).unwrap();
        assert!(first.written);
        let again = place_in_cache(&cache, None).unwrap();
        assert_eq!(
            again,
            Placed {
                written: false,
                ..first.clone()
            }
        );
        assert_eq!(std::fs::read(&first.path).unwrap(), EMBEDDED);
        for dir in [first.path.parent().unwrap(), &cache.join("xpu-asm"), &cache] {
            let m = std::fs::metadata(dir).unwrap();
            assert_eq!(m.mode() & 0o777, 0o700, "{}", dir.display());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn planted_files_links_and_open_folders_are_refused() {
        let d = scratch("planted");
        let dir = d.join(folder_name());
        std::fs::create_dir(&dir).unwrap();
        let lib = dir.join(FILE_NAME);
        std::fs::write(&lib, b"not the interposer").unwrap();
        let e = place_in_capture(&d, None).unwrap_err();
        assert!(
            matches!(&e, PlaceError::Refused(m) if m.contains("is not the interposer this xpu-asm-run carries")),
            "{e:?}"
        );
        std::fs::remove_file(&lib).unwrap();
        std::os::unix::fs::symlink("/bin/true", &lib).unwrap();
        let e = place_in_capture(&d, None).unwrap_err();
        assert!(
            matches!(&e, PlaceError::Refused(m) if m.contains("is a symbolic link")),
            "{e:?}"
        );
        std::fs::remove_file(&lib).unwrap();
        std::fs::write(&lib, EMBEDDED).unwrap();
        std::fs::set_permissions(&lib, std::os::unix::fs::PermissionsExt::from_mode(0o664))
            .unwrap();
        let e = place_in_capture(&d, None).unwrap_err();
        assert!(
            matches!(&e, PlaceError::Refused(m) if m.contains("mode 664")),
            "{e:?}"
        );
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        let e = place_in_capture(&d, None).unwrap_err();
        assert!(
            matches!(&e, PlaceError::Refused(m) if m.contains("mode 777")),
            "{e:?}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folder_others_can_write_above_is_unusable() {
        let d = scratch("open");
        let open = d.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        let e = place_in_cache(&open.join("cache"), None).unwrap_err();
        assert!(
            matches!(&e, PlaceError::Unusable(m) if m.contains("mode 777")),
            "{e:?}"
        );
        // Sticky, as /tmp: others cannot rename what is ours there.
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o1777))
            .unwrap();
        assert!(place_in_cache(&open.join("cache"), None).unwrap().written);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
