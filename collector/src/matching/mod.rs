//! Ties each launched kernel to the `.asm` IGC wrote for it.
//!
//! A kernel is looked for only among the files of its own module (the
//! module's recorded SPIR-V SHA-256 equals the SHA-256 of a dumped
//! `OCL_asm<hash>.spv`) in its own process's dump folder, and is matched by
//! exact equality of the `//.kernel` line: a kernel whose name is a prefix
//! of another's never takes the other's file, and same-named kernels of
//! different modules each get their own.

use crate::binaries::{ModuleBinaries, Request};
use crate::dumps::{AsmFile, AsmHeader, DumpFolder};
use crate::sources::{IsaSource, IsaSourceKind, Lookup};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use xpu_asm_record::read::ProcessRecord;

/// Why a kernel has, or has not, an ISA file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Its `.asm` was found.
    Matched,
    /// IGC compiled it but the program never launched it (listed with `--all`).
    NotLaunched,
    /// The record has launches of this kernel but not its module.
    ModuleUnknown,
    /// The user set `IGC_ShaderDumpEnable` to a false value.
    DumpsDisabled,
    /// The process's dump folder does not exist.
    DumpFolderMissing,
    /// No dumped `.spv` has the module's SHA-256: compiled before or outside
    /// this run (a persistent cache), or not dumped.
    NotCompiledHere,
    /// The module was dumped but no `.asm` names this kernel.
    NoAsm,
    /// No binary of its module was saved at run time.
    NoBinary,
    /// Its module's binary is an ocloc fat binary without a member for the
    /// device the program ran on.
    DeviceNotInBinary,
    /// Its module's binary has no kernel of this name.
    KernelNotInBinary,
    /// Its module's binary cannot be read (missing, corrupt, unsupported).
    BinaryUnreadable,
    /// IGA's library cannot be loaded.
    IgaMissing,
    /// IGA refused the kernel's code (or its text could not be written).
    IgaFailed,
}

/// One process as the matcher sees it.
pub struct ProcessInput<'a> {
    pub rec: &'a ProcessRecord,
    pub folder: &'a DumpFolder,
}

impl ProcessInput<'_> {
    /// The sources asked for this process's kernels, in order: its dump
    /// folder (unless it ran with `--isa binary`), then module binaries.
    fn sources<'s>(&'s self, binaries: &'s ModuleBinaries) -> Vec<&'s dyn IsaSource> {
        let mut v: Vec<&dyn IsaSource> = Vec::with_capacity(2);
        if !self.rec.isa_binary {
            v.push(self.folder);
        }
        v.push(binaries);
        v
    }
}

/// A kernel (name, module) with everything found for it, across processes.
#[derive(Debug, Clone)]
pub struct KernelMatch {
    pub name: Vec<u8>,
    pub module_sha256: Option<String>,
    pub launches: u64,
    pub appended: u64,
    pub pids: Vec<u32>,
    pub status: Status,
    pub reason: Option<String>,
    /// Every distinct compilation of this kernel in the processes' dump
    /// folders (and module binaries), one file each (see [`fold`]).
    pub candidates: Vec<AsmFile>,
    /// For each candidate, how many processes had that compilation.
    pub processes: Vec<u32>,
    /// The files that are the same compilation as a listed candidate in
    /// another process's folder: not listed, but kept with the candidates
    /// (`--keep launched`).
    pub same_files: Vec<std::path::PathBuf>,
    /// Index into `candidates` of the file the report shows.
    pub chosen: Option<usize>,
    /// Why that one.
    pub choice: Option<String>,
}

impl KernelMatch {
    pub fn chosen_file(&self) -> Option<&AsmFile> {
        self.chosen.and_then(|i| self.candidates.get(i))
    }

    pub fn header(&self) -> Option<&AsmHeader> {
        self.chosen_file().and_then(|a| a.header.as_ref())
    }
}

