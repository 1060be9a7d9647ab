//! xpu-asm's collector: runs a command under the interposer
//! ([`launch`]) and then matches every kernel the command launched to its
//! GPU ISA ([`collect`]), in four stages, each a module: what was recorded
//! ([`records`]); the sources of ISA ([`sources`]: IGC's dump folders,
//! [`dumps`], and the module binaries, [`binaries`], read by [`native`]);
//! [`matching`]; the report and its files ([`report`], [`output`]).
//!
//! A capture folder holds:
//!
//! * `run.json`: the command and how it ended ([`launch::RunInfo`]);
//! * `records/`: what the interposer recorded per process;
//! * `dumps/<host>-<pid>-<token>/`: IGC's dumps per process;
//! * `modules/<sha256>.bin`: each module's GPU binary, once per content;
//! * `isa/<sha256>/`: kernels disassembled from those binaries;
//! * `job.json`, `instances/`: the parallel job whose ranks share the
//!   folder, one file per rank ([`job`]); `merged.json`: the captures
//!   [`merge`] brought together;
//! * `report.json`: the report ([`report::Report`], schema [`report::SCHEMA`]);
//! * `asm/`: a readable copy of each launched kernel's ISA;
//! * `collect.json`: facts the first collection read from dump files it then
//!   pruned (dump sizes before pruning, which attempt IGC kept), so that a
//!   later `collect` reports the same.

pub mod capture;
pub mod cli;
pub mod inspect;
pub mod isa;
pub mod matching;
pub mod names;
pub mod report;
pub mod run;
pub mod sources;

pub use capture::records;
pub use inspect::{diff, show};
pub use report::files as output;
pub use run::{forward, job, launch, merge};
pub use sources::{binaries, dumps, native};

use matching::ProcessInput;
use output::{copy_asm, save_state_and_prune, write_report, Link};
use rayon::prelude::*;
use report::{process_entries, DumpsInfo, Report};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use output::write_atomic;

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
        || dir.join(job::JOB_FILE).is_file()
        || dir.join(REPORT_FILE).is_file()
        || dir.join(RUN_FILE).is_file()
}

pub(crate) fn strip_dir(dir: &Path, s: &str) -> String {
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

    // Stage 1: what was recorded.
    let run = launch::read_run_info(dir, &mut warnings);
    let mut state = records::read_state(dir, &mut warnings);
    let state_path = dir.join(STATE_FILE);
    progress("reading records");
    let recs = records::read_records(dir, &mut warnings);
    if stop() {
        return Err(interrupted());
    }

    // Stage 2: the sources of ISA. IGC's dump folders, then the module
    // binaries of the launched kernels that the dumps lack.
    let (locations, folders) = sources::scan_dumps(
        dir,
        &recs,
        &state.final_binary,
        &stop,
        &progress,
        &mut warnings,
    )
    .map_err(|_| interrupted())?;
    let inputs: Vec<ProcessInput> = recs
        .iter()
        .zip(&folders)
        .map(|(rec, folder)| ProcessInput { rec, folder })
        .collect();
    progress("disassembling module binaries");
    let requests = matching::binary_requests(&inputs);
    let module_binaries = binaries::ModuleBinaries::prepare(dir, &requests, &stop);
    drop(requests);
    warnings.extend(module_binaries.warnings.iter().cloned());
    if stop() {
        return Err(interrupted());
    }

    // Stage 3: matching.
    progress("matching");
    // Unlaunched kernels are listed only with --all; else only counted.
    let matching = matching::match_all_listing(&inputs, &module_binaries, opts.all);
    warnings.extend(matching.warnings.iter().cloned());

    // Stage 4: the report, and its files.
    let report::Ranked {
        demangled,
        order,
        filtered_out,
    } = report::rank(&matching.launched, opts.filter.as_ref());

    // Source lines and mix of each listed launched kernel: read with its
    // header by the scan, or else its chosen file read whole now (module
    // binaries' ISA, files the records did not name), on every core before
    // asm/ takes one.
    progress("reading ISA");
    let analyses: Vec<Option<Arc<isa::Analysis>>> = order
        .par_iter()
        .map(|&i| {
            if stop() {
                return None;
            }
            let file = matching.launched[i].chosen_file()?;
            match &file.analysis {
                Some(a) => Some(Arc::clone(a)),
                None => isa::analyze_file(&file.path).ok().flatten().map(Arc::new),
            }
        })
        .collect();
    if stop() {
        return Err(interrupted());
    }

    // asm/ is filled on a thread of its own (links into one folder go no
    // faster from more threads) while everything else is done here,
    // including writing the report as if every link will succeed; it is
    // written again in the rare case one does not.
    let ranked: Vec<(usize, usize)> = order.iter().copied().enumerate().collect();
    let links: Vec<Link> = ranked
        .par_iter()
        .filter_map(|&(r, i)| {
            let k = &matching.launched[i];
            k.chosen_file().map(|src| Link {
                entry: r,
                path: src.path.clone(),
                shown: src.shown.clone(),
                file: names::asm_file_name(r + 1, &demangled[i], &k.name),
            })
        })
        .collect();
    drop(ranked);
    progress("copying ISA files");
    let report_path = dir.join(REPORT_FILE);
    let base_warnings = warnings.len();
    let (copied, done) = std::thread::scope(|s| {
        // (Without a thread, the links are made here at the end.)
        let (to_link, stop_ref) = (&links, &stop);
        let copier = std::thread::Builder::new()
            .spawn_scoped(s, move || copy_asm(dir, to_link, stop_ref))
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
            let waited = job::waited(dir);
            let processes = process_entries(&recs, &locations, &folders, run.as_ref(), &waited);
            let by_rank = job::launches_by_rank(&recs);
            // What is no longer needed goes while the links are made.
            drop((folders, recs));

            let (mut kernels, totals) = report::kernel_entries(
                &matching,
                &order,
                &demangled,
                filtered_out,
                opts.all,
                opts.filter.as_ref(),
            );
            job::fill_ranks(&mut kernels, &by_rank);
            let unlaunched_compiled = matching.unlaunched.len() as u64;
            drop((matching, demangled, order));
            // The launched kernels come first, in `order`. (With the dump
            // folders and matches gone, each analysis moves, uncopied.)
            for (k, a) in kernels.iter_mut().zip(analyses) {
                k.set_isa(a.map(Arc::unwrap_or_clone));
            }

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
