//! Reading ISA text: which source lines made which instructions
//! ([`source`]) and what kinds of instructions a kernel has ([`mix`]).
//!
//! Both are pure functions of the text of an `.asm` file, so they apply to
//! any ISA text in IGC's syntax: IGC's own `.asm` dumps and texts rendered
//! from IGA's disassembly of native binaries. [`analyze`] computes both in
//! one pass over the text.

pub mod mix;
pub mod source;

use std::io::Read;
use std::path::Path;

/// What one line of ISA text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// `// File: <path>`: the source file of the lines that follow.
    File(&'a str),
    /// `// Line <N>:  <source text>`: the instructions that follow come
    /// from this line.
    Source { line: u32, text: &'a str },
    /// A label (`_0_016:`, `per_thread_prolog:`).
    Label(&'a str),
    /// An instruction, with its predicate, operands and trailing comment.
    Instruction(&'a str),
    /// A header line, another comment, or an empty line.
    Other,
}

/// Classifies one line (without its newline).
pub fn classify(raw: &str) -> Line<'_> {
    // ASCII trims: Unicode whitespace never occurs in ISA text, and
    // decoding characters costs more than the rest of the line.
    let s = raw.trim_ascii_start();
    if s.is_empty() {
        return Line::Other;
    }
    if let Some(c) = s.strip_prefix("//") {
        // Most comments are header lines (`//.declare ...`).
        if !c.starts_with(' ') {
            return Line::Other;
        }
        if let Some(f) = c.strip_prefix(" File: ") {
            return Line::File(f.trim_end());
        }
        if let Some(rest) = c.strip_prefix(" Line ") {
            if let Some((n, text)) = rest.split_once(':') {
                if let Ok(line) = n.parse::<u32>() {
                    return Line::Source {
                        line,
                        text: text.trim(),
                    };
                }
            }
        }
        return Line::Other;
    }
    // A label ends with `:`; an instruction does not (its comment, if any,
    // ends with a vISA offset or text).
    let t = s.trim_ascii_end();
    if let Some(label) = t.strip_suffix(':') {
        if !label.is_empty() && !label.starts_with('(') && !label.contains(char::is_whitespace) {
            return Line::Label(label);
        }
    }
    Line::Instruction(s)
}

/// Lines of `text`, each classified.
pub fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\n', bytes)
        .chain(std::iter::once(bytes.len()))
        .map(move |end| {
            // Both ends are at `\n` or the text's ends: char boundaries.
            let line = &text[start..end];
            start = end + 1;
            classify(line)
        })
}

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
    for l in lines(text) {
        src.add(l);
        if let Line::Instruction(i) = l {
            mix.add(i);
        }
    }
    Analysis {
        source: src.finish(),
        mix,
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
    let meta = f.metadata()?;
    if !meta.is_file() || meta.len() > MAX_ANALYZED_BYTES {
        return Ok(None);
    }
    // Exactly the file's length, in as few reads as the kernel allows:
    // `read_to_end` reads in growing steps from 8 KiB and then once more
    // to see the end, several reads for a file of a few tens of KiB.
    let mut filled = bytes.len();
    let len = (meta.len() as usize).max(filled);
    bytes.resize(len, 0);
    let mut f = f;
    while filled < len {
        match f.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(Some(match std::str::from_utf8(bytes) {
        Ok(text) => analyze(text),
        // IGC writes ASCII; anything else is read as well as it goes.
        Err(_) => analyze(&String::from_utf8_lossy(bytes)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        assert_eq!(classify("// File: /tmp/a b.cl"), Line::File("/tmp/a b.cl"));
        assert_eq!(
            classify("// Line 12:  x[i] = x[i] * 2.0f;"),
            Line::Source {
                line: 12,
                text: "x[i] = x[i] * 2.0f;"
            }
        );
        assert_eq!(classify("_0_016:"), Line::Label("_0_016"));
        assert_eq!(
            classify("per_thread_prolog:"),
            Line::Label("per_thread_prolog")
        );
        assert_eq!(classify("// _main:"), Line::Other);
        assert_eq!(classify("//.kernel scale"), Line::Other);
        assert_eq!(classify("// Line x: y"), Line::Other);
        assert_eq!(classify(""), Line::Other);
        let i = "(W)     mov (16|M0)   r127.0<1>:ud  0x0:ud    // $4";
        assert_eq!(classify(i), Line::Instruction(i));
        assert_eq!(
            classify("        jmpi  _0_015 // $22"),
            Line::Instruction("jmpi  _0_015 // $22")
        );
    }
}
