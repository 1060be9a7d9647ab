//! `collect` on capture folders built in temporary folders: real IGC dumps
//! from tests/data or synthetic ones, records in the real format.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use xpu_asm_collector::collect::{collect, Options};
use xpu_asm_collector::report::files::Keep;
use xpu_asm_collector::report::{LeftOut, Limit, Report};
use xpu_asm_collector::sources::Status;

fn with(keep: Keep, all: bool) -> Options {
    Options {
        keep,
        all,
        ..Default::default()
    }
}

fn find<'a>(r: &'a Report, name: &str, sha: &str) -> &'a xpu_asm_collector::report::KernelEntry {
    r.kernels
        .iter()
        .find(|k| k.name == name && k.module_sha256.as_deref() == Some(sha))
        .unwrap_or_else(|| panic!("{name} of {sha} not in {:#?}", r.kernels))
}

#[test]
fn prefix_names_and_same_names_in_two_modules_get_their_own_files() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    let r = collect_defaults(t.path());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    let a = find(&r, "vector_add", &sha_a());
    assert_eq!(a.status, Status::Matched);
    assert_eq!(
        a.asm.as_deref(),
        Some("dumps/h-100/OCL_asm6f30f910931b48ea_simd32_entry_0001.asm")
    );
    assert_eq!(
        a.asm_candidates.len(),
        1,
        "the prefix name's file is no candidate"
    );
    assert_eq!(
        (a.instructions, a.simd, a.grf),
        (Some(34), Some(32), Some(128))
    );
    assert_eq!(a.platform.as_deref(), Some("PVCXT"));
    assert_eq!(a.rank, 1);
    assert_eq!(a.launches, 1000);

    let b = find(&r, "vector_add", &sha_b());
    assert_eq!(
        b.asm.as_deref(),
        Some("dumps/h-100/OCL_asm0ffa4fea61191b0a_simd32_entry_0001.asm")
    );
    assert_eq!(b.instructions, Some(31));
    assert_ne!(a.asm_copy, b.asm_copy);

    // Ranked by launches.
    let order: Vec<(&str, u64)> = r
        .kernels
        .iter()
        .map(|k| (k.name.as_str(), k.launches))
        .collect();
    assert_eq!(
        order,
        [
            ("vector_add", 1000),
            ("heavy", 100),
            ("vector_add", 10),
            ("light", 5)
        ]
    );
    // vector_add_scaled was compiled, never launched.
    assert_eq!(r.unlaunched_compiled, 1);
    assert_eq!(r.totals.matched, 4);
    assert_eq!(r.totals.launches, 1115);

    // The readable copies are the chosen files.
    for k in &r.kernels {
        let copy = std::fs::read(t.path().join(k.asm_copy.as_ref().unwrap())).unwrap();
        let src = std::fs::read(t.path().join(k.asm.as_ref().unwrap())).unwrap();
        assert_eq!(copy, src);
    }
    assert!(a
        .asm_copy
        .as_deref()
        .unwrap()
        .starts_with("asm/001-vector_add-"));
}

#[test]
fn several_files_for_one_kernel_are_candidates_and_the_choice_is_explained() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    let r = collect_defaults(t.path());
    // pvc: IGC retried the module; both attempts are listed, the retry shown.
    let heavy = find(&r, "heavy", &sha_c());
    assert_eq!(heavy.asm_candidates.len(), 2);
    assert_eq!(
        heavy.asm.as_deref(),
        Some("dumps/h-100/OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm")
    );
    assert!(
        heavy.asm_choice.as_deref().unwrap().contains("latest"),
        "{:?}",
        heavy.asm_choice
    );
    assert_eq!(heavy.spill_bytes, Some(1024));
    // light: the final binary confirms the file.
    let light = find(&r, "light", &sha_b());
    assert!(light
        .asm_choice
        .as_deref()
        .unwrap()
        .contains("final binary"));
    assert_eq!(light.asm_candidates[0].final_binary, Some(true));

    // dg2: first attempt at SIMD8 spilled; the retry's SIMD32 is what IGC
    // kept (checked against IGC's .kernbin when the data was made).
    let t = tempfile::tempdir().unwrap();
    let mut p = Process::new(7);
    p.modules = vec![Module::spirv(1, sha_c())];
    p.kernels = vec![record_kernel(1, 1, b"heavy", 3)];
    p.write(t.path());
    copy_dumps("dg2-retry", t.path(), &p.dump_dir());
    let r = collect_defaults(t.path());
    let k = &r.kernels[0];
    assert_eq!(k.asm_candidates.len(), 2);
    assert_eq!(k.simd, Some(32));
    assert_eq!(k.instructions, Some(3975));
    assert_eq!(k.spill_bytes, None);
    assert_eq!(k.platform.as_deref(), Some("DG2"));
}

