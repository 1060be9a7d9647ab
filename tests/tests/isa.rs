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
    assert_eq!(report["schema"], 4, "{}", r.ctx());
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

// ---------------------------------------------------------------------------
// Source lines

/// Built with `-g`, every launched kernel has `source` naming its `.cl`
/// file, with lines that exist in it (the text IGC quotes is the line's),
/// and instruction counts that sum with the prolog to the kernel's
/// instruction count; without `-g`, `source` is null.
#[test]
fn kernels_built_with_g_have_their_source_lines() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let plain = capture_ab(dir.path(), "plain", "", "");
    for (i, (name, module, _)) in AB_KERNELS.iter().enumerate() {
        let k = &g.report["kernels"][i];
        let file = cl_path(module);
        let src = &k["source"];
        assert_eq!(src["files"], serde_json::json!([file]), "{name}: {k:#}");
        let text = std::fs::read_to_string(&file).expect("the kernel source");
        let file_lines: Vec<&str> = text.lines().collect();
        let lines = src["lines"].as_array().expect("lines");
        assert!(!lines.is_empty(), "{name}: {k:#}");
        let mut sum = u(&src["no_line"]);
        let mut last = 0;
        for l in lines {
            assert_eq!(l["file"], file.as_str(), "{name}: {l}");
            let n = u(&l["line"]) as usize;
            assert!(n > last, "{name}: lines in order: {k:#}");
            last = n;
            assert!(
                n >= 1 && n <= file_lines.len(),
                "{name}: line {n} is not in {file}"
            );
            assert_eq!(l["text"], file_lines[n - 1].trim(), "{name}: line {n}");
            assert!(u(&l["instructions"]) > 0, "{name}: {l}");
            sum += u(&l["instructions"]);
        }
        assert_eq!(sum, u(&k["instructions"]), "{name}: {k:#}");
        assert_eq!(sum, u(&k["mix"]["instructions"]), "{name}: {k:#}");
        // The kernel's body line (the one with `x[i] = ...`) made code.
        assert!(
            lines
                .iter()
                .any(|l| l["text"].as_str().is_some_and(|t| t.starts_with("x[i] ="))),
            "{name}: {k:#}"
        );
    }
    for k in plain.report["kernels"].as_array().expect("kernels") {
        assert!(k["source"].is_null(), "{k:#}");
        assert_eq!(u(&k["mix"]["instructions"]), u(&k["instructions"]), "{k:#}");
    }
}

