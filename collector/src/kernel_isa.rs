//! A kernel's ISA as the collection finds it: the `.asm` file (IGC's, or
//! IGA's disassembly of a module binary), where its text comes from, and
//! why a kernel has none ([`Status`]). The sources of ISA make these
//! ([`crate::sources`]); matching, the analysis and the report read them.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use xpu_asm_isa::header::AsmHeader;

/// Where a kernel's ISA text comes from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum IsaSourceKind {
    /// An `.asm` IGC wrote while compiling the module in this run.
    #[default]
    IgcDump,
    /// IGA's disassembly of the module's binary, saved at run time.
    ModuleBinary,
}

impl IsaSourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IsaSourceKind::IgcDump => "igc-dump",
            IsaSourceKind::ModuleBinary => "module-binary",
        }
    }
}

/// Which binary a disassembled kernel comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryOrigin {
    /// SHA-256 of the module binary (`modules/<sha256>.bin`).
    pub sha256: String,
    /// `zebin`, `patch-tokens` or `patch-tokens-elf`.
    pub format: String,
    /// The fat binary's member the kernel was taken from.
    pub fat_entry: Option<String>,
    /// Why the code is the driver's build rather than the binary the
    /// program passed (the report's `isa_note`).
    #[serde(skip)]
    pub note: Option<String>,
}

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
    /// Its module was built while the capture's filesystem was full: IGC's
    /// dumps of it may be missing or cut (IGC says nothing when a write
    /// fails), and its module binary could not be saved.
    NoSpace,
}

/// What an `.asm` file name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsmName {
    /// The module hash (hex) after `asm`.
    pub hash: String,
    /// IGC's retry number; 0 for the first attempt.
    pub retry: u32,
    pub simd: Option<u32>,
    pub entry: Option<u32>,
}

/// One `.asm` file of a dump folder.
#[derive(Debug, Clone)]
pub struct AsmFile {
    pub path: PathBuf,
    /// Path shown in reports: relative to the capture folder when inside it.
    pub shown: String,
    pub file_name: String,
    pub name: AsmName,
    /// `None` when the file could not be read (a warning says why).
    pub header: Option<AsmHeader>,
    /// Whether this attempt's machine code is the binary IGC finally emitted
    /// for the kernel; `None` when the dump does not tell.
    pub final_binary: Option<bool>,
    /// Where the text comes from.
    pub source: IsaSourceKind,
    /// For a disassembled module binary: which binary.
    /// (Boxed: most files are IGC's, and 100,000 of them are common.)
    pub binary: Option<Box<BinaryOrigin>>,
    /// Source lines and mix, when read with the header (files of the
    /// kernels the records say were launched); else read when needed.
    pub analysis: Option<Arc<xpu_asm_isa::Analysis>>,
    /// Its size, when the scan measured it (the dumps' usage is counted
    /// from it rather than asked again of every file).
    pub size: Option<u64>,
}

/// A file as itself, as a shared one (`Arc<AsmFile>`) is: for what takes
/// either (`matching::choice::choose_among`).
impl AsRef<AsmFile> for AsmFile {
    fn as_ref(&self) -> &AsmFile {
        self
    }
}
