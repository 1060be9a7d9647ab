//! Writing the per-process record (format: `xpu-asm-record`).
//!
//! Events (process, module, kernel) are rare and go straight to the events
//! file with one `write(2)` each on an `O_APPEND` descriptor: once the call
//! that caused them returns, they are in the kernel's page cache and survive
//! any end of the process. A writer thread would only add a window in which a
//! `SIGKILL` loses them. Counters live in the shared file mapping of the
//! counts file and are updated in place.

use crate::config::Config;
use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use xpu_asm_record::{
    counts_header, module_file_name, process_stem, push_json_str, COUNTS_HEADER_LEN,
    COUNTS_SLOT_LEN, MODULES_DIR, RECORDS_DIR, RECORD_TAG, VERSION,
};

/// One kernel's counters, laid out as a slot of the counts file (see
/// `xpu_asm_record`: launches = immediate + regular_launched, appended =
/// immediate + regular_appended).
#[repr(C)]
pub struct Counter {
    pub immediate: AtomicU64,
    pub regular_appended: AtomicU64,
    pub regular_launched: AtomicU64,
    pub reserved: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Counter>() == COUNTS_SLOT_LEN);

/// Slots per mapping of the counts file.
const CHUNK_SLOTS: usize = 2048;
const CHUNK_BYTES: usize = CHUNK_SLOTS * COUNTS_SLOT_LEN;
const PAGE: usize = 4096;
/// A chunk's mapping starts at a page-aligned file offset and reaches one
/// page further to cover the header's shift of its last slots.
const MAP_LEN: usize = CHUNK_BYTES + PAGE;

pub struct Output {
    events_fd: i32,
    counts_fd: i32,
    chunks: Vec<usize>,
    /// Module and kernel events written so far, re-emitted into a forked
    /// child's own record so that it stands alone.
    journal: Vec<u8>,
    pub pid: u32,
    /// `<out>/modules`, where module binaries are saved.
    modules_dir: String,
    /// SHA-256s of the module binaries in `modules_dir` (saved, or found
    /// there), so that a module built again costs no file-system call.
    saved: std::collections::HashSet<String>,
}

fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

/// Writes `dir/name` unless a file of that size is there: under a
/// temporary name, then renamed, so the final name never holds half a file.
/// The temporary name is this process's alone: its pid and a random token
/// (one pid can be two processes writing into one folder: two PID
/// namespaces on a host, two hosts of a job on a shared filesystem). The
/// names are content hashes: a rename that fails while another process
/// put the same name there in the meantime has lost nothing.
pub fn write_once(dir: &str, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = format!("{dir}/{name}");
    let there = || std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
    if there() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let tmp = format!("{dir}/.{name}.{pid}-{}.tmp", crate::config::new_token());
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {tmp}: {e}")
    })?;
    std::fs::rename(&tmp, &path).or_else(|e| {
        let _ = std::fs::remove_file(&tmp);
        match there() {
            true => Ok(()),
            false => Err(format!("cannot rename {tmp} to {path}: {e}")),
        }
    })
}

/// A diagnostic on stderr, for conditions the user must know about (the
/// record could not be created). Never on the launch path.
pub fn warn(msg: &str) {
    let line = format!("xpu-asm: {msg}\n");
    // SAFETY: writing a valid buffer to fd 2.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

fn open_file(path: &str, flags: i32) -> i32 {
    let Ok(c) = CString::new(path) else { return -1 };
    // SAFETY: c is a valid path; the mode argument is read for O_CREAT.
    unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC | libc::O_CREAT, 0o644) }
}

fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() && fd >= 0 {
        // SAFETY: buf is a valid readable slice.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        buf = &buf[n as usize..];
    }
}

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn process_header(cfg: &Config, pid: u32, forked_from: Option<u32>) -> Vec<u8> {
    let mut l = Vec::with_capacity(512);
    l.extend_from_slice(b"{\"record\":");
    push_json_str(&mut l, RECORD_TAG);
    l.extend_from_slice(
        format!(",\"version\":{VERSION},\"type\":\"process\",\"pid\":{pid}").as_bytes(),
    );
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() };
    l.extend_from_slice(format!(",\"ppid\":{ppid},\"host\":").as_bytes());
    push_json_str(&mut l, &cfg.host);
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    l.extend_from_slice(b",\"exe\":");
    push_json_str(&mut l, &exe);
    l.extend_from_slice(b",\"cmdline\":[");
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    for (i, arg) in cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .enumerate()
    {
        if i > 0 {
            l.push(b',');
        }
        push_json_str(&mut l, &String::from_utf8_lossy(arg));
    }
    l.extend_from_slice(b"],\"dump_dir\":");
    push_json_str(&mut l, &cfg.dump_dir);
    match forked_from {
        Some(p) => l.extend_from_slice(format!(",\"forked_from\":{p}").as_bytes()),
        None => l.extend_from_slice(b",\"forked_from\":null"),
    }
    l.extend_from_slice(format!(",\"start_unix_ms\":{}", now_unix_ms()).as_bytes());
    l.extend_from_slice(b",\"job\":");
    match &cfg.rank {
        Some(r) => {
            let opt = |v: Option<u32>| v.map_or_else(|| "null".to_string(), |v| v.to_string());
            l.extend_from_slice(b"{\"launcher\":");
            push_json_str(&mut l, r.launcher.as_str());
            l.extend_from_slice(
                format!(
                    ",\"rank\":{},\"local_rank\":{},\"size\":{},\"id\":",
                    r.rank,
                    opt(r.local_rank),
                    opt(r.size)
                )
                .as_bytes(),
            );
            match &r.job {
                Some(j) => push_json_str(&mut l, j),
                None => l.extend_from_slice(b"null"),
            }
            l.push(b'}');
        }
        None => l.extend_from_slice(b"null"),
    }
    if cfg.isa_binary {
        l.extend_from_slice(b",\"isa\":\"binary\"");
    }
    l.extend_from_slice(b",\"env\":{");
    for (i, (name, value, by_user)) in cfg.env.iter().enumerate() {
        if i > 0 {
            l.push(b',');
        }
        push_json_str(&mut l, name);
        l.extend_from_slice(b":{\"value\":");
        push_json_str(&mut l, value);
        l.extend_from_slice(if *by_user {
            b",\"set_by\":\"user\"}"
        } else {
            b",\"set_by\":\"xpu-asm\"}"
        });
    }
    l.extend_from_slice(b"}}\n");
    l
}

impl Output {
    /// Creates this process's record (and its dump folder), or, when that
    /// fails, counts in anonymous memory after saying why on stderr.
    pub fn open(cfg: &Config) -> Output {
        let mut o = Output {
            events_fd: -1,
            counts_fd: -1,
            chunks: Vec::new(),
            journal: Vec::new(),
            pid: 0,
            modules_dir: format!("{}/{MODULES_DIR}", cfg.out.trim_end_matches('/')),
            saved: std::collections::HashSet::new(),
        };
        o.start(cfg, None);
        o
    }

