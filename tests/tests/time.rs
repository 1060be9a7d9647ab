//! Device times (`xpu-asm-run --time`) equal to known ones: the workload of
//! `tests/workload/timed.c` on the simulated driver of `tests/fake/ze_sim.c`
//! (loaded by the real loader through `ZE_ENABLE_ALT_DRIVERS`), whose
//! kernels take a known number of ticks per work-group, on both stacks.
//! Every figure is exact: launches chosen, timed, their total, min and max,
//! and why the others have none; the workload's result and its own measured
//! times are the same with and without `--time`.

use std::path::Path;
use xpu_asm_record::times::NotTimed;
use xpu_asm_tests::*;

/// A capture of the timed workload's `steps` on the simulated driver with
/// `time` (`--time...`, or nothing) and the driver's `settings`.
fn capture_timed(out: &Path, time: &[&str], settings: &[(&str, &str)], steps: &[&str]) -> Run {
    let mut c = Capture::new(out)
        .options(time)
        .hermetic()
        .envs([sim_drivers_env(
            settings.iter().any(|(k, _)| k.starts_with("XPU_ASM_SIM2_")),
        )])
        .envs(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .program(timed_workload())
        .arg(time_spirv());
    c = c.args(steps);
    c.run_ok()
}

/// Immediate launches without an event: each timed, exactly its ticks.
#[test]
fn immediate_launches_take_their_known_times() {
    let s = scratch("time-imm");
    let r = capture_timed(
        &s.out,
        &["--time=all"],
        &[],
        &["imm:add_one:5:3", "imm:add_two:2:1", "result"],
    );
    let rec = only_record(&s.out);
    let ctx = r.ctx();
    let one = sim_ns(3, SIM_TICKS);
    assert_eq!(
        figures(&times_of(&rec, "add_one", &ctx)),
        (5, 5, 5 * one, Some(one), Some(one)),
        "on {}\n{ctx}",
        stack_info()
    );
    let two = sim_ns(1, SIM_TICKS);
    let t = times_of(&rec, "add_two", &ctx);
    assert_eq!(
        figures(&t),
        (2, 2, 2 * two, Some(two), Some(two)),
        "on {}\n{ctx}",
        stack_info()
    );
    assert_eq!(t.median().map(|m| m.ns), Some(two));
    assert_eq!(rec.time, Some(xpu_asm_record::times::Policy::ALL));
    assert_eq!(rec.timers.len(), 1, "{:?}", rec.timers);
    assert_eq!(
        (rec.timers[0].ticks_per_second, rec.timers[0].valid_bits),
        (12_500_000, 32)
    );
    assert_eq!(own_lines(&r), ["result 608"], "{ctx}");
}

/// The default policy's numbers set by `XPU_ASM_TIME`: of 21 launches the
/// first 3 and every 5th are chosen.
#[test]
fn the_policy_chooses_the_first_then_one_in_n() {
    let s = scratch("time-policy");
    let r = Capture::new(&s.out)
        .option("--time")
        .hermetic()
        .envs([sim_drivers_env(false)])
        .env(xpu_asm_record::times::TIME_ENV, "sample:3:5")
        .program(timed_workload())
        .arg(time_spirv())
        .args(["imm:add_one:21:1"])
        .run_ok();
    let rec = only_record(&s.out);
    let ns = sim_ns(1, SIM_TICKS);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (7, 7, 7 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
    let k = rec
        .kernels
        .values()
        .find(|k| k.name == b"add_one")
        .expect("add_one");
    assert_eq!(k.launches, 21);
}

/// The workload's own timestamp events and plain ones (given timestamps
/// on a copy of their pool's descriptor); launches whose timestamp is not
/// ready when first read (the driver answers NOT_READY once), read again
/// at the workload's next query: the same times, the same result and the
/// same measures of the workload's own, with and without `--time`.
#[test]
fn the_workloads_own_events_are_timed_and_keep_their_meaning() {
    let steps = [
        "userts:add_one:4:2",
        "userplain:add_two:3:1",
        "poll:add_one:2:5",
        "result",
    ];
    let settings = [("XPU_ASM_SIM_NOT_READY", "1")];
    let s = scratch("time-user");
    let r = capture_timed(&s.out, &["--time=all"], &settings, &steps);
    let plain_dir = scratch("time-user-plain");
    let plain = capture_timed(&plain_dir.out, &[], &settings, &steps);
    assert_eq!(
        own_lines(&r),
        own_lines(&plain),
        "with --time:\n{}\nwithout:\n{}",
        r.ctx(),
        plain.ctx()
    );
    let own_two = format!("own add_one {}", sim_ns(2, SIM_TICKS));
    assert_eq!(
        own_lines(&r).iter().filter(|l| **l == own_two).count(),
        4,
        "{}",
        r.ctx()
    );
    let rec = only_record(&s.out);
    let (two, five) = (sim_ns(2, SIM_TICKS), sim_ns(5, SIM_TICKS));
    let one = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&one),
        (8, 8, 4 * two + 4 * five, Some(two), Some(five)),
        "{}",
        r.ctx()
    );
    let t = times_of(&rec, "add_two", &r.ctx());
    let ns = sim_ns(1, SIM_TICKS);
    assert_eq!(
        figures(&t),
        (3, 3, 3 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
    assert!(plain_dir.out.join("records").is_dir());
    assert_eq!(only_record(&plain_dir.out).time, None);
}

/// Regular lists run several times: synced after each run, every run
/// timed; run again before a sync, one run of those timed and the others
/// "rerun"; with a fence waited on; reset and appended again.
#[test]
fn regular_lists_run_several_times_and_reset() {
    let s = scratch("time-regular");
    let steps = [
        "reg:add_one:2:3:1",
        "regnosync:add_two:2:3:2",
        "fence:add_one:1:2:1",
        "result",
    ];
    let r = capture_timed(&s.out, &["--time=all"], &[], &steps);
    let rec = only_record(&s.out);
    let one = sim_ns(1, SIM_TICKS);
    // add_one: 2 appends x 3 runs + 1 after the reset; 1 x 2 runs + 1.
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (10, 10, 10 * one, Some(one), Some(one)),
        "{}",
        r.ctx()
    );
    // add_two: 2 x 3 runs with one sync: 2 timed, 4 run again; then 1.
    let two = sim_ns(2, SIM_TICKS);
    let t = times_of(&rec, "add_two", &r.ctx());
    assert_eq!(
        figures(&t),
        (7, 3, 3 * two, Some(two), Some(two)),
        "{}",
        r.ctx()
    );
    assert_eq!(t.reasons(), [(NotTimed::Rerun, 4)], "{}", r.ctx());
    assert_eq!(
        own_lines(&r),
        [format!("result {}", 10 * 32 + 7 * 2 * 32 * 2)],
        "{}",
        r.ctx()
    );
}

/// Counter-based events on an in-order list: without timestamps (the
/// kernel signals the interposer's event, a barrier the workload's), and
/// with them (read as they are, the workload's own measures the same).
#[test]
fn counter_based_events_on_in_order_lists() {
    let steps = ["cb:add_one:3:2", "cbts:add_two:2:1", "result"];
    let s = scratch("time-cb");
    let r = capture_timed(&s.out, &["--time=all"], &[], &steps);
    let plain_dir = scratch("time-cb-plain");
    let plain = capture_timed(&plain_dir.out, &[], &[], &steps);
    assert_eq!(
        own_lines(&r),
        own_lines(&plain),
        "with --time:\n{}\nwithout:\n{}",
        r.ctx(),
        plain.ctx()
    );
    let rec = only_record(&s.out);
    let two = sim_ns(2, SIM_TICKS);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (3, 3, 3 * two, Some(two), Some(two)),
        "{}",
        r.ctx()
    );
    let one = sim_ns(1, SIM_TICKS);
    let t = times_of(&rec, "add_two", &r.ctx());
    assert_eq!(
        figures(&t),
        (2, 2, 2 * one, Some(one), Some(one)),
        "{}",
        r.ctx()
    );
}

