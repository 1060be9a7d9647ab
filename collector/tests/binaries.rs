//! Module binaries as a source of ISA, on committed real binaries
//! (tests/data/module-binaries) and on hostile ones: every problem is a
//! clear reason on its kernel, the rest of the report intact, never a panic.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use xpu_asm_collector::matching::Status;
use xpu_asm_collector::report::Report;
use xpu_asm_collector::sources::IsaSourceKind;
use xpu_asm_collector::{collect, Options};

fn binary(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join("module-binaries").join(name)).expect("test data present")
}

fn run(out: &Path) -> Report {
    collect(out, &Options::default()).expect("collect")
}

fn entry<'a>(r: &'a Report, name: &str, sha: &str) -> &'a xpu_asm_collector::report::KernelEntry {
    r.kernels
        .iter()
        .find(|k| k.name == name && k.module_sha256.as_deref() == Some(sha))
        .unwrap_or_else(|| panic!("no entry {name} of module {sha}: {r:#?}"))
}

/// A module whose record names `file` as its binary (whatever is there).
fn module_naming(id: u32, sha: &str, file: &str) -> Module {
    Module {
        id,
        format: "native",
        sha256: sha.to_string(),
        build_flags: "",
        binary: Some(format!(
            r#"{{"size":1,"sha256":"{sha}","file":{}}}"#,
            serde_json::to_string(file).unwrap()
        )),
        device: Some(1),
    }
}

#[test]
fn every_problem_with_a_binary_is_a_reason_and_the_rest_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let good = binary("module_a.pvc.bin");
    let zebin = binary("module_a.pvc.zebin");
    let mut truncated = good.clone();
    truncated.truncate(good.len() / 3);
    let mut p = Process::new(7);
    let m_good = Module::native_saved(1, out, &good);
    let m_zebin = Module::native_saved(2, out, &zebin);
    let m_trunc = Module::native_saved(3, out, &truncated);
    let m_junk = Module::native_saved(4, out, b"\x7fELF not really an ELF at all");
    let sha_missing = "ee".repeat(32);
    let m_missing = module_naming(5, &sha_missing, &format!("modules/{sha_missing}.bin"));
    let sha_escape = "dd".repeat(32);
    let m_escape = module_naming(6, &sha_escape, "../../etc/passwd");
    let m_failed = Module {
        binary: Some(r#"{"error":"zeModuleGetNativeBinary failed (0x78000001)"}"#.into()),
        ..Module::spirv(7, "cc".repeat(32))
    };
    let shas: Vec<String> = [&m_good, &m_zebin, &m_trunc, &m_junk]
        .iter()
        .map(|m| m.sha256.clone())
        .collect();
    p.modules = vec![
        m_good, m_zebin, m_trunc, m_junk, m_missing, m_escape, m_failed,
    ];
    p.kernels = vec![
        kernel(1, 1, b"vector_add", 3),
        kernel(2, 1, b"vector_add_scaled", 4),
        kernel(3, 2, b"vector_add_scaled", 5),
        kernel(4, 1, b"no_such_kernel", 6),
        kernel(5, 3, b"vector_add", 7),
        kernel(6, 4, b"vector_add", 8),
        kernel(7, 5, b"vector_add", 9),
        kernel(8, 6, b"vector_add", 10),
        kernel(9, 7, b"vector_add", 11),
    ];
    p.write(out);
    let r = run(out);
    assert_eq!(r.totals.kernels, 9, "{r:#?}");

    // The good ones: matched from their binaries, exact, in both formats.
    for (name, sha, launches, format) in [
        ("vector_add", &shas[0], 3, "patch-tokens-elf"),
        ("vector_add_scaled", &shas[0], 4, "patch-tokens-elf"),
        ("vector_add_scaled", &shas[1], 5, "zebin"),
    ] {
        let k = entry(&r, name, sha);
        assert_eq!(k.launches, launches);
        assert_eq!(k.status, Status::Matched, "{k:#?}");
        assert_eq!(k.isa_source, Some(IsaSourceKind::ModuleBinary));
        assert_eq!(k.binary.as_ref().map(|b| b.format.as_str()), Some(format));
        let asm = std::fs::read_to_string(out.join(k.asm.as_deref().unwrap())).unwrap();
        assert!(asm.starts_with(&format!("//.kernel {name}\n")), "{asm}");
        assert!(k.asm.as_deref().unwrap().starts_with("isa/"), "{k:?}");
        assert_eq!(k.grf, Some(128), "{k:?}");
        assert!(k.instructions.is_some_and(|n| n > 5), "{k:?}");
        assert!(k.asm_copy.is_some(), "{k:?}");
    }

    let why = |name: &str, sha: &str, status: Status, words: &[&str]| {
        let k = entry(&r, name, sha);
        assert_eq!(k.status, status, "{k:#?}");
        assert!(k.asm.is_none() && k.asm_copy.is_none(), "{k:#?}");
        let reason = k.reason.as_deref().unwrap_or_default();
        for w in words {
            assert!(reason.contains(w), "{name}: {w:?} not in {reason:?}");
        }
    };
    why(
        "no_such_kernel",
        &shas[0],
        Status::KernelNotInBinary,
        &["no kernel of this exact name", "vector_add_scaled"],
    );
    why(
        "vector_add",
        &shas[2],
        Status::BinaryUnreadable,
        &["cannot be read"],
    );
    why(
        "vector_add",
        &shas[3],
        Status::BinaryUnreadable,
        &["cannot be read"],
    );
    why(
        "vector_add",
        &sha_missing,
        Status::BinaryUnreadable,
        &["keep the capture folder whole"],
    );
    why(
        "vector_add",
        &sha_escape,
        Status::BinaryUnreadable,
        &["not a file under modules/"],
    );
    why(
        "vector_add",
        &"cc".repeat(32),
        Status::NoBinary,
        &["0x78000001", "IGC's dumps have no .asm of it"],
    );
    assert_eq!((r.totals.matched, r.totals.unmatched), (3, 6));

    // A second collection reads back what the first disassembled.
    let again = run(out);
    assert_eq!(again.kernels, r.kernels);
}

