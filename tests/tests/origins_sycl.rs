//! SYCL's device images and the AOT that does not cover the device, on
//! today's stack (the sid root: SYCL 2026's runtime of the venv of
//! scripts/sycl2026-venv.sh, NEO 26 in no-hardware mode).
//!
//! tests/sycl/register_images.cpp registers two images of kernels_a.cl
//! with the real SYCL runtime as a DPC++-built program does (its
//! constructor calls `__sycl_register_lib`; the images lie in its own
//! image): a native one ocloc built for pvc (`spir64_gen`) and SPIR-V
//! (`spir64`), then launches `scale` three times through the runtime.
//!
//! - on pvc: `scale` is `aot` for pvc, the program named as registering
//!   both images, no warning;
//! - on bmg: the runtime passes the pvc image, NEO compiles the SPIR-V it
//!   carries: `jit (fallback)`, "JIT: register-images carries native code
//!   for pvc, not for bmg (the device)" with the fix, and the summary's
//!   warning naming the program once;
//! - on bmg with a pvc image without SPIR-V (`-exclude_ir`): the driver
//!   refuses it, the program fails (SYCL does not fall back), and the
//!   warning says so, naming the program, the devices and the fix;
//! - dpnp (tests/sycl/dpnp_ops.py) on pvc and on bmg: each kernel's
//!   origin and the objects that registered, created and launched it
//!   (dpnp's extensions and oneMKL's libraries carry SPIR-V only: no
//!   fallback, no warning).

use serde_json::Value;
use std::path::{Path, PathBuf};
use xpu_asm_tests::sycl2026::{dpnp_venv, resident_shim, SidCommand};
use xpu_asm_tests::*;

const FIX: &str = "build with the device in its AOT targets (TORCH_XPU_ARCH_LIST / -fsycl-targets)";

