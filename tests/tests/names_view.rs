//! Kernel names are data, wherever a view shows them or a command hands
//! them back to a driver: modules of hostile names assembled by the test
//! (`spirv-as`, see the kit's `spirv_names`), launched through Level Zero
//! and OpenCL under `--emulate pvc`, on both stacks.
//!
//! - `port` creates each kernel by the exact bytes of its name: kernels
//!   whose names are not UTF-8 (two of them the same once decoded) are
//!   ported through both APIs; a kernel that is not ported makes the exit
//!   status say so.

use serde_json::Value;
use std::path::{Path, PathBuf};
use xpu_asm_tests::spirv_names::escapes_in;
use xpu_asm_tests::spirv_names::{assemble, named_steps};
use xpu_asm_tests::*;

/// The product the ports compile for (both stacks emulate it).
const PRODUCT: &str = "dg2";

/// Names that are not UTF-8: the first two decode to the same text
/// (`bad\u{fffd}\u{fffd}name`), the third ends inside a character; with a
/// plain name beside them.
const INVALID_UTF8: [&[u8]; 4] = [
    b"plain_twin",
    b"bad\xff\xfename",
    b"bad\xfe\xffname",
    b"cut\xe2\x80",
];

/// Names NEO 26 takes that are not ASCII (it refuses a module with a
/// name that is not UTF-8: see [`neo26_refuses`]).
const NON_ASCII: [&[u8]; 4] = [
    b"plain_twin",
    "caf\u{e9}".as_bytes(),
    "soft\u{ad}hyphen".as_bytes(),
    "hangul\u{3164}filler".as_bytes(),
];

/// Their launches: each distinct, so each kernel's row is known.
const PORT_LAUNCHES: [u64; 4] = [2, 7, 5, 3];

/// The names `port` is tried on here: not UTF-8 where the driver takes
/// them (NEO 22.43), else not ASCII.
fn port_names() -> [&'static [u8]; 4] {
    match stack() {
        Stack::Debian12 => INVALID_UTF8,
        Stack::Sid => NON_ASCII,
    }
}

/// The report's kernels: (exact name bytes, launches), in report order.
fn kernels_by_bytes(report: &Value) -> Vec<(Vec<u8>, u64)> {
    report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| (name_bytes(k), u(&k["launches"])))
        .collect()
}

/// A report entry's exact name: `name_hex` when the name is not UTF-8.
fn name_bytes(k: &Value) -> Vec<u8> {
    match k["name_hex"].as_str() {
        Some(h) => record::unhex(h).expect("name_hex is hex"),
        None => k["name"].as_str().expect("a name").as_bytes().to_vec(),
    }
}

/// The kernels with their launches, most launched first.
fn by_launches(names: &[&[u8]], launches: &[u64]) -> Vec<(Vec<u8>, u64)> {
    let mut want: Vec<(Vec<u8>, u64)> = names
        .iter()
        .zip(launches)
        .map(|(n, l)| (n.to_vec(), *l))
        .collect();
    want.sort_by_key(|k| std::cmp::Reverse(k.1));
    want
}

/// The two APIs a module of hostile names is launched through.
#[derive(Clone, Copy, Debug)]
enum Api {
    /// The C workload (`--via ddi`): a Level Zero module.
    LevelZero,
    /// The OpenCL workload (`--via link`): a program from the IL.
    OpenCl,
}

const APIS: [Api; 2] = [Api::LevelZero, Api::OpenCl];