/// Result of matching.
#[derive(Debug, Clone, Default)]
pub struct Matching {
    /// Kernels launched (or appended) at least once, in no particular order.
    pub launched: Vec<KernelMatch>,
    /// Kernels with a `.asm` that were never launched.
    pub unlaunched: Vec<KernelMatch>,
    pub warnings: Vec<String>,
}

/// Values of `IGC_ShaderDumpEnable` that IGC reads as "off".
fn is_false(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false" | "off" | "no"
    )
}

fn user_env<'a>(rec: &'a ProcessRecord, name: &str) -> Option<&'a str> {
    rec.env
        .iter()
        .find(|e| e.by_user && e.name == name)
        .map(|e| e.value.as_str())
}

struct PerProcess<'a> {
    pid: u32,
    launches: u64,
    appended: u64,
    status: Status,
    reason: Option<String>,
    candidates: Vec<&'a AsmFile>,
}

fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// What one process's launch of a kernel found.
type OneMatch<'a> = (Option<String>, Status, Option<String>, Vec<&'a AsmFile>);

/// Looks up one launched kernel of one process in each source in turn.
fn match_one<'a>(
    p: &'a ProcessInput<'a>,
    binaries: &'a ModuleBinaries,
    name: &[u8],
    module_id: u32,
) -> OneMatch<'a> {
    let rec = p.rec;
    let Some(module) = rec.modules.get(&module_id) else {
        return (
            None,
            Status::ModuleUnknown,
            Some(format!(
                "its module (id {module_id}) is not in the record of process {}; the record may be truncated",
                rec.pid
            )),
            vec![],
        );
    };
    let sha = Some(module.sha256.to_ascii_lowercase()).filter(|s| !s.is_empty());
    let mut misses: Vec<(IsaSourceKind, Status, String)> = Vec::new();
    for source in p.sources(binaries) {
        match source.find(rec, module, name) {
            Lookup::Found(files) => return (sha, Status::Matched, None, files),
            Lookup::Missing(status, why) => misses.push((source.kind(), status, why)),
        }
    }
    let (status, why) = explain(module, misses);
    (sha, status, Some(why), vec![])
}

/// The status and reason of a kernel no source had: the binary's, which
/// is what remains to be fixed, with the dump's reason after it; the dump's
/// alone for a SPIR-V module of a record that predates module binaries.
fn explain(
    module: &xpu_asm_record::read::Module,
    misses: Vec<(IsaSourceKind, Status, String)>,
) -> (Status, String) {
    let dump = misses.iter().find(|m| m.0 == IsaSourceKind::IgcDump);
    let binary = misses.iter().find(|m| m.0 == IsaSourceKind::ModuleBinary);
    match (dump, binary) {
        (Some(d), _) if module.binary.is_none() && module.format == "spirv" => (d.1, d.2.clone()),
        (Some(d), Some(b)) if module.format == "spirv" => (
            b.1,
            format!("{}; and IGC's dumps have no .asm of it: {}", b.2, d.2),
        ),
        (_, Some(b)) => (b.1, b.2.clone()),
        (Some(d), None) => (d.1, d.2.clone()),
        (None, None) => (Status::NoBinary, "no source of ISA was asked".into()),
    }
}

