//! Launch shapes: per kernel handle, the work-group size and the arguments
//! set with a size and no value; per kernel, the table of the distinct
//! shapes its launches had, each a slot pair in the counts file
//! (`xpu_asm_record::shapes`).
//!
//! The launch path finds a kernel handle's [`KernelHandle`] in the kernel
//! map (where the kernel's counter was) and compares the launch's group
//! count with the handle's last one: equal, the launch counts in the slot
//! that shape has, as it counted in the kernel's counter before (the same
//! add, at another address). Another group count, a group size or a NULL
//! argument set since, looks the shape up in its kernel's table (no lock;
//! a new shape takes the registry lock once), and caches it for the next
//! launch. A kernel with [`MAX_SHAPES`] shapes counts further shapes in
//! its own counter: its "other shapes".
//!
//! A handle is used by one thread at a time (Level Zero's rule for
//! kernels), so its cache is plain data in atomics (no torn word); a race
//! the program is not allowed makes a launch count in a wrong shape of
//! the right kernel, never anywhere else.

use crate::common::GroupCount;
use crate::output::Counter;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use xpu_asm_record::shapes::{
    head_tag, ShapeKey, FLAG_INDIRECT, FLAG_NO_GROUP_SIZE, FLAG_OPENCL, MAX_SHAPES,
};

/// The cache's `gc_z` when it holds no shape: no group count's `z` (a
/// `u32`) reads as it.
const NO_SHAPE: u64 = 1 << 32;
/// Arguments past this index are not told apart (their sizes still add).
const ARGS: usize = 64;

/// What the interposer keeps per kernel handle; the kernel map's value.
#[repr(C)]
pub struct KernelHandle {
    /// The last launch's group count, `x | y << 32` (`#[repr(C)]`: the
    /// launch path compares the group count's first 8 bytes with it).
    gc_xy: AtomicU64,
    /// Its `z`, or [`NO_SHAPE`].
    gc_z: AtomicU64,
    /// The slot that shape counts in.
    slot: AtomicUsize,
    /// The kernel's shapes.
    kernel: &'static KernelShapes,
    group_size: [AtomicU32; 3],
    null_args: AtomicU64,
    null_sizes: [AtomicU32; ARGS],
    /// NULL-valued arguments at index 64 or above, their sizes summed.
    null_more: AtomicU32,
    /// OpenCL's cache: the last enqueue's global and local sizes (local
    /// `usize::MAX`: NULL), valid while `gc_z` is not [`NO_SHAPE`], and
    /// its slot in `cl_slot`.
    cl_last: [AtomicUsize; 6],
    cl_slot: AtomicUsize,
}

/// Shapes whose heads a kernel keeps inline; the rest, up to
/// [`MAX_SHAPES`], in [`More`], allocated when the kernel meets its
/// `INLINE + 1`th shape (264 bytes per kernel, 2 KiB more for a kernel
/// with more shapes).
const INLINE: usize = 32;
type More = [AtomicUsize; MAX_SHAPES - INLINE];

/// One kernel's shapes (per kernel id, shared by its handles).
pub struct KernelShapes {
    id: u32,
    /// The kernel's counter: launches of other shapes.
    counter: usize,
    /// Shapes made: heads `0..n` are set (`more` is, when `n > INLINE`).
    n: AtomicUsize,
    /// Head slots of its first shapes.
    heads: [AtomicUsize; INLINE],
    /// Head slots of its further shapes (null until needed; never freed).
    more: AtomicPtr<More>,
}

/// Data only touched with the registry lock held (`state::with_registry`,
/// which also holds it across `fork`).
struct Locked<T>(UnsafeCell<Option<T>>);
// SAFETY: only touched with the registry lock held (see `Locked::get`).
unsafe impl<T> Sync for Locked<T> {}

impl<T: Default> Locked<T> {
    /// # Safety
    /// The registry lock is held, and no other reference is alive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut T {
        // SAFETY: per this function's contract.
        unsafe { (*self.0.get()).get_or_insert_with(T::default) }
    }
}

#[derive(Default)]
struct Tables {
    /// Kernel id -> its shapes.
    kernels: HashMap<u32, &'static KernelShapes>,
    /// Kernel handle -> its data (reused when the driver hands the handle
    /// out again: never freed, a racing launch may still read it).
    handles: HashMap<usize, &'static KernelHandle>,
    /// Every slot pair made: (head address, kernel id, key), written again
    /// in a forked child, whose counts start zeroed.
    made: Vec<(usize, u32, ShapeKey)>,
}

