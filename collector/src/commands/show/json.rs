//! `show --json DIR KERNEL`: everything about one kernel in one JSON
//! object, for a program or an agent: its exact name, where its code came
//! from, its ISA file (absolute) and header figures, launches and shapes,
//! and the evidence that it ran (its processes' records, in sentences
//! too). docs/usage.md lists the fields.

use super::evidence;
use crate::report::{KernelEntry, Report};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// The answer's own schema (not report.json's).
pub const SCHEMA: u32 = 1;

/// The answer, in the order a reader takes it: which kernel, where its
/// code came from, its ISA, how it ran, and the evidence. Fields of the
/// report's entry come as report.json has them (`origin`, `callers`,
/// `time`: null in reports that have none).
#[derive(Debug, Serialize)]
pub struct Answer<'a> {
    pub schema: u32,
    /// The capture folder, absolute.
    pub capture: String,
    /// KERNEL as given.
    pub selector: String,
    pub report_schema: u32,
    pub rank: usize,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_hex: Option<String>,
    pub demangled: String,
    pub module_sha256: Option<String>,
    pub api: &'static str,
    pub origin: Value,
    pub callers: Value,
    pub isa: Isa<'a>,
    pub figures: Figures,
    pub mix: Option<&'a xpu_asm_isa::mix::Mix>,
    pub flow: FlowBrief<'a>,
    pub launches: u64,
    pub appended: u64,
    pub counts_incomplete: bool,
    pub time: Value,
    /// Why a kernel of a timed run has no `time` (absent otherwise).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub time_reason: Value,
    pub ranks: Vec<u32>,
    pub launches_by_rank: &'a [crate::report::RankLaunches],
    pub shapes: &'a [crate::report::launch::ShapeEntry],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_shapes: Option<&'a crate::report::launch::OtherShapes>,
    pub evidence: Evidence,
}

/// Where the ISA is and why that file.
#[derive(Debug, Serialize)]
pub struct Isa<'a> {
    pub status: crate::kernel_isa::Status,
    pub reason: Option<String>,
    /// The file to read, absolute: its copy under `asm/`, else `asm`.
    pub file: Option<String>,
    /// The name on that file's `//.kernel` line.
    pub kernel_line: Option<String>,
    pub source: Option<crate::kernel_isa::IsaSourceKind>,
    pub asm: Option<String>,
    pub asm_copy: Option<String>,
    pub choice: Option<String>,
    pub note: Option<String>,
    pub binary: Option<&'a crate::kernel_isa::BinaryOrigin>,
}

#[derive(Debug, Serialize)]
pub struct Evidence {
    /// Null when the capture has no readable `records/`.
    pub processes: Option<Vec<evidence::ProcessLaunches>>,
    pub text: String,
}

/// The answer for `k` of the report `r` of the capture `dir`, picked by
/// `selector`.
pub fn answer<'a>(dir: &Path, selector: &str, r: &Report, k: &'a KernelEntry) -> Answer<'a> {
    let entry = serde_json::to_value(k).unwrap_or(Value::Null);
    let take = |key: &str| entry.get(key).cloned().unwrap_or(Value::Null);
    let capture = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let file = super::super::read::isa_path(dir, k).ok();
    let file = file.map(|p| std::fs::canonicalize(&p).unwrap_or(p));
    let kernel_line = file.as_deref().and_then(|p| kernel_line(p, k));
    let procs = evidence::processes(dir, k);
    Answer {
        schema: SCHEMA,
        capture: capture.display().to_string(),
        selector: selector.to_string(),
        report_schema: r.schema,
        rank: k.rank,
        name: k.name.clone(),
        name_hex: k.name_hex.clone(),
        demangled: k.demangled.clone(),
        module_sha256: k.module_sha256.clone(),
        api: k.api.as_str(),
        origin: take("origin"),
        callers: take("callers"),
        isa: Isa {
            status: k.status,
            reason: k.reason.clone(),
            file: file.map(|p| p.display().to_string()),
            kernel_line: kernel_line.clone(),
            source: k.isa_source,
            asm: k.asm.clone(),
            asm_copy: k.asm_copy.clone(),
            choice: k.asm_choice.clone(),
            note: k.isa_note.clone(),
            binary: k.binary.as_deref(),
        },
        figures: figures(k),
        mix: k.mix.as_ref(),
        flow: flow(k),
        launches: k.launches,
        appended: k.appended,
        counts_incomplete: k.counts_incomplete,
        time: take("time"),
        time_reason: take("time_reason"),
        ranks: k.ranks.clone(),
        launches_by_rank: &k.launches_by_rank,
        shapes: &k.shapes,
        other_shapes: k.other_shapes.as_ref(),
        evidence: Evidence {
            text: evidence::sentences(k, procs.as_deref(), kernel_line.as_deref()),
            processes: procs,
        },
    }
}

/// The name on the ISA file's `//.kernel` line: `k`'s exact name when the
/// line holds it (an IGC dump's header read against it), else the line as
/// xpu-asm's own texts write it.
fn kernel_line(path: &Path, k: &KernelEntry) -> Option<String> {
    use xpu_asm_isa::header::{read_header, read_own_header, KnownNames};
    let line = match read_header(path, &KnownNames::one(&k.name_bytes())) {
        Ok(h) if h.kernel.is_some() => h.kernel,
        _ => read_own_header(path).ok()?.kernel,
    };
    line.map(|n| String::from_utf8_lossy(&n).into_owned())
}

/// The header's figures.
#[derive(Debug, Serialize)]
pub struct Figures {
    pub simd: Option<u32>,
    pub grf: Option<u32>,
    pub instructions: Option<u64>,
    pub spill_bytes: Option<u64>,
    pub private_memory_bytes: Option<u64>,
    pub spill_grf_refs: Option<u64>,
    pub platform: Option<String>,
    pub ra_type: Option<String>,
    pub slm_static_bytes: Option<u32>,
}

fn figures(k: &KernelEntry) -> Figures {
    Figures {
        simd: k.simd,
        grf: k.grf,
        instructions: k.instructions,
        spill_bytes: k.spill_bytes,
        private_memory_bytes: k.private_memory_bytes,
        spill_grf_refs: k.spill_grf_refs,
        platform: k.platform.clone(),
        ra_type: k.ra_type.clone(),
        slm_static_bytes: k.slm_static_bytes,
    }
}

/// The flow in brief (the whole of it is in report.json): blocks, loops
/// and the peak of pressure, or why there is none.
#[derive(Debug, Serialize)]
pub struct FlowBrief<'a> {
    pub blocks: Option<usize>,
    pub loops: Option<usize>,
    pub budget: Option<u32>,
    pub peak: Option<&'a crate::analysis::flow::Peak>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
}

fn flow(k: &KernelEntry) -> FlowBrief<'_> {
    let f = k.flow.as_ref();
    FlowBrief {
        blocks: f.map(|f| f.blocks.len()),
        loops: f.map(|f| f.loops.len()),
        budget: f.and_then(|f| f.budget),
        peak: f.and_then(|f| f.peak.as_ref()),
        reason: if f.is_none() {
            Some(k.flow_reason.as_deref().unwrap_or("the report has none"))
        } else {
            None
        },
    }
}