/// The same `-g` modules from the module binaries alone (`--isa binary`):
/// on sid, IGC 2's zebins carry DWARF line tables, and every kernel has the
/// `source` its dump gives (files, lines, text, counts, the prolog's
/// instructions without a line); on Debian 12 the binaries are patch-token
/// programs without line tables, and `source` is null.
#[test]
fn binaries_built_with_g_have_the_dumps_source_lines() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let modules = [("a", spirv_with("a", "-g")), ("b", spirv_with("b", "-g"))];
    let bin = capture_modules(
        dir.path(),
        "g-bin",
        &modules,
        "-g",
        &AB_STEPS,
        &["--isa", "binary"],
    );
    for (i, (name, _, _)) in AB_KERNELS.iter().enumerate() {
        let (d, b) = (&g.report["kernels"][i], &bin.report["kernels"][i]);
        assert_eq!((&d["name"], &b["name"]), (&(*name).into(), &(*name).into()));
        assert_eq!(b["isa_source"], "module-binary", "{name}");
        assert!(d["source"].is_object(), "{name}: {d:#}");
        match stack() {
            Stack::Sid => assert_eq!(b["source"], d["source"], "{name}"),
            Stack::Debian12 => assert!(b["source"].is_null(), "{name}: {b:#}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Instruction mix

fn mix_of(k: &Value) -> BTreeMap<String, u64> {
    k["mix"]
        .as_object()
        .unwrap_or_else(|| panic!("no mix: {k:#}"))
        .iter()
        .map(|(f, v)| (f.clone(), u(v)))
        .collect()
}

/// The mix of the kernels of `kernels_mix.cl`, each class checked against
/// what its source must produce; and the same kernels' machine code,
/// disassembled by IGA, gives the same mix (IGA does not say which scratch
/// messages are spills: those count as scratch).
#[test]
fn mix_of_kernels_with_known_answers() {
    let dir = stack_temp_dir("isa");
    let c = capture_mix(dir.path(), "mix", "", &["--keep", "all"]);
    let memory = [
        "load_global",
        "store_global",
        "atomic_global",
        "load_slm",
        "store_slm",
        "atomic_slm",
        "load_scratch",
        "store_scratch",
        "spill",
        "fill",
    ];
    let mut mixes = BTreeMap::new();
    for step in MIX_STEPS {
        let name = step.split(':').nth(2).expect("a step names its kernel");
        let k = c.kernel(name);
        let m = mix_of(k);
        let classes: u64 = m
            .iter()
            .filter(|(f, _)| *f != "instructions")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(classes, m["instructions"], "{name}: {m:?}");
        assert_eq!(m["instructions"], u(&k["instructions"]), "{name}: {m:?}");
        // One end-of-thread message each; nothing of the other memories
        // than the kernel's own.
        assert_eq!(m["send_other"], 1, "{name}: {m:?}");
        assert_eq!(m["dpas"], 0, "{name}: {m:?}");
        let nonzero = |f: &str| m[f] > 0;
        let mem: Vec<&str> = memory.iter().copied().filter(|f| nonzero(f)).collect();
        match name {
            "mix_mad_loop" => {
                assert_eq!(mem, ["load_global", "store_global"], "{name}: {m:?}");
                assert_eq!(m["store_global"], 1, "{name}: {m:?}");
                // The loop: a branch back at least; the unrolled mads are ALU.
                assert!(m["control"] >= 2, "{name}: {m:?}");
                let text = std::fs::read_to_string(c.out.join(k["asm"].as_str().unwrap())).unwrap();
                let mads = text
                    .lines()
                    .filter(|l| {
                        let t = l.trim_start();
                        let t = if t.starts_with('(') {
                            t.split_once(')').map_or(t, |x| x.1).trim_start()
                        } else {
                            t
                        };
                        t.starts_with("mad ") && t.contains(":f")
                    })
                    .count() as u64;
                assert!(mads >= 8, "{name}: {mads} float mads");
                assert!(m["alu"] >= mads, "{name}: {m:?}");
            }
            "mix_atomics" => {
                assert_eq!(mem, ["load_global", "atomic_global"], "{name}: {m:?}");
                assert_eq!(m["atomic_global"], 2, "{name}: {m:?}");
            }
            "mix_slm" => {
                assert_eq!(
                    mem,
                    ["load_global", "store_global", "load_slm", "store_slm"],
                    "{name}: {m:?}"
                );
                assert_eq!(
                    (m["load_slm"], m["store_slm"], m["store_global"]),
                    (1, 1, 1),
                    "{name}: {m:?}"
                );
                // A fence and a barrier at least.
                assert!(m["sync"] >= 2, "{name}: {m:?}");
            }
            "mix_scratch" => {
                assert_eq!(
                    mem,
                    [
                        "load_global",
                        "store_global",
                        "load_scratch",
                        "store_scratch"
                    ],
                    "{name}: {m:?}"
                );
                // Two reads of the private array at run-time indices.
                assert_eq!(m["load_scratch"], 2, "{name}: {m:?}");
                assert!(u(&k["private_memory_bytes"]) > 0, "{name}: {k:#}");
                assert!(k["spill_bytes"].is_null(), "{name}: {k:#}");
            }
            "mix_spill" => {
                assert!(m["spill"] > 0 && m["fill"] > 0, "{name}: {m:?}");
                assert!(u(&k["spill_bytes"]) > 0, "{name}: {k:#}");
                assert_eq!(
                    m["atomic_global"] + m["atomic_slm"] + m["load_slm"] + m["store_slm"],
                    0,
                    "{name}: {m:?}"
                );
            }
            other => panic!("no expectation for {other}"),
        }
        mixes.insert(name.to_string(), (k.clone(), m));
    }

    // The machine code IGC emitted for each, disassembled by IGA.
    for (name, (k, m)) in &mixes {
        let asm = c.out.join(k["asm"].as_str().expect("an ISA file"));
        let dat = asm.with_extension("dat");
        assert!(
            dat.is_file(),
            "{name}: no machine code {} (--keep all)",
            dat.display()
        );
        let mut cmd = Command::new("iga64");
        cmd.args(["-d", "-p=12p72"]).arg(&dat);
        let r = run_hermetic(cmd, &c.out);
        r.assert_status(0);
        let iga = xpu_asm_isa::mix::count(&r.stdout());
        let iga: BTreeMap<String, u64> = iga
            .fields()
            .iter()
            .map(|(f, n)| (f.to_string(), *n))
            .collect();
        let mut want = m.clone();
        *want.get_mut("store_scratch").unwrap() += want["spill"];
        *want.get_mut("load_scratch").unwrap() += want["fill"];
        want.insert("spill".into(), 0);
        want.insert("fill".into(), 0);
        assert_eq!(iga, want, "{name}: IGA's disassembly of {}", dat.display());
    }
}

// ---------------------------------------------------------------------------
// show

/// The instruction lines of an ISA file, as IGC wrote them (trimmed).
fn isa_instructions(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("the ISA file");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.ends_with(':'))
        .map(str::to_string)
        .collect()
}

/// `show` of a `-g` kernel: header, mix, then the ISA in its order with
/// each source line (text from the file) before the instructions it made;
/// `--lines` ranks the lines; colour on a terminal only, never with
/// NO_COLOR.
#[test]
fn show_interleaves_source_lines_with_the_isa() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let out = g.out.to_str().expect("a UTF-8 path");
    let k = g.kernel("scale_v2");
    let r = run_xpu_asm(&["show", out, "scale_v2"], &g.out);
    r.assert_status(0);
    let text = r.stdout();
    assert!(
        !text.contains('\x1b'),
        "piped output has no colour\n{}",
        r.ctx()
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("#{} scale_v2", k["rank"]), "{}", r.ctx());
    assert!(
        text.contains(&format!("mix: {} instructions", k["instructions"])),
        "{}",
        r.ctx()
    );

    // Instructions in the ISA's order; each under the header of its line.
    let isa = isa_instructions(&g.out.join(k["asm_copy"].as_str().unwrap()));
    let file = std::fs::read_to_string(cl_path("a")).unwrap();
    let file_lines: Vec<&str> = file.lines().collect();
    let header = regex_lite_header();
    let mut shown_instructions = Vec::new();
    let mut shown_live = Vec::new();
    let mut under: BTreeMap<u64, u64> = BTreeMap::new();
    let mut announced: BTreeMap<u64, u64> = BTreeMap::new();
    let mut current: Option<u64> = None;
    let body = text
        .split_once("\n\n")
        .unwrap()
        .1
        .split_once("\n\n")
        .unwrap()
        .1;
    for l in body.lines() {
        if let Some((line, n, src)) = header(l) {
            assert_eq!(src, file_lines[line as usize - 1].trim(), "{l}");
            announced.insert(line, n);
            current = Some(line);
        } else if l.starts_with("(no source line)") {
            current = None;
        } else if !l.ends_with(':') {
            // The live-GRF column first (the kernel has no loop to mark).
            let (live, rest) = l.trim().split_once(' ').unwrap_or_default();
            shown_live.push(
                live.parse::<u64>()
                    .unwrap_or_else(|_| panic!("no live GRF: {l}")),
            );
            shown_instructions.push(rest.trim().to_string());
            if let Some(c) = current {
                *under.entry(c).or_default() += 1;
            }
        }
    }
    assert_eq!(shown_instructions, isa, "{}", r.ctx());
    let live: Vec<u64> = k["flow"]["live_grf"]
        .as_array()
        .expect("live_grf")
        .iter()
        .map(u)
        .collect();
    assert_eq!(shown_live, live, "{}", r.ctx());
    assert_eq!(
        under,
        announced,
        "each header's count is what follows it\n{}",
        r.ctx()
    );
    let report_lines: BTreeMap<u64, u64> = k["source"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (u(&l["line"]), u(&l["instructions"])))
        .collect();
    assert_eq!(under, report_lines, "{}", r.ctx());

    // --lines: ranked by instructions, the prolog last.
    let r = run_xpu_asm(&["show", out, &k["rank"].to_string(), "--lines"], &g.out);
    r.assert_status(0);
    let ranked: Vec<u64> = r
        .stdout()
        .lines()
        .skip_while(|l| !l.starts_with("instrs"))
        .skip(1)
        .filter(|l| l.contains("kernels_a.cl:"))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let mut sorted = ranked.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ranked, sorted, "{}", r.ctx());
    assert_eq!(ranked.len(), report_lines.len(), "{}", r.ctx());

    // Several matches are listed, by rank; no line information is said.
    let r = run_xpu_asm(&["show", out, "common_kernel"], &g.out);
    r.assert_status(1);
    assert_eq!(r.stderr().matches("#").count(), 2, "{}", r.ctx());
    let plain = capture_ab(dir.path(), "plain", "", "");
    let r = run_xpu_asm(
        &["show", plain.out.to_str().unwrap(), "scale", "--lines"],
        &plain.out,
    );
    r.assert_status(1);
    assert!(r.stderr().contains("build it with -g"), "{}", r.ctx());

    // On a terminal: colour, the same text; NO_COLOR: none.
    let (tty, status) = shown_at_terminal(
        &[xpu_asm_run().to_str().unwrap(), "show", out, "scale_v2"],
        &[],
    );
    assert_eq!(status, 0, "{tty}");
    assert!(tty.contains("\x1b[36mkernels_a.cl:"), "{tty}");
    assert_eq!(
        strip_ansi(&tty)
            .trim_end()
            .trim_end_matches("STATUS 0")
            .trim_end(),
        text.trim_end()
    );
    let (tty, _) = shown_at_terminal(
        &[xpu_asm_run().to_str().unwrap(), "show", out, "scale_v2"],
        &[("NO_COLOR", "1")],
    );
    assert!(!tty.contains('\x1b'), "{tty}");
}

