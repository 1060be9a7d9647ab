//! The user's `LD_PRELOAD`, static and setuid programs.

use super::*;

/// A preload library of the user's: its constructor notes each process it
/// loads into, and it wraps `zeCommandListAppendLaunchKernel` (found with
/// `dlsym(RTLD_NEXT)`, like any interposer) to count launches, written at
/// exit. Output goes to the file `$MARKER_FILE`.
const MARKER_C: &str = r#"
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long launches;

static void note(const char *line) {
    const char *path = getenv("MARKER_FILE");
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, strlen(line)) < 0) {
    }
    close(fd);
}

__attribute__((constructor)) static void marker_load(void) {
    char line[4096];
    const char *p = getenv("LD_PRELOAD");
    snprintf(line, sizeof line, "load %d LD_PRELOAD=%s\n", (int)getpid(), p ? p : "");
    note(line);
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                            const ze_group_count_t *g, ze_event_handle_t e,
                                            uint32_t n, ze_event_handle_t *w) {
    static ze_pfnCommandListAppendLaunchKernel_t next;
    if (!next)
        next = (ze_pfnCommandListAppendLaunchKernel_t)dlsym(RTLD_NEXT,
                                                           "zeCommandListAppendLaunchKernel");
    if (!next)
        return ZE_RESULT_ERROR_UNINITIALIZED;
    __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
    return next(l, k, g, e, n, w);
}

__attribute__((destructor)) static void marker_exit(void) {
    char line[128];
    if (!launches)
        return;
    snprintf(line, sizeof line, "launches %d %lu\n", (int)getpid(), launches);
    note(line);
}
"#;

fn gcc_test_program(args: &[&str], shown_dir: &Path) {
    let mut cmd = Command::new("gcc");
    cmd.args(args);
    let shown = shell_words(&cmd);
    let out = run_with_timeout(&mut cmd);
    assert!(
        out.status.success(),
        "cannot build a test program\n{}",
        describe(&shown, &out, shown_dir)
    );
}

/// The marker lines of `file`: `(kind, pid) -> rest`.
fn marker_lines(file: &Path) -> BTreeMap<(String, u32), String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let kind = f.next()?.to_string();
            let pid = f.next()?.parse().ok()?;
            Some(((kind, pid), f.next().unwrap_or("").to_string()))
        })
        .collect()
}

#[test]
fn the_users_ld_preload_is_kept_and_both_libraries_work() {
    let s = work_scratch();
    let src = s.root.join("marker.c");
    let lib = s.root.join("libmarker.so");
    std::fs::write(&src, MARKER_C).expect("write marker.c");
    gcc_test_program(
        &[
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            src.to_str().expect("UTF-8 path"),
            "-o",
            lib.to_str().expect("UTF-8 path"),
            "-ldl",
        ],
        &s.root,
    );
    let steps = ["imm:a:scale:5", "reg:a:scale_v2:2:3"];
    // Alone, the user's library counts the program's direct appends: 5 + 2.
    let alone_marker = s.root.join("alone.txt");
    let mut alone = Command::new(workload_for("link"));
    hermetic(&mut alone);
    alone
        .args(&workload_line("link", &steps)[1..])
        .envs(neo_env())
        .env("LD_PRELOAD", &lib)
        .env("MARKER_FILE", &alone_marker)
        .current_dir(&s.work);
    let alone = run(alone, &s.work);
    assert!(alone.output.status.success(), "{}", alone.ctx());
    let m = marker_lines(&alone_marker);
    assert_eq!(
        m.keys().filter(|(k, _)| k == "launches").count(),
        1,
        "{m:?}\n{}",
        alone.ctx()
    );
    assert!(
        m.iter().any(|((k, _), v)| k == "launches" && v == "7"),
        "the user's library alone must count 7 launches: {m:?}"
    );

    // Under xpu-asm-run with the user's LD_PRELOAD set.
    let marker = s.root.join("marker.txt");
    let mut cmd = xpu_in_work(
        &s,
        &["-q", "--emulate", "pvc"],
        &workload_line("link", &steps),
    );
    cmd.env("LD_PRELOAD", &lib).env("MARKER_FILE", &marker);
    let r = run(cmd, &s.out);
    r.assert_status(0);
    assert_eq!(
        r.stdout_lines(),
        ["imm a scale 5", "reg a scale_v2 2 3"],
        "{}",
        r.ctx()
    );
    let rep = r.report();
    assert_kernels(&r, &rep, &[(SCALE, 5, 5), (SCALE_V2, 6, 2)]);
    let procs = processes(&rep);
    assert_eq!(procs.len(), 1, "{}", r.ctx());
    let pid = u_or_max(&procs[0]["pid"]) as u32;
    let m = marker_lines(&marker);
    let want_preload = format!("LD_PRELOAD={}:{}", interposer().display(), lib.display());
    assert_eq!(
        m.get(&("load".to_string(), pid)),
        Some(&want_preload),
        "the user's library must load into the workload, after the interposer: {m:?}\n{}",
        r.ctx()
    );
    assert_eq!(
        m.get(&("launches".to_string(), pid)).map(String::as_str),
        Some("7"),
        "the user's library must still see every append: {m:?}\n{}",
        r.ctx()
    );
}

