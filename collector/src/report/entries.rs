//! The report's entries, made from the matching: the launched kernels
//! ranked ([`rank`]), each kernel's entry ([`kernel_entries`]), its
//! launches per rank ([`fill_ranks`]), and the processes
//! ([`process_entries`]).

use super::{Api, Candidate, KernelEntry, ProcessEntry, RankLaunches, Report, Totals};
use crate::capture::run::{Exit, RunInfo};
use crate::kernel_isa::Status;
use crate::matching::{KernelMatch, Matching};
use crate::names;
use std::collections::{BTreeMap, HashMap};

impl KernelEntry {
    pub fn from_match(rank: usize, k: &KernelMatch) -> Self {
        Self::from_owned_match(rank, k.clone(), names::demangle(&k.name))
    }

    /// The entry of `k`, whose fields move into it, with its name already
    /// demangled ([`names::demangle`] of `k.name`).
    pub fn from_owned_match(rank: usize, k: KernelMatch, demangled: String) -> Self {
        // What the chosen file says, before the match's fields move.
        let chosen = k.chosen_file();
        let source = chosen.map(|a| a.source);
        let binary = chosen.and_then(|a| a.binary.clone());
        let isa_note = chosen.and_then(|a| a.binary.as_ref()?.note.clone());
        let asm = chosen.map(|a| a.shown.clone());
        let simd = chosen.and_then(|a| a.name.simd);
        let h = k.header();
        let (grf, instructions, spill_bytes) = (
            h.and_then(|h| h.grf),
            h.and_then(|h| h.instructions),
            h.and_then(|h| h.spill_bytes),
        );
        let (spill_grf_refs, private_memory_bytes) = (
            h.and_then(|h| h.spill_grf_refs),
            h.and_then(|h| h.private_memory_bytes),
        );
        let (platform, ra_type) = (
            h.and_then(|h| h.platform.clone()),
            h.and_then(|h| h.ra_type.clone()),
        );
        let (name, name_hex) = match String::from_utf8(k.name) {
            Ok(s) => (s, None),
            Err(e) => (
                String::from_utf8_lossy(e.as_bytes()).into_owned(),
                Some(xpu_asm_record::hex(e.as_bytes())),
            ),
        };
        let processes = k.processes;
        KernelEntry {
            rank,
            name,
            name_hex,
            demangled,
            module_sha256: k.module_sha256,
            api: k.api.into(),
            launches: k.launches,
            appended: k.appended,
            counts_incomplete: k.counts_incomplete,
            pids: k.pids,
            ranks: Vec::new(),
            launches_by_rank: Vec::new(),
            status: k.status,
            reason: k.reason,
            isa_source: source,
            binary,
            isa_note,
            asm,
            asm_copy: None,
            asm_choice: k.choice,
            asm_candidates: k
                .candidates
                .into_iter()
                .enumerate()
                .map(|(i, a)| Candidate::from_file(&a, processes.get(i).copied().unwrap_or(1)))
                .collect(),
            simd,
            grf,
            instructions,
            spill_bytes,
            platform,
            ra_type,
            spill_grf_refs,
            private_memory_bytes,
            source: None,
            mix: None,
            flow: None,
            flow_reason: None,
            slm_static_bytes: None,
            shapes: Vec::new(),
            other_shapes: None,
            origin: None,
            callers: Vec::new(),
            time: None,
            time_reason: None,
        }
    }
}

/// The launched kernels in report order.
pub struct Ranked {
    /// Each launched kernel's demangled name, by index in `Matching::launched`.
    pub demangled: Vec<String>,
    /// Indices of the launched kernels, by launches (most first), then
    /// appends, then name.
    pub order: Vec<usize>,
}

/// Whether a kernel is shown under `--filter`: its mangled or demangled
/// name matches.
fn passes(filter: &regex::Regex, name: &str, demangled: &str) -> bool {
    filter.is_match(name) || filter.is_match(demangled)
}

