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

// ---------------------------------------------------------------------------
// How the workload ends

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

// ---------------------------------------------------------------------------
// Interrupting xpu-asm-run

/// The workload of the Ctrl-C tests: launches, then waits for a signal.
const WAIT_STEPS: [&str; 3] = ["imm:a:scale:3", "reg:a:scale_v2:2:2", "end:term-wait"];
const AFTER_WAIT_STEPS: [(&str, u64, u64); 2] = [(SCALE, 3, 3), (SCALE_V2, 4, 2)];

/// The report after the workload of [`WAIT_STEPS`] died of SIGINT.
fn assert_interrupted_report(run: &Run) {
    let r = run.report();
    assert_eq!(r["exit"], json!({"signal": 2}), "{}", run.ctx());
    assert_kernels(run, &r, &AFTER_WAIT_STEPS);
    let procs = processes(&r);
    assert_eq!(procs.len(), 1, "{}", run.ctx());
    assert_eq!(process_counts(&procs[0]), (7, 5, 0), "{}", run.ctx());
    assert_eq!(procs[0]["exit"], json!({"signal": 2}), "{}", run.ctx());
}

/// SIGINT sent to xpu-asm-run alone (as `kill -INT`): it survives, passes
/// it on, the workload dies of it, and what was recorded is reported.
#[test]
fn ctrl_c_to_xpu_asm_run_alone_reaches_the_command_and_all_is_reported() {
    let s = work_scratch();
    let mut live = Live::spawn(
        xpu_in_work(
            &s,
            &["--emulate", "pvc"],
            &workload_line("ddi", &WAIT_STEPS),
        ),
        &s.out,
    );
    live.wait_stdout("ready");
    let pid = live.pid().to_string();
    live.kill("INT", &pid);
    let r = live.finish();
    r.assert_status(130);
    assert!(
        r.stderr()
            .contains("the command was killed by signal 2 (SIGINT)"),
        "{}",
        r.ctx()
    );
    assert_interrupted_report(&r);
}

/// SIGINT sent to the whole process group, as `kill -INT -PGID` does: both
/// xpu-asm-run and the command get it.
#[test]
fn sigint_to_the_process_group_is_reported_once() {
    let s = work_scratch();
    let mut live = Live::spawn(
        xpu_in_work(
            &s,
            &["--emulate", "pvc"],
            &workload_line("dlsym", &WAIT_STEPS),
        ),
        &s.out,
    );
    live.wait_stdout("ready");
    let group = format!("-{}", live.pid());
    live.kill("INT", &group);
    let r = live.finish();
    r.assert_status(130);
    assert_interrupted_report(&r);
}

/// A small terminal for a real Ctrl-C: runs the command on a new
/// pseudo-terminal (its own session, the terminal's foreground group),
/// types Ctrl-C once each `TEXT[@SECONDS]` of `interrupt_after` has
/// appeared on the terminal (and SECONDS more have passed), and prints
/// everything the terminal showed, then `STATUS exited N` /
/// `STATUS signaled N` and `AFTER_LAST_INTR seconds`.
const PTY_HELPER: &str = r#"
import os, pty, select, sys, time
sep = sys.argv.index("--")
timeout = float(sys.argv[1])
waits = []
for w in sys.argv[2:sep]:
    text, _, delay = w.partition("@")
    waits.append((text.encode(), float(delay or 0)))
