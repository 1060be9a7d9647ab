//! `xpu-asm-run`: a thin shell over the `xpu_asm_collector` library.

use clap::Parser;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use xpu_asm_collector::capture::job::{write_instance, Instance};
use xpu_asm_collector::capture::layout::CollectError;
use xpu_asm_collector::capture::run::{unix_now, write_run_info, Exit, RunInfo};
use xpu_asm_collector::cli::{Cli, Color, DiffArgs, IsaMode, ReportArgs, RunArgs, ShowArgs, Sub};
use xpu_asm_collector::collect::{collect, Options, Progress};
use xpu_asm_collector::inspect::{diff, show};
use xpu_asm_collector::names::escape_for_terminal;
use xpu_asm_collector::report::export::{json, table};
use xpu_asm_collector::report::Report;
use xpu_asm_collector::run::job::Joined;
use xpu_asm_collector::run::launch::{self, LaunchError, OutDir};
use xpu_asm_collector::run::{forward, job, merge};

/// mimalloc: a collection of 100,000 kernels makes and frees millions of
/// small strings and vectors on every core; glibc's malloc took 8% of its
/// CPU (`docs/performance.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Warnings printed on stderr; the rest are in report.json.
const MAX_WARNINGS_SHOWN: usize = 20;

fn main() {
    roomy_heaps();
    keep_freed_pages();
    let cli = Cli::parse();
    let code = match cli.sub {
        Some(Sub::Collect(a)) => cmd_collect(&a.dir, &a.report),
        Some(Sub::Merge(a)) => cmd_merge(&a.out, &a.dirs, &a.report),
        Some(Sub::Show(a)) => cmd_show(&a),
        Some(Sub::Diff(a)) => cmd_diff(&a),
        Some(Sub::Rebuild(a)) => xpu_asm_collector::run::rebuild::child_main(&a.folder),
        None => match cmd_run(&cli.run) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("xpu-asm-run: {e}");
                e.exit_code()
            }
        },
    };
    std::process::exit(code);
}

fn options(r: &ReportArgs) -> Options {
    let progress: Option<Progress> = if !r.quiet && std::io::stderr().is_terminal() {
        Some(Arc::new(|m: &str| {
            eprint!("\r\x1b[Kxpu-asm-run: {m}");
            let _ = std::io::stderr().flush();
        }))
    } else {
        None
    };
    Options {
        filter: r.filter.clone(),
        all: r.all,
        keep: r.keep,
        asm_copies: r.asm_copies,
        page_kernels: r.page_kernels,
        stop: Some(&launch::STOP),
        progress,
        // Modules are compiled again (for source lines) by this binary.
        rebuild: std::env::current_exe().ok(),
    }
}

fn clear_progress(r: &ReportArgs) {
    if !r.quiet && std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
}

fn terminal_width() -> usize {
    // SAFETY: winsize is plain old data; TIOCGWINSZ fills it or fails.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 and a pointer to a live winsize.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        return ws.ws_col as usize;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|c| *c > 0)
        .unwrap_or(table::DEFAULT_WIDTH)
}

/// Prints the report (table or JSON) on stdout and its warnings on stderr.
fn print_report(dir: &Path, r: &Report, args: &ReportArgs) {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    if args.json {
        let _ = json::write(&mut out, r);
    } else if !args.quiet {
        let color = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty());
        let style = table::TableStyle {
            width: terminal_width(),
            color,
            dir: dir.display().to_string(),
        };
        let _ = out.write_all(table::render_table(r, &style).as_bytes());
    }
    let _ = out.flush();
    if !args.quiet {
        for w in r.warnings.iter().take(MAX_WARNINGS_SHOWN) {
            eprintln!("xpu-asm-run: warning: {}", escape_for_terminal(w));
        }
        if r.warnings.len() > MAX_WARNINGS_SHOWN && dir.join("report.json").is_file() {
            eprintln!(
                "xpu-asm-run: {} more warnings in {}/report.json",
                r.warnings.len() - MAX_WARNINGS_SHOWN,
                dir.display()
            );
        }
    }
}

/// Colour for stdout: `--color`, else a terminal without NO_COLOR.
fn use_color(c: Color) -> bool {
    match c {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty())
        }
    }
}

