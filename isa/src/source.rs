//! Source lines in ISA text. Kernels built with line information (`-g`,
//! `-gline-tables-only`) have their instructions grouped under
//! `// File: <path>` and `// Line <N>:  <source text>` comments; an
//! instruction belongs to the last `// Line` above it.

use super::line::Line;
use crate::fast::FastMap;
use serde::{Deserialize, Serialize};

/// A kernel's source lines and the instructions each produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Source files, in order of first appearance.
    pub files: Vec<String>,
    /// Each source line that produced instructions, by file (in `files`
    /// order) then line number.
    pub lines: Vec<SourceLine>,
    /// Instructions above the first `// Line` comment (IGC's per-thread
    /// prolog), which no source line produced. `lines`' counts and this sum
    /// to the kernel's instruction count.
    pub no_line: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
    /// The source text IGC quoted in the comment.
    pub text: String,
    pub instructions: u64,
}

/// Accumulates a [`Source`] line by line.
#[derive(Debug, Default)]
pub struct Builder {
    files: Vec<String>,
    file: Option<usize>,
    /// (file index, line) -> index in `lines` (hashed fast: SipHash of
    /// two small numbers was seen in the scan's profile).
    index: FastMap<(usize, u32), usize>,
    lines: Vec<(usize, u32, String, u64)>,
    current: Option<usize>,
    no_line: u64,
    seen_info: bool,
}

impl Builder {
    pub fn add(&mut self, l: Line<'_>) {
        match l {
            Line::File(f) => self.file(f),
            Line::Source { line, text } => self.source(line, text),
            Line::Instruction(_) => self.instruction(),
            Line::Label(_) | Line::Other => {}
        }
    }

    /// A `// File: <path>` line.
    pub fn file(&mut self, f: &str) {
        self.seen_info = true;
        self.file = Some(match self.files.iter().position(|x| x == f) {
            Some(i) => i,
            None => {
                self.files.push(f.to_string());
                self.files.len() - 1
            }
        });
    }

    /// A `// Line <line>:  <text>` line.
    pub fn source(&mut self, line: u32, text: &str) {
        self.seen_info = true;
        // A `// Line` before any `// File` (not seen from IGC) gets
        // an unnamed file rather than being dropped.
        let file = match self.file {
            Some(f) => f,
            None => {
                self.files.push(String::new());
                self.file = Some(self.files.len() - 1);
                self.files.len() - 1
            }
        };
        let lines = &mut self.lines;
        let i = *self.index.entry((file, line)).or_insert_with(|| {
            lines.push((file, line, text.to_string(), 0));
            lines.len() - 1
        });
        self.current = Some(i);
    }

    /// An instruction line.
    pub fn instruction(&mut self) {
        match self.current {
            Some(i) => self.lines[i].3 += 1,
            None => self.no_line += 1,
        }
    }

    /// The source lines; `None` when the text had no line information.
    pub fn finish(mut self) -> Option<Source> {
        if !self.seen_info {
            return None;
        }
        self.lines.sort_by_key(|l| (l.0, l.1));
        let files = self.files;
        let lines = self
            .lines
            .into_iter()
            .filter(|l| l.3 > 0)
            .map(|(f, line, text, instructions)| SourceLine {
                file: files[f].clone(),
                line,
                text,
                instructions,
            })
            .collect();
        Some(Source {
            files,
            lines,
            no_line: self.no_line,
        })
    }
}

/// The source lines of ISA text; `None` without line information.
pub fn parse(text: &str) -> Option<Source> {
    let mut b = Builder::default();
    for l in super::line::lines(text) {
        b.add(l);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_go_to_the_line_above_them() {
        let text = "\
//.kernel k
per_thread_prolog:
(W)     mov (16|M0)  r127.0<1>:ud  0x0:ud // $4

// File: /src/k.cl

// Line 13:  }
        load.ugm.d32x32t.a32.ca.ca (1|M0)  r1:2 bti[255][r127:1] // $19
// Line 11:  size_t i = get_global_id(0);
(W)     mul (1|M0)   acc0.0<1>:d   r4.10<0;1,0>:d    r0.2<0;1,0>:uw // $7
_0_001:
(W)     macl (1|M0)  r2.0<1>:d     r4.10<0;1,0>:d    r0.1<0;1,0>:d // $9
// File: /src/inc.h
// Line 2:  return a;
        mov (32|M0)  r3.0<1>:f  r4.0<1;1,0>:f // $10
// File: /src/k.cl
// Line 13:  }
(W)     send.gtwy (8|M0)   null  r127  null:0  0x0  0x02000010 {EOT} // $19
// Line 40:  unused
";
        let s = parse(text).unwrap();
        assert_eq!(s.files, ["/src/k.cl", "/src/inc.h"]);
        let got: Vec<(&str, u32, &str, u64)> = s
            .lines
            .iter()
            .map(|l| (l.file.as_str(), l.line, l.text.as_str(), l.instructions))
            .collect();
        assert_eq!(
            got,
            [
                ("/src/k.cl", 11, "size_t i = get_global_id(0);", 2),
                ("/src/k.cl", 13, "}", 2),
                ("/src/inc.h", 2, "return a;", 1),
            ]
        );
        assert_eq!(s.no_line, 1);
    }

    #[test]
    fn no_line_information_is_none() {
        assert_eq!(parse("//.kernel k\n    mov (1|M0) r1.0<1>:d 0:w\n"), None);
    }
}