const HELLO_C: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    printf("hello %s uid=%d euid=%d\n", argc > 1 ? argv[1] : "", (int)getuid(), (int)geteuid());
    return 4;
}
"#;

/// A statically linked program: LD_PRELOAD cannot reach it. xpu-asm-run
/// says so, and runs it anyway with its output and exit status.
#[test]
fn a_static_program_is_run_with_a_warning() {
    let s = work_scratch();
    let src = s.root.join("hello.c");
    let bin = s.root.join("hello-static");
    std::fs::write(&src, HELLO_C).expect("write hello.c");
    gcc_test_program(
        &[
            "-static",
            "-O1",
            src.to_str().expect("UTF-8"),
            "-o",
            bin.to_str().expect("UTF-8"),
        ],
        &s.root,
    );
    let r = run(
        xpu_in_work(&s, &[], &[bin.display().to_string(), "there".into()]),
        &s.out,
    );
    r.assert_status(4);
    assert_eq!(
        r.stdout_lines().first().map(String::as_str),
        Some("hello there uid=0 euid=0"),
        "{}",
        r.ctx()
    );
    assert_untraced(
        &r,
        &format!(
            "xpu-asm-run: warning: {} is statically linked: LD_PRELOAD cannot load the interposer into it",
            bin.display()
        ),
    );
}

/// A setuid program (owned by `nobody`, run by root): the dynamic loader
/// ignores LD_PRELOAD in it. xpu-asm-run says so and runs it anyway.
#[test]
fn a_setuid_program_is_run_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    const NOBODY: u32 = 65534;
    let s = work_scratch();
    let src = s.root.join("hello.c");
    let bin = s.root.join("hello-setuid");
    std::fs::write(&src, HELLO_C).expect("write hello.c");
    gcc_test_program(
        &[
            "-O1",
            src.to_str().expect("UTF-8"),
            "-o",
            bin.to_str().expect("UTF-8"),
        ],
        &s.root,
    );
    std::os::unix::fs::chown(&bin, Some(NOBODY), None).unwrap_or_else(|e| {
        panic!(
            "cannot give {} to uid {NOBODY} ({e}); this test must run as root",
            bin.display()
        )
    });
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o4755))
        .expect("make it setuid");
    let r = run(
        xpu_in_work(&s, &[], &[bin.display().to_string(), "suid".into()]),
        &s.out,
    );
    r.assert_status(4);
    assert_eq!(
        r.stdout_lines().first().map(String::as_str),
        Some(format!("hello suid uid=0 euid={NOBODY}").as_str()),
        "the program must run setuid\n{}",
        r.ctx()
    );
    assert_untraced(
        &r,
        &format!(
            "xpu-asm-run: warning: {} is setuid/setgid: the dynamic loader ignores LD_PRELOAD for it",
            bin.display()
        ),
    );
}

/// A program the interposer cannot enter: the warning was printed, the
/// program's exit code (4) is reported, and no process left a record.
fn assert_untraced(r: &Run, warning: &str) {
    assert!(
        r.stderr().contains(warning),
        "expected {warning:?}\n{}",
        r.ctx()
    );
    let rep = r.report();
    assert_eq!(rep["exit"], json!({"code": 4}), "{}", r.ctx());
    assert!(processes(&rep).is_empty(), "{}", r.ctx());
}
