//! OpenCL on the real stack: the C OpenCL workload (`tests/workload/opencl.c`)
//! through the real ICD loader (ocl-icd's `libOpenCL.so.1`) and NEO's OpenCL
//! driver, under `xpu-asm-run --emulate pvc`, reaching the loader both ways
//! (`link`, `dlsym`): programs made from source, from IL (and through
//! `clCreateProgramWithILKHR` of `clGetExtensionFunctionAddressForPlatform`),
//! by `clCompileProgram` and `clLinkProgram`, and from another program's
//! binary; kernels from `clCreateKernel`, `clCreateKernelsInProgram` and
//! `clCloneKernel`; enqueues by `clEnqueueNDRangeKernel`, `clEnqueueTask`,
//! `clEnqueueNDCountKernelINTEL` (from `clGetExtensionFunctionAddress` and
//! `...ForPlatform`) and behind user events. Every kernel has a
//! count of its own (a kernel of the same name in two programs too), and
//! every count is held to the workload's own calls.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_asm_tests::*;

/// The programs of [`every_way`], in the order the workload builds them:
/// the record's module ids are 1, 2, ... in this order.
const PROGRAMS: [&str; 5] = ["src", "il", "khr", "lnk", "re"];

/// `--program` arguments of [`PROGRAMS`].
fn programs() -> Vec<String> {
    let w = workload_src_dir();
    [
        format!("src=source:{}", w.join("kernels_cl.cl").display()),
        format!("il=il:{}", spirv("b").display()),
        format!("khr=ilkhr:{}", spirv("a").display()),
        format!("lnk=link:{}", w.join("kernels_cl_link.cl").display()),
        "re=rebuild:src".to_string(),
    ]
    .into_iter()
    .flat_map(|p| ["--program".to_string(), p])
    .collect()
}

/// The steps of [`every_way`]: a count of its own for each kernel.
const STEPS: [&str; 11] = [
    "nd:src:cl_scale:3",
    "clone:src:cl_scale_twice:5",
    "user:src:common_kernel:4",
    "task:il:only_in_b:2",
    "nd:il:common_kernel:7",
    "count:khr:scale_v2:6",
    "nd:khr:scale:1",
    "countg:khr:_ZTSZ4mainE10vector_add:12",
    "all:lnk:8",
    "nd:lnk:cl_linked_b:1",
    "nd:re:common_kernel:10",
];

/// A step as this stack's emulation runs it: on Debian 12, NEO 22.43's
/// no-hardware mode (the sub-capture mode that writes no AUB stream) makes
/// each enqueue blocking, so an enqueue behind a user event not yet
/// signaled never returns; there the `user` step signals each event before
/// its enqueue (`usersig`), the enqueue still waiting on it.
fn on_this_stack(step: &str) -> String {
    match (stack(), step.strip_prefix("user:")) {
        (Stack::Debian12, Some(rest)) => format!("usersig:{rest}"),
        _ => step.to_string(),
    }
}

/// What [`STEPS`] launch, by (kernel, the first program of its module):
/// launches, and where its ISA comes from with `--isa dump`. `re` is
/// `src`'s binary, one module with it (its launches of common_kernel are
/// src's); a linked program's binary carries no SPIR-V on either NEO, so
/// its kernels take the ISA of the binary the driver ran.
fn expected_opencl_counts() -> BTreeMap<(String, String), (u64, &'static str)> {
    [
        ("cl_scale", "src", 3, "igc-dump"),
        ("cl_scale_twice", "src", 5, "igc-dump"),
        ("common_kernel", "src", 4 + 10, "igc-dump"),
        ("only_in_b", "il", 2, "igc-dump"),
        ("common_kernel", "il", 7, "igc-dump"),
        ("scale_v2", "khr", 6, "igc-dump"),
        ("scale", "khr", 1, "igc-dump"),
        ("_ZTSZ4mainE10vector_add", "khr", 12, "igc-dump"),
        ("cl_linked_a", "lnk", 8, "module-binary"),
        ("cl_linked_b", "lnk", 8 + 1, "module-binary"),
    ]
    .into_iter()
    .map(|(k, p, n, s)| ((k.to_string(), p.to_string()), (n, s)))
    .collect()
}

/// `xpu-asm-run --emulate pvc OPTS -o OUT -- opencl --via VIA ARGS...`, in `work`.
fn capture_opencl_workload(
    out: &Path,
    work: &Path,
    opts: &[&str],
    via: &str,
    args: &[String],
) -> Run {
    std::fs::create_dir_all(work).expect("the work folder");
    Capture::emulating("pvc", out)
        .option("-q")
        .options(opts)
        .program(opencl_workload(via))
        .args(["--via", via])
        .args(args)
        .dir(work)
        .hermetic()
        .run()
}

/// The label of each module SHA-256 of `rec`: the first program (in
/// [`PROGRAMS`]' order) whose module has it.
fn labels(rec: &record::read::ProcessRecord) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (id, module) in rec.modules.iter().rev() {
        let label = PROGRAMS.get(*id as usize - 1).unwrap_or(&"?");
        m.insert(module.sha256.clone(), label.to_string());
    }
    m
}

