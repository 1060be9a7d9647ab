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

/// The report of immediate launches of two shapes: each kernel's and
/// shape's times the known ones (sums, extremes, the median's bucket,
/// the estimate over every launch), the process's and the run's device
/// time their sum; the table ranked by time with each kernel's share,
/// and `--sort launches` and `--sort name` as asked.
#[test]
fn the_report_and_the_table_give_the_known_times() {
    let s = scratch("time-report");
    let r = capture_timed(
        &s.out,
        &["--time=all"],
        &[],
        &[
            "imm:add_one:5:3",
            "imm:add_one:4:1",
            "imm:add_two:2:10",
            "result",
        ],
    );
    let ctx = r.ctx();
    let report = r.report();
    assert_eq!(report["schema"], 6, "{ctx}");
    let (one, three, ten) = (
        sim_ns(1, SIM_TICKS),
        sim_ns(3, SIM_TICKS),
        sim_ns(10, SIM_TICKS),
    );
    let add_one = only_kernel_named(&report, "add_one");
    let total = 5 * three + 4 * one;
    // Nine launches: four of 1 group, five of 3; the middle one of 3.
    let median = reported_median(three, one, three);
    assert_eq!(
        time_figures(&add_one["time"]),
        (9, 9, total, total, one, median, three),
        "{ctx}"
    );
    assert!(add_one["time_reason"].is_null(), "{ctx}");
    assert_eq!(
        time_figures(&report_shape(add_one, 3)["time"]),
        (5, 5, 5 * three, 5 * three, three, three, three),
        "{ctx}"
    );
    assert_eq!(
        time_figures(&report_shape(add_one, 1)["time"]),
        (4, 4, 4 * one, 4 * one, one, one, one),
        "{ctx}"
    );
    let add_two = only_kernel_named(&report, "add_two");
    assert_eq!(
        time_figures(&add_two["time"]),
        (2, 2, 2 * ten, 2 * ten, ten, ten, ten),
        "{ctx}"
    );
    let run_ns = total + 2 * ten;
    let summary = serde_json::json!({
        "sampling": {"policy": "all"},
        "sampled": 11,
        "timed": 11,
        "kernels_timed": 2,
        "total_ns": run_ns,
        "estimated_ns": run_ns,
    });
    assert_eq!(report["time"], summary, "{ctx}");
    assert_eq!(report["processes"][0]["time"], summary, "{ctx}");
    // 1.6 ms of 3.12 ms, then 1.52 ms: by time, add_two first.
    let row = |name: &str, time: &str, share: &str| {
        (name.to_string(), time.to_string(), share.to_string())
    };
    assert_eq!(
        table_time_rows(&r.stdout()),
        [
            row("add_two", "1.60 ms", "51.3%"),
            row("add_one", "1.52 ms", "48.7%")
        ],
        "{ctx}"
    );
    assert!(
        r.stdout().contains(
            "device time: 3.12 ms over 2 kernels (3.12 ms measured: 11 launches timed of 11 chosen, every launch)\n"
        ),
        "{ctx}"
    );
    let dir = s.out.display().to_string();
    // show --json: the kernel's time as the report has it.
    let shown = run_xpu_asm(&["show", "--json", &dir, "add_two"], &s.out);
    shown.assert_status(0);
    let answer = shown.json();
    assert_eq!(answer["time"], add_two["time"], "{}", shown.ctx());
    assert!(answer.get("time_reason").is_none(), "{}", shown.ctx());
    // A name both match: listed with their times, by time unless --sort.
    for (sort, want) in [
        ("time", ["#2 add_two", "#1 add_one"]),
        ("launches", ["#1 add_one", "#2 add_two"]),
    ] {
        let many = run_xpu_asm(&["show", &dir, "add_", "--sort", sort], &s.out);
        many.assert_status(1);
        let listed: Vec<String> = many
            .stderr()
            .lines()
            .filter_map(|l| {
                l.strip_prefix("  ")
                    .map(|l| l.split(" [").next().unwrap_or("").to_string())
            })
            .collect();
        assert_eq!(listed, want, "{}", many.ctx());
        assert!(
            many.stderr().contains("]: 1.60 ms, 51.3%\n"),
            "{}",
            many.ctx()
        );
    }
    for (sort, first) in [
        ("launches", "add_one"),
        ("name", "add_one"),
        ("time", "add_two"),
    ] {
        let c = run_xpu_asm(&["collect", &dir, "--sort", sort], &s.out);
        c.assert_status(0);
        let rows = table_time_rows(&c.stdout());
        assert_eq!(
            (rows.len(), rows[0].0.as_str()),
            (2, first),
            "--sort {sort}\n{}",
            c.ctx()
        );
    }
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
    // The report: 7 timed, their mean times the 21 launches.
    let report = r.report();
    assert_eq!(
        time_figures(&only_kernel_named(&report, "add_one")["time"]),
        (7, 7, 7 * ns, 21 * ns, ns, ns, ns),
        "{}",
        r.ctx()
    );
    let sampling = serde_json::json!({"policy": "sample", "first": 3, "every": 5});
    assert_eq!(report["time"]["sampling"], sampling, "{}", r.ctx());
    assert_eq!(
        table_time_rows(&r.stdout()),
        [(
            "add_one".to_string(),
            "~1.68 ms".to_string(),
            "100.0%".to_string()
        )],
        "{}",
        r.ctx()
    );
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
    // Without --time, no time in the report nor in the table.
    let plain_report = plain.report();
    assert_eq!(plain_report["schema"], 6, "{}", plain.ctx());
    assert_eq!(
        time_keys(&plain_report),
        Vec::<String>::new(),
        "{}",
        plain.ctx()
    );
    let timed_lines = plain
        .stdout_lines()
        .into_iter()
        .filter(|l| l.contains("device time") || l.starts_with("   #") && l.contains("share"))
        .collect::<Vec<_>>();
    assert_eq!(timed_lines, Vec::<String>::new(), "{}", plain.ctx());
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
    // The report: no time, and why, for each kernel and the run.
    let report = r.report();
    let why = "the device gave none (the launch had not completed when last looked at)";
    for name in ["add_one", "add_two"] {
        let k = only_kernel_named(&report, name);
        assert_eq!(
            (&k["time"], k["time_reason"].as_str()),
            (&serde_json::Value::Null, Some(why)),
            "{}",
            r.ctx()
        );
    }
    assert_eq!(report["time"]["reason"], why, "{}", r.ctx());
    assert_eq!(
        report["time"]["not_timed"],
        serde_json::json!({"not_complete": 8}),
        "{}",
        r.ctx()
    );
    assert!(
        r.stdout().contains(&format!("\nno device time: {why}\n")),
        "{}",
        r.ctx()
    );
    let rows = table_time_rows(&r.stdout());
    assert!(
        rows.len() == 2 && rows.iter().all(|(_, t, s)| t == "-" && s == "-"),
        "{rows:?}\n{}",
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
    // The report: 1,024 timed, the estimate over the 1,100 launches.
    let report = r.report();
    assert_pool_full_report(&report, ns, &r.ctx());
    assert!(
        r.stdout()
            .contains("\n  not timed: 76 the interposer's events were all in use (pool full)\n"),
        "{}",
        r.ctx()
    );
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
    // The report: add_two of both processes added up (four launches of
    // one group, three of two: the middle one of one), each process its
    // own.
    let report = r.report();
    let total = 4 * one + 3 * two;
    assert_eq!(
        time_figures(&only_kernel_named(&report, "add_two")["time"]),
        (7, 7, total, total, one, reported_median(one, one, two), two),
        "{}",
        r.ctx()
    );
    let mut per_process: Vec<(u64, u64)> = report["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (u(&p["time"]["timed"]), u(&p["time"]["total_ns"])))
        .collect();
    per_process.sort();
    assert_eq!(per_process, [(3, 3 * two), (104, 104 * one)], "{}", r.ctx());
    assert_eq!(
        (u(&report["time"]["timed"]), u(&report["time"]["total_ns"])),
        (107, 104 * one + 3 * two),
        "{}",
        r.ctx()
    );
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

/// The demo's workload (its steps, on its two SPIR-V modules) with `--time`
/// on the real stack, NEO without hardware emulating pvc, which completes
/// no kernel: the same exit and counts as without `--time`, every count
/// exact, and no time anywhere but why, per kernel, for the run and in the
/// table.
#[test]
fn the_demo_workload_on_neo_says_why_there_is_no_time() {
    let steps = [
        "imm:a:_ZTSZ4mainE10vector_add:1000",
        "imm:a:scale:300",
        "imm:a:scale_v2:20",
        "reg:a:common_kernel:4:50",
        "imm:b:common_kernel:7",
        "imm:b:only_in_b:2",
    ];
    let capture = |out: &Path, time: &[&str]| {
        Capture::emulating("pvc", out)
            .options(time)
            .hermetic()
            .program(workload())
            .args(["--via", "ddi"])
            .module("a", &spirv("a"))
            .module("b", &spirv("b"))
            .args(steps)
            .run()
    };
    let s = scratch("time-neo");
    let r = capture(&s.out, &["--time"]);
    let plain_dir = scratch("time-neo-plain");
    let plain = capture(&plain_dir.out, &[]);
    r.assert_status(0);
    plain.assert_status(0);
    let ctx = r.ctx();
    assert_eq!(
        counts(&only_record(&s.out)),
        counts(&only_record(&plain_dir.out)),
        "{ctx}"
    );
    let report = r.report();
    let mut launches: Vec<(String, u64)> = report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or("").to_string(),
                u(&k["launches"]),
            )
        })
        .collect();
    launches.sort();
    let want: Vec<(String, u64)> = [
        ("_ZTSZ4mainE10vector_add", 1000),
        ("common_kernel", 7),
        ("common_kernel", 200),
        ("only_in_b", 2),
        ("scale", 300),
        ("scale_v2", 20),
    ]
    .iter()
    .map(|(n, l)| (n.to_string(), *l))
    .collect();
    assert_eq!(launches, want, "{ctx}");
    // Its regular list ran 50 times before a sync: one run timed of
    // those, which the device did not complete either.
    let why = "the device gave none (the launch had not completed when last looked at)";
    let rerun = "a regular list ran again before its result was read (one run of those timed)";
    for k in report["kernels"].as_array().into_iter().flatten() {
        let want = match u(&k["launches"]) {
            200 => format!("{why} (4 launches); {rerun} (196 launches)"),
            _ => why.to_string(),
        };
        assert_eq!(
            (&k["time"], k["time_reason"].as_str()),
            (&serde_json::Value::Null, Some(want.as_str())),
            "{}: {ctx}",
            k["name"]
        );
    }
    let run_why = format!(
        "{why} (54 launches); {rerun} (196 launches); an emulated device (--emulate) runs no kernel"
    );
    assert_eq!(report["time"]["reason"], run_why.as_str(), "{ctx}");
    assert_eq!(u(&report["time"]["timed"]), 0, "{ctx}");
    assert!(
        r.stdout()
            .contains(&format!("\nno device time: {run_why}\n")),
        "{ctx}"
    );
    assert_eq!(
        time_keys(&plain.report()),
        Vec::<String>::new(),
        "{}",
        plain.ctx()
    );
    // show: the kernel's figures say why it has no time.
    let dir = s.out.display().to_string();
    let shown = run_xpu_asm(&["show", &dir, "scale_v2"], &s.out);
    shown.assert_status(0);
    let line = format!("  device time:  none: {why}");
    assert!(
        shown.stdout_lines().contains(&line),
        "{line}\n{}",
        shown.ctx()
    );
}