/// Ranks the launched kernels (each name demangled once, on every core).
pub fn rank(launched: &[KernelMatch]) -> Ranked {
    use rayon::prelude::*;
    let demangled: Vec<String> = launched
        .par_iter()
        .map(|k| names::demangle(&k.name))
        .collect();
    let mut order: Vec<usize> = (0..launched.len()).collect();
    // Stable, as `sort_by`: the same order.
    order.par_sort_by(|&a, &b| {
        let (ka, kb) = (&launched[a], &launched[b]);
        kb.launches
            .cmp(&ka.launches)
            .then(kb.appended.cmp(&ka.appended))
            .then_with(|| demangled[a].cmp(&demangled[b]))
            .then_with(|| ka.name.cmp(&kb.name))
            .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
            .then_with(|| ka.api.cmp(&kb.api))
    });
    Ranked { demangled, order }
}

/// The totals of the launched kernels among `kernels`, `filtered_out`
/// of the others left out of them.
fn totals_of(kernels: &[KernelEntry], filtered_out: u64) -> Totals {
    let launched = || kernels.iter().filter(|k| k.status != Status::NotLaunched);
    let count = |f: &dyn Fn(&KernelEntry) -> bool| launched().filter(|k| f(k)).count() as u64;
    Totals {
        kernels: count(&|_| true),
        launches: launched().map(|k| k.launches).sum(),
        appended: launched().map(|k| k.appended).sum(),
        matched: count(&|k| k.status == Status::Matched),
        unmatched: count(&|k| k.status != Status::Matched),
        filtered_out,
        incomplete: count(&|k| k.counts_incomplete),
    }
}

/// The report as `--filter` shows it: the kernels whose mangled or
/// demangled name `filter` matches, each with its rank, ISA copy and
/// figures as the whole report has them, and their totals (`filtered_out`
/// the launched kernels left out). The capture's files keep the whole
/// report: a view never rewrites them.
pub fn narrowed(mut r: Report, filter: &regex::Regex) -> Report {
    let launched = r.totals.kernels;
    r.kernels.retain(|k| passes(filter, &k.name, &k.demangled));
    let kept = totals_of(&r.kernels, 0).kernels;
    r.totals = totals_of(&r.kernels, launched.saturating_sub(kept));
    r.filter = Some(filter.as_str().to_string());
    r
}

/// The report's kernel entries, ranked (with `all`, the kernels IGC
/// compiled that nobody launched after them, by name), and their totals.
pub fn kernel_entries(
    matching: Matching,
    order: &[usize],
    mut demangled: Vec<String>,
    all: bool,
) -> (Vec<KernelEntry>, Totals) {
    use rayon::prelude::*;
    let Matching {
        launched,
        unlaunched,
        ..
    } = matching;
    // Each listed kernel's match and demangled name move into its entry
    // (`order` names each kernel once); the others are dropped here.
    let mut launched: Vec<Option<KernelMatch>> = launched.into_iter().map(Some).collect();
    let listed: Vec<(KernelMatch, String)> = order
        .iter()
        .filter_map(|&i| {
            Some((
                launched.get_mut(i)?.take()?,
                std::mem::take(&mut demangled[i]),
            ))
        })
        .collect();
    drop(launched);
    let mut kernels: Vec<KernelEntry> = listed
        .into_par_iter()
        .enumerate()
        .map(|(r, (k, d))| KernelEntry::from_owned_match(r + 1, k, d))
        .collect();
    let totals = totals_of(&kernels, 0);
    if all {
        let mut un: Vec<(KernelMatch, String)> = unlaunched
            .into_par_iter()
            .map(|k| {
                let d = names::demangle(&k.name);
                (k, d)
            })
            .collect();
        un.sort_by(|(ka, da), (kb, db)| {
            da.cmp(db)
                .then_with(|| ka.name.cmp(&kb.name))
                .then_with(|| ka.module_sha256.cmp(&kb.module_sha256))
        });
        let first = kernels.len() + 1;
        kernels.par_extend(
            un.into_par_iter()
                .enumerate()
                .map(|(r, (k, d))| KernelEntry::from_owned_match(first + r, k, d)),
        );
    }
    (kernels, totals)
}

