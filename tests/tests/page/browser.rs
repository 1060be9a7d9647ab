//! The page in the browser: what tests/browser/check.mjs sees of it.

use super::*;

/// `// B003: Preds:{B002},  Succs:{B004}` comments of an ISA file.
pub(crate) fn block_comments(path: &Path) -> usize {
    let text = String::from_utf8_lossy(&std::fs::read(path).expect("an ISA file")).into_owned();
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("// B") && t.contains(": Preds:{") && t.contains("Succs:{")
        })
        .count()
}

/// One opened kernel's pane against its report entry: every instruction
/// listed, the mix's bars, spill and fill sites as its mix counts them, a
/// CFG exactly when its flow or its ISA text has blocks, a pressure plot
/// exactly when its flow has live GRF.
pub(crate) fn assert_pane(dir: &Path, k: &Value, pane: &Value) {
    let name = k["name"].as_str().unwrap_or("");
    let ctx = format!("{name}: {pane:#}");
    let mix = &k["mix"];
    assert_eq!(pane["instructions"], mix["instructions"], "{ctx}");
    let bars = mix
        .as_object()
        .unwrap()
        .iter()
        .filter(|(f, n)| *f != "instructions" && u(n) > 0)
        .count();
    assert_eq!(u(&pane["mix_bars"]), bars as u64, "{ctx}");
    assert_eq!(pane["spill_sites"], mix["spill"], "{ctx}");
    assert_eq!(pane["fill_sites"], mix["fill"], "{ctx}");
    let lines = k["source"]["lines"].as_array().map_or(0, |l| l.len());
    assert_eq!(u(&pane["source_lines"]), lines as u64, "{ctx}");
    // The kernel's flow (report schema 3), when it has one.
    let flow = &k["flow"];
    let blocks = match flow["blocks"].as_array() {
        Some(b) if !b.is_empty() => b.len(),
        _ => block_comments(&dir.join(k["asm_copy"].as_str().unwrap())),
    };
    assert_eq!(u(&pane["cfg_blocks"]), blocks as u64, "{ctx}");
    assert_eq!(pane["no_cfg"], blocks == 0, "{ctx}");
    let pressure = flow["live_grf"].as_array().is_some_and(|l| !l.is_empty());
    assert_eq!(pane["no_pressure"], !pressure, "{ctx}");
    if pressure {
        assert_eq!(pane["pressure_points"], mix["instructions"], "{ctx}");
        assert_eq!(pane["pressure_peak"], true, "{ctx}");
        assert_eq!(pane["pressure_budget"], !flow["budget"].is_null(), "{ctx}");
    }
    assert_eq!(pane["warnings"], serde_json::json!([]), "{ctx}");
}

/// The rows of a page's kernels table, by column `name` (the kernel's):
/// each row in order, its name `want` whole, its tooltip the full name of
/// `full`; and each filter of `filters` showing exactly its rows.
pub(crate) fn assert_table(
    v: &Value,
    name: usize,
    want: &[String],
    full: &[&str],
    filters: &[(&str, &[u64])],
) {
    let rows = v["kernels"].as_array().unwrap();
    let got: Vec<(u64, &str, &str)> = rows
        .iter()
        .map(|r| {
            let t = r["title"].as_str().unwrap_or("");
            (u(&r["index"]), r["cells"][name].as_str().unwrap(), t)
        })
        .collect();
    let expected: Vec<(u64, &str, &str)> = (0..want.len())
        .map(|i| (i as u64, want[i].as_str(), full[i]))
        .collect();
    assert_eq!(got, expected, "the kernels table: index, name, tooltip");
    for r in rows {
        assert_eq!(r["clipped"], false, "a name cut: {r:#}");
    }
    let filtered = v["filtered"].as_array().unwrap();
    assert_eq!(filtered.len(), filters.len());
    for ((text, want), f) in filters.iter().zip(filtered) {
        assert_eq!(f["text"], *text);
        assert_eq!(f["rows"], serde_json::json!(want), "filter {text:?}: {f:#}");
        let of = format!("{} of {} kernels", want.len(), rows.len());
        assert_eq!(f["shown"], of.as_str(), "{f:#}");
    }
}

