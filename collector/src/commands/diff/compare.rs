//! The comparison of two captures, kernel by kernel: each kernel's figures
//! on both sides and the fields that changed.
//!
//! Kernels are paired by name: module hashes differ between builds. A name
//! that several modules define is paired module with module where both
//! captures hold the same module (`port`'s compile of the run's, an
//! unchanged library), the others by module order (the order in which the
//! program created the modules, from the records).

use crate::commands::read::{self, ShowError};
use crate::commands::show::cfg;
use crate::names;
use crate::report::{KernelEntry, Report};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use xpu_asm_isa::mix::Mix;

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
    /// How its ISA was made, as the table's origin column says it (`jit`,
    /// `aot pvc`; null for reports before schema 5).
    #[serde(default)]
    pub origin: Option<String>,
    /// Its device time, ns: `time.estimated_ns` (absent without one: a
    /// run without `--time`, or none of its launches timed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u64>,
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
fn loop_sides(f: &crate::analysis::flow::Flow) -> Vec<LoopSide> {
    let mut loops: Vec<&crate::analysis::flow::Loop> = f.loops.iter().collect();
    loops.sort_by_key(|l| l.header);
    loops
        .into_iter()
        .map(|l| LoopSide {
            depth: l.depth,
            instructions: l.instructions,
            spills: l.mix.spill + l.mix.fill,
            pressure: l.peak_grf,
            lines: cfg::line_span(&l.source),
        })
        .collect()
}

/// The fields of each loop `loop[N].FIELD` names (N from 1).
pub const LOOP_FIELDS: [&str; 3] = ["instructions", "spills", "pressure"];

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
            origin: k
                .origin
                .as_ref()
                .map(|o| crate::report::export::origin_text::cell(Some(o))),
            time: k.time.as_ref().map(|t| t.estimated_ns),
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
            "time" => self.time,
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

/// The figures of a kernel compared (besides its mix and its loops'), in
/// the order `changed` lists them, each with what it is: `FIELD+N` of
/// `--fail-on` takes them.
pub const KERNEL_FIELDS: [(&str, &str); 10] = [
    ("launches", "its launches"),
    ("simd", "its SIMD width"),
    ("grf", "its GRF registers"),
    ("instructions", "its instructions"),
    ("spill_bytes", "its spill bytes"),
    ("pressure", "its peak live GRF"),
    ("loops", "how many loops"),
    ("loop_spills", "spill and fill sends in its loops"),
    (
        "occupancy",
        "its most launched shape's occupancy, in hundredths of a percent: `occupancy+100` is a point",
    ),
    (
        "time",
        "its device time in ns (`--time`: its `estimated_ns`, over all its launches): \
         `time+10%` is 10% slower; a measurement, which `any` leaves out",
    ),
];

/// The fields compared, in the order `changed` lists them (with those of
/// each loop after them, [`loop_fields`]).
pub fn fields() -> Vec<String> {
    let mut f: Vec<String> = KERNEL_FIELDS.iter().map(|(n, _)| n.to_string()).collect();
    f.extend(mix_classes().iter().map(|n| format!("mix.{n}")));
    f
}

