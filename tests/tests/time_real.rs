//! `--time` on the real stacks (NEO without hardware, which completes no
//! kernel and so gives no timestamps), on every kind of workload the suite
//! runs: the C workload through the loader's three ways (immediate and
//! regular lists, cooperative and indirect launches, threads, a fork), the
//! OpenCL workload, pyopencl, SYCL (dpctl on Debian 12's stack; dpnp through
//! SYCL's Level Zero v1 adapter on pvc and its v2 adapter on bmg on sid) and
//! ranks under `mpirun`. Each is run by `xpu-asm-run` without and with
//! `--time`, each run within a deadline (a hang fails the test): the exit
//! status, the workload's output and the files it writes are the same
//! byte for byte, every process's launch counts are the same, the record
//! holds for each kernel exactly the launches the default policy chooses,
//! none timed, each one "not complete" (or, for a regular list run again
//! before its sync, a rerun), and the report says why per kernel
//! (`time_reason`) and for the run.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_record::times::{NotTimed, Policy, Times};
use xpu_asm_tests::*;

/// A run longer than this is a hang: the test fails and shows its output.
const DEADLINE: Duration = Duration::from_secs(170);

/// One run of a workload under xpu-asm-run: the folder it ran in (the
/// capture is `xpu` inside it) and what it did.
struct Side {
    dir: PathBuf,
    out: PathBuf,
    run: Run,
}

/// The command of one run, given its folder, its capture folder and the
/// `--time` options (none, or `--time`).
type MakeRun<'a> = &'a dyn Fn(&Path, &Path, &[&str]) -> Command;

/// Runs `make`'s command in `root/name`, within [`DEADLINE`].
fn run_within_deadline(root: &Path, name: &str, time: &[&str], make: MakeRun) -> Side {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let out = dir.join("xpu");
    let mut cmd = under_deadline(&make(&dir, &out, time));
    let shown = shell_words(&cmd);
    let f = run_until(&mut cmd, DEADLINE + Duration::from_secs(30), Overrun::Kill);
    let code = f.output.status.code();
    let run = Run::new(shown, f.output, &out);
    assert!(
        f.overran.is_none() && !matches!(code, Some(124 | 137)),
        "{name}: still running after {DEADLINE:?} (a hang), killed with all its processes, on {}\n{}",
        stack_info(),
        run.ctx()
    );
    Side { dir, out, run }
}

/// `cmd` run by coreutils' `timeout -s KILL`, which kills its whole
/// process group at [`DEADLINE`]: a workload's processes that outlive a
/// killed xpu-asm-run (and would hold its output open) among them.
fn under_deadline(cmd: &Command) -> Command {
    let mut t = Command::new("timeout");
    t.args(["-s", "KILL", &DEADLINE.as_secs().to_string()])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        t.current_dir(d);
    }
    t
}

/// Every file under `dir` but the capture folder `skip`, by its path
/// relative to `dir`, with its SHA-256.
fn files_beside_capture(dir: &Path, skip: &Path) -> BTreeMap<String, String> {
    fn walk(d: &Path, root: &Path, skip: &Path, m: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p == skip {
                continue;
            }
            if p.is_dir() {
                walk(&p, root, skip, m);
            } else {
                let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
                m.insert(rel, sha256_file(&p));
            }
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, skip, &mut m);
    m
}

/// The records of a capture, sorted by their launch counts (the processes
/// of one run in a stable order), each read without warnings.
fn sorted_counts(out: &Path) -> Vec<BTreeMap<KernelKey, (u64, u64)>> {
    let recs = records(out);
    for r in &recs {
        assert!(r.warnings.is_empty(), "{:#?}", r.warnings);
    }
    let mut v: Vec<_> = recs.iter().map(counts).collect();
    v.sort();
    v
}

