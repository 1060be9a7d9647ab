//! The page to browse: `report.html`, which every collection writes, and
//! the page of `diff A B --html FILE`, on real captures of the C workload
//! (its modules built with `-g`, a kernel that spills, a loop, a module
//! given as a native binary), and a page of hostile names.
//!
//! On the Debian 12 pass each page is opened in Debian's headless Chromium
//! (`tests/browser/check.mjs`, driven by playwright-core from
//! `tests/browser/node_modules`, both installed by scripts/install-deps.sh):
//! no console error and no request off the file, every kernel in the table
//! named as the terminal's table names it (the full name in its tooltip, its
//! heading and the filter), each kernel's ISA, CFG, pressure plot and spill
//! and fill sites as its data has them, a click on each source line selecting exactly that line's
//! instructions, and screenshots that are not blank. The Debian sid root
//! has no browser: there (and on Debian 12 as well) the page file itself is
//! checked exactly, without one: the report it embeds is report.json, the
//! names it shows are the terminal table's, and each ISA text it holds is
//! the bytes of the kernel's asm copy.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use xpu_asm_collector::report::export::html;
use xpu_asm_tests::*;

/// Launches: every count distinct, so the report's order is known.
const STEPS: [&str; 9] = [
    "imm:n:scale:13",
    "imm:a:_ZTSZ4mainE10vector_add:11",
    "imm:a:scale:7",
    "reg:a:common_kernel:2:3",
    "imm:a:scale_v2:5",
    "imm:b:common_kernel:4",
    "imm:m:mix_spill:3",
    "imm:b:only_in_b:2",
    "imm:m:mix_mad_loop:1",
];