/// Synthetic `.asm` with a header naming `kernel`.
fn write_asm(dir: &Path, file: &str, kernel: &[u8], inst: u32, spill: Option<u32>) {
    let mut s = b"//.kernel ".to_vec();
    s.extend_from_slice(kernel);
    s.extend_from_slice(
        format!("\n//.platform PVCXT\n//.thread_config numGRF=256, numAcc=8, numSWSB=32\n//.instCount {inst}\n")
            .as_bytes(),
    );
    if let Some(sp) = spill {
        s.extend_from_slice(format!("//.spill size {sp}\n").as_bytes());
    }
    s.extend_from_slice(b"\n        nop\n");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), s).unwrap();
}

fn kernbin(name: &[u8], code: &[u8]) -> Vec<u8> {
    let name_size = name.len().div_ceil(4) * 4 + 4;
    let mut b = vec![0u8; 40];
    b[12..16].copy_from_slice(&(name_size as u32).to_le_bytes());
    b[20..24].copy_from_slice(&(code.len() as u32).to_le_bytes());
    b[36..40].copy_from_slice(&(code.len() as u32).to_le_bytes());
    b.extend_from_slice(name);
    b.resize(40 + name_size, 0);
    b.extend_from_slice(code);
    b
}

/// Writes `OCL_asm<hash>.spv` with `body` and returns its SHA-256.
fn write_spv(dir: &Path, hash: &str, body: &[u8]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(format!("OCL_asm{hash}.spv"));
    std::fs::write(&p, body).unwrap();
    xpu_asm_collector::sources::dumps::sha256_file(&p).unwrap()
}

#[test]
fn final_binary_evidence_beats_the_retry_heuristic() {
    // IGC reverted to the first attempt (the retry spilled much more): the
    // .kernbin holds the first attempt's code.
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("dumps/h-1");
    let sha = write_spv(&d, "00000000000000aa", b"spirv-x");
    write_asm(
        &d,
        "OCL_asm00000000000000aa_simd16_entry_0001.asm",
        b"k",
        10,
        Some(64),
    );
    std::fs::write(
        d.join("OCL_asm00000000000000aa_simd16_entry_0001.dat"),
        b"AAAA",
    )
    .unwrap();
    write_asm(
        &d,
        "OCL_asm00000000000000aa_1_simd16_entry_0001.asm",
        b"k",
        12,
        Some(4096),
    );
    std::fs::write(
        d.join("OCL_asm00000000000000aa_1_simd16_entry_0001.dat"),
        b"BBBB",
    )
    .unwrap();
    std::fs::write(
        d.join("OCL_asm00000000000000aa_entry_0001.kernbin"),
        kernbin(b"k", b"AAAA"),
    )
    .unwrap();
    let mut p = Process::new(1);
    p.modules = vec![Module::spirv(1, sha)];
    p.kernels = vec![record_kernel(1, 1, b"k", 1)];
    p.write(t.path());

    let r = collect_defaults(t.path());
    let k = &r.kernels[0];
    assert_eq!(
        k.asm.as_deref(),
        Some("dumps/h-1/OCL_asm00000000000000aa_simd16_entry_0001.asm")
    );
    assert_eq!(k.spill_bytes, Some(64));
    assert_eq!(k.grf, Some(256));
    assert!(k.asm_choice.as_deref().unwrap().contains("byte-identical"));

    // Pruned (default keep): the evidence is gone from the dump but was
    // saved in collect.json, so the same file is shown again.
    assert!(!d
        .join("OCL_asm00000000000000aa_entry_0001.kernbin")
        .exists());
    let again = collect_defaults(t.path());
    assert_eq!(again, r);

    // Without any evidence, the heuristic takes the retry and says it may be wrong.
    std::fs::remove_file(t.path().join("collect.json")).unwrap();
    let guess = collect_defaults(t.path());
    let k = &guess.kernels[0];
    assert_eq!(
        k.asm.as_deref(),
        Some("dumps/h-1/OCL_asm00000000000000aa_1_simd16_entry_0001.asm")
    );
    let why = k.asm_choice.as_deref().unwrap();
    assert!(
        why.contains("spills more") && why.contains("no final binary"),
        "{why}"
    );
}

#[test]
fn widest_simd_is_shown_when_one_attempt_left_several() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("dumps/h-1");
    let sha = write_spv(&d, "00000000000000bb", b"spirv-y");
    write_asm(
        &d,
        "OCL_asm00000000000000bb_simd8_entry_0001.asm",
        b"k",
        10,
        None,
    );
    write_asm(
        &d,
        "OCL_asm00000000000000bb_simd16_entry_0001.asm",
        b"k",
        10,
        None,
    );
    let mut p = Process::new(1);
    p.modules = vec![Module::spirv(1, sha)];
    p.kernels = vec![record_kernel(1, 1, b"k", 1)];
    p.write(t.path());
    let r = collect_defaults(t.path());
    assert_eq!(r.kernels[0].simd, Some(16));
    assert!(r.kernels[0]
        .asm_choice
        .as_deref()
        .unwrap()
        .contains("widest SIMD"));
}

