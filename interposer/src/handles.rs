//! A map from Level Zero handles to the interposer's per-object data, read on
//! every launch without locks.
//!
//! Open addressing over atomics. Readers never lock and never see freed
//! memory: all changes are made by one writer at a time (under the registry
//! lock), an outgrown table is left allocated (so memory stays within twice
//! the final table), and a removed handle keeps its key with a zero value
//! until the next rehash. A handle that is destroyed and handed out again by
//! the driver simply gets its value replaced.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

struct Slot {
    key: AtomicUsize,
    val: AtomicUsize,
}

// A template for fresh slots: each use is a new, separate value.
#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    key: AtomicUsize::new(0),
    val: AtomicUsize::new(0),
};

struct Table {
    shift: u32,
    /// `slots.len() - 1`.
    mask: usize,
    /// Keys in use, including removed ones (value 0).
    used: AtomicUsize,
    slots: &'static [Slot],
}

/// The table of a map that never had an entry: free slots, so that a
/// lookup needs no null check (every lookup ends at a free slot, whose value
/// is 0; that is also why key 0 needs no special case). Two, like every
/// table a power of two of at least 2, so that a start needs no mask.
static EMPTY_SLOTS: [Slot; 2] = [FREE, FREE];
static EMPTY: Table = Table {
    shift: 63,
    mask: 1,
    used: AtomicUsize::new(0),
    slots: &EMPTY_SLOTS,
};

impl Table {
    fn new(cap: usize) -> Table {
        debug_assert!(cap.is_power_of_two() && cap >= 16);
        Table {
            shift: 64 - cap.trailing_zeros(),
            mask: cap - 1,
            used: AtomicUsize::new(0),
            slots: Box::leak((0..cap).map(|_| FREE).collect()),
        }
    }

    /// The first slot to look at for `key`: below the table's length
    /// (`shift` is 64 minus its log2), so no mask is needed.
    #[inline(always)]
    fn start(&self, key: usize) -> usize {
        // Fibonacci hashing: handles are aligned pointers, so the low bits
        // carry nothing and the multiply spreads the rest.
        key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift
    }
}

pub struct HandleMap {
    table: AtomicPtr<Table>,
}

impl Default for HandleMap {
    fn default() -> Self {
        Self::new()
    }
}

impl HandleMap {
    pub const fn new() -> HandleMap {
        HandleMap {
            table: AtomicPtr::new(&EMPTY as *const Table as *mut Table),
        }
    }

    /// The value for `key`, or 0. Lock-free; safe from any thread. The
    /// first slot is looked at here, the rest out of line: most lookups end
    /// there (the table is at most half full), and the launch path then has
    /// no loop.
    #[inline(always)]
    pub fn get(&self, key: usize) -> usize {
        // SAFETY: tables are never freed once published.
        let t = unsafe { &*self.table.load(Ordering::Acquire) };
        let i = t.start(key);
        // SAFETY: start is below the table's length.
        let s = unsafe { &*t.slots.as_ptr().add(i) };
        let k = s.key.load(Ordering::Acquire);
        if k == key {
            return s.val.load(Ordering::Acquire);
        }
        if k == 0 {
            return 0;
        }
        Self::probe(t, key, (i + 1) & t.mask)
    }

    /// [`get`](Self::get) past the first slot.
    #[cold]
    #[inline(never)]
    fn probe(t: &Table, key: usize, mut i: usize) -> usize {
        let mask = t.mask;
        let slots = t.slots.as_ptr();
        loop {
            // SAFETY: i is masked to the table's length (a power of two).
            let s = unsafe { &*slots.add(i) };
            let k = s.key.load(Ordering::Acquire);
            if k == key {
                return s.val.load(Ordering::Acquire);
            }
            if k == 0 {
                return 0;
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets the value of `key` (0 removes it). Callers serialize all writes
    /// (the registry lock); reads may run concurrently.
    pub fn set(&self, key: usize, val: usize) {
        if key == 0 {
            return;
        }
        // SAFETY: published tables are never freed.
        let mut table = unsafe { &*self.table.load(Ordering::Acquire) };
        if (table.used.load(Ordering::Relaxed) + 1) * 2 > table.slots.len() {
            table = self.rehash(table);
        }
        let mask = table.mask;
        let mut i = table.start(key);
        loop {
            let s = &table.slots[i];
            let k = s.key.load(Ordering::Acquire);
            if k == key {
                s.val.store(val, Ordering::Release);
                return;
            }
            if k == 0 {
                if val == 0 {
                    return;
                }
                // Value first: a reader that sees the key sees its value.
                s.val.store(val, Ordering::Release);
                s.key.store(key, Ordering::Release);
                table.used.fetch_add(1, Ordering::Relaxed);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Copies live entries into a new table sized for them, publishes it and
    /// leaves the old one allocated for readers still inside it.
    fn rehash(&self, old: &Table) -> &'static Table {
        let live = old
            .slots
            .iter()
            .filter(|s| s.key.load(Ordering::Relaxed) != 0 && s.val.load(Ordering::Relaxed) != 0)
            .count();
        let cap = ((live + 1) * 4).next_power_of_two().max(64);
        let new: &'static Table = Box::leak(Box::new(Table::new(cap)));
        let mask = new.mask;
        for s in old.slots.iter() {
            let (k, v) = (s.key.load(Ordering::Relaxed), s.val.load(Ordering::Relaxed));
            if k == 0 || v == 0 {
                continue;
            }
            let mut i = new.start(k);
            while new.slots[i].key.load(Ordering::Relaxed) != 0 {
                i = (i + 1) & mask;
            }
            new.slots[i].val.store(v, Ordering::Relaxed);
            new.slots[i].key.store(k, Ordering::Relaxed);
        }
        new.used.store(live, Ordering::Relaxed);
        self.table
            .store(new as *const Table as *mut Table, Ordering::Release);
        new
    }

    /// Visits every live entry. Same serialization as [`set`](Self::set).
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        // SAFETY: published tables are never freed.
        for s in unsafe { &*self.table.load(Ordering::Acquire) }.slots.iter() {
            let (k, v) = (s.key.load(Ordering::Acquire), s.val.load(Ordering::Acquire));
            if k != 0 && v != 0 {
                f(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_remove_reuse_and_grow() {
        let m = HandleMap::new();
        assert_eq!(m.get(0x1000), 0);
        for i in 1..5000usize {
            m.set(i * 64, i);
        }
        for i in 1..5000usize {
            assert_eq!(m.get(i * 64), i);
        }
        for i in (1..5000usize).step_by(2) {
            m.set(i * 64, 0);
        }
        for i in 1..5000usize {
            assert_eq!(m.get(i * 64), if i % 2 == 1 { 0 } else { i });
        }
        // A destroyed handle handed out again maps to its new value.
        m.set(64, 77);
        assert_eq!(m.get(64), 77);
        let mut n = 0;
        m.for_each(|_, _| n += 1);
        assert_eq!(n, 2499 + 1);
    }
}
