//! Whether a folder xpu-asm-run writes into, or a file it takes in, is the
//! user's (the rules: `xpu_asm_record::trust`; the threat model:
//! docs/limits.md, "Security"). The capture folder, a dump folder the user
//! chose and the staging folder are checked before the command runs; a
//! folder another user owns or can write is refused with an error that
//! names the fix, as ssh refuses a `~/.ssh` that others can write.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use xpu_asm_record::trust::{self, FileStat, FolderStat};

/// The effective user id: whose files xpu-asm-run writes.
pub fn me() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn folder_stat(m: &std::fs::Metadata) -> FolderStat {
    FolderStat {
        is_link: m.file_type().is_symlink(),
        is_dir: m.is_dir(),
        uid: m.uid(),
        gid: m.gid(),
        mode: m.mode(),
    }
}

/// Why folder `dir` (as it is, not following a last link) is not the
/// user's; `None`: it is.
pub fn folder_not_own(dir: &Path) -> Option<String> {
    let m = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    let me = me();
    trust::folder_verdict(folder_stat(&m), me, |g| trust::is_private_group(g, me))
}

/// Why a folder above `dir` leaves it open to others (one every user can
/// write without the sticky bit, where anyone can rename `dir` away);
/// `None`: none does. `dir` is taken as it resolves.
pub fn parents_not_safe(dir: &Path) -> Option<(PathBuf, String)> {
    let real = std::fs::canonicalize(dir).ok()?;
    real.ancestors().skip(1).find_map(|p| {
        let m = std::fs::symlink_metadata(p).ok()?;
        trust::parent_verdict(folder_stat(&m)).map(|why| (p.to_path_buf(), why))
    })
}

/// Checks that `dir` (it exists) is the user's, as is every folder above
/// it that could let others replace it; `Err` names the folder and why.
pub fn check_own_folder(dir: &Path) -> Result<(), (PathBuf, String)> {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if let Some(why) = folder_not_own(&real) {
        return Err((dir.to_path_buf(), why));
    }
    match parents_not_safe(&real) {
        Some(bad) => Err(bad),
        None => Ok(()),
    }
}

/// Makes `dir` and its missing parents, 0755 whatever the umask leaves
/// more open (a group-writable folder would be the group's to change).
pub fn make_folder(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
}

/// Makes the staging folder `dir` (0700) when missing and checks it is the
/// user's: `Err` says why not.
pub fn ready_staging(dir: &Path) -> Result<(), String> {
    if let Some(parent) = dir.parent() {
        if let Ok(m) = std::fs::symlink_metadata(parent) {
            if let Some(why) = trust::parent_verdict(folder_stat(&m)) {
                return Err(format!("{} {why}", parent.display()));
            }
        }
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // As the interposer reads it: no group may write the staging folder.
    match trust::folder_verdict(folder_stat(&m), me(), |_| false) {
        Some(why) => Err(format!("{} {why}", dir.display())),
        None => Ok(()),
    }
}

/// Opens `path` to read it when it is the user's file (a regular file the
/// user owns, one link; never through a link); `Err` says why not.
pub fn open_own_file(path: &Path) -> Result<std::fs::File, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => "is a symbolic link".to_string(),
            _ => format!("cannot be opened ({e})"),
        })?;
    let m = f.metadata().map_err(|e| format!("cannot be read ({e})"))?;
    let st = FileStat {
        is_regular: m.is_file(),
        uid: m.uid(),
        nlink: m.nlink(),
    };
    match trust::file_verdict(st, me()) {
        Some(why) => Err(why),
        None => Ok(f),
    }
}

/// Opens `path` to write into it (creating it when `create`): never
/// through a link, and only a file of the user's with one link.
pub fn open_own_for_write(
    path: &Path,
    append: bool,
    create: bool,
) -> Result<std::fs::File, String> {
    let mut o = std::fs::OpenOptions::new();
    if append {
        o.append(true);
    } else {
        o.write(true);
    }
    let f = o
        .create(create)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!("{} is a symbolic link", path.display()),
            _ => format!("cannot open {}: {e}", path.display()),
        })?;
    let m = f
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let st = FileStat {
        is_regular: m.is_file(),
        uid: m.uid(),
        nlink: m.nlink(),
    };
    match trust::file_verdict(st, me()) {
        Some(why) => Err(format!("{} {why}", path.display())),
        None => Ok(f),
    }
}
