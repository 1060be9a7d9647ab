//! The `extern "C"` hooks, named exactly like the Level Zero functions they
//! stand in for.
//!
//! Each hook exists as `hook::<S>` for every slot `S` of
//! [`SLOTS`](crate::real::SLOTS): slot 0 is the exported symbol (the program
//! calls the loader through its PLT), the others are installed into DDI
//! tables and returned from `dlsym` (see `tables.rs` and `lookups/dlsym.rs`),
//! each with the real function it replaced. Order inside a hook: the
//! reentrancy guard (held: just forward), the real call, the recording, the
//! real result returned unchanged. A hook records whenever its slot is set
//! (see `hook!`, `macros.rs`): recording is on then.

use super::ffi::*;
use super::queries::{
    c_bytes, capture_graph, device_properties, kernel_names, kernel_slm, native_binary,
    DEVICE_GET_PROPERTIES, GET_KERNEL_NAMES, GET_NATIVE_BINARY, KERNEL_GET_PROPERTIES,
};
use crate::macros::hook;
use crate::real::stand_in;
use crate::state::{self, modules::ModuleInput};
use std::ffi::{c_char, c_void};

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
        // SAFETY: NULL or a C string, per the API.
        program_build_flags: unsafe { c_bytes(d.p_build_flags) },
    };
    if let ([input], ZE_MODULE_FORMAT_IL_SPIRV) = (&inputs[..], d.format) {
        let carried = matches!(&built, Some(Ok(b)) if crate::common::spirv_section(b).is_some());
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

/// A native module the driver refused: its bytes' size, first bytes and
/// where they lie, the device and the driver's answer.
///
/// # Safety
/// `desc` is NULL or the descriptor the caller passed, readable.
unsafe fn record_refused(
    desc: *const ModuleDesc,
    device: Handle,
    properties: usize,
    result: ZeResult,
) {
    // SAFETY: per this function's contract.
    let Some(d) = (unsafe { desc.as_ref() }) else {
        return;
    };
    if d.format != crate::common::ZE_MODULE_FORMAT_NATIVE || d.p_input_module.is_null() {
        return;
    }
    // SAFETY: the caller's input, `input_size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(d.p_input_module, d.input_size) };
    // SAFETY: a real zeDeviceGetProperties (or 0) and the caller's device.
    let device_info = || unsafe { device_properties(properties, device) };
    state::modules::module_refused(
        bytes,
        result as i64,
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
) -> ZeResult before {
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
} failed(result) {
    // SAFETY: the caller's descriptor, read as the driver read it.
    unsafe { record_refused(desc, device, DEVICE_GET_PROPERTIES.loaded(S), result) };
});

hook!(zeKernelCreate => kernel_create(module: Handle, desc: *const KernelDesc, ph_kernel: *mut Handle) -> ZeResult after {
    // SAFETY: on success desc was accepted and the handle written.
    unsafe {
        if let Some(name) = c_bytes((*desc).p_kernel_name) {
            let slm = kernel_slm(KERNEL_GET_PROPERTIES.get(S), *ph_kernel);
            state::modules::kernel_created(module as usize, name, *ph_kernel as usize, slm);
        }
    }
});

hook!(zeKernelSetGroupSize => kernel_set_group_size(kernel: Handle, x: u32, y: u32, z: u32) -> ZeResult after {
    if let Some(h) = state::kernel_handle(kernel as usize) {
        h.set_group_size(x, y, z);
    }
});

hook!(zeKernelSetArgumentValue => kernel_set_argument_value(
    kernel: Handle, index: u32, size: usize, value: *const c_void
) -> ZeResult after {
    // Only arguments set without a value (local memory, null pointers)
    // make a shape: a pointer argument set with a value later stays in
    // the shape's NULL arguments, and the collector, which tells local
    // memory arguments from pointers by the kernel's metadata, counts
    // only the former.
    if value.is_null() {
        state::null_arg_set(kernel as usize, index, size);
    }
});

hook!(zeKernelDestroy => kernel_destroy(kernel: Handle) -> ZeResult before {
    state::modules::kernel_destroyed(kernel as usize);
});

hook!(zeCommandListCreate => command_list_create(
    context: Handle, device: Handle, desc: *const c_void, ph_list: *mut Handle
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::list_created(unsafe { *ph_list } as usize, false);
    if crate::config::timing() {
        // SAFETY: on success the descriptor was read (NULL or a list's).
        let in_order = unsafe { (desc as *const CommandListDesc).as_ref() }
            .is_some_and(|d| d.flags & ZE_COMMAND_LIST_FLAG_IN_ORDER != 0);
        // SAFETY: as above.
        crate::ze::time::known::list_created(unsafe { *ph_list }, context, device, false, in_order);
    }
});

hook!(zeCommandListCreateImmediate => command_list_create_immediate(
    context: Handle, device: Handle, desc: *const c_void, ph_list: *mut Handle
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::list_created(unsafe { *ph_list } as usize, true);
    if crate::config::timing() {
        // SAFETY: on success the descriptor was read (NULL or a queue's).
        let in_order = unsafe { (desc as *const CommandQueueDesc).as_ref() }
            .is_some_and(|d| d.flags & ZE_COMMAND_QUEUE_FLAG_IN_ORDER != 0);
        // SAFETY: as above.
        crate::ze::time::known::list_created(unsafe { *ph_list }, context, device, true, in_order);
    }
});

hook!(zeCommandListDestroy => command_list_destroy(list: Handle) -> ZeResult before {
    if crate::config::timing() {
        crate::ze::time::sync::list_closed(list);
    }
    state::list_destroyed(list as usize);
});

hook!(zeCommandListReset => command_list_reset(list: Handle) -> ZeResult before {
    if crate::config::timing() {
        crate::ze::time::sync::list_closed(list);
    }
} after {
    state::list_reset(list as usize);
});

hook!(zeCommandListAppendLaunchKernel => append_launch_kernel(
    list: Handle, kernel: Handle, args: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::append_launch_kernel) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, args) };
});

