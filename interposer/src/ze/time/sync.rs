//! Reading results: only when the workload itself syncs, queries, resets
//! or destroys (each hook of `hooks.rs` calls one of these after the
//! workload's call, or before a reset or destroy), and at exit; each read
//! with `zeEventQueryKernelTimestamp`, which never waits. A result not
//! ready stays to be read later, unless the workload's own call says the
//! work is done (its list or queue synced, its event reset or destroyed):
//! then the device gave none ("not complete").

use super::known::{give_back, with, Pending, Regular, Time};
use crate::common::Handle;
use xpu_asm_record::times::{duration_ns, NotTimed};

/// What one read found.
enum Read {
    Done,
    NotReady,
}

/// Whether NEO runs in a mode that executes nothing (its debug keys read,
/// `SetCommandStreamReceiver` 1, AUB, or 5, null AUB: what `--emulate`
/// sets): then no launch completes, and NEO 26's
/// `zeEventQueryKernelTimestamp` and `zeEventQueryStatus` of an event of
/// an in-order list wait for ever (its host syncs return at once), so its
/// events are never read. Read once, from the environment NEO reads.
pub fn nothing_executes() -> bool {
    static NONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *NONE.get_or_init(|| {
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        var("NEOReadDebugKeys").trim() == "1"
            && matches!(var("SetCommandStreamReceiver").trim(), "1" | "5")
    })
}

/// Reads `event` (of `p`'s kind) into `block`: timed, or not and why
/// (`not_ready`: what a result not ready means now; `None`: wait).
fn read(
    fns: &super::fns::Fns,
    event: usize,
    timer: Option<(u64, u32)>,
    block: &crate::blocks::Block,
    not_ready: Option<NotTimed>,
) -> Read {
    let got = match nothing_executes() {
        // Not ready, as it never will be.
        true => Ok(None),
        false => fns.timestamp(event),
    };
    match got {
        Ok(Some(ts)) => match timer
            .and_then(|(tps, bits)| duration_ns(ts.global_start, ts.global_end, bits, tps))
        {
            Some(ns) => block.timed(ns),
            None => block.not_timed(NotTimed::NoTimer),
        },
        Ok(None) => match not_ready {
            Some(why) => block.not_timed(why),
            None => return Read::NotReady,
        },
        Err(_) => block.not_timed(NotTimed::QueryFailed),
    }
    Read::Done
}

/// Reads the pending results `which` picks (`not_ready` as in [`read`]);
/// those read are done with (timing's own events reset and given back).
fn settle(t: &mut Time, which: impl Fn(&Pending) -> bool, not_ready: Option<NotTimed>) {
    let mut keep = Vec::with_capacity(t.pending.len());
    let mut back = Vec::new();
    for p in std::mem::take(&mut t.pending) {
        if !which(&p) {
            keep.push(p);
            continue;
        }
        match read(&p.fns, p.event, p.timer, p.block, not_ready) {
            Read::NotReady => keep.push(p),
            Read::Done if p.ours => {
                p.fns.reset(p.event);
                back.push((p.context, p.base, p.event));
            }
            Read::Done => {}
        }
    }
    t.pending = keep;
    for (c, b, e) in back {
        give_back(t, c, b, e);
    }
}

/// Reads regular lists' appends that ran since they were last read and
/// that `which` picks: their result, or none (the work is done); their
/// events reset for the next run.
fn settle_regular(t: &mut Time, which: impl Fn(usize, &Regular) -> bool) {
    for (list, entries) in t.regular.iter_mut() {
        for r in entries.iter_mut().filter(|r| r.dirty && which(*list, r)) {
            let Some(e) = r.event else { continue };
            read(&r.fns, e, r.timer, r.block, Some(NotTimed::NotComplete));
            r.fns.reset(e);
            r.dirty = false;
        }
    }
}

/// The workload's wait on its `event` returned, or its query said it is
/// signaled: the launch it times is done; what else is ready is read.
pub fn event_synced(event: Handle) {
    let e = event as usize;
    with(|t| {
        settle(t, |p| p.event == e && !p.ours, Some(NotTimed::NotComplete));
        settle(t, |_| true, None);
    });
}

/// The workload's host sync of `list` returned: its launches are done.
/// An immediate list that ran regular ones is their queue.
pub fn list_synced(list: Handle) {
    let l = list as usize;
    with(|t| {
        settle(t, |p| p.list == l, Some(NotTimed::NotComplete));
        settle(t, |_| true, None);
        settle_regular(t, |_, r| r.queue == l);
    });
}

