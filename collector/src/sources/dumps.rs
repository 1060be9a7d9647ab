//! IGC dump folders: what is in them and what the `.asm` headers say.
//!
//! IGC 1.0.12504 (checked here with `ocloc` and with NEO's JIT, for pvc, dg2
//! and tgllp) names a module's files after a 64-bit hash of its SPIR-V:
//!
//! * `OCL_asm<hash>.spv`: the module's SPIR-V, byte-identical to what the
//!   program passed to `zeModuleCreate`.
//! * `OCL_asm<hash>[_<retry>]_simd<W>_entry_<NNNN>.asm`: a finished
//!   compilation of one kernel at SIMD width W. `_<retry>` (1, 2, ...) marks
//!   IGC's recompilations of a module whose kernels spilled; the first
//!   attempt has none. A SIMD width that aborted on spills leaves only a
//!   `.visaasm`, no `.asm`.
//! * `OCL_asm<hash>[_<retry>]_simd<W>_entry_<NNNN>.dat`: that attempt's
//!   machine code, and `OCL_asm<hash>_entry_<NNNN>.kernbin`: the kernel
//!   binary IGC finally emitted (a patch-token header, the kernel's name,
//!   then that machine code). Comparing the two tells which attempt IGC
//!   kept.
//!
//! Newer IGCs put more segments around these (shader numbers, pass names,
//! a kernel-name postfix), so names are parsed leniently: what ties a file
//! to a module is `asm<hash>`, and what ties it to a kernel is the exact
//! `//.kernel` line of its header.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Headers are read up to here and no further: a `.asm` can be hundreds of
/// megabytes, and its header fields all come within the first few lines.
pub const HEADER_MAX_BYTES: u64 = 64 * 1024;

/// Headers are read this much at a time: IGC's fit in the first read, and
/// the instruction body after them is not copied for nothing.
const HEADER_READ_CHUNK: usize = 4096;

/// `.kernbin`/`.dat` files bigger than this are not compared.
const BINARY_MAX_BYTES: u64 = 256 * 1024 * 1024;

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
/// end for its [`crate::isa::analyze`]: a launched kernel's file is opened
/// once, not once for the header and again for the analysis. The analysis
/// is `None` when not wanted, or when [`crate::isa::analyze_file`] would
/// give none or could not read the rest (it is then read again, later).
pub fn read_header_and_analysis(
    path: &Path,
    launched: &HashSet<&[u8]>,
) -> std::io::Result<(AsmHeader, Option<crate::isa::Analysis>)> {
    let file = File::open(path)?;
    crate::isa::with_buffer(|bytes| {
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
            crate::isa::analyze_rest(&file, bytes).ok().flatten()
        } else {
            None
        };
        Ok((header, analysis))
    })
}

/// What an `.asm` file name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsmName {
    /// The module hash (hex) after `asm`.
    pub hash: String,
    /// IGC's retry number; 0 for the first attempt.
    pub retry: u32,
    pub simd: Option<u32>,
    pub entry: Option<u32>,
}