/// IGA's library missing: a reason on each kernel that needs it, which says
/// how to install it; kernels with IGC dumps unaffected.
#[test]
fn iga_missing_is_a_reason_that_says_how_to_install_it() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let mut p = Process::new(8);
    let m = Module::native_saved(1, out, &binary("module_a.pvc.bin"));
    let sha = m.sha256.clone();
    p.modules = vec![m, Module::spirv(2, sha_a())];
    p.kernels = vec![
        kernel(1, 1, b"vector_add", 2),
        kernel(2, 2, b"vector_add", 3),
    ];
    p.write(out);
    copy_dumps("pvc", out, &p.dump_dir());
    let output = Command::new(env!("CARGO_BIN_EXE_xpu-asm-run"))
        .args(["collect", "--json"])
        .arg(out)
        .env("XPU_ASM_IGA", out.join("no-such-libiga64.so.1"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let r: Report = serde_json::from_slice(&output.stdout).unwrap();
    let native = entry(&r, "vector_add", &sha);
    assert_eq!(native.status, Status::IgaMissing, "{native:#?}");
    let reason = native.reason.as_deref().unwrap_or_default();
    // The IGC of this system: IGC 1 (libigc1) on Debian 12, IGC 2 on sid,
    // whose IGA is libiga64.so.2 in libigc2 (XPU_ASM_STACK, as in the tests
    // crate).
    let package = match std::env::var("XPU_ASM_STACK").as_deref() {
        Ok("sid") => "libigc2",
        _ => "libigc1",
    };
    assert!(
        reason.contains(package) && reason.contains("XPU_ASM_IGA"),
        "{reason}"
    );
    let dumped = entry(&r, "vector_add", &sha_a());
    assert_eq!(
        (dumped.status, dumped.isa_source),
        (Status::Matched, Some(IsaSourceKind::IgcDump))
    );
}

/// Processes that loaded the same binary share its disassembly (one file
/// under `isa/` per binary content): one candidate, had by each of them.
#[test]
fn one_binary_in_many_processes_is_one_candidate() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let zebin = binary("module_a.pvc.zebin");
    let mut sha = String::new();
    for (pid, n) in [(30, 2u64), (31, 3), (32, 4)] {
        let mut p = Process::new(pid);
        let m = Module::native_saved(1, out, &zebin);
        sha = m.sha256.clone();
        p.modules = vec![m];
        p.kernels = vec![kernel(1, 1, b"vector_add_scaled", n)];
        p.write(out);
    }
    write_run_json(out, r#"{"code":0}"#);
    let r = run(out);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let k = entry(&r, "vector_add_scaled", &sha);
    assert_eq!(k.status, Status::Matched, "{k:#?}");
    assert_eq!(k.launches, 9);
    assert_eq!(k.pids, [30, 31, 32]);
    let asm = k.asm.clone().unwrap();
    assert!(asm.starts_with(&format!("isa/{sha}")), "{asm}");
    let c: Vec<(&str, IsaSourceKind, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.as_str(), c.source, c.processes))
        .collect();
    assert_eq!(c, [(asm.as_str(), IsaSourceKind::ModuleBinary, 3)]);
}
