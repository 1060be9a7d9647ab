//! The `extern "C"` hooks, named exactly like the Level Zero functions they
//! stand in for.
//!
//! Each hook exists as `hook::<S>` for every slot `S` of [`SLOTS`]: slot 0 is
//! the exported symbol (the program calls the loader through its PLT), the
//! others are installed into DDI tables and returned from `dlsym` (see
//! `tables.rs` and `dlsym.rs`), each with the real function it replaced.
//! Order inside a hook: the reentrancy guard (held: just forward), the real
//! call, the recording, the real result returned unchanged. A hook records
//! whenever its slot is set (see `hook` below): recording is on then.

use crate::direct::load_word;
use crate::ffi::*;
use crate::guard::{no_panic, Guard};
use crate::queries::capture_graph;
use crate::real::{stand_in, Real, SLOTS};
use crate::state::{self, modules::ModuleInput};
use std::ffi::{c_char, c_void, CStr};

macro_rules! cstr {
    ($s:expr) => {
        match CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("bad name"),
        }
    };
}

/// Defines, for one Level Zero function: a module holding its `Real` slots
/// and the generic hook, and the exported symbol (slot 0).
macro_rules! hook {
    (
        $export:ident => $module:ident ( $($arg:ident : $ty:ty),* $(,)? )
        $(before $before:block)?
        $(after $after:block)?
        $(failed ($failed_result:ident) $failed:block)?
    ) => {
        pub mod $module {
            use super::*;
            pub type F = unsafe extern "C" fn($($ty),*) -> ZeResult;
            pub static REAL: Real = Real::new(cstr!(stringify!($export)));

            /// # Safety
            /// Same contract as the Level Zero function it stands in for.
            #[inline(always)]
            pub unsafe extern "C" fn hook<const S: usize>($($arg: $ty),*) -> ZeResult {
                let p = load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // A hook whose slot is set records: slot 0 is set once
                // recording is known to be on (`first_call`), the others
                // are handed out only then (tables, `dlsym`, functions by
                // name). So only the exported symbol gets here unset.
                if S == 0 && p == 0 {
                    // SAFETY: same arguments.
                    return unsafe { first_call::<S>($($arg),*) };
                }
                // SAFETY: slot S only ever holds a function of this signature
                // (found under this function's name or in its table entry).
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                // Inner hooks (guard held) only forward: kept free of
                // anything that would stop the compiler from making this a
                // plain jump to the real function.
                match Guard::enter() {
                    // SAFETY: forwarding the caller's arguments unchanged.
                    None => unsafe { real($($arg),*) },
                    Some(guard) => {
                        // Handed over to `record`, which releases it.
                        std::mem::forget(guard);
                        // SAFETY: as above; the arguments stay in their registers.
                        unsafe { record::<S>($($arg),*) }
                    }
                }
            }

            /// Slot 0 (the exported symbol) before its real function is
            /// set: with recording on, set it and go on as usual; else
            /// (off, or not known yet: a call from another library's
            /// constructor, before this one's read the configuration) only
            /// forward, leaving the slot unset.
            ///
            /// `extern "C"` like the hook, so that the hook's call is a tail
            /// jump (no frame of its own; also for `record`).
            #[cold]
            #[inline(never)]
            #[allow(clippy::too_many_arguments)]
            unsafe extern "C" fn first_call<const S: usize>($($arg: $ty),*) -> ZeResult {
                if !state::enabled() {
                    let f = REAL.forward();
                    if f == 0 {
                        return ZE_RESULT_ERROR_UNINITIALIZED;
                    }
                    // SAFETY: the next definition of this function's name,
                    // of its signature; the caller's arguments unchanged.
                    return unsafe { std::mem::transmute::<usize, F>(f)($($arg),*) };
                }
                if REAL.get(S) == 0 {
                    return ZE_RESULT_ERROR_UNINITIALIZED;
                }
                // SAFETY: same arguments; the slot is now set.
                unsafe { hook::<S>($($arg),*) }
            }

            /// The outermost hook's part: the real call, then the recording.
            /// Called with the guard taken by `hook`.
            #[inline(never)]
            #[allow(unused_variables, clippy::too_many_arguments)]
            unsafe extern "C" fn record<const S: usize>($($arg: $ty),*) -> ZeResult {
                let guard = Guard::taken();
                let p = load_word!(REAL, Real::slot_offset(S), REAL.loaded(S));
                // SAFETY: `hook` checked that slot S is set, with a function
                // of this signature.
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                $( no_panic(|| $before); )?
                // SAFETY: forwarding the caller's arguments unchanged.
                let result = unsafe { real($($arg),*) };
                if result == ZE_RESULT_SUCCESS {
                    $( no_panic(|| $after); )?
                    drop(guard);
                    // A constant: the result needs no register of its own
                    // across the recording.
                    return ZE_RESULT_SUCCESS;
                }
                $(
                    let $failed_result = result;
                    no_panic(|| $failed);
                )?
                drop(guard);
                result
            }

            pub const ALL: [F; SLOTS] = [hook::<0>, hook::<1>, hook::<2>, hook::<3>, hook::<4>, hook::<5>];

            pub fn addrs() -> [usize; SLOTS] {
                ALL.map(|f| f as usize)
            }
        }

        /// # Safety
        /// Same contract as the Level Zero function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $export($($arg: $ty),*) -> ZeResult {
            // SAFETY: the caller keeps the Level Zero contract.
            unsafe { $module::hook::<0>($($arg),*) }
        }
    };
}

