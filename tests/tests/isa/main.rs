//! Reading the ISA on the real stack: source lines of kernels built with
//! `-g`, the instruction mix of kernels whose mix is known from their
//! source (`tests/workload/kernels_mix.cl`), `xpu-asm-run show` and
//! `xpu-asm-run diff` on real captures.
//!
//! Each test has its own temporary folder; every capture runs the C
//! workload under `xpu-asm-run --emulate pvc`, so IGC compiles every kernel
//! for PVC exactly as the driver's JIT does on a GPU.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_asm_tests::*;

// ---------------------------------------------------------------------------
// Support

/// Launches of the a/b workload: every count distinct.
const AB_STEPS: [&str; 6] = [
    "imm:a:_ZTSZ4mainE10vector_add:11",
    "imm:a:scale:7",
    "imm:a:scale_v2:5",
    "reg:a:common_kernel:2:3",
    "imm:b:common_kernel:4",
    "imm:b:only_in_b:2",
];

/// (mangled name, module, launches) of [`AB_STEPS`].
const AB_KERNELS: [(&str, &str, u64); 6] = [
    ("_ZTSZ4mainE10vector_add", "a", 11),
    ("scale", "a", 7),
    ("common_kernel", "a", 6),
    ("scale_v2", "a", 5),
    ("common_kernel", "b", 4),
    ("only_in_b", "b", 2),
];

const MIX_STEPS: [&str; 5] = [
    "imm:m:mix_spill:5",
    "imm:m:mix_scratch:4",
    "imm:m:mix_slm:3",
    "imm:m:mix_atomics:2",
    "imm:m:mix_mad_loop:1",
];

/// [`run`], with nothing of the test's environment (colour included).
fn run_hermetic(mut cmd: Command, out: &Path) -> Run {
    hermetic_without_no_color(&mut cmd);
    run(cmd, out)
}

/// A capture of the workload: `xpu-asm-run --emulate pvc [extra] -o out --
/// workload --via ddi MODULES [--build-flags FLAGS] STEPS`.
fn capture_modules(
    dir: &Path,
    tag: &str,
    modules: &[(&str, PathBuf)],
    build_flags: &str,
    steps: &[&str],
    extra: &[&str],
) -> Captured {
    let out = dir.join(tag);
    let work = dir.join(format!("{tag}-work"));
    std::fs::create_dir_all(&work).expect("a work folder");
    // IGC's dumps on both stacks unless told otherwise (sid's default is
    // `binary`): these captures are of what IGC's dumps say.
    let mut c = Capture::emulating("pvc", &out)
        .options(extra)
        .isa_dump_unless_set()
        .option("--quiet")
        .program(workload())
        .args(["--via", "ddi"]);
    for (name, spv) in modules {
        c = c.module(name, spv);
    }
    if !build_flags.is_empty() {
        c = c.args(["--build-flags", build_flags]);
    }
    let r = c
        .args(steps)
        .dir(&work)
        .hermetic_without_no_color()
        .run_ok();
    let report = report_of_run(&out, &r);
    assert_eq!(report["schema"], 6, "{}", r.ctx());
    Captured { out, report }
}

/// `out`'s report.json, which `r` wrote.
fn report_of_run(out: &Path, r: &Run) -> Value {
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report.json: {e}\n{}", r.ctx()));
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// The a/b workload, both modules built with ocloc `-options OPTIONS` and
/// created with build flags `flags` (`-g`: with their source lines; on
/// Debian 12 from compiling the modules again, IGC 1's light dumps having
/// none).
fn capture_ab(dir: &Path, tag: &str, options: &str, flags: &str) -> Captured {
    let c = capture_modules(
        dir,
        tag,
        &[
            ("a", spirv_with("a", options)),
            ("b", spirv_with("b", options)),
        ],
        flags,
        &AB_STEPS,
        &[],
    );
    let got: Vec<(String, u64)> = c.report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or("").to_string(),
                k["launches"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = AB_KERNELS
        .iter()
        .map(|(n, _, l)| (n.to_string(), *l))
        .collect();
    assert_eq!(got, want, "{}", c.out.display());
    c
}

fn capture_mix(dir: &Path, tag: &str, flags: &str, extra: &[&str]) -> Captured {
    capture_modules(
        dir,
        tag,
        &[("m", spirv_with("mix", ""))],
        flags,
        &MIX_STEPS,
        extra,
    )
}

/// Runs `argv` on a new pseudo-terminal and returns what the terminal
/// showed (carriage returns removed) and the exit status.
fn shown_at_terminal(argv: &[&str], env: &[(&str, &str)]) -> (String, i32) {
    const HELPER: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        d = b""
    if not d:
        break
    buf += d
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(buf)
sys.stdout.write("\nSTATUS %d\n" % os.waitstatus_to_exitcode(status))
"#;
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(HELPER).args(argv);
    hermetic_without_no_color(&mut cmd);
    cmd.envs(env.iter().copied());
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let text = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    let status = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("STATUS "))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "the terminal helper failed\n{}",
                describe(&shown, &output, Path::new("."))
            )
        });
    (text, status)
}

/// The kernel source file as ocloc was given it.
fn cl_path(name: &str) -> String {
    workload_src_dir()
        .join(format!("kernels_{name}.cl"))
        .display()
        .to_string()
}

/// The instruction lines of an ISA file, as IGC wrote them (trimmed).
fn isa_instructions(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the ISA file");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.ends_with(':'))
        .map(str::to_string)
        .collect()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

mod asm;
mod diff;
mod mix;
mod show;
mod source_lines;
