//! What the readers of native binaries give: the kernels of a module
//! binary ([`Program`], [`NativeKernel`]), its [`Format`], or why none
//! ([`NativeError`]).

use super::platform::Platform;

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
    /// Private memory per thread in bytes, what IGC's dumps call
    /// `//.private memory size` (zebin `private_size`, IGC's
    /// `PerThreadPrivateMemoryUsage`, when the kernel has no stateless
    /// private memory; patch tokens do not give it apart from
    /// [`stateless_private_bytes`](Self::stateless_private_bytes)): private
    /// memory in scratch space, part of [`scratch_bytes`](Self::scratch_bytes).
    pub private_memory_bytes: Option<u64>,
    /// Stateless private memory per hardware thread in bytes (zebin: its
    /// `global` `private_space` buffer; patch tokens: the stateless private
    /// memory allocation, when not 0), a size per SIMT lane multiplied by
    /// the SIMD width.
    pub stateless_private_bytes: Option<u64>,
    /// Scratch space per thread in bytes, spills and private stack
    /// together (zebin: the `scratch` per-thread memory buffers; patch
    /// tokens: the media VFE state's per-thread scratch space).
    pub scratch_bytes: Option<u64>,
    /// Shared local memory per work-group in bytes declared by the kernel
    /// itself (zebin `slm_size`; patch tokens: the local surface's inline
    /// size).
    pub slm_bytes: Option<u64>,
    /// The kernel's arguments in local memory (`__local` pointers, SYCL's
    /// local accessors), by index: what a size set with no value means
    /// for them (zebin: `payload_arguments` in `slm` address mode; patch
    /// tokens: the arguments of the sum of local memory argument sizes);
    /// `None` when the binary does not say.
    pub local_args: Option<Vec<u32>>,
    /// Whether the kernel uses a work-group barrier (zebin
    /// `barrier_count`; patch tokens `HasBarriers`); `None` when the binary
    /// does not say.
    pub barriers: Option<u32>,
    /// Where each source line's instructions are in [`code`](Self::code):
    /// the DWARF line table of a zebin built with line information (`-g`,
    /// `-gline-tables-only`); `None` without one.
    pub lines: Option<super::dwarf::LineTable>,
}

/// What [`super::parse`] found in a module binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The container of the kernels (for a fat binary: of the chosen member).
    pub format: Format,
    /// The GPU the code is for: from the binary (zebin notes, patch-token
    /// header), else from the device given to [`super::parse`]; `None` when
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
        /// The device, as [`Device::describe`](super::Device::describe) says it.
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

/// Little-endian reads that say where the bytes ran out.
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}
