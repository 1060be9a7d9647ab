//! A disassembly's source comments, from its kernel's line table: what
//! IGC's `.asm` dumps write before each instruction, `// File: <path>` and
//! `// Line <N>:  <text>`, written the same way (vISA's
//! `G4_BB::emitInstructionSourceLineMapping`):
//!
//! * a `// File:` when the instruction's file is not the last one named,
//!   a `// Line` when its line is not the last one written and not 0 (an
//!   instruction of line 0, or without one, stays under the line above);
//! * the text is the file's line with the whitespace at both ends taken
//!   away; none (`// Line 13`, no colon) when the file cannot be read or
//!   the line is empty, `invalid line number` past its end.
//!
//! IGC's dumps and its DWARF take an instruction's line from two places
//! (its vISA instruction's location, the LLVM instruction its vISA
//! instruction came from): they agree on the kernel's body, but not on its
//! prologue (the payload loads before the first row marked
//! `prologue_end`). DWARF gives it the function's first line; the dumps
//! give the instructions up to the first load none (vISA made them
//! without a location), and the rest the line and file of the kernel's
//! last instruction (vISA made them after the kernel's code, with the
//! location it had last seen). What is written here is what the dumps say.

use super::dwarf::{LineRow, LineTable};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

/// Source files read for their lines, each once.
#[derive(Debug, Default)]
pub struct SourceFiles {
    /// Path -> its lines (`None`: it cannot be read).
    files: Mutex<HashMap<String, Option<Arc<Vec<String>>>>>,
}

/// Source files larger than this are not read (IGC reads any size; a line
/// table naming a file of gigabytes is not one of source).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

impl SourceFiles {
    /// Files whose lines are these, whatever is on disk (for tests).
    #[cfg(test)]
    pub(crate) fn with(files: &[(&str, Option<&str>)]) -> SourceFiles {
        let s = SourceFiles::default();
        for (path, text) in files {
            let lines = text.map(|t| Arc::new(t.lines().map(str::to_string).collect()));
            s.files.lock().unwrap().insert(path.to_string(), lines);
        }
        s
    }

    /// What IGC quotes for line `n` of `path` (`G4_Kernel::getDebugSrcLine`):
    /// the line as read (`\n` ends a line), `""` when the file cannot be
    /// read, `invalid line number` for a line it does not have.
    fn line(&self, path: &str, n: u32) -> String {
        let lines = {
            let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
            files
                .entry(path.to_string())
                .or_insert_with(|| read_lines(path).map(Arc::new))
                .clone()
        };
        let Some(lines) = lines else {
            return String::new();
        };
        match (n as usize).checked_sub(1).and_then(|i| lines.get(i)) {
            Some(l) => l.clone(),
            None => "invalid line number".into(),
        }
    }
}

/// The lines of a source file, read as `std::getline` does; `None` when
/// it is not a regular file of an absolute path that can be read (the
/// compiler read a relative one from the program's folder, not known
/// here).
fn read_lines(path: &str) -> Option<Vec<String>> {
    let p = std::path::Path::new(path);
    if !p.is_absolute() {
        return None;
    }
    let meta = std::fs::metadata(p).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let bytes = std::fs::read(p).ok()?;
    let mut lines: Vec<String> = bytes
        .split(|&b| b == b'\n')
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    // A last `\n` ends the last line; it does not begin another.
    if bytes.last() == Some(&b'\n') || bytes.is_empty() {
        lines.pop();
    }
    Some(lines)
}

/// The byte offset of each instruction of `code`, and whether it is a send
/// (16 bytes each, 8 when compacted: bit 29 of the first dword; the opcode
/// in bits 0..7, `send` 0x31 and `sendc` 0x32).
fn instructions(code: &[u8]) -> Vec<(u64, bool)> {
    let mut out = Vec::with_capacity(code.len() / 12);
    let mut at = 0usize;
    while let Some(w) = code.get(at..at + 4) {
        let dword = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let size = if dword & (1 << 29) != 0 { 8 } else { 16 };
        if at + size > code.len() {
            break;
        }
        out.push((at as u64, matches!(dword & 0x7f, 0x31 | 0x32)));
        at += size;
    }
    out
}

