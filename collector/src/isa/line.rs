//! What each line of ISA text is ([`Line`]): a source file or line
//! comment, a label, an instruction, or anything else.

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

/// The shape of one line (without its newline), by byte offsets into it:
/// what [`classify`] and the analysis of bytes ([`super::analyze_bytes`])
/// both read a line as. Every offset is next to an ASCII byte or at an
/// end, so text cut there is whole characters, and bytes that are not
/// UTF-8 cut there read lossily as the same part of the whole read so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `// File: `, the path from this offset on (untrimmed).
    File(usize),
    /// `// Line `, the rest from this offset on (see [`source_line`]).
    Source(usize),
    /// Ends with `:` (after ASCII trims) at `colon`, from `start`: a label
    /// if [`is_label`] says the part between is one, else an instruction.
    Colon { start: usize, colon: usize },
    /// An instruction from this offset on.
    Instruction(usize),
    /// A header line, another comment, or an empty line.
    Other,
}

/// The [`Shape`] of one line. ASCII trims: Unicode whitespace never
/// occurs in ISA text, and decoding characters costs more than the rest
/// of the line.
pub(crate) fn shape(raw: &[u8]) -> Shape {
    let start = skip_space(raw, 0);
    let s = &raw[start..];
    match s {
        [] => Shape::Other,
        // Most comments are header lines (`//.declare ...`).
        [b'/', b'/', b' ', c @ ..] => {
            if c.starts_with(b"File: ") {
                Shape::File(start + 9)
            } else if c.starts_with(b"Line ") {
                Shape::Source(start + 8)
            } else {
                Shape::Other
            }
        }
        [b'/', b'/', ..] => Shape::Other,
        // A label ends with `:`; an instruction does not (its comment, if
        // any, ends with a vISA offset or text).
        // Most instructions end with their comment's last character.
        [.., c] if *c != b':' && !c.is_ascii_whitespace() => Shape::Instruction(start),
        _ => match s.trim_ascii_end() {
            [label @ .., b':'] => Shape::Colon {
                start,
                colon: start + label.len(),
            },
            _ => Shape::Instruction(start),
        },
    }
}

/// The first byte of `b` from `i` on that is not ASCII whitespace (or its
/// length). Eight bytes at a time while they are spaces (IGC indents its
/// instructions with eight, and aligns them after predicates with more),
/// the first other one found without a branch per byte.
pub(crate) fn skip_space(b: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some(w) = b.get(i..i + 8) {
        let other = u64::from_le_bytes(w.try_into().expect("eight bytes")) ^ SPACES;
        if other != 0 {
            i += (other.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    // Other whitespace (tabs), and the last few bytes.
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The first ASCII whitespace of `b` from `i` on (or its length): the end
/// of a word. Eight bytes at a time, as one number, whose first byte
/// below `!` is found without a branch per byte (the ends of opcodes of
/// all lengths cost a mispredicted branch each, byte by byte).
pub(crate) fn word_end(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    while let Some(w) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        // The high bit of each byte below 0x21, and maybe of bytes after
        // the first such (borrows): the lowest is exact.
        let below = w.wrapping_sub(ONES * 0x21) & !w & HIGH;
        if below != 0 {
            let at = i + (below.trailing_zeros() / 8) as usize;
            if b[at].is_ascii_whitespace() {
                return at;
            }
            // A control byte, not whitespace: byte by byte from there.
            i = at;
            break;
        }
        i += 8;
    }
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The line number and source text of the rest of a `// Line ` comment
/// (`12:  x[i] = x[i] * 2.0f;`), if it has a number.
pub(crate) fn source_line(rest: &str) -> Option<(u32, &str)> {
    // `// Line N` alone: IGC could not read the source file.
    let (n, text) = rest.split_once(':').unwrap_or((rest.trim_end(), ""));
    let line = n.parse::<u32>().ok()?;
    Some((line, text.trim()))
}

/// Whether the part of a line before its final `:` is a label.
pub(crate) fn is_label(label: &str) -> bool {
    !label.is_empty() && !label.starts_with('(') && !label.contains(char::is_whitespace)
}

/// Classifies one line (without its newline).
pub fn classify(raw: &str) -> Line<'_> {
    match shape(raw.as_bytes()) {
        Shape::File(at) => Line::File(raw[at..].trim_end()),
        Shape::Source(at) => match source_line(&raw[at..]) {
            Some((line, text)) => Line::Source { line, text },
            None => Line::Other,
        },
        Shape::Colon { start, colon } if is_label(&raw[start..colon]) => {
            Line::Label(&raw[start..colon])
        }
        Shape::Colon { start, .. } | Shape::Instruction(start) => Line::Instruction(&raw[start..]),
        Shape::Other => Line::Other,
    }
}

/// Lines of `text`, each classified.
pub fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    line_ends(text.as_bytes()).map(move |end| {
        // Both ends are at `\n` or the text's ends: char boundaries.
        let line = &text[start..end];
        start = end + 1;
        classify(line)
    })
}

/// The ends of the lines of `text`: the offset of each `\n`, in order,
/// then the text's length (as `memchr_iter(b'\n', text)` and then
/// `text.len()`). Found 64 bytes at a time, as a mask of their `\n`s:
/// a call per line to find the next cost more than a line's analysis
/// without it.
pub(crate) fn line_ends(text: &[u8]) -> LineEnds<'_> {
    LineEnds {
        text,
        block: 0,
        mask: newlines(text),
        done: false,
    }
}

pub(crate) struct LineEnds<'a> {
    text: &'a [u8],
    /// The offset of the block of 64 bytes `mask` is of.
    block: usize,
    /// Bit `i`: a `\n` at `block + i` not yet given.
    mask: u64,
    /// The text's length was given.
    done: bool,
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.mask != 0 {
                let at = self.block + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                return Some(at);
            }
            let next = self.block + 64;
            if next >= self.text.len() {
                if self.done {
                    return None;
                }
                self.done = true;
                return Some(self.text.len());
            }
            self.block = next;
            self.mask = newlines(&self.text[next..]);
        }
    }
}

