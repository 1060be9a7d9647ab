//! What `port` shows: each launched kernel of the run on the run's device
//! and on each product ([`PortView`]), the table of it, and the
//! `--fail-on` conditions that hold.

use crate::commands::diff::compare::{compare, Failure, KernelDiff};
use crate::commands::diff::gate::failures;
use crate::names;
use crate::port::{PortResult, ProductPort, PORT_DIR};
use crate::report::{KernelEntry, Report};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The page of a product's port beside the run, in its folder.
pub const COMPARE_PAGE: &str = "compare.html";

/// The page of every product side by side, in `DIR/port/` ([`super::page`]).
pub const INDEX_PAGE: &str = "index.html";

/// One kernel on one product.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OnProduct {
    pub product: String,
    pub simd: Option<u32>,
    pub grf: Option<u32>,
    pub instructions: Option<u64>,
    pub spill_bytes: Option<u64>,
    /// The occupancy of the run's most launched shape on this product,
    /// in percent, and what limits it (null without shapes or a device).
    pub occupancy: Option<f64>,
    pub limited_by: Option<String>,
    /// Its ISA's copy, relative to the capture folder.
    pub asm_copy: Option<String>,
    /// What got worse than on the device of the run.
    pub worse: Vec<String>,
    /// Why it has no ISA on this product.
    pub not_ported: Option<String>,
}

/// The figures the table and the page show of a kernel on a device, by
/// name, in their order.
pub const FIGURES: [&str; 5] = ["SIMD", "GRF", "instrs", "spill", "occupancy"];

impl OnProduct {
    /// Its [`FIGURES`] as text (`-` for none; no spill is `-` too).
    pub fn figure_texts(&self) -> [String; 5] {
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        [
            opt(self.simd.map(u64::from)),
            opt(self.grf.map(u64::from)),
            opt(self.instructions),
            opt(self.spill_bytes.filter(|b| *b > 0)),
            match (self.occupancy, &self.limited_by) {
                (Some(o), Some(l)) => format!("{o}% {l}"),
                _ => "-".to_string(),
            },
        ]
    }
}

/// One launched kernel of the run, and what it becomes on each product.
#[derive(Debug, Clone, Serialize)]
pub struct PortedKernel {
    pub rank: usize,
    pub name: String,
    /// The exact bytes in hex, present only when the name is not UTF-8
    /// (as in the report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_hex: Option<String>,
    pub demangled: String,
    /// Its name as `collect`'s table gives it: demangled, with its module
    /// when several modules define the name (`common_kernel [module
    /// 3e8fd3a6]`).
    #[serde(skip)]
    pub shown: String,
    pub launches: u64,
    /// Its most launched shape in the run (`64 x 16`), if it has shapes.
    pub top_shape: Option<String>,
    pub run: OnProduct,
    pub products: Vec<OnProduct>,
}

/// What `port` prints.
#[derive(Debug, Serialize)]
pub struct PortView {
    /// The device of the run (its `--emulate`, else its platform).
    pub device: String,
    pub products: Vec<ProductSummary>,
    pub kernels: Vec<PortedKernel>,
    #[serde(skip)]
    pairs: Vec<(String, Vec<KernelDiff>)>,
}

/// One product's port as a whole.
#[derive(Debug, Serialize)]
pub struct ProductSummary {
    pub product: String,
    /// `port/<product>`, relative to the capture folder.
    pub dir: String,
    pub report: Option<String>,
    pub error: Option<String>,
    pub seconds: f64,
    pub modules_built: usize,
    pub modules_failed: usize,
}

