//! The device time tests' support: the simulated Level Zero driver
//! (`tests/fake/ze_sim.c`, loaded by the real loader through
//! `ZE_ENABLE_ALT_DRIVERS`), the workload that launches on it
//! (`tests/workload/timed.c`) and what a record and a report say of a
//! kernel's times.

use crate::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_record::times::Times;

/// The simulated driver's ticks per work-group, unless a test sets others.
pub const SIM_TICKS: u64 = 1000;
/// Its timer: 12.5 MHz, 80 ns a tick.
pub const SIM_NS_PER_TICK: u64 = 80;

/// The device time of one launch of `groups` work-groups on the simulated
/// driver with its default settings (`ticks` per group).
pub fn sim_ns(groups: u64, ticks: u64) -> u64 {
    groups * ticks * SIM_NS_PER_TICK
}

/// The simulated driver, built once per stack with its gcc and Level Zero
/// headers: `1` reads `XPU_ASM_SIM_*`, `2` (a second driver of its own)
/// `XPU_ASM_SIM2_*`.
pub fn sim_driver(n: u8) -> PathBuf {
    static BUILT: [OnceLock<PathBuf>; 2] = [const { OnceLock::new() }; 2];
    BUILT[usize::from(n == 2)]
        .get_or_init(|| {
            require_stack();
            let dest = build_dir().join(format!("libze_sim{n}.so"));
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args([
                    "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                ]);
                if n == 2 {
                    cmd.args([
                        "-DSIM_ENV=\"XPU_ASM_SIM2_\"",
                        "-DSIM_NAME=\"xpu-asm simulated device 2\"",
                    ]);
                }
                cmd.arg(workspace_dir().join("tests/fake/ze_sim.c"))
                    .arg("-o")
                    .arg(out)
                    .arg("-lpthread");
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// `ZE_ENABLE_ALT_DRIVERS` naming the simulated driver (both, with `two`).
pub fn sim_drivers_env(two: bool) -> (String, String) {
    let mut v = sim_driver(1).display().to_string();
    if two {
        v = format!("{v},{}", sim_driver(2).display());
    }
    ("ZE_ENABLE_ALT_DRIVERS".to_string(), v)
}

/// The device time tests' workload, linked with the loader.
pub fn timed_workload() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            require_stack();
            let dest = build_dir().join("timed");
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                    .arg(workload_src_dir().join("timed.c"))
                    .arg("-o")
                    .arg(out)
                    .args(["-lze_loader", "-lpthread"]);
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// SPIR-V of `tests/workload/kernels_time.cl` (add_one, add_two).
pub fn time_spirv() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            ocloc_build(
                "kernels_time.cl",
                &["-spv_only", "-device", "pvc"],
                "spv",
                "out.spv",
            )
        })
        .clone()
}

/// The times of the kernel called `name` in `rec` (every kernel of that
/// name, added up); none when it has none.
pub fn kernel_times(rec: &ProcessRecord, name: &str) -> Option<Times> {
    let mut all: Option<Times> = None;
    for k in rec.kernels.values().filter(|k| k.name == name.as_bytes()) {
        if let Some(t) = &k.time {
            match &mut all {
                Some(a) => a.add(t),
                None => all = Some(t.clone()),
            }
        }
    }
    all
}

/// What a test asserts of a kernel's times: `(sampled, timed, total_ns,
/// min_ns, max_ns)`.
pub fn figures(t: &Times) -> (u64, u64, u64, Option<u64>, Option<u64>) {
    (t.sampled, t.timed, t.total_ns, t.min_ns, t.max_ns)
}

/// The simulated OpenCL ICD's ns per work-group, unless a test sets others.
pub const CLSIM_NS: u64 = 1000;

/// The simulated OpenCL ICD (`tests/fake/cl_sim.c`), built once per stack
/// with its gcc and OpenCL headers.
pub fn cl_sim_icd() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            require_stack();
            let dest = build_dir().join("libcl_sim.so");
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args([
                    "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                ])
                .arg(workspace_dir().join("tests/fake/cl_sim.c"))
                .arg("-o")
                .arg(out)
                .arg("-lpthread");
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// ocl-icd's `OCL_ICD_VENDORS` naming the simulated ICD alone (ocl-icd
/// 2.3 takes a library's path there; it has no `OCL_ICD_FILENAMES`).
pub fn cl_sim_env() -> (String, String) {
    (
        "OCL_ICD_VENDORS".to_string(),
        cl_sim_icd().display().to_string(),
    )
}

/// The OpenCL device time tests' workload (`tests/workload/timed_cl.c`),
/// linked with the ICD loader.
pub fn timed_cl_workload() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            require_stack();
            let dest = build_dir().join("timed_cl");
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                    .arg(workload_src_dir().join("timed_cl.c"))
                    .arg("-o")
                    .arg(out)
                    .args(["-l:libOpenCL.so.1", "-lpthread"]);
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// Kernel `name`'s times in `rec` ([`kernel_times`]), which it must have.
pub fn times_of(rec: &ProcessRecord, name: &str, ctx: &str) -> Times {
    kernel_times(rec, name)
        .unwrap_or_else(|| panic!("{name} has no times on {}\n{ctx}", stack_info()))
}

/// A timed workload's own lines (its result, what it saw and measured
/// itself): `own ...` and `result ...`.
pub fn own_lines(r: &Run) -> Vec<String> {
    r.stdout_lines()
        .into_iter()
        .filter(|l| l.starts_with("own ") || l.starts_with("result "))
        .collect()
}

/// What a test asserts of a report's `time` object (a kernel's, a
/// shape's): `(sampled, timed, total_ns, estimated_ns, min_ns, median_ns,
/// max_ns)`.
pub fn time_figures(t: &Value) -> (u64, u64, u64, u64, u64, u64, u64) {
    let n = |f: &str| {
        t[f].as_u64()
            .unwrap_or_else(|| panic!("no {f} in the time object {t:#}"))
    };
    (
        n("sampled"),
        n("timed"),
        n("total_ns"),
        n("estimated_ns"),
        n("min_ns"),
        n("median_ns"),
        n("max_ns"),
    )
}

/// A full pool's report of kernel `add_one`: 1,100 launches, the first
/// 1,024 timed (`ns` each), 76 not timed for the full pool, the estimate
/// over every launch. `ctx` says the run.
pub fn assert_pool_full_report(report: &Value, ns: u64, ctx: &str) {
    let k = &only_kernel_named(report, "add_one")["time"];
    assert_eq!(
        time_figures(k),
        (1100, 1024, 1024 * ns, 1100 * ns, ns, ns, ns),
        "{ctx}"
    );
    assert_eq!(
        k["not_timed"],
        serde_json::json!({"pool_full": 76}),
        "{ctx}"
    );
}

/// The `median_ns` a report gives for launches whose true (lower) median
/// is `ns`, their shortest `min` and longest `max`: the midpoint of the
/// histogram bucket of `ns` (the record's buckets) within min and max.
pub fn reported_median(ns: u64, min: u64, max: u64) -> u64 {
    use xpu_asm_record::times::{bucket_bounds, bucket_of};
    let (lo, hi) = bucket_bounds(bucket_of(ns));
    let lo = lo.clamp(min, max);
    let hi = hi.map_or(max, |h| h - 1).clamp(min, max);
    lo + (hi - lo).div_ceil(2)
}

/// The one kernel of the report `r` named `name`.
pub fn only_kernel_named<'a>(r: &'a Value, name: &str) -> &'a Value {
    let found: Vec<&Value> = r["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| k["name"] == name)
        .collect();
    match found.as_slice() {
        [k] => k,
        _ => panic!("{} kernels named {name} in {r:#}", found.len()),
    }
}

/// The shape of kernel `k` of `groups` work-groups (`[groups, 1, 1]`).
pub fn report_shape(k: &Value, groups: u32) -> &Value {
    k["shapes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["group_count"] == serde_json::json!([groups, 1, 1]))
        .unwrap_or_else(|| panic!("no shape of {groups} groups in {k:#}"))
}

/// The table's kernel rows, in order: each kernel's name, time and share
/// (`-` when it has none), from the output of a run or collection with
/// `--time` (the workload's lines before the table are skipped).
pub fn table_time_rows(table: &str) -> Vec<(String, String, String)> {
    let mut lines = table
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("# "));
    let head = lines.next().unwrap_or_default();
    assert!(
        head.split_whitespace()
            .take(4)
            .eq(["#", "launches", "time", "share"]),
        "not a table with a time column:\n{table}"
    );
    lines
        .map_while(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.first()?.parse::<u64>().ok()?;
            Some(match w.get(2) {
                Some(&"-") => (w[4].to_string(), "-".to_string(), w[3].to_string()),
                _ => (
                    w[5].to_string(),
                    format!("{} {}", w[2], w[3]),
                    w[4].to_string(),
                ),
            })
        })
        .collect()
}

/// The keys of device times (`time`, `time_reason`) anywhere in `v`, with
/// their paths: none in the report of a run without `--time`.
pub fn time_keys(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let here = format!("{at}.{k}");
                    if k == "time" || k == "time_reason" {
                        out.push(here.clone());
                    }
                    walk(x, &here, out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}
