//! `xpu-asm-run port`: a capture on pvc ported to every other product the
//! stack emulates must be exactly what a run of the same workload on that
//! product gives: the same SIMD width, GRF, instruction count, spill bytes
//! and the same instructions, and the same launch shapes with the same
//! occupancy there, kernel by kernel. A module built with
//! specialization constants and build flags is ported with both, and the
//! comparison tells a build without either apart.

use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_asm_tests::*;

/// The products to port to: every one the stack emulates but pvc.
fn targets() -> Vec<&'static str> {
    stack()
        .products()
        .iter()
        .copied()
        .filter(|p| *p != "pvc")
        .collect()
}

/// Runs the C workload (`--via link`) with `args` under `xpu-asm-run
/// --emulate product -o root/name`; the capture folder.
fn capture(root: &Path, name: &str, product: &str, args: &[String]) -> PathBuf {
    capture_with(root, name, product, &[], args)
}

/// [`capture`] with xpu-asm-run's `options`.
fn capture_with(
    root: &Path,
    name: &str,
    product: &str,
    options: &[&str],
    args: &[String],
) -> PathBuf {
    let out = root.join(name);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(options)
        .args(["--emulate", product, "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(workload_link())
        .args(["--via", "link"])
        .args(args)
        .current_dir(root)
        .env("NEO_CACHE_DIR", root.join(format!("{name}.neo-cache")));
    let r = run(cmd, &out);
    r.assert_status(0);
    out
}

/// `xpu-asm-run port cap --to products --json`: its output.
fn port(cap: &Path, products: &[&str], more: &[&str]) -> Run {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("port")
        .arg(cap)
        .args(["--to", &products.join(","), "--json", "-q"])
        .args(more)
        .env("NEO_CACHE_DIR", cap.with_extension("port-neo-cache"));
    run(cmd, cap)
}

/// A launched kernel as a report gives it, with its code.
#[derive(Debug, PartialEq)]
struct Kernel {
    name: String,
    module: String,
    launches: u64,
    simd: Option<u64>,
    grf: Option<u64>,
    instructions: Option<u64>,
    spill_bytes: Option<u64>,
    /// `igc-dump` or `module-binary`.
    isa_source: Option<String>,
    /// Its ISA copy's lines, the `//` comments (the header) left out.
    code: Vec<String>,
    /// Its launch shapes with their occupancy, and its static local
    /// memory (JSON).
    shapes: String,
}

/// The launched kernels of the capture `dir`.
fn kernels(dir: &Path) -> Vec<Kernel> {
    let path = dir.join("report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("[{}] cannot read {}: {e}", stack().name(), path.display()));
    let r: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    let mut out: Vec<Kernel> = r["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["launches"].as_u64().unwrap_or(0) > 0)
        .map(|k| {
            let code = k["asm_copy"]
                .as_str()
                .map(|c| {
                    std::fs::read_to_string(dir.join(c))
                        .unwrap_or_else(|e| panic!("cannot read {c} of {}: {e}", dir.display()))
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with("//"))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Kernel {
                name: k["name"].as_str().unwrap_or_default().to_string(),
                module: k["module_sha256"].as_str().unwrap_or_default().to_string(),
                launches: k["launches"].as_u64().unwrap_or(0),
                simd: k["simd"].as_u64(),
                grf: k["grf"].as_u64(),
                instructions: k["instructions"].as_u64(),
                spill_bytes: k["spill_bytes"].as_u64(),
                isa_source: k["isa_source"].as_str().map(str::to_string),
                code,
                shapes: format!("{} slm_static {}", k["shapes"], k["slm_static_bytes"]),
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.name, &a.module).cmp(&(&b.name, &b.module)));
    out
}

/// How many of `real`'s launched kernels `ported` has exactly (figures
/// and instructions), of how many; and what differs.
fn compare(ported: &Path, real: &Path) -> (usize, usize, Vec<String>) {
    let (p, r) = (kernels(ported), kernels(real));
    let mut equal = 0;
    let mut diffs = Vec::new();
    for k in &r {
        match p.iter().find(|q| q.name == k.name && q.module == k.module) {
            Some(q) if q == k && !k.code.is_empty() => equal += 1,
            Some(q) if q.shapes != k.shapes => diffs.push(format!(
                "{}: port shapes {}, run shapes {}",
                k.name, q.shapes, k.shapes
            )),
            Some(q) => diffs.push(format!(
                "{}: port simd {:?} grf {:?} instrs {:?} spill {:?} launches {} ({} lines), \
                 run simd {:?} grf {:?} instrs {:?} spill {:?} launches {} ({} lines){}",
                k.name,
                q.simd,
                q.grf,
                q.instructions,
                q.spill_bytes,
                q.launches,
                q.code.len(),
                k.simd,
                k.grf,
                k.instructions,
                k.spill_bytes,
                k.launches,
                k.code.len(),
                first_difference(&q.code, &k.code)
            )),
            None => diffs.push(format!("{}: not in the port", k.name)),
        }
    }
    (equal, r.len(), diffs)
}

fn first_difference(a: &[String], b: &[String]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!("; line {i}: port `{}`, run `{}`", a[i], b[i]),
        None if a.len() != b.len() => "; one is longer".into(),
        None => String::new(),
    }
}

/// Asserts that the port of `cap` to `product` is the real run `real`,
/// every one of its `want` launched kernels.
fn assert_same(cap: &Path, real: &Path, product: &str, workload: &str, want: usize) {
    let ported = cap.join("port").join(product);
    let (equal, total, diffs) = compare(&ported, real);
    eprintln!(
        "[{}] {workload}: pvc ported to {product}: {equal}/{total} kernels equal to a run on {product}",
        stack().name()
    );
    assert!(
        equal == total && total == want && diffs.is_empty(),
        "[{}] {workload}: the port to {product} is not a run on {product}: {equal}/{total} \
         kernels equal (want {want}):\n{}\nport: {:?}",
        stack().name(),
        diffs.join("\n"),
        list_files(&ported)
    );
}

/// The C workload's four modules: a kernel in two modules, loops, and a
/// native binary for pvc (which a product's driver compiles from the
/// SPIR-V it carries, in the port as in a run there).
fn c_workload_args() -> Vec<String> {
    [
        "--module".to_string(),
        format!("a={}", spirv("a").display()),
        "--module".into(),
        format!("b={}", spirv("b").display()),
        "--module".into(),
        format!("l={}", spirv_with("loops", "").display()),
        "--native".into(),
        format!("n={}", native_a().display()),
        format!("imm:a:{VECTOR_ADD}:30"),
        format!("imm:a:{SCALE}:20"),
        format!("reg:a:{SCALE_V2}:2:5"),
        format!("imm:a:{COMMON}:7"),
        format!("imm:b:{COMMON}:3"),
        format!("imm:b:{ONLY_IN_B}:2"),
        "imm:l:loop_none:4".into(),
        "imm:l:loop_one:5".into(),
        "imm:l:loop_nested:6".into(),
        format!("imm:n:{SCALE_V2}:4"),
    ]
    .to_vec()
}

#[test]
fn the_c_workload_ported_is_a_run_on_each_product() {
    require_stack();
    let t = temp_dir("port");
    let args = c_workload_args();
    let cap = capture(t.path(), "pvc", "pvc", &args);
    let targets = targets();
    let r = port(&cap, &targets, &[]);
    r.assert_status(0);
    let view: serde_json::Value = serde_json::from_str(&r.stdout())
        .unwrap_or_else(|e| panic!("port --json is not JSON: {e}\n{}", r.ctx()));
    assert_eq!(view["device"], "pvc", "{}", r.ctx());
    assert_eq!(
        view["kernels"].as_array().map(Vec::len),
        Some(10),
        "{}",
        r.ctx()
    );
    // The gate: diff's conditions, each product against the run.
    let r = port(&cap, &targets, &["--fail-on", "spill"]);
    r.assert_status(0);
    let r = port(&cap, &targets, &["--fail-on", "instructions+1000%,spill"]);
    r.assert_status(0);
    let r = port(&cap, &targets[..1], &["--fail-on", "instructions+0"]);
    r.assert_status(1);
    assert!(
        r.stderr().contains(&format!(
            "--fail-on instructions+0: scale on {}: instructions",
            targets[0]
        )),
        "[{}] {}",
        stack().name(),
        r.ctx()
    );
    // An unknown product: the list, as --emulate gives it.
    let r = port(&cap, &["nosuchgpu"], &[]);
    r.assert_status(2);
    assert!(
        r.stderr().contains("nosuchgpu") && targets.iter().all(|p| r.stderr().contains(p)),
        "[{}] {}",
        stack().name(),
        r.ctx()
    );
    let r = port(&cap, &targets, &[]);
    r.assert_status(0);
    for p in &targets {
        let real = capture(t.path(), &format!("real-{p}"), p, &args);
        assert_same(&cap, &real, p, "C workload (Level Zero)", 10);
        // The page of the run and the product side by side.
        // The same right after a run: --port-to.
        let mut cmd = Command::new(xpu_asm_run());
        let out = t.path().join(format!("port-to-{p}"));
        cmd.args(["--emulate", "pvc", "-q", "--port-to", p, "-o"])
            .arg(&out)
            .arg("--")
            .arg(workload_link())
            .args(["--via", "link"])
            .args(&args)
            .current_dir(t.path())
            .env(
                "NEO_CACHE_DIR",
                t.path().join(format!("port-to-{p}.neo-cache")),
            );
        let r = run(cmd, &out);
        r.assert_status(0);
        assert_same(&out, &real, p, "C workload (Level Zero), --port-to", 10);
        let page = std::fs::read_to_string(cap.join("port").join(p).join("compare.html"))
            .unwrap_or_else(|e| panic!("[{}] no compare.html for {p}: {e}", stack().name()));
        assert!(
            page.contains("loop_nested") && page.contains(VECTOR_ADD),
            "[{}] compare.html of {p} lacks kernels",
            stack().name()
        );
        for k in view["kernels"].as_array().unwrap() {
            let on = k["products"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["product"] == *p)
                .unwrap_or_else(|| panic!("{p} missing for {k}"));
            assert!(on["not_ported"].is_null(), "[{}] {on}", stack().name());
            let copy = on["asm_copy"].as_str().expect("asm_copy");
            assert!(
                copy.starts_with(&format!("port/{p}/asm/")) && cap.join(copy).is_file(),
                "[{}] {copy}",
                stack().name()
            );
        }
    }
}

/// A capture in the ISA mode that is not the stack's default (Debian 12:
/// `--isa binary`, IGA's disassembly of the module binaries; sid: `--isa
/// dump`, IGC's dumps) is ported in that mode, and equals a run in it.
#[test]
fn the_ports_isa_comes_as_the_runs_did() {
    require_stack();
    let t = temp_dir("port-isa");
    let mode = match stack() {
        Stack::Debian12 => ["--isa", "binary"],
        Stack::Sid => ["--isa", "dump"],
    };
    let args = c_workload_args();
    let cap = capture_with(t.path(), "pvc", "pvc", &mode, &args);
    let targets = targets();
    port(&cap, &targets, &[]).assert_status(0);
    for p in &targets {
        let real = capture_with(t.path(), &format!("real-{p}"), p, &mode, &args);
        assert_same(
            &cap,
            &real,
            p,
            &format!("C workload, {}", mode.join(" ")),
            10,
        );
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(cap.join("port").join(p).join("report.json")).unwrap(),
        )
        .unwrap();
        let want = match stack() {
            Stack::Debian12 => "module-binary",
            Stack::Sid => "igc-dump",
        };
        let sources: Vec<&str> = r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["launches"].as_u64() > Some(0))
            .filter_map(|k| k["isa_source"].as_str())
            .collect();
        // The nine kernels of SPIR-V modules; the native module's (its
        // SPIR-V compiled by NEO for the product) as in the run.
        assert!(
            sources.len() == 10 && sources.iter().filter(|s| **s == want).count() >= 9,
            "[{}] {p}: the port's ISA sources {sources:?}, want {want}",
            stack().name()
        );
    }
}

/// SpecId the test gives the loop bound of `kernels_spec.cl`.
const SPEC_ID: u32 = 7;
/// The loop bound in `kernels_spec.cl`'s SPIR-V, made a spec constant.
const BOUND: u32 = 1_234_567;
/// The build flag of the specialized module: changes its code.
const FLAG: &str = "-ze-opt-disable";

/// `kernels_spec.cl`'s SPIR-V with its constant [`BOUND`] made
/// specialization constant [`SPEC_ID`] (`OpConstant` -> `OpSpecConstant`,
/// decorated `SpecId`), written into `dir`.
fn specialized_spirv(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(spirv_with("spec", "")).expect("the spec SPIR-V");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out: Vec<u32> = words[..5].to_vec();
    let mut at = 5;
    let (mut decorated, mut made) = (false, false);
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let mut inst = words[at..at + count].to_vec();
        // The first decoration: ours goes before it.
        if !decorated && op == 71 {
            let target = find_constant(&words).expect("OpConstant 1234567 in the SPIR-V");
            out.extend([(4 << 16) | 71, target, 1, SPEC_ID]);
            decorated = true;
        }
        if op == 43 && count == 4 && inst[3] == BOUND {
            inst[0] = (4 << 16) | 50;
            made = true;
        }
        out.extend(inst);
        at += count;
    }
    assert!(
        decorated && made,
        "kernels_spec.cl's SPIR-V has no constant {BOUND} to specialize"
    );
    let path = dir.join("spec.spv");
    let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).expect("write spec.spv");
    path
}

/// The result id of `OpConstant BOUND`.
fn find_constant(words: &[u32]) -> Option<u32> {
    let mut at = 5;
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if op == 43 && count == 4 && words[at + 3] == BOUND {
            return Some(words[at + 2]);
        }
        at += count.max(1);
    }
    None
}

