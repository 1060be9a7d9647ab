//! Builds the interposer of this workspace (`interposer/`, a cdylib) so that
//! `xpu-asm-run` carries it inside (`include_bytes!`, src/run/interposer.rs):
//! one file to copy, and the library it preloads is always the one built
//! with it.
//!
//! Cargo has no stable artifact dependencies, so this runs a second cargo on
//! `interposer/Cargo.toml` with a target folder of its own beside the
//! profile folders of the outer build (`<target>/xpu-asm-interposer-embed`):
//! shared by `cargo build`, `cargo test`, `cargo clippy` of one target
//! folder (a warm build does nothing there), and inside the temporary target
//! folder of `cargo install --path collector` or of maturin's wheel build.
//! The library is copied into OUT_DIR and its sha256 computed there, so the
//! bytes embedded and the hash they are checked against are the same file's.
//!
//! Sets `XPU_ASM_EMBEDDED_INTERPOSER` (the copy's path) and
//! `XPU_ASM_EMBEDDED_INTERPOSER_SHA256` (hex) for the collector's code, and
//! `XPU_ASM_COMMIT`, the commit `xpu-asm-run --version` names.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "libxpu_asm_interposer.so";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}

/// `<target>/xpu-asm-interposer-embed` from OUT_DIR
/// (`<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`), or a folder in
/// OUT_DIR when it does not have that shape.
fn nested_target_dir(out_dir: &Path) -> PathBuf {
    let shaped = out_dir.ancestors().nth(2).and_then(Path::file_name) == Some("build".as_ref());
    match out_dir.ancestors().nth(4) {
        Some(base) if shaped => base.join("xpu-asm-interposer-embed"),
        _ => out_dir.join("interposer-target"),
    }
}

/// Runs `cargo build` of the interposer; returns the built library's path.
fn build_interposer(workspace: &Path, target_dir: &Path) -> PathBuf {
    let release = env("PROFILE") == "release";
    let target = env("TARGET");
    let mut cargo = Command::new(env("CARGO"));
    cargo
        .arg("build")
        .arg("--manifest-path")
        .arg(workspace.join("interposer").join("Cargo.toml"))
        .args(["-p", "xpu-asm-interposer", "--lib"])
        .arg("--target-dir")
        .arg(target_dir)
        // `cargo clippy` runs clippy-driver through this: the library is
        // built, not linted, and one build serves clippy, build and test.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        // Flags meant for the binary (a fuzzer's sanitizers: scripts/fuzz.sh)
        // would make a library no plain process can preload.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        // Always named, so the library is where this looks for it.
        .args(["--target", &target]);
    if release {
        cargo.arg("--release");
    }
    let dir = target_dir.join(&target);
    let status = cargo
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the interposer: {e}"));
    assert!(
        status.success(),
        "building the interposer to embed failed ({status}); `cargo build -p xpu-asm-interposer` \
         shows why"
    );
    dir.join(if release { "release" } else { "debug" })
        .join(LIB)
}

/// `git ARGS` in `dir`: its output's first line, when git ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let line = String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .next()?
        .trim()
        .to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}

/// The commit `git archive` wrote into collector/COMMIT (export-subst in
/// .gitattributes: scripts/source-tarball.sh's tarball), its first 12
/// digits; None in a checkout, where the file holds the placeholder.
fn archived_commit(manifest: &Path) -> Option<String> {
    let file = manifest.join("COMMIT");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = std::fs::read_to_string(file).ok()?;
    let hash = text.trim();
    (hash.len() == 40 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hash[..12].to_ascii_lowercase())
}

/// The commit built from: `XPU_ASM_COMMIT` when set (scripts/release.sh
/// sets it, with `-modified` for a tree that has changes), else the one a
/// source tarball carries (collector/COMMIT), else the checkout's HEAD,
/// else "unknown" (an archive made otherwise). The build script runs again
/// when HEAD moves: HEAD, the branch it names and packed-refs are watched
/// (each where it exists: a path that does not would make it run on every
/// build).
fn commit(workspace: &Path, manifest: &Path) -> String {
    println!("cargo:rerun-if-env-changed=XPU_ASM_COMMIT");
    if let Ok(c) = std::env::var("XPU_ASM_COMMIT") {
        return c;
    }
    if let Some(c) = archived_commit(manifest) {
        return c;
    }
    let Some(head) = git(workspace, &["rev-parse", "--short=12", "HEAD"]) else {
        return "unknown".into();
    };
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(workspace, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(p) = git(
            workspace,
            &["rev-parse", "--path-format=absolute", "--git-path", &name],
        ) {
            if Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    head
}

fn main() {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .parent()
        .expect("the collector lives inside the workspace");
    for p in [
        "interposer/src",
        "interposer/Cargo.toml",
        "record/src",
        "record/Cargo.toml",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(p).display());
    }
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let built = build_interposer(workspace, &nested_target_dir(&out_dir));
    let bytes = std::fs::read(&built)
        .unwrap_or_else(|e| panic!("cannot read the built interposer {}: {e}", built.display()));
    let copy = out_dir.join(LIB);
    std::fs::write(&copy, &bytes)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", copy.display()));
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!(
        "cargo:rustc-env=XPU_ASM_EMBEDDED_INTERPOSER={}",
        copy.display()
    );
    println!("cargo:rustc-env=XPU_ASM_EMBEDDED_INTERPOSER_SHA256={sha}");
    println!(
        "cargo:rustc-env=XPU_ASM_COMMIT={}",
        commit(workspace, &manifest)
    );
}
