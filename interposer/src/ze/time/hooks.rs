//! Timing's hooks: the launches' and executions' while launches are timed
//! (handed out in place of `ze::hooks`' own, which the exported symbols
//! call only when nothing is timed), and the functions only timing needs
//! (syncs, resets, destroys, event pools and events), handed out only
//! then. Without timing, none of these is ever called.

use crate::common::{GroupCount, Handle};
use crate::macros::hook;
use crate::state;
use crate::ze::ffi::*;
use crate::ze::time::known as time_known;
use crate::ze::time::launch::{self as time_launch, Launch};
use crate::ze::time::sync as time;
use std::ffi::c_void;

/// The real function at `p`, of signature `F`.
///
/// # Safety
/// `p` is a real function of that signature.
unsafe fn real<F: Copy>(p: usize) -> F {
    // SAFETY: per this function's contract (F is a function pointer type).
    unsafe { std::mem::transmute_copy::<usize, F>(&p) }
}

type Append =
    unsafe extern "C" fn(Handle, Handle, *const GroupCount, Handle, u32, *mut Handle) -> ZeResult;

/// `zeCommandListAppendLaunchKernel` (and the cooperative one, of the
/// same signature) while launches are timed.
///
/// # Safety
/// `p` is the real function; the caller keeps the API's contract.
pub unsafe fn append_launch_kernel(
    p: usize,
    list: Handle,
    kernel: Handle,
    args: *const GroupCount,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: Append = unsafe { real(p) };
    let l = Launch {
        list,
        kernel,
        group: args,
        signal,
        shared: false,
    };
    // SAFETY: the caller's arguments, with the event timing chose; the
    // group count the driver read.
    time_launch::launch(
        p,
        l,
        |s| unsafe { f(list, kernel, args, s, n_wait, wait) },
        || unsafe { state::launch(list as usize, kernel as usize, args) },
    )
}

/// `zeCommandListAppendLaunchCooperativeKernel` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
pub unsafe fn append_launch_cooperative_kernel(
    p: usize,
    list: Handle,
    kernel: Handle,
    args: *const GroupCount,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: the same signature.
    unsafe { append_launch_kernel(p, list, kernel, args, signal, n_wait, wait) }
}

/// `zeCommandListAppendLaunchKernelIndirect` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
pub unsafe fn append_launch_kernel_indirect(
    p: usize,
    list: Handle,
    kernel: Handle,
    args_buffer: *const GroupCount,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: Append = unsafe { real(p) };
    let l = Launch {
        list,
        kernel,
        group: std::ptr::null(),
        signal,
        shared: false,
    };
    // SAFETY: the caller's arguments, with the event timing chose.
    time_launch::launch(
        p,
        l,
        |s| unsafe { f(list, kernel, args_buffer, s, n_wait, wait) },
        || state::launch_indirect(list as usize, kernel as usize),
    )
}

type Multiple = unsafe extern "C" fn(
    Handle,
    u32,
    *mut Handle,
    *const u32,
    *const GroupCount,
    Handle,
    u32,
    *mut Handle,
) -> ZeResult;

/// `zeCommandListAppendLaunchMultipleKernelsIndirect` while launches are
/// timed: one event for them all, so each chosen one is said not timed.
///
/// # Safety
/// As [`append_launch_kernel`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn append_launch_multiple_kernels_indirect(
    p: usize,
    list: Handle,
    n_kernels: u32,
    kernels: *mut Handle,
    count_buffer: *const u32,
    args_buffer: *const GroupCount,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: Multiple = unsafe { real(p) };
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe {
        f(
            list,
            n_kernels,
            kernels,
            count_buffer,
            args_buffer,
            signal,
            n_wait,
            wait,
        )
    };
    if r == ZE_RESULT_SUCCESS {
        // SAFETY: the driver accepted n_kernels handles here.
        for k in unsafe { handles(kernels, n_kernels) } {
            let l = Launch {
                list,
                kernel: *k,
                group: std::ptr::null(),
                signal,
                shared: true,
            };
            time_launch::launch(
                p,
                l,
                |_| ZE_RESULT_SUCCESS,
                || state::launch_indirect(list as usize, *k as usize),
            );
        }
    }
    r
}

type WithParameters = unsafe extern "C" fn(
    Handle,
    Handle,
    *const GroupCount,
    *const c_void,
    Handle,
    u32,
    *mut Handle,
) -> ZeResult;

