//! IGC 1's light dumps (`xpu_asm_record::IGC_ENV`): IGC wrote only the
//! `.asm` and `.dat` files of each compile attempt, and the interposer each
//! SPIR-V module's `.spv`. What IGC's full dumps' `.kernbin` told (which
//! attempt IGC kept) is told here by the module's binary that the
//! interposer saved (`modules/<sha256>.bin`, the driver's
//! `zeModuleGetNativeBinary`): the attempt whose machine code is that
//! binary's code for the kernel is the one that ran.

use super::dumps::DumpFolder;
use crate::capture::layout::Stopped;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use xpu_asm_isa::native::{self, Device};
use xpu_asm_record::read::{Module, ProcessRecord};

/// Whether `rec`'s process ran with IGC 1's light dumps: the interposer set
/// their variables in place of `IGC_ShaderDumpEnable`.
pub fn is_light(rec: &ProcessRecord) -> bool {
    let set = |name: &str| rec.env.iter().any(|e| e.name == name);
    !rec.isa_binary
        && !set("IGC_ShaderDumpEnable")
        && xpu_asm_record::IGC1_DUMP_ENV
            .iter()
            .all(|(name, _)| set(name))
}

/// For each light record's folder, the verdict on each attempt of a kernel
/// whose module binary was saved: its `.dat` is, or is not, the binary's
/// code for the kernel. Attempts with a verdict already (an earlier
/// collection's) are left alone. (Source lines, which light dumps lack:
/// [`super::rebuilt`].)
pub fn verify_from_binaries(
    dir: &Path,
    recs: &[ProcessRecord],
    folders: &mut [DumpFolder],
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<(), Stopped> {
    for (rec, folder) in recs.iter().zip(folders.iter_mut()) {
        if !is_light(rec) || !folder.exists {
            continue;
        }
        let jobs = module_jobs(dir, rec, folder);
        let verdicts: Vec<Result<Vec<(usize, bool)>, Stopped>> = jobs
            .par_iter()
            .map(|job| {
                if stop() {
                    return Err(Stopped);
                }
                Ok(job.verdicts(folder))
            })
            .collect();
        for v in verdicts {
            for (i, same) in v? {
                Arc::make_mut(&mut folder.asm[i]).final_binary = Some(same);
            }
        }
    }
    Ok(())
}

/// One module of a light record: its saved binary and the indices of its
/// `.asm` files without a verdict.
struct ModuleJob {
    binary: std::path::PathBuf,
    device: Option<Device>,
    attempts: Vec<usize>,
}

impl ModuleJob {
    /// `(index, same)` for each attempt whose kernel the binary has and
    /// whose `.dat` could be read.
    fn verdicts(&self, folder: &DumpFolder) -> Vec<(usize, bool)> {
        let Some(program) = read_program(&self.binary, self.device.as_ref()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &i in &self.attempts {
            let a = &folder.asm[i];
            let Some(name) = a.header.as_ref().and_then(|h| h.kernel.as_deref()) else {
                continue;
            };
            let Some(kernel) = program.kernel(name) else {
                continue;
            };
            if let Ok(code) = std::fs::read(a.path.with_extension("dat")) {
                out.push((i, code == kernel.code));
            }
        }
        out
    }
}

/// The modules of `rec` that IGC dumped in `folder` and whose binary was
/// saved, with their attempts that have no verdict yet.
fn module_jobs(dir: &Path, rec: &ProcessRecord, folder: &DumpFolder) -> Vec<ModuleJob> {
    let mut by_binary: BTreeMap<String, ModuleJob> = BTreeMap::new();
    for m in rec.modules.values().filter(|m| m.format == "spirv") {
        let Some(file) = saved_binary(m) else {
            continue;
        };
        let attempts: Vec<usize> = folder
            .module_asm_indices(&super::dumps::dump_key(m))
            .into_iter()
            .filter(|&i| folder.asm[i].final_binary.is_none())
            .collect();
        if attempts.is_empty() {
            continue;
        }
        let device = module_device(rec, m);
        let job = by_binary.entry(file.to_string()).or_insert(ModuleJob {
            binary: dir.join(file),
            device,
            attempts: Vec::new(),
        });
        job.attempts.extend(attempts);
    }
    by_binary.into_values().collect()
}

/// The saved binary of a SPIR-V module, when it is a plain
/// `modules/<hex>.bin` (a record is input, and input may be hostile).
pub fn saved_binary(m: &Module) -> Option<&str> {
    let file = m.binary.as_ref()?.file.as_deref()?;
    super::binaries::safe_module_file(file).then_some(file)
}

/// The device `rec` says module `m` was built for, as the binary readers
/// take it.
pub fn module_device(rec: &ProcessRecord, m: &Module) -> Option<Device> {
    m.device.and_then(|d| rec.devices.get(&d)).map(|d| Device {
        product: None,
        device_id: Some(d.device_id),
        ip_version: d.ip_version,
    })
}

/// The module binary at `path`, read: each kernel's code.
pub fn read_program(path: &Path, device: Option<&Device>) -> Option<native::Program> {
    let bytes = std::fs::read(path).ok()?;
    native::parse(&bytes, device).ok()
}

/// Whether a SPIR-V module carries source positions: an `OpLine`, or an
/// import of a debug-information instruction set (`OpenCL.DebugInfo.100`,
/// `NonSemantic.Shader.DebugInfo.100`), as `-g` and `-gline-tables-only`
/// builds have.
pub fn spirv_has_lines(spirv: &[u8]) -> bool {
    const OP_LINE: u32 = 8;
    const OP_EXT_INST_IMPORT: u32 = 11;
    const HEADER_WORDS: usize = 5;
    let words: Vec<u32> = spirv
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if words.first() != Some(&0x0723_0203) {
        return false;
    }
    let mut at = HEADER_WORDS;
    while let Some(&w) = words.get(at) {
        let (count, opcode) = ((w >> 16) as usize, w & 0xffff);
        if opcode == OP_LINE {
            return true;
        }
        if opcode == OP_EXT_INST_IMPORT {
            let name: Vec<u8> = words
                .get(at + 2..at + count.max(2))
                .unwrap_or(&[])
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .take_while(|b| *b != 0)
                .collect();
            if name.windows(9).any(|s| s == b"DebugInfo") {
                return true;
            }
        }
        if count == 0 {
            return false;
        }
        at += count;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(words: &[u32]) -> Vec<u8> {
        let mut all = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
        all.extend_from_slice(words);
        all.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn line_information_is_told_from_the_spirv() {
        // OpCapability Addresses; OpLine %file 7 3.
        assert!(spirv_has_lines(&module(&[
            0x0002_0011,
            4,
            0x0004_0008,
            1,
            7,
            3
        ])));
        // OpExtInstImport %1 "OpenCL.DebugInfo.100".
        let mut name = b"OpenCL.DebugInfo.100\0\0\0\0".to_vec();
        name.truncate(24);
        let mut words = vec![0x0008_000b, 1];
        words.extend(
            name.chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        assert!(spirv_has_lines(&module(&words)));
        // OpExtInstImport %1 "OpenCL.std": no lines.
        let std_name = b"OpenCL.std\0\0";
        let mut words = vec![0x0005_000b, 1];
        words.extend(
            std_name
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        assert!(!spirv_has_lines(&module(&words)));
        // A zero word count ends the walk; not SPIR-V at all is no lines.
        assert!(!spirv_has_lines(&module(&[0, 0x0004_0008])));
        assert!(!spirv_has_lines(b"not spir-v"));
    }
}