fn re(cell: &'static OnceLock<regex::Regex>, pattern: &str) -> &'static regex::Regex {
    // The patterns are literals of this file, checked by the tests.
    cell.get_or_init(|| regex::Regex::new(pattern).expect("valid literal regex"))
}

/// `OCL_asm6f30f910931b48ea_1_simd32_entry_0001.asm` and lenient variants.
pub fn parse_asm_file_name(name: &str) -> Option<AsmName> {
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

/// `OCL_asm<hash>.spv` -> hash
pub fn parse_spv_file_name(name: &str) -> Option<String> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    re(&RE, r"(?:^|_)asm([0-9a-f]{8,})\.spv$")
        .captures(name)
        .map(|c| c[1].to_string())
}

/// `OCL_asm<hash>_entry_<NNNN>.kernbin` -> hash
pub fn parse_kernbin_file_name(name: &str) -> Option<String> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    re(&RE, r"(?:^|_)asm([0-9a-f]{8,})_entry_\d+\.kernbin$")
        .captures(name)
        .map(|c| c[1].to_string())
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

/// One `.asm` file of a dump folder.
#[derive(Debug, Clone)]
pub struct AsmFile {
    pub path: PathBuf,
    /// Path shown in reports: relative to the capture folder when inside it.
    pub shown: String,
    pub file_name: String,
    pub name: AsmName,
    /// `None` when the file could not be read (a warning says why).
    pub header: Option<AsmHeader>,
    /// Whether this attempt's machine code is the binary IGC finally emitted
    /// for the kernel; `None` when the dump does not tell.
    pub final_binary: Option<bool>,
    /// Where the text comes from.
    pub source: crate::sources::IsaSourceKind,
    /// For a disassembled module binary: which binary.
    /// (Boxed: most files are IGC's, and 100,000 of them are common.)
    pub binary: Option<Box<crate::sources::BinaryOrigin>>,
    /// Source lines and mix, when read with the header (files of the
    /// kernels the records say were launched); else read when needed.
    pub analysis: Option<Arc<crate::isa::Analysis>>,
}

/// What one process's dump folder holds.
#[derive(Debug, Clone, Default)]
pub struct DumpFolder {
    pub path: PathBuf,
    pub shown: String,
    pub exists: bool,
    /// SHA-256 (lower-case hex) of each dumped `.spv` -> the module hashes
    /// IGC named it by.
    pub spv_by_sha: BTreeMap<String, Vec<String>>,
    /// module hash -> SHA-256 of its `.spv`
    pub sha_by_hash: BTreeMap<String, String>,
    /// Every `.asm` with a module hash in its name, sorted by file name.
    /// Lookups go through an index built from it on first use: after
    /// changing it, call [`DumpFolder::reindex`].
    pub asm: Vec<AsmFile>,
    /// `.asm` files whose name has no module hash.
    pub other_asm: usize,
    pub warnings: Vec<String>,
    index: OnceLock<AsmIndex>,
}

/// The `.asm` files of a folder by module hash and kernel name.
#[derive(Debug, Clone, Default)]
struct AsmIndex {
    /// Indices into `asm`, sorted by (module hash, `//.kernel` name), then
    /// by index: each module's, and each of its kernels', files are one run
    /// in the folder's order.
    order: Vec<usize>,
}

fn index_key(a: &AsmFile) -> (&str, Option<&[u8]>) {
    (
        a.name.hash.as_str(),
        a.header.as_ref().and_then(|h| h.kernel.as_deref()),
    )
}

impl AsmIndex {
    fn build(asm: &[AsmFile]) -> Self {
        let mut order: Vec<usize> = (0..asm.len()).collect();
        // Stable: equal keys keep the folder's order.
        order.sort_by(|&i, &j| index_key(&asm[i]).cmp(&index_key(&asm[j])));
        AsmIndex { order }
    }

    /// Files of module `hash`, in the folder's order.
    fn module(&self, asm: &[AsmFile], hash: &str) -> &[usize] {
        let lo = self
            .order
            .partition_point(|&i| asm[i].name.hash.as_str() < hash);
        let hi = self
            .order
            .partition_point(|&i| asm[i].name.hash.as_str() <= hash);
        &self.order[lo..hi]
    }

    /// Files of module `hash` whose `//.kernel` line is `name`, in the
    /// folder's order.
    fn kernel(&self, asm: &[AsmFile], hash: &str, name: &[u8]) -> &[usize] {
        let key = (hash, Some(name));
        let lo = self.order.partition_point(|&i| index_key(&asm[i]) < key);
        let hi = self.order.partition_point(|&i| index_key(&asm[i]) <= key);
        &self.order[lo..hi]
    }
}

impl DumpFolder {
    fn index(&self) -> &AsmIndex {
        self.index.get_or_init(|| AsmIndex::build(&self.asm))
    }

    /// Rebuilds the lookup index after `asm` was changed.
    pub fn reindex(&mut self) {
        self.index = OnceLock::new();
    }

    /// The module hashes IGC named the `.spv` with SHA-256 `sha` by.
    fn hashes(&self, sha: &str) -> &[String] {
        self.spv_by_sha
            .get(&sha.to_ascii_lowercase())
            .map_or(&[], |h| h.as_slice())
    }

    /// Indices into `asm` of the files of the modules named `hashes`, in
    /// the folder's order.
    fn indices<'a>(&'a self, hashes: &[String], each: impl Fn(&str) -> &'a [usize]) -> Vec<usize> {
        match hashes {
            [] => Vec::new(),
            [h] => each(h).to_vec(),
            // Two names for the same SPIR-V: merge, in the folder's order.
            _ => {
                let mut all: Vec<usize> = hashes.iter().flat_map(|h| each(h)).copied().collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        }
    }

    /// The `.asm` files of the module whose SPIR-V has SHA-256 `sha`.
    pub fn module_asm<'a>(&'a self, sha: &str) -> impl Iterator<Item = &'a AsmFile> + 'a {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.module(&self.asm, h))
            .into_iter()
            .map(move |i| &self.asm[i])
    }

    /// The `.asm` files of the module whose SPIR-V has SHA-256 `sha` whose
    /// `//.kernel` line is exactly `name`, in the folder's order.
    pub fn kernel_asm(&self, sha: &str, name: &[u8]) -> Vec<&AsmFile> {
        let idx = self.index();
        self.indices(self.hashes(sha), |h| idx.kernel(&self.asm, h, name))
            .into_iter()
            .map(|i| &self.asm[i])
            .collect()
    }

    pub fn has_module(&self, sha: &str) -> bool {
        self.spv_by_sha.contains_key(&sha.to_ascii_lowercase())
    }
}