/// The same workload without and with `--time`: both exit 0, the same
/// output, the same files, the same counts. Returns the test's folder
/// (kept while its sides are looked at) and both sides.
fn unharmed_by_time(what: &str, make: MakeRun) -> (Scratch, Side, Side) {
    let s = stack_scratch(&format!("time-real-{what}"));
    let plain = run_within_deadline(&s.root, "plain", &[], make);
    let timed = run_within_deadline(&s.root, "timed", &["--time"], make);
    let ctx = format!(
        "{what} on {}\nwithout --time:\n{}\nwith --time:\n{}",
        stack_info(),
        plain.run.ctx(),
        timed.run.ctx()
    );
    assert_eq!(plain.run.output.status.code(), Some(0), "{ctx}");
    assert_eq!(
        timed.run.output.status.code(),
        plain.run.output.status.code(),
        "{ctx}"
    );
    // Ranks print at once: their lines in any order.
    let lines = |r: &Run| {
        let mut v: Vec<String> = String::from_utf8_lossy(&without_pids(&r.output.stdout))
            .lines()
            .map(str::to_string)
            .collect();
        if what == "mpirun" {
            v.sort();
        }
        v
    };
    assert_eq!(lines(&timed.run), lines(&plain.run), "stdout\n{ctx}");
    assert_eq!(
        files_beside_capture(&timed.dir, &timed.out),
        files_beside_capture(&plain.dir, &plain.out),
        "the workload's files\n{ctx}"
    );
    let counted = sorted_counts(&plain.out);
    assert!(
        counted.iter().any(|c| c.values().any(|(l, _)| *l > 0)),
        "no launch counted\n{ctx}"
    );
    assert_eq!(sorted_counts(&timed.out), counted, "launch counts\n{ctx}");
    (s, plain, timed)
}

/// The reasons NEO gives every workload without hardware: it completes no
/// launch; a regular list run again before a sync is a rerun.
const NEO_REASONS: &[NotTimed] = &[NotTimed::NotComplete, NotTimed::Rerun];

/// What a kernel's record must say when the device gave no time: every
/// launch the default policy chooses (of each shape, by its launches; a
/// regular list's appends times its runs) chosen, none timed, none
/// pending, each for one of the `allowed` reasons.
fn assert_no_time_recorded(rec: &ProcessRecord, allowed: &[NotTimed], ctx: &str) {
    assert_eq!(rec.time, Some(Policy::DEFAULT), "{ctx}");
    for k in rec.kernels.values().filter(|k| k.launches > 0) {
        let name = String::from_utf8_lossy(&k.name);
        let t: &Times = k
            .time
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: no time block\n{ctx}"));
        let reasons = t.reasons();
        assert_eq!(
            (t.timed, t.pending(), t.total_ns, t.min_ns, t.max_ns),
            (0, 0, 0, None, None),
            "{name}: {t:?}\n{ctx}"
        );
        assert!(
            !reasons.is_empty() && reasons.iter().all(|(r, _)| allowed.contains(r)),
            "{name}: {reasons:?}, not only {allowed:?}\n{ctx}"
        );
        if k.appended == k.launches {
            // Immediate lists, or regular ones run once: the policy's
            // choice of each shape's launches (and of the kernel's others).
            let shaped: u64 = k.shapes.iter().map(|s| s.launches).sum();
            let want: u64 = k
                .shapes
                .iter()
                .map(|s| Policy::DEFAULT.chosen_of(s.launches))
                .sum::<u64>()
                + Policy::DEFAULT.chosen_of(k.launches - shaped);
            assert_eq!(t.sampled, want, "{name}: chosen of {:?}\n{ctx}", k.shapes);
        }
    }
}

