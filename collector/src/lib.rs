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
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp.{}", std::process::id()));
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
    let matching = matching::match_all(&inputs);
    warnings.extend(matching.warnings.iter().cloned());

    // Save what pruning is about to destroy, before pruning.
    let dumps_root = dir.join(xpu_asm_record::DUMPS_DIR);
    let mut new_state = state.clone();
    new_state.schema = 1;
    if new_state.dumps_before.is_none() {
        new_state.dumps_before = Some(dumps::usage(&dumps_root));
    }
    for f in &folders {
        for a in &f.asm {
            if let Some(v) = a.final_binary {
                new_state.final_binary.insert(a.shown.clone(), v);
            }
        }
    }
    if new_state.dumps_before != state.dumps_before || new_state.final_binary != state.final_binary
    {
        let bytes = serde_json::to_vec_pretty(&new_state).unwrap_or_default();
        write_atomic(&state_path, &bytes)?;
        state = new_state;
    }
    if stop() {
        return Err(interrupted());
    }

    // The report's kernels.
    let mut launched = matching.launched.clone();
    launched.sort_by_cached_key(|k| {
        (
            std::cmp::Reverse(k.launches),
            std::cmp::Reverse(k.appended),
            names::demangle(&k.name),
            k.name.clone(),
            k.module_sha256.clone(),
        )
    });
    let passes = |name: &[u8]| match &opts.filter {
        None => true,
        Some(re) => {
            re.is_match(&String::from_utf8_lossy(name)) || re.is_match(&names::demangle(name))
        }
    };
    let total_launched = launched.len();
    launched.retain(|k| passes(&k.name));
    let filtered_out = (total_launched - launched.len()) as u64;
    let mut kernels: Vec<KernelEntry> = launched
        .iter()
        .enumerate()
        .map(|(i, k)| KernelEntry::from_match(i + 1, k))
        .collect();
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
        let mut un: Vec<_> = matching
            .unlaunched
            .iter()
            .filter(|k| passes(&k.name))
            .collect();
        un.sort_by_cached_key(|k| {
            (
                names::demangle(&k.name),
                k.name.clone(),
                k.module_sha256.clone(),
            )
        });
        let first = kernels.len() + 1;
        kernels.extend(
            un.iter()
                .enumerate()
                .map(|(i, k)| KernelEntry::from_match(first + i, k)),
        );
    }

    progress("copying ISA files");
    copy_asm(dir, &launched, &mut kernels, &mut warnings, &stop).map_err(|_| interrupted())?;

    // Prune.
    if opts.keep != Keep::All && dumps::is_real_dir(&dumps_root) {
        progress("pruning dumps");
        // Launched kernels' .asm files, and the hashes of their modules
        // (all launched kernels: --filter limits the report, not the data).
        let keep_files: BTreeSet<PathBuf> = matching
            .launched
            .iter()
            .flat_map(|k| k.candidates.iter().map(|a| a.path.clone()))
            .collect();
        let keep_hashes: BTreeSet<String> = matching
            .launched
            .iter()
            .flat_map(|k| k.candidates.iter().map(|a| a.name.hash.clone()))
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
                            .is_some_and(|h| keep_hashes.contains(&h))
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
            let (_, errs) = dumps::prune(&loc.path, &keep, &stop).map_err(|_| interrupted())?;
            warnings.extend(errs.iter().map(|e| strip_dir(dir, e)));
        }
    }
    let after = dumps::usage(&dumps_root);

    let processes = process_entries(&recs, &locations, &folders, run.as_ref());
    let report = Report {
        schema: report::SCHEMA,
        tool: format!("xpu-asm-run {}", env!("CARGO_PKG_VERSION")),
        command: run.as_ref().map(|r| r.command.clone()),
        exit: run.as_ref().and_then(|r| r.exit),
        emulate: run.as_ref().and_then(|r| r.emulate.clone()),
        processes,
        unlaunched_compiled: matching.unlaunched.len() as u64,
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
    if stop() {
        return Err(interrupted());
    }
    let mut json = serde_json::to_vec_pretty(&report).unwrap_or_default();
    json.push(b'\n');
    write_atomic(&dir.join(REPORT_FILE), &json)?;
    Ok(report)
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

/// Fills `asm/` with one readable copy (a hard link when possible) of each
/// listed launched kernel's chosen `.asm`, named by [`names::asm_file_name`].
fn copy_asm(
    dir: &Path,
    launched: &[matching::KernelMatch],
    kernels: &mut [KernelEntry],
    warnings: &mut Vec<String>,
    stop: &dyn Fn() -> bool,
) -> Result<(), dumps::Stopped> {
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
        return Ok(());
    }
    for (k, entry) in launched.iter().zip(kernels.iter_mut()) {
        if stop() {
            return Err(dumps::Stopped);
        }
        let Some(src) = k.chosen_file() else { continue };
        let file = names::asm_file_name(entry.rank, &entry.demangled, &k.name);
        let dest = asm_dir.join(&file);
        let _ = std::fs::remove_file(&dest);
        let ok = std::fs::hard_link(&src.path, &dest)
            .or_else(|_| std::fs::copy(&src.path, &dest).map(|_| ()));
        match ok {
            Ok(()) => entry.asm_copy = Some(format!("{ASM_DIR}/{file}")),
            Err(e) => warnings.push(format!(
                "{}: cannot copy to {ASM_DIR}/{file}: {e}",
                src.shown
            )),
        }
    }
    Ok(())
}
