//! Device time per kernel and launch shape (`xpu-asm-run --time`), in the
//! counts file (version 4): a process's times survive `SIGKILL` as its
//! counts do, and take memory bounded by its kernels and shapes, whatever
//! the run's length.
//!
//! Each (kernel, shape) that had a launch chosen for timing gets a *time
//! block* of [`BLOCK_SLOTS`] consecutive slots of its own in the counts
//! file, in one chunk, beside the shape's slot pair ([`crate::shapes`]).
//! Its owner is the slot id of the shape's head, or the kernel's id for
//! launches counted in the kernel's own counter (its "other shapes"). The
//! interposer adds into the block in place with atomic adds, only when it
//! reads a result (at the workload's syncs, resets, destroys, and at
//! exit), never on the launch path; a kernel keeps at most
//! [`MAX_TIMED_SHAPES`] blocks, further shapes' times go to the kernel's
//! own block.
//!
//! The block's words (little-endian `u64`, word `w` at byte `8 * w`):
//!
//! | word | what |
//! | --- | --- |
//! | 0 | `sampled`: launches chosen for timing ([`Policy`]) |
//! | 1 | `timed`: launches with a device time |
//! | 2 | `total_ns`: the sum of their device times |
//! | 3 | the tag: [`TIME_TAG`] in the high half, the owner's slot id in the low half |
//! | 4 | `max_ns` |
//! | 5 | `!min_ns` (bitwise not, so that an atomic max keeps the minimum; 0: none) |
//! | 6 | the layout: [`BLOCK_SLOTS`] in the low half, [`SCHEME`] in the high half |
//! | 7 | zero |
//! | 8..24 | launches chosen but not timed, by [`NotTimed`] reason (index = word - 8) |
//! | 24..328 | the histogram of the timed launches' device times: [`BUCKETS`] counts ([`bucket_of`]) |
//!
//! A chosen launch ends timed, or not timed for one reason, or still
//! pending when the record ended (a process killed before it could read
//! its results): `sampled = timed + not timed + pending`. Launches not
//! chosen (sampled out by the policy) are the shape's launches less
//! `sampled`.
//!
//! The median comes from the histogram: buckets of an eighth of a power of
//! two (each at most 12.5 % of its lower bound wide; exact below 8 ns;
//! one last bucket from 2^40 ns, 18 minutes, on). Buckets of two processes
//! (two ranks) add up exactly, so a median over ranks is the histogram's
//! as much as one process's: [`Times::median`] gives the bucket that holds
//! the middle launch, within the launches' min and max, and its midpoint,
//! at most 1/16 (6.25 %) from the true (lower) median.
//!
//! The interposer writes a block's layout word, then its tag, before it
//! adds anything: a block a kill cut short is all zeros, or tagged and
//! empty, and is skipped. A forked child (its counts remapped zeroed)
//! writes its blocks' layout and tags again.

/// The high half of a time block's tag word ("TIM1").
pub const TIME_TAG: u32 = 0x314D_4954;
/// Slots of one time block (32 bytes each: 2,624 bytes).
pub const BLOCK_SLOTS: usize = 82;
/// Words of one time block.
pub const BLOCK_WORDS: usize = BLOCK_SLOTS * 4;
/// The histogram's layout: 1 = eight buckets per power of two (below).
pub const SCHEME: u32 = 1;
/// Time blocks kept per kernel and process: one per shape for its first
/// shapes, then the kernel's own for the rest.
pub const MAX_TIMED_SHAPES: usize = 32;

/// Word of `sampled`.
pub const W_SAMPLED: usize = 0;
/// Word of `timed`.
pub const W_TIMED: usize = 1;
/// Word of `total_ns`.
pub const W_TOTAL: usize = 2;
/// Word of the tag.
pub const W_TAG: usize = 3;
/// Word of `max_ns`.
pub const W_MAX: usize = 4;
/// Word of `!min_ns`.
pub const W_MIN_NOT: usize = 5;
/// Word of the layout.
pub const W_LAYOUT: usize = 6;
/// First word of the not-timed counts ([`NotTimed`]).
pub const W_NOT_TIMED: usize = 8;
/// Not-timed reasons a block has room for.
pub const REASONS: usize = 16;
/// First word of the histogram.
pub const W_BUCKETS: usize = W_NOT_TIMED + REASONS;
/// Buckets of the histogram.
pub const BUCKETS: usize = BLOCK_WORDS - W_BUCKETS;

