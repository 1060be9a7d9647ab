//! The interposer's `dlsym`, which catches programs that find Level Zero
//! functions by name instead of linking them: runtimes that `dlopen` the
//! loader and ask it for its DDI tables (`zeGet<Object>ProcAddrTable`), or
//! for each function; and the loader itself asking the driver for its tables.
//! OpenCL's the same way: programs that `dlopen` an ICD loader and `dlsym`
//! each `cl*` function, and the loader asking the ICD for its
//! `clGetExtensionFunctionAddress`.
//!
//! `dlsym` depends on its caller: `RTLD_NEXT` means "after the calling
//! object", and glibc finds the caller from the return address. A hook that
//! forwards with an ordinary call would make every lookup look as if it came
//! from this library. So `dlsym` is a small naked function: it asks
//! [`decide`] whether the lookup is one to rewrite and, if not, restores the
//! arguments and *jumps* to the next `dlsym` of the preload chain (another
//! preloaded library's, else libc's), which then sees the original return
//! address. Only `ze*` and `cl*` names on an explicit handle or
//! `RTLD_DEFAULT` are ever rewritten; `RTLD_NEXT` lookups are always passed
//! through. A lookup it rewrites is asked of that next `dlsym` too, with the
//! program's handle: what it answers is the real function behind the hook.
//! So a library behind this one in `LD_PRELOAD` sees every lookup the
//! program makes (and can hand out its own functions), as without xpu-asm;
//! the interposer's own lookups (the queries it makes) go to libc.

use super::known;
use crate::real::{ask_next, lookup, next_dlsym, XPU_ASM_NEXT_DLSYM};
use crate::state;
use crate::ze::queries::{
    DEVICE_GET_COMPUTE_PROPERTIES, DEVICE_GET_PROPERTIES, GET_KERNEL_NAMES, GET_NATIVE_BINARY,
    KERNEL_GET_PROPERTIES,
};
use std::ffi::{c_char, c_void, CStr};

/// Decides a `dlsym(handle, name)`: `false` to pass it to libc untouched;
/// `true` with the answer in `*out`.
///
/// # Safety
/// Called only from [`dlsym`] with its arguments and a writable `out`.
unsafe extern "C" fn decide(
    handle: *mut c_void,
    name: *const c_char,
    out: *mut *mut c_void,
) -> bool {
    let mut answer: Option<*mut c_void> = None;
    crate::guard::no_panic(|| {
        if next_dlsym().is_none() {
            // Without libc's dlsym there is nothing to jump to.
            answer = Some(std::ptr::null_mut());
            return;
        }
        if name.is_null() || handle == libc::RTLD_NEXT || !state::enabled_now() {
            return;
        }
        // SAFETY: dlsym's name argument is a C string.
        let name = unsafe { CStr::from_ptr(name) };
        let bytes = name.to_bytes();
        if !bytes.starts_with(b"ze") && !bytes.starts_with(b"cl") {
            return;
        }
        let Some(k) = known(bytes) else { return };
        // The lookup as the program made it, asked of the next dlsym. On
        // RTLD_DEFAULT that finds this library's own export first; what the
        // program would have got without it is the next definition.
        let from = if handle.is_null() {
            libc::RTLD_NEXT
        } else {
            handle
        };
        let hooks = (k.addrs)();
        let mut real = ask_next(handle, name);
        if handle.is_null() && hooks.contains(&(real as usize)) {
            real = lookup(from, name);
        }
        if real.is_null() || hooks.contains(&(real as usize)) {
            answer = Some(real);
            return;
        }
        // Level Zero: the record (and IGC's dump folder) from now on. Not
        // for OpenCL: the ICD loader looks up every vendor's functions in
        // any process that asks for platforms (hwloc in mpirun does), and
        // an OpenCL program's record begins when one is built.
        if bytes.starts_with(b"ze") {
            state::activate();
        }
        answer = Some(match k.real.claim(real as usize) {
            Some(slot) => {
                if bytes == b"zeModuleCreate" {
                    let names = lookup(from, c"zeModuleGetKernelNames");
                    GET_KERNEL_NAMES.set(slot, names as usize);
                    let native = lookup(from, c"zeModuleGetNativeBinary");
                    GET_NATIVE_BINARY.set(slot, native as usize);
                    let props = lookup(from, c"zeDeviceGetProperties");
                    DEVICE_GET_PROPERTIES.set(slot, props as usize);
                    let compute = lookup(from, c"zeDeviceGetComputeProperties");
                    DEVICE_GET_COMPUTE_PROPERTIES.set(slot, compute as usize);
                }
                if bytes == b"zeKernelCreate" {
                    let props = lookup(from, c"zeKernelGetProperties");
                    KERNEL_GET_PROPERTIES.set(slot, props as usize);
                }
                hooks[slot] as *mut c_void
            }
            None => real,
        });
    });
    match answer {
        Some(p) => {
            // SAFETY: out points to the trampoline's stack slot.
            unsafe { *out = p };
            true
        }
        None => false,
    }
}

/// `dlsym`, see the module documentation. The jump's target is resolved by
/// `decide` before it answers `false`. x86-64 System V: `rdi` = handle,
/// `rsi` = name. The two are saved, `decide` gets a stack slot for its
/// answer, and the stack stays 16-byte aligned at the call.
///
/// # Safety
/// Same contract as libc's `dlsym`.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
#[unsafe(naked)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    core::arch::naked_asm!(
        "push rdi",
        "push rsi",
        "sub rsp, 24",
        "mov rdx, rsp",
        "call {decide}",
        "test al, al",
        "jnz 2f",
        "add rsp, 24",
        "pop rsi",
        "pop rdi",
        "jmp qword ptr [rip + {real}]",
        "2:",
        "mov rax, qword ptr [rsp]",
        "add rsp, 24",
        "pop rsi",
        "pop rdi",
        "ret",
        decide = sym decide,
        real = sym XPU_ASM_NEXT_DLSYM,
    )
}
