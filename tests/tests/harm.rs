//! Do no harm: whatever the recorder meets, the workload's exit status,
//! its output and its own files are those of a plain run, and the report's
//! counts are exact or said to be incomplete.
//!
//! Each test runs the real workload twice, plain and under `xpu-asm-run
//! --emulate pvc -q` (which prints nothing of its own on stdout), in the
//! same situation, and compares: the exit status, stdout, and the files the
//! workload wrote, byte for byte. The situations: a workload that closes
//! every descriptor and opens its own file where the recorder's were; a
//! filesystem the workload fills (its own SIGBUS and SIGSEGV handlers
//! installed); a workload at its descriptor limit; the capture folder
//! removed, or made read-only, while the workload runs; a workload that
//! changes its working directory or sets umask 0777; and the fault-
//! injection matrix: each of the recorder's own system calls made to fail
//! with ENOSPC, EIO and EMFILE (`XPU_ASM_FAULTS`), every call of its kind
//! or only the first.
//!
//! Every test has its own staging folder (`XPU_ASM_STAGING`), so that what
//! the recorder keeps in node-local memory is the test's alone. The tests
//! that mount a filesystem of their own (tmpfs) need root, as the rest of
//! the suite's real stack does.

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;
use xpu_asm_tests::*;

// ---------------------------------------------------------------------------
// Support

struct Case {
    _dir: TempDir,
    /// The capture folder (`-o`).
    out: PathBuf,
    /// The workload's working folder, traced run.
    work: PathBuf,
    /// The workload's working folder, plain run.
    plain: PathBuf,
    /// `XPU_ASM_STAGING`.
    staging: PathBuf,
}

fn harm_case(what: &str) -> Case {
    require_stack();
    let dir = temp_dir(what);
    let root = dir.path().to_path_buf();
    let [work, plain, staging] = ["work", "plain", "staging"].map(|d| {
        let p = root.join(d);
        std::fs::create_dir_all(&p).expect("a folder of the test's");
        p
    });
    Case {
        _dir: dir,
        out: root.join("out"),
        work,
        plain,
        staging,
    }
}

/// The workload's command line: `--via ddi`, modules a and b (and more),
/// then `steps`.
fn line(modules: &[(&str, PathBuf)], steps: &[&str]) -> Vec<String> {
    let mut v = vec![
        workload_for("ddi").display().to_string(),
        "--via".into(),
        "ddi".into(),
    ];
    for (name, path) in modules {
        v.push("--module".into());
        v.push(format!("{name}={}", path.display()));
    }
    v.extend(steps.iter().map(|s| s.to_string()));
    v
}

fn ab() -> Vec<(&'static str, PathBuf)> {
    vec![("a", spirv("a")), ("b", spirv("b"))]
}

/// The plain run: the workload alone, with NEO's no-hardware keys.
fn plain(c: &Case, cmd: &[String]) -> Command {
    let mut p = Command::new(&cmd[0]);
    p.args(&cmd[1..]).current_dir(&c.plain);
    hermetic(&mut p);
    p.envs(neo_env());
    p
}

/// The traced run: `xpu-asm-run --emulate pvc -q [opts] -o OUT -- cmd`.
fn traced_command(c: &Case, opts: &[&str], cmd: &[String]) -> Command {
    let mut t = Command::new(xpu_asm_run());
    t.args(["--emulate", "pvc", "-q"])
        .args(opts)
        .arg("-o")
        .arg(&c.out)
        .arg("--")
        .args(cmd)
        .current_dir(&c.work);
    hermetic(&mut t);
    t.env(xpu_asm_tests::record::STAGING_ENV, &c.staging);
    t
}

/// `(exit code, signal)`.
fn status(o: &Output) -> (Option<i32>, Option<i32>) {
    (o.status.code(), o.status.signal())
}

/// How a run ended as a shell says it: its code, or 128 + the signal
/// (xpu-asm-run exits so when its command dies of a signal).
fn ended(o: &Output) -> i32 {
    match (o.status.code(), o.status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => -1,
    }
}

