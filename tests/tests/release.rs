//! The release artifacts (scripts/release.sh) and a user's older system:
//! what the script writes (names, contents, the wheel's tag as auditwheel
//! sees it, the newest glibc symbol the binary and its interposer need),
//! then, in a Debian 11 root (scripts/bullseye-root.sh: glibc 2.31, no
//! Rust, no C compiler), the binary names its version and commit, collects
//! a capture made on the host, runs programs that exit as they do without
//! it, and captures an OpenCL program on bullseye's own driver (NEO 20.44
//! in no-hardware mode); the wheel installs there with pip, no Rust.
//!
//! One release build serves every test (`<target>/dist`, kept between
//! runs); the root is kept in /var/cache/xpu-asm.
//!
//! On the host's pass only (`scripts/test.sh` builds the sid pass's tests
//! with feature `sid`): the release is built on the host, and the systems it
//! runs on are the root's.
#![cfg(not(feature = "sid"))]

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use xpu_asm_tests::record::{DUMP_ENV, OUT_ENV, OWNED_ENV};
use xpu_asm_tests::*;

/// A cold release build on 2 busy cores takes ~7 minutes.
const BUILD_TIMEOUT: Duration = Duration::from_secs(40 * 60);
/// The newest glibc the artifacts may need (RHEL 8's).
const GLIBC_MAX: (u32, u32) = (2, 28);
const PLATFORM: &str = "manylinux_2_28_x86_64";
const VERSION: &str = env!("CARGO_PKG_VERSION");
const STEPS: [&str; 2] = ["imm:a:scale:5", "reg:a:scale_v2:1:3"];

struct Release {
    dist: PathBuf,
    /// What release.sh printed on stderr.
    log: String,
}

fn wheel_name() -> String {
    format!("xpu_asm-{VERSION}-py3-none-{PLATFORM}.whl")
}

fn tarball_name() -> String {
    format!("xpu-asm-{VERSION}-x86_64-linux-gnu.tar.gz")
}

/// Runs `cmd` to its end (within `timeout`); panics with its output unless
/// it exits 0.
fn checked(what: &str, mut cmd: Command, timeout: Duration) -> Output {
    let shown = shell_words(&cmd);
    let f = run_until(&mut cmd, timeout, Overrun::Kill);
    assert!(
        f.output.status.success(),
        "{what} failed: {shown}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        f.output.status,
        String::from_utf8_lossy(&f.output.stdout),
        String::from_utf8_lossy(&f.output.stderr)
    );
    f.output
}

/// `scripts/release.sh --out <build dir>/release-dist`, once per test process.
fn release() -> &'static Release {
    static R: OnceLock<Release> = OnceLock::new();
    R.get_or_init(|| {
        let dist = build_dir().join("release-dist");
        let mut cmd = Command::new("bash");
        cmd.arg(workspace_dir().join("scripts/release.sh"))
            .arg("--out")
            .arg(&dist)
            .env("CARGO_TARGET_DIR", target_dir())
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        let started = Instant::now();
        let o = checked("scripts/release.sh", cmd, BUILD_TIMEOUT);
        eprintln!(
            "scripts/release.sh: {:.1} s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            dist.display().to_string()
        );
        Release {
            dist,
            log: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    })
}

/// The bullseye root (made if need be: scripts/install-deps.sh makes it).
fn bullseye_root() -> &'static PathBuf {
    static R: OnceLock<PathBuf> = OnceLock::new();
    R.get_or_init(|| {
        let mut cmd = Command::new("bash");
        cmd.arg(workspace_dir().join("scripts/bullseye-root.sh"))
            .arg("make");
        let o = checked("scripts/bullseye-root.sh make", cmd, BUILD_TIMEOUT);
        let out = String::from_utf8_lossy(&o.stdout);
        PathBuf::from(out.lines().last().expect("the root's path"))
    })
}

/// `CMD` run inside the bullseye root, with `dir` bind-mounted at its path
/// and nothing of this process's environment.
fn in_bullseye(dir: &Path, cmd: &[&str]) -> Output {
    bullseye_root();
    let mut c = Command::new("bash");
    c.arg(workspace_dir().join("scripts/bullseye-root.sh"))
        .args(["run", "--bind"])
        .arg(dir)
        .arg("--")
        .args(cmd);
    run_until(&mut c, RUN_TIMEOUT, Overrun::Kill).output
}

