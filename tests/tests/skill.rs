//! The agent skill, `skills/xpu-asm/SKILL.md`: every command it shows (in
//! its `sh` blocks and in its text), run as written with its placeholders
//! bound to the demo (scripts/demo-captures.sh: `CMD ARGS...` the demo's
//! workload, `DIR` a capture of it, `A` and `B` two builds of it), prints
//! what the skill says it prints; a command the skill shows that this test
//! does not check fails it. On both stacks; about 30 s.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_asm_tests::*;

/// The skill's text.
fn skill() -> String {
    let path = workspace_dir().join("skills/xpu-asm/SKILL.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every command the skill shows: each line of its `sh` blocks (not a
/// comment), and each code span of its text that starts with
/// `xpu-asm-run `.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = None;
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            in_sh = match in_sh {
                None => Some(fence.trim() == "sh"),
                Some(_) => None,
            };
            continue;
        }
        match in_sh {
            Some(true) if !line.trim().is_empty() && !line.trim_start().starts_with('#') => {
                out.push(line.trim().to_string())
            }
            Some(_) => {}
            None => out.extend(
                line.split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(|s| s.starts_with("xpu-asm-run "))
                    .map(str::to_string),
            ),
        }
    }
    let mut seen = BTreeSet::new();
    out.retain(|c| seen.insert(c.clone()));
    out
}

/// `s` for a shell, quoted when it needs to be.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `line` with its placeholders bound: `CMD ARGS...` to `cmd`, and the
/// words of `words` (whole words only) to their values.
fn bind(line: &str, cmd: &[String], words: &[(&str, String)]) -> String {
    let line = line.replace(
        "CMD ARGS...",
        &cmd.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "),
    );
    line.split(' ')
        .map(|w| {
            words
                .iter()
                .find(|(k, _)| *k == w)
                .map_or_else(|| w.to_string(), |(_, v)| quote(v))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the commands run in: the demo's folder, the skill's own captures.
struct Bench {
    demo: Demo,
    /// The capture the skill's own command makes (DIR).
    dir: PathBuf,
}

impl Bench {
    /// Runs `line` (a command of the skill, bound) from the demo's folder,
    /// with cargo's xpu-asm-run first in PATH.
    fn run(&self, line: &str, words: &[(&str, String)]) -> Run {
        let bound = bind(line, &self.demo.command(), words);
        let bin = xpu_asm_run();
        let path = format!(
            "{}:{}",
            bin.parent().expect("a folder").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&bound)
            .current_dir(&self.demo.root)
            .env("PATH", path)
            .env_remove("COLUMNS");
        hermetic(&mut cmd);
        let mut r = run(cmd, &self.dir);
        r.shown = format!("{line}\n  bound: {bound}");
        r
    }

    fn dir(&self) -> String {
        self.dir.display().to_string()
    }
}

/// The rows of a table `xpu-asm-run` printed: (rank, launches, name as
/// shown), up to the `total:` line.
fn table_rows(stdout: &str) -> Vec<(u64, u64, String)> {
    stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("#  "))
        .skip(1)
        .take_while(|l| !l.starts_with("total:"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            // The name ends before SIMD, the first number after it.
            let end = 2 + w[2..]
                .iter()
                .position(|x| x.parse::<u32>().is_ok())
                .unwrap_or(1);
            let n = |x: &str| {
                x.parse::<u64>()
                    .unwrap_or_else(|_| panic!("not a count in {l:?}"))
            };
            (n(w[0]), n(w[1]), w[2..end].join(" "))
        })
        .collect()
}

/// The report's kernel named `name` (mangled), which must be one.
fn only_kernel<'a>(report: &'a Value, name: &str) -> &'a Value {
    let ks: Vec<&Value> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["name"] == name)
        .collect();
    assert_eq!(ks.len(), 1, "{name} in {report:#}");
    ks[0]
}

/// The demo's launches of the kernel named `name` (a name of one module).
fn launches_of(demo: &Demo, name: &str) -> u64 {
    let n: Vec<u64> = demo
        .launches()
        .into_iter()
        .filter(|(k, _)| k == name)
        .map(|(_, n)| n)
        .collect();
    assert_eq!(n.len(), 1, "{name} in {:?}", demo.launches());
    n[0]
}