/// Both runs: the same status and stdout (the traced run's stdout is the
/// workload's, then with `--json` the report); returns the traced run's
/// report, from stdout or `report.json`.
fn compare_runs(c: &Case, plain: Output, traced: Output, shown: &str) -> Value {
    let ctx = || {
        format!(
            "on {}\n{}\nplain run's stdout:\n{}",
            stack_info(),
            describe(shown, &traced, &c.out),
            String::from_utf8_lossy(&plain.stdout)
        )
    };
    assert_eq!(status(&traced).1, None, "xpu-asm-run died\n{}", ctx());
    assert_eq!(
        ended(&traced),
        ended(&plain),
        "exit status differs\n{}",
        ctx()
    );
    let (out, theirs) = (without_pids(&traced.stdout), without_pids(&plain.stdout));
    assert!(
        out.starts_with(&theirs),
        "the workload's stdout differs\n{}",
        ctx()
    );
    let rest = &out[theirs.len()..];
    match rest.iter().any(|b| !b.is_ascii_whitespace()) {
        true => serde_json::from_slice(rest)
            .unwrap_or_else(|e| panic!("the report on stdout is not JSON: {e}\n{}", ctx())),
        false => {
            let text = std::fs::read_to_string(c.out.join("report.json"))
                .unwrap_or_else(|e| panic!("no report.json: {e}\n{}", ctx()));
            serde_json::from_str(&text).expect("report.json is JSON")
        }
    }
}

/// Runs both; see [`compare_runs`].
fn both(c: &Case, opts: &[&str], cmd: &[String]) -> Value {
    let p = run_with_timeout(&mut plain(c, cmd));
    let mut t = traced_command(c, opts, cmd);
    let shown = shell_words(&t);
    let t = run_with_timeout(&mut t);
    compare_runs(c, p, t, &shown)
}

/// A kernel as the tests name it: its name and its module's letter.
type Expected = BTreeMap<(String, String), u64>;

fn expect(pairs: &[(&str, &str, u64)]) -> Expected {
    pairs
        .iter()
        .map(|(m, k, n)| ((m.to_string(), k.to_string()), *n))
        .collect()
}

/// The module letter of each SPIR-V's SHA-256.
fn letters(modules: &[(&str, PathBuf)]) -> BTreeMap<String, String> {
    modules
        .iter()
        .map(|(l, p)| (sha256_file(p), l.to_string()))
        .collect()
}

