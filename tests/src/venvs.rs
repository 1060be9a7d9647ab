//! The Python venvs some tests run in, made (or checked) by their scripts
//! on first use, once per test process. Never skipped: no venv, no test.

use crate::*;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Runs `scripts/<script>` (no timeout: a first run downloads), which must
/// succeed and print the venv's path on its last line; `what` is the venv,
/// for the failure's message.
fn venv_of_script(script: &str, what: &str) -> PathBuf {
    require_stack();
    let mut cmd = Command::new("bash");
    cmd.arg(workspace_dir().join("scripts").join(script))
        .current_dir(workspace_dir());
    let shown = shell_words(&cmd);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "[{}] {what} could not be made or checked; this test needs it\n\
         command: {shown}\nstatus: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        stack().name(),
        out.status
    );
    let path = stdout
        .lines()
        .last()
        .map(|l| PathBuf::from(l.trim()))
        .unwrap_or_default();
    assert!(
        path.join("bin/python").is_file(),
        "{shown} succeeded but its last line is not a venv (no bin/python in {})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        path.display()
    );
    path
}

/// The venv of scripts/pyopencl-venv.sh (pyopencl on the stack's OpenCL).
pub fn pyopencl_venv() -> PathBuf {
    static V: OnceLock<PathBuf> = OnceLock::new();
    V.get_or_init(|| venv_of_script("pyopencl-venv.sh", "the pyopencl venv"))
        .clone()
}

/// The venv of scripts/sycl-venv.sh: CPython 3.10 with dpctl 0.15.0 on the
/// oneAPI 2024.0 DPC++ runtime (dpcpp-cpp-rt 2024.0.3), numpy<2. The first
/// run downloads about 1.4 GB.
pub fn sycl_venv() -> PathBuf {
    static V: OnceLock<PathBuf> = OnceLock::new();
    V.get_or_init(|| {
        venv_of_script(
            "sycl-venv.sh",
            "the SYCL venv (CPython 3.10 with dpctl 0.15.0, dpcpp-cpp-rt 2024.0.3, numpy<2)",
        )
    })
    .clone()
}