/// The capture (`xpu-asm-run --emulate pvc --isa dump -o root/tag`) of a
/// workload launching each kernel of the module of `names` `launches[i]`
/// times by its exact bytes, through `api`; not run yet.
fn hostile_capture(root: &Path, tag: &str, api: Api, names: &[&[u8]], launches: &[u64]) -> Capture {
    let spv = assemble(&root.join(format!("{tag}-module")), tag, names);
    let steps = named_steps(&root.join(format!("{tag}-names")), "h", names, launches);
    let work = root.join(format!("{tag}-work"));
    std::fs::create_dir_all(&work).expect("a work folder");
    let c = Capture::emulating("pvc", root.join(tag)).options(["--isa", "dump"]);
    let c = match api {
        Api::LevelZero => c
            .program(workload())
            .args(["--via", "ddi"])
            .module("h", &spv),
        Api::OpenCl => c
            .program(opencl_workload("link"))
            .args(["--via", "link", "--program"])
            .arg(format!("h=il:{}", spv.display())),
    };
    c.args(&steps).dir(&work).hermetic()
}

/// [`hostile_capture`] run: it must exit 0 and report each kernel with
/// its launches.
fn capture_hostile(
    root: &Path,
    tag: &str,
    api: Api,
    names: &[&[u8]],
    launches: &[u64],
) -> (PathBuf, Run) {
    let out = root.join(tag);
    let r = hostile_capture(root, tag, api, names, launches).run_ok();
    assert_eq!(
        kernels_by_bytes(&r.report()),
        by_launches(names, launches),
        "stack {}: {api:?}: the report holds each kernel of the module with its launches\n{}",
        stack().name(),
        r.ctx()
    );
    (out, r)
}

/// NEO 26 refuses a module one of whose kernel names is not UTF-8: its
/// build fails (Level Zero's `ZE_RESULT_ERROR_MODULE_BUILD_FAILURE`,
/// OpenCL's `CL_INVALID_BINARY`) with an empty log, the program's error.
fn neo26_refuses(root: &Path, names: &[&[u8]]) {
    for api in APIS {
        let tag = format!("refused-{api:?}");
        let r = hostile_capture(root, &tag, api, names, &vec![1; names.len()]).run();
        r.assert_status(1);
        let said = match api {
            Api::LevelZero => "failed: ze_result_t 0x70000004",
            Api::OpenCl => "failed (-42)",
        };
        assert!(r.stderr().contains(said), "[sid] {api:?}: {}", r.ctx());
    }
}

/// `xpu-asm-run port CAP --to dg2 ARGS`.
fn port_to_dg2(cap: &Path, more: &[&str]) -> Run {
    let cap_s = cap.to_str().expect("a UTF-8 path");
    let mut args = vec!["port", cap_s, "--to", PRODUCT];
    args.extend(more);
    run_xpu_asm(&args, cap)
}

/// A kernel's (SIMD, GRF, instructions) on the product, or why it was not
/// ported.
type OnProduct = Result<(u64, u64, u64), String>;

/// Each kernel of the port's `--json`: (exact name, its figures on the
/// product or why it was not ported).
fn ported(view: &Value) -> Vec<(Vec<u8>, OnProduct)> {
    view["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            let name = name_bytes(k);
            let p = &k["products"][0];
            let got = match p["not_ported"].as_str() {
                Some(why) => Err(why.to_string()),
                None => Ok((u(&p["simd"]), u(&p["grf"]), u(&p["instructions"]))),
            };
            (name, got)
        })
        .collect()
}

/// A kernel of a report: its exact name, launches, GRF and instructions.
type Figures = (Vec<u8>, u64, Option<u64>, Option<u64>);

/// The port's report: each kernel's exact name and its figures.
fn port_figures(cap: &Path) -> Vec<Figures> {
    let text = std::fs::read_to_string(cap.join("port").join(PRODUCT).join("report.json"))
        .expect("the port's report.json");
    let r: Value = serde_json::from_str(&text).expect("JSON");
    r["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                name_bytes(k),
                u(&k["launches"]),
                k["grf"].as_u64(),
                k["instructions"].as_u64(),
            )
        })
        .collect()
}

