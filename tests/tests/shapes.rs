//! Launch shapes and occupancy: tests/workload/shapes.c launches its
//! kernels (tests/workload/kernels_shapes.cl, and kernels_shapes_big.cl
//! built for 256 registers) with known shapes on every launch path that
//! counts, and the report must give each kernel's shapes exactly (group
//! size, group count, local memory, launches and appends), most launched
//! first, its static local memory, the launches past the shapes kept, the
//! device, and each shape's occupancy as computed by hand for the device
//! emulated (4 Xe-cores of 8 EUs: NEO's `HardwareInfoOverride=1x4x8`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xpu_asm_tests::*;

struct Built {
    program: PathBuf,
    kernels: PathBuf,
    big: PathBuf,
}

fn sh(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        o.status.success(),
        "{shown} failed on {}:\n{}{}",
        stack_info(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// shapes.c and its two modules' SPIR-V, built once per test process.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        require_stack();
        let dir = build_dir().join(format!("shapes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a build folder");
        let src = workload_src_dir();
        let program = dir.join("shapes");
        sh(Command::new("gcc")
            .args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
            .arg(src.join("shapes.c"))
            .arg("-o")
            .arg(&program)
            .arg("-lze_loader"));
        for name in ["kernels_shapes", "kernels_shapes_big"] {
            sh(Command::new("ocloc")
                .current_dir(&dir)
                .args(["compile", "-file"])
                .arg(src.join(format!("{name}.cl")))
                .args(["-spv_only", "-device", "pvc", "-output", name])
                .args(["-output_no_suffix", "-q"]));
        }
        Built {
            program,
            kernels: dir.join("kernels_shapes.spv"),
            big: dir.join("kernels_shapes_big.spv"),
        }
    })
}

/// `xpu-asm-run --emulate product` of shapes.c.
fn capture_shapes(dir: &Path, product: &str) -> Run {
    let r = capture_shapes_with(dir, product, &[], product);
    r.assert_status(0);
    r
}

/// [`capture_shapes`] with `args` after the modules, into `dir/name`.
fn capture_shapes_with(dir: &Path, product: &str, args: &[&str], name: &str) -> Run {
    let b = built();
    let out = dir.join(name);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["--emulate", product, "--quiet", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&b.program)
        .arg(&b.kernels)
        .arg(&b.big)
        .args(args)
        .current_dir(dir);
    run(cmd, &out)
}

/// A shape as the test writes it: group size, group count (`None`:
/// indirect), local memory bytes, launches, appended.
type Shape = ([u32; 3], Option<[u32; 3]>, u64, u64, u64);

/// Every kernel's shapes, most launched first, as shapes.c launches them.
fn expected() -> Vec<(&'static str, Vec<Shape>)> {
    // The 32 listed of the 256 kept (group counts 1 to 256): 7, launched
    // 6 times, then the first met of those launched once.
    let many: Vec<Shape> = std::iter::once(([16, 1, 1], Some([7, 1, 1]), 0, 6, 6))
        .chain(
            (1..=32)
                .filter(|i| *i != 7)
                .map(|i| ([16, 1, 1], Some([i, 1, 1]), 0, 1, 1)),
        )
        .collect();
    vec![
        // Two handles: 5 + 2 launches of one shape, 3 and 1 of others.
        (
            "sh_1d",
            vec![
                ([64, 1, 1], Some([16, 1, 1]), 0, 7, 7),
                ([128, 1, 1], Some([8, 1, 1]), 0, 3, 3),
                ([32, 1, 1], Some([1, 1, 1]), 0, 1, 1),
                ([32, 1, 1], Some([4096, 1, 1]), 0, 1, 1),
            ],
        ),
        (
            "sh_2d",
            vec![
                ([16, 8, 1], Some([4, 4, 1]), 0, 4, 4),
                ([8, 8, 1], Some([2, 3, 1]), 0, 2, 2),
            ],
        ),
        (
            "sh_3d",
            vec![
                ([4, 4, 4], Some([2, 2, 2]), 0, 3, 3),
                ([8, 4, 2], Some([1, 2, 3]), 0, 1, 1),
            ],
        ),
        // 4096, 1024 then 49152 bytes of local memory; the 8-byte NULL
        // pointer beside it is not local memory.
        (
            "sh_slm",
            vec![
                ([256, 1, 1], Some([4, 1, 1]), 1024, 3, 3),
                ([256, 1, 1], Some([4, 1, 1]), 4096, 2, 2),
                ([256, 1, 1], Some([4096, 1, 1]), 49152, 1, 1),
            ],
        ),
        (
            "sh_static",
            vec![
                ([128, 1, 1], Some([32, 1, 1]), 1024, 2, 2),
                ([32, 1, 1], Some([4096, 1, 1]), 1024, 1, 1),
            ],
        ),
        // A regular list of two appends executed 4 times.
        (
            "sh_regular",
            vec![
                ([32, 1, 1], Some([10, 1, 1]), 0, 4, 1),
                ([32, 1, 1], Some([20, 1, 1]), 0, 4, 1),
            ],
        ),
        ("sh_indirect", vec![([64, 1, 1], None, 0, 2, 2)]),
        ("sh_coop", vec![([16, 1, 1], Some([2, 1, 1]), 0, 1, 1)]),
        ("sh_many", many),
        ("sh_big", vec![([16, 1, 1], Some([64, 1, 1]), 0, 6, 6)]),
    ]
}

