//! `xpu-asm-run diff A B`: two captures side by side, kernel by kernel,
//! and `diff A B KERNEL`: a unified diff of one kernel's two ISA texts.
//!
//! Kernels are paired by name: module hashes differ between builds. A name
//! that several modules define is paired by module order (the order in
//! which the program created the modules, from the records).

use super::show::{self, ShowError};
use crate::isa::{self, mix::Mix, Line};
use crate::names;
use crate::report::export::html;
use crate::report::{KernelEntry, LeftOut, Limit, Report};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

/// One capture's figures for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub rank: usize,
    pub module_sha256: Option<String>,
    pub launches: u64,
    pub simd: Option<u32>,
    pub grf: Option<u32>,
    pub instructions: Option<u64>,
    pub spill_bytes: Option<u64>,
    pub mix: Option<Mix>,
    /// From the kernel's code: its peak live GRF (null without analysis).
    #[serde(default)]
    pub pressure: Option<u32>,
    /// Its loops in the order of their headers in the code (null without
    /// analysis): loops of two builds are paired by that order.
    #[serde(default)]
    pub loops: Option<Vec<LoopSide>>,
    /// Its most launched shape (`64 x 16`; null without shapes).
    #[serde(default)]
    pub shape: Option<String>,
    /// That shape's occupancy, in hundredths of a percent.
    #[serde(default)]
    pub occupancy: Option<u64>,
}

/// One loop's figures, for the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopSide {
    pub depth: u32,
    pub instructions: u64,
    /// Spill and fill sends in it.
    pub spills: u64,
    /// Its highest live GRF.
    pub pressure: u32,
    /// `lines 8-11`, or "" without line information.
    pub lines: String,
}

/// The loops of `f` in the order of their headers.
fn loop_sides(f: &crate::isa::flow::Flow) -> Vec<LoopSide> {
    let mut loops: Vec<&crate::isa::flow::Loop> = f.loops.iter().collect();
    loops.sort_by_key(|l| l.header);
    loops
        .into_iter()
        .map(|l| LoopSide {
            depth: l.depth,
            instructions: l.instructions,
            spills: l.mix.spill + l.mix.fill,
            pressure: l.peak_grf,
            lines: super::cfg::line_span(&l.source),
        })
        .collect()
}

/// The fields of each loop `loop[N].FIELD` names (N from 1).
const LOOP_FIELDS: [&str; 3] = ["instructions", "spills", "pressure"];

impl Side {
    fn of(k: &KernelEntry) -> Side {
        Side {
            rank: k.rank,
            module_sha256: k.module_sha256.clone(),
            launches: k.launches,
            simd: k.simd,
            grf: k.grf,
            instructions: k.instructions,
            spill_bytes: k.spill_bytes,
            mix: k.mix.clone(),
            pressure: k.flow.as_ref().and_then(|f| f.peak.as_ref()).map(|p| p.grf),
            loops: k.flow.as_ref().map(loop_sides),
            shape: k
                .shapes
                .first()
                .map(crate::report::export::shapes_text::shape),
            occupancy: k
                .shapes
                .first()
                .and_then(|s| s.occupancy.as_ref())
                .map(|o| (o.percent * 100.0).round() as u64),
        }
    }

    /// `loops`, `loop_spills` and `loop[N].FIELD`.
    fn loop_figure(&self, field: &str) -> Option<u64> {
        let loops = self.loops.as_ref()?;
        match field {
            "loops" => return Some(loops.len() as u64),
            "loop_spills" => {
                return Some(
                    loops
                        .iter()
                        .filter(|l| l.depth == 1)
                        .map(|l| l.spills)
                        .sum(),
                )
            }
            _ => {}
        }
        let rest = field.strip_prefix("loop[")?;
        let (n, f) = rest.split_once("].")?;
        let l = loops.get(n.parse::<usize>().ok()?.checked_sub(1)?)?;
        match f {
            "instructions" => Some(l.instructions),
            "spills" => Some(l.spills),
            "pressure" => Some(u64::from(l.pressure)),
            _ => None,
        }
    }

