//! zebin: IGC's ELF for Level Zero (NEO's `zebin_elf.h`, `zeinfo.h`).
//!
//! Kernel code is in `.text.<kernel>`, its size in the kernel's symbol (a
//! bare `.text` holds functions shared by kernels through stack calls, not
//! a kernel, and is not read). `.ze_info` is YAML with a `kernels:` list
//! giving each kernel's `execution_env` (`simd_size`, `grf_count`,
//! `slm_size`, `private_size`, `spill_size`) and `per_thread_memory_buffers`.
//! The `.note.intelgt.compat` notes (owner `IntelGT`) give the product
//! family (type 1), the GFX core family (type 2), the target metadata
//! (type 3, the minimum revision in bits 12..8) and, from IGC 2 on, the
//! product config (type 6: the IP version, as `ze_device_ip_version_ext_t`
//! gives it). Zebins that nGEN writes (oneDNN's and oneMKL's generated
//! kernels) have the GFX core family only, in a note section aligned to
//! 16 bytes.

use super::platform::{Device, Platform, FAMILY_STABLE_FROM};
use super::program::{Format, NativeError, NativeKernel, Program};
use object::elf;
use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::{Endianness, Object, ObjectSection, ObjectSymbol};
use std::collections::HashMap;

const EM_INTELGT: u16 = 205;
const ET_ZEBIN_FIRST: u16 = 0xff11;
const ET_ZEBIN_LAST: u16 = 0xff13;
const NOTE_PRODUCT_FAMILY: u32 = 1;
const NOTE_GFX_CORE: u32 = 2;
const NOTE_TARGET_METADATA: u32 = 3;
const NOTE_PRODUCT_CONFIG: u32 = 6;

/// An ELF whose machine is Intel GT, or whose type is one of zebin's own
/// (older zebins put the product family in `e_machine`).
pub(crate) fn is_zebin(b: &[u8]) -> bool {
    let u16_at = |at: usize| b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    let (Some(e_type), Some(machine)) = (u16_at(16), u16_at(18)) else {
        return false;
    };
    machine == EM_INTELGT || (ET_ZEBIN_FIRST..=ET_ZEBIN_LAST).contains(&e_type)
}

pub(crate) fn parse(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    if bytes.get(4) != Some(&elf::ELFCLASS64) {
        return Err(NativeError::Unsupported(
            "a 32-bit zebin (IGC writes 64-bit ones)".into(),
        ));
    }
    let file = ElfFile64::<Endianness>::parse(bytes)
        .map_err(|e| NativeError::Corrupt(format!("zebin ELF: {e}")))?;
    let platform = platform(&file, bytes, device)?;
    let (mut kernels, mut info) = kernels(&file, bytes)?;
    let mut lines = super::dwarf::line_tables(&file);
    for k in &mut kernels {
        k.lines = lines.remove(&k.name);
        if let Some(i) = info.remove(&k.name) {
            k.simd = i.simd;
            k.grf = i.grf;
            k.spill_bytes = i.spill;
            let lanes = if i.private_per_lane {
                i.simd.unwrap_or(1)
            } else {
                1
            };
            // IGC's header gives private memory in scratch space only.
            k.private_memory_bytes = i.private.filter(|_| i.stateless_private.is_none());
            k.stateless_private_bytes = i
                .stateless_private
                .map(|n| n.saturating_mul(u64::from(lanes)));
            k.slm_bytes = i.slm;
            k.scratch_bytes = i.scratch;
            k.barriers = Some(i.barriers.unwrap_or(0));
            k.local_args = Some(
                i.payload
                    .iter()
                    .filter(|(_, local)| *local)
                    .filter_map(|(index, _)| *index)
                    .collect(),
            );
        }
    }
    Ok(Program {
        format: Format::Zebin,
        platform,
        fat_entry: None,
        kernels,
    })
}

