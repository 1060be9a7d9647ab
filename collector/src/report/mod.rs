//! The report: `report.json` (a versioned contract) and the table on stdout.

pub mod files;

use crate::dumps::{AsmFile, Usage};
use crate::matching::{KernelMatch, Status};
use crate::names;
use crate::sources::{BinaryOrigin, IsaSourceKind};
use serde::{Deserialize, Serialize};

/// Version of `report.json`; bumped on any incompatible change (2: ISA from
/// module binaries: `isa_source`, `binary`, new statuses, `not-spirv` gone).
pub const SCHEMA: u32 = 2;

/// How a command or process ended: `{"code": n}` or `{"signal": n}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The shell's convention: the code, or 128 + the signal number.
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Exit::Code(c) => format!("exited with code {c}"),
            Exit::Signal(s) => format!("was killed by signal {s} ({})", signal_name(s)),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
    }
}

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
    fn from_file(a: &AsmFile, processes: u32) -> Self {
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
    pub launches: u64,
    pub appended: u64,
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
    pub source: Option<crate::isa::source::Source>,
    /// Instructions by class; null for a kernel not launched.
    pub mix: Option<crate::isa::mix::Mix>,
}

impl KernelEntry {
    pub fn from_match(rank: usize, k: &KernelMatch) -> Self {
        Self::from_match_demangled(rank, k, names::demangle(&k.name))
    }

    /// [`KernelEntry::from_match`] with the name already demangled
    /// ([`names::demangle`] of `k.name`).
    pub fn from_match_demangled(rank: usize, k: &KernelMatch, demangled: String) -> Self {
        let (name, name_hex) = match std::str::from_utf8(&k.name) {
            Ok(s) => (s.to_string(), None),
            Err(_) => (
                String::from_utf8_lossy(&k.name).into_owned(),
                Some(xpu_asm_record::hex(&k.name)),
            ),
        };
        let chosen = k.chosen_file();
        let h = k.header();
        KernelEntry {
            rank,
            name,
            name_hex,
            demangled,
            module_sha256: k.module_sha256.clone(),
            launches: k.launches,
            appended: k.appended,
            pids: k.pids.clone(),
            ranks: Vec::new(),
            launches_by_rank: Vec::new(),
            status: k.status,
            reason: k.reason.clone(),
            isa_source: chosen.map(|a| a.source),
            binary: chosen.and_then(|a| a.binary.clone()),
            asm: chosen.map(|a| a.shown.clone()),
            asm_copy: None,
            asm_choice: k.choice.clone(),
            asm_candidates: k
                .candidates
                .iter()
                .enumerate()
                .map(|(i, a)| Candidate::from_file(a, k.processes.get(i).copied().unwrap_or(1)))
                .collect(),
            simd: chosen.and_then(|a| a.name.simd),
            grf: h.and_then(|h| h.grf),
            instructions: h.and_then(|h| h.instructions),
            spill_bytes: h.and_then(|h| h.spill_bytes),
            platform: h.and_then(|h| h.platform.clone()),
            ra_type: h.and_then(|h| h.ra_type.clone()),
            spill_grf_refs: h.and_then(|h| h.spill_grf_refs),
            private_memory_bytes: h.and_then(|h| h.private_memory_bytes),
            source: None,
            mix: None,
        }
    }

    /// Sets `source` and `mix` from the analysis of its ISA file (none:
    /// no file, or it could not be read).
    pub fn set_isa(&mut self, a: Option<crate::isa::Analysis>) {
        if let Some(a) = a {
            self.source = a.source;
            self.mix = Some(a.mix);
        }
    }

