//! Views of a capture never rewrite it, and name same-named kernels apart:
//! every view option of `collect`, `show`, `diff` and `port` leaves the
//! capture's files byte for byte as its collection wrote them (`--filter`
//! narrows what is printed, not report.json, report.html or asm/), and the
//! two `common_kernel`s of modules a and b are named by module, as
//! `collect`'s table names them, in `diff`'s table, its `--fail-on` lines,
//! its JSON and page, and in `port`'s table, lines and page.
//!
//! Two captures of the C workload under `--emulate pvc` (the second built
//! with `-cl-opt-disable`, and collected with `--filter`) and one port to
//! dg2, on both stacks: about 15 s.

use serde_json::Value;
use std::path::{Path, PathBuf};
use xpu_asm_tests::*;

/// Launches: every count distinct, so the report's order is known.
const STEPS: [&str; 6] = [
    "imm:a:_ZTSZ4mainE10vector_add:11",
    "imm:a:scale:7",
    "reg:a:common_kernel:2:3",
    "imm:a:scale_v2:5",
    "imm:b:common_kernel:4",
    "imm:b:only_in_b:2",
];

/// The kernels in report order: (mangled name, launches).
const KERNELS: [(&str, u64); 6] = [
    ("_ZTSZ4mainE10vector_add", 11),
    ("scale", 7),
    ("common_kernel", 6),
    ("scale_v2", 5),
    ("common_kernel", 4),
    ("only_in_b", 2),
];

/// The product the port compiles for (both stacks emulate it).
const PRODUCT: &str = "dg2";

/// A capture of the workload's modules a and b, built with `flags`, with
/// xpu-asm-run's `options`; its report's kernels checked.
fn capture_two_modules(root: &Path, tag: &str, flags: &str, options: &[&str]) -> (PathBuf, Run) {
    let out = root.join(tag);
    let work = root.join(format!("{tag}-work"));
    std::fs::create_dir_all(&work).expect("a work folder");
    let mut c = Capture::emulating("pvc", &out)
        .options(options)
        .program(workload())
        .args(["--via", "ddi"])
        .module("a", &spirv("a"))
        .module("b", &spirv("b"));
    if !flags.is_empty() {
        c = c.args(["--build-flags", flags]);
    }
    let r = c.args(STEPS).dir(&work).hermetic().run_ok();
    let got: Vec<(String, u64)> = listed(&r.report())
        .iter()
        .map(|k| (k["name"].as_str().unwrap().to_string(), u(&k["launches"])))
        .collect();
    let want: Vec<(String, u64)> = KERNELS.iter().map(|(n, l)| (n.to_string(), *l)).collect();
    assert_eq!(
        got,
        want,
        "stack {}: the report of the run holds every kernel\n{}",
        stack().name(),
        r.ctx()
    );
    (out, r)
}