/// Real `zeModuleGetKernelNames` of each `zeModuleCreate` slot (not hooked:
/// the interposer calls it to list a new module's kernels).
pub static GET_KERNEL_NAMES: Real = Real::new(c"zeModuleGetKernelNames");
/// Real `zeModuleGetNativeBinary` of each `zeModuleCreate` slot (not hooked:
/// the interposer calls it once per module, to keep the driver's binary of
/// what it compiled, or of what it rebuilt from a native module).
pub static GET_NATIVE_BINARY: Real = Real::new(c"zeModuleGetNativeBinary");
/// Real `zeDeviceGetProperties` (not hooked: asked once per device that a
/// module is built for). Slots other than 0 hold the implementations found
/// beside `zeModuleCreate` through `dlsym` or in device tables; slot 0, the
/// next definition of the exported symbol, answers only once the program
/// called the exported `zeInit`.
pub static DEVICE_GET_PROPERTIES: Real = Real::new(c"zeDeviceGetProperties");
/// Real `zeDeviceGetComputeProperties` (not hooked: asked with
/// [`DEVICE_GET_PROPERTIES`], found beside it).
pub static DEVICE_GET_COMPUTE_PROPERTIES: Real = Real::new(c"zeDeviceGetComputeProperties");
/// Real `zeKernelGetProperties` of each `zeKernelCreate` slot (not hooked:
/// asked once per kernel created, for its static local memory).
pub static KERNEL_GET_PROPERTIES: Real = Real::new(c"zeKernelGetProperties");

/// A kernel's static local memory per group (`localMemSize`), or `None`
/// when the driver cannot be asked.
///
/// # Safety
/// `f` is a real `zeKernelGetProperties` or 0; `kernel` a live kernel.
unsafe fn kernel_slm(f: usize, kernel: Handle) -> Option<u32> {
    type GetProps = unsafe extern "C" fn(Handle, *mut KernelProperties) -> ZeResult;
    if f == 0 {
        return None;
    }
    // SAFETY: per this function's contract.
    let f: GetProps = unsafe { std::mem::transmute::<usize, GetProps>(f) };
    // SAFETY: plain data; all-zero is a valid value of every field.
    let mut props: KernelProperties = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    // SAFETY: a valid properties structure for the driver to fill.
    (unsafe { f(kernel, &mut props) } == ZE_RESULT_SUCCESS).then_some(props.local_mem_size)
}

/// Reads a C string, or `None` for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// The real functions a module's recording calls, from the same slot as the
/// `zeModuleCreate` that made it (0 when unknown).
struct ModuleFns {
    names: usize,
    native_binary: usize,
    device_properties: usize,
}