/// A kernel whose timestamps wrap the 32-bit counter: its time still the
/// known one.
#[test]
fn a_counter_wrap_is_handled() {
    let s = scratch("time-wrap");
    // The clock starts 1,500 ticks before 2^32: a kernel of 2 groups
    // (2,000 ticks) ends past the wrap.
    let start = ((1u64 << 32) - 1500).to_string();
    let r = capture_timed(
        &s.out,
        &["--time=all"],
        &[("XPU_ASM_SIM_START", &start)],
        &["imm:add_one:3:2"],
    );
    let rec = only_record(&s.out);
    let ns = sim_ns(2, SIM_TICKS);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (3, 3, 3 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
}

/// A device that never completes a kernel: no hang, the workload's exit
/// unchanged, no time: "not complete" for every launch chosen.
#[test]
fn a_device_that_never_completes_gives_no_time() {
    let s = scratch("time-never");
    let steps = [
        "imm:add_one:3:1",
        "userplain:add_two:2:1",
        "reg:add_one:1:2:1",
    ];
    let r = capture_timed(
        &s.out,
        &["--time=all"],
        &[("XPU_ASM_SIM_NEVER", "1")],
        &steps,
    );
    let rec = only_record(&s.out);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(figures(&t), (6, 0, 0, None, None), "{}", r.ctx());
    assert_eq!(t.reasons(), [(NotTimed::NotComplete, 6)], "{}", r.ctx());
    let t = times_of(&rec, "add_two", &r.ctx());
    assert_eq!(
        (t.timed, t.reasons()),
        (0, vec![(NotTimed::NotComplete, 2)]),
        "{}",
        r.ctx()
    );
}

/// More launches without a sync than the interposer has events: those
/// past its 1,024 are "pool full", never waited for.
#[test]
fn a_full_pool_is_said_not_waited_for() {
    let s = scratch("time-pool");
    let r = capture_timed(&s.out, &["--time=all"], &[], &["many:add_one:1100:1"]);
    let rec = only_record(&s.out);
    let ns = sim_ns(1, SIM_TICKS);
    let t = times_of(&rec, "add_one", &r.ctx());
    assert_eq!(
        figures(&t),
        (1100, 1024, 1024 * ns, Some(ns), Some(ns)),
        "{}",
        r.ctx()
    );
    assert_eq!(t.reasons(), [(NotTimed::PoolFull, 76)], "{}", r.ctx());
}

/// Threads, each with its own list and kernel handle; a forked child; a
/// process that exits with launches it never synced.
#[test]
fn threads_fork_and_an_exit_with_launches_pending() {
    let s = scratch("time-procs");
    let steps = [
        "threads:add_one:4:25:1",
        "fork:add_two:3:2",
        "pending:add_two:4:1",
    ];
    let r = capture_timed(&s.out, &["--time=all"], &[], &steps);
    let recs = records(&s.out);
    assert_eq!(recs.len(), 2, "{}", r.ctx());
    let (parent, child): (Vec<_>, Vec<_>) = recs.iter().partition(|p| p.forked_from.is_none());
    let (parent, child) = (parent[0], child[0]);
    let one = sim_ns(1, SIM_TICKS);
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
    let two = sim_ns(2, SIM_TICKS);
    let t = times_of(child, "add_two", &r.ctx());
    assert_eq!(
        figures(&t),
        (3, 3, 3 * two, Some(two), Some(two)),
        "{}",
        r.ctx()
    );
    assert!(kernel_times(child, "add_one").is_none());
}

/// Two drivers in one process, each with its own ticks: each kernel's
/// times its own driver's.
#[test]
fn two_drivers_in_one_process() {
    let s = scratch("time-two");
    let settings = [
        ("XPU_ASM_SIM2_TICKS", "3000"),
        ("XPU_ASM_SIM2_HZ", "25000000"),
    ];
    let steps = ["imm:add_one:2:1", "driver:1", "imm:add_one:3:1"];
    let r = capture_timed(&s.out, &["--time=all"], &settings, &steps);
    let rec = only_record(&s.out);
    let mut per_kernel: Vec<(u64, u64, Option<u64>)> = rec
        .kernels
        .values()
        .filter(|k| k.name == b"add_one")
        .map(|k| {
            k.time
                .as_ref()
                .map_or((0, 0, None), |t| (t.timed, t.total_ns, t.max_ns))
        })
        .collect();
    per_kernel.sort();
    // Driver 2: 3,000 ticks of 40 ns.
    let (a, b) = (sim_ns(1, SIM_TICKS), 3000 * 40);
    assert_eq!(
        per_kernel,
        [(2, 2 * a, Some(a)), (3, 3 * b, Some(b))],
        "{}",
        r.ctx()
    );
}
