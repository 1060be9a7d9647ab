//! `xpu-asm-run port` of real SYCL kernels (dpnp 0.20.0 and oneMKL on
//! oneAPI 2026.2, the venv of scripts/sycl2026-venv.sh, on sid's NEO 26):
//! dpnp_ops.py captured on pvc (SYCL's v1 Level Zero adapter), ported to
//! bmg and ptl, and compared with the same workload run there (SYCL's v2
//! adapter). Every kernel both runs launched from the same module (dpnp's
//! own, JIT-compiled from SPIR-V) must be exactly the port's; the kernels
//! oneMKL picks per device (its GEMM, its vector math's variants) are
//! launched by one run only: a port compiles the kernels the run on pvc
//! launched, and these are listed, not compared.

use std::path::{Path, PathBuf};
use xpu_asm_tests::sycl2026::{dpnp_venv, neo26_env, resident_shim, Adapter, SidCommand, BMG, PTL};
use xpu_asm_tests::*;

/// dpnp_ops.py under `xpu-asm-run --emulate product -o dir/xpu`.
fn capture_dpnp(dir: &Path, product: &str, v2: bool) -> PathBuf {
    std::fs::create_dir_all(dir).expect("a folder");
    let out = dir.join("xpu");
    let venv = dpnp_venv();
    let mut sc = SidCommand::new(xpu_asm_run(), dir);
    sc.args(["--emulate", product, "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/sycl/dpnp_ops.py"))
        .args([
            "1", "matmul=2", "add=2", "sin=3", "sum=4", "where=5", "astype=6",
        ])
        .envs(neo26_env(product))
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if v2 {
        let shim = resident_shim();
        sc.env("LD_PRELOAD", &shim)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
    }
    let r = run(sc.command(), &out);
    r.assert_status(0);
    out
}

/// oneMKL's kernels of native binaries built ahead of time for pvc (its
/// GEMM and its probe, without SPIR-V): no other product's driver takes
/// them, so they are not ported.
const NATIVE_FOR_PVC: [&str; 2] = ["binary_test", "sgemm_nocopy_nn_32x8_1x4"];

