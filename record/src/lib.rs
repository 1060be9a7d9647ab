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
/// counter slots).
pub const VERSION: u32 = 2;
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

/// The variables the interposer sets at load time for the driver and IGC.
/// `IGC_DumpToCustomDir`'s value is computed per process. NEO 26 keeps its
/// compiler cache off for `NEO_CACHE_PERSISTENT=0` (and whenever an `IGC_*`
/// variable is set); NEO 22.43's Level Zero driver ignores both and uses
/// the folder `l0_cache_dir` names (default `./l0_cache`) whenever it
/// exists: `/dev/null` is a folder that cannot exist.
pub const DUMP_ENV: [(&str, &str); 5] = [
    ("IGC_ShaderDumpEnable", "1"),
    ("IGC_DumpToCustomDir", ""),
    ("NEO_CACHE_PERSISTENT", "0"),
    ("l0_cache_dir", "/dev/null"),
    ("SYCL_CACHE_PERSISTENT", "0"),
];

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

pub mod ranks;
#[cfg(feature = "read")]
pub mod read;