/// Durations below this many ns have a bucket each.
const EXACT: u64 = 8;
/// Buckets per power of two (log2).
const SUB_BITS: u32 = 3;
/// The last bucket holds this many ns and more.
pub const TOP_NS: u64 = 1 << 40;

/// The histogram bucket of a duration of `ns` nanoseconds.
pub fn bucket_of(ns: u64) -> usize {
    if ns < EXACT {
        return ns as usize;
    }
    if ns >= TOP_NS {
        return BUCKETS - 1;
    }
    let e = 63 - ns.leading_zeros();
    let sub = (ns >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    EXACT as usize + ((e - SUB_BITS) as usize) * (1 << SUB_BITS) + sub as usize
}

/// The durations bucket `i` holds: `[lo, hi)`, `hi` `None` for the last.
pub fn bucket_bounds(i: usize) -> (u64, Option<u64>) {
    if i < EXACT as usize {
        return (i as u64, Some(i as u64 + 1));
    }
    let j = (i - EXACT as usize) as u64;
    let shift = j >> SUB_BITS;
    let sub = j & ((1 << SUB_BITS) - 1);
    let lo = (EXACT + sub) << shift;
    let hi = (EXACT + sub + 1) << shift;
    (lo, (i + 1 < BUCKETS).then_some(hi))
}

/// Word 6 of a block.
pub fn layout_word() -> u64 {
    BLOCK_SLOTS as u64 | (SCHEME as u64) << 32
}

/// Word 3 of the block owned by slot id `owner`.
pub fn time_tag(owner: u32) -> u64 {
    (TIME_TAG as u64) << 32 | owner as u64
}

/// The owner of the time block whose tag this word is, if it is one.
pub fn timed_owner(word: u64) -> Option<u32> {
    ((word >> 32) as u32 == TIME_TAG).then_some(word as u32)
}

/// Why a launch chosen for timing has no device time. The index is its
/// word in the block (after [`W_NOT_TIMED`]); new reasons take new indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotTimed {
    /// The device gave no timestamp: the launch had not completed when it
    /// was last looked at (the workload's syncs, resets and destroys, and
    /// exit), as on NEO without hardware, or a device that never completes.
    NotComplete,
    /// The driver refused the timestamp query.
    QueryFailed,
    /// The launch passed an event of the workload's that cannot be timed
    /// without changing the workload.
    UserEvent,
    /// The interposer's events were all in use.
    PoolFull,
    /// The driver gave the interposer no events (no pool could be made).
    NoEvents,
    /// A regular list ran again before its last run's result was read:
    /// one run of those is timed.
    Rerun,
    /// Launched from a graph: the driver gives no time per replay.
    Graph,
    /// Several kernels signal one event (multiple indirect launches).
    SharedEvent,
    /// The workload reset the event on the device before it was read.
    ResetOnDevice,
    /// The device's timer could not be read (`zeDeviceGetProperties`).
    NoTimer,
    /// An OpenCL queue without profiling: the driver refused to make it
    /// with profiling enabled (or it was made before timing began).
    NoProfiling,
    /// A reason this reader does not know (a newer writer's), by index.
    Other(u8),
}

impl NotTimed {
    /// Every reason this version writes, by index.
    pub const ALL: [NotTimed; 11] = [
        NotTimed::NotComplete,
        NotTimed::QueryFailed,
        NotTimed::UserEvent,
        NotTimed::PoolFull,
        NotTimed::NoEvents,
        NotTimed::Rerun,
        NotTimed::Graph,
        NotTimed::SharedEvent,
        NotTimed::ResetOnDevice,
        NotTimed::NoTimer,
        NotTimed::NoProfiling,
    ];

