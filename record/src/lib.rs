//! The record format: what the interposer writes for each process and what
//! the collector reads. Defined here once; docs/internals.md's "Record format"
//! section describes the same thing for people.
//!
//! Each traced process `P` on host `H` leaves two files in `<out>/records/`,
//! named `H-P-T` ([`process_stem`]) where `T` is a token drawn at random by
//! each process, so that two processes with the same host name and pid (PID
//! namespaces, containers) never share a file:
//!
//! * `H-P-T.events`: JSON lines, one event per line, each written with a single
//!   `write(2)` on an `O_APPEND` descriptor, so a killed process leaves every
//!   event whose write returned (at worst a truncated last line, which the
//!   reader reports and skips). The first line is the `process` event.
//! * `H-P-T.counts`: a binary file shared-mapped by the interposer. A 64-byte
//!   header, then one 32-byte slot per kernel id, four little-endian `u64`:
//!   `immediate` (appends to immediate command lists, each one launch),
//!   `regular_appended` (appends to regular lists), `regular_launched`
//!   (executions of those appends), and a reserved zero. A kernel's
//!   `launches` is `immediate + regular_launched`, its `appended` is
//!   `immediate + regular_appended`: the common immediate launch costs one
//!   atomic add. The interposer increments the slots in place, so the
//!   kernel's page cache holds every count the moment the launch call
//!   returns: `SIGKILL` loses nothing.
//!
//! Kernel id 0 is reserved for launches of kernel handles that were never
//! seen being created ("unknown kernel"); real kernels start at 1.

/// Version of both files; bumped on any incompatible change (2: 32-byte
/// counter slots; 3: launch shapes, slot pairs of their own in the counts
/// file: [`shapes`]; 4: device times, time blocks in the counts file:
/// [`times`]).
pub const VERSION: u32 = 4;
/// The oldest version this reader still reads (a version 2 record has no
/// shapes, a version 3 one no times).
pub const OLDEST_VERSION: u32 = 2;
/// The `record` field of the `process` event.
pub const RECORD_TAG: &str = "xpu-asm";
/// First 8 bytes of a counts file.
pub const COUNTS_MAGIC: [u8; 8] = *b"XPUCNT01";
/// Size of the counts file header.
pub const COUNTS_HEADER_LEN: usize = 64;
/// Size of one kernel's counter slot.
pub const COUNTS_SLOT_LEN: usize = 32;
/// Kernel id of launches whose kernel handle was never seen being created.
pub const UNKNOWN_KERNEL_ID: u32 = 0;

/// Slots per chunk of a counts file: the interposer reserves and maps a
/// counts file a chunk at a time, and says of each chunk where its counts
/// are (a `counts` event: in the file, staged, or in memory).
pub const CHUNK_SLOTS: usize = 2048;

/// Environment variable naming the folder where a process keeps what it
/// could not (yet) put into the capture folder: counts of chunks that
/// could not be mapped there safely, events that could not be written.
/// A node-local memory filesystem; default [`STAGING_DEFAULT`].
pub const STAGING_ENV: &str = "XPU_ASM_STAGING";
/// The default staging folder.
pub const STAGING_DEFAULT: &str = "/dev/shm";
/// The `record` field of a staged file's header.
pub const STAGING_TAG: &str = "xpu-asm-staging";
/// Size of a staged counts file's first page: [`STAGED_COUNTS_MAGIC`],
/// the length of a JSON header (u32 LE at 8) and the header itself (at
/// 16; the same object as a staged events file's first line), and from
/// [`STAGED_FLAGS_AT`] one byte per chunk: 1 while that chunk's counts are
/// staged here and not yet written into the capture's counts file. The
/// counts file's own layout follows, so that chunk `c` starts at
/// `STAGED_HEAD_LEN + c * CHUNK_SLOTS * COUNTS_SLOT_LEN`, page-aligned.
pub const STAGED_HEAD_LEN: usize = 4096;
/// Where a staged counts file's chunk flags start.
pub const STAGED_FLAGS_AT: usize = 2048;
/// First 8 bytes of a staged counts file.
pub const STAGED_COUNTS_MAGIC: [u8; 8] = *b"XPUSTG01";

/// Environment variable naming the abstract Unix datagram socket on which
/// `xpu-asm-run` listens for notices: a process that can write its record
/// nowhere (neither the capture folder nor the staging folder) says so
/// there, one JSON line a notice: `{"host":..,"pid":..,"reason":..}`.
pub const NOTIFY_ENV: &str = "XPU_ASM_NOTIFY";
/// Environment variable holding the key a notice must carry
/// (`"key":..`): random, drawn by `xpu-asm-run` for each run and known
/// only to the processes of its command (another user can read the
/// socket's name in `/proc/net/unix`, not a process's environment).
pub const NOTIFY_KEY_ENV: &str = "XPU_ASM_NOTIFY_KEY";

