//! What the interposer knows about the process: modules, kernels, command
//! lists, and the counting of launches.
//!
//! Two kinds of path. Rare events (a module, kernel or command list created
//! or destroyed) take the registry lock, may allocate and write an event.
//! Launches take no lock shared by all threads and allocate nothing: one
//! lock-free map lookup for the kernel's counter, one for the command list,
//! and relaxed atomic adds into the shared mapping of the counts file.
//! Appends to a regular command list are remembered per list (a lock per
//! list, never shared by all threads) and counted as launches each time the
//! list is executed.

use crate::config::{self, Config};
use crate::handles::HandleMap;
use crate::output::{Counter, Output};
use sha2::{Digest, Sha256};
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use xpu_asm_record::{hex, push_json_bytes_field, push_json_str, UNKNOWN_KERNEL_ID};

/// Kernel handle -> `*const Counter`.
static KERNELS: HandleMap = HandleMap::new();
/// Regular command list handle -> `*const ListState`. Immediate lists are not
/// in the map: a launch on a list not found here counts at once.
static LISTS: HandleMap = HandleMap::new();

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
        let line = format!("{{\"type\":\"exit\",\"code\":{}}}\n", status & 0xff);
        with_registry(|r, _| r.out.event(line.as_bytes(), false));
    });
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

/// One input of a module, as the interposer saw it.
pub struct ModuleInput<'a> {
    pub bytes: &'a [u8],
    pub build_flags: &'a [u8],
}

/// What the driver says about a device.
pub struct DeviceInfo {
    pub vendor_id: u32,
    pub device_id: u32,
    pub name: Vec<u8>,
    pub ip_version: Option<u32>,
}

/// The device a module was built for, and how to ask the driver about it
/// (done once per device).
pub struct DeviceRef<'a> {
    pub handle: usize,
    pub query: &'a dyn Fn() -> Option<DeviceInfo>,
}

fn no_device() -> Option<DeviceInfo> {
    None
}

impl DeviceRef<'static> {
    /// A device the driver cannot be asked about (for tools and tests that
    /// drive the state directly).
    pub const UNKNOWN: DeviceRef<'static> = DeviceRef {
        handle: 0,
        query: &no_device,
    };
}

/// The record's id of `dev`, writing its `device` event the first time.
fn device_id(r: &mut Registry, dev: &DeviceRef) -> u32 {
    if let Some(id) = r.devices.get(&dev.handle) {
        return *id;
    }
    let Some(info) = (dev.query)() else {
        r.devices.insert(dev.handle, 0);
        return 0;
    };
    let id = r.next_device;
    r.next_device += 1;
    r.devices.insert(dev.handle, id);
    let mut line = format!(
        "{{\"type\":\"device\",\"id\":{id},\"vendor_id\":{},\"device_id\":{},",
        info.vendor_id, info.device_id
    )
    .into_bytes();
    push_json_bytes_field(&mut line, "name", &info.name);
    match info.ip_version {
        Some(v) => line.extend_from_slice(format!(",\"ip_version\":{v}}}\n").as_bytes()),
        None => line.extend_from_slice(b",\"ip_version\":null}\n"),
    }
    r.out.event(&line, true);
    id
}

/// A module was created successfully. `binary` is its GPU code (what the
/// program passed for a native module, the driver's build of a SPIR-V
/// one), or why there is none; it is saved once per content under
/// `<out>/modules/`.
pub fn module_created(
    handle: usize,
    format: u32,
    inputs: &[ModuleInput],
    kernel_names: &[Vec<u8>],
    binary: Result<&[u8], String>,
    device: DeviceRef,
) {
    // Hashed before the lock is taken: a module can be megabytes.
    let first = inputs.first();
    let sha = first.map(|i| sha256_hex(i.bytes)).unwrap_or_default();
    let binary = hash_binary(format, first, &sha, binary);
    with_registry(|r, _| {
        let device_id = device_id(r, &device);
        let id = r.next_module;
        r.next_module += 1;
        r.modules.insert(handle, id);
        let mut line = Vec::with_capacity(256);
        push_module_head(&mut line, id, format, inputs, &sha);
        push_kernel_names(&mut line, kernel_names);
        if device_id != 0 {
            line.extend_from_slice(format!(",\"device\":{device_id}").as_bytes());
        }
        push_binary(&mut line, &binary, &mut r.out);
        line.extend_from_slice(b"}\n");
        r.out.event(&line, true);
    });
}

