//! What processes kept in the staging folder (node-local memory: the
//! user's own `<XPU_ASM_STAGING or /dev/shm>/xpu-asm-<uid>`) because the
//! capture folder could not take it: launch counts that could not be
//! mapped there safely or at all, events that could not be written. A
//! process writes them into its record itself when it can, and at exit;
//! one that was killed leaves them here, and the collection on that host
//! writes them into the capture ([`adopt`]), or, when the capture cannot
//! take them either, reads them where they are ([`overlay`]).
//!
//! Nothing in a staged file decides where anything is written: the folder
//! must be the user's, each file the user's (regular, one link, opened
//! without following a link), and the record it goes into is named by the
//! capture folder and the file's own name (`xpu-asm-<stem>.events` goes
//! into `<capture>/records/<stem>.events`); its header only says whether
//! it is this capture's. What fails a check is refused with a warning that
//! names it (docs/limits.md, "Security").

use super::trust;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use xpu_asm_record::read::{apply_counts, parse_more_events, ProcessRecord};
use xpu_asm_record::{
    counts_header, CHUNK_SLOTS, COUNTS_HEADER_LEN, COUNTS_SLOT_LEN, STAGED_COUNTS_MAGIC,
    STAGED_FLAGS_AT, STAGED_HEAD_LEN, STAGING_DEFAULT, STAGING_ENV, STAGING_TAG,
};

const CHUNK_BYTES: usize = CHUNK_SLOTS * COUNTS_SLOT_LEN;

/// The staging filesystem this host's processes use (`XPU_ASM_STAGING`,
/// default `/dev/shm`).
pub fn staging_base() -> PathBuf {
    match std::env::var_os(STAGING_ENV).filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(STAGING_DEFAULT),
    }
}

/// The user's staging folder in it: `<base>/xpu-asm-<uid>`.
pub fn staging_dir() -> PathBuf {
    let base = staging_base();
    PathBuf::from(xpu_asm_record::trust::user_staging_folder(
        &base.to_string_lossy(),
        trust::me(),
    ))
}

/// Before the command runs: the user's staging folder made (0700) when
/// the staging filesystem is there, and refused when it is not the
/// user's. `Ok` when there is no staging filesystem (the interposer then
/// keeps in memory what the capture cannot take).
pub fn prepare() -> Result<(), String> {
    if !staging_base().is_dir() {
        return Ok(());
    }
    let dir = staging_dir();
    trust::ready_staging(&dir).map_err(|why| {
        format!(
            "the staging folder {why}: another user could put files there that the collection would take in. \
             Remove it if it is yours, or set XPU_ASM_STAGING to a node-local folder only you can write \
             (for example XPU_ASM_STAGING=$XDG_RUNTIME_DIR); see docs/limits.md, \"Security\"",
        )
    })
}

/// Whose staged files these are: the header both of them start with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub events: PathBuf,
    pub counts: PathBuf,
    pub host: String,
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    fn parse(json: &[u8]) -> Option<Owner> {
        let v: serde_json::Value = serde_json::from_slice(json).ok()?;
        if v.get("record")?.as_str()? != STAGING_TAG {
            return None;
        }
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        Some(Owner {
            events: PathBuf::from(s("events")?),
            counts: PathBuf::from(s("counts")?),
            host: s("host")?,
            pid: v.get("pid")?.as_u64()? as u32,
            start: v.get("start")?.as_u64()?,
        })
    }

    /// Whether this process still runs (on this host: same pid, same
    /// start time). A process of another host is taken as ended.
    pub fn running(&self) -> bool {
        self.host == xpu_asm_record::host_name() && still_running(self.pid, Some(self.start))
    }
}

