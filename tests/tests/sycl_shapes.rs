//! dpnp's launch shapes on today's stack (the sid root; see sycl2026.rs
//! for the SYCL 2026 venv and SYCL's two Level Zero adapters): the
//! shapes xpu-asm reports for every kernel of tests/sycl/dpnp_ops.py equal
//! an independent count, the Unified Runtime's tracing layer inside the
//! SYCL runtime above both adapters
//! ([`xpu_asm_tests::sycl2026::ur_shapes`]), which involves nothing of
//! xpu-asm: per kernel, each launch's global size and local size (or the
//! adapter's choice, where SYCL gave none) and how many launches had them.
//! That trace prints the first dimension of each size only, so the same
//! run has a second independent count in all three dimensions: a tracer of
//! the Level Zero loader's own tracing layer
//! ([`xpu_asm_tests::sycl2026::ze_tracer`], tests/shim/ze_tracer.c), below
//! both adapters, which writes each launch's group size and group count.
//! The report's shapes must equal both, exactly, launch for launch.
//!
//! pvc through the v1 adapter (`zeKernelSetGroupSize` and
//! `zeCommandListAppendLaunchKernel`), bmg through v2
//! (`zeCommandListAppendLaunchKernelWithArguments`, its group sizes passed
//! with each launch).

use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_tests::sycl2026::{
    dpnp_venv, neo26_env, resident_shim, ur_shapes, ze_trace_shapes, ze_tracer, Adapter, Platform,
    SidCommand, UrSizes, ZeShape, BMG, PVC,
};
use xpu_asm_tests::*;

/// dpnp_ops.py's operations and how often each is called (as sycl2026.rs).
const OPS: [&str; 7] = [
    "1", "matmul=7", "add=2", "sin=3", "sum=4", "where=5", "astype=6",
];

/// Per kernel name, each launch shape and how many launches had it.
type Shapes<K> = BTreeMap<String, BTreeMap<K, u64>>;

/// dpnp_ops.py under xpu-asm-run on `p`, with the UR trace on and the
/// loader's tracing layer traced: the report, the UR trace's sizes and
/// the tracer's shapes per kernel.
fn run_dpnp(p: &Platform, dir: &Path) -> (serde_json::Value, Shapes<UrSizes>, Shapes<ZeShape>) {
    let venv = dpnp_venv();
    let trace = dir.join("ur-trace.txt");
    let ze_trace = dir.join("ze-trace");
    let out = dir.join("cap");
    let mut sc = SidCommand::new(xpu_asm_run(), dir);
    sc.args(["--quiet", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/sycl/dpnp_ops.py"))
        .args(OPS)
        .envs(neo26_env(p.product))
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("UR_ENABLE_LAYERS", "UR_LAYER_TRACING")
        .env(
            "UR_LOG_TRACING",
            format!("level:info;output:file,{}", trace.display()),
        )
        .env("ZE_ENABLE_TRACING_LAYER", "1")
        .env("XPU_ASM_TEST_ZE_TRACE", &ze_trace);
    let tracer = ze_tracer();
    if p.adapter == Adapter::V2 {
        let shim = resident_shim();
        let both = format!("{} {}", shim.display(), tracer.display());
        sc.env("LD_PRELOAD", both)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
    } else {
        sc.env("LD_PRELOAD", &tracer);
    }
    let mut cmd = sc.command();
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let ctx = describe(&shown, &output, dir);
    assert!(
        output.status.success(),
        "{} {}: dpnp_ops.py failed\n{ctx}",
        stack_info(),
        p.product
    );
    let text = std::fs::read_to_string(&trace).unwrap_or_else(|e| {
        panic!(
            "{}: no UR trace at {}: {e}\n{ctx}",
            p.product,
            trace.display()
        )
    });
    let ur = ur_shapes(&text).unwrap_or_else(|e| panic!("{}: the UR trace: {e}", p.product));
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("report.json"))
            .unwrap_or_else(|e| panic!("{}: no report: {e}\n{ctx}", p.product)),
    )
    .expect("report.json is JSON");
    let ze = ze_trace_shapes(&ze_trace)
        .unwrap_or_else(|e| panic!("{}: the tracing layer's count: {e}\n{ctx}", p.product));
    (report, ur, ze)
}