/// `zeCommandListAppendLaunchKernelWithParameters` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn append_launch_kernel_with_parameters(
    p: usize,
    list: Handle,
    kernel: Handle,
    group_counts: *const GroupCount,
    p_next: *const c_void,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: WithParameters = unsafe { real(p) };
    let l = Launch {
        list,
        kernel,
        group: group_counts,
        signal,
        shared: false,
    };
    // SAFETY: as append_launch_kernel's.
    time_launch::launch(
        p,
        l,
        |s| unsafe { f(list, kernel, group_counts, p_next, s, n_wait, wait) },
        || unsafe { state::launch(list as usize, kernel as usize, group_counts) },
    )
}

type WithArguments = unsafe extern "C" fn(
    Handle,
    Handle,
    GroupCount,
    GroupSize,
    *mut *mut c_void,
    *const c_void,
    Handle,
    u32,
    *mut Handle,
) -> ZeResult;

/// `zeCommandListAppendLaunchKernelWithArguments` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn append_launch_kernel_with_arguments(
    p: usize,
    list: Handle,
    kernel: Handle,
    group_counts: GroupCount,
    group_sizes: GroupSize,
    arguments: *mut *mut c_void,
    p_next: *const c_void,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: WithArguments = unsafe { real(p) };
    // As if zeKernelSetGroupSize had been called (the specification's
    // words): the shape is the new group size's.
    if let Some(h) = state::kernel_handle(kernel as usize) {
        h.set_group_size(group_sizes.x, group_sizes.y, group_sizes.z);
    }
    let l = Launch {
        list,
        kernel,
        group: &group_counts,
        signal,
        shared: false,
    };
    // SAFETY: the caller's arguments, with the event timing chose.
    time_launch::launch(
        p,
        l,
        |s| unsafe {
            f(
                list,
                kernel,
                group_counts,
                group_sizes,
                arguments,
                p_next,
                s,
                n_wait,
                wait,
            )
        },
        || unsafe { state::launch(list as usize, kernel as usize, &group_counts) },
    )
}

type Execute = unsafe extern "C" fn(Handle, u32, *mut Handle, Handle) -> ZeResult;

/// `zeCommandQueueExecuteCommandLists` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
pub unsafe fn command_queue_execute_command_lists(
    p: usize,
    queue: Handle,
    n_lists: u32,
    lists: *mut Handle,
    fence: Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: Execute = unsafe { real(p) };
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe { f(queue, n_lists, lists, fence) };
    if r == ZE_RESULT_SUCCESS {
        crate::guard::no_panic(|| {
            // SAFETY: the driver accepted n_lists handles here.
            let lists = unsafe { handles(lists, n_lists) };
            state::execute_handles(lists);
            time_launch::executed(queue, lists, fence);
        });
    }
    r
}

type ImmediateAppend =
    unsafe extern "C" fn(Handle, u32, *mut Handle, Handle, u32, *mut Handle) -> ZeResult;

/// `zeCommandListImmediateAppendCommandListsExp` while launches are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
pub unsafe fn command_list_immediate_append_command_lists_exp(
    p: usize,
    immediate: Handle,
    n_lists: u32,
    lists: *mut Handle,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: ImmediateAppend = unsafe { real(p) };
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe { f(immediate, n_lists, lists, signal, n_wait, wait) };
    if r == ZE_RESULT_SUCCESS {
        // SAFETY: the driver accepted n_lists handles here.
        crate::guard::no_panic(|| {
            immediate_appended(immediate, unsafe { handles(lists, n_lists) })
        });
    }
    r
}

type ImmediateAppendWithParameters = unsafe extern "C" fn(
    Handle,
    u32,
    *mut Handle,
    *const c_void,
    Handle,
    u32,
    *mut Handle,
) -> ZeResult;

/// `zeCommandListImmediateAppendCommandListsWithParameters` while launches
/// are timed.
///
/// # Safety
/// As [`append_launch_kernel`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn command_list_immediate_append_command_lists_with_parameters(
    p: usize,
    immediate: Handle,
    n_lists: u32,
    lists: *mut Handle,
    p_next: *const c_void,
    signal: Handle,
    n_wait: u32,
    wait: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: ImmediateAppendWithParameters = unsafe { real(p) };
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe { f(immediate, n_lists, lists, p_next, signal, n_wait, wait) };
    if r == ZE_RESULT_SUCCESS {
        // SAFETY: the driver accepted n_lists handles here.
        crate::guard::no_panic(|| {
            immediate_appended(immediate, unsafe { handles(lists, n_lists) })
        });
    }
    r
}

/// Regular lists appended to an immediate one: they run there, unless
/// the immediate list captures a graph.
fn immediate_appended(immediate: Handle, lists: &[Handle]) {
    let capturing = state::list_mapped(immediate as usize);
    state::immediate_append(immediate as usize, lists);
    if !capturing {
        time_launch::executed(immediate, lists, std::ptr::null_mut());
    }
}