    /// The figure named `field` (`launches`, `simd`, `grf`,
    /// `instructions`, `spill_bytes`, `mix.<class>`).
    pub fn get(&self, field: &str) -> Option<u64> {
        match field {
            "launches" => Some(self.launches),
            "simd" => self.simd.map(u64::from),
            "grf" => self.grf.map(u64::from),
            "instructions" => self.instructions,
            "spill_bytes" => self.spill_bytes,
            "pressure" => self.pressure.map(u64::from),
            "occupancy" => self.occupancy,
            _ if field.starts_with("loop") => self.loop_figure(field),
            _ => {
                let class = field.strip_prefix("mix.")?;
                let m = self.mix.as_ref()?;
                m.fields()
                    .iter()
                    .find(|(f, _)| *f == class)
                    .map(|(_, n)| *n)
            }
        }
    }
}

/// The fields compared, in the order `changed` lists them (with those of
/// each loop after them, [`loop_fields`]).
pub fn fields() -> Vec<String> {
    let mut f: Vec<String> = [
        "launches",
        "simd",
        "grf",
        "instructions",
        "spill_bytes",
        "pressure",
        "loops",
        "loop_spills",
        "occupancy",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // mix.instructions repeats instructions.
    f.extend(
        Mix::default()
            .fields()
            .iter()
            .skip(1)
            .map(|(n, _)| format!("mix.{n}")),
    );
    f
}

/// `loop[N].FIELD` of the loops both sides have.
fn loop_fields(a: &Side, b: &Side) -> Vec<String> {
    let n = match (&a.loops, &b.loops) {
        (Some(x), Some(y)) => x.len().min(y.len()),
        _ => 0,
    };
    (1..=n)
        .flat_map(|i| LOOP_FIELDS.iter().map(move |f| format!("loop[{i}].{f}")))
        .collect()
}

/// One kernel of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDiff {
    pub name: String,
    pub demangled: String,
    /// Null when the name is in A once at most and in B once at most; else
    /// how the same-named kernels were paired.
    pub pairing: Option<String>,
    pub a: Option<Side>,
    pub b: Option<Side>,
    /// The fields whose values differ (both sides present).
    pub changed: Vec<String>,
}

impl KernelDiff {
    pub fn display_name(&self) -> String {
        names::escape_for_terminal(&self.demangled)
    }

    /// It changed, or is in one capture only: what `diff` lists without
    /// `--all`, and its page shows first.
    pub fn notable(&self) -> bool {
        !self.changed.is_empty() || self.a.is_none() || self.b.is_none()
    }
}

/// A condition of `--fail-on`.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// A kernel starts spilling or spills more (spill bytes, or spill
    /// messages).
    Spill,
    /// A loop starts spilling: spill or fill sends in a loop of B where
    /// the loop in its place in A had none (or A had no loop there).
    LoopSpill,
    /// Any field of a kernel in both changed.
    Any,
    /// A kernel of A is not in B.
    Missing,
    /// A kernel of B is not in A.
    New,
    /// `FIELD+N` / `FIELD+N%`: a field grows by more than N (percent).
    Grows {
        field: String,
        by: f64,
        percent: bool,
    },
    /// `occupancy-N` / `occupancy-N%`: the most launched shape's
    /// occupancy drops by more than N percentage points (N percent of it).
    OccupancyDrops { by: f64, percent: bool },
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::Spill => f.write_str("spill"),
            Condition::LoopSpill => f.write_str("loop-spill"),
            Condition::Any => f.write_str("any"),
            Condition::Missing => f.write_str("missing"),
            Condition::New => f.write_str("new"),
            Condition::Grows { field, by, percent } => {
                write!(f, "{field}+{by}{}", if *percent { "%" } else { "" })
            }
            Condition::OccupancyDrops { by, percent } => {
                write!(f, "occupancy-{by}{}", if *percent { "%" } else { "" })
            }
        }
    }
}

/// The conditions of one `--fail-on`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailOn(pub Vec<Condition>);

