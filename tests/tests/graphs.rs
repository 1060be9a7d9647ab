//! Graphs and mutable command lists: a launch counts when it runs.
//!
//! tests/workload/graph.c runs each counting rule on a kernel of its own
//! (tests/workload/kernels_graph.cl), with counts chosen so that a wrong rule
//! gives another number than the right one: a launch captured into a graph
//! and replayed R times counts R times (counting the captured appends as
//! launches would give C, ignoring nesting C*R instead of C*S*R, ...). The
//! program runs under `xpu-asm-run --emulate` in each way it can reach the
//! functions: the loader's exports, its DDI tables, `dlsym` by name, and
//! `zeDriverGetExtensionFunctionAddress` (the ...Exp names NEO 26 hands out,
//! as SYCL's v2 adapter gets them), and the report must give each kernel's
//! exact launches and appends, every kernel matched to its ISA.
//!
//! Only NEO 26 (the sid stack) has the graph extension. On Debian 12's stack
//! (loader 1.8, NEO 22.43) the same tests check what is true there: the
//! driver reports none of the graph or mutable command list extensions, and
//! the program's launches outside graphs are counted exactly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xpu_asm_tests::*;

/// The ways graph.c reaches the functions (`--via`).
const GRAPH_WAYS: [&str; 4] = ["link", "ddi", "dlsym", "gefa"];

/// The steps of the run on NEO 26 (see graph.c's usage for each).
const STEPS: &[&str] = &[
    "extensions",
    "imm:g_immediate:7",
    "capture:g_captured:3:5",
    "into:g_into:2:4",
    "regular:g_in_regular:3:6",
    "nested:g_nested:2:g_outer:3:2",
    "fork:g_forked:3:g_beside:11:3",
    "lists:g_lists:2:3:2",
    "mutable:g_mutable_old:g_mutable_new:4:6",
    "unseen:g_unseen:2:3",
    "reuse:g_reused_1:13:g_reused_2:14",
    "badswap:g_bad_swap:g_mutable_old:b/only_in_b:3:5",
    "badid:g_bad_id:g_mutable_new:8:9",
];

/// `(kernel, launches, appended)` the report must give for [`STEPS`], and
/// the rule each shows.
const EXPECTED: &[(&str, u64, u64)] = &[
    // Immediate launches count when appended: 7.
    ("g_immediate", 7, 7),
    // 3 appends captured (appended, not launched), the graph appended 5
    // times: 15 launches (3 if captured appends counted and replays not).
    ("g_captured", 15, 3),
    // The same, captured into a graph from zeGraphCreateExt: 2 x 4.
    ("g_into", 8, 2),
    // A graph of 3 appended to a regular list, executed 6 times: 18.
    ("g_in_regular", 18, 3),
    // A graph of 2 appended 3 times inside a capture, the outer graph
    // appended twice: 2 x 3 x 2 = 12 (4 without the nesting).
    ("g_nested", 12, 2),
    // The outer graph's own append: 2 replays.
    ("g_outer", 2, 1),
    // 3 appends on a list the capture forked onto, 3 replays: 9 (3 if the
    // fork's appends were taken for launches).
    ("g_forked", 9, 3),
    // 11 launches on another immediate list while the capture is active:
    // launched at once, 11.
    ("g_beside", 11, 11),
    // A regular list of 2 appended to an immediate list 3 times by
    // ...ListsExp and twice by ...ListsWithParameters: 10.
    ("g_lists", 10, 2),
    // A mutable command runs its kernel 4 times, is swapped, runs the new
    // kernel 6 times (appended once by the swap).
    ("g_mutable_old", 4, 1),
    ("g_mutable_new", 6, 1),
    // An executable graph destroyed and its handle reused for another: 13
    // and 14 replays, each for its own kernel.
    ("g_reused_1", 13, 1),
    ("g_reused_2", 14, 1),
    // Swapped to a kernel of another module that the command's list of
    // kernels did not name: a warning; NEO accepts it, so the 5 later runs
    // are that kernel's.
    ("g_bad_swap", 3, 1),
    ("only_in_b", 5, 1),
    // Its command id came from the driver's own function, out of every
    // hook's sight: the swap is warned about and its runs stay with the
    // kernel appended, 8 + 9.
    ("g_bad_id", 17, 1),
    // g_unseen: captured and instantiated through the driver's own
    // functions; its graph's appends are warned about and not counted, so
    // it is not in the report.
];