/// Raised when the user asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Lists the top level of `path` (IGC writes its dumps flat): hashes every
/// `.spv`, reads every `.asm` header, and compares attempts' machine code
/// with final `.kernbin` binaries. `shown` is how paths are displayed;
/// `known_final` gives verdicts learned by an earlier collection (whose
/// evidence files may since have been pruned), keyed by shown path. The
/// files of kernels named in `launched` are also read whole, for their
/// [`AsmFile::analysis`].
pub fn scan_folder(
    path: &Path,
    shown: &str,
    known_final: &BTreeMap<String, bool>,
    launched: &HashSet<&[u8]>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<DumpFolder, Stopped> {
    let mut f = DumpFolder {
        path: path.to_path_buf(),
        shown: shown.to_string(),
        ..Default::default()
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => f.exists = true,
        Ok(_) => {
            f.warnings
                .push(format!("{shown}: not a folder; its dumps are ignored"));
            return Ok(f);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(f),
        Err(e) => {
            f.warnings.push(format!("{shown}: cannot read: {e}"));
            return Ok(f);
        }
    }
    let entries = match std::fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) => {
            f.warnings.push(format!("{shown}: cannot list: {e}"));
            return Ok(f);
        }
    };
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut odd: Vec<String> = Vec::new();
    for e in entries {
        let Ok(e) = e else { continue };
        // Only regular files: a symlink, FIFO or folder is not IGC's output
        // (and a FIFO would block a read). One named like IGC's is reported.
        let file_type = e.file_type();
        if !file_type.as_ref().is_ok_and(|t| t.is_file()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let igc_like = parse_asm_file_name(&name).is_some()
                || parse_spv_file_name(&name).is_some()
                || parse_kernbin_file_name(&name).is_some();
            if igc_like {
                let kind = match file_type {
                    Ok(t) if t.is_dir() => "a folder",
                    Ok(t) if t.is_symlink() => "a symbolic link",
                    _ => "not a regular file",
                };
                odd.push(format!(
                    "{shown}/{name}: {kind}, not a file IGC wrote; ignored"
                ));
            }
            continue;
        }
        // IGC's names are ASCII; anything else is not one of its files.
        if let Ok(name) = e.file_name().into_string() {
            files.push((name, e.path()));
        }
    }
    files.sort();
    odd.sort();
    f.warnings.extend(odd);

    // The files' contents, read on every core; then put together in file
    // order, exactly as one pass over the sorted names would.
    // Nearly every item is an `Asm`: boxing it would only add allocations.
    #[allow(clippy::large_enum_variant)]
    enum Scanned {
        Spv(String, std::io::Result<String>),
        Asm(
            AsmName,
            std::io::Result<(AsmHeader, Option<crate::isa::Analysis>)>,
        ),
        OtherAsm,
        Kernbin(String),
        Other,
        Stopped,
    }
    let scanned = files
        .par_iter()
        .map(|(name, p)| {
            if stop() {
                Scanned::Stopped
            } else if let Some(hash) = parse_spv_file_name(name) {
                Scanned::Spv(hash, sha256_file(p))
            } else if let Some(asm_name) = parse_asm_file_name(name) {
                Scanned::Asm(asm_name, read_header_and_analysis(p, launched))
            } else if name.ends_with(".asm") {
                Scanned::OtherAsm
            } else if let Some(hash) = parse_kernbin_file_name(name) {
                Scanned::Kernbin(hash)
            } else {
                Scanned::Other
            }
        })
        .collect::<Vec<_>>();
    f.asm.reserve_exact(
        scanned
            .iter()
            .filter(|s| matches!(s, Scanned::Asm(..)))
            .count(),
    );
    let mut kernbins = Vec::new();
    for ((name, p), scanned) in files.into_iter().zip(scanned) {
        let shown_file = format!("{shown}/{name}");
        match scanned {
            Scanned::Stopped => return Err(Stopped),
            Scanned::Spv(hash, Ok(sha)) => {
                f.spv_by_sha
                    .entry(sha.clone())
                    .or_default()
                    .push(hash.clone());
                f.sha_by_hash.insert(hash, sha);
            }
            Scanned::Spv(_, Err(e)) => f.warnings.push(format!("{shown_file}: cannot read: {e}")),
            Scanned::Asm(asm_name, read) => {
                let (header, analysis) = match read {
                    Ok((h, analysis)) => {
                        if h.kernel.is_none() {
                            f.warnings.push(format!(
                                "{shown_file}: no `//.kernel` line in its header; cannot tell its kernel, ignored"
                            ));
                        }
                        (Some(h), analysis.map(Arc::new))
                    }
                    Err(e) => {
                        f.warnings.push(format!("{shown_file}: cannot read: {e}"));
                        (None, None)
                    }
                };
                let final_binary = known_final.get(&shown_file).copied();
                f.asm.push(AsmFile {
                    path: p,
                    shown: shown_file,
                    file_name: name,
                    name: asm_name,
                    header,
                    final_binary,
                    source: crate::sources::IsaSourceKind::IgcDump,
                    binary: None,
                    analysis,
                });
            }
            Scanned::OtherAsm => f.other_asm += 1,
            Scanned::Kernbin(hash) => kernbins.push((hash, p, shown_file)),
            Scanned::Other => {}
        }
    }

    // Each final binary against the attempts of its kernel (same module
    // hash, same `//.kernel` name), on every core; verdicts applied in file
    // order (a later binary's verdict on a file replaces an earlier one's).
    let index = AsmIndex::build(&f.asm);
    let asm = &f.asm;
    let verdicts = kernbins
        .par_iter()
        .map(|(hash, p, shown_file)| {
            if stop() {
                return Err(Stopped);
            }
            let kb = match read_small(p) {
                Ok(b) => parse_kernbin(&b),
                Err(e) => return Ok(Err(format!("{shown_file}: cannot read: {e}"))),
            };
            let mut found = Vec::new();
            if let Some(kb) = kb {
                for &i in index.kernel(asm, hash, &kb.name) {
                    let dat = asm[i].path.with_extension("dat");
                    if let Ok(code) = read_small(&dat) {
                        found.push((i, code == kb.machine_code));
                    }
                }
            }
            Ok(Ok(found))
        })
        .collect::<Vec<_>>();
    for v in verdicts {
        match v? {
            Ok(found) => {
                for (i, same) in found {
                    f.asm[i].final_binary = Some(same);
                }
            }
            Err(warning) => f.warnings.push(warning),
        }
    }
    f.index = OnceLock::from(index);
    Ok(f)
}

