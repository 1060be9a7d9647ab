//! A one-host Slurm cluster for the tests: Debian's `munged`, `slurmctld`
//! and `slurmd`, started by scripts/slurm-cluster.sh with every path under a
//! folder of their own and ports of their own (docs/clusters.md).
//!
//! One cluster per test binary, started by the first test that asks for it
//! ([`cluster`]) and always stopped: when the test binary ends (an `atexit`
//! handler, which runs whether tests passed or panicked), and, should the
//! binary be killed, by a watcher process that stops it as soon as the
//! binary's end of a pipe closes. A cluster left by a run killed some other
//! way is stopped by the next start (the script cleans up clusters whose
//! owner has ended). Stopping cancels every job first, then stops the
//! daemons by their pid files, then kills any `slurmstepd` or task left.

use crate::jobs::command;
use crate::{run_with_timeout, workspace_dir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A running cluster.
pub struct Cluster {
    /// Its folder: `slurm.conf`, the daemons' logs, state and spool.
    pub dir: PathBuf,
    /// `<dir>/slurm.conf`, which clients find through `SLURM_CONF`.
    pub conf: PathBuf,
    /// The watcher, whose stdin is the write end of its pipe: closed when
    /// this process ends.
    _watcher: Mutex<Child>,
}

fn script() -> PathBuf {
    workspace_dir().join("scripts/slurm-cluster.sh")
}

fn output_text(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Stops the cluster in `dir` (nothing when it is gone already).
fn stop_dir(dir: &Path) -> Output {
    Command::new("bash")
        .arg(script())
        .arg("stop")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script().display()))
}

extern "C" fn stop_at_exit() {
    // Never unwind out of an atexit handler.
    let _ = std::panic::catch_unwind(|| {
        if let Some(c) = CLUSTER.get() {
            let out = stop_dir(&c.dir);
            if !out.status.success() {
                eprintln!(
                    "[xpu-asm-tests: stopping the Slurm cluster {} failed]\n{}",
                    c.dir.display(),
                    output_text(&out)
                );
            }
        }
    });
}

extern "C" {
    fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();

/// The cluster of this test binary, started on first use; panics (saying
/// how to install Slurm) when it cannot start.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| {
        // SAFETY: registers a plain function with no arguments; it runs once,
        // at exit, and catches any panic.
        let registered = unsafe { atexit(stop_at_exit) };
        assert_eq!(registered, 0, "atexit refused the cluster's stop handler");
        Cluster::start()
    })
}

impl Cluster {
    fn start() -> Cluster {
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .arg("start")
            .arg(std::process::id().to_string());
        let out = run_with_timeout(&mut cmd);
        let dir = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .map(PathBuf::from)
            .filter(|d| out.status.success() && d.join("slurm.conf").is_file())
            .unwrap_or_else(|| {
                panic!(
                    "the one-host Slurm cluster did not start (scripts/install-deps.sh installs \
                     slurmctld, slurmd, slurm-client and munge)\n{}",
                    output_text(&out)
                )
            });
        // Stops the cluster when this process ends, however it ends.
        let watcher = Command::new("sh")
            .args([
                "-c",
                "read _ ; exec bash \"$0\" stop \"$1\" >/dev/null 2>&1",
            ])
            .arg(script())
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                stop_dir(&dir);
                panic!("cannot start the cluster's watcher: {e}")
            });
        Cluster {
            conf: dir.join("slurm.conf"),
            dir,
            _watcher: Mutex::new(watcher),
        }
    }

    /// `program` (srun, sbatch, xpu-asm-run, ...) as a client of this
    /// cluster: [`command`]'s clean environment and `SLURM_CONF`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = command(&program.as_ref().to_string_lossy());
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// The text a Slurm client prints, which must succeed.
    fn query(&self, program: &str, args: &[&str]) -> String {
        let mut cmd = self.command(program);
        cmd.args(args);
        let out = run_with_timeout(&mut cmd);
        assert!(
            out.status.success(),
            "{program} {args:?} failed\n{}\n{}",
            output_text(&out),
            self.logs()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Submits `script` (`sbatch --parsable`, the job's output into
    /// `output`), returning the job id.
    pub fn sbatch(&self, cwd: &Path, args: &[&str], script: &Path, output: &Path) -> String {
        let mut cmd = self.command("sbatch");
        cmd.current_dir(cwd)
            .arg("--parsable")
            .arg(format!("--output={}", output.display()))
            .args(args)
            .arg(script);
        let out = run_with_timeout(&mut cmd);
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            out.status.success() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()),
            "sbatch did not submit {}\n{}",
            script.display(),
            output_text(&out)
        );
        id
    }

    /// Waits for job `id` to end (polling `squeue`, which is faster than
    /// `sbatch --wait`; docs/clusters.md), and returns its `scontrol show
    /// job` fields `(JobState, ExitCode)`, e.g. `("COMPLETED", "0:0")`.
    pub fn wait(&self, id: &str, timeout: Duration) -> (String, String) {
        let start = Instant::now();
        while !self.query("squeue", &["-h", "-j", id]).trim().is_empty() {
            assert!(
                start.elapsed() < timeout,
                "job {id} still queued or running after {timeout:?}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let show = self.query("scontrol", &["show", "job", "-o", id]);
        let field = |name: &str| {
            show.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in `scontrol show job`: {show}"))
                .to_string()
        };
        (field("JobState="), field("ExitCode="))
    }

    /// The last lines of the daemons' logs, for failure messages.
    pub fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(15)..].join("\n");
                format!("{f} (last lines):\n{tail}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
