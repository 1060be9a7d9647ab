//! A launch while launches are timed: chosen or not (by its kernel and
//! shape's count so far, without a lock), then, chosen, the event it
//! signals and what is kept to read it; and the runs of regular lists.

use super::fns::{self, Fns};
use super::known::{
    give_back, with, EventKind, ListInfo, Ours, Pending, Regular, MAX_OURS, MAX_PENDING,
};
use crate::blocks::Block;
use crate::common::{GroupCount, Handle};
use crate::output::Counter;
use crate::ze::ffi::{ZeResult, ZE_RESULT_SUCCESS};
use std::sync::atomic::Ordering::Relaxed;
use xpu_asm_record::times::NotTimed;

/// One launch's arguments, as timing needs them.
pub struct Launch {
    pub list: Handle,
    pub kernel: Handle,
    /// The group count (NULL: an indirect launch, its count in device
    /// memory).
    pub group: *const GroupCount,
    /// The event the workload passed.
    pub signal: Handle,
    /// Several kernels signal the event (multiple indirect launches).
    pub shared: bool,
}

/// What a chosen launch does.
struct Plan {
    block: &'static Block,
    /// The event the launch signals.
    signal: Handle,
    /// Why it is not timed.
    why: Option<NotTimed>,
    /// What is read later, for an immediate list.
    pending: Option<Pending>,
    /// For a regular list: the append kept (timed at each run).
    regular: Option<Regular>,
    /// The workload's counter-based event, signaled by a barrier after
    /// the kernel (which signals timing's).
    bridge: Option<Handle>,
}

/// A launch while launches are timed: `call` makes the real append with
/// the event it is given, `count` counts it (as without timing).
pub fn launch(
    real: usize,
    l: Launch,
    call: impl FnOnce(Handle) -> ZeResult,
    count: impl FnOnce(),
) -> ZeResult {
    let mut plan = None;
    crate::guard::no_panic(|| plan = choose(real, &l));
    let r = call(plan.as_ref().map_or(l.signal, |p| p.signal));
    if r != ZE_RESULT_SUCCESS {
        if let Some(p) = plan {
            crate::guard::no_panic(|| abandon(p));
        }
        return r;
    }
    crate::guard::no_panic(count);
    if let Some(p) = plan {
        crate::guard::no_panic(|| commit(l.list, p));
    }
    r
}

/// The plan of a chosen launch; `None` when it is not chosen (or cannot
/// be timed at all: a kernel or list never seen made, no counter memory).
fn choose(real: usize, l: &Launch) -> Option<Plan> {
    let policy = crate::config::get()?.time?;
    let h = crate::state::kernel_handle(l.kernel as usize)?;
    let list = l.list as usize;
    let mapped = crate::state::list_mapped(list);
    // SAFETY: the group count the driver just accepted, or NULL.
    let slot = match unsafe { l.group.as_ref() } {
        // SAFETY: as above.
        Some(_) => unsafe { h.cached(l.group).unwrap_or_else(|| h.slot_for(l.group)) },
        // SAFETY: NULL is an indirect launch's.
        None => unsafe { h.slot_for(l.group) },
    };
    // SAFETY: counters live in mappings never unmapped.
    let c = unsafe { &*(slot as *const Counter) };
    let n = match mapped {
        true => c.regular_appended.load(Relaxed),
        false => c.immediate.load(Relaxed) + c.regular_launched.load(Relaxed),
    };
    if !policy.chosen(n) {
        return None;
    }
    let info = with(|t| t.lists.get(&list).copied()).flatten()?;
    if mapped && info.immediate {
        // Captured into a graph: not a launch (its replays are not timed).
        return None;
    }
    let (kernel, counter) = h.kernel_slots();
    let block = crate::state::times::block_for(slot, kernel, counter)?;
    let mut plan = Plan {
        block,
        signal: l.signal,
        why: None,
        pending: None,
        regular: None,
        bridge: None,
    };
    if l.shared {
        plan.why = Some(NotTimed::SharedEvent);
    } else if let Some((base, fns)) = fns::of(real) {
        match info.immediate {
            true => immediate(&mut plan, l, &info, base, fns),
            false => regular(&mut plan, l, &info, base, fns),
        }
    } else {
        plan.why = Some(NotTimed::NoEvents);
    }
    if !info.immediate && plan.regular.is_none() {
        plan.regular = Some(Regular::without(
            block,
            plan.why.take().unwrap_or(NotTimed::UserEvent),
        ));
    }
    Some(plan)
}

/// The device's timer, read once per device and object (and said in the
/// record once per device).
fn timer(device: usize, base: usize, fns: &Fns) -> Option<(u64, u32)> {
    if let Some(known) = with(|t| t.timers.get(&(device, base)).copied()).flatten() {
        return known;
    }
    let got = fns.timer(device);
    with(|t| t.timers.insert((device, base), got));
    if let Some((tps, bits)) = got {
        let dev = crate::state::device_id(device).map_or("null".to_string(), |d| d.to_string());
        let line = format!(
            "{{\"type\":\"timer\",\"device\":{dev},\"ticks_per_second\":{tps},\"valid_bits\":{bits}}}\n"
        );
        crate::state::times::event(line.as_bytes());
    }
    got
}