hook!(zeCommandListAppendLaunchCooperativeKernel => append_launch_cooperative_kernel(
    list: Handle, kernel: Handle, args: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::append_launch_cooperative_kernel) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, args) };
});

hook!(zeCommandListAppendLaunchKernelIndirect => append_launch_kernel_indirect(
    list: Handle, kernel: Handle, args_buffer: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::append_launch_kernel_indirect) after {
    // The group count is in device memory.
    state::launch_indirect(list as usize, kernel as usize);
});

hook!(zeCommandListAppendLaunchMultipleKernelsIndirect => append_launch_multiple_kernels_indirect(
    list: Handle, n_kernels: u32, kernels: *mut Handle, count_buffer: *const u32,
    args_buffer: *const GroupCount, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::append_launch_multiple_kernels_indirect) after {
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
) -> ZeResult timed (crate::ze::time::hooks::append_launch_kernel_with_parameters) after {
    // SAFETY: the driver read the group count there.
    unsafe { state::launch(list as usize, kernel as usize, group_counts) };
});

hook!(zeCommandListAppendLaunchKernelWithArguments => append_launch_kernel_with_arguments(
    list: Handle, kernel: Handle, group_counts: GroupCount, group_sizes: GroupSize,
    arguments: *mut *mut c_void, p_next: *const c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::append_launch_kernel_with_arguments) after {
    // As if zeKernelSetGroupSize had been called (the specification's words).
    if let Some(h) = state::kernel_handle(kernel as usize) {
        h.set_group_size(group_sizes.x, group_sizes.y, group_sizes.z);
    }
    // SAFETY: a group count of this frame.
    unsafe { state::launch(list as usize, kernel as usize, &group_counts) };
});

hook!(zeCommandQueueExecuteCommandLists => command_queue_execute_command_lists(
    queue: Handle, n_lists: u32, lists: *mut Handle, fence: Handle
) -> ZeResult timed (crate::ze::time::hooks::command_queue_execute_command_lists) after {
    // SAFETY: the driver accepted n_lists handles here.
    let lists = unsafe { handles(lists, n_lists) };
    state::execute_handles(lists);
});

hook!(zeCommandListImmediateAppendCommandListsExp => command_list_immediate_append_command_lists_exp(
    immediate: Handle, n_lists: u32, lists: *mut Handle, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::command_list_immediate_append_command_lists_exp) after {
    // SAFETY: the driver accepted n_lists handles here.
    let lists = unsafe { handles(lists, n_lists) };
    state::immediate_append(immediate as usize, lists);
});

