//! What the interposer knows about the process: the registry, command
//! lists and the counting of launches here; modules, kernels and devices
//! ([`modules`]), graphs and mutable command lists ([`graphs`]), OpenCL's
//! programs ([`programs`]).
//!
//! Two kinds of path. Rare events (a module, kernel or command list created
//! or destroyed) take the registry lock, may allocate and write an event.
//! Launches take no lock shared by all threads and allocate nothing: one
//! lock-free map lookup for the kernel's counter, one for the command list,
//! and relaxed atomic adds into the shared mapping of the counts file.
//! Appends to a regular command list are remembered per list (a lock per
//! list, never shared by all threads) and counted as launches each time the
//! list is executed.
//!
//! Graphs and mutable command lists (docs/internals.md, "Graphs and mutable
//! command lists"): a launch counts when it runs. An immediate list that
//! captures a graph is mapped, like a regular list, to the [`ListState`] of
//! the graph, so its appends are remembered, not launched, at the cost of an
//! append to a regular list; an executable graph holds a copy of its graph's
//! appends, added once to the launches each time it is appended to an
//! immediate list (one add per run of launches of the same kernel), copied
//! into a regular list or a graph being captured that it is appended to.
//! While some capture is active, every other immediate list is mapped to
//! [`PROBE`]: its launches ask the driver whether the list joined a capture
//! (a fork) before they count.

use crate::config::{self, Config};
use crate::direct::load_word;
use crate::handles::HandleMap;
use crate::output::{Counter, Output};
use sha2::{Digest, Sha256};
use std::cell::UnsafeCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use xpu_asm_record::{hex, push_json_bytes_field, push_json_str, UNKNOWN_KERNEL_ID};

pub mod constants;
pub mod graphs;
pub mod modules;
pub mod programs;
pub mod times;

/// The maps the launch path reads, in one static: a launch finds both of its
/// maps from one address.
struct Maps {
    /// Kernel handle -> `*const Counter`.
    kernels: HandleMap,
    /// Regular command list handle -> `*const ListState`. Immediate lists
    /// are not in the map: a launch on a list not found here counts at once.
    /// An immediate list capturing a graph maps to the graph's `ListState`;
    /// while some capture is active, the other immediate lists map to
    /// [`PROBE`].
    lists: HandleMap,
    /// Executable graph handle -> `*const ListState`: the launches one
    /// append of it runs (read without the registry lock on every replay).
    executables: HandleMap,
}

static MAPS: Maps = Maps {
    kernels: HandleMap::new(),
    lists: HandleMap::new(),
    executables: HandleMap::new(),
};

/// What an immediate list maps to while a capture is active elsewhere and
/// its own capture state is unknown (a capture can fork onto it).
static PROBE: ListState = ListState {
    runs: Mutex::new(Vec::new()),
};

fn probe() -> usize {
    &PROBE as *const ListState as usize
}

/// The appends recorded in one regular command list since its last reset,
/// run-length encoded: `(counter, appends)`. The vector keeps its capacity
/// across resets, so re-recording a list allocates nothing.
pub struct ListState {
    runs: Mutex<Vec<(usize, u64)>>,
}

/// A pthread mutex, because it must be taken around `fork` (pthread_atfork)
/// and released in both parent and child.
struct RawLock(UnsafeCell<libc::pthread_mutex_t>);
// SAFETY: a pthread mutex is meant to be shared between threads.
unsafe impl Sync for RawLock {}

static LOCK: RawLock = RawLock(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));

fn lock() {
    // SAFETY: LOCK is a statically initialized, never-destroyed mutex.
    unsafe { libc::pthread_mutex_lock(LOCK.0.get()) };
}

fn unlock() {
    // SAFETY: called only by the thread that locked it (or in a fork child).
    unsafe { libc::pthread_mutex_unlock(LOCK.0.get()) };
}