/// The GPU the zebin is for: from its `IntelGT` notes (or, in older
/// zebins, `e_machine`), else, or for an integrated GPU first, `device`.
fn platform(
    file: &ElfFile64<Endianness>,
    bytes: &[u8],
    device: Option<&Device>,
) -> Result<Option<Platform>, NativeError> {
    let endian = file.endian();
    let mut family = None;
    let mut core = None;
    let mut revision = None;
    let mut config = None;
    let header = file.elf_header();
    let sections = header
        .sections(endian, bytes)
        .map_err(|e| NativeError::Corrupt(format!("zebin ELF sections: {e}")))?;
    for sh in sections.iter() {
        // Broken notes cost the platform, not the kernels: the device can
        // stand in.
        if sh.sh_type(endian) != elf::SHT_NOTE {
            continue;
        }
        let Ok(data) = sh.data(endian, bytes) else {
            continue;
        };
        for (n_type, desc) in intel_gt_notes(data) {
            let value = super::program::u32_at(desc, 0);
            match n_type {
                NOTE_PRODUCT_FAMILY => family = value.filter(|&v| v != 0),
                NOTE_GFX_CORE => core = value.filter(|&v| v != 0),
                NOTE_TARGET_METADATA => revision = value.map(|v| (v >> 8) & 0x1f),
                NOTE_PRODUCT_CONFIG => config = value.filter(|&v| v != 0),
                _ => {}
            }
        }
    }
    let machine = header.e_machine(endian);
    if machine != EM_INTELGT && family.is_none() && core.is_none() {
        // Older zebins: e_machine holds the product family, or the GFX core
        // family (a flag in e_flags says which; trying both is as good).
        family = Some(u32::from(machine));
        core = Some(u32::from(machine));
    }
    Ok(choose_platform(family, core, revision, config, device))
}

/// For a zebin: the product its notes name (the product family, else
/// the product config's IP version), and whether they name one at all
/// (IGC's and ocloc's zebins do; nGEN's carry the GFX core family alone).
/// `None`: not a zebin.
pub(crate) fn product_named(bytes: &[u8]) -> Option<(Option<String>, bool)> {
    if !bytes.starts_with(b"\x7fELF") || !is_zebin(bytes) {
        return None;
    }
    let file = ElfFile64::<Endianness>::parse(bytes).ok()?;
    let endian = file.endian();
    let sections = file.elf_header().sections(endian, bytes).ok()?;
    let (mut family, mut config) = (None, None);
    for sh in sections
        .iter()
        .filter(|sh| sh.sh_type(endian) == elf::SHT_NOTE)
    {
        let Ok(data) = sh.data(endian, bytes) else {
            continue;
        };
        for (n_type, desc) in intel_gt_notes(data) {
            let value = super::program::u32_at(desc, 0).filter(|&v| v != 0);
            match n_type {
                NOTE_PRODUCT_FAMILY => family = family.or(value),
                NOTE_PRODUCT_CONFIG => config = config.or(value),
                _ => {}
            }
        }
    }
    let by_config = config.and_then(|ip| {
        Device {
            ip_version: Some(ip),
            ..Device::default()
        }
        .family_name()
    });
    let by_family = family
        .and_then(super::platform::product_of_family)
        .map(str::to_string);
    let product = by_family.or(by_config);
    Some((product, family.is_some() || config.is_some()))
}

/// What `.ze_info` says, by kernel name.
type KernelInfo = HashMap<Vec<u8>, Info>;

