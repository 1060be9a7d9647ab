//! An ESIMD kernel (SYCL's explicit SIMD: IGC's vector compute backend,
//! modules built with `-vc-codegen`) on the real stack. The test assembles
//! the module with `spirv-as`: one kernel decorated
//! `VectorComputeFunctionINTEL`, launched three times. IGC compiles it for
//! one work-item per hardware thread, SIMD 1, as the module's binary says;
//! IGC 2's dumps name the kernel's `.asm` and the module's SPIR-V
//! `VC_asm<hash>_...` (no SIMD in the name). The kernel gets the same SIMD,
//! and on one stack the same instruction count, from the dump as from the
//! binary, and the dump is tied to its module: no second, module-less entry.

use serde_json::Value;
use std::path::{Path, PathBuf};
use xpu_asm_tests::*;

const KERNEL: &str = "esimd_empty";
const LAUNCHES: u64 = 3;

const ESIMD_SPVASM: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability VectorComputeINTEL
               OpExtension "SPV_INTEL_vector_compute"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "esimd_empty"
               OpExecutionMode %k SubgroupSize 1
               OpDecorate %k VectorComputeFunctionINTEL
       %void = OpTypeVoid
      %float = OpTypeFloat 32
        %ptr = OpTypePointer CrossWorkgroup %float
         %fn = OpTypeFunction %void %ptr
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr
          %l = OpLabel
               OpReturn
               OpFunctionEnd
"#;

/// The ESIMD module, assembled into `dir` by `spirv-as`.
fn esimd_module(dir: &Path) -> PathBuf {
    let text = dir.join("esimd.spvasm");
    let spv = dir.join("esimd.spv");
    std::fs::write(&text, ESIMD_SPVASM).expect("write esimd.spvasm");
    let out = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.2"])
        .arg(&text)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("spirv-as (package spirv-tools; scripts/install-deps.sh installs it)");
    assert!(
        out.status.success(),
        "spirv-as failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    spv
}

/// The workload launching the ESIMD kernel under `xpu-asm-run --emulate
/// pvc --all OPTIONS`; the capture's report.
fn capture_esimd(s: &Scratch, name: &str, options: &[&str]) -> Value {
    let spv = esimd_module(&s.root);
    let out = s.root.join(name);
    let r = Capture::emulating("pvc", &out)
        .options(options)
        .option("--all")
        .program(workload_link())
        .args(["--via", "link", "--build-flags", "-vc-codegen", "--module"])
        .arg(format!("e={}", spv.display()))
        .arg(format!("imm:e:{KERNEL}:{LAUNCHES}"))
        .dir(&s.root)
        .run();
    r.assert_status(0);
    r.report()
}

/// The one kernel of the report, with every figure a table shows of it.
fn the_kernel<'r>(report: &'r Value, stack: &str) -> &'r Value {
    let kernels = report["kernels"].as_array().expect("kernels");
    let names: Vec<(&str, u64, Option<&str>)> = kernels
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or_default(),
                k["launches"].as_u64().unwrap_or_default(),
                k["module_sha256"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        names.len(),
        1,
        "on {stack}, one kernel (no module-less entry of its dump): {names:?}"
    );
    assert_eq!((names[0].0, names[0].1), (KERNEL, LAUNCHES), "on {stack}");
    assert!(names[0].2.is_some(), "on {stack}, its module: {names:?}");
    let k = &kernels[0];
    assert_eq!(k["status"], "matched", "on {stack}: {k:#}");
    assert_eq!(k["simd"], 1, "on {stack}, ESIMD's SIMD: {k:#}");
    let occupancy = &k["shapes"][0]["occupancy"];
    assert!(
        occupancy["percent"].as_f64().is_some_and(|p| p > 0.0),
        "on {stack}, the launch's occupancy (SIMD 1: one thread per work-item): {k:#}"
    );
    k
}

#[test]
fn an_esimd_kernel_is_simd_1_from_its_binary_and_from_igcs_dump() {
    let on = stack_info().to_string();
    let s = stack_scratch("esimd");
    let binary = capture_esimd(&s, "binary", &["--isa", "binary"]);
    let from_binary = the_kernel(&binary, &on);
    assert_eq!(from_binary["isa_source"], "module-binary", "on {on}");
    let dump = capture_esimd(&s, "dump", &["--isa", "dump"]);
    let from_dump = the_kernel(&dump, &on);
    match stack_info().stack.name() {
        // IGC 1's vector compute backend writes no `.asm` under the dump
        // keys: the binary's disassembly, as with `--isa binary`.
        "debian12" => assert_eq!(from_dump["isa_source"], "module-binary", "on {on}"),
        _ => {
            assert_eq!(
                from_dump["isa_source"], "igc-dump",
                "on {on}, IGC's VC_asm dump: {from_dump:#}"
            );
            assert_eq!(
                from_dump["instructions"], from_binary["instructions"],
                "on {on}, the dump's and the binary's instruction counts"
            );
        }
    }
}