/// The classes of the mix a kernel's `mix.CLASS` names (`mix.instructions`
/// repeats `instructions`, and is left out).
pub fn mix_classes() -> Vec<&'static str> {
    Mix::default()
        .fields()
        .iter()
        .skip(1)
        .map(|(n, _)| *n)
        .collect()
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
    /// The exact bytes in hex, present only when the name is not UTF-8
    /// (as in the reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_hex: Option<String>,
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
    /// [`Self::shown_name`] escaped for a terminal.
    pub fn display_name(&self) -> String {
        names::escape_for_terminal(&self.shown_name())
    }

    /// Its name as the tables, the `--fail-on` lines and the page name
    /// it: [`names::readable`] (demangled, a name that is not UTF-8 with
    /// its bytes as `\xff`, the empty name as `(empty name)`), and for a
    /// name that several modules of a capture define, with its module as
    /// `collect`'s table gives it (`common_kernel [module 3e8fd3a6]`; A's,
    /// then B's where it differs: `[module 3e8fd3a6 -> 9b1c22d0]`).
    pub fn shown_name(&self) -> String {
        let bytes = self
            .name_hex
            .as_deref()
            .and_then(xpu_asm_record::unhex)
            .unwrap_or_else(|| self.name.as_bytes().to_vec());
        let readable = names::readable(&bytes, &self.demangled);
        if self.pairing.is_none() {
            return readable;
        }
        let short = |s: &Option<Side>| {
            let m = s.as_ref()?.module_sha256.as_deref()?;
            Some(m.get(..8).unwrap_or(m).to_string())
        };
        match (short(&self.a), short(&self.b)) {
            (Some(a), Some(b)) if a != b => format!("{readable} [module {a} -> {b}]"),
            (Some(m), _) | (None, Some(m)) => format!("{readable} [module {m}]"),
            (None, None) => readable,
        }
    }

    /// It changed, or is in one capture only: what `diff` lists without
    /// `--all`, and its page shows first.
    pub fn notable(&self) -> bool {
        !self.changed.is_empty() || self.a.is_none() || self.b.is_none()
    }
}

/// `+15, +60.0%`
pub fn change(a: u64, b: u64) -> String {
    let d = b as i128 - a as i128;
    if a == 0 {
        format!("{d:+}")
    } else {
        format!("{d:+}, {:+.1}%", d as f64 * 100.0 / a as f64)
    }
}

