//! `xpu-asm-run` end to end on the real stack, about processes: however the
//! workload ends, whatever interrupts xpu-asm-run, however many processes
//! the command starts (a shell script, Python multiprocessing, fork), and
//! whatever else runs under it (programs that never touch Level Zero, the
//! user's own `LD_PRELOAD`, static and setuid programs), every launch that
//! returned is in `report.json`, the report says how each process ended,
//! and xpu-asm-run exits with the command's status.
//!
//! Each test has its own temporary folder: `out/` is the capture folder,
//! `work/` the command's working folder. Kernel names and launch counts are
//! distinct per step and per process, so every assertion is exact.

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};
use tempfile::TempDir;
use xpu_asm_tests::record::{DUMP_ENV, DUMP_FILTER, IGC1_DUMP_ENV, IGC_ENV, OUT_ENV, OWNED_ENV};
use xpu_asm_tests::*;

// ---------------------------------------------------------------------------
// Support

struct WorkScratch {
    _dir: TempDir,
    root: PathBuf,
    /// The capture folder (`-o`).
    out: PathBuf,
    /// The command's working folder.
    work: PathBuf,
}

fn work_scratch() -> WorkScratch {
    require_stack();
    let dir = temp_dir("processes");
    let root = dir.path().to_path_buf();
    let work = root.join("work");
    std::fs::create_dir_all(&work).expect("the work folder");
    WorkScratch {
        _dir: dir,
        out: root.join("out"),
        work,
        root,
    }
}

/// `xpu-asm-run OPTS -o OUT -- COMMAND...`, run in `work`.
fn xpu_in_work(s: &WorkScratch, opts: &[&str], command: &[String]) -> Command {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(opts)
        .arg("-o")
        .arg(&s.out)
        .arg("--")
        .args(command)
        .current_dir(&s.work);
    hermetic(&mut cmd);
    cmd
}

/// A finished xpu-asm-run: what a failure must show.
/// `(launches, appended, status)` of each launched kernel of the report.
fn kernel_rows_by_name(r: &Value) -> BTreeMap<String, (u64, u64, String)> {
    let mut m = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        let name = k["name"].as_str().unwrap_or("?").to_string();
        let row = (
            k["launches"].as_u64().unwrap_or(u64::MAX),
            k["appended"].as_u64().unwrap_or(u64::MAX),
            k["status"].as_str().unwrap_or("?").to_string(),
        );
        assert!(
            m.insert(name.clone(), row).is_none(),
            "kernel {name} listed twice in the report"
        );
    }
    m
}

/// The report lists exactly these launched kernels, each matched to its ISA,
/// and its totals add them up.
fn assert_kernels(run: &Run, r: &Value, want: &[(&str, u64, u64)]) {
    let want_rows: BTreeMap<String, (u64, u64, String)> = want
        .iter()
        .map(|(n, l, a)| (n.to_string(), (*l, *a, "matched".to_string())))
        .collect();
    assert_eq!(
        kernel_rows_by_name(r),
        want_rows,
        "kernels of the report: (launches, appended, status)\n{}",
        run.ctx()
    );
    let launches: u64 = want.iter().map(|w| w.1).sum();
    let appended: u64 = want.iter().map(|w| w.2).sum();
    let n = want.len() as u64;
    assert_eq!(
        r["totals"],
        json!({"kernels": n, "launches": launches, "appended": appended,
               "matched": n, "unmatched": 0, "filtered_out": 0, "incomplete": 0}),
        "totals of the report\n{}",
        run.ctx()
    );
    for k in r["kernels"].as_array().into_iter().flatten() {
        let copy = k["asm_copy"].as_str().unwrap_or("");
        assert!(
            !copy.is_empty() && run.out.join(copy).is_file(),
            "kernel {} has no readable ISA copy ({copy:?})\n{}",
            k["name"],
            run.ctx()
        );
    }
}

fn processes(r: &Value) -> Vec<Value> {
    r["processes"].as_array().cloned().unwrap_or_default()
}

fn u_or_max(v: &Value) -> u64 {
    v.as_u64().unwrap_or(u64::MAX)
}

/// `(launches, appended, unknown_launches)` of a process entry.
fn process_counts(p: &Value) -> (u64, u64, u64) {
    (
        u_or_max(&p["launches"]),
        u_or_max(&p["appended"]),
        u_or_max(&p["unknown_launches"]),
    )
}

const SEEN: &str = "seen by xpu-asm-run";
const EXIT_EVENT: &str = "exit event in its record";