/// The kernels whose names are not UTF-8, two of them the same once
/// decoded, are ported through Level Zero and OpenCL by their exact bytes
/// (NEO 22.43; NEO 26 refuses their module, and names that are not ASCII
/// are ported instead): each has its figures on the product, equal to
/// its plain-named twin's (the same code), and the port's report has each
/// under its own name with the run's launches; `port` exits 0.
#[test]
fn kernels_whose_names_are_not_utf8_are_ported() {
    require_stack();
    let t = temp_dir("names-view-port");
    if stack() == Stack::Sid {
        neo26_refuses(t.path(), &INVALID_UTF8);
    }
    let names = port_names();
    for api in APIS {
        let (cap, _) = capture_hostile(t.path(), &format!("{api:?}"), api, &names, &PORT_LAUNCHES);
        let r = port_to_dg2(&cap, &["--json"]);
        r.assert_status(0);
        let view = r.json();
        let got = ported(&view);
        assert_eq!(
            got.len(),
            names.len(),
            "[{}] {api:?}: {view}",
            stack().name()
        );
        let twin = got
            .iter()
            .find(|(n, _)| n == b"plain_twin")
            .map(|(_, f)| f.clone())
            .expect("the plain twin");
        let twin = twin
            .unwrap_or_else(|why| panic!("[{}] {api:?}: twin not ported: {why}", stack().name()));
        for (name, figures) in &got {
            assert_eq!(
                figures.as_ref(),
                Ok(&twin),
                "[{}] {api:?}: {} on {PRODUCT}\n{}",
                stack().name(),
                String::from_utf8_lossy(name),
                r.ctx()
            );
        }
        // The port's own report: every kernel under its exact name.
        let mut in_port: Vec<(Vec<u8>, u64)> = port_figures(&cap)
            .into_iter()
            .map(|(n, l, grf, instrs)| {
                assert_eq!(
                    (grf, instrs),
                    (Some(twin.1), Some(twin.2)),
                    "[{}] {api:?}",
                    stack().name()
                );
                (n, l)
            })
            .collect();
        in_port.sort_by_key(|k| std::cmp::Reverse(k.1));
        assert_eq!(
            in_port,
            by_launches(&names, &PORT_LAUNCHES),
            "[{}] {api:?}: the port's report",
            stack().name()
        );
        // The table, as the terminal shows it, for the closing note.
        let table = port_to_dg2(&cap, &[]);
        table.assert_status(0);
        eprintln!(
            "[{}] {api:?}: port's table:\n{}",
            stack().name(),
            table.stdout()
        );
    }
}

