//! The thread-local reentrancy guard and the panic barrier.
//!
//! A launch can pass through several hooks on its way down (the loader's
//! exported function, whose table entry is the driver's function, both
//! hooked). The outermost hook takes the guard and records; the inner ones
//! find it held and only forward. So every call is recorded exactly once,
//! whatever path the program took.
//!
//! On x86-64 the flag is an initial-exec TLS variable: two instructions per
//! access instead of a `__tls_get_addr` call (Rust's `thread_local!` in a
//! shared library uses the general-dynamic model). Initial-exec is safe here
//! because the library is loaded at program start (`LD_PRELOAD`), when glibc
//! reserves static TLS for it.

use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(target_arch = "x86_64")]
mod flag {
    core::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".globl xpu_asm_guard_held",
        ".hidden xpu_asm_guard_held",
        ".type xpu_asm_guard_held, @object",
        ".size xpu_asm_guard_held, 8",
        ".p2align 3",
        "xpu_asm_guard_held:",
        ".zero 8",
        ".popsection",
    );

    /// This thread's offset of the flag from its thread pointer: the same
    /// for the whole thread, so the compiler may load it once for several
    /// accesses (`pure`).
    #[inline(always)]
    fn offset() -> usize {
        let off: usize;
        // SAFETY: reads the GOT entry the dynamic linker filled at load.
        unsafe {
            core::arch::asm!(
                "mov {off}, qword ptr [rip + xpu_asm_guard_held@GOTTPOFF]",
                off = out(reg) off,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        off
    }

    #[inline(always)]
    pub fn held() -> bool {
        let v: u32;
        // SAFETY: reads this thread's own TLS byte.
        unsafe {
            core::arch::asm!(
                "movzx {v:e}, byte ptr fs:[{off}]",
                off = in(reg) offset(),
                v = out(reg) v,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        v != 0
    }

    #[inline(always)]
    pub fn set() {
        // SAFETY: writes this thread's own TLS byte.
        unsafe {
            core::arch::asm!(
                "mov byte ptr fs:[{off}], 1",
                off = in(reg) offset(),
                options(nostack, preserves_flags),
            );
        }
    }

    #[inline(always)]
    pub fn clear() {
        // SAFETY: writes this thread's own TLS byte.
        unsafe {
            core::arch::asm!(
                "mov byte ptr fs:[{off}], 0",
                off = in(reg) offset(),
                options(nostack, preserves_flags),
            );
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod flag {
    use std::cell::Cell;
    thread_local! {
        static HELD: Cell<bool> = const { Cell::new(false) };
    }
    #[inline(always)]
    pub fn held() -> bool {
        HELD.with(|h| h.get())
    }
    #[inline(always)]
    pub fn set() {
        HELD.with(|h| h.set(true));
    }
    #[inline(always)]
    pub fn clear() {
        HELD.with(|h| h.set(false));
    }
}

/// Held while a hook records; released on drop.
pub struct Guard(());

impl Guard {
    /// The guard that an earlier [`enter`](Self::enter) took and
    /// `mem::forget` handed over; released when this one drops.
    #[inline(always)]
    pub fn taken() -> Guard {
        Guard(())
    }

    /// `None` when this thread is already inside a hook.
    #[inline(always)]
    pub fn enter() -> Option<Guard> {
        if flag::held() {
            return None;
        }
        flag::set();
        Some(Guard(()))
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        flag::clear();
    }
}

/// Runs the recording part of a hook; a panic there is swallowed, never
/// unwound into the C caller. The real call's result is returned regardless.
#[inline(always)]
pub fn no_panic<F: FnOnce()>(f: F) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_entry_is_refused_until_released_and_per_thread() {
        let g = Guard::enter().expect("free at first");
        assert!(Guard::enter().is_none());
        std::thread::spawn(|| assert!(Guard::enter().is_some()))
            .join()
            .expect("other thread");
        drop(g);
        assert!(Guard::enter().is_some());
    }
}