/// A chosen launch on an immediate list: the event it signals.
fn immediate(plan: &mut Plan, l: &Launch, info: &ListInfo, base: usize, fns: Fns) {
    let Some(timer) = timer(info.device, base, &fns) else {
        plan.why = Some(NotTimed::NoTimer);
        return;
    };
    let user = l.signal as usize;
    let kind = match user {
        0 => None,
        e => Some(
            with(|t| t.events.get(&e).copied())
                .flatten()
                .unwrap_or(EventKind::Other),
        ),
    };
    let ours = match kind {
        None => true,
        Some(EventKind::Timestamp | EventKind::CounterBased { timestamps: true }) => false,
        Some(EventKind::CounterBased { timestamps: false })
            if info.in_order && fns.append_barrier != 0 =>
        {
            plan.bridge = Some(l.signal);
            true
        }
        Some(_) => {
            plan.why = Some(NotTimed::UserEvent);
            return;
        }
    };
    let event = match ours {
        true => match take_event(info.context, base, &fns) {
            Ok(e) => e,
            Err(why) => {
                plan.why = Some(why);
                plan.bridge = None;
                return;
            }
        },
        false => user,
    };
    plan.signal = event as Handle;
    plan.pending = Some(Pending {
        event,
        ours,
        block: plan.block,
        list: l.list as usize,
        context: info.context,
        base,
        fns,
        timer: Some(timer),
    });
}

/// A chosen append to a regular list: timing's own event when the
/// workload passed none (read after each run it can be); else not timed.
fn regular(plan: &mut Plan, l: &Launch, info: &ListInfo, base: usize, fns: Fns) {
    if !l.signal.is_null() {
        plan.why = Some(NotTimed::UserEvent);
        return;
    }
    let timer = timer(info.device, base, &fns);
    if timer.is_none() {
        plan.why = Some(NotTimed::NoTimer);
        return;
    }
    match take_event(info.context, base, &fns) {
        Ok(e) => {
            plan.signal = e as Handle;
            plan.regular = Some(Regular {
                event: Some(e),
                why: NotTimed::NotComplete,
                block: plan.block,
                dirty: false,
                queue: 0,
                fence: 0,
                context: info.context,
                base,
                fns,
                timer,
            });
        }
        Err(why) => plan.why = Some(why),
    }
}

impl Regular {
    /// An append that cannot be timed: each run says why.
    fn without(block: &'static Block, why: NotTimed) -> Regular {
        Regular {
            event: None,
            why,
            block,
            dirty: false,
            queue: 0,
            fence: 0,
            context: 0,
            base: 0,
            fns: Fns::default(),
            timer: None,
        }
    }
}

/// One of timing's own events of `context` (made from `fns`, of the
/// object at `base`): a free one, or a new one while there is room.
fn take_event(context: usize, base: usize, fns: &Fns) -> Result<usize, NotTimed> {
    with(|t| {
        let pending = t.pending.len();
        let ours = t.ours.entry((context, base)).or_insert_with(Ours::default);
        if let Some(e) = ours.free.pop() {
            return Ok(e);
        }
        if pending >= MAX_PENDING || ours.made >= MAX_OURS {
            return Err(NotTimed::PoolFull);
        }
        if ours.refused {
            return Err(NotTimed::NoEvents);
        }
        let index = ours.made % fns::POOL_EVENTS;
        if index == 0 {
            match fns.make_pool(context) {
                Ok(p) => ours.pools.push(p),
                Err(_) => {
                    ours.refused = true;
                    return Err(NotTimed::NoEvents);
                }
            }
        }
        let pool = *ours.pools.last().expect("a pool was just made");
        match fns.make_event(pool, index) {
            Ok(e) => {
                ours.made += 1;
                Ok(e)
            }
            Err(_) => Err(NotTimed::NoEvents),
        }
    })
    .unwrap_or(Err(NotTimed::NoEvents))
}

/// A chosen launch's append failed: its event goes back unused.
fn abandon(p: Plan) {
    let event = p
        .pending
        .as_ref()
        .filter(|p| p.ours)
        .map(|p| (p.context, p.base, p.event));
    let reg = p
        .regular
        .as_ref()
        .and_then(|r| r.event.map(|e| (r.context, r.base, e)));
    if let Some((c, b, e)) = event.or(reg) {
        with(|t| give_back(t, c, b, e));
    }
}

/// A chosen launch was appended: counted as chosen, with why it has no
/// time, or kept to be read (its bridge appended).
fn commit(list: Handle, p: Plan) {
    if let Some(user) = p.bridge {
        if let Some(pending) = &p.pending {
            pending.fns.barrier(list as usize, user as usize);
        }
    }
    match p.regular {
        Some(r) => {
            with(|t| t.regular.entry(list as usize).or_default().push(r));
        }
        None => {
            p.block.sampled();
            if let Some(why) = p.why {
                p.block.not_timed(why);
            }
        }
    }
    if let Some(pending) = p.pending {
        with(|t| t.pending.push(pending));
    }
    super::sync::sweep_at_exit();
}

/// Regular lists ran (`zeCommandQueueExecuteCommandLists` on `queue` with
/// `fence`, or appended to the immediate list `queue`): each chosen
/// append's run is timed when its last run's result was read, else it is
/// a run again before that ("rerun").
pub fn executed(queue: Handle, lists: &[Handle], fence: Handle) {
    with(|t| {
        for l in lists {
            let Some(entries) = t.regular.get_mut(&(*l as usize)) else {
                continue;
            };
            for r in entries {
                r.block.sampled();
                match (r.event, r.dirty) {
                    (None, _) => r.block.not_timed(r.why),
                    (Some(_), true) => r.block.not_timed(NotTimed::Rerun),
                    (Some(_), false) => r.dirty = true,
                }
                r.queue = queue as usize;
                r.fence = fence as usize;
            }
        }
    });
}
