//! The report: its model here (`report.json`, a versioned contract:
//! [`Report`], [`KernelEntry`], [`SCHEMA`]); its entries made from the
//! matching ([`entries`]); the files a collection writes ([`files`]:
//! `report.json`, the copies under `asm/`, the pruning of the dumps); and
//! its exporters, one file each ([`export`]: the terminal table, JSON).

pub mod entries;
pub mod export;
pub mod files;
pub mod launch;
pub mod origin;
pub mod origins;
pub mod shapes;
pub mod sycl_images;
pub mod time;

use crate::capture::files::Usage;
use crate::capture::run::Exit;
use crate::kernel_isa::{AsmFile, BinaryOrigin, IsaSourceKind, Status};
use crate::names;
use serde::{Deserialize, Serialize};

/// Version of `report.json`; bumped on any incompatible change (2: ISA from
/// module binaries: `isa_source`, `binary`, new statuses, `not-spirv` gone;
/// 3: each launched kernel's `flow` from its code, or `flow_reason`;
/// `counts_kept`, per process and for the run, added within 3: absent
/// when empty; 4: each launched kernel's `shapes` with their occupancy,
/// `other_shapes`, `slm_static_bytes`, and each process's `device`; 5:
/// each kernel's `origin` and `callers`; 6: device times with `--time`:
/// `time` or `time_reason` per kernel and shape, `time` per process and
/// for the run).
pub const SCHEMA: u32 = 6;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessEntry {
    pub pid: u32,
    pub ppid: u32,
    pub host: String,
    pub exe: String,
    pub forked_from: Option<u32>,
    /// Its IGC dump folder, relative to the capture folder.
    pub dump_dir: String,
    pub dump_dir_exists: bool,
    pub launches: u64,
    pub appended: u64,
    /// Launches of kernel handles whose creation was not recorded.
    pub unknown_launches: u64,
    /// How it ended, when known.
    pub exit: Option<Exit>,
    /// Where that came from, or why it is unknown.
    pub ended: String,
    /// Its rank in a parallel job, from its launcher's variables.
    #[serde(default)]
    pub rank: Option<u32>,
    #[serde(default)]
    pub local_rank: Option<u32>,
    /// The launcher's job id (`openmpi:<id>`, `slurm:<job>.<step>`, ...).
    #[serde(default)]
    pub job_id: Option<String>,
    /// Why its launch counts are not whole (empty: they are): counters
    /// kept out of the capture and lost, a process still running, events
    /// lost, an unreadable counts file.
    #[serde(default)]
    pub counts_incomplete: Vec<String>,
    /// Where its launch counters were kept when not in the capture's
    /// counts file during the run, and why (empty: they were there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts_kept: Vec<CountsKept>,
    /// The device it ran on (or emulated), schema 4; null when its record
    /// names none.
    #[serde(default)]
    pub device: Option<launch::DeviceEntry>,
    /// What it timed on the device (schema 6; absent when it timed
    /// nothing: no `--time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<time::TimeSummary>,
}

/// Counters kept out of the capture's counts file during the run: where
/// (`staged`: node-local memory, `memory`: the process's memory), why,
/// and which chunks (of 2048 kernel ids each).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountsKept {
    pub place: String,
    pub reason: String,
    pub chunks: Vec<u32>,
}

/// For the run: how many processes kept counters where, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountsKeptInRun {
    pub place: String,
    pub reason: String,
    pub processes: u64,
}

/// One rank's share of a kernel's launches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankLaunches {
    pub rank: u32,
    pub launches: u64,
    pub appended: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Relative to the capture folder.
    pub path: String,
    /// `igc-dump` or `module-binary`.
    pub source: IsaSourceKind,
    pub simd: Option<u32>,
    /// IGC's retry number (0: first compilation).
    pub retry: u32,
    pub instructions: Option<u64>,
    pub spill_bytes: Option<u64>,
    /// Whether its machine code is the final binary IGC emitted; null when
    /// the dump does not tell.
    pub final_binary: Option<bool>,
    /// How many processes had this compilation: the same file name in
    /// their dump folders with the same SIMD, retry, instruction count and
    /// spill bytes (for `module-binary`, the same file). Listed once, by
    /// the first path (or the chosen file when it is one of them).
    #[serde(default = "one")]
    pub processes: u32,
}