#[test]
fn each_unmatched_kernel_says_why() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    // 1: native module; module unknown; cache (no .spv); no .asm for the name.
    let mut p1 = Process::new(1);
    p1.env.push(("NEO_CACHE_PERSISTENT", "1", true));
    p1.modules = vec![
        Module {
            id: 1,
            format: "native",
            sha256: "ab".repeat(32),
            build_flags: "",
            binary: None,
            device: None,
            built_binary: None,
        },
        Module::spirv(2, "cd".repeat(32)),
        Module::spirv(3, sha_a()),
    ];
    p1.kernels = vec![
        record_kernel(1, 1, b"native_k", 1),
        record_kernel(2, 9, b"orphan", 2),
        record_kernel(3, 2, b"cached_k", 3),
        record_kernel(4, 3, b"vector_ad", 4), // a prefix of two real names
    ];
    p1.write(out);
    copy_dumps("pvc", out, &p1.dump_dir());
    // 2: dumps switched off by the user.
    let mut p2 = Process::new(2);
    p2.env = vec![("IGC_ShaderDumpEnable", "0", true)];
    p2.modules = vec![Module::spirv(1, sha_a())];
    p2.kernels = vec![record_kernel(1, 1, b"off_k", 5)];
    p2.write(out);
    // 3: dump folder missing.
    let mut p3 = Process::new(3);
    p3.modules = vec![Module::spirv(1, sha_b())];
    p3.kernels = vec![record_kernel(1, 1, b"gone_k", 6)];
    p3.write(out);

    let r = collect_defaults(out);
    let status = |n: &str| {
        let k = r.kernels.iter().find(|k| k.name == n).unwrap();
        assert!(k.asm.is_none() && k.asm_copy.is_none());
        (k.status, k.reason.clone().unwrap())
    };
    // A record that predates module binaries: the native module's ISA was
    // not kept.
    let (s, why) = status("native_k");
    assert_eq!(s, Status::NoBinary);
    assert!(why.contains("no binary of its module"), "{why}");
    let (s, why) = status("orphan");
    assert_eq!(s, Status::ModuleUnknown);
    assert!(why.contains("id 9"), "{why}");
    let (s, why) = status("cached_k");
    assert_eq!(s, Status::NotCompiledHere);
    assert!(
        why.contains("cache") && why.contains("NEO_CACHE_PERSISTENT"),
        "{why}"
    );
    let (s, why) = status("vector_ad");
    assert_eq!(s, Status::NoAsm);
    assert!(why.contains("2 .asm files"), "{why}");
    let (s, why) = status("off_k");
    assert_eq!(s, Status::DumpsDisabled);
    assert!(why.contains("IGC_ShaderDumpEnable"), "{why}");
    let (s, why) = status("gone_k");
    assert_eq!(s, Status::DumpFolderMissing);
    assert!(why.contains("dumps/h-3"), "{why}");
    assert_eq!(r.totals.unmatched, 6);
    assert_eq!(r.totals.matched, 0);

    let table = xpu_asm_collector::report::export::table::render_table(
        &r,
        &xpu_asm_collector::report::export::table::TableStyle {
            width: 100,
            color: false,
            dir: "D".into(),
        },
    );
    assert!(table.contains("not matched:"), "{table}");
    assert!(
        table.contains("#1 gone_k: the dump folder dumps/h-3 does not exist"),
        "{table}"
    );
}

#[test]
fn processes_are_merged_per_kernel_and_module() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    for (pid, n) in [(10, 7u64), (11, 5)] {
        let mut p = Process::new(pid);
        p.modules = vec![Module::spirv(1, sha_a())];
        p.kernels = vec![record_kernel(1, 1, b"vector_add", n)];
        if pid == 11 {
            p.exit = None;
            p.unknown_launches = 2;
        }
        p.write(out);
        copy_dumps("pvc", out, &p.dump_dir());
    }
    write_run_json(out, r#"{"signal":11}"#);
    let r = collect_defaults(out);
    assert_eq!(r.kernels.len(), 1);
    let k = &r.kernels[0];
    assert_eq!((k.launches, k.appended), (12, 12));
    assert_eq!(k.pids, [10, 11]);
    // The process that launched it most speaks for it.
    assert_eq!(
        k.asm.as_deref(),
        Some("dumps/h-10/OCL_asm6f30f910931b48ea_simd32_entry_0001.asm")
    );
    // Both processes compiled the same SPIR-V the same way: one candidate.
    assert_eq!(k.asm_candidates.len(), 1);
    assert_eq!(k.asm_candidates[0].path, k.asm.clone().unwrap());
    assert_eq!(k.asm_candidates[0].processes, 2);
    // vector_add_scaled of A plus everything of B and C, counted once.
    assert_eq!(r.unlaunched_compiled, 4);
    assert_eq!(
        r.exit,
        Some(xpu_asm_collector::capture::run::Exit::Signal(11))
    );
    assert_eq!(r.processes.len(), 2);
    assert_eq!(
        r.processes[0].exit,
        Some(xpu_asm_collector::capture::run::Exit::Code(0))
    );
    assert_eq!(r.processes[1].exit, None);
    assert!(r.processes[1].ended.contains("unknown"));
    assert_eq!(r.processes[1].unknown_launches, 2);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("2 launches of kernel handles")));
}