/// register_images.cpp (its object, tests/sycl/register_images.o) linked
/// with its images: SPIR-V of kernels_a.cl and `native` for pvc.
fn program(dir: &Path, native: Native) -> PathBuf {
    let venv = dpnp_venv();
    let src = workspace_dir().join("tests/sycl");
    let exe = dir.join("register-images");
    let mut gcc = SidCommand::new("gcc", dir);
    gcc.arg(format!("-DSPIRV_FILE={}", spirv("a").display()))
        .arg(format!("-DNATIVE_FILE={}", native_a_as(native).display()))
        .arg(src.join("register_images_data.c"))
        .arg(src.join("register_images.o"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}/lib", venv.display()))
        .arg("-lsycl")
        .arg("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
        .arg(format!("-Wl,-rpath,{}/lib", venv.display()));
    let mut cmd = gcc.command();
    let out = cmd.output().expect("gcc runs");
    assert!(
        out.status.success(),
        "linking register_images: {}\n{}",
        shell_words(&cmd),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The program under `xpu-asm-run --emulate PRODUCT` (v2's shim on bmg).
fn capture_registering(product: &str, exe: &Path, out: &Path) -> Run {
    capture_sycl(product, &[exe.as_os_str(), "3".as_ref()], out)
}

/// `command` (a SYCL program of the venv) under `xpu-asm-run --emulate
/// PRODUCT`, with v2's shim on bmg.
fn capture_sycl(product: &str, command: &[&std::ffi::OsStr], out: &Path) -> Run {
    let venv = dpnp_venv();
    let mut c = Capture::emulating(product, out)
        .args(command)
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("LD_LIBRARY_PATH", venv.join("lib"));
    if product == "bmg" {
        let shim = resident_shim();
        c = c
            .env("LD_PRELOAD", &shim)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
    }
    c.run()
}

fn the_one_kernel_scale(report: &Value) -> &Value {
    let ks = report["kernels"].as_array().expect("kernels");
    assert_eq!(ks.len(), 1, "{report:#}");
    assert_eq!(
        (ks[0]["name"].as_str(), ks[0]["launches"].as_u64()),
        (Some("scale"), Some(3))
    );
    &ks[0]
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn registered_images_aot_on_pvc_fallback_on_bmg_with_the_fix() {
    require_stack();
    let s = stack_scratch("origins-sycl");
    let exe = program(&s.root, Native::Zebin);
    let path = exe.display().to_string();

    let r = capture_registering("pvc", &exe, &s.root.join("pvc"));
    assert!(r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    let o = &the_one_kernel_scale(&report)["origin"];
    assert_eq!(
        (
            o["kind"].as_str(),
            o["devices"].clone(),
            o["device"].as_str()
        ),
        (Some("aot"), serde_json::json!(["pvc"]), Some("pvc")),
        "{}",
        r.ctx()
    );
    let images = &o["sycl_images"];
    assert_eq!(images["library"]["path"], path.as_str(), "{o:#}");
    assert_eq!(
        images["library"]["build_id"].as_str().unwrap().len(),
        40,
        "{o:#}"
    );
    assert_eq!(
        (
            images["native_images"].as_u64(),
            images["native"].clone(),
            images["spirv"].as_bool()
        ),
        (Some(1), serde_json::json!(["pvc"]), Some(true)),
        "{o:#}"
    );
    assert!(o["fix"].is_null(), "{o:#}");
    assert_eq!(warnings(&report), Vec::<String>::new());

    let r = capture_registering("bmg", &exe, &s.root.join("bmg"));
    assert!(r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    let k = the_one_kernel_scale(&report);
    let o = &k["origin"];
    assert_eq!(
        (
            o["kind"].as_str(),
            o["devices"].clone(),
            o["device"].as_str()
        ),
        (Some("jit"), serde_json::json!(["pvc"]), Some("bmg")),
        "{}",
        r.ctx()
    );
    assert_eq!(
        o["note"],
        "JIT: register-images carries native code for pvc, not for bmg (the device)"
    );
    assert_eq!(o["fix"], FIX);
    assert_eq!(
        warnings(&report),
        vec![format!(
            "AOT that does not cover the device: {path} carries native code for pvc, not for bmg \
             (the device): 1 kernel was compiled from SPIR-V during the run instead; {FIX}"
        )]
    );
    // The caller: main, the SYCL headers' submit folded with the runtime.
    let f = &k["callers"][0]["frames"][0];
    assert_eq!(
        (f["function"].as_str(), f["object"].as_str()),
        (Some("main"), Some(path.as_str())),
        "{k:#}"
    );
    let table = r.stdout();
    assert!(table.contains(" jit (fallback) "), "{table}");
    let out = s.root.join("bmg");
    let shown = run_xpu_asm(&["show", &out.display().to_string(), "scale"], &out).stdout();
    for line in [
        "                JIT: register-images carries native code for pvc, not for bmg (the device)".to_string(),
        format!("  fix:          {FIX}"),
        format!("  SYCL images:  {path} registered native code for pvc (1 image) and SPIR-V"),
    ] {
        assert!(shown.lines().any(|l| l == line), "no {line:?} in\n{shown}");
    }
    assert!(shown.contains("  launched by:  main ("), "{shown}");
    // Its module's creation: main too (the SYCL headers' get_kernel_bundle
    // inlined into it are the runtime's).
    assert_eq!(k["origin"]["created_by"]["function"], "main", "{k:#}");
}

#[test]
fn a_native_image_the_driver_refused_is_named_with_the_fix() {
    require_stack();
    let s = stack_scratch("origins-sycl-refused");
    let exe = program(&s.root, Native::PvcWithoutIr);
    let r = capture_registering("bmg", &exe, &s.root.join("bmg"));
    // The SYCL runtime does not fall back to the SPIR-V image: it throws.
    assert!(!r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    assert_eq!(report["kernels"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        warnings(&report),
        vec![format!(
            "the driver refused a native image: {} carries native code for pvc, not for bmg (the \
             device); zeModuleCreate answered 0x70000004; {FIX}",
            exe.display()
        )]
    );
}

fn base(path: &Value) -> &str {
    path.as_str()
        .unwrap_or_default()
        .rsplit('/')
        .next()
        .unwrap()
}

/// dpnp's kernels that SYCL builds: (part of the name, launches, the
/// object that registered its image, created its module and launched it;
/// the start of the creating function, where the object has symbols).
const DPNP: [(&str, u64, &str, &str); 5] = [
    (
        "reduction_over_group_temps_krn",
        8,
        "_tensor_reductions_impl.cpython-312-x86_64-linux-gnu.so",
        "",
    ),
    (
        "copy_cast_contig_kernel",
        6,
        "_tensor_impl.cpython-312-x86_64-linux-gnu.so",
        "",
    ),
    (
        "where_contig_kernel",
        5,
        "_tensor_impl.cpython-312-x86_64-linux-gnu.so",
        "",
    ),
    (
        "sin_s_ha",
        3,
        "libmkl_sycl_vm.so.6",
        "oneapi::mkl::vm::detail::gpu::intel::sin_s_ha",
    ),
    (
        "add_s_ha",
        2,
        "libmkl_sycl_vm.so.6",
        "oneapi::mkl::vm::detail::gpu::intel::add_s_ha",
    ),
];

fn dpnp_origins_on(product: &str) {
    let s = stack_scratch(&format!("origins-dpnp-{product}"));
    let out = s.root.join(product);
    let python = dpnp_venv().join("bin/python");
    let script = workspace_dir().join("tests/sycl/dpnp_ops.py");
    let ops = [
        "1", "matmul=7", "add=2", "sin=3", "sum=4", "where=5", "astype=6",
    ];
    let mut command = vec![python.as_os_str(), script.as_os_str()];
    command.extend(ops.iter().map(std::ffi::OsStr::new));
    let r = capture_sycl(product, &command, &out);
    assert!(r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    let ks = report["kernels"].as_array().expect("kernels");
    let mut seen = 0;
    for k in ks {
        let name = k["name"].as_str().unwrap();
        let o = &k["origin"];
        let ctx = || format!("{name} on {product}: {k:#}");
        assert_eq!(o["device"], product, "{}", ctx());
        assert!(o["fix"].is_null(), "{}", ctx());
        let images = &o["sycl_images"];
        let by = &o["created_by"];
        // SYCL's scheduler thread (once a host task a command waits on is
        // done) creates the module and launches the kernel: no frame of
        // the program on either stack, no object to tie the images to.
        if by.is_null() {
            assert!(
                DPNP.iter().any(|(part, ..)| name.contains(part)),
                "{}",
                ctx()
            );
            assert_eq!(
                k["callers"][0]["frames"],
                serde_json::json!([]),
                "{}",
                ctx()
            );
            assert!(images.is_null(), "{}", ctx());
            seen += 1;
            continue;
        }
        assert_eq!(
            (images["spirv"].as_bool(), images["native"].clone()),
            (Some(true), serde_json::json!([])),
            "{}",
            ctx()
        );
        match DPNP.iter().find(|(part, ..)| name.contains(part)) {
            Some((_, launches, lib, function)) => {
                seen += 1;
                assert_eq!(k["launches"].as_u64(), Some(*launches), "{}", ctx());
                assert_eq!(o["kind"], "jit", "{}", ctx());
                // A command SYCL deferred (waiting on a host task) is
                // enqueued, its module made, by the next wait on the queue:
                // dpctl's, whose object is then the creator.
                let (lib, function) = match by["function"] == "DPCTLQueue_Wait" {
                    true => ("libDPCTLSyclInterface.so", "DPCTLQueue_Wait"),
                    false => (*lib, *function),
                };
                assert_eq!(
                    [base(&images["library"]["path"]), base(&by["path"])],
                    [lib, lib],
                    "{}",
                    ctx()
                );
                let f = by["function"].as_str().unwrap_or_default();
                assert!(f.starts_with(function), "{}", ctx());
                // The first frame outside the runtimes: the object, or no
                // frame at all where SYCL's scheduler thread launched it
                // once a host task's dependency was met.
                let first = &k["callers"][0]["frames"][0];
                assert!(
                    first.is_null() || base(&first["object"]) == lib,
                    "{}",
                    ctx()
                );
            }
            None => {
                // oneMKL's own: its probe and the GEMM it picked (its pick
                // differs from run to run: see sycl2026.rs), generated
                // (nGEN) or its SPIR-V, all built by oneMKL.
                let want = if name == "binary_test" { 1 } else { 7 };
                assert_eq!(k["launches"].as_u64(), Some(want), "{}", ctx());
                assert!(
                    ["generated", "jit"].contains(&o["kind"].as_str().unwrap()),
                    "{}",
                    ctx()
                );
                assert_eq!(
                    [base(&images["library"]["path"]), base(&by["path"])],
                    ["libmkl_sycl_blas.so.6"; 2],
                    "{}",
                    ctx()
                );
                assert!(
                    by["function"]
                        .as_str()
                        .unwrap()
                        .starts_with("oneapi::mkl::gpu::build_program("),
                    "{}",
                    ctx()
                );
                let first = &k["callers"][0]["frames"][0];
                assert_eq!(base(&first["object"]), "libmkl_sycl_blas.so.6", "{}", ctx());
                assert!(
                    first["function"]
                        .as_str()
                        .unwrap()
                        .starts_with("oneapi::mkl::gpu::launch_kernel_"),
                    "{}",
                    ctx()
                );
            }
        }
    }
    assert_eq!(seen, DPNP.len(), "{report:#}");
    // Cheaply: oneMKL's libraries register SPIR-V in hundreds of calls
    // each; the record names each registering object once.
    let mut objects = Vec::new();
    for f in std::fs::read_dir(out.join("records")).expect("records") {
        let path = f.expect("a record").path();
        if path.extension().is_some_and(|e| e == "events") {
            let text = std::fs::read_to_string(&path).expect("the events");
            for line in text
                .lines()
                .filter(|l| l.contains("\"type\":\"sycl_images\""))
            {
                let v: Value = serde_json::from_str(line).expect("an event");
                assert_eq!(v["images"], serde_json::json!([]), "{line}");
                objects.push(v["object"].as_u64().expect("its object"));
            }
        }
    }
    let n = objects.len();
    objects.sort_unstable();
    objects.dedup();
    assert!(
        n >= 20 && n == objects.len(),
        "{n} registrations recorded, of {} objects",
        objects.len()
    );
    let binary_test = ks
        .iter()
        .find(|k| k["name"] == "binary_test")
        .expect("binary_test");
    let gen = if product == "pvc" { "pvc" } else { "xe2" };
    assert_eq!(
        (
            binary_test["origin"]["kind"].as_str(),
            binary_test["origin"]["devices"].clone()
        ),
        (Some("generated"), serde_json::json!([gen]))
    );
    assert_eq!(warnings(&report), Vec::<String>::new());
    let shown = run_xpu_asm(&["show", &out.display().to_string(), "binary_test"], &out).stdout();
    assert!(
        shown.contains(&format!("  origin:       generated during the run: a native binary for {gen} made in memory, not by IGC"))
            && shown.contains("  launched by:  oneapi::mkl::gpu::launch_kernel_"),
        "{shown}"
    );
}

#[test]
fn dpnp_on_pvc_each_kernels_origin_and_its_objects() {
    require_stack();
    dpnp_origins_on("pvc");
}

#[test]
fn dpnp_on_bmg_each_kernels_origin_and_its_objects() {
    require_stack();
    dpnp_origins_on("bmg");
}
