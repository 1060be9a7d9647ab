//! Collection: every kernel a capture's command launched, matched to its
//! ISA, in four stages, each a step of [`collect`]: what was recorded
//! (`read_records`), the sources of ISA (`scan_sources`), matching
//! (`match_kernels`), and the report with its files (`make_report`).

use crate::capture::files::{Pending, Usage};
use crate::capture::layout::{is_capture, CollectError, Stopped, ASM_DIR, REPORT_FILE, STATE_FILE};
use crate::capture::records::read_records as read_process_records;
use crate::capture::run::{read_run_info, RunInfo};
use crate::capture::state::{read_state, CollectState};
use crate::matching::{binary_requests, match_all_listing, Matching, ProcessInput};
use crate::prune::{save_state_and_prune, Dumps, Keep};
use crate::report::entries::{self, Ranked};
use crate::report::export::html::{self, PAGE_FILE};
use crate::report::export::pieces::{Reader, Shared};
use crate::report::files::{
    copy_asm, write_report, write_report_from, Copied, Link, DEFAULT_ASM_COPIES,
};
use crate::report::{DumpsInfo, KernelEntry, LeftOut, Limit, Report, Totals, SCHEMA};
use crate::run::rebuild::Rebuild;
use crate::sources::binaries::ModuleBinaries;
use crate::sources::dumps::{scan_dumps, DumpFolder, DumpLocation};
use crate::sources::rebuilt::{source_lines, Compile, Rebuilt};
use crate::{capture, names};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use xpu_asm_isa::Analysis;
use xpu_asm_record::read::ProcessRecord;

/// Progress messages (shown only on a terminal by the binary).
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// How to collect.
#[derive(Clone)]
pub struct Options {
    /// Return only the kernels whose mangled or demangled name matches
    /// (the files written hold every kernel).
    pub filter: Option<regex::Regex>,
    /// Also list compiled kernels that were never launched.
    pub all: bool,
    pub keep: Keep,
    /// How many of the listed kernels get a copy under `asm/`.
    pub asm_copies: Limit,
    /// How many of the listed kernels the page holds.
    pub page_kernels: Limit,
    /// Set to stop promptly (a second Ctrl-C): the folder stays usable.
    pub stop: Option<&'static AtomicBool>,
    pub progress: Option<Progress>,
    /// The `xpu-asm-run` that compiles IGC 1 light captures' `-g` modules
    /// again for their source lines (`xpu-asm-run __rebuild`); `None`:
    /// they are reported without, and a warning says how to get them.
    pub rebuild: Option<std::path::PathBuf>,
}

impl Default for Options {
    /// Every launched kernel, the dumps pruned to the launched kernels'
    /// `.asm`, the default limits of `asm/` and the page.
    fn default() -> Self {
        Options {
            filter: None,
            all: false,
            keep: Keep::default(),
            asm_copies: Limit::First(DEFAULT_ASM_COPIES),
            page_kernels: Limit::First(html::DEFAULT_PAGE_KERNELS),
            stop: None,
            progress: None,
            rebuild: None,
        }
    }
}