/// `diff --fail-on time+N%` of two runs, the second on a device 15%
/// slower (1,150 ticks per work-group for 1,000): `time+10%` holds for
/// each kernel, with its times, and `time+20%` for none; `any` leaves the
/// time, a measurement, out; the table's time rows and the JSON's times.
#[test]
fn diff_fails_on_time_grown_past_its_threshold() {
    let steps = ["imm:add_one:5:3", "imm:add_two:2:10"];
    let a = scratch("time-diff-a");
    capture_timed(&a.out, &["--time=all"], &[], &steps);
    let b = scratch("time-diff-b");
    capture_timed(
        &b.out,
        &["--time=all"],
        &[("XPU_ASM_SIM_TICKS", "1150")],
        &steps,
    );
    let (ad, bd) = (a.out.display().to_string(), b.out.display().to_string());
    let d = run_xpu_asm(&["diff", &ad, &bd, "--fail-on", "time+10%"], &b.out);
    d.assert_status(1);
    let held: Vec<String> = d
        .stderr()
        .lines()
        .filter(|l| l.contains("--fail-on"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        held,
        [
            "xpu-asm-run: --fail-on time+10%: add_one: time 1.20 ms -> 1.38 ms (+180 us, +15.0%)",
            "xpu-asm-run: --fail-on time+10%: add_two: time 1.60 ms -> 1.84 ms (+240 us, +15.0%)",
        ],
        "{}",
        d.ctx()
    );
    let rows: Vec<Vec<String>> = d
        .stdout_lines()
        .iter()
        .filter(|l| l.contains(" time "))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["add_one", "time", "1.20", "ms", "1.38", "ms", "+180", "us,", "+15.0%"],
            ["add_two", "time", "1.60", "ms", "1.84", "ms", "+240", "us,", "+15.0%"],
        ],
        "{}",
        d.ctx()
    );
    let quiet = run_xpu_asm(&["diff", &ad, &bd, "--fail-on", "time+20%,any"], &b.out);
    quiet.assert_status(0);
    assert!(!quiet.stderr().contains("--fail-on"), "{}", quiet.ctx());
    let j = run_xpu_asm(&["diff", &ad, &bd, "--json"], &b.out);
    j.assert_status(0);
    let times: Vec<(u64, u64)> = j.json()["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| (u(&k["a"]["time"]), u(&k["b"]["time"])))
        .collect();
    let (one, slow) = (sim_ns(1, SIM_TICKS), sim_ns(1, 1150));
    assert_eq!(
        times,
        [(15 * one, 15 * slow), (20 * one, 20 * slow)],
        "{}",
        j.ctx()
    );
}

