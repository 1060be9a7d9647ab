//! Device times (`xpu-asm-run --time`) equal to known ones on the real NEO
//! and IGC: the forwarding driver of `tests/fake/ze_fwd.c` hands every call
//! to NEO (emulating a GPU without hardware) and gives the events of the
//! kernels that run known timestamps; its own log of what ran is the truth
//! each report is held to, kernel by kernel and shape by shape (launches,
//! timed, total, min, median, max), process by process and for the run.
//! The C workload on both stacks (immediate and regular lists, the
//! workload's own timestamp and plain events, polls, fences, threads, a
//! fork, an exit with launches pending; on sid counter-based events), and
//! on sid dpnp through SYCL's v1 adapter (pvc) and its v2 adapter (bmg).
//! The workload's own measured times are the known ones; its output and
//! what ran are the same with and without `--time`.

use std::path::Path;
use xpu_asm_tests::*;

/// The timed workload's steps here, and the kernels' own timestamps they
/// print (`own K ns`).
fn neo_steps() -> Vec<&'static str> {
    let mut s = vec![
        "imm:add_one:12:3",
        "userts:add_two:3:2",
        "userplain:add_one:3:1",
        "poll:add_two:2:1",
        "reg:add_one:2:3:2",
        "fence:add_two:2:2:1",
        "threads:add_one:2:3:1",
        "fork:add_two:2:1",
    ];
    if stack() == Stack::Sid {
        s.extend(["cb:add_one:4:2", "cbts:add_two:2:3"]);
    }
    s.extend(["pending:add_one:2:1", "result"]);
    s
}

fn capture_over_neo(out: &Path, log: &Path, time: &[&str]) -> Run {
    Capture::new(out)
        .options(time)
        .option("-q")
        .hermetic()
        .envs(fwd_env("pvc", log))
        .program(timed_workload())
        .arg(time_spirv())
        .args(neo_steps())
        .run_ok()
}