/// Asks whether to stop (a second Ctrl-C).
type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// Matches and reports on the capture folder `dir` without running
/// anything: reads the records and dumps, writes `report.json`,
/// `report.html` and `asm/` of every launched kernel, prunes the dumps as
/// `opts.keep` says, and returns the report, narrowed to the kernels
/// `opts.filter` matches ([`entries::narrowed`]): a filter is a view, the
/// files are the whole collection's.
pub fn collect(dir: &Path, opts: &Options) -> Result<Report, CollectError> {
    let stop_flag = opts.stop;
    let stop = move || stop_flag.is_some_and(|s| s.load(Ordering::SeqCst));
    let progress = |m: &str| {
        if let Some(p) = &opts.progress {
            p(m)
        }
    };
    let go_on = || match stop() {
        true => Err(CollectError::Interrupted(dir.to_path_buf())),
        false => Ok(()),
    };
    if dir.is_file() {
        let instead = crate::capture::layout::folder_instead_of(dir);
        return Err(CollectError::NotAFolder(dir.to_path_buf(), instead));
    }
    if !dir.is_dir() {
        return Err(CollectError::NotFound(dir.to_path_buf()));
    }
    if !is_capture(dir) {
        return Err(CollectError::NotACapture(dir.to_path_buf()));
    }
    if let Err((path, why)) = crate::capture::trust::check_own_folder(dir) {
        return Err(CollectError::NotYours { path, why });
    }
    let mut warnings: Vec<String> = Vec::new();
    let recorded = read_records(dir, &progress, &mut warnings);
    go_on()?;
    let sources = scan_sources(dir, opts, &recorded, &stop, &progress, &mut warnings)?;
    go_on()?;
    let matching = match_kernels(&recorded, &sources, opts.all, &progress, &mut warnings);
    let report = make_report(
        dir,
        opts,
        (recorded, sources, matching),
        warnings,
        &stop,
        &progress,
    )?;
    // The files hold every kernel; the filter narrows what is returned.
    Ok(match &opts.filter {
        Some(f) => entries::narrowed(report, f),
        None => report,
    })
}

/// Stage 1: what was recorded.
struct Recorded {
    /// `run.json`: the command and how it ended.
    run: Option<RunInfo>,
    /// `collect.json`: what an earlier collection learned.
    state: CollectState,
    /// The interposer's records, one per process, by host and pid.
    recs: Vec<ProcessRecord>,
}

fn read_records(dir: &Path, progress: &dyn Fn(&str), warnings: &mut Vec<String>) -> Recorded {
    let run = read_run_info(dir, warnings);
    let state = read_state(dir, warnings);
    progress("reading records");
    let recs = read_process_records(dir, warnings);
    Recorded { run, state, recs }
}

/// Stage 2: the sources of ISA.
struct Sources {
    /// Each process's dump folder, where its record says, and what it holds.
    locations: Vec<DumpLocation>,
    folders: Vec<DumpFolder>,
    /// The module binaries, with the launched kernels the dumps lack
    /// disassembled.
    binaries: ModuleBinaries,
    /// The folders of modules compiled again for their source lines.
    rebuilt: Rebuilt,
}

/// The processes as the matcher sees them: each record with its dump folder.
fn inputs<'a>(recs: &'a [ProcessRecord], folders: &'a [DumpFolder]) -> Vec<ProcessInput<'a>> {
    recs.iter()
        .zip(folders)
        .map(|(rec, folder)| ProcessInput { rec, folder })
        .collect()
}

/// IGC's dump folders, then the module binaries of the launched kernels
/// that the dumps lack.
fn scan_sources(
    dir: &Path,
    opts: &Options,
    recorded: &Recorded,
    stop: Stop,
    progress: &dyn Fn(&str),
    warnings: &mut Vec<String>,
) -> Result<Sources, CollectError> {
    let interrupted = |_| CollectError::Interrupted(dir.to_path_buf());
    let recs = &recorded.recs;
    let known = &recorded.state.final_binary;
    let (locations, mut folders) =
        scan_dumps(dir, recs, known, opts.all, stop, progress, warnings).map_err(interrupted)?;
    // Modules linked from several SPIR-V inputs: their dumps told by
    // their code.
    let linked = &recorded.state.linked;
    crate::sources::linked::find_linked(dir, recs, &mut folders, linked, stop)
        .map_err(interrupted)?;
    // IGC 1's light dumps: the kept attempts from the module binaries,
    // and the source lines of -g modules from compiling them again.
    crate::sources::light::verify_from_binaries(dir, recs, &mut folders, stop)
        .map_err(interrupted)?;
    let emulate = recorded.run.as_ref().and_then(|r| r.emulate.as_deref());
    let rebuild = opts
        .rebuild
        .as_deref()
        .map(|exe| Rebuild { exe, dir, emulate });
    let run = |modules| match &rebuild {
        Some(r) => r.run(modules, stop),
        None => Err(String::new()),
    };
    let compile: Option<Compile> = rebuild.is_some().then_some(&run);
    let rebuilt = source_lines(
        dir,
        recs,
        &mut folders,
        known,
        compile,
        stop,
        progress,
        warnings,
    )
    .map_err(interrupted)?;
    progress("disassembling module binaries");
    let requests = binary_requests(&inputs(recs, &folders));
    let binaries = ModuleBinaries::prepare(dir, &requests, stop);
    drop(requests);
    warnings.extend(binaries.warnings.iter().cloned());
    Ok(Sources {
        locations,
        folders,
        binaries,
        rebuilt,
    })
}

