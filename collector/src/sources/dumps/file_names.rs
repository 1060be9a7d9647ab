//! IGC's dump file names (see the parent module): a module's `.spv`, each
//! attempt's `.asm`, the final `.kernbin`, read leniently; and the kernel
//! binary a `.kernbin` holds.

use crate::sources::AsmName;
use std::sync::OnceLock;

fn re(cell: &'static OnceLock<regex::Regex>, pattern: &str) -> &'static regex::Regex {
    // The patterns are literals of this file, checked by the tests.
    cell.get_or_init(|| regex::Regex::new(pattern).expect("valid literal regex"))
}

/// `OCL_asm6f30f910931b48ea_1_simd32_entry_0001.asm` and lenient variants.
pub fn parse_asm_file_name(name: &str) -> Option<AsmName> {
    // What the pattern ends with, checked first: most names are not.
    if !name.ends_with(".asm") {
        return None;
    }
    let mut n = if name.is_ascii() {
        asm_name_of_ascii(name)
    } else {
        asm_name_by_pattern(name)
    }?;
    // IGC's vector compute backend (ESIMD kernels, `-vc-codegen`) names its
    // dumps `VC_asm<hash>_<kernel>.asm`, without a SIMD: it compiles every
    // kernel for one work-item per hardware thread, SIMD 1 as the module's
    // binary says it (`.ze_info`'s `simd_size: 1`).
    if n.simd.is_none() && name.starts_with("VC_asm") {
        n.simd = Some(1);
    }
    Some(n)
}

/// [`parse_asm_file_name`] by its patterns.
fn asm_name_by_pattern(name: &str) -> Option<AsmName> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    static SIMD: OnceLock<regex::Regex> = OnceLock::new();
    static ENTRY: OnceLock<regex::Regex> = OnceLock::new();
    let c = re(
        &RE,
        r"(?:^|_)asm([0-9a-f]{8,})(?:_(\d+))?((?:_[^.]*)?)\.asm$",
    )
    .captures(name)?;
    let rest = c.get(3).map_or("", |m| m.as_str());
    let num = |r: &regex::Regex| {
        r.captures(rest)
            .and_then(|c| c.get(1))
            .and_then(|m| m.as_str().parse().ok())
    };
    Some(AsmName {
        hash: c[1].to_string(),
        retry: c.get(2).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
        simd: num(re(&SIMD, r"_simd(\d+)(?:_|$)")),
        entry: num(re(&ENTRY, r"_entry_(\d+)(?:_|$)")),
    })
}

/// What [`parse_asm_file_name`]'s patterns find in the ASCII `name`
/// (ending in `.asm`), found without them (a regex search per file was a
/// tenth of a folder's scan): the leftmost `asm` at the start or after `_`
/// followed by 8 or more hex digits, then `_` or the end, with no `.`
/// before the final `.asm`; `_<digits>` after the hash is the retry when
/// followed by `_` or the end; `_simd<N>` and `_entry_<N>` (each followed
/// by `_` or the end) after it.
fn asm_name_of_ascii(name: &str) -> Option<AsmName> {
    let b = name.as_bytes();
    let body_end = b.len() - ".asm".len();
    let digits = |from: usize, to: usize| {
        from + b[from..to]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let starts = (b.starts_with(b"asm").then_some(3))
        .into_iter()
        .chain(every(b, b"_asm").map(|i| i + 4));
    for q in starts {
        if q > body_end || memchr::memchr(b'.', &b[q..body_end]).is_some() {
            continue;
        }
        let h_end = q + b[q..body_end]
            .iter()
            .take_while(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
            .count();
        if h_end - q < 8 || (h_end < body_end && b[h_end] != b'_') {
            continue;
        }
        // `_<digits>` then `_` or the end: the retry; else all is the rest.
        let d_end = if h_end < body_end {
            digits(h_end + 1, body_end)
        } else {
            h_end
        };
        let (retry, rest) = if d_end > h_end + 1 && (d_end == body_end || b[d_end] == b'_') {
            (name[h_end + 1..d_end].parse().ok(), &name[d_end..body_end])
        } else {
            (None, &name[h_end..body_end])
        };
        return Some(AsmName {
            hash: name[q..h_end].to_string(),
            retry: retry.unwrap_or(0),
            simd: numbered(rest, "_simd"),
            entry: numbered(rest, "_entry_"),
        });
    }
    None
}

/// The number after the first `key` of `rest` that digits follow, then
/// `_` or the end (as the pattern `key(\d+)(?:_|$)` finds it, for ASCII).
fn numbered(rest: &str, key: &str) -> Option<u32> {
    let b = rest.as_bytes();
    every(b, key.as_bytes()).find_map(|i| {
        let from = i + key.len();
        let end = from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
        (end > from && (end == b.len() || b[end] == b'_')).then(|| rest[from..end].parse().ok())
    })?
}

/// Every place `needle` starts in `haystack`, overlapping ones too.
fn every<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let mut at = 0;
    std::iter::from_fn(move || {
        let i = at + memchr::memmem::find(haystack.get(at..)?, needle)?;
        at = i + 1;
        Some(i)
    })
}

/// `OCL_asm<hash>.spv` -> hash; IGC's vector compute backend (ESIMD
/// kernels, built with `-vc-codegen`) names the module's SPIR-V
/// `VC_asm<hash>_igc_input.spv` (and `..._igc_input_raw.spv`, the same
/// bytes).
pub fn parse_spv_file_name(name: &str) -> Option<String> {
    let vc = name
        .strip_suffix("_igc_input.spv")
        .or_else(|| name.strip_suffix("_igc_input_raw.spv"))
        .filter(|body| body.starts_with("VC_"));
    let body = match vc {
        Some(body) => body,
        None => name.strip_suffix(".spv")?,
    };
    if !body.is_ascii() {
        return spv_hash_by_pattern(&format!("{body}.spv"));
    }
    hash_ending(body).map(str::to_string)
}

/// [`parse_spv_file_name`] by its pattern.
fn spv_hash_by_pattern(name: &str) -> Option<String> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    re(&RE, r"(?:^|_)asm([0-9a-f]{8,})\.spv$")
        .captures(name)
        .map(|c| c[1].to_string())
}