/// The `.asm` files IGC dumped for kernel `name` of `module` in `folder`.
pub fn find_in_dumps<'a>(
    folder: &'a DumpFolder,
    rec: &ProcessRecord,
    module: &xpu_asm_record::read::Module,
    name: &[u8],
) -> Lookup<'a> {
    let sha = Some(module.sha256.to_ascii_lowercase()).filter(|s| !s.is_empty());
    if module.format != "spirv" {
        let what = if module.format == "native" {
            "a native binary (ZE_MODULE_FORMAT_NATIVE)".to_string()
        } else {
            format!("of format {:?}, not SPIR-V", module.format)
        };
        return Lookup::Missing(
            Status::NotCompiledHere,
            format!(
                "its module is {what}: IGC does not compile it at run time, so there is no dump"
            ),
        );
    }
    if let Some(v) = user_env(rec, "IGC_ShaderDumpEnable").filter(|v| is_false(v)) {
        return Lookup::Missing(
            Status::DumpsDisabled,
            format!(
                "IGC_ShaderDumpEnable was set to {v:?} by the user, so IGC wrote no dumps; unset it and run again"
            ),
        );
    }
    if !folder.exists {
        let mut why = format!(
            "the dump folder {} does not exist: IGC compiled nothing in process {}",
            folder.shown, rec.pid
        );
        if let Some(d) = user_env(rec, "IGC_DumpToCustomDir") {
            why.push_str(&format!(
                " there, or wrote elsewhere (IGC_DumpToCustomDir was set by the user to {d:?})"
            ));
        } else {
            why.push_str(" (every module came from a cache, or IGC did not run)");
        }
        return Lookup::Missing(Status::DumpFolderMissing, why);
    }
    let Some(sha_s) = sha.as_deref() else {
        return Lookup::Missing(
            Status::NotCompiledHere,
            "the record has no SHA-256 for its module, so its dumps cannot be found".into(),
        );
    };
    if !folder.has_module(sha_s) {
        let mut why = format!(
            "no OCL_asm*.spv in {} has its module's SHA-256 ({}…): the module was compiled before or outside this run (a persistent cache) or IGC did not dump it",
            folder.shown,
            short_sha(sha_s)
        );
        for var in ["NEO_CACHE_PERSISTENT", "SYCL_CACHE_PERSISTENT"] {
            if let Some(v) = user_env(rec, var) {
                why.push_str(&format!("; {var} was set by the user to {v:?}"));
            }
        }
        return Lookup::Missing(Status::NotCompiledHere, why);
    }
    let candidates = folder.kernel_asm(sha_s, name);
    if candidates.is_empty() {
        let module_files = folder.module_asm(sha_s).count();
        let hashes = folder
            .spv_by_sha
            .get(sha_s)
            .map(|h| h.join(", "))
            .unwrap_or_default();
        return Lookup::Missing(
            Status::NoAsm,
            format!(
                "IGC dumped its module (OCL_asm{hashes}.spv in {}) but none of that module's {} .asm files has this exact `//.kernel` line",
                folder.shown, module_files
            ),
        );
    }
    Lookup::Found(candidates)
}

/// The kernels whose ISA must come from their module's binary: every
/// launched kernel that its process's dumps do not have (all of them for
/// a process that ran with `--isa binary`).
pub fn binary_requests(procs: &[ProcessInput]) -> Vec<Request> {
    let jobs: Vec<(&ProcessInput, &xpu_asm_record::read::Kernel)> = procs
        .iter()
        .flat_map(|p| launched_kernels(p.rec).map(move |k| (p, k)))
        .collect();
    jobs.par_iter()
        .filter_map(|(p, k)| {
            let module = p.rec.modules.get(&k.module)?;
            if !p.rec.isa_binary
                && matches!(p.folder.find(p.rec, module, &k.name), Lookup::Found(_))
            {
                return None;
            }
            crate::binaries::request(p.rec, module, &k.name).ok()
        })
        .collect()
}

/// Picks the file the report shows among a kernel's `.asm` files, and says why.
///
/// IGC leaves several `.asm` for one kernel when it compiled it more than
/// once: a retry of the whole module after spills (`_1_`, `_2_` in the
/// name), or more than one SIMD width. The rule, best evidence first:
///
/// 1. A file whose machine code (`.dat`) is byte-identical to the final
///    binary IGC emitted (`.kernbin`): that is the code that runs.
/// 2. Otherwise the latest retry: IGC's RetryManager keeps the retry's code
///    unless it spills much more than the attempt before.
/// 3. Then the widest SIMD: IGC tries the widest width first and finishes a
///    narrower one only when the wider one aborted on spills (an aborted
///    width leaves no `.asm`).
pub fn choose(cands: &[AsmFile]) -> Option<(usize, String)> {
    choose_among(&cands.iter().collect::<Vec<_>>())
}