argv = sys.argv[sep + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
buf = b""
start = time.time()
last_intr = None
looked_from = 0
seen_at = None
killed = False
while True:
    if waits and seen_at is None and buf.find(waits[0][0], looked_from) >= 0:
        looked_from = buf.find(waits[0][0], looked_from) + len(waits[0][0])
        seen_at = time.time()
    if seen_at is not None and time.time() - seen_at >= waits[0][1]:
        waits.pop(0)
        seen_at = None
        os.write(fd, b"\x03")
        last_intr = time.time()
    if not killed and time.time() - start > timeout:
        os.killpg(pid, 9)
        killed = True
    r, _, _ = select.select([fd], [], [], 0.02)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        if not d:
            break
        buf += d
_, status = os.waitpid(pid, 0)
end = time.time()
sys.stdout.buffer.write(buf)
sys.stdout.write("\n")
if os.WIFEXITED(status):
    print("STATUS exited", os.WEXITSTATUS(status))
else:
    print("STATUS signaled", os.WTERMSIG(status))
if waits:
    print("NOT_SEEN", waits[0][0].decode())
if last_intr is not None:
    print("AFTER_LAST_INTR %.3f" % (end - last_intr))
if killed:
    print("TIMED_OUT")
"#;

/// What the terminal helper reported.
struct Terminal {
    run: Run,
    /// What the terminal showed, carriage returns removed.
    text: String,
    status: String,
    after_last_intr: Option<f64>,
}

fn run_at_terminal(s: &WorkScratch, interrupt_after: &[&str], argv: &[String]) -> Terminal {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(PTY_HELPER)
        .arg(RUN_TIMEOUT.as_secs().to_string())
        .args(interrupt_after)
        .arg("--")
        .args(argv)
        .current_dir(&s.work);
    hermetic(&mut cmd);
    let run = run(cmd, &s.out);
    let text = String::from_utf8_lossy(&run.output.stdout).replace('\r', "");
    let field = |key: &str| {
        text.lines()
            .rev()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    assert!(
        run.output.status.success() && field("NOT_SEEN ").is_none() && !text.contains("TIMED_OUT"),
        "the terminal helper failed, or the terminal never showed what it waited for\n{}",
        run.ctx()
    );
    Terminal {
        status: field("STATUS ").unwrap_or_default(),
        after_last_intr: field("AFTER_LAST_INTR ").and_then(|v| v.parse().ok()),
        text,
        run,
    }
}

fn xpu_argv(s: &WorkScratch, opts: &[&str], command: &[String]) -> Vec<String> {
    let mut v = vec![xpu_asm_run().display().to_string()];
    v.extend(opts.iter().map(|o| o.to_string()));
    v.push("-o".into());
    v.push(s.out.display().to_string());
    v.push("--".into());
    v.extend(command.iter().cloned());
    v
}

/// Ctrl-C typed at a terminal: the kernel sends SIGINT to the whole
/// foreground group (xpu-asm-run and the command); the command dies of it,
/// xpu-asm-run reports what was recorded and exits 130.
#[test]
fn ctrl_c_at_a_terminal_is_reported_and_exits_130() {
    let s = work_scratch();
    let t = run_at_terminal(
        &s,
        &["ready"],
        &xpu_argv(
            &s,
            &["--emulate", "pvc"],
            &workload_line("link", &WAIT_STEPS),
        ),
    );
    assert_eq!(t.status, "exited 130", "{}", t.run.ctx());
    assert!(
        t.text
            .contains("the command was killed by signal 2 (SIGINT)"),
        "{}",
        t.text
    );
    assert_interrupted_report(&t.run);
}

/// A second Ctrl-C while xpu-asm-run collects stops it promptly, writes no
/// half report, and `xpu-asm-run collect` on the folder later reports
/// everything. Collection is made long by padding the workload's dump
/// folder with large sparse files named like IGC's module dumps, which
/// xpu-asm-run hashes one by one (the shell script finds that folder in
/// `IGC_DumpToCustomDir`, which the interposer set in it for its pid, the
/// pid the workload gets by `exec`).
#[test]
fn second_ctrl_c_stops_collecting_promptly_and_collect_finishes_later() {
    // 25 GB to hash (sparse: no disk used), in files small enough that the
    // check between two files comes often: a debug build hashes one in
    // about an eighth of a second (32 MB files took half a second, and
    // 7.5 s to stop on a machine loaded by other jobs), the whole lot in
    // minutes.
    const PAD_FILES: usize = 3200;
    const PAD_MB: usize = 8;
    let s = work_scratch();
    let script = s.root.join("padded.sh");
    std::fs::write(
        &script,
        format!(
            "set -e\n\
             d=\"$IGC_DumpToCustomDir\"\n\
             mkdir -p \"$d\"\n\
             set --\n\
             i=0\n\
             while [ $i -lt {PAD_FILES} ]; do\n\
             \x20 set -- \"$@\" \"$d/OCL_asm$(printf 'fade%012x' $i).spv\"\n\
             \x20 i=$((i+1))\n\
             done\n\
             truncate -s {PAD_MB}M \"$@\"\n\
             exec {}\n",
            quoted(&workload_line("ddi", &WAIT_STEPS))
        ),
    )
    .expect("write the script");
    let t = run_at_terminal(
        &s,
        // The second Ctrl-C a second into hashing the padding.
        &["ready", "scanning@1"],
        &xpu_argv(
            &s,
            // The padding is dump files: IGC's dumps on both stacks.
            &["--isa", "dump", "--emulate", "pvc"],
            &["sh".to_string(), script.display().to_string()],
        ),
    );
    assert_eq!(t.status, "exited 130", "{}", t.run.ctx());
    let after = t.after_last_intr.unwrap_or(f64::MAX);
    assert!(
        after < 5.0,
        "xpu-asm-run took {after:.1} s to stop after the second Ctrl-C (collecting everything takes minutes)\n{}",
        t.run.ctx()
    );
    let dir = s.out.display().to_string();
    assert!(
        t.text.contains(&format!(
            "interrupted; {dir} is intact: run `xpu-asm-run collect {dir}` to finish the report"
        )),
        "{}",
        t.run.ctx()
    );
    assert!(
        !s.out.join("report.json").exists(),
        "an interrupted collection must not leave a report\n{}",
        t.run.ctx()
    );
    // Only the padding goes: it was there to make the collection long.
    let pids = record_file_pids(&s.out);
    assert_eq!(pids.len(), 1, "{}", t.run.ctx());
    let recs = records(&s.out);
    let dump_dir = dump_dir(&s.out, &recs[0]);
    let mut padding = 0;
    for e in std::fs::read_dir(&dump_dir)
        .expect("the dump folder")
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with("OCL_asmfade") {
            std::fs::remove_file(e.path()).expect("remove padding");
            padding += 1;
        }
    }
    assert_eq!(padding, PAD_FILES, "{}", t.run.ctx());

    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("collect").arg(&s.out).current_dir(&s.work);
    hermetic(&mut cmd);
    let later = run(cmd, &s.out);
    later.assert_status(0);
    assert_interrupted_report(&later);
}

// ---------------------------------------------------------------------------
// Many processes under one xpu-asm-run

fn quoted(line: &[String]) -> String {
    line.iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

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

// ---------------------------------------------------------------------------
// fork

/// The workload forks after launching; the child initialises Level Zero
/// again and launches on its own. The child's record holds only its own
/// launches, the parent's only the parent's, before and after the fork.
#[test]
fn fork_after_launches_keeps_the_records_apart() {
    let s = work_scratch();
    let r = run(
        xpu_in_work(
            &s,
            &["-q", "--emulate", "pvc"],
            &workload_line(
                "ddi",
                &[
                    "imm:a:scale:2",
                    "reg:a:scale_v2:1:3",
                    "fork:a:scale:5",
                    "imm:a:scale_v2:4",
                ],
            ),
        ),
        &s.out,
    );
    r.assert_status(0);
    let rep = r.report();
    assert_kernels(&r, &rep, &[(SCALE, 2 + 5, 2 + 5), (SCALE_V2, 3 + 4, 1 + 4)]);
    let procs = processes(&rep);
    assert_eq!(procs.len(), 2, "{}", r.ctx());
    let parent = procs
        .iter()
        .find(|p| p["forked_from"].is_null())
        .unwrap_or_else(|| panic!("no parent process\n{}", r.ctx()));
    let child = procs
        .iter()
        .find(|p| !p["forked_from"].is_null())
        .unwrap_or_else(|| panic!("no forked child\n{}", r.ctx()));
    assert_eq!(child["forked_from"], parent["pid"], "{}", r.ctx());
    assert_eq!(child["ppid"], parent["pid"], "{}", r.ctx());
    assert_eq!(process_counts(parent), (9, 7, 0), "parent\n{}", r.ctx());
    assert_eq!(process_counts(child), (5, 5, 0), "child\n{}", r.ctx());
    assert_eq!(
        (&parent["exit"], parent["ended"].as_str()),
        (&json!({"code": 0}), Some(SEEN)),
        "{}",
        r.ctx()
    );
    assert_eq!(
        (&child["exit"], child["ended"].as_str()),
        (&json!({"code": 0}), Some(EXIT_EVENT)),
        "{}",
        r.ctx()
    );
    // The records themselves, kernel by kernel.
    let recs = records(&s.out);
    let sha = sha256_file(&spirv("a"));
    for rec in &recs {
        assert!(rec.warnings.is_empty(), "{:#?}\n{}", rec.warnings, r.ctx());
        let got = counts(rec);
        let scale = got
            .get(&(SCALE.to_string(), sha.clone()))
            .copied()
            .unwrap_or_default();
        let v2 = got
            .get(&(SCALE_V2.to_string(), sha.clone()))
            .copied()
            .unwrap_or_default();
        let want = if rec.forked_from.is_some() {
            ((5, 5), (0, 0))
        } else {
            ((2, 2), (7, 5))
        };
        assert_eq!(
            (scale, v2),
            want,
            "record of {} (forked_from {:?})\n{}",
            rec.pid,
            rec.forked_from,
            r.ctx()
        );
        assert_eq!(rec.unknown_launches, 0, "{}", r.ctx());
    }
}

// ---------------------------------------------------------------------------
// Programs that never use Level Zero

/// The variables the interposer documents (docs/internals.md, "Environment set at
/// load") plus the two xpu-asm-run sets: nothing else may differ.
fn documented_vars() -> BTreeSet<String> {
    let mut v: BTreeSet<String> = DUMP_ENV
        .iter()
        .chain(&IGC1_DUMP_ENV)
        .map(|(n, _)| n.to_string())
        .collect();
    v.insert(IGC_ENV.to_string());
    v.insert(xpu_asm_record::ISA_ENV.to_string());
    v.insert(OWNED_ENV.to_string());
    v.insert(OUT_ENV.to_string());
    v.insert("LD_PRELOAD".to_string());
    v.insert(xpu_asm_record::NOTIFY_ENV.to_string());
    v.insert(xpu_asm_record::NOTIFY_KEY_ENV.to_string());
    v
}

/// A fixed environment for both runs of a comparison.
fn base_env() -> Vec<(String, String)> {
    let mut env = vec![("LANG".to_string(), "C".to_string())];
    for k in ["PATH", "HOME"] {
        if let Ok(v) = std::env::var(k) {
            env.push((k.to_string(), v));
        }
    }
    env
}

/// Runs `argv` plainly and under `xpu-asm-run -q`, each with exactly
/// [`base_env`], in empty folders; returns both.
fn plain_and_traced(s: &WorkScratch, name: &str, argv: &[&str]) -> (Run, Run) {
    // The same working folder for both (a shell puts it in PWD), empty
    // before each run and checked to be empty after it.
    let dir = s.root.join(format!("work-{name}"));
    let out = s.root.join(format!("out-{name}"));
    std::fs::create_dir_all(&dir).expect("a folder");
    let mut plain = Command::new(argv[0]);
    plain
        .args(&argv[1..])
        .env_clear()
        .envs(base_env())
        .current_dir(&dir);
    let plain = run(plain, &dir);
    assert!(
        list_files(&dir).is_empty(),
        "{name}: the command left files in its working folder\n{}",
        plain.ctx()
    );
    let mut traced = Command::new(xpu_asm_run());
    traced
        .arg("-q")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(argv)
        .env_clear()
        .envs(base_env())
        .current_dir(&dir);
    let traced = run(traced, &out);
    assert!(
        list_files(&dir).is_empty(),
        "{name}: the command left files in its working folder under xpu-asm-run\n{}",
        traced.ctx()
    );
    (plain, traced)
}

/// A capture of a run in which no process used Level Zero holds xpu-asm-run's
/// own files and nothing else: no record, no dump folder.
fn assert_nothing_recorded(r: &Run) {
    let files: Vec<String> = list_files(&r.out)
        .into_iter()
        .map(|f| f.split(' ').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        files,
        ["collect.json", "report.html", "report.json", "run.json"],
        "files of the capture\n{}",
        r.ctx()
    );
    for sub in ["records", "dumps", "asm"] {
        let n = std::fs::read_dir(r.out.join(sub)).map_or(usize::MAX, |d| d.count());
        assert_eq!(n, 0, "{sub}/ must be empty\n{}", r.ctx());
    }
    assert_eq!(processes(&r.report()).len(), 0, "{}", r.ctx());
}

fn assert_same_behaviour(name: &str, plain: &Run, traced: &Run) {
    assert_eq!(
        (
            traced.output.status.code(),
            &traced.output.stdout,
            &traced.output.stderr
        ),
        (
            plain.output.status.code(),
            &plain.output.stdout,
            &plain.output.stderr
        ),
        "{name}: under xpu-asm-run the command behaved otherwise\nplain run:\n{}\ntraced run:\n{}",
        plain.ctx(),
        traced.ctx()
    );
    assert_nothing_recorded(traced);
}

#[test]
fn programs_without_level_zero_behave_exactly_as_without_xpu_asm() {
    let s = work_scratch();
    let cases: [(&str, &[&str], i32); 6] = [
        ("true", &["true"], 0),
        ("false", &["false"], 1),
        (
            "sh",
            &[
                "sh",
                "-c",
                "echo out; echo err >&2; printf 'b\\na\\n' | sort; exit 3",
            ],
            3,
        ),
        (
            "sh-children",
            &[
                "sh",
                "-c",
                "sh -c 'exit 5'; echo child $?; env true; exec sh -c 'exit 6'",
            ],
            6,
        ),
        ("python-pass", &["python3", "-c", "pass"], 0),
        (
            "python-exit",
            &[
                "python3",
                "-c",
                "import sys; print('py'); sys.stderr.write('e\\n'); sys.exit(4)",
            ],
            4,
        ),
    ];
    for (name, argv, code) in cases {
        let (plain, traced) = plain_and_traced(&s, name, argv);
        assert_eq!(plain.output.status.code(), Some(code), "{}", plain.ctx());
        assert_same_behaviour(name, &plain, &traced);
    }
}

/// `KEY=VALUE` lines as a map.
fn env_map(text: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `env` directly, `env` from a shell, and a grandchild's environment seen
/// from Python: the same as without xpu-asm, plus exactly the documented
/// variables, with the documented values.
#[test]
fn environment_differs_only_by_the_documented_variables() {
    let s = work_scratch();
    let interposer = interposer().display().to_string();
    let cases: [(&str, &[&str]); 3] = [
        ("env", &["env"]),
        ("sh-env", &["sh", "-c", "env; exit 0"]),
        (
            "python-env",
            &[
                "python3",
                "-c",
                "import os\nfor k, v in sorted(os.environ.items()): print(f'{k}={v}')",
            ],
        ),
    ];
    for (name, argv) in cases {
        let (plain, traced) = plain_and_traced(&s, name, argv);
        assert_eq!(plain.output.status.code(), Some(0), "{}", plain.ctx());
        assert_eq!(traced.output.status.code(), Some(0), "{}", traced.ctx());
        assert_eq!(
            traced.output.stderr,
            plain.output.stderr,
            "{}",
            traced.ctx()
        );
        let p = env_map(&plain.output.stdout);
        let mut t = env_map(&traced.output.stdout);
        let mut ours: BTreeMap<String, String> = documented_vars()
            .iter()
            .filter_map(|k| t.remove_entry(k))
            .collect();
        // xpu-asm-run's socket for notices: `xpu-asm-<its pid>-<8 hex>`.
        let notify = ours.remove(xpu_asm_record::NOTIFY_ENV).unwrap_or_default();
        let parts: Vec<&str> = notify.split('-').collect();
        assert!(
            parts.len() == 4
                && parts[..2] == ["xpu", "asm"]
                && parts[2].parse::<u32>().is_ok()
                && parts[3].len() == 8
                && parts[3].bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}: {}={notify:?}\n{}",
            xpu_asm_record::NOTIFY_ENV,
            traced.ctx()
        );
        // The key a notice carries: 32 hex digits, drawn for the run.
        let key = ours
            .remove(xpu_asm_record::NOTIFY_KEY_ENV)
            .unwrap_or_default();
        assert!(
            key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}: {}={key:?}\n{}",
            xpu_asm_record::NOTIFY_KEY_ENV,
            traced.ctx()
        );
        // Python adds nothing of its own here, and neither may we.
        assert_eq!(
            t,
            p,
            "{name}: variables other than ours differ\n{}",
            traced.ctx()
        );
        let out = traced.out.canonicalize().expect("the capture folder");
        if stack() == Stack::Sid {
            // IGC 2 alone: every kernel's ISA from its module's binary, and
            // IGC's and the caches' settings as the user has them.
            let want: BTreeMap<String, String> = [
                (xpu_asm_record::ISA_ENV, "binary".to_string()),
                (OWNED_ENV, String::new()),
                (OUT_ENV, out.display().to_string()),
                ("LD_PRELOAD", interposer.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            assert_eq!(ours, want, "{name}: our variables\n{}", traced.ctx());
            assert_nothing_recorded(&traced);
            continue;
        }
        let dump = ours.get("IGC_DumpToCustomDir").cloned().unwrap_or_default();
        let want_prefix = format!("{}/dumps/", out.display());
        assert!(
            dump.starts_with(&want_prefix),
            "{name}: IGC_DumpToCustomDir={dump:?} is not under {want_prefix}\n{}",
            traced.ctx()
        );
        let mut want: BTreeMap<String, String> = [
            ("IGC_ShaderDumpEnable", "1".to_string()),
            ("IGC_DumpToCustomDir", dump.clone()),
            ("IGC_ShaderDumpRegexFilter", DUMP_FILTER.to_string()),
            ("NEO_CACHE_PERSISTENT", "0".to_string()),
            ("l0_cache_dir", "/dev/null".to_string()),
            ("SYCL_CACHE_PERSISTENT", "0".to_string()),
            (OWNED_ENV, DUMP_ENV.map(|(n, _)| n).join(",")),
            (OUT_ENV, out.display().to_string()),
            ("LD_PRELOAD", interposer.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if stack() == Stack::Debian12 {
            // IGC 1 alone: its light dumps in place of ShaderDumpEnable.
            want.remove("IGC_ShaderDumpEnable");
            let mut owned: Vec<&str> = DUMP_ENV
                .map(|(n, _)| n)
                .into_iter()
                .filter(|n| *n != "IGC_ShaderDumpEnable")
                .collect();
            for (n, v) in IGC1_DUMP_ENV {
                want.insert(n.to_string(), v.to_string());
                owned.push(n);
            }
            want.insert(OWNED_ENV.to_string(), owned.join(","));
            want.insert(IGC_ENV.to_string(), "1".to_string());
        }
        assert_eq!(ours, want, "{name}: our variables\n{}", traced.ctx());
        assert_nothing_recorded(&traced);
    }
}

// ---------------------------------------------------------------------------
// The user's LD_PRELOAD, static and setuid programs

/// A preload library of the user's: its constructor notes each process it
/// loads into, and it wraps `zeCommandListAppendLaunchKernel` (found with
/// `dlsym(RTLD_NEXT)`, like any interposer) to count launches, written at
/// exit. Output goes to the file `$MARKER_FILE`.
const MARKER_C: &str = r#"
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long launches;

static void note(const char *line) {
    const char *path = getenv("MARKER_FILE");
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, strlen(line)) < 0) {
    }
    close(fd);
}

__attribute__((constructor)) static void marker_load(void) {
    char line[4096];
    const char *p = getenv("LD_PRELOAD");
    snprintf(line, sizeof line, "load %d LD_PRELOAD=%s\n", (int)getpid(), p ? p : "");
    note(line);
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                            const ze_group_count_t *g, ze_event_handle_t e,
                                            uint32_t n, ze_event_handle_t *w) {
    static ze_pfnCommandListAppendLaunchKernel_t next;
    if (!next)
        next = (ze_pfnCommandListAppendLaunchKernel_t)dlsym(RTLD_NEXT,
                                                           "zeCommandListAppendLaunchKernel");
    if (!next)
        return ZE_RESULT_ERROR_UNINITIALIZED;
    __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
    return next(l, k, g, e, n, w);
}

__attribute__((destructor)) static void marker_exit(void) {
    char line[128];
    if (!launches)
        return;
    snprintf(line, sizeof line, "launches %d %lu\n", (int)getpid(), launches);
    note(line);
}
"#;

fn gcc_test_program(args: &[&str], shown_dir: &Path) {
    let mut cmd = Command::new("gcc");
    cmd.args(args);
    let shown = shell_words(&cmd);
    let out = run_with_timeout(&mut cmd);
    assert!(
        out.status.success(),
        "cannot build a test program\n{}",
        describe(&shown, &out, shown_dir)
    );
}

/// The marker lines of `file`: `(kind, pid) -> rest`.
fn marker_lines(file: &Path) -> BTreeMap<(String, u32), String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let kind = f.next()?.to_string();
            let pid = f.next()?.parse().ok()?;
            Some(((kind, pid), f.next().unwrap_or("").to_string()))
        })
        .collect()
}

