//! One capture builder: `xpu-asm-run OPTIONS -o OUT -- PROGRAM ARGS`, put
//! together step by step by the tests and run with the usual deadline.

use crate::*;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a capture's environment gets beyond the test's own.
enum EnvOp {
    Set(OsString, OsString),
    Remove(OsString),
}

/// How much of the test's own environment a capture drops first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Clean {
    /// Nothing.
    None,
    /// [`hermetic`].
    Hermetic,
    /// [`hermetic_without_no_color`].
    WithoutNoColor,
}

/// A capture of `program` by `xpu-asm-run` into `out`.
pub struct Capture {
    options: Vec<OsString>,
    out: PathBuf,
    program: Vec<OsString>,
    dir: Option<PathBuf>,
    env: Vec<EnvOp>,
    clean: Clean,
}

impl Capture {
    /// `xpu-asm-run -o OUT`, no program yet.
    pub fn new(out: impl AsRef<Path>) -> Capture {
        Capture {
            options: Vec::new(),
            out: out.as_ref().to_path_buf(),
            program: Vec::new(),
            dir: None,
            env: Vec::new(),
            clean: Clean::None,
        }
    }

    /// `xpu-asm-run --emulate PRODUCT -o OUT`.
    pub fn emulating(product: &str, out: impl AsRef<Path>) -> Capture {
        Capture::new(out).options(["--emulate", product])
    }

    /// The capture folder.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// One option of xpu-asm-run's own.
    pub fn option(mut self, o: impl AsRef<OsStr>) -> Capture {
        self.options.push(o.as_ref().to_os_string());
        self
    }

    /// Options of xpu-asm-run's own.
    pub fn options<I, S>(mut self, os: I) -> Capture
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.options
            .extend(os.into_iter().map(|o| o.as_ref().to_os_string()));
        self
    }

    /// `--isa dump` (IGC's dumps on both stacks: sid's default is
    /// `binary`), unless the options already name `--isa`.
    pub fn isa_dump_unless_set(self) -> Capture {
        if self.options.iter().any(|o| o == "--isa") {
            self
        } else {
            self.options(["--isa", "dump"])
        }
    }

    /// The program to capture (after `--`); its arguments follow.
    pub fn program(mut self, p: impl AsRef<OsStr>) -> Capture {
        self.program.push(p.as_ref().to_os_string());
        self
    }

    /// One argument of the program's.
    pub fn arg(self, a: impl AsRef<OsStr>) -> Capture {
        self.program(a)
    }

    /// Arguments of the program's.
    pub fn args<I, S>(mut self, args: I) -> Capture
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.program
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// The workload's `--module NAME=SPIRV`.
    pub fn module(self, name: &str, spirv: &Path) -> Capture {
        self.arg("--module")
            .arg(format!("{name}={}", spirv.display()))
    }

    /// The folder the capture runs in.
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Capture {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A variable of the capture's environment.
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Capture {
        self.env.push(EnvOp::Set(
            k.as_ref().to_os_string(),
            v.as_ref().to_os_string(),
        ));
        self
    }

    /// Variables of the capture's environment.
    pub fn envs<I, K, V>(mut self, vars: I) -> Capture
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// A variable removed from the capture's environment.
    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Capture {
        self.env.push(EnvOp::Remove(k.as_ref().to_os_string()));
        self
    }

    /// [`hermetic`] first, before the capture's own variables.
    pub fn hermetic(mut self) -> Capture {
        self.clean = Clean::Hermetic;
        self
    }

    /// [`hermetic_without_no_color`] first, before the capture's own
    /// variables.
    pub fn hermetic_without_no_color(mut self) -> Capture {
        self.clean = Clean::WithoutNoColor;
        self
    }

    /// The command, not yet run.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(xpu_asm_run());
        cmd.args(&self.options)
            .arg("-o")
            .arg(&self.out)
            .arg("--")
            .args(&self.program);
        if let Some(d) = &self.dir {
            cmd.current_dir(d);
        }
        match self.clean {
            Clean::None => {}
            Clean::Hermetic => hermetic(&mut cmd),
            Clean::WithoutNoColor => hermetic_without_no_color(&mut cmd),
        }
        for op in &self.env {
            match op {
                EnvOp::Set(k, v) => cmd.env(k, v),
                EnvOp::Remove(k) => cmd.env_remove(k),
            };
        }
        cmd
    }

    /// Runs the capture, whatever its status.
    pub fn run(self) -> Run {
        run(self.command(), &self.out)
    }

    /// Runs the capture, which must exit 0.
    pub fn run_ok(self) -> Run {
        let r = self.run();
        r.assert_status(0);
        r
    }
}
