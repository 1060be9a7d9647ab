//! How a kernel's name shows to a person: escaped for a terminal (control
//! characters, and the characters that show nothing or reorder the text
//! around them), readable (a name that is not UTF-8 with its bytes as
//! `\xff`, the empty name as `(empty name)`) and cut for a message. The
//! page marks the same characters (`report/export/html/page.js`). Names
//! are the program's: any bytes.

/// How a message names a kernel whose name is empty.
pub const EMPTY_NAME: &str = "(empty name)";

/// Longest name a message (an error, a warning) gives whole, in characters.
pub const MESSAGE_NAME_MAX: usize = 120;

/// A kernel's name in a message: [`readable`] (each byte that is not
/// UTF-8 as `\xff`), its middle cut past [`MESSAGE_NAME_MAX`] characters, escaped for a
/// terminal; the empty name as [`EMPTY_NAME`].
pub fn in_message(name: &[u8]) -> String {
    if name.is_empty() {
        return EMPTY_NAME.to_string();
    }
    let text = readable(name, &String::from_utf8_lossy(name));
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= MESSAGE_NAME_MAX {
        return escape_for_terminal(&text);
    }
    // Its middle cut: the head and the tail tell names apart.
    let head = (MESSAGE_NAME_MAX - 1) / 2;
    let tail = MESSAGE_NAME_MAX - 1 - head;
    let mut cut: String = chars[..head].iter().collect();
    cut.push('…');
    cut.extend(&chars[chars.len() - tail..]);
    escape_for_terminal(&cut)
}

/// Replaces control characters, and the characters that are invisible or
/// reorder text ([`invisible`]), by visible escapes (`\n`, `\u{1b}`,
/// `\u{202e}`), so that a name cannot move the cursor, clear the screen,
/// break a table row, hide part of itself or make a line read other than
/// what it holds (the "Trojan Source" trick).
pub fn escape_for_terminal(s: &str) -> String {
    if !needs_escape(s) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether [`escape_for_terminal`] changes `s`. Most names are printable
/// ASCII: they are shown as they are, found so byte by byte.
pub fn needs_escape(s: &str) -> bool {
    !s.bytes().all(|b| (0x20..0x7f).contains(&b))
        && s.chars().any(|c| c.is_control() || invisible(c))
}

/// Characters that show nothing, or change how the text around them
/// shows, on a terminal and in a page: Unicode's format characters
/// (general category Cf: the bidi controls U+202A to U+202E, U+2066 to
/// U+2069, U+200E, U+200F and U+061C; the zero-width U+200B to U+200D,
/// U+2060 and U+FEFF; the soft hyphen U+00AD; the tag characters from
/// U+E0000), the line and paragraph separators, every space but the
/// ASCII one, the fillers of Hangul (U+115F, U+1160, U+3164, U+FFA0) and
/// Braille (U+2800), the combining grapheme joiner U+034F, Khmer's
/// invisible vowels U+17B4 and U+17B5, and the variation selectors.
pub fn invisible(c: char) -> bool {
    matches!(
        c as u32,
        // Cf, Unicode 15.
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE007F
            // Spaces but U+0020, and the line and paragraph separators.
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            // Fillers, joiners, invisible vowels, variation selectors.
            | 0x34F
            | 0x115F
            | 0x1160
            | 0x17B4
            | 0x17B5
            | 0x180B..=0x180D
            | 0x180F
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFFA0
            | 0xE0100..=0xE01EF
    )
}

/// A name as a person reads it, before [`escape_for_terminal`]: its
/// demangled form, or, for a name that is not UTF-8 (which no demangler
/// took), its text with each byte that is not UTF-8 as `\xff`, so that
/// names that differ only there never look the same; the empty name as
/// [`EMPTY_NAME`].
pub fn readable(name: &[u8], demangled: &str) -> String {
    if name.is_empty() && demangled.is_empty() {
        return EMPTY_NAME.to_string();
    }
    if std::str::from_utf8(name).is_ok() || demangled != String::from_utf8_lossy(name) {
        return demangled.to_string();
    }
    let mut out = String::with_capacity(name.len() + 8);
    for chunk in name.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escaping_hides_control_characters() {
        assert_eq!(escape_for_terminal("a\nb\x1b[2J"), "a\\nb\\u{1b}[2J");
        assert_eq!(
            escape_for_terminal("c1\u{85}del\x7f"),
            "c1\\u{85}del\\u{7f}"
        );
    }

    #[test]
    fn terminal_escaping_shows_invisible_and_reordering_characters() {
        // Bidi controls: a name cannot read backwards.
        assert_eq!(
            escape_for_terminal("access\u{202e}\u{2066}nimda\u{2069}\u{202c}"),
            "access\\u{202e}\\u{2066}nimda\\u{2069}\\u{202c}"
        );
        for c in [
            '\u{202a}',
            '\u{202b}',
            '\u{202d}',
            '\u{2067}',
            '\u{2068}',
            '\u{200e}',
            '\u{200f}',
            '\u{61c}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{ad}',
            '\u{34f}',
            '\u{115f}',
            '\u{1160}',
            '\u{3164}',
            '\u{ffa0}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
            '\u{a0}',
            '\u{2028}',
            '\u{2029}',
            '\u{3000}',
            '\u{fe0f}',
            '\u{2800}',
        ] {
            let s = format!("a{c}b");
            assert!(needs_escape(&s), "{:x}", c as u32);
            assert_eq!(escape_for_terminal(&s), format!("a\\u{{{:x}}}b", c as u32));
        }
        // What shows stays as it is: letters of any script, marks on a
        // letter, the ASCII space, symbols.
        for s in [
            "caf\u{e9}",
            "e\u{301}",
            "a b",
            "ядро<ä, 1>",
            "\u{4e2d}",
            "x\u{2026}",
            "\u{1f600}",
        ] {
            assert!(!needs_escape(s), "{s}");
            assert_eq!(escape_for_terminal(s), s);
        }
    }

    #[test]
    fn a_name_that_is_not_utf8_reads_with_its_bytes_and_the_empty_name_reads_as_such() {
        let a = b"bad\xff\xfename";
        let b = b"bad\xfe\xffname";
        assert_eq!(
            readable(a, &String::from_utf8_lossy(a)),
            "bad\\xff\\xfename"
        );
        assert_eq!(
            readable(b, &String::from_utf8_lossy(b)),
            "bad\\xfe\\xffname"
        );
        assert_eq!(
            readable(b"cut\xe2\x80", &String::from_utf8_lossy(b"cut\xe2\x80")),
            "cut\\xe2\\x80"
        );
        assert_eq!(readable(b"", ""), EMPTY_NAME);
        assert_eq!(readable(b"_Z3fooi", "foo(int)"), "foo(int)");
        assert_eq!(readable("caf\u{e9}".as_bytes(), "caf\u{e9}"), "caf\u{e9}");
        assert_eq!(in_message(b""), EMPTY_NAME);
        assert_eq!(in_message(a), "bad\\xff\\xfename");
        let long = "k".repeat(1000);
        assert_eq!(
            in_message(long.as_bytes()).chars().count(),
            MESSAGE_NAME_MAX
        );
        assert_eq!(in_message("r\u{202e}l".as_bytes()), "r\\u{202e}l");
    }
}