/// `file:line  (N instructions)  text` -> (line, N, text)
fn regex_lite_header() -> impl Fn(&str) -> Option<(u64, u64, String)> {
    |l: &str| {
        let (at, rest) = l.split_once("  (")?;
        let (_, line) = at.rsplit_once(':')?;
        let line: u64 = line.parse().ok()?;
        let (n, text) = rest.split_once(" instruction")?;
        let n: u64 = n.parse().ok()?;
        let text = text.split_once(")  ").map_or("", |x| x.1);
        Some((line, n, text.to_string()))
    }
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

// ---------------------------------------------------------------------------
// diff

/// Two captures of the same build compare equal (exit 0, nothing listed);
/// a build with `-cl-opt-disable` changes every kernel's instructions,
/// which `--json` says field by field; `--fail-on` exits 1 exactly when its
/// condition holds.
#[test]
fn diff_shows_what_changed_between_two_builds() {
    let dir = stack_temp_dir("isa");
    let d1 = capture_ab(dir.path(), "default1", "", "");
    let d2 = capture_ab(dir.path(), "default2", "", "");
    let o0 = capture_ab(dir.path(), "optdisable", "", "-cl-opt-disable");
    let (a, a2, b) = (
        d1.out.to_str().unwrap(),
        d2.out.to_str().unwrap(),
        o0.out.to_str().unwrap(),
    );

    // Identical: no change, exit 0, also with --fail-on any.
    let r = run_xpu_asm(&["diff", a, a2], &d1.out);
    r.assert_status(0);
    assert!(
        r.stdout()
            .contains("6 kernels in both, 0 changed; 0 only in A, 0 only in B"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(
        &[
            "diff",
            a,
            a2,
            "--json",
            "--fail-on",
            "any,spill,missing,new,instructions+0",
        ],
        &d1.out,
    );
    r.assert_status(0);
    let j = r.json();
    assert_eq!(j["kernels"], serde_json::json!([]), "{}", r.ctx());
    assert_eq!(j["failed"], serde_json::json!([]), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, a2, "--json", "--all"], &d1.out);
    let j = r.json();
    let all = j["kernels"].as_array().unwrap();
    assert_eq!(all.len(), 6, "{}", r.ctx());
    for k in all {
        assert_eq!(k["changed"], serde_json::json!([]), "{}", r.ctx());
        assert_eq!(k["a"], k["b"], "{}", r.ctx());
    }
    let r = run_xpu_asm(&["diff", a, a2, "scale"], &d1.out);
    r.assert_status(0);
    assert_eq!(r.stdout(), "", "{}", r.ctx());

    // Optimisation off: the JSON contract, and every kernel changed.
    let r = run_xpu_asm(&["diff", a, b, "--json"], &d1.out);
    r.assert_status(0);
    let j = r.json();
    let ks = j["kernels"].as_array().unwrap();
    let names: Vec<(&str, u64)> = ks
        .iter()
        .map(|k| (k["name"].as_str().unwrap(), u(&k["a"]["launches"])))
        .collect();
    // A's order, a name's kernels together.
    let want = [
        ("_ZTSZ4mainE10vector_add", 11),
        ("scale", 7),
        ("common_kernel", 6),
        ("common_kernel", 4),
        ("scale_v2", 5),
        ("only_in_b", 2),
    ];
    assert_eq!(names, want, "{}", r.ctx());
    let mut growth = Vec::new();
    for k in ks {
        let (ka, kb) = (&k["a"], &k["b"]);
        for side in [ka, kb] {
            for f in [
                "rank",
                "launches",
                "simd",
                "grf",
                "instructions",
                "spill_bytes",
                "mix",
                "module_sha256",
            ] {
                assert!(side.get(f).is_some(), "{f} missing: {k:#}");
            }
        }
        assert_eq!(ka["launches"], kb["launches"], "{k:#}");
        let changed: Vec<&str> = k["changed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(changed.contains(&"instructions"), "{k:#}");
        assert!(!changed.contains(&"launches"), "{k:#}");
        // `changed` is exactly the fields that differ.
        for f in ["simd", "grf", "instructions", "spill_bytes"] {
            assert_eq!(changed.contains(&f), ka[f] != kb[f], "{f}: {k:#}");
        }
        for (f, v) in ka["mix"].as_object().unwrap() {
            if f != "instructions" {
                assert_eq!(
                    changed.contains(&format!("mix.{f}").as_str()),
                    *v != kb["mix"][f],
                    "{f}: {k:#}"
                );
            }
        }
        let (ia, ib) = (u(&ka["instructions"]) as f64, u(&kb["instructions"]) as f64);
        growth.push((ib - ia) * 100.0 / ia);
        assert_eq!(
            k["pairing"].is_null(),
            k["name"] != "common_kernel",
            "{k:#}"
        );
    }
    assert_eq!(
        j["summary"],
        serde_json::json!({"in_both": 6, "changed": 6, "only_a": 0, "only_b": 0})
    );
    // The two common_kernels paired by module order: a's with a's.
    let sha = |c: &Captured, m: usize| c.kernels("common_kernel")[m]["module_sha256"].clone();
    let commons: Vec<&Value> = ks.iter().filter(|k| k["name"] == "common_kernel").collect();
    assert_eq!(commons[0]["a"]["module_sha256"], sha(&d1, 0));
    assert_eq!(commons[0]["b"]["module_sha256"], sha(&o0, 0));
    assert_eq!(u(&commons[1]["a"]["launches"]), 4);

    // --fail-on instructions+N%: 1 exactly when some kernel grew by more.
    let max = growth.iter().cloned().fold(f64::MIN, f64::max);
    let above = format!("instructions+{}%", (max + 0.5).ceil());
    let below = format!("instructions+{}%", (max - 0.5).floor());
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", &above], &d1.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", &below], &d1.out);
    r.assert_status(1);
    let threshold = (max - 0.5).floor();
    let over = growth.iter().filter(|g| **g > threshold).count();
    assert!(over >= 1);
    assert_eq!(
        r.stderr().matches(&format!("--fail-on {below}: ")).count(),
        over,
        "{}",
        r.ctx()
    );
    // Back the other way nothing grows.
    let r = run_xpu_asm(&["diff", b, a, "--fail-on", "instructions+0,any"], &d1.out);
    r.assert_status(1);
    assert!(!r.stderr().contains("instructions+0:"), "{}", r.ctx());
    assert!(r.stderr().contains("--fail-on any:"), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", "spill,missing,new"], &d1.out);
    r.assert_status(0);

    // The ISA of one kernel: a unified diff without comments.
    let r = run_xpu_asm(&["diff", a, b, "scale_v2", "--normalize-regs"], &d1.out);
    r.assert_status(0);
    let t = r.stdout();
    assert!(
        t.starts_with("--- ") && t.contains("\n+++ ") && t.contains("\n@@ "),
        "{}",
        r.ctx()
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with('+') && !l.starts_with("+++")),
        "{}",
        r.ctx()
    );
    assert!(!t.contains("//"), "{}", r.ctx());

    // Bad conditions are refused (status 2) before anything is read.
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", "instrs+5%"], &d1.out);
    r.assert_status(2);
    assert!(r.stderr().contains("unknown condition"), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, "/nonexistent-capture"], &d1.out);
    r.assert_status(2);
}

/// `--fail-on spill` on a kernel that spills with 128 registers and not
/// with 256: 1 from the large to the default register file, 0 back; the
/// table shows the change on a terminal in colour.
#[test]
fn diff_fails_on_a_kernel_that_starts_spilling() {
    let dir = stack_temp_dir("isa");
    let large = capture_mix(dir.path(), "large", "-ze-opt-large-register-file", &[]);
    let small = capture_mix(dir.path(), "small", "", &[]);
    assert!(large.kernel("mix_spill")["spill_bytes"].is_null());
    assert!(u(&small.kernel("mix_spill")["spill_bytes"]) > 0);
    let (l, s) = (large.out.to_str().unwrap(), small.out.to_str().unwrap());
    let r = run_xpu_asm(&["diff", l, s, "--fail-on", "spill"], &large.out);
    r.assert_status(1);
    assert!(
        r.stderr()
            .contains("--fail-on spill: mix_spill: spill bytes 0 ->"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(&["diff", s, l, "--fail-on", "spill"], &large.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", s, l, "--fail-on", "grf+0"], &large.out);
    r.assert_status(1);
    let r = run_xpu_asm(&["diff", l, s, "--fail-on", "grf+0"], &large.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", l, s, "--json"], &large.out);
    let j = r.json();
    let k = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "mix_spill")
        .unwrap();
    let changed: Vec<&str> = k["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for f in ["grf", "spill_bytes", "mix.spill", "mix.fill"] {
        assert!(changed.contains(&f), "{f}: {k:#}");
    }

    // Kernels in one capture only: listed apart, null on the other side,
    // and `missing` / `new` hold exactly for them.
    let ab = capture_ab(dir.path(), "ab", "", "");
    let abs = ab.out.to_str().unwrap();
    let r = run_xpu_asm(&["diff", abs, s, "--json", "--fail-on", "missing"], &ab.out);
    r.assert_status(1);
    let j = r.json();
    // Names of the kernels whose `missing_side` is null.
    let only = |missing_side: &str| -> Vec<&str> {
        j["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k[missing_side].is_null())
            .map(|k| k["name"].as_str().unwrap())
            .collect()
    };
    let (only_a, only_b) = (only("b"), only("a"));
    let want_a: Vec<&str> = AB_KERNELS.iter().map(|(n, _, _)| *n).collect();
    let mut want_a_sorted = want_a.clone();
    want_a_sorted.sort();
    let mut got_a = only_a.clone();
    got_a.sort();
    assert_eq!(got_a, want_a_sorted, "{}", r.ctx());
    assert_eq!(
        only_b,
        [
            "mix_spill",
            "mix_scratch",
            "mix_slm",
            "mix_atomics",
            "mix_mad_loop"
        ],
        "{}",
        r.ctx()
    );
    assert_eq!(
        j["summary"],
        serde_json::json!({"in_both": 0, "changed": 0, "only_a": 6, "only_b": 5})
    );
    assert_eq!(j["failed"].as_array().unwrap().len(), 6, "{}", r.ctx());
    let r = run_xpu_asm(&["diff", abs, s, "--fail-on", "new"], &ab.out);
    r.assert_status(1);
    assert_eq!(
        r.stderr().matches("--fail-on new: ").count(),
        5,
        "{}",
        r.ctx()
    );
    let t = r.stdout();
    let (a_part, b_part) = t.split_once("only in B:").expect("only in B listed");
    assert!(
        a_part.contains("only in A:\n  #1 main::vector_add (11 launches"),
        "{}",
        r.ctx()
    );
    assert!(
        b_part.starts_with("\n  #1 mix_spill (5 launches"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(&["diff", abs, abs, "--fail-on", "missing,new"], &ab.out);
    r.assert_status(0);

    let argv = [
        xpu_asm_run().to_str().unwrap().to_string(),
        "diff".into(),
        l.into(),
        s.into(),
    ];
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (tty, status) = shown_at_terminal(&argv, &[]);
    assert_eq!(status, 0, "{tty}");
    assert!(
        tty.contains("\x1b[31m"),
        "growth in red on a terminal\n{tty}"
    );
    let (tty, _) = shown_at_terminal(&argv, &[("NO_COLOR", "1")]);
    assert!(!tty.contains('\x1b'), "{tty}");
    let piped = run_xpu_asm(&["diff", l, s], &large.out);
    assert!(!piped.stdout().contains('\x1b'), "{}", piped.ctx());
    assert_eq!(
        strip_ansi(&shown_at_terminal(&argv, &[]).0)
            .trim_end()
            .trim_end_matches("STATUS 0")
            .trim_end(),
        piped.stdout().trim_end()
    );
}

// ---------------------------------------------------------------------------
// asm/

/// The names in a capture's `asm/`, sorted.
fn asm_folder(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("asm"))
        .expect("asm/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The ISA column of the table's row of each rank, by rank.
fn table_isa_column(stdout: &str, ranks: usize) -> Vec<String> {
    (1..=ranks)
        .map(|rank| {
            let row = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(&rank.to_string()))
                .unwrap_or_else(|| panic!("no row of rank {rank}:\n{stdout}"));
            row.split_whitespace().last().unwrap().to_string()
        })
        .collect()
}

/// `--asm-copies N`: `asm/` holds the copies of the N most launched
/// kernels, the report says what it left out, and every other kernel's
/// ISA is its kept dump, which the table names and `show` and the page
/// read; `all` (and the default, on six kernels) copies every one.
#[test]
fn asm_copies_keeps_the_most_launched_and_the_others_isa_in_place() {
    let dir = stack_temp_dir("isa");
    let c = capture_ab(dir.path(), "ab", "", "");
    let out = c.out.to_str().expect("a UTF-8 path");
    assert!(c.report.get("asm_copies").is_none(), "{:#}", c.report);
    assert_eq!(asm_folder(&c.out).len(), AB_KERNELS.len());

    let r = run_xpu_asm(&["collect", out, "--asm-copies", "2"], &c.out);
    r.assert_status(0);
    let report = report_of_run(&c.out, &r);
    assert_eq!(
        report["asm_copies"],
        serde_json::json!({"limit": 2, "left_out": 4}),
        "{}",
        r.ctx()
    );
    let kernels = report["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = AB_KERNELS.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(names, want, "{}", r.ctx());
    let copies: Vec<String> = kernels[..2]
        .iter()
        .map(|k| k["asm_copy"].as_str().expect("a copy").to_string())
        .collect();
    let mut in_folder: Vec<String> = copies
        .iter()
        .map(|c| c["asm/".len()..].to_string())
        .collect();
    in_folder.sort();
    assert_eq!(asm_folder(&c.out), in_folder, "{}", r.ctx());
    for k in &kernels[..2] {
        let (copy, dump) = (k["asm_copy"].as_str().unwrap(), k["asm"].as_str().unwrap());
        assert_eq!(
            std::fs::read(c.out.join(copy)).unwrap(),
            std::fs::read(c.out.join(dump)).unwrap(),
            "{copy}"
        );
    }
    let mut isa_column = copies.clone();
    for k in &kernels[2..] {
        assert!(k["asm_copy"].is_null(), "{k:#}");
        let dump = k["asm"].as_str().expect("its dump");
        assert!(dump.starts_with("dumps/"), "{dump}");
        assert!(c.out.join(dump).is_file(), "{dump} kept");
        isa_column.push(dump.to_string());
    }
    let table = r.stdout();
    assert_eq!(table_isa_column(&table, 6), isa_column, "{}", r.ctx());
    assert!(
        table.contains(
            "asm/: copies of the 2 most launched kernels, not of the other 4 (the ISA column \
             names their files; --asm-copies all copies every one)"
        ),
        "{}",
        r.ctx()
    );

    // `show` of the least launched reads its dump.
    let last = &kernels[5];
    let s = run_xpu_asm(&["show", out, "only_in_b"], &c.out);
    s.assert_status(0);
    let shown = s.stdout();
    assert!(
        shown.contains(&format!(
            "  ISA:          {}\n",
            last["asm"].as_str().unwrap()
        )),
        "{}",
        s.ctx()
    );
    let instructions = isa_instructions(&c.out.join(last["asm"].as_str().unwrap()));
    assert!(!instructions.is_empty());
    for i in &instructions {
        assert!(shown.contains(i.as_str()), "{i}\n{}", s.ctx());
    }

    // The page holds every kernel's ISA, the bytes of its file.
    let html = std::fs::read_to_string(c.out.join("report.html")).unwrap();
    let (data, isa) =
        xpu_asm_collector::report::export::html::read_page(&html).expect("the page reads");
    assert_eq!(data["report"], report);
    let isa: BTreeMap<String, Vec<u8>> = isa.into_iter().collect();
    for (k, r) in kernels.iter().zip(data["isa"].as_array().unwrap()) {
        let file = k["asm_copy"].as_str().or(k["asm"].as_str()).unwrap();
        let id = r["id"].as_str().expect("ISA on the page");
        assert_eq!(isa[id], std::fs::read(c.out.join(file)).unwrap(), "{file}");
    }

    // None at all, then every one again.
    let r = run_xpu_asm(&["collect", out, "--asm-copies", "0"], &c.out);
    r.assert_status(0);
    assert!(
        r.stdout().contains(
            "asm/: no copies (--asm-copies 0); the ISA column names each kernel's file\n"
        ),
        "{}",
        r.ctx()
    );
    let isa_column: Vec<String> = kernels
        .iter()
        .map(|k| k["asm"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(table_isa_column(&r.stdout(), 6), isa_column, "{}", r.ctx());
    let report = report_of_run(&c.out, &r);
    assert_eq!(
        report["asm_copies"],
        serde_json::json!({"limit": 0, "left_out": 6})
    );
    assert!(asm_folder(&c.out).is_empty());
    for args in [&["--asm-copies", "all"][..], &[]] {
        let r = run_xpu_asm(&[&["collect", out, "--quiet"][..], args].concat(), &c.out);
        r.assert_status(0);
        let report = report_of_run(&c.out, &r);
        assert!(report.get("asm_copies").is_none(), "{args:?}");
        assert_eq!(report, c.report, "{args:?}: the first collection's report");
        assert_eq!(asm_folder(&c.out).len(), 6, "{args:?}");
    }

    // A count that is not one names what is.
    let r = run_xpu_asm(&["collect", out, "--asm-copies", "many"], &c.out);
    r.assert_status(2);
    assert!(
        r.stderr()
            .contains("invalid value 'many' for '--asm-copies <N>': expected a number of kernels or `all` (default 10000)"),
        "{}",
        r.ctx()
    );
}