#[test]
fn the_users_ld_preload_is_kept_and_both_libraries_work() {
    let s = work_scratch();
    let src = s.root.join("marker.c");
    let lib = s.root.join("libmarker.so");
    std::fs::write(&src, MARKER_C).expect("write marker.c");
    gcc_test_program(
        &[
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            src.to_str().expect("UTF-8 path"),
            "-o",
            lib.to_str().expect("UTF-8 path"),
            "-ldl",
        ],
        &s.root,
    );
    let steps = ["imm:a:scale:5", "reg:a:scale_v2:2:3"];
    // Alone, the user's library counts the program's direct appends: 5 + 2.
    let alone_marker = s.root.join("alone.txt");
    let mut alone = Command::new(workload_for("link"));
    hermetic(&mut alone);
    alone
        .args(&workload_line("link", &steps)[1..])
        .envs(neo_env())
        .env("LD_PRELOAD", &lib)
        .env("MARKER_FILE", &alone_marker)
        .current_dir(&s.work);
    let alone = run(alone, &s.work);
    assert!(alone.output.status.success(), "{}", alone.ctx());
    let m = marker_lines(&alone_marker);
    assert_eq!(
        m.keys().filter(|(k, _)| k == "launches").count(),
        1,
        "{m:?}\n{}",
        alone.ctx()
    );
    assert!(
        m.iter().any(|((k, _), v)| k == "launches" && v == "7"),
        "the user's library alone must count 7 launches: {m:?}"
    );

    // Under xpu-asm-run with the user's LD_PRELOAD set.
    let marker = s.root.join("marker.txt");
    let mut cmd = xpu_in_work(
        &s,
        &["-q", "--emulate", "pvc"],
        &workload_line("link", &steps),
    );
    cmd.env("LD_PRELOAD", &lib).env("MARKER_FILE", &marker);
    let r = run(cmd, &s.out);
    r.assert_status(0);
    assert_eq!(
        r.stdout_lines(),
        ["imm a scale 5", "reg a scale_v2 2 3"],
        "{}",
        r.ctx()
    );
    let rep = r.report();
    assert_kernels(&r, &rep, &[(SCALE, 5, 5), (SCALE_V2, 6, 2)]);
    let procs = processes(&rep);
    assert_eq!(procs.len(), 1, "{}", r.ctx());
    let pid = u_or_max(&procs[0]["pid"]) as u32;
    let m = marker_lines(&marker);
    let want_preload = format!("LD_PRELOAD={}:{}", interposer().display(), lib.display());
    assert_eq!(
        m.get(&("load".to_string(), pid)),
        Some(&want_preload),
        "the user's library must load into the workload, after the interposer: {m:?}\n{}",
        r.ctx()
    );
    assert_eq!(
        m.get(&("launches".to_string(), pid)).map(String::as_str),
        Some("7"),
        "the user's library must still see every append: {m:?}\n{}",
        r.ctx()
    );
}

