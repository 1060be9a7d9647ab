//! dpnp's launch shapes on today's stack (the sid root; see sycl2026.rs
//! for the SYCL 2026 venv and SYCL's two Level Zero adapters): the
//! shapes xpu-asm reports for every kernel of tests/sycl/dpnp_ops.py equal
//! an independent count, the Unified Runtime's tracing layer inside the
//! SYCL runtime above both adapters
//! ([`xpu_asm_tests::sycl2026::ur_shapes`]), which involves nothing of
//! xpu-asm: per kernel, each launch's global size and local size (or the
//! adapter's choice, where SYCL gave none) and how many launches had them.
//! The trace prints the first dimension of each size only: what is
//! compared is the group's `x` (its size, and its count times its size),
//! exactly, launch for launch; the report's `y` and `z` are held to
//! nothing here.
//!
//! pvc through the v1 adapter (`zeKernelSetGroupSize` and
//! `zeCommandListAppendLaunchKernel`), bmg through v2
//! (`zeCommandListAppendLaunchKernelWithArguments`, its group sizes passed
//! with each launch).

use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_tests::sycl2026::{
    neo26_env, resident_shim, ur_shapes, venv, Adapter, Platform, SidCommand, UrSizes, BMG, PVC,
};
use xpu_asm_tests::*;

/// dpnp_ops.py's operations and how often each is called (as sycl2026.rs).
const OPS: [&str; 7] = [
    "1", "matmul=7", "add=2", "sin=3", "sum=4", "where=5", "astype=6",
];

/// dpnp_ops.py under xpu-asm-run on `p`, with the UR trace on: the
/// report, and the trace's sizes per kernel.
fn run_dpnp(
    p: &Platform,
    dir: &Path,
) -> (serde_json::Value, BTreeMap<String, BTreeMap<UrSizes, u64>>) {
    let venv = venv();
    let trace = dir.join("ur-trace.txt");
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
        );
    if p.adapter == Adapter::V2 {
        let shim = resident_shim();
        sc.env("LD_PRELOAD", &shim)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
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
    (report, ur)
}

/// The report's shapes of every kernel in the trace's terms: the global
/// size and local size of `x`, the local size left out where the trace
/// gives none for that kernel.
fn reported(
    report: &serde_json::Value,
    ur: &BTreeMap<String, BTreeMap<UrSizes, u64>>,
    tag: &str,
) -> BTreeMap<String, BTreeMap<UrSizes, u64>> {
    let mut out: BTreeMap<String, BTreeMap<UrSizes, u64>> = BTreeMap::new();
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
    let (report, ur) = run_dpnp(p, dir.path());
    let got = reported(&report, &ur, &tag);
    assert!(!ur.is_empty(), "{tag}: the trace has no launch");
    assert_eq!(
        got, ur,
        "{tag}: the report's shapes (x) against the UR trace's"
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