/// Writes `text` on stdout; a closed pipe (`| head`) is not an error.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn cmd_show(a: &ShowArgs) -> i32 {
    let res = show::load_report(&a.dir).and_then(|r| {
        let k = show::select(&r, &a.dir, &a.kernel)?;
        show::render(
            &a.dir,
            k,
            show::ShowOptions {
                lines_only: a.lines,
                color: use_color(a.color),
                cfg: a.cfg.map(|f| match f {
                    xpu_asm_collector::cli::CfgFormat::Text => show::Cfg::Text,
                    xpu_asm_collector::cli::CfgFormat::Dot => show::Cfg::Dot,
                }),
            },
        )
    });
    match res {
        Ok(text) => {
            print_out(&text);
            0
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            1
        }
    }
}

fn cmd_diff(a: &DiffArgs) -> i32 {
    let color = use_color(a.color);
    let conditions = a.fail_on.as_ref().map_or(&[][..], |f| &f.0[..]);
    if let Some(kernel) = &a.kernel {
        return match diff::isa_diff(&a.a, &a.b, kernel, a.normalize_regs, color) {
            Ok(text) => {
                print_out(&text);
                0
            }
            Err(e) => {
                eprintln!("xpu-asm-run: {e}");
                2
            }
        };
    }
    // Each report read once, for the table and then the page.
    let compared = diff::Captures::load(&a.a, &a.b)
        .map_err(diff::PageError::from)
        .and_then(|c| match &a.html {
            // Of every kernel once: the page's, and the table's as listed.
            Some(file) => {
                let every = c.diff(true, conditions);
                let d = every.clone().listed(a.all);
                diff::write_page(c, every, file, a.page_kernels)?;
                Ok(d)
            }
            None => Ok(c.diff(a.all, conditions)),
        });
    match compared {
        Ok(d) => {
            if a.json {
                let mut text = serde_json::to_string_pretty(&d).unwrap_or_default();
                text.push('\n');
                print_out(&text);
            } else {
                print_out(&diff::render(&d, color));
            }
            for f in &d.failed {
                eprintln!(
                    "xpu-asm-run: --fail-on {}: {}: {}",
                    f.condition,
                    escape_for_terminal(&f.kernel),
                    f.why
                );
            }
            i32::from(!d.failed.is_empty())
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            2
        }
    }
}

fn cmd_collect(dir: &Path, args: &ReportArgs) -> i32 {
    launch::install_signal_handlers();
    launch::enter_collecting();
    let res = collect(dir, &options(args));
    clear_progress(args);
    match res {
        Ok(r) => {
            print_report(dir, &r, args);
            // The process exits next: freeing a large report only takes time.
            std::mem::forget(r);
            0
        }
        Err(e @ CollectError::Interrupted(_)) => {
            eprintln!("xpu-asm-run: {e}");
            130
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            1
        }
    }
}

fn cmd_merge(out: &Path, dirs: &[std::path::PathBuf], args: &ReportArgs) -> i32 {
    match merge::merge(out, dirs) {
        Ok(m) => {
            if !args.quiet {
                let records: u64 = m.inputs.iter().map(|i| i.records).sum();
                eprintln!(
                    "xpu-asm-run: merged {} captures ({records} process records) into {}",
                    m.inputs.len(),
                    out.display()
                );
                for r in &m.renamed {
                    eprintln!("xpu-asm-run: renamed (the name was taken): {r}");
                }
            }
            cmd_collect(out, args)
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            1
        }
    }
}

