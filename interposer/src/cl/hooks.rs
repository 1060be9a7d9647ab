//! The `extern "C"` hooks of OpenCL, named exactly like the functions they
//! stand in for: the programs, kernels and enqueues of every ICD loader's
//! exported functions (the system's `libOpenCL.so.1`, a copy bundled under
//! another name as pyopencl's wheel has: the program's references to them
//! bind to these exports first), of `dlsym`, and of
//! `clGetExtensionFunctionAddress[ForPlatform]`.
//!
//! Each hook exists as `hook::<S>` for every slot `S` of
//! [`SLOTS`](crate::real::SLOTS), as the Level Zero hooks do (`ze/hooks.rs`,
//! the one `hook!` of `macros.rs`): slot 0 is the exported symbol, whose
//! real function is the next definition (a loader's export); the others are
//! handed out by name, each with the function it replaced. A loader's
//! export calls the ICD through the dispatch table inside the object, which
//! no hook is in, so an enqueue passes one hook; one that passes two (a
//! function found by name that is itself a hook's real function) is
//! recorded once, by the outermost (the reentrancy guard).

use super::ffi::*;
use super::queries;
use crate::macros::hook;
use crate::state;
use std::ffi::{c_char, c_void, CStr};

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
    let Some(b) = (unsafe { queries::built(program) }) else {
        return state::programs::program_unbuilt(program as usize);
    };
    // SAFETY: as above; the device is the program's.
    let flags = unsafe { queries::build_options(program, b.device) };
    let device = b.device;
    let query = || {
        // SAFETY: a device of a live program.
        unsafe { queries::device_info(device) }
    };
    let built = state::programs::BuiltProgram {
        handle: program as usize,
        binary: &b.binary,
        spirv: crate::common::spirv_section(&b.binary),
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

hook!(clCreateProgramWithSource => create_program_with_source(
    context: ClHandle, count: ClUint, strings: *const *const c_char, lengths: *const usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver accepted these strings.
    let text = unsafe { source_text(count, strings, lengths) };
    state::programs::program_created(program as usize, "source", &text);
});

hook!(clCreateProgramWithIL => create_program_with_il(
    context: ClHandle, il: *const c_void, length: usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver read `length` bytes from here.
    state::programs::program_created(program as usize, "il", unsafe { slice(il.cast::<u8>(), length) });
});

hook!(clCreateProgramWithILKHR => create_program_with_il_khr(
    context: ClHandle, il: *const c_void, length: usize, errcode_ret: *mut ClInt
) -> ClHandle, ok(program) !program.is_null(), missing unsafe { fail(errcode_ret) },
after {
    // SAFETY: the driver read `length` bytes from here.
    state::programs::program_created(program as usize, "il", unsafe { slice(il.cast::<u8>(), length) });
});

hook!(clCreateProgramWithBinary => create_program_with_binary(
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

hook!(clBuildProgram => build_program(
    program: ClHandle, num_devices: ClUint, device_list: *const ClHandle, options: *const c_char,
    pfn_notify: *const c_void, user_data: *mut c_void
) -> ClInt before {
    // IGC's dump folder must exist before it compiles.
    state::activate();
} after {
    // SAFETY: a program the driver built.
    unsafe { record_program(program) };
});

hook!(clSetProgramSpecializationConstant => set_program_specialization_constant(
    program: ClHandle, spec_id: ClUint, spec_size: usize, spec_value: *const c_void
) -> ClInt after {
    // SAFETY: the driver read `spec_size` bytes from here.
    let value = unsafe { slice(spec_value.cast::<u8>(), spec_size) };
    state::constants::program_constant_set(program as usize, spec_id, value);
});

hook!(clCompileProgram => compile_program(
    program: ClHandle, num_devices: ClUint, device_list: *const ClHandle, options: *const c_char,
    num_input_headers: ClUint, input_headers: *const ClHandle, header_include_names: *const *const c_char,
    pfn_notify: *const c_void, user_data: *mut c_void
) -> ClInt before {
    state::activate();
});

hook!(clLinkProgram => link_program(
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

hook!(clCreateKernel => create_kernel(
    program: ClHandle, kernel_name: *const c_char, errcode_ret: *mut ClInt
) -> ClHandle, ok(kernel) !kernel.is_null(), missing unsafe { fail(errcode_ret) },
after {
    if !kernel_name.is_null() {
        // SAFETY: the driver accepted this name and program.
        unsafe { kernel_created(program, CStr::from_ptr(kernel_name).to_bytes(), kernel) };
    }
});

hook!(clCreateKernelsInProgram => create_kernels_in_program(
    program: ClHandle, num_kernels: ClUint, kernels: *mut ClHandle, num_kernels_ret: *mut ClUint
) -> ClInt after {
    // SAFETY: on success the driver wrote the kernels (and their number).
    unsafe {
        let made = match num_kernels_ret.is_null() {
            false => *num_kernels_ret as usize,
            true => queries::kernel_count(program).unwrap_or(0),
        };
        for &k in slice(kernels, made.min(num_kernels as usize)) {
            if let Some(name) = queries::kernel_name(k) {
                kernel_created(program, &name, k);
            }
        }
    }
});

hook!(clCloneKernel => clone_kernel(
    source_kernel: ClHandle, errcode_ret: *mut ClInt
) -> ClHandle, ok(kernel) !kernel.is_null(), missing unsafe { fail(errcode_ret) },
after {
    state::programs::kernel_cloned(source_kernel as usize, kernel as usize);
});

hook!(clSetKernelArg => set_kernel_arg(
    kernel: ClHandle, index: ClUint, size: usize, value: *const c_void
) -> ClInt after {
    // A `__local` argument's size (or a NULL buffer): its shape's local
    // memory, told apart by the collector from the kernel's metadata.
    if value.is_null() {
        state::null_arg_set(kernel as usize, index, size);
    }
});

hook!(clEnqueueNDRangeKernel => enqueue_nd_range_kernel(
    queue: ClHandle, kernel: ClHandle, work_dim: ClUint, global_work_offset: *const usize,
    global_work_size: *const usize, local_work_size: *const usize, num_events: ClUint,
    event_wait_list: *const ClHandle, event: *mut ClHandle
) -> ClInt timed (crate::cl::time::hooks::enqueue_nd_range_kernel) after {
    // SAFETY: the driver accepted these sizes for work_dim dimensions.
    unsafe { state::enqueued_nd(kernel as usize, work_dim, global_work_size, local_work_size) };
});

hook!(clEnqueueTask => enqueue_task(
    queue: ClHandle, kernel: ClHandle, num_events: ClUint, event_wait_list: *const ClHandle, event: *mut ClHandle
) -> ClInt timed (crate::cl::time::hooks::enqueue_task) after {
    state::enqueued(kernel as usize, [1; 3], Some([1; 3]));
});

hook!(clEnqueueNDCountKernelINTEL => enqueue_nd_count_kernel_intel(
    queue: ClHandle, kernel: ClHandle, work_dim: ClUint, global_work_offset: *const usize,
    work_group_count: *const usize, local_work_size: *const usize, num_events: ClUint,
    event_wait_list: *const ClHandle, event: *mut ClHandle
) -> ClInt timed (crate::cl::time::hooks::enqueue_nd_count_kernel_intel) after {
    // SAFETY: the driver accepted these sizes for work_dim dimensions.
    let (count, local) = unsafe {
        (crate::shapes::sizes(work_group_count, work_dim, 1), crate::shapes::sizes(local_work_size, work_dim, 1))
    };
    state::enqueued(kernel as usize, [0, 1, 2].map(|i| count[i] * local[i]), Some(local));
});

// Functions by name: every hooked function handed out this way is the hook
// (as from `dlsym`): the extension functions a program gets only here
// (`clCreateProgramWithILKHR`, `clEnqueueNDCountKernelINTEL`), and core
// functions where an ICD hands those out too.

hook!(clGetExtensionFunctionAddress => get_extension_function_address(
    func_name: *const c_char
) -> *mut c_void, ok(f) !f.is_null(), missing std::ptr::null_mut(),
after {
    if !func_name.is_null() {
        // SAFETY: a C string, per the API.
        let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
        f = crate::real::stand_in(name, f as usize) as *mut c_void;
    }
});

hook!(clGetExtensionFunctionAddressForPlatform => get_extension_function_address_for_platform(
    platform: ClHandle, func_name: *const c_char
) -> *mut c_void, ok(f) !f.is_null(), missing std::ptr::null_mut(),
after {
    if !func_name.is_null() {
        // SAFETY: a C string, per the API.
        let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
        f = crate::real::stand_in(name, f as usize) as *mut c_void;
    }
});
