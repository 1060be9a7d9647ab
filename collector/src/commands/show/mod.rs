//! `xpu-asm-run show DIR KERNEL`: one kernel of a capture, read like
//! `objdump -S`: its header figures, its instruction mix and its ISA, with
//! line information interleaved with the source lines that produced it.

pub mod cfg;
pub mod evidence;
pub mod json;

use super::read::{isa_path, load_report, select_listing, ShowError};
use super::terminal::{print_out, use_color};
use super::{CfgFormat, ShowArgs};
use crate::analysis::flow::Flow;
use crate::names;
use crate::report::time::human_ns;
use crate::report::KernelEntry;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;
use xpu_asm_isa::header::KnownNames;
use xpu_asm_isa::{self as isa, Line};

/// `show DIR KERNEL`: its exit status (1 on error).
pub fn main(a: &ShowArgs) -> i32 {
    let res = load_report(&a.dir).and_then(|r| {
        let (k, selector) = chosen(&r, a)?;
        if a.json {
            let v = json::answer(&a.dir, &selector, &r, k);
            return Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n");
        }
        render(
            &a.dir,
            k,
            ShowOptions {
                lines_only: a.lines,
                color: use_color(a.color),
                cfg: a.cfg.map(|f| match f {
                    CfgFormat::Text => Cfg::Text,
                    CfgFormat::Dot => Cfg::Dot,
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

/// The kernel KERNEL, `--name` or `--name-hex` names, and the selector as
/// `--json` gives it back (`--name`'s and `--name-hex`'s as typed).
fn chosen<'a>(
    r: &'a crate::report::Report,
    a: &ShowArgs,
) -> Result<(&'a KernelEntry, String), ShowError> {
    use std::os::unix::ffi::OsStrExt;
    let named = |bytes: &[u8], typed: String| {
        super::read::select_named(r, &a.dir, bytes, &typed).map(|k| (k, typed))
    };
    match (&a.kernel, &a.name, &a.name_hex) {
        (Some(sel), _, _) => select_listing(r, &a.dir, sel, a.sort).map(|k| (k, sel.clone())),
        (None, Some(name), _) => named(
            name.as_bytes(),
            format!("--name {}", name.to_string_lossy()),
        ),
        (None, None, Some(hex)) => {
            let bytes = xpu_asm_record::unhex(hex.trim())
                .ok_or_else(|| ShowError::NotHex { hex: hex.clone() })?;
            named(&bytes, format!("--name-hex {hex}"))
        }
        (None, None, None) => Err(ShowError::NoMatch {
            dir: a.dir.display().to_string(),
            selector: String::new(),
        }),
    }
}

/// How to show a kernel.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowOptions {
    /// Only the source lines, ranked by instructions.
    pub lines_only: bool,
    pub color: bool,
    /// Only the control-flow graph, as text or DOT.
    pub cfg: Option<Cfg>,
}

/// How `--cfg` prints the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cfg {
    Text,
    /// DOT, for Graphviz (`dot -Tsvg`).
    Dot,
}

/// `--cfg`: the graph of `k` alone (DOT), or under its figures (text).
fn render_cfg(out: &mut String, k: &KernelEntry, cfg: Cfg) -> Result<String, ShowError> {
    let f = k.flow.as_ref().ok_or_else(|| ShowError::NoFlow {
        rank: k.rank,
        name: k.display_name(),
        reason: k
            .flow_reason
            .clone()
            .unwrap_or_else(|| "the report has none (collected by an older xpu-asm-run: run `xpu-asm-run collect DIR`)".into()),
    })?;
    Ok(match cfg {
        Cfg::Dot => cfg::dot(f, &format!("#{} {}", k.rank, k.display_name())),
        Cfg::Text => {
            out.push('\n');
            out.push_str(&cfg::text(f));
            std::mem::take(out)
        }
    })
}

fn paint(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Source files' lines, read once each; `None` for a file that cannot be
/// read here (the comment's text is shown instead).
#[derive(Default)]
struct SourceFiles(HashMap<String, Option<Vec<String>>>);

impl SourceFiles {
    fn line(&mut self, file: &str, line: u32) -> Option<&str> {
        let lines = self.0.entry(file.to_string()).or_insert_with(|| {
            std::fs::read(file).ok().map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
        });
        let i = usize::try_from(line).ok()?.checked_sub(1)?;
        lines.as_ref()?.get(i).map(|s| s.trim())
    }
}

/// Short names for source files: the file name alone when no two files
/// share it.
fn short_names(files: &[String]) -> HashMap<String, String> {
    let base = |f: &str| {
        Path::new(f)
            .file_name()
            .map_or_else(|| f.to_string(), |n| n.to_string_lossy().into_owned())
    };
    files
        .iter()
        .map(|f| {
            let b = base(f);
            let unique = files.iter().filter(|g| base(g) == b).count() == 1;
            (f.clone(), if unique { b } else { f.clone() })
        })
        .collect()
}

/// `k` of the capture `dir`, as text.
pub fn render(dir: &Path, k: &KernelEntry, o: ShowOptions) -> Result<String, ShowError> {
    let path = isa_path(dir, k)?;
    let bytes = std::fs::read(&path).map_err(|source| ShowError::Read {
        path: path.clone(),
        source,
    })?;
    // An IGC dump's text from after its `//.kernel` line, the name whole:
    // a name's lines are no instructions.
    let header = isa::header::parse_header(&bytes[..], &KnownNames::one(&k.name_bytes()));
    let start = header
        .ok()
        .filter(|h| h.kernel.is_some())
        .map(|h| h.text_start(&bytes));
    let (text, analysis) = match start {
        Some(s) => (
            String::from_utf8_lossy(&bytes[s.at..]),
            isa::analyze_from(&bytes, s),
        ),
        None => {
            let text = String::from_utf8_lossy(&bytes);
            let analysis = isa::analyze(&text);
            (text, analysis)
        }
    };
    let c = o.color;
    let mut out = String::new();
    let shown = path
        .strip_prefix(dir)
        .unwrap_or(&path)
        .display()
        .to_string();
    figures(&mut out, k, &shown, c);
    if let Some(cfg) = o.cfg {
        return render_cfg(&mut out, k, cfg);
    }
    let src = analysis.source.as_ref();
    let mut lines = SourceLines {
        files: SourceFiles::default(),
        shorts: src.map(|s| short_names(&s.files)).unwrap_or_default(),
    };
    if o.lines_only {
        let s = src.ok_or_else(|| ShowError::NoLines {
            rank: k.rank,
            name: k.display_name(),
        })?;
        ranked_lines(&mut out, s, &mut lines, c);
        return Ok(out);
    }
    mix(&mut out, &analysis.mix, c);
    // The live-GRF column when the analysis has the text's instructions.
    let flow = k
        .flow
        .as_ref()
        .filter(|f| f.live_grf.len() as u64 == analysis.mix.instructions);
    interleaved(&mut out, &text, src, &mut lines, (flow, c));
    Ok(out)
}

/// Source lines as shown: their text read from the source files, their
/// files by short names.
struct SourceLines {
    files: SourceFiles,
    shorts: HashMap<String, String>,
}

impl SourceLines {
    /// `file:line` with the file's short name.
    fn at(&self, file: &str, line: u32) -> String {
        format!("{}:{}", self.shorts.get(file).map_or(file, |s| s), line)
    }
}

/// The kernel's name, launches, header figures and ISA file.
fn figures(out: &mut String, k: &KernelEntry, shown: &str, c: bool) {
    let name = k.display_name();
    let _ = writeln!(
        out,
        "{} {}",
        paint(c, "1", &format!("#{}", k.rank)),
        // The empty name's `(empty name)` styled apart from any name.
        match k.name.is_empty() && k.name_hex.is_none() {
            true => paint(c, crate::report::export::table::EMPTY_STYLE, &name),
            false => paint(c, "1", &name),
        }
    );
    if k.demangled != k.name {
        let _ = writeln!(
            out,
            "  mangled:      {}",
            names::escape_for_terminal(&k.name)
        );
    }
    if let Some(hex) = &k.name_hex {
        let _ = writeln!(out, "  name (hex):   {hex}");
    }
    let _ = writeln!(
        out,
        "  launches:     {} ({} appended)",
        k.launches, k.appended
    );
    if let Some(t) = time_line(k) {
        let _ = writeln!(out, "  device time:  {}", names::escape_for_terminal(&t));
    }
    let _ = writeln!(
        out,
        "  SIMD {}, GRF {}, {} instructions, spill bytes {}, private memory bytes {}, platform {}",
        opt(k.simd),
        opt(k.grf),
        opt(k.instructions),
        opt(k.spill_bytes),
        opt(k.private_memory_bytes),
        opt(k.platform.as_deref())
    );
    let _ = writeln!(out, "  ISA:          {}", names::escape_for_terminal(shown));
    if let Some(note) = &k.isa_note {
        let _ = writeln!(out, "  note:         {}", names::escape_for_terminal(note));
    }
    for l in crate::report::export::origin_text::lines(k) {
        let _ = writeln!(out, "{l}");
    }
    shapes(out, k, c);
    for l in cfg::summary(k) {
        let _ = writeln!(out, "{l}");
    }
}

/// A kernel's device time in words, as `show` gives it: `1.60 ms over its
/// 2 launches (2 of 2 chosen timed: total 1.60 ms, min 800 us, median
/// 800 us, max 800 us)`, or `none: REASON`; `None` without `--time`.
fn time_line(k: &KernelEntry) -> Option<String> {
    if let Some(why) = &k.time_reason {
        return Some(format!("none: {why}"));
    }
    let t = k.time.as_ref()?;
    let [lo, hi] = t.median_range_ns;
    let median = match lo == hi {
        true => human_ns(t.median_ns),
        false => format!(
            "{} ({} to {})",
            human_ns(t.median_ns),
            human_ns(lo),
            human_ns(hi)
        ),
    };
    Some(format!(
        "{} over its {} launch{} ({} of {} chosen timed: total {}, min {}, median {median}, max {})",
        human_ns(t.estimated_ns),
        k.launches,
        if k.launches == 1 { "" } else { "es" },
        t.timed,
        t.sampled,
        human_ns(t.total_ns),
        human_ns(t.min_ns),
        human_ns(t.max_ns),
    ))
}

/// Every launch shape of the kernel, most launched first, with its
/// occupancy and what limits it.
fn shapes(out: &mut String, k: &KernelEntry, c: bool) {
    if k.shapes.is_empty() {
        return;
    }
    if let Some(slm) = k.slm_static_bytes {
        let _ = writeln!(out, "  static SLM:   {slm} bytes");
    }
    let head = format!(
        "  {:>10}  {:<22} {:>7}  {:>8} {:<8} per Xe-core",
        "launches", "group size x count", "SLM", "occupied", "limit"
    );
    let _ = writeln!(out, "{}", paint(c, "1", &head));
    for l in crate::report::export::shapes_text::lines(k) {
        let _ = writeln!(out, "  {l}");
    }
}

/// `--lines`: the source lines, ranked by instructions.
fn ranked_lines(out: &mut String, s: &isa::source::Source, lines: &mut SourceLines, c: bool) {
    let mut ranked: Vec<_> = s.lines.iter().collect();
    ranked.sort_by(|a, b| {
        b.instructions
            .cmp(&a.instructions)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", paint(c, "1", "instrs  line  source"));
    for l in ranked {
        let text = lines
            .files
            .line(&l.file, l.line)
            .unwrap_or(&l.text)
            .to_string();
        let at = lines.at(&l.file, l.line);
        let _ = writeln!(
            out,
            "{:>6}  {}  {}",
            l.instructions,
            paint(c, "36", &names::escape_for_terminal(&at)),
            names::escape_for_terminal(&text)
        );
    }
    if s.no_line > 0 {
        let _ = writeln!(out, "{:>6}  (no source line: IGC's prolog)", s.no_line);
    }
}

/// The instruction mix: the total, then each class there is.
fn mix(out: &mut String, m: &isa::mix::Mix, c: bool) {
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}",
        paint(c, "1", &format!("mix: {} instructions", m.instructions))
    );
    let mut row = String::new();
    for (field, n) in m.fields().iter().skip(1).filter(|(_, n)| *n > 0) {
        let cell = format!("{field} {n}");
        let cell = if (*field == "spill" || *field == "fill") && *n > 0 {
            paint(c, "31", &cell)
        } else {
            cell
        };
        if !row.is_empty() {
            row.push_str(", ");
        }
        row.push_str(&cell);
    }
    let _ = writeln!(out, "  {row}");
    let _ = writeln!(out);
}

/// The ISA, each source line's header before its first instruction.
fn interleaved(
    out: &mut String,
    text: &str,
    src: Option<&isa::source::Source>,
    lines: &mut SourceLines,
    (flow, c): (Option<&Flow>, bool),
) {
    let mut column = flow.map(Column::new);
    // Instructions per (file, line), for the interleaved headers.
    let counts: HashMap<(&str, u32), u64> = src
        .map(|s| {
            s.lines
                .iter()
                .map(|l| ((l.file.as_str(), l.line), l.instructions))
                .collect()
        })
        .unwrap_or_default();
    let mut file = String::new();
    // A source line's header waits for its first instruction.
    let mut pending: Option<(u32, String)> = None;
    let mut any_line = false;
    let classifier = isa::mix::Classifier::of_text(text);
    for l in isa::lines(text) {
        match l {
            Line::File(f) => file = f.to_string(),
            Line::Source { line, text } => {
                any_line = true;
                pending = Some((line, text.to_string()));
            }
            Line::Label(l) => {
                let _ = writeln!(
                    out,
                    "{}",
                    paint(c, "1", &format!("{}:", names::escape_for_terminal(l)))
                );
            }
            Line::Instruction(i) => {
                if let Some((line, comment_text)) = pending.take() {
                    let n = counts.get(&(file.as_str(), line)).copied().unwrap_or(0);
                    source_head(out, lines, &file, line, n, comment_text, c);
                }
                if src.is_some() && !any_line {
                    any_line = true;
                    let head = format!(
                        "(no source line)  ({} instructions)",
                        src.map_or(0, |s| s.no_line)
                    );
                    let _ = writeln!(out, "{}", paint(c, "36", &head));
                }
                let prefix = column.as_mut().map(|col| col.next(out, c));
                instruction(out, prefix.as_deref(), (i, classifier.classify(i)), c);
            }
            Line::Other => {}
        }
    }
}

/// The header of source line `line` of `file`, with its `n` instructions.
fn source_head(
    out: &mut String,
    lines: &mut SourceLines,
    file: &str,
    line: u32,
    n: u64,
    comment_text: String,
    c: bool,
) {
    let source_text = lines
        .files
        .line(file, line)
        .map(str::to_string)
        .unwrap_or(comment_text);
    let head = format!(
        "{}  ({n} instruction{})  {source_text}",
        lines.at(file, line),
        if n == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        out,
        "{}",
        paint(c, "36", &names::escape_for_terminal(&head))
    );
}

/// One instruction, in IGC's alignment (an 8-column predicate field),
/// spills and fills in red.
fn instruction(
    out: &mut String,
    prefix: Option<&str>,
    (i, class): (&str, isa::mix::Class),
    c: bool,
) {
    let i = names::escape_for_terminal(i.trim_end());
    let line = if i.starts_with('(') {
        i
    } else {
        format!("        {i}")
    };
    let line = match class {
        isa::mix::Class::Spill | isa::mix::Class::Fill => paint(c, "31", &line),
        _ => line,
    };
    let _ = writeln!(out, "{}{line}", prefix.unwrap_or(""));
}

/// The live-GRF column and loop marks before each instruction: the live
/// registers (red at the peak, and at or over the budget), a `|` per loop
/// the instruction is in, and a line naming each loop where it begins.
struct Column<'a> {
    flow: &'a Flow,
    at: u64,
    depth: usize,
    begun: Vec<bool>,
}

impl<'a> Column<'a> {
    fn new(flow: &'a Flow) -> Self {
        Column {
            flow,
            at: 0,
            depth: flow
                .loops
                .iter()
                .map(|l| l.depth as usize)
                .max()
                .unwrap_or(0),
            begun: vec![false; flow.loops.len()],
        }
    }

    /// The prefix of the next instruction (after any loop's opening line).
    fn next(&mut self, out: &mut String, c: bool) -> String {
        let f = self.flow;
        let i = self.at;
        self.at += 1;
        let inner = f.loop_of(i);
        let mut chain = Vec::new();
        let mut l = inner;
        while let Some(x) = l {
            chain.push(x);
            l = f.loops[x].parent;
        }
        for &x in chain.iter().rev() {
            if !self.begun[x] {
                self.begun[x] = true;
                let head = format!(
                    "{:>4} {}{}",
                    "",
                    "|".repeat(f.loops[x].depth as usize - 1),
                    cfg::describe_loop(f, x)
                );
                let _ = writeln!(out, "{}", paint(c, "33", &head));
            }
        }
        let live = f.live_grf.get(i as usize).copied().unwrap_or(0);
        let spilled = f.spilled_grf.get(i as usize).copied().unwrap_or(0);
        let hot = f.peak.as_ref().is_some_and(|p| p.instruction == i)
            || f.budget.is_some_and(|b| live + spilled >= b);
        let n = format!("{live:>4}");
        let n = if hot { paint(c, "31", &n) } else { n };
        let marks = format!("{:<w$}", "|".repeat(chain.len()), w = self.depth);
        format!("{n} {} ", paint(c, "33", &marks))
    }
}
