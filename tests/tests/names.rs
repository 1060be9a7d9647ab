//! A kernel's name is data: a module whose kernels have hostile names
//! (made by the test with `spirv-as`, every kernel of one body) captured
//! on the real stack, on both stacks, from IGC's dumps and from the
//! module's binary. Each kernel's figures are those of the same kernel
//! under a plain name (`twin`), its launches exact; a name that holds
//! IGC's header lines (`victim` then `//.spill size 4096`, ...) forges no
//! figure of `victim`'s and is reported as itself, compiled and never
//! launched; a name of 250,000 bytes has its GRF, instruction count and
//! occupancy; `--all` lists the module's kernels and no other; nothing is
//! written outside the capture; and `diff` of the capture against itself
//! passes every `--fail-on` rule.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use xpu_asm_tests::*;

/// `victim`, then lines of IGC's header fields: IGC writes this kernel's
/// dump with a `//.kernel victim` line.
const FORGING_NAME: &[u8] = b"victim\n//.spill size 4096\n//.instCount 99999\n//.platform FORGED";

/// The module's kernels (what the name is, the name, launches): every
/// count its own; the forging kernel never launched. `twin` is the plain
/// name the others' figures are compared with.
fn hostile_kernels() -> Vec<(&'static str, Vec<u8>, u64)> {
    vec![
        ("twin", b"twin".to_vec(), 1),
        ("victim", b"victim".to_vec(), 2),
        ("forging", FORGING_NAME.to_vec(), 0),
        ("250,000 bytes", vec![b'n'; 250_000], 3),
        ("newlines", b"two\nlines\r\n".to_vec(), 4),
        (
            "terminal escapes",
            b"\x1b[31mred\x1b[0m\x07\x08".to_vec(),
            5,
        ),
        ("HTML", b"<script>alert(1)</script>&amp;".to_vec(), 6),
        ("invalid UTF-8", b"bad\xff\xfe\xc0name".to_vec(), 7),
        (
            "bidi and zero-width",
            "admin\u{202e}txt.exe\u{202c}\u{200b}".as_bytes().to_vec(),
            8,
        ),
        ("empty", Vec::new(), 9),
        ("a path", b"../../outside/x".to_vec(), 10),
        ("UTF-8", "caf\u{e9} \u{2603}".as_bytes().to_vec(), 11),
    ]
}

/// Whether this stack's driver builds a module with a kernel named
/// `name`. NEO 26 (sid) refuses one whose name is empty or has a control
/// character, a quote, bytes that are not UTF-8 or bidi and zero-width
/// characters (`zeModuleCreate`: 0x70000004, no build log), after IGC
/// compiled it: measured one name at a time beside `twin` (a tab alone
/// and DEL alone were built, a tab then DEL was not).
fn driver_builds(name: &[u8]) -> bool {
    if stack() == Stack::Debian12 {
        return true;
    }
    let Ok(s) = std::str::from_utf8(name) else {
        return false;
    };
    !name.is_empty()
        && !s
            .chars()
            .any(|c| c.is_control() || "\"'\u{202e}\u{202c}\u{200b}".contains(c))
}

/// The kernels a stack's driver builds a module of, their launches.
fn launchable_kernels() -> Vec<(&'static str, Vec<u8>, u64)> {
    hostile_kernels()
        .into_iter()
        .filter(|k| driver_builds(&k.1))
        .collect()
}