/// The table's `top shape` and `occupancy` columns, after `spill`, show
/// what the page's data says (the terminal table's columns).
pub(crate) fn assert_tops_shown(v: &Value, dir: &Path) {
    let columns = strings(&v["columns"]);
    let at = columns.iter().position(|c| c == "top shape");
    assert_eq!(
        (at, columns.get(at.unwrap_or(0) + 1).map(String::as_str)),
        (
            columns.iter().position(|c| c == "spill").map(|s| s + 1),
            Some("occupancy")
        ),
        "the columns: {columns:?}"
    );
    let (data, _) = read_page(&dir.join("report.html"));
    let at = at.unwrap();
    let shown: Vec<Value> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| serde_json::json!([r["cells"][at], r["cells"][at + 1]]))
        .collect();
    assert_eq!(Value::Array(shown), data["tops"], "the rows' top shapes");
}

/// `report.html#kernel-N`, loaded afresh, opens kernel #N (the rank the
/// terminal's table and `show DIR N` give it), and a click on its row goes
/// to that address: for the first kernel, one inside, and the last.
pub(crate) fn assert_kernel_addresses(page: &Path, shots: &Path, report: &Value) {
    let kernels = report["kernels"].as_array().unwrap();
    let ranks: Vec<String> = [1, kernels.len() / 2 + 1, kernels.len()]
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut args = Vec::new();
    for r in &ranks {
        args.extend(["--anchor", r.as_str()]);
    }
    let v = browse(page, shots, &args);
    let got: Vec<&Value> = v["anchors"].as_array().unwrap().iter().collect();
    assert_eq!(got.len(), ranks.len(), "{v:#}");
    for (a, r) in got.into_iter().zip(&ranks) {
        let k = kernels
            .iter()
            .find(|k| Some(u(&k["rank"])) == r.parse().ok())
            .unwrap_or_else(|| panic!("no kernel of rank {r}"));
        let want = serde_json::json!({
            "anchor": u(&k["rank"]),
            "heading": format!("#{r} {}", k["demangled"].as_str().unwrap()),
            "clicked": format!("#kernel-{r}"),
        });
        assert_eq!(a, &want, "#kernel-{r} on {}", page.display());
    }
}

/// The capture's page in the browser: the table (each kernel named as
/// `names`, filtered by each of `filters`), every kernel opened under its
/// full name, the source lines of kernel `click` clicked one by one,
/// screenshots.
pub(crate) fn assert_capture_page_browsed(
    dir: &Path,
    report: &Value,
    names: &[String],
    filters: &[(&str, &[u64])],
    click: usize,
    shots: &Path,
) -> Value {
    let click = click.to_string();
    let mut args = vec!["--kernels", "all", "--click", &click, "--shot", &click];
    for (f, _) in filters {
        args.extend(["--filter", f]);
    }
    let v = browse(&dir.join("report.html"), shots, &args);
    let kernels = report["kernels"].as_array().unwrap();
    let full: Vec<&str> = kernels
        .iter()
        .map(|k| k["demangled"].as_str().unwrap())
        .collect();
    assert_table(&v, 2, names, &full, filters);
    for o in v["opened"].as_array().unwrap() {
        let k = &kernels[u(&o["index"]) as usize];
        let name = k["demangled"].as_str().unwrap();
        assert_eq!(o["title"], format!("#{} {name}", k["rank"]));
        assert_eq!(o["names"][0], name);
        assert_pane(dir, k, &o["panes"][0]);
    }
    assert_eq!(v["opened"].as_array().unwrap().len(), kernels.len());
    v
}

/// A click on each source line of kernel `k` selects exactly the
/// instructions the report counts for it; a click on an instruction selects
/// its line.
pub(crate) fn assert_clicks(k: &Value, clicks: &Value) {
    let lines = k["source"]["lines"].as_array().expect("source lines (-g)");
    let got = clicks["lines"].as_array().unwrap();
    assert_eq!(got.len(), lines.len(), "{clicks:#}");
    for (l, c) in lines.iter().zip(got) {
        let key = format!("{}\n{}", l["file"].as_str().unwrap(), l["line"]);
        assert_eq!(c["key"], key.as_str(), "{clicks:#}");
        assert_eq!(c["selected"], l["instructions"], "{key}: {c:#}");
        assert_eq!(c["of_line"], l["instructions"], "{key}: {c:#}");
        assert_eq!(
            (&c["all_of_line"], &c["row_selected"]),
            (&Value::Bool(true), &Value::Bool(true)),
            "{c:#}"
        );
    }
    let i = &clicks["instruction"];
    assert_eq!(i["current"], true, "{i:#}");
    assert_eq!(i["lines_selected"], serde_json::json!([i["key"]]), "{i:#}");
}