/// Records a module created from `desc` for `device`.
///
/// # Safety
/// `desc` is the descriptor the program passed to a successful
/// `zeModuleCreate` for `device`; `fns` holds real functions or 0.
unsafe fn record_module(desc: *const ModuleDesc, module: Handle, device: Handle, fns: ModuleFns) {
    if desc.is_null() {
        return;
    }
    // SAFETY: the driver accepted this descriptor, so it is readable.
    let d = unsafe { &*desc };
    // SAFETY: as above, with everything it points to.
    let inputs = unsafe { module_inputs(d) };
    let names = if fns.names != 0 {
        // SAFETY: a real zeModuleGetKernelNames.
        unsafe { kernel_names(fns.names, module) }
    } else {
        Vec::new()
    };
    // SAFETY: a real zeModuleGetNativeBinary (or 0) and a live module.
    let built = unsafe { built_binary(d.format, &inputs, fns.native_binary, module) };
    // SAFETY: as above.
    let rebuilt = unsafe { rebuilt_binary(d.format, &inputs, fns.native_binary, module) };
    let device_info = || {
        // SAFETY: a real zeDeviceGetProperties (or 0) and the device the
        // driver just built a module for.
        unsafe { device_properties(fns.device_properties, device) }
    };
    let module = state::modules::CreatedModule {
        handle: module as usize,
        format: d.format,
        inputs: &inputs,
        kernel_names: &names,
        api: state::modules::Api::LevelZero,
    };
    if let ([input], ZE_MODULE_FORMAT_IL_SPIRV) = (&inputs[..], d.format) {
        let carried =
            matches!(&built, Some(Ok(b)) if crate::cl_queries::spirv_section(b).is_some());
        if !carried {
            state::modules::keep_spirv(input.bytes);
        }
    } else if inputs.len() > 1 {
        // Its binary carries the inputs linked, not each: `port` builds it
        // again from each.
        for input in &inputs {
            state::modules::keep_input_spirv(input.bytes);
        }
    }
    state::modules::module_built(
        module,
        module_binary(&inputs, &built),
        rebuilt
            .as_ref()
            .map(|r| r.as_deref().map_err(String::clone)),
        state::modules::DeviceRef {
            handle: device as usize,
            query: &device_info,
        },
    );
}

/// The inputs a module was built from: those of the program extension in
/// the descriptor's `pNext` chain (several SPIR-V inputs), or else its one
/// input.
///
/// # Safety
/// `d` is a descriptor the driver accepted: its chain and inputs readable.
unsafe fn module_inputs(d: &ModuleDesc) -> Vec<ModuleInput<'_>> {
    let mut inputs = Vec::new();
    let mut next = d.p_next as *const BaseDesc;
    while !next.is_null() {
        // SAFETY: a pNext chain of Level Zero structures, each readable.
        let b = unsafe { &*next };
        if b.stype == ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC {
            // SAFETY: the stype says which structure this is.
            let p = unsafe { &*(next as *const ModuleProgramExpDesc) };
            // SAFETY: the driver accepted it, with its arrays.
            unsafe { push_program_inputs(p, &mut inputs) };
        }
        next = b.p_next as *const BaseDesc;
    }
    if inputs.is_empty() && !d.p_input_module.is_null() {
        // SAFETY: the driver read inputSize bytes from here.
        let bytes = unsafe { std::slice::from_raw_parts(d.p_input_module, d.input_size) };
        inputs.push(ModuleInput {
            bytes,
            // SAFETY: NULL or a C string, per the API.
            build_flags: unsafe { c_bytes(d.p_build_flags) }.unwrap_or(b""),
            // SAFETY: NULL or constants the driver accepted.
            spec_constants: unsafe { state::constants::from_ze(d.p_constants.cast(), bytes) },
        });
    }
    inputs
}

/// Appends the inputs of a program extension (`ze_module_program_exp_desc_t`)
/// to `inputs`, skipping NULL ones.
///
/// # Safety
/// `p`'s arrays have `count` entries each (build flags: or are NULL), each
/// input readable for its size, each flag NULL or a C string.
unsafe fn push_program_inputs<'a>(p: &ModuleProgramExpDesc, inputs: &mut Vec<ModuleInput<'a>>) {
    for i in 0..p.count as usize {
        // SAFETY: arrays of `count` entries, per the extension.
        unsafe {
            let size = *p.input_sizes.add(i);
            let data = *p.p_input_modules.add(i);
            let flags = if p.p_build_flags.is_null() {
                std::ptr::null()
            } else {
                *p.p_build_flags.add(i)
            };
            let constants = if p.p_constants.is_null() {
                std::ptr::null()
            } else {
                *p.p_constants
                    .cast::<*const state::constants::ZeModuleConstants>()
                    .add(i)
            };
            if !data.is_null() {
                let bytes = std::slice::from_raw_parts(data, size);
                inputs.push(ModuleInput {
                    bytes,
                    build_flags: c_bytes(flags).unwrap_or(b""),
                    spec_constants: state::constants::from_ze(constants, bytes),
                });
            }
        }
    }
}

