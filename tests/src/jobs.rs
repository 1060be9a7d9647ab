//! What the tests of parallel jobs share (tests/tests/mpi.rs, slurm.rs,
//! impi.rs): a command cleared of the test's own job and capture
//! variables, the workload's command line with distinct kernels and counts
//! per rank, and the assertions on one report of N ranks: exact totals,
//! ranks 0..N-1 on every kernel, one table.

use crate::record::ranks;
use crate::{workload_line, xpu_asm_run, Run, SCALE, SCALE_V2};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One rank's launches: `scale` 5 times on an immediate list, `scale_v2`
/// appended once to a regular list executed 3 times.
pub const STEPS: [&str; 2] = ["imm:a:scale:5", "reg:a:scale_v2:1:3"];

/// A command with nothing of the test's own environment that would change
/// the outcome: an outer capture, IGC/NEO settings, an enclosing job's
/// rank variables.
pub fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    crate::hermetic(&mut cmd);
    for v in ranks::VARS {
        cmd.env_remove(v);
    }
    for v in ["OMPI_MCA_mca_base_env_list", "PMIX_RANK", "PMIX_NAMESPACE"] {
        cmd.env_remove(v);
    }
    // An enclosing Slurm job's or Intel MPI's settings.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("SLURM_") || k.starts_with("I_MPI_") || k.starts_with("PMI_") {
            cmd.env_remove(&*k);
        }
    }
    // Open MPI refuses to run as root without these; harmless otherwise.
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    cmd
}

/// Open MPI's session folder under `dir` (made here), a test's own: two
/// `mpirun`s that start at the same moment under the shared default
/// (`/tmp/ompi.<host>.<uid>`) race to make it, and one fails with "A call
/// to mkdir was unable to create the desired directory ... File exists".
pub fn open_mpi_session_dir(cmd: &mut Command, dir: &Path) {
    std::fs::create_dir_all(dir).expect("Open MPI's session folder");
    cmd.env("OMPI_MCA_orte_tmpdir_base", dir);
}

/// `xpu-asm-run --emulate pvc -o OUT --` (the per-rank form's prefix).
pub fn per_rank(out: &Path) -> Vec<String> {
    vec![
        xpu_asm_run().display().to_string(),
        "--emulate".into(),
        "pvc".into(),
        "-o".into(),
        out.display().to_string(),
        "--".into(),
    ]
}

/// `(launches, appended)` per kernel name; each kernel listed once.
pub fn kernel_counts(run: &Run, r: &Value) -> BTreeMap<String, (u64, u64)> {
    let mut m = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        assert_eq!(k["status"], "matched", "{k}\n{}", run.ctx());
        let name = k["name"].as_str().unwrap_or("?").to_string();
        let row = (
            k["launches"].as_u64().unwrap_or(u64::MAX),
            k["appended"].as_u64().unwrap_or(u64::MAX),
        );
        assert!(m.insert(name, row).is_none(), "listed twice\n{}", run.ctx());
    }
    m
}