fn one() -> u32 {
    1
}

impl Candidate {
    pub fn from_file(a: &AsmFile, processes: u32) -> Self {
        let h = a.header.as_ref();
        Candidate {
            path: a.shown.clone(),
            source: a.source,
            simd: a.name.simd,
            retry: a.name.retry,
            instructions: h.and_then(|h| h.instructions),
            spill_bytes: h.and_then(|h| h.spill_bytes),
            final_binary: a.final_binary,
            processes,
        }
    }
}

/// The API a kernel's module was made through.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Api {
    #[default]
    #[serde(rename = "level_zero")]
    LevelZero,
    #[serde(rename = "opencl")]
    OpenCl,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::LevelZero => "level_zero",
            Api::OpenCl => "opencl",
        }
    }
}

impl From<xpu_asm_record::read::Api> for Api {
    fn from(a: xpu_asm_record::read::Api) -> Api {
        match a {
            xpu_asm_record::read::Api::LevelZero => Api::LevelZero,
            xpu_asm_record::read::Api::OpenCl => Api::OpenCl,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelEntry {
    /// 1-based position in the report (by launches, most first).
    pub rank: usize,
    /// The name as the program gave it (lossy when not UTF-8).
    pub name: String,
    /// The exact bytes in hex, present only when the name is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_hex: Option<String>,
    pub demangled: String,
    pub module_sha256: Option<String>,
    /// The API its module was made through: `level_zero` or `opencl`
    /// (reports before this field: Level Zero).
    #[serde(default)]
    pub api: Api,
    pub launches: u64,
    pub appended: u64,
    /// Its counts are a lower bound, not exact: some of its launches (in a
    /// process whose `counts_incomplete` says why) may be missing.
    #[serde(default)]
    pub counts_incomplete: bool,
    pub pids: Vec<u32>,
    /// Ranks of the processes that launched it, sorted (empty outside a job).
    #[serde(default)]
    pub ranks: Vec<u32>,
    /// Its launches per rank, by rank.
    #[serde(default)]
    pub launches_by_rank: Vec<RankLaunches>,
    pub status: Status,
    /// Why there is no ISA (null when matched).
    pub reason: Option<String>,
    /// Where the ISA shown comes from: `igc-dump` (IGC's `.asm` of this
    /// run) or `module-binary` (IGA's disassembly of the module's binary);
    /// null when there is none.
    pub isa_source: Option<IsaSourceKind>,
    /// For `module-binary`: the binary (SHA-256, format, fat binary member).
    pub binary: Option<Box<BinaryOrigin>>,
    /// What to know about where the ISA comes from: for a native module the
    /// driver built again (from the SPIR-V a binary for another device
    /// carries), that the ISA is of that build, not of the binary passed.
    #[serde(default)]
    pub isa_note: Option<String>,
    /// The `.asm` shown, relative to the capture folder: in the dump folder
    /// (`igc-dump`) or under `isa/` (`module-binary`).
    pub asm: Option<String>,
    /// Its readable copy under `asm/`.
    pub asm_copy: Option<String>,
    /// Why that file among the candidates.
    pub asm_choice: Option<String>,
    pub asm_candidates: Vec<Candidate>,
    pub simd: Option<u32>,
    pub grf: Option<u32>,
    pub instructions: Option<u64>,
    pub spill_bytes: Option<u64>,
    pub platform: Option<String>,
    pub ra_type: Option<String>,
    pub spill_grf_refs: Option<u64>,
    pub private_memory_bytes: Option<u64>,
    /// Source lines and their instructions; null without line information
    /// (or for a kernel not launched).
    pub source: Option<xpu_asm_isa::source::Source>,
    /// Instructions by class; null for a kernel not launched.
    pub mix: Option<xpu_asm_isa::mix::Mix>,
    /// From its code (its module's binary, through IGA's JSON): blocks,
    /// loops, live GRF per instruction and the peak; null when not
    /// analysed (`flow_reason` says why) or not launched.
    #[serde(default)]
    pub flow: Option<crate::analysis::flow::Flow>,
    /// Why a launched kernel has no `flow`.
    #[serde(default)]
    pub flow_reason: Option<String>,
    /// Static shared local memory per group, in bytes, as the driver
    /// reported it (schema 4).
    #[serde(default)]
    pub slm_static_bytes: Option<u32>,
    /// Each launch shape, most launched first, with its occupancy (schema
    /// 4).
    #[serde(default)]
    pub shapes: Vec<launch::ShapeEntry>,
    /// Launches of shapes past the bound kept per kernel and process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_shapes: Option<launch::OtherShapes>,
    /// How its ISA was made, and the library that carried its code or
    /// created its module (schema 5; null for a kernel not launched).
    #[serde(default)]
    pub origin: Option<origin::Origin>,
    /// The stacks of its first launches, symbolized (schema 5).
    #[serde(default)]
    pub callers: Vec<origin::Caller>,
    /// Its device times (schema 6, `--time`; absent without, and when
    /// none of its launches was timed: `time_reason` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<time::TimeEntry>,
    /// Why a launched kernel of a timed run has no `time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_reason: Option<String>,
}

impl KernelEntry {
    /// Sets `source` and `mix` from the analysis of its ISA file (none:
    /// no file, or it could not be read).
    pub fn set_isa(&mut self, a: Option<xpu_asm_isa::Analysis>) {
        if let Some(a) = a {
            self.source = a.source;
            self.mix = Some(a.mix);
        }
    }

    /// Sets `flow` or `flow_reason` from the analysis of its code.
    pub fn set_flow(&mut self, f: Option<crate::analysis::code::Outcome>) {
        match f {
            Some(Ok(f)) => self.flow = Some(f),
            Some(Err(why)) => self.flow_reason = Some(why),
            None => {}
        }
    }

    /// The exact bytes of its name (`name_hex`'s when the name is not
    /// UTF-8).
    pub fn name_bytes(&self) -> Vec<u8> {
        self.name_hex
            .as_deref()
            .and_then(xpu_asm_record::unhex)
            .unwrap_or_else(|| self.name.clone().into_bytes())
    }

    /// The name a person reads, before escaping ([`names::readable`]):
    /// demangled, a name that is not UTF-8 with its bytes as `\xff`, the
    /// empty name as `(empty name)`.
    pub fn readable(&self) -> std::borrow::Cow<'_, str> {
        match (&self.name_hex, self.name.is_empty()) {
            (None, false) => std::borrow::Cow::Borrowed(&self.demangled),
            _ => std::borrow::Cow::Owned(names::readable(&self.name_bytes(), &self.demangled)),
        }
    }

    /// The name a person reads: [`KernelEntry::readable`], escaped for a
    /// terminal.
    pub fn display_name(&self) -> String {
        names::escape_for_terminal(&self.readable())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Launched kernels listed (after `--filter`).
    pub kernels: u64,
    pub launches: u64,
    pub appended: u64,
    pub matched: u64,
    pub unmatched: u64,
    /// Launched kernels left out by `--filter`.
    pub filtered_out: u64,
    /// Listed kernels whose counts are a lower bound (`counts_incomplete`).
    #[serde(default)]
    pub incomplete: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpsInfo {
    /// `asm`, `launched` or `all`.
    pub keep: String,
    /// Before the first collection pruned anything.
    pub before: Usage,
    pub after: Usage,
}

/// How many of the listed kernels something holds (`asm/`'s copies, the
/// page's kernels): the first, in report order (the most launched first),
/// or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    First(usize),
    All,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::First(n) => write!(f, "{n}"),
            Limit::All => f.write_str("all"),
        }
    }
}

impl Limit {
    /// `N` or `all`, as an option takes it; the error names `default`.
    pub fn parse(s: &str, default: usize) -> Result<Limit, String> {
        if s == "all" {
            return Ok(Limit::All);
        }
        s.parse()
            .map(Limit::First)
            .map_err(|_| format!("expected a number of kernels or `all` (default {default})"))
    }

