//! The recorder's own system calls, in one place.
//!
//! Every file the interposer touches goes through here, for three reasons:
//!
//! - No descriptor outlives the call that opened it ([`File`] closes on
//!   drop). The workload owns its descriptor table: it may close every
//!   descriptor, `dup2` over one, or run at its descriptor limit, and a
//!   descriptor the recorder kept could then be the workload's own file.
//!   A descriptor held only inside one of the recorder's calls, with the
//!   registry lock taken, is never one the workload uses.
//! - Every call answers with the `errno` it failed with, never a signal:
//!   shared mappings are made only of space that is reserved and populated
//!   first ([`map_shared`]).
//! - A test can make any kind of call fail ([`Call`], `XPU_ASM_FAULTS`):
//!   the suite runs the real workload with each failing in turn.

use std::ffi::CStr;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::Relaxed};

/// An `errno` value.
pub type Errno = i32;

/// The kinds of call a fault can be injected into (`XPU_ASM_FAULTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Open = 0,
    Write,
    Pwrite,
    Fallocate,
    Mmap,
    Rename,
    Mkdir,
}

/// Names of [`Call`]s, in order, as `XPU_ASM_FAULTS` spells them.
pub const CALLS: [&str; 7] = [
    "open",
    "write",
    "pwrite",
    "fallocate",
    "mmap",
    "rename",
    "mkdir",
];