/// A device time's change: `+160 us, +10.0%`.
pub fn time_change(a: u64, b: u64) -> String {
    let d = b.abs_diff(a);
    let sign = if b >= a { "+" } else { "-" };
    let ns = crate::report::time::human_ns(d);
    match a {
        0 => format!("{sign}{ns}"),
        a => format!(
            "{sign}{ns}, {:+.1}%",
            (b as f64 - a as f64) * 100.0 / a as f64
        ),
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

/// Kernels of a report by the exact bytes of their names, same-named ones
/// in module order.
fn by_name<'a>(
    r: &'a Report,
    order: &HashMap<String, usize>,
) -> BTreeMap<Vec<u8>, Vec<&'a KernelEntry>> {
    let mut m: BTreeMap<Vec<u8>, Vec<&KernelEntry>> = BTreeMap::new();
    for k in &r.kernels {
        m.entry(k.name_bytes()).or_default().push(k);
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
    let mut emit = |list_a: &[&KernelEntry], list_b: &[&KernelEntry]| {
        let n = list_a.len().max(list_b.len());
        let pairing = (n > 1).then(|| {
            format!(
                "{} in A, {} in B: paired by module order",
                list_a.len(),
                list_b.len()
            )
        });
        for (ka, kb) in same_module_first(list_a, list_b) {
            let sa = ka.map(Side::of);
            let sb = kb.map(Side::of);
            let first = ka.or(kb);
            let demangled = first.map(|k| k.demangled.clone()).unwrap_or_default();
            let changed = match (&sa, &sb) {
                (Some(x), Some(y)) => fields
                    .iter()
                    .cloned()
                    .chain(loop_fields(x, y))
                    .filter(|f| x.get(f) != y.get(f))
                    // A time when both have one: a change, not its absence.
                    .filter(|f| f != "time" || (x.time.is_some() && y.time.is_some()))
                    .chain((x.shape != y.shape).then(|| "shape".to_string()))
                    // A build change the user must see: JIT in one, AOT in
                    // the other (both reports of schema 5).
                    .chain(
                        (x.origin.is_some() && y.origin.is_some() && x.origin != y.origin)
                            .then(|| "origin".to_string()),
                    )
                    .collect(),
                _ => Vec::new(),
            };
            out.push(KernelDiff {
                name: first.map(|k| k.name.clone()).unwrap_or_default(),
                name_hex: first.and_then(|k| k.name_hex.clone()),
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
    let mut names_a: Vec<(usize, &[u8], &[&KernelEntry])> = ka
        .iter()
        .map(|(n, v)| (first_rank(v), n.as_slice(), &v[..]))
        .collect();
    names_a.sort_by_key(|&(rank, ..)| rank);
    for (_, n, list_a) in names_a {
        emit(list_a, kb.get(n).map_or(&[][..], |v| &v[..]));
    }
    let mut names_b: Vec<(usize, &[u8], &[&KernelEntry])> = kb
        .iter()
        .filter(|(n, _)| !ka.contains_key(*n))
        .map(|(n, v)| (first_rank(v), n.as_slice(), &v[..]))
        .collect();
    names_b.sort_by_key(|&(rank, ..)| rank);
    for (_, _, list_b) in names_b {
        emit(&[], list_b);
    }
    out
}

/// Same-named kernels of two captures, paired: a kernel of a module both
/// captures hold (the same SHA-256: `port`'s compile of the run's module,
/// or an unchanged library) with itself, then the rest by module order.
fn same_module_first<'k>(
    a: &[&'k KernelEntry],
    b: &[&'k KernelEntry],
) -> Vec<(Option<&'k KernelEntry>, Option<&'k KernelEntry>)> {
    if a.len() <= 1 && b.len() <= 1 {
        return vec![(a.first().copied(), b.first().copied())];
    }
    let mut taken = vec![false; b.len()];
    let mut partner: Vec<Option<usize>> = a
        .iter()
        .map(|ka| {
            let sha = ka.module_sha256.as_ref()?;
            let j =
                (0..b.len()).find(|&j| !taken[j] && b[j].module_sha256.as_ref() == Some(sha))?;
            taken[j] = true;
            Some(j)
        })
        .collect();
    // The others in order: A's i-th unpaired with B's i-th unpaired.
    let mut rest_b = (0..b.len()).filter(|&j| !taken[j]);
    for p in partner.iter_mut().filter(|p| p.is_none()) {
        *p = rest_b.next();
    }
    let mut out: Vec<_> = a
        .iter()
        .zip(&partner)
        .map(|(ka, j)| (Some(*ka), j.map(|j| b[j])))
        .collect();
    out.extend(rest_b.map(|j| (None, Some(b[j]))));
    out
}

/// A condition that held for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub condition: String,
    /// The kernel as the table names it ([`KernelDiff::shown_name`]).
    pub kernel: String,
    pub why: String,
    /// The kernel as its `--fail-on` line names it (terminal text:
    /// [`crate::commands::diff::gate::failures`]); not in the JSON.
    #[serde(skip)]
    pub line: String,
}

impl Failure {
    /// The kernel as its `--fail-on` line on a terminal names it.
    pub fn line_name(&self) -> String {
        match self.line.is_empty() {
            true => names::escape_for_terminal(&self.kernel),
            false => self.line.clone(),
        }
    }
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
        let (a, b) = rayon::join(|| read::load_report(a_dir), || read::load_report(b_dir));
        Ok(Captures {
            a_dir,
            b_dir,
            a: a?,
            b: b?,
        })
    }
}

/// The comparison of the reports `a` and `b` of the captures `a_dir` and
/// `b_dir`: every kernel, and the summary (no condition evaluated yet).
pub fn compare_reports(a: &Report, a_dir: &Path, b: &Report, b_dir: &Path) -> DiffReport {
    let kernels = compare(a, a_dir, b, b_dir);
    let mut summary = Summary::default();
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
    }
    DiffReport {
        a: a_dir.display().to_string(),
        b: b_dir.display().to_string(),
        kernels,
        summary,
        failed: Vec::new(),
    }
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
