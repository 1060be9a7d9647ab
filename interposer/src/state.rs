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
            unsafe { crate::shapes::after_fork() };
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
    /// Its compute units and limits, when the driver gives them.
    pub compute: Option<DeviceCompute>,
}

/// A device's compute units and limits (the device event's `compute`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceCompute {
    pub slices: u32,
    pub subslices_per_slice: u32,
    pub eus_per_subslice: u32,
    pub threads_per_eu: u32,
    pub eu_simd_width: u32,
    pub max_group_size: u32,
    pub max_slm_bytes: u32,
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
        Some(v) => line.extend_from_slice(format!(",\"ip_version\":{v}").as_bytes()),
        None => line.extend_from_slice(b",\"ip_version\":null"),
    }
    if let Some(c) = info.compute {
        line.extend_from_slice(
            format!(
                ",\"compute\":{{\"slices\":{},\"subslices_per_slice\":{},\"eus_per_subslice\":{},\
                 \"threads_per_eu\":{},\"eu_simd_width\":{},\"max_group_size\":{},\"max_slm_bytes\":{}}}",
                c.slices,
                c.subslices_per_slice,
                c.eus_per_subslice,
                c.threads_per_eu,
                c.eu_simd_width,
                c.max_group_size,
                c.max_slm_bytes
            )
            .as_bytes(),
        );
    }
    line.extend_from_slice(b"}\n");
    r.out.event(&line, true);
    id
}

/// A module is about to be built: IGC's dump folder is made again if it
/// went (the capture folder removed while the program runs).
pub fn module_build_begins() {
    if let Some(cfg) = config::get() {
        crate::output::ensure_dump_folder(cfg);
    }
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
    let module = CreatedModule {
        handle,
        format,
        inputs,
        kernel_names,
        api: Api::LevelZero,
    };
    module_built(module, binary, None, device);
}

/// The API a module was made through.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Api {
    LevelZero,
    /// An OpenCL program, once built: its module event says so
    /// (`"api":"opencl"`) and what the program was made from.
    OpenCl,
}

/// A module [`module_created`] records.
pub struct CreatedModule<'a> {
    pub handle: usize,
    pub format: u32,
    pub inputs: &'a [ModuleInput<'a>],
    pub kernel_names: &'a [Vec<u8>],
    pub api: Api,
}

/// [`module_created`], with `rebuilt`: for a native module whose binary the
/// driver did not run as passed, what it built instead (or why it could not
/// be read), saved too.
pub fn module_built(
    m: CreatedModule,
    binary: Result<&[u8], String>,
    rebuilt: Option<Result<&[u8], String>>,
    device: DeviceRef,
) {
    let CreatedModule {
        handle,
        format,
        inputs,
        kernel_names,
        api,
    } = m;
    // Hashed before the lock is taken: a module can be megabytes.
    let first = inputs.first();
    if let ([input], crate::ffi::ZE_MODULE_FORMAT_IL_SPIRV) = (inputs, format) {
        write_igc1_spv(input.bytes);
    }
    let sha = first.map(|i| sha256_hex(i.bytes)).unwrap_or_default();
    let binary = hash_binary(format, first, &sha, binary);
    let rebuilt = rebuilt.map(|r| r.map(|b| (b, sha256_hex(b))));
    with_registry(|r, cfg| {
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
        // IGC's writes fail silently on a full filesystem: the collector
        // then trusts no dump of this module.
        if let Some(free) = crate::output::space_left_if_low(cfg) {
            line.extend_from_slice(format!(",\"space_left\":{free}").as_bytes());
        }
        push_binary(&mut line, "binary", &binary, &mut r.out);
        if let Some(rebuilt) = &rebuilt {
            push_binary(&mut line, "built_binary", rebuilt, &mut r.out);
        }
        if api == Api::OpenCl {
            push_program_from(&mut line, r.programs.get(&handle));
        }
        line.extend_from_slice(b"}\n");
        r.out.event(&line, true);
    });
}