    /// Its index (its word is `W_NOT_TIMED + index`).
    pub fn index(self) -> usize {
        match self {
            NotTimed::Other(i) => i as usize,
            r => NotTimed::ALL
                .iter()
                .position(|a| *a == r)
                .expect("every named reason is in ALL"),
        }
    }

    /// The reason of index `i` (below [`REASONS`]).
    pub fn from_index(i: usize) -> NotTimed {
        NotTimed::ALL
            .get(i)
            .copied()
            .unwrap_or(NotTimed::Other(i as u8))
    }

    /// A short name for JSON: `not_complete`, `query_failed`, ...
    pub fn name(self) -> String {
        let n = match self {
            NotTimed::NotComplete => "not_complete",
            NotTimed::QueryFailed => "query_failed",
            NotTimed::UserEvent => "user_event",
            NotTimed::PoolFull => "pool_full",
            NotTimed::NoEvents => "no_events",
            NotTimed::Rerun => "rerun",
            NotTimed::Graph => "graph",
            NotTimed::SharedEvent => "shared_event",
            NotTimed::ResetOnDevice => "reset_on_device",
            NotTimed::NoTimer => "no_timer",
            NotTimed::NoProfiling => "no_profiling",
            NotTimed::Other(i) => return format!("reason_{i}"),
        };
        n.to_string()
    }

    /// What it means, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            NotTimed::NotComplete => {
                "the device gave none (the launch had not completed when last looked at)"
            }
            NotTimed::QueryFailed => "the driver refused the timestamp query",
            NotTimed::UserEvent => {
                "the launch passed an event that cannot be timed without changing the workload"
            }
            NotTimed::PoolFull => "the interposer's events were all in use (pool full)",
            NotTimed::NoEvents => "the driver gave the interposer no events",
            NotTimed::Rerun => {
                "a regular list ran again before its result was read (one run of those timed)"
            }
            NotTimed::Graph => "launched from a graph, which the driver does not time per replay",
            NotTimed::SharedEvent => "several kernels signal one event",
            NotTimed::ResetOnDevice => {
                "the workload reset the event on the device before it was read"
            }
            NotTimed::NoTimer => "the device's timer could not be read",
            NotTimed::NoProfiling => "the OpenCL queue could not be given profiling",
            NotTimed::Other(_) => "a reason of a newer xpu-asm",
        }
    }
}

/// The nanoseconds between two timestamps of a device whose timer counts
/// `ticks_per_second` (`ze_device_properties_t.timerResolution` with the
/// 1.2 properties type) on `valid_bits` bits (`kernelTimestampValidBits`):
/// both masked, one wrap of the counter handled (`end` below `start`),
/// rounded to the nearest ns. `None` when the timer is unknown (0 ticks
/// per second, or no valid bits).
pub fn duration_ns(start: u64, end: u64, valid_bits: u32, ticks_per_second: u64) -> Option<u64> {
    if ticks_per_second == 0 || valid_bits == 0 {
        return None;
    }
    let mask = match valid_bits {
        64.. => u64::MAX,
        b => (1u64 << b) - 1,
    };
    let (s, e) = (start & mask, end & mask);
    let ticks = match e >= s {
        true => e - s,
        false => e.wrapping_sub(s) & mask,
    };
    let ns =
        (ticks as u128 * 1_000_000_000 + ticks_per_second as u128 / 2) / ticks_per_second as u128;
    Some(ns.min(u64::MAX as u128) as u64)
}

/// Which launches are timed: every one (`--time=all`), or a sample: of
/// each kernel and shape in each process, the first `first`, then one in
/// `every` (the launches whose index among them, from 0, is a multiple of
/// `every`). Written in the process header as `"time":{..}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub all: bool,
    pub first: u64,
    pub every: u64,
}

impl Policy {
    /// `--time`'s default.
    pub const DEFAULT: Policy = Policy {
        all: false,
        first: 10,
        every: 100,
    };
    /// `--time=all`.
    pub const ALL: Policy = Policy {
        all: true,
        first: 0,
        every: 1,
    };

    /// Whether the launch of index `n` (from 0) of its kernel and shape in
    /// its process is chosen.
    #[inline(always)]
    pub fn chosen(&self, n: u64) -> bool {
        self.all || n < self.first || (self.every != 0 && n.is_multiple_of(self.every))
    }