/// Each launched kernel of the report by (name, program label):
/// (launches, appended, status, isa_source, api).
type Rows = BTreeMap<(String, String), (u64, u64, String, String, String)>;

fn rows(r: &Value, labels: &BTreeMap<String, String>) -> Rows {
    let s = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let mut m = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        let sha = s(&k["module_sha256"]);
        let key = (s(&k["name"]), labels.get(&sha).cloned().unwrap_or(sha));
        let row = (
            k["launches"].as_u64().unwrap_or(u64::MAX),
            k["appended"].as_u64().unwrap_or(u64::MAX),
            s(&k["status"]),
            s(&k["isa_source"]),
            s(&k["api"]),
        );
        assert!(m.insert(key.clone(), row).is_none(), "{key:?} listed twice");
    }
    m
}

/// The programs of [`PROGRAMS`] made every way, [`STEPS`] through the
/// loader reached `via`: every kernel with its exact count, matched, of
/// API `opencl`; the record's modules say what each program was made from;
/// the dumps' ISA is the code in each program's binary (IGA's disassembly
/// of it, instruction for instruction).
fn every_way(via: &str) {
    let dir = temp_dir("opencl");
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let mut args = programs();
    args.extend(STEPS.iter().map(|s| on_this_stack(s)));
    let run = capture_opencl_workload(&out, &work, &["--isa", "dump"], via, &args);
    run.assert_status(0);
    let rec = only_record(&out);
    let from: Vec<(u32, String, String, record::read::Api)> = rec
        .modules
        .values()
        .map(|m| {
            (
                m.id,
                m.from.clone().unwrap_or_default(),
                m.format.clone(),
                m.api,
            )
        })
        .collect();
    let cl = record::read::Api::OpenCl;
    let spirv = |id: u32, f: &str| (id, f.to_string(), "spirv".to_string(), cl);
    assert_eq!(
        from,
        [
            spirv(1, "source"),
            spirv(2, "il"),
            spirv(3, "il"),
            (4, "link".into(), "native".into(), cl),
            spirv(5, "binary"),
        ],
        "the record's modules: (id, from, format, api)\n{}",
        run.ctx()
    );
    let report = run.report();
    let want: Rows = expected_opencl_counts()
        .into_iter()
        .map(|(k, (n, source))| (k, (n, n, "matched".into(), source.into(), "opencl".into())))
        .collect();
    assert_eq!(rows(&report, &labels(&rec)), want, "{}", run.ctx());
    let total: u64 = expected_opencl_counts().values().map(|v| v.0).sum();
    assert_eq!(report["totals"]["launches"], total, "{}", run.ctx());
    assert_eq!(report["totals"]["matched"], 10, "{}", run.ctx());
    assert_eq!(
        report["processes"][0]["unknown_launches"],
        0,
        "{}",
        run.ctx()
    );
    assert_dumps_are_the_code_that_ran(&run, &report);
}

/// Each kernel whose ISA is IGC's dump: its `.asm` has the instructions of
/// IGA's disassembly of its code in the program's binary.
fn assert_dumps_are_the_code_that_ran(run: &Run, report: &Value) {
    let mut r: xpu_asm_collector::report::Report =
        serde_json::from_value(report.clone()).expect("report.json reads as a Report");
    r.kernels
        .retain(|k| k.isa_source == Some(xpu_asm_collector::sources::IsaSourceKind::IgcDump));
    let compared = cross_check_dumps_against_binaries(&run.out, &r);
    assert_eq!(compared, 8, "{}", run.ctx());
}

#[test]
fn programs_of_every_kind_through_the_linked_loader() {
    every_way("link");
}

#[test]
fn programs_of_every_kind_through_dlsym() {
    every_way("dlsym");
}

