//! The Level Zero functions timing calls itself, and where they come from.
//!
//! A handle belongs to the level that made it: the loader's (one of
//! several drivers: its own handles) or a driver's. A hook's real function
//! is of that level, so timing calls the functions of the same object as
//! the hook's real function: those its tables gave (learned when the
//! interposer wraps them, [`learn`]), or else found by name in that object
//! (the loader and NEO export every function). One object's functions are
//! a [`Fns`].

use crate::common::Handle;
use crate::ze::ffi::*;
use std::ffi::{c_void, CStr};
use std::sync::Mutex;

/// The functions timing calls, of one object (0: not known).
#[derive(Clone, Copy, Default, Debug)]
pub struct Fns {
    pub pool_create: usize,
    pub event_create: usize,
    pub host_reset: usize,
    pub query_timestamp: usize,
    pub device_properties: usize,
    pub append_barrier: usize,
}

impl Fns {
    /// Whether events can be made and read with these.
    pub fn complete(&self) -> bool {
        self.pool_create != 0
            && self.event_create != 0
            && self.host_reset != 0
            && self.query_timestamp != 0
            && self.device_properties != 0
    }
}

/// Each object met, by its load address, with its functions.
static FAMILIES: Mutex<Vec<(usize, Fns)>> = Mutex::new(Vec::new());

/// Load address of the object that contains `addr`, and its path.
fn object_of(addr: usize) -> Option<(usize, std::ffi::CString)> {
    // SAFETY: dladdr only reads the dynamic linker's tables; info is plain data.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if addr == 0 || libc::dladdr(addr as *const c_void, &mut info) == 0 {
            return None;
        }
        let name = match info.dli_fname.is_null() {
            true => std::ffi::CString::default(),
            false => CStr::from_ptr(info.dli_fname).to_owned(),
        };
        Some((info.dli_fbase as usize, name))
    }
}

/// A table of object `entry`'s was filled: `set` keeps what it has.
pub fn learn(entry: usize, set: impl FnOnce(&mut Fns)) {
    let Some((base, _)) = object_of(entry) else {
        return;
    };
    let Ok(mut f) = FAMILIES.lock() else { return };
    match f.iter_mut().find(|(b, _)| *b == base) {
        Some((_, fns)) => set(fns),
        None => {
            let mut fns = Fns::default();
            set(&mut fns);
            f.push((base, fns));
        }
    }
}

/// The functions of the object whose function `real` is, and that
/// object's load address (which tells the events made with them apart).
pub fn of(real: usize) -> Option<(usize, Fns)> {
    if let Some(found) = known_complete(real) {
        return Some(found);
    }
    let (base, path) = object_of(real)?;
    remember_base(real, base);
    let mut f = FAMILIES.lock().ok()?;
    let known = f.iter().position(|(b, _)| *b == base);
    if let Some(i) = known {
        if f[i].1.complete() {
            return Some(f[i]);
        }
    }
    let by_name = by_name(&path);
    let fns = match known {
        Some(i) => {
            fill_from(&mut f[i].1, &by_name);
            f[i].1
        }
        None => {
            f.push((base, by_name));
            by_name
        }
    };
    fns.complete().then_some((base, fns))
}

/// Real functions met, with their object's load address: `dladdr` once per
/// function, not per timed launch (it was 17,705 of a timed launch's 20,228
/// instructions). The hooks' real functions are the loader's and the
/// drivers', which stay loaded; a few of them per process.
static BASES: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
const BASES_MAX: usize = 64;

fn remember_base(real: usize, base: usize) {
    if let Ok(mut b) = BASES.lock() {
        if b.len() < BASES_MAX && !b.iter().any(|&(r, _)| r == real) {
            b.push((real, base));
        }
    }
}

/// The complete functions of `real`'s object, when both are known already.
fn known_complete(real: usize) -> Option<(usize, Fns)> {
    let base = BASES
        .lock()
        .ok()?
        .iter()
        .find(|&&(r, _)| r == real)
        .map(|&(_, b)| b)?;
    let f = FAMILIES.lock().ok()?;
    f.iter()
        .find(|(b, fns)| *b == base && fns.complete())
        .copied()
}

/// What `have` lacks, from `more`.
fn fill_from(have: &mut Fns, more: &Fns) {
    let pick = |a: &mut usize, b: usize| {
        if *a == 0 {
            *a = b
        }
    };
    pick(&mut have.pool_create, more.pool_create);
    pick(&mut have.event_create, more.event_create);
    pick(&mut have.host_reset, more.host_reset);
    pick(&mut have.query_timestamp, more.query_timestamp);
    pick(&mut have.device_properties, more.device_properties);
    pick(&mut have.append_barrier, more.append_barrier);
}

/// The functions an object exports by their names (the loader's, NEO's).
fn by_name(path: &CStr) -> Fns {
    // SAFETY: a path of an object already loaded; RTLD_NOLOAD only takes a
    // reference to it, released below.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if h.is_null() {
        return Fns::default();
    }
    let get = |name: &CStr| crate::real::lookup(h, name) as usize;
    let fns = Fns {
        pool_create: get(c"zeEventPoolCreate"),
        event_create: get(c"zeEventCreate"),
        host_reset: get(c"zeEventHostReset"),
        query_timestamp: get(c"zeEventQueryKernelTimestamp"),
        device_properties: get(c"zeDeviceGetProperties"),
        append_barrier: get(c"zeCommandListAppendBarrier"),
    };
    // SAFETY: balances the dlopen above.
    unsafe { libc::dlclose(h) };
    fns
}

