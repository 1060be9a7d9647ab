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
    // `kernel` padded to the column, two spaces, `SIMD` right-aligned in 4.
    table_column(stdout, "kernel", ("SIMD", 2))
}

/// A column of the terminal table in `stdout`: in each row, the text from
/// where `head` starts in the header to `n` characters before the next
/// column `(next, n)` starts, its trailing spaces cut.
fn table_column(stdout: &str, head: &str, (next, n): (&str, usize)) -> Vec<String> {
    let mut lines = stdout.lines().skip_while(|l| !l.contains("  launches  "));
    let header: Vec<char> = lines.next().expect("the table's header").chars().collect();
    let at = |w: &str| {
        let w: Vec<char> = w.chars().collect();
        header
            .windows(w.len())
            .position(|x| x == w.as_slice())
            .unwrap_or_else(|| panic!("no {w:?} in the header"))
    };
    let (from, to) = (at(head), at(next) - n);
    lines
        .take_while(|l| !l.starts_with("total:"))
        .map(|l| {
            let c: Vec<char> = l.chars().collect();
            c[from..to.min(c.len())]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The page's most launched shapes (`data.tops`): the terminal table's
/// `top shape` and `occupancy` columns, kernel by kernel.
fn assert_page_tops(data: &Value, stdout: &str) {
    let shapes = table_column(stdout, "top shape", ("occupancy", 1));
    let occupancy = table_column(stdout, "occupancy", ("origin", 1));
    let want: Vec<Value> = shapes
        .iter()
        .zip(&occupancy)
        .map(|(s, o)| serde_json::json!([s, o]))
        .collect();
    assert_eq!(
        data["tops"],
        Value::Array(want),
        "the page's top shapes and occupancy"
    );
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

mod browser;
mod capture_and_diff;
mod hostile;
mod most_launched;
mod sycl;
mod timed;

use browser::*;
use hostile::*;
