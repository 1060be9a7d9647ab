//! Many ranks, many nodes, on the real stack with real launchers: Open MPI's
//! `mpirun.openmpi` and MPICH's `mpiexec.hydra` (Debian packages, installed
//! by scripts/install-deps.sh).
//!
//! Other "nodes" are simulated without a network: a stand-in for `ssh`
//! (written by each test) starts the launcher's remote daemon with an empty
//! environment, as ssh does, in a UTS namespace of its own with the node's
//! host name (`unshare --uts`). The daemons and ranks then really see
//! another host name and only the variables the launcher forwards.
//!
//! Each rank runs the C workload with distinct kernels and counts, so every
//! total is exact: N ranks launch exactly N times one rank's launches.

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use xpu_asm_tests::jobs::*;
use xpu_asm_tests::*;

const OPENMPI: &str = "mpirun.openmpi";
/// Two simulated nodes, two slots each (both launchers take this form).
const NODES: &str = "nodeb:2,nodec:2";
const HYDRA: &str = "mpiexec.hydra";

/// A [`Scratch`] for a test of both MPI launchers, which must be installed.
fn mpi_scratch() -> Scratch {
    let s = stack_scratch("mpi");
    for l in [OPENMPI, HYDRA] {
        assert!(
            Command::new(l).arg("--version").output().is_ok(),
            "{l} is not installed; run scripts/install-deps.sh (it installs openmpi-bin and mpich)"
        );
    }
    s
}

/// `LAUNCHER <its options for n ranks> ARGS...`
fn launcher(s: &Scratch, l: &str, n: usize, nodes: Option<&str>) -> Command {
    let mut cmd = command(l);
    cmd.current_dir(&s.root);
    open_mpi_session_dir(&mut cmd, &s.root.join("ompi"));
    let n = n.to_string();
    match (l, nodes) {
        (OPENMPI, None) => cmd.args(["--oversubscribe", "-np", &n]),
        (OPENMPI, Some(hosts)) => cmd.args([
            "--oversubscribe",
            "--mca",
            "plm_rsh_agent",
            &fake_ssh(s),
            "-H",
            hosts,
            "-np",
            &n,
        ]),
        (_, None) => cmd.args(["-n", &n]),
        (_, Some(hosts)) => cmd.args([
            "-launcher",
            "ssh",
            "-launcher-exec",
            &fake_ssh(s),
            "-hosts",
            hosts,
            "-n",
            &n,
        ]),
    };
    cmd
}

/// The stand-in for ssh: `fake-ssh [OPTIONS] HOST COMMAND...` runs COMMAND
/// with an empty environment (as sshd gives) in a UTS namespace named HOST.
fn fake_ssh(s: &Scratch) -> String {
    let path = s.root.join("fake-ssh");
    if !path.exists() {
        let script = format!(
            "#!/bin/sh\n\
            while [ \"${{1#-}}\" != \"$1\" ]; do shift; done\n\
            host=$1; shift\n\
            mkdir -p {ompi}-$host\n\
            exec env -i PATH=/usr/bin:/bin HOME=/root \
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMPI_MCA_orte_tmpdir_base={ompi}-$host \
            unshare --uts sh -c \"hostname $host && $*\"\n",
            ompi = s.root.join("ompi").display()
        );
        std::fs::write(&path, script).expect("the ssh stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("the ssh stand-in made executable");
    }
    path.display().to_string()
}

/// `(rank, local rank)` of each of `n` ranks on this node as the launcher
/// itself gives them (its own variables, printed by each rank), sorted.
fn launchers_local_ranks(s: &Scratch, l: &str, n: usize) -> Vec<(u64, u64)> {
    let (rank, local) = match l {
        OPENMPI => ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"),
        _ => ("PMI_RANK", "MPI_LOCALRANKID"),
    };
    // Each rank stays a moment after its line: MPICH's hydra can die of
    // SIGPIPE when ranks end as soon as they start (seen once in ~20
    // runs on sid). A launcher killed by a signal is asked again, at most
    // three times; its answer, once it gives one, is checked exactly.
    let probe = || {
        let mut cmd = launcher(s, l, n, None);
        cmd.args(["sh", "-c", &format!("echo ${rank} ${local}; sleep 0.5")]);
        run(cmd, &s.root)
    };
    let mut r = probe();
    for _ in 0..2 {
        if r.output.status.code().is_some() {
            break;
        }
        eprintln!(
            "{l} died of a signal asked for its ranks; asked again:\n{}",
            r.ctx()
        );
        r = probe();
    }
    r.assert_status(0);
    let mut v: Vec<(u64, u64)> = r
        .stdout_lines()
        .iter()
        .map(|line| {
            let mut w = line.split_whitespace().map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("{line:?} is not two numbers\n{}", r.ctx()))
            });
            (w.next().unwrap_or(u64::MAX), w.next().unwrap_or(u64::MAX))
        })
        .collect();
    v.sort();
    assert_eq!(v.len(), n, "{}", r.ctx());
    v
}