struct Registry {
    out: Output,
    /// Module handle -> module id.
    modules: HashMap<usize, u32>,
    next_module: u32,
    /// (module id, kernel name) -> kernel id: one counter per distinct kernel,
    /// however often it is created and destroyed.
    kernel_ids: HashMap<(u32, Vec<u8>), u32>,
    next_kernel: u32,
    /// Device handle -> device id in the record (0: its properties could
    /// not be read).
    devices: HashMap<usize, u32>,
    next_device: u32,
    /// Immediate command lists alive.
    immediate: HashSet<usize>,
    /// Graph handle -> `*const ListState`: what it captured.
    graphs: HashMap<usize, usize>,
    /// Captures in progress, by primary list.
    captures: HashMap<usize, Capture>,
    /// Mutable commands handed out, by regular list and command id.
    commands: HashMap<usize, HashMap<u64, Command>>,
    /// Handles already warned about (one warning each).
    warned: HashSet<usize>,
    /// OpenCL program handle -> what the program was made from.
    programs: HashMap<usize, ProgramFrom>,
}

/// A capture in progress on its primary list.
struct Capture {
    /// The graph's `ListState`.
    state: usize,
    /// What the list mapped to before (restored at the end).
    before: usize,
}

/// A mutable command: the position of its launch among its list's appends,
/// and the kernels it may be switched to (empty: not listed).
struct Command {
    position: u64,
    kernels: Vec<usize>,
}

struct Shared(UnsafeCell<Registry>);
// SAFETY: the registry is only touched with LOCK held (see `with_registry`).
unsafe impl Sync for Shared {}
// SAFETY: same as above.
unsafe impl Send for Shared {}

static REGISTRY: OnceLock<Option<Shared>> = OnceLock::new();
static UNKNOWN: AtomicU64 = AtomicU64::new(0);