/// [`choose`] over borrowed files.
fn choose_among(cands: &[&AsmFile]) -> Option<(usize, String)> {
    if cands.is_empty() {
        return None;
    }
    let verified = cands.iter().any(|c| c.final_binary == Some(true));
    let key = |c: &AsmFile| {
        (
            !verified || c.final_binary == Some(true),
            c.name.retry,
            c.name.simd.unwrap_or(0),
            c.file_name.clone(),
        )
    };
    let best = (0..cands.len()).max_by_key(|&i| key(cands[i]))?;
    let b = &cands[best];
    if let Some(o) = &b.binary {
        let member = o
            .fat_entry
            .as_ref()
            .map(|e| format!(", fat binary member {e}"))
            .unwrap_or_default();
        return Some((
            best,
            format!(
                "disassembled by IGA from its module's binary ({}{member}, modules/{}.bin), which is the code the driver ran",
                o.format,
                short_sha(&o.sha256)
            ),
        ));
    }
    if cands.len() == 1 {
        let why = match b.final_binary {
            Some(true) => "the only .asm IGC wrote for this kernel; its machine code is the final binary IGC emitted",
            _ => "the only .asm IGC wrote for this kernel",
        };
        return Some((best, why.to_string()));
    }
    let others = cands.len() - 1;
    if verified {
        return Some((
            best,
            format!(
                "its machine code (.dat) is byte-identical to the final binary IGC emitted (.kernbin); {others} other attempt(s) listed"
            ),
        ));
    }
    let spill = |c: &AsmFile| c.header.as_ref().and_then(|h| h.spill_bytes).unwrap_or(0);
    let mut why = if cands.iter().any(|c| c.name.retry != b.name.retry) {
        format!(
            "the latest of IGC's compilations (retry {}); IGC keeps a retry unless it spills much more than the attempt before",
            b.name.retry
        )
    } else {
        "the widest SIMD width IGC finished (it finishes a narrower width only when a wider one aborts on spills)"
            .to_string()
    };
    if cands.iter().any(|c| spill(c) < spill(b)) {
        why.push_str(
            "; this one spills more than another attempt, so IGC may have kept that one instead",
        );
    }
    why.push_str("; no final binary was left in the dump to confirm");
    Some((best, why))
}

/// Matches every launched kernel of every process, merges them by (name,
/// module SHA-256), and collects the compiled kernels nobody launched.
pub fn match_all(procs: &[ProcessInput], binaries: &ModuleBinaries) -> Matching {
    match_all_listing(procs, binaries, true)
}