type PoolCreate =
    unsafe extern "C" fn(Handle, *const EventPoolDesc, u32, *mut Handle, *mut Handle) -> ZeResult;
type EventCreate = unsafe extern "C" fn(Handle, *const EventDesc, *mut Handle) -> ZeResult;
type OneHandle = unsafe extern "C" fn(Handle) -> ZeResult;
type QueryTimestamp = unsafe extern "C" fn(Handle, *mut KernelTimestampResult) -> ZeResult;
type DeviceProps = unsafe extern "C" fn(Handle, *mut DeviceProperties) -> ZeResult;
type Barrier = unsafe extern "C" fn(Handle, Handle, u32, *mut Handle) -> ZeResult;

/// Events in each pool timing makes.
pub const POOL_EVENTS: u32 = 256;

impl Fns {
    /// A pool of [`POOL_EVENTS`] kernel timestamp events, visible to the
    /// host, on every device of `context`.
    pub fn make_pool(&self, context: usize) -> Result<usize, ZeResult> {
        let desc = EventPoolDesc {
            stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
            p_next: std::ptr::null(),
            flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
            count: POOL_EVENTS,
        };
        let mut pool: Handle = std::ptr::null_mut();
        // SAFETY: a real zeEventPoolCreate of the object the context is of;
        // the descriptor and the handle are this frame's.
        let r = unsafe {
            std::mem::transmute::<usize, PoolCreate>(self.pool_create)(
                context as Handle,
                &desc,
                0,
                std::ptr::null_mut(),
                &mut pool,
            )
        };
        match r {
            ZE_RESULT_SUCCESS => Ok(pool as usize),
            e => Err(e),
        }
    }

    /// Event `index` of `pool`, signaled and waited on at the host's scope.
    pub fn make_event(&self, pool: usize, index: u32) -> Result<usize, ZeResult> {
        let desc = EventDesc {
            stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
            p_next: std::ptr::null(),
            index,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
        };
        let mut event: Handle = std::ptr::null_mut();
        // SAFETY: a real zeEventCreate of the pool's object.
        let r = unsafe {
            std::mem::transmute::<usize, EventCreate>(self.event_create)(
                pool as Handle,
                &desc,
                &mut event,
            )
        };
        match r {
            ZE_RESULT_SUCCESS => Ok(event as usize),
            e => Err(e),
        }
    }

    /// `zeEventHostReset` of one of timing's own events.
    pub fn reset(&self, event: usize) {
        // SAFETY: a real zeEventHostReset of the event's object.
        unsafe { std::mem::transmute::<usize, OneHandle>(self.host_reset)(event as Handle) };
    }

    /// The event's kernel timestamp: `Ok(None)` while it is not ready
    /// (`zeEventQueryKernelTimestamp` never waits).
    pub fn timestamp(&self, event: usize) -> Result<Option<KernelTimestampResult>, ZeResult> {
        let mut t = KernelTimestampResult::default();
        // SAFETY: a real zeEventQueryKernelTimestamp of the event's object.
        let r = unsafe {
            std::mem::transmute::<usize, QueryTimestamp>(self.query_timestamp)(
                event as Handle,
                &mut t,
            )
        };
        match r {
            ZE_RESULT_SUCCESS => Ok(Some(t)),
            ZE_RESULT_NOT_READY => Ok(None),
            e => Err(e),
        }
    }

    /// The device's timer: ticks per second (`timerResolution` with the
    /// 1.2 properties type) and `kernelTimestampValidBits`.
    pub fn timer(&self, device: usize) -> Option<(u64, u32)> {
        // SAFETY: DeviceProperties is plain data; zero is a valid value.
        let mut p: DeviceProperties = unsafe { std::mem::zeroed() };
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
        // SAFETY: a real zeDeviceGetProperties of the device's object.
        let r = unsafe {
            std::mem::transmute::<usize, DeviceProps>(self.device_properties)(
                device as Handle,
                &mut p,
            )
        };
        (r == ZE_RESULT_SUCCESS && p.timer_resolution != 0 && p.kernel_timestamp_valid_bits != 0)
            .then_some((p.timer_resolution, p.kernel_timestamp_valid_bits))
    }

    /// A barrier on `list` that signals `event` (the workload's): on an
    /// in-order list, right after the kernel before it.
    pub fn barrier(&self, list: usize, event: usize) -> ZeResult {
        if self.append_barrier == 0 {
            return ZE_RESULT_ERROR_UNINITIALIZED;
        }
        // SAFETY: a real zeCommandListAppendBarrier of the list's object.
        unsafe {
            std::mem::transmute::<usize, Barrier>(self.append_barrier)(
                list as Handle,
                event as Handle,
                0,
                std::ptr::null_mut(),
            )
        }
    }
}
