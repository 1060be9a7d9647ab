//! Module binaries as a source of ISA, on committed real binaries
//! (tests/data/module-binaries) and on hostile ones: every problem is a
//! clear reason on its kernel, the rest of the report intact, never a panic.

mod common;

use common::*;
use std::process::Command;
use xpu_asm_collector::report::Report;
use xpu_asm_collector::sources::IsaSourceKind;
use xpu_asm_collector::sources::Status;

fn binary(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join("module-binaries").join(name)).expect("test data present")
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
        built_binary: None,
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
        record_kernel(1, 1, b"vector_add", 3),
        record_kernel(2, 1, b"vector_add_scaled", 4),
        record_kernel(3, 2, b"vector_add_scaled", 5),
        record_kernel(4, 1, b"no_such_kernel", 6),
        record_kernel(5, 3, b"vector_add", 7),
        record_kernel(6, 4, b"vector_add", 8),
        record_kernel(7, 5, b"vector_add", 9),
        record_kernel(8, 6, b"vector_add", 10),
        record_kernel(9, 7, b"vector_add", 11),
    ];
    p.write(out);
    let r = collect_defaults(out);
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
    let again = collect_defaults(out);
    assert_eq!(again.kernels, r.kernels);
}

/// A native module the driver did not run as passed (ocloc's zebin for
/// tgllp on a pvc: NEO compiles the SPIR-V it carries): the kernel's ISA is
/// of the driver's build, with a note, and the module stays the binary
/// passed. Without a recorded build, such a binary is not taken for its
/// ISA. A build with the same code as the binary passed (the member NEO
/// takes of a fat binary) changes nothing, nor does a build that could not
/// be read.
#[test]
fn a_native_module_the_driver_built_again_has_the_isa_of_that_build() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let tgllp = binary("module_a.tgllp.zebin");
    let pvc = binary("module_a.pvc.zebin");
    // Other bytes after the ELF's end: another binary, the same code.
    let padded = |b: &[u8], n: usize| [b, &vec![0u8; n]].concat();
    let mut p = Process::new(9);
    let m_rebuilt = Module::native_rebuilt(1, out, &tgllp, &pvc);
    let m_alone = Module::native_saved(2, out, &padded(&tgllp, 16));
    let m_same = Module::native_rebuilt(3, out, &pvc, &padded(&pvc, 16));
    let m_unread = Module {
        built_binary: Some(r#"{"error":"zeModuleGetNativeBinary failed (0x78000001)"}"#.into()),
        ..Module::native_saved(4, out, &padded(&pvc, 32))
    };
    let shas: Vec<String> = [&m_rebuilt, &m_alone, &m_same, &m_unread]
        .iter()
        .map(|m| m.sha256.clone())
        .collect();
    p.modules = vec![m_rebuilt, m_alone, m_same, m_unread];
    p.kernels = (1..=4)
        .map(|m| record_kernel(m, m, b"vector_add", 10 + u64::from(m)))
        .collect();
    p.write(out);
    let r = collect_defaults(out);
    assert_eq!((r.totals.matched, r.totals.unmatched), (3, 1), "{r:#?}");
    let rebuilt = entry(&r, "vector_add", &shas[0]);
    let same = entry(&r, "vector_add", &shas[2]);
    let pvc_sha = sha256_hex(&pvc);
    assert_eq!(
        (rebuilt.launches, rebuilt.status),
        (11, Status::Matched),
        "{rebuilt:#?}"
    );
    let b = rebuilt.binary.as_ref().unwrap();
    assert_eq!(
        (b.sha256.as_str(), b.format.as_str()),
        (pvc_sha.as_str(), "zebin")
    );
    let note = rebuilt.isa_note.as_deref().unwrap_or_default();
    for w in [
        "driver's build",
        &format!("modules/{pvc_sha}.bin"),
        "zeModuleGetNativeBinary",
        &format!("modules/{}.bin", shas[0]),
        "for TGLLP",
    ] {
        assert!(note.contains(w), "{w:?} not in {note:?}");
    }
    assert_eq!(rebuilt.reason, None);
    // Its ISA is the pvc build's: the same text as that binary's own kernel.
    assert_eq!(
        (same.status, same.isa_note.as_deref()),
        (Status::Matched, None)
    );
    assert_eq!(same.binary.as_ref().unwrap().sha256, shas[2]);
    assert_eq!(rebuilt.instructions, same.instructions);
    assert!(rebuilt.instructions.is_some_and(|n| n > 5), "{rebuilt:?}");
    let text = |k: &xpu_asm_collector::report::KernelEntry| {
        std::fs::read_to_string(out.join(k.asm.as_deref().unwrap())).unwrap()
    };
    assert_eq!(text(rebuilt), text(same));
    let alone = entry(&r, "vector_add", &shas[1]);
    assert_eq!(alone.status, Status::DeviceNotInBinary, "{alone:#?}");
    let why = alone.reason.as_deref().unwrap_or_default();
    assert!(
        why.contains("TGLLP") && why.contains("ocloc -device"),
        "{why}"
    );
    let unread = entry(&r, "vector_add", &shas[3]);
    assert_eq!(
        (unread.status, unread.isa_note.as_deref()),
        (Status::Matched, None)
    );
    assert_eq!(unread.binary.as_ref().unwrap().sha256, shas[3]);
    // The table says where the rebuilt kernel's ISA comes from.
    use xpu_asm_collector::report::export::table::{render_table, TableStyle};
    let style = TableStyle {
        width: 100,
        color: false,
        dir: "cap".into(),
        sort: None,
    };
    let table = render_table(&r, &style);
    assert!(
        table.contains("notes:\n") && table.contains(note),
        "{table}"
    );
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
        record_kernel(1, 1, b"vector_add", 2),
        record_kernel(2, 2, b"vector_add", 3),
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
        p.kernels = vec![record_kernel(1, 1, b"vector_add_scaled", n)];
        p.write(out);
    }
    write_run_json(out, r#"{"code":0}"#);
    let r = collect_defaults(out);
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

/// `bytes` with its `.note.intelgt.compat` section changed by `change`
/// (given the file and the offset of the section's header).
fn with_compat_notes(bytes: &[u8], change: impl Fn(&mut Vec<u8>, usize)) -> Vec<u8> {
    use object::read::elf::{ElfFile64, FileHeader};
    use object::{Object, ObjectSection};
    let elf = ElfFile64::<object::Endianness>::parse(bytes).unwrap();
    let shoff = elf.elf_header().e_shoff(elf.endian()) as usize;
    let note = elf
        .section_by_name(".note.intelgt.compat")
        .unwrap()
        .index()
        .0;
    let mut b = bytes.to_vec();
    change(&mut b, shoff + 64 * note);
    b
}

/// Today's GPUs, end to end: zebins of ocloc 26.27 (IGC 2.40) for bmg
/// (Xe2) and ptl (Xe3), in captures whose device is NEO 26's emulated bmg
/// (0xe202, IP 20.1.0) or ptl (0xb080, IP 30.0.4). Their platform comes
/// from the binary, from its notes in a section aligned to 16 as nGEN
/// aligns it (oneMKL's GEMM kernels), or from the recorded device when the
/// binary's notes are gone. With IGC 2's IGA (today's stack) each kernel is
/// disassembled under its platform's name; with IGC 1's (Debian 12), each
/// is a reason that names the IGA that knows it.
#[test]
fn todays_gpus_from_their_binaries_or_the_recorded_device() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let bmg = binary("module_a.bmg.zebin");
    let ptl = binary("module_a.ptl.zebin");
    let aligned_16 = with_compat_notes(&bmg, |b, h| {
        b[h + 0x30..h + 0x38].copy_from_slice(&16u64.to_le_bytes())
    });
    // sh_type of the notes' section header: plain data, no notes.
    let no_notes = with_compat_notes(&ptl, |b, h| {
        b[h + 4..h + 8].copy_from_slice(&1u32.to_le_bytes())
    });
    let cases = [
        (30, "bmg", 0xe202u32, 0x0500_4000u32, [bmg, aligned_16]),
        (31, "ptl", 0xb080, 0x0780_0004, [ptl, no_notes]),
    ];
    // And nGEN's own (oneMKL's generator): its GFX core family only.
    let ngen = [
        (32, "bmg", 0xe202u32, 0x0500_4000u32, "XE2"),
        (33, "mtl", 0x7d40, 0x0311_8004, "MTL"),
        (34, "pvc", 0x0bd5, 0x030f_0007, "PVCXT"),
    ];
    // The device the module was built on, as NEO 26 reports it.
    let set_device = |p: &Process, id: u32, ip: u32| {
        let events = out
            .join(xpu_asm_record::RECORDS_DIR)
            .join(xpu_asm_record::events_file_name(&p.host, p.pid));
        let text = std::fs::read_to_string(&events).unwrap();
        let pvc = r#""device_id":3029,"name":"Intel(R) Graphics [0x0bd5]","ip_version":null"#;
        assert!(text.contains(pvc));
        let device = format!(
            r#""device_id":{id},"name":"Intel(R) Graphics [0x{id:04x}]","ip_version":{ip}"#
        );
        std::fs::write(&events, text.replace(pvc, &device)).unwrap();
    };
    let mut expected = Vec::new();
    for (pid, _, id, ip, binaries) in &cases {
        let mut p = Process::new(*pid);
        p.host = format!("h{pid}");
        for (i, b) in binaries.iter().enumerate() {
            let m = Module::native_saved(i as u32 + 1, out, b);
            expected.push((m.sha256.clone(), *pid));
            p.modules.push(m);
        }
        p.kernels = vec![
            record_kernel(1, 1, b"vector_add", 2),
            record_kernel(2, 2, b"vector_add_scaled", 3),
        ];
        p.write(out);
        set_device(&p, *id, *ip);
    }
    let mut ngen_shas = Vec::new();
    for (pid, gpu, id, ip, _) in &ngen {
        let mut p = Process::new(*pid);
        p.host = format!("h{pid}");
        let m = Module::native_saved(1, out, &binary(&format!("ngen_trivial.{gpu}.zebin")));
        ngen_shas.push(m.sha256.clone());
        p.modules.push(m);
        p.kernels = vec![record_kernel(1, 1, b"ngen_trivial", 4)];
        p.write(out);
        set_device(&p, *id, *ip);
    }
    let r = collect_defaults(out);
    assert_eq!(r.totals.kernels, 7, "{r:#?}");
    let iga = xpu_asm_isa::native::iga::Iga::load().unwrap();
    for ((sha, pid), name) in expected
        .iter()
        .zip(["vector_add", "vector_add_scaled"].repeat(2))
    {
        let (_, gpu, ..) = cases.iter().find(|c| c.0 == *pid).unwrap();
        let platform = if *gpu == "bmg" { "XE2" } else { "XE3" };
        let k = entry(&r, name, sha);
        if iga.path() == "libiga64.so.2" {
            assert_eq!(k.status, Status::Matched, "{gpu}: {k:#?}");
            assert_eq!(k.isa_source, Some(IsaSourceKind::ModuleBinary));
            assert_eq!(k.platform.as_deref(), Some(platform), "{gpu}: {k:#?}");
            let asm = std::fs::read_to_string(out.join(k.asm.as_deref().unwrap())).unwrap();
            assert!(
                asm.contains(&format!("\n//.platform {platform}\n")),
                "{asm}"
            );
            assert!(k.instructions.is_some_and(|n| n > 5), "{k:?}");
        } else {
            // IGA 1.1.0 of IGC 1.0.12504 knows neither Xe2 nor Xe3.
            assert_eq!(iga.path(), "libiga64.so.1");
            assert_eq!(k.status, Status::IgaFailed, "{gpu}: {k:#?}");
            let reason = k.reason.as_deref().unwrap_or_default();
            assert!(
                reason.contains(&format!("cannot disassemble for {platform}"))
                    && reason.contains("libiga64.so.2")
                    && reason.contains("libigc2"),
                "{gpu}: {reason}"
            );
        }
    }
    // nGEN's kernels: the generation from the binary, the product (MTL, not
    // DG2; PVC's XT stepping) from the device.
    for ((_, gpu, .., platform), sha) in ngen.iter().zip(&ngen_shas) {
        let k = entry(&r, "ngen_trivial", sha);
        assert_eq!(k.launches, 4);
        if *gpu == "bmg" && iga.path() != "libiga64.so.2" {
            assert_eq!(k.status, Status::IgaFailed, "{gpu}: {k:#?}");
            let reason = k.reason.as_deref().unwrap_or_default();
            assert!(reason.contains("cannot disassemble for XE2"), "{reason}");
            continue;
        }
        assert_eq!(k.status, Status::Matched, "{gpu}: {k:#?}");
        assert_eq!(k.platform.as_deref(), Some(*platform), "{gpu}: {k:#?}");
        let asm = std::fs::read_to_string(out.join(k.asm.as_deref().unwrap())).unwrap();
        assert!(asm.contains("EOT"), "{asm}");
    }
}