fn spec_args(spv: &Path, constant: bool, flag: bool) -> Vec<String> {
    let mut a = vec!["--module".to_string(), format!("s={}", spv.display())];
    if constant {
        a.extend(["--spec".to_string(), format!("{SPEC_ID}=4")]);
    }
    if flag {
        a.extend(["--build-flags".to_string(), FLAG.to_string()]);
    }
    a.push("imm:s:spec_loop:11".into());
    a
}

#[test]
fn a_module_with_constants_and_flags_is_ported_with_both() {
    require_stack();
    let t = temp_dir("port-spec");
    let spv = specialized_spirv(t.path());
    let cap = capture(t.path(), "pvc", "pvc", &spec_args(&spv, true, true));
    // The record holds what the module was built from.
    let module = |dir: &Path| {
        let recs = records(dir);
        let m = recs
            .iter()
            .flat_map(|r| r.modules.values())
            .find(|m| m.kernel_names.iter().any(|n| n == b"spec_loop"))
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "[{}] no module of spec_loop in {}",
                    stack().name(),
                    dir.display()
                )
            });
        (m.build_flags.clone(), m.spec_constants.clone())
    };
    let want = (
        FLAG.to_string(),
        vec![xpu_asm_record::spec::SpecConstant {
            id: SPEC_ID,
            value: vec![4, 0, 0, 0],
        }],
    );
    assert_eq!(
        module(&cap),
        want,
        "[{}] the capture's record",
        stack().name()
    );
    let targets = targets();
    let r = port(&cap, &targets, &[]);
    r.assert_status(0);
    for p in &targets {
        assert_eq!(
            module(&cap.join("port").join(p)),
            want,
            "[{}] the port's record on {p}",
            stack().name()
        );
        let real = capture(
            t.path(),
            &format!("real-{p}"),
            p,
            &spec_args(&spv, true, true),
        );
        assert_same(
            &cap,
            &real,
            p,
            "module with a specialization constant and a build flag",
            1,
        );
        // A build without the constant, or without the flag, is another
        // kernel: a port that dropped either would not pass.
        for (what, constant, flag) in [("the constant", false, true), ("the flag", true, false)] {
            let other = capture(
                t.path(),
                &format!("without-{}-{p}", if constant { "flag" } else { "constant" }),
                p,
                &spec_args(&spv, constant, flag),
            );
            let (equal, total, _) = compare(&cap.join("port").join(p), &other);
            assert_eq!(
                (equal, total),
                (0, 1),
                "[{}] on {p}, a build without {what} gives the same kernel: the test could not \
                 tell a port that dropped it",
                stack().name()
            );
        }
    }
}

