//! Device times in the report (`xpu-asm-run --time`, schema 6): each
//! kernel's and shape's [`TimeEntry`] or the reason it has none, and the
//! device time of each process and of the run ([`TimeSummary`]), made from
//! the records' time blocks ([`xpu_asm_record::times`]).
//!
//! A kernel's times are its blocks of every process added up
//! ([`Times::add`]): sums, the extremes, and the histograms, which add
//! exactly, so that a median over ranks is as precise as one process's.
//! `estimated_ns` is the mean of the timed launches times the exact launch
//! count; the median is the middle launch's histogram bucket, within the
//! launches' min and max (`median_range_ns`), and `median_ns` its
//! midpoint: at most 1/16 (6.25 %) from the true (lower) median, and
//! exact when the bucket holds one duration (below 8 ns, or min = max).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_record::times::{NotTimed, Policy, Times};

/// The device times of a kernel (or one of its shapes) with at least one
/// launch timed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeEntry {
    /// Launches chosen for timing (the sample).
    pub sampled: u64,
    /// Launches with a device time.
    pub timed: u64,
    /// The sum of their device times.
    pub total_ns: u64,
    /// Their mean times the exact launch count.
    pub estimated_ns: u64,
    pub min_ns: u64,
    /// The middle timed launch's (the lower of two), from the histogram.
    pub median_ns: u64,
    /// The durations the median's histogram bucket spans, within min and
    /// max: `median_ns` is its midpoint (equal ends: exact).
    pub median_range_ns: [u64; 2],
    pub max_ns: u64,
    /// Launches chosen but not timed, by reason (`not_complete`,
    /// `pool_full`, ...; absent when none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_timed: BTreeMap<String, u64>,
    /// Chosen launches whose result was never read (the process was
    /// killed first; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `total_ns / timed * launches`, rounded to the nearest ns.
pub fn estimate(total_ns: u64, timed: u64, launches: u64) -> u64 {
    if timed == 0 {
        return 0;
    }
    let t = timed as u128;
    let e = (total_ns as u128 * launches as u128 + t / 2) / t;
    e.min(u64::MAX as u128) as u64
}

/// The not-timed reasons by name, for JSON.
fn not_timed_names(t: &Times) -> BTreeMap<String, u64> {
    t.reasons()
        .into_iter()
        .map(|(r, n)| (r.name(), n))
        .collect()
}

impl TimeEntry {
    /// The entry of `t` for `launches` launches; `None` when none was
    /// timed (then [`reason`] says why).
    pub fn of(t: &Times, launches: u64) -> Option<TimeEntry> {
        let (min, max) = (t.min_ns?, t.max_ns?);
        if t.timed == 0 {
            return None;
        }
        let median = t.median()?;
        Some(TimeEntry {
            sampled: t.sampled,
            timed: t.timed,
            total_ns: t.total_ns,
            estimated_ns: estimate(t.total_ns, t.timed, launches.max(t.timed)),
            min_ns: min,
            median_ns: median.ns,
            median_range_ns: [median.lo_ns, median.hi_ns],
            max_ns: max,
            not_timed: not_timed_names(t),
            pending: t.pending(),
        })
    }
}

