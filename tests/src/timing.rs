//! The device time tests' support: the simulated Level Zero driver
//! (`tests/fake/ze_sim.c`, loaded by the real loader through
//! `ZE_ENABLE_ALT_DRIVERS`), the workload that launches on it
//! (`tests/workload/timed.c`) and what a record says of a kernel's times.

use crate::*;
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