/// Stage 3: matching. Unlaunched kernels are listed only with `all`; else
/// only counted.
fn match_kernels(
    recorded: &Recorded,
    sources: &Sources,
    all: bool,
    progress: &dyn Fn(&str),
    warnings: &mut Vec<String>,
) -> Matching {
    progress("matching");
    let procs = inputs(&recorded.recs, &sources.folders);
    let matching = match_all_listing(&procs, &sources.binaries, all);
    warnings.extend(matching.warnings.iter().cloned());
    matching
}

/// The launched kernels listed, in report order, with their ISA read.
struct Listed {
    matching: Matching,
    ranked: Ranked,
    /// Source lines and mix of each listed launched kernel, in order.
    analyses: Vec<Option<Arc<Analysis>>>,
    /// The analysis of each one's code, in order.
    flows: Vec<Option<crate::analysis::code::Outcome>>,
}

/// Stage 4: the report, and its files: `asm/` filled on a thread of its
/// own (links into one folder go no faster from more threads) from as
/// soon as the kernels are ranked, while everything else is done here,
/// including writing the report and its page (side by side) as if every
/// link will succeed; they are written again in the rare case one does
/// not.
fn make_report(
    dir: &Path,
    opts: &Options,
    (recorded, sources, matching): (Recorded, Sources, Matching),
    warnings: Vec<String>,
    stop: Stop,
    progress: &dyn Fn(&str),
) -> Result<Report, CollectError> {
    let interrupted = || CollectError::Interrupted(dir.to_path_buf());
    let ranked = entries::rank(&matching.launched);
    let (links, copies) = asm_links(&matching, &ranked, opts.asm_copies);
    let report_path = dir.join(REPORT_FILE);
    let base_warnings = warnings.len();
    let (copied, done) = copy_asm_beside(dir, &links, stop, || {
        let listed = read_listed(matching, ranked, stop, progress);
        if stop() {
            return Err(interrupted());
        }
        let parts = (recorded, sources, listed);
        let mut report = assemble(dir, opts, parts, &links, warnings, stop, progress)?;
        report.asm_copies = copies;
        report.page_kernels = opts.page_kernels.left_out_of(report.kernels.len());
        if stop() {
            return Ok((report, None, None));
        }
        progress("writing report.json and report.html");
        let (written, page) = write_both(dir, &report_path, &report, &links);
        Ok((report, written.ok(), Some(page)))
    });
    let (mut report, written, page) = done?;
    let copied = copied.map_err(|_| interrupted())?;
    let rewrite = apply_copies(&mut report, &links, copied, base_warnings);
    let mut written = if rewrite { None } else { written };
    if stop() {
        return Err(interrupted());
    }
    let page = match page {
        Some(page) if !rewrite => page,
        _ => {
            progress("writing report.html");
            html::write_capture_page_pending(dir, &report, &|_| None)
        }
    };
    if let Err(e) = page.and_then(|p| p.commit()) {
        // Said in the report, written again.
        report
            .warnings
            .push(format!("{PAGE_FILE} not written: {e}"));
        written = None;
    }
    // A capture folder that cannot take the report (full, read-only)
    // still gives it: on the terminal, with the reason.
    let saved = match written {
        Some(w) => w.commit(),
        None => write_report(&report_path, &report).and_then(|w| w.commit()),
    };
    if let Err(e) = saved {
        // First: the table's last line and the first warning say it.
        let w = format!(
            "{} ({e}): this table is all there is",
            crate::report::export::table::NOT_WRITTEN
        );
        report.warnings.insert(0, w);
    }
    Ok(report)
}