fn dims(v: &Value) -> Option<[u32; 3]> {
    let a = v.as_array()?;
    Some([0, 1, 2].map(|i| a[i].as_u64().unwrap_or(u64::MAX) as u32))
}

fn kernel<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["kernels"]
        .as_array()
        .and_then(|ks| ks.iter().find(|k| k["name"] == name))
        .unwrap_or_else(|| panic!("{}: no kernel {name} in the report", stack_info()))
}

/// The shapes of every kernel exact, the device (Xe-cores, EUs per
/// Xe-core, largest group), and `sh_many`'s other shapes.
fn shapes_exact(r: &Run, tag: &str, want: (u64, u64, u64)) {
    let report = r.report();
    for (name, want) in expected() {
        let k = kernel(&report, name);
        let got: Vec<Shape> = k["shapes"]
            .as_array()
            .unwrap_or_else(|| panic!("{tag}: {name} has no shapes\n{}", r.ctx()))
            .iter()
            .map(|s| {
                (
                    dims(&s["group_size"]).unwrap_or([0; 3]),
                    dims(&s["group_count"]),
                    s["slm_bytes"].as_u64().unwrap_or(u64::MAX),
                    s["launches"].as_u64().unwrap_or(u64::MAX),
                    s["appended"].as_u64().unwrap_or(u64::MAX),
                )
            })
            .collect();
        assert_eq!(got, want, "{tag}: shapes of {name}\n{}", r.ctx());
        let static_slm = if name == "sh_static" { 1024 } else { 0 };
        assert_eq!(k["slm_static_bytes"], static_slm, "{tag}: {name}");
        // sh_many: 224 shapes kept but not listed (33 to 256, once each),
        // and 47 launches of shapes not kept (257 to 300, and 290 thrice).
        let other = if name == "sh_many" {
            serde_json::json!({"launches": 271, "appended": 271, "shapes": 224, "unkept_launches": 47})
        } else {
            Value::Null
        };
        assert_eq!(k["other_shapes"], other, "{tag}: other shapes of {name}");
    }
    let device = &report["processes"][0]["device"];
    let got = (
        device["xe_cores"].as_u64(),
        device["eus_per_xe_core"].as_u64(),
        device["max_group_size"].as_u64(),
    );
    let want = (Some(want.0), Some(want.1), Some(want.2));
    assert_eq!(got, want, "{tag}: device {device}");
}

/// `(kernel, shape index) -> (SIMD, GRF, percent, limiter, groups per
/// Xe-core, idle lanes %)`, computed by hand from the model for the
/// device emulated (4 Xe-cores, 8 EUs each) and the SIMD width and GRF
/// size IGC chose (asserted too).
type Occ = (&'static str, usize, u64, u64, f64, &'static str, u64, f64);