/// A capture of the workload under `xpu-asm-run --emulate pvc`: modules a,
/// b and mix as SPIR-V built with `options`, and kernels_a as a native
/// binary (module n).
fn capture_page(dir: &Path, tag: &str, options: &str, flags: &str) -> Run {
    let out = dir.join(tag);
    let work = dir.join(format!("{tag}-work"));
    std::fs::create_dir_all(&work).expect("a work folder");
    // The table printed (not on a terminal: at its default width).
    let mut c = Capture::emulating("pvc", &out)
        .program(workload())
        .args(["--via", "ddi"]);
    for m in ["a", "b", "mix"] {
        let short = if m == "mix" { "m" } else { m };
        c = c.module(short, &spirv_with(m, options));
    }
    c = c.arg("--native").arg(format!("n={}", native_a().display()));
    if !flags.is_empty() {
        c = c.args(["--build-flags", flags]);
    }
    let r = c
        .args(STEPS)
        .dir(&work)
        .env_remove("COLUMNS")
        .hermetic()
        .run_ok();
    let names: Vec<(String, u64)> = r.report()["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| (k["name"].as_str().unwrap_or("").into(), u(&k["launches"])))
        .collect();
    let want: Vec<(String, u64)> = STEPS
        .iter()
        .map(|s| {
            let p: Vec<&str> = s.split(':').collect();
            let n: u64 = p[3..].iter().map(|x| x.parse::<u64>().unwrap()).product();
            (p[2].to_string(), n)
        })
        .collect();
    assert_eq!(names, want, "{}", r.ctx());
    r
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// The kernel column of the terminal table in `stdout`: the text under
/// `kernel` in each row, up to the `SIMD` column.
fn table_names(stdout: &str) -> Vec<String> {
    let mut lines = stdout.lines().skip_while(|l| !l.contains("  launches  "));
    let head: Vec<char> = lines.next().expect("the table's header").chars().collect();
    let at = |w: &str| {
        let w: Vec<char> = w.chars().collect();
        head.windows(w.len())
            .position(|x| x == w.as_slice())
            .unwrap_or_else(|| panic!("no {w:?} in the header"))
    };
    // `kernel` padded to the column, two spaces, `SIMD` right-aligned in 4.
    let (from, to) = (at("kernel"), at("SIMD") - 2);
    lines
        .take_while(|l| !l.starts_with("total:"))
        .map(|l| {
            let c: Vec<char> = l.chars().collect();
            c[from..to]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The kernel column of `diff --all`'s table of changes in `stdout`: each
/// kernel's first row.
fn diff_table_names(stdout: &str) -> Vec<String> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("kernel "));
    let head = lines.next().expect("the table's header");
    let width = head.find("  field").expect("a field column");
    // Padded to the column by characters (names hold `…`).
    lines
        .take_while(|l| !l.is_empty())
        .map(|l| l.chars().take(width).collect::<String>())
        .filter(|label| !label.trim().is_empty())
        .map(|label| label.trim_end().to_string())
        .collect()
}

/// The page's names (`data.names`): exactly `want`, and the terminal's.
fn assert_page_names(data: &Value, want: &[String], terminal: &[String]) {
    let names = strings(&data["names"]);
    assert_eq!(names, want, "the page's names");
    assert_eq!(names, terminal, "the page names kernels as the terminal");
}

// ---------------------------------------------------------------------------
// The page file, read without a browser

/// The page's data and ISA texts (by element id).
fn read_page(path: &Path) -> (Value, BTreeMap<String, Vec<u8>>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let (data, isa) = html::read_page(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (data, isa.into_iter().collect())
}

/// The letters of each instruction class, counted, as a mix.
fn class_counts(classes: &[Value], letters: &str) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = classes
        .iter()
        .map(|c| (c.as_str().unwrap().to_string(), 0))
        .collect();
    for ch in letters.bytes() {
        let name = classes[(ch - b'a') as usize].as_str().unwrap();
        *m.get_mut(name).unwrap() += 1;
    }
    m
}

/// Each kernel of `report` (of the capture `dir`) in the page's data: its
/// ISA text the bytes of its ISA file, its instruction classes its mix.
fn assert_isa_embedded(
    dir: &Path,
    report: &Value,
    refs: &Value,
    classes: &[Value],
    isa: &BTreeMap<String, Vec<u8>>,
) {
    let kernels = report["kernels"].as_array().expect("kernels");
    let refs = refs.as_array().expect("an ISA entry per kernel");
    assert_eq!(refs.len(), kernels.len());
    for (k, r) in kernels.iter().zip(refs) {
        let Some(file) = k["asm_copy"].as_str().or(k["asm"].as_str()) else {
            assert!(r["id"].is_null(), "{k:#}\n{r:#}");
            continue;
        };
        let id = r["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no ISA text: {r:#}"));
        let want = std::fs::read(dir.join(file)).expect("the kernel's ISA file");
        assert_eq!(isa.get(id), Some(&want), "{id}: not the bytes of {file}");
        assert_eq!(u(&r["bytes"]), want.len() as u64);
        let mut mix: BTreeMap<String, u64> = k["mix"]
            .as_object()
            .expect("a mix")
            .iter()
            .map(|(f, n)| (f.clone(), u(n)))
            .collect();
        let total = mix.remove("instructions").unwrap();
        let letters = r["classes"].as_str().expect("classes");
        assert_eq!(letters.len() as u64, total, "{}", k["name"]);
        assert_eq!(class_counts(classes, letters), mix, "{}", k["name"]);
    }
}

/// The page of a capture, read as a file: the report it embeds is
/// report.json, and every ISA text is there, exactly.
fn assert_capture_page_file(dir: &Path) -> Value {
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report.json"))
            .expect("JSON");
    let (data, isa) = read_page(&dir.join("report.html"));
    assert_eq!(data["kind"], "capture");
    assert_eq!(
        data["report"], report,
        "the page's report is not report.json"
    );
    let classes = data["classes"].as_array().expect("classes").clone();
    assert_isa_embedded(dir, &report, &data["isa"], &classes, &isa);
    let with_isa = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["asm_copy"].is_string())
        .count();
    assert_eq!(isa.len(), with_isa, "one ISA text per kernel with ISA");
    report
}

// ---------------------------------------------------------------------------
// The page in the browser

/// What tests/browser/check.mjs saw of the page at `page`.
fn browse(page: &Path, out: &Path, args: &[&str]) -> Value {
    let dir = workspace_dir().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").is_file(),
        "no playwright-core in {} or no /usr/bin/chromium: run scripts/install-deps.sh \
         (Debian's chromium, and `npm ci` in tests/browser)",
        dir.display()
    );
    std::fs::create_dir_all(out).expect("a screenshot folder");
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("check.mjs")).arg(page).arg(out).args(args);
    let r = run(cmd, out);
    r.assert_status(0);
    let v: Value = serde_json::from_str(r.stdout().trim())
        .unwrap_or_else(|e| panic!("check.mjs printed no JSON: {e}\n{}", r.ctx()));
    assert_eq!(
        v["errors"],
        serde_json::json!([]),
        "errors in the page\n{v:#}"
    );
    assert_eq!(
        v["requests"],
        serde_json::json!([]),
        "requests off the file\n{v:#}"
    );
    v
}