hook!(zeCommandListImmediateAppendCommandListsWithParameters => command_list_immediate_append_command_lists_with_parameters(
    immediate: Handle, n_lists: u32, lists: *mut Handle, p_next: *const c_void,
    signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult timed (crate::ze::time::hooks::command_list_immediate_append_command_lists_with_parameters) after {
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
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_created(unsafe { *ph_graph } as usize);
});

hook!(zeGraphCreateExp => graph_create_exp(
    context: Handle, ph_graph: *mut Handle, p_next: *mut c_void
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_created(unsafe { *ph_graph } as usize);
});

hook!(zeCommandListBeginGraphCaptureExt => begin_graph_capture_ext(
    list: Handle, p_next: *const c_void
) -> ZeResult after {
    state::graphs::capture_began(list as usize, capture_graph(list as usize).flatten(), capture_graph);
});

hook!(zeCommandListBeginGraphCaptureExp => begin_graph_capture_exp(
    list: Handle, p_next: *mut c_void
) -> ZeResult after {
    state::graphs::capture_began(list as usize, capture_graph(list as usize).flatten(), capture_graph);
});

hook!(zeCommandListBeginCaptureIntoGraphExt => begin_capture_into_graph_ext(
    list: Handle, graph: Handle, p_next: *const c_void
) -> ZeResult after {
    state::graphs::capture_began(list as usize, Some(graph as usize), capture_graph);
});

hook!(zeCommandListBeginCaptureIntoGraphExp => begin_capture_into_graph_exp(
    list: Handle, graph: Handle, p_next: *mut c_void
) -> ZeResult after {
    state::graphs::capture_began(list as usize, Some(graph as usize), capture_graph);
});

hook!(zeCommandListEndGraphCaptureExt => end_graph_capture_ext(
    list: Handle, p_next: *const c_void, ph_graph: *mut Handle
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::capture_ended(list as usize, unsafe { *ph_graph } as usize);
});

hook!(zeCommandListEndGraphCaptureExp => end_graph_capture_exp(
    list: Handle, ph_graph: *mut Handle, p_next: *mut c_void
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::capture_ended(list as usize, unsafe { *ph_graph } as usize);
});

hook!(zeGraphInstantiateExt => graph_instantiate_ext(
    graph: Handle, p_next: *const c_void, ph_executable: *mut Handle
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_instantiated(graph as usize, unsafe { *ph_executable } as usize);
});

hook!(zeCommandListInstantiateGraphExp => command_list_instantiate_graph_exp(
    graph: Handle, ph_executable: *mut Handle, p_next: *mut c_void
) -> ZeResult after {
    // SAFETY: on success the driver wrote the handle.
    state::graphs::graph_instantiated(graph as usize, unsafe { *ph_executable } as usize);
});

hook!(zeCommandListAppendGraphExt => append_graph_ext(
    list: Handle, executable: Handle, p_next: *const c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult after {
    state::graphs::graph_appended(list as usize, executable as usize);
});

hook!(zeCommandListAppendGraphExp => append_graph_exp(
    list: Handle, executable: Handle, p_next: *mut c_void, signal: Handle, n_wait: u32, wait: *mut Handle
) -> ZeResult after {
    state::graphs::graph_appended(list as usize, executable as usize);
});

hook!(zeGraphDestroyExt => graph_destroy_ext(graph: Handle) -> ZeResult before {
    state::graphs::graph_destroyed(graph as usize);
});

hook!(zeGraphDestroyExp => graph_destroy_exp(graph: Handle) -> ZeResult before {
    state::graphs::graph_destroyed(graph as usize);
});

hook!(zeExecutableGraphDestroyExt => executable_graph_destroy_ext(executable: Handle) -> ZeResult before {
    state::graphs::executable_destroyed(executable as usize);
});

hook!(zeExecutableGraphDestroyExp => executable_graph_destroy_exp(executable: Handle) -> ZeResult before {
    state::graphs::executable_destroyed(executable as usize);
});

// Mutable command lists (`ZE_experimental_mutable_command_list`).

hook!(zeCommandListGetNextCommandIdExp => get_next_command_id_exp(
    list: Handle, desc: *const c_void, p_id: *mut u64
) -> ZeResult after {
    // SAFETY: on success the driver wrote the id.
    state::graphs::command_id(list as usize, unsafe { *p_id }, &[]);
});

hook!(zeCommandListGetNextCommandIdWithKernelsExp => get_next_command_id_with_kernels_exp(
    list: Handle, desc: *const c_void, n_kernels: u32, kernels: *mut Handle, p_id: *mut u64
) -> ZeResult after {
    // SAFETY: on success the driver wrote the id and read n_kernels handles.
    unsafe { state::graphs::command_id(list as usize, *p_id, handles(kernels, n_kernels)) };
});

hook!(zeCommandListUpdateMutableCommandKernelsExp => update_mutable_command_kernels_exp(
    list: Handle, n: u32, ids: *mut u64, kernels: *mut Handle
) -> ZeResult after {
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
) -> ZeResult after {
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