/// `xpu-asm-run --emulate product -o root/name -- opencl --via link ARGS`.
fn capture_opencl(root: &Path, name: &str, product: &str, args: &[String]) -> PathBuf {
    let out = root.join(name);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["--emulate", product, "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(opencl_workload("link"))
        .args(["--via", "link"])
        .args(args)
        .current_dir(root)
        .env("NEO_CACHE_DIR", root.join(format!("{name}.neo-cache")));
    hermetic(&mut cmd);
    let r = run(cmd, &out);
    r.assert_status(0);
    out
}

#[test]
fn the_opencl_workload_ported_is_a_run_on_each_product() {
    require_stack();
    let t = temp_dir("port-cl");
    let w = workload_src_dir();
    let mut args: Vec<String> = [
        format!("src=source:{}", w.join("kernels_cl.cl").display()),
        format!("il=il:{}", spirv("b").display()),
        format!("khr=ilkhr:{}", spirv("a").display()),
        format!("lnk=link:{}", w.join("kernels_cl_link.cl").display()),
        "re=rebuild:src".to_string(),
    ]
    .into_iter()
    .flat_map(|p| ["--program".to_string(), p])
    .collect();
    args.extend(
        [
            "nd:src:cl_scale:3",
            "clone:src:cl_scale_twice:5",
            "task:il:only_in_b:2",
            "nd:il:common_kernel:7",
            "count:khr:scale_v2:6",
            "nd:khr:scale:1",
            "all:lnk:8",
            "nd:re:common_kernel:10",
        ]
        .map(String::from),
    );
    let cap = capture_opencl(t.path(), "pvc", "pvc", &args);
    let targets = targets();
    let r = port(&cap, &targets, &[]);
    // The linked program's kernels are not ported: the exit status says so.
    r.assert_status(3);
    let view: serde_json::Value = serde_json::from_str(&r.stdout()).expect("port --json");
    for p in &targets {
        let real = capture_opencl(t.path(), &format!("real-{p}"), p, &args);
        let (equal, total, diffs) = compare(&cap.join("port").join(p), &real);
        eprintln!(
            "[{}] OpenCL workload: pvc ported to {p}: {equal}/{total} kernels equal to a run on {p} \
             ({} of a linked program, not ported)",
            stack().name(),
            diffs.len()
        );
        // A linked program's binary carries no SPIR-V: its two kernels are
        // not ported, and the table says why; every other kernel is exact.
        assert_eq!(
            (equal, total, diffs.clone()),
            (
                7,
                9,
                vec![
                    "cl_linked_a: not in the port".to_string(),
                    "cl_linked_b: not in the port".to_string()
                ]
            ),
            "[{}] OpenCL workload on {p}\nport: {:?}",
            stack().name(),
            list_files(&cap.join("port").join(p))
        );
    }
    let linked: Vec<&serde_json::Value> = view["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"].as_str().unwrap().starts_with("cl_linked"))
        .flat_map(|k| k["products"].as_array().unwrap())
        .collect();
    assert_eq!(
        linked.len(),
        2 * targets.len(),
        "[{}] {view}",
        stack().name()
    );
    for l in linked {
        assert!(
            l["not_ported"]
                .as_str()
                .is_some_and(|w| w.contains("clLinkProgram") && w.contains("no SPIR-V")),
            "[{}] {l}",
            stack().name()
        );
    }
}