/// The capture of the C workload launching each kernel of `kernels` (by
/// the exact bytes of its name: the workload's `named` steps) its count,
/// with xpu-asm-run's `options`, run in the scratch's root, which must
/// exit `status`; the files of the root before it ran (but the capture's).
fn capture_named_module(
    s: &Scratch,
    options: &[&str],
    kernels: &[(&str, Vec<u8>, u64)],
    status: i32,
) -> (Run, BTreeMap<String, String>) {
    let names: Vec<&[u8]> = kernels.iter().map(|k| k.1.as_slice()).collect();
    let spv = spirv_names::assemble(&s.root, "hostile", &names);
    let launched: Vec<(&[u8], u64)> = kernels
        .iter()
        .filter(|k| k.2 > 0)
        .map(|k| (k.1.as_slice(), k.2))
        .collect();
    let (named, counts): (Vec<&[u8]>, Vec<u64>) = launched.into_iter().unzip();
    let steps = spirv_names::named_steps(&s.root.join("names"), "h", &named, &counts);
    let c = Capture::emulating("pvc", &s.out)
        .options(options)
        .program(workload())
        .args(["--via", "dlsym"])
        .module("h", &spv)
        .args(steps)
        .dir(&s.root);
    let before = tree_digests(&s.root, &["out"]);
    let r = c.hermetic().run();
    r.assert_status(status);
    (r, before)
}

