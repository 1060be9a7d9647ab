//! Reading ISA text: which source lines made which instructions
//! ([`source`]) and what kinds of instructions a kernel has ([`mix`]).
//!
//! Both are pure functions of the text of an `.asm` file, so they apply to
//! any ISA text in IGC's syntax: IGC's own `.asm` dumps and texts rendered
//! from IGA's disassembly of native binaries. [`analyze`] computes both in
//! one pass over the text.

pub mod decoded;
pub mod flow;
pub mod header;
pub mod igajson;
pub mod line;
pub mod live;
pub mod mix;
pub mod source;

pub use line::{classify, lines, Line};

use std::os::fd::AsRawFd;
use std::path::Path;

/// Source lines and instruction mix of one ISA text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Null when the text has no line information.
    pub source: Option<source::Source>,
    pub mix: mix::Mix,
}

/// [`source::parse`] and [`mix::count`] of `text`, in one pass.
pub fn analyze(text: &str) -> Analysis {
    let mut src = source::Builder::default();
    let mut mix = mix::Mix::default();
    let classifier = mix::Classifier::of_text(text);
    for l in lines(text) {
        src.add(l);
        if let Line::Instruction(i) = l {
            mix.add_class(classifier.classify(i));
        }
    }
    Analysis {
        source: src.finish(),
        mix,
    }
}

/// [`analyze`] of ISA text read as bytes: IGC writes ASCII; anything
/// else is read as well as it goes, as [`String::from_utf8_lossy`] has it.
pub fn analyze_bytes(bytes: &[u8]) -> Analysis {
    match std::str::from_utf8(bytes) {
        Ok(text) => analyze(text),
        Err(_) => analyze(&String::from_utf8_lossy(bytes)),
    }
}

/// ISA files larger than this are not analysed (IGC's largest kernels
/// make a few MiB of text).
pub const MAX_ANALYZED_BYTES: u64 = 256 << 20;

/// [`analyze`] of the file at `path`: `Ok(None)` when it is not a regular
/// file or is larger than [`MAX_ANALYZED_BYTES`].
pub fn analyze_file(path: &Path) -> std::io::Result<Option<Analysis>> {
    let f = std::fs::File::open(path)?;
    with_buffer(|bytes| analyze_rest(&f, bytes))
}

/// Runs `f` with this thread's read buffer, empty. One buffer per thread,
/// reused: fresh pages for every file cost more (zeroing) than reading it.
pub fn with_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with_borrow_mut(|bytes| {
        bytes.clear();
        let r = f(bytes);
        // A huge file does not keep its memory after it.
        if bytes.capacity() > 16 << 20 {
            *bytes = Vec::new();
        }
        r
    })
}

/// [`analyze`] of the file `f` whose first `bytes.len()` bytes were
/// already read into `bytes` (and `f`'s offset is right after them): reads
/// the rest into `bytes`. `Ok(None)` as for [`analyze_file`].
pub fn analyze_rest(f: &std::fs::File, bytes: &mut Vec<u8>) -> std::io::Result<Option<Analysis>> {
    analyze_rest_of(f, &f.metadata()?, bytes)
}

/// [`analyze_rest`] of `f` whose metadata is `meta` (not asked again).
pub fn analyze_rest_of(
    f: &std::fs::File,
    meta: &std::fs::Metadata,
    bytes: &mut Vec<u8>,
) -> std::io::Result<Option<Analysis>> {
    if !meta.is_file() || meta.len() > MAX_ANALYZED_BYTES {
        return Ok(None);
    }
    read_to_length(f, bytes, meta.len() as usize)?;
    Ok(Some(analyze_bytes(bytes)))
}

/// Reads `f` from its offset to `len` bytes in all (or its end) onto the
/// end of `bytes`. Exactly the file's length, in as few reads as the
/// kernel allows: `read_to_end` reads in growing steps from 8 KiB and then
/// once more to see the end, several reads for a file of a few tens of
/// KiB. Into the buffer's spare room: zeroing it first (`resize`) cost as
/// much as a tenth of the collection's CPU time.
pub(crate) fn read_to_length(
    f: &std::fs::File,
    bytes: &mut Vec<u8>,
    len: usize,
) -> std::io::Result<()> {
    let len = len.max(bytes.len());
    while bytes.len() < len {
        if read_some(f, bytes, len - bytes.len())? == 0 {
            break;
        }
    }
    Ok(())
}

/// One read(2) of `f` of at most `want` bytes onto the end of `bytes`
/// (into its spare room, not zeroed first), retried when interrupted: how
/// many it read, 0 at the end of the file.
pub(crate) fn read_some(
    f: &std::fs::File,
    bytes: &mut Vec<u8>,
    want: usize,
) -> std::io::Result<usize> {
    bytes.reserve_exact(want);
    loop {
        let spare = &mut bytes.spare_capacity_mut()[..want];
        // SAFETY: `spare` is writable memory of `spare.len()` bytes owned
        // by `bytes`; read(2) writes at most that many into it.
        let n = unsafe { libc::read(f.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
        if n >= 0 {
            let n = n as usize;
            // SAFETY: read(2) initialised the `n` bytes after the old
            // length, within the capacity reserved above.
            unsafe { bytes.set_len(bytes.len() + n) };
            return Ok(n);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