/// Each `.text.<kernel>` section's code (the kernel's symbol's size of
/// it), and what `.ze_info` says of each kernel.
fn kernels(
    file: &ElfFile64<Endianness>,
    bytes: &[u8],
) -> Result<(Vec<NativeKernel>, KernelInfo), NativeError> {
    // The size of each symbol, by section and name.
    let sizes: HashMap<(usize, &[u8]), u64> = file
        .symbols()
        .filter_map(|sym| Some(((sym.section_index()?.0, sym.name_bytes().ok()?), sym.size())))
        .collect();
    let mut info = HashMap::new();
    let mut kernels = Vec::new();
    // The bytes of the sections read so far. Sections of a real zebin do
    // not overlap; many headers naming the same bytes would copy them once
    // per header, far more than the binary holds.
    let mut read = 0usize;
    let mut count = |data: &[u8]| {
        read = read.saturating_add(data.len());
        if read > bytes.len() {
            return Err(NativeError::Corrupt(format!(
                "zebin sections overlap: those read hold more than the file's {} bytes",
                bytes.len()
            )));
        }
        Ok(())
    };
    for s in file.sections() {
        let Ok(name) = s.name_bytes() else { continue };
        if name == b".ze_info" {
            let data = s
                .data()
                .map_err(|e| NativeError::Corrupt(format!("zebin section .ze_info: {e}")))?;
            count(data)?;
            info = ze_info(&String::from_utf8_lossy(data));
        } else if let Some(kernel) = name.strip_prefix(b".text.") {
            // `.text.` alone: the kernel of the empty name (a name is any
            // bytes but NUL).
            let code = s.data().map_err(|e| {
                NativeError::Corrupt(format!(
                    "zebin section .text.{}: {e}",
                    String::from_utf8_lossy(kernel)
                ))
            })?;
            count(code)?;
            // IGC pads each kernel's section with zeros; the kernel's symbol
            // gives the size of the code itself.
            let size = sizes
                .get(&(s.index().0, kernel))
                .copied()
                .filter(|&n| n > 0 && n <= code.len() as u64)
                .map_or(code.len(), |n| n as usize);
            kernels.push(NativeKernel {
                name: kernel.to_vec(),
                code: code[..size].to_vec(),
                ..NativeKernel::default()
            });
        }
    }
    Ok((kernels, info))
}

/// The platform of a zebin's notes, or of the device it ran on.
fn choose_platform(
    family: Option<u32>,
    core: Option<u32>,
    revision: Option<u32>,
    config: Option<u32>,
    device: Option<&Device>,
) -> Option<Platform> {
    let by_family = family.and_then(|f| Platform::from_product_family(f, revision));
    // The product config is the IP version: the hardware's, whatever the
    // compiler's numbering of products.
    let by_config = config.and_then(|ip| {
        Device {
            ip_version: Some(ip),
            ..Device::default()
        }
        .platform()
    });
    let by_core = core.and_then(|c| Platform::from_core_family(c, revision));
    let recorded = device.and_then(Device::platform);
    match family {
        // An integrated GPU's product family number depends on the version
        // of the compiler that wrote it; the device the code ran on does
        // not.
        // The core family still names the generation: a device of another
        // one is not what the binary is for (NEO compiles the SPIR-V such a
        // binary carries instead).
        Some(f) if f < FAMILY_STABLE_FROM => match (recorded, by_core) {
            (Some(d), Some(c)) if d.iga_gen != c.iga_gen => by_config.or(by_family).or(Some(c)),
            (d, c) => d.or(by_config).or(by_family).or(c),
        },
        _ => by_family.or(by_config).or(match (by_core, recorded) {
            // A core family names a generation, not a product (DG2, MTL and
            // ARL share one): the device's name when it is of that
            // generation.
            (Some(c), Some(d)) if d.iga_gen == c.iga_gen => Some(d),
            (c, d) => c.or(d),
        }),
    }
}

/// The notes of owner `IntelGT` in a note section's bytes: (type,
/// description) each, read as NEO reads them (`decodeIntelGTNoteSection`):
/// name and description each padded to 4 bytes, whatever the section's
/// alignment (nGEN's note sections are aligned to 16; a reader that pads
/// to the section's alignment, as ELF's generic rule would have it,
/// refuses them). Reading stops at the first note that does not fit.
fn intel_gt_notes(data: &[u8]) -> Vec<(u32, &[u8])> {
    let mut notes = Vec::new();
    let mut at = 0usize;
    let pad = |n: u32| (n as usize).checked_add(3).map(|n| n & !3);
    while let (Some(namesz), Some(descsz), Some(n_type)) = (
        super::program::u32_at(data, at),
        super::program::u32_at(data, at + 4),
        super::program::u32_at(data, at + 8),
    ) {
        let name_at = at + 12;
        let Some(desc_at) = pad(namesz).and_then(|n| name_at.checked_add(n)) else {
            break;
        };
        let Some(next) = pad(descsz).and_then(|n| desc_at.checked_add(n)) else {
            break;
        };
        if next > data.len() {
            break;
        }
        let name = &data[name_at..name_at + namesz as usize];
        if name.strip_suffix(b"\0").unwrap_or(name) == b"IntelGT" {
            notes.push((n_type, &data[desc_at..desc_at + descsz as usize]));
        }
        at = next;
    }
    notes
}

