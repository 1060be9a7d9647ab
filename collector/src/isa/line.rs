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
            // `// Line N` alone: IGC could not read the source file.
            let (n, text) = rest.split_once(':').unwrap_or((rest.trim_end(), ""));
            if let Ok(line) = n.parse::<u32>() {
                return Line::Source {
                    line,
                    text: text.trim(),
                };
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
        let i = "(W)     mov (16|M0)   r127.0<1>:ud  0x0:ud    // $4";
        assert_eq!(classify(i), Line::Instruction(i));
        assert_eq!(
            classify("        jmpi  _0_015 // $22"),
            Line::Instruction("jmpi  _0_015 // $22")
        );
    }
}
