//! Interrupting xpu-asm-run: Ctrl-C, SIGINT to the group, at a terminal.

use super::*;

/// The workload of the Ctrl-C tests: launches, then waits for a signal.
const WAIT_STEPS: [&str; 3] = ["imm:a:scale:3", "reg:a:scale_v2:2:2", "end:term-wait"];
const AFTER_WAIT_STEPS: [(&str, u64, u64); 2] = [(SCALE, 3, 3), (SCALE_V2, 4, 2)];

/// The report after the workload of [`WAIT_STEPS`] died of SIGINT.
fn assert_interrupted_report(run: &Run) {
    let r = run.report();
    assert_eq!(r["exit"], json!({"signal": 2}), "{}", run.ctx());
    assert_kernels(run, &r, &AFTER_WAIT_STEPS);
    let procs = processes(&r);
    assert_eq!(procs.len(), 1, "{}", run.ctx());
    assert_eq!(process_counts(&procs[0]), (7, 5, 0), "{}", run.ctx());
    assert_eq!(procs[0]["exit"], json!({"signal": 2}), "{}", run.ctx());
}

/// SIGINT sent to xpu-asm-run alone (as `kill -INT`): it survives, passes
/// it on, the workload dies of it, and what was recorded is reported.
#[test]
fn ctrl_c_to_xpu_asm_run_alone_reaches_the_command_and_all_is_reported() {
    let s = work_scratch();
    let mut live = Live::spawn(
        xpu_in_work(
            &s,
            &["--emulate", "pvc"],
            &workload_line("ddi", &WAIT_STEPS),
        ),
        &s.out,
    );
    live.wait_stdout("ready");
    let pid = live.pid().to_string();
    live.kill("INT", &pid);
    let r = live.finish();
    r.assert_status(130);
    assert!(
        r.stderr()
            .contains("the command was killed by signal 2 (SIGINT)"),
        "{}",
        r.ctx()
    );
    assert_interrupted_report(&r);
}

/// SIGINT sent to the whole process group, as `kill -INT -PGID` does: both
/// xpu-asm-run and the command get it.
#[test]
fn sigint_to_the_process_group_is_reported_once() {
    let s = work_scratch();
    let mut live = Live::spawn(
        xpu_in_work(
            &s,
            &["--emulate", "pvc"],
            &workload_line("dlsym", &WAIT_STEPS),
        ),
        &s.out,
    );
    live.wait_stdout("ready");
    let group = format!("-{}", live.pid());
    live.kill("INT", &group);
    let r = live.finish();
    r.assert_status(130);
    assert_interrupted_report(&r);
}

/// A small terminal for a real Ctrl-C: runs the command on a new
/// pseudo-terminal (its own session, the terminal's foreground group),
/// types Ctrl-C once each `TEXT[@SECONDS]` of `interrupt_after` has
/// appeared on the terminal (and SECONDS more have passed), and prints
/// everything the terminal showed, then `STATUS exited N` /
/// `STATUS signaled N` and `AFTER_LAST_INTR seconds`.
const PTY_HELPER: &str = r#"
import os, pty, select, sys, time
sep = sys.argv.index("--")
timeout = float(sys.argv[1])
waits = []
for w in sys.argv[2:sep]:
    text, _, delay = w.partition("@")
    waits.append((text.encode(), float(delay or 0)))