    /// The name a person reads: demangled, escaped for a terminal.
    pub fn display_name(&self) -> String {
        names::escape_for_terminal(&self.demangled)
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpsInfo {
    /// `asm`, `launched` or `all`.
    pub keep: String,
    /// Before the first collection pruned anything.
    pub before: Usage,
    pub after: Usage,
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
    pub dumps: DumpsInfo,
    pub warnings: Vec<String>,
}

/// How the table is drawn.
#[derive(Debug, Clone)]
pub struct TableStyle {
    /// Characters per line to aim for.
    pub width: usize,
    pub color: bool,
    /// How to show the capture folder in the closing lines.
    pub dir: String,
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
    use std::fmt::Write;
    let c = style.color;
    let mut out = String::new();
    let isa_w = r
        .kernels
        .iter()
        .map(|k| k.asm_copy.as_deref().map_or(1, |s| s.chars().count()))
        .max()
        .unwrap_or(8)
        .max(8);
    // rank, launches, SIMD, GRF, instrs, spill, source + separators
    let fixed = 4 + 11 + 5 + 5 + 8 + 8 + 8 + 7;
    let name_w = style.width.saturating_sub(fixed + isa_w).clamp(24, 80);
    // A column of ranks only for a parallel job's report.
    let rank_col: Vec<String> = r
        .kernels
        .iter()
        .map(|k| xpu_asm_record::ranks::ranges(&k.ranks))
        .collect();
    let ranks_w = rank_col
        .iter()
        .map(|s| s.chars().count())
        .max()
        .filter(|w| *w > 0)
        .map(|w| w.clamp(5, 16));
    let ranks_cell = |s: &str| match ranks_w {
        Some(w) => format!(" {}", fit(s, w)),
        None => String::new(),
    };
    let name_w = name_w.saturating_sub(ranks_w.map_or(0, |w| w + 1)).max(24);
    let header = format!(
        "{:>4} {:>10}{}  {}  {:>4} {:>4} {:>7} {:>7}  {:<6} {}",
        "#",
        "launches",
        ranks_cell("ranks"),
        fit("kernel", name_w),
        "SIMD",
        "GRF",
        "instrs",
        "spill",
        "source",
        "ISA file"
    );
    if r.kernels.is_empty() {
        let _ = writeln!(out, "no kernel was launched");
    } else {
        let _ = writeln!(out, "{}", paint(c, "1", header.trim_end()));
    }
    // Same-named kernels of different modules: tell them apart by module.
    let mut seen = std::collections::BTreeMap::new();
    for k in &r.kernels {
        *seen.entry(&k.demangled).or_insert(0usize) += 1;
    }
    for (k, ranks) in r.kernels.iter().zip(&rank_col) {
        let mut display = k.display_name();
        if seen.get(&k.demangled).copied().unwrap_or(0) > 1 {
            let sha = k.module_sha256.as_deref().unwrap_or("");
            display.push_str(&format!(" [module {}]", sha.get(..8).unwrap_or(sha)));
        }
        let name = names::shorten_keeping_end(&display, name_w, " [module ");
        let isa = match (&k.asm_copy, &k.asm, k.status) {
            (Some(p), _, _) => p.clone(),
            (None, Some(p), _) => p.clone(),
            (None, None, Status::NotLaunched) => "-".to_string(),
            _ => paint(c, "33", "not matched (see below)"),
        };
        let launches = if k.status == Status::NotLaunched {
            "0".to_string()
        } else {
            k.launches.to_string()
        };
        let source = match k.isa_source {
            Some(IsaSourceKind::IgcDump) => "dump",
            Some(IsaSourceKind::ModuleBinary) => "binary",
            None => "-",
        };
        let line = format!(
            "{:>4} {:>10}{}  {}  {:>4} {:>4} {:>7} {:>7}  {:<6} {}",
            k.rank,
            launches,
            ranks_cell(ranks),
            fit(&name, name_w),
            opt(k.simd),
            opt(k.grf),
            opt(k.instructions),
            opt(k.spill_bytes),
            source,
            isa
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
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
        let _ = writeln!(
            out,
            "{} launched kernel(s) left out by --filter {}",
            t.filtered_out,
            r.filter.as_deref().unwrap_or("")
        );
    }
    let unmatched: Vec<&KernelEntry> = r
        .kernels
        .iter()
        .filter(|k| k.status != Status::Matched && k.status != Status::NotLaunched)
        .collect();
    if !unmatched.is_empty() {
        let _ = writeln!(out, "{}", paint(c, "33", "not matched:"));
        for k in unmatched {
            let _ = writeln!(
                out,
                "  #{} {}: {}",
                k.rank,
                names::shorten(&k.display_name(), 60),
                k.reason.as_deref().unwrap_or("no reason recorded")
            );
        }
    }
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
                "no process left a record: the command made no Level Zero call the interposer saw \
                 (it records a process at its first call), or the interposer did not load \
                 (a static or setuid program, or LD_PRELOAD was cleared)"
            )
        );
    }
    let d = &r.dumps;
    if d.before != d.after {
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
    if let Some(e) = r.exit {
        let _ = writeln!(out, "the command {}", e.describe());
    }
    if let Some(dev) = &r.emulate {
        let _ = writeln!(
            out,
            "emulated device {dev}: kernels were compiled for it but not executed"
        );
    }
    let _ = writeln!(out, "report: {}/report.json", style.dir);
    out
}

/// The launched kernels in report order.
pub struct Ranked {
    /// Each launched kernel's demangled name, by index in `Matching::launched`.
    pub demangled: Vec<String>,
    /// Indices of the kernels listed (after `--filter`), by launches (most
    /// first), then appends, then name.
    pub order: Vec<usize>,
    /// Launched kernels left out by `--filter`.
    pub filtered_out: u64,
}

/// Whether a kernel is listed under `--filter`: its mangled or demangled
/// name matches.
fn passes(filter: Option<&regex::Regex>, name: &[u8], demangled: &str) -> bool {
    match filter {
        None => true,
        Some(re) => re.is_match(&String::from_utf8_lossy(name)) || re.is_match(demangled),
    }
}

/// Ranks the launched kernels (each name demangled once, on every core).
pub fn rank(launched: &[KernelMatch], filter: Option<&regex::Regex>) -> Ranked {
    use rayon::prelude::*;
    let demangled: Vec<String> = launched
        .par_iter()
        .map(|k| names::demangle(&k.name))
        .collect();
    let mut order: Vec<usize> = (0..launched.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&launched[a], &launched[b]);
        kb.launches
            .cmp(&ka.launches)
            .then(kb.appended.cmp(&ka.appended))
            .then_with(|| demangled[a].cmp(&demangled[b]))
            .then_with(|| ka.name.cmp(&kb.name))
            .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
    });
    let total = order.len();
    order.retain(|&i| passes(filter, &launched[i].name, &demangled[i]));
    Ranked {
        filtered_out: (total - order.len()) as u64,
        demangled,
        order,
    }
}