fn read_small(p: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    File::open(p)?
        .take(BINARY_MAX_BYTES + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > BINARY_MAX_BYTES {
        return Err(std::io::Error::other("too large to compare"));
    }
    Ok(buf)
}

/// Lower-case hex SHA-256 of a file, read in chunks.
pub fn sha256_file(p: &Path) -> std::io::Result<String> {
    let mut file = File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(xpu_asm_record::hex(&h.finalize()))
}

/// Bytes and regular files under `root` (symlinks not followed, not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub bytes: u64,
    pub files: u64,
}

impl Usage {
    /// What is left of `self` once `gone` was deleted.
    pub fn minus(self, gone: Usage) -> Usage {
        Usage {
            bytes: self.bytes.saturating_sub(gone.bytes),
            files: self.files.saturating_sub(gone.files),
        }
    }
}

pub fn usage(root: &Path) -> Usage {
    let mut u = Usage::default();
    if !is_real_dir(root) {
        return u;
    }
    // Folder by folder; each folder's files measured on every core.
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut files = Vec::new();
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_file() => files.push(e),
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                _ => {}
            }
        }
        // DirEntry::metadata does not follow symlinks.
        for len in files
            .par_iter()
            .map(|e| e.metadata().map_or(0, |m| m.len()))
            .collect::<Vec<_>>()
        {
            u.files += 1;
            u.bytes += len;
        }
    }
    u
}