/// The words the report gives for why launches have no time: each reason
/// (the device's giving none first, then most first) with its launches
/// when there are several.
fn said_reasons(t: &Times) -> String {
    let mut reasons = t.reasons();
    reasons.sort_by_key(|(r, _)| *r != NotTimed::NotComplete);
    match reasons.as_slice() {
        [(r, _)] => r.describe().to_string(),
        many => many
            .iter()
            .map(|(r, n)| {
                let s = if *n == 1 { "launch" } else { "launches" };
                format!("{} ({n} {s})", r.describe())
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Each kernel of the report has no `time` and, as its `time_reason`, the
/// record's reasons in words; the run's device time says none was timed
/// and why (under `--emulate`, when the device completed nothing, that an
/// emulated device runs no kernel).
fn assert_no_time_reported(timed: &Side, emulated: bool, allowed: &[NotTimed]) {
    let report = timed.run.report();
    let ctx = timed.run.ctx();
    assert_eq!(report["schema"], 6, "{ctx}");
    let mut per_kernel: BTreeMap<String, Times> = BTreeMap::new();
    let mut all = Times::default();
    for rec in records(&timed.out) {
        assert_no_time_recorded(&rec, allowed, &ctx);
        for k in rec.kernels.values().filter(|k| k.launches > 0) {
            let sha = rec.modules.get(&k.module).map(|m| m.sha256.clone());
            let key = format!(
                "{}@{}",
                String::from_utf8_lossy(&k.name),
                sha.unwrap_or_default()
            );
            let t = k.time.clone().unwrap_or_default();
            all.add(&t);
            per_kernel.entry(key).and_modify(|a| a.add(&t)).or_insert(t);
        }
    }
    let kernels: Vec<&Value> = report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| u(&k["launches"]) > 0)
        .collect();
    assert_eq!(kernels.len(), per_kernel.len(), "{ctx}");
    for k in kernels {
        let key = format!(
            "{}@{}",
            k["name"].as_str().unwrap_or(""),
            k["module_sha256"].as_str().unwrap_or("")
        );
        let t = per_kernel
            .get(&key)
            .unwrap_or_else(|| panic!("{key} is not in the records\n{ctx}"));
        assert_eq!(
            (&k["time"], k["time_reason"].as_str()),
            (&Value::Null, Some(said_reasons(t).as_str())),
            "{key}\n{ctx}"
        );
    }
    let mut why = said_reasons(&all);
    if emulated && all.not_timed[NotTimed::NotComplete.index()] > 0 {
        why.push_str("; an emulated device (--emulate) runs no kernel");
    }
    let run = &report["time"];
    assert_eq!(
        (u(&run["sampled"]), u(&run["timed"]), run["reason"].as_str()),
        (all.sampled, 0, Some(why.as_str())),
        "{run:#}\n{ctx}"
    );
}

/// The C workload's steps: a file of its own written before and after,
/// and launches in every way it makes them, each kernel its own count.
const C_STEPS: [&str; 10] = [
    "open:own.txt",
    "say:before",
    "imm:a:_ZTSZ4mainE10vector_add:230",
    "coop:a:scale:3",
    "indirect:a:scale_v2:4",
    "reg:a:common_kernel:3:5",
    "regreset:b:common_kernel:2:3",
    "threads:b:only_in_b:2:12",
    "fork:a:scale:6",
    "say:after",
];

fn c_workload(via: &str) {
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        Capture::emulating("pvc", out)
            .options(time)
            .option("-q")
            .hermetic()
            .dir(dir)
            .program(workload_for(via))
            .args(["--via", via])
            .module("a", &spirv("a"))
            .module("b", &spirv("b"))
            .args(C_STEPS)
            .command()
    };
    let (_s, _, timed) = unharmed_by_time(&format!("c-{via}"), &make);
    let own = std::fs::read_to_string(timed.dir.join("own.txt")).unwrap_or_default();
    assert_eq!(own, "before\nafter\n", "{}", timed.run.ctx());
    assert_no_time_reported(&timed, true, NEO_REASONS);
}

#[test]
fn c_workload_linked_unharmed_and_says_why_no_time() {
    c_workload("link");
}

#[test]
fn c_workload_through_tables_unharmed_and_says_why_no_time() {
    c_workload("ddi");
}

#[test]
fn c_workload_by_dlsym_unharmed_and_says_why_no_time() {
    c_workload("dlsym");
}

/// The device time tests' workload (tests/workload/timed.c) on NEO:
/// immediate launches, the workload's own plain events, a regular list run
/// several times and reset and, on sid (NEO 26, whose counter-based events
/// Debian 12's NEO lacks), counter-based events without timestamps on an
/// in-order list (the interposer's event before a barrier). NEO 26 waits
/// for ever in a query of an event of an in-order list that never
/// completes: nothing hangs.
#[test]
fn timed_workload_on_neo_unharmed_and_says_why_no_time() {
    let mut steps = vec![
        "imm:add_one:25:3",
        "userplain:add_two:3:2",
        "reg:add_one:2:4:1",
    ];
    if stack() == Stack::Sid {
        steps.push("cb:add_one:5:1");
    }
    steps.push("result");
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        Capture::emulating("pvc", out)
            .options(time)
            .option("-q")
            .hermetic()
            .dir(dir)
            .program(timed_workload())
            .arg(time_spirv())
            .args(&steps)
            .command()
    };
    let (_s, _, timed) = unharmed_by_time("timed", &make);
    assert_no_time_reported(&timed, true, NEO_REASONS);
}

/// The OpenCL workload: a program from source and one from SPIR-V,
/// `clEnqueueNDRangeKernel`, `clEnqueueTask`, a cloned kernel.
fn opencl_workload_timed(via: &str) {
    let src = workload_src_dir().join("kernels_cl.cl");
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        Capture::emulating("pvc", out)
            .options(time)
            .option("-q")
            .hermetic()
            .dir(dir)
            .program(opencl_workload(via))
            .args(["--via", via])
            .args(["--program", &format!("src=source:{}", src.display())])
            .args(["--program", &format!("il=il:{}", spirv("b").display())])
            .args([
                "nd:src:cl_scale:13",
                "clone:src:cl_scale_twice:5",
                "task:il:only_in_b:2",
                "nd:il:common_kernel:7",
            ])
            .command()
    };
    let (_s, _, timed) = unharmed_by_time(&format!("opencl-{via}"), &make);
    assert_no_time_reported(&timed, true, NEO_REASONS);
}