/// What `.ze_info` says of one kernel.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Info {
    simd: Option<u32>,
    grf: Option<u32>,
    spill: Option<u64>,
    /// `execution_env`'s `private_size`.
    private: Option<u64>,
    slm: Option<u64>,
    scratch: Option<u64>,
    /// The size of the `global` buffer used as `private_space`.
    stateless_private: Option<u64>,
    /// `stateless_private` is per SIMT lane (`is_simt_thread`), not per
    /// thread.
    private_per_lane: bool,
    /// `execution_env`'s `barrier_count`.
    barriers: Option<u32>,
    /// Each of `payload_arguments`: its `arg_index`, and whether it is in
    /// local memory (`addrmode: slm`).
    payload: Vec<(Option<u32>, bool)>,
}

/// Reads the per-kernel fields of `.ze_info`. A tolerant reader of the
/// block YAML IGC writes (`key: value` by indentation, `- ` list items),
/// not a YAML parser: what it does not understand it skips.
fn ze_info(text: &str) -> HashMap<Vec<u8>, Info> {
    let mut r = InfoReader::default();
    let mut in_kernels = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("---") {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if indent == 0 && !trimmed.starts_with("- ") {
            r.end_kernel();
            in_kernels = trimmed.trim_end() == "kernels:";
            continue;
        }
        if !in_kernels {
            continue;
        }
        let (item, body, body_indent) = match trimmed.strip_prefix("- ") {
            Some(rest) => {
                let body = rest.trim_start();
                (true, body, indent + 2 + (rest.len() - body.len()))
            }
            None => (false, trimmed, indent),
        };
        let Some((key, value)) = split_key(body) else {
            continue;
        };
        // A list item at or left of the current kernel's dash starts the
        // next kernel.
        let dash = match &r.kernel {
            Some((d, _, _)) if !(item && indent <= *d) => *d,
            _ if item => {
                r.end_kernel();
                r.kernel = Some((indent, Vec::new(), Info::default()));
                indent
            }
            _ => continue,
        };
        if body_indent <= dash + 2 {
            // A key of the kernel itself.
            r.end_buffer();
            if key == "name" {
                if let Some((_, name, _)) = &mut r.kernel {
                    *name = unquote(value).into_bytes();
                }
            }
            r.section = if value.is_empty() {
                key.to_string()
            } else {
                String::new()
            };
            continue;
        }
        if item && r.section == "per_thread_memory_buffers" {
            r.end_buffer();
        }
        let num = || value.parse::<u64>().ok();
        let Some((_, _, info)) = &mut r.kernel else {
            continue;
        };
        match (r.section.as_str(), key) {
            ("execution_env", "simd_size") => info.simd = num().and_then(|v| u32::try_from(v).ok()),
            ("execution_env", "grf_count") => info.grf = num().and_then(|v| u32::try_from(v).ok()),
            ("execution_env", "spill_size") => info.spill = num(),
            ("execution_env", "private_size") => info.private = num(),
            ("execution_env", "slm_size") => info.slm = num(),
            ("execution_env", "barrier_count") => {
                info.barriers = num().and_then(|v| u32::try_from(v).ok())
            }
            ("payload_arguments", _) => payload_argument(info, item, key, value),
            ("per_thread_memory_buffers", "type") => r.buffer.0 = Some(unquote(value)),
            ("per_thread_memory_buffers", "usage") => r.buffer.3 = Some(unquote(value)),
            ("per_thread_memory_buffers", "size") => r.buffer.1 = num(),
            ("per_thread_memory_buffers", "is_simt_thread") => r.buffer.2 = value == "true",
            _ => {}
        }
    }
    r.end_kernel();
    r.out
}