/// Whether process `pid`, started at `start` (clock ticks since boot, when
/// known), still runs on this host.
pub fn still_running(pid: u32, start: Option<u64>) -> bool {
    let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some(start) = start else { return true };
    let after = stat
        .iter()
        .rposition(|b| *b == b')')
        .map_or(&stat[..0], |i| &stat[i + 1..]);
    let now: Option<u64> = String::from_utf8_lossy(after)
        .split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok());
    // A zombie has ended: its counts are final.
    let zombie = String::from_utf8_lossy(after).split_whitespace().next() == Some("Z");
    now == Some(start) && !zombie
}

/// One process's staged files.
#[derive(Debug, Clone)]
pub struct Staged {
    pub owner: Owner,
    /// `xpu-asm-H-P-T.events`: events not yet in the record, and its
    /// bytes as read (through a descriptor checked to be the user's file).
    pub events: Option<(PathBuf, Vec<u8>)>,
    /// `xpu-asm-H-P-T.counts`: counters not (yet) in the counts file.
    pub counts: Option<(PathBuf, Vec<u8>)>,
}

/// The staged files of processes of the capture `dir`, by record; what
/// is refused goes to `warnings`, named.
pub fn find(dir: &Path, warnings: &mut Vec<String>) -> Vec<Staged> {
    let staging = staging_dir();
    let Ok(rd) = std::fs::read_dir(&staging) else {
        return Vec::new();
    };
    if let Some(why) = trust::folder_not_own(&staging) {
        warnings.push(format!(
            "staging folder {} refused: it {why}; nothing in it was read",
            staging.display()
        ));
        return Vec::new();
    }
    let records = records_dir_names(dir);
    let mut found: Vec<Staged> = Vec::new();
    for e in rd.flatten() {
        let Some((owner, is_events, path, bytes)) = read_entry(&e, &records, warnings) else {
            continue;
        };
        let at = match found.iter().position(|s| s.owner.events == owner.events) {
            Some(i) => i,
            None => {
                found.push(Staged {
                    owner,
                    events: None,
                    counts: None,
                });
                found.len() - 1
            }
        };
        match is_events {
            true => found[at].events = Some((path, bytes)),
            false => found[at].counts = Some((path, bytes)),
        }
    }
    found.sort_by(|a, b| a.owner.events.cmp(&b.owner.events));
    found
}

/// One entry of the staging folder, when it is a staged file of this
/// capture's (`records`: the ways its `records/` is named) and the user's:
/// whose it is (its record named by the capture and the file's name),
/// whether it holds events, its path and its bytes. What is refused is
/// said in `warnings`.
fn read_entry(
    e: &std::fs::DirEntry,
    records: &[PathBuf],
    warnings: &mut Vec<String>,
) -> Option<(Owner, bool, PathBuf, Vec<u8>)> {
    let name = e.file_name().to_string_lossy().into_owned();
    let rest = name.strip_prefix("xpu-asm-")?;
    let (stem, is_events) = match rest.rsplit_once('.') {
        Some((stem, "events")) => (stem, true),
        Some((stem, "counts")) => (stem, false),
        _ => return None,
    };
    let path = e.path();
    let bytes = read_own(&path)
        .map_err(|why| warnings.push(format!("staged file {} refused: it {why}", path.display())))
        .ok()?;
    let claimed = read_owner(&bytes, is_events)?;
    // Another capture's (the user's other runs): not this one's to take.
    if !claimed
        .events
        .parent()
        .is_some_and(|p| records.iter().any(|r| r == p))
    {
        return None;
    }
    // The record it goes into: named by the capture and the file's name.
    let records_dir = records.first()?;
    let owner = Owner {
        events: records_dir.join(format!("{stem}.events")),
        counts: records_dir.join(format!("{stem}.counts")),
        ..claimed.clone()
    };
    let names_match = claimed.events.file_name() == owner.events.file_name()
        && claimed.counts.file_name() == owner.counts.file_name()
        && claimed.counts.parent() == claimed.events.parent()
        && xpu_asm_record::process_stem(&claimed.host, claimed.pid, stem_token(stem)) == stem;
    if !names_match {
        warnings.push(format!(
            "staged file {} refused: its header names another record than its file name",
            path.display()
        ));
        return None;
    }
    Some((owner, is_events, path, bytes))
}