fn listed(report: &Value) -> &Vec<Value> {
    report["kernels"].as_array().expect("kernels")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// `view`'s run (it must exit `status`) changed neither capture's files
/// (but `port/`, port's own output).
fn assert_untouched(view: &[&str], status: i32, captures: &[(&Path, &Digests)]) {
    let r = run_xpu_asm(view, captures[0].0);
    r.assert_status(status);
    for (dir, before) in captures {
        let after = tree_digests(dir, &["port"]);
        assert!(
            after == **before,
            "stack {}: `{}` changed {}:\n{}\n{}",
            stack().name(),
            view.join(" "),
            dir.display(),
            changes(before, &after),
            r.ctx()
        );
    }
}

type Digests = std::collections::BTreeMap<String, String>;

/// What differs between two [`tree_digests`], one line per path.
fn changes(before: &Digests, after: &Digests) -> String {
    let mut lines = Vec::new();
    for (p, d) in before {
        match after.get(p) {
            None => lines.push(format!("  removed {p}")),
            Some(e) if e != d => lines.push(format!("  rewritten {p}")),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        lines.push(format!("  added {p}"));
    }
    lines.join("\n")
}

/// Every view option of collect, show, diff and port leaves both
/// captures' files byte for byte as their collections wrote them; a
/// filtered collection (after the run, or by `collect`) writes the whole
/// report and prints the kernels it shows with their ranks in it.
#[test]
fn views_leave_the_capture_as_its_collection_wrote_it() {
    let s = stack_scratch("views");
    let (a, _) = capture_two_modules(&s.root, "a", "", &[]);
    // Filtered from the first collection on: the files hold every kernel.
    let (b, run_b) = capture_two_modules(&s.root, "b", "-cl-opt-disable", &["--filter", "scale"]);
    let stdout = run_b.stdout();
    let table: Vec<String> = stdout
        .lines()
        .skip_while(|l| !l.contains("  kernel  "))
        .skip(1)
        .take_while(|l| !l.starts_with("total:"))
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(table, ["2 7 scale", "4 5 scale_v2"], "{}", run_b.ctx());
    let before = [
        (a.as_path(), tree_digests(&a, &[])),
        (b.as_path(), tree_digests(&b, &[])),
    ];
    let both: Vec<(&Path, &Digests)> = before.iter().map(|(d, t)| (*d, t)).collect();
    let page = s.root.join("diff.html");
    let (a, b, page) = (path_str(&a), path_str(&b), path_str(&page));
    let views: &[(&[&str], i32)] = &[
        (&["collect", a, "--filter", "scale"], 0),
        (&["collect", a, "--filter", "scale", "--json"], 0),
        (&["collect", a, "--filter", "^no such kernel$"], 0),
        (&["collect", a, "--json"], 0),
        (&["collect", a, "-q"], 0),
        (&["collect", b], 0),
        (&["show", a, "2"], 0),
        (&["show", a, "scale_v2"], 0),
        (&["show", a, "scale", "--cfg"], 0),
        (&["show", a, "scale", "--cfg=dot"], 0),
        // No line information, several kernels, no such rank: errors.
        (&["show", a, "scale", "--lines"], 1),
        (&["show", a, "common_kernel"], 1),
        (&["show", a, "0"], 1),
        (&["diff", a, b], 0),
        (&["diff", a, b, "--all", "--json"], 0),
        (&["diff", a, b, "--fail-on", "any"], 1),
        (&["diff", a, b, "--html", page, "--page-kernels", "2"], 0),
        (&["diff", a, b, "scale", "--normalize-regs"], 0),
        (&["port", a, "--to", PRODUCT, "--json"], 0),
        (&["port", a, "--to", PRODUCT, "-q", "--fail-on", "any"], 1),
    ];
    for (view, status) in views {
        assert_untouched(view, *status, &both);
    }
    // The filtered view: the kernels it shows, with their ranks in the
    // whole report, which the files keep.
    let r = run_xpu_asm(&["collect", a, "--filter", "scale", "--json"], Path::new(a));
    let view = r.json();
    let ranks: Vec<(u64, &str)> = listed(&view)
        .iter()
        .map(|k| (u(&k["rank"]), k["name"].as_str().unwrap()))
        .collect();
    assert_eq!(ranks, [(2, "scale"), (4, "scale_v2")], "{}", r.ctx());
    assert_eq!(
        (
            &view["filter"],
            u(&view["totals"]["kernels"]),
            u(&view["totals"]["filtered_out"])
        ),
        (&Value::from("scale"), 2, 4),
        "{}",
        r.ctx()
    );
    for dir in [a, b] {
        let whole = written_report(dir);
        assert_eq!(listed(&whole).len(), KERNELS.len(), "{dir}");
        assert_eq!(
            (&whole["filter"], u(&whole["totals"]["filtered_out"])),
            (&Value::Null, 0),
            "{dir}"
        );
        run_xpu_asm(&["show", dir, "main::vector_add"], Path::new(dir)).assert_status(0);
    }
}

/// `report.json` of `dir`.
fn written_report(dir: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(dir).join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// The kernel column of a table in `stdout`: the name of each row that
/// starts with a rank, from where the header's `kernel` starts to `end`
/// characters before the next column.
fn column_names(stdout: &str, next: &str) -> Vec<String> {
    let mut lines = stdout.lines().skip_while(|l| !l.contains("  kernel  "));
    let head = lines.next().expect("a header");
    let from = head.find("kernel").expect("a kernel column");
    let to = head.find(next).expect("the next column");
    lines
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            l.chars()
                .skip(from)
                .take(to - from)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The two `common_kernel`s (modules a and b) are named by module, as
/// `collect`'s table names them, wherever `diff` and `port` name a kernel.
#[test]
fn same_named_kernels_are_told_apart_in_diff_and_port() {
    let s = stack_scratch("views-names");
    let (a_dir, run_a) = capture_two_modules(&s.root, "a", "", &[]);
    let (b_dir, _) = capture_two_modules(&s.root, "b", "-cl-opt-disable", &[]);
    let report = run_a.report();
    let module = |i: usize| listed(&report)[i]["module_sha256"].as_str().unwrap()[..8].to_string();
    let (ck_a, ck_b) = (
        format!("common_kernel [module {}]", module(2)),
        format!("common_kernel [module {}]", module(4)),
    );
    let named = [
        "main::vector_add",
        "scale",
        &ck_a,
        "scale_v2",
        &ck_b,
        "only_in_b",
    ]
    .map(String::from);
    assert_eq!(
        column_names(&run_a.stdout(), "SIMD"),
        named,
        "collect's table\n{}",
        run_a.ctx()
    );
    let (a, b) = (path_str(&a_dir), path_str(&b_dir));
    let page = s.root.join("diff.html");

    // diff: the table, the --fail-on lines, the JSON, the page.
    let r = run_xpu_asm(
        &[
            "diff",
            a,
            b,
            "--all",
            "--fail-on",
            "any",
            "--html",
            path_str(&page),
        ],
        &a_dir,
    );
    r.assert_status(1);
    let stdout = r.stdout();
    let rows: Vec<String> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("kernel "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with(' '))
        .map(|l| l[..l.find("  ").unwrap()].to_string())
        .collect();
    // Paired by name: A's order, each name's kernels in module order.
    let paired = [
        "main::vector_add",
        "scale",
        &ck_a,
        &ck_b,
        "scale_v2",
        "only_in_b",
    ]
    .map(String::from);
    assert_eq!(rows, paired, "diff's table\n{}", r.ctx());
    let failed: Vec<String> = r
        .stderr()
        .lines()
        .filter_map(|l| l.strip_prefix("xpu-asm-run: --fail-on any: "))
        .map(|l| l[..l.find(": changed: ").unwrap()].to_string())
        .collect();
    assert_eq!(failed, paired, "diff's --fail-on lines\n{}", r.ctx());
    let (data, _) = xpu_asm_collector::report::export::html::read_page(
        &std::fs::read_to_string(&page).expect("the page"),
    )
    .expect("a page");
    assert_eq!(
        data["names"],
        Value::from(paired.to_vec()),
        "the diff page's names"
    );
    let r = run_xpu_asm(&["diff", a, b, "--json", "--fail-on", "any"], &a_dir);
    let json = r.json();
    let json_failed: Vec<&str> = json["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(
        json_failed,
        paired,
        "diff --json's failed[].kernel\n{}",
        r.ctx()
    );

    // port: the table, the --fail-on lines, the page.
    let r = run_xpu_asm(&["port", a, "--to", PRODUCT, "--fail-on", "any"], &a_dir);
    r.assert_status(1);
    assert_eq!(
        column_names(&r.stdout(), "device"),
        named,
        "port's table\n{}",
        r.ctx()
    );
    let lines: Vec<String> = r
        .stderr()
        .lines()
        .filter_map(|l| l.strip_prefix("xpu-asm-run: --fail-on any: "))
        .map(|l| l[..l.find(&format!(" on {PRODUCT}: ")).unwrap()].to_string())
        .collect();
    assert_eq!(lines, paired, "port's --fail-on lines\n{}", r.ctx());
    let index = std::fs::read_to_string(a_dir.join("port/index.html")).expect("port/index.html");
    for (i, name) in named.iter().enumerate() {
        let link = format!("<a href=\"#isa-{i}\">{name}</a>");
        let heading = format!("<summary>{name}</summary>");
        assert!(
            index.contains(&link) && index.contains(&heading),
            "port/index.html names kernel #{} {name}:\n{index}",
            i + 1
        );
    }
}