/// `xpu-asm-H-P-T.events` / `.counts`: a process's staged files.
pub fn staged_file_name(stem: &str, ext: &str) -> String {
    format!("xpu-asm-{stem}.{ext}")
}

/// The header of a process's staged files (without a newline): where its
/// record is (absolute paths), and which process it is (`start`: its start
/// time in clock ticks since boot, `/proc/<pid>/stat`'s 22nd field, which
/// tells it from a later process of the same pid).
pub fn staging_header(events: &str, counts: &str, host: &str, pid: u32, start: u64) -> Vec<u8> {
    let mut l = Vec::with_capacity(256);
    l.extend_from_slice(b"{\"record\":");
    push_json_str(&mut l, STAGING_TAG);
    l.extend_from_slice(b",\"events\":");
    push_json_str(&mut l, events);
    l.extend_from_slice(b",\"counts\":");
    push_json_str(&mut l, counts);
    l.extend_from_slice(b",\"host\":");
    push_json_str(&mut l, host);
    l.extend_from_slice(format!(",\"pid\":{pid},\"start\":{start}}}").as_bytes());
    l
}

/// Folder under the output folder that holds the records.
pub const RECORDS_DIR: &str = "records";
/// Folder under the output folder that holds one IGC dump folder per process.
pub const DUMPS_DIR: &str = "dumps";
/// Folder under the output folder that holds each module's GPU binary, once
/// per content: `modules/<sha256>.bin`.
pub const MODULES_DIR: &str = "modules";
/// Environment variable that chooses where kernels' ISA comes from: unset
/// (IGC's dumps, then module binaries) or `binary` (module binaries only:
/// the interposer sets none of [`DUMP_ENV`]).
pub const ISA_ENV: &str = "XPU_ASM_ISA";
/// Environment variable that turns the interposer on and names the output folder.
pub const OUT_ENV: &str = "XPU_ASM_OUT";
/// Environment variable listing the variables the interposer set itself
/// (comma-separated), so that a child process can tell them from the user's.
pub const OWNED_ENV: &str = "XPU_ASM_OWNED";

/// Environment variable that `xpu-asm-run --keep all` sets to `all`: IGC
/// then writes every dump file (the interposer sets no
/// `IGC_ShaderDumpRegexFilter` of its own).
pub const DUMPS_ENV: &str = "XPU_ASM_DUMPS";
/// The name of IGC's dump filter: IGC 2 matches it (a regular expression,
/// searched) against each dump file's name before writing the file. IGC
/// 1.0 has no such key and writes every file.
pub const DUMP_FILTER_ENV: &str = "IGC_ShaderDumpRegexFilter";
/// The files the collector reads: `.asm` and `.spv`, and IGC 1's final
/// binaries (`.kernbin`) with the machine code (`.dat`) they are compared
/// with. A filter the user set is kept as an alternative in front of this
/// one: `USER|` this.
pub const DUMP_FILTER: &str = r"\.(asm|spv|kernbin|dat)$";

/// The variables the interposer sets at load time for the driver and IGC.
/// `IGC_DumpToCustomDir`'s value is computed per process;
/// `IGC_ShaderDumpRegexFilter` joins the user's own (see [`DUMP_FILTER`]).
/// NEO 26 keeps its compiler cache off for `NEO_CACHE_PERSISTENT=0` (and
/// whenever an `IGC_*` variable is set); NEO 22.43's Level Zero driver
/// ignores both and uses the folder `l0_cache_dir` names (default
/// `./l0_cache`) whenever it exists: `/dev/null` is a folder that cannot
/// exist.
pub const DUMP_ENV: [(&str, &str); 6] = [
    ("IGC_ShaderDumpEnable", "1"),
    ("IGC_DumpToCustomDir", ""),
    (DUMP_FILTER_ENV, DUMP_FILTER),
    ("NEO_CACHE_PERSISTENT", "0"),
    ("l0_cache_dir", "/dev/null"),
    ("SYCL_CACHE_PERSISTENT", "0"),
];

/// Set by `xpu-asm-run` to `1` when the only IGC that this system's NEO
/// can load is IGC 1 (`libigc.so.1`, and no `libigc.so.2` where NEO looks):
/// the interposer then sets [`IGC1_DUMP_ENV`] in place of
/// `IGC_ShaderDumpEnable` and writes each SPIR-V module's `.spv` itself
/// ([`igc1_spv_file_name`]). Unset (a program run under `LD_PRELOAD`
/// alone, IGC 2, both IGCs there): IGC's full dumps, as before.
pub const IGC_ENV: &str = "XPU_ASM_IGC";