/// A folder that is not a symlink (pruning never goes through links).
pub fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Deletes every regular file under `root` for which `keep` says no; never
/// follows symlinks, so it cannot reach outside `root`. Returns how many
/// files it deleted, plus one message per file it could not delete.
pub fn prune(
    root: &Path,
    keep: &dyn Fn(&Path) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<(u64, Vec<String>), Stopped> {
    prune_measured(root, keep, stop).map(|(gone, errors)| (gone.files, errors))
}

/// [`prune`], counting the bytes as well as the files it deleted (sizes as
/// [`usage`] counts them).
pub fn prune_measured(
    root: &Path,
    keep: &dyn Fn(&Path) -> bool,
    stop: &dyn Fn() -> bool,
) -> Result<(Usage, Vec<String>), Stopped> {
    let mut deleted = Usage::default();
    let mut errors = Vec::new();
    if !is_real_dir(root) {
        return Ok((deleted, errors));
    }
    for e in walkdir::WalkDir::new(root)
        .follow_links(false)
        .follow_root_links(false)
        .into_iter()
        .flatten()
    {
        if stop() {
            return Err(Stopped);
        }
        if !e.file_type().is_file() || keep(e.path()) {
            continue;
        }
        let len = e.metadata().map_or(0, |m| m.len());
        match std::fs::remove_file(e.path()) {
            Ok(()) => {
                deleted.files += 1;
                deleted.bytes += len;
            }
            Err(err) => errors.push(format!("{}: cannot delete: {err}", e.path().display())),
        }
    }
    Ok((deleted, errors))
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
        assert_eq!(
            parse_kernbin_file_name("OCL_asm60d3638d7dda8598_entry_0002.kernbin").as_deref(),
            Some("60d3638d7dda8598")
        );
    }

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

    fn asm_file(file_name: &str, kernel: Option<&str>) -> AsmFile {
        AsmFile {
            path: PathBuf::from(file_name),
            shown: format!("d/{file_name}"),
            file_name: file_name.to_string(),
            name: parse_asm_file_name(file_name).unwrap(),
            header: Some(AsmHeader {
                kernel: kernel.map(|k| k.as_bytes().to_vec()),
                ..Default::default()
            }),
            final_binary: None,
            source: crate::sources::IsaSourceKind::IgcDump,
            binary: None,
            analysis: None,
        }
    }

    #[test]
    fn lookups_by_module_and_exact_kernel_name() {
        let mut f = DumpFolder::default();
        // Module "aaaaaaaa" was dumped twice, under two hashes.
        for h in ["aaaaaaaa", "cccccccc"] {
            f.spv_by_sha
                .entry("sha-a".into())
                .or_default()
                .push(h.into());
        }
        f.spv_by_sha.insert("sha-b".into(), vec!["bbbbbbbb".into()]);
        f.asm = vec![
            asm_file("OCL_asmaaaaaaaa_1_simd32_entry_0001.asm", Some("k")),
            asm_file("OCL_asmaaaaaaaa_simd32_entry_0001.asm", Some("k")),
            asm_file("OCL_asmaaaaaaaa_simd32_entry_0002.asm", Some("k_v2")),
            asm_file("OCL_asmaaaaaaaa_simd32_entry_0003.asm", None),
            asm_file("OCL_asmbbbbbbbb_simd32_entry_0001.asm", Some("k")),
            asm_file("OCL_asmcccccccc_simd8_entry_0001.asm", Some("k")),
        ];
        let names = |v: Vec<&AsmFile>| v.iter().map(|a| a.file_name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(f.kernel_asm("SHA-A", b"k")),
            [
                "OCL_asmaaaaaaaa_1_simd32_entry_0001.asm",
                "OCL_asmaaaaaaaa_simd32_entry_0001.asm",
                "OCL_asmcccccccc_simd8_entry_0001.asm"
            ]
        );
        assert_eq!(
            names(f.kernel_asm("sha-a", b"k_v2")),
            ["OCL_asmaaaaaaaa_simd32_entry_0002.asm"]
        );
        assert!(f.kernel_asm("sha-a", b"k_").is_empty());
        assert!(f.kernel_asm("sha-c", b"k").is_empty());
        assert_eq!(
            names(f.kernel_asm("sha-b", b"k")),
            ["OCL_asmbbbbbbbb_simd32_entry_0001.asm"]
        );
        // Every file of the module, in the folder's order, whatever its header.
        assert_eq!(
            names(f.module_asm("sha-a").collect()),
            [
                "OCL_asmaaaaaaaa_1_simd32_entry_0001.asm",
                "OCL_asmaaaaaaaa_simd32_entry_0001.asm",
                "OCL_asmaaaaaaaa_simd32_entry_0002.asm",
                "OCL_asmaaaaaaaa_simd32_entry_0003.asm",
                "OCL_asmcccccccc_simd8_entry_0001.asm"
            ]
        );
        // The index follows `asm` once told.
        f.asm.remove(0);
        f.reindex();
        assert_eq!(f.kernel_asm("sha-a", b"k").len(), 2);
    }

    #[test]
    fn pruning_counts_what_it_deletes_as_usage_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("dumps");
        let p = root.join("h-1");
        std::fs::create_dir_all(p.join("sub")).unwrap();
        std::fs::write(p.join("a.asm"), b"12345").unwrap();
        std::fs::write(p.join("a.ll"), b"123").unwrap();
        std::fs::write(p.join("sub/b.ll"), b"1234567").unwrap();
        std::fs::write(root.join("top.txt"), b"1").unwrap();
        std::os::unix::fs::symlink(p.join("a.ll"), p.join("link.ll")).unwrap();
        let before = usage(&root);
        assert_eq!(
            before,
            Usage {
                bytes: 16,
                files: 4
            }
        );
        let keep = |f: &Path| f.extension().is_some_and(|e| e == "asm");
        let (gone, errors) = prune_measured(&p, &keep, &|| false).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            gone,
            Usage {
                bytes: 10,
                files: 2
            }
        );
        assert_eq!(before.minus(gone), usage(&root));
        assert!(p.join("link.ll").symlink_metadata().is_ok());
        assert_eq!(usage(&dir.path().join("none")), Usage::default());
    }

    #[test]
    fn launched_files_are_analysed_in_the_header_read() {
        let dir = tempfile::tempdir().unwrap();
        // A header longer than one read, and a body of several reads.
        let mut text = String::from("//.kernel scale\n//.platform PVCXT\n");
        for i in 0..300 {
            text.push_str(&format!("//.note {i} of a long header\n"));
        }
        text.push_str("// File: a.cl\n");
        for i in 0..2000 {
            text.push_str(&format!(
                "// Line {}:  x[i] = x[i] * 2.0f;\n        add (16|M0)   r{}.0<1>:f  r2.0<1>:f  r3.0<1>:f\n",
                i % 7 + 1,
                i % 100 + 4
            ));
        }
        assert!(text.len() > 3 * HEADER_READ_CHUNK);
        let p = dir
            .path()
            .join("OCL_asm0123456789abcdef_simd16_entry_0001.asm");
        std::fs::write(&p, &text).unwrap();

        let launched: HashSet<&[u8]> = [b"other".as_slice(), b"scale"].into();
        let (h, a) = read_header_and_analysis(&p, &launched).unwrap();
        assert_eq!(h, read_header(&p).unwrap());
        assert_eq!(h.kernel.as_deref(), Some(b"scale".as_slice()));
        let whole = crate::isa::analyze_file(&p).unwrap().unwrap();
        assert_eq!(a, Some(whole.clone()));
        assert_eq!(whole.mix.instructions, 2000);
        assert_eq!(whole.source.unwrap().lines.len(), 7);

        let (h2, a2) = read_header_and_analysis(&p, &[b"other".as_slice()].into()).unwrap();
        assert_eq!(h2, h);
        assert_eq!(a2, None);

        // The folder's scan keeps it on the file.
        let f = scan_folder(dir.path(), "d", &BTreeMap::new(), &launched, &|| false).unwrap();
        assert_eq!(f.asm.len(), 1);
        assert_eq!(f.asm[0].analysis.as_deref(), a.as_ref());
        let f = scan_folder(dir.path(), "d", &BTreeMap::new(), &HashSet::new(), &|| {
            false
        })
        .unwrap();
        assert_eq!(f.asm[0].analysis, None);
    }
}
