//! The page of a capture and of a `diff`, in the browser and as a file.

use super::*;

#[test]
fn the_page_of_a_capture_and_of_a_diff() {
    require_stack();
    let tmp = temp_dir("page");
    let g = capture_page(tmp.path(), "g", "-g", "-g");
    let o0 = capture_page(tmp.path(), "o0", "", "-cl-opt-disable");
    let report = assert_capture_page_file(&g.out);
    assert_capture_page_file(&o0.out);
    let names = demo_names(&report);
    for c in [&g, &o0] {
        let (data, _) = read_page(&c.out.join("report.html"));
        let want = demo_names(&data["report"]);
        assert_page_names(&data, &want, &table_names(&c.stdout()));
        assert_page_tops(&data, &c.stdout());
    }
    let diff_page = tmp.path().join("diff.html");
    let d = diff(&g.out, &o0.out, &diff_page);
    let (data, isa) = read_page(&diff_page);
    // Paired by name; every name fits diff's column (its longest name's
    // width): whole. The names two modules define are told apart by
    // module as the capture's table does: the native module's scale, the
    // same binary in both, by its one module; the SPIR-V modules' kernels,
    // built with other flags, by A's module, then B's.
    let pairs = data["diff"]["kernels"].as_array().unwrap();
    let module =
        |i: usize, side: &str| pairs[i][side]["module_sha256"].as_str().unwrap()[..8].to_string();
    let both = |i: usize, name: &str| {
        assert_ne!(module(i, "a"), module(i, "b"), "{:#}", pairs[i]);
        format!("{name} [module {} -> {}]", module(i, "a"), module(i, "b"))
    };
    assert_eq!(module(0, "a"), module(0, "b"), "{:#}", pairs[0]);
    let diff_names: Vec<String> = vec![
        format!("scale [module {}]", module(0, "a")),
        both(1, "scale"),
        "main::vector_add".into(),
        both(3, "common_kernel"),
        both(4, "common_kernel"),
        "scale_v2".into(),
        "mix_spill".into(),
        "only_in_b".into(),
        "mix_mad_loop".into(),
    ];
    assert_page_names(&data, &diff_names, &diff_table_names(&d));
    assert_eq!(data["kind"], "diff");
    let classes = data["classes"].as_array().unwrap().clone();
    assert_eq!(data["a"], report);
    assert_isa_embedded(&g.out, &data["a"], &data["isa_a"], &classes, &isa);
    assert_isa_embedded(&o0.out, &data["b"], &data["isa_b"], &classes, &isa);
    assert_eq!(
        pairs.len(),
        STEPS.len(),
        "every kernel, in both: {:#}",
        data["diff"]
    );
    let three = tmp.path().join("diff-3.html");
    let (three_data, rows) = assert_diff_page_of_three(&g.out, &o0.out, &three, &data, &diff_names);
    // The native module's scale, the same binary in both builds, is the
    // first row and the one unchanged kernel: the page passes it by.
    assert_eq!(rows, [1, 2, 3], "{:#}", pairs[0]);
    let hostile = tmp.path().join("h<!--<b x='1'>&\"");
    let hr = hostile_page(&g.out, &hostile);
    assert_hostile_page_file(&hostile, &hr);
    if stack() == Stack::Sid {
        // No browser in the root: the files were checked above, exactly.
        return;
    }
    assert_hostile_page_browsed(&hostile, &hr, &tmp.path().join("hostile-shots"));

    let shots = tmp.path().join("shots");
    let click = index_of(&report, SCALE_V2);
    // A part of the mangled name only (main::vector_add's) finds its row.
    let vector_add = [index_of(&report, VECTOR_ADD) as u64];
    let mangled = [("4mainE10", &vector_add[..])];
    let v = assert_capture_page_browsed(&g.out, &report, &names, &mangled, click, &shots);
    assert_clicks(&report["kernels"][click], &v["clicks"]);
    assert_tops_shown(&v, &g.out);
    assert_kernel_addresses(
        &g.out.join("report.html"),
        &tmp.path().join("anchor-shots"),
        &report,
    );
    assert_not_blank(&v["list_shot"], "the kernels table");
    assert_not_blank(&v["kernel_shot"], "a kernel");
    // Known answers: the spilling kernel's sites, the loop's back edge, the
    // native module's kernel without IGC's block comments.
    let opened = |name: &str| v["opened"][index_of(&report, name)]["panes"][0].clone();
    assert!(
        u(&opened("mix_spill")["spill_sites"]) > 0,
        "{:#}",
        opened("mix_spill")
    );
    assert!(
        u(&opened("mix_mad_loop")["loops"]) >= 1,
        "{:#}",
        opened("mix_mad_loop")
    );
    let native = &report["kernels"][0];
    assert_eq!(native["isa_source"], "module-binary", "{native:#}");

    let dv = browse(
        &diff_page,
        &tmp.path().join("diff-shots"),
        &["--kernels", "all", "--shot", "0", "--filter", mangled[0].0],
    );
    let vector_add = [pairs.iter().position(|p| p["name"] == VECTOR_ADD).unwrap() as u64];
    let mangled = [(mangled[0].0, &vector_add[..])];
    assert_eq!(dv["kind"], "diff");
    let full: Vec<&str> = pairs
        .iter()
        .map(|p| p["demangled"].as_str().unwrap())
        .collect();
    assert_table(&dv, 0, &diff_names, &full, &mangled);
    for o in dv["opened"].as_array().unwrap() {
        let p = &pairs[u(&o["index"]) as usize];
        assert_eq!(o["title"], p["demangled"]);
        for (side, rep) in [("a", &data["a"]), ("b", &data["b"])] {
            let rank = &p[side]["rank"];
            let k = rep["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| &k["rank"] == rank)
                .unwrap();
            let pane = o["panes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["side"] == side.to_uppercase())
                .unwrap();
            let dir = if side == "a" { &g.out } else { &o0.out };
            assert_pane(dir, k, pane);
        }
    }
    assert_not_blank(&dv["kernel_shot"], "a kernel of the diff");

    let tv = browse(
        &three,
        &tmp.path().join("diff-3-shots"),
        &["--kernels", "all"],
    );
    let full3: Vec<&str> = rows
        .iter()
        .map(|&i| pairs[i]["demangled"].as_str().unwrap())
        .collect();
    let names3: Vec<String> = rows.iter().map(|&i| diff_names[i].clone()).collect();
    assert_table(&tv, 0, &names3, &full3, &[]);
    let ab = format!("{} {}", g.out.display(), o0.out.display());
    assert_eq!(
        tv["page_note"],
        format!(
            "This page holds 3 of the comparison's {} kernels (those that changed or are in one \
             capture only first, then the others in A's order), not the other {}: xpu-asm-run \
             diff {ab} --all lists every one, xpu-asm-run diff {ab} KERNEL compares one's ISA, \
             and --page-kernels all puts them all on the page.",
            pairs.len(),
            pairs.len() - 3
        ),
        "{tv:#}"
    );
    assert_eq!(tv["opened"].as_array().unwrap().len(), 3, "{tv:#}");
    for o in tv["opened"].as_array().unwrap() {
        let p = &three_data["diff"]["kernels"][u(&o["index"]) as usize];
        assert_eq!(o["title"], p["demangled"]);
        assert_eq!(o["panes"].as_array().unwrap().len(), 2, "{o:#}");
    }
}
