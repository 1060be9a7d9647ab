//! The renderings of a comparison: the terminal's table, the page
//! (`--html`), and the unified diff of one kernel's two ISA texts.

use super::compare::{change, compare, Captures, DiffReport, KernelDiff, Side};
use crate::commands::read::{self, ShowError};
use crate::names;
use crate::report::export::html;
use crate::report::{KernelEntry, LeftOut, Limit, Report};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;
use xpu_asm_isa::{self as isa, Line};

/// Why the page of a comparison was not written.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Show(#[from] ShowError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// The data of a comparison's page: the comparison of every kernel, both
/// reports, and where the page holds each kernel's ISA text.
#[derive(Serialize)]
struct DiffPage<'a> {
    kind: &'static str,
    classes: Vec<&'static str>,
    diff: &'a DiffReport,
    /// Each kernel of `diff` as the terminal's table of changes names it
    /// (told apart from the others, not escaped), in `diff.kernels` order.
    names: Vec<String>,
    a: &'a Report,
    b: &'a Report,
    isa_a: Vec<html::IsaRef>,
    isa_b: Vec<html::IsaRef>,
    /// The kernels of the comparison the page does not hold
    /// (`--page-kernels`).
    #[serde(skip_serializing_if = "Option::is_none")]
    page_kernels: Option<LeftOut>,
}

/// The rows of a comparison's page of at most `n` of its `kernels`, in
/// their order: those that changed or are in one capture only first, then
/// the others.
fn page_rows(kernels: &[KernelDiff], n: usize) -> Vec<usize> {
    let (first, then): (Vec<usize>, Vec<usize>) =
        (0..kernels.len()).partition(|&i| kernels[i].notable());
    let mut rows: Vec<usize> = first.into_iter().chain(then).take(n).collect();
    rows.sort_unstable();
    rows
}

/// Writes the page of `d`, the comparison of every kernel of the captures
/// `c` ([`Captures::diff`] with `all`), to `file`: its kernels up to
/// `limit` ([`page_rows`]).
pub fn write_page(
    c: Captures,
    mut d: DiffReport,
    file: &Path,
    limit: Limit,
) -> Result<(), PageError> {
    let Captures {
        a_dir,
        b_dir,
        mut a,
        mut b,
    } = c;
    let mut names = short_names(&d);
    let page_kernels = limit.left_out_of(d.kernels.len());
    if page_kernels.is_some() {
        // The rows kept, and of each report the kernels they show.
        let rows = page_rows(&d.kernels, limit.count());
        d.kernels = rows.iter().map(|&i| d.kernels[i].clone()).collect();
        names = rows.iter().map(|&i| names[i].clone()).collect();
        let shown = |side: fn(&KernelDiff) -> &Option<Side>| -> HashSet<usize> {
            d.kernels
                .iter()
                .filter_map(|k| side(k).as_ref().map(|s| s.rank))
                .collect()
        };
        let (in_a, in_b) = (shown(|k| &k.a), shown(|k| &k.b));
        a.kernels.retain(|k| in_a.contains(&k.rank));
        b.kernels.retain(|k| in_b.contains(&k.rank));
    }
    let (isa_a, mut texts) = html::read_isa(a_dir, &a.kernels, "a");
    let (isa_b, texts_b) = html::read_isa(b_dir, &b.kernels, "b");
    texts.extend(texts_b);
    let data = DiffPage {
        kind: "diff",
        classes: html::classes(),
        diff: &d,
        names,
        a: &a,
        b: &b,
        isa_a,
        isa_b,
        page_kernels,
    };
    let title = format!("xpu-asm diff: {} vs {}", d.a, d.b);
    let page = html::render(&html::Page {
        title: &title,
        data: &data,
        isa: texts,
    });
    std::fs::write(file, page).map_err(|source| PageError::Write {
        path: file.to_path_buf(),
        source,
    })
}