fn occupancy_exact(r: &Run, tag: &str, family: &str, want: &[Occ]) {
    let report = r.report();
    assert_eq!(
        report["processes"][0]["device"]["family"],
        family,
        "{tag}: family\n{}",
        r.ctx()
    );
    for &(name, i, simd, grf, percent, limiter, groups, idle) in want {
        let k = kernel(&report, name);
        let s = &k["shapes"][i];
        let o = &s["occupancy"];
        let got = (
            k["simd"].as_u64(),
            k["grf"].as_u64(),
            o["percent"].as_f64(),
            o["limited_by"].as_str(),
            o["groups_per_xe_core"].as_u64(),
            o["idle_lanes_percent"].as_f64(),
        );
        assert_eq!(
            got,
            (
                Some(simd),
                Some(grf),
                Some(percent),
                Some(limiter),
                Some(groups),
                Some(idle)
            ),
            "{tag}: occupancy of {name} shape {i} {s}"
        );
    }
}

/// pvc and bmg (Xe-HPC and Xe2 have the same numbers), SIMD32 at 128
/// GRF: 64 slots per Xe-core of 8 EUs x 8 threads, 64 groups, 64
/// barriers, 128 KiB of SLM:
/// - sh_1d 64 x 16: 2 threads per group, 16 groups on 4 Xe-cores: 4
///   each, 8 of 64 threads: 12.5%, launch;
/// - sh_1d 32 x 4096: 1 thread per group, 64 slots: 100%, threads (the
///   64 groups and 1024 launched per Xe-core allow as many);
/// - sh_slm 256 x 4096 with 48 KiB: 8 threads per group, 2 groups in 128
///   KiB: 16 of 64, 25%, slm;
/// - sh_static 32 x 4096 (a barrier): 64 threads, barriers and groups
///   alike: 100%, threads (named first);
/// - sh_indirect 64 x ?: no launch limit: 32 groups of 2 threads, 100%,
///   threads;
/// - sh_coop 16 x 2: 1 thread with half its lanes idle, 1 group: 1.56%;
/// - sh_big 16 x 64 at 256 GRF (32 slots): 16 groups of 1 thread per
///   Xe-core by the launch: 16 of 64, 25%.
const PVC_BMG: &[Occ] = &[
    ("sh_1d", 0, 32, 128, 12.5, "launch", 4, 0.0),
    ("sh_1d", 3, 32, 128, 100.0, "threads", 64, 0.0),
    ("sh_slm", 2, 32, 128, 25.0, "slm", 2, 0.0),
    ("sh_static", 1, 32, 128, 100.0, "threads", 64, 0.0),
    ("sh_indirect", 0, 32, 128, 100.0, "threads", 32, 0.0),
    ("sh_coop", 0, 32, 128, 1.56, "launch", 1, 50.0),
    ("sh_big", 0, 32, 256, 25.0, "launch", 16, 50.0),
];

/// ptl (Xe3), SIMD32 at 64 GRF: 10 threads per EU, 80 slots per Xe-core
/// (its most), 64 groups, 64 barriers, 128 KiB of SLM:
/// - sh_1d 64 x 16: 4 groups of 2 threads, 8 of 80: 10%, launch;
/// - sh_1d 32 x 4096: 80 slots, but 64 groups at most: 80%, groups;
/// - sh_slm 256 x 4096 with 48 KiB: 2 groups of 8 threads: 20%, slm;
/// - sh_static 32 x 4096 (a barrier): 64 barriers: 80%, barriers;
/// - sh_indirect 64 x ?: 40 groups of 2 threads: 100%, threads;
/// - sh_coop 16 x 2: 1 of 80: 1.25%, launch, half its lanes idle;
/// - sh_big 16 x 64 at 256 GRF (4 threads per EU, 32 slots): 16 groups
///   by the launch: 16 of 80, 20%.
const PTL: &[Occ] = &[
    ("sh_1d", 0, 32, 64, 10.0, "launch", 4, 0.0),
    ("sh_1d", 3, 32, 64, 80.0, "groups", 64, 0.0),
    ("sh_slm", 2, 32, 64, 20.0, "slm", 2, 0.0),
    ("sh_static", 1, 32, 64, 80.0, "barriers", 64, 0.0),
    ("sh_indirect", 0, 32, 64, 100.0, "threads", 40, 0.0),
    ("sh_coop", 0, 32, 64, 1.25, "launch", 1, 50.0),
    ("sh_big", 0, 32, 256, 20.0, "launch", 16, 50.0),
];