/// The listed kernels' ISA read, on every core (beside `asm/` being
/// filled); their code is read in [`assemble`].
fn read_listed(matching: Matching, ranked: Ranked, stop: Stop, progress: &dyn Fn(&str)) -> Listed {
    progress("reading ISA");
    let analyses = read_isa(&matching, &ranked.order, stop);
    Listed {
        matching,
        ranked,
        analyses,
        flows: Vec::new(),
    }
}

/// `report.json` and the page of `report`, side by side on threads of
/// their own (each file's writes go at the speed of one core), the
/// kernels' JSON made once for both ([`Shared`]).
fn write_both(
    dir: &Path,
    report_path: &Path,
    report: &Report,
    links: &[Link],
) -> (Result<Pending, CollectError>, Result<Pending, CollectError>) {
    let shared = Shared::new(&report.kernels);
    let (for_json, for_page) = shared.readers();
    std::thread::scope(|s| {
        let json = std::thread::Builder::new()
            .spawn_scoped(s, move || {
                write_report_from(report_path, report, Some(for_json))
            })
            .ok();
        // Without a thread, its reader went with it (dropped): the page
        // reads alone, and report.json is made after it.
        let page = page_beside(dir, report, links, for_page);
        let written = match json.map(|t| t.join()) {
            Some(Ok(w)) => w,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => write_report(report_path, report),
        };
        (written, page)
    })
}

/// The page of `report`, written next to its place (not yet in it) while
/// `asm/` is filled: each linked kernel's text read from the file its copy
/// is made of, the same bytes.
fn page_beside(
    dir: &Path,
    report: &Report,
    links: &[Link],
    shared: Reader,
) -> Result<Pending, CollectError> {
    let mut files: Vec<Option<&Path>> = vec![None; report.kernels.len()];
    for l in links {
        if let Some(f) = files.get_mut(l.entry) {
            *f = Some(l.path.as_path());
        }
    }
    let file = |i: usize| files.get(i).copied().flatten().map(Path::to_path_buf);
    html::write_capture_page_from(dir, report, &file, Some(shared))
}

/// Source lines and mix of each listed launched kernel: read with its
/// header by the scan, or else its chosen file read whole now (module
/// binaries' ISA, files the records did not name), on every core before
/// asm/ takes one.
fn read_isa(matching: &Matching, order: &[usize], stop: Stop) -> Vec<Option<Arc<Analysis>>> {
    order
        .par_iter()
        .map(|&i| {
            if stop() {
                return None;
            }
            let file = matching.launched[i].chosen_file()?;
            match &file.analysis {
                Some(a) => Some(Arc::clone(a)),
                None => match &file.header {
                    Some(h) => xpu_asm_isa::header::analyze_file_of(&file.path, h),
                    None => xpu_asm_isa::analyze_file(&file.path),
                }
                .ok()
                .flatten()
                .map(Arc::new),
            }
        })
        .collect()
}