    /// How many of the first `launches` launches of a kernel and shape are
    /// chosen.
    pub fn chosen_of(&self, launches: u64) -> u64 {
        if self.all {
            return launches;
        }
        let first = launches.min(self.first);
        let every = match self.every {
            0 => 0,
            e => launches.div_ceil(e) - self.first.min(launches).div_ceil(e),
        };
        first + every
    }

    /// Its value in `XPU_ASM_TIME` ([`TIME_ENV`]): `all`, or
    /// `sample:FIRST:EVERY`.
    pub fn env_value(&self) -> String {
        match self.all {
            true => "all".to_string(),
            false => format!("sample:{}:{}", self.first, self.every),
        }
    }

    /// The policy an `XPU_ASM_TIME` value asks for: `1`, `sample` (the
    /// default), `all`, or `sample:FIRST:EVERY`; `None` for anything else.
    pub fn from_env(v: &str) -> Option<Policy> {
        match v {
            "1" | "sample" => Some(Policy::DEFAULT),
            "all" => Some(Policy::ALL),
            _ => {
                let mut p = v.strip_prefix("sample:")?.split(':');
                let first = p.next()?.parse().ok()?;
                let every = p.next()?.parse().ok()?;
                (p.next().is_none() && every > 0).then_some(Policy {
                    all: false,
                    first,
                    every,
                })
            }
        }
    }

    /// The header's `"time"` object, as JSON.
    pub fn json(&self) -> String {
        match self.all {
            true => r#"{"policy":"all"}"#.to_string(),
            false => format!(
                r#"{{"policy":"sample","first":{},"every":{}}}"#,
                self.first, self.every
            ),
        }
    }
}

/// Environment variable that turns timing on (`xpu-asm-run --time` sets
/// it): a [`Policy::from_env`] value. Unset: nothing is timed, and the
/// interposer makes not one driver call more.
pub const TIME_ENV: &str = "XPU_ASM_TIME";

/// The device times of some launches: one block's, or several added up
/// ([`Times::add`]: the shapes of a kernel, processes, ranks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Times {
    /// Launches chosen for timing.
    pub sampled: u64,
    /// Launches with a device time.
    pub timed: u64,
    /// The sum of their device times.
    pub total_ns: u64,
    /// The shortest and the longest (`None` when none was timed).
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// Launches chosen but not timed, by reason ([`NotTimed::index`]).
    pub not_timed: [u64; REASONS],
    /// The timed launches by duration ([`bucket_of`]).
    pub buckets: Vec<u64>,
}

impl Default for Times {
    fn default() -> Self {
        Times {
            sampled: 0,
            timed: 0,
            total_ns: 0,
            min_ns: None,
            max_ns: None,
            not_timed: [0; REASONS],
            buckets: vec![0; BUCKETS],
        }
    }
}

/// A median from a histogram: the bucket of the middle launch, within the
/// launches' min and max (`lo_ns..=hi_ns`), and its midpoint `ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Median {
    pub ns: u64,
    pub lo_ns: u64,
    pub hi_ns: u64,
}