/// What the driver built from a SPIR-V module (`f`, a real
/// `zeModuleGetNativeBinary`, asked), or why there is nothing; `None` for a
/// native module or one without inputs, whose binary is not built.
///
/// # Safety
/// `f` is 0 or a real `zeModuleGetNativeBinary`, `module` a live module.
unsafe fn built_binary(
    format: u32,
    inputs: &[ModuleInput],
    f: usize,
    module: Handle,
) -> Option<Result<Vec<u8>, String>> {
    if format == ZE_MODULE_FORMAT_NATIVE || inputs.is_empty() {
        None
    } else if f != 0 {
        // SAFETY: per this function's contract.
        Some(unsafe { native_binary(f, module) })
    } else {
        Some(Err("zeModuleGetNativeBinary was not found".to_string()))
    }
}

/// What the driver holds for a native module when it is not the bytes the
/// program passed: NEO compiles the SPIR-V that a binary for another device
/// carries, and runs that build. `None` for a SPIR-V module, and for a
/// native one the driver runs as passed (a byte compare, no hash: the
/// common case costs one copy of the binary).
///
/// # Safety
/// `f` is 0 or a real `zeModuleGetNativeBinary`, `module` a live module.
unsafe fn rebuilt_binary(
    format: u32,
    inputs: &[ModuleInput],
    f: usize,
    module: Handle,
) -> Option<Result<Vec<u8>, String>> {
    let passed = inputs.first()?.bytes;
    if format != ZE_MODULE_FORMAT_NATIVE || f == 0 {
        return None;
    }
    // SAFETY: per this function's contract.
    match unsafe { native_binary(f, module) } {
        Ok(b) if b.as_slice() == passed => None,
        other => Some(other),
    }
}

/// A module's binary: what the program passed for a native module (its
/// first input), what the driver built for a SPIR-V one.
fn module_binary<'a>(
    inputs: &[ModuleInput<'a>],
    built: &'a Option<Result<Vec<u8>, String>>,
) -> Result<&'a [u8], String> {
    match built {
        None => inputs
            .first()
            .map(|i| Ok(i.bytes))
            .unwrap_or_else(|| Err("the module has no input".to_string())),
        Some(Ok(b)) => Ok(b.as_slice()),
        Some(Err(e)) => Err(e.clone()),
    }
}

