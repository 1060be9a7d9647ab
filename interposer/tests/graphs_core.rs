//! The counting core's rules for graphs and mutable command lists, driven
//! directly with handles shaped like the driver's (the integration test
//! tests/tests/graphs.rs runs them on the real driver): captured appends are
//! appended, not launched; each append of an executable graph runs them;
//! graphs in regular lists run with each execution, graphs in a capture
//! become part of it; a swapped mutable command runs its new kernel from the
//! next execution on; regular lists appended to an immediate list run, or are
//! captured; destroyed graphs are forgotten and their handles reused.
//!
//! As in stress.rs, the interposer reads `XPU_ASM_OUT` when this binary
//! loads, so the test runs itself again with it set and reads the child's
//! record.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use xpu_asm_interposer::state;
use xpu_asm_interposer::ze::queries::capture_graph;
use xpu_asm_record::{read, OUT_ENV, RECORDS_DIR};

const TEST_NAME: &str = "graph_rules_count_each_launch_when_it_runs";
const CHILD_ENV: &str = "XPU_ASM_GRAPHS_CORE_CHILD";

const MODULE: usize = 0x6600_0000_0300;
const IMMEDIATE: usize = 0x7700_0000_01c0;
const BESIDE: usize = 0x7700_0000_0380;
const REGULAR: usize = 0x7800_0000_01c0;
const MUTABLE: usize = 0x7800_0000_0380;
const GRAPH: usize = 0x7900_0000_0100;
const INNER_GRAPH: usize = 0x7900_0000_0200;
const EXEC: usize = 0x7a00_0000_0100;
const INNER_EXEC: usize = 0x7a00_0000_0200;
const NEVER_SEEN_EXEC: usize = 0x7a00_0000_0300;

/// Kernel names and their handles.
const KERNELS: [&str; 9] = [
    "captured",
    "nested",
    "outer",
    "in_regular",
    "beside",
    "lists",
    "old",
    "new",
    "reused",
];

fn kernel_handle(name: &str) -> usize {
    let i = KERNELS.iter().position(|k| *k == name).expect("a kernel");
    0x5555_0000_0000 + (i + 1) * 0x240
}

fn launch(list: usize, name: &str, times: u64) {
    for _ in 0..times {
        state::launch_with(
            list,
            kernel_handle(name),
            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
        );
    }
}

fn replay(list: usize, exec: usize, times: u64) {
    for _ in 0..times {
        state::graphs::graph_appended(list, exec);
    }
}