/// [`match_all`]; without `list_unlaunched`, the kernels nobody launched
/// are only counted: their entries have no files (nor a choice among them).
pub fn match_all_listing(
    procs: &[ProcessInput],
    binaries: &ModuleBinaries,
    list_unlaunched: bool,
) -> Matching {
    let mut out = Matching::default();
    // (name, module key) -> per-process findings
    type Key<'a> = (&'a [u8], String);
    let mut launched: BTreeMap<Key, (Option<String>, Vec<PerProcess>)> = BTreeMap::new();
    // Every launched kernel of every process looked up on every core, then
    // merged in order.
    let jobs: Vec<(&ProcessInput, &xpu_asm_record::read::Kernel)> = procs
        .iter()
        .flat_map(|p| launched_kernels(p.rec).map(move |k| (p, k)))
        .collect();
    let found: Vec<OneMatch> = jobs
        .par_iter()
        .map(|(p, k)| match_one(p, binaries, &k.name, k.module))
        .collect();
    let mut found = found.into_iter().zip(jobs.iter().map(|(_, k)| k));
    for p in procs {
        warn_same_spirv_different_flags(p.rec, &mut out.warnings);
        for ((sha, status, reason, candidates), k) in
            found.by_ref().take(launched_kernels(p.rec).count())
        {
            let module_key = match &sha {
                Some(s) => s.clone(),
                // Without a hash, a module is only itself.
                None => format!("pid {} module {}", p.rec.pid, k.module),
            };
            let e = launched
                .entry((k.name.as_slice(), module_key))
                .or_insert_with(|| (sha, Vec::new()));
            e.1.push(PerProcess {
                pid: p.rec.pid,
                launches: k.launches,
                appended: k.appended,
                status,
                reason,
                candidates,
            });
        }
        if p.rec.unknown_launches > 0 {
            out.warnings.push(format!(
                "process {}: {} launches of kernel handles whose creation was not seen \
                 (created before the interposer loaded, or through a path it does not wrap); \
                 they are not attributed to any kernel",
                p.rec.pid, p.rec.unknown_launches
            ));
        }
    }

    let launched: Vec<_> = launched.into_iter().collect();
    let merged: Vec<(KernelMatch, Option<String>)> = launched
        .par_iter()
        .map(|((name, _), (sha, per))| merge_processes(name, sha, per))
        .collect();
    drop(launched);
    out.launched.reserve(merged.len());
    for (k, warning) in merged {
        out.warnings.extend(warning);
        out.launched.push(k);
    }

    let launched_keys: std::collections::HashSet<(&[u8], Option<&str>)> = out
        .launched
        .iter()
        .map(|k| (k.name.as_slice(), k.module_sha256.as_deref()))
        .collect();
    // (name, module key) -> (module SHA-256, pids, (folder, file))
    type Found<'a> = (Option<&'a String>, Vec<u32>, Vec<(usize, &'a AsmFile)>);
    let mut unlaunched: BTreeMap<(&[u8], Cow<str>), Found> = BTreeMap::new();
    let mut folders_seen = std::collections::BTreeSet::new();
    for (folder, p) in procs.iter().enumerate() {
        // A forked child shares its parent's folder; the files are the parent's.
        if !folders_seen.insert(&p.folder.path) {
            continue;
        }
        for a in &p.folder.asm {
            let Some(name) = a.header.as_ref().and_then(|h| h.kernel.as_deref()) else {
                continue;
            };
            let sha = p.folder.sha_by_hash.get(&a.name.hash);
            if launched_keys.contains(&(name, sha.map(String::as_str))) {
                continue;
            }
            let module_key = match sha {
                Some(s) => Cow::Borrowed(s.as_str()),
                None => Cow::Owned(format!("asm{}", a.name.hash)),
            };
            let e = unlaunched
                .entry((name, module_key))
                .or_insert_with(|| (sha, Vec::new(), Vec::new()));
            if !e.1.contains(&p.rec.pid) {
                e.1.push(p.rec.pid);
            }
            e.2.push((folder, a));
        }
    }
    let unlaunched: Vec<_> = unlaunched.into_iter().collect();
    out.unlaunched = unlaunched
        .par_iter()
        .map(|((name, _), (sha, pids, files))| {
            let mut pids = pids.clone();
            pids.sort_unstable();
            let files = if list_unlaunched {
                files.clone()
            } else {
                Vec::new()
            };
            let folded = fold(files, None);
            let listed: Vec<&AsmFile> = folded.listed.iter().map(|l| l.0).collect();
            let pick = choose_among(&listed);
            KernelMatch {
                name: name.to_vec(),
                module_sha256: sha.cloned(),
                launches: 0,
                appended: 0,
                pids,
                status: Status::NotLaunched,
                reason: Some("IGC compiled it; the program never launched it".into()),
                chosen: pick.as_ref().map(|p| p.0),
                choice: pick.map(|p| p.1),
                candidates: listed.into_iter().cloned().collect(),
                processes: folded.listed.iter().map(|l| l.1).collect(),
                same_files: Vec::new(),
            }
        })
        .collect();
    out
}

/// The kernels `rec` launched (or appended) at least once.
fn launched_kernels(rec: &ProcessRecord) -> impl Iterator<Item = &xpu_asm_record::read::Kernel> {
    rec.kernels
        .values()
        .filter(|k| k.launches != 0 || k.appended != 0)
}

