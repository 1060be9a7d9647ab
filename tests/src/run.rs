//! Running programs: deadlines, tracing under the interposer, and [`Run`],
//! a finished run a test asserts on.

use crate::*;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// No test program may run longer than this; a hang becomes a failure that
/// shows what the program printed so far.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs `cmd` with stdin closed, capturing its output, killing it after
/// [`RUN_TIMEOUT`].
pub fn run_with_timeout(cmd: &mut Command) -> Output {
    let mut f = run_until(cmd, RUN_TIMEOUT, Overrun::Kill);
    if let Some(why) = f.overran {
        f.output
            .stderr
            .extend_from_slice(format!("\n[xpu-asm-tests: {why}]\n").as_bytes());
    }
    f.output
}

/// How a command that outlives its time is stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// SIGKILL at once.
    Kill,
    /// SIGINT, as a user's Ctrl-C would be; SIGKILL 3 s later if needed.
    InterruptThenKill,
}

/// What [`run_until`] saw.
pub struct Finished {
    pub output: Output,
    pub elapsed: Duration,
    /// `Some(what happened)` when the command outlived its time.
    pub overran: Option<String>,
}

/// Linux's `ETXTBSY` (`io::ErrorKind::ExecutableFileBusy` is younger than
/// the workspace's Rust).
const ETXTBSY: i32 = 26;

