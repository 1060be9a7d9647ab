//! Loads from the interposer's own statics in one instruction.
//!
//! The library is built as an rlib too (for its tests and benches), so rustc
//! must assume that another object may define its statics, and reaches each
//! through the GOT: a load of its address, then the load. The launch path
//! reads a few words of statics per launch (the real function of a hook's
//! slot, the handle maps' tables); on x86-64 those loads name the static
//! directly (rip-relative), which the linker accepts because the statics are
//! local to the library (rustc's version script exports only the
//! `#[no_mangle]` functions; in a test executable nothing is preemptible).

/// The word at byte `$offset` (a constant) of static `$s`, an atomic `usize`
/// or pointer there: a plain load, which on x86-64 is an acquire load.
/// Elsewhere, `$fallback` (the same load in Rust).
macro_rules! load_word {
    ($s:path, $offset:expr, $fallback:expr) => {{
        #[cfg(target_arch = "x86_64")]
        let v: usize = {
            let v: usize;
            // SAFETY: reads one aligned word inside the static (the caller
            // names the offset of an atomic word of it).
            unsafe {
                core::arch::asm!(
                    "mov {v}, qword ptr [rip + {s} + {off}]",
                    v = out(reg) v,
                    s = sym $s,
                    off = const $offset,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            v
        };
        #[cfg(not(target_arch = "x86_64"))]
        let v: usize = $fallback;
        v
    }};
}

pub(crate) use load_word;