/// Processes 20..=24 launch `vector_add` of module A and `heavy` of module
/// C (n, 2n launches) with the same dumps; `change` edits one process's
/// file first.
fn ranks_capture(out: &Path, change: Option<(u32, &str, &str, &str)>) -> Vec<u64> {
    let mut launches = Vec::new();
    for (i, pid) in (20..=24u32).enumerate() {
        let n = [3u64, 5, 7, 11, 13][i];
        let mut p = Process::new(pid);
        p.modules = vec![Module::spirv(1, sha_a()), Module::spirv(3, sha_c())];
        p.kernels = vec![
            record_kernel(1, 1, b"vector_add", n),
            record_kernel(2, 3, b"heavy", 2 * n),
        ];
        p.write(out);
        copy_dumps("pvc", out, &p.dump_dir());
        if let Some((at, file, from, to)) = change.filter(|c| c.0 == pid) {
            let f = out.join(p.dump_dir()).join(file);
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(text.contains(from), "{from} not in {file}");
            std::fs::write(&f, text.replacen(from, to, 1)).unwrap();
            assert_eq!(at, pid);
        }
        launches.push(n);
    }
    write_run_json(out, r#"{"code":0}"#);
    launches
}

const VECTOR_ADD_A: &str = "OCL_asm6f30f910931b48ea_simd32_entry_0001.asm";

#[test]
fn identical_files_of_many_processes_are_one_candidate() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let n = ranks_capture(out, None);
    let r = collect(out, &with(Keep::Launched, false)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.launches, n.iter().sum::<u64>());
    assert_eq!(k.pids, [20, 21, 22, 23, 24]);
    // Shown: the file of the process that launched it most (pid 24), which
    // stays the one listed though it is last by path.
    let shown = format!("dumps/h-24/{VECTOR_ADD_A}");
    assert_eq!(k.asm.as_deref(), Some(shown.as_str()));
    let c: Vec<(&str, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.as_str(), c.processes))
        .collect();
    assert_eq!(c, [(shown.as_str(), 5)]);
    // Both of IGC's attempts at `heavy`, each once for all five processes:
    // the shown retry as shown, the other by its first path.
    let h = find(&r, "heavy", &sha_c());
    assert_eq!(h.launches, 2 * n.iter().sum::<u64>());
    let c: Vec<(&str, u32, u32)> = h
        .asm_candidates
        .iter()
        .map(|c| (c.path.as_str(), c.retry, c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (
                "dumps/h-20/OCL_asm16db3a16823c3d45_simd32_entry_0001.asm",
                0,
                5
            ),
            (
                "dumps/h-24/OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm",
                1,
                5
            ),
        ]
    );
    // `--keep launched` keeps every process's copy, not only the listed one:
    // collecting again gives the same report.
    for pid in 20..=24 {
        assert!(out.join(format!("dumps/h-{pid}/{VECTOR_ADD_A}")).is_file());
    }
    let again = collect(out, &with(Keep::Launched, false)).unwrap();
    assert_eq!(again.kernels, r.kernels);
}

