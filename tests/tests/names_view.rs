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
