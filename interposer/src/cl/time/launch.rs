//! An OpenCL enqueue while launches are timed: chosen or not (by its
//! kernel and shape's count so far, without a lock), then, chosen, the
//! event it is read through: the workload's own when it asked for one,
//! else one the enqueue makes for timing alone.

use super::known::{self, with, Pending, MAX_PENDING};
use crate::blocks::Block;
use crate::cl::ffi::*;
use crate::output::Counter;
use std::sync::atomic::Ordering::Relaxed;
use xpu_asm_record::times::NotTimed;

/// One enqueue's arguments, as timing needs them.
pub struct Enqueue {
    pub queue: ClHandle,
    pub kernel: ClHandle,
    pub global: [usize; 3],
    pub local: Option<[usize; 3]>,
    /// Where the workload wants the enqueue's event (NULL: none).
    pub event: *mut ClHandle,
}

/// What a chosen enqueue does.
struct Plan {
    block: &'static Block,
    /// Why it is not timed.
    why: Option<NotTimed>,
}

/// An enqueue while launches are timed: `call` makes the real enqueue
/// with the event pointer it is given, `count` counts it (as without
/// timing).
pub fn enqueue(
    e: Enqueue,
    call: impl FnOnce(*mut ClHandle) -> ClInt,
    count: impl FnOnce(),
) -> ClInt {
    let mut plan = None;
    crate::guard::no_panic(|| plan = choose(&e));
    let mut own: ClHandle = std::ptr::null_mut();
    let timed = plan.as_ref().is_some_and(|p| p.why.is_none());
    let ours = timed && e.event.is_null();
    let r = call(if ours { &mut own } else { e.event });
    if r != CL_SUCCESS {
        return r;
    }
    crate::guard::no_panic(count);
    if let Some(p) = plan {
        // SAFETY: on success the driver wrote the event the enqueue was given.
        let event = match (timed, ours) {
            (false, _) => std::ptr::null_mut(),
            (true, true) => own,
            (true, false) => unsafe { *e.event },
        };
        crate::guard::no_panic(|| commit(p, e.queue, event, ours));
    }
    r
}

/// The plan of a chosen enqueue; `None` when it is not chosen (or cannot
/// be timed at all: a kernel never seen made, no counter memory).
fn choose(e: &Enqueue) -> Option<Plan> {
    let policy = crate::config::get()?.time?;
    let h = crate::state::kernel_handle(e.kernel as usize)?;
    let slot = h.cl_slot(e.global, e.local);
    // SAFETY: counters live in mappings never unmapped.
    let c = unsafe { &*(slot as *const Counter) };
    if !policy.chosen(c.immediate.load(Relaxed)) {
        return None;
    }
    let (kernel, counter) = h.kernel_slots();
    let block = crate::state::times::block_for(slot, kernel, counter)?;
    let profiling = known::queue(e.queue as usize).is_some_and(|q| q.profiling);
    let full = with(|t| t.pending.len() >= MAX_PENDING);
    let why = match (profiling, full) {
        (false, _) => Some(NotTimed::NoProfiling),
        (true, true) => Some(NotTimed::PoolFull),
        (true, false) => None,
    };
    Some(Plan { block, why })
}

/// A chosen enqueue was made: counted as chosen, with why it has no time,
/// or kept to be read.
fn commit(p: Plan, queue: ClHandle, event: ClHandle, ours: bool) {
    p.block.sampled();
    if let Some(why) = p.why {
        return p.block.not_timed(why);
    }
    if event.is_null() {
        return p.block.not_timed(NotTimed::NoEvents);
    }
    with(|t| {
        t.pending.push(Pending {
            event: event as usize,
            ours,
            block: p.block,
            queue: queue as usize,
        })
    });
    super::sync::sweep_at_exit();
}