fn graph_child() {
    let names: Vec<Vec<u8>> = KERNELS.iter().map(|k| k.as_bytes().to_vec()).collect();
    state::modules::module_created(
        MODULE,
        0,
        &[state::modules::ModuleInput {
            bytes: b"spirv",
            build_flags: b"",
            spec_constants: Vec::new(),
        }],
        &names,
        Err("not built".into()),
        state::modules::DeviceRef::UNKNOWN,
    );
    for k in KERNELS {
        state::modules::kernel_created(MODULE, k.as_bytes(), kernel_handle(k), None);
    }
    state::list_created(IMMEDIATE, true);
    state::list_created(BESIDE, true);
    state::list_created(REGULAR, false);
    state::list_created(MUTABLE, false);

    // A graph of 2 appends, instantiated, appended 3 times to a capture
    // that also appends `outer` once; the outer graph replayed 4 times.
    state::graphs::capture_began(IMMEDIATE, Some(INNER_GRAPH), capture_graph);
    launch(IMMEDIATE, "nested", 2);
    state::graphs::capture_ended(IMMEDIATE, INNER_GRAPH);
    state::graphs::graph_instantiated(INNER_GRAPH, INNER_EXEC);
    state::graphs::capture_began(IMMEDIATE, None, capture_graph);
    launch(IMMEDIATE, "outer", 1);
    replay(IMMEDIATE, INNER_EXEC, 3);
    // Beside the capture: launched (the driver cannot be asked here, so
    // the list counts as not capturing).
    launch(BESIDE, "beside", 5);
    state::graphs::capture_ended(IMMEDIATE, GRAPH);
    state::graphs::graph_instantiated(GRAPH, EXEC);
    replay(IMMEDIATE, EXEC, 4);
    // After the capture: an immediate launch again.
    launch(IMMEDIATE, "beside", 1);

    // A plain capture of 3, replayed 5 times, and the same executable graph
    // in a regular list executed twice (on top of a regular append).
    state::graphs::graph_created(0x7900_0000_0300);
    state::graphs::capture_began(IMMEDIATE, Some(0x7900_0000_0300), capture_graph);
    launch(IMMEDIATE, "captured", 3);
    state::graphs::capture_ended(IMMEDIATE, 0x7900_0000_0300);
    state::graphs::graph_instantiated(0x7900_0000_0300, 0x7a00_0000_0400);
    replay(IMMEDIATE, 0x7a00_0000_0400, 5);
    launch(REGULAR, "in_regular", 1);
    state::graphs::graph_appended(REGULAR, 0x7a00_0000_0400);
    state::execute(&[REGULAR]);
    state::execute(&[REGULAR]);

    // A regular list of 2 appended to an immediate list 3 times; then to a
    // capturing one once, whose graph is replayed twice.
    state::list_created(0x7800_0000_0540, false);
    launch(0x7800_0000_0540, "lists", 2);
    let lists = [0x7800_0000_0540usize as *mut std::ffi::c_void];
    for _ in 0..3 {
        state::immediate_append(IMMEDIATE, &lists);
    }
    state::graphs::capture_began(IMMEDIATE, Some(0x7900_0000_0400), capture_graph);
    state::immediate_append(IMMEDIATE, &lists);
    state::graphs::capture_ended(IMMEDIATE, 0x7900_0000_0400);
    state::graphs::graph_instantiated(0x7900_0000_0400, 0x7a00_0000_0500);
    replay(IMMEDIATE, 0x7a00_0000_0500, 2);

    // A mutable list: 2 appends of `old`, the second command 7; 3
    // executions, command 7 swapped to `new`, 4 executions.
    launch(MUTABLE, "old", 1);
    state::graphs::command_id(MUTABLE, 7, &[]);
    launch(MUTABLE, "old", 1);
    state::execute(&[MUTABLE]);
    state::execute(&[MUTABLE]);
    state::execute(&[MUTABLE]);
    let new = [kernel_handle("new") as *mut std::ffi::c_void];
    state::graphs::kernels_swapped(MUTABLE, &[7], &new, None);
    // A command never handed out: warned, nothing changes.
    state::graphs::kernels_swapped(MUTABLE, &[8], &new, None);
    for _ in 0..4 {
        state::execute(&[MUTABLE]);
    }

    // An executable graph destroyed, its handle reused for another graph:
    // the new one's launches; one never instantiated here: nothing.
    state::graphs::executable_destroyed(EXEC);
    state::graphs::capture_began(IMMEDIATE, Some(0x7900_0000_0500), capture_graph);
    launch(IMMEDIATE, "reused", 1);
    state::graphs::capture_ended(IMMEDIATE, 0x7900_0000_0500);
    state::graphs::graph_instantiated(0x7900_0000_0500, EXEC);
    replay(IMMEDIATE, EXEC, 6);
    replay(IMMEDIATE, NEVER_SEEN_EXEC, 9);
    state::graphs::graph_destroyed(GRAPH);
}

#[test]
fn graph_rules_count_each_launch_when_it_runs() {
    if std::env::var_os(CHILD_ENV).is_some() {
        graph_child();
        return;
    }
    let scratch = tempdir();
    let out = scratch.join("out");
    let exe = std::env::current_exe().expect("the test knows its own path");
    let output = Command::new(&exe)
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(OUT_ENV, &out)
        .env(CHILD_ENV, "1")
        .stdin(Stdio::null())
        .output()
        .expect("the child runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the child failed:\n{stderr}");
    let recs = read::read_dir(&out.join(RECORDS_DIR)).expect("the child's record");
    assert_eq!(recs.len(), 1, "{recs:#?}");
    let got: BTreeMap<String, (u64, u64)> = recs[0]
        .kernels
        .values()
        .map(|k| {
            (
                String::from_utf8_lossy(&k.name).into_owned(),
                (k.launches, k.appended),
            )
        })
        .filter(|(_, c)| *c != (0, 0))
        .collect();
    let want: BTreeMap<String, (u64, u64)> = [
        // 2 captured, 3 times in the outer graph, replayed 4 times.
        ("nested", (24, 2)),
        ("outer", (4, 1)),
        // 5 beside the capture and 1 after it.
        ("beside", (6, 6)),
        // 3 captured: 5 replays, and 2 executions of the regular list.
        ("captured", (21, 3)),
        ("in_regular", (2, 1)),
        // 2 in a list: 3 immediate appends, and 1 captured replayed twice.
        ("lists", (10, 2)),
        // The unswapped command 7 runs, the swapped one from then on.
        ("old", (3 + 3 + 4, 2)),
        ("new", (4, 1)),
        ("reused", (6, 1)),
    ]
    .into_iter()
    .map(|(k, c)| (k.to_string(), c))
    .collect();
    assert_eq!(got, want, "child's stderr:\n{stderr}");
    for w in [
        "xpu-asm: zeCommandListUpdateMutableCommandKernelsExp: command id 8 of command list 0x780000000380 \
         was never handed out",
        "xpu-asm: zeCommandListAppendGraphExt: executable graph 0x7a0000000300",
    ] {
        assert!(stderr.contains(w), "no warning {w:?} in:\n{stderr}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("xpu-asm-graphs-core-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a scratch folder");
    d
}