#[test]
fn opencl_workload_linked_unharmed_and_says_why_no_time() {
    opencl_workload_timed("link");
}

#[test]
fn opencl_workload_by_dlsym_unharmed_and_says_why_no_time() {
    opencl_workload_timed("dlsym");
}

#[test]
fn pyopencl_unharmed_and_says_why_no_time() {
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        Capture::emulating("pvc", out)
            .options(time)
            .option("-q")
            .hermetic()
            .dir(dir)
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("PYOPENCL_NO_CACHE", "1")
            .program(pyopencl_venv().join("bin/python"))
            .arg(workspace_dir().join("tests/opencl/pyopencl_ops.py"))
            .args(["3", "5", "17"])
            .command()
    };
    let (_s, _, timed) = unharmed_by_time("pyopencl", &make);
    assert_no_time_reported(&timed, true, NEO_REASONS);
}

/// Ranks under Open MPI's `mpirun`, one xpu-asm-run per rank.
#[test]
fn mpirun_ranks_unharmed_and_say_why_no_time() {
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        let mut cmd = jobs::command("mpirun.openmpi");
        cmd.current_dir(dir);
        jobs::open_mpi_session_dir(&mut cmd, &dir.join("ompi"));
        cmd.args(["--oversubscribe", "-np", "3"])
            .arg(xpu_asm_run())
            .args(["--emulate", "pvc", "-q"])
            .args(time)
            .arg("-o")
            .arg(out)
            .arg("--")
            .args(workload_line(
                "ddi",
                &["imm:a:scale:25", "reg:a:scale_v2:2:3"],
            ));
        cmd
    };
    let (_s, plain, timed) = unharmed_by_time("mpirun", &make);
    assert_eq!(records(&plain.out).len(), 3, "{}", plain.run.ctx());
    assert_no_time_reported(&timed, true, NEO_REASONS);
}

