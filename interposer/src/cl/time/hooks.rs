//! OpenCL timing's hooks: the enqueues' while launches are timed (the
//! exported symbols call `cl::hooks`' own only when nothing is timed), and
//! the functions only timing needs (queues made with profiling, the
//! workload's syncs, event queries and releases, and the answers that
//! would show the profiling timing added), handed out only then.

use super::known::{self, QueueInfo};
use super::launch::{self, Enqueue};
use super::sync;
use crate::cl::ffi::*;
use crate::macros::hook;
use crate::state;
use std::ffi::c_void;

/// The real function at `p`, of signature `F`.
///
/// # Safety
/// `p` is a real function of that signature.
unsafe fn real<F: Copy>(p: usize) -> F {
    // SAFETY: per this function's contract (F is a function pointer type).
    unsafe { std::mem::transmute_copy::<usize, F>(&p) }
}

type NdRange = unsafe extern "C" fn(
    ClHandle,
    ClHandle,
    ClUint,
    *const usize,
    *const usize,
    *const usize,
    ClUint,
    *const ClHandle,
    *mut ClHandle,
) -> ClInt;

/// `clEnqueueNDRangeKernel` while launches are timed.
///
/// # Safety
/// `p` is the real function; the caller keeps the API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe fn enqueue_nd_range_kernel(
    p: usize,
    queue: ClHandle,
    kernel: ClHandle,
    work_dim: ClUint,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    num_events: ClUint,
    wait: *const ClHandle,
    event: *mut ClHandle,
) -> ClInt {
    // SAFETY: per this function's contract.
    let f: NdRange = unsafe { real(p) };
    if global.is_null() {
        // SAFETY: forwarding the caller's arguments unchanged (an error).
        return unsafe {
            f(
                queue, kernel, work_dim, offset, global, local, num_events, wait, event,
            )
        };
    }
    // SAFETY: the sizes of work_dim dimensions the caller passes.
    let (g, l) = unsafe { crate::shapes::nd_sizes(work_dim, global, local) };
    let e = Enqueue {
        queue,
        kernel,
        global: g,
        local: l,
        event,
    };
    launch::enqueue(
        e,
        // SAFETY: the caller's arguments, the event pointer maybe timing's.
        |ev| unsafe {
            f(
                queue, kernel, work_dim, offset, global, local, num_events, wait, ev,
            )
        },
        || state::enqueued(kernel as usize, g, l),
    )
}

type Task =
    unsafe extern "C" fn(ClHandle, ClHandle, ClUint, *const ClHandle, *mut ClHandle) -> ClInt;

/// `clEnqueueTask` while launches are timed.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
pub unsafe fn enqueue_task(
    p: usize,
    queue: ClHandle,
    kernel: ClHandle,
    num_events: ClUint,
    wait: *const ClHandle,
    event: *mut ClHandle,
) -> ClInt {
    // SAFETY: per this function's contract.
    let f: Task = unsafe { real(p) };
    let e = Enqueue {
        queue,
        kernel,
        global: [1; 3],
        local: Some([1; 3]),
        event,
    };
    launch::enqueue(
        e,
        // SAFETY: as enqueue_nd_range_kernel's.
        |ev| unsafe { f(queue, kernel, num_events, wait, ev) },
        || state::enqueued(kernel as usize, [1; 3], Some([1; 3])),
    )
}

/// `clEnqueueNDCountKernelINTEL` while launches are timed.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn enqueue_nd_count_kernel_intel(
    p: usize,
    queue: ClHandle,
    kernel: ClHandle,
    work_dim: ClUint,
    offset: *const usize,
    count: *const usize,
    local: *const usize,
    num_events: ClUint,
    wait: *const ClHandle,
    event: *mut ClHandle,
) -> ClInt {
    // SAFETY: per this function's contract (the same signature as NDRange's).
    let f: NdRange = unsafe { real(p) };
    // SAFETY: the sizes of work_dim dimensions the caller passes.
    let (c, l) = unsafe {
        (
            crate::shapes::sizes(count, work_dim, 1),
            crate::shapes::sizes(local, work_dim, 1),
        )
    };
    let g = [0, 1, 2].map(|i| c[i] * l[i]);
    let e = Enqueue {
        queue,
        kernel,
        global: g,
        local: Some(l),
        event,
    };
    launch::enqueue(
        e,
        // SAFETY: as enqueue_nd_range_kernel's.
        |ev| unsafe {
            f(
                queue, kernel, work_dim, offset, count, local, num_events, wait, ev,
            )
        },
        || state::enqueued(kernel as usize, g, Some(l)),
    )
}

