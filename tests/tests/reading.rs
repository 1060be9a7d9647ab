//! Reading a kernel from its code on the real stack: blocks, loops and
//! register pressure (`kernels[].flow`, from IGA's decoding of the module
//! binary the driver ran), `show`'s live-GRF column and `--cfg`, and
//! `diff` over loops and pressure with its `--fail-on` conditions.
//!
//! The kernels: `tests/workload/kernels_loops.cl` (no loop, one loop, two
//! nested loops, each kept rolled) and `tests/workload/kernels_mix.cl`
//! (`mix_spill` spills in its loop). Every capture runs the C workload
//! under `xpu-asm-run --emulate pvc`: IGC compiles each kernel for PVC as
//! the driver's JIT does on a GPU.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use xpu_asm_tests::*;

// ---------------------------------------------------------------------------
// Support

const LOOP_STEPS: [&str; 3] = [
    "imm:l:loop_none:3",
    "imm:l:loop_one:2",
    "imm:l:loop_nested:1",
];

const MIX_STEPS: [&str; 2] = ["imm:m:mix_spill:5", "imm:m:mix_mad_loop:4"];

/// The kernels [`LOOP_STEPS`] and [`MIX_STEPS`] launch.
const LAUNCHED: [&str; 5] = [
    "loop_none",
    "loop_one",
    "loop_nested",
    "mix_spill",
    "mix_mad_loop",
];

/// The source lines of `loop_one`'s loop and of `loop_nested`'s two
/// (kernels_loops.cl: `for` and its body; the outer loop's `for`, the inner
/// loop and the statement after it).
const ONE_LINES: [u64; 2] = [16, 17];
const OUTER_LINES: [u64; 4] = [26, 28, 29, 30];
const INNER_LINES: [u64; 2] = [28, 29];

/// `xpu-asm-run --emulate pvc [extra] -o DIR -- workload --via ddi
/// --module l=loops --module m=mix [--build-flags FLAGS] STEPS`, the
/// modules built with ocloc `-options OPTIONS`.
fn capture_loops_and_mix(
    dir: &Path,
    tag: &str,
    options: &str,
    flags: &str,
    extra: &[&str],
) -> Captured {
    let out = dir.join(tag);
    // IGC's dumps on both stacks unless told otherwise (sid's default is
    // `binary`).
    let mut c = Capture::emulating("pvc", &out)
        .options(extra)
        .isa_dump_unless_set()
        .option("--quiet")
        .program(workload())
        .args(["--via", "ddi"]);
    for (m, src) in [("l", "loops"), ("m", "mix")] {
        c = c.module(m, &spirv_with(src, options));
    }
    if !flags.is_empty() {
        c = c.args(["--build-flags", flags]);
    }
    let r = c
        .args(LOOP_STEPS)
        .args(MIX_STEPS)
        .dir(dir)
        .hermetic_without_no_color()
        .run_ok();
    let report = r.report();
    assert_eq!(report["schema"], 6, "{}", r.ctx());
    Captured { out, report }
}

fn loops(f: &Value) -> &Vec<Value> {
    f["loops"].as_array().expect("loops")
}

fn lines_of(l: &Value) -> Vec<u64> {
    let mut v: Vec<u64> = l["source"]
        .as_array()
        .expect("source")
        .iter()
        .map(|s| u(&s["line"]))
        .collect();
    v.dedup();
    v
}

// ---------------------------------------------------------------------------
// Loops

