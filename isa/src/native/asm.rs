//! The text of a disassembled kernel, in the style of IGC's `.asm` dumps,
//! and the instructions of any such text.

use super::lines::{push_line_safe, SourceFiles};
use super::program::{NativeKernel, Program};
use std::collections::HashSet;
use std::fmt::Write;

/// A kernel's `.asm` text: a header of IGC's style (the lines
/// [`crate::header::parse_own_header`] reads: `//.kernel`, `//.platform`,
/// `//.thread_config numGRF=`, `//.instCount`, `//.spill size`), lines of
/// its own for what IGC's header does not say (`//.simd`, `//.scratch size`,
/// `//.stateless private memory size`, `//.slm size`) and where the text
/// comes from (`//.source module-binary (<format>[, fat binary member
/// <entry>])`), then `disassembly`, IGA's text, with IGC's `// File:` and
/// `// Line N:  <text>` comments before the instructions of each source
/// line when the kernel has a line table (the text read from the file
/// through `sources`), else unchanged.
///
/// The name `name` as [`render_asm`] writes it on the `//.kernel` line.
/// The name is written as is: IGC's dumps put the raw bytes there too, and
/// a lossy conversion only ever touches names that are not UTF-8. Only
/// line breaks are escaped: one would end the header line, and what
/// follows it would read as header fields or instructions.
pub fn name_line(name: &[u8]) -> String {
    let mut s = String::new();
    push_line_safe(&mut s, &String::from_utf8_lossy(name));
    s
}

/// `//.private memory size` is IGC's figure as the binary's metadata
/// repeats it (zebin `private_size`); patch-token binaries do not give it.
pub fn render_asm(
    kernel: &NativeKernel,
    program: &Program,
    disassembly: &str,
    sources: &SourceFiles,
) -> String {
    let mut s = String::with_capacity(disassembly.len() + 512);
    s.push_str("//.kernel ");
    s.push_str(&name_line(&kernel.name));
    s.push('\n');
    if let Some(p) = &program.platform {
        let _ = writeln!(s, "//.platform {}", p.name);
    }
    if let Some(g) = kernel.grf {
        let _ = writeln!(s, "//.thread_config numGRF={g}");
    }
    if let Some(w) = kernel.simd {
        let _ = writeln!(s, "//.simd {w}");
    }
    let _ = writeln!(s, "//.instCount {}", instructions(disassembly).len());
    if let Some(v) = kernel.spill_bytes {
        let _ = writeln!(s, "//.spill size {v}");
    }
    if let Some(v) = kernel.private_memory_bytes.filter(|&v| v > 0) {
        let _ = writeln!(s, "//.private memory size {v}");
    }
    if let Some(v) = kernel.stateless_private_bytes {
        let _ = writeln!(s, "//.stateless private memory size {v}");
    }
    if let Some(v) = kernel.scratch_bytes {
        let _ = writeln!(s, "//.scratch size {v}");
    }
    if let Some(v) = kernel.slm_bytes {
        let _ = writeln!(s, "//.slm size {v}");
    }
    match &program.fat_entry {
        Some(e) => {
            let _ = write!(
                s,
                "//.source module-binary ({}, fat binary member ",
                program.format
            );
            push_line_safe(&mut s, e);
            s.push_str(")\n");
        }
        None => {
            let _ = writeln!(s, "//.source module-binary ({})", program.format);
        }
    }
    s.push('\n');
    let annotated = kernel
        .lines
        .as_ref()
        .and_then(|t| super::lines::annotate(disassembly, &kernel.code, t, sources));
    match annotated {
        Some(text) => s.push_str(&text),
        None => {
            s.push_str(disassembly);
            if !disassembly.ends_with('\n') {
                s.push('\n');
            }
        }
    }
    s
}

