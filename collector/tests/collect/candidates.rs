//! Which IGC files are a kernel's candidates, and which one is chosen.

use super::*;

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
            sort: None,
        },
    );
    assert!(table.contains("not matched:"), "{table}");
    assert!(
        table.contains("#1 gone_k: the dump folder dumps/h-3 does not exist"),
        "{table}"
    );
}
