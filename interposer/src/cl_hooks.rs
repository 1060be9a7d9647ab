//! The `extern "C"` hooks of OpenCL, named exactly like the functions they
//! stand in for: the programs, kernels and enqueues of every ICD loader's
//! exported functions (the system's `libOpenCL.so.1`, a copy bundled under
//! another name as pyopencl's wheel has: the program's references to them
//! bind to these exports first), of `dlsym`, and of
//! `clGetExtensionFunctionAddress[ForPlatform]`.
//!
//! Each hook exists as `hook::<S>` for every slot `S` of [`SLOTS`], as the
//! Level Zero hooks do (`hooks.rs`): slot 0 is the exported symbol, whose
//! real function is the next definition (a loader's export); the others are
//! handed out by name, each with the function it replaced. A loader's
//! export calls the ICD through the dispatch table inside the object, which
//! no hook is in, so an enqueue passes one hook; one that passes two (a
//! function found by name that is itself a hook's real function) is
//! recorded once, by the outermost (the reentrancy guard).

use crate::cl_ffi::*;
use crate::cl_queries;
use crate::direct::load_word;
use crate::guard::{no_panic, Guard};
use crate::real::{Real, SLOTS};
use crate::state;
use std::ffi::{c_char, c_void, CStr};

macro_rules! cstr {
    ($s:expr) => {
        match CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("bad name"),
        }
    };
}

/// Defines, for one OpenCL function: a module holding its `Real` slots and
/// the generic hook, and the exported symbol (slot 0). Two forms: a
/// function answering `cl_int` (success: `CL_SUCCESS`), and one answering
/// `-> TYPE, ok(RESULT) CONDITION, missing VALUE`, whose `after` block may
/// replace `RESULT`.
macro_rules! cl_hook {
    (
        $export:ident => $module:ident ( $($arg:ident : $ty:ty),* $(,)? )
        $(before $before:block)?
        $(after $after:block)?
    ) => {
        cl_hook!(@body $export => $module ($($arg: $ty),*) -> ClInt,
            result, result == CL_SUCCESS, CL_SUCCESS, CL_INVALID_OPERATION,
            $(before $before)? $(after $after)?);
    };
    (
        $export:ident => $module:ident ( $($arg:ident : $ty:ty),* $(,)? )
        -> $ret:ty, ok($ok:ident) $is_ok:expr, missing $missing:expr,
        $(before $before:block)?
        $(after $after:block)?
    ) => {
        cl_hook!(@body $export => $module ($($arg: $ty),*) -> $ret,
            $ok, $is_ok, $ok, $missing, $(before $before)? $(after $after)?);
    };
    (
        @body $export:ident => $module:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        $ok:ident, $is_ok:expr, $success:expr, $missing:expr,
        $(before $before:block)?
        $(after $after:block)?
    ) => {
        pub mod $module {
            use super::*;
            pub type F = unsafe extern "C" fn($($ty),*) -> $ret;
            pub static REAL: Real = Real::new(cstr!(stringify!($export)));

            /// # Safety
            /// Same contract as the OpenCL function it stands in for.
            #[inline(always)]
            pub unsafe extern "C" fn hook<const S: usize>($($arg: $ty),*) -> $ret {
                let p = load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // As in hooks.rs: only the exported symbol gets here unset.
                if S == 0 && p == 0 {
                    // SAFETY: same arguments.
                    return unsafe { first_call::<S>($($arg),*) };
                }
                // SAFETY: slot S only ever holds a function of this
                // signature (found under this function's name).
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                match Guard::enter() {
                    // SAFETY: forwarding the caller's arguments unchanged.
                    None => unsafe { real($($arg),*) },
                    Some(guard) => {
                        // Handed over to `record`, which releases it.
                        std::mem::forget(guard);
                        // SAFETY: as above.
                        unsafe { record::<S>($($arg),*) }
                    }
                }
            }

            /// Slot 0 before its real function is set: as in hooks.rs.
            #[cold]
            #[inline(never)]
            #[allow(clippy::too_many_arguments)]
            unsafe extern "C" fn first_call<const S: usize>($($arg: $ty),*) -> $ret {
                if !state::enabled() {
                    let f = REAL.forward();
                    if f == 0 {
                        return $missing;
                    }
                    // SAFETY: the next definition of this function's name,
                    // of its signature; the caller's arguments unchanged.
                    return unsafe { std::mem::transmute::<usize, F>(f)($($arg),*) };
                }
                if REAL.get(S) == 0 {
                    return $missing;
                }
                // SAFETY: same arguments; the slot is now set.
                unsafe { hook::<S>($($arg),*) }
            }

            /// The outermost hook's part: the real call, then the recording.
            #[inline(never)]
            #[allow(unused_variables, unused_mut, clippy::too_many_arguments)]
            unsafe extern "C" fn record<const S: usize>($($arg: $ty),*) -> $ret {
                let guard = Guard::taken();
                let p = load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // SAFETY: `hook` checked that slot S is set.
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                $( no_panic(|| $before); )?
                // SAFETY: forwarding the caller's arguments unchanged.
                let mut $ok = unsafe { real($($arg),*) };
                if $is_ok {
                    $( no_panic(|| $after); )?
                    drop(guard);
                    return $success;
                }
                drop(guard);
                $ok
            }

            pub const ALL: [F; SLOTS] = [hook::<0>, hook::<1>, hook::<2>, hook::<3>, hook::<4>, hook::<5>];

            pub fn addrs() -> [usize; SLOTS] {
                ALL.map(|f| f as usize)
            }
        }

        /// # Safety
        /// Same contract as the OpenCL function of this name.
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $export($($arg: $ty),*) -> $ret {
            // SAFETY: the caller keeps the OpenCL contract.
            unsafe { $module::hook::<0>($($arg),*) }
        }
    };
}

