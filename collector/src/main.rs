//! `xpu-asm-run`: a thin shell over the `xpu_asm_collector` library.

use clap::Parser;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use xpu_asm_collector::cli::{Cli, IsaMode, ReportArgs, Sub};
use xpu_asm_collector::launch::{self, LaunchError, RunInfo};
use xpu_asm_collector::report::{self, Report, TableStyle};
use xpu_asm_collector::{collect, CollectError, Options};

/// Warnings printed on stderr; the rest are in report.json.
const MAX_WARNINGS_SHOWN: usize = 20;

fn main() {
    let cli = Cli::parse();
    let code = match cli.sub {
        Some(Sub::Collect(a)) => cmd_collect(&a.dir, &a.report),
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
    let progress: Option<xpu_asm_collector::Progress> =
        if !r.quiet && std::io::stderr().is_terminal() {
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
        stop: Some(&launch::STOP),
        progress,
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
        .unwrap_or(120)
}

/// Prints the report (table or JSON) on stdout and its warnings on stderr.
fn print_report(dir: &Path, r: &Report, args: &ReportArgs) {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    if args.json {
        // Streamed: the report of a large capture is 100+ MB of JSON.
        let _ = serde_json::to_writer_pretty(&mut out, r);
        let _ = out.write_all(b"\n");
    } else if !args.quiet {
        let color = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty());
        let style = TableStyle {
            width: terminal_width(),
            color,
            dir: dir.display().to_string(),
        };
        let _ = out.write_all(report::render_table(r, &style).as_bytes());
    }
    let _ = out.flush();
    if !args.quiet {
        for w in r.warnings.iter().take(MAX_WARNINGS_SHOWN) {
            eprintln!(
                "xpu-asm-run: warning: {}",
                xpu_asm_collector::names::escape_for_terminal(w)
            );
        }
        if r.warnings.len() > MAX_WARNINGS_SHOWN {
            eprintln!(
                "xpu-asm-run: {} more warnings in {}/report.json",
                r.warnings.len() - MAX_WARNINGS_SHOWN,
                dir.display()
            );
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

fn cmd_run(a: &xpu_asm_collector::cli::RunArgs) -> Result<i32, LaunchError> {
    let interposer = launch::find_interposer(
        a.interposer.as_deref(),
        std::env::var_os(launch::INTERPOSER_ENV),
        std::env::current_exe().ok(),
    )?;
    // `command` is required by clap: there is a first element.
    let cmd0 = a.command.first().cloned().unwrap_or_default();
    let out = launch::prepare_out_dir(a.out.as_deref(), a.force, &cmd0)?;
    let dir = out.path.clone();
    let mut info = RunInfo {
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
        exit: None,
        error: None,
        started_unix: launch::unix_now(),
        ended_unix: None,
    };
    launch::write_run_info(&dir, &info)?;
    let mut env = launch::child_env(
        &interposer,
        &dir,
        std::env::var_os("LD_PRELOAD").as_deref(),
        a.emulate.as_deref(),
    );
    let mut unset = launch::inherited_owned_vars();
    match a.isa {
        IsaMode::Binary => env.push((xpu_asm_record::ISA_ENV.into(), "binary".into())),
        IsaMode::Dump => unset.push(xpu_asm_record::ISA_ENV.into()),
    }
    if let Some(why) = launch::untraceable(&cmd0) {
        eprintln!("xpu-asm-run: warning: {why}; running it anyway");
    }
    launch::install_signal_handlers();
    let (pid, exit) = match launch::spawn_and_wait(&a.command, &env, &unset) {
        Ok(r) => r,
        Err(e) => {
            if out.created {
                // Nothing ran: leave no empty capture behind a typo.
                let _ = std::fs::remove_dir_all(&dir);
            } else {
                info.state = "not-started".into();
                info.error = Some(e.to_string());
                info.ended_unix = Some(launch::unix_now());
                let _ = launch::write_run_info(&dir, &info);
            }
            return Err(e);
        }
    };
    launch::enter_collecting();
    info.state = "ended".into();
    info.pid = Some(pid);
    info.exit = Some(exit);
    info.ended_unix = Some(launch::unix_now());
    if let Err(e) = launch::write_run_info(&dir, &info) {
        eprintln!("xpu-asm-run: {e}");
    }
    let args = &a.report;
    if !args.quiet {
        eprintln!(
            "xpu-asm-run: the command {}; collecting into {}",
            exit.describe(),
            dir.display()
        );
    }
    let res = collect(&dir, &options(args));
    clear_progress(args);
    match res {
        Ok(r) => {
            print_report(&dir, &r, args);
            // The process exits next: freeing a large report only takes time.
            std::mem::forget(r);
        }
        Err(e) => eprintln!("xpu-asm-run: {e}"),
    }
    Ok(exit.status())
}
