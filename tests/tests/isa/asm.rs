//! `asm/`: the copies of the kernels' ISA a capture keeps.

use super::*;

/// The names in a capture's `asm/`, sorted.
fn asm_folder(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("asm"))
        .expect("asm/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The ISA column of the table's row of each rank, by rank.
fn table_isa_column(stdout: &str, ranks: usize) -> Vec<String> {
    (1..=ranks)
        .map(|rank| {
            let row = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(&rank.to_string()))
                .unwrap_or_else(|| panic!("no row of rank {rank}:\n{stdout}"));
            row.split_whitespace().last().unwrap().to_string()
        })
        .collect()
}

/// `--asm-copies N`: `asm/` holds the copies of the N most launched
/// kernels, the report says what it left out, and every other kernel's
/// ISA is its kept dump, which the table names and `show` and the page
/// read; `all` (and the default, on six kernels) copies every one.
#[test]
fn asm_copies_keeps_the_most_launched_and_the_others_isa_in_place() {
    let dir = stack_temp_dir("isa");
    let c = capture_ab(dir.path(), "ab", "", "");
    let out = c.out.to_str().expect("a UTF-8 path");
    assert!(c.report.get("asm_copies").is_none(), "{:#}", c.report);
    assert_eq!(asm_folder(&c.out).len(), AB_KERNELS.len());

    let r = run_xpu_asm(&["collect", out, "--asm-copies", "2"], &c.out);
    r.assert_status(0);
    let report = report_of_run(&c.out, &r);
    assert_eq!(
        report["asm_copies"],
        serde_json::json!({"limit": 2, "left_out": 4}),
        "{}",
        r.ctx()
    );
    let kernels = report["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = AB_KERNELS.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(names, want, "{}", r.ctx());
    let copies: Vec<String> = kernels[..2]
        .iter()
        .map(|k| k["asm_copy"].as_str().expect("a copy").to_string())
        .collect();
    let mut in_folder: Vec<String> = copies
        .iter()
        .map(|c| c["asm/".len()..].to_string())
        .collect();
    in_folder.sort();
    assert_eq!(asm_folder(&c.out), in_folder, "{}", r.ctx());
    for k in &kernels[..2] {
        let (copy, dump) = (k["asm_copy"].as_str().unwrap(), k["asm"].as_str().unwrap());
        assert_eq!(
            std::fs::read(c.out.join(copy)).unwrap(),
            std::fs::read(c.out.join(dump)).unwrap(),
            "{copy}"
        );
    }
    let mut isa_column = copies.clone();
    for k in &kernels[2..] {
        assert!(k["asm_copy"].is_null(), "{k:#}");
        let dump = k["asm"].as_str().expect("its dump");
        assert!(dump.starts_with("dumps/"), "{dump}");
        assert!(c.out.join(dump).is_file(), "{dump} kept");
        isa_column.push(dump.to_string());
    }
    let table = r.stdout();
    assert_eq!(table_isa_column(&table, 6), isa_column, "{}", r.ctx());
    assert!(
        table.contains(
            "asm/: copies of the 2 most launched kernels, not of the other 4 (the ISA column \
             names their files; --asm-copies all copies every one)"
        ),
        "{}",
        r.ctx()
    );

    // `show` of the least launched reads its dump.
    let last = &kernels[5];
    let s = run_xpu_asm(&["show", out, "only_in_b"], &c.out);
    s.assert_status(0);
    let shown = s.stdout();
    assert!(
        shown.contains(&format!(
            "  ISA:          {}\n",
            last["asm"].as_str().unwrap()
        )),
        "{}",
        s.ctx()
    );
    let instructions = isa_instructions(&c.out.join(last["asm"].as_str().unwrap()));
    assert!(!instructions.is_empty());
    for i in &instructions {
        assert!(shown.contains(i.as_str()), "{i}\n{}", s.ctx());
    }

    // The page holds every kernel's ISA, the bytes of its file.
    let html = std::fs::read_to_string(c.out.join("report.html")).unwrap();
    let (data, isa) =
        xpu_asm_collector::report::export::html::read_page(&html).expect("the page reads");
    assert_eq!(data["report"], report);
    let isa: BTreeMap<String, Vec<u8>> = isa.into_iter().collect();
    for (k, r) in kernels.iter().zip(data["isa"].as_array().unwrap()) {
        let file = k["asm_copy"].as_str().or(k["asm"].as_str()).unwrap();
        let id = r["id"].as_str().expect("ISA on the page");
        assert_eq!(isa[id], std::fs::read(c.out.join(file)).unwrap(), "{file}");
    }

    // None at all, then every one again.
    let r = run_xpu_asm(&["collect", out, "--asm-copies", "0"], &c.out);
    r.assert_status(0);
    assert!(
        r.stdout().contains(
            "asm/: no copies (--asm-copies 0); the ISA column names each kernel's file\n"
        ),
        "{}",
        r.ctx()
    );
    let isa_column: Vec<String> = kernels
        .iter()
        .map(|k| k["asm"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(table_isa_column(&r.stdout(), 6), isa_column, "{}", r.ctx());
    let report = report_of_run(&c.out, &r);
    assert_eq!(
        report["asm_copies"],
        serde_json::json!({"limit": 0, "left_out": 6})
    );
    assert!(asm_folder(&c.out).is_empty());
    for args in [&["--asm-copies", "all"][..], &[]] {
        let r = run_xpu_asm(&[&["collect", out, "--quiet"][..], args].concat(), &c.out);
        r.assert_status(0);
        let report = report_of_run(&c.out, &r);
        assert!(report.get("asm_copies").is_none(), "{args:?}");
        assert_eq!(report, c.report, "{args:?}: the first collection's report");
        assert_eq!(asm_folder(&c.out).len(), 6, "{args:?}");
    }

    // A count that is not one names what is.
    let r = run_xpu_asm(&["collect", out, "--asm-copies", "many"], &c.out);
    r.assert_status(2);
    assert!(
        r.stderr()
            .contains("invalid value 'many' for '--asm-copies <N>': expected a number of kernels or `all` (default 10000)"),
        "{}",
        r.ctx()
    );
}
