//! The header of an `.asm` file ([`AsmHeader`]): the leading `//` lines
//! IGC writes (and [`crate::native`] writes in IGC's style), read
//! without reading the instruction body.
//!
//! IGC writes the kernel's name raw after `//.kernel `: a name holds any
//! bytes but NUL, newlines too, so the line that follows `//.kernel ` may
//! be part of the name and not a field. An IGC header is therefore read
//! knowing the exact names of its module's kernels ([`KnownNames`]): the
//! name is the longest known name that the text after `//.kernel ` starts
//! with and that a newline follows, whose reading gives the header IGC
//! writes after a name, whole (its first line `//.platform`, then the
//! fields in IGC's order, each once, up to the line that ends the header).
//! No other known name's reading is tried before it, so the lines of a
//! name are never read as fields; a header whose name is none of the
//! module's, or whose fields are not IGC's after any of them, names no
//! kernel ([`Unresolved`]) and gives no figure.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// What starts an IGC header: the kernel's name follows.
pub const KERNEL_LINE: &[u8] = b"//.kernel ";

/// The fields after the name's line are read up to here and no further: a
/// `.asm` can be hundreds of megabytes, and IGC's fields are a few lines
/// (its `//.full_options` the longest, a few KiB). The whole header's
/// bound is this after the module's longest name ([`KnownNames::header_bound`]).
pub const HEADER_FIELDS_MAX_BYTES: u64 = 64 * 1024;

/// Headers are read this much at a time: IGC's fit in the first read, and
/// the instruction body after them is not copied for nothing.
pub const HEADER_READ_CHUNK: usize = 4096;

/// The first read of a header that may end at its `//.kernel` line (the
/// first line IGC writes): the line of a long name fits, the rest of a
/// 4 KiB chunk is not copied for a kernel nobody launched.
const KERNEL_LINE_READ: usize = 1024;

/// The exact names of a module's kernels, which its `.asm` headers are
/// read against (sorted, each once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownNames {
    names: Vec<Vec<u8>>,
    longest: usize,
}

impl KnownNames {
    pub fn new(names: impl IntoIterator<Item = Vec<u8>>) -> KnownNames {
        let mut names: Vec<Vec<u8>> = names.into_iter().collect();
        names.sort_unstable();
        names.dedup();
        let longest = names.iter().map(Vec::len).max().unwrap_or(0);
        KnownNames { names, longest }
    }

    /// The one name `name`.
    pub fn one(name: &[u8]) -> KnownNames {
        KnownNames::new([name.to_vec()])
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn contains(&self, name: &[u8]) -> bool {
        self.names
            .binary_search_by(|n| n.as_slice().cmp(name))
            .is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.names.iter().map(Vec::as_slice)
    }

    /// The length of the longest name.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// How many bytes of a file a header of these names is read from at
    /// most: the `//.kernel` line of the longest name, then
    /// [`HEADER_FIELDS_MAX_BYTES`] of fields.
    pub fn header_bound(&self) -> u64 {
        (KERNEL_LINE.len() + self.longest + 1) as u64 + HEADER_FIELDS_MAX_BYTES
    }
}

/// Why a header names no kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unresolved {
    /// The file does not start with a `//.kernel ` line.
    NoKernelLine,
    /// No name of the module is on its `//.kernel` line, followed by a
    /// newline.
    UnknownName,
    /// After every name of the module its line could hold, what follows is
    /// not the header IGC writes (its first line not `//.platform`, a
    /// field out of IGC's order or twice).
    NotIgcs,
    /// The fields went on past [`HEADER_FIELDS_MAX_BYTES`]: the header
    /// cannot be checked whole.
    TooLong,
    /// IGC's final binary of the file's kernel (its `.kernbin`, which
    /// names the kernel by length) is of another kernel than the one its
    /// `//.kernel` line was read as.
    OtherKernel,
}

impl Unresolved {
    /// Why, in words, for a warning on the file.
    pub fn why(self) -> &'static str {
        match self {
            Unresolved::NoKernelLine => "no `//.kernel` line starts its header",
            Unresolved::UnknownName => {
                "its `//.kernel` line names no kernel of its module (the entry points of its SPIR-V, the kernels its records name)"
            }
            Unresolved::NotIgcs => {
                "its header is not the one IGC writes after any name of its module's kernels (a `//.platform` line first, then IGC's fields in IGC's order, each once)"
            }
            Unresolved::TooLong => "its header's fields go on past 64 KiB",
            Unresolved::OtherKernel => {
                "IGC's final binary of its entry names another kernel than its `//.kernel` line was read as"
            }
        }
    }
}