/// One launched kernel's findings in each process that launched it, as one
/// entry, and a warning when the processes compiled it differently.
fn merge_processes(
    name: &[u8],
    sha: &Option<String>,
    per: &[PerProcess],
) -> (KernelMatch, Option<String>) {
    // The process that launched it most speaks for it; ties: lowest pid.
    let mut per: Vec<&PerProcess> = per.iter().collect();
    per.sort_by(|a, b| {
        (
            a.status != Status::Matched,
            std::cmp::Reverse(a.launches),
            a.pid,
        )
            .cmp(&(
                b.status != Status::Matched,
                std::cmp::Reverse(b.launches),
                b.pid,
            ))
    });
    let mut pids: Vec<u32> = per.iter().map(|p| p.pid).collect();
    pids.sort_unstable();
    pids.dedup();
    let lead = per[0];
    let mut km = KernelMatch {
        name: name.to_vec(),
        module_sha256: sha.clone(),
        launches: per.iter().map(|p| p.launches).sum(),
        appended: per.iter().map(|p| p.appended).sum(),
        pids,
        status: lead.status,
        reason: lead.reason.clone(),
        candidates: Vec::new(),
        processes: Vec::new(),
        same_files: Vec::new(),
        chosen: None,
        choice: None,
    };
    let mut warning = None;
    if lead.status == Status::Matched {
        // Choose within the leading process; list every process's
        // compilations.
        let pick = choose_among(&lead.candidates);
        let all: Vec<(usize, &AsmFile)> = per
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.candidates.iter().map(move |a| (i, *a)))
            .collect();
        let chosen = pick.as_ref().map(|(i, _)| lead.candidates[*i]);
        let folded = fold(all, chosen.map(|a| a.shown.as_str()));
        if let (Some((_, why)), Some(c)) = (pick, chosen) {
            km.chosen = folded.listed.iter().position(|l| l.0.shown == c.shown);
            km.choice = Some(why);
            warning = disagreement(name, c, &folded.listed);
        }
        km.processes = folded.listed.iter().map(|l| l.1).collect();
        km.candidates = folded.listed.into_iter().map(|l| l.0.clone()).collect();
        km.same_files = folded.same.into_iter().map(|a| a.path.clone()).collect();
    }
    (km, warning)
}

/// What makes two processes' `.asm` files the same compilation of a kernel:
/// the same file in IGC's dump folder (its name says module hash, retry,
/// SIMD and entry) with the same figures in its header. A module binary's
/// file is already one per binary content: its path says it all.
type Compilation<'a> = (
    IsaSourceKind,
    &'a str,
    Option<u32>,
    u32,
    Option<u64>,
    Option<u64>,
);

fn compilation(a: &AsmFile) -> Compilation<'_> {
    let h = a.header.as_ref();
    let file = match a.source {
        IsaSourceKind::ModuleBinary => a.shown.as_str(),
        _ => a.file_name.as_str(),
    };
    (
        a.source,
        file,
        a.name.simd,
        a.name.retry,
        h.and_then(|h| h.instructions),
        h.and_then(|h| h.spill_bytes),
    )
}

/// A kernel's files over processes, each compilation once.
struct Folded<'a> {
    /// One file per compilation, by path, with how many processes had it.
    listed: Vec<(&'a AsmFile, u32)>,
    /// The other processes' files of a listed compilation.
    same: Vec<&'a AsmFile>,
}

/// Folds `files` (each with the index of the process it is of) into one
/// file per compilation: the first by path, or `chosen` when that is one
/// of them. A file two processes share (a forked child writes into its
/// parent's folder) counts for both and is listed once.
fn fold<'a>(mut files: Vec<(usize, &'a AsmFile)>, chosen: Option<&str>) -> Folded<'a> {
    files.sort_by(|a, b| (a.1.shown.as_str(), a.0).cmp(&(b.1.shown.as_str(), b.0)));
    files.dedup_by(|a, b| a.0 == b.0 && a.1.shown == b.1.shown);
    let mut listed: Vec<(&AsmFile, u32)> = Vec::new();
    let mut same: Vec<&AsmFile> = Vec::new();
    let mut group: HashMap<Compilation, usize> = HashMap::new();
    for (_, a) in files {
        match group.entry(compilation(a)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(listed.len());
                listed.push((a, 1));
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                let l = &mut listed[*o.get()];
                l.1 += 1;
                if l.0.shown == a.shown {
                    continue;
                }
                if chosen == Some(a.shown.as_str()) {
                    same.push(std::mem::replace(&mut l.0, a));
                } else {
                    same.push(a);
                }
            }
        }
    }
    listed.sort_by(|a, b| a.0.shown.cmp(&b.0.shown));
    Folded { listed, same }
}