/// One injected fault: calls of its kind fail with `errno` (0: none),
/// every one of them (`nth` 0) or only the `nth`.
struct Fault {
    errno: AtomicI32,
    nth: AtomicU64,
    seen: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const NO_FAULT: Fault = Fault {
    errno: AtomicI32::new(0),
    nth: AtomicU64::new(0),
    seen: AtomicU64::new(0),
};

static FAULTS: [Fault; 7] = [NO_FAULT; 7];

/// The errno names `XPU_ASM_FAULTS` takes.
const ERRNOS: [(&str, Errno); 6] = [
    ("ENOSPC", libc::ENOSPC),
    ("EIO", libc::EIO),
    ("EMFILE", libc::EMFILE),
    ("EDQUOT", libc::EDQUOT),
    ("EROFS", libc::EROFS),
    ("EACCES", libc::EACCES),
];

/// Reads `XPU_ASM_FAULTS`: comma-separated `CALL:ERRNO` (every call of
/// that kind fails) or `CALL:ERRNO:N` (only the Nth, counted from 1).
/// Returns what it could not read, for a warning.
pub fn set_faults(spec: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for item in spec.split(',').filter(|s| !s.is_empty()) {
        let f: Vec<&str> = item.split(':').collect();
        let call = f.first().and_then(|c| CALLS.iter().position(|n| n == c));
        let errno = f
            .get(1)
            .and_then(|e| ERRNOS.iter().find(|(n, _)| n == e))
            .map(|(_, v)| *v);
        let nth = match f.get(2) {
            None => Some(0),
            Some(n) => n.parse::<u64>().ok().filter(|n| *n > 0),
        };
        match (call, errno, nth, f.len() <= 3) {
            (Some(c), Some(e), Some(n), true) => {
                FAULTS[c].nth.store(n, Relaxed);
                FAULTS[c].errno.store(e, Relaxed);
            }
            _ => bad.push(item.to_string()),
        }
    }
    bad
}

/// The errno a call of kind `call` is made to fail with, if any.
fn injected(call: Call) -> Option<Errno> {
    let f = &FAULTS[call as usize];
    let errno = f.errno.load(Relaxed);
    if errno == 0 {
        return None;
    }
    let n = f.seen.fetch_add(1, Relaxed) + 1;
    let nth = f.nth.load(Relaxed);
    (nth == 0 || nth == n).then_some(errno)
}

fn last_errno() -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// What an errno says, for a record or a warning ("No space left on device").
pub fn describe(e: Errno) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// Which file descriptor 2 was at load (`(dev, ino)` packed; 0: closed).
static STDERR_AT_LOAD: AtomicU64 = AtomicU64::new(0);

fn pack(id: Option<Identity>) -> u64 {
    id.map_or(0, |(dev, ino)| dev.rotate_left(32) ^ ino ^ 1)
}

/// Remembers which file descriptor 2 is (at load).
pub fn remember_stderr() {
    STDERR_AT_LOAD.store(pack(identity_of_fd(2)), Relaxed);
}

/// A diagnostic on stderr, for conditions the user must know about. Only
/// while descriptor 2 is still the stderr the process started with: a
/// workload that closed it and opened a file of its own there never finds
/// the recorder's words in that file. Never on the launch path.
pub fn warn(msg: &str) {
    let now = pack(identity_of_fd(2));
    if now == 0 || now != STDERR_AT_LOAD.load(Relaxed) {
        return;
    }
    let line = format!("xpu-asm: {msg}\n");
    // SAFETY: writing a valid buffer to fd 2.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

/// `(st_dev, st_ino)`: which file a path or descriptor is.
pub type Identity = (u64, u64);

/// A file's type, owner and mode (`stat`), for `xpu_asm_record::trust`.
#[derive(Clone, Copy)]
pub struct Owner {
    pub is_dir: bool,
    pub is_link: bool,
    pub is_regular: bool,
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
    pub nlink: u64,
}

impl Owner {
    fn of(st: &libc::stat) -> Owner {
        let kind = st.st_mode & libc::S_IFMT;
        Owner {
            is_dir: kind == libc::S_IFDIR,
            is_link: kind == libc::S_IFLNK,
            is_regular: kind == libc::S_IFREG,
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode,
            nlink: st.st_nlink,
        }
    }

    pub fn folder(&self) -> xpu_asm_record::trust::FolderStat {
        xpu_asm_record::trust::FolderStat {
            is_link: self.is_link,
            is_dir: self.is_dir,
            uid: self.uid,
            gid: self.gid,
            mode: self.mode,
        }
    }
}

/// `lstat(2)`: what `path` is, not following a last link.
pub fn lstat(path: &CStr) -> Result<Owner, Errno> {
    // SAFETY: st is plain data filled by lstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a live struct.
    match unsafe { libc::lstat(path.as_ptr(), &mut st) } {
        0 => Ok(Owner::of(&st)),
        _ => Err(last_errno()),
    }
}

/// `mkdir(2)` of one folder with `mode` exactly (whatever the umask);
/// `Ok(false)` when something is there already.
pub fn mkdir_mode(path: &CStr, mode: u32) -> Result<bool, Errno> {
    if let Some(e) = injected(Call::Mkdir) {
        return Err(e);
    }
    // SAFETY: a valid C string.
    if unsafe { libc::mkdir(path.as_ptr(), mode) } == 0 {
        // SAFETY: as above; the folder was just made by this process.
        unsafe { libc::chmod(path.as_ptr(), mode) };
        return Ok(true);
    }
    match last_errno() {
        libc::EEXIST => Ok(false),
        e => Err(e),
    }
}

/// The effective user id (whose files the recorder writes).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// A descriptor of the recorder's, open only for the call at hand.
pub struct File(i32);

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor this File opened, once.
        unsafe { libc::close(self.0) };
    }
}

/// `open(2)`, always `O_CLOEXEC`; `mode` is set exactly with `fchmod` on a
/// file it creates, whatever the workload's umask.
pub fn open(path: &CStr, flags: i32, mode: u32) -> Result<File, Errno> {
    if let Some(e) = injected(Call::Open) {
        return Err(e);
    }
    // SAFETY: path is a valid C string; mode is read only with O_CREAT.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(last_errno());
    }
    let f = File(fd);
    if flags & libc::O_CREAT != 0 {
        // SAFETY: fchmod on our descriptor. A failure leaves the umask's mode.
        unsafe { libc::fchmod(f.0, mode) };
    }
    Ok(f)
}

