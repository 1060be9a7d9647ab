//! How the workload ends: every way, each launch before the end reported.

use super::*;

/// Launches made before every ending: one kernel on an immediate list, one
/// appended once to a regular list executed twice.
const BEFORE_END: [&str; 2] = ["imm:a:scale:4", "reg:a:scale_v2:1:2"];
const AFTER_BEFORE_END: [(&str, u64, u64); 2] = [(SCALE, 4, 4), (SCALE_V2, 2, 1)];

/// Runs the workload with `end:<how>` under xpu-asm-run (quiet: stdout is
/// the workload's alone).
fn run_ending(s: &WorkScratch, via: &str, how: &str) -> Run {
    let end = format!("end:{how}");
    let mut steps = BEFORE_END.to_vec();
    steps.push(&end);
    run(
        xpu_in_work(s, &["-q", "--emulate", "pvc"], &workload_line(via, &steps)),
        &s.out,
    )
}

/// The report of a workload that ran [`BEFORE_END`] then ended as `exit`
/// says (`{"code": n}` or `{"signal": n}`), with xpu-asm-run exiting `status`.
fn assert_ended(run: &Run, how: &str, exit: Value, status: i32) {
    assert_ended_printing(run, how, &[], exit, status)
}

/// [`assert_ended`] for a workload that printed `more` after `end <how>`.
fn assert_ended_printing(run: &Run, how: &str, more: &[&str], exit: Value, status: i32) {
    run.assert_status(status);
    let mut want = vec![
        "imm a scale 4".to_string(),
        "reg a scale_v2 1 2".to_string(),
        format!("end {how}"),
    ];
    want.extend(more.iter().map(|m| m.to_string()));
    assert_eq!(
        run.stdout_lines(),
        want,
        "the workload's own output must pass through untouched\n{}",
        run.ctx()
    );
    let r = run.report();
    assert_eq!(r["exit"], exit, "how the command ended\n{}", run.ctx());
    assert_kernels(run, &r, &AFTER_BEFORE_END);
    let procs = processes(&r);
    assert_eq!(procs.len(), 1, "one process\n{}", run.ctx());
    let p = &procs[0];
    assert_eq!(process_counts(p), (6, 5, 0), "{}", run.ctx());
    assert_eq!(
        (&p["exit"], p["ended"].as_str()),
        (&exit, Some(SEEN)),
        "how the process ended\n{}",
        run.ctx()
    );
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(run.out.join("run.json")).expect("run.json"))
            .expect("run.json is JSON");
    assert_eq!(p["pid"], run_json["pid"], "{}", run.ctx());
    assert_eq!(run_json["exit"], exit, "run.json\n{}", run.ctx());
}

#[test]
fn ends_by_returning_from_main() {
    let s = work_scratch();
    let r = run_ending(&s, "link", "exit");
    assert_ended(&r, "exit", json!({"code": 0}), 0);
}

#[test]
fn ends_by_exit_from_another_thread() {
    let s = work_scratch();
    let r = run_ending(&s, "ddi", "thread-exit");
    assert_ended(&r, "thread-exit", json!({"code": 3}), 3);
}

#[test]
fn ends_by_underscore_exit() {
    let s = work_scratch();
    let r = run_ending(&s, "dlsym", "_exit");
    assert_ended(&r, "_exit", json!({"code": 0}), 0);
}

#[test]
fn ends_by_abort() {
    let s = work_scratch();
    let r = run_ending(&s, "link", "abort");
    assert_ended(&r, "abort", json!({"signal": 6}), 128 + 6);
}

#[test]
fn ends_by_sigsegv() {
    let s = work_scratch();
    let r = run_ending(&s, "ddi", "segv");
    assert_ended(&r, "segv", json!({"signal": 11}), 128 + 11);
}

#[test]
fn ends_by_sigkill_right_after_the_last_launch() {
    let s = work_scratch();
    let r = run_ending(&s, "dlsym", "kill");
    assert_ended(&r, "kill", json!({"signal": 9}), 128 + 9);
}

/// xpu-asm-run running the workload (reaching Level Zero `via`) through its
/// launches up to the point where it waits for SIGTERM.
fn spawn_until_ready(s: &WorkScratch, via: &str) -> Live {
    let mut steps = BEFORE_END.to_vec();
    steps.push("end:term-wait");
    let mut live = Live::spawn(
        xpu_in_work(s, &["-q", "--emulate", "pvc"], &workload_line(via, &steps)),
        &s.out,
    );
    live.wait_stdout("ready");
    live
}

/// SIGTERM sent from outside straight to the workload (a supervisor
/// stopping it), not through xpu-asm-run.
#[test]
fn ends_by_sigterm_from_outside() {
    let s = work_scratch();
    let mut live = spawn_until_ready(&s, "link");
    let pids = record_file_pids(&s.out);
    if pids.len() != 1 {
        let ctx = live.ctx(&format!(
            "expected the record of one process, found pids {pids:?}"
        ));
        panic!("{ctx}");
    }
    live.kill("TERM", &pids[0].to_string());
    let r = live.finish();
    assert_ended_printing(&r, "term-wait", &["ready"], json!({"signal": 15}), 128 + 15);
}

/// SIGTERM sent to xpu-asm-run (a supervisor stopping the whole job): it
/// passes it on, survives it, and reports.
#[test]
fn ends_by_sigterm_sent_to_xpu_asm_run() {
    let s = work_scratch();
    let mut live = spawn_until_ready(&s, "dlsym");
    let pid = live.pid().to_string();
    live.kill("TERM", &pid);
    let r = live.finish();
    assert_ended_printing(&r, "term-wait", &["ready"], json!({"signal": 15}), 128 + 15);
}