/// What a creating function answers without a real function to call.
///
/// # Safety
/// `errcode_ret` is NULL or writable.
unsafe fn fail(errcode_ret: *mut ClInt) -> ClHandle {
    if !errcode_ret.is_null() {
        // SAFETY: per this function's contract.
        unsafe { *errcode_ret = CL_INVALID_OPERATION };
    }
    std::ptr::null_mut()
}

/// The bytes of `n` items at `p`, or nothing for NULL.
///
/// # Safety
/// `p` is NULL or points to `n` items.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// The text of `clCreateProgramWithSource`'s strings, joined: each of its
/// length, or up to its NUL where the length is 0 or `lengths` NULL.
///
/// # Safety
/// The arguments are those a successful `clCreateProgramWithSource` took.
unsafe fn source_text(
    count: ClUint,
    strings: *const *const c_char,
    lengths: *const usize,
) -> Vec<u8> {
    // SAFETY: per this function's contract: `count` strings (and lengths).
    let (strings, lengths) = unsafe {
        (
            slice(strings, count as usize),
            slice(lengths, count as usize),
        )
    };
    let mut text = Vec::new();
    for (i, &s) in strings.iter().enumerate().filter(|(_, s)| !s.is_null()) {
        match lengths.get(i).copied().unwrap_or(0) {
            // SAFETY: a NUL-terminated string, per the API.
            0 => text.extend_from_slice(unsafe { CStr::from_ptr(s) }.to_bytes()),
            // SAFETY: `n` readable bytes, per the API.
            n => text.extend_from_slice(unsafe { slice(s.cast::<u8>(), n) }),
        }
    }
    text
}

/// Records built program `program` as a module: its binary, the SPIR-V
/// IGC compiled (carried in it), kernel names and device; when it has no
/// binary yet (an asynchronous build), its kernels' creation records it.
///
/// # Safety
/// `program` is a live `cl_program`.
unsafe fn record_program(program: ClHandle) {
    // SAFETY: per this function's contract.
    let Some(b) = (unsafe { cl_queries::built(program) }) else {
        return state::programs::program_unbuilt(program as usize);
    };
    // SAFETY: as above; the device is the program's.
    let flags = unsafe { cl_queries::build_options(program, b.device) };
    let device = b.device;
    let query = || {
        // SAFETY: a device of a live program.
        unsafe { cl_queries::device_info(device) }
    };
    let built = state::programs::BuiltProgram {
        handle: program as usize,
        binary: &b.binary,
        spirv: cl_queries::spirv_section(&b.binary),
        build_flags: &flags,
        kernel_names: &b.kernel_names,
    };
    let device = state::modules::DeviceRef {
        handle: device as usize,
        query: &query,
    };
    state::programs::program_built(built, device);
}

