//! Source lines for IGC 1's light dumps. IGC 1 writes `// Line` comments
//! only in its full dumps (`IGC_ShaderDumpEnable`), which a light capture
//! does without; IGC reads its settings once per process, so they cannot
//! be switched on per module in the running program. Each launched
//! kernel's module that carries line information (`-g`) is therefore
//! compiled again after the run, once, with IGC's full dumps (a compile
//! `compile` runs, see [`crate::capture::rebuilt`]), and a kernel takes
//! the `.asm` of that compile only when its machine code (`.dat`) is the
//! code that ran, byte for byte: the kernel's code in the module binary
//! the interposer saved. Else it keeps its light `.asm`, and a warning
//! says why it has no source lines.

use super::dumps::{scan_folder, DumpFolder, DumpLocation, ModuleNames};
use super::light::{is_light, module_device, read_program, saved_binary, spirv_has_lines};
use super::AsmFile;
use crate::capture::layout::Stopped;
use crate::capture::rebuilt::{module_key, read_markers, Marker, RebuiltModule};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use xpu_asm_record::read::{Module, ProcessRecord};

/// Compiles modules again in a new rebuild folder: its name and marker,
/// or why nothing was compiled.
pub type Compile<'a> = &'a dyn Fn(Vec<RebuiltModule>) -> Result<(String, Marker), String>;

/// The rebuild folders read, for the collection's state and pruning.
#[derive(Default)]
pub struct Rebuilt {
    pub folders: Vec<DumpFolder>,
    pub locations: Vec<DumpLocation>,
}

/// A launched `-g` module of a light record.
struct Want {
    rec: usize,
    module: RebuiltModule,
    /// The record's module, by id.
    id: u32,
    /// Its launched kernels that have light `.asm` files.
    kernels: Vec<Vec<u8>>,
}

/// How the compile of a module went.
#[derive(Debug, Clone)]
enum Outcome {
    /// Compiled in this rebuild folder.
    Built(String),
    /// Not compiled: why, and whether collecting again may do better.
    Failed(String, bool),
    /// Nothing to compile with (the collector used as a library).
    NoCompiler,
}

/// Gives the light records' launched `-g` kernels their source lines,
/// from modules compiled again (by `compile`; the compiles of an earlier
/// collection are used again): their `.asm` in `folders` replaced by the
/// compile's when its code is the code that ran. Nothing to do (no light
/// record, no `-g` module) costs nothing.
#[allow(clippy::too_many_arguments)]
pub fn source_lines(
    dir: &Path,
    recs: &[ProcessRecord],
    folders: &mut [DumpFolder],
    known_final: &BTreeMap<String, bool>,
    compile: Option<Compile>,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(&str),
    warnings: &mut Vec<String>,
) -> Result<Rebuilt, Stopped> {
    let wants = wanted(recs, folders);
    if wants.is_empty() {
        return Ok(Rebuilt::default());
    }
    let outcomes = compiled(dir, &wants, compile, stop, progress);
    let mut rebuilt = scan_rebuilt(dir, &wants, &outcomes, known_final, stop)?;
    let mut said = Said::default();
    for w in &wants {
        match &outcomes[&w.module.key] {
            Outcome::Built(name) => {
                let at = rebuilt_index(&rebuilt, name);
                let rf = &mut rebuilt.folders[at];
                take_lines(dir, &recs[w.rec], w, rf, &mut folders[w.rec], &mut said);
            }
            Outcome::Failed(why, again) => said.failed(recs[w.rec].pid, why, *again),
            Outcome::NoCompiler => said.no_compiler(recs[w.rec].pid),
        }
    }
    said.into_warnings(dir, warnings);
    Ok(rebuilt)
}

/// The index in `rebuilt` of the rebuild folder `name` (scanned: every
/// built module's folder is).
fn rebuilt_index(rebuilt: &Rebuilt, name: &str) -> usize {
    let shown = format!("{}/{name}", xpu_asm_record::DUMPS_DIR);
    rebuilt
        .locations
        .iter()
        .position(|l| l.shown == shown)
        .unwrap_or(0)
}

/// The launched `-g` modules of light records, with a saved binary (what
/// tells whether a compile's code is the code that ran) and light `.asm`.
fn wanted(recs: &[ProcessRecord], folders: &[DumpFolder]) -> Vec<Want> {
    let mut out = Vec::new();
    for (r, (rec, folder)) in recs.iter().zip(folders).enumerate() {
        if !is_light(rec) || !folder.exists {
            continue;
        }
        let mut launched: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
        for k in rec.kernels.values().filter(|k| k.launches > 0) {
            launched.entry(k.module).or_default().push(k.name.clone());
        }
        for (id, names) in launched {
            let Some(m) = rec.modules.get(&id).filter(|m| m.format == "spirv") else {
                continue;
            };
            if let Some(w) = want(r, rec, m, folder, names) {
                out.push(w);
            }
        }
    }
    out
}