pub(crate) fn assert_not_blank(shot: &Value, what: &str) {
    assert_eq!(
        (u(&shot["width"]), u(&shot["height"])),
        (1400, 900),
        "{what}: {shot:#}"
    );
    assert!(
        u(&shot["colours"]) >= 50,
        "{what}: a blank screenshot? {shot:#}"
    );
}

/// The demo capture's kernels as its table names them: whole (they fit),
/// same-named ones of two modules told apart by module.
pub(crate) fn demo_names(report: &Value) -> Vec<String> {
    let module = |i: usize| {
        let sha = report["kernels"][i]["module_sha256"].as_str().unwrap();
        sha[..8].to_string()
    };
    vec![
        format!("scale [module {}]", module(0)),
        "main::vector_add".into(),
        format!("scale [module {}]", module(2)),
        format!("common_kernel [module {}]", module(3)),
        "scale_v2".into(),
        format!("common_kernel [module {}]", module(5)),
        "mix_spill".into(),
        "only_in_b".into(),
        "mix_mad_loop".into(),
    ]
}

/// `diff A B --html page`: its page written; returns the table `diff A B
/// --all` prints.
pub(crate) fn diff(a: &Path, b: &Path, page: &Path) -> String {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("diff")
        .arg(a)
        .arg(b)
        .arg("--html")
        .arg(page)
        .arg("--json");
    run(cmd, a).assert_status(0);
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("diff").arg(a).arg(b).arg("--all");
    let r = run(cmd, a);
    r.assert_status(0);
    r.stdout()
}

/// `diff A B --html PAGE --page-kernels LIMIT`.
pub(crate) fn diff_page_of(a: &Path, b: &Path, page: &Path, limit: &str) {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("diff").arg(a).arg(b).arg("--html").arg(page);
    cmd.args(["--page-kernels", limit]);
    run(cmd, a).assert_status(0);
}

/// The page of three kernels of the comparison of `a` and `b`, whose page
/// of every kernel has the data `full` (names `names`): its rows are those
/// that changed or are in one capture only first, in the comparison's
/// order; each report holds the kernels they show, with their ISA; the
/// counts are the whole comparison's. Returns its data and rows.
pub(crate) fn assert_diff_page_of_three(
    a: &Path,
    b: &Path,
    page: &Path,
    full: &Value,
    names: &[String],
) -> (Value, Vec<usize>) {
    diff_page_of(a, b, page, "3");
    let (data, isa) = read_page(page);
    let pairs = full["diff"]["kernels"].as_array().unwrap();
    let notable = |p: &Value| {
        !p["changed"].as_array().unwrap().is_empty() || p["a"].is_null() || p["b"].is_null()
    };
    let (first, then): (Vec<usize>, Vec<usize>) =
        (0..pairs.len()).partition(|&i| notable(&pairs[i]));
    let mut rows: Vec<usize> = first.into_iter().chain(then).take(3).collect();
    rows.sort_unstable();
    let pick = |v: &[Value]| Value::Array(rows.iter().map(|&i| v[i].clone()).collect());
    assert_eq!(data["diff"]["kernels"], pick(pairs), "the page's rows");
    let names: Vec<Value> = names.iter().map(|n| Value::from(n.as_str())).collect();
    assert_eq!(data["names"], pick(&names), "the rows' names");
    assert_eq!(data["diff"]["summary"], full["diff"]["summary"]);
    assert_eq!(
        data["page_kernels"],
        serde_json::json!({"limit": 3, "left_out": pairs.len() - 3})
    );
    let classes = data["classes"].as_array().unwrap().clone();
    for (side, dir) in [("a", a), ("b", b)] {
        let ranks: Vec<&Value> = rows.iter().map(|&i| &pairs[i][side]["rank"]).collect();
        let want: Vec<Value> = full[side]["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| ranks.contains(&&k["rank"]))
            .cloned()
            .collect();
        assert_eq!(
            data[side]["kernels"],
            Value::Array(want),
            "{side}'s kernels"
        );
        assert_isa_embedded(
            dir,
            &data[side],
            &data[format!("isa_{side}")],
            &classes,
            &isa,
        );
    }
    (data, rows)
}

/// A kernel by name (the first in the report).
pub(crate) fn index_of(report: &Value, name: &str) -> usize {
    report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}
