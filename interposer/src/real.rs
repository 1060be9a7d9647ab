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
    /// The next definition of the exported symbol, for a hook that only
    /// forwards (see [`forward`](Self::forward)); 0 until looked up.
    next: AtomicUsize,
}

impl Real {
    pub const fn new(name: &'static CStr) -> Self {
        Real {
            name,
            ptrs: [const { AtomicUsize::new(0) }; SLOTS],
            next: AtomicUsize::new(0),
        }
    }

    /// Where slot `slot`'s real function is in a `Real` (for
    /// `direct::load_word`).
    pub const fn slot_offset(slot: usize) -> usize {
        std::mem::offset_of!(Real, ptrs) + slot * std::mem::size_of::<AtomicUsize>()
    }

    /// The real function of `slot`, resolving slot 0 on first use.
    #[inline(always)]
    pub fn get(&self, slot: usize) -> usize {
        let p = self.ptrs[slot].load(Ordering::Acquire);
        if p != 0 || slot != 0 {
            return p;
        }
        self.resolve_export()
    }

    /// First call of the exported symbol: find the function it stands in for.
    #[cold]
    #[inline(never)]
    fn resolve_export(&self) -> usize {
        let found = self.forward();
        self.ptrs[0].store(found, Ordering::Release);
        found
    }

    /// The function the exported symbol stands in for, found as slot 0's
    /// is but without setting slot 0: for a hook that only forwards (a hook
    /// whose slot is set records, see `hooks.rs`).
    #[cold]
    #[inline(never)]
    pub fn forward(&self) -> usize {
        let p = self.next.load(Ordering::Acquire);
        if p != 0 {
            return p;
        }
        let found = next_symbol(self.name) as usize;
        self.next.store(found, Ordering::Release);
        found
    }

