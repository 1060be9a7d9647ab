//! Each kernel's origin and callers, on the real stack (both stacks):
//! the C workload's modules from SPIR-V (`jit`), native binaries `ocloc`
//! built for pvc (`aot`, its device), for pvc and tgllp (a fat binary:
//! both), for tgllp alone run on pvc (the driver compiles the SPIR-V the
//! binary carries: `jit`, with the fix), each with the object that created
//! it; and `tests/workload/callers.c`, whose three kernels are launched
//! from three known functions in two libraries: each kernel's first frame
//! outside xpu-asm and the runtimes is exactly its function, in its
//! library, with its source file. About 10 s per stack.

use serde_json::Value;
use xpu_asm_tests::*;

/// The report's kernel `scale` whose origin is of `kind` and names
/// `devices` (none: `[]`).
fn scale<'a>(report: &'a Value, kind: &str, devices: &[&str]) -> &'a Value {
    let devices = serde_json::json!(devices);
    report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .find(|k| {
            let o = &k["origin"];
            let d = if o["devices"].is_null() {
                serde_json::json!([])
            } else {
                o["devices"].clone()
            };
            k["name"] == "scale" && o["kind"] == kind && d == devices
        })
        .unwrap_or_else(|| panic!("no kernel scale of origin {kind} {devices} in {report:#}"))
}

#[test]
fn each_module_says_how_its_code_was_made() {
    require_stack();
    let s = stack_scratch("origins");
    let native = |n: &str, kind: Native| {
        [
            "--native".to_string(),
            format!("{n}={}", native_a_as(kind).display()),
        ]
    };
    let mut args = vec![
        "--module".to_string(),
        format!("a={}", spirv("a").display()),
    ];
    args.extend(native("n", native_a_kind()));
    args.extend(native("f", Native::FatPvcTgllp));
    args.extend(native("t", Native::TgllpOnly));
    for step in [
        "imm:a:scale:2",
        "imm:n:scale:3",
        "imm:f:scale:4",
        "imm:t:scale:5",
    ] {
        args.push(step.into());
    }
    let out = s.root.join("c");
    let r = Capture::emulating("pvc", &out)
        .isa_dump_unless_set()
        .program(workload_link())
        .args(["--via", "link"])
        .args(args)
        .run();
    assert!(r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    let [jit, aot, fat, fallback] = [
        scale(&report, "jit", &[]),
        scale(&report, "aot", &["pvc"]),
        scale(&report, "aot", &["pvc", "tgllp"]),
        scale(&report, "jit", &["tgllp"]),
    ];
    let launches = |k: &Value| k["launches"].as_u64().unwrap();
    assert_eq!(
        [jit, aot, fat, fallback].map(launches),
        [2, 3, 4, 5],
        "{}",
        r.ctx()
    );
    let note = fallback["origin"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("carries code for tgllp, not for pvc"),
        "{note}\n{}",
        r.ctx()
    );
    for k in [jit, aot, fat, fallback] {
        assert_eq!(k["origin"]["device"], "pvc", "{}", r.ctx());
        let by = &k["origin"]["created_by"];
        assert_eq!(by["function"], "create_module", "{k:#}");
        assert!(
            by["path"].as_str().unwrap().ends_with("workload-link"),
            "{by:#}"
        );
        assert_eq!(by["build_id"].as_str().unwrap().len(), 40, "{by:#}");
        assert_eq!(
            k["callers"][0]["frames"][0]["function"], "step_imm",
            "{k:#}"
        );
    }
    // The table's column.
    let table = String::from_utf8_lossy(&r.output.stdout).into_owned();
    for cell in ["jit ", "aot pvc ", "aot pvc,tgllp ", "jit (fallback) "] {
        assert!(table.contains(cell), "no {cell:?} in the table:\n{table}");
    }
}

/// `ocloc`'s default native format for pvc on this stack's NEO.
fn native_a_kind() -> Native {
    match stack() {
        Stack::Debian12 => Native::PatchTokens,
        Stack::Sid => Native::Zebin,
    }
}

#[test]
fn each_kernels_first_frame_is_the_function_that_launched_it() {
    require_stack();
    let s = stack_scratch("callers");
    let out = s.root.join("c");
    let r = Capture::emulating("pvc", &out)
        .program(callers_workload())
        .arg(spirv("a").display().to_string())
        .arg("3")
        .run();
    assert!(r.output.status.success(), "{}", r.ctx());
    let report = r.report();
    let mut got = Vec::new();
    for k in report["kernels"].as_array().expect("kernels") {
        let callers = k["callers"].as_array().expect("callers");
        assert_eq!(callers.len(), 1, "one call site: {k:#}");
        let f = &callers[0]["frames"][0];
        let object = f["object"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        let file = f["file"]
            .as_str()
            .unwrap_or_default()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        got.push((
            k["name"].as_str().unwrap().to_string(),
            k["launches"].as_u64().unwrap(),
            f["function"].as_str().unwrap_or_default().to_string(),
            object,
            file,
        ));
        assert_eq!(callers[0]["frames"][1]["function"], "main", "{k:#}");
        // The libraries call the interposer's own symbol: nothing to fold.
        assert_eq!(callers[0]["folded"], 0, "{k:#}");
    }
    got.sort();
    let want = |n: &str, f: &str, lib: &str| {
        (
            n.to_string(),
            3,
            f.to_string(),
            lib.to_string(),
            "callers_lib.c".to_string(),
        )
    };
    assert_eq!(
        got,
        vec![
            want("common_kernel", "launch_from_b", "libcallers_b.so"),
            want("scale", "launch_from_a1", "libcallers_a.so"),
            want("scale_v2", "launch_from_a2", "libcallers_a.so"),
        ],
        "{}",
        r.ctx()
    );
    let shown = run_xpu_asm(&["show", &out.display().to_string(), "scale_v2"], &out).stdout();
    assert!(
        shown.contains("launched by:  launch_from_a2 (") && shown.contains("[libcallers_a.so]"),
        "{shown}"
    );
}
