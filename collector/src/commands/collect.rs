//! `xpu-asm-run collect DIR`: a capture collected (again) and its report
//! printed.

use super::terminal::{clear_progress, options, print_report};
use super::ReportArgs;
use crate::capture::layout::CollectError;
use crate::collect::collect;
use crate::run::launch;
use std::path::Path;

/// `collect DIR`: its exit status (1 on error, 130 when interrupted).
pub fn main(dir: &Path, args: &ReportArgs) -> i32 {
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

/// Collects `dir` after a run and prints the report (errors on stderr).
/// True when the run launched no kernel and built no module on any
/// device, real or emulated: the program may have found none.
pub fn collect_and_print(dir: &Path, args: &ReportArgs) -> bool {
    let res = collect(dir, &options(args));
    clear_progress(args);
    match res {
        Ok(r) => {
            print_report(dir, &r, args);
            let no_device = r.emulate.is_none()
                && r.totals.kernels + r.totals.filtered_out == 0
                && r.processes.iter().all(|p| p.device.is_none());
            // The process exits next: freeing a large report only takes time.
            std::mem::forget(r);
            no_device
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            false
        }
    }
}
