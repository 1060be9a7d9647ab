//! Native GPU binaries: finding each kernel's machine code in the module
//! binaries the driver is given (or gives back), and turning it into text
//! that reads like IGC's `.asm` dumps.
//!
//! Formats read ([`parse`]):
//!
//! * zebin: ELF, machine 205 (Intel GT); code in `.text.<kernel>`, per-kernel
//!   metadata in the `.ze_info` YAML section, the platform in the
//!   `.note.intelgt.compat` notes ([`Format::Zebin`]), the source lines in
//!   its DWARF (`.debug_line`, when built with `-g`; [`LineTable`]);
//! * NEO's patch-token program binary, magic `CTNI`, bare
//!   ([`Format::PatchTokens`]) or inside NEO's ELF wrapper (`e_type`
//!   0xff04, section `Intel(R) OpenCL Device Binary`,
//!   [`Format::PatchTokensElf`]);
//! * ocloc's fat binaries: `ar` archives with one member per device or IP
//!   version (`64.12.60.7`, `64.pvc`, ...); the member of the device the
//!   program ran on is chosen the way NEO chooses it, and
//!   [`Program::fat_entry`] names it.
//!
//! Disassembly is IGA's, in-process ([`iga::Iga`]); [`render_asm`] writes it
//! under a header in the style of IGC's, with IGC's `// File:` and
//! `// Line` comments where a zebin has DWARF line tables (`-g`; see
//! `lines`), and [`instructions`] reduces either text to its instructions
//! for comparing the two.
//!
//! Every reader checks every size against the bytes it has: hostile input
//! gives [`NativeError::Corrupt`], never a panic, and nothing is allocated
//! in proportion to a size read from the input before that size is checked.

mod ar;
mod asm;
mod dwarf;
pub mod iga;
pub mod kv;
mod lines;
mod patchtokens;
mod platform;
mod program;
pub mod targets;
mod zebin;

pub use asm::{instructions, name_line, render_asm};
pub use dwarf::{LineRow, LineTable};
pub use lines::SourceFiles;
pub use platform::{ip_version, Device, Platform};
pub use program::{Format, NativeError, NativeKernel, Program};

/// The kernels of a module binary: zebin, patch tokens (bare or in NEO's
/// ELF wrapper), or an ocloc fat binary, whose member for `device` is taken
/// (the way NEO picks it: IP version, then product name).
///
/// `device` is the GPU the program ran on; it chooses the fat binary's
/// member and gives the platform when the binary does not.
pub fn parse(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    if ar::is_archive(bytes) {
        let (entry, member) = ar::select(bytes, device)?;
        if ar::is_archive(member) {
            return Err(NativeError::Unsupported(format!(
                "fat binary member {entry} is itself an archive"
            )));
        }
        let mut p = parse_single(member, device).map_err(|e| in_member(e, &entry))?;
        p.fat_entry = Some(entry);
        return Ok(p);
    }
    parse_single(bytes, device)
}

fn in_member(e: NativeError, entry: &str) -> NativeError {
    match e {
        NativeError::Corrupt(m) => NativeError::Corrupt(format!("fat binary member {entry}: {m}")),
        NativeError::Unsupported(m) => {
            NativeError::Unsupported(format!("fat binary member {entry}: {m}"))
        }
        NativeError::NotNative(m) => {
            NativeError::NotNative(format!("fat binary member {entry}: {m}"))
        }
        other => other,
    }
}

fn parse_single(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    if bytes.starts_with(b"\x7fELF") {
        if zebin::is_zebin(bytes) {
            return zebin::parse(bytes, device);
        }
        return patchtokens::parse_elf(bytes, device);
    }
    if patchtokens::is_patchtokens(bytes) {
        return patchtokens::parse(bytes, device, Format::PatchTokens);
    }
    Err(not_native(bytes))
}

/// The error for bytes in no native format: SPIR-V and LLVM bitcode are
/// named, anything else is unsupported.
fn not_native(bytes: &[u8]) -> NativeError {
    let word = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    match word {
        Some(0x0723_0203) | Some(0x0302_2307) => NativeError::NotNative("SPIR-V".into()),
        Some(0xdec0_4342) | Some(0x0b17_c0de) => NativeError::NotNative("LLVM bitcode".into()),
        _ => {
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            NativeError::Unsupported(format!(
                "unknown format (first bytes: {}); expected zebin, a patch-token binary (CTNI) or an ocloc fat binary (ar)",
                if head.is_empty() { "none, the binary is empty".to_string() } else { head.join(" ") }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_and_bitcode_are_not_native_and_garbage_is_unsupported() {
        let spv = [0x03u8, 0x02, 0x23, 0x07, 0, 0, 1, 0];
        assert!(matches!(parse(&spv, None), Err(NativeError::NotNative(m)) if m == "SPIR-V"));
        let bc = [b'B', b'C', 0xc0, 0xde];
        assert!(matches!(parse(&bc, None), Err(NativeError::NotNative(_))));
        assert!(matches!(
            parse(b"hello world", None),
            Err(NativeError::Unsupported(_))
        ));
        assert!(matches!(parse(b"", None), Err(NativeError::Unsupported(_))));
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = NativeError::NoEntryForDevice {
            device: "dg2".into(),
            entries: vec!["64.12.60.7".into(), "64.12.0.0".into()],
        };
        let m = e.to_string();
        assert!(
            m.contains("dg2") && m.contains("64.12.60.7, 64.12.0.0") && m.contains("ocloc"),
            "{m}"
        );
    }
}
