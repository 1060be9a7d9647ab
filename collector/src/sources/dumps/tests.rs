//! The dump scanner's tests.

use super::*;
use xpu_asm_isa::header::{read_header, read_header_and_analysis, KnownNames, HEADER_READ_CHUNK};

/// The interposer's `IGC_ShaderDumpRegexFilter` lets IGC write exactly
/// the files this module reads.
#[test]
fn the_dump_filter_keeps_what_the_scan_reads() {
    let re = regex::Regex::new(xpu_asm_record::DUMP_FILTER).unwrap();
    let read = |name: &str| {
        parse_asm_file_name(name).is_some()
            || parse_spv_file_name(name).is_some()
            || parse_kernbin_file_name(name).is_some()
            || name.ends_with(".dat")
    };
    for name in [
        "OCL_asm0123456789abcdef_simd32_entry_0001.asm",
        "OCL_asm0123456789abcdef_1_simd16_entry_0002.asm",
        "OCL_asm0123456789abcdef.spv",
        "OCL_asm0123456789abcdef_entry_0001.kernbin",
        "OCL_asm0123456789abcdef_simd32_entry_0001.dat",
        "OCL_asm0123456789abcdef_simd32_entry_0001.visaasm",
        "OCL_asm0123456789abcdef_simd32_entry_0001.isaasm",
        "OCL_asm0123456789abcdef.spvasm",
        "OCL_asm0123456789abcdef_optimized.ll",
        "OCL_asm0123456789abcdef.progbin",
        "OCL_asm0123456789abcdef.zeinfo",
        "HardwareCaps.txt",
    ] {
        assert_eq!(re.is_match(name), read(name), "{name}");
    }
    // IGC 2 also writes `OCL_asm<hash>_<hash>.spv` files, which the
    // scan does not read: the filter lets them through (any `.spv`).
    assert!(re.is_match("OCL_asm332f65a84b29cb25_147e7ef8e58ba876.spv"));
}

fn asm_file(file_name: &str, kernel: Option<&str>) -> AsmFile {
    AsmFile {
        path: PathBuf::from(file_name),
        shown: format!("d/{file_name}"),
        file_name: file_name.to_string(),
        name: parse_asm_file_name(file_name).unwrap(),
        header: Some(AsmHeader {
            kernel: kernel.map(|k| k.as_bytes().to_vec()),
            ..Default::default()
        }),
        final_binary: None,
        source: IsaSourceKind::IgcDump,
        binary: None,
        analysis: None,
        size: None,
    }
}

#[test]
fn lookups_by_module_and_exact_kernel_name() {
    let mut f = DumpFolder::default();
    // Module "aaaaaaaa" was dumped twice, under two hashes.
    for h in ["aaaaaaaa", "cccccccc"] {
        f.spv_by_sha
            .entry("sha-a".into())
            .or_default()
            .push(h.into());
    }
    f.spv_by_sha.insert("sha-b".into(), vec!["bbbbbbbb".into()]);
    f.asm = [
        asm_file("OCL_asmaaaaaaaa_1_simd32_entry_0001.asm", Some("k")),
        asm_file("OCL_asmaaaaaaaa_simd32_entry_0001.asm", Some("k")),
        asm_file("OCL_asmaaaaaaaa_simd32_entry_0002.asm", Some("k_v2")),
        asm_file("OCL_asmaaaaaaaa_simd32_entry_0003.asm", None),
        asm_file("OCL_asmbbbbbbbb_simd32_entry_0001.asm", Some("k")),
        asm_file("OCL_asmcccccccc_simd8_entry_0001.asm", Some("k")),
    ]
    .into_iter()
    .map(Arc::new)
    .collect();
    let names = |v: Vec<&Arc<AsmFile>>| v.iter().map(|a| a.file_name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(f.kernel_asm("SHA-A", b"k")),
        [
            "OCL_asmaaaaaaaa_1_simd32_entry_0001.asm",
            "OCL_asmaaaaaaaa_simd32_entry_0001.asm",
            "OCL_asmcccccccc_simd8_entry_0001.asm"
        ]
    );
    assert_eq!(
        names(f.kernel_asm("sha-a", b"k_v2")),
        ["OCL_asmaaaaaaaa_simd32_entry_0002.asm"]
    );
    assert!(f.kernel_asm("sha-a", b"k_").is_empty());
    assert!(f.kernel_asm("sha-c", b"k").is_empty());
    assert_eq!(
        names(f.kernel_asm("sha-b", b"k")),
        ["OCL_asmbbbbbbbb_simd32_entry_0001.asm"]
    );
    // Every file of the module, in the folder's order, whatever its header.
    assert_eq!(
        names(f.module_asm("sha-a").collect()),
        [
            "OCL_asmaaaaaaaa_1_simd32_entry_0001.asm",
            "OCL_asmaaaaaaaa_simd32_entry_0001.asm",
            "OCL_asmaaaaaaaa_simd32_entry_0002.asm",
            "OCL_asmaaaaaaaa_simd32_entry_0003.asm",
            "OCL_asmcccccccc_simd8_entry_0001.asm"
        ]
    );
    // The index follows `asm` once told.
    f.asm.remove(0);
    f.reindex();
    assert_eq!(f.kernel_asm("sha-a", b"k").len(), 2);
}

