//! What the commands print on a terminal: the report (table or JSON) and
//! its warnings, colour, progress, and stdout that a closed pipe does not
//! break.

use super::{Color, ReportArgs};
use crate::collect::{Options, Progress};
use crate::names::escape_for_terminal;
use crate::report::export::{json, table};
use crate::report::Report;
use crate::run::launch;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// Warnings printed on stderr; the rest are in report.json.
const MAX_WARNINGS_SHOWN: usize = 20;

/// The options of a collection, from the command line.
pub fn options(r: &ReportArgs) -> Options {
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

/// Clears the progress line.
pub fn clear_progress(r: &ReportArgs) {
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
pub fn print_report(dir: &Path, r: &Report, args: &ReportArgs) {
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
            sort: args.sort,
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
pub fn use_color(c: Color) -> bool {
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
pub fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
