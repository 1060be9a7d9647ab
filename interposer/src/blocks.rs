//! Device times' blocks (`xpu_asm_record::times`), as mapped in the
//! counts file, and which counter slot's launches each one times: made
//! by the state (`state::times`), with the registry lock held, and added
//! into by the APIs' timing with atomic adds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use xpu_asm_record::times::{
    bucket_of, layout_word, time_tag, NotTimed, BLOCK_SLOTS, BLOCK_WORDS, W_BUCKETS, W_LAYOUT,
    W_MAX, W_MIN_NOT, W_NOT_TIMED, W_SAMPLED, W_TAG, W_TIMED, W_TOTAL,
};

/// One time block, as mapped in the counts file.
#[repr(C)]
pub struct Block {
    w: [AtomicU64; BLOCK_WORDS],
}

impl Block {
    /// A launch was chosen for timing.
    pub fn sampled(&self) {
        self.w[W_SAMPLED].fetch_add(1, Relaxed);
    }

    /// A chosen launch took `ns` on the device.
    pub fn timed(&self, ns: u64) {
        self.w[W_TOTAL].fetch_add(ns, Relaxed);
        self.w[W_MAX].fetch_max(ns, Relaxed);
        self.w[W_MIN_NOT].fetch_max(!ns, Relaxed);
        self.w[W_BUCKETS + bucket_of(ns)].fetch_add(1, Relaxed);
        // Last: a reader that sees it counted sees its time.
        self.w[W_TIMED].fetch_add(1, Relaxed);
    }

    /// A chosen launch has no device time, for `why`.
    pub fn not_timed(&self, why: NotTimed) {
        self.w[W_NOT_TIMED + why.index()].fetch_add(1, Relaxed);
    }

    /// Writes the layout and the tag (a fresh block, or one a forked
    /// child's zeroed counts hold again).
    pub fn tag(&self, owner: u32) {
        self.w[W_LAYOUT].store(layout_word(), Relaxed);
        self.w[W_TAG].store(time_tag(owner), Relaxed);
    }
}

/// The blocks made.
#[derive(Default)]
pub struct Blocks {
    /// Counter slot address (a shape's head, or a kernel's counter) -> its block.
    pub by_slot: HashMap<usize, &'static Block>,
    /// Kernel id -> blocks made for its shapes.
    pub per_kernel: HashMap<u32, usize>,
    /// Every block made, with its owner: tagged again in a forked child.
    pub made: Vec<(&'static Block, u32)>,
}

/// Only touched with the registry lock held.
struct Locked(std::cell::UnsafeCell<Option<Blocks>>);
// SAFETY: only touched inside `with_registry`, which holds the registry lock.
unsafe impl Sync for Locked {}

static BLOCKS: Locked = Locked(std::cell::UnsafeCell::new(None));

/// # Safety
/// The registry lock is held, and no other reference is alive.
#[allow(clippy::mut_from_ref)]
pub unsafe fn blocks() -> &'static mut Blocks {
    // SAFETY: per this function's contract.
    unsafe { (*BLOCKS.0.get()).get_or_insert_with(Blocks::default) }
}

/// In a forked child (counts remapped zeroed at the same addresses): each
/// block made is tagged again.
///
/// # Safety
/// The registry lock is held.
pub unsafe fn after_fork() {
    // SAFETY: per this function's contract.
    for (block, owner) in unsafe { &blocks().made } {
        block.tag(*owner);
    }
}

const _: () =
    assert!(std::mem::size_of::<Block>() == BLOCK_SLOTS * xpu_asm_record::COUNTS_SLOT_LEN);
