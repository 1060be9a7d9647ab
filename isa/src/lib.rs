//! Reading Intel GPU ISA, bytes to kernels, with no knowledge of captures:
//! the native module binaries the driver runs (zebin, NEO's patch-token
//! programs, ocloc's fat binaries), each kernel's machine code found in
//! them and disassembled by IGA in-process ([`native`]); the text of IGC's
//! `.asm` files and of IGA's disassembly: headers ([`header`]), lines
//! ([`line`]), which source lines made which instructions ([`source`]) and
//! what kinds of instructions a kernel has ([`mix`]).
//!
//! The text readers are pure functions of the text of an `.asm` file, so they apply to
//! any ISA text in IGC's syntax: IGC's own `.asm` dumps and texts rendered
//! from IGA's disassembly of native binaries. [`analyze`] computes both in
//! one pass over the text. Beside them, a kernel's code as IGA decodes it
//! ([`decoded`]), read from IGA's JSON of the code ([`igajson`]): what the
//! analysis of a kernel's code (the collector's `analysis`) reads.

pub(crate) mod bytes;
pub mod decoded;
pub mod fast;
pub mod header;
pub mod igajson;
pub mod line;
pub mod mix;
pub mod native;
pub mod source;
pub mod spirv;

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
    analyze_bytes(text.as_bytes())
}

/// [`analyze`] of ISA text read as bytes. IGC writes ASCII; anything else
/// is read as [`String::from_utf8_lossy`] would have it, without reading
/// the whole text so: the parts kept as text (source files, source lines)
/// and the few parts that Unicode decides (labels, the words of a send's
/// comment) are, and what ASCII alone decides is read on the bytes.
pub fn analyze_bytes(bytes: &[u8]) -> Analysis {
    analyze_with(bytes, Pass::default())
}

/// Where the analysis of a text starts and what scratch space holds, as
/// the text's header said them ([`header::AsmHeader::text_start`]): the
/// kernel's `//.kernel` line, its name whole (its line breaks too: a
/// name's lines are neither instructions nor source lines), is not read,
/// and the header's own fields say whether scratch holds spills.
#[derive(Debug, Clone, Copy)]
pub struct TextStart {
    /// Bytes of the text not read: its `//.kernel` line.
    pub at: usize,
    pub classifier: mix::Classifier,
}

/// [`analyze_bytes`] of `bytes` from `start`.
pub fn analyze_from(bytes: &[u8], start: TextStart) -> Analysis {
    let pass = Pass {
        classifier: start.classifier,
        fixed_classifier: true,
        ..Pass::default()
    };
    analyze_with(bytes.get(start.at..).unwrap_or(&[]), pass)
}

fn analyze_with(bytes: &[u8], mut pass: Pass) -> Analysis {
    let mut start = 0;
    for end in bytes::line_ends(bytes) {
        pass.line(&bytes[start..end]);
        start = end + 1;
    }
    Analysis {
        source: pass.src.finish(),
        mix: pass.mix.mix(),
    }
}

/// The state of [`analyze_bytes`]' pass.
#[derive(Default)]
struct Pass {
    src: source::Builder,
    mix: mix::Counts,
    /// Past the comment lines the text starts with: the header, whose
    /// fields make `classifier` (see [`mix::Classifier::of_text`]).
    body: bool,
    header: mix::HeaderFields,
    classifier: mix::Classifier,
    /// `classifier` was given, not read from the header's lines.
    fixed_classifier: bool,
}

impl Pass {
    /// One line, without its `\n`: as [`line::classify`] has it, the
    /// parts kept or decided by Unicode read lossily (every [`line::Shape`]
    /// offset is next to an ASCII byte, where lossy reading of a part is
    /// that of the whole).
    fn line(&mut self, raw: &[u8]) {
        if !self.body {
            if raw.starts_with(b"//") {
                self.header.line(raw);
            } else {
                // No instruction comes before: the header is whole.
                self.body = true;
                if !self.fixed_classifier {
                    self.classifier = self.header.classifier();
                }
            }
        }
        let lossy = String::from_utf8_lossy;
        match line::shape(raw) {
            line::Shape::Instruction(at) => self.instruction(&raw[at..]),
            line::Shape::Colon { start, colon } => {
                if !line::is_label(&lossy(&raw[start..colon])) {
                    self.instruction(&raw[start..]);
                }
            }
            line::Shape::File(at) => self.src.file(lossy(&raw[at..]).trim_end()),
            line::Shape::Source(at) => {
                if let Some((line, text)) = line::source_line(&lossy(&raw[at..])) {
                    self.src.source(line, text);
                }
            }
            line::Shape::Other => {}
        }
    }

