//! Hostile names and records, bad folders, stop requests, ISA from outside
//! the capture.

use super::*;

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
    // A kernel without a file: unmatched, not confused with `two`'s
    // (there is none) nor another's.
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
            sort: None,
        },
    );
    assert!(
        !table.contains('\x1b'),
        "escape sequences reach the terminal"
    );
    assert!(table.lines().all(|l| l.chars().count() < 400), "{table}");
}

/// A name that holds IGC's header lines: `victim` then `//.spill size
/// 4096`. IGC writes that kernel's dump with a `//.kernel victim` line;
/// it is read as the file of the kernel of the whole name, which the
/// module has (its records name it), never as victim's: victim's figures,
/// its only candidate, the forging kernel reported as itself. A name of
/// 250,000 bytes has its figures.
#[test]
fn a_name_that_holds_header_lines_forges_no_figure() {
    const FORGING: &[u8] = b"victim\n//.spill size 4096\n//.instCount 99999\n//.platform FORGED";
    let long = vec![b'n'; 250_000];
    for forging_known in [true, false] {
        let t = tempfile::tempdir().unwrap();
        let out = t.path();
        let d = out.join("dumps/h-1");
        let sha = write_spv(&d, "00000000000000ee", b"module");
        let files = [(b"victim".as_slice(), 25), (FORGING, 26), (&long, 27)];
        for (i, (name, inst)) in files.iter().enumerate() {
            let f = format!("OCL_asm00000000000000ee_simd32_entry_{:04}.asm", i + 1);
            write_asm(&d, &f, name, *inst, None);
        }
        let mut p = Process::new(1);
        p.modules = vec![Module::spirv(1, sha.clone())];
        p.kernels = vec![
            record_kernel(1, 1, b"victim", 5),
            record_kernel(3, 1, &long, 3),
        ];
        if forging_known {
            // Created, never launched.
            p.kernels.push(record_kernel(2, 1, FORGING, 0));
        }
        p.write(out);
        let r = collect(out, &with(Keep::Asm, true)).unwrap();
        let victim = find(&r, "victim", &sha);
        assert_eq!(victim.spill_bytes, None);
        assert_eq!(victim.instructions, Some(25));
        let paths: Vec<&str> = victim
            .asm_candidates
            .iter()
            .map(|c| c.path.as_str())
            .collect();
        assert_eq!(
            paths,
            ["dumps/h-1/OCL_asm00000000000000ee_simd32_entry_0001.asm"]
        );
        let long_k = r
            .kernels
            .iter()
            .find(|k| k.name.len() == long.len())
            .unwrap();
        assert_eq!(
            (long_k.grf, long_k.instructions, long_k.launches),
            (Some(256), Some(27), 3)
        );
        let forging = r.kernels.iter().find(|k| k.name.as_bytes() == FORGING);
        let w = r.warnings.join("\n");
        if forging_known {
            let f = forging.expect("the forging kernel, as itself");
            assert_eq!(f.status, Status::NotLaunched);
            assert_eq!((f.instructions, f.spill_bytes), (Some(26), None));
            assert_eq!(r.unlaunched_compiled, 1);
            assert!(!w.contains("cannot tell its kernel"), "{w}");
        } else {
            // Its name unknown: its file is no kernel's, and says why.
            assert!(forging.is_none());
            assert_eq!(r.unlaunched_compiled, 0);
            assert!(
                w.contains("entry_0002.asm: its header is not the one IGC writes"),
                "{w}"
            );
        }
        assert_eq!(
            r.kernels.len(),
            2 + usize::from(forging_known),
            "no phantom kernel"
        );
    }
}

/// A name its module does not say (no `.spv` of it, no record of it) that
/// holds a whole header of IGC's and the line that ends one: its file,
/// read as `victim`'s, would be a header of IGC's. IGC's final binary of
/// that file's entry (`.kernbin`, the name by its length) names the other
/// kernel: the file is no kernel's, and victim has its own file alone.
#[test]
fn a_final_binary_tells_a_whole_forged_header_from_victims() {
    let forging =
        b"victim\n//.platform X\n//.thread_config numGRF=512\n//.instCount 1\n//.spill size 4096\n";
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let d = out.join("dumps/h-1");
    let sha = write_spv(&d, "00000000000000ef", b"module");
    write_asm(
        &d,
        "OCL_asm00000000000000ef_simd32_entry_0001.asm",
        b"victim",
        25,
        None,
    );
    write_asm(
        &d,
        "OCL_asm00000000000000ef_simd32_entry_0002.asm",
        forging,
        26,
        None,
    );
    std::fs::write(
        d.join("OCL_asm00000000000000ef_entry_0002.kernbin"),
        kernbin(forging, &[1; 16]),
    )
    .unwrap();
    let mut p = Process::new(1);
    p.modules = vec![Module::spirv(1, sha.clone())];
    p.kernels = vec![record_kernel(1, 1, b"victim", 5)];
    p.write(out);
    let r = collect(out, &with(Keep::All, true)).unwrap();
    let victim = find(&r, "victim", &sha);
    let paths: Vec<&str> = victim
        .asm_candidates
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(
        paths,
        ["dumps/h-1/OCL_asm00000000000000ef_simd32_entry_0001.asm"]
    );
    assert_eq!(
        (victim.spill_bytes, victim.grf, victim.instructions),
        (None, Some(256), Some(25))
    );
    let w = r.warnings.join("\n");
    assert!(
        w.contains("entry_0002.asm: IGC's final binary of its entry names another kernel"),
        "{w}"
    );
    assert_eq!((r.kernels.len(), r.unlaunched_compiled), (1, 0));
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
