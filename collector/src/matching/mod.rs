//! Ties each launched kernel to the `.asm` IGC wrote for it.
//!
//! A kernel is looked for only among the files of its own module (the
//! module's recorded SPIR-V SHA-256 equals the SHA-256 of a dumped
//! `OCL_asm<hash>.spv`) in its own process's dump folder, and is matched by
//! exact equality of the `//.kernel` line: a kernel whose name is a prefix
//! of another's never takes the other's file, and same-named kernels of
//! different modules each get their own.

pub mod choice;

use crate::names::short_sha;
use crate::sources::binaries::{self, ModuleBinaries, Request};
use crate::sources::borrowed::Borrowed;
use crate::sources::dumps::DumpFolder;
use crate::sources::{AsmFile, IsaSource, IsaSourceKind, Lookup, Status};
use choice::{choose_among, disagreement, fold};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use xpu_asm_isa::fast::FastSet;
use xpu_asm_isa::header::AsmHeader;
use xpu_asm_record::read::{Api, ProcessRecord};

/// One process as the matcher sees it.
pub struct ProcessInput<'a> {
    pub rec: &'a ProcessRecord,
    pub folder: &'a DumpFolder,
}

impl ProcessInput<'_> {
    /// The sources asked for this process's kernels, in order: its dump
    /// folder (unless it ran with `--isa binary`; a rank that left its
    /// dumps to rank 0: rank 0's of the same code), then module binaries.
    fn sources<'s>(
        &'s self,
        binaries: &'s ModuleBinaries,
        borrowed: &'s Borrowed<'s>,
    ) -> Vec<&'s dyn IsaSource> {
        let mut v: Vec<&dyn IsaSource> = Vec::with_capacity(2);
        if !self.rec.isa_binary {
            v.push(self.folder);
        } else if self.rec.dumps_by.is_some() {
            v.push(borrowed);
        }
        v.push(binaries);
        v
    }
}

/// The dumps processes may borrow (see [`Borrowed`]).
fn borrowed<'a>(procs: &'a [ProcessInput<'a>]) -> Borrowed<'a> {
    Borrowed::of(procs.iter().map(|p| (p.rec, p.folder)))
}

/// A kernel (name, module) with everything found for it, across processes.
#[derive(Debug, Clone)]
pub struct KernelMatch {
    pub name: Vec<u8>,
    pub module_sha256: Option<String>,
    /// The API its module was made through: the same SPIR-V made into a
    /// Level Zero module and an OpenCL program is two kernels.
    pub api: Api,
    pub launches: u64,
    pub appended: u64,
    /// Some process's counts of it are not whole.
    pub counts_incomplete: bool,
    pub pids: Vec<u32>,
    pub status: Status,
    pub reason: Option<String>,
    /// Every distinct compilation of this kernel in the processes' dump
    /// folders (and module binaries), one file each (see [`fold`]).
    pub candidates: Vec<Arc<AsmFile>>,
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
        self.chosen
            .and_then(|i| self.candidates.get(i))
            .map(|a| &**a)
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
    /// Kernels with a `.asm` that were never launched: how many, and
    /// each one when they are listed.
    pub unlaunched_count: u64,
    pub unlaunched: Vec<KernelMatch>,
    pub warnings: Vec<String>,
}

struct PerProcess<'a> {
    pid: u32,
    launches: u64,
    appended: u64,
    incomplete: bool,
    status: Status,
    reason: Option<String>,
    candidates: Vec<&'a Arc<AsmFile>>,
}

/// What one process's launch of a kernel found.
type OneMatch<'a> = (
    Option<String>,
    Status,
    Option<String>,
    Vec<&'a Arc<AsmFile>>,
);

/// Looks up one launched kernel of one process in each source in turn.
fn match_one<'a>(
    p: &'a ProcessInput<'a>,
    binaries: &'a ModuleBinaries,
    borrowed: &'a Borrowed<'a>,
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
    for source in p.sources(binaries, borrowed) {
        if let (IsaSourceKind::IgcDump, Some(free)) = (source.kind(), module.space_left) {
            misses.push((source.kind(), Status::NoSpace, no_space(free)));
            continue;
        }
        match source.find(rec, module, name) {
            Lookup::Found(files) => return (sha, Status::Matched, None, files),
            Lookup::Missing(status, why) => misses.push((source.kind(), status, why)),
        }
    }
    let (status, why) = explain(module, misses);
    (sha, status, Some(why), vec![])
}