type CreateQueue = unsafe extern "C" fn(ClHandle, ClHandle, u64, *mut ClInt) -> ClHandle;

/// `clCreateCommandQueue` while launches are timed: made with profiling
/// (its properties are a value: the caller's stay as they are); when the
/// driver refuses it, made as the workload asked.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
pub unsafe fn create_command_queue_timed(
    p: usize,
    context: ClHandle,
    device: ClHandle,
    props: u64,
    errcode_ret: *mut ClInt,
) -> ClHandle {
    // SAFETY: per this function's contract.
    let f: CreateQueue = unsafe { real(p) };
    let has = props & CL_QUEUE_PROFILING_ENABLE != 0;
    if !has {
        // SAFETY: the caller's arguments, profiling added.
        let q = unsafe {
            f(
                context,
                device,
                props | CL_QUEUE_PROFILING_ENABLE,
                errcode_ret,
            )
        };
        if !q.is_null() {
            let info = QueueInfo {
                profiling: true,
                added: true,
                asked: None,
            };
            crate::guard::no_panic(|| known::queue_created(q as usize, info));
            return q;
        }
    }
    // SAFETY: the caller's arguments unchanged.
    let q = unsafe { f(context, device, props, errcode_ret) };
    if !q.is_null() {
        let info = QueueInfo {
            profiling: has,
            ..QueueInfo::default()
        };
        crate::guard::no_panic(|| known::queue_created(q as usize, info));
    }
    q
}

type CreateQueueWith = unsafe extern "C" fn(ClHandle, ClHandle, *const u64, *mut ClInt) -> ClHandle;

/// `clCreateCommandQueueWithProperties` while launches are timed: made
/// from a copy of the workload's properties with profiling added (never
/// its array); when the driver refuses it, made as the workload asked.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
pub unsafe fn create_command_queue_with_properties_timed(
    p: usize,
    context: ClHandle,
    device: ClHandle,
    props: *const u64,
    errcode_ret: *mut ClInt,
) -> ClHandle {
    // SAFETY: per this function's contract.
    let f: CreateQueueWith = unsafe { real(p) };
    let mut made = (None, Vec::new());
    // SAFETY: the workload's properties, zero-terminated pairs (or NULL).
    crate::guard::no_panic(|| made = unsafe { known::with_profiling(props) });
    let (copy, asked) = made;
    if let Some(copy) = &copy {
        // SAFETY: the caller's arguments, the properties a copy given profiling.
        let q = unsafe { f(context, device, copy.as_ptr(), errcode_ret) };
        if !q.is_null() {
            let info = QueueInfo {
                profiling: true,
                added: true,
                asked: Some(asked),
            };
            crate::guard::no_panic(|| known::queue_created(q as usize, info));
            return q;
        }
    }
    // SAFETY: the caller's arguments unchanged.
    let q = unsafe { f(context, device, props, errcode_ret) };
    if !q.is_null() {
        // Left as it is: it has profiling of its own, unless the driver
        // refused the copy (or it is a device queue).
        let profiling = copy.is_none()
            && asked
                .chunks(2)
                .any(|kv| kv[0] == CL_QUEUE_PROPERTIES && kv.get(1).is_some_and(|v| v & 2 != 0));
        let info = QueueInfo {
            profiling,
            ..QueueInfo::default()
        };
        crate::guard::no_panic(|| known::queue_created(q as usize, info));
    }
    q
}

type GetInfoFn = unsafe extern "C" fn(ClHandle, ClUint, usize, *mut c_void, *mut usize) -> ClInt;