    /// Opens fresh record files for the current pid and writes the header.
    fn start(&mut self, cfg: &Config, forked_from: Option<u32>) {
        // SAFETY: getpid has no preconditions.
        self.pid = unsafe { libc::getpid() } as u32;
        let dir = format!("{}/{RECORDS_DIR}", cfg.out.trim_end_matches('/'));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            warn(&format!(
                "cannot create {dir}: {e}; this process is not recorded"
            ));
        }
        // With `--isa binary` IGC dumps nothing, unless the user asked it to.
        let dumps_wanted =
            !cfg.isa_binary || cfg.env.iter().any(|(n, _, _)| n == "IGC_DumpToCustomDir");
        if dumps_wanted {
            if let Err(e) = std::fs::create_dir_all(&cfg.dump_dir_abs) {
                warn(&format!(
                    "cannot create IGC dump folder {}: {e}",
                    cfg.dump_dir_abs
                ));
            }
        }
        // Every process draws its own token; a forked child inherits its
        // parent's configuration, token included, so it draws a new one.
        // O_EXCL: a file already there (the same host, pid and token drawn
        // twice) is never shared; another token is drawn.
        let mut token = match forked_from {
            Some(_) => crate::config::new_token(),
            None => cfg.token.clone(),
        };
        let mut tries = 0;
        let (events, counts) = loop {
            let stem = process_stem(&cfg.host, self.pid, &token);
            let events = format!("{dir}/{stem}.events");
            self.events_fd = open_file(&events, libc::O_WRONLY | libc::O_APPEND | libc::O_EXCL);
            tries += 1;
            let taken = self.events_fd < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::AlreadyExists;
            if !taken || tries == 8 {
                break (events, format!("{dir}/{stem}.counts"));
            }
            token = crate::config::new_token();
        };
        if self.events_fd < 0 {
            warn(&format!("cannot create {events}: {}", errno_str()));
        }
        self.counts_fd = open_file(&counts, libc::O_RDWR | libc::O_EXCL);
        if self.counts_fd < 0 {
            warn(&format!(
                "cannot create {counts}: {}; launch counts stay in memory",
                errno_str()
            ));
        } else {
            let h = counts_header();
            // SAFETY: h is a valid buffer; offset 0 of a file we own.
            unsafe { libc::pwrite(self.counts_fd, h.as_ptr().cast(), h.len(), 0) };
        }
        let header = process_header(cfg, self.pid, forked_from);
        write_all(self.events_fd, &header);
    }

    /// Appends one event line. `keep` lines (modules, kernels) are also kept
    /// for a forked child's record.
    pub fn event(&mut self, line: &[u8], keep: bool) {
        write_all(self.events_fd, line);
        if keep {
            self.journal.extend_from_slice(line);
        }
    }

    /// Saves a module's binary as `<out>/modules/<sha256>.bin`, once per
    /// content: a file already there (from this or another process) is
    /// kept; a new one is written under a temporary name and renamed, so the
    /// final name never holds half a file. Returns the path relative to
    /// `<out>`, or why it could not be saved.
    pub fn save_module_binary(&mut self, sha: &str, bytes: &[u8]) -> Result<String, String> {
        let name = module_file_name(sha);
        let rel = format!("{MODULES_DIR}/{name}");
        if self.saved.contains(sha) {
            return Ok(rel);
        }
        write_once(&self.modules_dir, &name, bytes)?;
        self.saved.insert(sha.to_string());
        Ok(rel)
    }

    /// The counter slot of kernel `id`, mapping more of the counts file when
    /// `id` is past the mapped part. Null only when memory is exhausted.
    pub fn counter(&mut self, id: u32) -> *const Counter {
        let (chunk, idx) = (id as usize / CHUNK_SLOTS, id as usize % CHUNK_SLOTS);
        while self.chunks.len() <= chunk {
            let c = self.chunks.len();
            match self.map_chunk(c, None) {
                Some(base) => self.chunks.push(base),
                None => return std::ptr::null(),
            }
        }
        (self.chunks[chunk] + COUNTS_HEADER_LEN + idx * COUNTS_SLOT_LEN) as *const Counter
    }

    /// Maps chunk `c` of the counts file (at `at` when given, replacing
    /// whatever is mapped there), or anonymous memory when there is no file.
    fn map_chunk(&mut self, c: usize, at: Option<usize>) -> Option<usize> {
        let fixed = if at.is_some() { libc::MAP_FIXED } else { 0 };
        let addr = at.unwrap_or(0) as *mut libc::c_void;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        if self.counts_fd >= 0 {
            let size = (COUNTS_HEADER_LEN + (c + 1) * CHUNK_BYTES) as libc::off_t;
            // SAFETY: plain syscalls on a descriptor we own; the mapping is
            // only ever accessed through Counter slots inside the file size.
            unsafe {
                if libc::ftruncate(self.counts_fd, size) == 0 {
                    let p = libc::mmap(
                        addr,
                        MAP_LEN,
                        prot,
                        libc::MAP_SHARED | fixed,
                        self.counts_fd,
                        (c * CHUNK_BYTES) as libc::off_t,
                    );
                    if p != libc::MAP_FAILED {
                        return Some(p as usize);
                    }
                }
            }
            warn(&format!(
                "cannot map the counts file: {}; counting in memory",
                errno_str()
            ));
        }
        // SAFETY: anonymous private mapping, zero-filled.
        let p = unsafe {
            libc::mmap(
                addr,
                MAP_LEN,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | fixed,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as usize)
    }

    /// In a forked child: give it a record of its own. The inherited counter
    /// mappings are replaced, at the same addresses, by zeroed mappings of
    /// the child's new counts file, so every pointer the maps hold stays
    /// valid, counts start from zero, and the parent's file is untouched.
    pub fn reopen_after_fork(&mut self, cfg: &Config, parent: u32) {
        // SAFETY: closing descriptors this library owns.
        unsafe {
            libc::close(self.events_fd);
            libc::close(self.counts_fd);
        }
        self.start(cfg, Some(parent));
        let journal = std::mem::take(&mut self.journal);
        write_all(self.events_fd, &journal);
        self.journal = journal;
        for c in 0..self.chunks.len() {
            let base = self.chunks[c];
            if self.map_chunk(c, Some(base)).is_none() {
                // Never touch the inherited pages: they are the parent's counts.
                warn("cannot remap the counts after fork; this child's launches may add to its parent's record");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::write_once;

    /// Many writers of one name at once (processes of one pid in two PID
    /// namespaces, hosts of a job on a shared filesystem; here threads of
    /// one process): every one is told the file is there, and it is whole.
    #[test]
    fn writers_of_one_name_at_once_all_succeed() {
        let dir = std::env::temp_dir().join(format!("xpu-asm-write-once-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = dir.to_str().unwrap().to_string();
        let bytes: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
        for round in 0..20 {
            let name = format!("{round:02}.bin");
            let results: Vec<Result<(), String>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| write_once(&d, &name, &bytes)))
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(results.iter().all(Result::is_ok), "{results:?}");
            assert_eq!(std::fs::read(dir.join(&name)).unwrap(), bytes);
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