/// What an `.asm` header says. Every field is optional: IGC versions differ
/// in what they print, and a missing field is not an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsmHeader {
    /// The kernel's exact name: a name of its module that its `//.kernel`
    /// line holds (see the module's documentation).
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
    /// The header went on past its bound (reading stopped there).
    pub truncated: bool,
    /// Only the lines up to `//.kernel` were read: the file of a kernel
    /// nobody launched, whose other fields nothing asked for (the scan
    /// without `--all`); the fields after that line are `None`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernel_only: bool,
    /// Why it names no kernel (then every field is `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<Unresolved>,
}

impl AsmHeader {
    /// Where the analysis of the text `bytes` (its start at least) whose
    /// header this is starts: after its `//.kernel` line, when that line
    /// holds the kernel's name; and what scratch space holds, as the
    /// header's fields say.
    pub fn text_start(&self, bytes: &[u8]) -> super::TextStart {
        let line = self
            .kernel
            .as_ref()
            .map_or(0, |k| KERNEL_LINE.len() + k.len() + 1);
        let holds = self.kernel.as_ref().is_some_and(|k| {
            bytes.starts_with(KERNEL_LINE)
                && bytes[KERNEL_LINE.len()..].starts_with(k)
                && bytes.get(line - 1) == Some(&b'\n')
        });
        super::TextStart {
            at: if holds { line } else { 0 },
            classifier: super::mix::Classifier::new(self.spill_bytes, self.private_memory_bytes),
        }
    }

    fn unresolved(why: Unresolved) -> AsmHeader {
        AsmHeader {
            unresolved: Some(why),
            truncated: why == Unresolved::TooLong,
            ..Default::default()
        }
    }
}

/// Parses the header of an IGC `.asm` dump of a module whose kernels are
/// `known` (see the module's documentation). Reads at most
/// [`KnownNames::header_bound`] bytes; never the instruction body.
pub fn parse_header(mut reader: impl Read, known: &KnownNames) -> std::io::Result<AsmHeader> {
    let mut bytes = Vec::new();
    let mut more = |bytes: &mut Vec<u8>, want: usize| -> std::io::Result<usize> {
        let start = bytes.len();
        bytes.resize(start + want, 0);
        let n = loop {
            match reader.read(&mut bytes[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    bytes.truncate(start);
                    return Err(e);
                }
            }
        };
        bytes.truncate(start + n);
        Ok(n)
    };
    Reading::new(&mut bytes, &mut more, known).header(None)
}

/// Reads the header of the IGC `.asm` file at `path` (see [`parse_header`]).
pub fn read_header(path: &Path, known: &KnownNames) -> std::io::Result<AsmHeader> {
    parse_header(File::open(path)?, known)
}

/// The header of a text xpu-asm rendered itself ([`crate::native::render_asm`]):
/// its `//.kernel` line is one line (the name's line breaks escaped), then
/// its fields, in any order.
pub fn parse_own_header(text: &[u8]) -> AsmHeader {
    let mut h = AsmHeader::default();
    let mut lines = text.split(|&b| b == b'\n');
    let Some(name) = lines.next().and_then(|l| l.strip_prefix(KERNEL_LINE)) else {
        return AsmHeader::unresolved(Unresolved::NoKernelLine);
    };
    h.kernel = Some(name.strip_suffix(b"\r").unwrap_or(name).to_vec());
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.starts_with(b"//") {
            break;
        }
        if let Some((_, Some(field), value)) = field_of(line) {
            apply(&mut h, field, value);
        }
    }
    h
}

/// Reads the own header ([`parse_own_header`]) of the file at `path`.
pub fn read_own_header(path: &Path) -> std::io::Result<AsmHeader> {
    let mut text = Vec::new();
    File::open(path)?
        .take(HEADER_FIELDS_MAX_BYTES * 2)
        .read_to_end(&mut text)?;
    Ok(parse_own_header(&text))
}

