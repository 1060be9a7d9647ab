//! The `xpu-asm-run` binary: exit statuses, signals, the output folder,
//! finding the interposer. The interposer itself is not needed here: a
//! harmless library stands in for it (real end-to-end runs are in tests/).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_xpu-asm-run");

/// A library that is safe to preload: the C library this test runs with.
fn stand_in_interposer() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
        .map(PathBuf::from)
        .expect("libc is mapped")
}

fn cli_command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env("XPU_ASM_INTERPOSER", stand_in_interposer())
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    c
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn out_arg(dir: &Path) -> String {
    dir.join("cap").display().to_string()
}

#[test]
fn exit_code_is_the_commands() {
    let t = tempfile::tempdir().unwrap();
    let out = out_arg(t.path());
    let o = cli_command(&[
        "-o",
        &out,
        "--",
        "sh",
        "-c",
        "echo hello; echo err >&2; exit 3",
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("hello\n"), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("err\n"),
        "{}",
        show(&o)
    );
    assert!(
        stdout.contains("the command exited with code 3"),
        "{}",
        show(&o)
    );
    let j = common::report_json(Path::new(&out));
    assert_eq!(j["exit"], serde_json::json!({"code": 3}));
    assert_eq!(
        j["command"],
        serde_json::json!(["sh", "-c", "echo hello; echo err >&2; exit 3"])
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out).join("run.json")).unwrap()).unwrap();
    assert_eq!(run["state"], "ended");
    assert!(Path::new(&out).join("records").is_dir() && Path::new(&out).join("dumps").is_dir());
}

#[test]
fn a_crash_is_128_plus_the_signal_and_still_reported() {
    let t = tempfile::tempdir().unwrap();
    let out = out_arg(t.path());
    let o = cli_command(&["-o", &out, "--json", "--", "sh", "-c", "kill -SEGV $$"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(139), "{}", show(&o));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed["exit"], serde_json::json!({"signal": 11}));
    assert_eq!(common::report_json(Path::new(&out)), printed);
}

#[test]
fn a_command_that_cannot_start_is_127() {
    let t = tempfile::tempdir().unwrap();
    let out = out_arg(t.path());
    let o = cli_command(&["-o", &out, "--", "/no/such/command-xyz"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot run /no/such/command-xyz: command not found"),
        "{}",
        show(&o)
    );
    assert!(
        !Path::new(&out).exists(),
        "a folder made for nothing is removed"
    );
    let o = cli_command(&["-o", &format!("{out}2"), "--", "/"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126), "{}", show(&o));
}

/// `run.json`'s interposer of the capture `out_arg(dir)`.
fn preloaded(dir: &Path) -> String {
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cap").join("run.json")).unwrap()).unwrap();
    run["interposer"].as_str().unwrap().to_string()
}

#[test]
fn a_wrong_interposer_path_is_an_error_and_the_binary_alone_uses_its_own() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin/xpu-asm-run");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(BIN, &bin).unwrap();
    let cache = t.path().join("cache");
    let copied = |args: &[&str], interposer: Option<&str>| {
        let mut c = Command::new(&bin);
        c.args(args)
            .env_remove("XPU_ASM_INTERPOSER")
            .env("XDG_CACHE_HOME", &cache);
        if let Some(i) = interposer {
            c.env("XPU_ASM_INTERPOSER", i);
        }
        c
    };
    // A copied executable can be briefly "busy" (ETXTBSY) while another test
    // thread forks with the copy's write descriptor still open: retry.
    let out = out_arg(t.path());
    let o = (0..100)
        .find_map(
            |_| match copied(&["-o", &out, "--", "true"], Some("/nope/env.so")).output() {
                Err(e) if e.raw_os_error() == Some(libc_etxtbsy()) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    None
                }
                r => Some(r.unwrap()),
            },
        )
        .expect("the copied xpu-asm-run stayed busy (ETXTBSY) for 2 s");
    // A path given is final: an error naming it, not another library.
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nope/env.so ($XPU_ASM_INTERPOSER)"), "{err}");
    assert!(
        err.contains(
            "give the path of a libxpu_asm_interposer.so with --interposer PATH or \
             XPU_ASM_INTERPOSER=PATH, or leave both unset: xpu-asm-run carries its own"
        ),
        "{err}"
    );
    assert!(
        !t.path().join("cap").exists() && !cache.exists(),
        "nothing is created before the interposer is found"
    );
    let o = copied(
        &["--interposer", "/nope/lib.so", "-o", &out, "--", "true"],
        None,
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nope/lib.so (--interposer)"));

    // Alone, it runs with the one it carries, written into the cache.
    let o = copied(&["-q", "-o", &out, "--", "true"], None)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let written = preloaded(t.path());
    let folder = Path::new(&written).parent().unwrap();
    assert_eq!(
        folder.parent().unwrap(),
        std::fs::canonicalize(&cache).unwrap().join("xpu-asm")
    );
    assert!(written.ends_with("/libxpu_asm_interposer.so"), "{written}");

    // A library next to the executable wins over the one it carries.
    let dir = t.path().join("bin");
    std::fs::copy(stand_in_interposer(), dir.join("libxpu_asm_interposer.so")).unwrap();
    let o = copied(&["-q", "--force", "-o", &out, "--", "true"], None)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(
        preloaded(t.path()),
        std::fs::canonicalize(dir.join("libxpu_asm_interposer.so"))
            .unwrap()
            .display()
            .to_string()
    );
}