/// `xpu-asm-run --emulate product -- python pyopencl_ops.py 3 5 7`, with
/// pyopencl's program cache off (IGC compiles in the run).
fn capture_pyopencl(root: &Path, venv: &Path, name: &str, product: &str) -> PathBuf {
    let out = root.join(name);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["--emulate", product, "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/opencl/pyopencl_ops.py"))
        .args(["3", "5", "7"])
        .current_dir(root)
        .env("PYOPENCL_NO_CACHE", "1")
        .env("XDG_CACHE_HOME", root.join("cache"));
    hermetic(&mut cmd);
    let r = run(cmd, &out);
    r.assert_status(0);
    out
}

#[test]
fn pyopencl_ported_is_a_run_on_each_product() {
    require_stack();
    let venv = pyopencl_venv();
    let t = temp_dir("port-pyopencl");
    let cap = capture_pyopencl(t.path(), &venv, "pvc", "pvc");
    let targets = targets();
    port(&cap, &targets, &[]).assert_status(0);
    for p in &targets {
        let real = capture_pyopencl(t.path(), &venv, &format!("real-{p}"), p);
        assert_same(&cap, &real, p, "pyopencl", 3);
    }
}

/// The OpenCL build option of the specialized program: changes its code.
const CL_OPTION: &str = "-cl-opt-disable";

