//! The header of an `.asm` file ([`AsmHeader`]): the leading `//` lines
//! IGC writes (and [`crate::native`] writes in IGC's style), read
//! without reading the instruction body.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Headers are read up to here and no further: a `.asm` can be hundreds of
/// megabytes, and its header fields all come within the first few lines.
pub const HEADER_MAX_BYTES: u64 = 64 * 1024;

/// Headers are read this much at a time: IGC's fit in the first read, and
/// the instruction body after them is not copied for nothing.
pub const HEADER_READ_CHUNK: usize = 4096;

/// The first read of a header that may end at its `//.kernel` line (the
/// first line IGC writes): the line of a long name fits, the rest of a
/// 4 KiB chunk is not copied for a kernel nobody launched.
const KERNEL_LINE_READ: usize = 1024;

/// What an `.asm` header says. Every field is optional: IGC versions differ
/// in what they print, and a missing field is not an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsmHeader {
    /// Raw bytes after `//.kernel ` (the kernel's exact name).
    pub kernel: Option<Vec<u8>>,
    /// `//.platform PVCXT`
    pub platform: Option<String>,
    /// `numGRF=` of `//.thread_config`
    pub grf: Option<u32>,
    /// `numAcc=` of `//.thread_config`
    pub acc: Option<u32>,
    /// `numSWSB=` of `//.thread_config`
    pub swsb: Option<u32>,
    /// `//.instCount`
    pub instructions: Option<u64>,
    /// `//.RA type` (register allocator that succeeded)
    pub ra_type: Option<String>,
    /// `//.spill size` (bytes); IGC 1.0.12504 prints it only for kernels that spill.
    pub spill_bytes: Option<u64>,
    /// `//.spill GRF est. ref count`
    pub spill_grf_refs: Option<u64>,
    /// `//.spill flag store` (newer IGCs)
    pub spill_flag_stores: Option<u64>,
    /// `//.spill flag load` (newer IGCs)
    pub spill_flag_loads: Option<u64>,
    /// `//.private memory size` (bytes)
    pub private_memory_bytes: Option<u64>,
    /// `//.git-hash` (newer IGCs)
    pub igc_git_hash: Option<String>,
    /// The header went on past [`HEADER_MAX_BYTES`] (reading stopped there).
    pub truncated: bool,
    /// Only the lines up to `//.kernel` were read: the file of a kernel
    /// nobody launched, whose other fields nothing asked for (the scan
    /// without `--all`); the fields after that line are `None`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernel_only: bool,
}

/// Parses the leading `//` lines of an `.asm` dump. Stops at the first line
/// that is not a `//` comment or after `max_bytes` bytes, whichever comes
/// first; never reads the instruction body.
pub fn parse_header(reader: impl Read, max_bytes: u64) -> std::io::Result<AsmHeader> {
    let mut r = BufReader::with_capacity(HEADER_READ_CHUNK, reader.take(max_bytes));
    let mut h = AsmHeader::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 {
            // Reached the cap (or the end) while still in the header.
            h.truncated = r.get_ref().limit() == 0;
            break;
        }
        let complete = line.last() == Some(&b'\n');
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        if !line.starts_with(b"//") {
            break;
        }
        if !complete && r.get_ref().limit() == 0 {
            // A line cut by the cap: its value cannot be trusted.
            h.truncated = true;
            break;
        }
        parse_header_line(&line, &mut h);
    }
    Ok(h)
}