/// `xpu-asm-run port cap --to products`, inside the root: it exits 3,
/// oneMKL's [`NATIVE_FOR_PVC`] kernels not ported to any product (the
/// driver's refusal said), every other kernel ported.
fn port_dpnp(dir: &Path, cap: &Path, products: &[&str]) {
    let mut sc = SidCommand::new(xpu_asm_run(), dir);
    sc.arg("port")
        .arg(cap)
        .args(["--to", &products.join(","), "-q", "--json"]);
    let r = run(sc.command(), cap);
    r.assert_status(3);
    let view = r.json();
    let mut not_ported: Vec<(String, String)> = view["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .flat_map(|k| {
            let name = k["name"].as_str().unwrap_or("").to_string();
            k["products"]
                .as_array()
                .expect("products")
                .iter()
                .filter(|p| {
                    p["not_ported"]
                        .as_str()
                        .is_some_and(|w| w.contains("does not take its native binary"))
                })
                .map(move |p| {
                    (
                        name.clone(),
                        p["product"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    not_ported.sort();
    let mut want: Vec<(String, String)> = NATIVE_FOR_PVC
        .iter()
        .flat_map(|n| products.iter().map(move |p| (n.to_string(), p.to_string())))
        .collect();
    want.sort();
    let others = view["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .flat_map(|k| k["products"].as_array().expect("products"))
        .filter(|p| !p["not_ported"].is_null())
        .count();
    assert_eq!(
        (not_ported, others),
        (want, NATIVE_FOR_PVC.len() * products.len()),
        "the kernels not ported\n{}",
        r.ctx()
    );
}

/// Launched kernels of a report: (name, module) -> (simd, grf,
/// instructions, spill bytes, code without comment lines).
type Kernels = std::collections::BTreeMap<
    (String, String),
    (
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Vec<String>,
    ),
>;

fn dpnp_kernels(dir: &Path) -> Kernels {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("[sid] no report.json in {}: {e}", dir.display()));
    let r: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    r["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["launches"].as_u64().unwrap_or(0) > 0)
        .map(|k| {
            let code = k["asm_copy"]
                .as_str()
                .map(|c| {
                    std::fs::read_to_string(dir.join(c))
                        .unwrap_or_default()
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with("//"))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            (
                (
                    k["name"].as_str().unwrap_or_default().to_string(),
                    k["module_sha256"].as_str().unwrap_or_default().to_string(),
                ),
                (
                    k["simd"].as_u64(),
                    k["grf"].as_u64(),
                    k["instructions"].as_u64(),
                    k["spill_bytes"].as_u64(),
                    code,
                ),
            )
        })
        .collect()
}

/// Each launched kernel's shapes: (name, module, group size, group count,
/// local memory) -> its occupancy (JSON).
fn shapes(dir: &Path) -> std::collections::BTreeMap<(String, String, String), String> {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("[sid] no report.json in {}: {e}", dir.display()));
    let r: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let mut out = std::collections::BTreeMap::new();
    for k in r["kernels"].as_array().expect("kernels") {
        for s in k["shapes"].as_array().into_iter().flatten() {
            out.insert(
                (
                    k["name"].as_str().unwrap_or_default().to_string(),
                    k["module_sha256"].as_str().unwrap_or_default().to_string(),
                    format!(
                        "{} x {} slm {}",
                        s["group_size"], s["group_count"], s["slm_bytes"]
                    ),
                ),
                s["occupancy"].to_string(),
            );
        }
    }
    out
}

#[test]
fn dpnp_ported_from_pvc_is_a_run_on_bmg_and_ptl() {
    require_stack();
    assert_eq!(Adapter::V2, BMG.adapter);
    let t = tempfile::Builder::new()
        .prefix("xpu-asm-port-sycl-")
        .tempdir_in("/tmp")
        .expect("a folder under /tmp");
    let cap = capture_dpnp(&t.path().join("pvc"), "pvc", false);
    let products = [BMG.product, PTL.product];
    port_dpnp(t.path(), &cap, &products);
    for p in products {
        let real = capture_dpnp(&t.path().join(p), p, true);
        let (ported, ran) = (dpnp_kernels(&cap.join("port").join(p)), dpnp_kernels(&real));
        let both: Vec<&(String, String)> = ran.keys().filter(|k| ported.contains_key(*k)).collect();
        let equal = both
            .iter()
            .filter(|k| ported[**k] == ran[**k] && !ran[**k].4.is_empty())
            .count();
        let only_run: Vec<&String> = ran
            .keys()
            .filter(|k| !ported.contains_key(*k))
            .map(|k| &k.0)
            .collect();
        let only_port: Vec<&String> = ported
            .keys()
            .filter(|k| !ran.contains_key(*k))
            .map(|k| &k.0)
            .collect();
        eprintln!(
            "[sid] dpnp (SYCL): pvc ported to {p}: {equal}/{} kernels launched by both equal to a run on {p}; \
             launched by the run on {p} only: {only_run:?}; by pvc's only: {only_port:?}",
            both.len()
        );
        let differing: Vec<String> =
            both.iter()
                .filter(|k| ported[**k] != ran[**k])
                .map(|k| {
                    let (a, b) = (&ported[*k], &ran[*k]);
                    format!(
                    "{}: port {:?} {:?} {:?} {:?} ({} lines), run {:?} {:?} {:?} {:?} ({} lines)",
                    k.0, a.0, a.1, a.2, a.3, a.4.len(), b.0, b.1, b.2, b.3, b.4.len()
                )
                })
                .collect();
        // The port carries pvc's shapes; a shape the run on the product
        // launched too has the same occupancy in both.
        let (pshapes, rshapes) = (shapes(&cap.join("port").join(p)), shapes(&real));
        let mut same = 0;
        for (key, occ) in &pshapes {
            if let Some(r) = rshapes.get(key) {
                assert_eq!(
                    occ, r,
                    "[sid] dpnp on {p}: occupancy of {key:?}, the port's (left) and a run's"
                );
                same += 1;
            }
        }
        eprintln!("[sid] dpnp (SYCL): pvc ported to {p}: {same} shapes launched by both runs, each with the same occupancy");
        assert!(
            same > 0,
            "[sid] dpnp on {p}: no shape launched by both runs:\nport {pshapes:?}\nrun {rshapes:?}"
        );
        // dpnp's own kernels, JIT-compiled from SPIR-V on every device,
        // are launched by both runs; oneMKL picks its kernels per device.
        let dpnp_kernels = [
            "reduction_over_group_temps_krn",
            "where_contig_kernel",
            "copy_cast_contig_kernel",
        ];
        // On bmg oneMKL's vector math launches the kernels it launched on
        // pvc, from modules of two SPIR-V inputs each: ported from both.
        let vm = both
            .iter()
            .filter(|k| k.0.contains("oneapi3mkl2vm"))
            .count();
        assert!(
            p != BMG.product || vm == 2,
            "[sid] dpnp on bmg: {vm} of oneMKL's vector math kernels (modules of two inputs) launched by both, want 2"
        );
        assert!(
            equal == both.len()
                && dpnp_kernels
                    .iter()
                    .all(|d| both.iter().any(|k| k.0.contains(d))),
            "[sid] dpnp on {p}: {equal}/{} kernels equal:\n{}",
            both.len(),
            differing.join("\n")
        );
    }
}
