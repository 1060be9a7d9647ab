//! The two installs from a checkout that need nothing but a Rust toolchain:
//! `pip install .` (pyproject.toml: maturin's `bin` bindings) into a fresh
//! venv puts `xpu-asm-run` on the venv's PATH, and `cargo install --path
//! collector` gives the same tool; each, alone (no library beside it: it
//! carries its interposer), captures the C workload with exact counts.
//!
//! One release build serves both: maturin and cargo install share
//! `<target>/wheel` (CARGO_TARGET_DIR), kept between runs; pip fetches
//! maturin from PyPI into its build environment (and caches it).
//!
//! On the host's pass only (`scripts/test.sh` builds the sid pass's tests
//! with feature `sid`): the sid root has neither cargo nor Python's venv,
//! and what is tested here (the packaging) is the same on either stack.
#![cfg(not(feature = "sid"))]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tempfile::TempDir;
use xpu_asm_collector::run::interposer::FILE_NAME;
use xpu_asm_tests::record::{DUMP_ENV, OUT_ENV, OWNED_ENV};
use xpu_asm_tests::*;

const STEPS: [&str; 2] = ["imm:a:scale:5", "reg:a:scale_v2:1:3"];
/// A cold release build on 2 busy cores takes ~6 minutes.
const BUILD_TIMEOUT: Duration = Duration::from_secs(40 * 60);

/// Runs a build step; panics with its output when it fails.
fn build_step(what: &str, mut cmd: Command, log: &Path) {
    cmd.env("CARGO_TARGET_DIR", target_dir().join("wheel"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1");
    let started = Instant::now();
    let f = run_until(&mut cmd, BUILD_TIMEOUT, Overrun::Kill);
    let r = Run::new(shell_words(&cmd), f.output, log);
    r.assert_status(0);
    eprintln!("{what}: {:.1} s", started.elapsed().as_secs_f64());
}

/// `xpu-asm-run --emulate pvc -o OUT -- workload` run as `program` with
/// `path_dir` first in PATH: the exact counts, and the interposer it
/// carries, written into the cache `cache`.
fn assert_captures(program: &str, path_dir: &Path, root: &Path, name: &str) {
    let out = root.join(format!("out-{name}"));
    let cache = root.join(format!("cache-{name}"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![path_dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let mut cmd = Command::new(program);
    cmd.env("PATH", std::env::join_paths(dirs).unwrap())
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("XPU_ASM_INTERPOSER")
        .env_remove("LD_PRELOAD")
        .env_remove(OUT_ENV)
        .env_remove(OWNED_ENV)
        .current_dir(root);
    for (name, _) in DUMP_ENV {
        cmd.env_remove(name);
    }
    for (name, _) in neo_env() {
        cmd.env_remove(name);
    }
    cmd.args(["--emulate", "pvc", "-o"])
        .arg(&out)
        .arg("--")
        .arg(workload())
        .args(["--via", "ddi", "--module"])
        .arg(format!("a={}", spirv("a").display()))
        .args(STEPS);
    let r = run(cmd, &out);
    r.assert_status(0);
    let mut got = BTreeMap::new();
    for k in r.report()["kernels"].as_array().into_iter().flatten() {
        assert_eq!(k["status"], "matched", "{k}\n{}", r.ctx());
        got.insert(
            k["name"].as_str().unwrap_or("?").to_string(),
            (k["launches"].as_u64(), k["appended"].as_u64()),
        );
    }
    let want: BTreeMap<String, (Option<u64>, Option<u64>)> = [
        (SCALE.to_string(), (Some(5), Some(5))),
        (SCALE_V2.to_string(), (Some(3), Some(1))),
    ]
    .into();
    assert_eq!(got, want, "{name}: {}", r.ctx());
    // Where it says it wrote the interposer it carries: the cache's folder
    // for that content, which run.json names as the one preloaded.
    let wrote = "xpu-asm-run: wrote the interposer it carries to ";
    let err = r.stderr();
    let lib = err
        .lines()
        .find_map(|l| l.strip_prefix(wrote))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("{name}: the interposer was not written\n{}", r.ctx()));
    let folder = Path::new(lib).parent().unwrap();
    assert_eq!(
        folder.parent(),
        Some(cache.join("xpu-asm").as_path()),
        "{name}"
    );
    assert!(folder
        .file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with("interposer-")));
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["interposer"], lib, "{name}");
}

/// Every file named `name` under `dir`.
fn find_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(find_named(&p, name));
        } else if e.file_name() == name {
            found.push(p);
        }
    }
    found
}

#[test]
fn pip_install_of_the_checkout_and_cargo_install_give_a_working_xpu_asm_run() {
    require_stack();
    let dir: TempDir = temp_dir("wheel");
    let root = dir.path();
    let venv = root.join("venv");
    let mut mk = Command::new("python3");
    mk.args(["-m", "venv"]).arg(&venv);
    build_step("python3 -m venv", mk, &venv);
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.arg("install").arg(workspace_dir());
    build_step("pip install . (maturin, release)", pip, &venv);
    let bin = venv.join("bin");
    assert!(bin.join("xpu-asm-run").is_file());
    // The wheel holds the binary alone.
    assert_eq!(find_named(&venv, FILE_NAME), Vec::<PathBuf>::new());
    assert_captures("xpu-asm-run", &bin, root, "wheel");

    let cargo_root = root.join("cargo");
    let mut inst = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    inst.args(["install", "--path"])
        .arg(workspace_dir().join("collector"))
        .arg("--root")
        .arg(&cargo_root);
    build_step("cargo install --path collector", inst, &cargo_root);
    assert_eq!(find_named(&cargo_root, FILE_NAME), Vec::<PathBuf>::new());
    let installed = cargo_root.join("bin").join("xpu-asm-run");
    assert_captures(
        &installed.display().to_string(),
        &cargo_root.join("bin"),
        root,
        "cargo-install",
    );
}