/// `// B003: Preds:{B002},  Succs:{B004}` comments of an ISA file.
fn block_comments(path: &Path) -> usize {
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
fn assert_pane(dir: &Path, k: &Value, pane: &Value) {
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
fn assert_table(
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

/// The capture's page in the browser: the table (each kernel named as
/// `names`, filtered by each of `filters`), every kernel opened under its
/// full name, the source lines of kernel `click` clicked one by one,
/// screenshots.
fn assert_capture_page_browsed(
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
fn assert_clicks(k: &Value, clicks: &Value) {
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

fn assert_not_blank(shot: &Value, what: &str) {
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
fn demo_names(report: &Value) -> Vec<String> {
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
fn diff(a: &Path, b: &Path, page: &Path) -> String {
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
fn diff_page_of(a: &Path, b: &Path, page: &Path, limit: &str) {
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
fn assert_diff_page_of_three(
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
fn index_of(report: &Value, name: &str) -> usize {
    report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

// ---------------------------------------------------------------------------
// The tests

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
    }
    let diff_page = tmp.path().join("diff.html");
    let d = diff(&g.out, &o0.out, &diff_page);
    let (data, isa) = read_page(&diff_page);
    // Paired by name; every name fits diff's column (its longest name's
    // width): whole.
    let diff_names: Vec<String> = [
        "scale",
        "scale",
        "main::vector_add",
        "common_kernel",
        "common_kernel",
        "scale_v2",
        "mix_spill",
        "only_in_b",
        "mix_mad_loop",
    ]
    .map(String::from)
    .to_vec();
    assert_page_names(&data, &diff_names, &diff_table_names(&d));
    assert_eq!(data["kind"], "diff");
    let classes = data["classes"].as_array().unwrap().clone();
    assert_eq!(data["a"], report);
    assert_isa_embedded(&g.out, &data["a"], &data["isa_a"], &classes, &isa);
    assert_isa_embedded(&o0.out, &data["b"], &data["isa_b"], &classes, &isa);
    let pairs = data["diff"]["kernels"].as_array().unwrap();
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

/// Kernel names no page may be injected by (names are the program's, so
/// anything), the last one given as bytes that are not UTF-8.
const HOSTILE: [&str; 8] = [
    "</script><script>window.pwned=1</script>",
    "<!--<script>window.pwned=2//",
    "<img src=x onerror=\"window.pwned=3\">",
    "\"'&amp;\u{2028}\u{2029}\u{0}",
    "two\nlines",
    "{{SCRIPT}}{{DATA}}]]>",
    "<svg onload=window.pwned=6>",
    "bad\u{fffd}\u{fffd}utf8",
];

/// A hostile name too long for the table's column (the ninth kernel's),
/// and the name the table shows for it: shortened, not escaped, markup kept
/// as text.
const HOSTILE_LONG: &str = "evil::<img src=x onerror=window.pwned=7>::kernel<<b>, two\nlines, \
                            </script><script>window.pwned=8</script>, <svg onload=window.pwned=9>>";
const HOSTILE_SHORT: &str = "kernel<<b>, two\nlines, …>";

/// An ISA text with markup in its source lines, its instructions and its
/// bytes (not UTF-8).
const HOSTILE_ISA: &[u8] = b"// File: </script><!--\n\
// Line 1:  </script><img src=x onerror=window.pwned=4>\n\
(W)     mov (1|M0)   r1.0<1>:ud  0x0:ud  // </script><script>window.pwned=5</script>\n\
        nop \xff\xfe<b>\n";

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

/// The capture `from`'s report with [`HOSTILE`] names, its second kernel's
/// ISA text [`HOSTILE_ISA`], and its page written by the collector's
/// exporter into `to` (a folder named with markup too).
fn hostile_page(from: &Path, to: &Path) -> xpu_asm_collector::report::Report {
    use xpu_asm_collector::report::Report;
    let mut r: Report =
        serde_json::from_slice(&std::fs::read(from.join("report.json")).unwrap()).unwrap();
    std::fs::create_dir_all(to.join("asm")).unwrap();
    for (i, k) in r.kernels.iter_mut().enumerate() {
        if let Some(n) = HOSTILE
            .get(i)
            .or((i == HOSTILE.len()).then_some(&HOSTILE_LONG))
        {
            k.name = n.to_string();
            k.demangled = n.to_string();
        }
        if i + 1 == HOSTILE.len() {
            k.name_hex = Some("626164fffe75746638".into());
        }
        let copy = k.asm_copy.as_deref().expect("a copy");
        let bytes = match i {
            1 => HOSTILE_ISA.to_vec(),
            _ => std::fs::read(from.join(copy)).unwrap(),
        };
        std::fs::write(to.join(copy), bytes).unwrap();
    }
    html::write_capture_page(to, &r).expect("the page written");
    r
}

/// The hostile page as a file: one data element and one element per ISA
/// text, no more; the report and the ISA bytes read back exactly.
fn assert_hostile_page_file(dir: &Path, r: &xpu_asm_collector::report::Report) {
    let path = dir.join("report.html");
    let text = std::fs::read_to_string(&path).unwrap();
    let n = r.kernels.len();
    assert_eq!(text.matches("<script").count(), n + 2, "script elements");
    assert_eq!(text.matches("</script>").count(), n + 2, "script elements");
    assert!(!text.contains("<!--") && !text.contains("<img") && !text.contains("<svg"));
    let (data, isa) = read_page(&path);
    assert_eq!(data["report"], serde_json::to_value(r).unwrap());
    let mut names: Vec<&str> = HOSTILE.to_vec();
    names.push(HOSTILE_SHORT);
    assert_eq!(strings(&data["names"]), names, "the page's names");
    assert_eq!(isa["isa-1"], HOSTILE_ISA);
}

/// The hostile page in the browser: nothing ran, nothing was added, every
/// name and text shown as it is.
fn assert_hostile_page_browsed(dir: &Path, r: &xpu_asm_collector::report::Report, shots: &Path) {
    let v = browse(&dir.join("report.html"), shots, &["--kernels", "1,4,7,8"]);
    let n = r.kernels.len();
    assert_eq!(
        v["injected"],
        serde_json::json!({"pwned": null, "scripts": n + 2, "images": 0, "iframes": 0}),
        "{v:#}"
    );
    // Each name as it is, but the long one shortened: not escaped.
    let full: Vec<&str> = r.kernels.iter().map(|k| k.demangled.as_str()).collect();
    let mut want: Vec<String> = full.iter().map(|n| n.to_string()).collect();
    want[HOSTILE.len()] = HOSTILE_SHORT.to_string();
    assert_table(&v, 2, &want, &full, &[]);
    let long = &v["opened"][3];
    assert_eq!(
        long["title"],
        format!("#{} {HOSTILE_LONG}", r.kernels[HOSTILE.len()].rank),
        "{long:#}"
    );
    assert_eq!(long["names"][0], HOSTILE_LONG, "{long:#}");
    let one = &v["opened"][0];
    assert_eq!(one["names"][0], HOSTILE[1], "{one:#}");
    let listing = one["panes"][0]["text"]
        .as_str()
        .expect("the listing's text");
    for shown in [
        "// File: </script><!--",
        "script><!--:1  </script><img src=x onerror=window.pwned=4>",
        "// </script><script>window.pwned=5</script>",
        "nop \u{fffd}\u{fffd}<b>",
    ] {
        assert!(listing.contains(shown), "{shown:?} not shown in\n{listing}");
    }
    assert_eq!(v["opened"][2]["names"][1], "bytes: 626164fffe75746638");
}

/// The SYCL capture's kernels (dpctl's, in report order) as its table
/// names them at its default width: namespaces gone, the arguments that
/// fit, `sum`'s kernel cut in the middle.
const SYCL_NAMES: [&str; 6] = [
    "copy_cast_contig_kernel<float, int, …>",
    "where_contig_kernel<float, bool, 4, 2>",
    "__usmfill<float>",
    "sum_reduction_axis1_o…atomics_contig_krn<…>",
    "sin_contig_kernel<float, float, …>",
    "add_contig_kernel<float, float, float, …>",
];

/// The same kernels as `diff`'s table names them (its column is 48 wide).
const SYCL_DIFF_NAMES: [&str; 6] = [
    "copy_cast_contig_kernel<float, int, …>",
    "where_contig_kernel<float, bool, 4, 2>",
    "__usmfill<float>",
    "sum_reduction_axis1_ove…th_atomics_contig_krn<…>",
    "sin_contig_kernel<float, float, …>",
    "add_contig_kernel<float, float, float, …>",
];

/// A SYCL capture (tests/sycl/ops.py: six dpctl kernels, launched 2 to 6
/// times): its page, every kernel in it, each one's ISA as its data has it.
#[test]
fn the_page_of_a_sycl_capture() {
    require_stack();
    let tmp = temp_dir("page-sycl");
    let venv = sycl_venv();
    let out = tmp.path().join("sycl");
    let mut cmd = Command::new(xpu_asm_run());
    // The table printed (not on a terminal: at its default width).
    cmd.args(["--emulate", "pvc", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/sycl/ops.py"))
        .args(["1", "add=2", "sin=3", "sum=4", "where=5", "astype=6"])
        .current_dir(tmp.path())
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    hermetic(&mut cmd);
    for v in [
        "PYTHONPATH",
        "PYTHONHOME",
        "SYCL_DEVICE_FILTER",
        "SYCL_PI_TRACE",
        "COLUMNS",
    ] {
        cmd.env_remove(v);
    }
    let r = run(cmd, &out);
    r.assert_status(0);
    let report = assert_capture_page_file(&out);
    let launches: Vec<u64> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| u(&k["launches"]))
        .collect();
    assert_eq!(launches, [6, 5, 4, 4, 3, 2], "{}", r.ctx());
    assert_eq!(report["totals"]["matched"], 6, "{}", r.ctx());
    let names = SYCL_NAMES.map(String::from);
    let (data, _) = read_page(&out.join("report.html"));
    assert_page_names(&data, &names, &table_names(&r.stdout()));
    // The capture beside itself: diff's column is wider.
    let diff_page = tmp.path().join("diff.html");
    let d = diff(&out, &out, &diff_page);
    let diff_names = SYCL_DIFF_NAMES.map(String::from);
    let (diff_data, _) = read_page(&diff_page);
    assert_page_names(&diff_data, &diff_names, &diff_table_names(&d));
    if stack() == Stack::Sid {
        // No browser in the root: the files were checked above, exactly.
        return;
    }
    // Parts of the full names the short ones lost find their rows.
    let filters: [(&str, &[u64]); 3] = [
        ("copy_and_cast", &[0]),
        ("TwoOffsets_CombinedIndexer", &[3]),
        ("dpctl::tensor::kernels::", &[0, 1, 3, 4, 5]),
    ];
    let shots = tmp.path().join("shots");
    let v = assert_capture_page_browsed(&out, &report, &names, &filters, 0, &shots);
    assert_not_blank(&v["kernel_shot"], "a SYCL kernel");
    let mut args = vec!["--kernels", "3"];
    for (f, _) in &filters {
        args.extend(["--filter", f]);
    }
    let dv = browse(&diff_page, &tmp.path().join("diff-shots"), &args);
    let full: Vec<&str> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["demangled"].as_str().unwrap())
        .collect();
    assert_table(&dv, 0, &diff_names, &full, &filters);
    assert_eq!(dv["opened"][0]["title"], full[3]);
}