/// The warnings the run must give (on the interposer's channel, stderr).
const WARNINGS: &[&str] = &[
    "xpu-asm: zeCommandListAppendGraphExt: executable graph 0x",
    "was not instantiated from a graph captured where xpu-asm could see it; its launches are not counted",
    "xpu-asm: zeCommandListUpdateMutableCommandKernelsExp: kernel 0x",
    "is not one of the 2 kernels zeCommandListGetNextCommandIdWithKernelsExp listed for command",
    "was never handed out by zeCommandListGetNextCommandIdExp or zeCommandListGetNextCommandIdWithKernelsExp; \
     the driver accepted it, but its launches stay with the old kernel",
];

struct Built {
    /// `--via link` (linked with -lze_loader).
    link: PathBuf,
    /// The other ways (the loader by dlopen).
    dl: PathBuf,
    kernels: PathBuf,
    module_b: PathBuf,
}

fn build_graphs_step(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        o.status.success(),
        "{shown} failed on {}:\n{}{}",
        stack_info(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// graph.c in its two builds (against this stack's loader headers) and the
/// kernels' SPIR-V, built once per test process.
fn built_graphs() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        require_stack();
        let dir = build_dir().join(format!("graph-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a build folder");
        let src = workload_src_dir();
        let gcc = |out: &Path, defines: &[&str], libs: &[&str]| {
            build_graphs_step(
                Command::new("gcc")
                    .args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                    .args(defines)
                    .arg(src.join("graph.c"))
                    .arg("-o")
                    .arg(out)
                    .args(libs)
                    .arg("-ldl"),
            );
        };
        let link = dir.join("graph-link");
        gcc(&link, &["-DVIA_LINK"], &["-lze_loader"]);
        let dl = dir.join("graph-dl");
        // Only libc: the loader comes in by dlopen.
        gcc(&dl, &[], &[]);
        build_graphs_step(
            Command::new("ocloc")
                .current_dir(&dir)
                .args(["compile", "-file"])
                .arg(src.join("kernels_graph.cl"))
                .args(["-spv_only", "-device", "pvc", "-output", "kernels_graph"])
                .args(["-output_no_suffix", "-q"]),
        );
        Built {
            link,
            dl,
            kernels: dir.join("kernels_graph.spv"),
            module_b: spirv("b"),
        }
    })
}

/// `xpu-asm-run --emulate product` of graph.c `--via via` with `steps`.
fn capture_graphs(dir: &Path, product: &str, via: &str, steps: &[&str]) -> Run {
    let b = built_graphs();
    let out = dir.join(format!("{product}-{via}"));
    Capture::emulating(product, &out)
        .option("--quiet")
        .program(if via == "link" { &b.link } else { &b.dl })
        .args(["--via", via])
        .module("g", &b.kernels)
        .module("b", &b.module_b)
        .args(steps)
        .dir(dir)
        .run_ok()
}

/// `kernel -> (launches, appended)` of the report, each kernel checked to be
/// matched to its ISA.
fn counted(r: &Run, tag: &str) -> BTreeMap<String, (u64, u64)> {
    let report = r.report();
    let mut got = BTreeMap::new();
    for k in report["kernels"].as_array().expect("kernels") {
        let name = k["name"].as_str().unwrap_or("").to_string();
        assert_eq!(
            (k["status"].as_str(), k["asm"].is_string()),
            (Some("matched"), true),
            "{tag}: kernel {name} is not matched to its ISA\n{}",
            r.ctx()
        );
        let n = |f: &str| k[f].as_u64().unwrap_or(u64::MAX);
        got.insert(name, (n("launches"), n("appended")));
    }
    got
}