#[test]
fn the_interposer_goes_in_front_of_ld_preload() {
    let t = tempfile::tempdir().unwrap();
    let out = out_arg(t.path());
    let lib = stand_in_interposer();
    let o = cli_command(&[
        "-q",
        "-o",
        &out,
        "--",
        "sh",
        "-c",
        "echo \"$LD_PRELOAD|$XPU_ASM_OUT\"",
    ])
    .env("LD_PRELOAD", "")
    .output()
    .unwrap();
    let canon_lib = std::fs::canonicalize(&lib).unwrap();
    let canon_out = std::fs::canonicalize(&out).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("{}|{}", canon_lib.display(), canon_out.display()),
        "{}",
        show(&o)
    );
    let o = cli_command(&[
        "-q",
        "-o",
        &format!("{out}2"),
        "--emulate",
        "pvc",
        "--",
        "sh",
        "-c",
        "echo $ProductFamilyOverride $SetCommandStreamReceiver",
    ])
    .output()
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "pvc 1",
        "{}",
        show(&o)
    );
}

#[test]
fn output_folder_rules() {
    let t = tempfile::tempdir().unwrap();
    // A non-empty folder that is not a capture is refused.
    let other = t.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("precious.txt"), "x").unwrap();
    let o = cli_command(&["-o", other.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an earlier xpu-asm capture"));
    let o = cli_command(&["-o", other.to_str().unwrap(), "--force", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "--force never reuses a foreign folder: {}",
        show(&o)
    );
    assert!(other.join("precious.txt").exists());

    // An earlier capture: refused without --force, replaced with it.
    let cap = t.path().join("cap");
    let o = cli_command(&["-q", "-o", cap.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    std::fs::write(cap.join("notes.txt"), "mine").unwrap();
    let o = cli_command(&["-o", cap.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--force") && err.contains("xpu-asm-run collect"),
        "{err}"
    );
    let o = cli_command(&[
        "-q",
        "-o",
        cap.to_str().unwrap(),
        "--force",
        "--",
        "sh",
        "-c",
        "exit 4",
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", show(&o));
    assert_eq!(
        common::report_json(&cap)["exit"],
        serde_json::json!({"code": 4})
    );
    assert!(cap.join("notes.txt").exists());

    // The default name: ./xpu-asm-<command>-<timestamp>
    let o = cli_command(&["-q", "--", "true"])
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let made: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("xpu-asm-true-"))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0].len(), "xpu-asm-true-".len() + 15, "{made:?}");
}

#[test]
fn collect_subcommand_reports_again_without_running() {
    let t = tempfile::tempdir().unwrap();
    let cap = t.path().join("cap");
    common::pvc_capture(&cap);
    let o = Command::new(BIN)
        .args(["collect", cap.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("vector_add") && stdout.contains("asm/001-vector_add-"),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "no colour off a terminal");
    let o = Command::new(BIN)
        .args([
            "collect",
            "--json",
            "--filter",
            "heavy",
            cap.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["kernels"].as_array().unwrap().len(), 1);
    let o = Command::new(BIN)
        .args(["collect", t.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an xpu-asm capture"));
    let o = Command::new(BIN)
        .args(["collect", "-q", cap.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{}", show(&o));
}

#[test]
fn an_invalid_filter_is_refused_before_running() {
    let t = tempfile::tempdir().unwrap();
    let marker = t.path().join("ran");
    let o = cli_command(&[
        "--filter",
        "(",
        "-o",
        &out_arg(t.path()),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(!marker.exists());
    assert!(!t.path().join("cap").exists());
}

/// Where a newcomer lands: `help` and `help SUBCOMMAND` print the help;
/// a command given without `--` runs nothing and is told to put `--`
/// before it; a capture's file, a folder that is no capture, and the
/// wrong case of a device each get the fix.
#[test]
fn first_steps_get_help_and_the_fix() {
    let run = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    let o = run(&["help"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let long = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        long.contains("Usage: xpu-asm-run [OPTIONS] -- <COMMAND>..."),
        "{long}"
    );
    let o = run(&["help", "show"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Usage: xpu-asm-run show [OPTIONS] <DIR> [KERNEL]"),
        "{text}"
    );

    let t = tempfile::tempdir().unwrap();
    let marker = t.path().join("ran");
    let o = run(&["-o", &out_arg(t.path()), "touch", marker.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let want = format!(
        "To run a command, put `--` before it: xpu-asm-run -o {} -- touch {}",
        out_arg(t.path()),
        marker.display()
    );
    assert!(
        err.contains("unexpected argument 'touch' found") && err.ends_with(&format!("{want}\n")),
        "{err}"
    );
    assert!(!marker.exists() && !t.path().join("cap").exists());
    // A misspelt subcommand: both fixes.
    let o = run(&["shwo", "d", "k"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.ends_with("put `--` before it: xpu-asm-run -- shwo d k\nFor the subcommand show: xpu-asm-run show d k\n"),
        "{err}"
    );
    // With `--` already there, or an option misspelt: no such tip.
    for args in [
        &["--emulate", "../x", "--", "true"][..],
        &["--bogus", "--", "true"][..],
        &["shwo", "d", "k"][..],
    ] {
        let o = cli_command(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let tipped = err.contains("put `--` before it");
        assert_eq!(tipped, args[0] == "shwo", "{args:?}: {}", show(&o));
    }

    let cap = t.path().join("c");
    common::pvc_capture(&cap);
    let o = run(&["collect", "-q", cap.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let file = cap.join("report.json");
    for cmd in ["collect", "show"] {
        let mut args = vec![cmd, file.to_str().unwrap()];
        if cmd == "show" {
            args.push("1");
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        let want = format!(
            "xpu-asm-run: {} is a file, not a capture folder; give the folder that `xpu-asm-run -o DIR` wrote: here {}, which holds it\n",
            file.display(),
            cap.display()
        );
        assert_eq!(String::from_utf8_lossy(&o.stderr), want, "{cmd}");
    }
    // A folder that holds no capture: said so, not "run collect".
    let o = run(&["show", t.path().to_str().unwrap(), "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is not an xpu-asm capture") && !err.contains("xpu-asm-run collect"),
        "{err}"
    );
}

/// The other dead ends of a first hour, each named with what there is:
/// `show DIR 0` (a number is a rank, never a regular expression that finds
/// `vector_add`), a rank past the last, and `diff A B KERNEL` with a
/// kernel in neither (both named); `merge`'s exit statuses.
#[test]
fn dead_ends_name_what_there_is() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    for d in [&a, &b] {
        common::pvc_capture(d);
        let o = Command::new(BIN)
            .args(["collect", "-q"])
            .arg(d)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    }
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let run = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    for rank in ["0", "5"] {
        let o = run(&["show", a_s, rank]);
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "xpu-asm-run: {a_s} has no kernel #{rank}: its kernels are #1 to #4 \
                 (`xpu-asm-run collect {a_s}` lists them)\n"
            ),
            "{}",
            show(&o)
        );
    }
    let o = run(&["diff", a_s, b_s, "nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "xpu-asm-run: no kernel of {a_s} nor of {b_s} is \"nosuch\" (a rank number, an \
             exact or demangled name, or a regular expression); `xpu-asm-run diff {a_s} {b_s} \
             --all` lists them\n"
        )
    );
    // merge: 0, then 1 for an input that is no capture (and OUT taken).
    let m = t.path().join("m");
    let o = run(&["merge", "-q", "-o", m.to_str().unwrap(), a_s, b_s]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let m2 = t.path().join("m2");
    let o = run(&[
        "merge",
        "-q",
        "-o",
        m2.to_str().unwrap(),
        a_s,
        empty.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let o = run(&["merge", "-q", "-o", m.to_str().unwrap(), a_s]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
}

/// Starts `xpu-asm-run -- sh -c SCRIPT`, waits until the script has set its
/// traps (it touches `ready`), sends `sig` to xpu-asm-run alone, and
/// returns the exit status.
fn signal_run(sig: i32, script: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path();
    let ready = t.join("ready");
    let script = script.replace("READY", ready.to_str().unwrap());
    let child = cli_command(&["-q", "-o", &out_arg(t), "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ready.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "command never got ready"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill on the pid of our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
    (child.wait_with_output().unwrap(), dir)
}

#[test]
fn sigterm_and_sigint_go_to_the_command_and_xpu_asm_run_survives_them() {
    let trap = "trap 'exit 7' TERM; trap 'exit 5' INT; touch READY; while :; do sleep 0.05; done";
    let (o, dir) = signal_run(libc::SIGTERM, trap);
    assert_eq!(o.status.code(), Some(7), "{}", show(&o));
    assert_eq!(
        common::report_json(&dir.path().join("cap"))["exit"],
        serde_json::json!({"code": 7})
    );
    let (o, _) = signal_run(libc::SIGINT, trap);
    assert_eq!(o.status.code(), Some(5), "{}", show(&o));
    // A command that does not catch it dies of it: 128 + 15.
    let (o, dir) = signal_run(libc::SIGTERM, "touch READY; while :; do sleep 0.05; done");
    assert_eq!(o.status.code(), Some(143), "{}", show(&o));
    assert_eq!(
        common::report_json(&dir.path().join("cap"))["exit"],
        serde_json::json!({"signal": 15})
    );
}

/// `ETXTBSY` on Linux.
fn libc_etxtbsy() -> i32 {
    26
}