const HELLO_C: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    printf("hello %s uid=%d euid=%d\n", argc > 1 ? argv[1] : "", (int)getuid(), (int)geteuid());
    return 4;
}
"#;

/// A statically linked program: LD_PRELOAD cannot reach it. xpu-asm-run
/// says so, and runs it anyway with its output and exit status.
#[test]
fn a_static_program_is_run_with_a_warning() {
    let s = work_scratch();
    let src = s.root.join("hello.c");
    let bin = s.root.join("hello-static");
    std::fs::write(&src, HELLO_C).expect("write hello.c");
    gcc_test_program(
        &[
            "-static",
            "-O1",
            src.to_str().expect("UTF-8"),
            "-o",
            bin.to_str().expect("UTF-8"),
        ],
        &s.root,
    );
    let r = run(
        xpu_in_work(&s, &[], &[bin.display().to_string(), "there".into()]),
        &s.out,
    );
    r.assert_status(4);
    assert_eq!(
        r.stdout_lines().first().map(String::as_str),
        Some("hello there uid=0 euid=0"),
        "{}",
        r.ctx()
    );
    assert_untraced(
        &r,
        &format!(
            "xpu-asm-run: warning: {} is statically linked: LD_PRELOAD cannot load the interposer into it",
            bin.display()
        ),
    );
}