/// `binary` with its SHA-256: a native module's binary is its input, whose
/// hash `input_sha` is reused rather than computed twice.
fn hash_binary<'a>(
    format: u32,
    first: Option<&ModuleInput>,
    input_sha: &str,
    binary: Result<&'a [u8], String>,
) -> Result<(&'a [u8], String), String> {
    binary.map(|b| {
        let same_as_input = format == crate::ffi::ZE_MODULE_FORMAT_NATIVE
            && first.is_some_and(|i| std::ptr::eq(i.bytes, b));
        let sha = if same_as_input {
            input_sha.to_string()
        } else {
            sha256_hex(b)
        };
        (b, sha)
    })
}

/// The module event up to its kernel names: id, format, and its input
/// (the first one; with several, each one's size and hash too).
fn push_module_head(line: &mut Vec<u8>, id: u32, format: u32, inputs: &[ModuleInput], sha: &str) {
    let first = inputs.first();
    let fmt = match format {
        crate::ffi::ZE_MODULE_FORMAT_IL_SPIRV => "spirv".to_string(),
        crate::ffi::ZE_MODULE_FORMAT_NATIVE => "native".to_string(),
        n => format!("unknown({n})"),
    };
    line.extend_from_slice(format!("{{\"type\":\"module\",\"id\":{id},\"format\":").as_bytes());
    push_json_str(line, &fmt);
    let size = first.map(|i| i.bytes.len()).unwrap_or(0);
    line.extend_from_slice(format!(",\"size\":{size},\"sha256\":").as_bytes());
    push_json_str(line, sha);
    line.push(b',');
    push_json_bytes_field(
        line,
        "build_flags",
        first.map(|i| i.build_flags).unwrap_or(b""),
    );
    if inputs.len() > 1 {
        line.extend_from_slice(b",\"inputs\":[");
        for (i, input) in inputs.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(
                format!("{{\"size\":{},\"sha256\":", input.bytes.len()).as_bytes(),
            );
            push_json_str(line, &sha256_hex(input.bytes));
            line.push(b'}');
        }
        line.push(b']');
    }
}

/// `,"kernel_names":[...]`, each name a string, or `{"hex":..}` when it is
/// not UTF-8.
fn push_kernel_names(line: &mut Vec<u8>, names: &[Vec<u8>]) {
    line.extend_from_slice(b",\"kernel_names\":[");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        match std::str::from_utf8(n) {
            Ok(s) => push_json_str(line, s),
            Err(_) => line.extend_from_slice(format!("{{\"hex\":\"{}\"}}", hex(n)).as_bytes()),
        }
    }
    line.push(b']');
}

/// `,"binary":{...}`: its size, hash and the file it is saved in, or why
/// there is no binary or no file. Saves the binary (once per content).
fn push_binary(line: &mut Vec<u8>, binary: &Result<(&[u8], String), String>, out: &mut Output) {
    line.extend_from_slice(b",\"binary\":{");
    match binary {
        Ok((b, sha)) => {
            line.extend_from_slice(format!("\"size\":{},\"sha256\":", b.len()).as_bytes());
            push_json_str(line, sha);
            match out.save_module_binary(sha, b) {
                Ok(file) => {
                    line.extend_from_slice(b",\"file\":");
                    push_json_str(line, &file);
                }
                Err(e) => {
                    line.extend_from_slice(b",\"error\":");
                    push_json_str(line, &e);
                }
            }
        }
        Err(e) => {
            line.extend_from_slice(b"\"error\":");
            push_json_str(line, e);
        }
    }
    line.push(b'}');
}

/// A kernel was created successfully: map its handle to its counter.
pub fn kernel_created(module: usize, name: &[u8], handle: usize) {
    with_registry(|r, _| {
        let id = kernel_id(r, module, name);
        let counter = r.out.counter(id);
        KERNELS.set(handle, counter as usize);
    });
}