    /// The limit as a count (`usize::MAX` for all).
    pub fn count(self) -> usize {
        match self {
            Limit::First(n) => n,
            Limit::All => usize::MAX,
        }
    }

    /// What the limit leaves out of kernels of which `counted` (in report
    /// order) say whether each counts against it: `None` when nothing.
    pub fn left_out(self, counted: impl Iterator<Item = bool>) -> Option<LeftOut> {
        self.left_out_of(counted.filter(|&c| c).count())
    }

    /// What the limit leaves out of `n` kernels, each counting against it.
    pub fn left_out_of(self, n: usize) -> Option<LeftOut> {
        (n > self.count()).then(|| LeftOut {
            limit: self.count() as u64,
            left_out: (n - self.count()) as u64,
        })
    }
}

/// What a [`Limit`] left out: present in the report only when it left out
/// something (`asm_copies`: listed kernels with an ISA file and no copy
/// under `asm/`, each one's `asm` naming its file; `page_kernels`: listed
/// kernels the page does not hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// The most the limit keeps: the first listed kernels, in report
    /// order.
    pub limit: u64,
    pub left_out: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub schema: u32,
    /// `xpu-asm-run <version>`
    pub tool: String,
    /// The command as run (lossy UTF-8); null when `run.json` is missing.
    pub command: Option<Vec<String>>,
    pub exit: Option<Exit>,
    /// `--emulate DEVICE`: kernels were compiled for DEVICE, not executed.
    pub emulate: Option<String>,
    pub processes: Vec<ProcessEntry>,
    /// Launched kernels by launches (most first), then with `--all` the
    /// compiled but never launched ones.
    pub kernels: Vec<KernelEntry>,
    pub totals: Totals,
    /// Kernels IGC compiled that no process launched.
    pub unlaunched_compiled: u64,
    pub unlaunched_listed: bool,
    pub filter: Option<String>,
    /// `binary` when the run took every kernel's ISA from its module's
    /// binary (`--isa binary`, the default with IGC 2): IGC dumped nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isa: Option<String>,
    pub dumps: DumpsInfo,
    /// `asm/`'s copies left out by `--asm-copies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asm_copies: Option<LeftOut>,
    /// The kernels `report.html` does not hold (`--page-kernels`): it holds
    /// the first `limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_kernels: Option<LeftOut>,
    /// Each process whose launch counts are not whole, and why (empty:
    /// every count is exact).
    #[serde(default)]
    pub counts_incomplete: Vec<String>,
    /// Counters kept out of the capture during the run, by place and
    /// reason, with how many processes did (each process's own:
    /// `processes[].counts_kept`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts_kept: Vec<CountsKeptInRun>,
    /// What the run timed on the device (schema 6; absent without
    /// `--time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<time::TimeSummary>,
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A limit leaves out what counts past it, and says nothing when it
    /// leaves out nothing.
    #[test]
    fn a_limit_leaves_out_what_counts_past_it() {
        let left = |limit, left_out| Some(LeftOut { limit, left_out });
        assert_eq!(Limit::First(3).left_out_of(5), left(3, 2));
        assert_eq!(Limit::First(3).left_out_of(3), None);
        assert_eq!(Limit::First(0).left_out_of(1), left(0, 1));
        assert_eq!(Limit::All.left_out_of(usize::MAX - 1), None);
        // Only what counts: here, 4 of 7.
        let counted = [true, false, true, false, true, false, true];
        assert_eq!(Limit::First(2).left_out(counted.into_iter()), left(2, 2));
        assert_eq!(Limit::First(4).left_out(counted.into_iter()), None);
    }
}