impl PortView {
    pub fn new(dir: &Path, run: &Report, result: &PortResult) -> PortView {
        let device = crate::capture::run::read_run_info(dir, &mut Vec::new())
            .and_then(|r| r.emulate)
            .or_else(|| run.kernels.iter().find_map(|k| k.platform.clone()))
            .unwrap_or_else(|| "run".into());
        let products = result.products.iter().map(summary).collect();
        let shown = crate::report::export::table::names_apart(run);
        let kernels = run
            .kernels
            .iter()
            .zip(shown)
            .filter(|(k, _)| k.launches > 0)
            .map(|(k, shown)| PortedKernel {
                rank: k.rank,
                name: k.name.clone(),
                name_hex: k.name_hex.clone(),
                demangled: k.demangled.clone(),
                shown,
                launches: k.launches,
                top_shape: k
                    .shapes
                    .first()
                    .map(crate::report::export::shapes_text::shape),
                run: figures(&device, k, None),
                products: result
                    .products
                    .iter()
                    .map(|p| on_product(k, p, result))
                    .collect(),
            })
            .collect();
        let pairs = result
            .products
            .iter()
            .filter_map(|p| {
                let r = p.report.as_ref().ok()?;
                Some((p.product.clone(), compare(run, dir, r, &p.dir)))
            })
            .collect();
        PortView {
            device,
            products,
            kernels,
            pairs,
        }
    }

    /// The `--fail-on` conditions that hold, product by product.
    pub fn failures(
        &self,
        fail_on: &[crate::commands::diff::gate::Condition],
    ) -> Vec<(String, Vec<Failure>)> {
        self.pairs
            .iter()
            .map(|(p, diffs)| {
                // A kernel only in the run is one that could not be ported:
                // the table says why; `missing` makes it a failure.
                (p.clone(), failures(diffs, fail_on))
            })
            .collect()
    }

    /// Each product to which some launched kernel could not be ported,
    /// with how many, in the products' order.
    pub fn not_ported(&self) -> Vec<(String, usize)> {
        self.products
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let n = self
                    .kernels
                    .iter()
                    .filter(|k| k.products.get(i).is_some_and(|o| o.not_ported.is_some()))
                    .count();
                (n > 0).then(|| (p.product.clone(), n))
            })
            .collect()
    }

    /// The table: kernel by kernel, the run's device then each product.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>4} {:>10}  {:<32} {:<8} {:>4} {:>4} {:>7} {:>7}  {:<15} worse than on {}",
            "#",
            "launches",
            "kernel",
            "device",
            "SIMD",
            "GRF",
            "instrs",
            "spill",
            "occupancy",
            self.device
        );
        let escaped: Vec<String> = self
            .kernels
            .iter()
            .map(|k| names::escape_for_terminal(&k.shown))
            .collect();
        // Told apart as `collect`'s table tells them, in 32 characters.
        let shown = names::distinct(&escaped, 32);
        for (k, name) in self.kernels.iter().zip(&shown) {
            for (i, p) in std::iter::once(&k.run).chain(&k.products).enumerate() {
                let (rank, launches, shown) = match i {
                    0 => (k.rank.to_string(), k.launches.to_string(), name.as_str()),
                    _ => (String::new(), String::new(), ""),
                };
                if let Some(why) = &p.not_ported {
                    let _ = writeln!(
                        s,
                        "{rank:>4} {launches:>10}  {shown:<32} {:<8} not ported: {}",
                        p.product,
                        names::escape_for_terminal(why)
                    );
                    continue;
                }
                let [simd, grf, instrs, spill, occupancy] = p.figure_texts();
                let line = format!(
                    "{rank:>4} {launches:>10}  {shown:<32} {:<8} {simd:>4} {grf:>4} {instrs:>7} {spill:>7}  {occupancy:<15} {}",
                    p.product,
                    p.worse.join(", ")
                );
                let _ = writeln!(s, "{}", line.trim_end());
            }
        }
        self.footer(&mut s);
        s
    }

    /// The table's last lines: each product's port as a whole, the page.
    fn footer(&self, s: &mut String) {
        for p in &self.products {
            let _ = writeln!(
                s,
                "{}: {} module{} compiled{} in {:.1} s; {}",
                p.product,
                p.modules_built,
                if p.modules_built == 1 { "" } else { "s" },
                match p.modules_failed {
                    0 => String::new(),
                    n => format!(", {n} failed"),
                },
                p.seconds,
                match (&p.report, &p.error) {
                    (Some(r), _) => format!("{r}, beside the run: {}/{COMPARE_PAGE}", p.dir),
                    (None, Some(e)) => format!("no report: {e}"),
                    (None, None) => "no report".into(),
                }
            );
        }
        let _ = writeln!(s, "every product side by side: {PORT_DIR}/{INDEX_PAGE}");
    }
}