/// The readable copy under `asm/` of each listed kernel with an ISA file,
/// up to `limit` of them in report order; and what the limit left out.
fn asm_links(matching: &Matching, ranked: &Ranked, limit: Limit) -> (Vec<Link>, Option<LeftOut>) {
    let has_file = |i: usize| matching.launched[i].chosen_file().is_some();
    // The kernels up to the limit's last copy; counted on, the left out.
    let mut with_file = 0;
    let end = ranked
        .order
        .iter()
        .position(|&i| {
            with_file += usize::from(has_file(i));
            with_file > limit.count()
        })
        .unwrap_or(ranked.order.len());
    let copies = limit.left_out(ranked.order.iter().map(|&i| has_file(i)));
    let order: Vec<(usize, usize)> = ranked.order[..end]
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, i)| has_file(i))
        .collect();
    let named: Vec<(usize, &str, &[u8])> = order
        .iter()
        .map(|&(r, i)| {
            let k = &matching.launched[i];
            (r + 1, ranked.demangled[i].as_str(), k.name.as_slice())
        })
        .collect();
    let files = names::asm_file_names(&named);
    let links = order
        .par_iter()
        .zip(files)
        .filter_map(|(&(r, i), file)| {
            let src = matching.launched[i].chosen_file()?;
            Some(Link {
                entry: r,
                path: src.path.clone(),
                shown: src.shown.clone(),
                file,
            })
        })
        .collect();
    (links, copies)
}

/// Runs [`copy_asm`] for `links` on a thread of its own while `work` runs
/// here; without a thread, the links are made here at the end.
fn copy_asm_beside<R>(
    dir: &Path,
    links: &[Link],
    stop: Stop,
    work: impl FnOnce() -> R,
) -> (Result<Copied, Stopped>, R) {
    beside(move || copy_asm(dir, links, stop), work)
}

/// `what` freed on a thread of its own: the scan's files are millions of
/// allocations, a tenth of a second of one core that the work after need
/// not wait for. Freed here when no thread can start.
fn drop_beside<T: Send + 'static>(what: T) -> Freeing {
    // When no thread can start, `spawn` drops its closure, `what` with it.
    Freeing(
        std::thread::Builder::new()
            .name("xpu-asm-free".into())
            .spawn(move || drop(what))
            .ok(),
    )
}

/// What [`drop_beside`] frees.
struct Freeing(Option<std::thread::JoinHandle<()>>);

impl Freeing {
    /// Waits until it is freed.
    fn wait(self) {
        if let Some(t) = self.0 {
            let _ = t.join();
        }
    }
}

/// Runs `there` on a thread of its own while `here` runs here; without a
/// thread, `there` runs here at the end.
fn beside<A: Send, B>(there: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
    // Taken by the thread; left here when there is none.
    let there = std::sync::Mutex::new(Some(there));
    let take = || there.lock().ok().and_then(|mut t| t.take());
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .spawn_scoped(s, || take().map(|f| f()))
            .ok();
        let done = here();
        let result = match thread.map(|t| t.join()) {
            Some(Ok(Some(a))) => Some(a),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            _ => take().map(|f| f()),
        };
        // Run once, there or here.
        (result.expect("run once"), done)
    })
}