/// Reads the header of the `.asm` file at `path` and, when its kernel is
/// one `launched` holds, goes on reading the same open file to the end for
/// its [`super::analyze`]: a launched kernel's file is opened once, not
/// once for the header and again for the analysis. The analysis is `None`
/// when not wanted, or when [`super::analyze_file`] would give none or
/// could not read the rest (it is then read again, later).
pub fn read_header_and_analysis(
    path: &Path,
    known: &KnownNames,
    launched: &HashSet<&[u8]>,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    header_and_analysis(&File::open(path)?, known, launched)
}

/// [`read_header_and_analysis`] of the open file `file`.
pub fn header_and_analysis(
    file: &File,
    known: &KnownNames,
    launched: &HashSet<&[u8]>,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    header_and_analysis_of(file, None, known, launched, false, true)
}

/// [`header_and_analysis`] of `file` whose metadata is `meta` when known
/// (then not asked again). With `whole_first` (most files of its folder
/// are launched kernels'), a file no longer than its header's bound is
/// read whole at once, its header parsed from what was read: one read(2)
/// rather than the header's and then the rest's. Without `others_whole`,
/// the header of a kernel `launched` does not hold is read up to its
/// `//.kernel` line only ([`AsmHeader::kernel_only`]) when that line can
/// hold one name of `known` alone.
pub fn header_and_analysis_of(
    file: &File,
    meta: Option<&std::fs::Metadata>,
    known: &KnownNames,
    launched: &HashSet<&[u8]>,
    whole_first: bool,
    others_whole: bool,
) -> std::io::Result<(AsmHeader, Option<super::Analysis>)> {
    super::with_buffer(|bytes| {
        let bound = known.header_bound();
        if let Some(m) = meta.filter(|m| whole_first && m.is_file() && m.len() <= bound) {
            // What the header's reading reads of it, and more: the same
            // header (it stops at the same line, or at the same end).
            super::read_to_length(file, bytes, m.len() as usize)?;
        }
        let stop_unless = (!others_whole).then_some(launched);
        let header = read_header_into(file, bytes, known, stop_unless)?;
        let wanted = header
            .kernel
            .as_deref()
            .is_some_and(|k| launched.contains(k));
        let analysis = match (wanted, meta) {
            (false, _) => None,
            (true, Some(m)) => {
                let start = header.text_start(bytes);
                super::analyze_rest_of(file, m, bytes, Some(start))
                    .ok()
                    .flatten()
            }
            (true, None) => {
                let start = header.text_start(bytes);
                super::analyze_rest(file, bytes, Some(start)).ok().flatten()
            }
        };
        Ok((header, analysis))
    })
}

/// [`parse_header`] of `file` (from its offset) read onto the end of
/// `bytes` (empty, or the file's first bytes already read), which keeps
/// what was read. With `stop_unless`, reading stops at a `//.kernel` line
/// that holds one known name alone, when `stop_unless` does not hold it
/// ([`AsmHeader::kernel_only`]), and the first read is [`KERNEL_LINE_READ`].
fn read_header_into(
    file: &File,
    bytes: &mut Vec<u8>,
    known: &KnownNames,
    stop_unless: Option<&HashSet<&[u8]>>,
) -> std::io::Result<AsmHeader> {
    let mut more = |bytes: &mut Vec<u8>, want: usize| super::read_some(file, bytes, want);
    let mut r = Reading::new(bytes, &mut more, known);
    if stop_unless.is_some() {
        r.first_read = KERNEL_LINE_READ;
    }
    r.header(stop_unless)
}

/// [`super::analyze_file`] of the file at `path` whose header `h` was
/// read: from its [`AsmHeader::text_start`].
pub fn analyze_file_of(path: &Path, h: &AsmHeader) -> std::io::Result<Option<super::Analysis>> {
    super::analyze_file_from(path, |bytes| h.text_start(bytes))
}

/// Reads more of a file onto the end of the bytes: at most `want`, how
/// many (0 at its end).
type More<'a> = dyn FnMut(&mut Vec<u8>, usize) -> std::io::Result<usize> + 'a;

/// One header being read: the bytes read so far (from the file's start)
/// and how to read more.
struct Reading<'a, 'b> {
    bytes: &'a mut Vec<u8>,
    more: &'a mut More<'b>,
    known: &'a KnownNames,
    /// The file's end was read.
    eof: bool,
    /// Nothing past this is read.
    bound: usize,
    first_read: usize,
}

impl<'a, 'b> Reading<'a, 'b> {
    fn new(bytes: &'a mut Vec<u8>, more: &'a mut More<'b>, known: &'a KnownNames) -> Self {
        let bound = usize::try_from(known.header_bound()).unwrap_or(usize::MAX);
        Reading {
            bytes,
            more,
            known,
            eof: false,
            bound,
            first_read: HEADER_READ_CHUNK,
        }
    }