/// `merge` of two captures (as two ranks' node-local folders): each
/// kernel's times added up over them, min and max combined, the median
/// from the two histograms added up; each process its own, the run's
/// theirs.
#[test]
fn merge_adds_up_the_times_of_its_captures() {
    let a = scratch("time-merge-a");
    capture_timed(&a.out, &["--time=all"], &[], &["imm:add_one:3:1"]);
    let b = scratch("time-merge-b");
    capture_timed(
        &b.out,
        &["--time=all"],
        &[],
        &["imm:add_one:2:3", "imm:add_two:1:2"],
    );
    let m = scratch("time-merge");
    let (ad, bd, md) = (
        a.out.display().to_string(),
        b.out.display().to_string(),
        m.out.display().to_string(),
    );
    let r = run_xpu_asm(&["merge", "-o", &md, &ad, &bd], &m.out);
    r.assert_status(0);
    let report = r.report();
    let (one, two, three) = (
        sim_ns(1, SIM_TICKS),
        sim_ns(2, SIM_TICKS),
        sim_ns(3, SIM_TICKS),
    );
    // Three launches of 1 group, two of 3: the middle one of 1.
    let total = 3 * one + 2 * three;
    assert_eq!(
        time_figures(&only_kernel_named(&report, "add_one")["time"]),
        (
            5,
            5,
            total,
            total,
            one,
            reported_median(one, one, three),
            three
        ),
        "{}",
        r.ctx()
    );
    assert_eq!(
        time_figures(&only_kernel_named(&report, "add_two")["time"]),
        (1, 1, two, two, two, two, two),
        "{}",
        r.ctx()
    );
    let mut per_process: Vec<(u64, u64)> = report["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (u(&p["time"]["timed"]), u(&p["time"]["total_ns"])))
        .collect();
    per_process.sort();
    assert_eq!(
        per_process,
        [(3, 3 * one), (3, 2 * three + two)],
        "{}",
        r.ctx()
    );
    assert_eq!(
        (
            u(&report["time"]["timed"]),
            u(&report["time"]["estimated_ns"])
        ),
        (6, total + two),
        "{}",
        r.ctx()
    );
}