/// Kernel `kernel` named `name` was created from `program` (which is
/// recorded first if its build was not seen).
///
/// # Safety
/// `program` is a live `cl_program`.
unsafe fn kernel_created(program: ClHandle, name: &[u8], kernel: ClHandle) {
    if !state::programs::program_recorded(program as usize) {
        // SAFETY: per this function's contract.
        unsafe { record_program(program) };
    }
    state::modules::kernel_created(program as usize, name, kernel as usize, None);
}

cl_hook!(clCreateProgramWithSource => create_program_with_source(
    context: ClHandle, count: ClUint, strings: *const *const c_char, lengths: *const usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver accepted these strings.
    let text = unsafe { source_text(count, strings, lengths) };
    state::programs::program_created(program as usize, "source", &text);
});

cl_hook!(clCreateProgramWithIL => create_program_with_il(
    context: ClHandle, il: *const c_void, length: usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver read `length` bytes from here.
    state::programs::program_created(program as usize, "il", unsafe { slice(il.cast::<u8>(), length) });
});

cl_hook!(clCreateProgramWithILKHR => create_program_with_il_khr(
    context: ClHandle, il: *const c_void, length: usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver read `length` bytes from here.
    state::programs::program_created(program as usize, "il", unsafe { slice(il.cast::<u8>(), length) });
});

cl_hook!(clCreateProgramWithBinary => create_program_with_binary(
    context: ClHandle, num_devices: ClUint, device_list: *const ClHandle, lengths: *const usize,
    binaries: *const *const u8, binary_status: *mut ClInt, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver read one binary of its length per device.
    let first = unsafe {
        match (slice(lengths, num_devices as usize), slice(binaries, num_devices as usize)) {
            ([n, ..], [b, ..]) => slice(*b, *n),
            _ => &[],
        }
    };
    state::programs::program_created(program as usize, "binary", first);
});

cl_hook!(clBuildProgram => build_program(
    program: ClHandle, num_devices: ClUint, device_list: *const ClHandle, options: *const c_char,
    pfn_notify: *const c_void, user_data: *mut c_void
) before {
    // IGC's dump folder must exist before it compiles.
    state::activate();
} after {
    // SAFETY: a program the driver built.
    unsafe { record_program(program) };
});

cl_hook!(clSetProgramSpecializationConstant => set_program_specialization_constant(
    program: ClHandle, spec_id: ClUint, spec_size: usize, spec_value: *const c_void
) after {
    // SAFETY: the driver read `spec_size` bytes from here.
    let value = unsafe { slice(spec_value.cast::<u8>(), spec_size) };
    state::constants::program_constant_set(program as usize, spec_id, value);
});

cl_hook!(clCompileProgram => compile_program(
    program: ClHandle, num_devices: ClUint, device_list: *const ClHandle, options: *const c_char,
    num_input_headers: ClUint, input_headers: *const ClHandle, header_include_names: *const *const c_char,
    pfn_notify: *const c_void, user_data: *mut c_void
) before {
    state::activate();
});