fn cl_spec_args(spv: &Path, constant: bool, option: bool) -> Vec<String> {
    let mut a = Vec::new();
    if option {
        a.extend(["--options".to_string(), CL_OPTION.to_string()]);
    }
    if constant {
        a.extend(["--spec".to_string(), format!("{SPEC_ID}=4")]);
    }
    a.extend([
        "--program".to_string(),
        format!("s=il:{}", spv.display()),
        "nd:s:spec_loop:9".to_string(),
    ]);
    a
}

#[test]
fn an_opencl_program_with_constants_and_options_is_ported_with_both() {
    require_stack();
    let t = temp_dir("port-cl-spec");
    let spv = specialized_spirv(t.path());
    let cap = capture_opencl(t.path(), "pvc", "pvc", &cl_spec_args(&spv, true, true));
    let module = |dir: &Path| {
        let m = records(dir)
            .iter()
            .flat_map(|r| r.modules.values().cloned().collect::<Vec<_>>())
            .find(|m| m.kernel_names.iter().any(|n| n == b"spec_loop"))
            .unwrap_or_else(|| {
                panic!(
                    "[{}] no program of spec_loop in {}",
                    stack().name(),
                    dir.display()
                )
            });
        (m.api, m.build_flags, m.spec_constants)
    };
    let want = (
        xpu_asm_record::read::Api::OpenCl,
        CL_OPTION.to_string(),
        vec![xpu_asm_record::spec::SpecConstant {
            id: SPEC_ID,
            value: vec![4, 0, 0, 0],
        }],
    );
    assert_eq!(
        module(&cap),
        want,
        "[{}] the capture's record",
        stack().name()
    );
    let targets = targets();
    port(&cap, &targets, &[]).assert_status(0);
    for p in &targets {
        assert_eq!(
            module(&cap.join("port").join(p)),
            want,
            "[{}] the port's record on {p}",
            stack().name()
        );
        let real = capture_opencl(
            t.path(),
            &format!("real-{p}"),
            p,
            &cl_spec_args(&spv, true, true),
        );
        assert_same(
            &cap,
            &real,
            p,
            "OpenCL program with a specialization constant and a build option",
            1,
        );
        for (what, constant, option) in [("the constant", false, true), ("the option", true, false)]
        {
            let other = capture_opencl(
                t.path(),
                &format!(
                    "without-{}-{p}",
                    if constant { "option" } else { "constant" }
                ),
                p,
                &cl_spec_args(&spv, constant, option),
            );
            let (equal, total, _) = compare(&cap.join("port").join(p), &other);
            assert_eq!(
                (equal, total),
                (0, 1),
                "[{}] on {p}, an OpenCL build without {what} gives the same kernel: the test \
                 could not tell a port that dropped it",
                stack().name()
            );
        }
    }
}

