//! What OpenCL timing knows (`cl::time`): the workload's queues (whether
//! timing gave them profiling, and the properties the workload asked for)
//! and the events whose results are to be read; behind one lock, taken
//! only while launches are timed.

use crate::blocks::Block;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::Once;

/// What timing knows of a command queue of the workload's.
#[derive(Clone, Default)]
pub struct QueueInfo {
    /// Made with profiling (the workload's own, or given by timing).
    pub profiling: bool,
    /// Timing gave it profiling: the workload's queries of the queue and
    /// of its events' profiling answer as without it.
    pub added: bool,
    /// `clCreateCommandQueueWithProperties`: the workload's own array
    /// (its zero included; empty for NULL), answered for
    /// `CL_QUEUE_PROPERTIES_ARRAY`.
    pub asked: Option<Vec<u64>>,
}

/// An event whose result is to be read: the launch it times.
pub struct Pending {
    pub event: usize,
    /// Timing holds a reference of its own (its own event, or one of the
    /// workload's released before it was read): released once read.
    pub ours: bool,
    pub block: &'static Block,
    pub queue: usize,
}

/// Results waiting to be read, at most: further chosen launches are "pool
/// full", never waited for.
pub const MAX_PENDING: usize = 1024;

#[derive(Default)]
pub struct Time {
    pub queues: HashMap<usize, QueueInfo>,
    pub pending: Vec<Pending>,
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
    // SAFETY: the child has one thread, and the lock is held (`lock` in the
    // prepare handler). The parent's queues stay the child's (a child may
    // enqueue on them); its pending events are the parent's to read.
    unsafe {
        if let Some(t) = (*TIME.time.get()).as_mut() {
            t.pending.clear();
        }
    }
    unlock();
}

extern "C" fn parent_after_fork() {
    unlock();
}

extern "C" fn before_fork() {
    lock();
}

/// Runs `f` on timing's state, locked. The driver functions timing calls
/// with it held go through the objects' dispatch tables (into the ICD, not
/// into a hook).
pub fn with<R>(f: impl FnOnce(&mut Time) -> R) -> R {
    static FORK: Once = Once::new();
    FORK.call_once(|| {
        // SAFETY: the handlers only take and release the lock, and clear
        // the pending results in the child.
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
    r
}

/// A queue of the workload's was made.
pub fn queue_created(queue: usize, info: QueueInfo) {
    with(|t| t.queues.insert(queue, info));
}

/// What timing knows of `queue`, if it saw it made.
pub fn queue(queue: usize) -> Option<QueueInfo> {
    with(|t| t.queues.get(&queue).cloned())
}

/// The properties array timing makes a queue with: the workload's
/// `props` (NULL: none) with `CL_QUEUE_PROFILING_ENABLE` added to its
/// `CL_QUEUE_PROPERTIES` (or that key added); `None` when it has profiling
/// already or is a device queue (left as it is). Also the workload's own
/// array, zero included.
///
/// # Safety
/// `props` is NULL or a zero-terminated list of key and value pairs.
pub unsafe fn with_profiling(props: *const u64) -> (Option<Vec<u64>>, Vec<u64>) {
    use crate::cl::ffi::*;
    let mut asked = Vec::new();
    if !props.is_null() {
        let mut i = 0;
        loop {
            // SAFETY: per this function's contract, pairs up to the zero key.
            let key = unsafe { *props.add(i) };
            asked.push(key);
            if key == 0 {
                break;
            }
            // SAFETY: as above.
            asked.push(unsafe { *props.add(i + 1) });
            i += 2;
        }
    }
    // The pairs, without the zero that ends them.
    let mut copy: Vec<u64> = asked[..asked.len().saturating_sub(1)].to_vec();
    let at = copy
        .chunks(2)
        .position(|kv| kv[0] == CL_QUEUE_PROPERTIES)
        .map(|i| 2 * i + 1);
    match at {
        Some(i) if copy[i] & (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE) != 0 => {
            return (None, asked)
        }
        Some(i) => copy[i] |= CL_QUEUE_PROFILING_ENABLE,
        None => copy.extend([CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE]),
    }
    copy.push(0);
    (Some(copy), asked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::ffi::*;

    #[test]
    fn profiling_is_added_on_a_copy() {
        // SAFETY: NULL, and zero-terminated arrays of pairs.
        unsafe {
            let (copy, asked) = with_profiling(std::ptr::null());
            assert_eq!(
                copy,
                Some(vec![CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0])
            );
            assert!(asked.is_empty());
            let size = [0x1094u64, 4096, 0];
            let (copy, asked) = with_profiling(size.as_ptr());
            let want = vec![0x1094, 4096, CL_QUEUE_PROPERTIES, 2, 0];
            assert_eq!(copy, Some(want));
            assert_eq!(asked, size);
            let none = [CL_QUEUE_PROPERTIES, 0, 0];
            assert_eq!(
                with_profiling(none.as_ptr()).0,
                Some(vec![CL_QUEUE_PROPERTIES, 2, 0])
            );
            let ooo = [CL_QUEUE_PROPERTIES, 1, 0];
            assert_eq!(
                with_profiling(ooo.as_ptr()).0,
                Some(vec![CL_QUEUE_PROPERTIES, 3, 0])
            );
            let has = [CL_QUEUE_PROPERTIES, 3, 0];
            assert_eq!(with_profiling(has.as_ptr()).0, None);
            let device = [CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | 1, 0];
            assert_eq!(with_profiling(device.as_ptr()).0, None);
        }
    }
}