fn per_rank_job(l: &str) {
    let s = mpi_scratch();
    let mut cmd = launcher(&s, l, 4, None);
    cmd.args(per_rank(&s.out))
        .args(workload_line("ddi", &STEPS));
    let r1 = run(cmd, &s.out);
    r1.assert_status(0);
    let r = r1.report();
    assert_ranks_launched(&r1, &r, 4);
    assert_one_table(&r1, "0-3");
    let h = r["processes"][0]["host"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    assert_eq!(
        process_ranks(&r),
        (0..4).map(|i| (i, h.clone())).collect::<Vec<_>>(),
        "{}",
        r1.ctx()
    );
    for p in r["processes"].as_array().into_iter().flatten() {
        assert_eq!(p["exit"], serde_json::json!({"code": 0}), "{}", r1.ctx());
    }
    // One node: each rank's local rank is the one the launcher gives it (Open
    // MPI 4 gives rank i local rank i; Open MPI 6, on sid, swaps ranks 1, 2).
    let recorded: Vec<(u64, u64)> = r["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (u(&p["rank"]), u(&p["local_rank"])))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        recorded,
        launchers_local_ranks(&s, l, 4),
        "one node\n{}",
        r1.ctx()
    );
    assert_eq!(r["exit"], serde_json::json!({"code": 0}));
    // A second, unrelated run into the same folder is refused by every
    // rank, and the first run's report stays.
    let before = std::fs::read(s.out.join("report.json")).unwrap();
    let mut again = launcher(&s, l, 4, None);
    again
        .args(per_rank(&s.out))
        .args(workload_line("ddi", &STEPS));
    let r2 = run(again, &s.out);
    assert!(!r2.output.status.success(), "{}", r2.ctx());
    assert!(
        r2.stderr().contains("holds the capture of another job"),
        "{}",
        r2.ctx()
    );
    assert!(!r2.stdout().contains("total:"), "{}", r2.ctx());
    assert_eq!(std::fs::read(s.out.join("report.json")).unwrap(), before);
}

#[test]
fn openmpi_one_xpu_asm_run_per_rank_gives_one_report() {
    per_rank_job(OPENMPI);
}

#[test]
fn hydra_one_xpu_asm_run_per_rank_gives_one_report() {
    per_rank_job(HYDRA);
}

/// Ranks 0..n-1 run the workload; the last rank ends as `how` says, after
/// the others.
fn mpi_job_with_last_rank(l: &str, how: &str) -> Run {
    let s = mpi_scratch();
    let script = s.root.join("rank.sh");
    let rank_var = if l == OPENMPI {
        "OMPI_COMM_WORLD_RANK"
    } else {
        "PMI_RANK"
    };
    std::fs::write(
        &script,
        format!(
            "if [ \"${rank_var}\" = 3 ]; then {}; else exec {}; fi\n",
            last_rank_ending(&s.out, 3, how),
            workload_line("ddi", &STEPS).join(" ")
        ),
    )
    .unwrap();
    let mut cmd = launcher(&s, l, 4, None);
    cmd.args(per_rank(&s.out)).arg("sh").arg(&script);
    let mut r = run(cmd, &s.out);
    r.keep(s);
    r
}

fn failing_rank(l: &str) {
    let r1 = mpi_job_with_last_rank(l, "3");
    r1.assert_status(3);
    let r = r1.report();
    assert_ranks_launched(&r1, &r, 4);
    assert_one_table(&r1, "0-3");
    assert_eq!(r["exit"], serde_json::json!({"code": 3}), "{}", r1.ctx());
}

fn killed_rank(l: &str) {
    let r1 = mpi_job_with_last_rank(l, "kill");
    r1.assert_status(128 + 9);
    let r = r1.report();
    // The killed rank's launches are all there.
    assert_ranks_launched(&r1, &r, 4);
    let killed: Vec<&Value> = r["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["rank"] == 3)
        .collect();
    assert_eq!(killed.len(), 1, "{}", r1.ctx());
    assert_eq!(killed[0]["exit"], serde_json::json!({"signal": 9}));
    assert_eq!(killed[0]["launches"], 8, "{}", r1.ctx());
    assert_eq!(r["exit"], serde_json::json!({"signal": 9}));
}

#[test]
fn openmpi_failing_rank_status_is_passed_on() {
    failing_rank(OPENMPI);
}

#[test]
fn hydra_failing_rank_status_is_passed_on() {
    failing_rank(HYDRA);
}

#[test]
fn openmpi_rank_killed_by_sigkill_keeps_its_launches() {
    killed_rank(OPENMPI);
}

#[test]
fn hydra_rank_killed_by_sigkill_keeps_its_launches() {
    killed_rank(HYDRA);
}

/// The report of a job over nodes b and c, two ranks each.
fn assert_two_nodes(run: &Run, r: &Value) {
    assert_ranks_launched(run, r, 4);
    let hosts: Vec<String> = process_ranks(r).into_iter().map(|p| p.1).collect();
    let mut by_host: BTreeMap<String, usize> = BTreeMap::new();
    for h in hosts {
        *by_host.entry(h).or_default() += 1;
    }
    assert_eq!(
        by_host,
        [("nodeb".to_string(), 2), ("nodec".to_string(), 2)].into(),
        "processes per host\n{}",
        run.ctx()
    );
    let local: Vec<u64> = r["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["local_rank"].as_u64())
        .collect();
    assert_eq!(
        local.iter().filter(|l| **l == 0).count(),
        2,
        "{}",
        run.ctx()
    );
}

fn two_nodes_shared_folder(l: &str) {
    let s = mpi_scratch();
    let mut cmd = launcher(&s, l, 4, Some(NODES));
    cmd.args(per_rank(&s.out))
        .args(workload_line("ddi", &STEPS));
    let r1 = run(cmd, &s.out);
    r1.assert_status(0);
    let r = r1.report();
    assert_two_nodes(&r1, &r);
    assert_one_table(&r1, "0-3");
}

#[test]
fn openmpi_two_nodes_share_one_folder() {
    two_nodes_shared_folder(OPENMPI);
}

#[test]
fn hydra_two_nodes_share_one_folder() {
    two_nodes_shared_folder(HYDRA);
}

#[test]
fn node_local_folders_are_merged_into_one_report() {
    let s = mpi_scratch();
    let base = s.root.join("local");
    let mut cmd = launcher(&s, OPENMPI, 4, Some(NODES));
    // Each node writes into a folder of its own, named after the node.
    let line = format!(
        "exec {} --emulate pvc -o {}/$(hostname) -- {}",
        xpu_asm_run().display(),
        base.display(),
        workload_line("ddi", &STEPS).join(" ")
    );
    cmd.args(["sh", "-c", &line]);
    let r0 = run(cmd, &base);
    r0.assert_status(0);
    // Half a job in each: nobody could collect.
    assert!(!r0.stdout().contains("total:"), "{}", r0.ctx());
    let (b, c) = (base.join("nodeb"), base.join("nodec"));
    let mut m = command(&xpu_asm_run().display().to_string());
    m.arg("merge").arg("-o").arg(&s.out).arg(&b).arg(&c);
    let r1 = run(m, &s.out);
    r1.assert_status(0);
    let r = r1.report();
    assert_two_nodes(&r1, &r);
    assert_one_table(&r1, "0-3");
    assert!(
        r1.stderr()
            .contains("merged 2 captures (4 process records)"),
        "{}",
        r1.ctx()
    );
    // collect on the merged folder reports the same.
    let mut again = command(&xpu_asm_run().display().to_string());
    again.arg("collect").arg(&s.out).arg("--json");
    let r2 = run(again, &s.out);
    r2.assert_status(0);
    let j: Value = serde_json::from_slice(&r2.output.stdout).unwrap();
    assert_eq!(j["kernels"], r["kernels"]);
    assert_eq!(j["processes"], r["processes"]);
}

/// `xpu-asm-run -- LAUNCHER ... -H nodeb,nodec`: the ranks on the other
/// "nodes" start from an empty environment and get only what the launcher
/// forwards.
fn mpi_launcher_inside(l: &str, extra: &[&str]) -> Run {
    let s = mpi_scratch();
    let mut cmd = command(&xpu_asm_run().display().to_string());
    cmd.current_dir(&s.root)
        .args(["--emulate", "pvc", "-o"])
        .arg(&s.out)
        .arg("--");
    let inner = launcher(&s, l, 4, Some(NODES));
    cmd.arg(inner.get_program()).args(inner.get_args());
    cmd.args(extra).args(workload_line("ddi", &STEPS));
    let mut r = run(cmd, &s.out);
    r.keep(s);
    r
}

/// The report without the processes of Open MPI itself, which must be
/// exactly: none on Debian 12; on sid, Open MPI 6's `prte` on this host (its
/// hwloc loads hwloc's Level Zero plugin, which calls the loader), and the
/// child it forks for each of the two nodes (which then runs ssh), each
/// with no rank and no launch.
fn without_openmpis_own(run: &Run, r: &Value) -> Value {
    let (own, ranks): (Vec<Value>, Vec<Value>) = r["processes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .partition(|p| p["rank"].is_null());
    match stack() {
        Stack::Debian12 => assert!(own.is_empty(), "processes without a rank\n{}", run.ctx()),
        Stack::Sid => {
            assert_eq!(own.len(), 3, "Open MPI's own processes\n{}", run.ctx());
            let roots: Vec<&Value> = own.iter().filter(|p| p["forked_from"].is_null()).collect();
            assert_eq!(roots.len(), 1, "one prte\n{}", run.ctx());
            let prte = roots[0];
            for p in &own {
                assert!(
                    p["exe"].as_str().is_some_and(|e| e.ends_with("/prte"))
                        && p["host"].as_str() == Some(xpu_asm_tests::record::host_name().as_str())
                        && p["launches"] == 0
                        && p["appended"] == 0,
                    "{p}\n{}",
                    run.ctx()
                );
                if p["pid"] != prte["pid"] {
                    assert_eq!(p["forked_from"], prte["pid"], "{p}\n{}", run.ctx());
                }
            }
        }
    }
    let mut r = r.clone();
    r["processes"] = Value::Array(ranks);
    r
}

#[test]
fn openmpi_launcher_inside_forwards_the_capture_to_other_nodes() {
    let r1 = mpi_launcher_inside(OPENMPI, &[]);
    r1.assert_status(0);
    let r = without_openmpis_own(&r1, &r1.report());
    assert_two_nodes(&r1, &r);
    assert!(!r1.stderr().contains("warning"), "{}", r1.ctx());
}

#[test]
fn openmpi_launcher_inside_with_its_own_x_options_still_forwards() {
    // Open MPI refuses -x together with mca_base_env_list: xpu-asm-run adds
    // its variables as -x too, and says so.
    let r1 = mpi_launcher_inside(OPENMPI, &["-x", "HOME"]);
    r1.assert_status(0);
    assert!(
        r1.stderr().contains("added `-x LD_PRELOAD -x XPU_ASM_OUT"),
        "{}",
        r1.ctx()
    );
    assert_two_nodes(&r1, &without_openmpis_own(&r1, &r1.report()));
}

#[test]
fn hydra_launcher_inside_passes_everything_and_warns_when_told_not_to() {
    let r1 = mpi_launcher_inside(HYDRA, &[]);
    r1.assert_status(0);
    assert_two_nodes(&r1, &r1.report());
    assert!(!r1.stderr().contains("warning"), "{}", r1.ctx());
    // -envnone: the remote ranks get nothing; said before the run.
    let r2 = mpi_launcher_inside(HYDRA, &["-envnone"]);
    let err = r2.stderr();
    let warn = err
        .find("warning: the command limits the variables mpiexec passes")
        .unwrap_or_else(|| panic!("no warning\n{}", r2.ctx()));
    assert!(
        err[warn..].contains("xpu-asm-run -o DIR -- APP"),
        "{}",
        r2.ctx()
    );
    assert!(
        r2.report()["processes"].as_array().unwrap().is_empty(),
        "nothing reached the ranks\n{}",
        r2.ctx()
    );
}

#[test]
fn same_host_and_pid_in_two_pid_namespaces_keep_two_records() {
    let s = mpi_scratch();
    // Each workload is pid 1 of its own PID namespace, on the same host.
    let w1 = workload_line("ddi", &["imm:a:scale:3"]).join(" ");
    let w2 = workload_line("ddi", &["imm:a:scale_v2:4"]).join(" ");
    let line = format!("unshare --pid --fork {w1} & unshare --pid --fork {w2} & wait");
    let mut cmd = command(&xpu_asm_run().display().to_string());
    cmd.current_dir(&s.root)
        .args(["--emulate", "pvc", "-o"])
        .arg(&s.out)
        .args(["--", "sh", "-c", &line]);
    let r1 = run(cmd, &s.out);
    r1.assert_status(0);
    let r = r1.report();
    let procs = r["processes"].as_array().cloned().unwrap_or_default();
    assert_eq!(procs.len(), 2, "{}", r1.ctx());
    assert!(
        procs
            .iter()
            .all(|p| p["pid"] == 1 && p["host"] == procs[0]["host"]),
        "{}",
        r1.ctx()
    );
    assert_ne!(procs[0]["dump_dir"], procs[1]["dump_dir"], "{}", r1.ctx());
    let mut per: Vec<u64> = procs
        .iter()
        .map(|p| p["launches"].as_u64().unwrap())
        .collect();
    per.sort();
    assert_eq!(per, [3, 4], "{}", r1.ctx());
    let want: BTreeMap<String, (u64, u64)> =
        [(SCALE.to_string(), (3, 3)), (SCALE_V2.to_string(), (4, 4))].into();
    assert_eq!(kernel_counts(&r1, &r), want, "{}", r1.ctx());
    assert_eq!(records(&s.out).len(), 2);
}

#[test]
fn installed_binary_finds_its_interposer_and_captures() {
    let s = mpi_scratch();
    let prefix = s.root.join("prefix");
    let mut inst = Command::new("bash");
    inst.arg(workspace_dir().join("scripts/install.sh"))
        .arg("--prefix")
        .arg(&prefix)
        .arg("--built")
        .arg(profile_dir());
    let ri = run(inst, &prefix);
    ri.assert_status(0);
    let bin = prefix.join("bin/xpu-asm-run");
    let lib = prefix.join("lib/libxpu_asm_interposer.so");
    assert!(bin.is_file() && lib.is_file(), "{}", ri.ctx());
    let mut cmd = command(&bin.display().to_string());
    cmd.current_dir(&s.root)
        .env_remove("XPU_ASM_INTERPOSER")
        .args(["--emulate", "pvc", "-o"])
        .arg(&s.out)
        .arg("--")
        .args(workload_line("ddi", &STEPS));
    let r1 = run(cmd, &s.out);
    r1.assert_status(0);
    let r = r1.report();
    let want: BTreeMap<String, (u64, u64)> =
        [(SCALE.to_string(), (5, 5)), (SCALE_V2.to_string(), (3, 1))].into();
    assert_eq!(kernel_counts(&r1, &r), want, "{}", r1.ctx());
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(s.out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run_json["interposer"],
        std::fs::canonicalize(&lib).unwrap().display().to_string()
    );
}

// ---------------------------------------------------------------------------
// IGC's dumps once per job

/// An MPMD job (`mpiexec.hydra -n A CMD : -n B CMD2`), one xpu-asm-run
/// per rank: rank 0 runs `first`, the others `rest`.
fn mpmd(s: &Scratch, first: &[String], rest: (usize, &[String])) -> Run {
    let mut cmd = command(HYDRA);
    cmd.current_dir(&s.root).args(["-n", "1"]);
    cmd.args(per_rank(&s.out)).args(first);
    cmd.args([":", "-n", &rest.0.to_string()]);
    cmd.args(per_rank(&s.out)).args(rest.1);
    run(cmd, &s.out)
}

/// `(isa_source, processes)` of each candidate of kernel `name`.
fn candidates(r: &Value, name: &str) -> Vec<(String, u64)> {
    let k = r["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|k| k["name"] == name)
        .cloned()
        .unwrap_or_default();
    let mut v: Vec<(String, u64)> = k["asm_candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["source"].as_str().unwrap_or("?").to_string(),
                u(&c["processes"]),
            )
        })
        .collect();
    v.sort();
    v
}

/// Ranks that built the same module into other code (another build: its
/// flags) have no dump of rank 0's to take: their kernels' ISA is their own
/// binary's, listed beside rank 0's dump, and every count is exact.
#[test]
fn ranks_that_built_other_code_get_their_own_binarys_isa() {
    let s = mpi_scratch();
    let mut other = vec![
        workload().display().to_string(),
        "--via".into(),
        "ddi".into(),
        "--build-flags".into(),
        "-cl-opt-disable".into(),
        "--module".into(),
        format!("a={}", spirv("a").display()),
    ];
    other.extend(STEPS.iter().map(|s| s.to_string()));
    let r1 = mpmd(&s, &workload_line("ddi", &STEPS), (2, &other));
    r1.assert_status(0);
    let r = r1.report();
    let got = kernel_counts(&r1, &r);
    assert_eq!(
        got,
        BTreeMap::from([
            (SCALE.to_string(), (15, 15)),
            (SCALE_V2.to_string(), (9, 3))
        ]),
        "on {}\n{}",
        stack_info(),
        r1.ctx()
    );
    let want = match stack() {
        // Rank 0's dump; ranks 1 and 2 their one binary, saved once.
        Stack::Debian12 => vec![
            ("igc-dump".to_string(), 1),
            ("module-binary".to_string(), 2),
        ],
        // IGC 2: every rank's ISA from its binary (two builds: two binaries).
        Stack::Sid => vec![
            ("module-binary".to_string(), 1),
            ("module-binary".to_string(), 2),
        ],
    };
    for name in [SCALE, SCALE_V2] {
        assert_eq!(
            candidates(&r, name),
            want,
            "{name} on {}\n{}",
            stack_info(),
            r1.ctx()
        );
    }
}

/// Rank 0 dies before it builds anything: no rank has a dump to take, so
/// every kernel's ISA comes from the others' binaries, exactly counted.
#[test]
fn a_rank_0_that_dies_before_its_dumps_leaves_the_others_their_binaries() {
    let s = mpi_scratch();
    let r1 = mpmd(
        &s,
        &workload_line("ddi", &["end:kill"]),
        (3, &workload_line("ddi", &STEPS)),
    );
    assert_ne!(r1.output.status.code(), Some(0), "{}", r1.ctx());
    let r = r1.report();
    assert_eq!(
        kernel_counts(&r1, &r),
        BTreeMap::from([
            (SCALE.to_string(), (15, 15)),
            (SCALE_V2.to_string(), (9, 3))
        ]),
        "on {}\n{}",
        stack_info(),
        r1.ctx()
    );
    for name in [SCALE, SCALE_V2] {
        assert_eq!(
            candidates(&r, name),
            vec![("module-binary".to_string(), 3)],
            "{name} on {}\n{}",
            stack_info(),
            r1.ctx()
        );
    }
}