/// A launched kernel that cannot be ported (of an OpenCL program made by
/// `clLinkProgram`, whose binary carries no SPIR-V) makes `port` exit 3
/// and say how many on stderr; the kernels that can be ported still are.
#[test]
fn a_kernel_not_ported_makes_the_exit_status_say_so() {
    require_stack();
    let t = temp_dir("names-view-not-ported");
    let names = port_names();
    let spv = assemble(&t.path().join("module"), "m", &names[..2]);
    let steps = named_steps(&t.path().join("names"), "h", &names[..2], &[4, 6]);
    let out = t.path().join("cap");
    let link = workload_src_dir().join("kernels_cl_link.cl");
    Capture::emulating("pvc", &out)
        .options(["--isa", "dump"])
        .program(opencl_workload("link"))
        .args(["--via", "link", "--program"])
        .arg(format!("h=il:{}", spv.display()))
        .arg("--program")
        .arg(format!("lnk=link:{}", link.display()))
        .args(&steps)
        .arg("all:lnk:1")
        .dir(t.path())
        .hermetic()
        .run_ok();
    let r = port_to_dg2(&out, &["--json"]);
    r.assert_status(3);
    let mut got: Vec<(Vec<u8>, bool)> = ported(&r.json())
        .into_iter()
        .map(|(n, f)| (n, f.is_ok()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        {
            let mut want = vec![
                (names[1].to_vec(), true),
                (b"cl_linked_a".to_vec(), false),
                (b"cl_linked_b".to_vec(), false),
                (b"plain_twin".to_vec(), true),
            ];
            want.sort();
            want
        },
        "[{}] which kernels were ported\n{}",
        stack().name(),
        r.ctx()
    );
    assert!(
        r.stderr().contains(&format!(
            "xpu-asm-run: 2 launched kernels not ported to {PRODUCT} (the table says why)\n"
        )),
        "[{}] {}",
        stack().name(),
        r.ctx()
    );
    // A gate that holds still says 1: `missing` fails on them.
    port_to_dg2(&out, &["-q", "--fail-on", "missing"]).assert_status(1);
}

/// A hostile name of the module, with how the terminal must show it: a
/// name that is not UTF-8 with its bytes as `\xff`, every character that
/// is a control or invisible or reorders text as its escape, the empty name
/// as `(empty name)`.
struct Hostile {
    name: &'static [u8],
    shown: &'static str,
}

const fn hostile(name: &'static [u8], shown: &'static str) -> Hostile {
    Hostile { name, shown }
}

/// Names both NEOs take: a name that reads as a rank, markup, and the
/// invisible characters NEO 26 lets through.
const HOSTILE: [Hostile; 8] = [
    hostile(b"plain_twin", "plain_twin"),
    hostile(b"1", "1"),
    hostile(b"<script>alert(1)</script>", "<script>alert(1)</script>"),
    hostile("soft\u{ad}hyphen".as_bytes(), r"soft\u{ad}hyphen"),
    hostile("hangul\u{3164}filler".as_bytes(), r"hangul\u{3164}filler"),
    hostile("cgj\u{34f}joiner".as_bytes(), r"cgj\u{34f}joiner"),
    hostile(b"del\x7fchar", r"del\u{7f}char"),
    hostile(b"tab\tchar", r"tab\tchar"),
];

/// Names NEO 22.43 takes and NEO 26 refuses ([`neo26_refuses`]): bidi
/// controls (the "Trojan Source" trick), zero-width and tag characters, a
/// newline, a terminal escape, bytes that are not UTF-8 (two names that
/// decode to the same text), the empty name.
const HOSTILE_NEO22: [Hostile; 10] = [
    hostile(
        "rtl\u{202e}evil\u{202c}".as_bytes(),
        r"rtl\u{202e}evil\u{202c}",
    ),
    hostile(
        "isolate\u{2066}x\u{2069}".as_bytes(),
        r"isolate\u{2066}x\u{2069}",
    ),
    hostile("zero\u{200b}width".as_bytes(), r"zero\u{200b}width"),
    hostile("bom\u{feff}".as_bytes(), r"bom\u{feff}"),
    hostile("tag\u{e0041}\u{e007f}".as_bytes(), r"tag\u{e0041}\u{e007f}"),
    hostile(b"line\nbreak", r"line\nbreak"),
    hostile(b"esc\x1b[31mred", r"esc\u{1b}[31mred"),
    hostile(b"bad\xff\xfename", r"bad\xff\xfename"),
    hostile(b"bad\xfe\xffname", r"bad\xfe\xffname"),
    hostile(b"", "(empty name)"),
];

/// A name longer than any table column or `--fail-on` line gives whole.
const LONG: &str = "a_kernel_name_that_goes_on_and_on_and_on_for_well_over_a_hundred_characters_so_that_no_line_can_print_it_whole";

/// The hostile module of this stack: [`HOSTILE`], [`LONG`], and on NEO
/// 22.43 [`HOSTILE_NEO22`] too.
fn hostile_names() -> Vec<(Vec<u8>, String)> {
    let mut all: Vec<(Vec<u8>, String)> = HOSTILE
        .iter()
        .map(|h| (h.name.to_vec(), h.shown.to_string()))
        .collect();
    all.push((LONG.as_bytes().to_vec(), LONG.to_string()));
    if stack() == Stack::Debian12 {
        all.extend(
            HOSTILE_NEO22
                .iter()
                .map(|h| (h.name.to_vec(), h.shown.to_string())),
        );
    }
    all
}

/// The characters no terminal output may hold raw: every one the hostile
/// names hold but the plain ones, tab and newline included (a line break
/// of the output is one only at the end of a line of it).
fn assert_nothing_raw(what: &str, text: &str) {
    for (i, c) in text.char_indices() {
        let bad = matches!(
            c,
            '\u{ad}'
                | '\u{3164}'
                | '\u{34f}'
                | '\u{7f}'
                | '\t'
                | '\u{202e}'
                | '\u{202c}'
                | '\u{2066}'
                | '\u{2069}'
                | '\u{200b}'
                | '\u{feff}'
                | '\u{e0041}'
                | '\u{e007f}'
                | '\u{1b}'
                | '\u{fffd}'
        );
        assert!(
            !bad,
            "[{}] {what}: U+{:04X} raw at byte {i}:\n{text}",
            stack().name(),
            c as u32
        );
    }
    assert!(
        !text.contains("line\nbreak"),
        "[{}] {what}: a name's newline:\n{text}",
        stack().name()
    );
}

/// The hostile module, through Level Zero: every name reaches the terminal
/// as the terminal must show it, in the table, `show` (by rank, `--name`,
/// `--name-hex`), `diff`, `port`, `merge` and `--fail-on` lines: each
/// kernel's row is exactly its rank, launches and shown name, no output
/// holds a hostile character raw, and no two kernels look the same.
#[test]
fn hostile_names_reach_the_terminal_escaped() {
    require_stack();
    let t = temp_dir("names-view-terminal");
    let all = hostile_names();
    let names: Vec<&[u8]> = all.iter().map(|(n, _)| n.as_slice()).collect();
    let launches: Vec<u64> = (1..=names.len() as u64).rev().map(|n| n + 1).collect();
    let (cap, r) = capture_hostile(t.path(), "hostile", Api::LevelZero, &names, &launches);
    let table = r.stdout();
    eprintln!("[{}] the hostile module's table:\n{table}", stack().name());
    assert_nothing_raw("the table", &table);
    assert_nothing_raw("the run's stderr", &r.stderr());
    // Each kernel's row: its rank, launches and name (the long one
    // shortened), in launch order; no two names shown alike.
    // (The workload's own lines come first.)
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("   #   launches  kernel"))
        .skip(1)
        .take(names.len())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for (i, ((_, shown), row)) in all.iter().zip(&rows).enumerate() {
        let head = format!("{:>4} {:>10}  ", i + 1, launches[i]);
        let cell = row.strip_prefix(&head).unwrap_or_else(|| {
            panic!(
                "[{}] row {} is {row:?}, want {head:?}\n{table}",
                stack().name(),
                i + 1
            )
        });
        let cell = cell.split("   ").next().unwrap_or("").trim_end();
        if shown == LONG {
            assert!(
                cell.contains('…') && cell.len() < LONG.len(),
                "[{}] {cell:?}",
                stack().name()
            );
        } else {
            assert_eq!(cell, shown, "[{}] row {}\n{table}", stack().name(), i + 1);
        }
        assert!(
            seen.insert(cell.to_string()),
            "[{}] {cell:?} twice\n{table}",
            stack().name()
        );
    }
    let dir = cap.to_str().expect("a UTF-8 path");
    // show: by rank, the first line its rank and name (or, for a kernel
    // without ISA, the error naming it).
    for (i, (_, shown)) in all.iter().enumerate() {
        let rank = (i + 1).to_string();
        let s = run_xpu_asm(&["show", dir, &rank, "--color", "never"], &cap);
        assert_nothing_raw("show", &s.stdout());
        assert_nothing_raw("show's stderr", &s.stderr());
        let named = match s.stdout_lines().first() {
            Some(first) => *first == format!("#{rank} {shown}"),
            None => s.stderr().starts_with(&format!(
                "xpu-asm-run: kernel #{rank} {shown} has no ISA file"
            )),
        };
        assert!(named, "[{}] {}", stack().name(), s.ctx());
    }
    // --name: the kernel named `1` (rank 1 is another); --name-hex: a name
    // that is not UTF-8, and the empty one (NEO 22.43).
    let one = 1 + all.iter().position(|(n, _)| n == b"1").unwrap();
    let s = run_xpu_asm(&["show", dir, "--name", "1", "--color", "never"], &cap);
    s.assert_status(0);
    assert_eq!(s.stdout_lines()[0], format!("#{one} 1"), "{}", s.ctx());
    let s = run_xpu_asm(&["show", dir, "1", "--color", "never"], &cap);
    assert_eq!(s.stdout_lines()[0], "#1 plain_twin", "{}", s.ctx());
    if stack() == Stack::Debian12 {
        for (name, arg) in [(&b"bad\xfe\xffname"[..], "--name-hex"), (b"", "--name")] {
            let at = 1 + all.iter().position(|(n, _)| n == name).unwrap();
            let value = match arg {
                "--name-hex" => record::hex(name),
                _ => String::new(),
            };
            let s = run_xpu_asm(&["show", dir, arg, &value, "--color", "never"], &cap);
            s.assert_status(0);
            assert_eq!(
                s.stdout_lines()[0],
                format!("#{at} {}", all[at - 1].1),
                "{}",
                s.ctx()
            );
        }
    }
    // diff of the capture with itself, every kernel; merge; port, with a
    // --fail-on line per kernel (each has other instructions on dg2).
    let d = run_xpu_asm(&["diff", dir, dir, "--all", "--color", "never"], &cap);
    d.assert_status(0);
    assert_nothing_raw("diff", &d.stdout());
    // One kernel's ISA diff, of each kernel.
    for rank in 1..=all.len() {
        let one = run_xpu_asm(
            &["diff", dir, dir, &rank.to_string(), "--color", "never"],
            &cap,
        );
        assert_nothing_raw("diff's ISA diff", &one.stdout());
        assert_nothing_raw("diff's ISA diff's stderr", &one.stderr());
    }
    let merged = t.path().join("merged");
    let m = run_xpu_asm(&["merge", "-o", merged.to_str().unwrap(), dir], &cap);
    m.assert_status(0);
    assert_nothing_raw("merge", &m.stdout());
    assert_nothing_raw("merge's stderr", &m.stderr());
    // A kernel without ISA in the run (a name the dump's header cannot
    // tell) has no instructions to compare: no line.
    let report = r.report();
    let has_isa: Vec<bool> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| k["instructions"].is_u64())
        .collect();
    let p = port_to_dg2(&cap, &["--fail-on", "any"]);
    p.assert_status(1);
    assert_nothing_raw("port", &p.stdout());
    assert_nothing_raw("port's --fail-on lines", &p.stderr());
    let stderr = p.stderr();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("xpu-asm-run: --fail-on "))
        .collect();
    // port/index.html (a static page): what hides in a name marked as its
    // escape, in the table and in the ISA's `//.kernel` line; markup as text.
    let index = std::fs::read_to_string(cap.join("port").join("index.html")).expect("port's page");
    let soft = r#"soft<span class="esc">\u{ad}</span>hyphen"#;
    assert!(
        index.contains(&format!("\">{soft}</a></td>"))
            && index.contains(&format!("//.kernel {soft}\n"))
            && !index.contains("<script>alert"),
        "[{}] port/index.html",
        stack().name()
    );
    if stack() == Stack::Debian12 {
        assert!(
            index.contains(
                r#"rtl<span class="esc">\u{202e}</span>evil<span class="esc">\u{202c}</span>"#
            ),
            "[debian12] port/index.html"
        );
    }
    let with_isa = has_isa.iter().filter(|h| **h).count();
    assert_eq!(lines.len(), with_isa, "[{}] {}", stack().name(), p.ctx());
    eprintln!(
        "[{}] port's --fail-on lines:\n{}",
        stack().name(),
        lines.join("\n")
    );
    for (i, (_, shown)) in all.iter().enumerate().filter(|(i, _)| has_isa[*i]) {
        let want = match shown.as_str() {
            LONG => format!(" (#{}) on {PRODUCT}: ", i + 1),
            s => format!(": {s} on {PRODUCT}: "),
        };
        assert!(
            lines.iter().any(|l| l.contains(&want)),
            "[{}] no --fail-on line for {shown:?} ({want:?})\n{}",
            stack().name(),
            lines.join("\n")
        );
    }
}