/// A module built from two SPIR-V inputs (`ze_module_program_exp_desc_t`,
/// the workload's `--program`), the first calling a function the second
/// defines: the interposer keeps each input, and the port links both
/// again, as a run on each product does (a port without the second input
/// cannot build: the first's call is unresolved).
#[test]
fn a_module_of_two_spirv_inputs_is_ported_from_both() {
    require_stack();
    let t = temp_dir("port-program");
    let args: Vec<String> = vec![
        "--program".into(),
        format!(
            "p={}+{}",
            spirv_with("program_a", "").display(),
            spirv_with("program_b", "").display()
        ),
        "imm:p:program_linked:3".into(),
        "imm:p:program_own:2".into(),
    ];
    let cap = capture(t.path(), "pvc", "pvc", &args);
    let recs = records(&cap);
    let m = recs
        .iter()
        .flat_map(|r| r.modules.values())
        .find(|m| m.kernel_names.iter().any(|n| n == b"program_linked"))
        .unwrap_or_else(|| panic!("[{}] no module of program_linked", stack().name()));
    assert_eq!(m.inputs.len(), 2, "[{}] {m:?}", stack().name());
    for i in &m.inputs {
        assert!(
            cap.join("modules")
                .join(format!("{}.spv", i.sha256))
                .is_file(),
            "[{}] input {} not kept under modules/",
            stack().name(),
            i.sha256
        );
    }
    let targets = targets();
    port(&cap, &targets, &[]).assert_status(0);
    for p in &targets {
        let real = capture(t.path(), &format!("real-{p}"), p, &args);
        assert_same(&cap, &real, p, "a module of two SPIR-V inputs", 2);
    }
}