/// Runs `f` on the registry with the lock held; `None` when the interposer
/// is switched off (no `XPU_ASM_OUT`).
fn with_registry<R>(f: impl FnOnce(&mut Registry, &'static Config) -> R) -> Option<R> {
    let cfg = config::get()?;
    let shared = REGISTRY.get_or_init(|| Some(Shared(UnsafeCell::new(start(cfg)))));
    let shared = shared.as_ref()?;
    lock();
    // SAFETY: LOCK is held, so this is the only reference.
    let r = f(unsafe { &mut *shared.0.get() }, cfg);
    unlock();
    Some(r)
}

/// First Level Zero activity in this process: create the record.
fn start(cfg: &Config) -> Registry {
    crate::shapes::set_maker(make_shape);
    let mut out = Output::open(cfg);
    let unknown = out.counter(UNKNOWN_KERNEL_ID);
    UNKNOWN.store(unknown as u64, Relaxed);
    // SAFETY: the handlers only take and release LOCK and reopen the record.
    unsafe {
        libc::pthread_atfork(
            Some(before_fork),
            Some(after_fork_parent),
            Some(after_fork_child),
        )
    };
    // SAFETY: registering a plain extern "C" function.
    unsafe { on_exit(at_exit, std::ptr::null_mut()) };
    Registry {
        out,
        modules: HashMap::new(),
        next_module: 1,
        kernel_ids: HashMap::new(),
        next_kernel: UNKNOWN_KERNEL_ID + 1,
        devices: HashMap::new(),
        next_device: 1,
        immediate: HashSet::new(),
        graphs: HashMap::new(),
        captures: HashMap::new(),
        commands: HashMap::new(),
        warned: HashSet::new(),
        programs: HashMap::new(),
    }
}

extern "C" fn before_fork() {
    lock();
}

extern "C" fn after_fork_parent() {
    unlock();
}

extern "C" fn after_fork_child() {
    crate::guard::no_panic(|| {
        if let (Some(cfg), Some(Some(shared))) = (config::get(), REGISTRY.get()) {
            // SAFETY: the child has one thread, and LOCK is held (before_fork).
            let reg = unsafe { &mut *shared.0.get() };
            let parent = reg.out.pid;
            reg.out.reopen_after_fork(cfg, parent);
            // SAFETY: LOCK is held.
            unsafe {
                crate::shapes::after_fork();
                crate::blocks::after_fork();
            }
        }
    });
    unlock();
}

extern "C" {
    /// glibc's `atexit` whose handler gets the exit status.
    fn on_exit(
        f: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

/// The process ends through `exit()`: record how (the status as the parent
/// will see it). Endings that skip `exit()` leave no exit event.
extern "C" fn at_exit(status: libc::c_int, _: *mut libc::c_void) {
    crate::guard::no_panic(|| {
        with_registry(|r, _| r.out.finish_at_exit(status & 0xff));
    });
}

/// The library is unloaded, after every exit handler: counters kept out
/// of the counts file are written into it once more (launches made by
/// later exit handlers), and the staged files go.
pub fn unload() {
    if let Some(Some(_)) = REGISTRY.get() {
        with_registry(|r, _| r.out.finish_at_unload());
    }
}

/// Makes sure the record exists: called when Level Zero is first seen, so
/// that IGC's dump folder exists before the first compile.
#[cold]
#[inline(never)]
pub fn activate() {
    with_registry(|_, _| ());
}

/// Whether recording is on in this process (see [`config::enabled`]).
#[inline(always)]
pub fn enabled() -> bool {
    config::enabled()
}

/// Whether recording is on, reading the configuration if that has not
/// happened yet: for the rare paths (`dlsym`, table getters) that may run
/// before the constructor.
pub fn enabled_now() -> bool {
    config::get().is_some()
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A command list was created (regular lists are tracked, immediate lists
/// only make sure a stale entry of a reused handle is gone, or are probed
/// while a capture is active).
pub fn list_created(handle: usize, immediate: bool) {
    with_registry(|r, _| {
        forget_commands(r, handle);
        if immediate {
            r.immediate.insert(handle);
            MAPS.lists
                .set(handle, if r.captures.is_empty() { 0 } else { probe() });
            return;
        }
        r.immediate.remove(&handle);
        MAPS.lists.set(handle, new_state());
    });
}

/// A fresh, empty `ListState` (never freed: see [`list_destroyed`]).
fn new_state() -> usize {
    Box::into_raw(Box::new(ListState {
        runs: Mutex::new(Vec::new()),
    })) as usize
}

/// The `ListState` at `state` (a value of LISTS, EXECUTABLES or the
/// registry's graphs; never 0).
fn state_at(state: usize) -> &'static ListState {
    // SAFETY: ListStates are never freed, PROBE is static.
    unsafe { &*(state as *const ListState) }
}

/// A command list is about to be destroyed.
pub fn list_destroyed(handle: usize) {
    // The ListState is left allocated: a buggy program racing a launch with
    // the destroy must not make us read freed memory.
    with_registry(|r, _| {
        r.immediate.remove(&handle);
        forget_commands(r, handle);
        if let Some(c) = r.captures.remove(&handle) {
            end_capture(r, handle, c);
        }
        MAPS.lists.set(handle, 0);
    });
}

/// `zeCommandListReset`: the list's appends are forgotten, and its mutable
/// commands.
pub fn list_reset(handle: usize) {
    let l = MAPS.lists.get(handle);
    if l != 0 && l != probe() {
        if let Ok(mut runs) = state_at(l).runs.lock() {
            runs.clear();
        }
    }
    if MUTABLE_LISTS.load(Relaxed) != 0 {
        with_registry(|r, _| forget_commands(r, handle));
    }
}

/// Lists with mutable commands handed out: while there are none, a reset
/// takes no lock.
static MUTABLE_LISTS: AtomicUsize = AtomicUsize::new(0);

fn forget_commands(r: &mut Registry, list: usize) {
    if r.commands.remove(&list).is_some() {
        MUTABLE_LISTS.fetch_sub(1, Relaxed);
    }
}

/// A new launch shape of `kernel`: its slot pair in the counts file (two
/// ids of their own, the first even so that both are in one chunk), or
/// `None` when no counter memory can be had.
pub(crate) fn make_shape(
    kernel: &'static crate::shapes::KernelShapes,
    key: &xpu_asm_record::shapes::ShapeKey,
) -> Option<usize> {
    with_registry(|r, _| {
        let id = r.next_kernel + (r.next_kernel & 1);
        let head = r.out.counter(id + 1);
        if head.is_null() {
            return None;
        }
        r.next_kernel = id + 2;
        let head = r.out.counter(id) as usize;
        // SAFETY: the registry lock is held; two fresh slots.
        Some(unsafe { kernel.add(key, head) })
    })
    .flatten()
}

/// Argument `index` of kernel handle `kernel` set with `size` bytes and no
/// value. Out of line: the hook's common case (a value) stays short.
#[cold]
#[inline(never)]
pub fn null_arg_set(kernel: usize, index: u32, size: usize) {
    if let Some(h) = kernel_handle(kernel) {
        h.set_null_arg(index, size);
    }
}

/// Whether launches on `list` do not count at once: a regular list, an
/// immediate one capturing a graph, or probed while a capture is active.
pub fn list_mapped(list: usize) -> bool {
    MAPS.lists.get(list) != 0
}

/// The record's id of the device of handle `device`, when a module was
/// built for it.
pub fn device_id(device: usize) -> Option<u32> {
    with_registry(|r, _| r.devices.get(&device).copied().filter(|d| *d != 0)).flatten()
}

/// The data of kernel handle `kernel` (`None`: never seen created).
pub fn kernel_handle(kernel: usize) -> Option<&'static crate::shapes::KernelHandle> {
    match MAPS.kernels.get(kernel) {
        0 => None,
        // SAFETY: a value of the kernel map.
        h => Some(unsafe { crate::shapes::at(h) }),
    }
}

/// The counter of a kernel handle (its launches of other shapes).
#[inline(always)]
fn counter_of(kernel: usize) -> Option<&'static Counter> {
    match kernel_handle(kernel) {
        None => unknown_counter(),
        Some(h) => Some(h.counter()),
    }
}

/// The counter of launches of kernels never seen being created, creating
/// the record first if this is the first Level Zero activity seen.
#[cold]
#[inline(never)]
fn unknown_counter() -> Option<&'static Counter> {
    if UNKNOWN.load(Relaxed) == 0 {
        activate();
    }
    let c = UNKNOWN.load(Relaxed) as usize;
    // SAFETY: as in counter_of; null only when no memory could be mapped.
    (c != 0).then(|| unsafe { &*(c as *const Counter) })
}

/// One kernel appended to a command list (the launch path).
///
/// The common case, a known kernel on an immediate list, with both handles
/// in the first entry they can be in (see [`HandleMap::first`]): one atomic
/// add, no call and no loop. A handle further on costs a call
/// ([`kernel_further`], [`list_further`]), an append to a regular list (or
/// a graph being captured) is [`append_regular`]'s, a kernel never seen
/// created [`launch_slow`]'s. Each of them ends the launch, so that nothing
/// is kept across their calls.
///
/// `gc` is the launch's group count: equal to the handle's last launch's,
/// the launch counts in that shape's slot; else [`shape_miss`] finds the
/// shape.
///
/// # Safety
/// `gc` points to the launch's group count.
#[inline(always)]
pub unsafe fn launch(list: usize, kernel: usize, gc: *const crate::common::GroupCount) {
    const K: usize = std::mem::offset_of!(Maps, kernels) + HandleMap::TABLE_OFFSET;
    // The map's current table, read (acquire) in one instruction.
    let kernels = load_word!(MAPS, K, MAPS.kernels.table_word());
    // SAFETY: the kernel map's current table.
    match unsafe { HandleMap::first_in(kernels, kernel) } {
        Some(0) => launch_slow(list, kernel),
        // SAFETY: a value of the kernel map; gc per this function's contract.
        Some(h) => unsafe { launch_handle(h, list, gc) },
        None => kernel_further(list, kernel, gc),
    }
}

/// [`launch`] with a group count of this frame: for tools and tests that
/// drive the state directly.
pub fn launch_with(list: usize, kernel: usize, gc: crate::common::GroupCount) {
    // SAFETY: a group count of this frame.
    unsafe { launch(list, kernel, &gc) }
}

/// An indirect launch (its group count in device memory, unknown here):
/// its shape says so.
#[cold]
#[inline(never)]
pub fn launch_indirect(list: usize, kernel: usize) {
    match MAPS.kernels.get(kernel) {
        0 => launch_slow(list, kernel),
        h => shape_miss(h, list, std::ptr::null()),
    }
}

/// [`launch`] of the kernel handle whose data is at `h`.
///
/// # Safety
/// As [`launch`]; `h` a value of the kernel map.
#[inline(always)]
unsafe fn launch_handle(h: usize, list: usize, gc: *const crate::common::GroupCount) {
    // SAFETY: a value of the kernel map.
    let handle = unsafe { crate::shapes::at(h) };
    // SAFETY: gc points to a group count.
    match unsafe { handle.cached(gc) } {
        Some(slot) => launch_on(slot, list),
        None => shape_miss(h, list, gc),
    }
}

/// [`launch`] of a shape other than the handle's last one (`gc` NULL: an
/// indirect launch).
#[cold]
#[inline(never)]
extern "C" fn shape_miss(h: usize, list: usize, gc: *const crate::common::GroupCount) {
    crate::guard::no_panic(|| {
        // SAFETY: a value of the kernel map; gc as `launch` got it.
        let slot = unsafe { crate::shapes::at(h).slot_for(gc) };
        launch_on(slot, list);
    });
}

/// [`launch`] of the kernel shape whose slot is at `c`, on `list`.
#[inline(always)]
fn launch_on(c: usize, list: usize) {
    const L: usize = std::mem::offset_of!(Maps, lists) + HandleMap::TABLE_OFFSET;
    // SAFETY: counters live in mappings that are never unmapped (a fork
    // child replaces them in place).
    let c = unsafe { &*(c as *const Counter) };
    let lists = load_word!(MAPS, L, MAPS.lists.table_word());
    // SAFETY: the list map's current table.
    match unsafe { HandleMap::first_in(lists, list) } {
        Some(0) => {
            c.immediate.fetch_add(1, Relaxed);
        }
        Some(l) => append_slow(l, c, list),
        None => list_further(c, list),
    }
}

/// [`launch`] of a kernel past its first entry.
#[cold]
#[inline(never)]
extern "C" fn kernel_further(list: usize, kernel: usize, gc: *const crate::common::GroupCount) {
    match MAPS.kernels.further(kernel) {
        0 => launch_slow(list, kernel),
        // SAFETY: a value of the kernel map; gc as `launch` got it.
        h => unsafe { launch_handle(h, list, gc) },
    }
}

/// [`launch`] of a known kernel on a list past its first entry.
#[cold]
#[inline(never)]
extern "C" fn list_further(c: &'static Counter, list: usize) {
    match MAPS.lists.further(list) {
        0 => {
            c.immediate.fetch_add(1, Relaxed);
        }
        l => append_slow(l, c, list),
    }
}

/// [`launch`] past its common cases. `extern "C"` (a panic cannot leave
/// it) and out of line, so that the launch path keeps no unwinding or
/// spill code for it.
#[cold]
#[inline(never)]
extern "C" fn launch_slow(list: usize, kernel: usize) {
    crate::guard::no_panic(|| launch_any(list, kernel));
}

/// [`append_regular`] for [`launch`], as [`launch_slow`] is.
#[inline(never)]
extern "C" fn append_slow(state: usize, c: &'static Counter, list: usize) {
    crate::guard::no_panic(|| append_regular(state, c, list));
}

/// One kernel appended to any list: counted as launched on an immediate
/// list, remembered on a regular one (or a graph being captured).
fn launch_any(list: usize, kernel: usize) {
    // A known kernel implies the record exists (kernels are registered in it).
    let Some(c) = counter_of(kernel) else { return };
    let l = MAPS.lists.get(list);
    if l == 0 {
        c.immediate.fetch_add(1, Relaxed);
        return;
    }
    append_regular(l, c, list);
}

/// An append to a regular list (or to a graph being captured): counted as
/// appended now, as launched when the list (the graph) is executed.
fn append_regular(state: usize, c: &'static Counter, list: usize) {
    if state == probe() {
        return launch_while_capturing(list, c);
    }
    c.regular_appended.fetch_add(1, Relaxed);
    if let Ok(mut runs) = state_at(state).runs.lock() {
        push_run(&mut runs, c as *const Counter as usize, 1);
    }
}

/// Adds `n` launches of counter `key` at the end of `runs`.
fn push_run(runs: &mut Vec<(usize, u64)>, key: usize, n: u64) {
    match runs.last_mut() {
        Some((k, m)) if *k == key => *m += n,
        _ => runs.push((key, n)),
    }
}

/// A launch on an immediate list while some capture is active: captured if
/// the driver says the list records into a graph (a fork of a capture),
/// else launched.
#[cold]
#[inline(never)]
fn launch_while_capturing(list: usize, c: &'static Counter) {
    match forked_state(list) {
        0 => {
            c.immediate.fetch_add(1, Relaxed);
        }
        s => append_regular(s, c, list),
    }
}

/// Whether an immediate list records into a graph, per the driver:
/// `None` when it cannot be asked, `Some(None)` when not, `Some(Some(graph))`
/// when it does (`graph` 0 when the driver cannot say which). The Level
/// Zero hooks hand theirs over when a capture begins
/// ([`graphs::capture_began`]): the state asks no API itself.
pub type CaptureQuery = fn(list: usize) -> Option<Option<usize>>;

/// The [`CaptureQuery`] of the captures begun, asked about a [`PROBE`]d
/// list only (no capture begun: no list is probed).
static CAPTURE_QUERY: OnceLock<CaptureQuery> = OnceLock::new();

/// The `ListState` of the graph a [`PROBE`]d immediate list records into,
/// per the driver (mapping the list to it), or 0 when it does not capture.
fn forked_state(list: usize) -> usize {
    let Some(Some(graph)) = CAPTURE_QUERY.get().and_then(|ask| ask(list)) else {
        return 0;
    };
    with_registry(|r, _| {
        if r.captures.is_empty() || MAPS.lists.get(list) != probe() {
            return MAPS.lists.get(list);
        }
        // Without the graph's handle the fork cannot be told apart from
        // its primary list: the one capture active is taken.
        let state = match (graph, r.captures.values().next()) {
            (0, Some(c)) if r.captures.len() == 1 => c.state,
            (0, _) => return 0,
            (g, _) => *r.graphs.entry(g).or_insert_with(new_state),
        };
        MAPS.lists.set(list, state);
        state
    })
    .unwrap_or(0)
}

/// The value of `list` in LISTS, a [`PROBE`] resolved.
fn list_state(list: usize) -> usize {
    match MAPS.lists.get(list) {
        l if l == probe() => forked_state(list),
        l => l,
    }
}

/// A copy of the runs of `state` (taken before another list is locked: no
/// two are ever held at once).
fn runs_of(state: usize) -> Vec<(usize, u64)> {
    state_at(state)
        .runs
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default()
}

/// Adds `runs` at the end of `state`'s.
fn extend(state: usize, runs: &[(usize, u64)]) {
    if let Ok(mut mine) = state_at(state).runs.lock() {
        for &(k, n) in runs {
            push_run(&mut mine, k, n);
        }
    }
}

/// Each of `runs` launched once: one add per run.
fn launch_runs(runs: &[(usize, u64)]) {
    for &(c, n) in runs {
        // SAFETY: run keys are counter addresses from counter_of.
        unsafe { &*(c as *const Counter) }
            .regular_launched
            .fetch_add(n, Relaxed);
    }
}

/// Command lists executed (`zeCommandQueueExecuteCommandLists`, or regular
/// lists appended to an immediate one): their appends become launches.
pub fn execute(lists: &[usize]) {
    lists.iter().for_each(|&h| execute_list(h));
}

/// [`execute`] for the handle array of a Level Zero call.
pub fn execute_handles(lists: &[crate::common::Handle]) {
    lists.iter().for_each(|&h| execute_list(h as usize));
}

fn execute_list(handle: usize) {
    let l = MAPS.lists.get(handle);
    if l == 0 || l == probe() {
        return;
    }
    if let Ok(runs) = state_at(l).runs.lock() {
        launch_runs(&runs);
    }
}

/// Regular lists appended to an immediate one
/// (`zeCommandListImmediateAppendCommandListsExp`, `...WithParameters`):
/// executed, or captured when the immediate list captures a graph.
pub fn immediate_append(immediate: usize, lists: &[crate::common::Handle]) {
    match list_state(immediate) {
        0 => execute_handles(lists),
        graph => {
            for &h in lists {
                match MAPS.lists.get(h as usize) {
                    0 => {}
                    l if l == probe() => {}
                    l => extend(graph, &runs_of(l)),
                }
            }
        }
    }
}

/// Tells the user once per handle.
fn warn_once(r: &mut Registry, handle: usize, msg: impl FnOnce() -> String) {
    if r.warned.insert(handle) {
        crate::output::warn(&msg());
    }
}

/// One OpenCL kernel enqueued (`clEnqueueNDRangeKernel`, `clEnqueueTask`,
/// ...): one launch, one atomic add into the slot of its shape (`global`
/// size, `local` size or the driver's choice), found in its kernel's
/// table.
#[inline(always)]
pub fn enqueued(kernel: usize, global: [usize; 3], local: Option<[usize; 3]>) {
    const K: usize = std::mem::offset_of!(Maps, kernels) + HandleMap::TABLE_OFFSET;
    let kernels = load_word!(MAPS, K, MAPS.kernels.table_word());
    // SAFETY: the kernel map's current table.
    match unsafe { HandleMap::first_in(kernels, kernel) } {
        Some(0) => enqueued_slow(kernel),
        Some(h) => enqueued_handle(h, global, local),
        None => match MAPS.kernels.further(kernel) {
            0 => enqueued_slow(kernel),
            h => enqueued_handle(h, global, local),
        },
    }
}

/// `clEnqueueNDRangeKernel` of `kernel` with `dims` dimensions: a 1-D
/// enqueue with the sizes of the handle's last one counts there after two
/// compares; any other finds its shape as [`enqueued`] does.
///
/// # Safety
/// `global` points to `dims` sizes; `local` is NULL or does too.
#[inline(always)]
pub unsafe fn enqueued_nd(kernel: usize, dims: u32, global: *const usize, local: *const usize) {
    const K: usize = std::mem::offset_of!(Maps, kernels) + HandleMap::TABLE_OFFSET;
    let kernels = load_word!(MAPS, K, MAPS.kernels.table_word());
    // SAFETY: the kernel map's current table.
    let h = match unsafe { HandleMap::first_in(kernels, kernel) } {
        Some(h) => h,
        None => MAPS.kernels.further(kernel),
    };
    if h != 0 {
        // SAFETY: a value of the kernel map; the sizes per this function's contract.
        if let Some(slot) = unsafe { crate::shapes::at(h).cl_cached_1d(dims, global, local) } {
            // SAFETY: shape slots and counters live in mappings never unmapped.
            unsafe { &*(slot as *const Counter) }
                .immediate
                .fetch_add(1, Relaxed);
            return;
        }
    }
    // SAFETY: as above.
    unsafe { enqueued_nd_slow(kernel, dims, global, local) }
}

/// [`enqueued_nd`] past its common case.
///
/// # Safety
/// As [`enqueued_nd`].
#[cold]
#[inline(never)]
unsafe fn enqueued_nd_slow(kernel: usize, dims: u32, global: *const usize, local: *const usize) {
    // SAFETY: per this function's contract.
    let (g, l) = unsafe { crate::shapes::nd_sizes(dims, global, local) };
    enqueued(kernel, g, l);
}

/// [`enqueued`] of the kernel handle whose data is at `h`.
fn enqueued_handle(h: usize, global: [usize; 3], local: Option<[usize; 3]>) {
    // SAFETY: a value of the kernel map.
    let slot = unsafe { crate::shapes::at(h) }.cl_slot(global, local);
    // SAFETY: shape slots and counters live in mappings never unmapped.
    unsafe { &*(slot as *const Counter) }
        .immediate
        .fetch_add(1, Relaxed);
}

/// [`enqueued`] of a kernel never seen created: counted as unknown.
#[cold]
#[inline(never)]
extern "C" fn enqueued_slow(kernel: usize) {
    crate::guard::no_panic(|| {
        if let Some(c) = counter_of(kernel) {
            c.immediate.fetch_add(1, Relaxed);
        }
    });
}

/// Every list recording into `c`'s graph (its primary `list` and its forks)
/// stops; when no capture is left, probing stops.
fn end_capture(r: &mut Registry, list: usize, c: Capture) {
    let idle = if r.captures.is_empty() { 0 } else { probe() };
    let mut members = Vec::new();
    MAPS.lists.for_each(|k, v| {
        if v == c.state {
            members.push(k);
        }
    });
    for m in members {
        MAPS.lists.set(m, idle);
    }
    // A list that was regular (drivers allow capture on immediate lists
    // only) keeps its own appends.
    let back = if c.before == 0 || c.before == probe() {
        idle
    } else {
        c.before
    };
    MAPS.lists.set(list, back);
    if r.captures.is_empty() {
        let mut probed = Vec::new();
        MAPS.lists.for_each(|k, v| {
            if v == probe() {
                probed.push(k);
            }
        });
        for k in probed {
            MAPS.lists.set(k, 0);
        }
    }
}

/// What an OpenCL program was made from, as its creation was seen.
#[derive(Clone, Debug)]
pub enum ProgramFrom {
    /// `clCreateProgramWithSource` (`"source"`), `...WithIL` (`"il"`),
    /// `...WithBinary` (`"binary"`): the bytes' size and SHA-256.
    Input {
        kind: &'static str,
        size: usize,
        sha256: String,
    },
    /// `clLinkProgram`: what each input program was made from.
    Link(Vec<ProgramFrom>),
}
