//! A module linked from several SPIR-V inputs (`ze_module_program_exp_desc_t`,
//! as SYCL builds its kernels with the device libraries): its kernels take
//! IGC's dump of the linked module, which IGC files under a hash no `.spv`
//! names, exactly (the exact `//.kernel` line, the module's own compile),
//! on both stacks, with IGC's dumps and with IGC 1's light ones, and again
//! from `collect` once the dumps were pruned. Beside it, the second input
//! built alone as a module of its own, with a kernel of the same name and
//! the same code: each kernel takes its own module's compile, never the
//! other's.
//!
//! The workload's `--program p=A+B` (tests/workload/kernels_program_{a,b}.cl:
//! the first calls a function the second defines) and `--module b=B`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_tests::*;

/// (kernel, module) -> launches: all different.
const LAUNCHES: [(&str, &str, u64); 3] = [
    ("program_linked", "p", 3),
    ("program_own", "p", 2),
    ("program_own", "b", 4),
];

fn capture_linked(out: &Path, options: &[&str]) -> Run {
    let a = spirv_with("program_a", "");
    let b = spirv_with("program_b", "");
    let mut c = Capture::emulating("pvc", out)
        .options(options)
        .program(workload())
        .args(["--via", "dlsym", "--program"])
        .arg(format!("p={}+{}", a.display(), b.display()))
        .module("b", &b);
    for (k, m, n) in LAUNCHES {
        c = c.arg(format!("imm:{m}:{k}:{n}"));
    }
    c.hermetic().run_ok()
}

/// The `.spv` files of a dump folder by hash (the hash in their name).
fn spv_hashes(folder: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| Some(n.strip_prefix("OCL_asm")?.strip_suffix(".spv")?.to_string()))
        .collect();
    out.sort();
    out
}

/// The hash of an IGC dump's `.asm` file name (`OCL_asm<hash>_simd...`).
fn asm_hash(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let rest = name.strip_prefix("OCL_asm").unwrap_or("");
    rest.split('_').next().unwrap_or("").to_string()
}

/// Checks the report of a capture of [`capture_linked`]: every kernel
/// from IGC's dump, the linked module's from a hash no `.spv` names, the
/// module of `b` from its own `.spv`'s hash, nothing unlaunched.
fn assert_linked(r: &Run, report: &Value, what: &str) {
    let stack = stack().name();
    let kernels = report["kernels"].as_array().expect("kernels");
    let b_sha = sha256_file(&spirv_with("program_b", ""));
    let a_sha = sha256_file(&spirv_with("program_a", ""));
    let mut got: BTreeMap<(String, &str), (u64, String, String)> = BTreeMap::new();
    for k in kernels {
        let module = match k["module_sha256"].as_str() {
            Some(s) if s == a_sha => "p",
            Some(s) if s == b_sha => "b",
            other => panic!(
                "[{stack}] {what}: a kernel of module {other:?}\n{}",
                r.ctx()
            ),
        };
        let asm = k["asm"].as_str().unwrap_or_default().to_string();
        let dump = k["asm"]
            .as_str()
            .unwrap_or_default()
            .rsplit_once('/')
            .map(|d| d.0);
        let spv = spv_hashes(&r.out.join(dump.unwrap_or_default()));
        let hash = asm_hash(&asm);
        let named = if spv.contains(&hash) {
            "named"
        } else {
            "unnamed"
        };
        assert_eq!(
            k["isa_source"],
            "igc-dump",
            "[{stack}] {what}: {} of {module} not from IGC's dump: {k:#}\n{}",
            k["name"],
            r.ctx()
        );
        let name = k["name"].as_str().unwrap_or_default().to_string();
        let text = std::fs::read_to_string(r.out.join(&asm)).unwrap_or_default();
        assert!(
            text.lines()
                .any(|l| l.trim() == format!("//.kernel {name}")),
            "[{stack}] {what}: {asm} has no `//.kernel {name}` line"
        );
        got.insert((name, module), (u(&k["launches"]), named.to_string(), hash));
    }
    let want: BTreeMap<(String, &str), (u64, &str)> = LAUNCHES
        .iter()
        .map(|(k, m, n)| {
            let named = if *m == "p" { "unnamed" } else { "named" };
            ((k.to_string(), *m), (*n, named))
        })
        .collect();
    let seen: BTreeMap<(String, &str), (u64, &str)> = got
        .iter()
        .map(|(k, (n, named, _))| (k.clone(), (*n, named.as_str())))
        .collect();
    assert_eq!(seen, want, "[{stack}] {what}: {got:?}\n{}", r.ctx());
    let hash_of = |k: &str, m: &str| got[&(k.to_string(), m)].2.clone();
    assert_eq!(
        hash_of("program_linked", "p"),
        hash_of("program_own", "p"),
        "[{stack}] {what}: the linked module's kernels from one compile"
    );
    assert_ne!(
        hash_of("program_own", "p"),
        hash_of("program_own", "b"),
        "[{stack}] {what}: each program_own from its own module"
    );
    assert_eq!(
        u(&report["unlaunched_compiled"]),
        0,
        "[{stack}] {what}: every kernel IGC compiled was launched\n{}",
        r.ctx()
    );
}

fn linked_module_from_its_dump(what: &str, options: &[&str]) {
    require_stack();
    let t = stack_temp_dir("linked");
    let out = t.path().join("cap");
    let r = capture_linked(&out, options);
    assert_linked(&r, &r.report(), what);
    // Collected again: the dumps were pruned (`--keep asm`: no `.dat`
    // left), and collect.json says which compile was the module's.
    let again = run_xpu_asm(&["collect", "--json", out.to_str().expect("UTF-8")], &out);
    again.assert_status(0);
    assert_linked(&again, &again.report(), &format!("{what}, collected again"));
}

#[test]
fn a_linked_modules_kernels_take_its_dump() {
    linked_module_from_its_dump("--isa dump", &["-q", "--isa", "dump"]);
}

/// IGC 1's light dumps on Debian 12 (its default); IGC's full dumps
/// where the user asks for them (`IGC_ShaderDumpEnable=1`: on sid the
/// same as `--isa dump`).
#[test]
fn a_linked_modules_kernels_take_its_dump_with_every_dump_kind() {
    require_stack();
    let t = stack_temp_dir("linked-default");
    let out = t.path().join("cap");
    let r = match stack() {
        Stack::Debian12 => capture_linked(&out, &["-q"]),
        _ => capture_linked(&out, &["-q", "--isa", "dump", "--keep", "all"]),
    };
    assert_linked(&r, &r.report(), "the default dumps");
}