/// Parses `spill,instructions+5%`.
pub fn parse_conditions(s: &str) -> Result<Vec<Condition>, String> {
    let known = fields();
    s.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| match c {
            "spill" => Ok(Condition::Spill),
            "loop-spill" => Ok(Condition::LoopSpill),
            "any" => Ok(Condition::Any),
            "missing" => Ok(Condition::Missing),
            "new" => Ok(Condition::New),
            _ if c.starts_with("occupancy-") => {
                let amount = &c["occupancy-".len()..];
                let (num, percent) = match amount.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (amount, false),
                };
                match num.parse::<f64>() {
                    Ok(by) if by >= 0.0 && by.is_finite() => {
                        Ok(Condition::OccupancyDrops { by, percent })
                    }
                    _ => Err(format!(
                        "bad condition {c:?}: occupancy-N drops by more than N points,                          occupancy-N% by more than N percent"
                    )),
                }
            }
            _ => {
                let bad = || {
                    format!(
                        "unknown condition {c:?}: expected spill, loop-spill, any, missing, new, or \
                         occupancy-N / occupancy-N%, FIELD+N / FIELD+N% with FIELD one of {}, or loop[N].instructions, \
                         loop[N].spills, loop[N].pressure",
                        known.join(", ")
                    )
                };
                let (field, amount) = c.split_once('+').ok_or_else(bad)?;
                let per_loop = field
                    .strip_prefix("loop[")
                    .and_then(|r| r.split_once("]."))
                    .is_some_and(|(n, f)| {
                        n.parse::<usize>().is_ok_and(|n| n >= 1) && LOOP_FIELDS.contains(&f)
                    });
                if !per_loop && !known.iter().any(|k| k == field) {
                    return Err(bad());
                }
                let (num, percent) = match amount.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (amount, false),
                };
                let by: f64 = num.parse().map_err(|_| bad())?;
                if !(by >= 0.0 && by.is_finite()) {
                    return Err(bad());
                }
                Ok(Condition::Grows {
                    field: field.to_string(),
                    by,
                    percent,
                })
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|v| {
            if v.is_empty() {
                Err("no condition given (e.g. --fail-on spill,instructions+5%)".into())
            } else {
                Ok(v)
            }
        })
}

/// Why a condition holds for a kernel, or `None`.
pub fn holds(c: &Condition, k: &KernelDiff) -> Option<String> {
    match (c, &k.a, &k.b) {
        (Condition::Missing, Some(_), None) => Some("only in A".into()),
        (Condition::New, None, Some(_)) => Some("only in B".into()),
        (Condition::Any, Some(_), Some(_)) if !k.changed.is_empty() => {
            Some(format!("changed: {}", k.changed.join(", ")))
        }
        (Condition::Spill, Some(a), Some(b)) => {
            let (sa, sb) = (a.spill_bytes.unwrap_or(0), b.spill_bytes.unwrap_or(0));
            let msgs = |s: &Side| s.mix.as_ref().map(|m| m.spill + m.fill);
            if sb > sa {
                Some(format!("spill bytes {sa} -> {sb}"))
            } else {
                match (msgs(a), msgs(b)) {
                    (Some(ma), Some(mb)) if mb > ma => {
                        Some(format!("spill and fill messages {ma} -> {mb}"))
                    }
                    _ => None,
                }
            }
        }
        (Condition::LoopSpill, Some(a), Some(b)) => loop_spill(a, b),
        (Condition::Grows { field, by, percent }, Some(a), Some(b)) => {
            let (va, vb) = (a.get(field)?, b.get(field)?);
            let grew = vb as f64 - va as f64;
            let over = if *percent {
                grew > 0.0 && (va == 0 || grew * 100.0 / va as f64 > *by)
            } else {
                grew > *by
            };
            over.then(|| format!("{field} {va} -> {vb} ({})", change(va, vb)))
        }
        (Condition::OccupancyDrops { by, percent }, Some(a), Some(b)) => {
            let (va, vb) = (a.occupancy? as f64 / 100.0, b.occupancy? as f64 / 100.0);
            let drop = va - vb;
            let over = if *percent {
                drop > 0.0 && drop * 100.0 / va > *by
            } else {
                drop > *by
            };
            over.then(|| {
                format!(
                    "occupancy {va}% -> {vb}% of its most launched shape ({} -> {})",
                    a.shape.as_deref().unwrap_or("-"),
                    b.shape.as_deref().unwrap_or("-")
                )
            })
        }
        _ => None,
    }
}

/// The first loop of `b` that spills where `a`'s loop in its place did not.
fn loop_spill(a: &Side, b: &Side) -> Option<String> {
    let lb = b.loops.as_ref()?;
    let la = a.loops.as_ref()?;
    lb.iter().enumerate().find_map(|(i, l)| {
        let before = la.get(i).map_or(0, |x| x.spills);
        (l.spills > 0 && before == 0).then(|| {
            let at = if l.lines.is_empty() {
                String::new()
            } else {
                format!(", {}", l.lines)
            };
            format!(
                "loop {} ({} instructions{at}): spill and fill sends {before} -> {}",
                i + 1,
                l.instructions,
                l.spills
            )
        })
    })
}