static TABLES: Locked<Tables> = Locked(UnsafeCell::new(None));

/// What places a new shape's slot pair in the counts file (the registry's
/// `make_shape`, which sits above this module): handed down when the
/// record begins, before any kernel handle exists.
type Maker = fn(&'static KernelShapes, &ShapeKey) -> Option<usize>;
static MAKE: AtomicUsize = AtomicUsize::new(0);

/// Sets what places new shapes' slot pairs.
pub fn set_maker(f: Maker) {
    MAKE.store(f as usize, Release);
}

/// The handle data for kernel handle `handle` of kernel `id`, whose
/// counter is `counter` (its group size and arguments start unset).
///
/// # Safety
/// The registry lock is held.
pub unsafe fn handle_created(handle: usize, id: u32, counter: usize) -> usize {
    // SAFETY: per this function's contract.
    let t = unsafe { TABLES.get() };
    let kernel = *t.kernels.entry(id).or_insert_with(|| {
        Box::leak(Box::new(KernelShapes {
            id,
            counter,
            n: AtomicUsize::new(0),
            heads: [const { AtomicUsize::new(0) }; INLINE],
            more: AtomicPtr::new(std::ptr::null_mut()),
        }))
    });
    let h: &'static KernelHandle = match t.handles.get(&handle) {
        Some(h) => {
            // A handle handed out again: a kernel of its own now. A field
            // at a time: a launch racing it (a program bug) counts in one
            // shape or the other.
            // SAFETY: KernelHandle is only ever made here, and its `kernel`
            // is only written under the registry lock.
            unsafe {
                let p = *h as *const KernelHandle as *mut KernelHandle;
                std::ptr::addr_of_mut!((*p).kernel).write(kernel);
            }
            reset(h);
            h
        }
        None => {
            let h = Box::leak(Box::new(KernelHandle {
                gc_xy: AtomicU64::new(0),
                gc_z: AtomicU64::new(NO_SHAPE),
                slot: AtomicUsize::new(counter),
                kernel,
                group_size: [const { AtomicU32::new(0) }; 3],
                null_args: AtomicU64::new(0),
                null_sizes: [const { AtomicU32::new(0) }; ARGS],
                null_more: AtomicU32::new(0),
                cl_last: [const { AtomicUsize::new(0) }; 6],
                cl_slot: AtomicUsize::new(counter),
            }));
            t.handles.insert(handle, h);
            h
        }
    };
    h as *const KernelHandle as usize
}

/// A fresh start for a reused handle.
fn reset(h: &KernelHandle) {
    h.gc_z.store(NO_SHAPE, Relaxed);
    h.slot.store(h.kernel.counter, Relaxed);
    for g in &h.group_size {
        g.store(0, Relaxed);
    }
    h.null_args.store(0, Relaxed);
    h.null_more.store(0, Relaxed);
}

/// `clCloneKernel`: a handle of the same kernel, with the source's group
/// size and arguments.
///
/// # Safety
/// The registry lock is held; `source` is a value of the kernel map.
pub unsafe fn handle_cloned(source: usize, clone: usize) -> usize {
    // SAFETY: the kernel map's values are KernelHandles, never freed.
    let s = unsafe { &*(source as *const KernelHandle) };
    // SAFETY: per this function's contract.
    let c = unsafe { handle_created(clone, s.kernel.id, s.kernel.counter) };
    // SAFETY: as above.
    let h = unsafe { &*(c as *const KernelHandle) };
    for i in 0..3 {
        h.group_size[i].store(s.group_size[i].load(Relaxed), Relaxed);
    }
    h.null_args.store(s.null_args.load(Relaxed), Relaxed);
    for i in 0..ARGS {
        h.null_sizes[i].store(s.null_sizes[i].load(Relaxed), Relaxed);
    }
    h.null_more.store(s.null_more.load(Relaxed), Relaxed);
    c
}

/// The handle data at `h` (a value of the kernel map, not 0).
///
/// # Safety
/// `h` is a value of the kernel map.
#[inline(always)]
pub unsafe fn at(h: usize) -> &'static KernelHandle {
    // SAFETY: KernelHandles are never freed.
    unsafe { &*(h as *const KernelHandle) }
}