/// `OCL_asm<hash>_entry_<NNNN>.kernbin` -> hash
pub fn parse_kernbin_file_name(name: &str) -> Option<String> {
    let body = name.strip_suffix(".kernbin")?;
    if !name.is_ascii() {
        return kernbin_hash_by_pattern(name);
    }
    let digits = body.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    hash_ending(body[..body.len() - digits].strip_suffix("_entry_")?).map(str::to_string)
}

/// The entry number of a `.kernbin`'s name (`..._entry_0002.kernbin`: 2),
/// which its kernel's `.asm` files have too (`..._simd32_entry_0002.asm`).
pub fn kernbin_entry(name: &str) -> Option<u32> {
    let body = name.strip_suffix(".kernbin")?;
    let digits = body.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (rest, n) = body.split_at(body.len() - digits);
    rest.ends_with("_entry_").then(|| n.parse().ok()).flatten()
}

/// [`parse_kernbin_file_name`] by its pattern.
fn kernbin_hash_by_pattern(name: &str) -> Option<String> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    re(&RE, r"(?:^|_)asm([0-9a-f]{8,})_entry_\d+\.kernbin$")
        .captures(name)
        .map(|c| c[1].to_string())
}

/// The hash that ends the ASCII `body` as the patterns' `(?:^|_)asm([0-9a-f]{8,})`
/// before their suffix finds it, found without them (a search per file
/// name was a share of a folder's scan): the hex digits that end `body`,
/// 8 or more, after `asm` at its start or after `_`. No earlier `asm` can
/// be the one: its `s` and `m` are not hex digits.
fn hash_ending(body: &str) -> Option<&str> {
    let hex = body
        .bytes()
        .rev()
        .take_while(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        .count();
    let (prefix, hash) = body.split_at(body.len() - hex);
    let before = prefix.strip_suffix("asm")?;
    (hex >= 8 && (before.is_empty() || before.ends_with('_'))).then_some(hash)
}

/// A kernel binary as IGC's patch-token `.kernbin` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernBin {
    pub name: Vec<u8>,
    pub machine_code: Vec<u8>,
}