/// Step 1 without a GPU: nothing launched, the command's failure.
fn run_without_device(b: &Bench) {
    let dir = b.demo.root.join("no-device");
    let r = b.run(
        "xpu-asm-run -o DIR -- CMD ARGS...",
        &[("DIR", dir.display().to_string())],
    );
    assert_ne!(r.output.status.code(), Some(0), "{}", r.ctx());
    assert!(r.stdout().contains("no kernel was launched"), "{}", r.ctx());
    assert_eq!(u(&read_report(&dir)["totals"]["kernels"]), 0, "{}", r.ctx());
}

/// Step 1 with `--emulate pvc`: the table's columns, one row per launched
/// kernel, most launched first, with the workload's exact launches and
/// same-named kernels told apart, each with its ISA file; report.json
/// holds them.
fn run_emulated(b: &Bench) -> Vec<(u64, u64, String)> {
    let r = b.run(
        "xpu-asm-run --emulate pvc -o DIR -- CMD ARGS...",
        &[("DIR", b.dir())],
    );
    r.assert_status(0);
    let out = r.stdout();
    let head = out
        .lines()
        .find(|l| l.trim_start().starts_with("#  "))
        .unwrap_or("");
    for col in [
        "launches",
        "kernel",
        "SIMD",
        "GRF",
        "instrs",
        "spill",
        "top shape",
        "occupancy",
        "source",
        "ISA file",
    ] {
        assert!(
            head.contains(col),
            "no column {col:?} in {head:?}\n{}",
            r.ctx()
        );
    }
    let rows = table_rows(&out);
    let mut want = b.demo.launches();
    want.sort_by_key(|x| std::cmp::Reverse(x.1));
    let report = read_report(&b.dir);
    let names: Vec<String> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            let d = k["demangled"].as_str().unwrap_or("");
            match d {
                COMMON => format!(
                    "{d} [module {}]",
                    &k["module_sha256"].as_str().unwrap_or("")[..8]
                ),
                _ => d.to_string(),
            }
        })
        .collect();
    let got: Vec<(u64, String)> = rows.iter().map(|(_, n, name)| (*n, name.clone())).collect();
    let want: Vec<(u64, String)> = want
        .iter()
        .zip(&names)
        .map(|((_, n), name)| (*n, name.clone()))
        .collect();
    assert_eq!(got, want, "{}", r.ctx());
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        (1..=8).collect::<Vec<u64>>()
    );
    for l in out.lines().filter(|l| l.contains(" asm/")) {
        let file = l.split_whitespace().last().unwrap_or("");
        assert!(
            b.dir.join(file).is_file(),
            "{file} is not in {}\n{}",
            b.dir(),
            r.ctx()
        );
        assert!(l.contains(" dump ") || l.contains(" binary "), "{l}");
    }
    assert_eq!(
        out.lines().filter(|l| l.contains(" asm/")).count(),
        rows.len(),
        "{}",
        r.ctx()
    );
    rows
}

/// Step 2: `collect DIR` prints the same table.
fn table_again(b: &Bench, rows: &[(u64, u64, String)]) {
    let r = b.run("xpu-asm-run collect DIR", &[("DIR", b.dir())]);
    r.assert_status(0);
    assert_eq!(table_rows(&r.stdout()), rows, "{}", r.ctx());
}

/// Step 3: `show --json DIR KERNEL`, by name, rank and demangled name:
/// every field the skill names, as report.json and the record have them.
fn show_json(b: &Bench) {
    let report = read_report(&b.dir);
    let capture = std::fs::canonicalize(&b.dir).expect("the capture");
    let rank5 = report["kernels"][4]["name"]
        .as_str()
        .expect("a name")
        .to_string();
    for (sel, name) in [
        (SCALE_V2, SCALE_V2),
        ("5", rank5.as_str()),
        ("main::vector_add", VECTOR_ADD),
        ("mix_mad_loop", "mix_mad_loop"),
    ] {
        let r = b.run(
            "xpu-asm-run show --json DIR KERNEL",
            &[("DIR", b.dir()), ("KERNEL", sel.into())],
        );
        r.assert_status(0);
        let v = r.json();
        let k = only_kernel(&report, name);
        let ctx = format!("{}\nanswer: {v:#}\nentry: {k:#}", r.ctx());
        assert_eq!(
            (v["selector"].as_str(), v["capture"].as_str()),
            (Some(sel), capture.to_str()),
            "{ctx}"
        );
        for f in [
            "rank",
            "name",
            "demangled",
            "module_sha256",
            "api",
            "launches",
            "appended",
            "counts_incomplete",
            "shapes",
            "mix",
        ] {
            assert_eq!(v[f], k[f], "{f}: {ctx}");
        }
        assert_eq!(
            v["origin"],
            k.get("origin").cloned().unwrap_or(Value::Null),
            "{ctx}"
        );
        for f in [
            "simd",
            "grf",
            "instructions",
            "spill_bytes",
            "private_memory_bytes",
            "platform",
            "slm_static_bytes",
        ] {
            assert_eq!(v["figures"][f], k[f], "{f}: {ctx}");
        }
        let launches = launches_of(&b.demo, name);
        assert_eq!(u(&v["launches"]), launches, "{ctx}");
        assert_isa(&b.dir, &v, k, &ctx);
        assert_evidence(&b.dir, &v, k, launches, &ctx);
    }
    // One name of two modules: an error listing both, by rank.
    let r = b.run(
        "xpu-asm-run show --json DIR KERNEL",
        &[("DIR", b.dir()), ("KERNEL", COMMON.into())],
    );
    r.assert_status(1);
    for rank in [3, 7] {
        assert!(
            r.stderr().contains(&format!("#{rank} {COMMON} [module ")),
            "{}",
            r.ctx()
        );
    }
}

