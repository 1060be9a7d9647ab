//! Golden tests on real IGC dumps (tests/data, made by tests/data/gen.sh
//! with ocloc and IGC 1.0.12504).

mod common;

use common::data_dir;
use std::collections::BTreeMap;
use xpu_asm_collector::sources::dumps;
use xpu_asm_isa::header::{self, AsmHeader};

fn header(rel: &str) -> AsmHeader {
    let p = data_dir().join(rel);
    header::read_header(&p, &module_names(&p)).unwrap()
}

/// The kernel names of the module of the dump `asm`: its `.spv`'s entry
/// points.
fn module_names(asm: &std::path::Path) -> header::KnownNames {
    let file = asm.file_name().unwrap().to_string_lossy();
    let hash = dumps::file_names::parse_asm_file_name(&file).unwrap().hash;
    let spv = asm.with_file_name(format!("OCL_asm{hash}.spv"));
    let spirv = std::fs::read(&spv).unwrap_or_else(|e| panic!("{}: {e}", spv.display()));
    header::KnownNames::new(xpu_asm_isa::spirv::entry_point_names(&spirv))
}

#[test]
fn pvc_headers() {
    let h = header("pvc/OCL_asm6f30f910931b48ea_simd32_entry_0001.asm");
    assert_eq!(
        h,
        AsmHeader {
            kernel: Some(b"vector_add".to_vec()),
            platform: Some("PVCXT".into()),
            grf: Some(128),
            acc: Some(4),
            swsb: Some(16),
            instructions: Some(34),
            ra_type: Some("TRIVIAL_RA".into()),
            ..Default::default()
        }
    );
    let h = header("pvc/OCL_asm6f30f910931b48ea_simd32_entry_0002.asm");
    assert_eq!(h.kernel.as_deref(), Some(&b"vector_add_scaled"[..]));
    assert_eq!(h.instructions, Some(35));

    // Module B's vector_add: same name, other code.
    let h = header("pvc/OCL_asm0ffa4fea61191b0a_simd32_entry_0001.asm");
    assert_eq!(h.kernel.as_deref(), Some(&b"vector_add"[..]));
    assert_eq!(h.instructions, Some(31));

    // A spilling kernel: spill size, GRF refs, private memory.
    for f in [
        "pvc/OCL_asm16db3a16823c3d45_simd32_entry_0001.asm",
        "pvc/OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm",
    ] {
        assert_eq!(
            header(f),
            AsmHeader {
                kernel: Some(b"heavy".to_vec()),
                platform: Some("PVCXT".into()),
                grf: Some(128),
                acc: Some(4),
                swsb: Some(16),
                instructions: Some(1274),
                ra_type: Some("GRAPH_COLORING_SPILL_FF_RA".into()),
                spill_bytes: Some(1024),
                spill_grf_refs: Some(67),
                private_memory_bytes: Some(8192),
                ..Default::default()
            },
            "{f}"
        );
    }
}

#[test]
fn dg2_retry_headers() {
    let first = header("dg2-retry/OCL_asm16db3a16823c3d45_simd8_entry_0001.asm");
    assert_eq!(first.platform.as_deref(), Some("DG2"));
    assert_eq!(first.instructions, Some(1667));
    assert_eq!(first.spill_bytes, Some(2720));
    assert_eq!(first.spill_grf_refs, Some(219));
    assert_eq!(first.private_memory_bytes, None);
    let retry = header("dg2-retry/OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm");
    assert_eq!(retry.instructions, Some(3975));
    assert_eq!(retry.ra_type.as_deref(), Some("GRAPH_COLORING_FF_RA"));
    // No spill line: absent, not zero, not an error.
    assert_eq!(retry.spill_bytes, None);
    assert!(!retry.truncated);
}

#[test]
fn every_test_data_asm_names_its_kernel_and_parses_its_name() {
    for dir in ["pvc", "dg2-retry"] {
        for e in std::fs::read_dir(data_dir().join(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if name.ends_with(".asm") {
                let n = dumps::file_names::parse_asm_file_name(&name).expect("IGC name parses");
                assert!(n.simd.is_some() && n.entry.is_some(), "{name}");
                assert_eq!(n.retry, u32::from(name.contains("_1_simd")), "{name}");
                let h = header::read_header(&p, &module_names(&p)).unwrap();
                assert!(h.kernel.is_some(), "{name}");
            }
        }
    }
}

/// The real pvc dumps scanned with no kernel launched; headers whole with
/// `all_headers` (`--all`), else up to their `//.kernel` line.
fn scan_pvc(all_headers: bool) -> dumps::DumpFolder {
    dumps::scan_folder(
        &data_dir().join("pvc"),
        "pvc",
        &BTreeMap::new(),
        &Default::default(),
        &Default::default(),
        all_headers,
        &|| false,
    )
    .unwrap()
}

#[test]
fn spv_names_the_module_by_the_sha_of_its_spirv() {
    // The same SPIR-V compiled for two devices: same IGC hash, same SHA-256.
    assert_eq!(
        common::data_sha("pvc/OCL_asm16db3a16823c3d45.spv"),
        common::data_sha("dg2-retry/OCL_asm16db3a16823c3d45.spv")
    );
    let f = scan_pvc(true);
    // Without `--all`, no kernel launched: each header read up to its
    // `//.kernel` line, the same kernel and no other field.
    let named = scan_pvc(false);
    assert_eq!(named.asm.len(), 6);
    for (a, b) in f.asm.iter().zip(&named.asm) {
        let (whole, kernel_line) = (a.header.as_ref().unwrap(), b.header.as_ref().unwrap());
        assert!(whole.kernel.is_some() && whole.instructions.is_some() && !whole.kernel_only);
        assert_eq!(kernel_line.kernel, whole.kernel, "{}", a.file_name);
        assert!(kernel_line.kernel_only && kernel_line.instructions.is_none());
        assert_eq!((&a.file_name, a.size), (&b.file_name, b.size));
    }
    assert!(f.exists);
    assert_eq!(f.spv_by_sha.len(), 3);
    assert_eq!(f.asm.len(), 6);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let a: Vec<&str> = f
        .module_asm(&common::sha_a())
        .map(|a| a.file_name.as_str())
        .collect();
    assert_eq!(
        a,
        [
            "OCL_asm6f30f910931b48ea_simd32_entry_0001.asm",
            "OCL_asm6f30f910931b48ea_simd32_entry_0002.asm"
        ]
    );
}

#[test]
fn real_kernbin_matches_real_machine_code() {
    let kb =
        std::fs::read(data_dir().join("pvc/OCL_asm0ffa4fea61191b0a_entry_0002.kernbin")).unwrap();
    let kb = dumps::file_names::parse_kernbin(&kb).expect("real kernbin parses");
    assert_eq!(kb.name, b"light");
    let dat = std::fs::read(data_dir().join("pvc/OCL_asm0ffa4fea61191b0a_simd32_entry_0002.dat"))
        .unwrap();
    assert_eq!(kb.machine_code, dat);

    // The verdicts need each attempt's kernel only: the same from headers
    // read up to their `//.kernel` line.
    let f = scan_pvc(false);
    for a in &f.asm {
        let is_light = a.header.as_ref().unwrap().kernel.as_deref() == Some(&b"light"[..]);
        assert_eq!(
            a.final_binary,
            if is_light { Some(true) } else { None },
            "{}",
            a.file_name
        );
    }
}