fn parse_header_line(line: &[u8], h: &mut AsmHeader) {
    if let Some(name) = line.strip_prefix(b"//.kernel ") {
        if h.kernel.is_none() {
            h.kernel = Some(name.to_vec());
        }
        return;
    }
    let Some(rest) = line.strip_prefix(b"//.") else {
        return;
    };
    // The field's name is ASCII: matched on the bytes, and only its value
    // decoded (as the whole line decoded would have it: the name is whole
    // characters).
    let Some((field, value)) = FIELDS
        .iter()
        .find_map(|&(name, f)| rest.strip_prefix(name.as_bytes()).map(|v| (f, v)))
    else {
        return;
    };
    let text = String::from_utf8_lossy(value);
    let v = text.trim();
    match field {
        Field::Platform => h.platform = Some(v.to_string()),
        Field::ThreadConfig => {
            for part in v.split(',') {
                let Some((k, val)) = part.trim().split_once('=') else {
                    continue;
                };
                let val = leading_number(val);
                match k.trim() {
                    "numGRF" => h.grf = val.and_then(|n| u32::try_from(n).ok()),
                    "numAcc" => h.acc = val.and_then(|n| u32::try_from(n).ok()),
                    "numSWSB" => h.swsb = val.and_then(|n| u32::try_from(n).ok()),
                    _ => {}
                }
            }
        }
        Field::InstCount => h.instructions = leading_number(v),
        Field::RaType => h.ra_type = Some(v.to_string()).filter(|s| !s.is_empty()),
        Field::SpillSize => h.spill_bytes = leading_number(v),
        Field::SpillGrfRefs => h.spill_grf_refs = leading_number(v),
        Field::SpillFlagStores => h.spill_flag_stores = leading_number(v),
        Field::SpillFlagLoads => h.spill_flag_loads = leading_number(v),
        Field::PrivateMemory => h.private_memory_bytes = leading_number(v),
        Field::GitHash => h.igc_git_hash = Some(v.to_string()).filter(|s| !s.is_empty()),
    }
}

/// The header fields read, after `//.`.
#[derive(Clone, Copy)]
enum Field {
    Platform,
    ThreadConfig,
    InstCount,
    RaType,
    SpillSize,
    SpillGrfRefs,
    SpillFlagStores,
    SpillFlagLoads,
    PrivateMemory,
    GitHash,
}

/// Each field by the text after `//.` that starts its line, in the order
/// they are tried (the first that starts the line is the one).
const FIELDS: [(&str, Field); 10] = [
    ("platform ", Field::Platform),
    ("thread_config ", Field::ThreadConfig),
    ("instCount", Field::InstCount),
    ("RA type", Field::RaType),
    ("spill size", Field::SpillSize),
    ("spill GRF est. ref count", Field::SpillGrfRefs),
    ("spill flag store", Field::SpillFlagStores),
    ("spill flag load", Field::SpillFlagLoads),
    ("private memory size", Field::PrivateMemory),
    ("git-hash", Field::GitHash),
];

fn leading_number(s: &str) -> Option<u64> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// Reads the header of the `.asm` file at `path`.
pub fn read_header(path: &Path) -> std::io::Result<AsmHeader> {
    parse_header(File::open(path)?, HEADER_MAX_BYTES)
}

/// Reads the header of the `.asm` file at `path` and, when its `//.kernel`
/// name is one `launched` holds, goes on reading the same open file to the
/// end for its [`super::analyze`]: a launched kernel's file is opened
/// once, not once for the header and again for the analysis. The analysis
/// is `None` when not wanted, or when [`super::analyze_file`] would
/// give none or could not read the rest (it is then read again, later).
pub fn read_header_and_analysis(
    path: &Path,
    launched: &HashSet<&[u8]>,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    header_and_analysis(&File::open(path)?, launched)
}

/// [`read_header_and_analysis`] of the open file `file`.
pub fn header_and_analysis(
    file: &File,
    launched: &HashSet<&[u8]>,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    header_and_analysis_of(file, None, launched, false, true)
}

/// [`header_and_analysis`] of `file` whose metadata is `meta` when known
/// (then not asked again). With `whole_first` (most files of its folder
/// are launched kernels'), a file of at most [`HEADER_MAX_BYTES`] is read
/// whole at once, its header parsed from what was read: one read(2)
/// rather than the header's and then the rest's. Without `others_whole`,
/// the header of a kernel `launched` does not hold is read up to its
/// `//.kernel` line only ([`AsmHeader::kernel_only`]).
pub fn header_and_analysis_of(
    file: &File,
    meta: Option<&std::fs::Metadata>,
    launched: &HashSet<&[u8]>,
    whole_first: bool,
    others_whole: bool,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    super::with_buffer(|bytes| {
        if let Some(m) = meta.filter(|m| whole_first && m.is_file() && m.len() <= HEADER_MAX_BYTES)
        {
            // What the header's reading reads of it, and more: the same
            // header (it stops at the same line, or at the same end).
            super::read_to_length(file, bytes, m.len() as usize)?;
        }
        let stop_unless = (!others_whole).then_some(launched);
        let header = read_header_into(file, bytes, HEADER_MAX_BYTES as usize, stop_unless)?;
        let wanted = header
            .kernel
            .as_deref()
            .is_some_and(|k| launched.contains(k));
        let analysis = match (wanted, meta) {
            (false, _) => None,
            (true, Some(m)) => super::analyze_rest_of(file, m, bytes).ok().flatten(),
            (true, None) => super::analyze_rest(file, bytes).ok().flatten(),
        };
        Ok((header, analysis))
    })
}