fn text(o: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The commit `--version` names: HEAD, "-modified" for a tree with changes.
fn commit() -> String {
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(workspace_dir())
            .args(args)
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]);
    if git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        head
    } else {
        format!("{head}-modified")
    }
}

/// The newest `GLIBC_2.x` version `file` needs (`readelf -V`'s version needs).
fn newest_glibc(file: &Path) -> (u32, u32) {
    let o = Command::new("readelf")
        .args(["-V", "-W"])
        .arg(file)
        .output()
        .expect("readelf (binutils)");
    assert!(
        o.status.success(),
        "readelf -V {}: {}",
        file.display(),
        text(&o)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let needs = out
        .split("Version needs section")
        .nth(1)
        .unwrap_or_else(|| panic!("{}: no version needs\n{out}", file.display()));
    needs
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("GLIBC_2."))
        .map(|v| {
            let mut p = v.split('.').map(|n| n.parse::<u32>().unwrap_or(0));
            (2, p.next().unwrap_or(0))
        })
        .max()
        .unwrap_or_else(|| panic!("{}: no GLIBC_ version\n{out}", file.display()))
}

/// Lines of `python3 -c SCRIPT ARGS` on the host.
fn python(script: &str, args: &[&Path]) -> Vec<String> {
    let o = Command::new("python3")
        .args(["-c", script])
        .args(args)
        .output()
        .expect("python3");
    assert!(o.status.success(), "python3 -c {script}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `xpu-asm-run` with only `cache` as XDG_CACHE_HOME and none of an outer
/// run's or a test's settings.
fn xpu_asm_run_cmd(bin: &Path, cache: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_remove("LD_PRELOAD")
        .env_remove(OUT_ENV)
        .env_remove(OWNED_ENV)
        .env_remove("XPU_ASM_INTERPOSER")
        .env("XDG_CACHE_HOME", cache);
    for (name, _) in DUMP_ENV {
        cmd.env_remove(name);
    }
    for (name, _) in neo_env() {
        cmd.env_remove(name);
    }
    cmd
}

/// Name -> (launches, appended, status) of a report's kernels.
fn report_kernels(report: &Value) -> BTreeMap<String, (Option<u64>, Option<u64>, String)> {
    report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or("?").to_string(),
                (
                    k["launches"].as_u64(),
                    k["appended"].as_u64(),
                    k["status"].as_str().unwrap_or("?").to_string(),
                ),
            )
        })
        .collect()
}

/// The version line this build's `--version` prints.
fn version_line() -> String {
    format!("xpu-asm-run {VERSION} (commit {})", commit())
}