fn paint(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Growth of these is a cost: shown red, shrinking green.
fn is_cost(field: &str) -> bool {
    !matches!(field, "launches" | "simd")
}

/// The comparison as a table.
pub fn render(d: &DiffReport, color: bool) -> String {
    let c = color;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A: {}\nB: {}",
        names::escape_for_terminal(&d.a),
        names::escape_for_terminal(&d.b)
    );
    changes(&mut out, d, c);
    only_in_one(&mut out, d, c);
    let s = &d.summary;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}",
        paint(
            c,
            "1",
            &format!(
                "{} kernel{} in both, {} changed; {} only in A, {} only in B",
                s.in_both,
                if s.in_both == 1 { "" } else { "s" },
                s.changed,
                s.only_a,
                s.only_b
            )
        )
    );
    out
}

/// The kernels in both captures, in a table: each changed field, or no
/// change.
fn changes(out: &mut String, d: &DiffReport, c: bool) {
    let name_w = name_width(d);
    let rows: Vec<&KernelDiff> = d
        .kernels
        .iter()
        .filter(|k| k.a.is_some() && k.b.is_some())
        .collect();
    // Per-loop fields (`loop[2].instructions`) are longer than the rest.
    let field_w = rows
        .iter()
        .flat_map(|k| k.changed.iter().map(|f| f.len()))
        .max()
        .unwrap_or(0)
        .max(16);
    if !rows.is_empty() {
        let _ = writeln!(out);
        let head = format!(
            "{:<name_w$}  {:<field_w$} {:>10} {:>10}  change",
            "kernel", "field", "A", "B"
        );
        let _ = writeln!(out, "{}", paint(c, "1", &head));
    }
    let shown: Vec<String> = rows.iter().map(|k| k.display_name()).collect();
    let shown = names::distinct(&shown, name_w);
    for (k, name) in rows.into_iter().zip(shown) {
        let mut first = true;
        let mut label = |out: &mut String| {
            let l = if first { name.clone() } else { String::new() };
            first = false;
            let _ = write!(out, "{:<name_w$}  ", l);
        };
        if let (Some(a), Some(b)) = (&k.a, &k.b) {
            if k.changed.is_empty() {
                label(out);
                let _ = writeln!(
                    out,
                    "no change ({} launches, {} instructions)",
                    a.launches,
                    opt(a.instructions)
                );
            }
            for f in &k.changed {
                label(out);
                if let Some(line) = shape_change(f, a, b) {
                    let _ = writeln!(out, "{:<field_w$} {line}", f);
                    continue;
                }
                let (va, vb) = (a.get(f), b.get(f));
                let _ = writeln!(
                    out,
                    "{:<field_w$} {:>10} {:>10}  {}",
                    f,
                    opt(va),
                    opt(vb),
                    painted_change(f, va, vb, c)
                );
            }
        }
        if let Some(p) = &k.pairing {
            let _ = writeln!(out, "{:<name_w$}  ({p})", "");
        }
    }
}

/// The `shape` and `occupancy` rows, in their own words (`64 x 16`,
/// `12.5%`).
fn shape_change(field: &str, a: &Side, b: &Side) -> Option<String> {
    let pct = |v: Option<u64>| v.map_or("-".to_string(), |v| format!("{}%", v as f64 / 100.0));
    match field {
        "shape" => Some(format!(
            "{:>10} {:>10}",
            a.shape.as_deref().unwrap_or("-"),
            b.shape.as_deref().unwrap_or("-")
        )),
        "occupancy" => Some(format!("{:>10} {:>10}", pct(a.occupancy), pct(b.occupancy))),
        "time" => {
            let ns = |v: Option<u64>| v.map_or("-".to_string(), crate::report::time::human_ns);
            let change = match (a.time, b.time) {
                (Some(x), Some(y)) => super::compare::time_change(x, y),
                _ => String::new(),
            };
            Some(format!("{:>10} {:>10}  {change}", ns(a.time), ns(b.time)))
        }
        "origin" => Some(format!(
            "{:>10} {:>10}  the build changed: how the ISA was made",
            a.origin.as_deref().unwrap_or("-"),
            b.origin.as_deref().unwrap_or("-")
        )),
        _ => None,
    }
}