/// Why the dumps of a module built on a (nearly) full filesystem are not
/// taken.
fn no_space(free: u64) -> String {
    format!(
        "its module was built when the dump folder's filesystem had {free} bytes left: \
         IGC's dumps of it may be missing or cut (no space), so none is taken"
    )
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
        (Some(d), Some(b)) if d.1 == Status::NoSpace => {
            (d.1, format!("{}; and its module binary: {}", d.2, b.2))
        }
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

/// The kernels whose ISA must come from their module's binary: every
/// launched kernel that its process's dumps do not have (all of them for
/// a process that ran with `--isa binary`).
pub fn binary_requests(procs: &[ProcessInput]) -> Vec<Request> {
    let lent = borrowed(procs);
    let jobs: Vec<(&ProcessInput, &xpu_asm_record::read::Kernel)> = procs
        .iter()
        .flat_map(|p| launched_kernels(p.rec).map(move |k| (p, k)))
        .collect();
    jobs.par_iter()
        .filter_map(|(p, k)| {
            let module = p.rec.modules.get(&k.module)?;
            if !p.rec.isa_binary
                && module.space_left.is_none()
                && matches!(p.folder.find(p.rec, module, &k.name), Lookup::Found(_))
            {
                return None;
            }
            if p.rec.dumps_by.is_some()
                && matches!(lent.find(p.rec, module, &k.name), Lookup::Found(_))
            {
                return None;
            }
            binaries::request(p.rec, module, &k.name).ok()
        })
        .collect()
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
    let lent = borrowed(procs);
    let launched = by_kernel(procs, binaries, &lent, &mut out.warnings);
    let merged: Vec<(KernelMatch, Option<String>)> = launched
        .par_iter()
        .map(|((name, _, api), (sha, per))| merge_processes(name, sha, *api, per))
        .collect();
    drop(launched);
    out.launched.reserve(merged.len());
    for (k, warning) in merged {
        out.warnings.extend(warning);
        out.launched.push(k);
    }
    (out.unlaunched_count, out.unlaunched) = unlaunched(procs, &out.launched, list_unlaunched);
    out
}

/// A kernel as matching tells kernels apart: name, module key and API.
type Key<'a> = (&'a [u8], String, Api);

/// Each kernel's module SHA-256 (the first process's) and each process's
/// findings, by key.
type ByKernel<'a> = Vec<(Key<'a>, (Option<String>, Vec<PerProcess<'a>>))>;

/// Every launched kernel of every process looked up on every core, then
/// put together in order, by (name, module key): each process's findings,
/// in process order (the kernels sorted on every core, stably, as a tree
/// of them would have them: one insertion at a time was a tenth of a
/// second of one thread). Warnings about the processes go to `warnings`.
fn by_kernel<'a>(
    procs: &'a [ProcessInput],
    binaries: &'a ModuleBinaries,
    lent: &'a Borrowed<'a>,
    warnings: &mut Vec<String>,
) -> ByKernel<'a> {
    let jobs: Vec<(&ProcessInput, &xpu_asm_record::read::Kernel)> = procs
        .iter()
        .flat_map(|p| launched_kernels(p.rec).map(move |k| (p, k)))
        .collect();
    let found: Vec<OneMatch> = jobs
        .par_iter()
        .map(|(p, k)| match_one(p, binaries, lent, &k.name, k.module))
        .collect();
    let mut found = found.into_iter().zip(jobs.iter().map(|(_, k)| k));
    let mut each: Vec<(Key, Option<String>, PerProcess)> = Vec::with_capacity(jobs.len());
    for p in procs {
        warn_same_spirv_different_flags(p.rec, warnings);
        for ((sha, status, reason, candidates), k) in
            found.by_ref().take(launched_kernels(p.rec).count())
        {
            let module_key = match &sha {
                Some(s) => s.clone(),
                // Without a hash, a module is only itself.
                None => format!("pid {} module {}", p.rec.pid, k.module),
            };
            let per = PerProcess {
                pid: p.rec.pid,
                launches: k.launches,
                appended: k.appended,
                incomplete: k.incomplete,
                status,
                reason,
                candidates,
            };
            let api = p
                .rec
                .modules
                .get(&k.module)
                .map(|m| m.api)
                .unwrap_or_default();
            each.push(((k.name.as_slice(), module_key, api), sha, per));
        }
        if p.rec.unknown_launches > 0 {
            warnings.push(format!(
                "process {}: {} launches of kernel handles whose creation was not seen \
                 (created before the interposer loaded, or through a path it does not wrap); \
                 they are not attributed to any kernel",
                p.rec.pid, p.rec.unknown_launches
            ));
        }
    }
    each.par_sort_by(|a, b| a.0.cmp(&b.0));
    let mut launched: ByKernel = Vec::new();
    for (key, sha, per) in each {
        match launched.last_mut() {
            Some(last) if last.0 == key => last.1 .1.push(per),
            // The first process's SHA-256 speaks for the kernel.
            _ => launched.push((key, (sha, vec![per]))),
        }
    }
    launched
}