fn want(
    r: usize,
    rec: &ProcessRecord,
    m: &Module,
    folder: &DumpFolder,
    mut names: Vec<Vec<u8>>,
) -> Option<Want> {
    saved_binary(m)?;
    let spv = folder.spv_path(&m.sha256)?;
    names.sort();
    names.dedup();
    names.retain(|n| !folder.kernel_asm(&m.sha256, n).is_empty());
    if names.is_empty() || !std::fs::read(&spv).is_ok_and(|b| spirv_has_lines(&b)) {
        return None;
    }
    let file = spv.file_name()?.to_string_lossy().into_owned();
    let device_id = m
        .device
        .and_then(|d| rec.devices.get(&d))
        .map(|d| d.device_id);
    Some(Want {
        rec: r,
        module: RebuiltModule {
            key: module_key(&m.sha256, &m.build_flags, device_id),
            sha256: m.sha256.to_ascii_lowercase(),
            spirv: format!("{}/{file}", folder.shown),
            build_flags: m.build_flags.clone(),
            device_id,
            status: None,
        },
        id: m.id,
        kernels: names,
    })
}

/// Each wanted module's compile: an earlier collection's, else one made
/// now (modules of one device and distinct SPIR-V compiled together).
fn compiled(
    dir: &Path,
    wants: &[Want],
    compile: Option<Compile>,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &dyn Fn(&str),
) -> BTreeMap<String, Outcome> {
    let mut out: BTreeMap<String, Outcome> = BTreeMap::new();
    for (name, marker) in read_markers(dir) {
        for m in marker.modules {
            match m.status.as_deref() {
                Some(_) if m.built() => out.insert(m.key, Outcome::Built(name.clone())),
                Some(why) => out.insert(m.key, Outcome::Failed(why.to_string(), false)),
                None => None,
            };
        }
    }
    let mut todo: Vec<RebuiltModule> = Vec::new();
    for w in wants {
        if !out.contains_key(&w.module.key) && !todo.iter().any(|m| m.key == w.module.key) {
            todo.push(w.module.clone());
        }
    }
    let Some(compile) = compile else {
        for m in todo {
            out.insert(m.key, Outcome::NoCompiler);
        }
        return out;
    };
    for batch in batches(todo) {
        if stop() {
            break;
        }
        progress(&format!(
            "compiling {} module(s) again for their source lines",
            batch.len()
        ));
        match compile(batch.clone()) {
            Ok((name, marker)) => {
                for m in marker.modules {
                    let o = match m.built() {
                        true => Outcome::Built(name.clone()),
                        false => Outcome::Failed(m.status.unwrap_or_default(), false),
                    };
                    out.insert(m.key, o);
                }
            }
            Err(why) => {
                for m in batch {
                    out.insert(m.key, Outcome::Failed(why.clone(), true));
                }
            }
        }
    }
    for w in wants {
        out.entry(w.module.key.clone())
            .or_insert_with(|| Outcome::Failed("interrupted".into(), true));
    }
    out
}

/// Modules put in compiles of one device each, no SPIR-V twice in one
/// (IGC names a module's dump files after its SPIR-V).
fn batches(todo: Vec<RebuiltModule>) -> Vec<Vec<RebuiltModule>> {
    let mut out: Vec<Vec<RebuiltModule>> = Vec::new();
    for m in todo {
        let fits = |b: &Vec<RebuiltModule>| {
            b[0].device_id == m.device_id && !b.iter().any(|o| o.sha256 == m.sha256)
        };
        match out.iter_mut().find(|b| fits(b)) {
            Some(b) => b.push(m),
            None => out.push(vec![m]),
        }
    }
    out
}

