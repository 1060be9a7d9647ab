//! Slurm on one host, for real: `srun` and `sbatch` of a cluster the test
//! support starts and stops (tests/src/slurm.rs, scripts/slurm-cluster.sh),
//! with the C workload's distinct kernels and counts in each rank, so that
//! every total is exact.

use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};
use xpu_asm_tests::jobs::*;
use xpu_asm_tests::slurm::{cluster, Cluster};
use xpu_asm_tests::*;

/// The one-host cluster and a [`Scratch`] of the test's own.
fn cluster_scratch() -> (&'static Cluster, Scratch) {
    let s = stack_scratch("slurm-test");
    (cluster(), s)
}

/// `srun -n N ARGS...` from the scratch folder.
fn srun(c: &Cluster, s: &Scratch, n: usize, args: &[String]) -> Command {
    let mut cmd = c.command("srun");
    cmd.current_dir(&s.root)
        .arg("-n")
        .arg(n.to_string())
        .args(args);
    cmd
}

/// The job id of the capture in `out` (`job.json`).
fn job_id(run: &Run) -> String {
    let j: Value = serde_json::from_slice(&std::fs::read(run.out.join("job.json")).unwrap())
        .unwrap_or_else(|e| panic!("job.json: {e}\n{}", run.ctx()));
    assert_eq!(j["launcher"], "slurm", "{}", run.ctx());
    j["id"].as_str().unwrap_or("?").to_string()
}

/// Four ranks on this host, ranks and local ranks 0..3, each process ended
/// with status 0 (rank 3 as `last` says).
fn assert_four_ranks_ending(run: &Run, r: &Value, last: Value) {
    assert_ranks_launched(run, r, 4);
    let host = xpu_asm_tests::record::host_name();
    assert_eq!(
        process_ranks(r),
        (0..4).map(|i| (i, host.clone())).collect::<Vec<_>>(),
        "{}",
        run.ctx()
    );
    for p in r["processes"].as_array().into_iter().flatten() {
        assert_eq!(p["local_rank"], p["rank"], "one node\n{}", run.ctx());
        let want = if p["rank"] == 3 {
            last.clone()
        } else {
            serde_json::json!({"code": 0})
        };
        assert_eq!(p["exit"], want, "{}", run.ctx());
    }
}

#[test]
fn srun_one_xpu_asm_run_per_rank_gives_one_report() {
    let (c, s) = cluster_scratch();
    let mut args = per_rank(&s.out);
    args.extend(workload_line("ddi", &STEPS));
    let r1 = run(srun(c, &s, 4, &args), &s.out);
    r1.assert_status(0);
    let r = r1.report();
    assert_four_ranks_ending(&r1, &r, serde_json::json!({"code": 0}));
    assert_one_table(&r1, "0-3");
    assert!(
        job_id(&r1).starts_with("slurm:") && job_id(&r1).ends_with(".0"),
        "step 0 of a job: {}\n{}",
        job_id(&r1),
        r1.ctx()
    );
    assert_eq!(r["exit"], serde_json::json!({"code": 0}), "{}", r1.ctx());
    // A second srun into the same folder is another job: every rank refuses.
    let before = std::fs::read(s.out.join("report.json")).unwrap();
    let r2 = run(srun(c, &s, 4, &args), &s.out);
    assert!(!r2.output.status.success(), "{}", r2.ctx());
    assert!(
        r2.stderr().contains("holds the capture of another job"),
        "{}",
        r2.ctx()
    );
    assert_eq!(std::fs::read(s.out.join("report.json")).unwrap(), before);
}

#[test]
fn sbatch_job_script_gives_one_report() {
    let (c, s) = cluster_scratch();
    let script = s.root.join("job.sh");
    let mut line = vec!["srun".to_string()];
    line.extend(per_rank(&s.out));
    line.extend(workload_line("ddi", &STEPS));
    std::fs::write(&script, format!("#!/bin/sh\n{}\n", line.join(" "))).unwrap();
    let log = s.root.join("job.log");
    let id = c.sbatch(&s.root, &["-n", "4"], &script, &log);
    let (state, exit) = c.wait(&id, RUN_TIMEOUT);
    let text = std::fs::read(&log).unwrap_or_default();
    let r1 = Run::new(
        format!("sbatch -n 4 {} (job {id})", script.display()),
        Output {
            status: std::process::ExitStatus::from_raw(0),
            stdout: text,
            stderr: Vec::new(),
        },
        &s.out,
    );
    assert_eq!(
        (state.as_str(), exit.as_str()),
        ("COMPLETED", "0:0"),
        "{}",
        r1.ctx()
    );
    let r = r1.report();
    assert_four_ranks_ending(&r1, &r, serde_json::json!({"code": 0}));
    assert_one_table(&r1, "0-3");
    // The batch script's srun is step 0 of the submitted job.
    assert_eq!(job_id(&r1), format!("slurm:{id}.0"), "{}", r1.ctx());
}

