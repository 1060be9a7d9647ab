//! Many processes under one xpu-asm-run: a shell script, Python's
//! multiprocessing.

use super::*;

/// A shell script starts the workload three times in parallel (one of them
/// exits with 3 from a thread), waits, then `exec`s a fourth: four records,
/// four dump folders, per-process counts and exact merged totals.
#[test]
fn shell_script_with_parallel_workloads_and_exec() {
    let s = work_scratch();
    let p1 = workload_line("ddi", &["imm:a:scale:1"]);
    let p2 = workload_line("dlsym", &["imm:a:scale:2"]);
    let p3 = workload_line("link", &["imm:a:scale_v2:3", "end:thread-exit"]);
    let p4 = workload_line(
        "ddi",
        &[&format!("imm:a:{VECTOR_ADD}:4"), "reg:a:scale:2:3"],
    );
    let script = s.root.join("many.sh");
    std::fs::write(
        &script,
        format!(
            "{} > p1.txt &\n{} > p2.txt &\n{} > p3.txt &\nwait\ncat p1.txt p2.txt p3.txt\nrm p1.txt p2.txt p3.txt\nexec {}\n",
            quoted(&p1),
            quoted(&p2),
            quoted(&p3),
            quoted(&p4)
        ),
    )
    .expect("write the script");
    let r = run(
        xpu_in_work(
            &s,
            &["-q", "--emulate", "pvc"],
            &["sh".to_string(), script.display().to_string()],
        ),
        &s.out,
    );
    r.assert_status(0);
    assert_eq!(
        r.stdout_lines(),
        [
            "imm a scale 1".to_string(),
            "imm a scale 2".to_string(),
            "imm a scale_v2 3".to_string(),
            "end thread-exit".to_string(),
            format!("imm a {VECTOR_ADD} 4"),
            "reg a scale 2 3".to_string(),
        ],
        "{}",
        r.ctx()
    );
    let rep = r.report();
    assert_kernels(
        &r,
        &rep,
        &[
            (SCALE, 1 + 2 + 6, 1 + 2 + 2),
            (SCALE_V2, 3, 3),
            (VECTOR_ADD, 4, 4),
        ],
    );
    let procs = processes(&rep);
    let by_launches: BTreeMap<u64, &Value> = procs
        .iter()
        .map(|p| (u_or_max(&p["launches"]), p))
        .collect();
    assert_eq!(
        (procs.len(), by_launches.keys().copied().collect::<Vec<_>>()),
        (4, vec![1, 2, 3, 10]),
        "four processes with 1, 2, 3 and 10 launches\n{}",
        r.ctx()
    );
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(s.out.join("run.json")).expect("run.json"))
            .expect("JSON");
    // The exec'd workload is the process xpu-asm-run started and waited for.
    let last = by_launches[&10];
    assert_eq!(last["pid"], run_json["pid"], "{}", r.ctx());
    assert_eq!(
        (&last["exit"], last["ended"].as_str()),
        (&json!({"code": 0}), Some(SEEN)),
        "{}",
        r.ctx()
    );
    assert_own_records_and_dumps(&r, &procs);
    // Each kernel lists the processes that launched it.
    let pid_of = |l: u64| u_or_max(&by_launches[&l]["pid"]);
    let pids_of = |name: &str| -> Vec<u64> {
        rep["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|k| k["name"] == name)
            .map(|k| k["pids"].as_array().into_iter().flatten().map(u).collect())
            .unwrap_or_default()
    };
    let mut scale_pids = vec![pid_of(1), pid_of(2), pid_of(10)];
    scale_pids.sort();
    assert_eq!(pids_of(SCALE), scale_pids, "{}", r.ctx());
    assert_eq!(pids_of(SCALE_V2), [pid_of(3)], "{}", r.ctx());
    // The others ended through exit(), seen by their exit events, one of
    // them with code 3 from a thread other than main.
    for (launches, code) in [(1, 0), (2, 0), (3, 3)] {
        let p = by_launches[&launches];
        assert_eq!(
            (&p["exit"], p["ended"].as_str()),
            (&json!({"code": code}), Some(EXIT_EVENT)),
            "the process with {launches} launches exited with {code}\n{}",
            r.ctx()
        );
    }
}

