//! The report as the table printed on a terminal ([`render_table`]).

use crate::kernel_isa::{IsaSourceKind, Status};
use crate::names;
use crate::report::time::{human_ns, TimeEntry};
use crate::report::{Api, KernelEntry, Report};
use rayon::prelude::*;
use std::fmt::Write;

/// How the table is drawn.
#[derive(Debug, Clone)]
pub struct TableStyle {
    /// Characters per line to aim for.
    pub width: usize,
    pub color: bool,
    /// How to show the capture folder in the closing lines.
    pub dir: String,
    /// The rows' order; `None`: by device time when the report has it,
    /// else by launches.
    pub sort: Option<Sort>,
}

/// The order of the table's rows (`--sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    /// By launches, most first (the report's ranks)
    Launches,
    /// By device time (`--time`), most first; kernels without one after
    Time,
    /// By name
    Name,
}

/// The rows' order: indexes of `r.kernels`.
pub fn order(r: &Report, sort: Option<Sort>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..r.kernels.len()).collect();
    let by_time = r.time.is_some();
    match sort.unwrap_or(if by_time { Sort::Time } else { Sort::Launches }) {
        // The report's own order.
        Sort::Launches => {}
        Sort::Time => order.sort_by_key(|&i| {
            let k = &r.kernels[i];
            std::cmp::Reverse(k.time.as_ref().map(|t| t.estimated_ns))
        }),
        Sort::Name => order.sort_by(|&a, &b| {
            let (ka, kb) = (&r.kernels[a], &r.kernels[b]);
            ka.demangled.cmp(&kb.demangled).then(ka.rank.cmp(&kb.rank))
        }),
    }
    order
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn paint(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// A kernel's name cell, `name` fitted to `w` characters: the empty
/// name's `(empty name)` dim and italic in colour, apart from any name.
fn name_cell(k: &KernelEntry, name: &str, w: usize, c: bool) -> String {
    match k.name.is_empty() && k.name_hex.is_none() {
        true => paint(c, EMPTY_STYLE, &fit(name, w)),
        false => fit(name, w),
    }
}

/// How the empty name is painted (SGR: dim, italic).
pub const EMPTY_STYLE: &str = "2;3";

/// Pads or cuts `s` to exactly `w` characters.
fn fit(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.chars().take(w).collect()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// The table: one row per listed kernel, then totals, what was not matched
/// and why, unlaunched kernels, dump sizes.
pub fn render_table(r: &Report, style: &TableStyle) -> String {
    let c = style.color;
    let mut out = String::new();
    let rows = order(r, style.sort);
    kernel_rows(&mut out, r, &rows, &Columns::of(r, style.width), c);
    totals(&mut out, r, c);
    device_time(&mut out, r, c);
    incomplete(&mut out, r, c);
    kept(&mut out, r);
    not_matched(&mut out, r, c);
    isa_notes(&mut out, r, c);
    closing_lines(&mut out, r, style);
    out
}

/// The widths of the table's columns.
struct Columns {
    /// The kernel's name.
    name_w: usize,
    /// The ranks that launched it: a column only for a parallel job's report.
    ranks_w: Option<usize>,
    /// Each kernel's ranks, as ranges.
    ranks: Vec<String>,
    /// Each kernel's name as shown ([`names::distinct`] at `name_w`).
    names: Vec<String>,
}

impl Columns {
    fn of(r: &Report, width: usize) -> Columns {
        let full = display_names(r, names::escape_for_terminal);
        let (ranks, ranks_w, name_w) = name_column_of(r, width, &full);
        let names = names::distinct(&full, name_w);
        Columns {
            name_w,
            ranks_w,
            ranks,
            names,
        }
    }

    fn ranks_cell(&self, s: &str) -> String {
        match self.ranks_w {
            Some(w) => format!(" {}", fit(s, w)),
            None => String::new(),
        }
    }
}

/// The header and one row per listed kernel, in `order`.
fn kernel_rows(out: &mut String, r: &Report, order: &[usize], cols: &Columns, c: bool) {
    let name_w = cols.name_w;
    let shapes = has_shapes(r);
    let shape_head = if shapes {
        format!("  {:<SHAPE_W$} {:<OCC_W$}", "top shape", "occupancy")
    } else {
        String::new()
    };
    let origins = r.kernels.iter().any(|k| k.origin.is_some());
    let origin_cell = |s: &str| match origins {
        true => format!("  {}", fit(s, ORIGIN_W)),
        false => String::new(),
    };
    let time_cell = |k: &KernelEntry| match time_columns(r, k) {
        None => String::new(),
        Some([t, s]) => format!(" {t:>TIME_W$} {s:>6}"),
    };
    let time_head = match r.time {
        Some(_) => format!(" {:>TIME_W$} {:>6}", "time", "share"),
        None => String::new(),
    };
    let header = format!(
        "{:>4} {:>10}{}{}  {}  {:>4} {:>4} {:>7} {:>7}{}{}  {:<6} {}",
        "#",
        "launches",
        time_head,
        cols.ranks_cell("ranks"),
        fit("kernel", name_w),
        "SIMD",
        "GRF",
        "instrs",
        "spill",
        shape_head,
        origin_cell("origin"),
        "source",
        "ISA file"
    );
    if r.kernels.is_empty() {
        let _ = writeln!(out, "no kernel was launched");
    } else {
        let _ = writeln!(out, "{}", paint(c, "1", header.trim_end()));
    }
    for &i in order {
        let (k, ranks, name) = (&r.kernels[i], &cols.ranks[i], &cols.names[i]);
        let shape = if shapes {
            let (s, o) = super::shapes_text::top(k);
            format!(
                "  {:<SHAPE_W$} {:<OCC_W$}",
                fit(&s, SHAPE_W),
                fit(&o, OCC_W)
            )
        } else {
            String::new()
        };
        let line = format!(
            "{:>4} {:>10}{}{}  {}  {:>4} {:>4} {:>7} {:>7}{}{}  {:<6} {}",
            k.rank,
            launches(k),
            time_cell(k),
            cols.ranks_cell(ranks),
            name_cell(k, name, name_w, c),
            opt(k.simd),
            opt(k.grf),
            opt(k.instructions),
            opt(k.spill_bytes),
            shape,
            origin_cell(&super::origin_text::cell(k.origin.as_ref())),
            source(k),
            isa_file(k, c)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The width of the time column (`--time`).
const TIME_W: usize = 10;

/// A kernel's `time` and `share` columns (`-` when it has no time);
/// `None` when the report has no device time (no `--time`).
pub fn time_columns(r: &Report, k: &KernelEntry) -> Option<[String; 2]> {
    let run = r.time.as_ref()?.estimated_ns;
    Some(match &k.time {
        None => ["-".to_string(), "-".to_string()],
        Some(t) => [time_text(t, k.launches), share(t.estimated_ns, run)],
    })
}

/// The page's `times` and `device_time`: the time and share columns of
/// `kernels` (of `r`) and the device time's lines, as the table has them.
pub fn page_times(r: &Report, kernels: &[KernelEntry]) -> (Vec<[String; 2]>, Vec<String>) {
    let times = kernels.iter().filter_map(|k| time_columns(r, k)).collect();
    (times, device_time_lines(r))
}

/// A kernel's device time in the table: its estimate over all its
/// launches, `~` before it when only some were timed.
fn time_text(t: &TimeEntry, launches: u64) -> String {
    let ns = human_ns(t.estimated_ns);
    match t.timed >= launches {
        true => ns,
        false => format!("~{ns}"),
    }
}

/// `part` of `whole` in percent, one decimal.
fn share(part: u64, whole: u64) -> String {
    match whole {
        0 => "-".to_string(),
        w => format!("{:.1}%", part as f64 * 100.0 / w as f64),
    }
}

/// The run's device time (`--time`), or why it has none.
fn device_time(out: &mut String, r: &Report, c: bool) {
    for (i, line) in device_time_lines(r).iter().enumerate() {
        let line = names::escape_for_terminal(line);
        match r.time.as_ref().is_some_and(|t| t.reason.is_some()) && i == 0 {
            true => writeln!(out, "{}", paint(c, "33", &line)),
            false => writeln!(out, "{line}"),
        }
        .ok();
    }
}

/// The table's lines of the run's device time (`--time`): `device time:
/// ...` and what was not timed, or `no device time: ` and why; none
/// without `--time`. For the table and the page, not escaped.
pub fn device_time_lines(r: &Report) -> Vec<String> {
    let Some(t) = &r.time else {
        return Vec::new();
    };
    if let Some(why) = &t.reason {
        return vec![format!("no device time: {why}")];
    }
    let sampling = t
        .sampling
        .map_or("each process's own sample".to_string(), |s| s.describe());
    let mut lines = vec![format!(
        "device time: {} over {} kernel{} ({} measured: {} launch{} timed of {} chosen, {sampling})",
        human_ns(t.estimated_ns),
        t.kernels_timed,
        if t.kernels_timed == 1 { "" } else { "s" },
        human_ns(t.total_ns),
        t.timed,
        if t.timed == 1 { "" } else { "es" },
        t.sampled,
    )];
    if t.timed < t.sampled {
        let mut why: Vec<String> = t
            .not_timed
            .iter()
            .map(|(name, n)| format!("{n} {}", reason_words(name)))
            .collect();
        if t.pending > 0 {
            why.push(format!("{} never read (the process was killed)", t.pending));
        }
        lines.push(format!("  not timed: {}", why.join("; ")));
    }
    lines
}

/// A not-timed reason's JSON name in words.
fn reason_words(name: &str) -> String {
    xpu_asm_record::times::NotTimed::ALL
        .iter()
        .find(|r| r.name() == name)
        .map_or_else(|| name.to_string(), |r| r.describe().to_string())
}

/// The widths of the columns of the most launched shape and its
/// occupancy, shown when some kernel has shapes.
const SHAPE_W: usize = 18;
/// The width of the origin column, shown when some kernel has an origin.
const ORIGIN_W: usize = 14;
const OCC_W: usize = 15;

fn has_shapes(r: &Report) -> bool {
    r.kernels.iter().any(|k| !k.shapes.is_empty())
}

/// The ranks column's width (none: no kernel has ranks).
fn ranks_width(ranks: &[String]) -> Option<usize> {
    ranks
        .iter()
        .map(|s| s.chars().count())
        .max()
        .filter(|w| *w > 0)
        .map(|w| w.clamp(5, 16))
}

/// The room of the name column, in a table of `width` characters per line
/// with a ranks column of `ranks_w`, for the names `full`: the names that
/// do not fit take the room the ISA path would, up to all but a third of
/// what is left beside the fixed columns.
fn name_width(r: &Report, width: usize, ranks_w: Option<usize>, full: &[String]) -> usize {
    let isa_w = r
        .kernels
        .iter()
        .map(|k| k.asm_copy.as_deref().map_or(1, |s| s.chars().count()))
        .max()
        .unwrap_or(8)
        .max(8);
    // rank, launches, SIMD, GRF, instrs, spill, source + separators
    // (The shape columns take no room from the names: a line with them may
    // be wider than `width`; the names stay as the page shows them.)
    let time_w = match r.time {
        Some(_) => TIME_W + 8,
        None => 0,
    };
    let fixed = 4 + 11 + 5 + 5 + 8 + 8 + 8 + 7 + time_w;
    let name_w = width.saturating_sub(fixed + isa_w).clamp(24, 80);
    let ranks_room = ranks_w.map_or(0, |w| w + 1);
    let name_w = name_w.saturating_sub(ranks_room).max(24);
    let longest = full.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let left = width.saturating_sub(fixed + ranks_room);
    let cap = left.saturating_sub(isa_w.min(left / 3)).max(name_w);
    if longest <= name_w {
        name_w
    } else {
        longest.min(cap)
    }
}

/// The width of a table printed elsewhere than on a terminal (a pipe, a
/// file) when `COLUMNS` does not say: the width the page names kernels at.
pub const DEFAULT_WIDTH: usize = 120;

/// Each kernel's name as the table of [`DEFAULT_WIDTH`] shows it (told
/// apart by [`names::distinct`] at that table's name width), but not
/// escaped: for the page, which sets names as text. Of the first `n`
/// kernels, told apart from all of them.
pub fn short_names(r: &Report, n: usize) -> Vec<String> {
    let plain = display_names(r, str::to_string);
    // The column's width is the terminal's, of the escaped names: the
    // same names unless one has a control character.
    let name_w = if plain.iter().any(|n| names::needs_escape(n)) {
        name_column(r, DEFAULT_WIDTH).2
    } else {
        name_column_of(r, DEFAULT_WIDTH, &plain).2
    };
    names::distinct_first(&plain, name_w, n)
}

/// Each kernel's name as the table names it before fitting it to its
/// column, not escaped: demangled, same-named kernels of one API with
/// their module (`common_kernel [module 3e8fd3a6]`), and in a capture of
/// both APIs each with its API; for the commands that name a report's
/// kernels (`port`).
pub fn names_apart(r: &Report) -> Vec<String> {
    display_names(r, str::to_string)
}

/// Each kernel's ranks as the table shows them, their column's width, and
/// the name column's width in a table `width` wide (from the escaped
/// names, as the terminal shows them).
fn name_column(r: &Report, width: usize) -> (Vec<String>, Option<usize>, usize) {
    name_column_of(r, width, &display_names(r, names::escape_for_terminal))
}

/// [`name_column`] of the names as the terminal shows them, `escaped`.
fn name_column_of(
    r: &Report,
    width: usize,
    escaped: &[String],
) -> (Vec<String>, Option<usize>, usize) {
    let ranks: Vec<String> = r
        .kernels
        .iter()
        .map(|k| xpu_asm_record::ranks::ranges(&k.ranks))
        .collect();
    let ranks_w = ranks_width(&ranks);
    let name_w = name_width(r, width, ranks_w, escaped);
    (ranks, ranks_w, name_w)
}

/// Each kernel's name (as `shown` makes it of [`KernelEntry::readable`]:
/// demangled, a name that is not UTF-8 with its bytes as `\xff`, the
/// empty name as `(empty name)`); kernels of one API that read the same
/// told apart by module, those of one module too by their exact names'
/// tags (`[name 1a2b3c4d]`), and, in a capture of both APIs, each kernel's
/// API after it (`[opencl]`, `[level zero]`).
fn display_names(r: &Report, shown: impl Fn(&str) -> String + Sync) -> Vec<String> {
    let readable: Vec<std::borrow::Cow<str>> =
        r.kernels.par_iter().map(KernelEntry::readable).collect();
    // Counted by hash: long names that share long prefixes (a capture's
    // 100,000) cost a tree many comparisons.
    let mut seen: xpu_asm_isa::fast::FastMap<(&str, Api), usize> =
        xpu_asm_isa::fast::FastMap::default();
    let mut in_module: xpu_asm_isa::fast::FastMap<(&str, Api, Option<&str>), usize> =
        xpu_asm_isa::fast::FastMap::default();
    seen.reserve(r.kernels.len());
    for (k, n) in r.kernels.iter().zip(&readable) {
        *seen.entry((n, k.api)).or_insert(0) += 1;
    }
    for (k, n) in r.kernels.iter().zip(&readable) {
        if seen.get(&(n.as_ref(), k.api)).copied().unwrap_or(0) > 1 {
            *in_module
                .entry((n, k.api, k.module_sha256.as_deref()))
                .or_insert(0) += 1;
        }
    }
    let both = [Api::LevelZero, Api::OpenCl]
        .iter()
        .all(|a| r.kernels.iter().any(|k| k.api == *a));
    r.kernels
        .par_iter()
        .zip(&readable)
        .map(|(k, n)| {
            let mut display = shown(n);
            if seen.get(&(n.as_ref(), k.api)).copied().unwrap_or(0) > 1 {
                let sha = k.module_sha256.as_deref().unwrap_or("");
                display.push_str(&format!(" [module {}]", sha.get(..8).unwrap_or(sha)));
                let key = (n.as_ref(), k.api, k.module_sha256.as_deref());
                if in_module.get(&key).copied().unwrap_or(0) > 1 {
                    let tag = names::name_tag(&k.name_bytes());
                    display.push_str(&format!(" [name {tag}]"));
                }
            }
            if both {
                display.push_str(names::api_tag(k.api.as_str()));
            }
            display
        })
        .collect()
}

/// A kernel's launches; `>=N` when its counts are a lower bound.
fn launches(k: &KernelEntry) -> String {
    if k.status == Status::NotLaunched {
        "0".to_string()
    } else if k.counts_incomplete {
        format!(">={}", k.launches)
    } else {
        k.launches.to_string()
    }
}

fn source(k: &KernelEntry) -> &'static str {
    match k.isa_source {
        Some(IsaSourceKind::IgcDump) => "dump",
        Some(IsaSourceKind::ModuleBinary) => "binary",
        None => "-",
    }
}

fn isa_file(k: &KernelEntry, c: bool) -> String {
    match (&k.asm_copy, &k.asm, k.status) {
        (Some(p), _, _) => p.clone(),
        (None, Some(p), _) => p.clone(),
        (None, None, Status::NotLaunched) => "-".to_string(),
        _ => paint(c, "33", "not matched (see below)"),
    }
}

/// The processes whose counts are not whole, and why: the table's counts
/// of their kernels are lower bounds (`>=`).
fn incomplete(out: &mut String, r: &Report, c: bool) {
    if r.counts_incomplete.is_empty() {
        return;
    }
    let k = r.totals.incomplete;
    let n = r.counts_incomplete.len();
    let processes = format!("{n} process{}", if n == 1 { "" } else { "es" });
    let head = match k {
        0 => format!("counts incomplete: launches of {processes} are missing:"),
        _ => format!(
            "counts incomplete: {k} kernel{} counted at least as shown (>=); launches of {processes} are missing:",
            if k == 1 { "" } else { "s" }
        ),
    };
    let _ = writeln!(out, "{}", paint(c, "33", &head));
    for why in &r.counts_incomplete {
        let _ = writeln!(out, "  {}", names::escape_for_terminal(why));
    }
}

/// Where counters were kept out of the capture during the run, and why
/// (their counts are whole unless said above).
fn kept(out: &mut String, r: &Report) {
    if r.counts_kept.is_empty() {
        return;
    }
    let _ = writeln!(out, "counts kept out of the capture during the run:");
    for k in &r.counts_kept {
        let place = match k.place.as_str() {
            "staged" => "in node-local memory (staged)",
            "memory" => "in the process's memory",
            other => other,
        };
        let n = k.processes;
        let _ = writeln!(
            out,
            "  {n} process{}: {place}: {}",
            if n == 1 { "" } else { "es" },
            names::escape_for_terminal(&k.reason)
        );
    }
}

/// The totals, the job's ranks and what `--filter` did not show.
fn totals(out: &mut String, r: &Report, c: bool) {
    let t = &r.totals;
    let _ = writeln!(
        out,
        "{}",
        paint(
            c,
            "1",
            &format!(
                "total: {} kernel{} launched {} time{} ({} appended), {} matched to their ISA, {} not matched",
                t.kernels,
                if t.kernels == 1 { "" } else { "s" },
                t.launches,
                if t.launches == 1 { "" } else { "s" },
                t.appended,
                t.matched,
                t.unmatched
            )
        )
    );
    let job_ranks: Vec<u32> = r.processes.iter().filter_map(|p| p.rank).collect();
    if !job_ranks.is_empty() {
        let hosts: std::collections::BTreeSet<&str> =
            r.processes.iter().map(|p| p.host.as_str()).collect();
        let _ = writeln!(
            out,
            "ranks {} in {} process{} on {} host{}",
            xpu_asm_record::ranks::ranges(&job_ranks),
            r.processes.len(),
            if r.processes.len() == 1 { "" } else { "es" },
            hosts.len(),
            if hosts.len() == 1 { "" } else { "s" }
        );
    }
    if t.filtered_out > 0 {
        let n = t.filtered_out;
        let _ = writeln!(
            out,
            "{n} launched kernel{} not shown (--filter {}); report.json and report.html hold every kernel",
            if n == 1 { "" } else { "s" },
            names::escape_for_terminal(r.filter.as_deref().unwrap_or(""))
        );
    }
}

/// The launched kernels without ISA, and why.
fn not_matched(out: &mut String, r: &Report, c: bool) {
    let unmatched: Vec<&KernelEntry> = r
        .kernels
        .iter()
        .filter(|k| k.status != Status::Matched && k.status != Status::NotLaunched)
        .collect();
    if unmatched.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", paint(c, "33", "not matched:"));
    // Kernels that share a reason (a module's, a full disk's) are one line.
    let mut groups: Vec<(&str, Vec<&KernelEntry>)> = Vec::new();
    for k in unmatched {
        let why = k.reason.as_deref().unwrap_or("no reason recorded");
        match groups.iter_mut().find(|g| g.0 == why) {
            Some(g) => g.1.push(k),
            None => groups.push((why, vec![k])),
        }
    }
    for (why, ks) in groups {
        let named =
            |k: &&KernelEntry| format!("#{} {}", k.rank, names::shorten(&k.display_name(), 60));
        if ks.len() <= 3 {
            for k in &ks {
                let _ = writeln!(out, "  {}: {why}", named(k));
            }
            continue;
        }
        let first: Vec<String> = ks.iter().take(3).map(named).collect();
        let _ = writeln!(
            out,
            "  {} kernels ({} and {} more): {why}",
            ks.len(),
            first.join(", "),
            ks.len() - 3
        );
    }
}

/// The kernels whose ISA comes with a note (the driver's build of a native
/// module it did not run as passed).
fn isa_notes(out: &mut String, r: &Report, c: bool) {
    let noted: Vec<&KernelEntry> = r.kernels.iter().filter(|k| k.isa_note.is_some()).collect();
    if noted.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", paint(c, "33", "notes:"));
    for k in noted {
        let _ = writeln!(
            out,
            "  #{} {}: {}",
            k.rank,
            names::shorten(&k.display_name(), 60),
            k.isa_note.as_deref().unwrap_or_default()
        );
    }
}

/// Unlaunched kernels, a run that recorded nothing, dump sizes, how the
/// command ended, and where the report is.
fn closing_lines(out: &mut String, r: &Report, style: &TableStyle) {
    let c = style.color;
    if r.unlaunched_compiled > 0 && !r.unlaunched_listed {
        let _ = writeln!(
            out,
            "IGC also compiled {} kernel(s) that were never launched (--all lists them)",
            r.unlaunched_compiled
        );
    }
    if r.processes.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            paint(
                c,
                "33",
                "no process left a record: the command made no Level Zero or OpenCL call the interposer saw \
                 (it records a process at its first call), or the interposer did not load \
                 (a static or setuid program, or LD_PRELOAD was cleared)"
            )
        );
    }
    dumps(out, r);
    limits(out, r);
    if let Some(e) = r.exit {
        let _ = writeln!(out, "the command {}", e.describe());
    }
    if let Some(dev) = &r.emulate {
        let _ = writeln!(
            out,
            "emulated device {dev}: kernels were compiled for it but not executed"
        );
    }
    match r.warnings.iter().find(|w| w.starts_with(NOT_WRITTEN)) {
        Some(w) => {
            let _ = writeln!(out, "report: {}", paint(style.color, "33", w));
        }
        None => {
            let _ = writeln!(
                out,
                "report: {0}/report.json, to browse: {0}/report.html",
                style.dir
            );
        }
    }
}

/// What the dumps held and hold, and what pruned them.
fn dumps(out: &mut String, r: &Report) {
    let d = &r.dumps;
    if r.isa.as_deref() == Some("binary") && d.before.files == 0 {
        let _ = writeln!(
            out,
            "ISA: IGA's disassembly of the module binaries the driver ran; IGC dumped nothing (--isa dump for its dumps)"
        );
    } else if d.before != d.after && d.keep == "all" {
        // Nothing is pruned with `all`: an earlier collection did.
        let _ = writeln!(
            out,
            "dumps: {} in {} files, {} in {} files since an earlier collection pruned them; \
             what it removed is gone, --keep all keeps what is left (to keep every dump, \
             run with --keep all: xpu-asm-run --keep all -- COMMAND)",
            human_bytes(d.before.bytes),
            d.before.files,
            human_bytes(d.after.bytes),
            d.after.files,
        );
    } else if d.before != d.after {
        let _ = writeln!(
            out,
            "dumps: {} in {} files, {} in {} files after pruning (--keep {}; --keep all keeps everything)",
            human_bytes(d.before.bytes),
            d.before.files,
            human_bytes(d.after.bytes),
            d.after.files,
            d.keep
        );
    } else {
        let _ = writeln!(
            out,
            "dumps: {} in {} files",
            human_bytes(d.after.bytes),
            d.after.files
        );
    }
}

/// How the warning that `report.json` could not be written starts.
pub const NOT_WRITTEN: &str = "report.json not written";

/// `N most launched kernels`, `most launched kernel` for one.
fn most_launched(n: u64) -> String {
    match n {
        1 => "most launched kernel".to_string(),
        n => format!("{n} most launched kernels"),
    }
}

/// What `asm/` and the page left out (`--asm-copies`, `--page-kernels`).
fn limits(out: &mut String, r: &Report) {
    match r.asm_copies {
        Some(c) if c.limit == 0 => {
            let _ = writeln!(
                out,
                "asm/: no copies (--asm-copies 0); the ISA column names each kernel's file"
            );
        }
        Some(c) => {
            let _ = writeln!(
                out,
                "asm/: copies of the {}, not of the other {} (the ISA column names their files; --asm-copies all copies every one)",
                most_launched(c.limit), c.left_out
            );
        }
        None => {}
    }
    if r.page_kernels.is_some_and(|p| p.limit == 0) {
        let _ = writeln!(
            out,
            "report.html: no kernels (--page-kernels 0); report.json has every one"
        );
    } else if let Some(p) = r.page_kernels {
        let _ = writeln!(
            out,
            "report.html: the {}, not the other {} (report.json has every one; --page-kernels all puts them all on the page)",
            most_launched(p.limit), p.left_out
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(10), "10 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }

    /// The lines of what `asm/` and the page left out, for each limit.
    #[test]
    fn limits_say_what_was_left_out() {
        let mut r = crate::report::export::pieces::rich_report(0);
        let lines = |r: &Report| {
            let mut out = String::new();
            limits(&mut out, r);
            out
        };
        let left = |limit, left_out| Some(crate::report::LeftOut { limit, left_out });
        r.asm_copies = None;
        assert_eq!(lines(&r), "");
        for (limit, asm, page) in [
            (
                0,
                "asm/: no copies (--asm-copies 0); the ISA column names each kernel's file",
                "report.html: no kernels (--page-kernels 0); report.json has every one",
            ),
            (
                1,
                "asm/: copies of the most launched kernel, not of the other 5 (the ISA column names their files; --asm-copies all copies every one)",
                "report.html: the most launched kernel, not the other 5 (report.json has every one; --page-kernels all puts them all on the page)",
            ),
            (
                3,
                "asm/: copies of the 3 most launched kernels, not of the other 5 (the ISA column names their files; --asm-copies all copies every one)",
                "report.html: the 3 most launched kernels, not the other 5 (report.json has every one; --page-kernels all puts them all on the page)",
            ),
        ] {
            (r.asm_copies, r.page_kernels) = (left(limit, 5), left(limit, 5));
            assert_eq!(lines(&r), format!("{asm}\n{page}\n"), "{limit}");
        }
    }
}