/// The rebuild folders the wanted modules were compiled in, scanned (each
/// kernel wanted read whole, for its source lines).
fn scan_rebuilt(
    dir: &Path,
    wants: &[Want],
    outcomes: &BTreeMap<String, Outcome>,
    known_final: &BTreeMap<String, bool>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Rebuilt, Stopped> {
    let mut launched: BTreeMap<&str, HashSet<&[u8]>> = BTreeMap::new();
    for w in wants {
        if let Some(Outcome::Built(name)) = outcomes.get(&w.module.key) {
            let set = launched.entry(name.as_str()).or_default();
            set.extend(w.kernels.iter().map(Vec::as_slice));
        }
    }
    let mut names = ModuleNames::default();
    for w in wants {
        names.add(&w.module.sha256, w.kernels.iter().cloned());
    }
    let mut rebuilt = Rebuilt::default();
    for (name, kernels) in launched {
        let shown = format!("{}/{name}", xpu_asm_record::DUMPS_DIR);
        let path = dir.join(&shown);
        rebuilt.folders.push(scan_folder(
            &path,
            &shown,
            known_final,
            &names,
            &kernels,
            true,
            stop,
        )?);
        rebuilt.locations.push(DumpLocation {
            path,
            shown,
            prunable: true,
        });
    }
    Ok(rebuilt)
}

/// Each wanted kernel of `w` takes the rebuilt `.asm` files of `rf` when
/// one of them has the code that ran (every attempt given its verdict
/// against the record's module binary); else a warning says why not.
fn take_lines(
    dir: &Path,
    rec: &ProcessRecord,
    w: &Want,
    rf: &mut DumpFolder,
    folder: &mut DumpFolder,
    said: &mut Said,
) {
    let m = &rec.modules[&w.id];
    let program =
        saved_binary(m).and_then(|f| read_program(&dir.join(f), module_device(rec, m).as_ref()));
    let mut taken = false;
    for name in &w.kernels {
        let code = program
            .as_ref()
            .and_then(|p| p.kernel(name))
            .map(|k| &k.code);
        let mine = rf.kernel_asm_indices(&w.module.sha256, name);
        let mut ran = false;
        for &i in &mine {
            let a = Arc::make_mut(&mut rf.asm[i]);
            if let (Some(code), Ok(dat)) = (code, std::fs::read(a.path.with_extension("dat"))) {
                a.final_binary = Some(&dat == code);
            }
            ran |= a.final_binary == Some(true);
        }
        if ran {
            replace_kernel(
                folder,
                &w.module.sha256,
                name,
                mine.iter().map(|&i| &rf.asm[i]),
            );
            taken = true;
        } else {
            said.differs(rec.pid, name, &rf.shown, mine.is_empty(), code.is_none());
        }
    }
    if taken {
        folder.reindex();
    }
}

/// `folder`'s `.asm` files of kernel `name` of the module with SPIR-V
/// SHA-256 `sha` replaced by `with` (the folder kept in file-name order).
fn replace_kernel<'a>(
    folder: &mut DumpFolder,
    sha: &str,
    name: &[u8],
    with: impl Iterator<Item = &'a Arc<AsmFile>>,
) {
    let old: HashSet<usize> = folder.kernel_asm_indices(sha, name).into_iter().collect();
    let mut asm: Vec<Arc<AsmFile>> = std::mem::take(&mut folder.asm)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !old.contains(i))
        .map(|(_, a)| a)
        .collect();
    let new: Vec<Arc<AsmFile>> = with.cloned().collect();
    for a in &new {
        let hashes = folder.spv_by_sha.entry(sha.to_string()).or_default();
        if !hashes.contains(&a.name.hash) {
            hashes.push(a.name.hash.clone());
        }
    }
    asm.extend(new);
    asm.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    folder.asm = asm;
    folder.reindex();
}

/// The warnings to give, by process, said once each.
#[derive(Default)]
struct Said {
    /// why -> (pids, whether collecting again may do better)
    failed: BTreeMap<String, (Vec<u32>, bool)>,
    no_compiler: Vec<u32>,
    /// (pid, why) -> kernels
    differs: BTreeMap<(u32, String), Vec<String>>,
}

const FULL_DUMPS: &str = "run again with IGC_ShaderDumpEnable=1 set (or --keep all)";

impl Said {
    fn failed(&mut self, pid: u32, why: &str, again: bool) {
        let e = self.failed.entry(why.to_string()).or_default();
        if !e.0.contains(&pid) {
            e.0.push(pid);
        }
        e.1 |= again;
    }

    fn no_compiler(&mut self, pid: u32) {
        if !self.no_compiler.contains(&pid) {
            self.no_compiler.push(pid);
        }
    }

    fn differs(&mut self, pid: u32, name: &[u8], rf: &str, none: bool, no_code: bool) {
        let name = crate::names::in_message(name);
        let why = if no_code {
            "the module binary the run saved has no code for it to compare with".to_string()
        } else if none {
            format!("the compile (in {rf}) has no .asm for it")
        } else {
            format!("the compile (in {rf}) gave other code than the code that ran (the kernel's code in the module binary the run saved): the program's compile had something the compile again did not (a variable the command set itself, specialization constants, another driver or device)")
        };
        self.differs.entry((pid, why)).or_default().push(name);
    }

    fn into_warnings(self, dir: &Path, warnings: &mut Vec<String>) {
        let pids = |p: &[u32]| p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let lead = "a launched kernel's module carries line information (-g), but its .asm has no source lines: on IGC 1, xpu-asm-run has IGC write only the .asm and .dat files (much faster), and IGC 1 writes source lines only in its full dumps";
        if !self.no_compiler.is_empty() {
            warnings.push(format!(
                "process {}: {lead}; for them, {FULL_DUMPS}",
                pids(&self.no_compiler)
            ));
        }
        for (why, (p, again)) in self.failed {
            let fix = if again {
                format!(
                    "fix that and run `xpu-asm-run collect {}` again, or {FULL_DUMPS}",
                    dir.display()
                )
            } else {
                FULL_DUMPS.to_string()
            };
            warnings.push(format!(
                "process {}: {lead}, and compiling the module again with them failed: {why}; its kernels are reported without source lines: for them, {fix}",
                pids(&p)
            ));
        }
        for ((pid, why), mut names) in self.differs {
            names.sort();
            let which = match names.len() {
                1 => format!("kernel {}", names[0]),
                _ => format!("kernels {}", names.join(", ")),
            };
            warnings.push(format!(
                "process {pid}: {which}: the module carries line information (-g), which IGC 1's light dumps leave out, and xpu-asm-run compiled it again with IGC's full dumps for the source lines, but {why}; reported without source lines: for them, {FULL_DUMPS}"
            ));
        }
    }
}