/// The file (index in the table's files) and line of each instruction, as
/// IGC's dumps give them (see the module's comment).
fn locations(table: &LineTable, code: &[(u64, bool)]) -> Vec<(Option<usize>, u32)> {
    let row_at = |offset: u64| -> Option<&LineRow> {
        let i = table.rows.partition_point(|r| r.offset <= offset);
        i.checked_sub(1).map(|i| &table.rows[i])
    };
    let prologue_end = table.rows.iter().find(|r| r.prologue_end).map(|r| r.offset);
    // Of the kernel's code: a line table can go on past it, into the
    // functions it calls.
    let end = code.last().map_or(0, |&(offset, _)| offset + 1);
    let last = table
        .rows
        .iter()
        .rev()
        .find(|r| r.offset < end && r.line != 0 && r.file.is_some())
        .map(|r| (r.file, r.line));
    let mut loaded = false;
    code.iter()
        .map(|&(offset, send)| {
            if prologue_end.is_some_and(|end| offset < end) {
                loaded |= send;
                return match (loaded, last) {
                    (true, Some(l)) => l,
                    _ => (None, 0),
                };
            }
            row_at(offset).map_or((None, 0), |r| (r.file, r.line))
        })
        .collect()
}

/// `disassembly` (IGA's text of `code`) with the source comments of
/// `table` before its instructions; `None` when the text's instructions
/// are not those of the code (then no line can be placed).
pub(crate) fn annotate(
    disassembly: &str,
    code: &[u8],
    table: &LineTable,
    sources: &SourceFiles,
) -> Option<String> {
    use crate::line::{classify, Line};
    let code = instructions(code);
    let count = disassembly
        .lines()
        .filter(|l| matches!(classify(l), Line::Instruction(_)))
        .count();
    if count != code.len() {
        return None;
    }
    let mut at = locations(table, &code).into_iter();
    let mut out = String::with_capacity(disassembly.len() + disassembly.len() / 4);
    let (mut last_file, mut last_line): (Option<usize>, u32) = (None, 0);
    for l in disassembly.lines() {
        if matches!(classify(l), Line::Instruction(_)) {
            if let Some((file, line)) = at.next() {
                comments(
                    &mut out,
                    table,
                    sources,
                    (file, line),
                    (&mut last_file, &mut last_line),
                );
            }
        }
        out.push_str(l);
        out.push('\n');
    }
    Some(out)
}

/// The comments before an instruction of `file` and `line`, given the
/// last file and line written (updated).
fn comments(
    out: &mut String,
    table: &LineTable,
    sources: &SourceFiles,
    (file, line): (Option<usize>, u32),
    (last_file, last_line): (&mut Option<usize>, &mut u32),
) {
    if let Some(f) = file.filter(|_| file != *last_file) {
        out.push_str("\n// File: ");
        push_line_safe(out, &table.files[f]);
        out.push('\n');
        *last_file = file;
    }
    if line != *last_line && line != 0 {
        let _ = write!(out, "\n// Line {line}");
        if let Some(f) = file {
            // The text is one line of the file: it has no `\n`.
            let text = sources.line(&table.files[f], line);
            if !text.is_empty() {
                out.push_str(":  ");
                out.push_str(trim_c_space(&text));
            }
        }
        out.push('\n');
        *last_line = line;
    }
}

/// `s` without the characters C's `isspace` takes at either end.
fn trim_c_space(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'))
}

