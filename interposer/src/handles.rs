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

/// A table is one array of slots: its first holds the table's shift (64
/// minus log2 of its capacity) as key and its mask as value, the others
/// the entries. So a lookup reaches the entries from the one pointer it
/// loads, without a second load for where they are.
const HEADER: usize = 1;

/// The table of a map that never had an entry: free slots, so that a
/// lookup needs no null check (every lookup ends at a free slot, whose value
/// is 0; that is also why key 0 needs no special case). Two, like every
/// table a power of two of at least 2, so that a start needs no mask.
static EMPTY: [Slot; HEADER + 2] = [
    Slot {
        key: AtomicUsize::new(63),
        val: AtomicUsize::new(1),
    },
    FREE,
    FREE,
];

/// A published table: never freed.
#[derive(Clone, Copy)]
struct Table(&'static [Slot]);

impl Table {
    fn new(cap: usize) -> Table {
        debug_assert!(cap.is_power_of_two() && cap >= 16);
        let slots: &'static [Slot] = Box::leak((0..HEADER + cap).map(|_| FREE).collect());
        slots[0]
            .key
            .store(64 - cap.trailing_zeros() as usize, Ordering::Relaxed);
        slots[0].val.store(cap - 1, Ordering::Relaxed);
        Table(slots)
    }

    /// `capacity - 1`.
    fn mask(self) -> usize {
        self.0[0].val.load(Ordering::Relaxed)
    }

    fn cap(self) -> usize {
        self.0.len() - HEADER
    }

    /// Entry `i` (below the capacity).
    fn slot(self, i: usize) -> &'static Slot {
        &self.0[HEADER + i]
    }

    /// The first entry to look at for `key`: below the capacity (the shift
    /// is 64 minus its log2), so no mask is needed.
    #[inline(always)]
    fn start(self, key: usize) -> usize {
        // SAFETY: every table has its header.
        let shift = unsafe { &*self.0.as_ptr() }.key.load(Ordering::Relaxed);
        // Fibonacci hashing: handles are aligned pointers, so the low bits
        // carry nothing and the multiply spreads the rest.
        key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift
    }
}

pub struct HandleMap {
    /// The first slot of the current table (its header).
    table: AtomicPtr<Slot>,
    /// Keys in use in the current table, including removed ones (value 0).
    /// Only the writer touches it.
    used: AtomicUsize,
}

impl Default for HandleMap {
    fn default() -> Self {
        Self::new()
    }
}

impl HandleMap {
    pub const fn new() -> HandleMap {
        HandleMap {
            table: AtomicPtr::new(&EMPTY as *const [Slot; HEADER + 2] as *mut Slot),
            used: AtomicUsize::new(0),
        }
    }

    /// The current table.
    #[inline(always)]
    fn table(&self) -> Table {
        let p = self.table.load(Ordering::Acquire);
        // SAFETY: tables are never freed once published, and a table's
        // length is in its header (mask + 1 entries after it).
        unsafe {
            let cap = (*p).val.load(Ordering::Relaxed) + 1;
            Table(std::slice::from_raw_parts(p, HEADER + cap))
        }
    }

    /// The value for `key`, or 0. Lock-free; safe from any thread.
    #[inline(always)]
    pub fn get(&self, key: usize) -> usize {
        match self.first(key) {
            Some(v) => v,
            None => self.further(key),
        }
    }

    /// Where a map's current table is in a `HandleMap` (for
    /// `direct::load_word`, whose word [`first_in`](Self::first_in) takes).
    pub const TABLE_OFFSET: usize = std::mem::offset_of!(HandleMap, table);

    /// [`get`](Self::get) as far as the first entry `key` can be in
    /// answers: its value (0 when that entry is free: `key` has no value),
    /// or `None` when another key holds it. Most lookups end there (a table
    /// is at most half full): the launch path looks no further, and has no
    /// loop and no call.
    #[inline(always)]
    pub fn first(&self, key: usize) -> Option<usize> {
        // SAFETY: the current table of this map.
        unsafe { Self::first_in(self.table_word(), key) }
    }

    /// The word [`first_in`](Self::first_in) takes, read in Rust.
    #[inline(always)]
    pub fn table_word(&self) -> usize {
        self.table.load(Ordering::Acquire) as usize
    }

    /// [`first`](Self::first) in `table`.
    ///
    /// # Safety
    /// `table` is a word read (acquire) from the table field of a map.
    #[inline(always)]
    pub unsafe fn first_in(table: usize, key: usize) -> Option<usize> {
        let p = table as *const Slot;
        // SAFETY: tables are never freed once published; start is below
        // the table's capacity, and its entries follow the header.
        let s = unsafe {
            let t = Table(std::slice::from_raw_parts(p, HEADER));
            &*p.add(HEADER + t.start(key))
        };
        let k = s.key.load(Ordering::Acquire);
        if k == key {
            Some(s.val.load(Ordering::Acquire))
        } else if k == 0 {
            Some(0)
        } else {
            None
        }
    }