impl KernelHandle {
    /// The kernel's id and the address of its own counter (its launches
    /// of other shapes): what its time blocks are kept by.
    pub fn kernel_slots(&self) -> (u32, usize) {
        (self.kernel.id, self.kernel.counter)
    }

    /// The kernel's counter.
    pub fn counter(&self) -> &'static Counter {
        // SAFETY: counters live in mappings that are never unmapped.
        unsafe { &*(self.kernel.counter as *const Counter) }
    }

    /// The slot a launch with group count `*gc` counts in, when it is the
    /// last launch's shape (the launch path: two compares).
    ///
    /// # Safety
    /// `gc` points to a group count.
    #[inline(always)]
    pub unsafe fn cached(&self, gc: *const GroupCount) -> Option<usize> {
        // SAFETY: per this function's contract; GroupCount is three u32.
        let (xy, z) = unsafe { ((gc as *const u64).read_unaligned(), (*gc).z as u64) };
        if xy == self.gc_xy.load(Relaxed) && z == self.gc_z.load(Relaxed) {
            Some(self.slot.load(Relaxed))
        } else {
            None
        }
    }

    /// `zeKernelSetGroupSize` (and the group sizes of
    /// `...LaunchKernelWithArguments`).
    pub fn set_group_size(&self, x: u32, y: u32, z: u32) {
        let same = [x, y, z]
            .iter()
            .zip(&self.group_size)
            .all(|(v, g)| g.load(Relaxed) == *v);
        if !same {
            for (v, g) in [x, y, z].into_iter().zip(&self.group_size) {
                g.store(v, Relaxed);
            }
            self.gc_z.store(NO_SHAPE, Relaxed);
        }
    }

    /// Argument `index` set with `size` bytes and a NULL value (a local
    /// memory argument's size, or a null pointer).
    pub fn set_null_arg(&self, index: u32, size: usize) {
        let size = size.min(u32::MAX as usize) as u32;
        let i = index as usize;
        if i < ARGS {
            let bit = 1u64 << i;
            if self.null_args.load(Relaxed) & bit != 0 && self.null_sizes[i].load(Relaxed) == size {
                return;
            }
            self.null_sizes[i].store(size, Relaxed);
            self.null_args.fetch_or(bit, Relaxed);
        } else {
            self.null_more.fetch_add(size, Relaxed);
        }
        self.gc_z.store(NO_SHAPE, Relaxed);
    }

    /// Argument `index` set with a value: no longer NULL.
    pub fn set_arg(&self, index: u32) {
        let i = index as usize;
        if i < ARGS && self.null_args.load(Relaxed) & (1 << i) != 0 {
            self.null_args.fetch_and(!(1u64 << i), Relaxed);
            self.gc_z.store(NO_SHAPE, Relaxed);
        }
    }

    /// The key of a launch of this handle with `group_count` (`None`: an
    /// indirect launch).
    fn key(&self, group_count: Option<[u32; 3]>) -> ShapeKey {
        let clamp = |v: u32| v.min(u16::MAX as u32) as u16;
        let mask = self.null_args.load(Relaxed);
        // Only the arguments set without a value (most kernels: none).
        let mut bytes = self.null_more.load(Relaxed);
        let mut rest = mask;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            bytes = bytes.saturating_add(self.null_sizes[i].load(Relaxed));
            rest &= rest - 1;
        }
        ShapeKey {
            group_size: [0, 1, 2].map(|i| clamp(self.group_size[i].load(Relaxed))),
            flags: if group_count.is_none() {
                FLAG_INDIRECT
            } else {
                0
            },
            group_count: group_count.unwrap_or([0; 3]),
            null_args: mask,
            null_bytes: bytes,
        }
    }

    /// The slot a Level Zero launch with group count `gc` (NULL: indirect)
    /// counts in, found in the kernel's table (or made there) and cached
    /// for the next launch.
    ///
    /// # Safety
    /// `gc` is NULL or points to a group count.
    pub unsafe fn slot_for(&self, gc: *const GroupCount) -> usize {
        // SAFETY: per this function's contract.
        let count = unsafe { gc.as_ref() }.map(|g| [g.x, g.y, g.z]);
        let slot = self.kernel.slot_of(&self.key(count));
        if let Some([x, y, z]) = count {
            self.gc_z.store(NO_SHAPE, Relaxed);
            self.gc_xy.store(x as u64 | (y as u64) << 32, Relaxed);
            self.slot.store(slot, Relaxed);
            self.gc_z.store(z as u64, Relaxed);
        }
        slot
    }

    /// The slot of an OpenCL enqueue: `local` the local size (`None`: the
    /// driver's choice), `global` the global size: the last enqueue's when
    /// the sizes are its, else found (or made) and cached.
    #[inline(always)]
    pub fn cl_slot(&self, global: [usize; 3], local: Option<[usize; 3]>) -> usize {
        let l = local.unwrap_or([usize::MAX; 3]);
        let now = [global[0], global[1], global[2], l[0], l[1], l[2]];
        if self.gc_z.load(Relaxed) != NO_SHAPE
            && (0..6).all(|i| self.cl_last[i].load(Relaxed) == now[i])
        {
            return self.cl_slot.load(Relaxed);
        }
        self.cl_miss(now, global, local)
    }

    /// The slot of a 1-D enqueue whose sizes are the last enqueue's (its
    /// cache holds them as [`cl_slot`](Self::cl_slot) does, padded with 1).
    ///
    /// # Safety
    /// `global` points to `dims` sizes; `local` is NULL or does too.
    #[inline(always)]
    pub unsafe fn cl_cached_1d(
        &self,
        dims: u32,
        global: *const usize,
        local: *const usize,
    ) -> Option<usize> {
        if dims != 1 || self.gc_z.load(Relaxed) == NO_SHAPE {
            return None;
        }
        // SAFETY: per this function's contract.
        let (g, l) = unsafe { (*global, if local.is_null() { usize::MAX } else { *local }) };
        let pad = if local.is_null() { usize::MAX } else { 1 };
        let c = &self.cl_last;
        (c[0].load(Relaxed) == g
            && c[3].load(Relaxed) == l
            && c[1].load(Relaxed) == 1
            && c[2].load(Relaxed) == 1
            && c[4].load(Relaxed) == pad
            && c[5].load(Relaxed) == pad)
            .then(|| self.cl_slot.load(Relaxed))
    }

    #[cold]
    #[inline(never)]
    fn cl_miss(&self, now: [usize; 6], global: [usize; 3], local: Option<[usize; 3]>) -> usize {
        let slot = self.cl_find(global, local);
        self.gc_z.store(NO_SHAPE, Relaxed);
        for (c, v) in self.cl_last.iter().zip(now) {
            c.store(v, Relaxed);
        }
        self.cl_slot.store(slot, Relaxed);
        self.gc_z.store(0, Relaxed);
        slot
    }

    /// [`cl_slot`](Self::cl_slot) in the kernel's table.
    fn cl_find(&self, global: [usize; 3], local: Option<[usize; 3]>) -> usize {
        let mut key = self.key(Some([1; 3]));
        key.flags |= FLAG_OPENCL;
        let clamp = |v: usize| v.min(u32::MAX as usize) as u32;
        match local {
            Some(l) => {
                key.group_size = l.map(|v| v.min(u16::MAX as usize) as u16);
                key.group_count = [0, 1, 2].map(|i| clamp(global[i].div_ceil(l[i].max(1))));
            }
            None => {
                key.flags |= FLAG_NO_GROUP_SIZE;
                key.group_size = [0; 3];
                key.group_count = global.map(clamp);
            }
        }
        self.kernel.slot_of(&key)
    }
}