/// The record's id of kernel `name` of `module`, writing its `kernel`
/// event the first time (a kernel created again keeps its id and counter).
fn kernel_id(r: &mut Registry, module: usize, name: &[u8]) -> u32 {
    let module_id = r.modules.get(&module).copied().unwrap_or(0);
    let key = (module_id, name.to_vec());
    if let Some(id) = r.kernel_ids.get(&key) {
        return *id;
    }
    let id = r.next_kernel;
    r.next_kernel += 1;
    r.kernel_ids.insert(key, id);
    let mut line =
        format!("{{\"type\":\"kernel\",\"id\":{id},\"module\":{module_id},").into_bytes();
    push_json_bytes_field(&mut line, "name", name);
    line.extend_from_slice(b"}\n");
    r.out.event(&line, true);
    id
}

/// A kernel is about to be destroyed: forget its handle (the driver may hand
/// it out again for another kernel).
pub fn kernel_destroyed(handle: usize) {
    with_registry(|_, _| KERNELS.set(handle, 0));
}

/// A command list was created (regular lists are tracked, immediate lists
/// only make sure a stale entry of a reused handle is gone).
pub fn list_created(handle: usize, immediate: bool) {
    with_registry(|_, _| {
        if immediate {
            LISTS.set(handle, 0);
            return;
        }
        let state = Box::into_raw(Box::new(ListState {
            runs: Mutex::new(Vec::new()),
        }));
        LISTS.set(handle, state as usize);
    });
}

/// A command list is about to be destroyed.
pub fn list_destroyed(handle: usize) {
    // The ListState is left allocated: a buggy program racing a launch with
    // the destroy must not make us read freed memory.
    with_registry(|_, _| LISTS.set(handle, 0));
}

/// `zeCommandListReset`: the list's appends are forgotten.
pub fn list_reset(handle: usize) {
    let l = LISTS.get(handle);
    if l != 0 {
        // SAFETY: ListStates are never freed.
        let l = unsafe { &*(l as *const ListState) };
        if let Ok(mut runs) = l.runs.lock() {
            runs.clear();
        }
    }
}

#[inline(always)]
fn counter_of(kernel: usize) -> Option<&'static Counter> {
    let c = KERNELS.get(kernel);
    if c == 0 {
        return unknown_counter();
    }
    // SAFETY: counters live in mappings that are never unmapped (a fork child
    // replaces them in place).
    Some(unsafe { &*(c as *const Counter) })
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
#[inline(always)]
pub fn launch(list: usize, kernel: usize) {
    // A known kernel implies the record exists (kernels are registered in it).
    let Some(c) = counter_of(kernel) else { return };
    let l = LISTS.get(list);
    if l == 0 {
        c.immediate.fetch_add(1, Relaxed);
        return;
    }
    append_regular(l, c);
}

/// An append to a regular list: counted as appended now, as launched when
/// the list is executed. Kept out of line so that the immediate path, the
/// common one, stays small.
#[inline(never)]
fn append_regular(list: usize, c: &'static Counter) {
    c.regular_appended.fetch_add(1, Relaxed);
    // SAFETY: ListStates are never freed.
    let l = unsafe { &*(list as *const ListState) };
    if let Ok(mut runs) = l.runs.lock() {
        let key = c as *const Counter as usize;
        match runs.last_mut() {
            Some((k, n)) if *k == key => *n += 1,
            _ => runs.push((key, 1)),
        }
    }
}

/// Command lists executed (`zeCommandQueueExecuteCommandLists`, or regular
/// lists appended to an immediate one): their appends become launches.
pub fn execute(lists: &[usize]) {
    lists.iter().for_each(|&h| execute_list(h));
}

/// [`execute`] for the handle array of a Level Zero call.
pub fn execute_handles(lists: &[crate::ffi::Handle]) {
    lists.iter().for_each(|&h| execute_list(h as usize));
}

fn execute_list(handle: usize) {
    let l = LISTS.get(handle);
    if l == 0 {
        return;
    }
    // SAFETY: ListStates are never freed.
    let l = unsafe { &*(l as *const ListState) };
    if let Ok(runs) = l.runs.lock() {
        for &(c, n) in runs.iter() {
            // SAFETY: run keys are counter addresses from counter_of.
            unsafe { &*(c as *const Counter) }
                .regular_launched
                .fetch_add(n, Relaxed);
        }
    }
}