/// The driver's binary of a built module (`zeModuleGetNativeBinary`).
///
/// # Safety
/// `f` is a real `zeModuleGetNativeBinary`, `module` a live module.
unsafe fn native_binary(f: usize, module: Handle) -> Result<Vec<u8>, String> {
    type GetBinary = unsafe extern "C" fn(Handle, *mut usize, *mut u8) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetBinary = unsafe { std::mem::transmute::<usize, GetBinary>(f) };
    let mut size = 0usize;
    // SAFETY: the two-call pattern of the API: first the size.
    let r = unsafe { f(module, &mut size, std::ptr::null_mut()) };
    if r != ZE_RESULT_SUCCESS {
        return Err(format!("zeModuleGetNativeBinary failed (0x{r:x})"));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: buf has room for `size` bytes.
    let r = unsafe { f(module, &mut size, buf.as_mut_ptr()) };
    if r != ZE_RESULT_SUCCESS {
        return Err(format!("zeModuleGetNativeBinary failed (0x{r:x})"));
    }
    buf.truncate(size);
    Ok(buf)
}

/// What the driver says about `device`: PCI device id, name, IP version.
///
/// # Safety
/// `f` is 0 or a real `zeDeviceGetProperties`; `device` a live device.
unsafe fn device_properties(f: usize, device: Handle) -> Option<state::modules::DeviceInfo> {
    if device.is_null() {
        return None;
    }
    // The module's own slot first, then the others, then the export.
    let mut tried = Vec::with_capacity(SLOTS + 1);
    let slots = std::iter::once(f).chain((1..SLOTS).map(|s| DEVICE_GET_PROPERTIES.loaded(s)));
    for g in slots.chain(std::iter::once_with(|| DEVICE_GET_PROPERTIES.get(0))) {
        if g == 0 || tried.contains(&g) {
            continue;
        }
        tried.push(g);
        // SAFETY: a real zeDeviceGetProperties; the device is live.
        if let Some(mut info) = unsafe { device_properties_with(g, device) } {
            if let Some(c) = info.compute.as_mut() {
                // SAFETY: the device is live.
                if let Some((group, slm)) = unsafe { device_compute(device) } {
                    c.max_group_size = group;
                    c.max_slm_bytes = slm;
                }
            }
            return Some(info);
        }
    }
    None
}

/// `zeDeviceGetComputeProperties` of `device`: the largest group and the
/// most local memory a group can have.
///
/// # Safety
/// `device` is a live device.
unsafe fn device_compute(device: Handle) -> Option<(u32, u32)> {
    type GetCompute = unsafe extern "C" fn(Handle, *mut DeviceComputeProperties) -> ZeResult;
    let slots = (1..SLOTS).map(|s| DEVICE_GET_COMPUTE_PROPERTIES.loaded(s));
    let mut tried = Vec::with_capacity(SLOTS);
    for g in slots.chain(std::iter::once_with(|| {
        DEVICE_GET_COMPUTE_PROPERTIES.get(0)
    })) {
        if g == 0 || tried.contains(&g) {
            continue;
        }
        tried.push(g);
        // SAFETY: a real zeDeviceGetComputeProperties.
        let f: GetCompute = unsafe { std::mem::transmute::<usize, GetCompute>(g) };
        // SAFETY: plain data; all-zero is a valid value of every field.
        let mut p: DeviceComputeProperties = unsafe { std::mem::zeroed() };
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
        // SAFETY: a valid properties structure for the driver to fill.
        if unsafe { f(device, &mut p) } == ZE_RESULT_SUCCESS {
            return Some((p.max_total_group_size, p.max_shared_local_memory));
        }
    }
    None
}

/// [`device_properties`] through one implementation `f` (not 0).
///
/// # Safety
/// As [`device_properties`].
unsafe fn device_properties_with(f: usize, device: Handle) -> Option<state::modules::DeviceInfo> {
    type GetProps = unsafe extern "C" fn(Handle, *mut DeviceProperties) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetProps = unsafe { std::mem::transmute::<usize, GetProps>(f) };
    let mut ip = DeviceIpVersionExt {
        stype: ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT,
        p_next: std::ptr::null(),
        ip_version: 0,
    };
    // SAFETY: plain data; all-zero is a valid value of every field.
    let mut props: DeviceProperties = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    props.p_next = (&mut ip as *mut DeviceIpVersionExt).cast();
    // SAFETY: a valid, chained properties structure for the driver to fill.
    let mut r = unsafe { f(device, &mut props) };
    if r != ZE_RESULT_SUCCESS {
        // A driver that refuses the unknown extension: ask without it.
        props.p_next = std::ptr::null_mut();
        ip.ip_version = 0;
        // SAFETY: as above, without the chain.
        r = unsafe { f(device, &mut props) };
    }
    if r != ZE_RESULT_SUCCESS {
        return None;
    }
    let end = props
        .name
        .iter()
        .position(|b| *b == 0)
        .unwrap_or(props.name.len());
    Some(state::modules::DeviceInfo {
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        name: props.name[..end].to_vec(),
        ip_version: (ip.ip_version != 0).then_some(ip.ip_version),
        compute: Some(state::modules::DeviceCompute {
            slices: props.num_slices,
            subslices_per_slice: props.num_subslices_per_slice,
            eus_per_subslice: props.num_eus_per_subslice,
            threads_per_eu: props.num_threads_per_eu,
            eu_simd_width: props.physical_eu_simd_width,
            max_group_size: 0,
            max_slm_bytes: 0,
        }),
    })
}

/// # Safety
/// `f` is a real `zeModuleGetKernelNames`, `module` a live module.
unsafe fn kernel_names(f: usize, module: Handle) -> Vec<Vec<u8>> {
    type GetNames = unsafe extern "C" fn(Handle, *mut u32, *mut *const c_char) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetNames = unsafe { std::mem::transmute::<usize, GetNames>(f) };
    let mut count = 0u32;
    // SAFETY: the two-call pattern of the API.
    if unsafe { f(module, &mut count, std::ptr::null_mut()) } != ZE_RESULT_SUCCESS {
        return Vec::new();
    }
    let mut ptrs = vec![std::ptr::null::<c_char>(); count as usize];
    // SAFETY: ptrs has room for count names.
    if unsafe { f(module, &mut count, ptrs.as_mut_ptr()) } != ZE_RESULT_SUCCESS {
        return Vec::new();
    }
    ptrs.iter()
        .take(count as usize)
        // SAFETY: names owned by the module, valid while it lives.
        .filter_map(|p| unsafe { c_bytes(*p) }.map(<[u8]>::to_vec))
        .collect()
}

/// Handles of an array argument, or nothing for NULL.
///
/// # Safety
/// `p` is NULL or points to `n` handles.
unsafe fn handles<'a>(p: *const Handle, n: u32) -> &'a [Handle] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

hook!(zeModuleCreate => module_create(
    context: Handle, device: Handle, desc: *const ModuleDesc, ph_module: *mut Handle, ph_build_log: *mut Handle
) before {
    state::modules::module_build_begins();
} after {
    // SAFETY: on success the driver wrote the new handle; desc was accepted.
    unsafe {
        let fns = ModuleFns {
            names: GET_KERNEL_NAMES.get(S),
            native_binary: GET_NATIVE_BINARY.get(S),
            device_properties: DEVICE_GET_PROPERTIES.loaded(S),
        };
        record_module(desc, *ph_module, device, fns);
    }
});

hook!(zeKernelCreate => kernel_create(module: Handle, desc: *const KernelDesc, ph_kernel: *mut Handle) after {
    // SAFETY: on success desc was accepted and the handle written.
    unsafe {
        if let Some(name) = c_bytes((*desc).p_kernel_name) {
            let slm = kernel_slm(KERNEL_GET_PROPERTIES.get(S), *ph_kernel);
            state::modules::kernel_created(module as usize, name, *ph_kernel as usize, slm);
        }
    }
});

hook!(zeKernelSetGroupSize => kernel_set_group_size(kernel: Handle, x: u32, y: u32, z: u32) after {
    if let Some(h) = state::kernel_handle(kernel as usize) {
        h.set_group_size(x, y, z);
    }
});

hook!(zeKernelSetArgumentValue => kernel_set_argument_value(
    kernel: Handle, index: u32, size: usize, value: *const c_void
) after {
    // Only arguments set without a value (local memory, null pointers)
    // make a shape: a pointer argument set with a value later stays in
    // the shape's NULL arguments, and the collector, which tells local
    // memory arguments from pointers by the kernel's metadata, counts
    // only the former.
    if value.is_null() {
        state::null_arg_set(kernel as usize, index, size);
    }
});

hook!(zeKernelDestroy => kernel_destroy(kernel: Handle) before {
    state::modules::kernel_destroyed(kernel as usize);
});

hook!(zeCommandListCreate => command_list_create(
    context: Handle, device: Handle, desc: *const c_void, ph_list: *mut Handle
) after {
    // SAFETY: on success the driver wrote the handle.
    state::list_created(unsafe { *ph_list } as usize, false);
});

hook!(zeCommandListCreateImmediate => command_list_create_immediate(
    context: Handle, device: Handle, desc: *const c_void, ph_list: *mut Handle
) after {
    // SAFETY: on success the driver wrote the handle.
    state::list_created(unsafe { *ph_list } as usize, true);
});

hook!(zeCommandListDestroy => command_list_destroy(list: Handle) before {
    state::list_destroyed(list as usize);
});

hook!(zeCommandListReset => command_list_reset(list: Handle) after {
    state::list_reset(list as usize);
});

hook!(zeCommandListAppendLaunchKernel => append_launch_kernel(
    list: Handle, kernel: Handle, args: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, args) };
});