/// What IGC 1 gets in place of `IGC_ShaderDumpEnable=1` (see [`IGC_ENV`]):
/// `EnableVISAOutput` writes exactly the `.asm` files, `EnableVISABinary`
/// exactly each attempt's machine code (`.dat`), and
/// `EnableVISADumpCommonISA` gives the `.asm` the vISA variable names the
/// full dumps have, writing nothing more. IGC 1 writes no `.spv` and no
/// `.kernbin` then, and its `.asm` have no `// Line` comments (IGC 1 emits
/// source locations only under `ShaderDumpEnable`).
pub const IGC1_DUMP_ENV: [(&str, &str); 3] = [
    ("IGC_EnableVISAOutput", "1"),
    ("IGC_EnableVISABinary", "1"),
    ("IGC_EnableVISADumpCommonISA", "1"),
];

/// IGC 1's 64-bit hash of a module's SPIR-V, which names its dump files
/// (`OCL_asm<hash as 16 hex digits>...`): `iSTD::HashFromBuffer` of IGC's
/// iStdLib, Bob Jenkins' 96-bit mix over the little-endian 32-bit words
/// (a last partial word zero-padded), the hash being the mix's last two
/// words. `bench/igc_hash.py` is the same in Python.
pub fn igc1_module_hash(spirv: &[u8]) -> u64 {
    fn mix(mut a: u32, mut b: u32, mut c: u32) -> (u32, u32, u32) {
        a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 13);
        b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 8);
        c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 13);
        a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 12);
        b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 16);
        c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 5);
        a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> 3);
        b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << 10);
        c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> 15);
        (a, b, c)
    }
    let (mut a, mut hi, mut lo) = (0x428A_2F98u32, 0x7137_4491u32, 0xB5C0_FBCFu32);
    let mut words = spirv.chunks_exact(4);
    for w in words.by_ref() {
        let d = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        (a, hi, lo) = mix(a ^ d, hi, lo);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 4];
        last[..rest.len()].copy_from_slice(rest);
        (_, hi, lo) = mix(a ^ u32::from_le_bytes(last), hi, lo);
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// `OCL_asm<hash>.spv`: the name IGC 1's full dumps give a module's SPIR-V
/// ([`igc1_module_hash`]).
pub fn igc1_spv_file_name(spirv: &[u8]) -> String {
    format!("OCL_asm{:016x}.spv", igc1_module_hash(spirv))
}

/// `H-P-T`: what a process's record files and dump folder are named after.
/// `token` is random per process (8 hex digits).
pub fn process_stem(host: &str, pid: u32, token: &str) -> String {
    format!("{host}-{pid}-{token}")
}

/// `H-P.events`: the name before tokens (still read; the reader takes every
/// `*.events`).
pub fn events_file_name(host: &str, pid: u32) -> String {
    format!("{host}-{pid}.events")
}

/// `H-P.counts`: the name before tokens.
pub fn counts_file_name(host: &str, pid: u32) -> String {
    format!("{host}-{pid}.counts")
}

/// `<sha256>.bin`: a module binary's file name under [`MODULES_DIR`].
pub fn module_file_name(sha256: &str) -> String {
    format!("{sha256}.bin")
}

/// `dumps/H-P`: the dump folder before tokens, assumed for a record that
/// names none.
pub fn dump_dir_name(host: &str, pid: u32) -> String {
    format!("{DUMPS_DIR}/{host}-{pid}")
}

/// This host's name as records give it ([`safe_host`] of `gethostname`).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let raw = if rc == 0 {
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    safe_host(&raw)
}

/// A host name reduced to characters safe in a file name (`[A-Za-z0-9._-]`,
/// anything else `_`; `host` when empty): how records name hosts.
pub fn safe_host(raw: &str) -> String {
    let safe: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "host".to_string()
    } else {
        safe
    }
}

/// Appends `s` to `out` as a JSON string literal (with quotes).
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c as usize) >> 4]);
                out.push(HEX[(c as usize) & 15]);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Appends `"key":` then the bytes as a JSON string when they are UTF-8, or
/// `"key_hex":"..."` when they are not (kernel names are C strings, not
/// necessarily UTF-8; nothing is lost either way).
pub fn push_json_bytes_field(out: &mut Vec<u8>, key: &str, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            push_json_str(out, key);
            out.push(b':');
            push_json_str(out, s);
        }
        Err(_) => {
            push_json_str(out, &format!("{key}_hex"));
            out.push(b':');
            out.push(b'"');
            out.extend_from_slice(hex(bytes).as_bytes());
            out.push(b'"');
        }
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// Inverse of [`hex`]; `None` on odd length or a non-hex digit.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() & 1 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Builds the header of a counts file.
pub fn counts_header() -> [u8; COUNTS_HEADER_LEN] {
    let mut h = [0u8; COUNTS_HEADER_LEN];
    h[..8].copy_from_slice(&COUNTS_MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(COUNTS_SLOT_LEN as u32).to_le_bytes());
    h
}

