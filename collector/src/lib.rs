//! xpu-asm's collector: runs a command under the interposer
//! ([`launch`]) and then matches every kernel the command launched to the
//! GPU ISA IGC compiled for it ([`collect`]).
//!
//! A capture folder holds:
//!
//! * `run.json`: the command and how it ended ([`launch::RunInfo`]);
//! * `records/`: what the interposer recorded per process;
//! * `dumps/<host>-<pid>/`: IGC's dumps per process;
//! * `report.json`: the report ([`report::Report`], schema [`report::SCHEMA`]);
//! * `asm/`: a readable copy of each launched kernel's ISA;
//! * `collect.json`: facts the first collection read from dump files it then
//!   pruned (dump sizes before pruning, which attempt IGC kept), so that a
//!   later `collect` reports the same.

pub mod cli;
pub mod dumps;
pub mod launch;
pub mod matching;
pub mod names;
pub mod native;
mod par;
pub mod report;

use dumps::{DumpFolder, Usage};
use matching::{ProcessInput, Status};
use report::{DumpsInfo, Exit, KernelEntry, ProcessEntry, Report, Totals};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use xpu_asm_record::read::ProcessRecord;

/// File names inside a capture folder.
pub const RUN_FILE: &str = "run.json";
pub const REPORT_FILE: &str = "report.json";
pub const STATE_FILE: &str = "collect.json";
pub const ASM_DIR: &str = "asm";

/// Which dump files survive collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// Every `.asm` and `.spv`; the other intermediates (LLVM IR, vISA,
    /// binaries...) are deleted.
    #[default]
    Asm,
    /// Only the launched kernels' `.asm` files and their modules' `.spv`.
    Launched,
    /// Everything IGC wrote.
    All,
}

impl Keep {
    pub fn as_str(self) -> &'static str {
        match self {
            Keep::Asm => "asm",
            Keep::Launched => "launched",
            Keep::All => "all",
        }
    }
}

