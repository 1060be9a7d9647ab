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
#[inline]
pub(crate) fn shape(raw: &[u8]) -> Shape {
    let start = super::bytes::skip_space(raw, 0);
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
    super::bytes::line_ends(text.as_bytes()).map(move |end| {
        // Both ends are at `\n` or the text's ends: char boundaries.
        let line = &text[start..end];
        start = end + 1;
        classify(line)
    })
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