/// The room of the kernel column of the table of changes.
fn name_width(d: &DiffReport) -> usize {
    d.kernels
        .iter()
        .map(|k| k.display_name().chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 48)
}

/// Each kernel of `d` named as the table of changes names it (told apart
/// from the others by [`names::distinct`] at that table's width), but not
/// escaped: for the page, which sets names as text.
pub fn short_names(d: &DiffReport) -> Vec<String> {
    let full: Vec<String> = d.kernels.iter().map(KernelDiff::shown_name).collect();
    names::distinct(&full, name_width(d))
}

/// `+15, +60.0%`, red for a cost that grew, green for one that shrank.
fn painted_change(field: &str, va: Option<u64>, vb: Option<u64>, c: bool) -> String {
    match (va, vb) {
        (Some(x), Some(y)) => {
            let s = change(x, y);
            let code = if !is_cost(field) {
                "0"
            } else if y > x {
                "31"
            } else {
                "32"
            };
            paint(c, code, &s)
        }
        _ => String::new(),
    }
}

/// The kernels in one capture only, listed apart.
fn only_in_one(out: &mut String, d: &DiffReport, c: bool) {
    for (title, in_a) in [("only in A:", true), ("only in B:", false)] {
        let only: Vec<(&KernelDiff, &Side)> = d
            .kernels
            .iter()
            .filter_map(|k| match (&k.a, &k.b) {
                (Some(a), None) if in_a => Some((k, a)),
                (None, Some(b)) if !in_a => Some((k, b)),
                _ => None,
            })
            .collect();
        if only.is_empty() {
            continue;
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", paint(c, "33", title));
        for (k, side) in only {
            let _ = writeln!(
                out,
                "  #{} {} ({} launches, {} instructions)",
                side.rank,
                k.display_name(),
                side.launches,
                opt(side.instructions)
            );
        }
    }
}

/// ISA text reduced to what a change of code shows in: labels and
/// instructions, comments and alignment removed; with `normalize_regs`,
/// GRF registers renamed in order of first use (`r0`, `r1`, ...), so that
/// a different register allocation of the same code compares equal.
pub fn comparable(text: &str, normalize_regs: bool) -> String {
    let re = normalize_regs.then(|| regex::Regex::new(r"\br(\d+)\b").expect("a valid regex"));
    let mut regs: HashMap<String, usize> = HashMap::new();
    let mut out = String::new();
    for l in isa::lines(text) {
        let line = match l {
            Line::Label(l) => format!("{l}:"),
            Line::Instruction(i) => {
                let code = i.find("//").map_or(i, |p| &i[..p]);
                code.split_whitespace().collect::<Vec<_>>().join(" ")
            }
            _ => continue,
        };
        let line = match &re {
            Some(re) => re
                .replace_all(&line, |c: &regex::Captures| {
                    let n = regs.len();
                    format!("r{}", *regs.entry(c[1].to_string()).or_insert(n))
                })
                .into_owned(),
            None => line,
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The unified diff of one kernel's ISA in the two captures.
pub fn isa_diff(
    a_dir: &Path,
    b_dir: &Path,
    selector: &str,
    normalize_regs: bool,
    color: bool,
) -> Result<String, ShowError> {
    let a = read::load_report(a_dir)?;
    let b = read::load_report(b_dir)?;
    let (ea, eb) = pair_of(&a, a_dir, &b, b_dir, selector)?;
    let (ta, la) = comparable_text(a_dir, ea.as_ref(), normalize_regs)?;
    let (tb, lb) = comparable_text(b_dir, eb.as_ref(), normalize_regs)?;
    let d = similar::TextDiff::from_lines(&ta, &tb);
    let unified = d
        .unified_diff()
        .context_radius(3)
        .header(&la, &lb)
        .to_string();
    if !color {
        return Ok(unified);
    }
    Ok(colored(&unified))
}

/// The kernel `selector` picks in A (else in B), and its pair in the other
/// capture (`None` when it has none).
fn pair_of(
    a: &Report,
    a_dir: &Path,
    b: &Report,
    b_dir: &Path,
    selector: &str,
) -> Result<(Option<KernelEntry>, Option<KernelEntry>), ShowError> {
    let pairs = compare(a, a_dir, b, b_dir);
    let (in_a, in_b) = (
        read::find_kernels(a, selector),
        read::find_kernels(b, selector),
    );
    if in_a.is_empty() && in_b.is_empty() {
        if selector.parse::<usize>().is_ok() {
            // A rank is of A: `select` says which ranks A has.
            read::select(a, a_dir, selector)?;
        }
        return Err(ShowError::NoMatchInEither {
            a: a_dir.display().to_string(),
            b: b_dir.display().to_string(),
            selector: selector.to_string(),
        });
    }
    let (dir, report, found, side_a) = if !in_a.is_empty() {
        (a_dir, a, in_a, true)
    } else {
        (b_dir, b, in_b, false)
    };
    let k = match found.as_slice() {
        [k] => *k,
        _ => read::select(report, dir, selector)?,
    };
    let pair = pairs
        .iter()
        .find(|p| {
            let s = if side_a { &p.a } else { &p.b };
            p.name == k.name && s.as_ref().is_some_and(|s| s.rank == k.rank)
        })
        .expect("every kernel of a report is in its comparison");
    let entry = |r: &Report, s: &Option<Side>| {
        s.as_ref()
            .and_then(|s| r.kernels.iter().find(|k| k.rank == s.rank))
            .cloned()
    };
    Ok((entry(a, &pair.a), entry(b, &pair.b)))
}

/// The [`comparable`] text of `e`'s ISA file in `dir`, and its path (empty
/// and `/dev/null` for no kernel).
fn comparable_text(
    dir: &Path,
    e: Option<&KernelEntry>,
    normalize_regs: bool,
) -> Result<(String, String), ShowError> {
    match e {
        None => Ok((String::new(), "/dev/null".to_string())),
        Some(e) => {
            let p = read::isa_path(dir, e)?;
            let bytes = std::fs::read(&p).map_err(|source| ShowError::Read {
                path: p.clone(),
                source,
            })?;
            Ok((
                comparable(&String::from_utf8_lossy(&bytes), normalize_regs),
                p.display().to_string(),
            ))
        }
    }
}

/// A unified diff in colour: headers bold, additions green, removals red,
/// hunks cyan.
fn colored(unified: &str) -> String {
    let mut out = String::new();
    for l in unified.lines() {
        let code = if l.starts_with("+++") || l.starts_with("---") {
            "1"
        } else if l.starts_with('+') {
            "32"
        } else if l.starts_with('-') {
            "31"
        } else if l.starts_with("@@") {
            "36"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(l);
        } else {
            out.push_str(&paint(true, code, l));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_renumbering_compares_equal() {
        let a = "L0:\n  add (1|M0) r12.0<1>:d r13.0<0;1,0>:d 1:w // $1\n  mov (1|M0) r14.0<1>:d r12.0<0;1,0>:d\n";
        let b = "L0:\n  add (1|M0)   r40.0<1>:d r41.0<0;1,0>:d 1:w // $7\n  mov (1|M0) r42.0<1>:d r40.0<0;1,0>:d\n";
        assert_ne!(comparable(a, false), comparable(b, false));
        assert_eq!(comparable(a, true), comparable(b, true));
        assert_eq!(
            comparable(a, true),
            "L0:\nadd (1|M0) r0.0<1>:d r1.0<0;1,0>:d 1:w\nmov (1|M0) r2.0<1>:d r0.0<0;1,0>:d\n"
        );
    }
}