/// One counter slot holding `launches` and `appended` (as regular-list
/// counts, which can express any pair), for tools and tests that write
/// counts files.
pub fn encode_slot(launches: u64, appended: u64) -> [u8; COUNTS_SLOT_LEN] {
    let mut s = [0u8; COUNTS_SLOT_LEN];
    s[8..16].copy_from_slice(&appended.to_le_bytes());
    s[16..24].copy_from_slice(&launches.to_le_bytes());
    s
}

/// `(launches, appended)` of a counter slot; `None` when `slot` is short.
pub fn decode_slot(slot: &[u8]) -> Option<(u64, u64)> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            slot.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let (immediate, regular_appended, regular_launched) = (word(0)?, word(1)?, word(2)?);
    Some((
        immediate.wrapping_add(regular_launched),
        immediate.wrapping_add(regular_appended),
    ))
}

#[cfg(feature = "read")]
pub mod origins;
pub mod ranks;
#[cfg(feature = "read")]
pub mod read;
pub mod shapes;
#[cfg(feature = "read")]
pub mod spec;
pub mod times;
pub mod trust;

#[cfg(test)]
mod igc1_hash_tests {
    use super::*;

    /// The `.spv` files IGC 1.0.12504 dumped for the collector's test data
    /// (`collector/tests/data/gen.sh`): each one's name is the hash of its
    /// bytes.
    #[test]
    fn the_hash_names_every_spv_igc_1_dumped() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../collector/tests/data");
        let mut checked = Vec::new();
        for sub in ["pvc", "dg2-retry"] {
            let dir = std::path::Path::new(data).join(sub);
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .expect("the collector's test data")
                .map(|e| e.expect("entry").file_name().into_string().expect("ASCII"))
                .filter(|n| n.ends_with(".spv"))
                .collect();
            names.sort();
            for n in names {
                let bytes = std::fs::read(dir.join(&n)).expect("read");
                assert_eq!(igc1_spv_file_name(&bytes), n, "{sub}/{n}");
                checked.push(n);
            }
        }
        assert_eq!(
            checked,
            [
                "OCL_asm0ffa4fea61191b0a.spv",
                "OCL_asm16db3a16823c3d45.spv",
                "OCL_asm6f30f910931b48ea.spv",
                "OCL_asm16db3a16823c3d45.spv",
            ]
        );
    }

    /// The same values as `bench/igc_hash.py`, a partial last word included.
    #[test]
    fn short_inputs_hash_as_the_python_does() {
        assert_eq!(igc1_module_hash(b""), 0x7137_4491_b5c0_fbcf);
        assert_eq!(
            igc1_module_hash(b"\x03\x02\x23\x07\x00"),
            0x7183_17ef_a6ac_3599
        );
        assert_eq!(igc1_module_hash(b"abcdefgh"), 0xb7f9_208c_1622_d592);
    }
}

/// A filesystem's name from its `statfs` magic number (`f_type`), for
/// what a person reads: `overlay`, `nfs`, `lustre`, `gpfs`, ...; an
/// unknown one as `type 0x...`.
pub fn filesystem_name(magic: i64) -> String {
    let name = match magic as u64 & 0xffff_ffff {
        0x0102_1994 => "tmpfs",
        0xef53 => "ext4",
        0x5846_5342 => "xfs",
        0x794c_7630 => "overlay",
        0x6969 => "nfs",
        0x0bd0_0bd0 => "lustre",
        0x4750_4653 => "gpfs",
        0x1983_0326 => "beegfs",
        0x00c3_6400 => "ceph",
        0x9123_683e => "btrfs",
        0x2fc1_2fc1 => "zfs",
        0x6573_5546 => "fuse",
        0x0102_1997 => "9p",
        0x6a65_6a63 => "virtiofs",
        0xff53_4d42 => "cifs",
        0xfe53_4d42 => "smb2",
        0x5346_4846 => "wekafs",
        0x2468_0530 | 0x0000_0af5 => "panfs",
        0x0102_0304 => "afs",
        0x8584_58f6 => "ramfs",
        0xf15f => "ecryptfs",
        0x7371_7368 => "squashfs",
        _ => return format!("type {magic:#x}"),
    };
    name.to_string()
}

#[cfg(test)]
mod filesystem_name_tests {
    #[test]
    fn filesystems_are_named() {
        assert_eq!(super::filesystem_name(0x794c7630), "overlay");
        assert_eq!(super::filesystem_name(0x0bd00bd0), "lustre");
        assert_eq!(super::filesystem_name(0x47504653), "gpfs");
        assert_eq!(super::filesystem_name(0x6969), "nfs");
        assert_eq!(super::filesystem_name(0x1234), "type 0x1234");
    }
}