/// Every record and dump folder the capture holds, by pid.
fn record_pids(out: &Path) -> BTreeSet<u32> {
    records(out).iter().map(|r| r.pid).collect()
}

/// A line-by-line view of a running xpu-asm-run, in a process group of its
/// own (so that a signal to the group reaches it and the command, and the
/// test runner is not in it). Killed with its group if the test fails.
struct Live {
    child: Option<Child>,
    shown: String,
    out: PathBuf,
    stdout_rx: Receiver<String>,
    stderr_rx: Receiver<String>,
    stdout: Vec<String>,
    stderr: Vec<String>,
}

fn line_reader(r: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Live {
    fn spawn(mut cmd: Command, out: &Path) -> Live {
        let shown = shell_words(&cmd);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
        let stdout_rx = line_reader(child.stdout.take().expect("piped"));
        let stderr_rx = line_reader(child.stderr.take().expect("piped"));
        Live {
            child: Some(child),
            shown,
            out: out.to_path_buf(),
            stdout_rx,
            stderr_rx,
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    fn drain(&mut self) {
        self.stdout.extend(self.stdout_rx.try_iter());
        self.stderr.extend(self.stderr_rx.try_iter());
    }

    fn ctx(&mut self, what: &str) -> String {
        self.drain();
        format!(
            "{what}\ncommand: {}\nstdout so far:\n{}\nstderr so far:\n{}\nfiles under {}:\n  {}",
            self.shown,
            self.stdout.join("\n"),
            self.stderr.join("\n"),
            self.out.display(),
            list_files(&self.out).join("\n  ")
        )
    }

    /// Waits until stdout has a line equal to `line`.
    fn wait_stdout(&mut self, line: &str) {
        let start = Instant::now();
        while !self.stdout.iter().any(|l| l == line) {
            match self.stdout_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(l) => self.stdout.push(l),
                Err(mpsc::RecvTimeoutError::Timeout) if start.elapsed() < RUN_TIMEOUT => {}
                Err(e) => panic!("{}", self.ctx(&format!("no stdout line {line:?} ({e})"))),
            }
        }
    }

    /// Sends `sig` (a name for kill(1)) to `target` (a pid, or `-PGID`).
    fn kill(&mut self, sig: &str, target: &str) {
        let st = Command::new("kill")
            .args([&format!("-{sig}"), "--", target])
            .status()
            .expect("kill(1) runs");
        if !st.success() {
            let ctx = self.ctx(&format!("kill -{sig} -- {target} failed: {st}"));
            panic!("{ctx}");
        }
    }

    /// Waits for xpu-asm-run to end and returns everything it printed.
    fn finish(mut self) -> Run {
        let mut child = self.child.take().expect("not finished yet");
        let start = Instant::now();
        let status = loop {
            match child.try_wait().expect("wait for xpu-asm-run") {
                Some(s) => break s,
                None if start.elapsed() > RUN_TIMEOUT => {
                    let _ = Command::new("kill")
                        .args(["-KILL", "--", &format!("-{}", child.id())])
                        .status();
                    break child.wait().expect("wait after kill");
                }
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        // The readers end at EOF, once every process holding the pipes is gone.
        let deadline = Instant::now() + Duration::from_secs(30);
        for (rx, lines) in [
            (&self.stdout_rx, &mut self.stdout),
            (&self.stderr_rx, &mut self.stderr),
        ] {
            while let Ok(l) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                lines.push(l);
            }
        }
        let join = |v: &[String]| {
            let mut b = v.join("\n").into_bytes();
            if !v.is_empty() {
                b.push(b'\n');
            }
            b
        };
        Run::new(
            self.shown.clone(),
            Output {
                status,
                stdout: join(&self.stdout),
                stderr: join(&self.stderr),
            },
            &self.out,
        )
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", c.id())])
                .status();
            let _ = c.wait();
        }
    }
}

/// The pid in a record file name `<host>-<pid>.events` under `out/records`.
fn record_file_pids(out: &Path) -> Vec<u32> {
    let mut pids: Vec<u32> = std::fs::read_dir(out.join("records"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            // <host>-<pid>-<token>
            let stem = name.strip_suffix(".events")?;
            stem.rsplit('-').nth(1)?.parse().ok()
        })
        .collect();
    pids.sort();
    pids
}

fn quoted(line: &[String]) -> String {
    line.iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

mod chain;
mod ending;
mod fork;
mod interrupt;
mod many;
mod plain;
mod preload;
