//! The staging folder: `<XPU_ASM_STAGING or /dev/shm>/xpu-asm-<uid>`, the
//! user's own folder in node-local memory (docs/limits.md, "Security").
//! The staging filesystem is shared by every user of the node, so the
//! folder is taken only when it is the user's (`xpu_asm_record::trust`):
//! made here 0700 when missing, then opened without following a link and
//! checked for owner and mode. Files in it are created with `O_EXCL |
//! O_NOFOLLOW`. A folder that is not the user's is not used: counts that
//! cannot be kept in the capture are then kept in memory.

use crate::sys;
use xpu_asm_record::trust;

/// Makes the staging folder `dir` when missing and checks it is the
/// user's; `Err` says why it is not.
pub fn ready(dir: &str) -> Result<(), String> {
    let c = sys::cstring(dir).map_err(sys::describe)?;
    if let Some((parent, _)) = dir.rsplit_once('/').filter(|(p, _)| !p.is_empty()) {
        let pc = sys::cstring(parent).map_err(sys::describe)?;
        let st = sys::lstat(&pc).map_err(|e| format!("{parent}: {}", sys::describe(e)))?;
        if let Some(why) = trust::parent_verdict(st.folder()) {
            return Err(format!("{parent} {why}"));
        }
    }
    sys::mkdir_mode(&c, 0o700).map_err(|e| format!("cannot create {dir}: {}", sys::describe(e)))?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let st = match sys::open(&c, flags, 0).and_then(|f| f.owner()) {
        Ok(st) => st,
        Err(libc::ELOOP) | Err(libc::ENOTDIR) => {
            let st = sys::lstat(&c).map_err(sys::describe)?;
            let why = trust::folder_verdict(st.folder(), sys::euid(), |_| false);
            return Err(format!(
                "{dir} {}",
                why.unwrap_or_else(|| "is not a folder".into())
            ));
        }
        Err(e) => return Err(format!("cannot open {dir}: {}", sys::describe(e))),
    };
    // The interposer asks no user database (a workload's process is no
    // place for NSS): a group-writable staging folder is refused.
    match trust::folder_verdict(st.folder(), sys::euid(), |_| false) {
        Some(why) => Err(format!("{dir} {why}")),
        None => Ok(()),
    }
}

/// Flags that create a staged file: this process's alone, never through a
/// link.
pub const CREATE: i32 = libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;

/// Creates the staged file `path` (`O_EXCL | O_NOFOLLOW`, 0600); one of
/// this process's left from before (the same name: only the user's
/// processes write here) is removed first.
pub fn create(path: &std::ffi::CStr, access: i32) -> Result<sys::File, sys::Errno> {
    match sys::open(path, access | CREATE, 0o600) {
        Err(libc::EEXIST) => {
            sys::unlink(path);
            sys::open(path, access | CREATE, 0o600)
        }
        r => r,
    }
}