/// Spawns `cmd`, again while the executable is busy (ETXTBSY): a program a
/// test has just written can be held open for writing by a child another
/// test thread forked meanwhile, until that child execs.
pub fn spawn_retrying(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// Runs `cmd` with stdin closed, capturing its output; after `timeout` it is
/// stopped as `how` says.
pub fn run_until(cmd: &mut Command, timeout: Duration, how: Overrun) -> Finished {
    let shown = format!("{cmd:?}");
    let start = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_retrying(cmd).unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let mut so = child.stdout.take().expect("stdout was piped");
    let mut se = child.stderr.take().expect("stderr was piped");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let wait = |child: &mut std::process::Child| {
        child
            .try_wait()
            .unwrap_or_else(|e| panic!("cannot wait for {shown}: {e}"))
    };
    let mut overran = None;
    let status = loop {
        match wait(&mut child) {
            Some(s) => break s,
            None if start.elapsed() > timeout => {
                if how == Overrun::InterruptThenKill {
                    let _ = Command::new("kill")
                        .args(["-INT", &child.id().to_string()])
                        .status();
                    let asked = Instant::now();
                    let mut stopped = None;
                    while asked.elapsed() < Duration::from_secs(3) {
                        stopped = wait(&mut child);
                        if stopped.is_some() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    if let Some(s) = stopped {
                        overran = Some(format!(
                            "still running after {timeout:?}; SIGINT stopped it"
                        ));
                        break s;
                    }
                    overran = Some(format!(
                        "still running after {timeout:?}; SIGINT did not stop it within 3 s either, SIGKILL did"
                    ));
                } else {
                    overran = Some(format!("killed after {timeout:?}"));
                }
                let _ = child.kill();
                break child.wait().expect("wait after kill");
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    Finished {
        output: Output {
            status,
            stdout: t_out.join().unwrap_or_default(),
            stderr: t_err.join().unwrap_or_default(),
        },
        elapsed: start.elapsed(),
        overran,
    }
}

/// The command, its status and output, and the files left under `out`: what
/// a failing test must show.
pub fn describe(cmd: &str, output: &Output, out: &Path) -> String {
    format!(
        "on {}\ncommand: {cmd}\nstatus: {}\nstdout:\n{}\nstderr:\n{}\nfiles under {}:\n  {}",
        stack_info(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        out.display(),
        list_files(out).join("\n  ")
    )
}

fn via_of(args: &[&str]) -> &'static str {
    let via = args
        .iter()
        .position(|a| *a == "--via")
        .and_then(|i| args.get(i + 1))
        .unwrap_or_else(|| panic!("workload arguments {args:?} have no --via"));
    WAYS.iter()
        .find(|w| *w == via)
        .unwrap_or_else(|| panic!("unknown way {via:?}; expected one of {WAYS:?}"))
}

/// The workload command for `args` with the NEO no-hardware environment,
/// run in `out` (so that any stray file it writes shows in failure messages).
pub fn workload_command(out: &Path, args: &[&str]) -> Command {
    std::fs::create_dir_all(out).unwrap_or_else(|e| panic!("cannot create {}: {e}", out.display()));
    let mut cmd = Command::new(workload_for(via_of(args)));
    cmd.args(args).current_dir(out).envs(neo_env());
    cmd
}

/// Adds the interposer to `cmd`: `LD_PRELOAD` and `XPU_ASM_OUT=out`.
pub fn trace(cmd: &mut Command, out: &Path) {
    cmd.env("LD_PRELOAD", interposer())
        .env(xpu_asm_record::OUT_ENV, out);
}

/// Runs the workload under the interposer without judging how it ended.
pub fn run_traced_any(out: &Path, args: &[&str]) -> (String, Output) {
    let mut cmd = workload_command(out, args);
    trace(&mut cmd, out);
    let shown = shell_words(&cmd);
    (shown, run_with_timeout(&mut cmd))
}

/// Runs the workload under the interposer with `XPU_ASM_OUT=out`; panics with
/// everything needed to diagnose it unless it exits with status 0.
pub fn run_traced(out: &Path, args: &[&str]) -> Output {
    let (shown, output) = run_traced_any(out, args);
    assert!(
        output.status.success(),
        "the traced workload failed\n{}",
        describe(&shown, &output, out)
    );
    output
}

/// Runs the workload without the interposer; panics unless it succeeds.
pub fn run_plain(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = workload_command(dir, args);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "the workload failed without the interposer\n{}",
        describe(&shown, &output, dir)
    );
    output
}

/// The command as a shell line, environment first, for failure messages.
pub fn shell_words(cmd: &Command) -> String {
    let q = |s: &OsStr| {
        let s = s.to_string_lossy();
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
        {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    let mut words = Vec::new();
    if let Some(d) = cmd.get_current_dir() {
        words.push(format!("cd {} &&", q(d.as_os_str())));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            words.push(format!("{}={}", k.to_string_lossy(), q(v)));
        }
    }
    words.push(q(cmd.get_program()));
    words.extend(cmd.get_args().map(q));
    words.join(" ")
}

/// A finished run of a command that writes a capture folder (`out`): what
/// a test asserts on, with everything needed to explain a failure.
pub struct Run {
    /// The command, as a shell would take it.
    pub shown: String,
    pub output: Output,
    /// The capture folder.
    pub out: PathBuf,
    /// Whatever must live as long as the run (the test's temporary folder,
    /// when the run outlives the function that made it).
    kept: Option<Box<dyn std::any::Any>>,
}

/// `xpu-asm-run ARGS` (whose capture folder is `out`), with nothing of the
/// test's own environment, colour included ([`hermetic_without_no_color`]).
pub fn run_xpu_asm(args: &[&str], out: &Path) -> Run {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(args);
    hermetic_without_no_color(&mut cmd);
    run(cmd, out)
}

/// Runs `cmd` (with the usual deadline) and keeps what it did.
pub fn run(mut cmd: Command, out: &Path) -> Run {
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    Run::new(shown, output, out)
}

impl Run {
    pub fn new(shown: String, output: Output, out: &Path) -> Run {
        Run {
            shown,
            output,
            out: out.to_path_buf(),
            kept: None,
        }
    }

    /// The command, its status and output, the capture's files and its
    /// report: what a failed assertion prints.
    pub fn ctx(&self) -> String {
        let report = std::fs::read_to_string(self.out.join("report.json"))
            .unwrap_or_else(|e| format!("(no report.json: {e})"));
        format!(
            "{}\nreport.json:\n{report}",
            describe(&self.shown, &self.output, &self.out)
        )
    }

    /// The capture's `report.json`.
    pub fn report(&self) -> serde_json::Value {
        let path = self.out.join("report.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}\n{}", path.display(), self.ctx()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{}", path.display(), self.ctx()))
    }

    /// The command's own exit status (it must exit, never die of a signal).
    pub fn assert_status(&self, code: i32) {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            (self.output.status.code(), self.output.status.signal()),
            (Some(code), None),
            "expected exit status {code}\n{}",
            self.ctx()
        );
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stdout_lines(&self) -> Vec<String> {
        stdout_lines(&self.output)
    }

    /// Stdout, which must be JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.ctx()))
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Keeps `what` (a temporary folder) alive as long as the run.
    pub fn keep(&mut self, what: impl std::any::Any) {
        self.kept = Some(Box::new(what));
    }
}

/// The workload's stdout with the pids its fork steps print (`pid=N`,
/// `child=N`) as `#`: they differ from run to run.
pub fn without_pids(out: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(out);
    let mut v = String::with_capacity(text.len());
    let mut rest: &str = &text;
    while let Some(i) = ["pid=", "child="]
        .iter()
        .filter_map(|k| rest.find(k).map(|i| i + k.len()))
        .min()
    {
        v.push_str(&rest[..i]);
        rest = rest[i..].trim_start_matches(|c: char| c.is_ascii_digit());
        v.push('#');
    }
    v.push_str(rest);
    v.into_bytes()
}
