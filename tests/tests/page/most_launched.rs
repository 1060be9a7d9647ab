//! A page of the most launched kernels (`--page-kernels N`).

use super::*;

/// `collect --page-kernels N` of the capture `dir`: the run.
fn collect_page_kernels(dir: &Path, limit: &str) -> Run {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["collect", "--page-kernels", limit])
        .arg(dir)
        .env_remove("COLUMNS");
    hermetic(&mut cmd);
    run(cmd, dir)
}

/// `--page-kernels N`: the page holds the N most launched kernels, each as
/// the whole page has it (its entry of report.json, its name as the
/// terminal's table names it, its ISA text), says above its table how many
/// it left out and where they are, and sends a kernel past them to `show`;
/// report.json keeps every kernel and says what the page left out, as the
/// table's closing line does. A bad value is refused and changes nothing;
/// `all` puts every kernel back.
#[test]
fn a_page_of_the_most_launched_kernels() {
    require_stack();
    let tmp = temp_dir("page-kernels");
    let g = capture_page(tmp.path(), "g", "-g", "-g");
    let full = assert_capture_page_file(&g.out);
    assert!(full.get("page_kernels").is_none(), "{full:#}");
    let names = table_names(&g.stdout());
    let left = STEPS.len() - 3;

    let r = collect_page_kernels(&g.out, "3");
    r.assert_status(0);
    let report = r.report();
    assert_eq!(
        report["page_kernels"],
        serde_json::json!({"limit": 3, "left_out": left}),
        "{}",
        r.ctx()
    );
    assert_eq!(
        report["kernels"], full["kernels"],
        "report.json keeps every kernel"
    );
    assert_eq!(report["totals"], full["totals"]);
    assert_eq!(
        table_names(&r.stdout()),
        names,
        "the table lists every kernel"
    );
    let line = format!(
        "report.html: the 3 most launched kernels, not the other {left} (report.json has every \
         one; --page-kernels all puts them all on the page)"
    );
    assert!(r.stdout().lines().any(|l| l == line), "{}", r.ctx());
    let (data, isa) = read_page(&g.out.join("report.html"));
    let mut want = report.clone();
    want["kernels"] = Value::Array(report["kernels"].as_array().unwrap()[..3].to_vec());
    assert_eq!(
        data["report"], want,
        "the page's report: report.json's first three kernels"
    );
    assert_page_names(&data, &names[..3], &names[..3]);
    let classes = data["classes"].as_array().expect("classes").clone();
    assert_isa_embedded(&g.out, &want, &data["isa"], &classes, &isa);
    assert_eq!(isa.len(), 3, "the ISA texts of the three kernels, no other");

    // A bad value: its error names what it takes; the folder is untouched.
    let files = ["report.json", "report.html"].map(|f| std::fs::read(g.out.join(f)).unwrap());
    let bad = collect_page_kernels(&g.out, "most");
    bad.assert_status(2);
    assert!(
        bad.stderr()
            .contains("expected a number of kernels or `all` (default 5000)"),
        "{}",
        bad.ctx()
    );
    for (f, before) in ["report.json", "report.html"].iter().zip(&files) {
        assert_eq!(
            &std::fs::read(g.out.join(f)).unwrap(),
            before,
            "{f} changed"
        );
    }

    if stack() == Stack::Debian12 {
        let v = browse(
            &g.out.join("report.html"),
            &tmp.path().join("shots"),
            &["--kernels", "0,2,3,8"],
        );
        let kernels = want["kernels"].as_array().unwrap();
        let demangled: Vec<&str> = kernels
            .iter()
            .map(|k| k["demangled"].as_str().unwrap())
            .collect();
        assert_table(&v, 2, &names[..3], &demangled, &[]);
        let launches = |ks: &[Value]| ks.iter().map(|k| u(&k["launches"])).sum::<u64>();
        let share = 100.0 * launches(kernels) as f64 / u(&report["totals"]["launches"]) as f64;
        let dir = g.out.display();
        assert_eq!(
            v["page_note"],
            format!(
                "This page holds the 3 most launched kernels ({share:.1}% of the launches), not \
                 the other {left}: report.json lists every one, xpu-asm-run show {dir} N prints \
                 kernel #N, and xpu-asm-run collect {dir} --page-kernels all puts them all on \
                 this page."
            ),
            "{v:#}"
        );
        let opened = v["opened"].as_array().unwrap();
        assert_eq!(opened.len(), 4, "{v:#}");
        for o in opened {
            let i = u(&o["index"]) as usize;
            if i < 3 {
                let k = &kernels[i];
                assert_eq!(o["title"], format!("#{} {}", k["rank"], demangled[i]));
                assert_pane(&g.out, k, &o["panes"][0]);
            } else {
                assert_eq!(o["title"], Value::Null, "{o:#}");
                let n = i + 1;
                assert_eq!(
                    o["panes"][0]["warnings"],
                    serde_json::json!([format!(
                        "kernel #{n} is not on this page, which holds the 3 most launched: \
                         xpu-asm-run show {dir} {n} prints it"
                    )]),
                    "{o:#}"
                );
            }
        }
    }

    let r = collect_page_kernels(&g.out, "all");
    r.assert_status(0);
    let back = assert_capture_page_file(&g.out);
    assert!(back.get("page_kernels").is_none(), "{back:#}");
    assert_eq!(back["kernels"], full["kernels"]);
    assert!(!r.stdout().contains("report.html: the"), "{}", r.ctx());
}