fn summary(p: &ProductPort) -> ProductSummary {
    let built = p
        .statuses
        .values()
        .filter(|s| *s == crate::port::replay::BUILT)
        .count();
    ProductSummary {
        product: p.product.clone(),
        dir: format!("{PORT_DIR}/{}", p.product),
        report: p
            .report
            .as_ref()
            .ok()
            .map(|_| format!("{PORT_DIR}/{}/report.json", p.product)),
        error: p.report.as_ref().err().cloned(),
        seconds: p.seconds,
        modules_built: built,
        modules_failed: p.statuses.len() - built,
    }
}

/// A kernel's figures on `product`, what got worse than `run`'s.
fn figures(product: &str, k: &KernelEntry, run: Option<&KernelEntry>) -> OnProduct {
    let mut worse = Vec::new();
    if let Some(r) = run {
        let spill = |e: &KernelEntry| e.spill_bytes.unwrap_or(0);
        if spill(k) > spill(r) {
            worse.push(format!("spill {} -> {}", spill(r), spill(k)));
        }
        if let (Some(a), Some(b)) = (r.simd, k.simd) {
            if b < a {
                worse.push(format!("SIMD {a} -> {b}"));
            }
        }
        if let (Some(a), Some(b)) = (r.instructions, k.instructions) {
            if b > a {
                worse.push(format!(
                    "instrs {}",
                    crate::commands::diff::compare::change(a, b)
                ));
            }
        }
        if let (Some(a), Some(b)) = (top_occupancy(r), top_occupancy(k)) {
            if b.percent < a.percent {
                worse.push(format!(
                    "occupancy {}% -> {}% ({})",
                    a.percent,
                    b.percent,
                    b.limited_by.name()
                ));
            }
        }
    }
    let occupancy = top_occupancy(k);
    OnProduct {
        product: product.to_string(),
        simd: k.simd,
        grf: k.grf,
        instructions: k.instructions,
        spill_bytes: k.spill_bytes,
        occupancy: occupancy.map(|o| o.percent),
        limited_by: occupancy.map(|o| o.limited_by.name().to_string()),
        asm_copy: k.asm_copy.clone(),
        worse,
        not_ported: None,
    }
}

/// The occupancy of `k`'s most launched shape.
fn top_occupancy(k: &KernelEntry) -> Option<&crate::analysis::occupancy::Occupancy> {
    k.shapes.first()?.occupancy.as_ref()
}

/// Kernel `k` of the run on product `p`: its entry in `p`'s report (same
/// name and module), or why it has none.
fn on_product(k: &KernelEntry, p: &ProductPort, result: &PortResult) -> OnProduct {
    let none = |why: String| OnProduct {
        product: p.product.clone(),
        simd: None,
        grf: None,
        instructions: None,
        spill_bytes: None,
        occupancy: None,
        limited_by: None,
        asm_copy: None,
        worse: Vec::new(),
        not_ported: Some(why),
    };
    let name = k.name_bytes();
    let (api, sha) = (k.api.as_str(), k.module_sha256.as_deref());
    if let Some(why) = result.ported.why_not(api, sha, &name) {
        return none(why.clone());
    }
    let report = match &p.report {
        Ok(r) => r,
        Err(e) => return none(e.clone()),
    };
    let found = report
        .kernels
        .iter()
        .find(|e| e.name_bytes() == name && e.module_sha256 == k.module_sha256 && e.api == k.api);
    match found {
        Some(e) if e.simd.is_some() || e.instructions.is_some() => {
            let mut f = figures(&p.product, e, Some(k));
            f.asm_copy = e
                .asm_copy
                .as_ref()
                .map(|c| format!("{PORT_DIR}/{}/{c}", p.product));
            f
        }
        Some(e) => none(e.reason.clone().unwrap_or_else(|| "no ISA".into())),
        None => {
            let status = result
                .ported
                .module_of(api, sha, &name)
                .and_then(|m| p.statuses.get(&m.key));
            none(match status {
                Some(s) if s != crate::port::replay::BUILT => s.clone(),
                _ => "not in the port's report".into(),
            })
        }
    }
}