/// The report's processes: one entry per record, with its dump folder as
/// shown and whether it exists (`dump_dirs`, one per record).
pub fn process_entries(
    recs: &[xpu_asm_record::read::ProcessRecord],
    dump_dirs: &[(&str, bool)],
    run: Option<&RunInfo>,
    waited: &[(String, u32, Exit)],
) -> Vec<ProcessEntry> {
    let emulated = run.is_some_and(|r| r.emulate.is_some());
    recs.iter()
        .zip(dump_dirs)
        .map(|(r, &(dump_dir, dump_dir_exists))| {
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
                dump_dir: dump_dir.to_string(),
                dump_dir_exists,
                launches: r.kernels.values().map(|k| k.launches).sum(),
                appended: r.kernels.values().map(|k| k.appended).sum(),
                unknown_launches: r.unknown_launches,
                exit,
                ended,
                rank: r.rank.as_ref().map(|k| k.rank),
                local_rank: r.rank.as_ref().and_then(|k| k.local_rank),
                job_id: r.rank.as_ref().and_then(|k| k.job.clone()),
                counts_incomplete: r.counts_incomplete.clone(),
                counts_kept: counts_kept(r),
                device: super::shapes::device_of(r),
                time: super::time::of_process(r, emulated),
            }
        })
        .collect()
}

/// Where `r`'s counters were kept out of its counts file, grouped by
/// place and reason.
fn counts_kept(r: &xpu_asm_record::read::ProcessRecord) -> Vec<crate::report::CountsKept> {
    let mut kept: Vec<crate::report::CountsKept> = Vec::new();
    for (chunk, p) in &r.counts_kept {
        match kept
            .iter_mut()
            .find(|k| k.place == p.place && k.reason == p.reason)
        {
            Some(k) => k.chunks.push(*chunk),
            None => kept.push(crate::report::CountsKept {
                place: p.place.clone(),
                reason: p.reason.clone(),
                chunks: vec![*chunk],
            }),
        }
    }
    kept
}

/// For the run: each place and reason, with how many processes kept
/// counters there for it.
pub fn counts_kept_in_run(
    processes: &[crate::report::ProcessEntry],
) -> Vec<crate::report::CountsKeptInRun> {
    let mut run: Vec<crate::report::CountsKeptInRun> = Vec::new();
    for k in processes.iter().flat_map(|p| &p.counts_kept) {
        match run
            .iter_mut()
            .find(|r| r.place == k.place && r.reason == k.reason)
        {
            Some(r) => r.processes += 1,
            None => run.push(crate::report::CountsKeptInRun {
                place: k.place.clone(),
                reason: k.reason.clone(),
                processes: 1,
            }),
        }
    }
    run
}

/// A kernel as the report tells kernels apart: name, module SHA-256 and
/// API.
pub type KernelKey = (Vec<u8>, Option<String>, Api);

/// Per kernel, its (launches, appends) by rank.
pub type LaunchesByRank = HashMap<KernelKey, BTreeMap<u32, (u64, u64)>>;

/// Per kernel, its launches and appends per rank, from the records of
/// processes that have a rank.
pub fn launches_by_rank(recs: &[xpu_asm_record::read::ProcessRecord]) -> LaunchesByRank {
    let mut m: HashMap<KernelKey, BTreeMap<u32, (u64, u64)>> = HashMap::new();
    for r in recs {
        let Some(rank) = r.rank.as_ref().map(|k| k.rank) else {
            continue;
        };
        for k in r.kernels.values() {
            if k.launches == 0 && k.appended == 0 {
                continue;
            }
            let module = r.modules.get(&k.module);
            let sha = module.map(|m| m.sha256.clone());
            let api = module.map(|m| Api::from(m.api)).unwrap_or_default();
            let e = m
                .entry((k.name.clone(), sha, api))
                .or_default()
                .entry(rank)
                .or_default();
            e.0 += k.launches;
            e.1 += k.appended;
        }
    }
    m
}

/// Fills each launched kernel's `ranks` and `launches_by_rank`.
pub fn fill_ranks(kernels: &mut [KernelEntry], by_rank: &LaunchesByRank) {
    if by_rank.is_empty() {
        return;
    }
    for k in kernels.iter_mut() {
        let name = match &k.name_hex {
            Some(h) => xpu_asm_record::unhex(h).unwrap_or_default(),
            None => k.name.as_bytes().to_vec(),
        };
        let Some(per) = by_rank.get(&(name, k.module_sha256.clone(), k.api)) else {
            continue;
        };
        k.ranks = per.keys().copied().collect();
        k.launches_by_rank = per
            .iter()
            .map(|(&rank, &(launches, appended))| RankLaunches {
                rank,
                launches,
                appended,
            })
            .collect();
    }
}