/// `clGetCommandQueueInfo` while launches are timed: of a queue timing gave
/// profiling, the properties the workload asked for.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
pub unsafe fn get_command_queue_info_timed(
    p: usize,
    queue: ClHandle,
    param: ClUint,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ClInt {
    // SAFETY: per this function's contract.
    let f: GetInfoFn = unsafe { real(p) };
    let info = match param as u64 {
        CL_QUEUE_PROPERTIES => known::queue(queue as usize).filter(|q| q.added),
        _ if param == CL_QUEUE_PROPERTIES_ARRAY => {
            known::queue(queue as usize).filter(|q| q.added && q.asked.is_some())
        }
        _ => None,
    };
    let Some(info) = info else {
        // SAFETY: forwarding the caller's arguments unchanged.
        return unsafe { f(queue, param, size, value, size_ret) };
    };
    if let Some(asked) = info.asked.filter(|_| param == CL_QUEUE_PROPERTIES_ARRAY) {
        // SAFETY: the caller's buffer of `size` bytes, or NULLs.
        return unsafe { answer(&asked, size, value, size_ret) };
    }
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe { f(queue, param, size, value, size_ret) };
    if r == CL_SUCCESS && !value.is_null() && size >= 8 {
        // SAFETY: the driver wrote the bit field there.
        unsafe { *(value as *mut u64) &= !CL_QUEUE_PROFILING_ENABLE };
    }
    r
}

/// A query's answer of `words`, as a driver gives it.
///
/// # Safety
/// `value` is NULL or writable for `size` bytes; `size_ret` NULL or writable.
unsafe fn answer(words: &[u64], size: usize, value: *mut c_void, size_ret: *mut usize) -> ClInt {
    let bytes = std::mem::size_of_val(words);
    if !value.is_null() {
        if size < bytes {
            return -30; // CL_INVALID_VALUE
        }
        // SAFETY: per this function's contract.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), value as *mut u64, words.len()) };
    }
    if !size_ret.is_null() {
        // SAFETY: per this function's contract.
        unsafe { *size_ret = bytes };
    }
    CL_SUCCESS
}

/// `clGetEventProfilingInfo` while launches are timed: an event of a queue
/// timing gave profiling has none for the workload, as without timing.
///
/// # Safety
/// As [`enqueue_nd_range_kernel`].
pub unsafe fn get_event_profiling_info_timed(
    p: usize,
    event: ClHandle,
    param: ClUint,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ClInt {
    // SAFETY: per this function's contract.
    let f: GetInfoFn = unsafe { real(p) };
    let mut added = false;
    crate::guard::no_panic(|| {
        added = sync::event_queue(event as usize)
            .and_then(known::queue)
            .is_some_and(|q| q.added)
    });
    if added {
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    // SAFETY: forwarding the caller's arguments unchanged.
    unsafe { f(event, param, size, value, size_ret) }
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

/// Handles of an array argument, or nothing for NULL.
///
/// # Safety
/// `p` is NULL or points to `n` handles.
unsafe fn handles<'a>(p: *const ClHandle, n: ClUint) -> &'a [ClHandle] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

// The functions only timing needs: they forward, and are handed out
// nowhere, unless launches are timed.

hook!(clCreateCommandQueue => create_command_queue(
    context: ClHandle, device: ClHandle, properties: u64, errcode_ret: *mut ClInt
) -> ClHandle, ok(q) !q.is_null(), missing unsafe { fail(errcode_ret) },
only timing timed (create_command_queue_timed));

hook!(clCreateCommandQueueWithProperties => create_command_queue_with_properties(
    context: ClHandle, device: ClHandle, properties: *const u64, errcode_ret: *mut ClInt
) -> ClHandle, ok(q) !q.is_null(), missing unsafe { fail(errcode_ret) },
only timing timed (create_command_queue_with_properties_timed));

hook!(clGetCommandQueueInfo => get_command_queue_info(
    queue: ClHandle, param: ClUint, size: usize, value: *mut c_void, size_ret: *mut usize
) -> ClInt only timing timed (get_command_queue_info_timed));

hook!(clGetEventProfilingInfo => get_event_profiling_info(
    event: ClHandle, param: ClUint, size: usize, value: *mut c_void, size_ret: *mut usize
) -> ClInt only timing timed (get_event_profiling_info_timed));

hook!(clFinish => finish(queue: ClHandle) -> ClInt only timing after {
    sync::queue_finished(queue);
});

hook!(clWaitForEvents => wait_for_events(num_events: ClUint, events: *const ClHandle) -> ClInt
only timing after {
    // SAFETY: the driver waited on these events.
    sync::events_waited(unsafe { handles(events, num_events) });
});

hook!(clGetEventInfo => get_event_info(
    event: ClHandle, param: ClUint, size: usize, value: *mut c_void, size_ret: *mut usize
) -> ClInt only timing after {
    sync::ready_read();
});

hook!(clReleaseEvent => release_event(event: ClHandle) -> ClInt only timing before {
    sync::event_released(event);
});

hook!(clEnqueueReadBuffer => enqueue_read_buffer(
    queue: ClHandle, buffer: ClHandle, blocking: ClUint, offset: usize, size: usize, ptr: *mut c_void,
    num_events: ClUint, wait: *const ClHandle, event: *mut ClHandle
) -> ClInt only timing after {
    if blocking == CL_TRUE {
        sync::ready_read();
    }
});