#[test]
fn a_process_that_compiled_differently_is_its_own_candidate_and_warned() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let n = ranks_capture(
        out,
        Some((22, VECTOR_ADD_A, "//.instCount 34", "//.instCount 41")),
    );
    let r = collect_defaults(out);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.launches, n.iter().sum::<u64>());
    assert_eq!(k.instructions, Some(34));
    let c: Vec<(String, Option<u64>, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.clone(), c.instructions, c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (format!("dumps/h-22/{VECTOR_ADD_A}"), Some(41), 1),
            (format!("dumps/h-24/{VECTOR_ADD_A}"), Some(34), 4),
        ]
    );
    assert_eq!(
        r.warnings,
        [format!(
            "kernel vector_add: processes compiled it differently: 4 with 34 instructions, \
             1 with 41 instructions (dumps/h-22/{VECTOR_ADD_A}); the report shows dumps/h-24/{VECTOR_ADD_A}"
        )]
    );
    // `heavy` was compiled alike everywhere.
    let h = find(&r, "heavy", &sha_c());
    assert!(h.asm_candidates.iter().all(|c| c.processes == 5));
    assert_eq!(h.asm_candidates.len(), 2);

    // The process shown (it launched most) is the one that differs: the
    // others' version is named by its first path.
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    ranks_capture(
        out,
        Some((24, VECTOR_ADD_A, "//.instCount 34", "//.instCount 41")),
    );
    let r = collect_defaults(out);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.instructions, Some(41));
    let c: Vec<(String, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.clone(), c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (format!("dumps/h-20/{VECTOR_ADD_A}"), 4),
            (format!("dumps/h-24/{VECTOR_ADD_A}"), 1),
        ]
    );
    assert_eq!(
        r.warnings,
        [format!(
            "kernel vector_add: processes compiled it differently: 4 with 34 instructions \
             (dumps/h-20/{VECTOR_ADD_A}), 1 with 41 instructions; the report shows dumps/h-24/{VECTOR_ADD_A}"
        )]
    );
}

#[test]
fn all_lists_unlaunched_kernels_and_filter_limits_the_list() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    let r = collect(t.path(), &with(Keep::All, true)).unwrap();
    assert_eq!(r.kernels.len(), 5);
    let un = r.kernels.last().unwrap();
    assert_eq!(
        (un.name.as_str(), un.status, un.launches),
        ("vector_add_scaled", Status::NotLaunched, 0)
    );
    assert_eq!(un.rank, 5);
    assert!(un.asm.is_some() && un.asm_copy.is_none());

    let opts = Options {
        filter: Some(regex::Regex::new("^vector").unwrap()),
        keep: Keep::All,
        ..Default::default()
    };
    let r = collect(t.path(), &opts).unwrap();
    let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["vector_add", "vector_add"]);
    assert_eq!(r.totals.filtered_out, 2);
    assert_eq!(r.filter.as_deref(), Some("^vector"));
    // The demangled form matches too.
    let mut p = Process::new(5);
    let t2 = tempfile::tempdir().unwrap();
    let d = t2.path().join("dumps/h-5");
    let sha = write_spv(&d, "00000000000000cc", b"s");
    let mangled = b"_ZTSZ4mainEUlN4sycl3_V12idILi1EEEE_";
    write_asm(
        &d,
        "OCL_asm00000000000000cc_simd32_entry_0001.asm",
        mangled,
        3,
        None,
    );
    p.modules = vec![Module::spirv(1, sha)];
    p.kernels = vec![record_kernel(1, 1, mangled, 1)];
    p.write(t2.path());
    let opts = Options {
        filter: Some(regex::Regex::new(r"lambda\(sycl").unwrap()),
        ..Default::default()
    };
    let r = collect(t2.path(), &opts).unwrap();
    assert_eq!(r.kernels.len(), 1);
    assert_eq!(r.kernels[0].demangled, "main::{lambda(sycl::_V1::id<1>)#1}");
    assert!(r.kernels[0]
        .asm_copy
        .as_deref()
        .unwrap()
        .starts_with("asm/001-main_lambda_sycl_V1_id_1_1-"));
}

#[test]
fn keep_modes_prune_the_dumps_and_report_sizes() {
    let base = tempfile::tempdir().unwrap();
    let make = |name: &str| {
        let out = base.path().join(name);
        pvc_capture(&out);
        // An intermediate IGC leaves, and a file in a subfolder.
        let d = out.join("dumps/h-100");
        std::fs::write(
            d.join("OCL_asm6f30f910931b48ea_codegen.ll"),
            vec![b'x'; 5000],
        )
        .unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/x.visaasm"), b"x").unwrap();
        out
    };
    let files = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = walkdir::WalkDir::new(out.join("dumps"))
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };

    let out = make("all");
    let r = collect(&out, &with(Keep::All, false)).unwrap();
    assert_eq!(r.dumps.before, r.dumps.after);
    assert_eq!(files(&out).len(), 13);

    let out = make("asm");
    let r = collect(&out, &with(Keep::Asm, false)).unwrap();
    assert!(files(&out)
        .iter()
        .all(|f| f.ends_with(".asm") || f.ends_with(".spv")));
    assert_eq!(files(&out).len(), 9);
    assert_eq!(r.dumps.before.files, 13);
    assert_eq!(r.dumps.after.files, 9);
    assert!(r.dumps.after.bytes < r.dumps.before.bytes);
    assert_eq!(r.dumps.keep, "asm");
    // Collecting again reports the same sizes (the "before" is remembered).
    assert_eq!(collect(&out, &with(Keep::Asm, false)).unwrap(), r);

    let out = make("launched");
    // --filter limits the report, not what is kept.
    let opts = Options {
        keep: Keep::Launched,
        filter: Some(regex::Regex::new("^light$").unwrap()),
        ..Default::default()
    };
    let r = collect(&out, &opts).unwrap();
    assert_eq!(r.kernels.len(), 1);
    assert_eq!(
        files(&out),
        [
            "OCL_asm0ffa4fea61191b0a.spv",
            "OCL_asm0ffa4fea61191b0a_simd32_entry_0001.asm",
            "OCL_asm0ffa4fea61191b0a_simd32_entry_0002.asm",
            "OCL_asm16db3a16823c3d45.spv",
            "OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm",
            "OCL_asm16db3a16823c3d45_simd32_entry_0001.asm",
            "OCL_asm6f30f910931b48ea.spv",
            "OCL_asm6f30f910931b48ea_simd32_entry_0001.asm",
        ]
    );
}