#[test]
fn release_writes_the_binary_a_manylinux_2_28_wheel_and_a_tarball_for_glibc_2_28() {
    let r = release();
    let mut names: Vec<String> = std::fs::read_dir(&r.dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want = vec![
        "SHA256SUMS".to_string(),
        tarball_name(),
        format!("xpu-asm-{VERSION}.tar.gz"),
        "xpu-asm-run".to_string(),
        wheel_name(),
    ];
    want.sort();
    assert_eq!(names, want, "{}", r.log);
    let bin = r.dist.join("xpu-asm-run");

    // The binary and the interposer it writes out: no glibc newer than 2.28.
    let dir = temp_dir("release");
    let cache = dir.path().join("cache");
    let out = dir.path().join("out");
    let mut cmd = xpu_asm_run_cmd(&bin, &cache);
    cmd.arg("-o").arg(&out).args(["--", "true"]);
    let run = run(cmd, &out);
    run.assert_status(0);
    let lib = std::fs::read_dir(cache.join("xpu-asm"))
        .unwrap()
        .map(|e| e.unwrap().path().join("libxpu_asm_interposer.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no interposer written\n{}", run.ctx()));
    for f in [&bin, &lib] {
        let v = newest_glibc(f);
        eprintln!(
            "{}: newest glibc symbol version GLIBC_{}.{}",
            f.display(),
            v.0,
            v.1
        );
        assert!(
            v <= GLIBC_MAX,
            "{} needs GLIBC_{}.{}",
            f.display(),
            v.0,
            v.1
        );
    }
    for name in ["xpu-asm-run", "the interposer it carries"] {
        assert!(
            r.log.contains(&format!(
                "release.sh: {name}: newest glibc symbol version GLIBC_2."
            )),
            "{}",
            r.log
        );
    }

    // The wheel: the binary alone, the same bytes, tagged for glibc 2.28,
    // which auditwheel confirms.
    let wheel = r.dist.join(wheel_name());
    let listed = python(
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
         print('\\n'.join(n for n in sorted(z.namelist()) if '/sboms/' not in n))\n\
         print(z.read('xpu_asm-%s.dist-info/WHEEL' % sys.argv[2]).decode())",
        &[&wheel, Path::new(VERSION)],
    );
    let files: Vec<&str> = listed.iter().take(4).map(String::as_str).collect();
    assert_eq!(
        files,
        [
            format!("xpu_asm-{VERSION}.data/scripts/xpu-asm-run"),
            format!("xpu_asm-{VERSION}.dist-info/METADATA"),
            format!("xpu_asm-{VERSION}.dist-info/RECORD"),
            format!("xpu_asm-{VERSION}.dist-info/WHEEL"),
        ],
        "{listed:?}"
    );
    assert!(
        listed.contains(&format!("Tag: py3-none-{PLATFORM}")),
        "{listed:?}"
    );
    let venv = {
        let o = checked(
            "scripts/release-venv.sh",
            {
                let mut c = Command::new("bash");
                c.arg(workspace_dir().join("scripts/release-venv.sh"));
                c
            },
            BUILD_TIMEOUT,
        );
        PathBuf::from(
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .lines()
                .last()
                .unwrap(),
        )
    };
    let mut aw = Command::new(venv.join("bin/auditwheel"));
    aw.arg("show").arg(&wheel);
    let shown = String::from_utf8_lossy(&checked("auditwheel show", aw, RUN_TIMEOUT).stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        shown.contains(&format!(
            "{} is consistent with the following platform tag: \"{PLATFORM}\"",
            wheel_name()
        )),
        "{shown}"
    );

    // The tarball: the binary, the texts, man pages and completions.
    let o = Command::new("tar")
        .arg("tzf")
        .arg(r.dist.join(tarball_name()))
        .output()
        .unwrap();
    let top = format!("xpu-asm-{VERSION}-x86_64-linux-gnu/");
    let mut got: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.strip_prefix(&top).unwrap_or(l).to_string())
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "",
            "CHANGELOG.md",
            "LICENSE",
            "README.md",
            "complete/",
            "complete/_xpu-asm-run",
            "complete/_xpu-asm-run.ps1",
            "complete/xpu-asm-run.bash",
            "complete/xpu-asm-run.elv",
            "complete/xpu-asm-run.fish",
            "doc/",
            "doc/xpu-asm-run-collect.1",
            "doc/xpu-asm-run-diff.1",
            "doc/xpu-asm-run-merge.1",
            "doc/xpu-asm-run-port.1",
            "doc/xpu-asm-run-show.1",
            "doc/xpu-asm-run.1",
            "xpu-asm-run",
        ]
    );
    let x = dir.path().join("x");
    std::fs::create_dir(&x).unwrap();
    let o = Command::new("tar")
        .arg("xzf")
        .arg(r.dist.join(tarball_name()))
        .arg("-C")
        .arg(&x)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let unpacked = x.join(&top);
    assert!(std::fs::read(unpacked.join("xpu-asm-run")).unwrap() == std::fs::read(&bin).unwrap());
    let wheel_bin = python(
        "import sys, zipfile, hashlib\nz = zipfile.ZipFile(sys.argv[1])\n\
         print(hashlib.sha256(z.read('xpu_asm-%s.data/scripts/xpu-asm-run' % sys.argv[2])).hexdigest())",
        &[&wheel, Path::new(VERSION)],
    );
    assert_eq!(wheel_bin, [sha256_file(&bin)]);
    let man = std::fs::read_to_string(unpacked.join("doc/xpu-asm-run.1")).unwrap();
    assert!(man.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{man}");
    assert!(
        man.contains(&format!(
            "xpu-asm-run {}",
            xpu_asm_collector::commands::VERSION
        )),
        "{man}"
    );
    // The bash completion completes a subcommand and an option.
    let bash = Command::new("bash")
        .arg("-c")
        .arg(
            "source \"$1\"\nfor w in co --em; do COMP_WORDS=(xpu-asm-run $w); COMP_CWORD=1; \
             _xpu-asm-run xpu-asm-run $w xpu-asm-run; echo \"${COMPREPLY[*]}\"; done",
        )
        .arg("bash")
        .arg(unpacked.join("complete/xpu-asm-run.bash"))
        .output()
        .unwrap();
    assert_eq!(
        stdout_lines(&bash),
        ["collect", "--emulate"],
        "{}",
        text(&bash)
    );

    // --version names the version and the commit.
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&v.stdout),
        format!("{}\n", version_line())
    );
}

