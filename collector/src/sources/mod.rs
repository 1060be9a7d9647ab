//! Stage 2 of a collection: the sources of ISA.
//!
//! Two kinds, one interface ([`IsaSource`]): IGC's dump folders, one per
//! process ([`dumps`]), and the module binaries the interposer saved,
//! one per module ([`binaries`]). For a launched kernel, each source
//! answers with the `.asm` files it has for it, or why it has none
//! ([`Lookup`]). The dump is asked first (it is the richer text: vISA
//! header, `// Line` comments of `-g` builds); the binary when the dump has
//! nothing, or alone with `--isa binary`.

pub mod binaries;
pub mod borrowed;
pub mod dumps;
pub mod light;
pub mod rebuilt;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use xpu_asm_isa::header::AsmHeader;
use xpu_asm_record::read::{Module, ProcessRecord};

/// Threads that read a capture's files, per thread of the global pool: a
/// read that waits for the disk leaves its core to another reader. (The
/// dumps of a capture written a while ago are partly out of the page
/// cache: with one reader per core, a scan of 100,000 headers kept its
/// cores busy 60% of the time.)
pub const READERS_PER_CORE: usize = 3;

/// The readers [`READERS_PER_CORE`] makes at most, unless the cores are
/// more (a node of 128 cores gets one reader per core, not 384).
pub const MAX_READERS: usize = 64;

/// Runs `f` with its parallel iterators on [`READERS_PER_CORE`] threads
/// per thread of the global pool (which `RAYON_NUM_THREADS` sets; at most
/// [`MAX_READERS`], or one per thread of the pool), made for it; on the
/// global pool when they cannot be made.
pub fn with_readers<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let cores = rayon::current_num_threads();
    let threads = (cores * READERS_PER_CORE).min(MAX_READERS.max(cores));
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("xpu-asm-read-{i}"))
        .build()
    {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

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

/// What a source has for one kernel.
#[derive(Debug, Clone)]
pub enum Lookup<'a> {
    /// Its `.asm` files (more than one when IGC compiled it more than once).
    Found(Vec<&'a Arc<AsmFile>>),
    /// Nothing: why, and what to do.
    Missing(Status, String),
}

/// A source of kernels' ISA.
pub trait IsaSource {
    fn kind(&self) -> IsaSourceKind;

    /// The ISA of kernel `name` of `module`, as launched by the process of
    /// `rec`.
    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a>;
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
/// either ([`crate::matching::choice::choose_among`]).
impl AsRef<AsmFile> for AsmFile {
    fn as_ref(&self) -> &AsmFile {
        self
    }
}