/// One `key: value` of a `payload_arguments` item (`item`: the first of
/// an item): its index, and whether it is in local memory.
fn payload_argument(info: &mut Info, item: bool, key: &str, value: &str) {
    if item {
        info.payload.push((None, false));
    }
    let Some(p) = info.payload.last_mut() else {
        return;
    };
    match key {
        "arg_index" => p.0 = value.parse().ok(),
        "addrmode" => p.1 |= unquote(value) == "slm",
        _ => {}
    }
}

#[derive(Default)]
struct InfoReader {
    out: HashMap<Vec<u8>, Info>,
    /// The kernel being read: the indent of its `- `, its name, its info.
    kernel: Option<(usize, Vec<u8>, Info)>,
    /// The kernel's key being read (`execution_env`, ...), or empty.
    section: String,
    /// A per-thread memory buffer being read: its type, its size, whether
    /// the size is per SIMT lane, its usage.
    buffer: (Option<String>, Option<u64>, bool, Option<String>),
}

impl InfoReader {
    fn end_buffer(&mut self) {
        let (t, size, simt, usage) = std::mem::take(&mut self.buffer);
        let (Some((_, _, info)), Some(t), Some(size)) = (&mut self.kernel, t.as_deref(), size)
        else {
            return;
        };
        match (t, usage.as_deref()) {
            ("scratch", _) => info.scratch = Some(info.scratch.unwrap_or(0).saturating_add(size)),
            ("global", Some("private_space")) | ("private_space", _)
                if info.stateless_private.is_none() =>
            {
                info.stateless_private = Some(size);
                info.private_per_lane = simt;
            }
            _ => {}
        }
    }

    fn end_kernel(&mut self) {
        self.end_buffer();
        self.section.clear();
        if let Some((_, name, info)) = self.kernel.take() {
            if !name.is_empty() {
                self.out.insert(name, info);
            }
        }
    }
}

/// `key: value` (value trimmed, maybe empty); `None` for a line without a
/// key.
fn split_key(s: &str) -> Option<(&str, &str)> {
    let (k, v) = s.split_once(':')?;
    let k = k.trim();
    if k.is_empty() || k.contains(' ') {
        return None;
    }
    Some((k, v.trim()))
}

