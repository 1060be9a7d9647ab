//! Per kernel, from its code: the control flow, loops and register
//! pressure of each listed launched kernel ([`crate::isa::flow`]), read
//! from the module binary the driver ran (saved under `modules/` for every
//! module), whichever source its ISA text came from: a kernel whose ISA is
//! IGC's dump is analysed from the same binary, so both sources give the
//! same figures.
//!
//! IGA disassembles the kernel's code to JSON with its dataflow; each
//! instruction is classified from the ISA text shown for the kernel (its
//! instructions mapped to IGA's by position, which also brings the source
//! lines of a `-g` dump), or from IGA's own text when the two do not line
//! up. When no analysis can be made, the kernel keeps everything else and
//! `flow_reason` says why.

use crate::isa::flow::{self, Flow, Inputs, SourceRef};
use crate::isa::header::AsmHeader;
use crate::isa::igajson;
use crate::isa::line::{lines, Line};
use crate::isa::mix::{classify, Class, Memory};
use crate::matching::KernelMatch;
use crate::sources::binaries::{read_and_parse, request, BinaryKey, Parsed};
use crate::sources::native::iga::{Iga, IgaError};
use crate::sources::native::{NativeKernel, Platform, Program};
use crate::sources::IsaSourceKind;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::OnceLock;
use xpu_asm_record::read::ProcessRecord;

/// A kernel's analysis, or why there is none.
pub type Outcome = Result<Flow, String>;

/// `IGA_XE_HPC`: from PVC on, GRF registers are 64 bytes.
const IGA_XE_HPC: u32 = (1 << 24) | 4;

/// A kernel's module binary: its key and saved file, or why there is none.
type Wanted = Result<(BinaryKey, String), String>;