/// With IGC 1's light dumps ([`Config::igc1_light`]), the module's SPIR-V
/// as IGC's full dumps would have written it: `OCL_asm<hash>.spv` in the
/// dump folder, where the collector ties IGC's module hash to the module.
fn write_igc1_spv(spirv: &[u8]) {
    let Some(cfg) = config::get().filter(|c| c.igc1_light) else {
        return;
    };
    let name = xpu_asm_record::igc1_spv_file_name(spirv);
    if let Err(e) = crate::output::write_once(&cfg.dump_dir_abs, &name, spirv) {
        crate::output::warn(&format!(
            "cannot write {name}: {e}; the collector takes that module's ISA from its binary"
        ));
    }
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

/// `,"<key>":{...}`: a binary's size, hash and the file it is saved in, or
/// why there is no binary or no file. Saves the binary (once per content).
fn push_binary(
    line: &mut Vec<u8>,
    key: &str,
    binary: &Result<(&[u8], String), String>,
    out: &mut Output,
) {
    line.push(b',');
    push_json_str(line, key);
    line.extend_from_slice(b":{");
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

/// A kernel was created successfully: map its handle to its data (its
/// counter, its shapes). `slm_static` is its static local memory per
/// group, as the driver says.
pub fn kernel_created(module: usize, name: &[u8], handle: usize, slm_static: Option<u32>) {
    with_registry(|r, _| {
        let id = kernel_id(r, module, name, slm_static);
        let counter = r.out.counter(id);
        if counter.is_null() {
            return;
        }
        // SAFETY: the registry lock is held.
        let h = unsafe { crate::shapes::handle_created(handle, id, counter as usize) };
        MAPS.kernels.set(handle, h);
    });
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

/// The data of kernel handle `kernel` (`None`: never seen created).
pub fn kernel_handle(kernel: usize) -> Option<&'static crate::shapes::KernelHandle> {
    match MAPS.kernels.get(kernel) {
        0 => None,
        // SAFETY: a value of the kernel map.
        h => Some(unsafe { crate::shapes::at(h) }),
    }
}

/// The record's id of kernel `name` of `module`, writing its `kernel`
/// event the first time (a kernel created again keeps its id and counter).
fn kernel_id(r: &mut Registry, module: usize, name: &[u8], slm_static: Option<u32>) -> u32 {
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
    if let Some(slm) = slm_static {
        line.extend_from_slice(format!(",\"slm_static\":{slm}").as_bytes());
    }
    line.extend_from_slice(b"}\n");
    r.out.event(&line, true);
    id
}

/// A kernel is about to be destroyed: forget its handle (the driver may hand
/// it out again for another kernel).
pub fn kernel_destroyed(handle: usize) {
    with_registry(|_, _| MAPS.kernels.set(handle, 0));
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
pub unsafe fn launch(list: usize, kernel: usize, gc: *const crate::ffi::GroupCount) {
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
pub fn launch_with(list: usize, kernel: usize, gc: crate::ffi::GroupCount) {
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
unsafe fn launch_handle(h: usize, list: usize, gc: *const crate::ffi::GroupCount) {
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
extern "C" fn shape_miss(h: usize, list: usize, gc: *const crate::ffi::GroupCount) {
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
extern "C" fn kernel_further(list: usize, kernel: usize, gc: *const crate::ffi::GroupCount) {
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

/// The `ListState` of the graph a [`PROBE`]d immediate list records into,
/// per the driver (mapping the list to it), or 0 when it does not capture.
fn forked_state(list: usize) -> usize {
    let Some(Some(graph)) = crate::queries::capture_graph(list) else {
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
pub fn execute_handles(lists: &[crate::ffi::Handle]) {
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
pub fn immediate_append(immediate: usize, lists: &[crate::ffi::Handle]) {
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

/// `zeGraphCreateExt`: an empty graph (a reused handle starts again).
pub fn graph_created(graph: usize) {
    with_registry(|r, _| {
        r.warned.remove(&graph);
        r.graphs.insert(graph, new_state());
    });
}

/// A capture began on `list`: into `graph` (`zeCommandListBeginCaptureIntoGraphExt`,
/// or the new graph the driver reports for `zeCommandListBeginGraphCaptureExt`;
/// `None` when it cannot say). The list's appends go to the graph from now
/// on; every other immediate list is probed until no capture is active.
pub fn capture_began(list: usize, graph: Option<usize>) {
    with_registry(|r, _| {
        let state = match graph {
            Some(g) if g != 0 => *r.graphs.entry(g).or_insert_with(new_state),
            _ => new_state(),
        };
        if r.captures.is_empty() {
            for &l in &r.immediate {
                if MAPS.lists.get(l) == 0 {
                    MAPS.lists.set(l, probe());
                }
            }
        }
        let before = MAPS.lists.get(list);
        if let Some(old) = r.captures.insert(list, Capture { state, before }) {
            // Begun twice without an end: the first capture's appends stay
            // with its graph.
            r.captures.insert(
                list,
                Capture {
                    state,
                    before: old.before,
                },
            );
        }
        MAPS.lists.set(list, state);
    });
}

/// A capture ended on its primary `list`, with `graph` the graph it made.
pub fn capture_ended(list: usize, graph: usize) {
    with_registry(|r, _| {
        let Some(c) = r.captures.remove(&list) else {
            warn_once(r, list, || {
                format!(
                    "zeCommandListEndGraphCaptureExt on command list {list:#x}, whose capture xpu-asm did not see begin: \
                     the launches of graph {graph:#x} are not counted"
                )
            });
            return;
        };
        // A fork may have met the graph's handle first (the driver named it
        // only then): its appends join the capture's.
        if let Some(&other) = r.graphs.get(&graph) {
            if other != c.state {
                let runs = std::mem::take(
                    &mut *state_at(other)
                        .runs
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                );
                extend(c.state, &runs);
            }
        }
        r.warned.remove(&graph);
        r.graphs.insert(graph, c.state);
        end_capture(r, list, c);
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

/// `zeGraphInstantiateExt`: the executable graph runs what `graph` captured
/// (a copy: the graph may be destroyed before it).
pub fn graph_instantiated(graph: usize, executable: usize) {
    with_registry(|r, _| {
        r.warned.remove(&executable);
        match r.graphs.get(&graph) {
            Some(&g) => {
                let state = new_state();
                extend(state, &runs_of(g));
                MAPS.executables.set(executable, state);
            }
            None => {
                MAPS.executables.set(executable, 0);
                warn_once(r, executable, || {
                    format!(
                        "zeGraphInstantiateExt: graph {graph:#x} was not captured where xpu-asm could see it \
                         (created or captured through functions xpu-asm does not hook); \
                         the launches of executable graph {executable:#x} are not counted"
                    )
                });
            }
        }
    });
}

/// `zeCommandListAppendGraphExt`: the executable graph runs once on an
/// immediate list (its launches counted now), each time a regular list it
/// is appended to is executed, or as part of a graph being captured.
pub fn graph_appended(list: usize, executable: usize) {
    let e = MAPS.executables.get(executable);
    if e == 0 {
        return unknown_executable(list, executable);
    }
    match list_state(list) {
        0 => {
            if let Ok(runs) = state_at(e).runs.lock() {
                launch_runs(&runs);
            }
        }
        l => extend(l, &runs_of(e)),
    }
}

#[cold]
#[inline(never)]
fn unknown_executable(list: usize, executable: usize) {
    with_registry(|r, _| {
        warn_once(r, executable, || {
            format!(
                "zeCommandListAppendGraphExt: executable graph {executable:#x} (appended to command list {list:#x}) \
                 was not instantiated from a graph captured where xpu-asm could see it; its launches are not counted"
            )
        })
    });
}

/// `zeGraphDestroyExt`: forgotten (its handle may come back for another).
pub fn graph_destroyed(graph: usize) {
    with_registry(|r, _| {
        if let Some(g) = r.graphs.remove(&graph) {
            if !r.captures.values().any(|c| c.state == g) {
                if let Ok(mut runs) = state_at(g).runs.lock() {
                    *runs = Vec::new();
                }
            }
        }
    });
}

/// `zeExecutableGraphDestroyExt`: forgotten (its handle may come back).
pub fn executable_destroyed(executable: usize) {
    with_registry(|r, _| {
        r.warned.remove(&executable);
        let e = MAPS.executables.get(executable);
        MAPS.executables.set(executable, 0);
        if e != 0 {
            if let Ok(mut runs) = state_at(e).runs.lock() {
                *runs = Vec::new();
            }
        }
    });
}

/// `zeCommandListGetNextCommandId[WithKernels]Exp`: the next append to the
/// mutable `list` is command `id`, whose kernel may become one of `kernels`.
pub fn command_id(list: usize, id: u64, kernels: &[crate::ffi::Handle]) {
    let l = MAPS.lists.get(list);
    if l == 0 || l == probe() {
        return;
    }
    let position = state_at(l)
        .runs
        .lock()
        .map(|runs| runs.iter().map(|&(_, n)| n).sum())
        .unwrap_or(0);
    let kernels = kernels.iter().map(|&k| k as usize).collect();
    with_registry(|r, _| {
        let commands = r.commands.entry(list).or_insert_with(|| {
            MUTABLE_LISTS.fetch_add(1, Relaxed);
            HashMap::new()
        });
        commands.insert(id, Command { position, kernels });
    });
}

/// `zeCommandListUpdateMutableCommandKernelsExp`: command `ids[i]` of `list`
/// runs `kernels[i]` from the list's next execution on (counted as appended
/// once). `refused` is the driver's answer when it refused the update:
/// nothing changes, commands never handed out are reported.
pub fn kernels_swapped(
    list: usize,
    ids: &[u64],
    kernels: &[crate::ffi::Handle],
    refused: Option<u32>,
) {
    let l = MAPS.lists.get(list);
    // Before the lock: finding a counter may create the record.
    let counters: Vec<Option<&'static Counter>> = match refused {
        None => kernels.iter().map(|&k| counter_of(k as usize)).collect(),
        Some(_) => Vec::new(),
    };
    with_registry(|r, _| {
        for (i, (&id, &kernel)) in ids.iter().zip(kernels).enumerate() {
            let kernel = kernel as usize;
            let Some(cmd) = r.commands.get(&list).and_then(|m| m.get(&id)) else {
                let answer = match refused {
                    Some(e) => format!("the driver refused it (0x{e:x})"),
                    None => "the driver accepted it, but its launches stay with the old kernel"
                        .to_string(),
                };
                crate::output::warn(&format!(
                    "zeCommandListUpdateMutableCommandKernelsExp: command id {id} of command list {list:#x} \
                     was never handed out by zeCommandListGetNextCommandIdExp or \
                     zeCommandListGetNextCommandIdWithKernelsExp; {answer}"
                ));
                continue;
            };
            if refused.is_some() {
                continue;
            }
            if !cmd.kernels.is_empty() && !cmd.kernels.contains(&kernel) {
                crate::output::warn(&format!(
                    "zeCommandListUpdateMutableCommandKernelsExp: kernel {kernel:#x} is not one of the {} kernels \
                     zeCommandListGetNextCommandIdWithKernelsExp listed for command {id} of command list {list:#x}; \
                     the driver accepted it, and its launches are counted for that kernel",
                    cmd.kernels.len()
                ));
            }
            let position = cmd.position;
            if l == 0 || l == probe() {
                continue;
            }
            let Some(c) = counters.get(i).copied().flatten() else {
                continue;
            };
            c.regular_appended.fetch_add(1, Relaxed);
            if let Ok(mut runs) = state_at(l).runs.lock() {
                set_run_at(&mut runs, position, c as *const Counter as usize);
            }
        }
    });
}

/// Makes the launch at `position` of `runs` one of counter `key`.
fn set_run_at(runs: &mut Vec<(usize, u64)>, position: u64, key: usize) {
    let mut start = 0;
    for i in 0..runs.len() {
        let (k, n) = runs[i];
        if position >= start + n {
            start += n;
            continue;
        }
        if k == key {
            return;
        }
        let before = position - start;
        let after = n - before - 1;
        let mut parts = Vec::with_capacity(3);
        if before > 0 {
            parts.push((k, before));
        }
        parts.push((key, 1));
        if after > 0 {
            parts.push((k, after));
        }
        runs.splice(i..=i, parts);
        return;
    }
}

// OpenCL (docs/internals.md, "OpenCL"): a program is a module once built,
// its kernels are kernels, and an enqueue is a launch, counted as an append
// to an immediate list is.

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

/// An OpenCL program was created from `input` (`kind`: `source`, `il`,
/// `binary`). A handle seen before is a new program: its old module is
/// forgotten until this one is built.
pub fn program_created(handle: usize, kind: &'static str, input: &[u8]) {
    let from = ProgramFrom::Input {
        kind,
        size: input.len(),
        sha256: sha256_hex(input),
    };
    with_registry(|r, _| {
        r.modules.remove(&handle);
        r.programs.insert(handle, from);
    });
}

/// `clLinkProgram` made program `handle` of `inputs`.
pub fn program_linked(handle: usize, inputs: &[usize]) {
    with_registry(|r, _| {
        let from = inputs
            .iter()
            .map(|i| {
                r.programs
                    .get(i)
                    .cloned()
                    .unwrap_or(ProgramFrom::Link(Vec::new()))
            })
            .collect();
        r.modules.remove(&handle);
        r.programs.insert(handle, ProgramFrom::Link(from));
    });
}

/// Whether OpenCL program `handle` is recorded as a module (built where
/// the interposer saw it, or recorded since).
pub fn program_recorded(handle: usize) -> bool {
    with_registry(|r, _| r.modules.contains_key(&handle)).unwrap_or(true)
}

/// Program `handle` has no binary after a build (an asynchronous build
/// still running, a failed one): its kernels' creation records it.
pub fn program_unbuilt(handle: usize) {
    with_registry(|r, _| r.modules.remove(&handle));
}

/// What a built OpenCL program holds.
pub struct BuiltProgram<'a> {
    pub handle: usize,
    /// `CL_PROGRAM_BINARIES`: what the driver runs.
    pub binary: &'a [u8],
    /// The SPIR-V IGC compiled, carried in the binary (`None`: a binary
    /// without it, which IGC did not compile).
    pub spirv: Option<&'a [u8]>,
    pub build_flags: &'a [u8],
    pub kernel_names: &'a [Vec<u8>],
}

/// An OpenCL program was built (or linked): a module, of the SPIR-V IGC
/// compiled when its binary carries it (so that its dumps are found as a
/// Level Zero module's are), else of its binary; `binary` is its binary.
pub fn program_built(p: BuiltProgram, device: DeviceRef) {
    let input = [ModuleInput {
        bytes: p.spirv.unwrap_or(p.binary),
        build_flags: p.build_flags,
    }];
    let module = CreatedModule {
        handle: p.handle,
        format: match p.spirv {
            Some(_) => crate::ffi::ZE_MODULE_FORMAT_IL_SPIRV,
            None => crate::ffi::ZE_MODULE_FORMAT_NATIVE,
        },
        inputs: &input,
        kernel_names: p.kernel_names,
        api: Api::OpenCl,
    };
    module_built(module, Ok(p.binary), None, device);
}

/// `,"api":"opencl","from":..`: what an OpenCL program was made from.
fn push_program_from(line: &mut Vec<u8>, from: Option<&ProgramFrom>) {
    line.extend_from_slice(b",\"api\":\"opencl\",");
    match from {
        Some(f) => push_from_fields(line, f),
        None => line.extend_from_slice(b"\"from\":\"unknown\""),
    }
}

/// `"from":"<kind>","from_size":N,"from_sha256":".."`, or for a link
/// `"from":"link","from_inputs":[{..},..]`.
fn push_from_fields(line: &mut Vec<u8>, from: &ProgramFrom) {
    match from {
        ProgramFrom::Input { kind, size, sha256 } => {
            line.extend_from_slice(b"\"from\":");
            push_json_str(line, kind);
            line.extend_from_slice(format!(",\"from_size\":{size},\"from_sha256\":").as_bytes());
            push_json_str(line, sha256);
        }
        ProgramFrom::Link(inputs) => {
            line.extend_from_slice(b"\"from\":\"link\",\"from_inputs\":[");
            for (i, input) in inputs.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.push(b'{');
                push_from_fields(line, input);
                line.push(b'}');
            }
            line.push(b']');
        }
    }
}

/// `clCloneKernel`: the clone counts with the kernel it was cloned from.
pub fn kernel_cloned(source: usize, clone: usize) {
    with_registry(|_, _| match MAPS.kernels.get(source) {
        0 => MAPS.kernels.set(clone, 0),
        // SAFETY: the registry lock is held; a value of the kernel map.
        s => MAPS
            .kernels
            .set(clone, unsafe { crate::shapes::handle_cloned(s, clone) }),
    });
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
