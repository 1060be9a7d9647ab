//! `xpu-asm-run diff A B`: two captures side by side, kernel by kernel
//! ([`compare`]), gated by `--fail-on` ([`gate`]), rendered as a table, a
//! page or JSON ([`render`]); and `diff A B KERNEL`: a unified diff of one
//! kernel's two ISA texts.

pub mod compare;
pub mod gate;
pub mod render;

use super::terminal::{print_out, use_color};
use super::DiffArgs;
use crate::commands::read::ShowError;
use crate::names::escape_for_terminal;
use compare::{Captures, DiffReport};
use gate::Condition;
use render::PageError;
use std::path::Path;

/// Compares the captures `a` and `b` (their report.json).
pub fn diff(
    a_dir: &Path,
    b_dir: &Path,
    all: bool,
    fail_on: &[Condition],
) -> Result<DiffReport, ShowError> {
    let c = Captures::load(a_dir, b_dir)?;
    Ok(c.diff(all, fail_on))
}

impl Captures<'_> {
    /// Their comparison: every kernel with `all`, else those that changed
    /// and those in one capture only; the conditions of `fail_on`
    /// evaluated on every kernel.
    pub fn diff(&self, all: bool, fail_on: &[Condition]) -> DiffReport {
        let mut d = compare::compare_reports(&self.a, self.a_dir, &self.b, self.b_dir);
        d.failed = gate::failures(&d.kernels, fail_on);
        d.listed(all)
    }
}

/// `diff A B [KERNEL]`: its exit status (1 when a `--fail-on` condition
/// holds, 2 on error).
pub fn main(a: &DiffArgs) -> i32 {
    let color = use_color(a.color);
    let conditions = a.fail_on.as_ref().map_or(&[][..], |f| &f.0[..]);
    if let Some(kernel) = &a.kernel {
        return match render::isa_diff(&a.a, &a.b, kernel, a.normalize_regs, color) {
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
    let compared = Captures::load(&a.a, &a.b)
        .map_err(PageError::from)
        .and_then(|c| match &a.html {
            // Of every kernel once: the page's, and the table's as listed.
            Some(file) => {
                let every = c.diff(true, conditions);
                let d = every.clone().listed(a.all);
                render::write_page(c, every, file, a.page_kernels)?;
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
                print_out(&render::render(&d, color));
            }
            for f in &d.failed {
                eprintln!(
                    "xpu-asm-run: --fail-on {}: {}: {}",
                    f.condition,
                    f.line_name(),
                    escape_for_terminal(&f.why)
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