#[test]
fn launched_files_are_analysed_in_the_header_read() {
    let dir = tempfile::tempdir().unwrap();
    // A header longer than one read, and a body of several reads.
    let mut text = String::from("//.kernel scale\n//.platform PVCXT\n");
    for i in 0..300 {
        text.push_str(&format!("//.note {i} of a long header\n"));
    }
    text.push_str("// File: a.cl\n");
    for i in 0..2000 {
        text.push_str(&format!(
            "// Line {}:  x[i] = x[i] * 2.0f;\n        add (16|M0)   r{}.0<1>:f  r2.0<1>:f  r3.0<1>:f\n",
            i % 7 + 1,
            i % 100 + 4
        ));
    }
    assert!(text.len() > 3 * HEADER_READ_CHUNK);
    let p = dir
        .path()
        .join("OCL_asm0123456789abcdef_simd16_entry_0001.asm");
    std::fs::write(&p, &text).unwrap();

    let launched: HashSet<&[u8]> = [b"other".as_slice(), b"scale"].into();
    let known = KnownNames::new([b"other".to_vec(), b"scale".to_vec()]);
    let (h, a) = read_header_and_analysis(&p, &known, &launched).unwrap();
    assert_eq!(h, read_header(&p, &known).unwrap());
    assert_eq!(h.kernel.as_deref(), Some(b"scale".as_slice()));
    let whole = xpu_asm_isa::analyze_file(&p).unwrap().unwrap();
    assert_eq!(a, Some(whole.clone()));
    assert_eq!(whole.mix.instructions, 2000);
    assert_eq!(whole.source.unwrap().lines.len(), 7);

    let (h2, a2) = read_header_and_analysis(&p, &known, &[b"other".as_slice()].into()).unwrap();
    assert_eq!(h2, h);
    assert_eq!(a2, None);

    // The folder's scan keeps it on the file.
    let f = scan(dir.path(), &launched);
    assert_eq!(f.asm.len(), 1);
    assert_eq!(f.asm[0].analysis.as_deref(), a.as_ref());
    let f = scan(dir.path(), &HashSet::new());
    assert_eq!(f.asm[0].analysis, None);
}

/// The scan of folder `d` (shown as `d`), with the `launched` kernels'
/// files read whole and every header whole, never stopped; its modules'
/// kernels named `scale` and `other`.
fn scan(d: &Path, launched: &HashSet<&[u8]>) -> DumpFolder {
    let mut names = ModuleNames::default();
    names.add("sha", [b"scale".to_vec(), b"other".to_vec()]);
    scan_folder(d, "d", &BTreeMap::new(), &names, launched, true, &|| false).unwrap()
}

#[test]
fn the_scans_listing_is_the_folders() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("OCL_asm0123456789abcdef_simd16_entry_0001.asm"), "x").unwrap();
    std::fs::write(d.join("a.ll"), "y").unwrap();
    std::fs::write(d.join(std::ffi::OsStr::from_bytes(b"odd-\xff.txt")), "z").unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(d.join("a.ll"), d.join("link.ll")).unwrap();
    std::os::unix::fs::symlink(d.join("sub"), d.join("link-dir")).unwrap();
    let f = scan(d, &HashSet::new());
    let listing = f.listing.unwrap();
    let sorted = |mut v: Vec<std::ffi::OsString>| {
        v.sort();
        v
    };
    assert_eq!(listing, Listing::of(d).unwrap());
    assert_eq!(
        sorted(listing.files),
        ["OCL_asm0123456789abcdef_simd16_entry_0001.asm", "a.ll"]
            .iter()
            .map(std::ffi::OsString::from)
            .chain([std::ffi::OsStr::from_bytes(b"odd-\xff.txt").to_owned()])
            .collect::<Vec<_>>()
    );
    assert_eq!(listing.dirs, ["sub"]);
    let missing = scan(&d.join("none"), &HashSet::new());
    assert_eq!(missing.listing, None);
}
