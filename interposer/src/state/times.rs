//! Device times' blocks in the counts file (`xpu_asm_record::times`): one
//! per kernel and shape with a launch chosen for timing, beside the
//! shape's slot pair, so that a kill loses no time as it loses no count.
//!
//! The APIs' timing (`ze::time`, `cl::time`) finds a launch's block by the
//! counter slot the launch counts in ([`block_for`]), and adds into it,
//! with atomic adds, what it learns: a launch chosen ([`Block::sampled`]),
//! its device time ([`Block::timed`]) or why it has none
//! ([`Block::not_timed`]). A block is made (its slots from the kernel ids'
//! sequence, in one chunk; its layout word, then its tag, written first)
//! under the registry lock, the first time one of its launches is chosen.

use super::with_registry;
use crate::blocks::{blocks, Block};
use xpu_asm_record::times::{block_start, BLOCK_SLOTS, MAX_TIMED_SHAPES};

/// The block of the launches that count in the counter slot `slot` (of
/// kernel `kernel`, whose own counter is `counter`), made when it has
/// none; a kernel past [`MAX_TIMED_SHAPES`] blocks gives its further
/// shapes' launches its own counter's block. `None` when no counter
/// memory can be had.
pub fn block_for(slot: usize, kernel: u32, counter: usize) -> Option<&'static Block> {
    with_registry(|r, _| {
        // SAFETY: the registry lock is held.
        let b = unsafe { blocks() };
        if let Some(found) = b.by_slot.get(&slot) {
            return Some(*found);
        }
        let full =
            slot != counter && b.per_kernel.get(&kernel).copied().unwrap_or(0) >= MAX_TIMED_SHAPES;
        let owner_slot = if full { counter } else { slot };
        if let Some(found) = b.by_slot.get(&owner_slot) {
            let found = *found;
            b.by_slot.insert(slot, found);
            return Some(found);
        }
        let owner = r.out.slot_id(owner_slot)?;
        let first = block_start(r.next_kernel);
        let last = first + BLOCK_SLOTS as u32 - 1;
        if r.out.counter(last).is_null() {
            return None;
        }
        r.next_kernel = last + 1;
        // SAFETY: BLOCK_SLOTS fresh slots of one chunk, in a mapping never
        // unmapped (a forked child replaces it in place).
        let block = unsafe { &*(r.out.counter(first) as *const Block) };
        block.tag(owner);
        b.made.push((block, owner));
        if owner_slot != counter {
            *b.per_kernel.entry(kernel).or_default() += 1;
        }
        b.by_slot.insert(owner_slot, block);
        b.by_slot.insert(slot, block);
        Some(block)
    })
    .flatten()
}

/// Appends an event line about timing (a device's timer) to the record,
/// kept for a forked child's record and a record made again.
pub fn event(line: &[u8]) {
    with_registry(|r, _| r.out.event(line, true));
}
