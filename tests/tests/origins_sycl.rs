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
//!   warning says so, naming the program, the devices and the fix.

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
    let venv = dpnp_venv();
    let mut c = Capture::emulating(product, out)
        .program(exe)
        .arg("3")
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
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
            images["images"].as_u64(),
            images["native"].clone(),
            images["spirv"].as_bool()
        ),
        (Some(2), serde_json::json!(["pvc"]), Some(true)),
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
        format!("  SYCL images:  {path} registered 2 images (native code for pvc and SPIR-V)"),
    ] {
        assert!(shown.lines().any(|l| l == line), "no {line:?} in\n{shown}");
    }
    assert!(shown.contains("  launched by:  main ("), "{shown}");
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