/// The hostile module's page: its file holds each name as data (no name
/// closes the data element, none is markup); in the real browser
/// (Debian 12's Chromium) nothing of a name runs (`<script>alert(1)</script>`
/// would open a dialog), and each name is shown as the terminal shows it,
/// each hidden character (and byte that is not UTF-8) a marked escape, the
/// empty name marked apart, in the table, its tooltip and its heading.
#[test]
fn the_page_shows_hostile_names_marked_and_runs_none() {
    require_stack();
    let t = temp_dir("names-view-page");
    let all = hostile_names();
    let names: Vec<&[u8]> = all.iter().map(|(n, _)| n.as_slice()).collect();
    let launches: Vec<u64> = (1..=names.len() as u64).rev().map(|n| n + 1).collect();
    let (cap, r) = capture_hostile(t.path(), "hostile", Api::LevelZero, &names, &launches);
    let page = cap.join("report.html");
    let text = std::fs::read_to_string(&page).expect("report.html");
    assert!(
        !text.contains("<script>alert") && !text.contains("alert(1)</script>"),
        "[{}] a name's markup in the page file",
        stack().name()
    );
    let (data, _) =
        xpu_asm_collector::report::export::html::read_page(&text).expect("the page's data");
    assert_eq!(
        data["report"],
        r.report(),
        "[{}] the page's report",
        stack().name()
    );
    if stack() == Stack::Sid {
        // No browser in the sid root: the file, and its data, is the page.
        return;
    }
    let v = browse(&page, &t.path().join("shots"), &["--kernels", "all"]);
    let scripts = text.matches("<script").count();
    assert_eq!(
        v["injected"],
        serde_json::json!({"pwned": null, "scripts": scripts, "images": 0, "iframes": 0}),
        "{v:#}"
    );
    let columns: Vec<&str> = v["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let at = columns
        .iter()
        .position(|c| *c == "kernel")
        .expect("a kernel column");
    let rows = v["kernels"].as_array().expect("rows");
    assert_eq!(rows.len(), all.len(), "{v:#}");
    for (i, (name, shown)) in all.iter().enumerate() {
        let (row, opened) = (&rows[i], &v["opened"][i]);
        let ctx = format!("[debian12] kernel #{}: {row:#}\n{opened:#}", i + 1);
        // The long name shortened as the terminal's table shortens it;
        // whole in the tooltip.
        match shown.as_str() {
            LONG => assert!(
                row["cells"][at].as_str().is_some_and(|c| c.contains('…')),
                "{ctx}"
            ),
            _ => assert_eq!(row["cells"][at], shown.as_str(), "{ctx}"),
        }
        assert_eq!(row["title"], shown.as_str(), "{ctx}");
        assert_eq!(row["marks"], serde_json::json!(escapes_in(shown)), "{ctx}");
        assert_eq!(row["empty"], name.is_empty(), "{ctx}");
        assert_eq!(opened["title"], format!("#{} {shown}", i + 1), "{ctx}");
        assert_eq!(
            opened["marks"],
            serde_json::json!(escapes_in(shown)),
            "{ctx}"
        );
    }
}