/// No loop, one loop, two nested loops: the count, nesting and (with `-g`)
/// each loop's source lines; the same loops without `-g`, with no lines.
#[test]
fn loops_of_kernels_with_known_answers() {
    let dir = stack_temp_dir("reading");
    let g = capture_loops_and_mix(dir.path(), "g", "-g", "-g", &[]);
    let plain = capture_loops_and_mix(dir.path(), "plain", "", "", &[]);
    let cl = workload_src_dir().join("kernels_loops.cl");
    let file = cl.display().to_string();

    assert_eq!(loops(g.flow("loop_none")), &Vec::<Value>::new());
    let one = loops(g.flow("loop_one"));
    assert_eq!(one.len(), 1, "{one:#?}");
    assert_eq!(
        (u(&one[0]["depth"]), one[0]["parent"].clone()),
        (1, Value::Null)
    );
    assert_eq!(lines_of(&one[0]), ONE_LINES);
    assert!(one[0]["source"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["file"] == file.as_str()));

    let nested = loops(g.flow("loop_nested"));
    assert_eq!(nested.len(), 2, "{nested:#?}");
    let (outer, inner) = (&nested[0], &nested[1]);
    assert_eq!(
        (u(&outer["depth"]), outer["parent"].clone()),
        (1, Value::Null)
    );
    assert_eq!((u(&inner["depth"]), u(&inner["parent"])), (2, 0));
    let outer_blocks = outer["blocks"].as_array().unwrap();
    assert!(inner["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| outer_blocks.contains(b)));
    assert!(u(&outer["instructions"]) > u(&inner["instructions"]));
    assert_eq!(lines_of(outer), OUTER_LINES);
    assert_eq!(lines_of(inner), INNER_LINES);
    // The peak of each looping kernel is in its innermost loop.
    assert_eq!(g.flow("loop_one")["peak"]["loop"], 0);
    assert_eq!(g.flow("loop_nested")["peak"]["loop"], 1);
    assert_eq!(g.flow("loop_nested")["lines"], true);

    // Without -g: the same loops, no lines.
    for name in ["loop_none", "loop_one", "loop_nested"] {
        let (a, b) = (loops(g.flow(name)), loops(plain.flow(name)));
        let shape = |ls: &Vec<Value>| -> Vec<(u64, u64, Value)> {
            ls.iter()
                .map(|l| (u(&l["depth"]), u(&l["instructions"]), l["parent"].clone()))
                .collect()
        };
        assert_eq!(shape(a), shape(b), "{name}");
        assert!(
            b.iter().all(|l| l["source"] == serde_json::json!([])),
            "{name}"
        );
        assert_eq!(plain.flow(name)["lines"], false);
    }
    show_marks_the_loops_and_pressure(&plain);
}

/// `show`: a live-GRF column equal to the report's, each instruction of a
/// loop marked once per loop it is in, each loop named where it begins;
/// `--cfg` the blocks with back edges, `--cfg=dot` a graph with a cluster
/// per loop.
fn show_marks_the_loops_and_pressure(c: &Captured) {
    let dir = c.out.display().to_string();
    let f = c.flow("loop_nested");
    let r = run_xpu_asm(&["show", &dir, "loop_nested", "--color", "never"], &c.out);
    r.assert_status(0);
    let text = r.stdout();
    let mut live = Vec::new();
    let mut marks = Vec::new();
    for l in text.lines() {
        // The launch shapes' rows also begin with a number (launches).
        if l.contains("groups/Xe-core") {
            continue;
        }
        let t = l.trim_start();
        let Some((n, rest)) = t.split_once(' ') else {
            continue;
        };
        if let Ok(n) = n.parse::<u64>() {
            live.push(n);
            marks.push(rest.chars().take_while(|c| *c == '|').count() as u64);
        }
    }
    let want: Vec<u64> = f["live_grf"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(live, want, "{text}");
    let want_marks: Vec<u64> = (0..want.len())
        .map(|i| {
            let b = f["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .rfind(|b| u(&b["first"]) <= i as u64)
                .unwrap();
            match b["loop"].as_u64() {
                Some(l) => u(&loops(f)[l as usize]["depth"]),
                None => 0,
            }
        })
        .collect();
    assert_eq!(marks, want_marks, "{text}");
    assert!(text.contains("    loop 1 (depth 1): "), "{text}");
    assert!(text.contains("|loop 2 (in loop 1, depth 2): "), "{text}");
    assert!(text.contains("  flow:         "), "{text}");

    let r = run_xpu_asm(&["show", &dir, "loop_nested", "--cfg"], &c.out);
    r.assert_status(0);
    let backs: usize = loops(f)
        .iter()
        .map(|l| l["back_edges"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        r.stdout().matches(" (back)").count(),
        backs,
        "{}",
        r.stdout()
    );
    let blocks = f["blocks"].as_array().unwrap();
    let r = run_xpu_asm(&["show", &dir, "loop_nested", "--cfg=dot"], &c.out);
    r.assert_status(0);
    let dot = r.stdout();
    assert!(
        dot.starts_with("digraph cfg {\n") && dot.ends_with("}\n"),
        "{dot}"
    );
    assert!(dot.contains("subgraph cluster_loop1 {") && dot.contains("subgraph cluster_loop2 {"));
    let edges: usize = blocks
        .iter()
        .map(|b| b["succs"].as_array().unwrap().len())
        .sum();
    assert_eq!(dot.matches(" -> ").count(), edges, "{dot}");
    assert_eq!(dot.matches("style=dashed").count(), backs, "{dot}");
}

// ---------------------------------------------------------------------------
// Pressure

/// `mix_spill` has more live values than registers: its pressure, the live
/// registers and the spilled values held in scratch, peaks at or above its
/// budget, in its loop, in the block of its spill and fill sends.
#[test]
fn the_spilling_kernel_peaks_where_its_loop_spills() {
    let dir = stack_temp_dir("reading");
    let c = capture_loops_and_mix(dir.path(), "c", "", "", &[]);
    let k = c.kernel("mix_spill");
    let f = c.flow("mix_spill");
    assert_eq!(f["budget"], k["grf"], "{f:#}");
    assert_eq!(u(&f["budget"]), 128);
    assert_eq!(u(&f["grf_bytes"]), 64);
    assert_eq!(f["liveness"], "operands");
    let p = &f["peak"];
    let l = &loops(f)[u(&p["loop"]) as usize];
    assert!(
        u(&l["mix"]["spill"]) > 0 && u(&l["mix"]["fill"]) > 0,
        "{l:#}"
    );
    assert_eq!(l["blocks"], serde_json::json!([p["block"]]), "{f:#}");
    assert_eq!(l["peak_grf"], p["grf"]);
    // Over budget: the registers could not hold it all.
    assert!(u(&p["grf"]) >= u(&f["budget"]), "{p:#}");
    assert!(u(&p["live"]) <= u(&f["budget"]), "{p:#}");
    assert!(u(&p["spilled"]) > 0, "{p:#}");
    assert_eq!(u(&p["grf"]), u(&p["live"]) + u(&p["spilled"]));
    let (want_live, want_spilled) = match stack() {
        Stack::Debian12 => (116, 20),
        Stack::Sid => (122, 6),
    };
    assert_eq!(
        (u(&p["live"]), u(&p["spilled"])),
        (want_live, want_spilled),
        "{}: mix_spill's peak",
        stack().name()
    );
    let live = f["live_grf"].as_array().unwrap();
    let spilled = f["spilled_grf"].as_array().unwrap();
    assert_eq!(live.len() as u64, u(&k["instructions"]));
    assert_eq!(spilled.len(), live.len());
    let at = u(&p["instruction"]) as usize;
    assert_eq!((&live[at], &spilled[at]), (&p["live"], &p["spilled"]));
    let most = live.iter().zip(spilled).map(|(a, b)| u(a) + u(b)).max();
    assert_eq!(most, Some(u(&p["grf"])));
    // The loop-free kernel's pressure is low.
    assert!(u(&c.flow("loop_none")["peak"]["grf"]) < 16);
}

/// The same kernels from IGC's dumps and from the module binaries alone
/// (`--isa binary`): the same figures. Debian 12's patch-token binaries do
/// not tell spills from private memory, so there the binary's scratch sends
/// are the dump's spills and fills; NEO 26's zebins tell, and every figure
/// is the same.
#[test]
fn dump_and_binary_sources_give_the_same_figures() {
    let dir = stack_temp_dir("reading");
    let dumps = capture_loops_and_mix(dir.path(), "dumps", "", "", &[]);
    let binary = capture_loops_and_mix(dir.path(), "binary", "", "", &["--isa", "binary"]);
    for name in LAUNCHED {
        assert_eq!(dumps.kernel(name)["isa_source"], "igc-dump");
        assert_eq!(binary.kernel(name)["isa_source"], "module-binary");
        let (mut a, mut b) = (dumps.flow(name).clone(), binary.flow(name).clone());
        if stack() == Stack::Debian12 {
            for f in [&mut a, &mut b] {
                for l in f["loops"].as_array_mut().unwrap() {
                    let m = &mut l["mix"];
                    let (s, fl) = (u(&m["spill"]), u(&m["fill"]));
                    m["store_scratch"] = (u(&m["store_scratch"]) + s).into();
                    m["load_scratch"] = (u(&m["load_scratch"]) + fl).into();
                    m["spill"] = 0.into();
                    m["fill"] = 0.into();
                }
            }
            let spills = &dumps.flow("mix_spill")["loops"][0]["mix"]["spill"];
            assert!(u(spills) > 0);
        }
        assert_eq!(a, b, "{name}");
    }
}

/// The analysis of each kernel's code begins while the command runs
/// (IGA's decoding of each created kernel's code, from its saved module
/// binary): the figures of the run's own report are those of a `collect`
/// after it, which analyses every code afresh, and of those that read each
/// code through IGA's KernelView API alone (`XPU_ASM_DECODER=kv`) and from
/// IGA's JSON of it alone (`json`); in the stack's default mode and in the
/// other one.
#[test]
fn the_analysis_begun_during_the_run_gives_the_figures_of_one_after_it() {
    let dir = stack_temp_dir("reading");
    let other = match stack() {
        Stack::Debian12 => "binary",
        Stack::Sid => "dump",
    };
    for (tag, extra) in [("default", vec![]), (other, vec!["--isa", other])] {
        let c = capture_loops_and_mix(dir.path(), tag, "", "", &extra);
        let out = c.out.to_str().unwrap();
        let again = run_xpu_asm(&["collect", "--json", out], &c.out);
        again.assert_status(0);
        let r: Value = serde_json::from_slice(&again.output.stdout).expect("collect's JSON");
        let flows = |r: &Value| -> Vec<(Value, Value)> {
            r["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| (k["name"].clone(), k["flow"].clone()))
                .collect()
        };
        let (run, after) = (flows(&c.report), flows(&r));
        assert_eq!(run.len(), LAUNCHED.len(), "{tag}: {run:?}");
        assert!(run.iter().all(|(_, f)| f.is_object()), "{tag}: {run:?}");
        assert_eq!(run, after, "{tag}");
        // Each code through IGA's KernelView API alone, and from IGA's
        // JSON of it alone: the same figures.
        for decoder in ["kv", "json"] {
            let mut cmd = Command::new(xpu_asm_run());
            cmd.args(["collect", "--json", out]);
            hermetic_without_no_color(&mut cmd);
            cmd.env("XPU_ASM_DECODER", decoder);
            let again = xpu_asm_tests::run(cmd, &c.out);
            again.assert_status(0);
            let r: Value = serde_json::from_slice(&again.output.stdout).expect("collect's JSON");
            assert_eq!(flows(&r), run, "{tag}: XPU_ASM_DECODER={decoder}");
        }
    }
    // Neither: named in each kernel's reason, with the values it takes.
    let c = capture_loops_and_mix(dir.path(), "bad-decoder", "", "", &[]);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["collect", "--json", c.out.to_str().unwrap()]);
    hermetic_without_no_color(&mut cmd);
    cmd.env("XPU_ASM_DECODER", "kvv");
    let r = xpu_asm_tests::run(cmd, &c.out);
    r.assert_status(0);
    let r: Value = serde_json::from_slice(&r.output.stdout).expect("collect's JSON");
    let reasons: Vec<&Value> = r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["flow_reason"])
        .collect();
    assert_eq!(reasons.len(), LAUNCHED.len());
    for why in reasons {
        assert_eq!(
            why,
            "not analysed: XPU_ASM_DECODER is \"kvv\"; set it to kv or json, or unset it"
        );
    }
}

/// Built with `-g`, the same kernels from IGC's dumps and from the module
/// binaries alone (`--isa binary`). On sid, IGC 2's zebin carries DWARF line
/// tables, and the binary's `.asm` gets IGC's `// File:` and `// Line`
/// comments from them: the same `source` (files, lines, their text, the
/// prolog's instructions without a line), the same `show --lines` and the
/// same source lines of each loop, but where the dump and the DWARF place
/// an instruction apart (see docs/limits.md): in `loop_nested`, 4 address
/// instructions IGC's DWARF has no row for (the dump puts them under the
/// inner `for`, line 28; the row before them is the outer one's, 26); in
/// `mix_spill`, 3 copies the register allocator made in the loop (the dump
/// gives them the kernel's last line, 64, the DWARF the row around them,
/// 57). On Debian 12 the driver's binaries are patch-token programs without
/// line tables: no source lines, no loop's lines.
#[test]
fn source_lines_from_dumps_and_from_binaries() {
    let dir = stack_temp_dir("reading");
    let dumps = capture_loops_and_mix(dir.path(), "g-dumps", "-g", "-g", &[]);
    let binary = capture_loops_and_mix(dir.path(), "g-binary", "-g", "-g", &["--isa", "binary"]);
    let show_lines = |c: &Captured, name: &str| -> String {
        let r = run_xpu_asm(&["show", c.out.to_str().unwrap(), name, "--lines"], &c.out);
        r.assert_status(0);
        // The header names the capture's ISA file, and its origin says
        // what each ISA source can tell (a binary's cannot tell IGC's
        // compile from NEO's cache); the rest is the lines.
        let mut in_origin = false;
        r.stdout()
            .lines()
            .filter(|l| {
                let label = l.trim_start();
                if label.starts_with("origin:") {
                    in_origin = true;
                } else if !l.starts_with("                ") {
                    in_origin = false;
                }
                !in_origin && !label.starts_with("ISA:")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for name in LAUNCHED {
        let (d, b) = (dumps.kernel(name), binary.kernel(name));
        assert_eq!(b["isa_source"], "module-binary", "{name}");
        assert_eq!(d["instructions"], b["instructions"], "{name}");
        let dump_lines: Vec<u64> = d["source"]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| u(&l["line"]))
            .collect();
        assert!(dump_lines.len() >= 3, "{name}: {:#}", d["source"]);
        let loop_lines =
            |k: &Value| -> Vec<Vec<u64>> { loops(&k["flow"]).iter().map(lines_of).collect() };
        if stack() == Stack::Debian12 {
            assert!(b["source"].is_null(), "{name}: {:#}", b["source"]);
            assert_eq!(b["flow"]["lines"], false, "{name}");
            assert!(loop_lines(b).iter().all(Vec::is_empty), "{name}");
            let r = run_xpu_asm(
                &["show", binary.out.to_str().unwrap(), name, "--lines"],
                &binary.out,
            );
            r.assert_status(1);
            assert!(
                r.stderr()
                    .contains("has no line information; build it with -g"),
                "{}",
                r.ctx()
            );
            continue;
        }
        let moved: &[(u64, i64)] = match name {
            "loop_nested" => &[(26, 4), (28, -4)],
            "mix_spill" => &[(57, 3), (64, -3)],
            _ => &[],
        };
        let mut want = d["source"].clone();
        for (line, by) in moved {
            let l = want["lines"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|l| l["line"] == *line)
                .unwrap();
            l["instructions"] = (u(&l["instructions"]) as i64 + by).into();
        }
        assert_eq!(b["source"], want, "{name}");
        if moved.is_empty() {
            assert_eq!(
                show_lines(&binary, name),
                show_lines(&dumps, name),
                "{name}"
            );
        }
        let (dl, bl) = (loop_lines(d), loop_lines(b));
        if name == "mix_spill" {
            // The copies the dump puts under line 64 are in the loop.
            assert_eq!(
                (dl.clone(), bl.clone()),
                (vec![vec![54, 57, 64]], vec![vec![54, 57]])
            );
        } else {
            assert_eq!(bl, dl, "{name}");
        }
        assert_eq!(b["flow"]["lines"], true, "{name}");
    }
}

// ---------------------------------------------------------------------------
// diff

/// Default against `-cl-opt-disable`: the loops and pressure that changed;
/// `--fail-on loop-spill` names the loop that starts spilling; `pressure+N`
/// fails exactly above the largest growth.
#[test]
fn diff_shows_loop_and_pressure_changes() {
    let dir = stack_temp_dir("reading");
    let opt = capture_loops_and_mix(dir.path(), "opt", "", "", &[]);
    let o0 = capture_loops_and_mix(dir.path(), "o0", "", "-cl-opt-disable", &[]);
    let (a, b) = (o0.out.display().to_string(), opt.out.display().to_string());
    let r = run_xpu_asm(&["diff", &a, &b, "--json"], &opt.out);
    r.assert_status(0);
    let d: Value = serde_json::from_str(&r.stdout()).expect("diff --json");
    let kd = d["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "mix_spill")
        .expect("mix_spill changed");
    let changed: Vec<&str> = kd["changed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert!(
        changed.contains(&"pressure") && changed.contains(&"loop_spills"),
        "{kd:#}"
    );
    assert_eq!(kd["b"]["pressure"], opt.flow("mix_spill")["peak"]["grf"]);
    assert_eq!(kd["a"]["pressure"], o0.flow("mix_spill")["peak"]["grf"]);
    assert_eq!(
        kd["a"]["loops"].as_array().unwrap().len(),
        loops(o0.flow("mix_spill")).len()
    );

    let r = run_xpu_asm(
        &[
            "diff",
            &a,
            &b,
            "--fail-on",
            "loop-spill",
            "--color",
            "never",
        ],
        &opt.out,
    );
    r.assert_status(1);
    assert!(r.stdout().contains("loop[1].spills"), "{}", r.stdout());
    assert!(
        r.stderr()
            .contains("--fail-on loop-spill: mix_spill: loop 1 ("),
        "{}",
        r.stderr()
    );
    run_xpu_asm(&["diff", &b, &b, "--fail-on", "loop-spill"], &opt.out).assert_status(0);

    // The largest growth of peak pressure, A to B, and the largest in percent.
    let pressure = |c: &Captured, n: &str| u(&c.flow(n)["peak"]["grf"]) as i64;
    let most = LAUNCHED
        .iter()
        .map(|n| pressure(&opt, n) - pressure(&o0, n))
        .max()
        .unwrap();
    assert!(most > 0);
    let pct = LAUNCHED
        .iter()
        .map(|n| (pressure(&opt, n) - pressure(&o0, n)) as f64 * 100.0 / pressure(&o0, n) as f64)
        .fold(f64::MIN, f64::max)
        .ceil() as i64;
    for (cond, code) in [
        (format!("pressure+{most}"), 0),
        (format!("pressure+{}", most - 1), 1),
        (format!("pressure+{pct}%"), 0),
        (format!("pressure+{}%", pct - 1), 1),
    ] {
        let r = run_xpu_asm(&["diff", &a, &b, "--fail-on", &cond], &opt.out);
        r.assert_status(code);
    }
}