/// The instructions of an `.asm` text, IGC's or [`render_asm`]'s, one
/// string each, for comparing two texts of the same code:
///
/// * comments (`// ...` to the end of the line, so also IGC's header,
///   `//.declare`s, `// Line` source lines and send descriptors) and blank
///   lines go;
/// * label lines (`name:`) go, and a label used as an operand (a branch
///   target) becomes `@label`: IGC names labels after its own blocks
///   (`_main_0`, `BB_3`), IGA after code offsets (`L160`);
/// * runs of whitespace become one space.
pub fn instructions(asm_text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut labels = HashSet::new();
    for raw in asm_text.lines() {
        let code = raw.find("//").map_or(raw, |c| &raw[..c]).trim();
        if code.is_empty() {
            continue;
        }
        if let Some(label) = code.strip_suffix(':') {
            if is_identifier(label) {
                labels.insert(label.to_string());
                continue;
            }
        }
        lines.push(code);
    }
    lines
        .into_iter()
        .map(|l| {
            let mut out = String::with_capacity(l.len());
            for word in l.split_whitespace() {
                if !out.is_empty() {
                    out.push(' ');
                }
                if labels.contains(word) {
                    out.push_str("@label");
                } else {
                    out.push_str(word);
                }
            }
            out
        })
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::{Format, Platform};

    #[test]
    fn instructions_drop_comments_and_labels_and_name_branch_targets_alike() {
        let igc = "//.kernel k\n//.instCount 3\n\n//.declare x\n_main_0:\n(W)     mov (16|M0)   r1.0<1>:ud  0x0:ud   // $1\n// Line 3:  x = 1;\n        jmpi   _main_0     {I@1}   // $2\n        send.gtwy (8|M0)  null  r127  null:0  0x0  0x02000010  {EOT} // wr:1+0\n";
        let iga = "L0:\n(W) mov (16|M0) r1.0<1>:ud 0x0:ud\n        jmpi L0 {I@1}\nsend.gtwy (8|M0) null r127 null:0 0x0 0x02000010 {EOT}\n";
        let a = instructions(igc);
        assert_eq!(a, instructions(iga));
        assert_eq!(a.len(), 3);
        assert_eq!(a[1], "jmpi @label {I@1}");
    }

    #[test]
    fn line_breaks_in_names_stay_in_their_header_line() {
        let k = NativeKernel {
            name: b"k\n(W) nop\r\n//.spill size 9".to_vec(),
            grf: Some(128),
            ..NativeKernel::default()
        };
        let p = Program {
            format: Format::Zebin,
            platform: None,
            fat_entry: Some("64.x\nmov (1|M0) r2.0<1>:ud 0x0:ud".into()),
            kernels: vec![],
        };
        let body = "(W) mov (8|M0) r1.0<1>:ud 0x0:ud\n";
        let text = render_asm(&k, &p, body, &SourceFiles::default());
        assert_eq!(instructions(&text), instructions(body), "{text}");
        let h = crate::header::parse_own_header(text.as_bytes());
        assert_eq!(
            h.kernel.as_deref(),
            Some(&b"k\\n(W) nop\\r\\n//.spill size 9"[..])
        );
        assert_eq!(
            (h.grf, h.spill_bytes, h.instructions),
            (Some(128), None, Some(1))
        );
        assert!(
            text.contains("fat binary member 64.x\\nmov (1|M0)"),
            "{text}"
        );
    }

    #[test]
    fn the_header_is_read_by_the_dump_parser() {
        let k = NativeKernel {
            name: b"_ZTS3foo".to_vec(),
            code: vec![],
            simd: Some(32),
            grf: Some(256),
            spill_bytes: Some(128),
            private_memory_bytes: Some(32),
            stateless_private_bytes: Some(64),
            scratch_bytes: Some(192),
            slm_bytes: Some(0),
            local_args: None,
            barriers: None,
            lines: None,
        };
        let p = Program {
            format: Format::Zebin,
            platform: Some(Platform {
                iga_gen: 0x0100_0004,
                name: "PVCXT".into(),
            }),
            fat_entry: Some("64.12.60.7".into()),
            kernels: vec![],
        };
        let body = "L0:\n(W) mov (8|M0) r1.0<1>:ud 0x0:ud\n(W) nop\n";
        let text = render_asm(&k, &p, body, &SourceFiles::default());
        let h = crate::header::parse_own_header(text.as_bytes());
        assert_eq!(h.kernel.as_deref(), Some(&b"_ZTS3foo"[..]));
        assert_eq!(h.platform.as_deref(), Some("PVCXT"));
        assert_eq!(h.grf, Some(256));
        assert_eq!(h.instructions, Some(2));
        assert_eq!(h.spill_bytes, Some(128));
        assert_eq!(h.private_memory_bytes, Some(32));
        assert!(text.contains("//.stateless private memory size 64\n"));
        assert!(text.contains("//.scratch size 192\n"));
        assert!(text.contains("//.source module-binary (zebin, fat binary member 64.12.60.7)\n"));
        assert!(text.ends_with("(W) nop\n"));
    }
}