/// `n` ranks each launched [`STEPS`]: exact totals, ranks 0..n on every
/// kernel with one rank's launches each.
pub fn assert_ranks_launched(run: &Run, r: &Value, n: u64) {
    let want: BTreeMap<String, (u64, u64)> = [
        (SCALE.to_string(), (5 * n, 5 * n)),
        (SCALE_V2.to_string(), (3 * n, n)),
    ]
    .into();
    assert_eq!(kernel_counts(run, r), want, "launches\n{}", run.ctx());
    let all: Vec<u64> = (0..n).collect();
    for k in r["kernels"].as_array().into_iter().flatten() {
        let ranks: Vec<u64> = k["ranks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        assert_eq!(ranks, all, "ranks of {}\n{}", k["name"], run.ctx());
        let per: Vec<(u64, u64)> = k["launches_by_rank"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| (e["rank"].as_u64().unwrap(), e["launches"].as_u64().unwrap()))
            .collect();
        let each = if k["name"] == SCALE { 5 } else { 3 };
        let want: Vec<(u64, u64)> = all.iter().map(|r| (*r, each)).collect();
        assert_eq!(per, want, "launches per rank\n{}", run.ctx());
    }
    assert_candidates_once(run, r, n);
}

/// Every rank compiled the same SPIR-V the same way: each kernel's `.asm`
/// files (in rank 0's dump folder, the only one: the other ranks dump
/// nothing and take rank 0's files of the same code) are listed once, each
/// had by the `n` ranks, and no warning says the ranks compiled
/// differently. On sid the default takes every kernel's ISA from
/// its module's binary: one candidate each, from the binary all ranks
/// saved once, and no rank has a dump folder.
pub fn assert_candidates_once(run: &Run, r: &Value, n: u64) {
    match crate::stack() {
        crate::Stack::Debian12 => assert_dump_candidates_once(run, r, n),
        crate::Stack::Sid => assert_binary_candidates_once(run, r),
    }
    let w = r["warnings"].to_string();
    assert!(!w.contains("compiled it differently"), "{w}\n{}", run.ctx());
}

/// [`assert_candidates_once`] of a capture whose ISA came from module
/// binaries (`--isa binary`, the default on sid).
fn assert_binary_candidates_once(run: &Run, r: &Value) {
    assert_eq!(r["isa"], "binary", "{}", run.ctx());
    for p in r["processes"].as_array().into_iter().flatten() {
        assert_eq!(p["dump_dir_exists"], false, "{p}\n{}", run.ctx());
    }
    for k in r["kernels"].as_array().into_iter().flatten() {
        let c = k["asm_candidates"].as_array().cloned().unwrap_or_default();
        assert_eq!(c.len(), 1, "{k}\n{}", run.ctx());
        assert_eq!(c[0]["source"], "module-binary", "{k}\n{}", run.ctx());
        assert_eq!(k["isa_source"], "module-binary", "{k}\n{}", run.ctx());
    }
}

/// [`assert_candidates_once`] of a capture with IGC's dumps.
fn assert_dump_candidates_once(run: &Run, r: &Value, n: u64) {
    // kernel name -> file name -> ranks' folders holding it
    let mut files: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let dumps: Vec<String> = std::fs::read_dir(run.out.join("dumps"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        dumps.len(),
        1,
        "one dump folder, rank 0's: {dumps:?}\n{}",
        run.ctx()
    );
    for p in r["processes"].as_array().into_iter().flatten() {
        let dumped = p["rank"].as_u64() == Some(0);
        assert_eq!(p["dump_dir_exists"], dumped, "{p}\n{}", run.ctx());
        if !dumped {
            continue;
        }
        let dir = run.out.join(p["dump_dir"].as_str().unwrap_or("?"));
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", dir.display(), run.ctx()));
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if !file.ends_with(".asm") {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            if let Some(name) = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("//.kernel "))
            {
                *files
                    .entry(name.to_string())
                    .or_default()
                    .entry(file)
                    .or_default() += 1;
            }
        }
    }
    for k in r["kernels"].as_array().into_iter().flatten() {
        let name = k["name"].as_str().unwrap_or("?");
        let listed: BTreeMap<String, u64> = k["asm_candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let path = c["path"].as_str().unwrap_or("?");
                let file = path.rsplit('/').next().unwrap_or(path).to_string();
                (file, c["processes"].as_u64().unwrap_or(0))
            })
            .collect();
        let want = files.get(name).cloned().unwrap_or_default();
        assert!(
            !want.is_empty(),
            "no .asm of {name} in the dumps\n{}",
            run.ctx()
        );
        let want: BTreeMap<String, u64> = want.into_keys().map(|f| (f, n)).collect();
        assert_eq!(
            k["asm_candidates"].as_array().map(Vec::len),
            Some(want.len()),
            "one candidate per file of {name}\n{}",
            run.ctx()
        );
        assert_eq!(listed, want, "candidates of {name}\n{}", run.ctx());
    }
}

/// `(rank, host)` of each process, sorted.
pub fn process_ranks(r: &Value) -> Vec<(u64, String)> {
    let mut v: Vec<(u64, String)> = r["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["rank"].as_u64().unwrap_or(u64::MAX),
                p["host"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The table was printed once, with the ranks column: one report, not N.
pub fn assert_one_table(run: &Run, ranks: &str) {
    let out = run.stdout();
    assert_eq!(
        out.matches("total: 2 kernels launched").count(),
        1,
        "exactly one table\n{}",
        run.ctx()
    );
    let row = out
        .lines()
        .find(|l| l.contains(" scale ") && l.contains("asm/"))
        .unwrap_or_else(|| panic!("no row for scale\n{}", run.ctx()));
    assert!(row.contains(&format!(" {ranks} ")), "{row}\n{}", run.ctx());
}

/// A shell line for rank `rank`'s command: waits until the other ranks
/// have ended (so that Open MPI, which stops a job when one rank fails, has
/// nothing left to stop), then runs the workload and ends as `how` says.
pub fn last_rank_ending(out: &Path, others: usize, how: &str) -> String {
    let wait = format!(
        "until [ \"$(grep -l '\"ended\"' {}/instances/rank-*.json 2>/dev/null | wc -l)\" -ge {others} ]; do sleep 0.05; done",
        out.display()
    );
    let w = workload_line("ddi", &STEPS).join(" ");
    match how {
        "kill" => format!("{wait}; exec {w} end:kill"),
        code => format!("{wait}; {w} && exit {code}"),
    }
}