/// The token of a stem `H-P-T` (its last part).
fn stem_token(stem: &str) -> &str {
    stem.rsplit_once('-').map_or("", |(_, t)| t)
}

/// A staged file's bytes, read through a descriptor checked to be the
/// user's file (opened without following a link).
fn read_own(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut f = trust::open_own_file(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    Ok(bytes)
}

/// The ways the capture's `records/` folder can be named (as given, and
/// as it is once links are resolved).
fn records_dir_names(dir: &Path) -> Vec<PathBuf> {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut v = vec![abs.join(xpu_asm_record::RECORDS_DIR)];
    if let Ok(c) = std::fs::canonicalize(dir) {
        v.push(c.join(xpu_asm_record::RECORDS_DIR));
    }
    v
}

/// The header of a staged file: an events file's first line, a counts
/// file's first page.
fn read_owner(bytes: &[u8], is_events: bool) -> Option<Owner> {
    let head = &bytes[..bytes.len().min(STAGED_HEAD_LEN)];
    match is_events {
        true => Owner::parse(&head[..head.iter().position(|b| *b == b'\n')?]),
        false => {
            if head.len() < STAGED_FLAGS_AT || head[..8] != STAGED_COUNTS_MAGIC {
                return None;
            }
            let len = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
            Owner::parse(head.get(16..16 + len)?)
        }
    }
}

/// The staged events: everything after the header line.
fn staged_events(bytes: &[u8]) -> Option<Vec<u8>> {
    let start = bytes.iter().position(|b| *b == b'\n')? + 1;
    Some(bytes[start..].to_vec())
}

/// The chunks a staged counts file holds, each as (its index, its bytes
/// as they go into the counts file, at that offset).
fn staged_chunks(bytes: &[u8]) -> Option<Vec<(usize, u64, Vec<u8>)>> {
    let flags = bytes.get(STAGED_FLAGS_AT..STAGED_HEAD_LEN)?;
    let mut out = Vec::new();
    for (c, _) in flags.iter().enumerate().filter(|(_, f)| **f == 1) {
        let (from, len) = match c {
            0 => (0, COUNTS_HEADER_LEN + CHUNK_BYTES),
            _ => (c * CHUNK_BYTES + COUNTS_HEADER_LEN, CHUNK_BYTES),
        };
        let Some(b) = bytes.get(STAGED_HEAD_LEN + from..STAGED_HEAD_LEN + from + len) else {
            continue;
        };
        out.push((c, from as u64, b.to_vec()));
    }
    Some(out)
}

/// What [`adopt`] did: the staged files left (still running, or the
/// capture could not take them), and for each record it wrote into, the
/// chunks of counters it wrote.
pub struct Adopted {
    pub left: Vec<Staged>,
    pub written: Vec<(PathBuf, BTreeSet<u32>)>,
}

/// Writes the staged files of processes that have ended into their
/// records and removes them, with a warning for each the capture could
/// not take.
pub fn adopt(staged: Vec<Staged>, warnings: &mut Vec<String>) -> Adopted {
    let mut left = Vec::new();
    let mut written = Vec::new();
    let here = xpu_asm_record::host_name();
    for s in staged {
        // Another host's (a staging folder shared, against its purpose):
        // read, never taken, as whether it runs cannot be told here.
        if s.owner.host != here || s.owner.running() {
            left.push(s);
            continue;
        }
        match write_into_record(&s) {
            Ok(chunks) => {
                for (p, _) in [&s.events, &s.counts].into_iter().flatten() {
                    let _ = std::fs::remove_file(p);
                }
                written.push((s.owner.events.clone(), chunks));
            }
            Err(e) => {
                warnings.push(format!(
                    "process {} on {}: what it kept in {} could not be written into the capture ({e}); read from there, and kept until a collection can write it",
                    s.owner.pid,
                    s.owner.host,
                    staging_dir().display()
                ));
                left.push(s);
            }
        }
    }
    Adopted { left, written }
}

/// After a command ended: what its processes on this host left staged is
/// written into the capture now (each rank of a job does it for its own,
/// so that a killed rank's counts reach the shared folder from its host).
/// Returns the warnings.
pub fn finish_here(dir: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    let found = find(dir, &mut warnings);
    let _ = adopt(found, &mut warnings);
    warnings
}

fn io(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot write {}: {e}", p.display())
}

/// Writes `s` into its record (`<capture>/records/<stem>.*`, never
/// through a link, only into the user's files); the chunks of counters
/// written.
fn write_into_record(s: &Staged) -> Result<BTreeSet<u32>, String> {
    let mut written = BTreeSet::new();
    if let Some(dir) = s.owner.events.parent() {
        trust::make_folder(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if let Some(why) = trust::folder_not_own(dir) {
            return Err(format!("{} {why}", dir.display()));
        }
    }
    if let Some((_, bytes)) = &s.events {
        let bytes = staged_events(bytes).unwrap_or_default();
        if !bytes.is_empty() {
            let mut f = trust::open_own_for_write(&s.owner.events, true, true)?;
            f.write_all(&bytes).map_err(io(&s.owner.events))?;
        }
    }
    if let Some((_, bytes)) = &s.counts {
        use std::os::unix::fs::FileExt;
        let chunks = staged_chunks(bytes).unwrap_or_default();
        let f = trust::open_own_for_write(&s.owner.counts, false, true)?;
        let len = f.metadata().map_err(io(&s.owner.counts))?.len();
        if len < COUNTS_HEADER_LEN as u64 {
            f.write_all_at(&counts_header(), 0)
                .map_err(io(&s.owner.counts))?;
        }
        for (c, at, bytes) in chunks {
            f.write_all_at(&bytes, at).map_err(io(&s.owner.counts))?;
            written.insert(c as u32);
        }
        // The record says so itself: its chunks are in the file now.
        let mut said = Vec::new();
        for c in &written {
            said.extend_from_slice(format!(
                "{{\"type\":\"counts\",\"chunk\":{c},\"place\":\"file\",\"reason\":\"written from node-local memory after the process ended\"}}\n"
            ).as_bytes());
        }
        if !said.is_empty() {
            let mut e = trust::open_own_for_write(&s.owner.events, true, true)?;
            e.write_all(&said).map_err(io(&s.owner.events))?;
        }
    }
    Ok(written)
}

/// Reads what `s` staged into `rec` (its events after the record's, its
/// staged counters over the counts file's: they are as new or newer).
/// Returns the chunks whose counters it read.
pub fn overlay(rec: &mut ProcessRecord, s: &Staged) -> BTreeSet<u32> {
    if let Some((p, bytes)) = &s.events {
        if let Some(bytes) = staged_events(bytes) {
            parse_more_events(&bytes, &p.display().to_string(), rec);
        }
    }
    let mut read = BTreeSet::new();
    // The counts again, for the kernels the staged events named too.
    let counts_path = rec.events_path.with_extension("counts");
    let mut merged = std::fs::read(&counts_path).unwrap_or_default();
    if merged.len() < COUNTS_HEADER_LEN {
        merged = counts_header().to_vec();
    }
    let chunks = s
        .counts
        .as_ref()
        .and_then(|(_, b)| staged_chunks(b))
        .unwrap_or_default();
    for (c, at, bytes) in chunks {
        let end = at as usize + bytes.len();
        if merged.len() < end {
            merged.resize(end, 0);
        }
        merged[at as usize..end].copy_from_slice(&bytes);
        read.insert(c as u32);
    }
    apply_counts(&merged, &counts_path.display().to_string(), rec);
    if !read.is_empty() || rec.counts_missing.is_some() {
        rec.counts_missing = None;
    }
    read
}