hook!(zeCommandListAppendLaunchCooperativeKernel => append_launch_cooperative_kernel(
    list: Handle, kernel: Handle, args: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, args) };
});

hook!(zeCommandListAppendLaunchKernelIndirect => append_launch_kernel_indirect(
    list: Handle, kernel: Handle, args_buffer: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // The group count is in device memory.
    state::launch_indirect(list as usize, kernel as usize);
});

hook!(zeCommandListAppendLaunchMultipleKernelsIndirect => append_launch_multiple_kernels_indirect(
    list: Handle, n_kernels: u32, kernels: *mut Handle, count_buffer: *const u32,
    args_buffer: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // The number actually launched is in device memory (count_buffer), out of
    // reach; each kernel of the array counts once, as the upper bound.
    // SAFETY: the driver accepted n_kernels handles here.
    for k in unsafe { handles(kernels, n_kernels) } {
        state::launch_indirect(list as usize, *k as usize);
    }
});

hook!(zeCommandListAppendLaunchKernelWithParameters => append_launch_kernel_with_parameters(
    list: Handle, kernel: Handle, group_counts: *const GroupCount, p_next: *const c_void,
    signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, group_counts) };
});

hook!(zeCommandListAppendLaunchKernelWithArguments => append_launch_kernel_with_arguments(
    list: Handle, kernel: Handle, group_counts: GroupCount, group_sizes: GroupSize,
    arguments: *mut *mut c_void, p_next: *const c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // As if zeKernelSetGroupSize had been called (the specification's words).
    if let Some(h) = state::kernel_handle(kernel as usize) {
        h.set_group_size(group_sizes.x, group_sizes.y, group_sizes.z);
    }
    // SAFETY: a group count of this frame.
    unsafe { state::launch(list as usize, kernel as usize, &group_counts) };
});

