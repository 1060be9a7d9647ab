//! `isa::header::parse_header` on any bytes and any module's names: never
//! a panic, never an error from an in-memory reader; a kernel only when it
//! is one of the module's names and the `//.kernel` line holds it, then a
//! newline.
//!
//! Input: the module's names, each ended by a NUL byte, until an empty
//! one (two NULs in a row), then the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xpu_asm_isa::header::{parse_header, KnownNames, KERNEL_LINE};

fuzz_target!(|data: &[u8]| {
    let mut names = Vec::new();
    let mut rest = data;
    while let Some(end) = rest.iter().position(|&b| b == 0) {
        let (name, after) = (&rest[..end], &rest[end + 1..]);
        rest = after;
        if name.is_empty() {
            break;
        }
        names.push(name.to_vec());
    }
    let known = KnownNames::new(names);
    let h = parse_header(rest, &known).expect("reading a slice cannot fail");
    if let Some(k) = &h.kernel {
        assert!(known.contains(k));
        let mut line = KERNEL_LINE.to_vec();
        line.extend_from_slice(k);
        line.push(b'\n');
        assert!(rest.starts_with(&line));
        assert!(h.unresolved.is_none());
    } else {
        assert!(h.unresolved.is_some());
        assert_eq!((h.grf, h.instructions, h.spill_bytes), (None, None, None));
    }
});
