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
pub mod linked;
pub mod rebuilt;
pub mod symbols;

pub use crate::kernel_isa::{AsmFile, AsmName, BinaryOrigin, IsaSourceKind, Status};
use std::sync::Arc;
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
