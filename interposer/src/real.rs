//! Finding the real functions behind each hook.
//!
//! A hooked function can have several "real" implementations in one process:
//! the loader's exported symbol, the loader's table entry, the driver's table
//! entry. Each hook therefore exists in [`SLOTS`] copies (a const generic),
//! each with its own real pointer: slot 0 belongs to the exported symbol and is
//! resolved with `dlsym(RTLD_NEXT)`; slots 1.. are claimed by table entries
//! and `dlsym` results as they are met. Resolving happens once per slot.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Copies of each hook: the exported symbol plus distinct real pointers.
pub const SLOTS: usize = 6;

/// The real pointers of one hooked function, one per slot.
pub struct Real {
    pub name: &'static CStr,
    ptrs: [AtomicUsize; SLOTS],
}

impl Real {
    pub const fn new(name: &'static CStr) -> Self {
        Real {
            name,
            ptrs: [const { AtomicUsize::new(0) }; SLOTS],
        }
    }

    /// The real function of `slot`, resolving slot 0 on first use.
    #[inline(always)]
    pub fn get(&self, slot: usize) -> usize {
        let p = self.ptrs[slot].load(Ordering::Acquire);
        if p != 0 || slot != 0 {
            return p;
        }
        let found = next_symbol(self.name) as usize;
        self.ptrs[0].store(found, Ordering::Release);
        found
    }

    /// Sets slot `slot` to `real` unless it already holds a function.
    pub fn set(&self, slot: usize, real: usize) {
        let _ = self.ptrs[slot].compare_exchange(0, real, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The slot whose real function is `real`, claiming a free one if needed;
    /// `None` when all slots hold other functions.
    pub fn claim(&self, real: usize) -> Option<usize> {
        for (i, p) in self.ptrs.iter().enumerate().skip(1) {
            match p.compare_exchange(0, real, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(i),
                Err(cur) if cur == real => return Some(i),
                Err(_) => {}
            }
        }
        None
    }
}

/// libc's `dlsym`, called by the interposer's own `dlsym` for every lookup it
/// does not rewrite (by a tail jump, so that libc still sees the program's
/// return address) and directly for the lookups the interposer makes itself.
pub static XPU_ASM_REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// Resolves libc's `dlsym` once. `dlvsym` is not interposed, so this finds
/// libc's own function whatever else is preloaded.
pub fn real_dlsym() -> Option<DlsymFn> {
    let mut p = XPU_ASM_REAL_DLSYM.load(Ordering::Acquire);
    if p == 0 {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: both strings are valid C strings; RTLD_NEXT from this
            // library finds the next definition, libc's.
            p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) }
                as usize;
            if p != 0 {
                break;
            }
        }
        XPU_ASM_REAL_DLSYM.store(p, Ordering::Release);
    }
    if p == 0 {
        None
    } else {
        // SAFETY: p is libc's dlsym, of this signature.
        Some(unsafe { std::mem::transmute::<usize, DlsymFn>(p) })
    }
}

/// The next definition of `name` after this library (what the program would
/// have called without it).
pub fn next_symbol(name: &CStr) -> *mut c_void {
    lookup(libc::RTLD_NEXT, name)
}

/// `dlsym(handle, name)` through libc, with this library as the caller.
pub fn lookup(handle: *mut c_void, name: &CStr) -> *mut c_void {
    match real_dlsym() {
        // SAFETY: name is a valid C string; handle is what the caller gave
        // dlsym, or RTLD_NEXT.
        Some(f) => unsafe { f(handle, name.as_ptr()) },
        None => std::ptr::null_mut(),
    }
}