/// Parses the patch-token kernel binary header (`SKernelBinaryHeaderCommon`:
/// checksum u32, shader hash u64, then u32 sizes of name, patch list, kernel
/// heap, general/dynamic/surface state heaps and the unpadded kernel), the
/// name, and the unpadded kernel heap. `None` when it does not fit.
pub fn parse_kernbin(bytes: &[u8]) -> Option<KernBin> {
    const HEADER: usize = 40;
    let u32_at = |off: usize| -> Option<usize> {
        let b: [u8; 4] = bytes.get(off..off + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(b) as usize)
    };
    let name_size = u32_at(12)?;
    let heap_size = u32_at(20)?;
    let unpadded = u32_at(36)?;
    if unpadded > heap_size {
        return None;
    }
    let name_end = HEADER.checked_add(name_size)?;
    let name = bytes.get(HEADER..name_end)?;
    let code = bytes.get(name_end..name_end.checked_add(unpadded)?)?;
    let name_len = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    Some(KernBin {
        name: name[..name_len].to_vec(),
        machine_code: code.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asm_file_names() {
        let n = parse_asm_file_name("OCL_asm6f30f910931b48ea_simd32_entry_0001.asm").unwrap();
        assert_eq!(
            n,
            AsmName {
                hash: "6f30f910931b48ea".into(),
                retry: 0,
                simd: Some(32),
                entry: Some(1)
            }
        );
        let n = parse_asm_file_name("OCL_asm60d3638d7dda8598_1_simd8_entry_0003.asm").unwrap();
        assert_eq!((n.retry, n.simd, n.entry), (1, Some(8), Some(3)));
        // Newer layouts: a kernel-name postfix, a shader number prefix.
        let n = parse_asm_file_name("OCL_1__asm60d3638d7dda8598_simd16_my_kernel.asm").unwrap();
        assert_eq!(
            (n.hash.as_str(), n.retry, n.simd, n.entry),
            ("60d3638d7dda8598", 0, Some(16), None)
        );
        assert!(parse_asm_file_name("OCL_asm60d3638d7dda8598.spv").is_none());
        assert!(parse_asm_file_name("random.asm").is_none());
        assert!(parse_asm_file_name("OCL_asm60d3638d7dda8598_simd32_entry_0001.visaasm").is_none());
        assert_eq!(
            parse_spv_file_name("OCL_asm60d3638d7dda8598.spv").as_deref(),
            Some("60d3638d7dda8598")
        );
        assert_eq!(parse_spv_file_name("OCL_asm60d3638d7dda8598.spvasm"), None);
        let vc = parse_asm_file_name("VC_asm1c600cccf8472a44_esimd_empty.asm").unwrap();
        assert_eq!((vc.hash.as_str(), vc.simd), ("1c600cccf8472a44", Some(1)));
        for vc in [
            "VC_asm1c600cccf8472a44_igc_input.spv",
            "VC_asm1c600cccf8472a44_igc_input_raw.spv",
        ] {
            assert_eq!(
                parse_spv_file_name(vc).as_deref(),
                Some("1c600cccf8472a44"),
                "{vc}"
            );
        }
        assert_eq!(
            parse_spv_file_name("OCL_asm1c600cccf8472a44_igc_input.spv"),
            None
        );
        assert_eq!(
            parse_kernbin_file_name("OCL_asm60d3638d7dda8598_entry_0002.kernbin").as_deref(),
            Some("60d3638d7dda8598")
        );
        assert_eq!(
            kernbin_entry("OCL_asm60d3638d7dda8598_entry_0002.kernbin"),
            Some(2)
        );
        assert_eq!(kernbin_entry("OCL_asm60d3638d7dda8598_0002.kernbin"), None);
        assert_eq!(
            kernbin_entry("OCL_asm60d3638d7dda8598_entry_.kernbin"),
            None
        );
    }
    /// ASCII names are parsed without the patterns as the patterns parse
    /// them: names made of every combination of the pieces IGC's (and odd)
    /// names are made of.
    #[test]
    fn asm_names_parse_as_the_patterns_say() {
        let pieces = [
            "",
            "OCL_",
            "asm",
            "_asm",
            "0123456789abcdef",
            "abc",
            "deadbeef9",
            "_1",
            "_12",
            "_1x",
            "_99999999999",
            "_simd",
            "_simd32",
            "_simd8x",
            "_entry_",
            "_entry_0001",
            "_entry_entry_7",
            "_simd_simd16",
            "_",
            "x",
            ".",
            "A",
        ];
        let mut n = 0;
        let mut modules = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    // The module's files: `.spv` and `.kernbin`.
                    for d in ["", "_entry_0002", "_entry_", "_entry_x", "_1_entry_7"] {
                        let spv = format!("{a}{b}{c}{d}.spv");
                        let kernbin = format!("{a}{b}{c}{d}.kernbin");
                        assert_eq!(
                            parse_spv_file_name(&spv),
                            spv_hash_by_pattern(&spv),
                            "{spv}"
                        );
                        assert_eq!(
                            parse_kernbin_file_name(&kernbin),
                            kernbin_hash_by_pattern(&kernbin),
                            "{kernbin}"
                        );
                        modules += parse_spv_file_name(&spv).is_some() as usize
                            + parse_kernbin_file_name(&kernbin).is_some() as usize;
                    }
                    for d in ["", "_simd32_entry_0001", "_entry_2_simd16", "_0"] {
                        let name = format!("{a}{b}{c}{d}.asm");
                        assert_eq!(
                            parse_asm_file_name(&name),
                            asm_name_by_pattern(&name),
                            "{name}"
                        );
                        n += parse_asm_file_name(&name).is_some() as usize;
                    }
                }
            }
        }
        assert!(n >= 512, "{n}");
        assert_eq!(modules, 156);
    }
    #[test]
    fn kernbin_parsing_is_bounds_checked() {
        let mut b = vec![0u8; 40];
        b[12..16].copy_from_slice(&8u32.to_le_bytes());
        b[20..24].copy_from_slice(&16u32.to_le_bytes());
        b[36..40].copy_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(b"light\0\0\0");
        b.extend_from_slice(&[1, 2, 3, 4, 0, 0, 0, 0]);
        let kb = parse_kernbin(&b).unwrap();
        assert_eq!(kb.name, b"light");
        assert_eq!(kb.machine_code, [1, 2, 3, 4]);
        assert_eq!(parse_kernbin(&b[..45]), None);
        assert_eq!(parse_kernbin(&[]), None);
        let mut huge = b.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse_kernbin(&huge), None);
    }
}