/// `+15, +60.0%`
fn change(a: u64, b: u64) -> String {
    let d = b as i128 - a as i128;
    if a == 0 {
        format!("{d:+}")
    } else {
        format!("{d:+}, {:+.1}%", d as f64 * 100.0 / a as f64)
    }
}

/// Module SHA-256 -> order of creation in the capture (processes by host
/// and pid, modules by id); empty without records.
fn module_order(dir: &Path) -> HashMap<String, usize> {
    let mut order = HashMap::new();
    let records = dir.join(xpu_asm_record::RECORDS_DIR);
    let Ok(mut recs) = xpu_asm_record::read::read_dir(&records) else {
        return order;
    };
    recs.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    for r in &recs {
        for m in r.modules.values() {
            let n = order.len();
            order.entry(m.sha256.clone()).or_insert(n);
        }
    }
    order
}

/// Kernels of a report by name, same-named ones in module order.
fn by_name<'a>(
    r: &'a Report,
    order: &HashMap<String, usize>,
) -> BTreeMap<&'a str, Vec<&'a KernelEntry>> {
    let mut m: BTreeMap<&str, Vec<&KernelEntry>> = BTreeMap::new();
    for k in &r.kernels {
        m.entry(k.name.as_str()).or_default().push(k);
    }
    for v in m.values_mut() {
        v.sort_by_key(|k| {
            (
                k.module_sha256
                    .as_ref()
                    .and_then(|s| order.get(s))
                    .copied()
                    .unwrap_or(usize::MAX),
                k.rank,
            )
        });
    }
    m
}

/// The comparison of two captures' reports: every kernel, in A's order,
/// then those only in B.
pub fn compare(a: &Report, a_dir: &Path, b: &Report, b_dir: &Path) -> Vec<KernelDiff> {
    let (oa, ob) = (module_order(a_dir), module_order(b_dir));
    let (ka, kb) = (by_name(a, &oa), by_name(b, &ob));
    let fields = fields();
    let mut out = Vec::new();
    let mut emit = |name: &str, list_a: &[&KernelEntry], list_b: &[&KernelEntry]| {
        let n = list_a.len().max(list_b.len());
        let pairing = (n > 1).then(|| {
            format!(
                "{} in A, {} in B: paired by module order",
                list_a.len(),
                list_b.len()
            )
        });
        for i in 0..n {
            let sa = list_a.get(i).map(|k| Side::of(k));
            let sb = list_b.get(i).map(|k| Side::of(k));
            let demangled = list_a
                .get(i)
                .or(list_b.get(i))
                .map(|k| k.demangled.clone())
                .unwrap_or_default();
            let changed = match (&sa, &sb) {
                (Some(x), Some(y)) => fields
                    .iter()
                    .cloned()
                    .chain(loop_fields(x, y))
                    .filter(|f| x.get(f) != y.get(f))
                    .chain((x.shape != y.shape).then(|| "shape".to_string()))
                    .collect(),
                _ => Vec::new(),
            };
            out.push(KernelDiff {
                name: name.to_string(),
                demangled,
                pairing: pairing.clone(),
                a: sa,
                b: sb,
                changed,
            });
        }
    };
    // A's order (by rank of the first of each name), then B's new names;
    // each name's rank found once (looked up in a sort's comparisons, the
    // names of 100,000 kernels took seconds of comparing long names).
    let first_rank = |v: &[&KernelEntry]| v.iter().map(|k| k.rank).min().unwrap_or(0);
    let mut names_a: Vec<(usize, &str, &[&KernelEntry])> = ka
        .iter()
        .map(|(n, v)| (first_rank(v), *n, &v[..]))
        .collect();
    names_a.sort_by_key(|&(rank, ..)| rank);
    for (_, n, list_a) in names_a {
        emit(n, list_a, kb.get(n).map_or(&[][..], |v| &v[..]));
    }
    let mut names_b: Vec<(usize, &str, &[&KernelEntry])> = kb
        .iter()
        .filter(|(n, _)| !ka.contains_key(*n))
        .map(|(n, v)| (first_rank(v), *n, &v[..]))
        .collect();
    names_b.sort_by_key(|&(rank, ..)| rank);
    for (_, n, list_b) in names_b {
        emit(n, &[], list_b);
    }
    out
}

/// A condition that held for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub condition: String,
    pub kernel: String,
    pub why: String,
}