/// [`parse_header`] of `file` (from its offset, at most `max` bytes), read
/// [`HEADER_READ_CHUNK`] at a time onto the end of the empty `bytes`,
/// which keeps what was read; the lines are parsed where they were read.
/// With `stop_unless`, reading stops at a `//.kernel` line whose kernel it
/// does not hold ([`AsmHeader::kernel_only`]), and the first read is
/// [`KERNEL_LINE_READ`].
fn read_header_into(
    file: &File,
    bytes: &mut Vec<u8>,
    max: usize,
    stop_unless: Option<&HashSet<&[u8]>>,
) -> std::io::Result<AsmHeader> {
    let mut h = AsmHeader::default();
    // The current line starts at `start`; no `\n` in `start..scanned`.
    let (mut start, mut scanned) = (0, 0);
    // All `max` bytes, or the whole file, are in `bytes`.
    let mut all_read = false;
    loop {
        let end = match memchr::memchr(b'\n', &bytes[scanned..]) {
            Some(i) => Some(scanned + i),
            None if all_read => None,
            None => {
                scanned = bytes.len();
                let chunk = match stop_unless {
                    Some(_) if bytes.is_empty() => KERNEL_LINE_READ,
                    _ => HEADER_READ_CHUNK,
                };
                let want = chunk.min(max - bytes.len());
                if want == 0 || super::read_some(file, bytes, want)? == 0 {
                    all_read = true;
                }
                continue;
            }
        };
        // At the cap, as `parse_header` says it: every byte up to it read.
        let capped = all_read && bytes.len() >= max;
        let (line, complete) = match end {
            Some(e) => (&bytes[start..e], true),
            None if start == bytes.len() => {
                h.truncated = capped;
                break;
            }
            None => (&bytes[start..], false),
        };
        let mut line = line;
        while let [rest @ .., b'\n' | b'\r'] = line {
            line = rest;
        }
        if !line.starts_with(b"//") {
            break;
        }
        if !complete && capped {
            h.truncated = true;
            break;
        }
        let had_kernel = h.kernel.is_some();
        parse_header_line(line, &mut h);
        if let (false, Some(k), Some(launched)) = (had_kernel, h.kernel.as_deref(), stop_unless) {
            if !launched.contains(k) {
                h.kernel_only = true;
                break;
            }
        }
        match end {
            Some(e) => {
                start = e + 1;
                scanned = start;
            }
            None => {
                // The file's last line: nothing after it.
                h.truncated = capped;
                break;
            }
        }
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_stops_at_first_non_comment_line() {
        let text = b"//.kernel k\n//.instCount 5\n\n//.spill size 99\n";
        let h = parse_header(&text[..], HEADER_MAX_BYTES).unwrap();
        assert_eq!(h.kernel.as_deref(), Some(&b"k"[..]));
        assert_eq!(h.instructions, Some(5));
        assert_eq!(h.spill_bytes, None);
        assert!(!h.truncated);
    }

    #[test]
    fn header_of_an_endless_comment_is_cut_at_the_cap() {
        let mut text = b"//.kernel k\n".to_vec();
        while text.len() < 10_000 {
            text.extend_from_slice(b"//.declare V0001 (1) rf=r size=4 type=ud\n");
        }
        let h = parse_header(&text[..], 1000).unwrap();
        assert_eq!(h.kernel.as_deref(), Some(&b"k"[..]));
        assert!(h.truncated);
    }

    /// The header read in chunks where it is parsed is the header
    /// [`parse_header`] reads, at and around the cap and the chunks' ends.
    #[test]
    fn header_read_in_place_is_the_streamed_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"//.kernel k".to_vec(),
            b"//.kernel k\n".to_vec(),
            b"//.kernel k\r\n//.instCount 7\r\r\n    mov\n".to_vec(),
            b"\n//.kernel k\n".to_vec(),
            b"//.kernel a\n//.kernel b\n//.platform \xffX\n".to_vec(),
        ];
        for len in [100, 4095, 4096, 4097, 8191, 8192, 9000] {
            for tail in [&b""[..], b"\n", b"\n  add (1|M0)\n", b"x"] {
                let mut t = b"//.kernel k\n".to_vec();
                while t.len() < len {
                    t.extend_from_slice(b"//.declare V1 (1) rf=r size=4\n");
                }
                t.truncate(len);
                t.extend_from_slice(tail);
                texts.push(t);
            }
        }
        for (i, t) in texts.iter().enumerate() {
            let p = dir.path().join(format!("{i}.asm"));
            std::fs::write(&p, t).unwrap();
            for max in [1000, 4096, 8192, 64 * 1024] {
                let want = parse_header(&t[..], max as u64).unwrap();
                let f = File::open(&p).unwrap();
                let mut bytes = Vec::new();
                let got = read_header_into(&f, &mut bytes, max, None).unwrap();
                assert_eq!(got, want, "text {i}, cap {max}");
                // What was read is the file's start, and the rest follows.
                assert_eq!(&t[..bytes.len()], &bytes[..], "text {i}, cap {max}");
                // A launched kernel's header is read whole.
                let launched: HashSet<&[u8]> = [&b"k"[..], b"a"].into_iter().collect();
                let f = File::open(&p).unwrap();
                let mut bytes = Vec::new();
                let got = read_header_into(&f, &mut bytes, max, Some(&launched)).unwrap();
                assert_eq!(got, want, "text {i}, cap {max}, launched");
                // Another's stops at its `//.kernel` line (the first line
                // of each text that has one), after one short read.
                let f = File::open(&p).unwrap();
                let mut bytes = Vec::new();
                let got = read_header_into(&f, &mut bytes, max, Some(&HashSet::new())).unwrap();
                let only_kernel = AsmHeader {
                    kernel: want.kernel.clone(),
                    kernel_only: true,
                    ..Default::default()
                };
                let expected = if want.kernel.is_some() {
                    &only_kernel
                } else {
                    &want
                };
                assert_eq!(&got, expected, "text {i}, cap {max}, not launched");
                assert_eq!(&t[..bytes.len()], &bytes[..], "text {i}, cap {max}");
                if want.kernel.is_some() {
                    assert_eq!(
                        bytes.len(),
                        t.len().min(KERNEL_LINE_READ).min(max),
                        "text {i}, cap {max}"
                    );
                }
                // The same header from the whole file read first (one no
                // longer than the cap, as `whole_first` reads).
                if t.len() <= max {
                    let f = File::open(&p).unwrap();
                    let mut bytes = Vec::new();
                    crate::read_to_length(&f, &mut bytes, t.len()).unwrap();
                    let got = read_header_into(&f, &mut bytes, max, None).unwrap();
                    assert_eq!(got, want, "text {i}, cap {max}, read whole");
                }
            }
        }
    }

    #[test]
    fn header_oddities_are_not_errors() {
        for text in [
            &b""[..],
            b"no header at all\n",
            b"//.kernel",
            b"//.thread_config numGRF=abc, numAcc, =, numSWSB=99999999999\n",
            b"//.instCount\n//.spill size x\n",
            b"\xff\xfe//.kernel k\n",
        ] {
            let h = parse_header(text, HEADER_MAX_BYTES).unwrap();
            assert_eq!(h.grf, None);
            assert_eq!(h.instructions, None);
        }
        let h = parse_header(&b"//.kernel a\r\n//.kernel b\n"[..], HEADER_MAX_BYTES).unwrap();
        assert_eq!(h.kernel.as_deref(), Some(&b"a"[..]));
    }
}
