//! What timing knows (`ze::time`): the workload's lists, pools and
//! events, timing's own events, the results waiting to be read, the
//! devices' timers; behind one lock, taken only while launches are timed.

use super::fns::Fns;
use crate::blocks::Block;
use crate::common::Handle;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::Once;
use xpu_asm_record::times::NotTimed;

/// What timing knows of a command list.
#[derive(Clone, Copy)]
pub struct ListInfo {
    pub context: usize,
    pub device: usize,
    pub immediate: bool,
    pub in_order: bool,
}

/// What timing knows of an event of the workload's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EventKind {
    /// A kernel timestamp event (its pool has timestamps, or was given them).
    Timestamp,
    /// A counter-based event, with timestamps of the device or without.
    CounterBased { timestamps: bool },
    /// Cannot be timed without changing the workload (IPC, timestamps in
    /// the host's domain, a pool timing did not see made).
    Other,
}

/// A pool of the workload's: what its events are, and its context.
#[derive(Clone, Copy)]
pub struct PoolInfo {
    pub kind: EventKind,
}

/// An event whose result is to be read: the launch it times and how.
pub struct Pending {
    pub event: usize,
    /// One of timing's own (reset and given back once read).
    pub ours: bool,
    pub block: &'static Block,
    pub list: usize,
    pub context: usize,
    pub base: usize,
    pub fns: Fns,
    pub timer: Option<(u64, u32)>,
}

/// A chosen append to a regular list: timed at each run whose result can
/// be read (one per run until the workload syncs).
pub struct Regular {
    /// Timing's own event (`None`: the append cannot be timed, `why`).
    pub event: Option<usize>,
    pub why: NotTimed,
    pub block: &'static Block,
    /// Run since its result was last read.
    pub dirty: bool,
    /// Where its last run was: the queue (or immediate list) and fence.
    pub queue: usize,
    pub fence: usize,
    pub context: usize,
    pub base: usize,
    pub fns: Fns,
    pub timer: Option<(u64, u32)>,
}

/// Timing's own events of one context, made from one object's functions.
#[derive(Default)]
pub struct Ours {
    pub pools: Vec<usize>,
    pub free: Vec<usize>,
    pub made: u32,
    /// The driver refused a pool: no more are asked for.
    pub refused: bool,
}

/// Pools of timing's own per context: at most this many events.
pub const MAX_OURS: u32 = 4 * super::fns::POOL_EVENTS;
/// Results waiting to be read, at most (the workload's events included).
pub const MAX_PENDING: usize = 4096;

#[derive(Default)]
pub struct Time {
    pub lists: HashMap<usize, ListInfo>,
    pub pools: HashMap<usize, PoolInfo>,
    pub events: HashMap<usize, EventKind>,
    /// The workload's events by their pool.
    pub event_pools: HashMap<usize, usize>,
    pub ours: HashMap<(usize, usize), Ours>,
    pub pending: Vec<Pending>,
    pub regular: HashMap<usize, Vec<Regular>>,
    pub timers: HashMap<(usize, usize), Option<(u64, u32)>>,
}

/// Timing's state behind a pthread mutex: taken around `fork`, so that a
/// forked child finds it free.
struct Locked {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    time: UnsafeCell<Option<Time>>,
}
// SAFETY: `time` is only touched with `lock` held (`with`, the fork handlers).
unsafe impl Sync for Locked {}

static TIME: Locked = Locked {
    lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
    time: UnsafeCell::new(None),
};

fn lock() {
    // SAFETY: a statically initialized mutex, never destroyed.
    unsafe { libc::pthread_mutex_lock(TIME.lock.get()) };
}

fn unlock() {
    // SAFETY: called by the thread that locked it (or in a fork child).
    unsafe { libc::pthread_mutex_unlock(TIME.lock.get()) };
}

extern "C" fn child_after_fork() {
    // SAFETY: the child has one thread, and the lock is held (`lock` in
    // the prepare handler). Nothing of the parent's is read in the child:
    // its events, pools and lists are the parent's.
    unsafe { *TIME.time.get() = None };
    unlock();
}

extern "C" fn parent_after_fork() {
    unlock();
}

extern "C" fn before_fork() {
    lock();
}

