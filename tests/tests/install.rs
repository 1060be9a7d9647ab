//! One file to copy: `xpu-asm-run` alone in an empty folder (no library
//! beside it, `XPU_ASM_INTERPOSER` unset) writes the interposer it carries
//! into the user's cache once per content, reuses it, refuses anything
//! planted there, and falls back to the capture folder when the cache is
//! read-only; each run captures the C workload with exact counts.

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tempfile::TempDir;
use xpu_asm_collector::run::interposer::{embedded, folder_name, FILE_NAME, SHA256};
use xpu_asm_tests::record::{DUMP_ENV, OUT_ENV, OWNED_ENV};
use xpu_asm_tests::*;

const STEPS: [&str; 2] = ["imm:a:scale:5", "reg:a:scale_v2:1:3"];
const WROTE: &str = "xpu-asm-run: wrote the interposer it carries to ";

struct InstallScratch {
    _dir: TempDir,
    root: PathBuf,
    /// `xpu-asm-run` copied alone into a folder of its own.
    bin: PathBuf,
    /// What `XDG_CACHE_HOME` names.
    cache: PathBuf,
}

fn install_scratch() -> InstallScratch {
    require_stack();
    let dir = temp_dir("install");
    let root = dir.path().to_path_buf();
    let bin_dir = root.join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let bin = bin_dir.join("xpu-asm-run");
    std::fs::copy(xpu_asm_run(), &bin).expect("xpu-asm-run copied");
    InstallScratch {
        cache: root.join("cache"),
        bin,
        root,
        _dir: dir,
    }
}

impl InstallScratch {
    /// Where the cache holds the library.
    fn cached(&self) -> PathBuf {
        self.cache
            .join("xpu-asm")
            .join(folder_name())
            .join(FILE_NAME)
    }

    /// `WRAPPER... xpu-asm-run [--emulate pvc] -o OUT -- ARGS` (the copied
    /// binary; `--emulate` for the workload), with the cache at
    /// [`InstallScratch::cache`] and nothing of the test's own environment.
    fn command(&self, wrapper: &[&str], out: &Path, args: &[String]) -> Command {
        let mut cmd = match wrapper.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(&self.bin);
                c
            }
            None => Command::new(&self.bin),
        };
        cmd.env_remove("LD_PRELOAD")
            .env_remove(OUT_ENV)
            .env_remove(OWNED_ENV)
            .env_remove("XPU_ASM_INTERPOSER")
            .env("XDG_CACHE_HOME", &self.cache)
            .current_dir(&self.root);
        for (name, _) in DUMP_ENV {
            cmd.env_remove(name);
        }
        for (name, _) in neo_env() {
            cmd.env_remove(name);
        }
        if args.first() == Some(&workload().display().to_string()) {
            cmd.args(["--emulate", "pvc"]);
        }
        cmd.arg("-o").arg(out).arg("--").args(args);
        cmd
    }

    /// The workload captured into `out` by the copied binary.
    fn capture(&self, out: &Path) -> Run {
        run(self.command(&[], out, &workload_line("ddi", &STEPS)), out)
    }
}

/// The exact counts of [`STEPS`], every kernel matched to its ISA.
fn assert_steps_matched(run: &Run) {
    let r = run.report();
    let mut got = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        assert_eq!(k["status"], "matched", "{k}\n{}", run.ctx());
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
    assert_eq!(got, want, "{}", run.ctx());
}

/// The library `run.json` of `out` says the run preloaded.
fn interposer_preloaded(out: &Path) -> PathBuf {
    let v: Value = serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    PathBuf::from(v["interposer"].as_str().unwrap())
}

fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_binary_alone_captures_and_reuses_what_it_wrote() {
    let s = install_scratch();
    let out = s.root.join("out1");
    let r1 = s.capture(&out);
    r1.assert_status(0);
    assert_steps_matched(&r1);
    let lib = real(&s.cached());
    assert!(
        r1.stderr().contains(&format!("{WROTE}{}", lib.display())),
        "{}",
        r1.ctx()
    );
    assert_eq!(interposer_preloaded(&out), lib, "{}", r1.ctx());
    assert!(r1.report()["processes"].as_array().unwrap().len() == 1);
    // The folders are the user's alone; the library is not writable by others.
    for d in [
        lib.parent().unwrap(),
        lib.parent().unwrap().parent().unwrap(),
    ] {
        let m = std::fs::symlink_metadata(d).unwrap();
        assert_eq!(m.mode() & 0o7777, 0o700, "{}", d.display());
    }
    let m = std::fs::symlink_metadata(&lib).unwrap();
    assert_eq!(m.mode() & 0o022, 0, "{}", lib.display());
    // The second start loads the same file, and writes nothing.
    let out2 = s.root.join("out2");
    let r2 = s.capture(&out2);
    r2.assert_status(0);
    assert_steps_matched(&r2);
    assert!(!r2.stderr().contains(WROTE), "{}", r2.ctx());
    assert_eq!(interposer_preloaded(&out2), lib);
    let again = std::fs::symlink_metadata(&lib).unwrap();
    assert_eq!((again.ino(), again.mtime()), (m.ino(), m.mtime()));
    let mut names: Vec<String> = std::fs::read_dir(lib.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".lock", FILE_NAME]);
}

#[test]
fn two_dozen_concurrent_starts_write_it_once_and_all_load_it() {
    let s = install_scratch();
    // Each command prints the line of its own memory map that shows the
    // library loaded, and from where.
    let probe: Vec<String> = ["sh", "-c", "grep -m1 libxpu_asm_interposer /proc/self/maps"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let children: Vec<_> = (0..24)
        .map(|i| {
            let out = s.root.join(format!("out{i}"));
            let mut cmd = s.command(&[], &out, &probe);
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            (out, spawn_retrying(&mut cmd).expect("xpu-asm-run started"))
        })
        .collect();
    let mut wrote = 0;
    let mut loaded = Vec::new();
    for (out, child) in children {
        let o = child.wait_with_output().unwrap();
        let r = Run::new(format!("xpu-asm-run -o {}", out.display()), o, &out);
        r.assert_status(0);
        wrote += r.stderr().matches(WROTE).count();
        let line = r.stdout_lines().into_iter().find(|l| l.contains(FILE_NAME));
        let path = line.as_deref().and_then(|l| l.split_whitespace().last());
        loaded.push(path.unwrap_or("(not loaded)").to_string());
    }
    let lib = real(&s.cached());
    assert_eq!(wrote, 1, "the library was written {wrote} times");
    assert!(
        loaded.iter().all(|l| Path::new(l) == lib),
        "loaded from: {loaded:?}"
    );
    assert!(std::fs::read(&lib).unwrap() == embedded());
    let mut names: Vec<String> = std::fs::read_dir(lib.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".lock", FILE_NAME], "temporary files left");
}