/// Each process has its own record and (with IGC's dumps: Debian 12's
/// default) its own dump folder, with the ISA of what it launched.
fn assert_own_records_and_dumps(r: &Run, procs: &[Value]) {
    let pids: BTreeSet<u32> = procs.iter().map(|p| u_or_max(&p["pid"]) as u32).collect();
    assert_eq!(
        record_pids(&r.out),
        pids,
        "one record per process\n{}",
        r.ctx()
    );
    let dirs: BTreeSet<String> = procs
        .iter()
        .map(|p| p["dump_dir"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        dirs.len(),
        procs.len(),
        "one dump folder per process\n{}",
        r.ctx()
    );
    if stack() == Stack::Sid {
        // The default there: every kernel's ISA from its module's binary.
        assert_eq!(r.report()["isa"], "binary", "{}", r.ctx());
        for p in procs {
            assert_eq!(p["dump_dir_exists"], false, "{}", r.ctx());
        }
        return;
    }
    for p in procs {
        let d = p["dump_dir"].as_str().unwrap_or("");
        assert_eq!(p["dump_dir_exists"], true, "{}", r.ctx());
        assert!(
            !asm_kernel_names(&r.out.join(d)).is_empty(),
            "no .asm in {d}\n{}",
            r.ctx()
        );
    }
}

const MULTIPROCESSING_PY: &str = r#"
import multiprocessing as mp
import subprocess
import sys

def work(args):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(), r.stderr.decode()

if __name__ == "__main__":
    jobs = [a.split("\x1f") for a in sys.argv[1:]]
    ctx = mp.get_context("spawn")
    with ctx.Pool(len(jobs)) as pool:
        results = pool.map(work, jobs)
    for rc, out, err in results:
        print(rc, out.strip().replace("\n", " | "))
        if err:
            print(err, file=sys.stderr)
    sys.exit(max(rc for rc, _, _ in results))
"#;

/// A Python program whose `spawn` multiprocessing pool runs the workload
/// four times at once: every Python process runs under the interposer and
/// records nothing; each workload has its own record.
#[test]
fn python_multiprocessing_spawn_pool() {
    let s = work_scratch();
    let script = s.root.join("pool.py");
    std::fs::write(&script, MULTIPROCESSING_PY).expect("write pool.py");
    let jobs = [
        workload_line("ddi", &["imm:a:scale:1"]),
        workload_line("dlsym", &["imm:a:scale:2"]),
        workload_line("link", &["imm:a:scale_v2:3"]),
        workload_line("ddi", &["reg:a:scale:2:2"]),
    ];
    let mut command = vec!["python3".to_string(), script.display().to_string()];
    command.extend(jobs.iter().map(|j| j.join("\x1f")));
    let r = run(
        xpu_in_work(&s, &["-q", "--emulate", "pvc"], &command),
        &s.out,
    );
    r.assert_status(0);
    assert_eq!(
        r.stdout_lines(),
        [
            "0 imm a scale 1",
            "0 imm a scale 2",
            "0 imm a scale_v2 3",
            "0 reg a scale 2 2"
        ],
        "{}",
        r.ctx()
    );
    let rep = r.report();
    assert_kernels(&r, &rep, &[(SCALE, 1 + 2 + 4, 1 + 2 + 2), (SCALE_V2, 3, 3)]);
    let procs = processes(&rep);
    let mut counts: Vec<(u64, u64, u64)> = procs.iter().map(process_counts).collect();
    counts.sort();
    assert_eq!(
        counts,
        [(1, 1, 0), (2, 2, 0), (3, 3, 0), (4, 2, 0)],
        "per-process (launches, appended, unknown)\n{}",
        r.ctx()
    );
    for p in &procs {
        assert_eq!(
            (&p["exit"], p["ended"].as_str()),
            (&json!({"code": 0}), Some(EXIT_EVENT)),
            "{}",
            r.ctx()
        );
        let exe = p["exe"].as_str().unwrap_or("");
        assert!(
            exe.ends_with("/workload-dl") || exe.ends_with("/workload-link"),
            "only the workloads touch Level Zero; process {exe} left a record\n{}",
            r.ctx()
        );
    }
    assert_own_records_and_dumps(&r, &procs);
}