/// Runs `f` on timing's state, locked. Never call a driver function with
/// it held that can come back into a hook of timing's: the calls timing
/// makes itself are made with the hook guard held (inner hooks forward).
pub fn with<R>(f: impl FnOnce(&mut Time) -> R) -> Option<R> {
    static FORK: Once = Once::new();
    FORK.call_once(|| {
        // SAFETY: the handlers only take and release the lock, and clear
        // the state in the child.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(parent_after_fork),
                Some(child_after_fork),
            )
        };
    });
    lock();
    // SAFETY: the lock is held: this is the only reference.
    let r = f(unsafe { (*TIME.time.get()).get_or_insert_with(Time::default) });
    unlock();
    Some(r)
}

/// A command list was made (`context`, `device`, in order or not).
pub fn list_created(
    list: Handle,
    context: Handle,
    device: Handle,
    immediate: bool,
    in_order: bool,
) {
    with(|t| {
        t.lists.insert(
            list as usize,
            ListInfo {
                context: context as usize,
                device: device as usize,
                immediate,
                in_order,
            },
        )
    });
}

/// An event of the workload's was made in `pool`.
pub fn event_created(event: Handle, pool: Handle) {
    with(|t| {
        let kind = t
            .pools
            .get(&(pool as usize))
            .map_or(EventKind::Other, |p| p.kind);
        t.events.insert(event as usize, kind);
        t.event_pools.insert(event as usize, pool as usize);
    });
}

/// A counter-based event of the workload's was made (`flags`: its
/// counter-based flags).
pub fn counter_based_created(event: Handle, flags: u32) {
    use crate::ze::ffi::{
        COUNTER_BASED_FLAG_DEVICE_TIMESTAMP as DEV, COUNTER_BASED_FLAG_HOST_TIMESTAMP as HOST,
        COUNTER_BASED_FLAG_IPC as IPC,
    };
    let kind = match flags & (DEV | HOST | IPC) {
        0 => EventKind::CounterBased { timestamps: false },
        f if f == DEV => EventKind::CounterBased { timestamps: true },
        _ => EventKind::Other,
    };
    with(|t| t.events.insert(event as usize, kind));
}

/// The descriptor a pool of the workload's is made with: a copy given
/// kernel timestamps, so that its events can be timed, unless it is an
/// IPC pool, a counter-based one, or has timestamps already (then the
/// workload's own is used as it is). Also what its events are.
///
/// # Safety
/// `desc` is the descriptor the workload passed (readable, with its chain).
pub unsafe fn pool_desc(
    desc: *const crate::ze::ffi::EventPoolDesc,
) -> (Option<crate::ze::ffi::EventPoolDesc>, EventKind) {
    use crate::ze::ffi::*;
    if desc.is_null() {
        return (None, EventKind::Other);
    }
    // SAFETY: per this function's contract.
    let d = unsafe { &*desc };
    // SAFETY: as above: a chain of Level Zero structures.
    let counter_based = unsafe {
        chain_has(
            d.p_next,
            ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC,
        )
    };
    if counter_based {
        return (
            None,
            EventKind::CounterBased {
                timestamps: d.flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP != 0,
            },
        );
    }
    if d.flags & (ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP) != 0 {
        return (None, EventKind::Other);
    }
    if d.flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP != 0 {
        return (None, EventKind::Timestamp);
    }
    let copy = EventPoolDesc {
        stype: d.stype,
        p_next: d.p_next,
        flags: d.flags | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        count: d.count,
    };
    (Some(copy), EventKind::Timestamp)
}

/// Whether the `pNext` chain `next` holds a structure of type `stype`.
///
/// # Safety
/// `next` is NULL or a chain of Level Zero structures.
unsafe fn chain_has(mut next: *const std::ffi::c_void, stype: u32) -> bool {
    while !next.is_null() {
        // SAFETY: per this function's contract.
        let b = unsafe { &*(next as *const crate::ze::ffi::BaseDesc) };
        if b.stype == stype {
            return true;
        }
        next = b.p_next;
    }
    false
}

/// A pool of the workload's was made from `kind`'s descriptor.
pub fn pool_created(pool: Handle, kind: EventKind) {
    with(|t| t.pools.insert(pool as usize, PoolInfo { kind }));
}

/// Gives one of timing's own events back (reset first when it was used).
pub fn give_back(t: &mut Time, context: usize, base: usize, event: usize) {
    if let Some(o) = t.ours.get_mut(&(context, base)) {
        o.free.push(event);
    }
}