/// The report: the dumps saved and pruned, the processes, and the
/// kernels with their ISA and copies. What is no longer needed goes as
/// soon as it is not.
fn assemble(
    dir: &Path,
    opts: &Options,
    (recorded, sources, listed): (Recorded, Sources, Listed),
    links: &[Link],
    mut warnings: Vec<String>,
    stop: Stop,
    progress: &dyn Fn(&str),
) -> Result<Report, CollectError> {
    let Recorded {
        run,
        mut state,
        recs,
    } = recorded;
    let Sources {
        locations,
        folders,
        rebuilt,
        ..
    } = sources;
    let dumps = Dumps {
        folders: &folders,
        locations: &locations,
        rebuilt: &rebuilt,
    };
    let (listed, pruned) =
        flows_and_prune(dir, opts, listed, &recs, &mut state, dumps, stop, progress);
    let (prune_warnings, after) = pruned?;
    progress("copying ISA files");
    let waited = capture::waited(dir);
    let dump_dirs: Vec<(&str, bool)> = locations
        .iter()
        .zip(&folders)
        .map(|(l, f)| (l.shown.as_str(), f.exists))
        .collect();
    let processes = entries::process_entries(&recs, &dump_dirs, run.as_ref(), &waited);
    let mut incomplete = counts_incomplete(&processes);
    incomplete.extend(unrecorded(dir, run.as_ref(), &processes));
    let counts_kept = entries::counts_kept_in_run(&processes);
    warnings.extend(refused_notices(dir, run.as_ref()));
    let by_rank = entries::launches_by_rank(&recs);
    let shapes = crate::report::shapes::by_kernel(dir, &recs);
    let origins = crate::report::origins::by_kernel(dir, &recs, &mut warnings);
    // `binary` when every process ran so (records of a merge included).
    let isa = (!recs.is_empty() && recs.iter().all(|r| r.isa_binary)).then(|| "binary".to_string());
    let freeing = drop_beside((folders, recs));
    let (mut kernels, totals, unlaunched_compiled) =
        kernels(listed, opts, links, &by_rank, freeing);
    crate::report::shapes::fill(&mut kernels, &shapes);
    let time = run_time(&processes, &kernels, &shapes, run.as_ref());
    crate::report::origins::fill(&mut kernels, &origins);
    // The copying's warnings, if any, will go before pruning's.
    warnings.extend(prune_warnings);
    let report = Report {
        schema: SCHEMA,
        tool: format!("xpu-asm-run {}", env!("CARGO_PKG_VERSION")),
        command: run.as_ref().map(|r| r.command.clone()),
        exit: run.as_ref().and_then(|r| r.exit),
        emulate: run.as_ref().and_then(|r| r.emulate.clone()),
        processes,
        unlaunched_compiled,
        unlaunched_listed: opts.all,
        kernels,
        totals,
        // Set on the view (`entries::narrowed`), never in the files.
        filter: None,
        isa,
        dumps: dumps_info(opts.keep, &state, after),
        // Said by make_report, which made the links.
        asm_copies: None,
        page_kernels: None,
        counts_incomplete: incomplete,
        counts_kept,
        time,
        warnings,
    };
    Ok(report)
}

/// The run's device time (`--time`), from its processes' and its
/// kernels' times.
fn run_time(
    processes: &[crate::report::ProcessEntry],
    kernels: &[KernelEntry],
    shapes: &crate::report::shapes::ByKernel,
    run: Option<&RunInfo>,
) -> Option<crate::report::time::TimeSummary> {
    let of_processes: Vec<_> = processes.iter().map(|p| p.time.clone()).collect();
    crate::report::time::of_run(
        &of_processes,
        crate::report::shapes::kernel_times(kernels, shapes),
        run.is_some_and(|r| r.emulate.is_some()),
    )
}

/// The processes that said their record could be written nowhere and
/// left none: one line each.
fn unrecorded(
    dir: &Path,
    run: Option<&RunInfo>,
    processes: &[crate::report::ProcessEntry],
) -> Vec<String> {
    let mut notices: Vec<_> = run.map(|r| r.notices.clone()).unwrap_or_default();
    notices.extend(
        capture::job::instances(dir)
            .into_iter()
            .flat_map(|i| i.notices),
    );
    notices.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    notices.dedup_by(|a, b| (&a.host, a.pid) == (&b.host, b.pid));
    notices
        .into_iter()
        .filter(|n| !processes.iter().any(|p| p.pid == n.pid && p.host == n.host))
        .map(|n| format!("process {} on {}: no record: {}", n.pid, n.host, n.reason))
        .collect()
}

/// The datagrams on the notices' socket that were refused (not sent by
/// the user's processes of the command), in one warning.
fn refused_notices(dir: &Path, run: Option<&RunInfo>) -> Option<String> {
    let n = run.map_or(0, |r| r.notices_refused)
        + capture::job::instances(dir)
            .iter()
            .map(|i| i.notices_refused)
            .sum::<u64>();
    (n > 0).then(|| {
        format!(
            "{n} notice{} on xpu-asm-run's socket refused: not sent by your processes of the command \
             (another user's, or without the run's key); nothing of {} is in this report",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        )
    })
}