type PoolCreate =
    unsafe extern "C" fn(Handle, *const EventPoolDesc, u32, *mut Handle, *mut Handle) -> ZeResult;

/// `zeEventPoolCreate` while launches are timed: the workload's pool is
/// made from a copy of its descriptor given kernel timestamps, when it
/// can be (`time::pool_desc`).
///
/// # Safety
/// As [`append_launch_kernel`].
pub unsafe fn event_pool_create_timed(
    p: usize,
    context: Handle,
    desc: *const EventPoolDesc,
    n_devices: u32,
    devices: *mut Handle,
    ph_pool: *mut Handle,
) -> ZeResult {
    // SAFETY: per this function's contract.
    let f: PoolCreate = unsafe { real(p) };
    let mut made = (None, time_known::EventKind::Other);
    // SAFETY: the descriptor the workload passed.
    crate::guard::no_panic(|| made = unsafe { time_known::pool_desc(desc) });
    let (copy, kind) = made;
    let d = copy.as_ref().map_or(desc, |c| c as *const EventPoolDesc);
    // SAFETY: the caller's arguments, the descriptor maybe a copy given
    // timestamps (the same chain and count).
    let r = unsafe { f(context, d, n_devices, devices, ph_pool) };
    if r == ZE_RESULT_SUCCESS && !ph_pool.is_null() {
        // SAFETY: on success the driver wrote the handle.
        crate::guard::no_panic(|| time_known::pool_created(unsafe { *ph_pool }, kind));
    }
    r
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

// The functions only timing needs: they forward, and are handed out
// nowhere, unless launches are timed.

hook!(zeEventPoolCreate => event_pool_create(
    context: Handle, desc: *const EventPoolDesc, n_devices: u32, devices: *mut Handle, ph_pool: *mut Handle
) -> ZeResult only timing timed (event_pool_create_timed));

hook!(zeEventPoolDestroy => event_pool_destroy(pool: Handle) -> ZeResult only timing before {
    time::pool_destroyed(pool);
});

hook!(zeEventCreate => event_create(pool: Handle, desc: *const EventDesc, ph_event: *mut Handle) -> ZeResult
only timing after {
    // SAFETY: on success the driver wrote the handle.
    time_known::event_created(unsafe { *ph_event }, pool);
});

hook!(zeEventCounterBasedCreate => event_counter_based_create(
    context: Handle, device: Handle, desc: *const CounterBasedDesc, ph_event: *mut Handle
) -> ZeResult only timing after {
    // SAFETY: on success the descriptor was read and the handle written.
    unsafe { time_known::counter_based_created(*ph_event, desc.as_ref().map_or(0, |d| d.flags)) };
});

hook!(zexCounterBasedEventCreate2 => counter_based_event_create2(
    context: Handle, device: Handle, desc: *const CounterBasedDesc, ph_event: *mut Handle
) -> ZeResult only timing after {
    // SAFETY: as zeEventCounterBasedCreate's.
    unsafe { time_known::counter_based_created(*ph_event, desc.as_ref().map_or(0, |d| d.flags)) };
});

hook!(zeEventDestroy => event_destroy(event: Handle) -> ZeResult only timing before {
    time::event_destroyed(event);
});

hook!(zeEventHostReset => event_host_reset(event: Handle) -> ZeResult only timing before {
    time::event_reset(event);
});

hook!(zeEventHostSynchronize => event_host_synchronize(event: Handle, timeout: u64) -> ZeResult
only timing after {
    time::event_synced(event);
});

hook!(zeEventQueryStatus => event_query_status(event: Handle) -> ZeResult only timing after {
    time::event_synced(event);
});

hook!(zeCommandListAppendEventReset => append_event_reset(list: Handle, event: Handle) -> ZeResult
only timing before {
    time::event_reset_on_device(event);
});

hook!(zeCommandListHostSynchronize => command_list_host_synchronize(list: Handle, timeout: u64) -> ZeResult
only timing after {
    time::list_synced(list);
});

hook!(zeCommandQueueSynchronize => command_queue_synchronize(queue: Handle, timeout: u64) -> ZeResult
only timing after {
    time::queue_synced(queue);
});

hook!(zeFenceHostSynchronize => fence_host_synchronize(fence: Handle, timeout: u64) -> ZeResult
only timing after {
    time::fence_synced(fence);
});

hook!(zeFenceQueryStatus => fence_query_status(fence: Handle) -> ZeResult only timing after {
    time::fence_synced(fence);
});

hook!(zeContextDestroy => context_destroy(context: Handle) -> ZeResult only timing before {
    time::context_destroyed(context);
});
