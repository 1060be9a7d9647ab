//! Native GPU binaries: finding each kernel's machine code in the module
//! binaries the driver is given (or gives back), and turning it into text
//! that reads like IGC's `.asm` dumps.
//!
//! Formats read ([`parse`]):
//!
//! * zebin: ELF, machine 205 (Intel GT); code in `.text.<kernel>`, per-kernel
//!   metadata in the `.ze_info` YAML section, the platform in the
//!   `.note.intelgt.compat` notes ([`Format::Zebin`]);
//! * NEO's patch-token program binary, magic `CTNI`, bare
//!   ([`Format::PatchTokens`]) or inside NEO's ELF wrapper (`e_type`
//!   0xff04, section `Intel(R) OpenCL Device Binary`,
//!   [`Format::PatchTokensElf`]);
//! * ocloc's fat binaries: `ar` archives with one member per device or IP
//!   version (`64.12.60.7`, `64.pvc`, ...); the member of the device the
//!   program ran on is chosen the way NEO chooses it, and
//!   [`Program::fat_entry`] names it.
//!
//! Disassembly is IGA's, in-process ([`iga::Iga`]); [`render_asm`] writes it
//! under a header in the style of IGC's, and [`instructions`] reduces either
//! text to its instructions for comparing the two.
//!
//! Every reader checks every size against the bytes it has: hostile input
//! gives [`NativeError::Corrupt`], never a panic, and nothing is allocated
//! in proportion to a size read from the input before that size is checked.

mod ar;
mod asm;
pub mod iga;
mod patchtokens;
mod platform;
mod zebin;

pub use asm::{instructions, render_asm};
pub use platform::{ip_version, Device, Platform};

/// The container the kernels were found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// ELF with machine 205 (Intel GT): `.text.<kernel>` and `.ze_info`.
    Zebin,
    /// A bare NEO patch-token program binary (magic `CTNI`).
    PatchTokens,
    /// A patch-token program inside NEO's ELF wrapper (`e_type` 0xff04): what
    /// `ocloc compile` writes by default on NEO 22.43 and what
    /// `zeModuleGetNativeBinary` returns.
    PatchTokensElf,
}

impl Format {
    /// A short name for reports and `//.source` lines: `zebin`,
    /// `patch-tokens`, `patch-tokens-elf`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Zebin => "zebin",
            Format::PatchTokens => "patch-tokens",
            Format::PatchTokensElf => "patch-tokens-elf",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One kernel of a native binary: its exact name, its machine code, and what
/// the binary says about it (each field `None` when the binary does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeKernel {
    /// The kernel's name, exactly as in the binary (no terminating NUL).
    pub name: Vec<u8>,
    /// The kernel's machine code, as IGA reads it (patch tokens: the
    /// unpadded part of the kernel heap).
    pub code: Vec<u8>,
    /// SIMD width (zebin `simd_size`; patch tokens: the execution
    /// environment's largest compiled SIMD size).
    pub simd: Option<u32>,
    /// GRF registers per thread (zebin `grf_count`; patch tokens
    /// `NumGRFRequired`).
    pub grf: Option<u32>,
    /// Spill memory per thread in bytes (zebin `spill_size`; patch tokens
    /// do not give it apart from [`scratch_bytes`](Self::scratch_bytes)).
    pub spill_bytes: Option<u64>,
    /// Stateless private memory per hardware thread in bytes (zebin
    /// `private_size` or its `private_space` buffer; patch tokens: the
    /// stateless private memory allocation, when not 0), a size per SIMT
    /// lane multiplied by the SIMD width. Not what IGC's dumps call
    /// `//.private memory size`: that is private memory on the stack, part
    /// of [`scratch_bytes`](Self::scratch_bytes).
    pub private_memory_bytes: Option<u64>,
    /// Scratch space per thread in bytes, spills and private stack
    /// together (zebin: the `scratch` per-thread memory buffers; patch
    /// tokens: the media VFE state's per-thread scratch space).
    pub scratch_bytes: Option<u64>,
    /// Shared local memory per work-group in bytes declared by the kernel
    /// itself (zebin `slm_size`; patch tokens: the local surface's inline
    /// size).
    pub slm_bytes: Option<u64>,
}

/// What [`parse`] found in a module binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The container of the kernels (for a fat binary: of the chosen member).
    pub format: Format,
    /// The GPU the code is for: from the binary (zebin notes, patch-token
    /// header), else from the device given to [`parse`]; `None` when
    /// neither tells.
    pub platform: Option<Platform>,
    /// The member of an ocloc fat binary the kernels come from (e.g.
    /// `64.12.60.7`); `None` when the binary was not an archive.
    pub fat_entry: Option<String>,
    /// The kernels, in the binary's order.
    pub kernels: Vec<NativeKernel>,
}