impl File {
    /// Writes all of `buf` at the end (`O_APPEND`) or position; returns
    /// how many bytes were written, and the error that stopped it short.
    pub fn write_all(&self, mut buf: &[u8]) -> (usize, Option<Errno>) {
        let mut done = 0;
        while !buf.is_empty() {
            if let Some(e) = injected(Call::Write) {
                return (done, Some(e));
            }
            // SAFETY: buf is a valid readable slice.
            let n = unsafe { libc::write(self.0, buf.as_ptr().cast(), buf.len()) };
            if n < 0 {
                match last_errno() {
                    libc::EINTR => continue,
                    e => return (done, Some(e)),
                }
            }
            if n == 0 {
                return (done, Some(libc::EIO));
            }
            done += n as usize;
            buf = &buf[n as usize..];
        }
        (done, None)
    }

    /// Writes all of `buf` at offset `at`.
    pub fn pwrite_all(&self, mut buf: &[u8], mut at: u64) -> Result<(), Errno> {
        while !buf.is_empty() {
            if let Some(e) = injected(Call::Pwrite) {
                return Err(e);
            }
            // SAFETY: buf is a valid readable slice.
            let n = unsafe { libc::pwrite(self.0, buf.as_ptr().cast(), buf.len(), at as i64) };
            if n < 0 {
                match last_errno() {
                    libc::EINTR => continue,
                    e => return Err(e),
                }
            }
            if n == 0 {
                return Err(libc::EIO);
            }
            buf = &buf[n as usize..];
            at += n as u64;
        }
        Ok(())
    }

    /// Reads up to `buf.len()` bytes at `at`; the number read.
    pub fn pread(&self, buf: &mut [u8], at: u64) -> Result<usize, Errno> {
        loop {
            // SAFETY: buf is a valid writable slice.
            let n = unsafe { libc::pread(self.0, buf.as_mut_ptr().cast(), buf.len(), at as i64) };
            if n >= 0 {
                return Ok(n as usize);
            }
            if last_errno() != libc::EINTR {
                return Err(last_errno());
            }
        }
    }

    /// `fallocate(2)`: `mode` 0 reserves (and extends the file),
    /// `FALLOC_FL_KEEP_SIZE` reserves past its end, `FALLOC_FL_PUNCH_HOLE |
    /// FALLOC_FL_KEEP_SIZE` gives the space back.
    pub fn fallocate(&self, mode: i32, at: u64, len: u64) -> Result<(), Errno> {
        if let Some(e) = injected(Call::Fallocate) {
            return Err(e);
        }
        // SAFETY: fallocate on our descriptor.
        match unsafe { libc::fallocate(self.0, mode, at as i64, len as i64) } {
            0 => Ok(()),
            _ => Err(last_errno()),
        }
    }

    /// Truncates or extends the file to `len` (no fault: it is only ever
    /// used to cut a file back).
    pub fn truncate(&self, len: u64) -> Result<(), Errno> {
        // SAFETY: ftruncate on our descriptor.
        match unsafe { libc::ftruncate(self.0, len as i64) } {
            0 => Ok(()),
            _ => Err(last_errno()),
        }
    }

    /// Which file this is, and its size.
    pub fn stat(&self) -> Result<(Identity, u64), Errno> {
        // SAFETY: st is plain data filled by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat on our descriptor into a live struct.
        match unsafe { libc::fstat(self.0, &mut st) } {
            0 => Ok(((st.st_dev, st.st_ino), st.st_size as u64)),
            _ => Err(last_errno()),
        }
    }

    /// Its type, owner, group, mode and links, as the trust rules read them.
    pub fn owner(&self) -> Result<Owner, Errno> {
        // SAFETY: st is plain data filled by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat on our descriptor into a live struct.
        match unsafe { libc::fstat(self.0, &mut st) } {
            0 => Ok(Owner::of(&st)),
            _ => Err(last_errno()),
        }
    }