/// The C workload's every launch timed, each exactly its known time; its
/// own measured times the known ones, and the same with and without
/// `--time`, as are its output and what ran.
#[test]
fn c_workload_on_neo_takes_its_known_times() {
    let s = scratch("time-neo-c");
    let log = s.root.join("ran");
    let timed = capture_over_neo(&s.out, &log, &["--time=all"]);
    let ctx = format!("on {}\n{}", stack_info(), timed.ctx());
    let ran = fwd_ran(&log);
    let rows = assert_known_times(&read_report(&s.out), &ran, &ctx);
    eprintln!(
        "known against reported ({}):\n{}",
        stack_info(),
        rows.join("\n")
    );

    // The workload's own timestamps: each launch of add_two's userts step
    // (2 groups) and cbts step (3 groups), as the driver gave them.
    let known_ns = |g: u64| -> u64 {
        let all: Vec<u64> = ran
            .values()
            .filter_map(|k| k.get("add_two"))
            .filter_map(|sh| sh.get(&[g, 1, 1]))
            .flatten()
            .copied()
            .collect();
        assert!(
            !all.is_empty() && all.iter().all(|n| *n == all[0]),
            "{all:?}"
        );
        all[0]
    };
    let mut want = vec![format!("own add_two {}", known_ns(2)); 3];
    if stack() == Stack::Sid {
        want.extend(vec![format!("own add_two {}", known_ns(3)); 2]);
    }
    let own: Vec<String> = own_lines(&timed)
        .into_iter()
        .filter(|l| l.starts_with("own "))
        .collect();
    assert_eq!(own, want, "the workload's own times\n{ctx}");

    let plain_out = s.root.join("plain");
    let plain_log = s.root.join("ran-plain");
    let plain = capture_over_neo(&plain_out, &plain_log, &[]);
    assert_eq!(
        own_lines(&plain),
        own_lines(&timed),
        "the workload's output with and without --time, on {}\n{}",
        stack_info(),
        plain.ctx()
    );
    let strip = |r: Ran| -> Vec<_> { r.into_values().collect() };
    assert_eq!(
        strip(fwd_ran(&plain_log)),
        strip(ran),
        "what ran with and without --time, on {}",
        stack_info()
    );
    assert!(
        read_report(&plain_out)["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|k| k.get("time").is_none()),
        "a report without --time has no time, on {}",
        stack_info()
    );
}

/// dpnp 0.20 on oneAPI 2026.2's SYCL runtime (tests/sycl/dpnp_ops.py, as in
/// time_real.rs) over the forwarding driver on `p`, with the default
/// `--time` (its kernels launch fewer than 10 times per shape: each one
/// timed), through the adapter SYCL takes there (its log says which); its
/// output and what ran the same without `--time`.
#[cfg(feature = "sid")]
fn dpnp_known_times(p: &xpu_asm_tests::sycl2026::Platform) {
    use xpu_asm_tests::sycl2026::*;
    let s = scratch(&format!("time-neo-dpnp-{}", p.product));
    let adapter_log = s.root.join("ur-level-zero.txt");
    // One run: its capture, its driver's log, its stdout and context.
    let run = |time: &[&str], out: &Path, log: &Path| -> (Vec<u8>, String) {
        let mut sc = SidCommand::new("timeout", &s.root);
        // The whole tree killed at the deadline: nothing hangs the suite.
        sc.args(["-s", "KILL", "170"])
            .arg(xpu_asm_run())
            .arg("-q")
            .args(time)
            .arg("-o")
            .arg(out)
            .arg("--");
        dpnp_ops_time_workload(&mut sc, p);
        sc.envs(fwd_env(p.product, log)).env(
            "UR_LOG_LEVEL_ZERO",
            format!("level:info;output:file,{}", adapter_log.display()),
        );
        let r = run_until(
            &mut sc.command(),
            std::time::Duration::from_secs(175),
            Overrun::Kill,
        );
        let ctx = format!(
            "dpnp on {} (sid), {time:?}, {:?}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
            p.product,
            r.overran,
            r.output.status,
            String::from_utf8_lossy(&r.output.stdout),
            String::from_utf8_lossy(&r.output.stderr)
        );
        assert!(r.output.status.success(), "{ctx}");
        (r.output.stdout, ctx)
    };
    let (plain_out, plain_log) = (s.root.join("plain"), s.root.join("ran-plain"));
    let (plain_said, _) = run(&[], &plain_out, &plain_log);
    let log = s.root.join("ran");
    let (timed_said, ctx) = run(&["--time"], &s.out, &log);
    assert_eq!(
        String::from_utf8_lossy(&timed_said),
        String::from_utf8_lossy(&plain_said),
        "dpnp's output with and without --time\n{ctx}"
    );
    let strip = |r: Ran| -> Vec<_> { r.into_values().collect() };
    assert_eq!(
        strip(fwd_ran(&log)),
        strip(fwd_ran(&plain_log)),
        "what ran with and without --time\n{ctx}"
    );
    let said = std::fs::read_to_string(&adapter_log).unwrap_or_default();
    assert!(
        said.contains(p.adapter.chosen_line()),
        "SYCL did not take its {:?} adapter on {}: its log lacks {:?}\n{said}\n{ctx}",
        p.adapter,
        p.product,
        p.adapter.chosen_line()
    );
    let ran = fwd_ran(&log);
    let report = read_report(&s.out);
    let rows = assert_known_times(&report, &ran, &ctx);
    eprintln!(
        "known against reported, dpnp on {}:\n{}",
        p.product,
        rows.join("\n")
    );
    assert_eq!(
        report["time"]["sampling"]["policy"], "sample",
        "the default policy\n{ctx}"
    );
}

#[cfg(feature = "sid")]
#[test]
fn dpnp_v1_adapter_pvc_takes_its_known_times() {
    dpnp_known_times(&xpu_asm_tests::sycl2026::PVC);
}

#[cfg(feature = "sid")]
#[test]
fn dpnp_v2_adapter_bmg_takes_its_known_times() {
    dpnp_known_times(&xpu_asm_tests::sycl2026::BMG);
}