/// Appends `text` with `\n` and `\r` written as those two characters, so
/// that it stays on one line.
pub(super) fn push_line_safe(s: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            c => s.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::dwarf::tests::{LOOPS_CL, LOOPS_G};
    use crate::native::{parse, NativeKernel};
    use crate::source;

    const CL: &str = include_str!("../../../tests/workload/kernels_loops.cl");

    fn kernel(name: &str) -> NativeKernel {
        let p = parse(LOOPS_G, None).unwrap();
        p.kernels
            .into_iter()
            .find(|k| k.name == name.as_bytes())
            .unwrap()
    }

    /// A stand-in for IGA's text of `k`: a label, then one line per
    /// instruction.
    fn text(k: &NativeKernel) -> String {
        let n = instructions(&k.code).len();
        let mut t = String::from("L0:\n");
        for i in 0..n {
            let _ = writeln!(t, "        nop // {i}");
        }
        t
    }

    fn counts(s: &source::Source) -> (Vec<(u32, u64)>, u64) {
        let lines = s.lines.iter().map(|l| (l.line, l.instructions)).collect();
        (lines, s.no_line)
    }

    /// IGC 2.40's dumps of this module give loop_none and loop_one these
    /// instructions per line (the prologue: 6 without a line, the rest
    /// under the closing brace); loop_nested's dump gives lines 26 and 28
    /// 9 and 21, where DWARF has no row for 4 instructions that the dump
    /// puts under 28 (their vISA instructions map to no LLVM instruction)
    /// and so leaves them under 26, the row before them.
    #[test]
    fn instructions_per_line_are_those_of_igcs_dumps() {
        let files = SourceFiles::with(&[(LOOPS_CL, Some(CL))]);
        for (name, want) in [
            ("loop_none", vec![(7, 11), (8, 10), (9, 24)]),
            (
                "loop_one",
                vec![(13, 11), (14, 5), (16, 16), (17, 3), (18, 1), (19, 24)],
            ),
            (
                "loop_nested",
                vec![
                    (23, 14),
                    (26, 13),
                    (28, 17),
                    (29, 2),
                    (30, 1),
                    (32, 5),
                    (33, 24),
                ],
            ),
        ] {
            let k = kernel(name);
            let out = annotate(&text(&k), &k.code, k.lines.as_ref().unwrap(), &files).unwrap();
            let s = source::parse(&out).unwrap();
            assert_eq!(s.files, [LOOPS_CL], "{name}");
            assert_eq!(counts(&s), (want, 6), "{name}:\n{out}");
            let file: Vec<&str> = CL.lines().collect();
            for l in &s.lines {
                assert_eq!(l.text, file[l.line as usize - 1].trim(), "{name}");
            }
        }
    }

    #[test]
    fn comments_are_written_as_igc_writes_them() {
        let k = kernel("loop_one");
        let files = SourceFiles::with(&[(LOOPS_CL, Some(CL))]);
        let out = annotate(&text(&k), &k.code, k.lines.as_ref().unwrap(), &files).unwrap();
        let head: Vec<&str> = out.lines().skip(6).take(6).collect();
        assert_eq!(
            head,
            [
                "        nop // 5",
                "",
                &format!("// File: {LOOPS_CL}"),
                "",
                "// Line 19:  }",
                "        nop // 6",
            ]
        );
        assert!(
            out.contains("\n// Line 13:  size_t i = get_global_id(0);\n        nop // 23\n"),
            "{out}"
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_gives_lines_without_text() {
        let k = kernel("loop_one");
        let t = k.lines.as_ref().unwrap();
        // IGC writes `// Line N` alone (no colon) for a file it cannot read.
        let unread = SourceFiles::with(&[(LOOPS_CL, None)]);
        let out = annotate(&text(&k), &k.code, t, &unread).unwrap();
        assert!(out.contains("\n// Line 13\n"), "{out}");
        assert!(!out.contains("// Line 13:"), "{out}");
        // A file shorter than the lines: IGC's words for it.
        let short = SourceFiles::with(&[(LOOPS_CL, Some("a\n  \n"))]);
        let out = annotate(&text(&k), &k.code, t, &short).unwrap();
        assert!(
            out.contains("\n// Line 13:  invalid line number\n"),
            "{out}"
        );
        // A relative path is not read (the compiler read it from a folder
        // not known here).
        assert_eq!(SourceFiles::default().line("kernels_loops.cl", 1), "");
    }

    #[test]
    fn a_text_of_other_instructions_gets_no_lines() {
        let k = kernel("loop_one");
        let t = k.lines.as_ref().unwrap();
        let fewer = text(&k).replacen("        nop // 0\n", "", 1);
        assert_eq!(annotate(&fewer, &k.code, t, &SourceFiles::default()), None);
    }

    #[test]
    fn source_files_are_read_as_getline_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("k.cl");
        std::fs::write(&f, "one\r\n\n  three \nfour").unwrap();
        let s = SourceFiles::default();
        let p = f.to_str().unwrap();
        assert_eq!(
            [
                s.line(p, 1),
                s.line(p, 2),
                s.line(p, 3),
                s.line(p, 4),
                s.line(p, 5)
            ],
            ["one\r", "", "  three ", "four", "invalid line number"]
        );
        assert_eq!(s.line(dir.path().to_str().unwrap(), 1), "");
    }
}
