//! pyopencl from PyPI (the venv of scripts/pyopencl-venv.sh): its wheel
//! bundles an ICD loader of its own under another file name
//! (`pyopencl/.libs/libOpenCL-<hash>.so.1.0.0`), whose exported functions
//! the extension's calls bind to the interposer's first, as they would to
//! the system loader's. The workload, tests/opencl/pyopencl_ops.py, builds
//! two programs from source with a kernel of the same name in each and
//! enqueues each kernel a known number of times. Without pyopencl's
//! program cache (`PYOPENCL_NO_CACHE=1`) IGC compiles them in the run; with
//! it, the second run creates them from the binaries the first one cached,
//! IGC compiles nothing, and their ISA is IGA's of those binaries.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_tests::*;

/// Each launched kernel by (name, program): (launches, status, isa_source,
/// api, instructions).
type Rows = BTreeMap<(String, String), (u64, String, String, String, u64)>;

/// A row without its instruction count.
type Row = ((String, String), (u64, String, String, String));

/// Launches of py_scale, of py_common in program A, in program B.
const COUNTS: [u64; 3] = [3, 5, 7];

/// `xpu-asm-run --emulate pvc --isa dump -o OUT -- python pyopencl_ops.py`,
/// with pyopencl's cache in `cache` (`XDG_CACHE_HOME`), or none.
fn capture_pyopencl_ops(out: &Path, cache: &Path, no_cache: bool) -> Run {
    let mut c = Capture::emulating("pvc", out)
        .options(["--isa", "dump", "-q"])
        .program(pyopencl_venv().join("bin/python"))
        .arg(workspace_dir().join("tests/opencl/pyopencl_ops.py"))
        .args(COUNTS.map(|n| n.to_string()))
        .hermetic()
        .env("XDG_CACHE_HOME", cache)
        .env_remove("PYOPENCL_NO_CACHE");
    if no_cache {
        c = c.env("PYOPENCL_NO_CACHE", "1");
    }
    c.run_ok()
}

/// Each launched kernel by (name, program: `A` for the first module's,
/// `B` for the second's): (launches, status, isa_source, api,
/// instructions). And what the two modules were made from.
fn pyopencl_kernels(run: &Run) -> (Rows, Vec<String>) {
    let rec = only_record(&run.out);
    let label: BTreeMap<&str, &str> = rec
        .modules
        .values()
        .zip(["A", "B"])
        .map(|(m, l)| (m.sha256.as_str(), l))
        .collect();
    let from = rec
        .modules
        .values()
        .map(|m| m.from.clone().unwrap_or_default())
        .collect();
    let report = run.report();
    let s = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let rows = report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            let program = label
                .get(k["module_sha256"].as_str().unwrap_or(""))
                .unwrap_or(&"?");
            let row = (
                k["launches"].as_u64().unwrap_or(0),
                s(&k["status"]),
                s(&k["isa_source"]),
                s(&k["api"]),
                k["instructions"].as_u64().unwrap_or(0),
            );
            ((s(&k["name"]), program.to_string()), row)
        })
        .collect();
    (rows, from)
}

/// The three kernels with their counts, all matched, of API `opencl`,
/// their ISA from `source`.
fn assert_counted(run: &Run, rows: &Rows, source: &str) {
    let got: Vec<Row> = rows
        .iter()
        .map(|(k, v)| (k.clone(), (v.0, v.1.clone(), v.2.clone(), v.3.clone())))
        .collect();
    let row = |n: &str, p: &str, c: u64| {
        let v = (
            c,
            "matched".to_string(),
            source.to_string(),
            "opencl".to_string(),
        );
        ((n.to_string(), p.to_string()), v)
    };
    assert_eq!(
        got,
        [
            row("py_common", "A", COUNTS[1]),
            row("py_common", "B", COUNTS[2]),
            row("py_scale", "A", COUNTS[0]),
        ],
        "{}",
        run.ctx()
    );
    // Each enqueue is `kernel(queue, (64,), None, buf)`: no local size, so
    // one shape of the driver's group size over a global size of 64.
    let report = run.report();
    for k in report["kernels"].as_array().into_iter().flatten() {
        let shapes: Vec<(Value, Value, Value, Value)> = k["shapes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    s["group_size"].clone(),
                    s["group_count"].clone(),
                    s["global_size"].clone(),
                    s["launches"].clone(),
                )
            })
            .collect();
        let want = (
            Value::Null,
            Value::Null,
            serde_json::json!([64, 1, 1]),
            k["launches"].clone(),
        );
        assert_eq!(
            shapes,
            [want],
            "{}: shapes of {}\n{}",
            stack_info(),
            k["name"],
            run.ctx()
        );
    }
}

#[test]
fn without_its_cache_igc_compiles_and_every_enqueue_is_counted() {
    let dir = temp_dir("pyopencl");
    let run = capture_pyopencl_ops(&dir.path().join("out"), &dir.path().join("cache"), true);
    let (rows, from) = pyopencl_kernels(&run);
    assert_eq!(from, ["source", "source"], "{}", run.ctx());
    assert_counted(&run, &rows, "igc-dump");
}

#[test]
fn with_its_cache_the_second_run_gets_the_isa_of_the_cached_binaries() {
    let dir = temp_dir("pyopencl-cache");
    let cache = dir.path().join("cache");
    let first = capture_pyopencl_ops(&dir.path().join("run1"), &cache, false);
    let (one, from) = pyopencl_kernels(&first);
    assert_eq!(from, ["source", "source"], "{}", first.ctx());
    assert_counted(&first, &one, "igc-dump");
    let second = capture_pyopencl_ops(&dir.path().join("run2"), &cache, false);
    let (two, from) = pyopencl_kernels(&second);
    assert_eq!(from, ["binary", "binary"], "{}", second.ctx());
    assert_counted(&second, &two, "module-binary");
    // The same code: IGC's dump in run 1, IGA's disassembly in run 2.
    let instrs = |r: &Rows| -> Vec<u64> { r.values().map(|v| v.4).collect() };
    assert!(instrs(&one).iter().all(|&n| n > 0), "{}", first.ctx());
    assert_eq!(instrs(&two), instrs(&one), "{}", second.ctx());
}