/// dpctl 0.15 on the oneAPI 2024.0 SYCL runtime (tests/sycl/ops.py),
/// through its Level Zero backend on immediate and on regular lists, and
/// through its OpenCL backend; `allowed`: the reasons its kernels have no
/// time.
fn dpctl_timed(
    what: &str,
    selector: &'static str,
    immediate: Option<&'static str>,
    allowed: &[NotTimed],
) {
    let venv = sycl_venv();
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        let mut c = Capture::emulating("pvc", out)
            .options(time)
            .option("-q")
            .hermetic()
            .dir(dir)
            .env("ONEAPI_DEVICE_SELECTOR", selector)
            .env("LD_LIBRARY_PATH", venv.join("lib"))
            .env("PYTHONNOUSERSITE", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("HOME", dir)
            .program(venv.join("bin/python"))
            .arg(workspace_dir().join("tests/sycl/ops.py"))
            .arg("3");
        if let Some(v) = immediate {
            c = c.env("SYCL_PI_LEVEL_ZERO_USE_IMMEDIATE_COMMANDLISTS", v);
        }
        c.command()
    };
    let (_s, _, timed) = unharmed_by_time(what, &make);
    assert_no_time_reported(&timed, true, allowed);
}

#[test]
fn dpctl_immediate_lists_unharmed_and_says_why_no_time() {
    dpctl_timed("dpctl-imm", "level_zero:gpu", Some("1"), NEO_REASONS);
}

/// On regular lists SYCL passes an event of its own with each append,
/// which a regular list's timing does not read: every chosen launch is
/// said to be "an event that cannot be timed without changing the
/// workload".
#[test]
fn dpctl_regular_lists_unharmed_and_says_why_no_time() {
    dpctl_timed(
        "dpctl-reg",
        "level_zero:gpu",
        Some("0"),
        &[NotTimed::UserEvent],
    );
}

#[test]
fn dpctl_opencl_backend_unharmed_and_says_why_no_time() {
    dpctl_timed("dpctl-cl", "opencl:gpu", None, NEO_REASONS);
}

/// dpnp 0.20 on oneAPI 2026.2's SYCL runtime (tests/sycl/dpnp_ops.py, its
/// GEMM left out: oneMKL picks its kernels anew in each run here) on `p`,
/// through the adapter SYCL takes there (v2 with tests/shim/ze_resident.c
/// behind the interposer).
#[cfg(feature = "sid")]
fn dpnp_timed(p: &xpu_asm_tests::sycl2026::Platform) {
    use xpu_asm_tests::sycl2026::*;
    let make = |dir: &Path, out: &Path, time: &[&str]| {
        let mut sc = SidCommand::new(xpu_asm_run(), dir);
        sc.arg("-q").args(time).arg("-o").arg(out).arg("--");
        dpnp_ops_time_workload(&mut sc, p);
        sc.envs(neo26_env(p.product));
        sc.command()
    };
    let (_s, _, timed) = unharmed_by_time(&format!("dpnp-{}", p.product), &make);
    assert_no_time_reported(&timed, false, NEO_REASONS);
}

#[cfg(feature = "sid")]
#[test]
fn dpnp_v1_adapter_pvc_unharmed_and_says_why_no_time() {
    dpnp_timed(&xpu_asm_tests::sycl2026::PVC);
}

#[cfg(feature = "sid")]
#[test]
fn dpnp_v2_adapter_bmg_unharmed_and_says_why_no_time() {
    dpnp_timed(&xpu_asm_tests::sycl2026::BMG);
}