    /// [`get`](Self::get) from the first entry on, in the current table:
    /// for a key that [`first`](Self::first) did not answer. Out of line,
    /// and `extern "C"` (it cannot unwind: nothing in it panics), so that a
    /// caller keeps no unwinding code for it.
    #[cold]
    #[inline(never)]
    pub extern "C" fn further(&self, key: usize) -> usize {
        let p = self.table.load(Ordering::Acquire) as *const Slot;
        // SAFETY: tables are never freed once published; every index is
        // masked to the capacity, and the entries follow the header.
        unsafe {
            let t = Table(std::slice::from_raw_parts(p, HEADER));
            let mask = t.mask();
            let mut i = t.start(key);
            loop {
                let s = &*p.add(HEADER + i);
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
    }

    /// Sets the value of `key` (0 removes it). Callers serialize all writes
    /// (the registry lock); reads may run concurrently.
    pub fn set(&self, key: usize, val: usize) {
        if key == 0 {
            return;
        }
        if val == 0 && self.get(key) == 0 {
            // Nothing to remove (nor to grow the table for).
            return;
        }
        let mut table = self.table();
        // The empty table is shared by every map: never written.
        let empty = std::ptr::eq(table.0.as_ptr(), EMPTY.as_ptr());
        if empty || (self.used.load(Ordering::Relaxed) + 1) * 2 > table.cap() {
            table = self.rehash(table);
        }
        let mask = table.mask();
        let mut i = table.start(key);
        loop {
            let s = table.slot(i);
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
                self.used.fetch_add(1, Ordering::Relaxed);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Copies live entries into a new table sized for them, publishes it and
    /// leaves the old one allocated for readers still inside it.
    fn rehash(&self, old: Table) -> Table {
        let entries = || (0..old.cap()).map(|i| old.slot(i));
        let live = entries()
            .filter(|s| s.key.load(Ordering::Relaxed) != 0 && s.val.load(Ordering::Relaxed) != 0)
            .count();
        let cap = ((live + 1) * 4).next_power_of_two().max(64);
        let new = Table::new(cap);
        let mask = new.mask();
        for s in entries() {
            let (k, v) = (s.key.load(Ordering::Relaxed), s.val.load(Ordering::Relaxed));
            if k == 0 || v == 0 {
                continue;
            }
            let mut i = new.start(k);
            while new.slot(i).key.load(Ordering::Relaxed) != 0 {
                i = (i + 1) & mask;
            }
            new.slot(i).val.store(v, Ordering::Relaxed);
            new.slot(i).key.store(k, Ordering::Relaxed);
        }
        self.used.store(live, Ordering::Relaxed);
        self.table
            .store(new.0.as_ptr() as *mut Slot, Ordering::Release);
        new
    }

    /// Visits every live entry. Same serialization as [`set`](Self::set).
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        let t = self.table();
        for i in 0..t.cap() {
            let s = t.slot(i);
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

    #[test]
    fn maps_start_apart() {
        // Every map starts on the same empty table: an entry set in one is
        // never seen by another, however many maps get their first entry.
        let maps: Vec<HandleMap> = (0..4).map(|_| HandleMap::new()).collect();
        for (i, m) in maps.iter().enumerate() {
            m.set(0x1000 * (i + 1), i + 1);
        }
        for (i, m) in maps.iter().enumerate() {
            for j in 0..maps.len() {
                let want = if i == j { j + 1 } else { 0 };
                assert_eq!(m.get(0x1000 * (j + 1)), want);
            }
            let mut n = 0;
            m.for_each(|_, _| n += 1);
            assert_eq!(n, 1);
        }
        // Removing what was never set leaves the empty table as it is.
        let m = HandleMap::new();
        m.set(0x40, 0);
        assert_eq!(m.first(0x40), Some(0));
        assert_eq!(EMPTY[HEADER].key.load(Ordering::Relaxed), 0);
        assert_eq!(EMPTY[HEADER + 1].key.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn first_answers_from_the_first_entry_only() {
        let m = HandleMap::new();
        for i in 1..200usize {
            m.set(i * 64, i);
        }
        let mut further = 0;
        for i in 1..400usize {
            let want = if i < 200 { i } else { 0 };
            match m.first(i * 64) {
                Some(v) => assert_eq!(v, want),
                None => further += 1,
            }
            assert_eq!(m.get(i * 64), want);
        }
        assert!(further < 400 / 2, "{further} of 400 past the first entry");
    }
}
