//! `isa::header::parse_header` on any bytes and any cap: never a panic, never an
//! error from an in-memory reader, and a header cut by the cap says so.
//!
//! Input: one byte B (the cap is B * 7 bytes, or 64 KiB when B is 255),
//! then the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xpu_asm_isa::header::{parse_header, HEADER_MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&b, text)) = data.split_first() else {
        return;
    };
    let cap = if b == 255 {
        HEADER_MAX_BYTES
    } else {
        b as u64 * 7
    };
    let h = parse_header(text, cap).expect("reading a slice cannot fail");
    if let Some(k) = &h.kernel {
        // The name is taken verbatim from a `//.kernel ` line within the cap.
        let line_start = text
            .windows(10)
            .position(|w| w == b"//.kernel ")
            .expect("a kernel name comes from a //.kernel line");
        assert!((line_start as u64) < cap);
        assert!(!k.contains(&b'\n'));
    }
    if (text.len() as u64) < cap && !h.truncated {
        // Whole input read: the same result with the full cap.
        let again = parse_header(text, HEADER_MAX_BYTES.max(cap)).expect("slice");
        assert_eq!(h.kernel, again.kernel);
    }
});