    /// The type of the filesystem the file is on (`statfs`'s `f_type`).
    pub fn fs_type(&self) -> Result<i64, Errno> {
        // SAFETY: plain data filled by fstatfs.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: fstatfs on our descriptor into a live struct.
        match unsafe { libc::fstatfs(self.0, &mut st) } {
            0 => Ok(st.f_type as i64),
            _ => Err(last_errno()),
        }
    }
}

/// Filesystems on which a write into a shared mapping of space already
/// written cannot fail for want of space (it is not allocated again):
/// tmpfs (memory), ext2/3/4 and XFS. On the others (NFS, Lustre, GPFS,
/// btrfs, ZFS, overlay, FUSE, ...) a write fault can need new space or a
/// server's grant, and the kernel then raises SIGBUS in the workload.
pub fn maps_safely(fs_type: i64) -> bool {
    const TMPFS: i64 = 0x0102_1994;
    const EXT: i64 = 0xef53;
    const XFS: i64 = 0x5846_5342;
    matches!(fs_type, TMPFS | EXT | XFS)
}

/// A shared mapping of `len` bytes of `file` at `at` (page-aligned), at
/// address `fixed` when given (replacing what is there). Its pages are
/// populated writable at once (`MADV_POPULATE_WRITE`), so that a page the
/// filesystem cannot give is an error here rather than a SIGBUS at the
/// workload's next launch; kernels before 5.14 lack it, and then only
/// space reserved beforehand protects. The caller reserves the space
/// first (written or fallocated) and keeps the file at least this long.
pub fn map_shared(file: &File, len: usize, at: u64, fixed: Option<usize>) -> Result<usize, Errno> {
    if let Some(e) = injected(Call::Mmap) {
        return Err(e);
    }
    let flags = libc::MAP_SHARED | fixed.map_or(0, |_| libc::MAP_FIXED);
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let addr = fixed.unwrap_or(0) as *mut libc::c_void;
    // SAFETY: a new mapping of our descriptor; with MAP_FIXED it replaces
    // a mapping of the recorder's own (the caller's).
    let p = unsafe { libc::mmap(addr, len, prot, flags, file.0, at as i64) };
    if p == libc::MAP_FAILED {
        return Err(last_errno());
    }
    // SAFETY: advice on the mapping just made.
    if unsafe { libc::madvise(p, len, libc::MADV_POPULATE_WRITE) } != 0 {
        let e = last_errno();
        if e != libc::EINVAL {
            if fixed.is_none() {
                // SAFETY: unmapping the mapping made above.
                unsafe { libc::munmap(p, len) };
            }
            return Err(e);
        }
    }
    Ok(p as usize)
}

/// Anonymous zeroed memory of `len` bytes, at `fixed` when given. (No
/// fault is injected here: what `mmap` of a file fails with, ENOSPC, EIO
/// or EMFILE, anonymous memory never does; its only failure is the
/// process's memory exhausted.)
pub fn map_anonymous(len: usize, fixed: Option<usize>) -> Result<usize, Errno> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | fixed.map_or(0, |_| libc::MAP_FIXED);
    let addr = fixed.unwrap_or(0) as *mut libc::c_void;
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a new anonymous mapping (replacing one of ours with MAP_FIXED).
    let p = unsafe { libc::mmap(addr, len, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(last_errno());
    }
    Ok(p as usize)
}

/// `rename(2)`.
pub fn rename(from: &CStr, to: &CStr) -> Result<(), Errno> {
    if let Some(e) = injected(Call::Rename) {
        return Err(e);
    }
    // SAFETY: two valid C strings.
    match unsafe { libc::rename(from.as_ptr(), to.as_ptr()) } {
        0 => Ok(()),
        _ => Err(last_errno()),
    }
}