/// The report's kernel entries, ranked (with `all`, the kernels IGC
/// compiled that nobody launched after them, by name), and their totals.
pub fn kernel_entries(
    matching: &crate::matching::Matching,
    order: &[usize],
    demangled: &[String],
    filtered_out: u64,
    all: bool,
    filter: Option<&regex::Regex>,
) -> (Vec<KernelEntry>, Totals) {
    use rayon::prelude::*;
    let mut kernels: Vec<KernelEntry> = order
        .par_iter()
        .enumerate()
        .map(|(r, &i)| {
            KernelEntry::from_match_demangled(r + 1, &matching.launched[i], demangled[i].clone())
        })
        .collect();
    let totals = Totals {
        kernels: kernels.len() as u64,
        launches: kernels.iter().map(|k| k.launches).sum(),
        appended: kernels.iter().map(|k| k.appended).sum(),
        matched: kernels
            .iter()
            .filter(|k| k.status == Status::Matched)
            .count() as u64,
        unmatched: kernels
            .iter()
            .filter(|k| k.status != Status::Matched)
            .count() as u64,
        filtered_out,
    };
    if all {
        let un_demangled: Vec<String> = matching
            .unlaunched
            .par_iter()
            .map(|k| names::demangle(&k.name))
            .collect();
        let mut un: Vec<usize> = (0..matching.unlaunched.len())
            .filter(|&i| passes(filter, &matching.unlaunched[i].name, &un_demangled[i]))
            .collect();
        un.sort_by(|&a, &b| {
            let (ka, kb) = (&matching.unlaunched[a], &matching.unlaunched[b]);
            un_demangled[a]
                .cmp(&un_demangled[b])
                .then_with(|| ka.name.cmp(&kb.name))
                .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
        });
        let first = kernels.len() + 1;
        kernels.par_extend(un.par_iter().enumerate().map(|(r, &i)| {
            KernelEntry::from_match_demangled(
                first + r,
                &matching.unlaunched[i],
                un_demangled[i].clone(),
            )
        }));
    }
    (kernels, totals)
}

/// The report's processes: one entry per record.
pub fn process_entries(
    recs: &[xpu_asm_record::read::ProcessRecord],
    locations: &[crate::sources::DumpLocation],
    folders: &[crate::dumps::DumpFolder],
    run: Option<&crate::launch::RunInfo>,
    waited: &[(String, u32, Exit)],
) -> Vec<ProcessEntry> {
    recs.iter()
        .zip(locations.iter().zip(folders))
        .map(|(r, (loc, f))| {
            let from_wait = run
                .filter(|ri| {
                    ri.pid == Some(r.pid) && ri.host.as_ref().map_or(true, |h| *h == r.host)
                })
                .and_then(|ri| ri.exit)
                .or_else(|| {
                    waited
                        .iter()
                        .find(|(h, p, _)| *p == r.pid && *h == r.host)
                        .map(|w| w.2)
                });
            let (exit, ended) = match (from_wait, r.exit_code) {
                (Some(e), _) => (Some(e), "seen by xpu-asm-run".to_string()),
                (None, Some(c)) => (Some(Exit::Code(c)), "exit event in its record".to_string()),
                (None, None) => (
                    None,
                    "unknown: its record has no exit event (killed, crashed, or it ran exec)"
                        .to_string(),
                ),
            };
            ProcessEntry {
                pid: r.pid,
                ppid: r.ppid,
                host: r.host.clone(),
                exe: r.exe.clone(),
                forked_from: r.forked_from,
                dump_dir: loc.shown.clone(),
                dump_dir_exists: f.exists,
                launches: r.kernels.values().map(|k| k.launches).sum(),
                appended: r.kernels.values().map(|k| k.appended).sum(),
                unknown_launches: r.unknown_launches,
                exit,
                ended,
                rank: r.rank.as_ref().map(|k| k.rank),
                local_rank: r.rank.as_ref().and_then(|k| k.local_rank),
                job_id: r.rank.as_ref().and_then(|k| k.job.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_serializes_as_the_contract_says() {
        assert_eq!(
            serde_json::to_string(&Exit::Code(3)).unwrap(),
            r#"{"code":3}"#
        );
        assert_eq!(
            serde_json::to_string(&Exit::Signal(11)).unwrap(),
            r#"{"signal":11}"#
        );
        assert_eq!(Exit::Signal(11).status(), 139);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(10), "10 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
