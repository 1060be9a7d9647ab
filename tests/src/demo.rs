//! The demo (scripts/demo-captures.sh, which scripts/demo.sh runs) made in
//! a test's own folder: its workload and its three captures, at the paths
//! the docs and the skill name (`target/demo/...`, relative to the folder).

use crate::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The demo made under `root`: `root/target/demo/{build, capture,
/// capture-g, capture-O0}`. Commands that name `target/demo/...` run from
/// `root`.
pub struct Demo {
    pub root: PathBuf,
    /// `root/target/demo`.
    pub dir: PathBuf,
    /// `xpu-asm-run --emulate pvc -o target/demo/capture`'s output.
    pub table: String,
}

/// Runs scripts/demo-captures.sh from `root` with cargo's xpu-asm-run: about
/// 15 s (the workload and its modules built, three captures).
pub fn demo(root: &Path) -> Demo {
    require_stack();
    let mut cmd = Command::new("bash");
    cmd.arg(workspace_dir().join("scripts/demo-captures.sh"))
        .arg("target/demo")
        .current_dir(root)
        .env("XPU_ASM_RUN", xpu_asm_run())
        .env_remove("COLUMNS");
    hermetic(&mut cmd);
    let dir = root.join("target/demo");
    let r = run(cmd, &dir.join("capture"));
    r.assert_status(0);
    Demo {
        root: root.to_path_buf(),
        table: r.stdout(),
        dir,
    }
}

impl Demo {
    /// The capture of the workload as it is.
    pub fn capture(&self) -> PathBuf {
        self.dir.join("capture")
    }

    /// Its modules built with `-g`.
    pub fn capture_g(&self) -> PathBuf {
        self.dir.join("capture-g")
    }

    /// Built with `-cl-opt-disable`.
    pub fn capture_o0(&self) -> PathBuf {
        self.dir.join("capture-O0")
    }

    /// The workload's command line, as the demo ran it (relative to
    /// `root`): its capture's `command`.
    pub fn command(&self) -> Vec<String> {
        let r = read_report(&self.capture());
        r["command"]
            .as_array()
            .expect("the report's command")
            .iter()
            .map(|a| a.as_str().expect("an argument").to_string())
            .collect()
    }

    /// Each kernel the workload launches, by name, with its launches: the
    /// product of the numbers of its step (`imm:a:scale:300`,
    /// `reg:a:common_kernel:4:50`), as the workload's command line gives
    /// them; a name of two modules twice.
    pub fn launches(&self) -> Vec<(String, u64)> {
        self.command()
            .iter()
            .filter(|a| a.starts_with("imm:") || a.starts_with("reg:"))
            .map(|s| {
                let p: Vec<&str> = s.split(':').collect();
                let n = p[3..]
                    .iter()
                    .map(|x| x.parse::<u64>().expect("a count"))
                    .product();
                (p[2].to_string(), n)
            })
            .collect()
    }
}

/// The `report.json` of the capture `dir`.
pub fn read_report(dir: &Path) -> Value {
    let path = dir.join("report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}