/// The whole graph workload on NEO 26 on `product`, in every way.
fn graphs_on_neo26(product: &str) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let want: BTreeMap<String, (u64, u64)> = EXPECTED
        .iter()
        .map(|(k, l, a)| (k.to_string(), (*l, *a)))
        .collect();
    let mut reused = Vec::new();
    for via in GRAPH_WAYS {
        let tag = format!("{} {product} --via {via}", stack_info());
        let r = capture_graphs(dir.path(), product, via, STEPS);
        // Whether NEO gave the second executable graph the first's handle
        // (it mostly does; its allocator decides): the counts must be exact
        // either way, and the reuse must have happened in one run at least.
        let reuse = r
            .stdout_lines()
            .into_iter()
            .find(|l| l.starts_with("graph: reuse: "))
            .unwrap_or_else(|| panic!("{tag}: no reuse line\n{}", r.ctx()));
        match reuse.as_str() {
            "graph: reuse: the second executable graph has the first's handle" => reused.push(via),
            "graph: reuse: the second executable graph does not have the first's handle" => {}
            other => panic!("{tag}: {other:?}\n{}", r.ctx()),
        }
        assert_eq!(counted(&r, &tag), want, "{tag}\n{}", r.ctx());
        let stdout = r.stdout();
        for line in [
            "graph: extension ZE_extension_record_replay_graph 1.0",
            "graph: extension ZE_experimental_mutable_command_list 1.1",
            // NEO 26's answers of zeCommandListIsGraphCaptureEnabledExt: the
            // experimental values, true for the forked list, false beside.
            "graph: fork: capture state of the forked list 0x7fff0000, of the list beside 0x7fff0001",
            "graph: done",
        ] {
            assert!(
                stdout.lines().any(|l| l == line),
                "{tag}: no line {line:?}\n{}",
                r.ctx()
            );
        }
        let stderr = r.stderr();
        for w in WARNINGS {
            assert!(stderr.contains(w), "{tag}: no warning {w:?}\n{}", r.ctx());
        }
        assert_eq!(
            stderr.matches("xpu-asm: ").count(),
            3,
            "{tag}: three warnings, one per bad input\n{}",
            r.ctx()
        );
    }
    assert!(
        !reused.is_empty(),
        "{} {product}: in no way did NEO reuse the destroyed executable graph's handle",
        stack_info()
    );
}

/// On Debian 12's stack: no graph extension, and the launches outside
/// graphs counted exactly, in every way.
fn no_graphs_on_neo22(product: &str) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for via in GRAPH_WAYS {
        let tag = format!("{} {product} --via {via}", stack_info());
        let r = capture_graphs(
            dir.path(),
            product,
            via,
            &["extensions", "imm:g_immediate:7"],
        );
        let lines = r.stdout_lines();
        assert_eq!(lines.len(), 2, "{tag}\n{}", r.ctx());
        assert!(
            lines[0].starts_with(
                "graph: no graph or mutable command list extension among the driver's "
            ),
            "{tag}\n{}",
            r.ctx()
        );
        assert_eq!(lines[1], "graph: done", "{tag}\n{}", r.ctx());
        let want = BTreeMap::from([("g_immediate".to_string(), (7, 7))]);
        assert_eq!(counted(&r, &tag), want, "{tag}\n{}", r.ctx());
        assert!(!r.stderr().contains("xpu-asm: "), "{tag}\n{}", r.ctx());
    }
}

#[test]
fn graphs_and_mutable_lists_on_pvc() {
    match stack() {
        Stack::Sid => graphs_on_neo26("pvc"),
        Stack::Debian12 => no_graphs_on_neo22("pvc"),
    }
}

/// Battlemage (Xe2) on NEO 26; NEO 22.43 has no Xe2, so there the other
/// product it emulates, dg2.
#[test]
fn graphs_and_mutable_lists_on_bmg() {
    match stack() {
        Stack::Sid => graphs_on_neo26("bmg"),
        Stack::Debian12 => no_graphs_on_neo22("dg2"),
    }
}