/// Each process whose counts are not whole, and why: one line each.
fn counts_incomplete(processes: &[crate::report::ProcessEntry]) -> Vec<String> {
    processes
        .iter()
        .filter(|p| !p.counts_incomplete.is_empty())
        .map(|p| {
            let rank = p.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
            format!(
                "process {} on {}{rank}: {}",
                p.pid,
                p.host,
                p.counts_incomplete.join("; ")
            )
        })
        .collect()
}

/// The listed kernels' code read (mostly one thread's work for kernels
/// without a binary) beside the saving and pruning of the dumps (mostly
/// this thread's): the listed kernels with it, and what pruning gave.
#[allow(clippy::too_many_arguments)]
fn flows_and_prune(
    dir: &Path,
    opts: &Options,
    listed: Listed,
    recs: &[ProcessRecord],
    state: &mut CollectState,
    dumps: Dumps,
    stop: Stop,
    progress: &dyn Fn(&str),
) -> (Listed, Result<(Vec<String>, Usage), CollectError>) {
    progress("reading the kernels' code");
    let (flows, pruned) = beside(
        || {
            let (launched, order) = (&listed.matching.launched, &listed.ranked.order);
            crate::analysis::code::read_flows(dir, recs, launched, order, stop)
        },
        || {
            let state_path = dir.join(STATE_FILE);
            let matching = &listed.matching;
            save_state_and_prune(
                dir,
                opts.keep,
                &state_path,
                state,
                dumps,
                matching,
                stop,
                progress,
            )
        },
    );
    (Listed { flows, ..listed }, pruned)
}

fn dumps_info(keep: Keep, state: &CollectState, after: Usage) -> DumpsInfo {
    DumpsInfo {
        keep: keep.as_str().to_string(),
        before: state.dumps_before.unwrap_or(after),
        after,
    }
}

/// The report's kernel entries with their ranks, ISA analyses and `asm/`
/// copies; their totals; and how many compiled kernels nobody launched.
/// `folders` is the dump folders being freed, which hold the analyses too.
fn kernels(
    listed: Listed,
    opts: &Options,
    links: &[Link],
    by_rank: &entries::LaunchesByRank,
    folders: Freeing,
) -> (Vec<KernelEntry>, Totals, u64) {
    let Listed {
        matching,
        mut ranked,
        analyses,
        flows,
    } = listed;
    let unlaunched_compiled = matching.unlaunched_count;
    let (mut kernels, totals) = entries::kernel_entries(
        matching,
        &ranked.order,
        std::mem::take(&mut ranked.demangled),
        opts.all,
    );
    entries::fill_ranks(&mut kernels, by_rank);
    drop(ranked);
    folders.wait();
    // The launched kernels come first, in `order`. (With the dump
    // folders and matches gone, each analysis moves, uncopied.)
    for (k, a) in kernels.iter_mut().zip(analyses) {
        k.set_isa(a.map(Arc::unwrap_or_clone));
    }
    for (k, f) in kernels.iter_mut().zip(flows) {
        k.set_flow(f);
    }
    for l in links {
        kernels[l.entry].asm_copy = Some(format!("{ASM_DIR}/{}", l.file));
    }
    (kernels, totals, unlaunched_compiled)
}

/// Links that failed: no copy, and a warning each, after the folder's
/// (and before pruning's). True when the report changed, to be written
/// again.
fn apply_copies(report: &mut Report, links: &[Link], copied: Copied, base_warnings: usize) -> bool {
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
    if copy_warnings.is_empty() && all_linked {
        return false;
    }
    let prune_warnings = report.warnings.split_off(base_warnings);
    report.warnings.extend(copy_warnings);
    report.warnings.extend(prune_warnings);
    true
}