/// `isa`: the absolute file, whose `//.kernel` line is the exact name.
fn assert_isa(dir: &Path, v: &Value, k: &Value, ctx: &str) {
    let isa = &v["isa"];
    assert_eq!(
        (isa["status"].as_str(), isa["source"].clone()),
        (Some("matched"), k["isa_source"].clone()),
        "{ctx}"
    );
    let file = PathBuf::from(isa["file"].as_str().expect("isa.file"));
    let copy = dir.join(k["asm_copy"].as_str().expect("asm_copy"));
    assert_eq!(
        Some(file.clone()),
        std::fs::canonicalize(copy).ok(),
        "{ctx}"
    );
    let text = std::fs::read_to_string(&file).expect("isa.file");
    let name = k["name"].as_str().expect("name");
    assert_eq!(
        text.lines().next(),
        Some(format!("//.kernel {name}").as_str()),
        "{ctx}"
    );
    assert_eq!(isa["kernel_line"], k["name"], "{ctx}");
    assert_eq!(
        (isa["asm"].clone(), isa["choice"].clone()),
        (k["asm"].clone(), k["asm_choice"].clone()),
        "{ctx}"
    );
}

/// `evidence`: the one process's record with the exact launches, its
/// module's format (the skill's `scenario` without `origin`), the text.
fn assert_evidence(dir: &Path, v: &Value, k: &Value, launches: u64, ctx: &str) {
    let ps = v["evidence"]["processes"]
        .as_array()
        .expect("evidence.processes");
    assert_eq!(ps.len(), 1, "{ctx}");
    let p = &ps[0];
    assert_eq!(
        (&p["pid"], u(&p["launches"])),
        (&k["pids"][0], launches),
        "{ctx}"
    );
    assert!(
        dir.join(p["record"].as_str().expect("record")).is_file(),
        "{ctx}"
    );
    let format = if k["name"] == "mix_mad_loop" {
        "native"
    } else {
        "spirv"
    };
    assert_eq!(p["module_format"], format, "{ctx}");
    let text = v["evidence"]["text"].as_str().expect("evidence.text");
    assert!(
        text.matches(". ").count() >= 2,
        "three sentences at least: {ctx}"
    );
    let counted = format!(
        "counted {launches} launches of {}",
        k["demangled"].as_str().unwrap_or("")
    );
    for part in [
        counted.as_str(),
        k["asm"].as_str().unwrap_or("?"),
        p["record"].as_str().unwrap_or("?"),
    ] {
        assert!(text.contains(part), "{part:?} not in the text: {ctx}");
    }
}

/// Step 4: `show DIR KERNEL`: the figures, shapes, mix and every
/// instruction of the ISA file.
fn show_text(b: &Bench) {
    let r = b.run(
        "xpu-asm-run show DIR KERNEL",
        &[("DIR", b.dir()), ("KERNEL", SCALE_V2.into())],
    );
    r.assert_status(0);
    let k = only_kernel(&read_report(&b.dir), SCALE_V2).clone();
    let out = r.stdout();
    assert_eq!(
        out.lines().next(),
        Some(format!("#{} {SCALE_V2}", u(&k["rank"])).as_str()),
        "{}",
        r.ctx()
    );
    let launches = format!(
        "launches:     {} ({} appended)",
        u(&k["launches"]),
        u(&k["appended"])
    );
    let mix = format!("mix: {} instructions", u(&k["instructions"]));
    for part in [launches.as_str(), "group size x count", mix.as_str()] {
        assert!(out.contains(part), "{part:?}\n{}", r.ctx());
    }
    let text = std::fs::read_to_string(b.dir.join(k["asm_copy"].as_str().unwrap())).unwrap();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = squash(&out);
    let instructions: Vec<String> = xpu_asm_isa::lines(&text)
        .filter_map(|l| match l {
            xpu_asm_isa::Line::Instruction(i) => Some(squash(i)),
            _ => None,
        })
        .collect();
    assert_eq!(instructions.len() as u64, u(&k["instructions"]));
    for i in &instructions {
        assert!(shown.contains(i.as_str()), "{i:?} not shown\n{}", r.ctx());
    }
}