/// A shared library that, if anything ever loaded it, would leave `marker`.
fn planted_library(s: &InstallScratch, marker: &Path) -> PathBuf {
    let src = s.root.join("planted.c");
    let lib = s.root.join("planted.so");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {{\n  \
             FILE *f = fopen(\"{}\", \"w\");\n  if (f) fclose(f);\n}}\n",
            marker.display()
        ),
    )
    .unwrap();
    let o = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .expect("gcc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    lib
}

/// Runs the workload with `what` at the cache path: refused before anything
/// runs, with the reason, and never loaded.
fn assert_refused(s: &InstallScratch, marker: &Path, what: &str, reason: &str) {
    let out = s.root.join(format!("out-{what}"));
    let r = s.capture(&out);
    r.assert_status(2);
    let lib = s.cached();
    let want = format!(
        "xpu-asm-run: refusing to preload the interposer from {}: it {reason}; xpu-asm-run did \
         not make it so. Remove it (rm -r {}) and run again, or give a library with \
         --interposer PATH",
        lib.display(),
        lib.display()
    );
    assert!(r.stderr().contains(&want), "{what}: {}", r.ctx());
    assert!(!out.exists(), "{what}: the run went on\n{}", r.ctx());
    assert!(!marker.exists(), "{what}: the planted library was loaded");
    assert!(
        std::fs::symlink_metadata(&lib).is_ok(),
        "{what}: removed, not refused"
    );
}

#[test]
fn a_planted_file_or_link_in_the_cache_is_refused_and_never_loaded() {
    let s = install_scratch();
    let marker = s.root.join("planted-library-was-loaded");
    let planted = planted_library(&s, &marker);
    let lib = s.cached();
    let dir = lib.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for d in [dir, dir.parent().unwrap(), &s.cache] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    std::fs::copy(&planted, &lib).unwrap();
    let content = format!(
        "is not the interposer this xpu-asm-run carries (sha256 {SHA256}, {} bytes)",
        embedded().len()
    );
    assert_refused(&s, &marker, "file", &content);
    std::fs::remove_file(&lib).unwrap();
    std::os::unix::fs::symlink(&planted, &lib).unwrap();
    assert_refused(&s, &marker, "link", "is a symbolic link");
    // A link to the right bytes is refused all the same.
    let right = s.root.join("right.so");
    std::fs::write(&right, embedded()).unwrap();
    std::fs::remove_file(&lib).unwrap();
    std::os::unix::fs::symlink(&right, &lib).unwrap();
    assert_refused(&s, &marker, "link-to-right", "is a symbolic link");
    // Once removed, as the error says, the run writes its own and captures.
    std::fs::remove_file(&lib).unwrap();
    let out = s.root.join("out");
    let r = s.capture(&out);
    r.assert_status(0);
    assert_steps_matched(&r);
    assert_eq!(interposer_preloaded(&out), real(&lib));
}

#[test]
fn a_read_only_cache_leaves_the_capture_folder() {
    let s = install_scratch();
    std::fs::create_dir(&s.cache).unwrap();
    // /proc/self belongs to the process's effective user.
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let cache = s.cache.display().to_string();
    // Root writes through permissions: a read-only mount of the folder, in a
    // mount namespace of the run's own; others: a folder of mode 0555.
    // Inside a chroot (the sid pass) `/` is no mount point whose propagation
    // unshare could make private; scripts/sid-root.sh's namespace already is.
    let private = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    let wrapper: Vec<&str> = if root {
        vec![
            "unshare",
            "--mount",
            "--propagation",
            if private { "private" } else { "unchanged" },
            "sh",
            "-c",
            "mount --bind -o ro \"$1\" \"$1\" && shift && exec \"$@\"",
            "sh",
            &cache,
        ]
    } else {
        std::fs::set_permissions(&s.cache, std::fs::Permissions::from_mode(0o555)).unwrap();
        vec![]
    };
    let out = s.root.join("out");
    let r = run(
        s.command(&wrapper, &out, &workload_line("ddi", &STEPS)),
        &out,
    );
    r.assert_status(0);
    assert_steps_matched(&r);
    let why = if root {
        "Read-only file system (os error 30)"
    } else {
        "Permission denied (os error 13)"
    };
    let want = format!(
        "xpu-asm-run: warning: the cache cannot hold the interposer (cannot create {}/xpu-asm: \
         {why}); writing it into the capture folder {} instead",
        real(&s.cache).display(),
        out.display()
    );
    assert!(r.stderr().contains(&want), "{}", r.ctx());
    let lib = real(&out).join(folder_name()).join(FILE_NAME);
    assert_eq!(interposer_preloaded(&out), lib, "{}", r.ctx());
    assert!(std::fs::read(&lib).unwrap() == embedded());
    assert!(r.stderr().contains(&format!("{WROTE}{}", lib.display())));
    assert_eq!(std::fs::read_dir(&s.cache).unwrap().count(), 0);
    // Written by a run that could (a login node), a read-only cache (a
    // compute node's home) is used as it is.
    if !root {
        std::fs::set_permissions(&s.cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let probe = vec!["true".to_string()];
    let out = s.root.join("out-writable");
    let r = run(s.command(&[], &out, &probe), &out);
    r.assert_status(0);
    if !root {
        std::fs::set_permissions(&s.cache, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let out = s.root.join("out-read-only");
    let r = run(
        s.command(&wrapper, &out, &workload_line("ddi", &STEPS)),
        &out,
    );
    r.assert_status(0);
    assert_steps_matched(&r);
    assert!(!r.stderr().contains("warning"), "{}", r.ctx());
    assert_eq!(interposer_preloaded(&out), real(&s.cached()), "{}", r.ctx());
    assert!(!out.join(folder_name()).exists());
}
