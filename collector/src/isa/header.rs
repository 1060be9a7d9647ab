//! The header of an `.asm` file ([`AsmHeader`]): the leading `//` lines
//! IGC writes (and [`crate::sources::native`] writes in IGC's style), read
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
    if !line.starts_with(b"//.") {
        return;
    }
    let text = String::from_utf8_lossy(line);
    let field = |prefix: &str| text.strip_prefix(prefix).map(str::trim);
    if let Some(v) = field("//.platform ") {
        h.platform = Some(v.to_string());
    } else if let Some(v) = field("//.thread_config ") {
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
    } else if let Some(v) = field("//.instCount") {
        h.instructions = leading_number(v);
    } else if let Some(v) = field("//.RA type") {
        h.ra_type = Some(v.to_string()).filter(|s| !s.is_empty());
    } else if let Some(v) = field("//.spill size") {
        h.spill_bytes = leading_number(v);
    } else if let Some(v) = field("//.spill GRF est. ref count") {
        h.spill_grf_refs = leading_number(v);
    } else if let Some(v) = field("//.spill flag store") {
        h.spill_flag_stores = leading_number(v);
    } else if let Some(v) = field("//.spill flag load") {
        h.spill_flag_loads = leading_number(v);
    } else if let Some(v) = field("//.private memory size") {
        h.private_memory_bytes = leading_number(v);
    } else if let Some(v) = field("//.git-hash") {
        h.igc_git_hash = Some(v.to_string()).filter(|s| !s.is_empty());
    }
}

fn leading_number(s: &str) -> Option<u64> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// Reads the header of the `.asm` file at `path`.
pub fn read_header(path: &Path) -> std::io::Result<AsmHeader> {
    parse_header(File::open(path)?, HEADER_MAX_BYTES)
}

/// Passes on what it reads, keeping a copy.
struct Recording<'a, R> {
    inner: R,
    seen: &'a mut Vec<u8>,
}

impl<R: Read> Read for Recording<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
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
    let file = File::open(path)?;
    super::with_buffer(|bytes| {
        let header = parse_header(
            Recording {
                inner: &file,
                seen: &mut *bytes,
            },
            HEADER_MAX_BYTES,
        )?;
        let wanted = header
            .kernel
            .as_deref()
            .is_some_and(|k| launched.contains(k));
        let analysis = if wanted {
            super::analyze_rest(&file, bytes).ok().flatten()
        } else {
            None
        };
        Ok((header, analysis))
    })
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