/// Rank 3 (`SLURM_PROCID`) waits for the others to end, then ends as `how`
/// says: `kill` (SIGKILL after its launches) or an exit status.
fn srun_job_with_last_rank(how: &str) -> Run {
    let (c, s) = cluster_scratch();
    let script = s.root.join("rank.sh");
    std::fs::write(
        &script,
        format!(
            "if [ \"$SLURM_PROCID\" = 3 ]; then {}; else exec {}; fi\n",
            last_rank_ending(&s.out, 3, how),
            workload_line("ddi", &STEPS).join(" ")
        ),
    )
    .unwrap();
    let mut args = per_rank(&s.out);
    args.extend(["sh".to_string(), script.display().to_string()]);
    let mut r = run(srun(c, &s, 4, &args), &s.out);
    r.keep(s);
    r
}

#[test]
fn srun_failing_rank_status_is_passed_on() {
    let r1 = srun_job_with_last_rank("3");
    // srun exits with the highest status of its tasks.
    r1.assert_status(3);
    let r = r1.report();
    // The workload itself exited 0; its shell then exited 3.
    assert_four_ranks_ending(&r1, &r, serde_json::json!({"code": 0}));
    assert_one_table(&r1, "0-3");
    assert_eq!(r["exit"], serde_json::json!({"code": 3}), "{}", r1.ctx());
}

#[test]
fn srun_rank_killed_by_sigkill_keeps_its_launches() {
    let r1 = srun_job_with_last_rank("kill");
    // xpu-asm-run of rank 3 exits 128 + 9 for its command's SIGKILL.
    r1.assert_status(128 + 9);
    let r = r1.report();
    assert_four_ranks_ending(&r1, &r, serde_json::json!({"signal": 9}));
    let killed: Vec<&Value> = r["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["rank"] == 3)
        .collect();
    assert_eq!(killed[0]["launches"], 8, "{}", r1.ctx());
    assert_eq!(r["exit"], serde_json::json!({"signal": 9}), "{}", r1.ctx());
}

/// `xpu-asm-run --emulate pvc -o OUT -- srun -n 4 EXTRA... app`, with
/// `env` added to xpu-asm-run's environment.
fn srun_inside(extra: &[&str], env: &[(&str, &str)]) -> Run {
    let (c, s) = cluster_scratch();
    let mut cmd = c.command(xpu_asm_run());
    cmd.current_dir(&s.root)
        .args(["--emulate", "pvc", "-o"])
        .arg(&s.out)
        .args(["--", "srun", "-n", "4"])
        .args(extra)
        .args(workload_line("ddi", &STEPS))
        .envs(env.iter().copied());
    let mut r = run(cmd, &s.out);
    r.keep(s);
    r
}

/// Every rank recorded: ranks 0..3 from `SLURM_PROCID`, one table, no warning.
fn assert_inside_recorded(r1: &Run) {
    r1.assert_status(0);
    let r = r1.report();
    assert_four_ranks_ending(r1, &r, serde_json::json!({"code": 0}));
    assert_one_table(r1, "0-3");
    assert!(!r1.stderr().contains("warning"), "{}", r1.ctx());
}

#[test]
fn srun_inside_xpu_asm_run_with_the_whole_environment_records_every_rank() {
    // --export=ALL is srun's default; given explicitly, or with more.
    assert_inside_recorded(&srun_inside(&[], &[]));
    assert_inside_recorded(&srun_inside(&["--export=ALL"], &[]));
    assert_inside_recorded(&srun_inside(&["--export=ALL,FOO=1"], &[]));
}

/// The warning before the run, then a run whose ranks got none of our
/// variables: no process recorded, and the workload (without the emulated
/// device's variables either) finds no device.
fn assert_warned_before_the_run(r1: &Run) {
    let err = r1.stderr();
    let warn = err
        .find("warning: srun --export does not pass the whole environment")
        .unwrap_or_else(|| panic!("no warning\n{}", r1.ctx()));
    let advice = &err[warn..];
    for what in [
        "add ALL or LD_PRELOAD,XPU_ASM_OUT",
        "xpu-asm-run -o DIR -- APP",
    ] {
        assert!(advice.contains(what), "{what}\n{}", r1.ctx());
    }
    let procs = r1.report()["processes"].clone();
    assert_eq!(procs, serde_json::json!([]), "{}", r1.ctx());
}

#[test]
fn srun_inside_xpu_asm_run_warns_when_export_limits_the_environment() {
    for (extra, env) in [
        (&["--export=NONE"][..], &[][..]),
        (&["--export", "NONE"][..], &[][..]),
        (&["--export=HOME,PATH"][..], &[][..]),
        (&[][..], &[("SLURM_EXPORT_ENV", "NONE")][..]),
    ] {
        let r1 = srun_inside(extra, env);
        assert_warned_before_the_run(&r1);
    }
}