/// `mkdir -p`, each folder made with mode 0755 exactly (whatever the
/// umask). A folder already there is success.
pub fn mkdir_all(path: &str) -> Result<(), Errno> {
    let mut upto = String::with_capacity(path.len());
    for part in path.split('/') {
        if !upto.is_empty() || path.starts_with('/') {
            upto.push('/');
        }
        upto.push_str(part);
        if part.is_empty() || part == "." || part == ".." {
            continue;
        }
        mkdir(&upto)?;
    }
    Ok(())
}

fn mkdir(path: &str) -> Result<(), Errno> {
    let c = cstring(path)?;
    if let Some(e) = injected(Call::Mkdir) {
        return Err(e);
    }
    // SAFETY: a valid C string.
    if unsafe { libc::mkdir(c.as_ptr(), 0o755) } == 0 {
        // SAFETY: as above.
        unsafe { libc::chmod(c.as_ptr(), 0o755) };
        return Ok(());
    }
    match last_errno() {
        libc::EEXIST => Ok(()),
        e => Err(e),
    }
}

/// `unlink(2)`, its error ignored (a file already gone is what was wanted).
pub fn unlink(path: &CStr) {
    // SAFETY: a valid C string.
    unsafe { libc::unlink(path.as_ptr()) };
}

/// The size of the file at `path`, when there is one.
pub fn size_of(path: &CStr) -> Option<u64> {
    // SAFETY: plain data filled by stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a live struct.
    (unsafe { libc::stat(path.as_ptr(), &mut st) } == 0).then_some(st.st_size as u64)
}

/// Bytes free to this user on the filesystem of `path`.
pub fn free_bytes(path: &CStr) -> Option<u64> {
    // SAFETY: plain data filled by statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a live struct.
    (unsafe { libc::statvfs(path.as_ptr(), &mut st) } == 0)
        .then(|| st.f_bavail.saturating_mul(st.f_frsize))
}

/// Sends `msg` as one datagram to the abstract Unix socket `name`, without
/// waiting (nobody listening, a full queue: the notice is dropped). Uses
/// no file: it is what is left when no file can be written.
pub fn notify(name: &[u8], msg: &[u8]) {
    // SAFETY: plain data.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if name.is_empty() || name.len() + 1 > addr.sun_path.len() {
        return;
    }
    for (i, b) in name.iter().enumerate() {
        addr.sun_path[i + 1] = *b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    // SAFETY: a new socket of our own, closed below.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return;
    }
    // SAFETY: msg and addr are valid for the lengths given.
    unsafe {
        libc::sendto(
            fd,
            msg.as_ptr().cast(),
            msg.len(),
            libc::MSG_DONTWAIT,
            (&addr as *const libc::sockaddr_un).cast(),
            len as libc::socklen_t,
        );
        libc::close(fd);
    }
}

/// `path` as a C string, or the errno of a path that cannot be one.
pub fn cstring(path: &str) -> Result<std::ffi::CString, Errno> {
    std::ffi::CString::new(path).map_err(|_| libc::EINVAL)
}

/// Which file descriptor `fd` is now, when it is open.
pub fn identity_of_fd(fd: i32) -> Option<Identity> {
    // SAFETY: plain data filled by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of a descriptor number only reads its metadata.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_are_read_and_bad_ones_named() {
        assert_eq!(
            set_faults("bogus:ENOSPC,open:ENOPE,rename:EIO:0,mkdir:EIO:1:2"),
            [
                "bogus:ENOSPC",
                "open:ENOPE",
                "rename:EIO:0",
                "mkdir:EIO:1:2"
            ]
        );
        assert!(FAULTS.iter().all(|f| f.errno.load(Relaxed) == 0));
    }

    #[test]
    fn the_filesystems_that_map_safely() {
        assert!(maps_safely(0x0102_1994));
        assert!(maps_safely(0xef53));
        assert!(maps_safely(0x5846_5342));
        // NFS, Lustre, GPFS, btrfs, overlay.
        for t in [0x6969, 0x0bd0_0bd0, 0x4750_4653, 0x9123_683e, 0x794c_7630] {
            assert!(!maps_safely(t), "{t:#x}");
        }
    }
}