/// `xpu-asm-run -- cmd`: runs the command under the interposer, then
/// collects (for a job's rank: the last rank to end collects).
fn cmd_run(a: &RunArgs) -> Result<i32, LaunchError> {
    launch::raise_fd_limit();
    let resolved = RunArgs {
        isa: a.isa.resolve(
            xpu_asm_collector::sources::native::iga::only_igc(),
            // Dumps asked for: by the user's IGC variable, or by keeping
            // more of them than the default does.
            launch::users_dump_enable()
                || a.report.keep != xpu_asm_collector::report::files::Keep::Asm,
        ),
        ..a.clone()
    };
    let a = &resolved;
    let interposer = launch::resolve_interposer(
        a.interposer.as_deref(),
        std::env::var_os(launch::INTERPOSER_ENV),
        std::env::current_exe().ok(),
        a.report.quiet,
    )?;
    if let Some(dev) = &a.emulate {
        launch::check_emulated_device(dev, launch::neo_devices().as_ref(), launch::neo_version)?;
    }
    // `command` is required by clap: there is a first element.
    let cmd0 = a.command.first().cloned().unwrap_or_default();
    launch::check_other_folders()?;
    // One instance per rank: the ranks of the job share the folder.
    let joined = match job::this_rank(&cmd0) {
        Some(rank) => Some(job::join(a.out.as_deref(), a.force, &rank)?),
        None => None,
    };
    let out = match &joined {
        Some(j) => j.out.clone(),
        None => launch::prepare_out_dir(a.out.as_deref(), a.force, &cmd0)?,
    };
    let dir = out.path.clone();
    let interposer = interposer.into_path(&dir, a.report.quiet)?;
    let mut info = run_info(a, &interposer);
    let save = |info: &RunInfo| save_run_info(&dir, joined.as_ref(), info);
    save(&info)?;
    let (command, mut env, unset) = child_command(a, &interposer, &dir);
    let notices = listen_for_notices(&mut env);
    warn_untraceable(&cmd0);
    launch::install_signal_handlers();
    // A rank of a job does not collect: the last one reads what all wrote.
    let warm = match joined {
        None => xpu_asm_collector::report::code::warm_up(&dir),
        Some(_) => None,
    };
    let folder_at_start = folder_id(&dir);
    let ran = launch::spawn_and_wait(&command, &env, &unset);
    if let Some(w) = warm {
        w.finish();
    }
    let (pid, exit) = match ran {
        Ok(r) => r,
        Err(e) => return not_started(e, a, &out, joined.as_ref(), &mut info, &save),
    };
    launch::enter_collecting();
    after_the_command(&dir, folder_at_start);
    command_ended(&mut info, pid, exit, notices);
    if let Err(e) = save(&info) {
        eprintln!("xpu-asm-run: {e}");
    }
    let args = &a.report;
    if let Some(j) = &joined {
        if !rank_collects(j, &dir, &info, exit, args) {
            return Ok(exit.status());
        }
    } else if !args.quiet {
        eprintln!(
            "xpu-asm-run: the command {}; collecting into {}",
            exit.describe(),
            dir.display()
        );
    }
    collect_and_print(&dir, args);
    Ok(exit.status())
}

/// The socket for notices, named (with the run's key) in `env`.
fn listen_for_notices(
    env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>,
) -> Option<xpu_asm_collector::run::notices::Notices> {
    let notices = xpu_asm_collector::run::notices::Notices::listen()?;
    env.push((xpu_asm_record::NOTIFY_ENV.into(), notices.name().into()));
    env.push((xpu_asm_record::NOTIFY_KEY_ENV.into(), notices.key().into()));
    Some(notices)
}

/// What `run.json` says once the command ended.
fn command_ended(
    info: &mut RunInfo,
    pid: u32,
    exit: Exit,
    notices: Option<xpu_asm_collector::run::notices::Notices>,
) {
    info.state = "ended".into();
    let got = notices.map(|n| n.take()).unwrap_or_default();
    info.notices = got.notices;
    info.notices_refused = got.refused;
    info.pid = Some(pid);
    info.exit = Some(exit);
    info.ended_unix = Some(unix_now());
}

/// After the command: a capture folder removed while it ran is made
/// again (what the processes still held, they wrote again; the rest is
/// gone, and the user is told), and what its processes left in node-local
/// memory is written into the capture (what cannot be, the collection
/// reads where it is, and says so).
fn after_the_command(dir: &Path, at_start: Option<(u64, u64)>) {
    folder_still_there(dir, at_start);
    let _ = xpu_asm_collector::capture::staged::finish_here(dir);
}

fn folder_still_there(dir: &Path, at_start: Option<(u64, u64)>) {
    if folder_id(dir) != at_start {
        eprintln!(
            "xpu-asm-run: warning: the capture folder {} was removed while the command ran; \
             the records of processes that had ended before are lost",
            dir.display()
        );
        let _ = std::fs::create_dir_all(dir);
    }
}