/// What `diff --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffReport {
    pub a: String,
    pub b: String,
    /// Kernels that changed or are in one capture only; every kernel with
    /// `--all`.
    pub kernels: Vec<KernelDiff>,
    pub summary: Summary,
    /// `--fail-on` conditions that held.
    pub failed: Vec<Failure>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub in_both: usize,
    pub changed: usize,
    pub only_a: usize,
    pub only_b: usize,
}

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

/// Two captures' reports, read once (a report of 100,000 kernels is
/// 200 MB of JSON) for the table and the page of their comparison.
pub struct Captures<'p> {
    pub a_dir: &'p Path,
    pub b_dir: &'p Path,
    pub a: Report,
    pub b: Report,
}

impl<'p> Captures<'p> {
    /// Both reports, read side by side.
    pub fn load(a_dir: &'p Path, b_dir: &'p Path) -> Result<Captures<'p>, ShowError> {
        let (a, b) = rayon::join(|| show::load_report(a_dir), || show::load_report(b_dir));
        Ok(Captures {
            a_dir,
            b_dir,
            a: a?,
            b: b?,
        })
    }

    /// Their comparison: every kernel with `all`, else those that changed
    /// and those in one capture only; the conditions of `fail_on`
    /// evaluated on every kernel.
    pub fn diff(&self, all: bool, fail_on: &[Condition]) -> DiffReport {
        compare_reports(&self.a, self.a_dir, &self.b, self.b_dir, all, fail_on)
    }
}

/// [`diff`] of the reports `a` and `b` of the captures `a_dir` and `b_dir`.
fn compare_reports(
    a: &Report,
    a_dir: &Path,
    b: &Report,
    b_dir: &Path,
    all: bool,
    fail_on: &[Condition],
) -> DiffReport {
    let kernels = compare(a, a_dir, b, b_dir);
    let mut summary = Summary::default();
    let mut failed = Vec::new();
    for k in &kernels {
        match (&k.a, &k.b) {
            (Some(_), Some(_)) => {
                summary.in_both += 1;
                if !k.changed.is_empty() {
                    summary.changed += 1;
                }
            }
            (Some(_), None) => summary.only_a += 1,
            _ => summary.only_b += 1,
        }
        for c in fail_on {
            if let Some(why) = holds(c, k) {
                failed.push(Failure {
                    condition: c.to_string(),
                    kernel: k.demangled.clone(),
                    why,
                });
            }
        }
    }
    DiffReport {
        a: a_dir.display().to_string(),
        b: b_dir.display().to_string(),
        kernels,
        summary,
        failed,
    }
    .listed(all)
}