    /// The real function of `slot` as already resolved by [`get`](Self::get).
    #[inline(always)]
    pub fn loaded(&self, slot: usize) -> usize {
        self.ptrs[slot].load(Ordering::Acquire)
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

/// libc's `dlsym`, called directly for the lookups the interposer makes
/// itself (the lookups it does not rewrite go to the next `dlsym` of the
/// chain, [`XPU_ASM_NEXT_DLSYM`]).
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

/// The next `dlsym` in the preload chain: the definition of `dlsym` after
/// this library (another preloaded library's, or libc's own). The
/// interposer's `dlsym` jumps to it with every lookup it does not rewrite,
/// and asks it for the real function behind each lookup it does, so that a
/// library behind it in `LD_PRELOAD` sees every lookup the program makes,
/// as it would without xpu-asm. Resolved once, before the first lookup is
/// answered; libc's when there is no other.
pub static XPU_ASM_NEXT_DLSYM: AtomicUsize = AtomicUsize::new(0);

/// Resolves [`XPU_ASM_NEXT_DLSYM`] once (after libc's `dlsym`, through
/// which it is found: `dlsym(RTLD_NEXT, "dlsym")` from this library).
pub fn next_dlsym() -> Option<DlsymFn> {
    let mut p = XPU_ASM_NEXT_DLSYM.load(Ordering::Acquire);
    if p == 0 {
        let libc = real_dlsym()?;
        // SAFETY: a valid C string; RTLD_NEXT from this library.
        p = unsafe { libc(libc::RTLD_NEXT, c"dlsym".as_ptr()) } as usize;
        if p == 0 || object_base(p as *const c_void) == object_base(next_dlsym as *const c_void) {
            p = libc as usize;
        }
        XPU_ASM_NEXT_DLSYM.store(p, Ordering::Release);
    }
    // SAFETY: p is a dlsym, of this signature.
    Some(unsafe { std::mem::transmute::<usize, DlsymFn>(p) })
}

/// `dlsym(handle, name)` asked of the next `dlsym` in the chain
/// ([`next_dlsym`]): for a lookup the program made, which the libraries
/// behind this one must see. The interposer's own lookups go to libc
/// ([`lookup`]), as they would be no one's without it.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn ask_next(handle: *mut c_void, name: &CStr) -> *mut c_void {
    match next_dlsym() {
        // SAFETY: name is a valid C string; handle is what the program gave
        // dlsym.
        Some(f) => unsafe { f(handle, name.as_ptr()) },
        None => std::ptr::null_mut(),
    }
}

/// The next definition of `name` after this library (what the program would
/// have called without it).
///
/// `RTLD_NEXT` searches only the global scope. A loader that was `dlopen`ed
/// without `RTLD_GLOBAL` (directly, or as a dependency of a library that was,
/// like the SYCL runtime's Level Zero plugin loaded by Python) is not in it,
/// yet its own PLT calls and those of its dependents bind to this library's
/// exports, which the global scope searches first. Then the definition is
/// looked up in each loaded object in turn (with `RTLD_NOLOAD`, so nothing is
/// loaded), skipping this library.
pub fn next_symbol(name: &CStr) -> *mut c_void {
    let p = lookup(libc::RTLD_NEXT, name);
    if !p.is_null() {
        return p;
    }
    let own = object_base(next_symbol as *const c_void);
    for object in loaded_objects() {
        // SAFETY: a valid path of an object already loaded; RTLD_NOLOAD only
        // takes a reference to it, released below.
        let h = unsafe { libc::dlopen(object.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
        if h.is_null() {
            continue;
        }
        let q = lookup(h, name);
        // SAFETY: balances the dlopen above.
        unsafe { libc::dlclose(h) };
        if !q.is_null() && object_base(q) != own {
            return q;
        }
    }
    std::ptr::null_mut()
}

/// Load address of the object that contains `addr`, or 0.
fn object_base(addr: *const c_void) -> usize {
    // SAFETY: dladdr only reads the loader's tables; info is plain data.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr, &mut info) == 0 {
            0
        } else {
            info.dli_fbase as usize
        }
    }
}

/// Paths of the loaded objects, in load order (the main program, which has
/// no path here, excluded).
fn loaded_objects() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> i32 {
        // SAFETY: dl_iterate_phdr passes a valid info and our Vec.
        unsafe {
            let names = &mut *(data as *mut Vec<std::ffi::CString>);
            let n = (*info).dlpi_name;
            if !n.is_null() && *n != 0 {
                names.push(CStr::from_ptr(n).to_owned());
            }
        }
        0
    }
    let mut names: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback matches the expected signature and only touches `names`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut names as *mut _ as *mut c_void) };
    names
}

/// `dlsym(handle, name)` through libc, with this library as the caller.
/// `handle` is one `dlsym` accepts: a handle from `dlopen`, `RTLD_NEXT` or
/// `RTLD_DEFAULT` (libc checks it; nothing is dereferenced here).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn lookup(handle: *mut c_void, name: &CStr) -> *mut c_void {
    match real_dlsym() {
        // SAFETY: name is a valid C string; handle is what the caller gave
        // dlsym, or RTLD_NEXT.
        Some(f) => unsafe { f(handle, name.as_ptr()) },
        None => std::ptr::null_mut(),
    }
}

/// What a program that found a function by name gets instead of the real
/// one (`lookups::stand_in`, which sits above the hooks it names): handed
/// down by the crate root at load, before any Level Zero or OpenCL call
/// can be made.
pub type StandIn = fn(&[u8], usize) -> usize;

static STAND_IN: std::sync::OnceLock<StandIn> = std::sync::OnceLock::new();

/// Sets what [`stand_in`] asks (`lookups::stand_in`), once.
pub fn set_stand_in(f: StandIn) {
    let _ = STAND_IN.set(f);
}

/// What a program that found `name` by name gets instead of `real`.
pub(crate) fn stand_in(name: &[u8], real: usize) -> usize {
    match STAND_IN.get() {
        Some(f) => f(name, real),
        None => real,
    }
}
