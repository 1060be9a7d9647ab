//! IGC's dump folders and what they hold: `.asm` files per kernel, and
//! their instructions against xpu-asm's own disassembly.

use crate::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use xpu_asm_record::read::ProcessRecord;

/// The per-process IGC dump folder of `rec`, as its record names it:
/// `out/dumps/<host>-<pid>-<token>`.
pub fn dump_dir(out: &Path, rec: &ProcessRecord) -> PathBuf {
    out.join(&rec.dump_dir)
}

/// The kernel each `.asm` file of `dir` is for, from its `//.kernel` line
/// (a substring match would confuse `scale` with `scale_v2`).
pub fn asm_kernels(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut m = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return m;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.extension() != Some(OsStr::new("asm")) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        if let Some(name) = text
            .lines()
            .find_map(|l| l.strip_prefix("//.kernel "))
            .map(|n| n.trim().to_string())
        {
            m.insert(p, name);
        }
    }
    m
}

/// The distinct kernel names of [`asm_kernels`].
pub fn asm_kernel_names(dir: &Path) -> BTreeSet<String> {
    asm_kernels(dir).into_values().collect()
}

/// Stdout as lines.
pub fn stdout_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// What an IGC dump folder holds per module: the sha256 of each dumped
/// `OCL_asm<hash>.spv` and the kernels named by that module's
/// `OCL_asm<hash>_*.asm` files.
pub fn dumped_modules(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let kernels = asm_kernels(dir);
    let mut m = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return m;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let p = e.path();
        let (Some(stem), Some("spv")) = (
            p.file_stem().and_then(OsStr::to_str),
            p.extension().and_then(OsStr::to_str),
        ) else {
            continue;
        };
        let prefix = format!("{stem}_");
        let names = kernels
            .iter()
            .filter(|(asm, _)| {
                asm.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|f| f.starts_with(&prefix))
            })
            .map(|(_, name)| name.clone())
            .collect();
        m.insert(sha256_file(&p), names);
    }
    m
}

/// Compares IGC's `.asm` of a kernel with IGA's disassembly of the same
/// kernel's machine code: the same number of instructions, the same
/// opcodes in the same order, with the same operands (comments and label
/// names aside: `native::instructions` of each text). Returns the count;
/// `Err` says where they part.
pub fn same_instructions(igc: &str, iga: &str) -> Result<usize, String> {
    use xpu_asm_isa::native::instructions;
    let (a, b) = (instructions(igc), instructions(iga));
    if a.len() != b.len() {
        return Err(format!(
            "IGC's .asm has {} instructions, IGA's disassembly {}",
            a.len(),
            b.len()
        ));
    }
    let differ: Vec<String> = a
        .iter()
        .zip(&b)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .take(5)
        .map(|(i, (x, y))| format!("  #{i}\n    IGC: {x}\n    IGA: {y}"))
        .collect();
    if differ.is_empty() {
        Ok(a.len())
    } else {
        Err(format!(
            "{} instructions each, but they differ; first differences:\n{}",
            a.len(),
            differ.join("\n")
        ))
    }
}

/// For each kernel of `r` (every one's ISA from IGC's dump), the driver's
/// binary of its module, saved in the capture `out`, disassembled by IGA:
/// the same instructions, in order, as IGC's `.asm`. Returns how many
/// kernels were compared.
pub fn cross_check_dumps_against_binaries(
    out: &Path,
    r: &xpu_asm_collector::report::Report,
) -> usize {
    use xpu_asm_collector::sources::IsaSourceKind;
    use xpu_asm_isa::native;
    let rec = only_record(out);
    let iga = native::iga::Iga::load().unwrap_or_else(|e| panic!("{e}"));
    let mut n = 0;
    for k in &r.kernels {
        assert_eq!(k.isa_source, Some(IsaSourceKind::IgcDump), "{k:?}");
        let module = rec
            .modules
            .values()
            .find(|m| Some(&m.sha256) == k.module_sha256.as_ref())
            .unwrap_or_else(|| panic!("no module {:?} in the record", k.module_sha256));
        let file = module
            .binary
            .as_ref()
            .and_then(|b| b.file.clone())
            .unwrap_or_else(|| panic!("module {} has no saved binary", module.id));
        let bytes = std::fs::read(out.join(&file)).expect("the saved binary");
        let device = module
            .device
            .and_then(|d| rec.devices.get(&d))
            .map(|d| native::Device {
                product: None,
                device_id: Some(d.device_id),
                ip_version: d.ip_version,
            });
        let program =
            native::parse(&bytes, device.as_ref()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let kernel = program
            .kernel(k.name.as_bytes())
            .unwrap_or_else(|| panic!("{file} has no kernel {}", k.name));
        let platform = program.platform.as_ref().expect("the binary's platform");
        let text = iga
            .disassemble(platform, &kernel.code)
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let igc = std::fs::read_to_string(out.join(k.asm.as_ref().expect("matched")))
            .expect("IGC's .asm");
        if let Err(e) = same_instructions(&igc, &text) {
            panic!("{}: {e}", k.name);
        }
        n += 1;
    }
    n
}
