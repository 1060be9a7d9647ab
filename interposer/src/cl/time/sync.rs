//! Reading OpenCL results: only when the workload itself syncs (its
//! `clFinish`, `clWaitForEvents`, a blocking read), queries an event or
//! releases one, and at exit; each read asks the event's status
//! (`CL_EVENT_COMMAND_EXECUTION_STATUS`, which never waits) and, once
//! `CL_COMPLETE`, its `CL_PROFILING_COMMAND_START` and `..._END`. A result
//! not ready stays to be read later, unless the workload's own call says
//! the work is done (its queue finished, its event waited on): then the
//! device gave none ("not complete").

use super::known::{with, Pending, Time};
use crate::cl::ffi::*;
use crate::cl::queries::dispatch;
use xpu_asm_record::times::NotTimed;

/// What one read found.
enum Read {
    Done,
    NotReady,
}

/// `clGetEventInfo` or `clGetEventProfilingInfo` (dispatch entry `index`)
/// of a value of `T`.
fn event_value<T: Default + Copy>(event: usize, index: usize, param: ClUint) -> Option<T> {
    // SAFETY: a live event of the workload's or timing's.
    let f = unsafe { dispatch(event as ClHandle, index) };
    if f == 0 {
        return None;
    }
    // SAFETY: the entries used here are clGetEventInfo and
    // clGetEventProfilingInfo.
    let f: GetInfo = unsafe { std::mem::transmute::<usize, GetInfo>(f) };
    let mut v = T::default();
    let size = std::mem::size_of::<T>();
    let p = (&mut v as *mut T).cast();
    // SAFETY: `v` is writable for its size; the event is live.
    let r = unsafe { f(event as ClHandle, param, size, p, std::ptr::null_mut()) };
    (r == CL_SUCCESS).then_some(v)
}

/// `clRetainEvent` or `clReleaseEvent` (dispatch entry `index`) of `event`.
pub fn event_ref(event: usize, index: usize) -> bool {
    // SAFETY: a live event.
    let f = unsafe { dispatch(event as ClHandle, index) };
    if f == 0 {
        return false;
    }
    // SAFETY: the entry is clRetainEvent or clReleaseEvent.
    let f: EventRef = unsafe { std::mem::transmute::<usize, EventRef>(f) };
    // SAFETY: as above.
    unsafe { f(event as ClHandle) == CL_SUCCESS }
}

/// The queue of `event` (NULL for a user event), as the driver says.
pub fn event_queue(event: usize) -> Option<usize> {
    event_value::<usize>(event, DISPATCH_GET_EVENT_INFO, CL_EVENT_COMMAND_QUEUE)
}

/// Reads `p`'s event into its block: timed, or not and why (`not_ready`:
/// what a result not ready means now; `None`: read it later).
fn read(p: &Pending, not_ready: Option<NotTimed>) -> Read {
    let status = event_value::<ClInt>(
        p.event,
        DISPATCH_GET_EVENT_INFO,
        CL_EVENT_COMMAND_EXECUTION_STATUS,
    );
    match status {
        None => p.block.not_timed(NotTimed::QueryFailed),
        Some(CL_COMPLETE) => {
            let at = |param| event_value::<u64>(p.event, DISPATCH_GET_EVENT_PROFILING_INFO, param);
            match (at(CL_PROFILING_COMMAND_START), at(CL_PROFILING_COMMAND_END)) {
                // No timestamps at all, or a start and an end of the same
                // instant (NEO without hardware says complete and gives
                // those): the device gave none. A kernel that ran took time.
                (Some(0), Some(0)) => p.block.not_timed(NotTimed::NotComplete),
                (Some(s), Some(e)) if e == s => p.block.not_timed(NotTimed::NotComplete),
                (Some(s), Some(e)) if e > s => p.block.timed(e - s),
                _ => p.block.not_timed(NotTimed::QueryFailed),
            }
        }
        // Ended in error: it never ran to completion.
        Some(s) if s < 0 => p.block.not_timed(NotTimed::NotComplete),
        Some(_) => match not_ready {
            Some(why) => p.block.not_timed(why),
            None => return Read::NotReady,
        },
    }
    Read::Done
}

/// Reads the pending results `which` picks (`not_ready` as in [`read`]);
/// timing's references to those read are released.
fn settle(t: &mut Time, which: impl Fn(&Pending) -> bool, not_ready: Option<NotTimed>) {
    let mut keep = Vec::with_capacity(t.pending.len());
    for p in std::mem::take(&mut t.pending) {
        if !which(&p) {
            keep.push(p);
            continue;
        }
        match read(&p, not_ready) {
            Read::NotReady => keep.push(p),
            Read::Done if p.ours => {
                event_ref(p.event, DISPATCH_RELEASE_EVENT);
            }
            Read::Done => {}
        }
    }
    t.pending = keep;
}

/// Whether anything waits to be read (one lock, no driver call).
fn any() -> bool {
    with(|t| !t.pending.is_empty())
}

/// The workload's `clFinish(queue)` returned: its commands are done.
pub fn queue_finished(queue: ClHandle) {
    let q = queue as usize;
    if any() {
        with(|t| {
            settle(t, |p| p.queue == q, Some(NotTimed::NotComplete));
            settle(t, |_| true, None);
        });
    }
}

/// The workload's wait on `events` returned: they are done.
pub fn events_waited(events: &[ClHandle]) {
    if any() {
        with(|t| {
            let done = |p: &Pending| events.iter().any(|e| *e as usize == p.event);
            settle(t, done, Some(NotTimed::NotComplete));
            settle(t, |_| true, None);
        });
    }
}

/// The workload queried an event, or made a blocking read: what is ready
/// is read.
pub fn ready_read() {
    if any() {
        with(|t| settle(t, |_| true, None));
    }
}

/// The workload releases its `event` (before it does): read now when it is
/// ready; else timing keeps a reference of its own, to read it later.
pub fn event_released(event: ClHandle) {
    let e = event as usize;
    if !any() {
        return;
    }
    with(|t| {
        settle(t, |p| p.event == e && !p.ours, None);
        for p in t.pending.iter_mut().filter(|p| p.event == e && !p.ours) {
            p.ours = event_ref(e, DISPATCH_RETAIN_EVENT);
        }
    });
}

/// The process ends through `exit()`: every result is read once more;
/// what is not ready then the device never gave.
pub extern "C" fn exit_sweep(_: libc::c_int, _: *mut libc::c_void) {
    crate::guard::no_panic(|| {
        let Some(_guard) = crate::guard::Guard::enter() else {
            return;
        };
        with(|t| settle(t, |_| true, Some(NotTimed::NotComplete)));
    });
}

extern "C" {
    /// glibc's `atexit` whose handler gets the exit status.
    fn on_exit(
        f: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

/// Registers [`exit_sweep`] once, at the first launch timed: after the ICD
/// was loaded and initialised, so that it runs before the ICD's own exit
/// handlers (they run in the reverse order).
pub fn sweep_at_exit() {
    static REGISTERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !REGISTERED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: registering a plain extern "C" function.
        unsafe { on_exit(exit_sweep, std::ptr::null_mut()) };
    }
}