argv = sys.argv[sep + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
buf = b""
start = time.time()
last_intr = None
looked_from = 0
seen_at = None
killed = False
while True:
    if waits and seen_at is None and buf.find(waits[0][0], looked_from) >= 0:
        looked_from = buf.find(waits[0][0], looked_from) + len(waits[0][0])
        seen_at = time.time()
    if seen_at is not None and time.time() - seen_at >= waits[0][1]:
        waits.pop(0)
        seen_at = None
        os.write(fd, b"\x03")
        last_intr = time.time()
    if not killed and time.time() - start > timeout:
        os.killpg(pid, 9)
        killed = True
    r, _, _ = select.select([fd], [], [], 0.02)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        if not d:
            break
        buf += d
_, status = os.waitpid(pid, 0)
end = time.time()
sys.stdout.buffer.write(buf)
sys.stdout.write("\n")
if os.WIFEXITED(status):
    print("STATUS exited", os.WEXITSTATUS(status))
else:
    print("STATUS signaled", os.WTERMSIG(status))
if waits:
    print("NOT_SEEN", waits[0][0].decode())
if last_intr is not None:
    print("AFTER_LAST_INTR %.3f" % (end - last_intr))
if killed:
    print("TIMED_OUT")
"#;

/// What the terminal helper reported.
struct Terminal {
    run: Run,
    /// What the terminal showed, carriage returns removed.
    text: String,
    status: String,
    after_last_intr: Option<f64>,
}

fn run_at_terminal(s: &WorkScratch, interrupt_after: &[&str], argv: &[String]) -> Terminal {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(PTY_HELPER)
        .arg(RUN_TIMEOUT.as_secs().to_string())
        .args(interrupt_after)
        .arg("--")
        .args(argv)
        .current_dir(&s.work);
    hermetic(&mut cmd);
    let run = run(cmd, &s.out);
    let text = String::from_utf8_lossy(&run.output.stdout).replace('\r', "");
    let field = |key: &str| {
        text.lines()
            .rev()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    assert!(
        run.output.status.success() && field("NOT_SEEN ").is_none() && !text.contains("TIMED_OUT"),
        "the terminal helper failed, or the terminal never showed what it waited for\n{}",
        run.ctx()
    );
    Terminal {
        status: field("STATUS ").unwrap_or_default(),
        after_last_intr: field("AFTER_LAST_INTR ").and_then(|v| v.parse().ok()),
        text,
        run,
    }
}

fn xpu_argv(s: &WorkScratch, opts: &[&str], command: &[String]) -> Vec<String> {
    let mut v = vec![xpu_asm_run().display().to_string()];
    v.extend(opts.iter().map(|o| o.to_string()));
    v.push("-o".into());
    v.push(s.out.display().to_string());
    v.push("--".into());
    v.extend(command.iter().cloned());
    v
}

/// Ctrl-C typed at a terminal: the kernel sends SIGINT to the whole
/// foreground group (xpu-asm-run and the command); the command dies of it,
/// xpu-asm-run reports what was recorded and exits 130.
#[test]
fn ctrl_c_at_a_terminal_is_reported_and_exits_130() {
    let s = work_scratch();
    let t = run_at_terminal(
        &s,
        &["ready"],
        &xpu_argv(
            &s,
            &["--emulate", "pvc"],
            &workload_line("link", &WAIT_STEPS),
        ),
    );
    assert_eq!(t.status, "exited 130", "{}", t.run.ctx());
    assert!(
        t.text
            .contains("the command was killed by signal 2 (SIGINT)"),
        "{}",
        t.text
    );
    assert_interrupted_report(&t.run);
}

/// A second Ctrl-C while xpu-asm-run collects stops it promptly, writes no
/// half report, and `xpu-asm-run collect` on the folder later reports
/// everything. Collection is made long by padding the workload's dump
/// folder with large sparse files named like IGC's module dumps, which
/// xpu-asm-run hashes one by one (the shell script finds that folder in
/// `IGC_DumpToCustomDir`, which the interposer set in it for its pid, the
/// pid the workload gets by `exec`).
#[test]
fn second_ctrl_c_stops_collecting_promptly_and_collect_finishes_later() {
    // 25 GB to hash (sparse: no disk used), in files small enough that the
    // check between two files comes often: a debug build hashes one in
    // about an eighth of a second (32 MB files took half a second, and
    // 7.5 s to stop on a machine loaded by other jobs), the whole lot in
    // minutes.
    const PAD_FILES: usize = 3200;
    const PAD_MB: usize = 8;
    let s = work_scratch();
    let script = s.root.join("padded.sh");
    std::fs::write(
        &script,
        format!(
            "set -e\n\
             d=\"$IGC_DumpToCustomDir\"\n\
             mkdir -p \"$d\"\n\
             set --\n\
             i=0\n\
             while [ $i -lt {PAD_FILES} ]; do\n\
             \x20 set -- \"$@\" \"$d/OCL_asm$(printf 'fade%012x' $i).spv\"\n\
             \x20 i=$((i+1))\n\
             done\n\
             truncate -s {PAD_MB}M \"$@\"\n\
             exec {}\n",
            quoted(&workload_line("ddi", &WAIT_STEPS))
        ),
    )
    .expect("write the script");
    let t = run_at_terminal(
        &s,
        // The second Ctrl-C a second into hashing the padding.
        &["ready", "scanning@1"],
        &xpu_argv(
            &s,
            // The padding is dump files: IGC's dumps on both stacks.
            &["--isa", "dump", "--emulate", "pvc"],
            &["sh".to_string(), script.display().to_string()],
        ),
    );
    assert_eq!(t.status, "exited 130", "{}", t.run.ctx());
    let after = t.after_last_intr.unwrap_or(f64::MAX);
    assert!(
        after < 5.0,
        "xpu-asm-run took {after:.1} s to stop after the second Ctrl-C (collecting everything takes minutes)\n{}",
        t.run.ctx()
    );
    let dir = s.out.display().to_string();
    assert!(
        t.text.contains(&format!(
            "interrupted; {dir} is intact: run `xpu-asm-run collect {dir}` to finish the report"
        )),
        "{}",
        t.run.ctx()
    );
    assert!(
        !s.out.join("report.json").exists(),
        "an interrupted collection must not leave a report\n{}",
        t.run.ctx()
    );
    // Only the padding goes: it was there to make the collection long.
    let pids = record_file_pids(&s.out);
    assert_eq!(pids.len(), 1, "{}", t.run.ctx());
    let recs = records(&s.out);
    let dump_dir = dump_dir(&s.out, &recs[0]);
    let mut padding = 0;
    for e in std::fs::read_dir(&dump_dir)
        .expect("the dump folder")
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with("OCL_asmfade") {
            std::fs::remove_file(e.path()).expect("remove padding");
            padding += 1;
        }
    }
    assert_eq!(padding, PAD_FILES, "{}", t.run.ctx());

    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("collect").arg(&s.out).current_dir(&s.work);
    hermetic(&mut cmd);
    let later = run(cmd, &s.out);
    later.assert_status(0);
    assert_interrupted_report(&later);
}