/// The report's shapes of every kernel in the tracer's terms: group size
/// and group count, all three dimensions.
fn reported_3d(report: &serde_json::Value, tag: &str) -> Shapes<ZeShape> {
    let mut out: Shapes<ZeShape> = BTreeMap::new();
    for k in report["kernels"].as_array().expect("kernels") {
        let name = k["name"].as_str().unwrap_or("").to_string();
        for s in k["shapes"].as_array().unwrap_or(&Vec::new()) {
            let xyz = |f: &str| -> [u32; 3] {
                let v = s[f]
                    .as_array()
                    .unwrap_or_else(|| panic!("{tag}: {name}: {f} of {s}"));
                let d = |i: usize| v[i].as_u64().and_then(|n| u32::try_from(n).ok());
                match (v.len(), d(0), d(1), d(2)) {
                    (3, Some(x), Some(y), Some(z)) => [x, y, z],
                    _ => panic!("{tag}: {name}: {f} of {s}"),
                }
            };
            let key = (xyz("group_size"), xyz("group_count"));
            *out.entry(name.clone()).or_default().entry(key).or_insert(0) +=
                s["launches"].as_u64().unwrap_or(0);
        }
    }
    out
}

/// The report's shapes of every kernel in the trace's terms: the global
/// size and local size of `x`, the local size left out where the trace
/// gives none for that kernel.
fn reported(report: &serde_json::Value, ur: &Shapes<UrSizes>, tag: &str) -> Shapes<UrSizes> {
    let mut out: Shapes<UrSizes> = BTreeMap::new();
    for k in report["kernels"].as_array().expect("kernels") {
        let name = k["name"].as_str().unwrap_or("").to_string();
        assert_eq!(
            k["other_shapes"],
            serde_json::Value::Null,
            "{tag}: {name} has other shapes"
        );
        let chosen = ur
            .get(&name)
            .is_some_and(|m| m.keys().any(|(_, l)| l.is_none()));
        for s in k["shapes"].as_array().unwrap_or(&Vec::new()) {
            let x = |f: &str| {
                s[f][0]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{tag}: {name}: {f} of {s}"))
            };
            let (size, count) = (x("group_size"), x("group_count"));
            let key = (size * count, (!chosen).then_some(size));
            *out.entry(name.clone()).or_default().entry(key).or_insert(0) +=
                s["launches"].as_u64().unwrap_or(0);
        }
    }
    out
}

fn dpnp_shapes_equal_the_trace(p: &Platform) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("xpu-asm-shapes-dpnp-{}-", p.product))
        .tempdir_in("/tmp")
        .expect("a temporary folder under /tmp");
    let tag = format!("{} {}", stack_info(), p.product);
    let (report, ur, ze) = run_dpnp(p, dir.path());
    let got = reported(&report, &ur, &tag);
    assert!(!ur.is_empty(), "{tag}: the trace has no launch");
    assert_eq!(
        got, ur,
        "{tag}: the report's shapes (x) against the UR trace's"
    );
    assert!(!ze.is_empty(), "{tag}: the tracing layer saw no launch");
    assert_eq!(
        reported_3d(&report, &tag),
        ze,
        "{tag}: the report's shapes (x, y, z) against the loader's tracing layer's"
    );
}

#[test]
fn dpnp_shapes_on_pvc() {
    dpnp_shapes_equal_the_trace(&PVC);
}

#[test]
fn dpnp_shapes_on_bmg() {
    dpnp_shapes_equal_the_trace(&BMG);
}