/// The kernels with an `.asm` in the processes' dump folders that no
/// process launched; their files only with `list_unlaunched`.
fn unlaunched(
    procs: &[ProcessInput],
    launched: &[KernelMatch],
    list_unlaunched: bool,
) -> (u64, Vec<KernelMatch>) {
    let mut launched_keys: FastSet<(&[u8], Option<&str>)> = FastSet::default();
    launched_keys.extend(
        launched
            .iter()
            .map(|k| (k.name.as_slice(), k.module_sha256.as_deref())),
    );
    let mut folders_seen = std::collections::BTreeSet::new();
    // Every file of every folder (a forked child shares its parent's
    // folder; the files are the parent's), in order.
    let files: Vec<(usize, &ProcessInput, &Arc<AsmFile>)> = procs
        .iter()
        .enumerate()
        .filter(|(_, p)| folders_seen.insert(&p.folder.path))
        .flat_map(|(folder, p)| p.folder.asm.iter().map(move |a| (folder, p, a)))
        .collect();
    // (name, module key), module SHA-256, pid, (folder, file) of each
    // file of a kernel nobody launched, in order, then sorted (stably).
    type UnKey<'a> = (&'a [u8], Cow<'a, str>);
    type One<'a> = (
        UnKey<'a>,
        Option<&'a String>,
        u32,
        (usize, &'a Arc<AsmFile>),
    );
    let mut each: Vec<One> = files
        .par_iter()
        .filter_map(|&(folder, p, a)| {
            let name = a.header.as_ref().and_then(|h| h.kernel.as_deref())?;
            let sha = p.folder.sha_by_hash.get(&a.name.hash);
            if launched_keys.contains(&(name, sha.map(String::as_str))) {
                return None;
            }
            let module_key = match sha {
                Some(s) => Cow::Borrowed(s.as_str()),
                None => Cow::Owned(format!("asm{}", a.name.hash)),
            };
            Some(((name, module_key), sha, p.rec.pid, (folder, a)))
        })
        .collect();
    drop(files);
    if !list_unlaunched {
        // Only how many: the distinct keys, not sorted.
        let keys: FastSet<&UnKey> = each.iter().map(|e| &e.0).collect();
        return (keys.len() as u64, Vec::new());
    }
    each.par_sort_by(|a, b| a.0.cmp(&b.0));
    // One kernel per (name, module key), to be listed:
    // (name, module key) -> (module SHA-256, pids, (folder, file))
    let mut unlaunched: Vec<(UnKey, Found)> = Vec::new();
    for (key, sha, pid, file) in each {
        if unlaunched.last().map_or(true, |last| last.0 != key) {
            unlaunched.push((key, (sha, Vec::new(), Vec::new())));
        }
        if let Some((_, e)) = unlaunched.last_mut() {
            if !e.1.contains(&pid) {
                e.1.push(pid);
            }
            e.2.push(file);
        }
    }
    let opencl = opencl_modules(procs);
    let listed = unlaunched
        .par_iter()
        .map(|((name, _), found)| {
            let api = match found.0.is_some_and(|s| opencl.contains(s.as_str())) {
                true => Api::OpenCl,
                false => Api::LevelZero,
            };
            unlaunched_match(name, found, api)
        })
        .collect();
    (unlaunched.len() as u64, listed)
}

/// The SHA-256s of the modules of OpenCL programs: dumps do not say their
/// API, a module of an OpenCL program does.
fn opencl_modules<'a>(procs: &'a [ProcessInput]) -> FastSet<&'a str> {
    procs
        .iter()
        .flat_map(|p| p.rec.modules.values())
        .filter(|m| m.api == Api::OpenCl)
        .map(|m| m.sha256.as_str())
        .collect()
}

/// A kernel of a module's files that no process launched: its module's
/// SHA-256, the pids and the files.
type Found<'a> = (Option<&'a String>, Vec<u32>, Vec<(usize, &'a Arc<AsmFile>)>);

/// The entry of kernel `name` that no process launched.
fn unlaunched_match(name: &[u8], found: &Found, api: Api) -> KernelMatch {
    let (sha, pids, files) = found;
    let mut pids = pids.clone();
    pids.sort_unstable();
    let folded = fold(files.clone(), None);
    let listed: Vec<&Arc<AsmFile>> = folded.listed.iter().map(|l| l.0).collect();
    let pick = choose_among(&listed);
    KernelMatch {
        name: name.to_vec(),
        module_sha256: sha.cloned(),
        api,
        launches: 0,
        appended: 0,
        counts_incomplete: false,
        pids,
        status: Status::NotLaunched,
        reason: Some("IGC compiled it; the program never launched it".into()),
        chosen: pick.as_ref().map(|p| p.0),
        choice: pick.map(|p| p.1),
        candidates: listed.into_iter().cloned().collect(),
        processes: folded.listed.iter().map(|l| l.1).collect(),
        same_files: Vec::new(),
    }
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
    api: Api,
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
        api,
        launches: per.iter().map(|p| p.launches).sum(),
        appended: per.iter().map(|p| p.appended).sum(),
        counts_incomplete: per.iter().any(|p| p.incomplete),
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
        let all: Vec<(usize, &Arc<AsmFile>)> = per
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
        km.candidates = folded.listed.into_iter().map(|l| Arc::clone(l.0)).collect();
        km.same_files = folded.same.into_iter().map(|a| a.path.clone()).collect();
    }
    (km, warning)
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