impl Times {
    /// Adds `other` to these (sums, the extremes, the buckets).
    pub fn add(&mut self, other: &Times) {
        self.sampled = self.sampled.wrapping_add(other.sampled);
        self.timed = self.timed.wrapping_add(other.timed);
        self.total_ns = self.total_ns.wrapping_add(other.total_ns);
        self.min_ns = match (self.min_ns, other.min_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_ns = self.max_ns.max(other.max_ns);
        for (a, b) in self.not_timed.iter_mut().zip(other.not_timed) {
            *a = a.wrapping_add(b);
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.wrapping_add(*b);
        }
    }

    /// One device time of `ns` (for tools and tests that make blocks).
    pub fn record(&mut self, ns: u64) {
        self.sampled += 1;
        self.timed += 1;
        self.total_ns += ns;
        self.min_ns = Some(self.min_ns.map_or(ns, |m| m.min(ns)));
        self.max_ns = Some(self.max_ns.map_or(ns, |m| m.max(ns)));
        self.buckets[bucket_of(ns)] += 1;
    }

    /// Chosen launches not timed, all reasons.
    pub fn not_timed_total(&self) -> u64 {
        self.not_timed.iter().fold(0, |a, b| a.wrapping_add(*b))
    }

    /// The reasons with their counts, most first (ties by index).
    pub fn reasons(&self) -> Vec<(NotTimed, u64)> {
        let mut r: Vec<(NotTimed, u64)> = (0..REASONS)
            .filter(|&i| self.not_timed[i] > 0)
            .map(|i| (NotTimed::from_index(i), self.not_timed[i]))
            .collect();
        r.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
        r
    }

    /// Chosen launches whose result was never read (the process was killed
    /// before it could read it).
    pub fn pending(&self) -> u64 {
        self.sampled
            .saturating_sub(self.timed)
            .saturating_sub(self.not_timed_total())
    }

    /// The median device time of the timed launches (the lower one of
    /// two middle ones), from the histogram; `None` when none was timed.
    pub fn median(&self) -> Option<Median> {
        let n: u64 = self.buckets.iter().sum();
        let (min, max) = (self.min_ns?, self.max_ns?);
        let mut want = n.checked_sub(1)? / 2;
        let i = self.buckets.iter().position(|&c| {
            let here = want < c;
            want = want.saturating_sub(c);
            here
        })?;
        let (lo, hi) = bucket_bounds(i);
        let lo_ns = lo.clamp(min, max);
        let hi_ns = hi.map_or(max, |h| h - 1).clamp(min, max);
        Some(Median {
            ns: lo_ns + (hi_ns - lo_ns).div_ceil(2),
            lo_ns,
            hi_ns,
        })
    }

    /// The block's words ([`BLOCK_WORDS`]), owned by slot id `owner`.
    pub fn words(&self, owner: u32) -> Vec<u64> {
        let mut w = vec![0u64; BLOCK_WORDS];
        w[W_SAMPLED] = self.sampled;
        w[W_TIMED] = self.timed;
        w[W_TOTAL] = self.total_ns;
        w[W_TAG] = time_tag(owner);
        w[W_MAX] = self.max_ns.unwrap_or(0);
        w[W_MIN_NOT] = self.min_ns.map_or(0, |m| !m);
        w[W_LAYOUT] = layout_word();
        w[W_NOT_TIMED..W_NOT_TIMED + REASONS].copy_from_slice(&self.not_timed);
        w[W_BUCKETS..].copy_from_slice(&self.buckets);
        w
    }

    /// The block as bytes (for tools and tests that write counts files).
    pub fn encode(&self, owner: u32) -> Vec<u8> {
        self.words(owner)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }

    /// The times a block's words hold (`None`: not a block of this
    /// layout, or empty).
    pub fn from_words(w: &[u64]) -> Option<Times> {
        if w.len() < BLOCK_WORDS || w[W_LAYOUT] != layout_word() {
            return None;
        }
        let mut not_timed = [0u64; REASONS];
        not_timed.copy_from_slice(&w[W_NOT_TIMED..W_NOT_TIMED + REASONS]);
        let t = Times {
            sampled: w[W_SAMPLED],
            timed: w[W_TIMED],
            total_ns: w[W_TOTAL],
            min_ns: (w[W_MIN_NOT] != 0).then_some(!w[W_MIN_NOT]),
            max_ns: (w[W_MIN_NOT] != 0).then_some(w[W_MAX]),
            not_timed,
            buckets: w[W_BUCKETS..BLOCK_WORDS].to_vec(),
        };
        (t.sampled != 0 || t.timed != 0 || t.not_timed_total() != 0).then_some(t)
    }
}

/// The slot id at which a block of [`BLOCK_SLOTS`] may start at or after
/// `id` so that it lies in one chunk of the counts file.
pub fn block_start(id: u32) -> u32 {
    let chunk = crate::CHUNK_SLOTS as u32;
    match id % chunk + BLOCK_SLOTS as u32 <= chunk {
        true => id,
        false => (id / chunk + 1) * chunk,
    }
}