/// The warning for a kernel whose processes compiled the chosen file
/// differently (other instruction count, SIMD, retry, spills, binary), so
/// that different ranks ran different code; `None` when they agree.
fn disagreement(name: &[u8], chosen: &AsmFile, listed: &[(&AsmFile, u32)]) -> Option<String> {
    let mut rivals: Vec<&(&AsmFile, u32)> = listed
        .iter()
        .filter(|l| l.0.source == chosen.source && l.0.file_name == chosen.file_name)
        .collect();
    if rivals.len() < 2 {
        return None;
    }
    // Most processes first; the chosen file's compilation first among equals.
    rivals.sort_by_key(|l| (std::cmp::Reverse(l.1), l.0.shown != chosen.shown));
    let figures = |a: &AsmFile| {
        let h = a.header.as_ref();
        (
            h.and_then(|h| h.instructions),
            a.name.simd,
            a.name.retry,
            h.and_then(|h| h.spill_bytes),
        )
    };
    let all: Vec<_> = rivals.iter().map(|l| figures(l.0)).collect();
    let instructions = all.iter().any(|f| f.0 != all[0].0);
    let simd = all.iter().any(|f| f.1 != all[0].1);
    let retry = all.iter().any(|f| f.2 != all[0].2);
    let spill = all.iter().any(|f| f.3 != all[0].3);
    let opt = |v: Option<u64>| v.map_or("an unknown number of".to_string(), |v| v.to_string());
    let parts: Vec<String> = rivals
        .iter()
        .enumerate()
        .map(|(i, (a, n))| {
            let f = all[i];
            let mut what = Vec::new();
            if instructions {
                what.push(format!("{} instructions", opt(f.0)));
            }
            if simd {
                what.push(f.1.map_or("no SIMD width".into(), |s| format!("SIMD{s}")));
            }
            if retry {
                what.push(format!("retry {}", f.2));
            }
            if spill {
                what.push(format!("{} spill bytes", opt(f.3)));
            }
            if what.is_empty() {
                return format!("{n} with the code of {}", a.shown);
            }
            let mut s = format!("{n} with {}", what.join(", "));
            // Where to look at a version the report does not show.
            if a.shown != chosen.shown {
                s.push_str(&format!(" ({})", a.shown));
            }
            s
        })
        .collect();
    Some(format!(
        "kernel {}: processes compiled it differently: {}; the report shows {}",
        crate::names::escape_for_terminal(&crate::names::demangle(name)),
        parts.join(", "),
        chosen.shown
    ))
}

fn warn_same_spirv_different_flags(rec: &ProcessRecord, warnings: &mut Vec<String>) {
    let mut by_sha: BTreeMap<&str, Vec<&xpu_asm_record::read::Module>> = BTreeMap::new();
    for m in rec.modules.values() {
        if m.format == "spirv" && !m.sha256.is_empty() {
            by_sha.entry(m.sha256.as_str()).or_default().push(m);
        }
    }
    for (sha, mods) in by_sha {
        let first = mods[0];
        if let Some(other) = mods.iter().find(|m| m.build_flags != first.build_flags) {
            warnings.push(format!(
                "process {}: modules {} and {} have the same SPIR-V ({}…) but different build flags ({:?}, {:?}); IGC names dumps by the SPIR-V alone, so the later build's files replaced the earlier's",
                rec.pid,
                first.id,
                other.id,
                short_sha(sha),
                first.build_flags,
                other.build_flags
            ));
        }
    }
}