/// Progress messages (shown only on a terminal by the binary).
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// How to collect.
#[derive(Clone, Default)]
pub struct Options {
    /// List only kernels whose mangled or demangled name matches.
    pub filter: Option<regex::Regex>,
    /// Also list compiled kernels that were never launched.
    pub all: bool,
    pub keep: Keep,
    /// Set to stop promptly (a second Ctrl-C): the folder stays usable.
    pub stop: Option<&'static AtomicBool>,
    pub progress: Option<Progress>,
}

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("{0}: no such folder")]
    NotFound(PathBuf),
    #[error(
        "{0} is not an xpu-asm capture (it has no records/, {RUN_FILE} or {REPORT_FILE}); \
         give the folder that `xpu-asm-run -o DIR` wrote"
    )]
    NotACapture(PathBuf),
    #[error("interrupted; {0} is intact: run `xpu-asm-run collect {0}` to finish the report")]
    Interrupted(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// True when `dir` holds an earlier capture.
pub fn is_capture(dir: &Path) -> bool {
    dir.join(xpu_asm_record::RECORDS_DIR).is_dir()
        || dir.join(REPORT_FILE).is_file()
        || dir.join(RUN_FILE).is_file()
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct CollectState {
    schema: u32,
    dumps_before: Option<Usage>,
    /// shown `.asm` path -> whether its code is the final binary
    #[serde(default)]
    final_binary: BTreeMap<String, bool>,
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
struct Pending {
    tmp: PathBuf,
    path: PathBuf,
}

/// Writes what `write` writes (through a buffer) next to `path`.
fn write_pending(
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
    fn commit(self) -> Result<(), CollectError> {
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

/// Where a process's dumps are, as its record says.
struct DumpLocation {
    path: PathBuf,
    shown: String,
    /// Inside `<dir>/dumps/`: pruning may touch it.
    prunable: bool,
}

fn resolve_dump_dir(dir: &Path, rec: &ProcessRecord, warnings: &mut Vec<String>) -> DumpLocation {
    let rel = if rec.dump_dir.is_empty() {
        xpu_asm_record::dump_dir_name(&rec.host, rec.pid)
    } else {
        rec.dump_dir.clone()
    };
    let p = Path::new(&rel);
    if p.is_absolute() {
        warnings.push(format!(
            "process {}: dump folder {rel} is outside the capture; it is read but never pruned",
            rec.pid
        ));
        return DumpLocation {
            path: p.to_path_buf(),
            shown: rel,
            prunable: false,
        };
    }
    let safe = p.components().all(|c| matches!(c, Component::Normal(_)))
        && !rel.contains('\0')
        && p.components().next().is_some();
    if !safe {
        warnings.push(format!(
            "process {}: dump folder {rel:?} in its record is not a plain path inside the capture; ignored",
            rec.pid
        ));
        return DumpLocation {
            // A path that cannot exist: the process is treated as having no dumps.
            path: dir.join(xpu_asm_record::DUMPS_DIR).join("\u{0}invalid"),
            shown: format!("{rel:?}"),
            prunable: false,
        };
    }
    let prunable = p
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == xpu_asm_record::DUMPS_DIR)
        && p.components().count() >= 2;
    DumpLocation {
        path: dir.join(p),
        shown: rel,
        prunable,
    }
}

fn strip_dir(dir: &Path, s: &str) -> String {
    let prefix = format!("{}/", dir.display());
    s.replace(&prefix, "")
}

/// Matches and reports on the capture folder `dir` without running
/// anything: reads the records and dumps, writes `report.json` and `asm/`,
/// prunes the dumps as `opts.keep` says, and returns the report.
pub fn collect(dir: &Path, opts: &Options) -> Result<Report, CollectError> {
    let stop_flag = opts.stop;
    let stop = move || stop_flag.is_some_and(|s| s.load(Ordering::SeqCst));
    let interrupted = || CollectError::Interrupted(dir.to_path_buf());
    let progress = |m: &str| {
        if let Some(p) = &opts.progress {
            p(m)
        }
    };
    if !dir.is_dir() {
        return Err(CollectError::NotFound(dir.to_path_buf()));
    }
    if !is_capture(dir) {
        return Err(CollectError::NotACapture(dir.to_path_buf()));
    }
    let mut warnings: Vec<String> = Vec::new();

    let run = launch::read_run_info(dir, &mut warnings);
    let state_path = dir.join(STATE_FILE);
    let mut state: CollectState = match std::fs::read(&state_path) {
        Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|e| {
            warnings.push(format!(
                "{STATE_FILE}: unreadable ({e}); rebuilt from the dumps"
            ));
            CollectState::default()
        }),
        Err(_) => CollectState::default(),
    };

    progress("reading records");
    let records_dir = dir.join(xpu_asm_record::RECORDS_DIR);
    let mut recs: Vec<ProcessRecord> = if records_dir.is_dir() {
        match xpu_asm_record::read::read_dir(&records_dir) {
            Ok(r) => r,
            Err(e) => {
                warnings.push(strip_dir(dir, &e));
                Vec::new()
            }
        }
    } else {
        warnings.push(format!(
            "no {}/ folder: nothing was recorded",
            xpu_asm_record::RECORDS_DIR
        ));
        Vec::new()
    };
    for r in &recs {
        warnings.extend(r.warnings.iter().map(|w| strip_dir(dir, w)));
    }
    // A record without a readable header has no process to speak of.
    recs.retain(|r| r.pid != 0 || !r.host.is_empty());
    recs.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    if stop() {
        return Err(interrupted());
    }

    let mut locations = Vec::new();
    let mut folders: Vec<DumpFolder> = Vec::new();
    for (i, rec) in recs.iter().enumerate() {
        let loc = resolve_dump_dir(dir, rec, &mut warnings);
        progress(&format!(
            "scanning {} ({}/{})",
            names::escape_for_terminal(&loc.shown),
            i + 1,
            recs.len()
        ));
        // A forked child shares its parent's dump folder: scan it once.
        let f = match folders.iter().find(|f| f.path == loc.path) {
            Some(seen) => seen.clone(),
            None => {
                let f = dumps::scan_folder(&loc.path, &loc.shown, &state.final_binary, &stop)
                    .map_err(|_| interrupted())?;
                warnings.extend(f.warnings.iter().cloned());
                f
            }
        };
        locations.push(loc);
        folders.push(f);
    }

    progress("matching");
    let inputs: Vec<ProcessInput> = recs
        .iter()
        .zip(&folders)
        .map(|(rec, folder)| ProcessInput { rec, folder })
        .collect();
    // Unlaunched kernels are listed only with --all; else only counted.
    let matching = matching::match_all_listing(&inputs, opts.all);
    warnings.extend(matching.warnings.iter().cloned());

    // The report's launched kernels, ranked: each name demangled once, on
    // every core.
    let demangled = par::map(&matching.launched, |k| names::demangle(&k.name));
    let mut order: Vec<usize> = (0..matching.launched.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&matching.launched[a], &matching.launched[b]);
        kb.launches
            .cmp(&ka.launches)
            .then(kb.appended.cmp(&ka.appended))
            .then_with(|| demangled[a].cmp(&demangled[b]))
            .then_with(|| ka.name.cmp(&kb.name))
            .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
    });
    let passes = |name: &[u8], demangled: &str| match &opts.filter {
        None => true,
        Some(re) => re.is_match(&String::from_utf8_lossy(name)) || re.is_match(demangled),
    };
    let total_launched = order.len();
    order.retain(|&i| passes(&matching.launched[i].name, &demangled[i]));
    let filtered_out = (total_launched - order.len()) as u64;

    // asm/ is filled on a thread of its own (links into one folder go no
    // faster from more threads) while everything else is done here,
    // including writing the report as if every link will succeed; it is
    // written again in the rare case one does not.
    let ranked: Vec<(usize, usize)> = order.iter().copied().enumerate().collect();
    let links: Vec<Link> = par::map(&ranked, |&(r, i)| {
        let k = &matching.launched[i];
        k.chosen_file().map(|src| Link {
            entry: r,
            path: src.path.clone(),
            shown: src.shown.clone(),
            file: names::asm_file_name(r + 1, &demangled[i], &k.name),
        })
    })
    .into_iter()
    .flatten()
    .collect();
    drop(ranked);
    progress("copying ISA files");
    let report_path = dir.join(REPORT_FILE);
    let base_warnings = warnings.len();
    let (copied, done) = std::thread::scope(|s| {
        // While it links, work here leaves it a core. (Without a thread,
        // the links are made here at the end.)
        let busy = par::Busy::new();
        let (to_link, stop_ref) = (&links, &stop);
        let copier = std::thread::Builder::new()
            .spawn_scoped(s, move || {
                let _done_when_dropped = busy;
                copy_asm(dir, to_link, stop_ref)
            })
            .ok();
        let done = (|| {
            let (prune_warnings, after) = save_state_and_prune(
                dir,
                opts,
                &state_path,
                &mut state,
                &folders,
                &locations,
                &matching,
                &stop,
                &progress,
            )?;
            progress("copying ISA files");
            let processes = process_entries(&recs, &locations, &folders, run.as_ref());
            // What is no longer needed goes while the links are made.
            drop((folders, recs));

            let mut kernels: Vec<KernelEntry> = par::map(&order, |&i| {
                KernelEntry::from_match_demangled(0, &matching.launched[i], demangled[i].clone())
            });
            for (r, k) in kernels.iter_mut().enumerate() {
                k.rank = r + 1;
            }
            let totals = Totals {
                kernels: kernels.len() as u64,
                launches: kernels.iter().map(|k| k.launches).sum(),
                appended: kernels.iter().map(|k| k.appended).sum(),
                matched: kernels
                    .iter()
                    .filter(|k| k.status == Status::Matched)
                    .count() as u64,
                unmatched: kernels
                    .iter()
                    .filter(|k| k.status != Status::Matched)
                    .count() as u64,
                filtered_out,
            };
            if opts.all {
                let un_demangled = par::map(&matching.unlaunched, |k| names::demangle(&k.name));
                let mut un: Vec<usize> = (0..matching.unlaunched.len())
                    .filter(|&i| passes(&matching.unlaunched[i].name, &un_demangled[i]))
                    .collect();
                un.sort_by(|&a, &b| {
                    let (ka, kb) = (&matching.unlaunched[a], &matching.unlaunched[b]);
                    un_demangled[a]
                        .cmp(&un_demangled[b])
                        .then_with(|| ka.name.cmp(&kb.name))
                        .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
                });
                let first = kernels.len() + 1;
                let ranked: Vec<(usize, usize)> = un.into_iter().enumerate().collect();
                kernels.extend(par::map(&ranked, |&(r, i)| {
                    KernelEntry::from_match_demangled(
                        first + r,
                        &matching.unlaunched[i],
                        un_demangled[i].clone(),
                    )
                }));
            }

            let unlaunched_compiled = matching.unlaunched.len() as u64;
            drop((matching, demangled, order));

            for l in &links {
                kernels[l.entry].asm_copy = Some(format!("{ASM_DIR}/{}", l.file));
            }
            // The copying's warnings, if any, will go before pruning's.
            warnings.extend(prune_warnings);
            let report = Report {
                schema: report::SCHEMA,
                tool: format!("xpu-asm-run {}", env!("CARGO_PKG_VERSION")),
                command: run.as_ref().map(|r| r.command.clone()),
                exit: run.as_ref().and_then(|r| r.exit),
                emulate: run.as_ref().and_then(|r| r.emulate.clone()),
                processes,
                unlaunched_compiled,
                unlaunched_listed: opts.all,
                kernels,
                totals,
                filter: opts.filter.as_ref().map(|r| r.as_str().to_string()),
                dumps: DumpsInfo {
                    keep: opts.keep.as_str().to_string(),
                    before: state.dumps_before.unwrap_or(after),
                    after,
                },
                warnings,
            };
            let written = if stop() {
                None
            } else {
                Some(write_report(&report_path, &report)?)
            };
            Ok((report, written))
        })();
        par::Busy::unregister();
        let copied = match copier.map(|c| c.join()) {
            Some(Ok(c)) => c,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => copy_asm(dir, &links, &stop),
        };
        (copied, done)
    });
    let (mut report, mut written) = done?;
    let copied = copied.map_err(|_| interrupted())?;

    // Links that failed: no copy, and a warning each, after the folder's.
    let mut copy_warnings = copied.warnings;
    let all_linked = copied.links.len() == links.len();
    for (l, res) in links.iter().zip(&copied.links) {
        if let Err(e) = res {
            report.kernels[l.entry].asm_copy = None;
            copy_warnings.push(format!(
                "{}: cannot copy to {ASM_DIR}/{}: {e}",
                l.shown, l.file
            ));
        }
    }
    if !all_linked {
        // asm/ could not be made: no copies at all.
        for l in &links[copied.links.len()..] {
            report.kernels[l.entry].asm_copy = None;
        }
    }
    if !copy_warnings.is_empty() || !all_linked {
        let prune_warnings = report.warnings.split_off(base_warnings);
        report.warnings.extend(copy_warnings);
        report.warnings.extend(prune_warnings);
        written = None;
    }
    if stop() {
        return Err(interrupted());
    }
    match written {
        Some(w) => w.commit()?,
        None => write_report(&report_path, &report)?.commit()?,
    }
    Ok(report)
}

/// `report` as `report.json` (pretty JSON and a newline), written next to
/// `path`, to be put in place by [`Pending::commit`].
fn write_report(path: &Path, report: &Report) -> Result<Pending, CollectError> {
    write_pending(path, |w| {
        serde_json::to_writer_pretty(&mut *w, report)?;
        w.write_all(b"\n")
    })
}

/// Measures the dumps, saves in `collect.json` what pruning is about to
/// destroy, then prunes as `opts.keep` says. Returns the pruning's warnings
/// and the dumps' size after it.
#[allow(clippy::too_many_arguments)]
fn save_state_and_prune(
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
            .flat_map(|k| k.candidates.iter().map(|a| a.path.as_path()))
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

fn process_entries(
    recs: &[ProcessRecord],
    locations: &[DumpLocation],
    folders: &[DumpFolder],
    run: Option<&launch::RunInfo>,
) -> Vec<ProcessEntry> {
    recs.iter()
        .zip(locations.iter().zip(folders))
        .map(|(r, (loc, f))| {
            let from_wait = run
                .filter(|ri| ri.pid == Some(r.pid))
                .and_then(|ri| ri.exit);
            let (exit, ended) = match (from_wait, r.exit_code) {
                (Some(e), _) => (Some(e), "seen by xpu-asm-run".to_string()),
                (None, Some(c)) => (Some(Exit::Code(c)), "exit event in its record".to_string()),
                (None, None) => (
                    None,
                    "unknown: its record has no exit event (killed, crashed, or it ran exec)"
                        .to_string(),
                ),
            };
            ProcessEntry {
                pid: r.pid,
                ppid: r.ppid,
                host: r.host.clone(),
                exe: r.exe.clone(),
                forked_from: r.forked_from,
                dump_dir: loc.shown.clone(),
                dump_dir_exists: f.exists,
                launches: r.kernels.values().map(|k| k.launches).sum(),
                appended: r.kernels.values().map(|k| k.appended).sum(),
                unknown_launches: r.unknown_launches,
                exit,
                ended,
            }
        })
        .collect()
}

/// One launched kernel's chosen `.asm` and its readable copy.
struct Link {
    /// Index of the kernel in the report.
    entry: usize,
    path: PathBuf,
    shown: String,
    /// File name under `asm/`.
    file: String,
}

/// What [`copy_asm`] did: a result per link, in order (none at all when
/// `asm/` could not be made), and warnings about the folder itself.
struct Copied {
    links: Vec<std::io::Result<()>>,
    warnings: Vec<String>,
}

/// Rebuilds `asm/` with one readable copy (a hard link when possible) of
/// each chosen `.asm` of `links`.
fn copy_asm(dir: &Path, links: &[Link], stop: &dyn Fn() -> bool) -> Result<Copied, dumps::Stopped> {
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
fn link_or_copy(src: &Path, dest: &Path) -> std::io::Result<()> {
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
