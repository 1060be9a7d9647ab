//! Intel MPI for real: the `mpiexec` (Hydra) of `impi-rt` from PyPI
//! (scripts/impi-venv.sh), on one host (`-launcher fork`, the shared-memory
//! transport), per rank and as the launcher inside, two jobs at once told
//! apart by `I_MPI_HYDRA_UUID`, and inside an allocation of the one-host
//! Slurm cluster (tests/src/slurm.rs). Each rank runs the C workload with
//! distinct kernels and counts, so every total is exact; a real MPI program
//! (tests/workload/mpi_hello.c) shows that `MPI_Init` works through
//! xpu-asm-run.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use xpu_asm_tests::impi::{mpi_hello, mpiexec};
use xpu_asm_tests::jobs::*;
use xpu_asm_tests::slurm::cluster;
use xpu_asm_tests::*;

/// Intel MPI on one host: the shared-memory transport only (libfabric, not
/// on PyPI at the version impi-rt 2021.19 wants, is never loaded).
fn impi(cmd: &mut Command) -> &mut Command {
    cmd.env("I_MPI_FABRICS", "shm")
}

/// `mpiexec -launcher fork -n N` from the scratch folder.
fn mpiexec_fork(s: &Scratch, n: usize) -> Command {
    let mut cmd = command(&mpiexec().display().to_string());
    impi(&mut cmd)
        .current_dir(&s.root)
        .args(["-launcher", "fork", "-n", &n.to_string()]);
    cmd
}

/// A rank's script: `before` (shell), then the workload in its place.
fn rank_script(s: &Scratch, name: &str, before: &str) -> Vec<String> {
    let path = s.root.join(name);
    std::fs::write(
        &path,
        format!(
            "{before}\nexec {}\n",
            workload_line("ddi", &STEPS).join(" ")
        ),
    )
    .unwrap();
    vec!["sh".into(), path.display().to_string()]
}

/// The capture's job: launcher `pmi`, id `hydra:<I_MPI_HYDRA_UUID>`.
fn hydra_job(run: &Run) -> String {
    let j: Value = serde_json::from_slice(&std::fs::read(run.out.join("job.json")).unwrap())
        .unwrap_or_else(|e| panic!("job.json: {e}\n{}", run.ctx()));
    assert_eq!(j["launcher"], "pmi", "{}", run.ctx());
    let id = j["id"].as_str().unwrap_or("").to_string();
    let uuid = id.strip_prefix("hydra:").unwrap_or("");
    assert!(
        uuid.len() == 36 && uuid.bytes().filter(|b| *b == b'-').count() == 4,
        "job id {id:?} is Hydra's UUID\n{}",
        run.ctx()
    );
    id
}

/// Four ranks on this host (ranks and local ranks 0..3), one table.
fn assert_four_ranks_one_table(run: &Run) {
    run.assert_status(0);
    let r = run.report();
    assert_ranks_launched(run, &r, 4);
    assert_one_table(run, "0-3");
    let host = xpu_asm_tests::record::host_name();
    assert_eq!(
        process_ranks(&r),
        (0..4).map(|i| (i, host.clone())).collect::<Vec<_>>(),
        "{}",
        run.ctx()
    );
    for p in r["processes"].as_array().into_iter().flatten() {
        assert_eq!(p["local_rank"], p["rank"], "one node\n{}", run.ctx());
    }
}

#[test]
fn impi_one_xpu_asm_run_per_rank_gives_one_report() {
    let s = stack_scratch("impi");
    let hello = mpi_hello().display().to_string();
    let mut cmd = mpiexec_fork(&s, 4);
    cmd.args(per_rank(&s.out))
        .args(rank_script(&s, "rank.sh", &format!("{hello} || exit 1")));
    let r1 = run(cmd, &s.out);
    assert_four_ranks_one_table(&r1);
    // MPI_Init and an Allreduce over the 4 ranks, through xpu-asm-run.
    let mut said: Vec<String> = r1
        .stdout_lines()
        .into_iter()
        .filter(|l| l.starts_with("rank "))
        .collect();
    said.sort();
    let want: Vec<String> = (0..4).map(|r| format!("rank {r} of 4: sum 4")).collect();
    assert_eq!(said, want, "{}", r1.ctx());
    let id = hydra_job(&r1);
    // Another run into the folder is another job (another UUID): refused.
    let before = std::fs::read(s.out.join("report.json")).unwrap();
    let mut again = mpiexec_fork(&s, 4);
    again
        .args(per_rank(&s.out))
        .args(workload_line("ddi", &STEPS));
    let r2 = run(again, &s.out);
    assert!(!r2.output.status.success(), "{}", r2.ctx());
    let refusal = format!("holds the capture of another job (pmi job {id} of 4 ranks)");
    assert!(r2.stderr().contains(&refusal), "{refusal}\n{}", r2.ctx());
    assert_eq!(std::fs::read(s.out.join("report.json")).unwrap(), before);
}