/// dg2 (Xe-HPG) on NEO 22.43, which reports 16 EUs per Xe-core: 128
/// slots at 128 GRF, 128 groups, 128 barriers:
/// - sh_1d 64 x 16: 4 groups of 2 threads, 8 of 128: 6.25%, launch;
/// - sh_slm 256 x 4096 with 48 KiB: 2 groups of 8: 12.5%, slm;
/// - sh_static 32 x 4096: 128 of everything: 100%, threads;
/// - sh_indirect 64 x ?: 64 groups of 2: 100%, threads;
/// - sh_big 16 x 64 at 256 GRF (64 slots): 16 groups: 12.5%, launch.
const DG2: &[Occ] = &[
    ("sh_1d", 0, 32, 128, 6.25, "launch", 4, 0.0),
    ("sh_slm", 2, 32, 128, 12.5, "slm", 2, 0.0),
    ("sh_static", 1, 32, 128, 100.0, "threads", 128, 0.0),
    ("sh_indirect", 0, 32, 128, 100.0, "threads", 64, 0.0),
    ("sh_big", 0, 32, 256, 12.5, "launch", 16, 50.0),
];

#[test]
fn shapes_and_occupancy_on_pvc() {
    let dir = temp_dir("shapes");
    let tag = format!("{} pvc", stack_info());
    let r = capture_shapes(dir.path(), "pvc");
    shapes_exact(&r, &tag, (4, 8, 1024));
    occupancy_exact(&r, &tag, "xe-hpc", PVC_BMG);
}

/// Battlemage (Xe2) and Panther Lake (Xe3) on NEO 26; NEO 22.43 has
/// neither, so there the other product it emulates, dg2 (Xe-HPG).
#[test]
fn shapes_and_occupancy_on_bmg_and_ptl() {
    let dir = temp_dir("shapes");
    match stack() {
        Stack::Sid => {
            for (product, family, table) in [("bmg", "xe2", PVC_BMG), ("ptl", "xe3", PTL)] {
                let tag = format!("{} {product}", stack_info());
                let r = capture_shapes(dir.path(), product);
                shapes_exact(&r, &tag, (4, 8, 1024));
                occupancy_exact(&r, &tag, family, table);
            }
        }
        Stack::Debian12 => {
            let tag = format!("{} dg2", stack_info());
            let r = capture_shapes(dir.path(), "dg2");
            shapes_exact(&r, &tag, (4, 16, 512));
            occupancy_exact(&r, &tag, "xe-hpg", DG2);
        }
    }
}

/// `diff --fail-on occupancy-N`: pvc against the stack's other product
/// (ptl on sid, dg2 on Debian 12), where sh_1d's most launched shape, 64 x
/// 16, is 12.5% against 10% (80 threads per Xe-core) and 6.25% (128).
#[test]
fn diff_gates_on_occupancy() {
    let dir = temp_dir("shapes-diff");
    let (other, b_pct) = match stack() {
        Stack::Sid => ("ptl", "10%"),
        Stack::Debian12 => ("dg2", "6.25%"),
    };
    let tag = format!("{} pvc against {other}", stack_info());
    let a = capture_shapes(dir.path(), "pvc");
    let b = capture_shapes(dir.path(), other);
    let gate = |cond: &str| {
        let mut cmd = Command::new(xpu_asm_run());
        cmd.arg("diff")
            .arg(dir.path().join("pvc"))
            .arg(dir.path().join(other))
            .args(["--fail-on", cond]);
        let shown = shell_words(&cmd);
        let out = run_with_timeout(&mut cmd);
        (shown, out)
    };
    let (shown, out) = gate("occupancy-2");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "xpu-asm-run: --fail-on occupancy-2: sh_1d: occupancy 12.5% -> {b_pct} of its most launched shape (64 x 16 -> 64 x 16)"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{tag}: {shown}\n{stderr}\n{}\n{}",
        a.ctx(),
        b.ctx()
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "{tag}: no line {line:?} in\n{stderr}"
    );
    let (shown, out) = gate("occupancy-60%");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{tag}: {shown}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// OpenCL's shapes (tests/workload/opencl.c on pvc): an enqueue without a