/// An application's own kernel cache: run 1 builds from source and saves
/// the program's binary, run 2 creates the program from that file, so IGC
/// compiles nothing: its kernels' ISA is the binary's (as many
/// instructions as run 1's dump), counted exactly.
#[test]
fn a_program_from_a_saved_binary_gets_the_isa_of_that_binary() {
    let dir = temp_dir("opencl-cache");
    let work = dir.path().join("work");
    let cache: PathBuf = work.join("cl_scale.bin");
    let src = format!(
        "src=source:{}",
        workload_src_dir().join("kernels_cl.cl").display()
    );
    let first = capture_opencl_workload(
        &dir.path().join("run1"),
        &work,
        &["--isa", "dump"],
        "link",
        &[
            "--program".into(),
            src,
            "--save".into(),
            format!("src={}", cache.display()),
            "nd:src:cl_scale:2".into(),
        ],
    );
    first.assert_status(0);
    let prog = format!("f=binary:{}", cache.display());
    let second = capture_opencl_workload(
        &dir.path().join("run2"),
        &work,
        &["--isa", "dump"],
        "dlsym",
        &[
            "--program".into(),
            prog,
            "nd:f:cl_scale:3".into(),
            "clone:f:cl_scale_twice:4".into(),
        ],
    );
    second.assert_status(0);
    let rec = only_record(&second.out);
    assert_eq!(
        rec.modules
            .values()
            .map(|m| m.from.clone())
            .collect::<Vec<_>>(),
        [Some("binary".to_string())],
        "{}",
        second.ctx()
    );
    let (r1, r2) = (first.report(), second.report());
    let by_name = |r: &Value| -> BTreeMap<String, (u64, String, String, u64)> {
        r["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| {
                let s = |v: &Value| v.as_str().unwrap_or("?").to_string();
                (
                    s(&k["name"]),
                    (
                        k["launches"].as_u64().unwrap_or(0),
                        s(&k["status"]),
                        s(&k["isa_source"]),
                        k["instructions"].as_u64().unwrap_or(0),
                    ),
                )
            })
            .collect()
    };
    let (one, two) = (by_name(&r1), by_name(&r2));
    let instrs = one["cl_scale"].3;
    assert!(instrs > 0, "{}", first.ctx());
    assert_eq!(one["cl_scale"].2, "igc-dump", "{}", first.ctx());
    assert_eq!(
        two.into_iter()
            .map(|(k, v)| (k, (v.0, v.1, v.2)))
            .collect::<Vec<_>>(),
        [
            (
                "cl_scale".to_string(),
                (3, "matched".to_string(), "module-binary".to_string())
            ),
            (
                "cl_scale_twice".to_string(),
                (4, "matched".to_string(), "module-binary".to_string())
            ),
        ],
        "{}",
        second.ctx()
    );
    assert_eq!(by_name(&r2)["cl_scale"].3, instrs, "{}", second.ctx());
}

/// SIGKILL right after the last enqueue: every enqueue that returned is
/// counted, the report says the process was killed.
#[test]
fn a_kill_mid_run_keeps_every_enqueue_that_returned() {
    let dir = temp_dir("opencl-kill");
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let mut args = programs();
    args.truncate(4);
    args.extend(
        [
            "nd:src:cl_scale:3",
            &on_this_stack("user:src:common_kernel:4"),
            "task:il:only_in_b:2",
            "end:kill",
            "nd:src:cl_scale:100",
        ]
        .map(String::from),
    );
    let run = capture_opencl_workload(&out, &work, &[], "link", &args);
    run.assert_status(128 + 9);
    let rec = only_record(&out);
    let report = run.report();
    let got: BTreeMap<(String, String), (u64, String)> = rows(&report, &labels(&rec))
        .into_iter()
        .map(|(k, v)| (k, (v.0, v.2)))
        .collect();
    let want: BTreeMap<(String, String), (u64, String)> = [("cl_scale", 3), ("common_kernel", 4)]
        .into_iter()
        .map(|(k, n)| {
            (
                (k.to_string(), "src".to_string()),
                (n, "matched".to_string()),
            )
        })
        .chain([(
            ("only_in_b".to_string(), "il".to_string()),
            (2, "matched".to_string()),
        )])
        .collect();
    assert_eq!(got, want, "{}", run.ctx());
    assert_eq!(
        report["processes"][0]["exit"],
        serde_json::json!({"signal": 9}),
        "{}",
        run.ctx()
    );
}

/// One capture of both APIs, the same SPIR-V made a Level Zero module and
/// an OpenCL program: two kernels, one of each API, each with its own count;
/// the table tells them apart by API.
#[test]
fn one_capture_of_both_apis_keeps_them_apart() {
    let dir = temp_dir("opencl-both");
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    std::fs::create_dir_all(&work).expect("the work folder");
    let a = spirv("a");
    let script = format!(
        "{} --via link --module a={} imm:a:scale:2 && {} --via link --program khr=il:{} nd:khr:scale:5",
        workload_link().display(),
        a.display(),
        opencl_workload("link").display(),
        a.display()
    );
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["--emulate", "pvc", "--isa", "dump", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", &script])
        .current_dir(&work);
    hermetic(&mut cmd);
    let run = run(cmd, &out);
    run.assert_status(0);
    let report = run.report();
    let got: BTreeMap<(String, String), (u64, String)> = report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            let s = |v: &Value| v.as_str().unwrap_or("?").to_string();
            (
                (s(&k["name"]), s(&k["api"])),
                (k["launches"].as_u64().unwrap_or(0), s(&k["status"])),
            )
        })
        .collect();
    let m = |n: u64| (n, "matched".to_string());
    assert_eq!(
        got,
        BTreeMap::from([
            (("scale".to_string(), "level_zero".to_string()), m(2)),
            (("scale".to_string(), "opencl".to_string()), m(5)),
        ]),
        "{}",
        run.ctx()
    );
    let table = run.stdout();
    for tag in ["scale [level zero]", "scale [opencl]"] {
        assert!(
            table.contains(tag),
            "the table has no {tag:?}\n{}",
            run.ctx()
        );
    }
}