hook!(zeCommandQueueExecuteCommandLists => command_queue_execute_command_lists(
    queue: Handle, n_lists: u32, lists: *mut Handle, fence: Handle
) after {
    // SAFETY: the driver accepted n_lists handles here.
    let lists = unsafe { handles(lists, n_lists) };
    state::execute_handles(lists);
});

hook!(zeCommandListImmediateAppendCommandListsExp => command_list_immediate_append_command_lists_exp(
    immediate: Handle, n_lists: u32, lists: *mut Handle, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // SAFETY: the driver accepted n_lists handles here.
    let lists = unsafe { handles(lists, n_lists) };
    state::immediate_append(immediate as usize, lists);
});

hook!(zeCommandListImmediateAppendCommandListsWithParameters => command_list_immediate_append_command_lists_with_parameters(
    immediate: Handle, n_lists: u32, lists: *mut Handle, p_next: *const c_void,
    signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    // SAFETY: the driver accepted n_lists handles here.
    let lists = unsafe { handles(lists, n_lists) };
    state::immediate_append(immediate as usize, lists);
});

// Graphs (`ZE_extension_record_replay_graph`: the exported and table
// functions, named ...Ext) and their experimental forms (...Exp, from
// zeDriverGetExtensionFunctionAddress), some of them with their arguments
// in another order.

hook!(zeGraphCreateExt => graph_create_ext(
    context: Handle, p_next: *const c_void, ph_graph: *mut Handle
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_created(unsafe { *ph_graph } as usize);
});

hook!(zeGraphCreateExp => graph_create_exp(
    context: Handle, ph_graph: *mut Handle, p_next: *mut c_void
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_created(unsafe { *ph_graph } as usize);
});

hook!(zeCommandListBeginGraphCaptureExt => begin_graph_capture_ext(
    list: Handle, p_next: *const c_void
) after {
    state::graphs::capture_began(list as usize, capture_graph(list as usize).flatten());
});

hook!(zeCommandListBeginGraphCaptureExp => begin_graph_capture_exp(
    list: Handle, p_next: *mut c_void
) after {
    state::graphs::capture_began(list as usize, capture_graph(list as usize).flatten());
});

hook!(zeCommandListBeginCaptureIntoGraphExt => begin_capture_into_graph_ext(
    list: Handle, graph: Handle, p_next: *const c_void
) after {
    state::graphs::capture_began(list as usize, Some(graph as usize));
});

hook!(zeCommandListBeginCaptureIntoGraphExp => begin_capture_into_graph_exp(
    list: Handle, graph: Handle, p_next: *mut c_void
) after {
    state::graphs::capture_began(list as usize, Some(graph as usize));
});