#[test]
fn collect_on_a_copy_gives_the_same_report() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    pvc_capture(&a);
    let first = collect_defaults(&a);
    let b = t.path().join("b");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(status.success());
    let second = collect_defaults(&b);
    assert_eq!(first, second);
    assert_eq!(report_json(&a), report_json(&b));
    // And again on the original, after its pruning.
    assert_eq!(collect_defaults(&a), first);
}

#[test]
fn report_json_contract() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    collect_defaults(t.path());
    let j = report_json(t.path());
    assert_eq!(j["schema"], 4);
    assert_eq!(j["command"], serde_json::json!(["./app", "--x"]));
    assert_eq!(j["exit"], serde_json::json!({"code": 0}));
    for key in ["processes", "kernels", "warnings"] {
        assert!(j[key].is_array(), "{key}");
    }
    assert!(j["unlaunched_compiled"].is_u64());
    assert!(j["dumps"]["before"]["bytes"].is_u64());
    assert!(j["dumps"]["after"]["files"].is_u64());
    let p = &j["processes"][0];
    assert_eq!(p["pid"], 100);
    assert_eq!(p["host"], "h");
    assert_eq!(p["launches"], 1115);
    assert_eq!(p["exit"], serde_json::json!({"code": 0}));
    // Not a parallel job: no rank.
    assert_eq!(
        (&p["rank"], &p["local_rank"], &p["job_id"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    let k = &j["kernels"][0];
    for key in [
        "name",
        "demangled",
        "module_sha256",
        "launches",
        "appended",
        "pids",
        "asm",
        "asm_candidates",
        "status",
        "reason",
        "simd",
        "grf",
        "instructions",
        "spill_bytes",
        "platform",
    ] {
        assert!(k.get(key).is_some(), "kernel field {key} missing: {k}");
    }
    assert_eq!(k["status"], "matched");
    assert_eq!(k["reason"], Value::Null);
    assert_eq!(k["spill_bytes"], Value::Null);
    // Built without line information; its mix read from the whole file.
    assert_eq!(k["source"], Value::Null);
    let m = k["mix"].as_object().expect("a mix");
    let classes: u64 = m
        .iter()
        .filter(|(f, _)| *f != "instructions")
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert!(classes > 0);
    assert_eq!(m["instructions"].as_u64(), Some(classes));
    assert_eq!(k["pids"], serde_json::json!([100]));
    assert_eq!(k["asm_candidates"][0]["processes"], 1);
    assert_eq!(k["ranks"], serde_json::json!([]));
    assert_eq!(k["launches_by_rank"], serde_json::json!([]));
    assert!(k["asm"].as_str().unwrap().starts_with("dumps/"));
    assert!(k.get("name_hex").is_none());
    // Paths are relative: nothing in the report names the temporary folder.
    let text = std::fs::read_to_string(t.path().join("report.json")).unwrap();
    assert!(!text.contains(&t.path().display().to_string()));
}

#[test]
fn hostile_names_never_escape_the_folder() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let d = out.join("dumps/h-1");
    let sha = write_spv(&d, "00000000000000dd", b"hostile");
    let long = vec![b'k'; 4000];
    let names: Vec<Vec<u8>> = vec![
        b"../../../escape".to_vec(),
        b"/abs/path".to_vec(),
        b"..".to_vec(),
        b"with space".to_vec(),
        long.clone(),
        b"bad\xff\xfeutf8".to_vec(),
        b"\x1b[2Jclear".to_vec(),
    ];
    let mut p = Process::new(1);
    p.modules = vec![Module::spirv(1, sha)];
    for (i, n) in names.iter().enumerate() {
        write_asm(
            &d,
            &format!("OCL_asm00000000000000dd_simd32_entry_{:04}.asm", i + 1),
            n,
            1,
            None,
        );
        p.kernels
            .push(record_kernel(i as u32 + 1, 1, n, 100 - i as u64));
    }
    // A newline cannot be in a `//.kernel` line: unmatched, not confused.
    p.kernels.push(record_kernel(50, 1, b"two\nlines", 1));
    p.write(out);
    let r = collect_defaults(out);
    assert_eq!(r.totals.matched, names.len() as u64);
    let copies: Vec<String> = std::fs::read_dir(out.join("asm"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(copies.len(), names.len());
    for c in &copies {
        assert!(c.len() <= 80 && !c.starts_with('.'), "{c}");
        assert!(
            c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{c}"
        );
    }
    assert!(!out.parent().unwrap().join("escape").exists());
    let bad = r.kernels.iter().find(|k| k.name_hex.is_some()).unwrap();
    assert_eq!(
        bad.name_hex.as_deref(),
        Some(xpu_asm_record::hex(b"bad\xff\xfeutf8").as_str())
    );
    let nl = r.kernels.iter().find(|k| k.name == "two\nlines").unwrap();
    assert_eq!(nl.status, Status::NoAsm);
    let table = xpu_asm_collector::report::export::table::render_table(
        &r,
        &xpu_asm_collector::report::export::table::TableStyle {
            width: 120,
            color: false,
            dir: "D".into(),
        },
    );
    assert!(
        !table.contains('\x1b'),
        "escape sequences reach the terminal"
    );
    assert!(table.lines().all(|l| l.chars().count() < 400), "{table}");
}

#[test]
fn hostile_records_and_dumps_give_warnings_not_panics() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let records = out.join("records");
    std::fs::create_dir_all(&records).unwrap();
    // Truncated last line, corrupt line, newer version, empty, garbage.
    let mut good = Process::new(1);
    good.modules = vec![Module::spirv(1, sha_a())];
    good.kernels = vec![record_kernel(1, 1, b"vector_add", 3)];
    good.write(out);
    let ev = records.join("h-1.events");
    let mut bytes = std::fs::read(&ev).unwrap();
    bytes.extend_from_slice(b"{not json}\n{\"type\":\"kernel\",\"id\":2,\"mod");
    std::fs::write(&ev, bytes).unwrap();
    std::fs::write(
        records.join("h-2.events"),
        b"{\"record\":\"xpu-asm\",\"version\":99,\"type\":\"process\",\"pid\":2}\n",
    )
    .unwrap();
    std::fs::write(records.join("h-3.events"), b"").unwrap();
    std::fs::write(records.join("h-4.events"), b"\xff\xfe\x00garbage").unwrap();
    // Process 5 points its dumps outside the capture.
    let mut evil = Process::new(5);
    evil.dump_dir = Some("../../etc".into());
    evil.modules = vec![Module::spirv(1, sha_a())];
    evil.kernels = vec![record_kernel(1, 1, b"evil_k", 1)];
    evil.write(out);

    // Dumps: a header-less .asm, a directory named .asm, a symlink .asm, a
    // 100 MB .asm (sparse) of a real module's kernel.
    let d = out.join("dumps/h-1");
    copy_dumps("pvc", out, "dumps/h-1");
    std::fs::write(
        d.join("OCL_asm6f30f910931b48ea_simd16_entry_0009.asm"),
        b"no header\n",
    )
    .unwrap();
    std::fs::create_dir(d.join("OCL_asm6f30f910931b48ea_simd8_entry_0001.asm")).unwrap();
    std::os::unix::fs::symlink(
        "/dev/zero",
        d.join("OCL_asm6f30f910931b48ea_simd8_entry_0002.asm"),
    )
    .unwrap();
    let big = d.join("OCL_asm6f30f910931b48ea_1_simd32_entry_0001.asm");
    std::fs::copy(
        d.join("OCL_asm6f30f910931b48ea_simd32_entry_0001.asm"),
        &big,
    )
    .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();

    let r = collect_defaults(out);
    let w = r.warnings.join("\n");
    assert!(w.contains("truncated last event"), "{w}");
    assert!(w.contains("corrupt event"), "{w}");
    assert!(w.contains("version 99"), "{w}");
    assert!(w.contains("h-3.events"), "{w}");
    assert!(w.contains("no `//.kernel` line"), "{w}");
    assert!(w.contains("\"../../etc\""), "{w}");
    assert!(
        !w.contains(&out.display().to_string()),
        "absolute paths in warnings: {w}"
    );
    // The good process is still reported; the big retry file is a candidate.
    let k = r.kernels.iter().find(|k| k.pids == [1]).unwrap();
    assert_eq!(k.status, Status::Matched);
    assert_eq!(k.asm_candidates.len(), 2);
    let evil_k = r.kernels.iter().find(|k| k.pids == [5]).unwrap();
    assert_eq!(evil_k.status, Status::DumpFolderMissing);
    assert!(
        !r.processes
            .iter()
            .find(|p| p.pid == 5)
            .unwrap()
            .dump_dir_exists
    );
}

#[test]
fn not_a_capture_and_missing_folders_are_errors() {
    let t = tempfile::tempdir().unwrap();
    let e = collect(t.path(), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an xpu-asm capture"), "{e}");
    let e = collect(&t.path().join("nope"), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such folder"), "{e}");
    // Records folder present but empty: a report that says so.
    std::fs::create_dir(t.path().join("records")).unwrap();
    let r = collect(t.path(), &Options::default()).unwrap();
    assert!(r.processes.is_empty() && r.kernels.is_empty());
    assert!(r.warnings.iter().any(|w| w.contains("run.json")));
}

#[test]
fn a_stop_request_leaves_the_folder_usable() {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    let opts = Options {
        stop: Some(&STOP),
        ..Default::default()
    };
    let e = collect(t.path(), &opts).unwrap_err();
    assert!(e.to_string().contains("xpu-asm-run collect"), "{e}");
    assert!(!t.path().join("report.json").exists());
    let r = collect_defaults(t.path());
    assert_eq!(r.totals.matched, 4);
}

#[test]
fn isa_from_a_dump_folder_outside_the_capture_is_copied_not_linked() {
    use std::os::unix::fs::MetadataExt;
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("capture");
    // The user chose IGC_DumpToCustomDir: the record names an absolute folder.
    let outside = t.path().join("users-own-dumps");
    let mut p = Process::new(1);
    p.dump_dir = Some(outside.display().to_string());
    p.env = vec![
        ("IGC_ShaderDumpEnable", "1", false),
        ("IGC_DumpToCustomDir", "(the user's)", true),
    ];
    p.modules = vec![Module::spirv(1, sha_a())];
    p.kernels = vec![record_kernel(1, 1, b"vector_add", 4)];
    p.write(&out);
    copy_dumps("pvc", t.path(), "users-own-dumps");
    let r = collect_defaults(&out);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.launches, 4);
    let src = out.join(k.asm.as_deref().expect("matched"));
    let copy = out.join(k.asm_copy.as_deref().expect("copied"));
    assert!(src.starts_with(&outside), "{}", src.display());
    assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&copy).unwrap());
    // A separate file: editing the copy cannot change the user's dump.
    assert_eq!(std::fs::metadata(&src).unwrap().nlink(), 1);
    assert_ne!(
        std::fs::metadata(&src).unwrap().ino(),
        std::fs::metadata(&copy).unwrap().ino()
    );
    // And the user's folder is never pruned.
    assert!(outside.join("OCL_asm6f30f910931b48ea.spv").exists());
    assert!(std::fs::read_dir(&outside)
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().ends_with(".ll")
            || e.file_name().to_string_lossy().ends_with(".visaasm")
            || e.file_name().to_string_lossy().ends_with(".kernbin")));
}