    /// Reads until `bytes` has `to` bytes (at most the bound) or the file
    /// ends: a read(2) for as many as are missing, as often as needed.
    fn fill(&mut self, to: usize) -> std::io::Result<()> {
        let to = to.min(self.bound);
        while !self.eof && self.bytes.len() < to {
            let want = to - self.bytes.len();
            if (self.more)(self.bytes, want)? == 0 {
                self.eof = true;
            }
        }
        Ok(())
    }

    /// Nothing more will be read: the file's end, or the bound.
    fn exhausted(&self) -> bool {
        self.eof || self.bytes.len() >= self.bound
    }

    fn header(mut self, stop_unless: Option<&HashSet<&[u8]>>) -> std::io::Result<AsmHeader> {
        self.fill(self.first_read.max(KERNEL_LINE.len()))?;
        if !self.bytes.starts_with(KERNEL_LINE) {
            return Ok(AsmHeader::unresolved(Unresolved::NoKernelLine));
        }
        let names = self.names()?;
        let Some(&longest) = names.last() else {
            return Ok(AsmHeader::unresolved(Unresolved::UnknownName));
        };
        let name_at = |len: usize| KERNEL_LINE.len()..KERNEL_LINE.len() + len;
        if let (Some(launched), [only]) = (stop_unless, names.as_slice()) {
            let name = &self.bytes[name_at(*only)];
            if !launched.contains(name) {
                return Ok(AsmHeader {
                    kernel: Some(name.to_vec()),
                    kernel_only: true,
                    ..Default::default()
                });
            }
        }
        let (end, cut) = self.header_end(KERNEL_LINE.len() + longest + 1)?;
        if cut {
            return Ok(AsmHeader::unresolved(Unresolved::TooLong));
        }
        // The longest name first: its reading is the one that takes the
        // most of the `//.kernel` line as the name.
        for &len in names.iter().rev() {
            let start = KERNEL_LINE.len() + len + 1;
            if let Some(mut h) = igc_fields(&self.bytes[start..end]) {
                h.kernel = Some(self.bytes[name_at(len)].to_vec());
                return Ok(h);
            }
        }
        Ok(AsmHeader::unresolved(Unresolved::NotIgcs))
    }

    /// The lengths of the known names that the text after `//.kernel `
    /// starts with, a newline after each, shortest first; reads as far as
    /// a longer name could still be there.
    fn names(&mut self) -> std::io::Result<Vec<usize>> {
        let mut scan = NameScan::new(&self.known.names);
        loop {
            scan.feed(&self.bytes[KERNEL_LINE.len()..]);
            let Some(longest_left) = scan.longest_left() else {
                break;
            };
            if self.exhausted() {
                break;
            }
            let want =
                (KERNEL_LINE.len() + longest_left + 1).max(self.bytes.len() + HEADER_READ_CHUNK);
            self.fill(want)?;
        }
        Ok(scan.found)
    }

    /// Where the header's lines from `from` end (the start of the first
    /// line that is not a `//` comment, or the end of the file), and
    /// whether [`HEADER_FIELDS_MAX_BYTES`] after `from` cut it first.
    fn header_end(&mut self, from: usize) -> std::io::Result<(usize, bool)> {
        let cap = from.saturating_add(HEADER_FIELDS_MAX_BYTES as usize);
        let mut at = from;
        loop {
            // A line's first two bytes tell whether it goes on the header.
            while self.bytes.len() < at + 2 && !self.eof && self.bytes.len() < cap {
                self.fill((self.bytes.len() + HEADER_READ_CHUNK).min(cap))?;
            }
            let lim = self.bytes.len().min(cap);
            let rest = &self.bytes[at.min(lim)..lim];
            if !rest.starts_with(b"//") {
                // Cut when the bound left too little to tell.
                let cut = (!self.eof || lim < self.bytes.len()) && b"//".starts_with(rest);
                return Ok((at.min(lim), cut));
            }
            loop {
                let lim = self.bytes.len().min(cap);
                if let Some(i) = memchr::memchr(b'\n', &self.bytes[at..lim]) {
                    at += i + 1;
                    break;
                }
                if lim == cap {
                    return Ok((lim, true));
                }
                if self.eof {
                    // The file's last line.
                    return Ok((lim, false));
                }
                self.fill((self.bytes.len() + HEADER_READ_CHUNK).min(cap))?;
            }
        }
    }
}

