//! `xpu-asm-run port DIR --to D1[,D2...]`: the launched kernels of a
//! capture compiled for other products ([`crate::port`]), one table kernel
//! by kernel, product by product, what got worse than on the device of the
//! run marked; `--fail-on` as `diff`'s; `--json`.

pub mod page;
pub mod view;

use super::read::load_report;
use super::PortArgs;
use crate::names;
use crate::port::{port, PortOptions, PortResult, PORT_DIR};
use crate::run::launch;
use std::path::Path;
use view::{PortView, COMPARE_PAGE};

/// `port`'s exit status when every product compiled but some launched
/// kernel could not be ported to one of them (and no `--fail-on`
/// condition holds).
pub const NOT_PORTED: i32 = 3;

/// Runs `port`: 0, 1 when a `--fail-on` condition holds, 2 on error,
/// [`NOT_PORTED`] when a kernel could not be ported.
pub fn main(a: &PortArgs) -> i32 {
    match run(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            2
        }
    }
}

/// `xpu-asm-run --port-to PRODUCTS -- CMD`: `port` of the capture just
/// collected (errors on stderr; the command's exit status stays the run's).
pub fn after_run(dir: &Path, to: &[String], interposer: Option<std::path::PathBuf>, quiet: bool) {
    let a = PortArgs {
        dir: dir.to_path_buf(),
        to: to.to_vec(),
        json: false,
        fail_on: None,
        jobs: None,
        interposer,
        quiet,
    };
    if let Err(e) = run(&a) {
        eprintln!("xpu-asm-run: --port-to: {e}");
    }
}

fn run(a: &PortArgs) -> Result<i32, String> {
    let products = products(&a.to)?;
    let run_report = load_report(&a.dir).map_err(|e| e.to_string())?;
    let interposer = launch::resolve_interposer(
        a.interposer.as_deref(),
        std::env::var_os(launch::INTERPOSER_ENV),
        std::env::current_exe().ok(),
        a.quiet,
    )
    .and_then(|i| i.into_path(&a.dir, a.quiet))
    .map_err(|e| e.to_string())?;
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find xpu-asm-run itself: {e}"))?;
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = PortOptions {
        exe,
        interposer,
        jobs,
        collect: crate::collect::Options {
            rebuild: None,
            ..Default::default()
        },
    };
    if !a.quiet {
        eprintln!(
            "xpu-asm-run: compiling the launched kernels of {} for {}",
            a.dir.display(),
            products.join(", ")
        );
    }
    let result = port(&a.dir, &products, &opts)?;
    write_pages(&a.dir, &result);
    let view = PortView::new(&a.dir, &run_report, &result);
    if let Err(e) = page::write(&a.dir, &view) {
        eprintln!(
            "xpu-asm-run: {}/{PORT_DIR}/{}: {e}",
            a.dir.display(),
            view::INDEX_PAGE
        );
    }
    if a.json {
        let json = serde_json::to_string_pretty(&view).map_err(|e| e.to_string())?;
        super::terminal::print_out(&format!("{json}\n"));
    } else {
        super::terminal::print_out(&view.table());
    }
    for p in &result.products {
        if let Err(e) = &p.report {
            eprintln!("xpu-asm-run: {}: {e}", p.product);
        }
    }
    let unported = say_not_ported(&view, a.quiet);
    let Some(fail_on) = &a.fail_on else {
        return Ok(unported);
    };
    let mut failed = false;
    for (product, fs) in &view.failures(&fail_on.0) {
        for f in fs {
            failed = true;
            eprintln!(
                "xpu-asm-run: --fail-on {}: {} on {product}: {}",
                f.condition,
                f.line_name(),
                names::escape_for_terminal(&f.why)
            );
        }
    }
    Ok(if failed { 1 } else { unported })
}

/// Says on stderr (unless `quiet`) how many launched kernels could not be
/// ported to each product: the exit status, [`NOT_PORTED`] when any, else 0.
fn say_not_ported(view: &PortView, quiet: bool) -> i32 {
    let not_ported = view.not_ported();
    for (product, n) in &not_ported {
        if !quiet {
            eprintln!(
                "xpu-asm-run: {n} launched kernel{} not ported to {product} (the table says why)",
                if *n == 1 { "" } else { "s" }
            );
        }
    }
    if not_ported.is_empty() {
        0
    } else {
        NOT_PORTED
    }
}

/// For each product with a report, `DIR/port/<product>/compare.html`:
/// the run and the product side by side, as `diff --html` shows two
/// captures (each kernel's figures, mix and ISA next to each other).
fn write_pages(dir: &Path, result: &PortResult) {
    use super::diff::compare::Captures;
    use super::diff::render::write_page;
    for p in result.products.iter().filter(|p| p.report.is_ok()) {
        let file = p.dir.join(COMPARE_PAGE);
        let written = Captures::load(dir, &p.dir)
            .map_err(super::diff::render::PageError::from)
            .and_then(|c| {
                let every = c.diff(true, &[]);
                write_page(
                    c,
                    every,
                    &file,
                    crate::report::Limit::First(crate::report::export::html::DEFAULT_PAGE_KERNELS),
                )
            });
        if let Err(e) = written {
            eprintln!("xpu-asm-run: {}: {e}", file.display());
        }
    }
}

/// `--to`'s products, each one the stack's `ocloc` knows (else the list,
/// as `--emulate` gives it), each once.
fn products(to: &[String]) -> Result<Vec<String>, String> {
    let neo = crate::run::emulate::neo_devices();
    let mut out: Vec<String> = Vec::new();
    for p in to.iter().flat_map(|t| t.split(',')) {
        // Any case: `--to DG2` is dg2, as ocloc lists it.
        let p = p.trim().to_ascii_lowercase();
        if p.is_empty() || out.contains(&p) {
            continue;
        }
        launch::check_emulated_device("--to", &p, neo.as_ref(), crate::run::emulate::neo_version)
            .map_err(|e| e.to_string())?;
        out.push(p);
    }
    if out.is_empty() {
        return Err("--to names no product (e.g. --to dg2,bmg)".into());
    }
    Ok(out)
}
