//! The thread-local reentrancy guard and the panic barrier.
//!
//! A launch can pass through several hooks on its way down (the loader's
//! exported function, whose table entry is the driver's function, both
//! hooked). The outermost hook takes the guard and records; the inner ones
//! find it held and only forward. So every call is recorded exactly once,
//! whatever path the program took.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// Held while a hook records; released on drop.
pub struct Guard(());

impl Guard {
    /// `None` when this thread is already inside a hook.
    #[inline(always)]
    pub fn enter() -> Option<Guard> {
        HELD.with(|h| {
            if h.get() {
                None
            } else {
                h.set(true);
                Some(Guard(()))
            }
        })
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        HELD.with(|h| h.set(false));
    }
}

/// Runs the recording part of a hook; a panic there is swallowed, never
/// unwound into the C caller. The real call's result is returned regardless.
#[inline(always)]
pub fn no_panic<F: FnOnce()>(f: F) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}