/// Which folder `dir` is (device, inode), when it is there.
fn folder_id(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

fn warn_untraceable(cmd0: &std::ffi::OsStr) {
    if let Some(why) = launch::untraceable(cmd0) {
        eprintln!("xpu-asm-run: warning: {why}; running it anyway");
    }
}

/// `run.json` as the command starts.
fn run_info(a: &RunArgs, interposer: &Path) -> RunInfo {
    RunInfo {
        schema: 1,
        command: a
            .command
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        interposer: interposer.display().to_string(),
        emulate: a.emulate.clone(),
        isa: (a.isa == IsaMode::Binary).then(|| "binary".to_string()),
        state: "running".into(),
        pid: None,
        host: Some(xpu_asm_record::host_name()),
        exit: None,
        error: None,
        started_unix: unix_now(),
        ended_unix: None,
        notices: Vec::new(),
        notices_refused: 0,
    }
}

/// Saves where the run stands: `run.json`, or a rank's instance file.
fn save_run_info(dir: &Path, joined: Option<&Joined>, info: &RunInfo) -> Result<(), CollectError> {
    match joined {
        Some(j) => write_instance(
            dir,
            &Instance {
                schema: 1,
                rank: j.rank.rank,
                local_rank: j.rank.local_rank,
                host: j.host.clone(),
                command: info.command.clone(),
                pid: info.pid,
                state: info.state.clone(),
                exit: info.exit,
                error: info.error.clone(),
                notices: info.notices.clone(),
                notices_refused: info.notices_refused,
            },
        ),
        None => write_run_info(dir, info),
    }
}

/// The command to run (the user's, or a launcher's with forwarding options
/// added), the variables to set and those to unset.
fn child_command(a: &RunArgs, interposer: &Path, dir: &Path) -> ChildCommand {
    let mut env = launch::child_env(
        interposer,
        dir,
        std::env::var_os("LD_PRELOAD").as_deref(),
        a.emulate.as_deref(),
    );
    let mut unset = launch::inherited_owned_vars();
    match a.isa {
        IsaMode::Binary => env.push((xpu_asm_record::ISA_ENV.into(), "binary".into())),
        IsaMode::Dump | IsaMode::Auto => unset.push(xpu_asm_record::ISA_ENV.into()),
    }
    // IGC 1 alone here: its light dumps (record::IGC_ENV); the
    // interposer falls back to the full ones wherever this is not set.
    let igc1 = a.isa != IsaMode::Binary
        && a.report.keep != xpu_asm_collector::report::files::Keep::All
        && xpu_asm_collector::sources::native::iga::only_igc() == Some(1);
    match igc1 {
        true => env.push((xpu_asm_record::IGC_ENV.into(), "1".into())),
        false => unset.push(xpu_asm_record::IGC_ENV.into()),
    }
    // `--keep all` keeps every file IGC wrote: IGC then writes them all.
    match a.report.keep {
        xpu_asm_collector::report::files::Keep::All => {
            env.push((xpu_asm_record::DUMPS_ENV.into(), "all".into()))
        }
        _ => unset.push(xpu_asm_record::DUMPS_ENV.into()),
    }
    let mut command = a.command.clone();
    match forward::plan(&command, &env, |k| std::env::var(k).ok()) {
        forward::Plan::Nothing => {}
        forward::Plan::Env(more) => env.extend(more),
        forward::Plan::Args(cmd, note) => {
            command = cmd;
            if !a.report.quiet {
                eprintln!("xpu-asm-run: {note}");
            }
        }
        forward::Plan::Warn(why) => eprintln!("xpu-asm-run: warning: {why}"),
    }
    (command, env, unset)
}

/// A command, the variables set for it, and those removed.
type ChildCommand = (Vec<OsString>, Vec<(OsString, OsString)>, Vec<OsString>);

/// The command could not start: no empty capture is left behind a typo;
/// a rank says so in its file, and the last rank to end collects, even one
/// that never started.
fn not_started(
    e: LaunchError,
    a: &RunArgs,
    out: &OutDir,
    joined: Option<&Joined>,
    info: &mut RunInfo,
    save: &dyn Fn(&RunInfo) -> Result<(), CollectError>,
) -> Result<i32, LaunchError> {
    let dir = &out.path;
    if out.created && joined.is_none() {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        info.state = "not-started".into();
        info.error = Some(e.to_string());
        info.ended_unix = Some(unix_now());
        if joined.is_some() {
            // The job's status says a rank could not start.
            info.exit = Some(Exit::Code(e.exit_code()));
        }
        let _ = save(info);
    }
    if let Some(j) = joined {
        if job::after_end(dir, j.rank.size) == job::AfterEnd::Collect {
            eprintln!("xpu-asm-run: {e}");
            let _ = job::write_job_run_info(dir, info);
            collect_and_print(dir, &a.report);
            return Ok(e.exit_code());
        }
    }
    Err(e)
}

/// After a rank's command ended: whether this rank collects (every rank
/// has ended and it won the claim), having written the job's `run.json`.
fn rank_collects(j: &Joined, dir: &Path, info: &RunInfo, exit: Exit, args: &ReportArgs) -> bool {
    match job::after_end(dir, j.rank.size) {
        job::AfterEnd::Collect => {
            if let Err(e) = job::write_job_run_info(dir, info) {
                eprintln!("xpu-asm-run: {e}");
            }
            if !args.quiet {
                eprintln!(
                    "xpu-asm-run: every rank has ended (rank {}, the last, {}); collecting into {}",
                    j.rank.rank,
                    exit.describe(),
                    dir.display()
                );
            }
            true
        }
        job::AfterEnd::Done => false,
        job::AfterEnd::SizeUnknown => {
            if j.rank.rank == 0 && !args.quiet {
                eprintln!(
                    "xpu-asm-run: the launcher does not say how many ranks the job has: \
                     run `xpu-asm-run collect {}` once every rank has ended",
                    dir.display()
                );
            }
            false
        }
    }
}

/// Collects `dir` after a run and prints the report (errors on stderr).
fn collect_and_print(dir: &Path, args: &ReportArgs) {
    let res = collect(dir, &options(args));
    clear_progress(args);
    match res {
        Ok(r) => {
            print_report(dir, &r, args);
            // The process exits next: freeing a large report only takes time.
            std::mem::forget(r);
        }
        Err(e) => eprintln!("xpu-asm-run: {e}"),
    }
}

/// glibc's malloc still serves the C libraries (IGA). It grows and trims
/// each thread's heap a few pages at a time: IGA's text of a kernel,
/// megabytes, made it call `mprotect` about a thousand times per run. A
/// heap that grows by 32 MiB and is not trimmed asks the kernel a few
/// times instead; the pages not touched stay unbacked.
fn roomy_heaps() {
    // SAFETY: mallopt only sets glibc's malloc parameters, before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// mimalloc's `mi_option_purge_delay`, as the `mi_option_t` of the
/// mimalloc that the `mimalloc` crate builds numbers it (3.3,
/// `MI_VERSION_OF_OPTIONS`).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;
/// The mimalloc version (major, minor) whose options these are.
const MI_VERSION_OF_OPTIONS: libc::c_int = 303;

extern "C" {
    fn mi_version() -> libc::c_int;
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// Pages mimalloc freed stay the process's: by default it gives them back
/// after a second, and a collection, which frees and makes hundreds of MB
/// in turn, faulted them in (and the kernel zeroed them) again. It is
/// built not to ask for transparent huge pages (feature `no_thp`), which
/// made each of those faults zero 2 MiB: together a tenth of a
/// collection's CPU. The memory goes back when xpu-asm-run exits; while
/// it waits for a command, it holds little. A mimalloc of another version
/// is left as it is.
fn keep_freed_pages() {
    // SAFETY: mi_version reads a constant; mi_option_set sets an option of
    // the version checked, before any other thread exists.
    unsafe {
        if mi_version() / 100 == MI_VERSION_OF_OPTIONS {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mimalloc_built_is_the_one_whose_options_are_named() {
        // A mimalloc of another version: look its mi_option_t up again.
        // SAFETY: reads a constant.
        assert_eq!(
            unsafe { super::mi_version() } / 100,
            super::MI_VERSION_OF_OPTIONS
        );
    }
}