/// A setuid program (owned by `nobody`, run by root): the dynamic loader
/// ignores LD_PRELOAD in it. xpu-asm-run says so and runs it anyway.
#[test]
fn a_setuid_program_is_run_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    const NOBODY: u32 = 65534;
    let s = work_scratch();
    let src = s.root.join("hello.c");
    let bin = s.root.join("hello-setuid");
    std::fs::write(&src, HELLO_C).expect("write hello.c");
    gcc_test_program(
        &[
            "-O1",
            src.to_str().expect("UTF-8"),
            "-o",
            bin.to_str().expect("UTF-8"),
        ],
        &s.root,
    );
    std::os::unix::fs::chown(&bin, Some(NOBODY), None).unwrap_or_else(|e| {
        panic!(
            "cannot give {} to uid {NOBODY} ({e}); this test must run as root",
            bin.display()
        )
    });
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o4755))
        .expect("make it setuid");
    let r = run(
        xpu_in_work(&s, &[], &[bin.display().to_string(), "suid".into()]),
        &s.out,
    );
    r.assert_status(4);
    assert_eq!(
        r.stdout_lines().first().map(String::as_str),
        Some(format!("hello suid uid=0 euid={NOBODY}").as_str()),
        "the program must run setuid\n{}",
        r.ctx()
    );
    assert_untraced(
        &r,
        &format!(
            "xpu-asm-run: warning: {} is setuid/setgid: the dynamic loader ignores LD_PRELOAD for it",
            bin.display()
        ),
    );
}

/// A program the interposer cannot enter: the warning was printed, the
/// program's exit code (4) is reported, and no process left a record.
fn assert_untraced(r: &Run, warning: &str) {
    assert!(
        r.stderr().contains(warning),
        "expected {warning:?}\n{}",
        r.ctx()
    );
    let rep = r.report();
    assert_eq!(rep["exit"], json!({"code": 4}), "{}", r.ctx());
    assert!(processes(&rep).is_empty(), "{}", r.ctx());
}