/// Step 4: `show DIR KERNEL --lines`: the source lines of a `-g` build,
/// whose instructions sum to the kernel's; without `-g` it says so, exit 1.
fn source_lines_ranked(b: &Bench) {
    let line = "xpu-asm-run show DIR KERNEL --lines";
    let g = b.demo.capture_g().display().to_string();
    let r = b.run(line, &[("DIR", g), ("KERNEL", SCALE_V2.into())]);
    r.assert_status(0);
    let k = only_kernel(&read_report(&b.demo.capture_g()), SCALE_V2).clone();
    let out = r.stdout();
    let ranked: Vec<u64> = out
        .lines()
        .skip_while(|l| !l.starts_with("instrs  line  source"))
        .skip(1)
        .map(|l| {
            l.split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .expect("a count")
        })
        .collect();
    assert!(ranked.len() >= 3, "{}", r.ctx());
    assert_eq!(
        ranked.iter().sum::<u64>(),
        u(&k["instructions"]),
        "{}",
        r.ctx()
    );
    let r = b.run(line, &[("DIR", b.dir()), ("KERNEL", SCALE_V2.into())]);
    r.assert_status(1);
    assert!(r.stderr().contains("no line information"), "{}", r.ctx());
}

/// A kernel's name, and its (instructions, spill bytes) in A and in B.
type Pair = (String, (u64, u64), (u64, u64));

/// Each kernel of A paired with B's of the same rank (the demo's builds
/// launch the same kernels as often): (name, instructions, spill bytes).
fn pairs(a: &Path, b: &Path) -> Vec<Pair> {
    let (ra, rb) = (read_report(a), read_report(b));
    let ka = ra["kernels"].as_array().expect("kernels");
    let kb = rb["kernels"].as_array().expect("kernels");
    assert_eq!(ka.len(), kb.len());
    // A name that several modules define is named with its module, as
    // the table names it (A's, then B's where it differs).
    let twice = |k: &Value| ka.iter().filter(|o| o["name"] == k["name"]).count() > 1;
    let module = |k: &Value| k["module_sha256"].as_str().unwrap_or("")[..8].to_string();
    ka.iter()
        .zip(kb)
        .map(|(x, y)| {
            assert_eq!(x["name"], y["name"]);
            let f = |k: &Value| {
                (
                    u(&k["instructions"]),
                    k["spill_bytes"].as_u64().unwrap_or(0),
                )
            };
            let mut name = x["demangled"].as_str().unwrap_or("").to_string();
            if twice(x) {
                name = match (module(x), module(y)) {
                    (a, b) if a == b => format!("{name} [module {a}]"),
                    (a, b) => format!("{name} [module {a} -> {b}]"),
                };
            }
            (name, f(x), f(y))
        })
        .collect()
}

/// Step 5: `diff A B`, its gate and one kernel's text diff.
fn diffs_and_gate(b: &Bench) {
    let ab = [
        ("A", b.dir()),
        ("B", b.demo.capture_o0().display().to_string()),
    ];
    let r = b.run("xpu-asm-run diff A B", &ab);
    r.assert_status(0);
    let last = r
        .stdout()
        .lines()
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    assert!(
        last.starts_with("8 kernels in both, ") && last.ends_with("; 0 only in A, 0 only in B"),
        "{}",
        r.ctx()
    );
    let r = b.run("xpu-asm-run diff A B --fail-on spill,instructions+5%", &ab);
    r.assert_status(1);
    let p = pairs(&b.dir, &b.demo.capture_o0());
    let grew = p.iter().filter(|(_, a, b)| b.0 * 100 > a.0 * 105).count();
    let spills = p.iter().filter(|(_, a, b)| b.1 > a.1).count();
    let lines: Vec<String> = r
        .stderr()
        .lines()
        .filter(|l| l.contains("--fail-on"))
        .map(str::to_string)
        .collect();
    assert!(grew > 0, "the -cl-opt-disable build grows: {p:?}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(": instructions "))
            .count(),
        grew,
        "{}",
        r.ctx()
    );
    assert_eq!(lines.len(), grew + spills, "{}", r.ctx());
    for (name, _, _) in p.iter().filter(|(_, a, b)| b.0 * 100 > a.0 * 105) {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!(": {name}: instructions "))),
            "{name}\n{}",
            r.ctx()
        );
    }
    let mut words = ab.to_vec();
    words.push(("KERNEL", SCALE_V2.into()));
    let r = b.run("xpu-asm-run diff A B KERNEL", &words);
    r.assert_status(0);
    let out = r.stdout();
    let l: Vec<&str> = out.lines().collect();
    assert!(
        l.len() > 3
            && l[0].starts_with("--- ")
            && l[1].starts_with("+++ ")
            && l[2].starts_with("@@ "),
        "{}",
        r.ctx()
    );
}