/// `(launches, counts_incomplete)` of each launched kernel of the report.
fn launched(r: &Value, modules: &[(&str, PathBuf)]) -> BTreeMap<(String, String), (u64, bool)> {
    let letters = letters(modules);
    r["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["status"] != "not-launched")
        .map(|k| {
            let sha = k["module_sha256"].as_str().unwrap_or_default();
            let m = letters
                .get(sha)
                .cloned()
                .unwrap_or_else(|| format!("?{sha}"));
            let name = k["name"].as_str().expect("name").to_string();
            let n = k["launches"].as_u64().expect("launches");
            (
                (m, name),
                (n, k["counts_incomplete"].as_bool().unwrap_or(false)),
            )
        })
        .collect()
}

/// Whether the report's counts are exact, or said to be incomplete where
/// they are not: `Err` says how they are neither.
fn exact_or_said(r: &Value, modules: &[(&str, PathBuf)], want: &Expected) -> Result<(), String> {
    let got = launched(r, modules);
    let said = r["counts_incomplete"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    for (k, (n, incomplete)) in &got {
        match want.get(k) {
            None => return Err(format!("a kernel that was not launched: {k:?} ({n})")),
            Some(w) if n == w => {}
            Some(w) if *incomplete && n < w => {}
            Some(w) => {
                return Err(format!(
                    "{k:?}: {n} launches, {w} made, not said to be incomplete"
                ))
            }
        }
    }
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    if !missing.is_empty() && !said {
        return Err(format!(
            "kernels missing, the report says nothing: {missing:?}"
        ));
    }
    Ok(())
}

/// The report's counts are exact: every kernel, and nothing said missing.
fn assert_exact(r: &Value, modules: &[(&str, PathBuf)], want: &Expected) {
    let got: Expected = launched(r, modules)
        .into_iter()
        .map(|(k, (n, _))| (k, n))
        .collect();
    assert_eq!(
        &got,
        want,
        "on {}: counts\n{}",
        stack_info(),
        serde_json::to_string_pretty(r).unwrap_or_default()
    );
    assert_eq!(
        r["counts_incomplete"],
        serde_json::json!([]),
        "on {}: counts said incomplete",
        stack_info()
    );
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// A tmpfs of `size` mounted at `at`, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(at).expect("the mount point");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .expect("mount");
        assert!(
            st.success(),
            "cannot mount a tmpfs at {} (the test needs root, as installing the stack does)",
            at.display()
        );
        Mount(at.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The names of the files in `dir`.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// An overlay filesystem at `at` (a filesystem on which a write into a
/// mapped file is not known to be safe, as on NFS, Lustre or btrfs).
fn overlay(c: &Case, at: &Path) -> Mount {
    let [lower, upper, work] = ["lower", "upper", "ovl-work"].map(|d| {
        let p = c.staging.parent().expect("the test's folder").join(d);
        std::fs::create_dir_all(&p).expect("an overlay's folder");
        p
    });
    std::fs::create_dir_all(at).expect("the mount point");
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        lower.display(),
        upper.display(),
        work.display()
    );
    let st = Command::new("mount")
        .args(["-t", "overlay", "overlay", "-o", &opts])
        .arg(at)
        .status()
        .expect("mount");
    assert!(
        st.success(),
        "cannot mount an overlay at {} (needs root)",
        at.display()
    );
    Mount(at.to_path_buf())
}

/// What is left in the user's staging folder (`<XPU_ASM_STAGING>/xpu-asm-<uid>`).
fn staged(c: &Case) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    names_in(&c.staging.join(format!("xpu-asm-{uid}")))
}

// ---------------------------------------------------------------------------
// Descriptors

/// The workload launches, closes every descriptor from 3 up, opens its own
/// file (getting the lowest number, where a recorder's descriptor would
/// have been), writes a line, creates and launches another kernel, writes
/// another line: its file holds its two lines only, and every launch is
/// counted.
#[test]
fn closing_every_descriptor_leaves_the_workloads_file_alone() {
    let c = harm_case("harm-fds");
    let steps = [
        "imm:a:scale:10",
        "closefds",
        "open:user.txt",
        "say:first",
        "imm:a:scale_v2:19",
        "say:second",
    ];
    let r = both(&c, &[], &line(&ab(), &steps));
    let (mine, theirs) = (
        read(&c.work.join("user.txt")),
        read(&c.plain.join("user.txt")),
    );
    assert_eq!(mine, b"first\nsecond\n", "on {}", stack_info());
    assert_eq!(mine, theirs);
    assert_exact(&r, &ab(), &expect(&[("a", SCALE, 10), ("a", SCALE_V2, 19)]));
}

/// The workload opens descriptors until EMFILE (the count is printed and
/// must be the plain run's: the recorder holds none), creates and launches
/// a kernel meanwhile (its events wait), frees them and goes on: every
/// launch counted.
#[test]
fn a_workload_at_its_descriptor_limit_gets_every_descriptor() {
    let c = harm_case("harm-emfile");
    let steps = [
        "imm:a:scale:10",
        "fdfill",
        "imm:a:scale_v2:19",
        "fdfree",
        "imm:b:only_in_b:2",
    ];
    let mut cmd = line(&ab(), &steps);
    // A low limit, as `ulimit -n 64` gives: the shell runs both runs.
    let script = "ulimit -n 64 && exec \"$@\"".to_string();
    cmd.splice(0..0, ["sh".into(), "-c".into(), script, "sh".into()]);
    let r = both(&c, &[], &cmd);
    assert_exact(
        &r,
        &ab(),
        &expect(&[("a", SCALE, 10), ("a", SCALE_V2, 19), ("b", ONLY_IN_B, 2)]),
    );
}

// ---------------------------------------------------------------------------
// Space

/// The workload fills the capture folder's filesystem (a 16 MiB tmpfs),
/// then creates and launches 199 kernels, with SIGBUS and SIGSEGV handlers
/// of its own: it exits 0 as without xpu-asm, every count is exact (the
/// counters' space was reserved when the record began), the 199 kernels
/// are reported without ISA with the reason (no space), and the report,
/// which report.json cannot hold, is printed.
#[test]
fn a_full_filesystem_kills_nothing_and_loses_no_count() {
    let c = harm_case("harm-full");
    let _m1 = Mount::tmpfs(&c.work, "16m");
    let _m2 = Mount::tmpfs(&c.plain, "16m");
    let out = c.work.join("cap");
    let c = Case { out, ..c };
    let modules = vec![("a", spirv("a")), ("m", spirv_with("many", ""))];
    let steps = ["handlers", "imm:a:scale:10", "fill:ckpt", "each:m:many:199"];
    let r = both(&c, &["--json"], &line(&modules, &steps));
    let mut want = vec![("a", SCALE.to_string(), 10u64)];
    want.extend((0..199).map(|i| ("m", format!("many{i}"), i + 1)));
    let want: Expected = want
        .into_iter()
        .map(|(m, k, n)| ((m.to_string(), k), n))
        .collect();
    assert_exact(&r, &modules, &want);
    for k in r["kernels"].as_array().expect("kernels") {
        let name = k["name"].as_str().unwrap_or_default();
        if name.starts_with("many") {
            assert_eq!(k["status"], "no-space", "on {}: {k}", stack_info());
            let why = k["reason"].as_str().unwrap_or_default();
            let why = why.to_lowercase();
            assert!(why.contains("no space"), "on {}: {why}", stack_info());
        }
    }
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("report.json not written"), "{warnings}");
}

/// A process that starts when the filesystem is full (a forked child)
/// keeps its whole record in node-local memory (the staging folder): the
/// report has its launches, exactly, and says where they were kept.
#[test]
fn a_process_started_on_a_full_filesystem_is_counted_from_staging() {
    let c = harm_case("harm-full-child");
    let _m1 = Mount::tmpfs(&c.work, "16m");
    let _m2 = Mount::tmpfs(&c.plain, "16m");
    let out = c.work.join("cap");
    let c = Case { out, ..c };
    let steps = [
        "imm:a:scale:10",
        "fill:ckpt",
        "fork:b:only_in_b:3",
        "imm:a:scale_v2:19",
    ];
    let r = both(&c, &["--json"], &line(&ab(), &steps));
    assert_exact(
        &r,
        &ab(),
        &expect(&[("a", SCALE, 10), ("a", SCALE_V2, 19), ("b", ONLY_IN_B, 3)]),
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("could not be written into the capture"),
        "on {}: {warnings}",
        stack_info()
    );
    // Kept until a collection can write them.
    assert_eq!(staged(&c).len(), 2, "{:?}", staged(&c));
}

/// On a filesystem where a mapped write is not known to be safe (here an
/// overlay; on clusters NFS, Lustre, GPFS), the counters live in
/// node-local memory: written into the capture at exit, and after a
/// kill by xpu-asm-run; every count exact, nothing left in staging.
#[test]
fn counters_on_a_shared_filesystem_live_in_node_local_memory() {
    for end in ["exit", "kill"] {
        let c = harm_case("harm-overlay");
        let _m = overlay(&c, &c.work.join("shared"));
        let c = Case {
            out: c.work.join("shared").join("cap"),
            ..c
        };
        let mut steps = vec!["imm:a:scale:10", "fork:b:only_in_b:3", "imm:a:scale_v2:19"];
        if end == "kill" {
            steps.push("end:kill");
        }
        let r = both(&c, &[], &line(&ab(), &steps));
        assert_exact(
            &r,
            &ab(),
            &expect(&[("a", SCALE, 10), ("a", SCALE_V2, 19), ("b", ONLY_IN_B, 3)]),
        );
        // Each process said its counters were staged (the last word on
        // each chunk: written into the file, at exit or after the kill).
        let recs = records(&c.out);
        assert_eq!(recs.len(), 2, "{end}: {recs:?}");
        for r in &recs {
            let events = String::from_utf8_lossy(&read(&r.events_path)).into_owned();
            assert!(
                events.contains(r#""type":"counts","chunk":0,"place":"staged""#),
                "on {}: {end}: {events}",
                stack_info()
            );
        }
        assert!(staged(&c).is_empty(), "{end}: left: {:?}", staged(&c));
        // The report says where they were kept and why, the filesystem
        // named: per process, and once for the run.
        let why = "the capture's filesystem (overlay) can fail a write into a mapped file for want of space";
        assert_eq!(
            r["counts_kept"],
            serde_json::json!([{"place": "staged", "reason": why, "processes": 2}]),
            "on {}: {end}",
            stack_info()
        );
        for p in r["processes"].as_array().expect("processes") {
            assert_eq!(
                p["counts_kept"],
                serde_json::json!([{"place": "staged", "reason": why, "chunks": [0]}]),
                "on {}: {end}: {p}",
                stack_info()
            );
        }
        let mut t = Command::new(xpu_asm_run());
        t.arg("collect").arg(&c.out);
        hermetic(&mut t);
        t.env(xpu_asm_tests::record::STAGING_ENV, &c.staging);
        let o = run_with_timeout(&mut t);
        let table = String::from_utf8_lossy(&o.stdout);
        assert!(
            table.contains(&format!(
                "counts kept out of the capture during the run:\n  2 processes: in node-local memory (staged): {why}\n"
            )),
            "on {}: {end}: {table}",
            stack_info()
        );
    }
}

// ---------------------------------------------------------------------------
// The capture folder, changed under the workload

/// Runs the traced workload until it waits for `go`, does `change`, then
/// lets it go on; returns its output. The plain run is the same without
/// the change.
fn with_change(c: &Case, cmd: &[String], change: impl FnOnce()) -> (Output, Output, String) {
    let p = run_with_timeout(&mut plain_go(c, cmd));
    let mut t = traced_command(c, &["--json"], cmd);
    let shown = shell_words(&t);
    t.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = t.spawn().expect("xpu-asm-run starts");
    let ready = c.work.join("ready");
    let deadline = std::time::Instant::now() + RUN_TIMEOUT;
    while !ready.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the workload never got ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    change();
    std::fs::write(c.work.join("go"), b"").expect("go");
    let out = child.wait_with_output().expect("xpu-asm-run ends");
    (p, out, shown)
}

/// The plain run of a command that waits for `go`: it is there already.
fn plain_go(c: &Case, cmd: &[String]) -> Command {
    std::fs::write(c.plain.join("go"), b"").expect("go");
    plain(c, cmd)
}

/// The workload's steps around the change: launches before, a file that
/// says it is ready, the wait, launches after (a new kernel, a forked
/// child), its own file written at the end.
fn around_change() -> Vec<String> {
    let steps = [
        "imm:a:scale:10",
        "open:ready",
        "waitfile:go",
        "imm:a:scale_v2:19",
        "fork:b:only_in_b:3",
        "open:user.txt",
        "say:done",
    ];
    line(&ab(), &steps)
}

fn after_change() -> Expected {
    expect(&[("a", SCALE, 10), ("a", SCALE_V2, 19), ("b", ONLY_IN_B, 3)])
}

/// The capture folder is removed while the workload runs: the workload
/// goes on as without xpu-asm, and its processes make their records again
/// from what they hold: every count exact.
#[test]
fn the_capture_folder_removed_while_the_job_runs() {
    let c = harm_case("harm-removed");
    let out = c.out.clone();
    let (p, t, shown) = with_change(&c, &around_change(), || {
        std::fs::remove_dir_all(&out).expect("the capture folder is removed");
    });
    let r = compare_runs(&c, p, t, &shown);
    assert_eq!(read(&c.work.join("user.txt")), b"done\n");
    assert_exact(&r, &ab(), &after_change());
}

/// The capture folder is made read-only while the workload runs (a
/// read-only bind mount over it): new records, dumps and module binaries
/// cannot be written; the workload goes on as without xpu-asm, the forked
/// child's record is kept in the staging folder and read from there, and
/// the report, which the folder cannot take, is printed.
#[test]
fn the_capture_folder_made_read_only_while_the_job_runs() {
    let c = harm_case("harm-readonly");
    let out = c.out.clone();
    let (p, t, shown) = with_change(&c, &around_change(), || {
        let bind = |args: &[&str]| {
            let st = Command::new("mount")
                .args(args)
                .arg(&out)
                .arg(&out)
                .status();
            assert!(st.is_ok_and(|s| s.success()), "mount {args:?} (needs root)");
        };
        bind(&["--bind"]);
        let st = Command::new("mount")
            .args(["-o", "remount,bind,ro"])
            .arg(&out)
            .status();
        assert!(st.is_ok_and(|s| s.success()), "remount read-only");
    });
    let _unmount = Mount(c.out.clone());
    let r = compare_runs(&c, p, t, &shown);
    assert_exact(&r, &ab(), &after_change());
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("report.json not written"), "{warnings}");
}

/// The workload changes its working directory (the capture folder given
/// relative, to a plain `LD_PRELOAD`) and sets umask 0777: the record is
/// where it began, its files have their modes (the workload's own file
/// has the umask's, as without xpu-asm), every count exact.
#[test]
fn a_workload_that_moves_and_sets_umask_0777() {
    let c = harm_case("harm-cwd");
    let steps = [
        "umask:0777",
        "imm:a:scale:10",
        "chdir:..",
        "imm:a:scale_v2:19",
        "open:user.txt",
        "say:done",
    ];
    let cmd = line(&ab(), &steps);
    // Each run starts one folder down and moves up into its own.
    let (work_in, plain_in) = (c.work.join("in"), c.plain.join("in"));
    for d in [&work_in, &plain_in] {
        std::fs::create_dir_all(d).expect("a folder of the test's");
    }
    let p = run_with_timeout(plain(&c, &cmd).current_dir(&plain_in));
    // The plain LD_PRELOAD form, with a relative capture folder.
    let mut t = plain(&c, &cmd);
    t.current_dir(&work_in)
        .env("LD_PRELOAD", interposer())
        .env(xpu_asm_tests::record::OUT_ENV, "cap")
        .env(xpu_asm_tests::record::STAGING_ENV, &c.staging);
    let t = run_with_timeout(&mut t);
    assert_eq!(status(&t), status(&p), "on {}", stack_info());
    assert_eq!(
        without_pids(&t.stdout),
        without_pids(&p.stdout),
        "on {}",
        stack_info()
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
            & 0o777
    };
    let (mine, theirs) = (c.work.join("user.txt"), c.plain.join("user.txt"));
    assert_eq!(
        (mode(&mine), mode(&theirs)),
        (0, 0),
        "the umask's mode, as without xpu-asm"
    );
    assert_eq!(read(&mine), read(&theirs));
    let cap = work_in.join("cap");
    let recs = records(&cap);
    assert_eq!(recs.len(), 1, "on {}: {recs:?}", stack_info());
    for f in names_in(&cap.join("records")) {
        assert_eq!(mode(&cap.join("records").join(&f)), 0o644, "{f}");
    }
    assert_eq!(mode(&cap.join("records")), 0o755);
    let got: BTreeMap<String, u64> = recs[0]
        .kernels
        .values()
        .filter(|k| k.launches > 0)
        .map(|k| (String::from_utf8_lossy(&k.name).into_owned(), k.launches))
        .collect();
    assert_eq!(
        got,
        BTreeMap::from([(SCALE.to_string(), 10), (SCALE_V2.to_string(), 19)]),
        "on {}",
        stack_info()
    );
    assert!(staged(&c).is_empty(), "{:?}", staged(&c));
}

// ---------------------------------------------------------------------------
// Faults injected into the recorder's own system calls

/// The workload of the matrix: two modules, an immediate and a regular
/// list, a forked child, its own file; then a normal end or a kill.
fn matrix_line(end: &str) -> Vec<String> {
    let mut steps = vec![
        "imm:a:scale:10",
        "open:user.txt",
        "say:first",
        "reg:a:common_kernel:4:5",
        "fork:b:only_in_b:3",
        "say:second",
        "imm:b:common_kernel:7",
    ];
    if end == "kill" {
        steps.push("end:kill");
    }
    line(&ab(), &steps)
}

fn matrix_expected() -> Expected {
    expect(&[
        ("a", SCALE, 10),
        ("a", COMMON, 20),
        ("b", ONLY_IN_B, 3),
        ("b", COMMON, 7),
    ])
}

/// Each kind of the recorder's system calls (open, write, pwrite,
/// fallocate, mmap, rename, mkdir) made to fail with ENOSPC, EIO and
/// EMFILE, every call of the kind or only the first, on a workload that
/// exits and one that is killed: every run's exit status, stdout and own
/// file are the plain run's, and its counts are exact or said to be
/// incomplete. The matrix is printed (runs, harmed: 0, exact, said).
#[test]
fn faults_in_the_recorders_own_calls_never_harm_the_workload() {
    let mut runs = 0;
    let mut exact = 0;
    let mut said = 0;
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for end in ["exit", "kill"] {
        let c = harm_case("harm-faults");
        let cmd = matrix_line(end);
        let p = run_with_timeout(&mut plain(&c, &cmd));
        let theirs = read(&c.plain.join("user.txt"));
        for call in [
            "open",
            "write",
            "pwrite",
            "fallocate",
            "mmap",
            "rename",
            "mkdir",
        ] {
            for errno in ["ENOSPC", "EIO", "EMFILE"] {
                for nth in ["", ":1"] {
                    let fault = format!("{call}:{errno}{nth}");
                    let _ = std::fs::remove_dir_all(&c.out);
                    let _ = std::fs::remove_file(c.work.join("user.txt"));
                    let mut t = traced_command(&c, &[], &cmd);
                    t.env("XPU_ASM_FAULTS", &fault);
                    let t = run_with_timeout(&mut t);
                    runs += 1;
                    let same = status(&t).1.is_none()
                        && ended(&t) == ended(&p)
                        && without_pids(&t.stdout) == without_pids(&p.stdout)
                        && std::fs::read(c.work.join("user.txt")).ok().as_ref() == Some(&theirs);
                    if !same {
                        failures.push(format!(
                            "{end} {fault}: harmed: {:?} vs {:?}\n{}",
                            status(&t),
                            status(&p),
                            String::from_utf8_lossy(&t.stderr)
                        ));
                        continue;
                    }
                    let report = std::fs::read_to_string(c.out.join("report.json"))
                        .ok()
                        .and_then(|s| serde_json::from_str::<Value>(&s).ok());
                    let Some(r) = report else {
                        failures.push(format!("{end} {fault}: no report.json"));
                        continue;
                    };
                    match exact_or_said(&r, &ab(), &matrix_expected()) {
                        Ok(()) if r["counts_incomplete"] == serde_json::json!([]) => {
                            exact += 1;
                            table.push(format!("{end:4} {fault:18} unharmed, exact"));
                        }
                        Ok(()) => {
                            said += 1;
                            table.push(format!(
                                "{end:4} {fault:18} unharmed, said incomplete: {}",
                                r["counts_incomplete"]
                            ));
                        }
                        Err(e) => failures.push(format!("{end} {fault}: {e}")),
                    }
                    let left = staged(&c);
                    if !left.is_empty() {
                        failures.push(format!("{end} {fault}: left in staging: {left:?}"));
                        for f in left {
                            let _ = std::fs::remove_file(c.staging.join(f));
                        }
                    }
                }
            }
        }
    }
    eprintln!("{}", table.join("\n"));
    eprintln!(
        "fault matrix on {}: {runs} runs, {} harmed, {exact} with exact counts, {said} said incomplete",
        stack_info(),
        failures.iter().filter(|f| f.contains("harmed")).count()
    );
    assert!(
        failures.is_empty(),
        "on {}:\n{}",
        stack_info(),
        failures.join("\n")
    );
}