/// The known names that a text starts with, each followed by a newline,
/// found a byte at a time: the names that start with the text read so far
/// are a run of the sorted names, narrowed by each next byte.
struct NameScan<'a> {
    names: &'a [Vec<u8>],
    /// The run `lo..hi` of names that start with the first `k` bytes.
    lo: usize,
    hi: usize,
    k: usize,
    /// Lengths of the names found, ascending.
    found: Vec<usize>,
}

impl<'a> NameScan<'a> {
    fn new(names: &'a [Vec<u8>]) -> Self {
        NameScan {
            names,
            lo: 0,
            hi: names.len(),
            k: 0,
            found: Vec::new(),
        }
    }

    /// Goes on with `text` (the same text as before, maybe longer).
    fn feed(&mut self, text: &[u8]) {
        while self.lo < self.hi && self.k < text.len() {
            let (k, c) = (self.k, text[self.k]);
            let run = &self.names[self.lo..self.hi];
            // The one name of exactly `k` bytes, if any, sorts first.
            if run[0].len() == k && c == b'\n' {
                self.found.push(k);
            }
            let lo = run.partition_point(|n| n.len() <= k || n[k] < c);
            let hi = run.partition_point(|n| n.len() <= k || n[k] <= c);
            self.hi = self.lo + hi;
            self.lo += lo;
            self.k += 1;
        }
    }

    /// The length of the longest name the text may still hold (more of it
    /// must be read), or `None`.
    fn longest_left(&self) -> Option<usize> {
        self.names[self.lo..self.hi].iter().map(Vec::len).max()
    }
}

/// The fields of `lines` (the header after its `//.kernel` line) when they
/// are the header IGC writes: a `//.platform` line first, then each field
/// IGC writes in IGC's order, at most once; lines IGC writes that are not
/// read ([`ORDER`] names them all) between them. `None` when they are not.
fn igc_fields(lines: &[u8]) -> Option<AsmHeader> {
    let mut h = AsmHeader::default();
    let mut last: Option<usize> = None;
    for line in lines.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.starts_with(b"//") {
            // The end (the lines given are the header's, then maybe the
            // empty rest after the last newline).
            break;
        }
        match field_of(line) {
            Some((at, field, value)) => {
                if last.map_or(at != 0, |l| at <= l) {
                    return None;
                }
                last = Some(at);
                if let Some(f) = field {
                    apply(&mut h, f, value);
                }
            }
            None if last.is_none() => return None,
            None => {}
        }
    }
    last.map(|_| h)
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

/// The fields IGC writes after the `//.kernel` line, in its order (vISA's
/// `emitDeviceAsmHeaderComment`, IGC 1.0 to 2.x), each by the text after
/// `//.` that starts its line, and the field read from it (`None`: not
/// read).
const ORDER: [(&str, Option<Field>); 13] = [
    ("platform ", Some(Field::Platform)),
    ("thread_config ", Some(Field::ThreadConfig)),
    ("options_string ", None),
    ("full_options ", None),
    ("instCount", Some(Field::InstCount)),
    ("RA type", Some(Field::RaType)),
    ("git-hash", Some(Field::GitHash)),
    ("GRF count", None),
    ("spill size", Some(Field::SpillSize)),
    ("spill GRF est. ref count", Some(Field::SpillGrfRefs)),
    ("spill flag store", Some(Field::SpillFlagStores)),
    ("spill flag load", Some(Field::SpillFlagLoads)),
    ("private memory size", Some(Field::PrivateMemory)),
];

/// The place in [`ORDER`] of the field `line` holds, the field read and
/// its value.
fn field_of(line: &[u8]) -> Option<(usize, Option<Field>, &[u8])> {
    let rest = line.strip_prefix(b"//.")?;
    // The field's name is ASCII: matched on the bytes, and only its value
    // decoded.
    ORDER
        .iter()
        .enumerate()
        .find_map(|(at, &(name, f))| rest.strip_prefix(name.as_bytes()).map(|v| (at, f, v)))
}

fn apply(h: &mut AsmHeader, field: Field, value: &[u8]) {
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

fn leading_number(s: &str) -> Option<u64> {
    let s = s.trim();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

#[cfg(test)]
mod tests;