/// `diff --help` tells of `--fail-on`, and every condition the skill's
/// step 5 names is one `diff` takes (FIELD as `instructions` and
/// `mix.CLASS` as `mix.alu`, N as 1000): its exit is 0 or 1, never 2.
fn diff_conditions(b: &Bench, skill: &str) {
    let r = b.run("xpu-asm-run diff --help", &[]);
    r.assert_status(0);
    assert!(r.stdout().contains("--fail-on <CONDITIONS>"), "{}", r.ctx());
    let para = skill
        .split("\n\n")
        .find(|p| p.contains("Other conditions:"))
        .expect("the conditions");
    let named: Vec<&str> = para.split('`').skip(1).step_by(2).collect();
    let fields = [
        "launches",
        "simd",
        "grf",
        "instructions",
        "spill_bytes",
        "mix.CLASS",
    ];
    let conditions: Vec<String> = named
        .iter()
        .filter(|c| !c.starts_with("xpu-asm-run") && !fields.contains(c))
        .map(|c| c.replace("FIELD", "instructions").replace('N', "1000"))
        .chain(
            fields
                .iter()
                .map(|f| format!("{}+1000", f.replace("CLASS", "alu"))),
        )
        .collect();
    assert!(conditions.len() >= 11, "{para}");
    let a = b.dir().to_string();
    let o0 = b.demo.capture_o0().display().to_string();
    for c in conditions {
        let mut cmd = Command::new(xpu_asm_run());
        cmd.args(["diff", a.as_str(), o0.as_str(), "--fail-on", c.as_str()]);
        hermetic(&mut cmd);
        let r = run(cmd, &b.dir);
        let code = r.output.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "{c} is refused\n{}",
            r.ctx()
        );
    }
}

#[test]
fn every_command_of_the_skill_prints_what_it_says() {
    let tmp = stack_temp_dir("skill");
    let demo = demo(tmp.path());
    let b = Bench {
        dir: tmp.path().join("cap"),
        demo,
    };
    let text = skill();
    assert!(
        text.starts_with("---\nname: xpu-asm\ndescription: "),
        "the skill's front matter"
    );
    // In the skill's order: the capture first, the others read it.
    let checks: [&str; 10] = [
        "xpu-asm-run -o DIR -- CMD ARGS...",
        "xpu-asm-run --emulate pvc -o DIR -- CMD ARGS...",
        "xpu-asm-run collect DIR",
        "xpu-asm-run show --json DIR KERNEL",
        "xpu-asm-run show DIR KERNEL",
        "xpu-asm-run show DIR KERNEL --lines",
        "xpu-asm-run diff A B",
        "xpu-asm-run diff A B --fail-on spill,instructions+5%",
        "xpu-asm-run diff --help",
        "xpu-asm-run diff A B KERNEL",
    ];
    let shown = commands(&text);
    let unchecked: Vec<&String> = shown
        .iter()
        .filter(|c| !checks.contains(&c.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "the skill shows commands this test does not run: {unchecked:?}"
    );
    run_without_device(&b);
    let rows = run_emulated(&b);
    table_again(&b, &rows);
    show_json(&b);
    show_text(&b);
    source_lines_ranked(&b);
    diffs_and_gate(&b);
    diff_conditions(&b, &text);
    let missed: Vec<&&str> = checks
        .iter()
        .filter(|c| !shown.iter().any(|s| s == *c))
        .collect();
    assert!(
        missed.is_empty(),
        "commands this test runs that the skill no longer shows: {missed:?}"
    );
}