/// The number of ranks that have claimed their place in the capture `out`.
fn claimed(out: &Path) -> usize {
    std::fs::read_dir(out.join("instances"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("rank-"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn impi_two_jobs_at_once_in_one_folder_are_told_apart_by_hydra_uuid() {
    let s = stack_scratch("impi");
    let go = s.root.join("go");
    // Job A: its ranks wait for `go` once each has joined the folder.
    let wait = format!("until [ -e {} ]; do sleep 0.05; done", go.display());
    let mut a = mpiexec_fork(&s, 4);
    a.args(per_rank(&s.out))
        .args(rank_script(&s, "wait.sh", &wait));
    let job_a = std::thread::spawn(move || (shell_words(&a), run_with_timeout(&mut a)));
    let start = std::time::Instant::now();
    while claimed(&s.out) < 4 {
        assert!(
            start.elapsed() < RUN_TIMEOUT,
            "job A's ranks never joined {}",
            s.out.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Job B, of the same shape, while A runs: every rank refused, naming A.
    let mut b = mpiexec_fork(&s, 4);
    b.args(per_rank(&s.out)).args(workload_line("ddi", &STEPS));
    let rb = run(b, &s.out);
    std::fs::write(&go, "").unwrap();
    let (shown, output) = job_a.join().expect("job A's thread");
    let ra = Run::new(shown, output, &s.out);
    assert_four_ranks_one_table(&ra);
    let id = hydra_job(&ra);
    let refusal = format!("holds the capture of another job (pmi job {id} of 4 ranks)");
    assert!(!rb.output.status.success(), "{}", rb.ctx());
    assert_eq!(rb.stderr().matches(&refusal).count(), 4, "{}", rb.ctx());
}

/// `xpu-asm-run --emulate pvc -o OUT -- mpiexec -launcher fork EXTRA... -n 4 app`.
fn impi_inside(extra: &[&str]) -> Run {
    let s = stack_scratch("impi");
    let mut cmd = command(&xpu_asm_run().display().to_string());
    impi(&mut cmd)
        .current_dir(&s.root)
        .args(["--emulate", "pvc", "-o"])
        .arg(&s.out)
        .arg("--")
        .arg(mpiexec())
        .args(["-launcher", "fork"])
        .args(extra)
        .args(["-n", "4"])
        .args(workload_line("ddi", &STEPS));
    let mut r = run(cmd, &s.out);
    r.keep(s);
    r
}

#[test]
fn impi_launcher_inside_records_every_rank() {
    let r1 = impi_inside(&[]);
    assert_four_ranks_one_table(&r1);
    assert!(!r1.stderr().contains("warning"), "{}", r1.ctx());
    // Intel MPI's mpiexec is Hydra (a copy of mpiexec.hydra beside
    // hydra_pmi_proxy): -envnone would keep our variables from ranks on
    // other hosts, which is said before the run; on this host the proxy,
    // forked by mpiexec, still passes them on.
    let r2 = impi_inside(&["-envnone"]);
    let err = r2.stderr();
    let warn = err
        .find("warning: the command limits the variables mpiexec passes")
        .unwrap_or_else(|| panic!("no warning\n{}", r2.ctx()));
    assert!(
        err[warn..].contains("xpu-asm-run -o DIR -- APP"),
        "{}",
        r2.ctx()
    );
    assert_four_ranks_one_table(&r2);
}

#[test]
fn impi_mpiexec_per_rank_inside_a_slurm_allocation_takes_ranks_from_pmi_rank() {
    let c = cluster();
    let s = stack_scratch("impi");
    let seen = s.root.join("seen");
    std::fs::create_dir_all(&seen).unwrap();
    // Inside the allocation, mpiexec starts its proxy through srun: each
    // rank also sees the proxy's SLURM_PROCID.
    let note = format!(
        "echo \"$PMI_RANK $SLURM_PROCID $SLURM_JOB_ID\" > {}/$PMI_RANK",
        seen.display()
    );
    let mut cmd = c.command("salloc");
    impi(&mut cmd)
        .current_dir(&s.root)
        .args(["-n", "4"])
        .arg(mpiexec())
        .args(["-n", "4"])
        .args(per_rank(&s.out))
        .args(rank_script(&s, "rank.sh", &note));
    let r1 = run(cmd, &s.out);
    assert_four_ranks_one_table(&r1);
    let mut lines: Vec<Vec<String>> = (0..4)
        .map(|r| {
            std::fs::read_to_string(seen.join(r.to_string()))
                .unwrap_or_else(|e| panic!("rank {r} noted nothing: {e}\n{}", r1.ctx()))
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect();
    lines.sort();
    let job = lines[0].get(2).cloned().unwrap_or_default();
    assert!(!job.is_empty(), "{lines:?}\n{}", r1.ctx());
    let want: Vec<Vec<String>> = (0..4)
        .map(|r| vec![r.to_string(), "0".to_string(), job.clone()])
        .collect();
    assert_eq!(lines, want, "every rank sees SLURM_PROCID=0\n{}", r1.ctx());
    hydra_job(&r1);
}