impl Program {
    /// The kernel named exactly `name`, if the binary has it.
    pub fn kernel(&self, name: &[u8]) -> Option<&NativeKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Why a module binary gave no kernels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NativeError {
    /// Not a native binary at all (SPIR-V, LLVM bitcode): its ISA can only
    /// come from the compiler.
    #[error("not a native GPU binary ({0}); its ISA comes from IGC's dumps of its compilation")]
    NotNative(String),
    /// A fat binary without a member for the device.
    #[error(
        "the fat binary has no member for {device} (it has: {}); build it for this device too (ocloc -device ...)",
        if entries.is_empty() { "none".to_string() } else { entries.join(", ") }
    )]
    NoEntryForDevice {
        /// The device, as [`Device::describe`] says it.
        device: String,
        /// The archive's members, padding left out.
        entries: Vec<String>,
    },
    /// The bytes break the format's own rules (sizes past the end, ...).
    #[error("corrupt native binary: {0}")]
    Corrupt(String),
    /// A format or version this reader does not know.
    #[error("unsupported native binary: {0}")]
    Unsupported(String),
}

/// The kernels of a module binary: zebin, patch tokens (bare or in NEO's
/// ELF wrapper), or an ocloc fat binary, whose member for `device` is taken
/// (the way NEO picks it: IP version, then product name).
///
/// `device` is the GPU the program ran on; it chooses the fat binary's
/// member and gives the platform when the binary does not.
pub fn parse(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    if ar::is_archive(bytes) {
        let (entry, member) = ar::select(bytes, device)?;
        if ar::is_archive(member) {
            return Err(NativeError::Unsupported(format!(
                "fat binary member {entry} is itself an archive"
            )));
        }
        let mut p = parse_single(member, device).map_err(|e| in_member(e, &entry))?;
        p.fat_entry = Some(entry);
        return Ok(p);
    }
    parse_single(bytes, device)
}

fn in_member(e: NativeError, entry: &str) -> NativeError {
    match e {
        NativeError::Corrupt(m) => NativeError::Corrupt(format!("fat binary member {entry}: {m}")),
        NativeError::Unsupported(m) => {
            NativeError::Unsupported(format!("fat binary member {entry}: {m}"))
        }
        NativeError::NotNative(m) => {
            NativeError::NotNative(format!("fat binary member {entry}: {m}"))
        }
        other => other,
    }
}

fn parse_single(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    if bytes.starts_with(b"\x7fELF") {
        if zebin::is_zebin(bytes) {
            return zebin::parse(bytes, device);
        }
        return patchtokens::parse_elf(bytes, device);
    }
    if patchtokens::is_patchtokens(bytes) {
        return patchtokens::parse(bytes, device, Format::PatchTokens);
    }
    Err(not_native(bytes))
}

/// The error for bytes in no native format: SPIR-V and LLVM bitcode are
/// named, anything else is unsupported.
fn not_native(bytes: &[u8]) -> NativeError {
    let word = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    match word {
        Some(0x0723_0203) | Some(0x0302_2307) => NativeError::NotNative("SPIR-V".into()),
        Some(0xdec0_4342) | Some(0x0b17_c0de) => NativeError::NotNative("LLVM bitcode".into()),
        _ => {
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            NativeError::Unsupported(format!(
                "unknown format (first bytes: {}); expected zebin, a patch-token binary (CTNI) or an ocloc fat binary (ar)",
                if head.is_empty() { "none, the binary is empty".to_string() } else { head.join(" ") }
            ))
        }
    }
}

/// Little-endian reads that say where the bytes ran out.
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_and_bitcode_are_not_native_and_garbage_is_unsupported() {
        let spv = [0x03u8, 0x02, 0x23, 0x07, 0, 0, 1, 0];
        assert!(matches!(parse(&spv, None), Err(NativeError::NotNative(m)) if m == "SPIR-V"));
        let bc = [b'B', b'C', 0xc0, 0xde];
        assert!(matches!(parse(&bc, None), Err(NativeError::NotNative(_))));
        assert!(matches!(
            parse(b"hello world", None),
            Err(NativeError::Unsupported(_))
        ));
        assert!(matches!(parse(b"", None), Err(NativeError::Unsupported(_))));
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = NativeError::NoEntryForDevice {
            device: "dg2".into(),
            entries: vec!["64.12.60.7".into(), "64.12.0.0".into()],
        };
        let m = e.to_string();
        assert!(
            m.contains("dg2") && m.contains("64.12.60.7, 64.12.0.0") && m.contains("ocloc"),
            "{m}"
        );
    }
}