impl DiffReport {
    /// The comparison as `diff` lists it: every kernel with `all`, else
    /// those that changed and those in one capture only (the summary and
    /// the conditions that held are of every kernel either way).
    pub fn listed(mut self, all: bool) -> DiffReport {
        self.kernels.retain(|k| all || k.notable());
        self
    }
}

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
    let full: Vec<String> = d.kernels.iter().map(|k| k.demangled.clone()).collect();
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
    let a = show::load_report(a_dir)?;
    let b = show::load_report(b_dir)?;
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
        show::find_kernels(a, selector),
        show::find_kernels(b, selector),
    );
    let (dir, report, found, side_a) = if !in_a.is_empty() {
        (a_dir, a, in_a, true)
    } else {
        (b_dir, b, in_b, false)
    };
    let k = match found.as_slice() {
        [k] => *k,
        _ => show::select(report, dir, selector)?,
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
            let p = show::isa_path(dir, e)?;
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
    fn conditions_parse_and_refuse() {
        assert_eq!(
            parse_conditions("spill,instructions+5%").unwrap(),
            [
                Condition::Spill,
                Condition::Grows {
                    field: "instructions".into(),
                    by: 5.0,
                    percent: true
                }
            ]
        );
        assert_eq!(
            parse_conditions("mix.spill+0").unwrap(),
            [Condition::Grows {
                field: "mix.spill".into(),
                by: 0.0,
                percent: false
            }]
        );
        for bad in [
            "",
            "spil",
            "instructions+",
            "instructions+x%",
            "bogus+1",
            "grf+-1",
        ] {
            assert!(parse_conditions(bad).is_err(), "{bad}");
        }
    }

    fn side(instructions: u64, spill: Option<u64>) -> Side {
        Side {
            rank: 1,
            module_sha256: None,
            launches: 1,
            simd: Some(32),
            grf: Some(128),
            instructions: Some(instructions),
            spill_bytes: spill,
            mix: None,
            pressure: None,
            loops: None,
            shape: None,
            occupancy: None,
        }
    }

    #[test]
    fn occupancy_gates_by_points_and_percent() {
        let at = |pct: u64| Side {
            shape: Some("64 x 16".into()),
            occupancy: Some(pct),
            ..side(10, None)
        };
        let k = pair(at(5000), at(3750));
        let cond = |c: &str| parse_conditions(c).expect("a condition").remove(0);
        assert_eq!(
            holds(&cond("occupancy-10"), &k).as_deref(),
            Some("occupancy 50% -> 37.5% of its most launched shape (64 x 16 -> 64 x 16)")
        );
        assert_eq!(holds(&cond("occupancy-12.5"), &k), None);
        assert!(holds(&cond("occupancy-20%"), &k).is_some());
        assert_eq!(holds(&cond("occupancy-25%"), &k), None);
        assert!(parse_conditions("occupancy-x").is_err());
    }

    fn pair(a: Side, b: Side) -> KernelDiff {
        let changed = fields()
            .into_iter()
            .filter(|f| a.get(f) != b.get(f))
            .collect();
        KernelDiff {
            name: "k".into(),
            demangled: "k".into(),
            pairing: None,
            a: Some(a),
            b: Some(b),
            changed,
        }
    }

    #[test]
    fn conditions_hold_exactly_at_their_threshold() {
        let five = parse_conditions("instructions+5%").unwrap().remove(0);
        assert!(holds(&five, &pair(side(100, None), side(105, None))).is_none());
        assert!(holds(&five, &pair(side(100, None), side(106, None))).is_some());
        assert!(holds(&five, &pair(side(100, None), side(90, None))).is_none());
        let spill = Condition::Spill;
        assert!(holds(&spill, &pair(side(1, None), side(1, Some(64)))).is_some());
        assert!(holds(&spill, &pair(side(1, Some(64)), side(1, Some(64)))).is_none());
        assert!(holds(&spill, &pair(side(1, Some(128)), side(1, Some(64)))).is_none());
        let any = Condition::Any;
        assert!(holds(&any, &pair(side(1, None), side(1, None))).is_none());
        assert!(holds(&any, &pair(side(1, None), side(2, None))).is_some());
    }

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

    fn with_loops(mut s: Side, pressure: u32, spills: &[u64]) -> Side {
        s.pressure = Some(pressure);
        s.loops = Some(
            spills
                .iter()
                .map(|&n| LoopSide {
                    depth: 1,
                    instructions: 10,
                    spills: n,
                    pressure,
                    lines: "lines 8-9".into(),
                })
                .collect(),
        );
        s
    }

    #[test]
    fn loops_and_pressure_are_compared_and_gated() {
        let c = parse_conditions("loop-spill,pressure+10%,loop[2].spills+0,loops+1").unwrap();
        assert_eq!(c[0], Condition::LoopSpill);
        assert_eq!(c[0].to_string(), "loop-spill");
        assert!(parse_conditions("loop[0].spills+1").is_err());
        assert!(parse_conditions("loop[1].mix+1").is_err());
        let a = with_loops(side(100, None), 50, &[0, 0]);
        let b = with_loops(side(100, None), 55, &[0, 3]);
        let d = pair(a.clone(), b.clone());
        assert_eq!(b.get("loop[2].spills"), Some(3));
        assert_eq!(b.get("loop[3].spills"), None);
        assert_eq!(b.get("loop_spills"), Some(3));
        assert_eq!(
            holds(&Condition::LoopSpill, &d).as_deref(),
            Some("loop 2 (10 instructions, lines 8-9): spill and fill sends 0 -> 3")
        );
        // Exactly at the threshold passes; above it fails.
        let grows = |by: f64, percent: bool| Condition::Grows {
            field: "pressure".into(),
            by,
            percent,
        };
        assert_eq!(holds(&grows(10.0, true), &d), None);
        assert_eq!(
            holds(&grows(9.9, true), &d).as_deref(),
            Some("pressure 50 -> 55 (+5, +10.0%)")
        );
        assert_eq!(holds(&grows(5.0, false), &d), None);
        assert!(holds(&grows(4.0, false), &d).is_some());
        // Without analysis on one side: nothing holds.
        let d = pair(side(100, None), b);
        assert_eq!(holds(&Condition::LoopSpill, &d), None);
        assert_eq!(holds(&grows(0.0, false), &d), None);
    }
}