/// `asm_copies` counts copies, not ranks: a kernel without an ISA file
/// (ranked first here) takes none of them, and only kernels with a file
/// count as left out.
#[test]
fn the_copy_limit_counts_kernels_with_an_isa_file() {
    let t = tempfile::tempdir().unwrap();
    let mut p = Process::new(100);
    p.modules = vec![Module::spirv(1, sha_a()), Module::spirv(2, sha_b())];
    p.kernels = vec![
        record_kernel(1, 9, b"orphan", 5000),
        record_kernel(2, 1, b"vector_add", 1000),
        record_kernel(3, 2, b"vector_add", 10),
        record_kernel(4, 2, b"light", 5),
    ];
    p.write(t.path());
    copy_dumps("pvc", t.path(), &p.dump_dir());
    let opts = Options {
        asm_copies: Limit::First(2),
        ..Default::default()
    };
    let r = collect(t.path(), &opts).expect("collect succeeds");
    let got: Vec<(&str, u64, bool, bool)> = r
        .kernels
        .iter()
        .map(|k| {
            (
                k.name.as_str(),
                k.launches,
                k.asm.is_some(),
                k.asm_copy.is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("orphan", 5000, false, false),
            ("vector_add", 1000, true, true),
            ("vector_add", 10, true, true),
            ("light", 5, true, false),
        ]
    );
    assert_eq!(
        r.asm_copies,
        Some(LeftOut {
            limit: 2,
            left_out: 1
        })
    );
    let mut linked: Vec<String> = std::fs::read_dir(t.path().join("asm"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    linked.sort();
    assert_eq!(linked.len(), 2);
    assert!(linked[0].starts_with("002-vector_add-"), "{linked:?}");
    assert!(linked[1].starts_with("003-vector_add-"), "{linked:?}");

    // The default copies all four (three with a file): nothing said.
    let r = collect_defaults(t.path());
    assert_eq!(r.asm_copies, None);
    assert_eq!(r.kernels.iter().filter(|k| k.asm_copy.is_some()).count(), 3);
}
