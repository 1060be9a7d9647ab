//! Nobody else's bytes (docs/limits.md, "Security"): on a node shared with
//! another user, nothing that user does makes xpu-asm-run write outside
//! the capture folder, write their bytes into the capture, or change what
//! the report says; at most a warning names what was refused.
//!
//! The user is the one the tests run as; the other user is a second,
//! unprivileged local user made here (`useradd`, [`OTHER`]), who acts
//! through `setpriv`. Each test gives the run a staging filesystem of its
//! own (`XPU_ASM_STAGING`: a folder every user can write, with the sticky
//! bit, as `/dev/shm` is), so that what the other user plants there is
//! this test's alone. Each attack is compared with the same collection
//! without it: the user's files byte-identical, `report.json` identical
//! but for the warning that names what was refused.

use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use tempfile::TempDir;
use xpu_asm_tests::record::{
    counts_header, staging_header, CHUNK_SLOTS, COUNTS_SLOT_LEN, STAGED_COUNTS_MAGIC,
    STAGED_FLAGS_AT, STAGED_HEAD_LEN, STAGING_ENV,
};
use xpu_asm_tests::*;

/// The other user of the node.
const OTHER: &str = "xpuasm-other";

/// The other user's uid, made once (`useradd`) when missing.
fn other_uid() -> u32 {
    static UID: OnceLock<u32> = OnceLock::new();
    *UID.get_or_init(|| {
        let id = || {
            Command::new("id")
                .args(["-u", OTHER])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        };
        if let Some(uid) = id() {
            return uid;
        }
        let made = Command::new("useradd")
            .args(["--system", "--user-group", "--no-create-home", "--shell"])
            .args(["/usr/sbin/nologin", OTHER])
            .output()
            .expect("useradd runs (package passwd)");
        id().unwrap_or_else(|| {
            panic!(
                "on {}: cannot make the second user {OTHER}: {}",
                stack_info(),
                String::from_utf8_lossy(&made.stderr)
            )
        })
    })
}

/// The user the tests run as.
fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").expect("/proc").uid()
}

/// Runs `argv` as the other user; its output.
fn as_other(argv: &[&str]) -> Output {
    let uid = other_uid().to_string();
    Command::new("setpriv")
        .args(["--reuid", &uid, "--regid", &uid, "--clear-groups", "--"])
        .args(argv)
        .output()
        .expect("setpriv runs (package util-linux)")
}

