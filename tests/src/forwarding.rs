//! Exact device times on the real NEO and IGC: the forwarding driver
//! (`tests/fake/ze_fwd.c`, loaded by the real loader through
//! `ZE_ENABLE_ALT_DRIVERS`), which hands every call to NEO and gives the
//! events of the kernels that run known timestamps, and writes each kernel
//! that runs, with its ticks, to its own log: the ground truth a report is
//! held to.

use crate::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The forwarding driver's timer: 12.5 MHz, 80 ns a tick (its default).
pub const FWD_NS_PER_TICK: u64 = 80;

/// The forwarding driver, built once per stack with its gcc and Level Zero
/// headers.
pub fn fwd_driver() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            require_stack();
            let dest = build_dir().join("libze_fwd.so");
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args([
                    "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                ])
                .arg(workspace_dir().join("tests/fake/ze_fwd.c"))
                .arg("-o")
                .arg(out)
                .args(["-ldl", "-lpthread"]);
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// The variables that put the forwarding driver over NEO emulating
/// `product` without hardware (NEO's keys are the driver's to set, for NEO
/// alone), its log written to `log` (`.<pid>` appended).
pub fn fwd_env(product: &str, log: &Path) -> Vec<(String, String)> {
    let keys: Vec<String> = neo_env_for(product)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    vec![
        (
            "ZE_ENABLE_ALT_DRIVERS".to_string(),
            fwd_driver().display().to_string(),
        ),
        ("XPU_ASM_FWD_NEO_ENV".to_string(), keys.join(" ")),
        ("XPU_ASM_FWD_LOG".to_string(), log.display().to_string()),
    ]
}

/// What ran, by the driver's log: per process (pid), per kernel name, per
/// group count, each run's device time in ns, in order.
pub type Ran = BTreeMap<u64, BTreeMap<String, BTreeMap<[u64; 3], Vec<u64>>>>;

/// The logs `<log>.<pid>` the forwarding driver wrote.
pub fn fwd_ran(log: &Path) -> Ran {
    let dir = log.parent().expect("the log has a folder");
    let stem = format!("{}.", log.file_name().unwrap().to_string_lossy());
    let mut ran = Ran::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(&stem) else {
            continue;
        };
        let pid: u64 = pid
            .parse()
            .unwrap_or_else(|_| panic!("{name}: not <log>.<pid>"));
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let f: Vec<&str> = line.splitn(6, ' ').collect();
            let n = |i: usize| -> u64 {
                f.get(i)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: bad line {line:?}"))
            };
            assert!(f.len() == 6 && f[0] == "ran", "{name}: bad line {line:?}");
            ran.entry(pid)
                .or_default()
                .entry(f[5].to_string())
                .or_default()
                .entry([n(2), n(3), n(4)])
                .or_default()
                .push(n(1) * FWD_NS_PER_TICK);
        }
    }
    assert!(
        !ran.is_empty(),
        "the forwarding driver logged no kernel run as {}.<pid>",
        log.display()
    );
    ran
}

/// `(launches, timed, total_ns, min_ns, median_ns, max_ns)` of some runs'
/// times, the median as a report gives it (its histogram's bucket).
fn known_figures(ns: &[u64]) -> (u64, u64, u64, u64, u64, u64) {
    let mut v = ns.to_vec();
    v.sort_unstable();
    let (min, max) = (v[0], v[v.len() - 1]);
    let lower_median = v[(v.len() - 1) / 2];
    (
        v.len() as u64,
        v.len() as u64,
        v.iter().sum(),
        min,
        reported_median(lower_median, min, max),
        max,
    )
}

/// The same of a report's `time` object, with the launches it is of.
fn reported_figures(launches: &Value, t: &Value) -> (u64, u64, u64, u64, u64, u64) {
    let (sampled, timed, total, estimated, min, median, max) = time_figures(t);
    assert_eq!(sampled, timed, "not every launch chosen was timed: {t:#}");
    assert_eq!(
        estimated, total,
        "an estimate over launches not timed: {t:#}"
    );
    (launches.as_u64().unwrap(), timed, total, min, median, max)
}

/// Every kernel and shape of `report` against what `ran` says ran (each
/// launch timed, exactly its known time), each process's and the run's
/// device time their sum. `ctx` says the run. Returns the rows of a side
/// by side: kernel, launches, known total, reported total, known min/max,
/// reported min/max.
pub fn assert_known_times(report: &Value, ran: &Ran, ctx: &str) -> Vec<String> {
    let mut by_name: BTreeMap<String, BTreeMap<[u64; 3], Vec<u64>>> = BTreeMap::new();
    for kernels in ran.values() {
        for (name, shapes) in kernels {
            for (g, ns) in shapes {
                by_name
                    .entry(name.clone())
                    .or_default()
                    .entry(*g)
                    .or_default()
                    .extend(ns);
            }
        }
    }
    let reported: Vec<&Value> = report["kernels"].as_array().into_iter().flatten().collect();
    let names: Vec<String> = reported
        .iter()
        .map(|k| k["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        names
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        by_name.keys().cloned().collect(),
        "the report's kernels are not those that ran\n{ctx}"
    );
    let mut rows = Vec::new();
    for (name, shapes) in &by_name {
        let all: Vec<u64> = shapes.values().flatten().copied().collect();
        let ks: Vec<&&Value> = reported
            .iter()
            .filter(|k| k["name"] == name.as_str())
            .collect();
        assert_eq!(
            ks.len(),
            1,
            "{} kernels named {name} in the report\n{ctx}",
            ks.len()
        );
        let k = ks[0];
        let want = known_figures(&all);
        let got = reported_figures(&k["launches"], &k["time"]);
        assert_eq!(
            got, want,
            "{name}: (launches, timed, total, min, median, max) reported against known\n{ctx}"
        );
        for (g, ns) in shapes {
            let of: Vec<&Value> = k["shapes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["group_count"] == serde_json::json!(g))
                .collect();
            assert_eq!(
                of.len(),
                1,
                "{name}: {} shapes of {g:?} groups\n{ctx}",
                of.len()
            );
            assert_eq!(
                reported_figures(&of[0]["launches"], &of[0]["time"]),
                known_figures(ns),
                "{name}, {g:?} groups: reported against known\n{ctx}"
            );
        }
        rows.push(format!(
            "{name}: launches {}, total_ns known {} reported {}, min/max known {}/{} reported {}/{}",
            got.0, want.2, got.2, want.3, want.5, got.3, got.5
        ));
    }
    for p in report["processes"].as_array().into_iter().flatten() {
        let pid = p["pid"].as_u64().unwrap();
        let known: u64 = ran
            .get(&pid)
            .map(|k| k.values().flat_map(|s| s.values().flatten()).sum())
            .unwrap_or(0);
        assert_eq!(
            p["time"]["total_ns"].as_u64(),
            Some(known),
            "process {pid}'s device time\n{ctx}"
        );
    }
    for pid in ran.keys() {
        assert!(
            report["processes"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["pid"].as_u64() == Some(*pid)),
            "process {pid} ran kernels but the report has no such process\n{ctx}"
        );
    }
    let known: u64 = by_name.values().flat_map(|s| s.values().flatten()).sum();
    assert_eq!(
        report["time"]["total_ns"].as_u64(),
        Some(known),
        "the run's device time\n{ctx}"
    );
    rows
}