impl KernelShapes {
    /// How many shapes it has (a launch's first: none).
    pub fn made(&self) -> usize {
        self.n.load(Acquire)
    }

    /// The slot of shape `key`: its slot pair, made when new and there is
    /// room, else the kernel's counter.
    fn slot_of(&'static self, key: &ShapeKey) -> usize {
        if let Some(s) = self.find(key, 0) {
            return s;
        }
        if self.n.load(Acquire) >= MAX_SHAPES {
            return self.counter;
        }
        match MAKE.load(Acquire) {
            0 => self.counter,
            f => {
                // SAFETY: only set_maker stores here, from a fn of this type.
                let f: Maker = unsafe { std::mem::transmute::<usize, Maker>(f) };
                f(self, key).unwrap_or(self.counter)
            }
        }
    }

    /// Head `i` (below `n`, read with Acquire).
    fn head(&self, i: usize) -> usize {
        match i.checked_sub(INLINE) {
            None => self.heads[i].load(Acquire),
            Some(j) => {
                let more = self.more.load(Acquire);
                if more.is_null() {
                    return 0;
                }
                // SAFETY: set once (before `n` passed INLINE), never freed.
                unsafe { (*more)[j].load(Acquire) }
            }
        }
    }

    /// The head of shape `key` among the shapes from `from` on.
    fn find(&self, key: &ShapeKey, from: usize) -> Option<usize> {
        let tail = key.tail();
        let n = self.n.load(Acquire);
        (from..n).map(|i| self.head(i)).find(|&h| {
            if h == 0 {
                return false;
            }
            // SAFETY: a published head is a slot pair in a mapping never
            // unmapped; its tail is the next 32 bytes.
            let t = unsafe { &*((h + 32) as *const [AtomicU64; 4]) };
            (0..4).all(|i| t[i].load(Relaxed) == tail[i])
        })
    }