/// The `\n`s among the first 64 bytes of `b` (all of it if shorter), bit
/// `i` for byte `i`.
#[inline]
fn newlines(b: &[u8]) -> u64 {
    match b.first_chunk::<64>() {
        Some(block) => newlines_of(block),
        None => {
            // The text's last bytes, after zeros (no `\n`s) to 64.
            let mut block = [0; 64];
            block[..b.len()].copy_from_slice(b);
            newlines_of(&block)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn newlines_of(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::_mm_set1_epi8;
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
    let p = block.as_ptr().cast::<__m128i>();
    // SAFETY: SSE2 is part of x86_64; the 16 bytes read at `p.add(i)` are
    // within `block` (i < 4), and the load needs no alignment.
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| unsafe {
        let v = _mm_loadu_si128(p.add(i));
        u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))) as u16)
    });
    a | b << 16 | c << 32 | d << 48
}

#[cfg(not(target_arch = "x86_64"))]
fn newlines_of(block: &[u8; 64]) -> u64 {
    block
        .iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | u64::from(c == b'\n') << i)
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
        assert_eq!(classify("// Line 7"), Line::Source { line: 7, text: "" });
        assert_eq!(classify("// Line 7 "), Line::Source { line: 7, text: "" });
        assert_eq!(classify("// Line 7 x"), Line::Other);
        assert_eq!(classify(""), Line::Other);
        // Tabs and CRs trim; Unicode whitespace keeps a label from being one.
        assert_eq!(classify("\tL1:\r"), Line::Label("L1"));
        assert_eq!(classify("a\u{a0}b:"), Line::Instruction("a\u{a0}b:"));
        assert_eq!(classify("(W):"), Line::Instruction("(W):"));
        assert_eq!(classify(" :"), Line::Instruction(":"));
        assert_eq!(
            classify("// Line 7\u{3000}"),
            Line::Source { line: 7, text: "" }
        );
        assert_eq!(
            classify("// Line +7: x\r"),
            Line::Source { line: 7, text: "x" }
        );
        assert_eq!(classify("// Line 7 : x"), Line::Other);
        assert_eq!(classify("//  Line 7: x"), Line::Other);
        assert_eq!(classify("// File: a \r"), Line::File("a"));
        let i = "(W)     mov (16|M0)   r127.0<1>:ud  0x0:ud    // $4";
        assert_eq!(classify(i), Line::Instruction(i));
        assert_eq!(
            classify("        jmpi  _0_015 // $22"),
            Line::Instruction("jmpi  _0_015 // $22")
        );
    }
}