/// local size has the driver's group size (`group_size` and
/// `group_count` null, its global size given, no occupancy), a task one
/// work-item in one group, `clEnqueueNDCountKernelINTEL` its group count
/// and local size; a `__local` argument's size is the group's local
/// memory, a NULL buffer's is not, and a kernel's static local memory is
/// its binary's.
#[test]
fn opencl_shapes() {
    let dir = temp_dir("shapes-cl");
    let out = dir.path().join("cl");
    let w = workload_src_dir();
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["--emulate", "pvc", "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(opencl_workload("link"))
        .args(["--via", "link", "--program"])
        .arg(format!("src=source:{}", w.join("kernels_cl.cl").display()))
        .arg("--program")
        .arg(format!("khr=ilkhr:{}", spirv("a").display()))
        .arg("--program")
        .arg(format!(
            "sh=source:{}",
            w.join("kernels_shapes.cl").display()
        ))
        .args([
            "nd:src:cl_scale:3",
            "task:src:cl_scale:2",
            "count:khr:scale_v2:6",
        ])
        .args(["local:sh:sh_slm:4", "nd:sh:sh_static:1"])
        .current_dir(dir.path());
    hermetic(&mut cmd);
    let r = run(cmd, &out);
    r.assert_status(0);
    let tag = format!("{} OpenCL pvc", stack_info());
    let report = r.report();
    let shapes = |name: &str| -> Vec<(Value, Value, Value, u64)> {
        kernel(&report, name)["shapes"]
            .as_array()
            .unwrap_or_else(|| panic!("{tag}: {name} has no shapes\n{}", r.ctx()))
            .iter()
            .map(|s| {
                (
                    s["group_size"].clone(),
                    s["group_count"].clone(),
                    s["global_size"].clone(),
                    s["launches"].as_u64().unwrap_or(u64::MAX),
                )
            })
            .collect()
    };
    use serde_json::json;
    assert_eq!(
        shapes("cl_scale"),
        [
            (Value::Null, Value::Null, json!([64, 1, 1]), 3),
            (json!([1, 1, 1]), json!([1, 1, 1]), Value::Null, 2),
        ],
        "{tag}: cl_scale\n{}",
        r.ctx()
    );
    assert_eq!(
        shapes("scale_v2"),
        [(json!([16, 1, 1]), json!([4, 1, 1]), Value::Null, 6)],
        "{tag}: scale_v2\n{}",
        r.ctx()
    );
    // 2048 bytes of local memory beside a NULL buffer (not local memory);
    // sh_static's 1 KiB of static local memory from its binary.
    let slm = |name: &str| {
        let k = kernel(&report, name);
        (
            k["slm_static_bytes"].as_u64(),
            k["shapes"][0]["slm_bytes"].as_u64(),
        )
    };
    assert_eq!(
        shapes("sh_slm"),
        [(json!([256, 1, 1]), json!([4, 1, 1]), Value::Null, 4)],
        "{tag}: sh_slm\n{}",
        r.ctx()
    );
    assert_eq!(
        slm("sh_slm"),
        (Some(0), Some(2048)),
        "{tag}: sh_slm's local memory"
    );
    assert_eq!(
        slm("sh_static"),
        (Some(1024), Some(1024)),
        "{tag}: sh_static's"
    );
    let auto = &kernel(&report, "cl_scale")["shapes"][0];
    assert_eq!(
        (&auto["occupancy"], auto["occupancy_reason"].as_str()),
        (&Value::Null, Some("the driver chose the work-group size")),
        "{tag}"
    );
    assert_eq!(
        report["processes"][0]["device"]["xe_cores"].as_u64(),
        Some(4),
        "{tag}: OpenCL's device"
    );
}

/// A process killed after its last launch leaves every shape, as it
/// leaves every count: the shapes are in its counts file.
#[test]
fn shapes_survive_a_kill() {
    let dir = temp_dir("shapes-kill");
    let tag = format!("{} pvc, killed", stack_info());
    let r = capture_shapes_with(dir.path(), "pvc", &["kill"], "killed");
    r.assert_status(128 + 9);
    shapes_exact(&r, &tag, (4, 8, 1024));
}

/// `merge` adds shapes up: two captures of shapes.c merged give each shape
/// twice its launches, in the same order.
#[test]
fn merge_adds_shapes_up() {
    let dir = temp_dir("shapes-merge");
    let tag = format!("{} pvc, merged", stack_info());
    let a = capture_shapes_with(dir.path(), "pvc", &[], "a");
    a.assert_status(0);
    let b = capture_shapes_with(dir.path(), "pvc", &[], "b");
    b.assert_status(0);
    let out = dir.path().join("merged");
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["merge", "--quiet", "-o"])
        .arg(&out)
        .arg(dir.path().join("a"))
        .arg(dir.path().join("b"));
    let m = run(cmd, &out);
    m.assert_status(0);
    let report = m.report();
    for (name, want) in expected() {
        let got: Vec<(u64, u64)> = kernel(&report, name)["shapes"]
            .as_array()
            .unwrap_or_else(|| panic!("{tag}: {name} has no shapes\n{}", m.ctx()))
            .iter()
            .map(|s| {
                (
                    s["launches"].as_u64().unwrap_or(0),
                    s["appended"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        let twice: Vec<(u64, u64)> = want.iter().map(|s| (2 * s.3, 2 * s.4)).collect();
        assert_eq!(got, twice, "{tag}: {name}\n{}", m.ctx());
    }
    let other = &kernel(&report, "sh_many")["other_shapes"];
    assert_eq!(
        *other,
        serde_json::json!({"launches": 542, "appended": 542, "shapes": 224, "unkept_launches": 94}),
        "{tag}: sh_many's other shapes"
    );
}

/// `xpu-asm-run port`: shapes.c captured on pvc and ported to every other
/// product the stack emulates carries the run's shapes, and each shape's
/// occupancy on the product is the one a run there gives: every launched
/// kernel's `shapes` (group size and count, local memory, launches,
/// occupancy with its limiter and limits), `slm_static_bytes` and
/// `other_shapes` equal to a real run's under `--emulate` that product,
/// and the process's device the same. The port's table shows the most
/// launched shape's occupancy, and `--fail-on occupancy-N` gates it.
#[test]
fn a_port_has_the_shapes_and_occupancy_of_a_run_there() {
    let dir = temp_dir("shapes-port");
    let targets: Vec<&str> = stack()
        .products()
        .iter()
        .copied()
        .filter(|p| *p != "pvc")
        .collect();
    let cap = dir.path().join("pvc");
    capture_shapes(dir.path(), "pvc");
    let port = |more: &[&str]| {
        let mut cmd = Command::new(xpu_asm_run());
        cmd.arg("port")
            .arg(&cap)
            .args(["--to", &targets.join(","), "-q"])
            .args(more);
        let shown = shell_words(&cmd);
        (shown, run_with_timeout(&mut cmd))
    };
    let (shown, out) = port(&[]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {shown}\n{table}\n{}",
        stack_info(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table
            .lines()
            .next()
            .is_some_and(|l| l.contains("occupancy")),
        "{}: the port's table has no occupancy column:\n{table}",
        stack_info()
    );
    let pick = |k: &Value| {
        serde_json::json!({
            "shapes": k["shapes"],
            "slm_static_bytes": k["slm_static_bytes"],
            "other_shapes": k["other_shapes"],
            "launches": k["launches"],
        })
    };
    let read = |p: &Path| -> Value {
        let text = std::fs::read_to_string(p.join("report.json"))
            .unwrap_or_else(|e| panic!("{}: {}: {e}", stack_info(), p.display()));
        serde_json::from_str(&text).expect("report.json is JSON")
    };
    // Each product's occupancy cell of each kernel, as a run there gives it.
    let mut cells = std::collections::BTreeMap::new();
    for p in &targets {
        let tag = format!("{} pvc ported to {p}", stack_info());
        let real = capture_shapes(dir.path(), p).report();
        for (name, _) in expected() {
            let o = &kernel(&real, name)["shapes"][0]["occupancy"];
            let cell = format!(
                "{}% {}",
                o["percent"].as_f64().unwrap_or(f64::NAN),
                o["limited_by"].as_str().unwrap_or("?")
            );
            cells.insert((p.to_string(), name), cell);
        }
        let ported = read(&cap.join("port").join(p));
        let mut equal = 0;
        for (name, _) in expected() {
            let (a, b) = (pick(kernel(&ported, name)), pick(kernel(&real, name)));
            assert_eq!(a, b, "{tag}: {name}: the port (left) against a run on {p}");
            assert!(
                a["shapes"][0]["occupancy"]["percent"].is_number(),
                "{tag}: {name} has no occupancy: {a}"
            );
            equal += 1;
        }
        eprintln!(
            "{tag}: {equal}/{} kernels with the shapes and occupancy of a run on {p}",
            expected().len()
        );
        let (pd, rd) = (
            &ported["processes"][0]["device"],
            &real["processes"][0]["device"],
        );
        assert_eq!(pd, rd, "{tag}: the port's device (left) and the run's");
        // The table's row of sh_1d on this product gives its occupancy.
        let occ = &kernel(&real, "sh_1d")["shapes"][0]["occupancy"];
        let cell = format!(
            "{}% {}",
            occ["percent"].as_f64().unwrap_or(f64::NAN),
            occ["limited_by"].as_str().unwrap_or("?")
        );
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().next() == Some(*p) && l.contains(&cell)),
            "{tag}: no row of {p} with {cell:?} in\n{table}"
        );
    }
    // The gate: sh_1d's most launched shape, 64 x 16, is 12.5% on pvc and
    // less on ptl (10%) and dg2 (6.25%).
    let (other, b_pct) = match stack() {
        Stack::Sid => ("ptl", "10%"),
        Stack::Debian12 => ("dg2", "6.25%"),
    };
    port_page_seen(&cap, &targets, &cells, other);
    let (shown, out) = port(&["--fail-on", "occupancy-2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "xpu-asm-run: --fail-on occupancy-2: sh_1d on {other}: occupancy 12.5% -> {b_pct} of its most launched shape (64 x 16 -> 64 x 16)"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}: {shown}\n{stderr}",
        stack_info()
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "{}: no line {line:?} in\n{stderr}",
        stack_info()
    );
    let (shown, out) = port(&["--fail-on", "occupancy-60%"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {shown}\n{}",
        stack_info(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// DIR/port/index.html in headless Chromium (tests/browser/port.mjs): no
/// error and nothing loaded from elsewhere; every product listed with its
/// pages; a row per launched kernel with five figures for the run's device
/// and each product, each product's occupancy as `cells` (a run there)
/// gives it, sh_1d's on `worse` marked worse; the first kernel's ISA on
/// every device in columns side by side, each its ISA copy's text. The
/// sid root has no browser: there the file's rows are read instead.
fn port_page_seen(
    cap: &Path,
    targets: &[&str],
    cells: &std::collections::BTreeMap<(String, &str), String>,
    worse: &str,
) {
    let page = cap.join("port").join("index.html");
    let tag = format!("{} {}", stack_info(), page.display());
    if stack() == Stack::Sid {
        let html = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{tag}: {e}"));
        for ((d, name), cell) in cells {
            let row = html
                .lines()
                .find(|l| l.starts_with(&format!("<tr data-kernel=\"{name}\">")))
                .unwrap_or_else(|| panic!("{tag}: no row of {name}"));
            let class = if *name == "sh_1d" && d == worse {
                " class=\"worse\""
            } else {
                ""
            };
            let td = format!("<td{class}");
            let want = format!("data-device=\"{d}\" data-figure=\"occupancy\">{cell}</td>");
            assert!(
                row.split("</td>")
                    .any(|c| c.starts_with(&td) && format!("{c}</td>").ends_with(&want)),
                "{tag}: {name} on {d}: no cell {want:?} in {row}"
            );
        }
        return;
    }
    let browser = workspace_dir().join("tests/browser");
    assert!(
        browser.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").is_file(),
        "no playwright-core in {} or no /usr/bin/chromium: run scripts/install-deps.sh",
        browser.display()
    );
    let mut cmd = Command::new("node");
    cmd.arg(browser.join("port.mjs")).arg(&page);
    let r = run(cmd, cap);
    r.assert_status(0);
    let v: Value = serde_json::from_str(r.stdout().trim())
        .unwrap_or_else(|e| panic!("{tag}: port.mjs printed no JSON: {e}\n{}", r.ctx()));
    assert_eq!(v["errors"], serde_json::json!([]), "{tag}: errors\n{v:#}");
    assert_eq!(
        v["requests"],
        serde_json::json!([]),
        "{tag}: requests\n{v:#}"
    );
    let listed: Vec<&str> = v["products"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["product"].as_str())
        .collect();
    assert_eq!(listed, targets, "{tag}: products listed");
    for p in v["products"].as_array().unwrap() {
        let d = p["product"].as_str().unwrap();
        assert_eq!(
            p["links"],
            serde_json::json!([format!("{d}/report.html"), format!("{d}/compare.html")]),
            "{tag}: links of {d}"
        );
        assert!(
            cap.join("port").join(d).join("compare.html").is_file(),
            "{tag}: {d}"
        );
    }
    let rows = v["rows"].as_array().expect("rows");
    let mut names: Vec<&str> = rows.iter().filter_map(|r| r["kernel"].as_str()).collect();
    names.sort_unstable();
    let mut want: Vec<&str> = expected().iter().map(|(n, _)| *n).collect();
    want.sort_unstable();
    assert_eq!(names, want, "{tag}: the table's kernels");
    let devices: Vec<&str> = std::iter::once("pvc")
        .chain(targets.iter().copied())
        .collect();
    for row in rows {
        let name = row["kernel"].as_str().unwrap();
        for d in &devices {
            let c = &row["cells"][d];
            for f in ["SIMD", "GRF", "instrs", "spill", "occupancy"] {
                assert!(
                    c[f]["text"].is_string(),
                    "{tag}: {name} on {d} has no {f}: {row}"
                );
            }
            if let Some(want) = cells.get(&(d.to_string(), name)) {
                assert_eq!(c["occupancy"]["text"], *want, "{tag}: {name} on {d}: {row}");
            }
        }
        if name == "sh_1d" {
            assert_eq!(
                row["cells"][worse]["occupancy"]["worse"], true,
                "{tag}: sh_1d's occupancy on {worse} is not marked worse: {row}"
            );
        }
    }
    let isa = v["isa"].as_array().expect("isa columns");
    let shown: Vec<&str> = isa.iter().filter_map(|c| c["device"].as_str()).collect();
    assert_eq!(
        shown, devices,
        "{tag}: the ISA columns of {}",
        v["isa_kernel"]
    );
    for w in isa.windows(2) {
        assert!(
            w[0]["y"] == w[1]["y"] && w[0]["x"].as_f64() < w[1]["x"].as_f64(),
            "{tag}: ISA columns not side by side: {w:?}"
        );
    }
    for c in isa {
        let text = c["text"].as_str().unwrap_or_default();
        assert!(
            c["visible"] == true && text.lines().count() > 10,
            "{tag}: the ISA column of {} is empty: {c}",
            c["device"]
        );
    }
}
