//! IGC dump file names, `.kernbin` binaries, and the `asm/` file names made
//! from kernel names: never a panic, and a made-up file name is always safe
//! (only `[A-Za-z0-9._-]`, at most 80 bytes, never starting with a dot).

#![no_main]

use libfuzzer_sys::fuzz_target;
use xpu_asm_collector::names;
use xpu_asm_collector::sources::dumps;

fuzz_target!(|data: &[u8]| {
    let _ = dumps::file_names::parse_kernbin(data);
    let text = String::from_utf8_lossy(data);
    if let Some(n) = dumps::file_names::parse_asm_file_name(&text) {
        assert!(n.hash.len() >= 8 && n.hash.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    let _ = dumps::file_names::parse_spv_file_name(&text);
    let _ = dumps::file_names::parse_kernbin_file_name(&text);
    let rank = data.first().copied().unwrap_or(0) as usize * 1000;
    let demangled = names::demangle(data);
    let f = names::asm_file_name(rank, &demangled, data);
    assert!(f.len() <= names::ASM_FILE_NAME_MAX, "{f:?} is too long");
    assert!(!f.starts_with('.'), "{f:?}");
    assert!(
        f.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
        "{f:?}"
    );
    let escaped = names::escape_for_terminal(&names::readable(data, &demangled));
    assert!(
        !escaped
            .chars()
            .any(|c| c.is_control() || names::invisible(c)),
        "{escaped:?}"
    );
    let _ = names::shorten(&escaped, rank % 200);
});