/// The analysis of each kernel `order` lists (indices into `launched`),
/// in that order; `None` when told to stop.
pub fn read_flows(
    dir: &Path,
    recs: &[ProcessRecord],
    launched: &[KernelMatch],
    order: &[usize],
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<Option<Outcome>> {
    let keys = binary_keys(recs);
    let no_binary: Wanted = Err("no process recorded its module's binary".into());
    let wanted: Vec<&Wanted> = order
        .iter()
        .map(|&i| {
            let k = &launched[i];
            keys.get(&(k.name.clone(), k.module_sha256.clone()))
                .unwrap_or(&no_binary)
        })
        .collect();
    let mut files: BTreeMap<&BinaryKey, &str> = BTreeMap::new();
    for (k, f) in wanted.iter().filter_map(|w| w.as_ref().ok()) {
        files.insert(k, f);
    }
    let files: Vec<(&BinaryKey, &str)> = files.into_iter().collect();
    let parsed: HashMap<&BinaryKey, Parsed> = files
        .par_iter()
        .map(|(k, f)| (*k, read_and_parse(dir, k, f)))
        .collect();
    let iga: OnceLock<Result<Iga, String>> = OnceLock::new();
    let jobs: Vec<(usize, &Wanted)> = order.iter().copied().zip(wanted).collect();
    jobs.par_iter()
        .map(|&(i, w)| {
            if stop() {
                return None;
            }
            let k = &launched[i];
            Some(w.as_ref().map_err(Clone::clone).and_then(|(key, _)| {
                let program = parsed[key].as_ref().map_err(|(_, why)| why.clone())?;
                analyse(k, program, &iga)
            }))
        })
        .collect()
}

/// (kernel name, module SHA-256) -> its module's binary, from the first
/// process that launched it with one saved (or why none has).
fn binary_keys(recs: &[ProcessRecord]) -> HashMap<(Vec<u8>, Option<String>), Wanted> {
    let mut out: HashMap<(Vec<u8>, Option<String>), Wanted> = HashMap::new();
    for rec in recs {
        for k in rec.kernels.values() {
            if k.launches == 0 && k.appended == 0 {
                continue;
            }
            let Some(module) = rec.modules.get(&k.module) else {
                continue;
            };
            let key = (k.name.clone(), Some(module.sha256.clone()));
            if out.get(&key).is_some_and(|r| r.is_ok()) {
                continue;
            }
            let r = match request(rec, module, &k.name) {
                Ok(r) => match r.file {
                    Some(f) => Ok((r.key, f)),
                    None => Err("its module's binary was not saved at run time".to_string()),
                },
                Err(crate::sources::Lookup::Missing(_, why)) => Err(why),
                Err(_) => Err("no module binary is recorded for it".to_string()),
            };
            out.insert(key, r);
        }
    }
    out
}

/// The analysis of kernel `k` from its module's binary `program`.
fn analyse(k: &KernelMatch, program: &Program, iga: &OnceLock<Result<Iga, String>>) -> Outcome {
    let kernel = program.kernel(&k.name).ok_or_else(|| {
        format!(
            "its module's binary ({}) has no kernel of this name",
            program.format
        )
    })?;
    let platform = program.platform.as_ref().ok_or_else(|| {
        "its module's binary does not say which GPU it is for; IGA needs the platform".to_string()
    })?;
    let iga = iga
        .get_or_init(|| Iga::load().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| format!("no analysis of its code: {e}"))?;
    let json = iga.disassemble_json(platform, &kernel.code);
    let text = || iga.disassemble(platform, &kernel.code);
    from_json(json, text, k, kernel, platform)
}

/// The analysis from IGA's JSON (or its error), with the ISA text shown for
/// `k` (else IGA's text, from `iga_text`) for the instructions' classes.
pub fn from_json(
    json: Result<String, IgaError>,
    iga_text: impl FnOnce() -> Result<String, IgaError>,
    k: &KernelMatch,
    kernel: &NativeKernel,
    platform: &Platform,
) -> Outcome {
    let json = json.map_err(|e| format!("IGA gave no JSON of its code: {e}"))?;
    let code = igajson::parse(&json).map_err(|e| format!("no analysis of its code: {e}"))?;
    let n = code.insts.len();
    let shown = k
        .chosen_file()
        .and_then(|f| std::fs::read_to_string(&f.path).ok().map(|t| (t, f.source)))
        .map(|(t, source)| (instructions(&t, source == IsaSourceKind::IgcDump), source));
    let (mut classes, source_lines) = match shown {
        Some(((classes, lines), _)) if classes.len() == n => (classes, lines),
        _ => {
            let t = iga_text().map_err(|e| format!("IGA gave no text of its code: {e}"))?;
            let (classes, _) = instructions(&t, false);
            if classes.len() != n {
                return Err(format!(
                    "IGA's JSON has {n} instructions and its text {}: they cannot be matched",
                    classes.len()
                ));
            }
            (classes, None)
        }
    };
    infer_spills(&mut classes, k.header(), kernel);
    let inputs = Inputs {
        classes: &classes,
        lines: source_lines.as_deref(),
        grf_bytes: if platform.iga_gen >= IGA_XE_HPC {
            64
        } else {
            32
        },
        budget: k.header().and_then(|h| h.grf).or(kernel.grf),
    };
    Ok(flow::analyze(&code, &inputs))
}

/// Each instruction's class in ISA text, and (`with_lines`, when it has
/// line information) its source line.
#[allow(clippy::type_complexity)]
fn instructions(text: &str, with_lines: bool) -> (Vec<Class>, Option<Vec<Option<SourceRef>>>) {
    let mut classes = Vec::new();
    let mut refs = Vec::new();
    let mut file = String::new();
    let mut line: Option<u32> = None;
    let mut seen = false;
    for l in lines(text) {
        match l {
            Line::File(f) => {
                seen = true;
                file = f.to_string();
            }
            Line::Source { line: n, .. } => {
                seen = true;
                line = Some(n);
            }
            Line::Instruction(i) => {
                classes.push(classify(i));
                refs.push(line.map(|line| SourceRef {
                    file: file.clone(),
                    line,
                }));
            }
            _ => {}
        }
    }
    (classes, (with_lines && seen).then_some(refs))
}

/// A kernel that spills and has no private memory: its scratch traffic is
/// spills and fills, whether or not the text annotates them (IGC's dumps
/// do, IGA's text does not), so that both sources count alike.
fn infer_spills(classes: &mut [Class], header: Option<&AsmHeader>, kernel: &NativeKernel) {
    // The binary's figures first: the same whichever text is shown.
    let spills = kernel.spill_bytes.or(header.and_then(|h| h.spill_bytes));
    let private = kernel
        .private_memory_bytes
        .or(header.and_then(|h| h.private_memory_bytes));
    if spills.unwrap_or(0) == 0 || private.unwrap_or(0) != 0 {
        return;
    }
    for c in classes {
        *c = match *c {
            Class::Store(Memory::Scratch) => Class::Spill,
            Class::Load(Memory::Scratch) => Class::Fill,
            other => other,
        };
    }
}
