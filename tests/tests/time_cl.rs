//! OpenCL device times (`xpu-asm-run --time`) equal to known ones: the
//! workload of `tests/workload/timed_cl.c` on the simulated ICD of
//! `tests/fake/cl_sim.c` (loaded by the real ICD loader, ocl-icd, through
//! `OCL_ICD_VENDORS`), whose kernels take a known number of ns per
//! work-group, on both stacks. Every figure is exact: launches chosen,
//! timed, their total, min and max, and why the others have none; the
//! workload's result and what it sees of its queues and events (their
//! properties, the array it made one with, its own profiling) are the same
//! with and without `--time`.

use std::path::Path;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_record::times::NotTimed;
use xpu_asm_tests::*;

/// A capture of the OpenCL timed workload's `steps` on the simulated ICD
/// with `time` (`--time...`, or nothing) and the ICD's `settings`.
fn capture_cl(out: &Path, time: &[&str], settings: &[(&str, &str)], steps: &[&str]) -> Run {
    Capture::new(out)
        .options(time)
        .hermetic()
        .envs([cl_sim_env()])
        .envs(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .program(timed_cl_workload())
        .arg(workload_src_dir().join("kernels_time.cl"))
        .args(steps)
        .run_ok()
}

/// The same steps with `--time=all` and without: the same own lines, and
/// no time in the report without.
fn with_and_without(what: &str, settings: &[(&str, &str)], steps: &[&str]) -> (Run, ProcessRecord) {
    let s = scratch(what);
    let mut r = capture_cl(&s.out, &["--time=all"], settings, steps);
    let plain_dir = scratch(&format!("{what}-plain"));
    let plain = capture_cl(&plain_dir.out, &[], settings, steps);
    assert_eq!(
        own_lines(&r),
        own_lines(&plain),
        "with --time:\n{}\nwithout:\n{}",
        r.ctx(),
        plain.ctx()
    );
    assert_eq!(only_record(&plain_dir.out).time, None);
    assert_eq!(
        time_keys(&plain.report()),
        Vec::<String>::new(),
        "{}",
        plain.ctx()
    );
    let rec = only_record(&s.out);
    // The capture's folder lives as long as the run.
    r.keep(s);
    (r, rec)
}

/// `clEnqueueNDRangeKernel` and `clEnqueueTask` on queues made without
/// profiling (by `clCreateCommandQueue`, and by
/// `clCreateCommandQueueWithProperties` from a read-only array), and on one
/// the workload made with profiling and reads itself: each timed, exactly;
/// the queues' properties, their array and the events' profiling as the
/// workload made them.
#[test]
fn enqueues_take_their_known_times() {
    let steps = [
        "nd:add_one:3:2",
        "task:add_two:2",
        "own:add_one:2:3",
        "props:add_two:2:1",
        "result",
    ];
    let (r, rec) = with_and_without("timecl-enq", &[], &steps);
    let ctx = r.ctx();
    let (one, two, three) = (CLSIM_NS, 2 * CLSIM_NS, 3 * CLSIM_NS);
    assert_eq!(
        figures(&times_of(&rec, "add_one", &ctx)),
        (5, 5, 3 * two + 2 * three, Some(two), Some(three)),
        "on {}\n{ctx}",
        stack_info()
    );
    assert_eq!(
        figures(&times_of(&rec, "add_two", &ctx)),
        (4, 4, 4 * one, Some(one), Some(one)),
        "on {}\n{ctx}",
        stack_info()
    );
    let own_three = format!("own add_one {three}");
    let want = [
        own_three.as_str(),
        &own_three,
        "own props 0",
        "own array 4243 0 0",
        "own profiling -7",
        "own profiling -7",
        "result 516",
    ];
    assert_eq!(own_lines(&r), want, "{ctx}");
    assert_eq!(rec.time, Some(xpu_asm_record::times::Policy::ALL));
    // The report: per kernel and shape the known figures (add_one: three
    // enqueues of 2 groups, two of 3; the middle one of 2), the run's
    // device time their sum, the table ranked by it.
    let report = r.report();
    let k = only_kernel_named(&report, "add_one");
    let total = 3 * two + 2 * three;
    assert_eq!(
        time_figures(&k["time"]),
        (
            5,
            5,
            total,
            total,
            two,
            reported_median(two, two, three),
            three
        ),
        "{ctx}"
    );
    assert_eq!(
        time_figures(&report_shape(k, 2)["time"]),
        (3, 3, 3 * two, 3 * two, two, two, two),
        "{ctx}"
    );
    assert_eq!(
        time_figures(&report_shape(k, 3)["time"]),
        (2, 2, 2 * three, 2 * three, three, three, three),
        "{ctx}"
    );
    assert_eq!(
        time_figures(&only_kernel_named(&report, "add_two")["time"]),
        (4, 4, 4 * one, 4 * one, one, one, one),
        "{ctx}"
    );
    assert_eq!(
        (
            u(&report["time"]["timed"]),
            u(&report["time"]["total_ns"]),
            u(&report["processes"][0]["time"]["estimated_ns"])
        ),
        (9, total + 4 * one, total + 4 * one),
        "{ctx}"
    );
    let row = |n: &str, t: &str, s: &str| (n.to_string(), t.to_string(), s.to_string());
    assert_eq!(
        table_time_rows(&r.stdout()),
        [
            row("add_one", "12.0 us", "75.0%"),
            row("add_two", "4.00 us", "25.0%")
        ],
        "{ctx}"
    );
}

/// The workload's events released before their result was ready (timing
/// keeps them until it reads them), polled by the workload, and a blocking
/// read as the only sync, with results not ready when first looked at.
#[test]
fn released_polled_and_blocking_with_results_not_ready() {
    let steps = [
        "release:add_one:3:1",
        "poll:add_two:2:2",
        "blocking:add_one:2:1",
        "result",
    ];
    let settings = [("XPU_ASM_CLSIM_NOT_READY", "2")];
    let (r, rec) = with_and_without("timecl-events", &settings, &steps);
    let ctx = r.ctx();
    let one = CLSIM_NS;
    assert_eq!(
        figures(&times_of(&rec, "add_one", &ctx)),
        (5, 5, 5 * one, Some(one), Some(one)),
        "on {}\n{ctx}",
        stack_info()
    );
    assert_eq!(
        figures(&times_of(&rec, "add_two", &ctx)),
        (2, 2, 4 * one, Some(2 * one), Some(2 * one)),
        "on {}\n{ctx}",
        stack_info()
    );
    assert_eq!(
        own_lines(&r),
        [format!("result {}", 5 * 32 + 2 * 64 * 2)],
        "{ctx}"
    );
}

/// The default policy's numbers set by `XPU_ASM_TIME`: of 21 enqueues the
/// first 3 and every 5th are chosen.
#[test]
fn the_policy_chooses_the_first_then_one_in_n() {
    let s = scratch("timecl-policy");
    let r = Capture::new(&s.out)
        .option("--time")
        .hermetic()
        .envs([cl_sim_env()])
        .env(xpu_asm_record::times::TIME_ENV, "sample:3:5")
        .program(timed_cl_workload())
        .arg(workload_src_dir().join("kernels_time.cl"))
        .args(["nd:add_one:21:1"])
        .run_ok();
    let rec = only_record(&s.out);
    let t = times_of(&rec, "add_one", &r.ctx());
    let ns = CLSIM_NS;
    assert_eq!(
        figures(&t),
        (7, 7, 7 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
    let k = rec.kernels.values().find(|k| k.name == b"add_one");
    assert_eq!(k.map(|k| k.launches), Some(21), "{}", r.ctx());
}

/// A device that never completes a kernel: no hang, the workload's exit
/// unchanged, no time: "not complete" for every enqueue chosen. A device
/// without profiling: its queues made as the workload asked, "no
/// profiling". More enqueues without a sync than timing keeps: "pool
/// full", never waited for.
#[test]
fn never_complete_no_profiling_and_a_full_pool() {
    let s = scratch("timecl-never");
    let steps = [
        "nd:add_one:3:1",
        "release:add_two:2:1",
        "pending:add_one:1:1",
    ];
    let r = capture_cl(
        &s.out,
        &["--time=all"],
        &[("XPU_ASM_CLSIM_NEVER", "1")],
        &steps,
    );
    let rec = only_record(&s.out);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(figures(&t), (4, 0, 0, None, None), "{}", r.ctx());
    assert_eq!(t.reasons(), [(NotTimed::NotComplete, 4)], "{}", r.ctx());
    let t = times_of(&rec, "add_two", &r.ctx());
    assert_eq!(t.reasons(), [(NotTimed::NotComplete, 2)], "{}", r.ctx());
    let why = "the device gave none (the launch had not completed when last looked at)";
    assert_time_reasons(&r, &[("add_one", why), ("add_two", why)], why);

    let s = scratch("timecl-noprof");
    let r = capture_cl(
        &s.out,
        &["--time=all"],
        &[("XPU_ASM_CLSIM_NO_PROFILING", "1")],
        &["nd:add_one:2:1", "props:add_two:1:1"],
    );
    let rec = only_record(&s.out);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(t.reasons(), [(NotTimed::NoProfiling, 2)], "{}", r.ctx());
    let t = times_of(&rec, "add_two", &r.ctx());
    assert_eq!(t.reasons(), [(NotTimed::NoProfiling, 1)], "{}", r.ctx());
    let why = "the OpenCL queue could not be given profiling";
    assert_time_reasons(&r, &[("add_one", why), ("add_two", why)], why);

    let s = scratch("timecl-pool");
    let r = capture_cl(&s.out, &["--time=all"], &[], &["many:add_one:1100:1"]);
    let rec = only_record(&s.out);
    let ns = CLSIM_NS;
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (1100, 1024, 1024 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
    assert_eq!(t.reasons(), [(NotTimed::PoolFull, 76)], "{}", r.ctx());
    let report = r.report();
    assert_pool_full_report(&report, ns, &r.ctx());
}

/// The report of a run with no time: each kernel's `time_reason` (by
/// name) and the run's, which the table's line says too.
fn assert_time_reasons(r: &Run, kernels: &[(&str, &str)], run: &str) {
    let report = r.report();
    for (name, why) in kernels {
        let k = only_kernel_named(&report, name);
        assert_eq!(
            (&k["time"], k["time_reason"].as_str()),
            (&serde_json::Value::Null, Some(*why)),
            "{name}\n{}",
            r.ctx()
        );
    }
    assert_eq!(report["time"]["reason"], run, "{}", r.ctx());
    let line = format!("no device time: {run}");
    assert!(r.stdout_lines().contains(&line), "{line}\n{}", r.ctx());
}

/// Threads, each with its own queue and kernel; a forked child; a process
/// that exits with enqueues it never synced.
#[test]
fn threads_fork_and_an_exit_with_enqueues_pending() {
    let s = scratch("timecl-procs");
    let steps = [
        "threads:add_one:4:25:1",
        "fork:add_two:3:2",
        "pending:add_two:4:1",
    ];
    let r = capture_cl(&s.out, &["--time=all"], &[], &steps);
    let recs = records(&s.out);
    assert_eq!(recs.len(), 2, "{}", r.ctx());
    let (parent, child): (Vec<_>, Vec<_>) = recs.iter().partition(|p| p.forked_from.is_none());
    let (parent, child) = (parent[0], child[0]);
    let one = CLSIM_NS;
    let t = times_of(parent, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (100, 100, 100 * one, Some(one), Some(one)),
        "{}",
        r.ctx()
    );
    let t = times_of(parent, "add_two", &r.ctx());
    assert_eq!(
        figures(&t),
        (4, 4, 4 * one, Some(one), Some(one)),
        "{}",
        r.ctx()
    );
    let t = times_of(child, "add_two", &r.ctx());
    assert_eq!(
        figures(&t),
        (3, 3, 6 * one, Some(2 * one), Some(2 * one)),
        "{}",
        r.ctx()
    );
    assert!(kernel_times(child, "add_one").is_none());
}