/// A YAML scalar without its quotes (`'it''s'` is `it's`).
fn unquote(v: &str) -> String {
    if let Some(inner) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return inner.replace("\\\"", "\"").replace("\\\\", "\\");
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ze_info_fields_per_kernel() {
        let text = "---\nversion:         '1.20'\nkernels:\n  - name:            first\n    execution_env:\n      grf_count:       256\n      simd_size:       16\n      slm_size:        512\n      barrier_count:   1\n      spill_size:      64\n      private_size:    32\n    payload_arguments:\n      - arg_type:        global_id_offset\n        offset:          0\n        size:            12\n      - arg_type:        arg_bypointer\n        offset:          32\n        size:            8\n        arg_index:       1\n        addrmode:        slm\n        addrspace:       local\n    per_thread_memory_buffers:\n      - type:            scratch\n        usage:           spill_fill_space\n        size:            128\n      - type:            global\n        usage:           private_space\n        size:            16\n        is_simt_thread:  true\n  - name:            'sec''ond'\n    execution_env:\n      simd_size:       32\nfunctions:\n  - name:            f\n    execution_env:\n      simd_size:       8\n...\n";
        let info = ze_info(text);
        assert_eq!(info.len(), 2, "{info:?}");
        let first = &info[&b"first".to_vec()];
        assert_eq!(
            *first,
            Info {
                simd: Some(16),
                grf: Some(256),
                spill: Some(64),
                private: Some(32),
                slm: Some(512),
                scratch: Some(128),
                stateless_private: Some(16),
                private_per_lane: true,
                barriers: Some(1),
                payload: vec![(None, false), (Some(1), true)],
            }
        );
        assert_eq!(info[&b"sec'ond".to_vec()].simd, Some(32));
    }

    const ZEBIN: &[u8] =
        include_bytes!("../../../collector/tests/data/module-binaries/module_a.pvc.zebin");

    /// The offsets of the `sh_name` of each section header whose name
    /// starts with `.text.`, and of that name in the file.
    fn text_sections(b: &[u8]) -> Vec<(usize, usize)> {
        sections_named(b, b".text.")
    }

    /// The offsets of the `sh_name` of each section header whose name
    /// starts with `prefix`, and of that name in the file.
    fn sections_named(b: &[u8], prefix: &[u8]) -> Vec<(usize, usize)> {
        let u16_at = |at: usize| usize::from(u16::from_le_bytes([b[at], b[at + 1]]));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
        let strtab = u64_at(shoff + u16_at(0x3e) * shentsize + 0x18);
        (0..shnum)
            .map(|i| shoff + i * shentsize)
            .filter_map(|h| {
                let name = strtab + super::super::program::u32_at(b, h).unwrap() as usize;
                b[name..].starts_with(prefix).then_some((h, name))
            })
            .collect()
    }

    const BMG: &[u8] =
        include_bytes!("../../../collector/tests/data/module-binaries/module_a.bmg.zebin");
    const PTL: &[u8] =
        include_bytes!("../../../collector/tests/data/module-binaries/module_a.ptl.zebin");

    /// The header of the `.note.intelgt.compat` section, and the offsets of
    /// the type and the description of each of its notes.
    fn compat_notes(b: &[u8]) -> (usize, Vec<(usize, usize)>) {
        let [(h, _)] = sections_named(b, b".note.intelgt.compat")[..] else {
            panic!("one .note.intelgt.compat section");
        };
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        let (start, end) = (u64_at(h + 0x18), u64_at(h + 0x18) + u64_at(h + 0x20));
        let u32_at = |at| super::super::program::u32_at(b, at).unwrap() as usize;
        let mut notes = Vec::new();
        let mut at = start;
        while at < end {
            let desc = at + 12 + u32_at(at).div_ceil(4) * 4;
            notes.push((at + 8, desc));
            at = desc + u32_at(at + 4).div_ceil(4) * 4;
        }
        (h, notes)
    }

    fn named(b: &[u8], device: Option<&Device>) -> Option<(u32, String)> {
        parse(b, device)
            .unwrap()
            .platform
            .map(|p| (p.iga_gen, p.name))
    }

    #[test]
    fn todays_zebins_name_their_gpu() {
        // IGC 2.40's zebins for bmg and ptl: product family 1274 and 1300,
        // core family 0xc09 and 0x1e00, product config 20.1.0 and 30.0.4.
        assert_eq!(named(BMG, None), Some((0x0200_0000, "XE2".into())));
        assert_eq!(named(PTL, None), Some((0x0300_0000, "XE3".into())));
        assert_eq!(parse(BMG, None).unwrap().kernels.len(), 2);
        // The device recorded does not override a product the binary names.
        let pvc = Device {
            product: Some("pvc".into()),
            ..Device::default()
        };
        assert_eq!(named(PTL, Some(&pvc)), Some((0x0300_0000, "XE3".into())));
    }

    #[test]
    fn notes_are_read_whatever_their_sections_alignment() {
        use object::read::elf::{FileHeader, SectionHeader};
        for (zebin, expected) in [(ZEBIN, "PVCXT"), (BMG, "XE2"), (PTL, "XE3")] {
            let (h, _) = compat_notes(zebin);
            for align in [0u64, 1, 4, 8, 16, 32, 64] {
                let mut b = zebin.to_vec();
                b[h + 0x30..h + 0x38].copy_from_slice(&align.to_le_bytes());
                if align == 16 {
                    // nGEN's zebins (oneMKL's GEMM kernels) align the
                    // section to 16, and ELF's generic reader refuses it.
                    let header =
                        object::elf::FileHeader64::<object::Endianness>::parse(&b[..]).unwrap();
                    let endian = header.endian().unwrap();
                    let sections = header.sections(endian, &b[..]).unwrap();
                    let sh = sections
                        .iter()
                        .find(|s| s.sh_addralign(endian) == 16)
                        .unwrap();
                    assert!(sh.notes(endian, &b[..]).is_err());
                }
                assert_eq!(
                    named(&b, None).map(|(_, n)| n).as_deref(),
                    Some(expected),
                    "alignment {align}"
                );
            }
        }
    }

    #[test]
    fn the_product_config_note_alone_names_the_gpu() {
        // Product and core family notes of another type: only the product
        // config (the IP version) is left.
        for (zebin, expected) in [(BMG, "XE2"), (PTL, "XE3")] {
            let mut b = zebin.to_vec();
            for (t, _) in compat_notes(zebin).1 {
                if matches!(super::super::program::u32_at(&b, t), Some(1 | 2)) {
                    b[t..t + 4].copy_from_slice(&0x7ff0u32.to_le_bytes());
                }
            }
            assert_eq!(named(&b, None).map(|(_, n)| n).as_deref(), Some(expected));
        }
    }

    #[test]
    fn a_core_family_alone_takes_the_name_of_the_device_of_its_generation() {
        // As nGEN writes them: the GFX core family only (here PVC's, 0xc08),
        // no product family, target metadata or product config.
        let mut b = ZEBIN.to_vec();
        for (t, desc) in compat_notes(ZEBIN).1 {
            match super::super::program::u32_at(&b, t) {
                Some(2) => b[desc..desc + 4].copy_from_slice(&0xC08u32.to_le_bytes()),
                Some(_) => b[t..t + 4].copy_from_slice(&0x7ff0u32.to_le_bytes()),
                None => unreachable!(),
            }
        }
        // IGC's name of the core family's first product.
        assert_eq!(named(&b, None), Some((0x0100_0004, "PVC".into())));
        // The device it ran on, of the same generation, names its stepping.
        let xt = Device {
            device_id: Some(0x0bd5),
            ip_version: Some(super::super::ip_version(12, 60, 7)),
            ..Device::default()
        };
        assert_eq!(named(&b, Some(&xt)), Some((0x0100_0004, "PVCXT".into())));
        // A device of another generation does not override the binary.
        let bmg = Device {
            device_id: Some(0xe202),
            ..Device::default()
        };
        assert_eq!(named(&b, Some(&bmg)), Some((0x0100_0004, "PVC".into())));
    }

    #[test]
    fn an_integrated_gpus_zebin_is_not_taken_for_a_device_of_another_generation() {
        // ocloc 26.27's zebin for tgllp: product family 29 (a number that
        // moved between compilers, so the recorded device names the product
        // when it is of the binary's generation), core family Gen12LP.
        let tgllp =
            include_bytes!("../../../collector/tests/data/module-binaries/module_a.tgllp.zebin");
        let alone = named(tgllp, None).unwrap();
        assert_eq!(alone.1, "TGLLP");
        let pvc = Device {
            device_id: Some(0x0bd5),
            ip_version: Some(super::super::ip_version(12, 60, 7)),
            ..Device::default()
        };
        // On a pvc (Xe-HPC): still the binary's own platform, not PVC's.
        assert_ne!(pvc.platform().unwrap().iga_gen, alone.0);
        assert_eq!(named(tgllp, Some(&pvc)), Some(alone));
    }

    /// Kernels as nGEN (oneDNN's and oneMKL's generator) writes them: the
    /// GFX core family the only platform note, its section aligned to 16.
    #[test]
    fn ngens_zebins_name_their_generation_and_the_device_its_product() {
        let bmg =
            include_bytes!("../../../collector/tests/data/module-binaries/ngen_trivial.bmg.zebin");
        let pvc =
            include_bytes!("../../../collector/tests/data/module-binaries/ngen_trivial.pvc.zebin");
        let mtl =
            include_bytes!("../../../collector/tests/data/module-binaries/ngen_trivial.mtl.zebin");
        for b in [&bmg[..], pvc, mtl] {
            assert_eq!(compat_notes(b).1.len(), 1);
            let p = parse(b, None).unwrap();
            assert_eq!(p.kernels.len(), 1);
            assert_eq!(p.kernels[0].name, b"ngen_trivial");
        }
        assert_eq!(named(bmg, None), Some((0x0200_0000, "XE2".into())));
        assert_eq!(named(pvc, None), Some((0x0100_0004, "PVC".into())));
        assert_eq!(named(mtl, None), Some((0x0100_0002, "DG2".into())));
        let device = |id, (a, r, v)| Device {
            device_id: Some(id),
            ip_version: Some(super::super::ip_version(a, r, v)),
            ..Device::default()
        };
        let on_mtl = device(0x7d40, (12, 70, 4));
        assert_eq!(named(mtl, Some(&on_mtl)), Some((0x0100_0002, "MTL".into())));
        let on_pvc = device(0x0bd5, (12, 60, 7));
        assert_eq!(
            named(pvc, Some(&on_pvc)),
            Some((0x0100_0004, "PVCXT".into()))
        );
        let on_lnl = device(0x64a0, (20, 4, 4));
        assert_eq!(named(bmg, Some(&on_lnl)), Some((0x0200_0000, "XE2".into())));
    }

    #[test]
    fn broken_notes_give_what_fits() {
        let note = |namesz: u32, descsz: u32, t: u32, name: &[u8], desc: &[u8]| {
            let mut v = Vec::new();
            for x in [namesz, descsz, t] {
                v.extend_from_slice(&x.to_le_bytes());
            }
            v.extend_from_slice(name);
            v.extend_from_slice(desc);
            v
        };
        let good = note(8, 4, 1, b"IntelGT\0", &1274u32.to_le_bytes());
        assert_eq!(intel_gt_notes(&good), vec![(1, &1274u32.to_le_bytes()[..])]);
        let mut two = good.clone();
        two.extend(note(6, 4, 2, b"Other\0\0\0", &[9, 0, 0, 0]));
        two.extend(note(8, 4, 6, b"IntelGT\0", &[0, 0x40, 0, 5]));
        assert_eq!(intel_gt_notes(&two).len(), 2);
        // Sizes past the end, or that overflow: nothing more, no panic.
        for bad in [
            note(8, 0xffff_fff0, 1, b"IntelGT\0", &[]),
            note(0xffff_ffff, 4, 1, b"", &[]),
            note(8, 4, 1, b"IntelGT\0", &[1, 2]),
            good[..11].to_vec(),
        ] {
            assert_eq!(intel_gt_notes(&bad), vec![]);
            let mut after = good.clone();
            after.extend(bad);
            assert_eq!(intel_gt_notes(&after).len(), 1);
        }
    }

    #[test]
    fn sections_naming_the_same_bytes_are_corrupt_not_copied_again() {
        let good = parse(ZEBIN, None).unwrap();
        assert_eq!(good.kernels.len(), 2, "{good:?}");
        // Every kernel's section made to cover the whole file: each would be
        // a copy of it.
        let mut bad = ZEBIN.to_vec();
        let texts = text_sections(&bad);
        assert_eq!(texts.len(), 2);
        for (h, _) in texts {
            bad[h + 0x18..h + 0x20].copy_from_slice(&0u64.to_le_bytes());
            bad[h + 0x20..h + 0x28].copy_from_slice(&(ZEBIN.len() as u64).to_le_bytes());
        }
        match parse(&bad, None) {
            Err(NativeError::Corrupt(m)) => assert!(m.contains("overlap"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    /// `.text.` alone is the section of the kernel of the empty name.
    #[test]
    fn a_kernel_section_of_the_empty_name_is_that_kernels() {
        let mut z = ZEBIN.to_vec();
        let (_, name) = text_sections(&z)[0];
        z[name + ".text.".len()] = 0;
        let p = parse(&z, None).unwrap();
        assert!(p.kernel(b"").is_some_and(|k| !k.code.is_empty()), "{p:?}");
    }

    #[test]
    fn garbage_ze_info_gives_nothing_and_does_not_panic() {
        for text in [
            "",
            "kernels:\n  - \n",
            "kernels:\n- name: x\n  execution_env:\n   simd_size: -1\n",
            ":\n::\n - : :",
        ] {
            let _ = ze_info(text);
        }
        assert_eq!(
            ze_info("kernels:\n- name: x\n  execution_env:\n    simd_size: 8\n")[&b"x".to_vec()]
                .simd,
            Some(8)
        );
    }
}