    fn instruction(&mut self, i: &[u8]) {
        self.src.instruction();
        let place = self.classifier.adjust_place(mix::classify_bytes(i));
        self.mix.add(place);
    }
}

/// ISA files larger than this are not analysed (IGC's largest kernels
/// make a few MiB of text).
pub const MAX_ANALYZED_BYTES: u64 = 256 << 20;

/// [`analyze`] of the file at `path`: `Ok(None)` when it is not a regular
/// file or is larger than [`MAX_ANALYZED_BYTES`].
pub fn analyze_file(path: &Path) -> std::io::Result<Option<Analysis>> {
    let f = std::fs::File::open(path)?;
    with_buffer(|bytes| analyze_rest(&f, bytes, None))
}

/// [`analyze_file`], from `start` of the text when given (see
/// [`header::analyze_file_of`]).
pub fn analyze_file_from(
    path: &Path,
    start: impl FnOnce(&[u8]) -> TextStart,
) -> std::io::Result<Option<Analysis>> {
    let f = std::fs::File::open(path)?;
    with_buffer(|bytes| {
        let meta = f.metadata()?;
        if !meta.is_file() || meta.len() > MAX_ANALYZED_BYTES {
            return Ok(None);
        }
        read_to_length(&f, bytes, meta.len() as usize)?;
        Ok(Some(analyze_from(bytes, start(bytes))))
    })
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
/// From `start` of the text when given ([`analyze_from`]).
pub fn analyze_rest(
    f: &std::fs::File,
    bytes: &mut Vec<u8>,
    start: Option<TextStart>,
) -> std::io::Result<Option<Analysis>> {
    analyze_rest_of(f, &f.metadata()?, bytes, start)
}

/// [`analyze_rest`] of `f` whose metadata is `meta` (not asked again).
pub fn analyze_rest_of(
    f: &std::fs::File,
    meta: &std::fs::Metadata,
    bytes: &mut Vec<u8>,
    start: Option<TextStart>,
) -> std::io::Result<Option<Analysis>> {
    if !meta.is_file() || meta.len() > MAX_ANALYZED_BYTES {
        return Ok(None);
    }
    read_to_length(f, bytes, meta.len() as usize)?;
    Ok(Some(match start {
        Some(s) => analyze_from(bytes, s),
        None => analyze_bytes(bytes),
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that are not UTF-8 (in a source file's name, a source line,
    /// a header field, a label, a send's comment), CRLF line ends, tabs,
    /// predicates and a `// Line` without text: the analysis of the bytes
    /// is that of the whole text read lossily.
    #[test]
    fn bytes_read_as_the_lossy_text() {
        let text: &[u8] = b"//.kernel k\r\n//.spill size \xff64\r\n\
            // File: /src/\xe9.cl\r\n// Line 3:  x = \xff;\r\n\tmov (1|M0) r1 r2 // $1\r\n\
            _lab\xc3:\n(W) send.ugm (1|M0) r1 r2 // \xe2\x80; load.ugm.d32.a64\n\
            // Line 4\n  add (1|M0) r1 r2\r\n// Line 3:  x = y;\n(f0.0)\tjmpi _lab // $3\n";
        let a = analyze_bytes(text);
        assert_eq!(a, analyze(&String::from_utf8_lossy(text)));
        let s = a.source.unwrap();
        assert_eq!(s.files, ["/src/\u{fffd}.cl"]);
        let got: Vec<(u32, &str, u64)> = s
            .lines
            .iter()
            .map(|l| (l.line, l.text.as_str(), l.instructions))
            .collect();
        assert_eq!(got, [(3, "x = \u{fffd};", 3), (4, "", 1)]);
        let m = a.mix;
        assert_eq!(m.instructions, 4);
        assert_eq!((m.mov, m.load_global, m.alu, m.control), (1, 1, 1, 1));
    }
}