/// Why launches chosen for timing have no time, in words: each reason
/// (the device's giving none first, as it would leave the others without
/// time too; then most first), with its launches when there are several.
pub fn reasons_text(t: &Times) -> Option<String> {
    let mut reasons = t.reasons();
    reasons.sort_by_key(|(r, _)| *r != NotTimed::NotComplete);
    let mut parts: Vec<(String, u64)> = reasons
        .into_iter()
        .map(|(r, n)| (r.describe().to_string(), n))
        .collect();
    if t.pending() > 0 {
        parts.push((PENDING.to_string(), t.pending()));
    }
    match parts.as_slice() {
        [] => None,
        [(one, _)] => Some(one.clone()),
        many => Some(
            many.iter()
                .map(|(why, n)| format!("{why} ({n} launch{})", if *n == 1 { "" } else { "es" }))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

/// What the reason of launches whose result was never read says.
pub const PENDING: &str =
    "their results were never read (the process ended before it could read them: killed)";

/// Why a shape of a timed kernel has no time of its own: its launches were
/// timed with the kernel's other shapes.
pub const WITH_THE_KERNELS: &str = "timed with the kernel's other shapes (a process times its first 32 shapes of a kernel apart): the kernel's time has them";

/// Why a launched kernel (or shape) of a timed run has no time: its
/// launches chosen but not timed (`t`), or none chosen (`timing`: whether
/// a process that launched it timed launches at all).
pub fn reason(t: Option<&Times>, timing: bool) -> String {
    match (t.and_then(reasons_text), timing) {
        (Some(why), _) => why,
        (None, true) => "no launch of it was chosen for timing".to_string(),
        (None, false) => "the processes that launched it timed nothing".to_string(),
    }
}

/// What a process or the run timed: the sample, the device time of every
/// timed kernel, and when none was timed, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeSummary {
    /// Which launches were chosen: `{"policy": "all"}` or `{"policy":
    /// "sample", "first": F, "every": E}`; null for a run whose
    /// processes had different ones (each process says its own).
    pub sampling: Option<Sampling>,
    /// Launches chosen for timing.
    pub sampled: u64,
    /// Launches with a device time.
    pub timed: u64,
    /// Kernels with a device time.
    pub kernels_timed: u64,
    /// The sum of the timed launches' device times.
    pub total_ns: u64,
    /// Each timed kernel's `estimated_ns`, added up: the device time of
    /// all its launches.
    pub estimated_ns: u64,
    /// Launches chosen but not timed, by reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_timed: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending: u64,
    /// When no launch was timed: why (`the device gave none (...)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A timing policy, as the report gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    /// `all` or `sample`.
    pub policy: Which,
    /// With `sample`: of each kernel and shape in each process, the first
    /// `first` launches, then one in `every`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Which {
    All,
    Sample,
}

impl From<Policy> for Sampling {
    fn from(p: Policy) -> Sampling {
        match p.all {
            true => Sampling {
                policy: Which::All,
                first: None,
                every: None,
            },
            false => Sampling {
                policy: Which::Sample,
                first: Some(p.first),
                every: Some(p.every),
            },
        }
    }
}

impl Sampling {
    /// In words: `every launch`, `the first 10 launches of each kernel and
    /// shape in each process, then one in 100`.
    pub fn describe(&self) -> String {
        match (self.policy, self.first, self.every) {
            (Which::All, ..) => "every launch".to_string(),
            (Which::Sample, first, every) => format!(
                "the first {} launches of each kernel and shape in each process, then one in {}",
                first.unwrap_or(0),
                every.unwrap_or(1)
            ),
        }
    }
}

/// Times added up, and the kernels of them timed.
#[derive(Debug, Default)]
struct Sum {
    times: Times,
    kernels_timed: u64,
    estimated_ns: u64,
}

impl Sum {
    fn add(&mut self, t: &Times, launches: u64) {
        self.times.add(t);
        if t.timed > 0 {
            self.kernels_timed += 1;
            self.estimated_ns = self.estimated_ns.saturating_add(estimate(
                t.total_ns,
                t.timed,
                launches.max(t.timed),
            ));
        }
    }

    fn summary(&self, sampling: Option<Sampling>, emulated: bool) -> TimeSummary {
        let t = &self.times;
        let reason = (t.timed == 0).then(|| {
            let why =
                reasons_text(t).unwrap_or_else(|| "no launch was chosen for timing".to_string());
            match emulated && t.not_timed[NotTimed::NotComplete.index()] > 0 {
                true => format!("{why}; an emulated device (--emulate) runs no kernel"),
                false => why,
            }
        });
        TimeSummary {
            sampling,
            sampled: t.sampled,
            timed: t.timed,
            kernels_timed: self.kernels_timed,
            total_ns: t.total_ns,
            estimated_ns: self.estimated_ns,
            not_timed: not_timed_names(t),
            pending: t.pending(),
            reason,
        }
    }
}

/// A process's device times: `None` when it timed nothing (no `--time`).
pub fn of_process(r: &ProcessRecord, emulated: bool) -> Option<TimeSummary> {
    let policy = r.time?;
    let mut sum = Sum::default();
    for k in r.kernels.values() {
        if let Some(t) = &k.time {
            sum.add(t, k.launches);
        }
    }
    Some(sum.summary(Some(policy.into()), emulated))
}

/// The run's device times, from its processes' and its kernels'
/// (`kernels`: each listed kernel's times, added over its processes, with
/// its launches): `None` when no process timed anything.
pub fn of_run<'a>(
    processes: &[Option<TimeSummary>],
    kernels: impl Iterator<Item = (&'a Times, u64)>,
    emulated: bool,
) -> Option<TimeSummary> {
    let timing: Vec<&TimeSummary> = processes.iter().flatten().collect();
    let first = timing.first()?;
    let sampling = first
        .sampling
        .filter(|s| timing.iter().all(|p| p.sampling == Some(*s)));
    let mut sum = Sum::default();
    for (t, launches) in kernels {
        sum.add(t, launches);
    }
    Some(sum.summary(sampling, emulated))
}

/// A duration for a person: `850 ns`, `12.3 us`, `4.56 ms`, `1.23 s`.
pub fn human_ns(ns: u64) -> String {
    let v = ns as f64;
    let (x, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (v / 1e3, "us"),
        1_000_000..=999_999_999 => (v / 1e6, "ms"),
        _ => (v / 1e9, "s"),
    };
    match x {
        x if x >= 100.0 => format!("{x:.0} {unit}"),
        x if x >= 10.0 => format!("{x:.1} {unit}"),
        x => format!("{x:.2} {unit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(ns: &[u64]) -> Times {
        let mut t = Times::default();
        for &n in ns {
            t.record(n);
        }
        t
    }

    /// The entry's figures from a block's: the estimate is the mean times
    /// the launches, the median the middle bucket's midpoint.
    #[test]
    fn an_entry_has_the_blocks_figures() {
        let t = times(&[240_000, 240_000, 400_000]);
        let e = TimeEntry::of(&t, 30).expect("timed");
        assert_eq!(
            (e.sampled, e.timed, e.total_ns, e.estimated_ns),
            (3, 3, 880_000, 8_800_000)
        );
        assert_eq!((e.min_ns, e.max_ns), (240_000, 400_000));
        // 240,000 is in the bucket [229,376, 245,760): within min and max.
        assert_eq!(e.median_range_ns, [240_000, 245_759]);
        assert_eq!(e.median_ns, 242_880);
        assert!(e.not_timed.is_empty() && e.pending == 0);
        let one = TimeEntry::of(&times(&[80_000; 5]), 5).expect("timed");
        assert_eq!((one.median_ns, one.median_range_ns), (80_000, [80_000; 2]));
        assert_eq!(one.estimated_ns, one.total_ns);
    }

    /// None timed: no entry, and the reason in words; several reasons
    /// with their launches.
    #[test]
    fn no_time_says_why() {
        let mut t = Times {
            sampled: 6,
            ..Times::default()
        };
        t.not_timed[NotTimed::NotComplete.index()] = 6;
        assert_eq!(TimeEntry::of(&t, 6), None);
        assert_eq!(
            reason(Some(&t), true),
            "the device gave none (the launch had not completed when last looked at)"
        );
        t.sampled = 9;
        t.not_timed[NotTimed::PoolFull.index()] = 2;
        assert_eq!(
            reason(Some(&t), true),
            "the device gave none (the launch had not completed when last looked at) (6 launches); \
             the interposer's events were all in use (pool full) (2 launches); \
             their results were never read (the process ended before it could read them: killed) (1 launch)"
        );
        assert_eq!(reason(None, true), "no launch of it was chosen for timing");
        assert_eq!(
            reason(None, false),
            "the processes that launched it timed nothing"
        );
    }

    #[test]
    fn estimates_round_to_the_nearest_ns() {
        assert_eq!(estimate(10, 3, 4), 13);
        assert_eq!(estimate(0, 0, 5), 0);
        assert_eq!(estimate(u64::MAX, 1, 2), u64::MAX);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_ns(850), "850 ns");
        assert_eq!(human_ns(12_345), "12.3 us");
        assert_eq!(human_ns(4_560_000), "4.56 ms");
        assert_eq!(human_ns(123_400_000), "123 ms");
        assert_eq!(human_ns(1_230_000_000), "1.23 s");
    }
}
