//! Writing the per-process record (format: `xpu-asm-record`), so that the
//! workload never notices: no byte of it lands in a file of the
//! workload's, nothing of it raises a signal in the workload, and nothing
//! it records is lost that could be kept.
//!
//! - No descriptor is kept (`sys`): each write opens its file by its
//!   absolute path and closes it before the call returns. Whatever the
//!   workload closes, `dup2`s over or reopens, and at whatever descriptor
//!   limit it runs, the recorder's writes go to the recorder's files.
//! - Events (process, module, kernel) are rare and appended with one
//!   `write(2)` each ([`events`]): once the call that caused them returns,
//!   they are in the kernel's page cache and survive any end of the
//!   process. Space is reserved ahead of them; what cannot be written
//!   waits in memory and in the staging folder, and is written when it can.
//! - Counters live in memory that a write can never fault ([`counts`]):
//!   the counts file mapped in place where that is safe, else node-local
//!   staged memory or anonymous memory, written into the counts file at
//!   exit.
//! - When the capture folder is removed while the process runs, the next
//!   event makes the record again from what the process holds.

mod counts;
mod events;
mod staging;

use crate::config::Config;
use crate::sys;
use counts::{Counts, Place};
use events::Events;
use std::collections::HashSet;
use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use xpu_asm_record::{
    module_file_name, process_stem, push_json_str, staged_file_name, staging_header, CHUNK_SLOTS,
    COUNTS_HEADER_LEN, COUNTS_SLOT_LEN, MODULES_DIR, RECORDS_DIR, RECORD_TAG, VERSION,
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

pub struct Output {
    pub pid: u32,
    records_dir: String,
    stem: String,
    events: Events,
    counts: Counts,
    /// This record's process header line.
    header: Vec<u8>,
    /// Module, device and kernel events written so far: re-emitted into a
    /// forked child's own record so that it stands alone, and into a
    /// record made again.
    journal: Vec<u8>,
    /// The other events (counts' places, notes): into a record made again.
    others: Vec<u8>,
    /// `<out>/modules`, where module binaries are saved.
    modules_dir: String,
    /// SHA-256s of the module binaries in `modules_dir` (saved, or found
    /// there), so that a module built again costs no file-system call.
    saved: HashSet<String>,
    /// Problems already told on stderr, by kind.
    told: HashSet<&'static str>,
    /// The staging folder, once found to be the user's (`staging`).
    staging: Option<String>,
    /// Where to send a notice when the record can be written nowhere, and
    /// the key it carries.
    notify: Option<(String, String)>,
    /// A notice was sent.
    notified: bool,
}

/// Writes `dir/name` unless a file of that size is there: under a
/// temporary name, then renamed, so the final name never holds half a file.
/// The temporary name is this process's alone: its pid and a random token
/// (one pid can be two processes writing into one folder: two PID
/// namespaces on a host, two hosts of a job on a shared filesystem). The
/// names are content hashes: a rename that fails while another process
/// put the same name there in the meantime has lost nothing.
pub fn write_once(dir: &str, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = sys::cstring(&format!("{dir}/{name}")).map_err(sys::describe)?;
    let there = || sys::size_of(&path) == Some(bytes.len() as u64);
    if there() {
        return Ok(());
    }
    sys::mkdir_all(dir).map_err(|e| format!("cannot create {dir}: {}", sys::describe(e)))?;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let tmp_name = format!("{dir}/.{name}.{pid}-{}.tmp", crate::config::new_token());
    let tmp = sys::cstring(&tmp_name).map_err(sys::describe)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    let written = sys::open(&tmp, flags, 0o644).and_then(|f| match f.write_all(bytes) {
        (_, Some(e)) => Err(e),
        _ => Ok(()),
    });
    if let Err(e) = written {
        sys::unlink(&tmp);
        return Err(format!("cannot write {tmp_name}: {}", sys::describe(e)));
    }
    sys::rename(&tmp, &path).or_else(|e| {
        sys::unlink(&tmp);
        match there() {
            true => Ok(()),
            false => Err(format!("cannot rename {tmp_name}: {}", sys::describe(e))),
        }
    })
}

pub use crate::sys::warn;

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// This process's start time in clock ticks since boot
/// (`/proc/self/stat`, field 22): with the pid, which process it is.
fn start_ticks() -> u64 {
    let stat = std::fs::read("/proc/self/stat").unwrap_or_default();
    let after = stat
        .iter()
        .rposition(|b| *b == b')')
        .map_or(&stat[..0], |i| &stat[i + 1..]);
    String::from_utf8_lossy(after)
        .split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
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
    l.extend_from_slice(format!(",\"start\":{}", start_ticks()).as_bytes());
    l.extend_from_slice(b",\"job\":");
    push_job(&mut l, cfg);
    if cfg.isa_binary {
        l.extend_from_slice(b",\"isa\":\"binary\"");
    }
    if let Some(r) = cfg.dumps_by {
        l.extend_from_slice(format!(",\"dumps_by\":{r}").as_bytes());
    }
    if let Some(p) = cfg.time {
        l.extend_from_slice(format!(",\"time\":{}", p.json()).as_bytes());
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

/// The header's `job`: the process's rank, from its launcher's variables.
fn push_job(l: &mut Vec<u8>, cfg: &Config) {
    let Some(r) = &cfg.rank else {
        l.extend_from_slice(b"null");
        return;
    };
    let opt = |v: Option<u32>| v.map_or_else(|| "null".to_string(), |v| v.to_string());
    l.extend_from_slice(b"{\"launcher\":");
    push_json_str(l, r.launcher.as_str());
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
        Some(j) => push_json_str(l, j),
        None => l.extend_from_slice(b"null"),
    }
    l.push(b'}');
}

/// A path as a C string (paths come from the configuration, which holds
/// no NUL; an impossible one becomes an empty path that every call refuses).
fn c_path(p: &str) -> CString {
    CString::new(p).unwrap_or_default()
}

/// The paths of one record, by its stem.
struct Names {
    events: String,
    counts: String,
    staged_events: Option<CString>,
    staged_counts: Option<CString>,
    staging_head: Vec<u8>,
}

fn names(staging: Option<&String>, host: &str, records_dir: &str, stem: &str, pid: u32) -> Names {
    let events = format!("{records_dir}/{stem}.events");
    let counts = format!("{records_dir}/{stem}.counts");
    let staged =
        |ext: &str| staging.map(|d| c_path(&format!("{d}/{}", staged_file_name(stem, ext))));
    let head = staging_header(&events, &counts, host, pid, start_ticks());
    Names {
        staged_events: staged("events"),
        staged_counts: staged("counts"),
        staging_head: head,
        events,
        counts,
    }
}

impl Output {
    /// Creates this process's record (and its dump folder). What cannot be
    /// created now is kept in memory and staged, and made when it can.
    pub fn open(cfg: &Config) -> Output {
        let records_dir = format!("{}/{RECORDS_DIR}", cfg.out.trim_end_matches('/'));
        let mut o = Output {
            pid: 0,
            stem: String::new(),
            events: Events::new(CString::default(), None, Vec::new()),
            counts: Counts::new(CString::default(), None, Vec::new()),
            header: Vec::new(),
            journal: Vec::new(),
            others: Vec::new(),
            modules_dir: format!("{}/{MODULES_DIR}", cfg.out.trim_end_matches('/')),
            saved: HashSet::new(),
            told: HashSet::new(),
            staging: None,
            notify: cfg.notify.clone(),
            notified: false,
            records_dir,
        };
        o.staging = cfg.staging.as_ref().and_then(|d| match staging::ready(d) {
            Ok(()) => Some(d.clone()),
            Err(why) => {
                o.tell(
                    "staging",
                    &format!("staging folder refused: {why}; what cannot be kept in the capture is kept in memory"),
                );
                None
            }
        });
        o.start(cfg, None);
        o
    }

    /// Fresh record files for the current pid, and the header.
    fn start(&mut self, cfg: &Config, forked_from: Option<u32>) {
        // SAFETY: getpid has no preconditions.
        self.pid = unsafe { libc::getpid() } as u32;
        if let Err(e) = sys::mkdir_all(&self.records_dir) {
            self.tell(
                "records",
                &format!(
                    "cannot create {}: {}; this process's record waits in memory",
                    self.records_dir,
                    sys::describe(e)
                ),
            );
        }
        make_dump_folder(cfg);
        // Every process draws its own token; a forked child inherits its
        // parent's configuration, token included, so it draws a new one.
        // O_EXCL: a file already there (the same host, pid and token drawn
        // twice) is never shared; another token is drawn.
        let mut token = match forked_from {
            Some(_) => crate::config::new_token(),
            None => cfg.token.clone(),
        };
        for tries in 1.. {
            self.stem = process_stem(&cfg.host, self.pid, &token);
            let n = names(
                self.staging.as_ref(),
                &cfg.host,
                &self.records_dir,
                &self.stem,
                self.pid,
            );
            let mut staged_head = n.staging_head.clone();
            staged_head.push(b'\n');
            self.events = Events::new(c_path(&n.events), n.staged_events, staged_head);
            match self.events.create() {
                Err(libc::EEXIST) if tries < 8 => token = crate::config::new_token(),
                Err(e) => {
                    self.tell(
                        "events",
                        &format!(
                            "cannot create {}: {}; its events wait in memory",
                            n.events,
                            sys::describe(e)
                        ),
                    );
                    self.counts
                        .restart(c_path(&n.counts), n.staged_counts, n.staging_head);
                    break;
                }
                Ok(()) => {
                    self.counts
                        .restart(c_path(&n.counts), n.staged_counts, n.staging_head);
                    break;
                }
            }
        }
        self.counts.create();
        self.header = process_header(cfg, self.pid, forked_from);
        let header = self.header.clone();
        self.write(&header);
    }

    /// Appends one event line. `keep` lines (modules, devices, kernels) are
    /// also kept for a forked child's record.
    pub fn event(&mut self, line: &[u8], keep: bool) {
        match keep {
            true => self.journal.extend_from_slice(line),
            false => self.others.extend_from_slice(line),
        }
        self.write(line);
    }

    /// Writes a line (or keeps it waiting); a record that vanished is made
    /// again.
    fn write(&mut self, line: &[u8]) {
        match self.events.append(line) {
            Ok(()) => {}
            Err(libc::ENOENT) => self.make_again(),
            Err(e) => {
                let msg = format!(
                    "cannot write {}: {}; events wait in memory ({} bytes) until it can",
                    self.events.path.to_string_lossy(),
                    sys::describe(e),
                    self.events.waiting()
                );
                self.tell("write", &msg);
                if !self.events.is_staged() {
                    self.notify_nowhere(e);
                }
            }
        }
    }

    /// Neither the capture folder nor the staging folder takes the record:
    /// `xpu-asm-run` is told (once), so that the report says this process's
    /// record is missing or incomplete even if it never gets written.
    fn notify_nowhere(&mut self, e: sys::Errno) {
        let Some((name, key)) = self.notify.as_ref().filter(|_| !self.notified) else {
            return;
        };
        self.notified = true;
        let mut l = b"{\"key\":".to_vec();
        push_json_str(&mut l, key);
        l.extend_from_slice(b",\"host\":");
        push_json_str(&mut l, &self.stem_host());
        l.extend_from_slice(format!(",\"pid\":{},\"reason\":", self.pid).as_bytes());
        let why = format!(
            "its record could not be written into the capture or the staging folder ({})",
            sys::describe(e)
        );
        push_json_str(&mut l, &why);
        l.extend_from_slice(b"}\n");
        sys::notify(name.as_bytes(), &l);
    }

    /// The host part of this record's stem (`H` of `H-P-T`).
    fn stem_host(&self) -> String {
        let tail = format!("-{}-", self.pid);
        match self.stem.rfind(&tail) {
            Some(i) => self.stem[..i].to_string(),
            None => self.stem.clone(),
        }
    }

    /// The record's files were removed while the process ran (the capture
    /// folder was removed): made again from what the process holds, its
    /// counts from then on in memory until written back at the end.
    fn make_again(&mut self) {
        if sys::mkdir_all(&self.records_dir).is_err() || self.events.create().is_err() {
            return;
        }
        if !self.counts.file_is_there() {
            for c in self.counts.detach_file() {
                let why = "the capture folder was removed while the process ran";
                self.others
                    .extend_from_slice(&counts_line(c, Place::Memory, why));
            }
        }
        // What waited is in the journals, whole lines only.
        self.events.forget_pending(false);
        let mut whole = self.header.clone();
        whole.extend_from_slice(&self.journal);
        whole.extend_from_slice(&self.others);
        let _ = self.events.append(&whole);
        let _ = self.counts.write_back();
        self.tell(
            "removed",
            "the record's files were removed while this process ran; made again",
        );
    }

    /// Says `msg` on stderr once per kind of problem.
    fn tell(&mut self, kind: &'static str, msg: &str) {
        if self.told.insert(kind) {
            warn(msg);
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

    /// The counter slot of kernel `id`, placing more chunks when `id` is
    /// past the placed part. Null only when no memory at all can be had.
    pub fn counter(&mut self, id: u32) -> *const Counter {
        let (chunk, idx) = (id as usize / CHUNK_SLOTS, id as usize % CHUNK_SLOTS);
        while self.counts.chunks.len() <= chunk {
            let c = self.counts.chunks.len();
            match self.counts.place(c, None) {
                Some((ch, why)) => {
                    self.counts.chunks.push(ch);
                    if let Some(why) = why {
                        self.placed_elsewhere(c, ch.place, &why);
                    }
                }
                None => {
                    self.tell(
                        "memory",
                        "no memory for launch counters; launches of new kernels are not counted",
                    );
                    return std::ptr::null();
                }
            }
        }
        (self.counts.chunks[chunk].base + COUNTS_HEADER_LEN + idx * COUNTS_SLOT_LEN)
            as *const Counter
    }

    /// The slot id of the counter slot at `addr` (a slot of a placed
    /// chunk), for what refers to it in the record (a time block's owner).
    pub fn slot_id(&self, addr: usize) -> Option<u32> {
        self.counts.chunks.iter().enumerate().find_map(|(c, ch)| {
            let at = addr.checked_sub(ch.base + COUNTS_HEADER_LEN)?;
            (at < counts::CHUNK_BYTES).then(|| (c * CHUNK_SLOTS + at / COUNTS_SLOT_LEN) as u32)
        })
    }

    /// Says in the record (and once on stderr) that chunk `c` is not in the
    /// counts file, and why.
    fn placed_elsewhere(&mut self, c: usize, place: Place, why: &str) {
        let line = counts_line(c, place, why);
        self.event(&line, false);
        let msg = match place {
            Place::Staged => format!(
                "launch counts kept in node-local memory ({}): {why}; written into the capture at exit",
                self.counts.staged_path.as_ref().map(|p| p.to_string_lossy()).unwrap_or_default()
            ),
            _ => format!("launch counts kept in memory: {why}; written into the capture at exit, lost if the process is killed"),
        };
        self.tell("counts", &msg);
    }

    /// In a forked child: give it a record of its own. The inherited
    /// counter mappings are replaced, at the same addresses, by zeroed
    /// chunks of the child's own, so every pointer the maps hold stays
    /// valid, counts start from zero, and the parent's files are untouched.
    pub fn reopen_after_fork(&mut self, cfg: &Config, parent: u32) {
        // What waits is the parent's to write; its staged file too.
        self.events.forget_pending(true);
        self.others.clear();
        self.told.clear();
        self.notified = false;
        let chunks = std::mem::take(&mut self.counts.chunks);
        self.start(cfg, Some(parent));
        let journal = std::mem::take(&mut self.journal);
        self.write(&journal);
        self.journal = journal;
        for (c, old) in chunks.iter().enumerate() {
            match self.counts.place(c, Some(old.base)) {
                Some((ch, why)) => {
                    self.counts.chunks.push(ch);
                    if let Some(why) = why {
                        self.placed_elsewhere(c, ch.place, &why);
                    }
                }
                None => {
                    // Never touch the inherited pages: they are the parent's counts.
                    warn("cannot remap the counts after fork; this child's launches may add to its parent's record");
                    self.counts.chunks.push(*old);
                }
            }
        }
    }

    /// The process ends through `exit()`: what waits is written, the
    /// counters not in the counts file are written into it, then the exit
    /// event. Counters written back stay where they are: launches made
    /// after this (by later exit handlers) are written again at unload.
    pub fn finish_at_exit(&mut self, code: i32) {
        self.write_back();
        let line = format!("{{\"type\":\"exit\",\"code\":{code}}}\n");
        self.event(line.as_bytes(), false);
    }

    /// The library is unloaded (after every exit handler): the counters not
    /// in the file written again, and the staged files removed once
    /// nothing in them is needed any more.
    pub fn finish_at_unload(&mut self) {
        let (_, failed) = self.counts.write_back();
        if failed.is_empty() {
            self.counts.remove_staged();
        }
        if self.events.flush().is_ok() {
            self.events.release_reserve();
        }
    }

    /// Writes the counters not in the file into it, saying so for each
    /// chunk; those that cannot be written stay staged (or are lost with the
    /// process, when in memory), and the record says why.
    fn write_back(&mut self) {
        let _ = self.events.flush();
        let (done, failed) = self.counts.write_back();
        for c in done {
            self.event(&counts_line(c, Place::File, "written at exit"), false);
        }
        for (c, why) in failed {
            let place = self.counts.chunks[c].place;
            let msg = format!("cannot write them into the counts file at exit: {why}");
            self.event(&counts_line(c, place, &msg), false);
            self.tell(
                "exit",
                &format!("launch counts could not be written at exit: {why}"),
            );
        }
    }
}

/// Where chunk `c`'s counts are: `{"type":"counts","chunk":c,"place":..,"reason":..}`.
fn counts_line(c: usize, place: Place, why: &str) -> Vec<u8> {
    let mut l = format!(
        "{{\"type\":\"counts\",\"chunk\":{c},\"place\":\"{}\",\"reason\":",
        place.name()
    )
    .into_bytes();
    push_json_str(&mut l, why);
    l.extend_from_slice(b"}\n");
    l
}

/// IGC's dump folder, when dumps are wanted: with `--isa binary` IGC
/// dumps nothing, unless the user asked it to.
fn make_dump_folder(cfg: &Config) {
    let wanted = !cfg.isa_binary || cfg.env.iter().any(|(n, _, _)| n == "IGC_DumpToCustomDir");
    if wanted {
        if let Err(e) = sys::mkdir_all(&cfg.dump_dir_abs) {
            warn(&format!(
                "cannot create IGC dump folder {}: {}",
                cfg.dump_dir_abs,
                sys::describe(e)
            ));
        }
    }
}

/// Makes sure the dump folder is there before a module is built (it may
/// have been removed with the capture folder while the process ran).
pub fn ensure_dump_folder(cfg: &Config) {
    let wanted = !cfg.isa_binary || cfg.env.iter().any(|(n, _, _)| n == "IGC_DumpToCustomDir");
    if wanted {
        let _ = sys::mkdir_all(&cfg.dump_dir_abs);
    }
}

/// Below this many bytes free on the dump folder's filesystem after a
/// build, IGC may not have written all of that module's dumps.
pub const LOW_SPACE: u64 = 4 << 20;

/// The bytes free on the dump folder's filesystem when that is below
/// [`LOW_SPACE`] (with `--isa binary`, on the modules folder's).
pub fn space_left_if_low(cfg: &Config) -> Option<u64> {
    let dir = match cfg.isa_binary {
        true => format!("{}/{MODULES_DIR}", cfg.out.trim_end_matches('/')),
        false => cfg.dump_dir_abs.clone(),
    };
    sys::free_bytes(&c_path(&dir)).filter(|free| *free < LOW_SPACE)
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