/// Runs `argv` as the other user; it must succeed.
fn other_does(argv: &[&str]) {
    let o = as_other(argv);
    assert!(
        o.status.success(),
        "on {}: as {OTHER}: {argv:?}: {}",
        stack_info(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The other user writes `bytes` at `path` (its file, mode 0644).
fn other_writes(path: &Path, bytes: &[u8]) {
    let tmp = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(tmp.path(), bytes).expect("the bytes");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    other_does(&[
        "cp",
        &tmp.path().display().to_string(),
        &path.display().to_string(),
    ]);
}

struct Case {
    _dir: TempDir,
    root: PathBuf,
    /// The capture folder.
    out: PathBuf,
    /// The staging filesystem (`XPU_ASM_STAGING`): 1777.
    base: PathBuf,
    /// A file of the user's, 0600.
    target: PathBuf,
}

const TARGET: &[u8] = b"the user's own file\n";

fn other_user_case(what: &str) -> Case {
    require_stack();
    other_uid();
    let dir = temp_dir(what);
    let root = dir.path().to_path_buf();
    // The other user may pass through (as through a home folder), not write.
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o711)).unwrap();
    let base = root.join("shm");
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let target = root.join("target.txt");
    std::fs::write(&target, TARGET).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    Case {
        out: root.join("cap"),
        _dir: dir,
        root,
        base,
        target,
    }
}

/// The user's staging folder in the case's staging filesystem.
fn user_staging(c: &Case) -> PathBuf {
    c.base.join(format!("xpu-asm-{}", my_uid()))
}

/// `xpu-asm-run --emulate pvc -q -o OUT [opts] -- workload steps`.
fn traced_workload(c: &Case, out: &Path, opts: &[&str], steps: &[&str]) -> Command {
    let mut t = Command::new(xpu_asm_run());
    t.args(["--emulate", "pvc", "-q"])
        .args(opts)
        .arg("-o")
        .arg(out)
        .arg("--")
        .args(workload_line("ddi", steps))
        .current_dir(&c.root);
    hermetic(&mut t);
    t.env(STAGING_ENV, &c.base);
    t
}

/// `xpu-asm-run collect -q OUT`.
fn collect_staged(c: &Case, out: &Path) -> Output {
    let mut t = Command::new(xpu_asm_run());
    t.args(["collect", "-q"]).arg(out).current_dir(&c.root);
    hermetic(&mut t);
    t.env(STAGING_ENV, &c.base);
    run_with_timeout(&mut t)
}

fn ctx(what: &str, o: &Output) -> String {
    format!(
        "on {}: {what}: status {:?}\nstdout:\n{}\nstderr:\n{}",
        stack_info(),
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The capture of the plain workload (5 launches of `scale`), collected
/// again as it will be after an attack: the report without the attack.
fn captured(c: &Case) -> Value {
    let o = run_with_timeout(&mut traced_workload(c, &c.out, &[], &["imm:a:scale:5"]));
    assert_eq!(o.status.code(), Some(0), "{}", ctx("the run", &o));
    let o = collect_staged(c, &c.out);
    assert_eq!(o.status.code(), Some(0), "{}", ctx("collect", &o));
    let r = report(&c.out);
    assert_eq!(
        launches(&r),
        vec![(SCALE.to_string(), 5)],
        "{}",
        ctx("collect", &o)
    );
    r
}

fn report(out: &Path) -> Value {
    let p = out.join("report.json");
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .expect("report.json is JSON")
}

/// Each launched kernel's name and launches.
fn launches(r: &Value) -> Vec<(String, u64)> {
    r["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["status"] != "not-launched")
        .map(|k| {
            (
                k["name"].as_str().unwrap_or_default().to_string(),
                k["launches"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// `r` without its warnings, and its warnings.
fn split_warnings(mut r: Value) -> (Value, Vec<String>) {
    let w = r["warnings"]
        .take()
        .as_array()
        .map(|a| {
            a.iter()
                .map(|w| w.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    (r, w)
}

/// Collects again after an attack: the report is `before` but for the
/// warnings, which are `before`'s plus one for each of `refused` (a
/// phrase each must hold); the user's file is untouched; nothing new in
/// `records/`.
fn collect_refuses(c: &Case, before: &Value, refused: &[&str]) {
    let records_before = list_files(&c.out.join("records"));
    let o = collect_staged(c, &c.out);
    assert_eq!(o.status.code(), Some(0), "{}", ctx("collect", &o));
    let (after, warnings) = split_warnings(report(&c.out));
    let (before, before_warnings) = split_warnings(before.clone());
    assert_eq!(after, before, "{}", ctx("collect", &o));
    let new: Vec<&String> = warnings
        .iter()
        .filter(|w| !before_warnings.contains(w))
        .collect();
    assert_eq!(
        new.len(),
        refused.len(),
        "on {}: new warnings {new:#?}, want {refused:?}",
        stack_info()
    );
    for want in refused {
        assert!(
            new.iter().any(|w| w.contains(want)),
            "on {}: no warning says {want:?}: {new:#?}",
            stack_info()
        );
    }
    assert_eq!(
        std::fs::read(&c.target).unwrap(),
        TARGET,
        "on {}: the user's file was written",
        stack_info()
    );
    assert_eq!(
        list_files(&c.out.join("records")),
        records_before,
        "on {}: records/ changed",
        stack_info()
    );
}

/// A staged counts file as the interposer writes one, its header naming
/// `events` and `counts`, chunk 0 flagged, its counters `fill`.
fn staged_counts(events: &Path, counts: &Path, pid: u32, fill: u8) -> Vec<u8> {
    let head = staging_header(
        &events.display().to_string(),
        &counts.display().to_string(),
        "vm",
        pid,
        1,
    );
    let mut page = vec![0u8; STAGED_HEAD_LEN];
    page[..8].copy_from_slice(&STAGED_COUNTS_MAGIC);
    page[8..12].copy_from_slice(&(head.len() as u32).to_le_bytes());
    page[16..16 + head.len()].copy_from_slice(&head);
    page[STAGED_FLAGS_AT] = 1;
    let mut chunk = counts_header().to_vec();
    chunk.extend(vec![fill; CHUNK_SLOTS * COUNTS_SLOT_LEN]);
    page.extend(chunk);
    page
}

/// A staged events file: its header, then a forged process event.
fn staged_events(events: &Path, pid: u32) -> Vec<u8> {
    let counts = events.with_extension("counts");
    let mut v = staging_header(
        &events.display().to_string(),
        &counts.display().to_string(),
        "vm",
        pid,
        1,
    );
    v.extend_from_slice(
        format!(
            "\n{{\"record\":\"xpu-asm\",\"version\":2,\"type\":\"process\",\"pid\":{pid},\"ppid\":1,\"host\":\"vm\",\"exe\":\"/forged\",\"cmdline\":[],\"dump_dir\":\"dumps/x\",\"forked_from\":null,\"start_unix_ms\":0,\"start\":1,\"job\":null,\"env\":{{}}}}\n"
        )
        .as_bytes(),
    );
    v
}

// ---------------------------------------------------------------------------
// Staged files

/// The first reproduction: the other user writes a staged counts file whose
/// header names a record of the capture and, as its counts file, a file of
/// the user's; and a staged events file of a process that never ran. In
/// the staging filesystem itself (where they were taken before), nothing
/// of them is read; in a folder named as the user's staging folder that
/// the other user made first, the folder is refused with a warning, and a
/// run refuses to start until the user sets `XPU_ASM_STAGING` elsewhere.
#[test]
fn another_users_staged_files_write_nothing() {
    let c = other_user_case("sec-staged");
    let before = captured(&c);
    let events = c.out.join("records/vm-999998-cafe.events");
    let forged_counts = staged_counts(&events, &c.target, 999998, b'P');
    let forged_events = staged_events(&c.out.join("records/vm-999999-deadbeef.events"), 999999);
    // Where staged files were before: the staging filesystem itself.
    other_writes(
        &c.base.join("xpu-asm-vm-999998-cafe.counts"),
        &forged_counts,
    );
    other_writes(
        &c.base.join("xpu-asm-vm-999999-deadbeef.events"),
        &forged_events,
    );
    collect_refuses(&c, &before, &[]);

    // The user's staging folder, made first by the other user.
    let theirs = user_staging(&c);
    std::fs::remove_dir_all(&theirs).expect("the user's staging folder from the run");
    other_does(&["mkdir", "-m", "0777", &theirs.display().to_string()]);
    other_writes(
        &theirs.join("xpu-asm-vm-999998-cafe.counts"),
        &forged_counts,
    );
    other_writes(
        &theirs.join("xpu-asm-vm-999999-deadbeef.events"),
        &forged_events,
    );
    let owned_by = format!("is owned by uid {}", other_uid());
    collect_refuses(
        &c,
        &before,
        &[&format!(
            "staging folder {} refused: it {owned_by}",
            theirs.display()
        )],
    );

    // A run refuses to start, naming the fix; the command never ran.
    let out2 = c.root.join("cap2");
    let o = run_with_timeout(&mut traced_workload(&c, &out2, &[], &["open:ran.txt"]));
    assert_eq!(o.status.code(), Some(2), "{}", ctx("a run", &o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&owned_by) && err.contains("XPU_ASM_STAGING"),
        "{}",
        ctx("a run", &o)
    );
    assert!(!c.root.join("ran.txt").exists(), "{}", ctx("a run", &o));
    assert_eq!(std::fs::read(&c.target).unwrap(), TARGET);
}

/// In the user's own staging folder, files that are not the user's to
/// give are refused, each named in a warning: a symbolic link, a hard
/// link, a file another user owns; and a file of the user's whose header
/// names another record than its file name (a header never says where to
/// write).
#[test]
fn staged_files_that_are_not_the_users_are_refused() {
    let c = other_user_case("sec-links");
    let before = captured(&c);
    let mine = user_staging(&c);
    assert_eq!(
        std::fs::symlink_metadata(&mine).unwrap().mode() & 0o7777,
        0o700,
        "on {}: the staging folder's mode",
        stack_info()
    );
    let stem = |pid: u32| format!("vm-{pid}-beef");
    let rec = |pid: u32, ext: &str| c.out.join(format!("records/{}.{ext}", stem(pid)));
    let staged = |pid: u32, ext: &str| mine.join(format!("xpu-asm-{}.{ext}", stem(pid)));

    // A link to the other user's file.
    let theirs = c.root.join("theirs.counts");
    std::fs::write(
        &theirs,
        staged_counts(&rec(999901, "events"), &rec(999901, "counts"), 999901, 7),
    )
    .unwrap();
    std::os::unix::fs::chown(&theirs, Some(other_uid()), Some(other_uid())).unwrap();
    std::os::unix::fs::symlink(&theirs, staged(999901, "counts")).unwrap();
    // A hard link to a file of the user's.
    let mine_elsewhere = c.root.join("mine.counts");
    std::fs::write(
        &mine_elsewhere,
        staged_counts(&rec(999902, "events"), &rec(999902, "counts"), 999902, 7),
    )
    .unwrap();
    std::fs::hard_link(&mine_elsewhere, staged(999902, "counts")).unwrap();
    // A file the other user owns.
    std::fs::write(
        staged(999903, "events"),
        staged_events(&rec(999903, "events"), 999903),
    )
    .unwrap();
    std::os::unix::fs::chown(staged(999903, "events"), Some(other_uid()), None).unwrap();
    // The user's own file whose header names the user's file as counts.
    std::fs::write(
        staged(999904, "counts"),
        staged_counts(&rec(999904, "events"), &c.target, 999904, b'P'),
    )
    .unwrap();

    let name = |pid: u32, ext: &str| staged(pid, ext).display().to_string();
    collect_refuses(
        &c,
        &before,
        &[
            &format!(
                "staged file {} refused: it is a symbolic link",
                name(999901, "counts")
            ),
            &format!(
                "staged file {} refused: it has 2 links",
                name(999902, "counts")
            ),
            &format!(
                "staged file {} refused: it is owned by uid {}",
                name(999903, "events"),
                other_uid()
            ),
            &format!(
                "staged file {} refused: its header names another record",
                name(999904, "counts")
            ),
        ],
    );
}

// ---------------------------------------------------------------------------
// Folders

/// The third reproduction: a capture folder another user made (mode 0777,
/// theirs), a capture folder of the user's that every user can write, and
/// a dump folder of the other user's (`IGC_DumpToCustomDir`) are refused
/// before the command runs, naming the fix; `collect` refuses a capture
/// another user owns.
#[test]
fn folders_others_own_or_can_write_are_refused() {
    let c = other_user_case("sec-folders");
    let theirs = c.base.join("theirs");
    other_does(&["mkdir", "-m", "0777", &theirs.display().to_string()]);
    let o = run_with_timeout(&mut traced_workload(&c, &theirs, &[], &["open:ran.txt"]));
    assert_eq!(o.status.code(), Some(2), "{}", ctx("their folder", &o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "capture folder {} is owned by uid {}",
            theirs.display(),
            other_uid()
        )) && err.contains("-o DIR"),
        "{}",
        ctx("their folder", &o)
    );
    assert!(!c.root.join("ran.txt").exists());
    assert!(
        list_files(&theirs).is_empty(),
        "{}",
        ctx("their folder", &o)
    );

    let open = c.root.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run_with_timeout(&mut traced_workload(&c, &open, &[], &["open:ran.txt"]));
    assert_eq!(o.status.code(), Some(2), "{}", ctx("an open folder", &o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("can be written by every user (mode 0777)") && err.contains("chmod go-w"),
        "{}",
        ctx("an open folder", &o)
    );
    assert!(!c.root.join("ran.txt").exists());

    let dumps = c.base.join("their-dumps");
    other_does(&["mkdir", "-m", "0777", &dumps.display().to_string()]);
    let mut t = traced_workload(&c, &c.root.join("cap-d"), &[], &["open:ran.txt"]);
    t.env("IGC_DumpToCustomDir", &dumps);
    let o = run_with_timeout(&mut t);
    assert_eq!(o.status.code(), Some(2), "{}", ctx("their dump folder", &o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("dump folder (IGC_DumpToCustomDir)"),
        "{}",
        ctx("their dump folder", &o)
    );
    assert!(!c.root.join("ran.txt").exists());

    // A capture of the user's, then handed to the other user.
    captured(&c);
    let report_before = std::fs::read(c.out.join("report.json")).unwrap();
    let o = run_with_timeout(Command::new("chown").args(["-R", OTHER]).arg(&c.out));
    assert!(o.status.success());
    let o = collect_staged(&c, &c.out);
    assert_eq!(o.status.code(), Some(1), "{}", ctx("collect", &o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cp -r"),
        "{}",
        ctx("collect", &o)
    );
    assert_eq!(
        std::fs::read(c.out.join("report.json")).unwrap(),
        report_before
    );
}

/// Under umask 0: the folders xpu-asm-run and the interposer make are
/// still only the user's to write (0755), so the other user can plant
/// nothing in the capture while the command runs, neither a link nor a
/// record.
#[test]
fn the_other_user_can_plant_nothing_in_a_capture() {
    let c = other_user_case("sec-plant");
    let mut t = traced_workload(
        &c,
        &c.out,
        &[],
        &["imm:a:scale:5", "open:ready", "waitfile:go"],
    );
    t.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // The umask is the child's from here on: xpu-asm-run's and the workload's.
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("umask 0; exec \"$@\"")
        .arg("sh")
        .arg(t.get_program())
        .args(t.get_args())
        .current_dir(&c.root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in t.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    let child = sh.spawn().expect("xpu-asm-run starts");
    wait_for(&c.root.join("ready"));
    let mut folders = vec![c.out.clone(), c.out.join("records"), c.out.join("dumps")];
    // Each process's dump folder, made by the interposer (IGC 1).
    folders.extend(
        std::fs::read_dir(c.out.join("dumps"))
            .expect("dumps/")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir()),
    );
    // The module binaries' folder (every process's on IGC 2, which dumps nothing).
    folders.extend(Some(c.out.join("modules")).filter(|m| m.is_dir()));
    assert!(folders.len() >= 4, "on {}: {folders:?}", stack_info());
    for d in folders {
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(
            mode,
            0o755,
            "on {}: {} has mode {mode:o}",
            stack_info(),
            d.display()
        );
        let link = d.join("planted.counts");
        let o = as_other(&[
            "ln",
            "-s",
            &c.target.display().to_string(),
            &link.display().to_string(),
        ]);
        assert!(
            !o.status.success(),
            "on {}: {OTHER} planted {}",
            stack_info(),
            link.display()
        );
    }
    std::fs::write(c.root.join("go"), b"").unwrap();
    let o = child.wait_with_output().expect("xpu-asm-run ends");
    assert_eq!(o.status.code(), Some(0), "{}", ctx("the run", &o));
    assert_eq!(launches(&report(&c.out)), vec![(SCALE.to_string(), 5)]);
    assert_eq!(std::fs::read(&c.target).unwrap(), TARGET);
}

fn wait_for(p: &Path) {
    let deadline = std::time::Instant::now() + RUN_TIMEOUT;
    while !p.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "on {}: the workload never got ready",
            stack_info()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------
// Notices

/// The fourth reproduction: while the command runs, the other user finds
/// xpu-asm-run's socket in /proc/net/unix and sends a notice of a process
/// that never ran; the user's own process sends one without the run's
/// key. Neither reaches the report: a warning says two were refused.
#[test]
fn forged_notices_are_refused() {
    let c = other_user_case("sec-notice");
    let mut t = traced_workload(
        &c,
        &c.out,
        &[],
        &["imm:a:scale:5", "open:ready", "waitfile:go"],
    );
    t.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = t.spawn().expect("xpu-asm-run starts");
    wait_for(&c.root.join("ready"));
    let prefix = format!("@xpu-asm-{}-", child.id());
    let unix = std::fs::read_to_string("/proc/net/unix").expect("/proc/net/unix");
    let name = unix
        .split_whitespace()
        .find(|w| w.starts_with(&prefix))
        .unwrap_or_else(|| panic!("on {}: no socket {prefix}* in /proc/net/unix", stack_info()))
        .trim_start_matches('@')
        .to_string();
    let send = |body: &str| {
        format!(
            "import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.sendto({body:?}.encode(), b'\\0' + {name:?}.encode())\n"
        )
    };
    let forged = r#"{"key":"00000000000000000000000000000000","host":"vm","pid":31337,"reason":"FORGED: sent by another user"}"#;
    other_does(&["/usr/bin/python3", "-c", &send(forged)]);
    let unkeyed = r#"{"host":"vm","pid":31338,"reason":"FORGED: sent without the key"}"#;
    let o = run_with_timeout(Command::new("/usr/bin/python3").args(["-c", &send(unkeyed)]));
    assert!(o.status.success(), "{}", ctx("python3", &o));
    std::fs::write(c.root.join("go"), b"").unwrap();
    let o = child.wait_with_output().expect("xpu-asm-run ends");
    assert_eq!(o.status.code(), Some(0), "{}", ctx("the run", &o));
    let r = report(&c.out);
    assert_eq!(launches(&r), vec![(SCALE.to_string(), 5)]);
    for f in ["report.json", "run.json"] {
        let text = std::fs::read_to_string(c.out.join(f)).unwrap();
        assert!(!text.contains("FORGED"), "on {}: {f}: {text}", stack_info());
    }
    assert_eq!(
        r["counts_incomplete"],
        serde_json::json!([]),
        "on {}",
        stack_info()
    );
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("socket refused"))
        .collect();
    assert_eq!(
        warnings,
        ["2 notices on xpu-asm-run's socket refused: not sent by your processes of the command (another user's, or without the run's key); nothing of them is in this report"],
        "on {}",
        stack_info()
    );
}

/// The user's own process that can write its record nowhere (every open
/// of the recorder's made to fail) is still heard: its notice carries the
/// run's key, and the report names it; nothing is refused.
#[test]
fn the_users_own_notice_is_taken() {
    let c = other_user_case("sec-own-notice");
    let mut t = traced_workload(&c, &c.out, &[], &["imm:a:scale:5"]);
    t.env("XPU_ASM_FAULTS", "open:EIO");
    let o = run_with_timeout(&mut t);
    assert_eq!(o.status.code(), Some(0), "{}", ctx("the run", &o));
    let r = report(&c.out);
    let said: Vec<&str> = r["counts_incomplete"]
        .as_array()
        .expect("counts_incomplete")
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert_eq!(said.len(), 1, "{}\n{said:?}", ctx("the run", &o));
    assert!(
        said[0].contains(
            ": no record: its record could not be written into the capture or the staging folder"
        ),
        "{}\n{said:?}",
        ctx("the run", &o)
    );
    let text = r.to_string();
    assert!(
        !text.contains("socket refused"),
        "on {}: {text}",
        stack_info()
    );
}

/// `port` writes its products only into a capture and a `port/` folder
/// of the user's: a `port/` the other user owns, or a capture handed to
/// them, is refused with `collect`'s words, and nothing is written.
#[test]
fn port_writes_into_no_folder_of_another_user() {
    let c = other_user_case("sec-port");
    captured(&c);
    let port = |c: &Case| {
        let mut t = Command::new(xpu_asm_run());
        t.args(["port", "-q", "--to", "dg2"])
            .arg(&c.out)
            .current_dir(&c.root);
        hermetic(&mut t);
        run_with_timeout(&mut t)
    };
    let theirs = c.out.join("port");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(other_uid()), Some(other_uid())).unwrap();
    let o = port(&c);
    assert_eq!(o.status.code(), Some(2), "{}", ctx("their port/", &o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{} is owned by uid {}",
            theirs.display(),
            other_uid()
        )) && err.contains("cp -r"),
        "{}",
        ctx("their port/", &o)
    );
    assert!(list_files(&theirs).is_empty(), "{}", ctx("their port/", &o));

    // The user's own port/: ported.
    std::fs::remove_dir(&theirs).unwrap();
    let o = port(&c);
    assert_eq!(o.status.code(), Some(0), "{}", ctx("the user's port/", &o));
    assert!(theirs.join("dg2").join("report.json").is_file());

    // The capture handed to the other user: refused, nothing changed.
    let o = run_with_timeout(Command::new("chown").args(["-R", OTHER]).arg(&c.out));
    assert!(o.status.success());
    let before = list_files(&c.out);
    let report_before = std::fs::read(theirs.join("dg2").join("report.json")).unwrap();
    let o = port(&c);
    assert_eq!(o.status.code(), Some(2), "{}", ctx("their capture", &o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cp -r"),
        "{}",
        ctx("their capture", &o)
    );
    assert_eq!(list_files(&c.out), before, "{}", ctx("their capture", &o));
    assert_eq!(
        std::fs::read(theirs.join("dg2").join("report.json")).unwrap(),
        report_before
    );
}