hook!(zeCommandListEndGraphCaptureExt => end_graph_capture_ext(
    list: Handle, p_next: *const c_void, ph_graph: *mut Handle
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::capture_ended(list as usize, unsafe { *ph_graph } as usize);
});

hook!(zeCommandListEndGraphCaptureExp => end_graph_capture_exp(
    list: Handle, ph_graph: *mut Handle, p_next: *mut c_void
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::capture_ended(list as usize, unsafe { *ph_graph } as usize);
});

hook!(zeGraphInstantiateExt => graph_instantiate_ext(
    graph: Handle, p_next: *const c_void, ph_executable: *mut Handle
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_instantiated(graph as usize, unsafe { *ph_executable } as usize);
});

hook!(zeCommandListInstantiateGraphExp => command_list_instantiate_graph_exp(
    graph: Handle, ph_executable: *mut Handle, p_next: *mut c_void
) after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_instantiated(graph as usize, unsafe { *ph_executable } as usize);
});

hook!(zeCommandListAppendGraphExt => append_graph_ext(
    list: Handle, executable: Handle, p_next: *const c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    state::graphs::graph_appended(list as usize, executable as usize);
});

hook!(zeCommandListAppendGraphExp => append_graph_exp(
    list: Handle, executable: Handle, p_next: *mut c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) after {
    state::graphs::graph_appended(list as usize, executable as usize);
});

hook!(zeGraphDestroyExt => graph_destroy_ext(graph: Handle) before {
    state::graphs::graph_destroyed(graph as usize);
});

hook!(zeGraphDestroyExp => graph_destroy_exp(graph: Handle) before {
    state::graphs::graph_destroyed(graph as usize);
});

hook!(zeExecutableGraphDestroyExt => executable_graph_destroy_ext(executable: Handle) before {
    state::graphs::executable_destroyed(executable as usize);
});

hook!(zeExecutableGraphDestroyExp => executable_graph_destroy_exp(executable: Handle) before {
    state::graphs::executable_destroyed(executable as usize);
});

// Mutable command lists (`ZE_experimental_mutable_command_list`).

hook!(zeCommandListGetNextCommandIdExp => get_next_command_id_exp(
    list: Handle, desc: *const c_void, p_id: *mut u64
) after {
    // SAFETY: on success the driver wrote the id.
    state::graphs::command_id(list as usize, unsafe { *p_id }, &[]);
});

hook!(zeCommandListGetNextCommandIdWithKernelsExp => get_next_command_id_with_kernels_exp(
    list: Handle, desc: *const c_void, n_kernels: u32, kernels: *mut Handle, p_id: *mut u64
) after {
    // SAFETY: on success the driver wrote the id and read n_kernels handles.
    unsafe { state::graphs::command_id(list as usize, *p_id, handles(kernels, n_kernels)) };
});

hook!(zeCommandListUpdateMutableCommandKernelsExp => update_mutable_command_kernels_exp(
    list: Handle, n: u32, ids: *mut u64, kernels: *mut Handle
) after {
    // SAFETY: the driver read n ids and n kernel handles.
    unsafe { state::graphs::kernels_swapped(list as usize, ids_of(ids, n), handles(kernels, n), None) };
} failed(result) {
    // SAFETY: the caller passed n ids and n kernels (NULL ones are skipped).
    unsafe { state::graphs::kernels_swapped(list as usize, ids_of(ids, n), handles(kernels, n), Some(result)) };
});

// Extension functions by name: the graph functions of SYCL's v2 adapter
// (and any other hooked function a driver hands out this way) are the
// hooks, as from `dlsym`.

hook!(zeDriverGetExtensionFunctionAddress => driver_get_extension_function_address(
    driver: Handle, name: *const c_char, pp_function: *mut *mut c_void
) after {
    // SAFETY: on success the driver wrote the address; name is a C string.
    unsafe {
        if let (false, Some(n)) = (pp_function.is_null(), c_bytes(name)) {
            let real = *pp_function as usize;
            if real != 0 {
                *pp_function = stand_in(n, real) as *mut c_void;
            }
        }
    }
});

/// Ids of an array argument, or nothing for NULL.
///
/// # Safety
/// `p` is NULL or points to `n` ids.
unsafe fn ids_of<'a>(p: *const u64, n: u32) -> &'a [u64] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}