cl_hook!(clLinkProgram => link_program(
    context: ClHandle, num_devices: ClUint, device_list: *const ClHandle, options: *const c_char,
    num_input_programs: ClUint, input_programs: *const ClHandle, pfn_notify: *const c_void,
    user_data: *mut c_void, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
before {
    state::activate();
} after {
    // SAFETY: the driver read these input programs.
    let inputs = unsafe { slice(input_programs, num_input_programs as usize) };
    let inputs: Vec<usize> = inputs.iter().map(|p| *p as usize).collect();
    state::programs::program_linked(program as usize, &inputs);
    // SAFETY: the program the driver just linked.
    unsafe { record_program(program) };
});

cl_hook!(clCreateKernel => create_kernel(
    program: ClHandle, kernel_name: *const c_char, errcode_ret: *mut ClInt
) -> ClHandle, ok(kernel) !kernel.is_null(), missing unsafe { fail(errcode_ret) },
after {
    if !kernel_name.is_null() {
        // SAFETY: the driver accepted this name and program.
        unsafe { kernel_created(program, CStr::from_ptr(kernel_name).to_bytes(), kernel) };
    }
});

cl_hook!(clCreateKernelsInProgram => create_kernels_in_program(
    program: ClHandle, num_kernels: ClUint, kernels: *mut ClHandle, num_kernels_ret: *mut ClUint
) after {
    // SAFETY: on success the driver wrote the kernels (and their number).
    unsafe {
        let made = match num_kernels_ret.is_null() {
            false => *num_kernels_ret as usize,
            true => cl_queries::kernel_count(program).unwrap_or(0),
        };
        for &k in slice(kernels, made.min(num_kernels as usize)) {
            if let Some(name) = cl_queries::kernel_name(k) {
                kernel_created(program, &name, k);
            }
        }
    }
});

cl_hook!(clCloneKernel => clone_kernel(
    source_kernel: ClHandle, errcode_ret: *mut ClInt
) -> ClHandle, ok(kernel) !kernel.is_null(), missing unsafe { fail(errcode_ret) },
after {
    state::programs::kernel_cloned(source_kernel as usize, kernel as usize);
});

cl_hook!(clSetKernelArg => set_kernel_arg(
    kernel: ClHandle, index: ClUint, size: usize, value: *const c_void
) after {
    // A `__local` argument's size (or a NULL buffer): its shape's local
    // memory, told apart by the collector from the kernel's metadata.
    if value.is_null() {
        state::null_arg_set(kernel as usize, index, size);
    }
});

cl_hook!(clEnqueueNDRangeKernel => enqueue_nd_range_kernel(
    queue: ClHandle, kernel: ClHandle, work_dim: ClUint, global_work_offset: *const usize,
    global_work_size: *const usize, local_work_size: *const usize, num_events: ClUint,
    event_wait_list: *const ClHandle, event: *mut ClHandle
) after {
    // SAFETY: the driver accepted these sizes for work_dim dimensions.
    unsafe { state::enqueued_nd(kernel as usize, work_dim, global_work_size, local_work_size) };
});

cl_hook!(clEnqueueTask => enqueue_task(
    queue: ClHandle, kernel: ClHandle, num_events: ClUint, event_wait_list: *const ClHandle, event: *mut ClHandle
) after {
    state::enqueued(kernel as usize, [1; 3], Some([1; 3]));
});

cl_hook!(clEnqueueNDCountKernelINTEL => enqueue_nd_count_kernel_intel(
    queue: ClHandle, kernel: ClHandle, work_dim: ClUint, global_work_offset: *const usize,
    work_group_count: *const usize, local_work_size: *const usize, num_events: ClUint,
    event_wait_list: *const ClHandle, event: *mut ClHandle
) after {
    // SAFETY: the driver accepted these sizes for work_dim dimensions.
    let (count, local) = unsafe {
        (sizes(work_group_count, work_dim, 1), sizes(local_work_size, work_dim, 1))
    };
    state::enqueued(kernel as usize, [0, 1, 2].map(|i| count[i] * local[i]), Some(local));
});

/// The first `dims` (at most 3) entries of a size array, the others
/// `fill`; all `fill` for NULL.
///
/// # Safety
/// `p` is NULL or points to `dims` sizes.
unsafe fn sizes(p: *const usize, dims: ClUint, fill: usize) -> [usize; 3] {
    let mut out = [fill; 3];
    if !p.is_null() {
        for (i, o) in out.iter_mut().enumerate().take(dims.min(3) as usize) {
            // SAFETY: per this function's contract.
            *o = unsafe { *p.add(i) };
        }
    }
    out
}

// Functions by name: every hooked function handed out this way is the hook
// (as from `dlsym`): the extension functions a program gets only here
// (`clCreateProgramWithILKHR`, `clEnqueueNDCountKernelINTEL`), and core
// functions where an ICD hands those out too.

cl_hook!(clGetExtensionFunctionAddress => get_extension_function_address(
    func_name: *const c_char
) -> *mut c_void, ok(f) !f.is_null(), missing std::ptr::null_mut(),
after {
    if !func_name.is_null() {
        // SAFETY: a C string, per the API.
        let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
        f = crate::real::stand_in(name, f as usize) as *mut c_void;
    }
});

cl_hook!(clGetExtensionFunctionAddressForPlatform => get_extension_function_address_for_platform(
    platform: ClHandle, func_name: *const c_char
) -> *mut c_void, ok(f) !f.is_null(), missing std::ptr::null_mut(),
after {
    if !func_name.is_null() {
        // SAFETY: a C string, per the API.
        let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
        f = crate::real::stand_in(name, f as usize) as *mut c_void;
    }
});