/// A report entry's exact name: `name_hex` when it is not UTF-8.
fn exact_name(k: &Value) -> Vec<u8> {
    match k["name_hex"].as_str() {
        Some(h) => (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
            .collect(),
        None => k["name"].as_str().expect("a name").as_bytes().to_vec(),
    }
}

/// A name short enough for a failure's message.
fn shown_name(n: &[u8]) -> String {
    let s = format!("{:?}", String::from_utf8_lossy(n));
    if s.len() > 80 {
        format!("{}… ({} bytes)", &s[..60], n.len())
    } else {
        s
    }
}

/// The figures of a kernel that its name must not change.
const SAME_AS_TWIN: [&str; 10] = [
    "status",
    "isa_source",
    "simd",
    "grf",
    "instructions",
    "spill_bytes",
    "private_memory_bytes",
    "spill_grf_refs",
    "mix",
    "flow",
];

/// The header lines IGC wrote after the exact `//.kernel` line of `name`
/// in the dump `asm`, up to the line that ends the header.
fn fields_after_name(asm: &Path, name: &[u8]) -> Vec<String> {
    let text = std::fs::read(asm).unwrap_or_else(|e| panic!("{}: {e}", asm.display()));
    let mut line = b"//.kernel ".to_vec();
    line.extend_from_slice(name);
    line.push(b'\n');
    assert!(
        text.starts_with(&line),
        "on {}: {} does not start with the //.kernel line of {}",
        stack_info(),
        asm.display(),
        shown_name(name)
    );
    String::from_utf8_lossy(&text[line.len()..])
        .lines()
        .take_while(|l| l.starts_with("//"))
        .map(str::to_string)
        .collect()
}

/// `//.FIELD VALUE` of `fields`, the number.
fn header_number(fields: &[String], field: &str) -> Option<u64> {
    fields
        .iter()
        .find_map(|l| l.strip_prefix(&format!("//.{field}")))
        .and_then(|v| {
            v.trim()
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
}

/// Every launched kernel as its twin, with its exact count; the forging
/// kernel not among them.
fn assert_launched_as_twin(r: &Run, report: &Value, isa: &str) {
    let stack = stack().name();
    let launched: Vec<&Value> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| u(&k["launches"]) > 0)
        .collect();
    let by_name: BTreeMap<Vec<u8>, &Value> = launched.iter().map(|k| (exact_name(k), *k)).collect();
    let want: BTreeMap<Vec<u8>, u64> = launchable_kernels()
        .into_iter()
        .filter(|k| k.2 > 0)
        .map(|k| (k.1, k.2))
        .collect();
    let got: BTreeMap<Vec<u8>, u64> = by_name
        .iter()
        .map(|(n, k)| (n.clone(), u(&k["launches"])))
        .collect();
    assert!(
        got == want && launched.len() == want.len(),
        "[{stack} {isa}] launched kernels and counts: {:?}, not {:?}\n{}",
        got.iter()
            .map(|(n, c)| (shown_name(n), c))
            .collect::<Vec<_>>(),
        want.iter()
            .map(|(n, c)| (shown_name(n), c))
            .collect::<Vec<_>>(),
        r.stderr()
    );
    let twin = by_name[&b"twin".to_vec()];
    assert_eq!(twin["status"], "matched", "[{stack} {isa}] twin: {twin:#}");
    assert!(
        twin["grf"].is_u64() && twin["instructions"].is_u64(),
        "[{stack} {isa}] {twin:#}"
    );
    let occupancy = |k: &Value| k["shapes"][0]["occupancy"].clone();
    assert!(
        occupancy(twin).is_object(),
        "[{stack} {isa}] twin: {twin:#}"
    );
    for (what, name, _) in launchable_kernels().iter().filter(|k| k.2 > 0) {
        let k = by_name[name];
        for field in SAME_AS_TWIN {
            assert_eq!(
                k[field],
                twin[field],
                "[{stack} {isa}] {what} {}: {field} is not twin's",
                shown_name(name)
            );
        }
        assert_eq!(
            occupancy(k),
            occupancy(twin),
            "[{stack} {isa}] {what}: occupancy"
        );
        assert!(
            k["reason"].is_null(),
            "[{stack} {isa}] {what}: {}",
            k["reason"]
        );
    }
}

/// `show` of each launched kernel: its mix and every instruction exactly
/// twin's (no line of a name shown as an instruction), but for the value
/// IGC 2 moves into `null` to mark each kernel of a module apart (its
/// `-hashmovs1`, the kernel's place in the module).
fn assert_shown_as_twin(r: &Run, report: &Value, isa: &str) {
    let out = r.out.to_str().unwrap();
    let listing = |k: &Value| {
        let rank = k["rank"].to_string();
        let s = run_xpu_asm(&["show", out, &rank], &r.out);
        s.assert_status(0);
        let text = s.stdout();
        let from = text
            .find("\nmix: ")
            .unwrap_or_else(|| panic!("no mix in {text}"));
        text[from..]
            .lines()
            .map(|l| match l.find("null<1>:ud    0x") {
                Some(at) if l.contains(" mov ") => format!("{} (a kernel's mark)", &l[..at]),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
    };
    let kernels = report["kernels"].as_array().expect("kernels");
    let twin = kernels
        .iter()
        .find(|k| exact_name(k) == b"twin")
        .expect("twin");
    let want = listing(twin);
    for k in kernels.iter().filter(|k| u(&k["launches"]) > 0) {
        assert_eq!(
            listing(k),
            want,
            "[{} {isa}] show of {}",
            stack().name(),
            shown_name(&exact_name(k))
        );
    }
}

/// `victim` from its own dump, the figures of its header; the forging
/// kernel's file never among its candidates.
fn assert_victim_from_its_own_dump(r: &Run, report: &Value) -> String {
    let stack = stack().name();
    let kernels = report["kernels"].as_array().expect("kernels");
    let victim = kernels
        .iter()
        .find(|k| exact_name(k) == b"victim")
        .expect("victim in the report");
    let asm = victim["asm"].as_str().expect("victim's .asm");
    let fields = fields_after_name(&r.out.join(asm), b"victim");
    assert!(
        fields[0].starts_with("//.platform "),
        "[{stack}] {asm}: {fields:?}"
    );
    assert_eq!(
        header_number(&fields, "instCount"),
        victim["instructions"].as_u64()
    );
    assert_eq!(
        header_number(&fields, "spill size"),
        None,
        "[{stack}] {asm}: {fields:?}"
    );
    assert_eq!(victim["spill_bytes"], Value::Null, "[{stack}] {victim:#}");
    let candidates: Vec<&str> = victim["asm_candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| c["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(candidates, [asm], "[{stack}] victim's candidates");
    format!(
        "victim: grf {} instructions {} spill_bytes {} from {asm}, whose header after `//.kernel victim` is {:?}",
        victim["grf"], victim["instructions"], victim["spill_bytes"], &fields[..fields.len().min(7)]
    )
}

/// With `--all`: the module's kernels and no other, each compiled one
/// not launched as itself (its figures twin's, from the file whose
/// `//.kernel` line holds its name), the forging kernel among them.
fn assert_all_listed(
    r: &Run,
    all: &Value,
    kernels: &[(&str, Vec<u8>, u64)],
    launched: bool,
) -> String {
    let stack = stack().name();
    let listed = all["kernels"].as_array().expect("kernels");
    let mut names: Vec<Vec<u8>> = listed.iter().map(exact_name).collect();
    names.sort();
    let mut want: Vec<Vec<u8>> = kernels.iter().map(|k| k.1.clone()).collect();
    want.sort();
    assert!(
        names == want,
        "[{stack}] --all lists {:?}\n{}",
        names.iter().map(|n| shown_name(n)).collect::<Vec<_>>(),
        r.stderr()
    );
    let not_launched = kernels.iter().filter(|k| !launched || k.2 == 0).count();
    assert_eq!(
        u(&all["unlaunched_compiled"]),
        not_launched as u64,
        "[{stack}]"
    );
    let twin = listed
        .iter()
        .find(|k| exact_name(k) == b"twin")
        .expect("twin");
    let mut forging_entry = String::new();
    for k in listed {
        let name = exact_name(k);
        if launched && u(&k["launches"]) > 0 {
            continue;
        }
        assert_eq!(
            k["status"],
            "not-launched",
            "[{stack}] {}: {k:#}",
            shown_name(&name)
        );
        assert_eq!(u(&k["launches"]), 0);
        for field in ["simd", "grf", "instructions", "spill_bytes"] {
            assert_eq!(
                k[field],
                twin[field],
                "[{stack}] {}: {field}",
                shown_name(&name)
            );
        }
        let asm = k["asm"].as_str().expect("its .asm");
        let fields = fields_after_name(&r.out.join(asm), &name);
        assert!(
            fields[0].starts_with("//.platform "),
            "[{stack}] {asm}: {fields:?}"
        );
        assert_eq!(
            header_number(&fields, "instCount"),
            k["instructions"].as_u64()
        );
        if name == FORGING_NAME {
            forging_entry = serde_json::to_string(&serde_json::json!({
                "name": k["name"],
                "status": k["status"],
                "launches": k["launches"],
                "grf": k["grf"],
                "instructions": k["instructions"],
                "spill_bytes": k["spill_bytes"],
                "asm": k["asm"],
            }))
            .unwrap();
        }
    }
    forging_entry
}

/// Every `--fail-on` rule of `diff` (docs/usage.md), each at its tightest.
fn every_fail_on_rule() -> String {
    let mut rules: Vec<String> = ["spill", "loop-spill", "any", "missing", "new"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    rules.extend(["occupancy-0".into(), "occupancy-0%".into()]);
    // Every field and mix class diff compares, from the collector's own
    // list, and each of a loop's fields.
    use xpu_asm_collector::commands::diff::compare::{fields, LOOP_FIELDS};
    let loop_fields = LOOP_FIELDS.iter().map(|f| format!("loop[1].{f}"));
    for f in fields().into_iter().chain(loop_fields) {
        rules.push(format!("{f}+0"));
        if !f.starts_with("mix.") {
            rules.push(format!("{f}+0%"));
        }
    }
    rules.join(",")
}

/// `diff` of the capture `out` against itself with every `--fail-on` rule
/// passes.
fn assert_diff_of_itself_passes(out: &Path) {
    let out = out.to_str().unwrap();
    let d = run_xpu_asm(
        &["diff", out, out, "--fail-on", &every_fail_on_rule()],
        Path::new(out),
    );
    d.assert_status(0);
}

/// The launchable kernels launched, in `isa` mode: what the test says of
/// them.
fn hostile_names_launched(options: &[&str]) -> Vec<String> {
    let isa = &options.join(" ");
    let s = stack_scratch("names");
    let kernels = launchable_kernels();
    let (r, before) = capture_named_module(&s, options, &kernels, 0);
    let report = r.report();
    let mut said = vec![r.stdout()];
    assert_launched_as_twin(&r, &report, isa);
    assert_shown_as_twin(&r, &report, isa);
    if options.contains(&"dump") {
        said.push(assert_victim_from_its_own_dump(&r, &report));
        let never = kernels.iter().filter(|k| k.2 == 0).count() as u64;
        assert_eq!(u(&report["unlaunched_compiled"]), never, "{}", r.ctx());
        let all = run_xpu_asm(&["collect", s.out.to_str().unwrap(), "--all"], &s.out);
        all.assert_status(0);
        said.push(assert_all_listed(&all, &r.report(), &kernels, true));
        said.push(all.stdout());
    }
    assert_eq!(
        tree_digests(&s.root, &["out"]),
        before,
        "[{}] files outside the capture",
        stack().name()
    );
    assert_diff_of_itself_passes(&s.out);
    said
}

/// IGC's dumps (`--isa dump`): each launched kernel as its twin, `victim`
/// from its own dump, with `--all` the forging kernel as itself.
#[test]
fn hostile_names_from_igcs_dumps() {
    for line in hostile_names_launched(&["--isa", "dump"]) {
        eprintln!("[{}] {line}", stack().name());
    }
}

/// The module's binary (`--isa binary`): each launched kernel as its twin.
#[test]
fn hostile_names_from_the_module_binary() {
    hostile_names_launched(&["--isa", "binary"]);
}

/// IGC's full dumps (`--keep all`; IGC 1's final binaries, `.kernbin`, each
/// naming its kernel by length, among them): each kernel as its twin, the
/// forging kernel as itself.
#[test]
fn hostile_names_from_igcs_full_dumps() {
    hostile_names_launched(&["--isa", "dump", "--keep", "all"]);
}

/// Every name of [`hostile_kernels`] in one module, only `twin` launched:
/// IGC compiles them all, on sid too, where the driver then refuses the
/// module (the program fails, and nothing is launched); with `--all`
/// every kernel of the module is listed as itself, from its own file, the
/// forging kernel and `victim` apart, and no other.
#[test]
fn every_hostile_name_compiled() {
    let s = stack_scratch("names-all");
    let kernels: Vec<(&str, Vec<u8>, u64)> = hostile_kernels()
        .into_iter()
        .map(|(what, name, n)| (what, name.clone(), if name == b"twin" { n } else { 0 }))
        .collect();
    let builds = kernels.iter().all(|k| driver_builds(&k.1));
    let status = if builds { 0 } else { 1 };
    let (r, before) = capture_named_module(&s, &["--isa", "dump"], &kernels, status);
    if !builds {
        assert!(r.stderr().contains("zeModuleCreate("), "{}", r.stderr());
    }
    let all = run_xpu_asm(&["collect", s.out.to_str().unwrap(), "--all"], &s.out);
    all.assert_status(0);
    let forging = assert_all_listed(&all, &r.report(), &kernels, builds);
    eprintln!("[{}] {forging}", stack().name());
    let listed = r.report();
    let entry = |n: &[u8]| {
        listed["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| exact_name(k) == n)
            .cloned()
            .unwrap()
    };
    let (victim, forging) = (entry(b"victim"), entry(FORGING_NAME));
    assert_ne!(victim["asm"], forging["asm"], "{}", r.ctx());
    assert_eq!(victim["spill_bytes"], Value::Null);
    assert_eq!(forging["spill_bytes"], Value::Null);
    assert_eq!(
        tree_digests(&s.root, &["out"]),
        before,
        "[{}] files outside the capture",
        stack().name()
    );
    assert_diff_of_itself_passes(&s.out);
}