/// The workload's sync of `queue` returned: the regular lists that ran
/// there are done.
pub fn queue_synced(queue: Handle) {
    let q = queue as usize;
    with(|t| {
        settle_regular(t, |_, r| r.queue == q);
        settle(t, |_| true, None);
    });
}

/// The workload's `fence` signaled: the runs it followed are done.
pub fn fence_synced(fence: Handle) {
    let f = fence as usize;
    with(|t| {
        settle_regular(t, |_, r| r.fence == f && f != 0);
        settle(t, |_| true, None);
    });
}

/// The workload resets its `event` from the host (before the reset):
/// read now, or never.
pub fn event_reset(event: Handle) {
    let e = event as usize;
    with(|t| settle(t, |p| p.event == e && !p.ours, Some(NotTimed::NotComplete)));
}

/// The workload destroys its `event` (before it does).
pub fn event_destroyed(event: Handle) {
    event_reset(event);
    with(|t| {
        t.events.remove(&(event as usize));
        t.event_pools.remove(&(event as usize));
    });
}

/// The workload appends a reset of its `event` on the device: a result
/// not ready now is reset before it can be read.
pub fn event_reset_on_device(event: Handle) {
    let e = event as usize;
    with(|t| {
        settle(
            t,
            |p| p.event == e && !p.ours,
            Some(NotTimed::ResetOnDevice),
        )
    });
}

/// The workload destroys its event `pool` (before it does).
pub fn pool_destroyed(pool: Handle) {
    let pool = pool as usize;
    with(|t| {
        let of_pool = |e: usize| t.event_pools.get(&e) == Some(&pool);
        let events: Vec<usize> = t
            .pending
            .iter()
            .filter(|p| !p.ours && of_pool(p.event))
            .map(|p| p.event)
            .collect();
        settle(
            t,
            |p| events.contains(&p.event) && !p.ours,
            Some(NotTimed::NotComplete),
        );
        t.event_pools.retain(|e, p| {
            let gone = *p == pool;
            if gone {
                t.events.remove(e);
            }
            !gone
        });
        t.pools.remove(&pool);
    });
}

/// The workload resets or destroys `list` (before it does): what it ran
/// is read, and its appends forgotten (their events given back).
pub fn list_closed(list: Handle) {
    let l = list as usize;
    with(|t| {
        settle(t, |p| p.list == l, Some(NotTimed::NotComplete));
        settle_regular(t, |list, _| list == l);
        for r in t.regular.remove(&l).unwrap_or_default() {
            if let Some(e) = r.event {
                give_back(t, r.context, r.base, e);
            }
        }
    });
}

/// The workload destroys `context` (before it does): everything of it is
/// read, and timing's own events in it forgotten (the driver frees them
/// with the context).
pub fn context_destroyed(context: Handle) {
    let c = context as usize;
    with(|t| {
        settle(t, |p| p.context == c, Some(NotTimed::NotComplete));
        let lists: Vec<usize> = t
            .lists
            .iter()
            .filter(|(_, i)| i.context == c)
            .map(|(l, _)| *l)
            .collect();
        for l in lists {
            settle_regular(t, |list, _| list == l);
            t.regular.remove(&l);
            t.lists.remove(&l);
        }
        t.ours.retain(|(ctx, _), _| *ctx != c);
    });
}

/// The process ends through `exit()`: every result is read once more;
/// what is not ready then the device never gave.
pub extern "C" fn exit_sweep(_: libc::c_int, _: *mut libc::c_void) {
    crate::guard::no_panic(|| {
        // Timing's own calls below must not come back into its hooks.
        let Some(_guard) = crate::guard::Guard::enter() else {
            return;
        };
        with(|t| {
            settle_regular(t, |_, _| true);
            settle(t, |_| true, Some(NotTimed::NotComplete));
        });
    });
}

extern "C" {
    /// glibc's `atexit` whose handler gets the exit status.
    fn on_exit(
        f: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

/// Registers [`exit_sweep`] once, at the first launch timed: after the
/// driver was loaded and initialised, so that it runs before the
/// driver's own exit handlers (they run in the reverse order).
pub fn sweep_at_exit() {
    static REGISTERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !REGISTERED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: registering a plain extern "C" function.
        unsafe { on_exit(exit_sweep, std::ptr::null_mut()) };
    }
}
