//! Intel MPI from PyPI (`impi-rt`, `impi-devel`) for the tests, in the venv
//! scripts/impi-venv.sh makes (docs/clusters.md): its `mpiexec` (Hydra) and
//! a real MPI program built with its `mpicc`.

use crate::{build_dir, run_with_timeout, workload_src_dir};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The variable naming the venv (as scripts/impi-venv.sh reads it).
pub const VENV_ENV: &str = "XPU_ASM_IMPI_VENV";

/// The venv: `XPU_ASM_IMPI_VENV`, else `$HOME/.cache/xpu-asm/impi-venv`;
/// panics, saying how to make it, when its `mpiexec` is missing.
pub fn impi_venv() -> PathBuf {
    let v = match std::env::var_os(VENV_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
            .join(".cache/xpu-asm/impi-venv"),
    };
    assert!(
        v.join("bin/mpiexec").is_file(),
        "Intel MPI is not in {} (no bin/mpiexec); make it with scripts/impi-venv.sh \
         (scripts/install-deps.sh runs it), or set {VENV_ENV}",
        v.display()
    );
    v
}

/// Intel MPI's `mpiexec` (the venv's; the same program as `mpiexec.hydra`).
pub fn mpiexec() -> PathBuf {
    impi_venv().join("bin/mpiexec")
}

/// tests/workload/mpi_hello.c built with Intel MPI's `mpicc` (which needs
/// `I_MPI_ROOT`), once per test process.
pub fn mpi_hello() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let v = impi_venv();
            let dest = build_dir().join("mpi-hello-impi");
            let tmp = dest.with_extension(format!("tmp-{}", std::process::id()));
            let mut cmd = Command::new(v.join("bin/mpicc"));
            cmd.env("I_MPI_ROOT", &v)
                .arg("-o")
                .arg(&tmp)
                .arg(workload_src_dir().join("mpi_hello.c"));
            let out = run_with_timeout(&mut cmd);
            assert!(
                out.status.success(),
                "Intel MPI's mpicc failed: {cmd:?}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::rename(&tmp, &dest).expect("the MPI program renamed into place");
            dest
        })
        .clone()
}