#[test]
fn on_debian_11_the_release_binary_runs_collects_a_host_capture_and_keeps_exit_statuses() {
    let r = release();
    let dir = temp_dir("release-bullseye");
    let root = dir.path();
    let bin = root.join("bin").join("xpu-asm-run");
    std::fs::create_dir(root.join("bin")).unwrap();
    std::fs::copy(r.dist.join("xpu-asm-run"), &bin).unwrap();

    // The root is what it says: Debian 11, glibc 2.31, no Rust, no compiler.
    let o = in_bullseye(
        root,
        &[
            "sh",
            "-c",
            "cat /etc/debian_version; ldd --version | head -n1; \
             for t in cc gcc clang cargo rustc; do command -v $t || echo \"no $t\"; done",
        ],
    );
    let lines = stdout_lines(&o);
    assert!(
        lines.first().is_some_and(|l| l.starts_with("11.")),
        "{}",
        text(&o)
    );
    assert!(
        lines
            .get(1)
            .is_some_and(|l| l.starts_with("ldd (Debian GLIBC 2.31-") && l.ends_with(") 2.31")),
        "{}",
        text(&o)
    );
    assert_eq!(
        lines[2..],
        ["no cc", "no gcc", "no clang", "no cargo", "no rustc",],
        "{}",
        text(&o)
    );

    let b = bin.display().to_string();
    let o = in_bullseye(root, &[&b, "--version"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{}\n", version_line())
    );

    // A capture made on the host (its C workload on the Level Zero stack,
    // which bullseye does not have), collected there.
    let cap = root.join("cap");
    let mut cmd = xpu_asm_run_cmd(&bin, &root.join("host-cache"));
    cmd.args(["--emulate", "pvc", "-o"])
        .arg(&cap)
        .arg("--")
        .arg(workload())
        .args(["--via", "ddi", "--module"])
        .arg(format!("a={}", spirv("a").display()))
        .args(STEPS);
    let host = run(cmd, &cap);
    host.assert_status(0);
    let host_report = host.report();
    let want: BTreeMap<String, (Option<u64>, Option<u64>, String)> = [
        (SCALE.to_string(), (Some(5), Some(5), "matched".to_string())),
        (
            SCALE_V2.to_string(),
            (Some(3), Some(1), "matched".to_string()),
        ),
    ]
    .into();
    assert_eq!(report_kernels(&host_report), want, "{}", host.ctx());
    let c = cap.display().to_string();
    let o = in_bullseye(root, &[&b, "collect", &c, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let collected: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("collect --json printed no JSON ({e})\n{}", text(&o)));
    assert_eq!(report_kernels(&collected), want, "{}", text(&o));
    // The same ISA files and header figures as on the host.
    let figures = |rep: &Value| -> Vec<String> {
        rep["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| {
                format!(
                    "{} {} {} {} {} {} {}",
                    k["name"],
                    k["status"],
                    k["asm"],
                    k["simd"],
                    k["grf"],
                    k["instructions"],
                    k["spill_bytes"]
                )
            })
            .collect()
    };
    assert_eq!(figures(&collected), figures(&host_report), "{}", text(&o));

    // Programs under it exit as they do without it (the interposer loaded).
    let probe = "grep -m1 -o libxpu_asm_interposer.so /proc/self/maps; exit 7";
    let o = in_bullseye(root, &["sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let cache = root.join("cache").display().to_string();
    let out = root.join("out-exit").display().to_string();
    let o = in_bullseye(
        root,
        &[
            "env",
            &format!("XDG_CACHE_HOME={cache}"),
            &b,
            "-q",
            "-o",
            &out,
            "--",
            "sh",
            "-c",
            probe,
        ],
    );
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    assert_eq!(
        stdout_lines(&o),
        ["libxpu_asm_interposer.so"],
        "{}",
        text(&o)
    );
    let o = in_bullseye(root, &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(
        (o.status.code(), o.status.signal()),
        (Some(143), None),
        "{}",
        text(&o)
    );
    let out = root.join("out-signal").display().to_string();
    let o = in_bullseye(
        root,
        &[
            "env",
            &format!("XDG_CACHE_HOME={cache}"),
            &b,
            "-q",
            "-o",
            &out,
            "--",
            "sh",
            "-c",
            "kill -TERM $$",
        ],
    );
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
}

#[test]
fn on_debian_11_the_wheel_installs_with_pip_and_its_xpu_asm_run_works() {
    let r = release();
    let dir = temp_dir("release-wheel");
    let root = dir.path();
    let wheel = root.join(wheel_name());
    std::fs::copy(r.dist.join(wheel_name()), &wheel).unwrap();
    let venv = root.join("venv").display().to_string();
    let script = format!(
        "set -e\npython3 -m venv {venv}\n{venv}/bin/pip install -q --no-index {}\n\
         {venv}/bin/xpu-asm-run --version\n\
         XDG_CACHE_HOME={root}/cache {venv}/bin/xpu-asm-run -q -o {root}/out -- sh -c \
         'grep -m1 -o libxpu_asm_interposer.so /proc/self/maps; exit 3' || echo \"exit $?\"",
        wheel.display(),
        root = root.display()
    );
    let o = in_bullseye(root, &["sh", "-c", &script]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        stdout_lines(&o),
        [
            version_line(),
            "libxpu_asm_interposer.so".to_string(),
            "exit 3".to_string()
        ],
        "{}",
        text(&o)
    );
}

/// bullseye's own OpenCL driver (NEO 20.44, IGC 1.0.5353) in no-hardware
/// mode, as Tiger Lake, with NEO's keys given directly: `--emulate tgllp`
/// sets `HardwareInfoOverride=1x4x8`, on which NEO 20.44 aborts, with or
/// without xpu-asm-run. The launches are counted exactly; the ISA is not
/// found: that IGC writes its dumps beside the folder it is given (it takes
/// the folder as a prefix of its files' names), and that IGA (0.20) cannot
/// disassemble for TGLLP.
#[test]
fn on_debian_11_an_opencl_program_on_bullseyes_own_driver_has_its_launches_counted() {
    let r = release();
    let dir = temp_dir("release-opencl");
    let root = dir.path();
    let bin = root.join("xpu-asm-run");
    std::fs::copy(r.dist.join("xpu-asm-run"), &bin).unwrap();
    // The OpenCL workload for glibc 2.28, by zig (bullseye has no
    // compiler), with the host's OpenCL headers alone.
    let venv = {
        let mut c = Command::new("bash");
        c.arg(workspace_dir().join("scripts/release-venv.sh"));
        let o = checked("scripts/release-venv.sh", c, BUILD_TIMEOUT);
        PathBuf::from(
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .lines()
                .last()
                .unwrap(),
        )
    };
    let inc = root.join("include");
    std::fs::create_dir(&inc).unwrap();
    let o = Command::new("cp")
        .args(["-r", "/usr/include/CL"])
        .arg(&inc)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let prog = root.join("opencl");
    let mut zig = Command::new(venv.join("bin/python"));
    zig.args([
        "-m",
        "ziglang",
        "cc",
        "-target",
        "x86_64-linux-gnu.2.28",
        "-std=c11",
        "-O1",
    ])
    .arg("-isystem")
    .arg(&inc)
    .arg(workload_src_dir().join("opencl.c"))
    .arg("-o")
    .arg(&prog)
    .arg("-ldl")
    .env("ZIG_GLOBAL_CACHE_DIR", target_dir().join("zig-cache"));
    checked("zig cc opencl.c", zig, BUILD_TIMEOUT);
    std::fs::copy(
        workload_src_dir().join("kernels_cl.cl"),
        root.join("kernels_cl.cl"),
    )
    .unwrap();
    let args = [
        "./opencl",
        "--via",
        "dlsym",
        "--program",
        "p=source:kernels_cl.cl",
        "nd:p:cl_scale:3",
        "task:p:cl_scale_twice:2",
    ];
    let script = format!(
        "cd {root}\nexport NEOReadDebugKeys=1 SetCommandStreamReceiver=1 ProductFamilyOverride=tgllp \
         EnableTimestampWaitForQueues=0 XDG_CACHE_HOME={root}/cache\n\
         {args}; echo \"plain: $?\"\n./xpu-asm-run -q -o cap -- {args}; echo \"under: $?\"\n\
         HardwareInfoOverride=1x4x8 {args} 2>/dev/null; echo \"plain, 1x4x8: $?\"\n\
         ./xpu-asm-run -q --emulate tgllp -o cap-emulate -- {args} 2>/dev/null; echo \"--emulate: $?\"",
        root = root.display(),
        args = args.join(" ")
    );
    let o = in_bullseye(root, &["sh", "-c", &script]);
    let steps = [
        "ready",
        "step nd:p:cl_scale:3 done",
        "step task:p:cl_scale_twice:2 done",
    ];
    let mut want: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
    want.push("plain: 0".into());
    want.extend(steps.iter().map(|s| s.to_string()));
    want.push("under: 0".into());
    want.push("plain, 1x4x8: 134".into());
    want.push("--emulate: 134".into());
    assert_eq!(stdout_lines(&o), want, "{}", text(&o));
    let report: Value =
        serde_json::from_slice(&std::fs::read(root.join("cap/report.json")).unwrap()).unwrap();
    let none = "iga-failed".to_string();
    let want: BTreeMap<String, (Option<u64>, Option<u64>, String)> = [
        ("cl_scale".to_string(), (Some(3), Some(3), none.clone())),
        ("cl_scale_twice".to_string(), (Some(2), Some(2), none)),
    ]
    .into();
    assert_eq!(report_kernels(&report), want, "{report:#}");
    for k in report["kernels"].as_array().unwrap() {
        let why = k["reason"].as_str().unwrap_or_default();
        assert!(
            why.contains("IGA 0.20 (libiga64.so.1) cannot disassemble for TGLLP"),
            "{k:#}"
        );
    }
}

/// The Spack recipe (packaging/spack/xpu-asm/package.py) is Python that
/// compiles, names this version, and pins the source tarball of the commit
/// it names: scripts/source-tarball.sh of that commit has the recipe's
/// sha256, made twice the same bytes. (scripts/spack-check.sh builds it with
/// Spack: a release build, not run here.)
#[test]
fn the_spack_recipe_pins_the_source_tarball_of_its_commit() {
    let root = workspace_dir();
    let recipe = root.join("packaging/spack/xpu-asm/package.py");
    let source = std::fs::read_to_string(&recipe).unwrap();
    let py = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(&recipe)
        .output()
        .unwrap();
    assert!(py.status.success(), "{}", text(&py));
    let commit = source
        .lines()
        .find_map(|l| l.trim().strip_prefix("# commit "))
        .unwrap_or_else(|| panic!("no '# commit HASH' line in {}", recipe.display()));
    let version_lines: Vec<&str> = source
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("version("))
        .collect();
    let sha = |dir: &Path| {
        let mut cmd = Command::new("bash");
        cmd.arg(root.join("scripts/source-tarball.sh"))
            .arg("--out")
            .arg(dir)
            .arg(commit);
        let o = checked("scripts/source-tarball.sh", cmd, RUN_TIMEOUT);
        let tarball = dir.join(format!("xpu-asm-{VERSION}.tar.gz"));
        assert_eq!(
            stdout_lines(&o),
            [format!("{}  {}", sha256_file(&tarball), tarball.display())]
        );
        sha256_file(&tarball)
    };
    let dir = temp_dir("recipe");
    let first = sha(&dir.path().join("a"));
    assert_eq!(first, sha(&dir.path().join("b")));
    assert_eq!(
        version_lines,
        [format!("version(\"{VERSION}\", sha256=\"{first}\")")],
        "{}",
        recipe.display()
    );
}