    /// Makes shape `key`'s slot pair at `head` (two counter slots just
    /// allocated): tagged first, then its key, then published.
    ///
    /// # Safety
    /// The registry lock is held; `head` is two fresh counter slots.
    pub unsafe fn add(&self, key: &ShapeKey, head: usize) -> usize {
        let n = self.n.load(Acquire);
        if let Some(h) = self.find(key, 0) {
            return h;
        }
        if n >= MAX_SHAPES {
            return self.counter;
        }
        let slot = match n.checked_sub(INLINE) {
            None => &self.heads[n],
            Some(j) => {
                let mut more = self.more.load(Acquire);
                if more.is_null() {
                    more = Box::into_raw(Box::new(
                        [const { AtomicUsize::new(0) }; MAX_SHAPES - INLINE],
                    ));
                    self.more.store(more, Release);
                }
                // SAFETY: just set, or set before; never freed.
                unsafe { &(*more)[j] }
            }
        };
        write_pair(head, self.id, key);
        // SAFETY: per this function's contract.
        unsafe { TABLES.get() }.made.push((head, self.id, *key));
        slot.store(head, Release);
        self.n.store(n + 1, Release);
        head
    }
}

/// Writes a slot pair's tag and key (its counts are zero).
fn write_pair(head: usize, kernel: u32, key: &ShapeKey) {
    // SAFETY: two counter slots (64 bytes) in a mapping never unmapped.
    let w = unsafe { &*(head as *const [AtomicU64; 8]) };
    w[3].store(head_tag(kernel), Release);
    for (i, v) in key.tail().into_iter().enumerate() {
        w[4 + i].store(v, Release);
    }
}

/// In a forked child (counts remapped zeroed at the same addresses): every
/// slot pair made is tagged and keyed again.
///
/// # Safety
/// The registry lock is held.
pub unsafe fn after_fork() {
    // SAFETY: per this function's contract.
    for (head, kernel, key) in unsafe { &TABLES.get().made } {
        write_pair(*head, *kernel, key);
    }
}

/// The id of the kernel these shapes are of.
impl KernelShapes {
    pub fn id(&self) -> u32 {
        self.id
    }
}

/// The global and local sizes of an OpenCL enqueue of `dims` dimensions
/// (at most 3 read), each padded with 1 (local `None`: NULL, the driver's
/// choice).
///
/// # Safety
/// `global` points to `dims` sizes; `local` is NULL or does too.
pub unsafe fn nd_sizes(
    dims: u32,
    global: *const usize,
    local: *const usize,
) -> ([usize; 3], Option<[usize; 3]>) {
    let read = |p: *const usize| {
        let mut out = [1; 3];
        for (i, o) in out.iter_mut().enumerate().take(dims.min(3) as usize) {
            // SAFETY: per this function's contract.
            *o = unsafe { *p.add(i) };
        }
        out
    };
    (read(global), (!local.is_null()).then(|| read(local)))
}

/// The first `dims` (at most 3) entries of a size array, the others
/// `fill`; all `fill` for NULL.
///
/// # Safety
/// `p` is NULL or points to `dims` sizes.
pub unsafe fn sizes(p: *const usize, dims: u32, fill: usize) -> [usize; 3] {
    let mut out = [fill; 3];
    if !p.is_null() {
        for (i, o) in out.iter_mut().enumerate().take(dims.min(3) as usize) {
            // SAFETY: per this function's contract.
            *o = unsafe { *p.add(i) };
        }
    }
    out
}
