//! IGC 1's light dumps (`XPU_ASM_IGC`, docs/performance.md): on the Debian
//! 12 stack xpu-asm-run has IGC 1 write only the `.asm` and `.dat` files
//! (`IGC_EnableVISAOutput`, `IGC_EnableVISABinary`,
//! `IGC_EnableVISADumpCommonISA`) instead of its full dumps, the
//! interposer writes each SPIR-V module's `.spv` under IGC's name, and the
//! collector tells the attempt IGC kept from the module's binary instead of
//! IGC's `.kernbin`. On sid (IGC 2) nothing of this happens.
//!
//! Every capture runs the C workload under `--emulate pvc`: modules a, b
//! and mix (`mix_spill` spills, and IGC 1 compiles it twice: a first
//! attempt and a retry with different code).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use xpu_asm_tests::record::read::ProcessRecord;
use xpu_asm_tests::*;

/// Launches: every count distinct.
const STEPS: [&str; 5] = [
    "imm:a:scale:7",
    "imm:a:scale_v2:5",
    "imm:b:only_in_b:2",
    "imm:m:mix_spill:3",
    "imm:m:mix_slm:4",
];

/// The workload's arguments: modules a, b and mix built with `options`.
fn dump_workload_args(options: &str, flags: &str) -> Vec<String> {
    let mut args: Vec<String> = vec!["--via".into(), "ddi".into()];
    for (m, src) in [("a", "a"), ("b", "b"), ("m", "mix")] {
        args.push("--module".into());
        args.push(format!("{m}={}", spirv_with(src, options).display()));
    }
    if !flags.is_empty() {
        args.push("--build-flags".into());
        args.push(flags.into());
    }
    args.extend(STEPS.iter().map(|s| s.to_string()));
    args
}

/// `xpu-asm-run --isa dump --emulate pvc -o DIR/TAG -- workload ...`,
/// with `env` set (IGC's dumps on both stacks: sid's default is `binary`).
fn capture_dumped(dir: &Path, tag: &str, options: &str, env: &[(&str, &str)]) -> Run {
    capture_via(dir, tag, options, env, &[])
}

/// [`capture_dumped`] of `-- PREFIX... workload ...` (`env VAR=1`: a variable the
/// command sets itself).
fn capture_via(dir: &Path, tag: &str, options: &str, env: &[(&str, &str)], prefix: &[&str]) -> Run {
    let out = dir.join(tag);
    Capture::new(&out)
        .options(["--isa", "dump", "--emulate", "pvc", "--quiet"])
        .args(prefix)
        .arg(workload())
        .args(dump_workload_args(options, options))
        .dir(dir)
        .hermetic()
        .envs(env.iter().copied())
        .run_ok()
}

/// The default capture (`DIR/TAG`) and one with IGC's full dumps
/// (`DIR/TAG-full`) of the workload built with `options`, their reports
/// checked alike ([`comparable`]).
fn light_and_full(dir: &Path, tag: &str, options: &str) -> (Run, Run) {
    let light = capture_dumped(dir, tag, options, &[]);
    let full = capture_dumped(
        dir,
        &format!("{tag}-full"),
        options,
        &[("IGC_ShaderDumpEnable", "1")],
    );
    assert_eq!(
        comparable(&light.report()),
        comparable(&full.report()),
        "{}\n{}",
        light.ctx(),
        full.ctx()
    );
    (light, full)
}

/// A report's kernels and totals, with what differs from run to run (the
/// dump folder's name, pids) taken out.
fn comparable(report: &Value) -> Value {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "pids")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            Value::String(s) => Value::String(without_dump_folders(s)),
            other => other.clone(),
        }
    }
    serde_json::json!({
        "kernels": strip(&report["kernels"]),
        "totals": strip(&report["totals"]),
        "unlaunched_compiled": strip(&report["unlaunched_compiled"]),
    })
}

/// `s` with each `dumps/<folder>/` made `dumps/P/`.
fn without_dump_folders(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("dumps/") {
        out.push_str(&rest[..i + 6]);
        rest = &rest[i + 6..];
        match rest.find('/') {
            Some(j) => {
                out.push('P');
                rest = &rest[j..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

fn setting<'a>(rec: &'a ProcessRecord, name: &str) -> Option<(&'a str, bool)> {
    rec.env
        .iter()
        .find(|e| e.name == name)
        .map(|e| (e.value.as_str(), e.by_user))
}

/// The files of a dump folder, by name.
fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("entry").file_name().into_string().expect("ASCII"))
        .collect()
}

/// The workload run under the interposer alone (`LD_PRELOAD`, nothing
/// collected or pruned), with `XPU_ASM_IGC=1` or without: its one dump
/// folder.
fn traced_dumps(out: &Path, light: bool) -> PathBuf {
    let args = dump_workload_args("", "");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = workload_command(out, &args);
    hermetic(&mut cmd);
    cmd.envs(neo_env_for("pvc"));
    trace(&mut cmd, out);
    if light {
        cmd.env(xpu_asm_record::IGC_ENV, "1");
    }
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "{}",
        describe(&shown, &output, out)
    );
    dump_dir(out, &only_record(out))
}

/// With `XPU_ASM_IGC=1`, IGC 1 writes exactly the `.asm` and `.dat` files
/// of its full dumps (the same names; the `.dat` byte for byte, the `.asm`
/// but for the options line), and the interposer each module's `.spv`,
/// byte for byte and name for name what IGC's full dumps have. The record
/// says which variables did it.
#[test]
fn light_dumps_are_the_asm_and_dat_of_the_full_ones_and_the_interposers_spv() {
    require_stack();
    let tmp = temp_dir("igc1-files");
    let light = traced_dumps(&tmp.path().join("light"), true);
    let full = traced_dumps(&tmp.path().join("full"), false);
    let (l, f) = (file_names(&light), file_names(&full));
    let rec = only_record(&tmp.path().join("light"));
    if stack() == Stack::Sid {
        // The variable is xpu-asm-run's to set, and it never does on sid
        // (see `xpu_asm_run_says_which_igc`): set by hand, the interposer
        // obeys it, and IGC 2 writes its .asm files alone.
        assert!(
            l.iter()
                .all(|n| n.ends_with(".asm") || n.ends_with(".dat") || n.ends_with(".spv")),
            "{l:?}"
        );
    }
    let want: BTreeSet<String> = f
        .iter()
        .filter(|n| n.ends_with(".asm") || n.ends_with(".dat") || n.ends_with(".spv"))
        .cloned()
        .collect();
    if stack() == Stack::Debian12 {
        assert_eq!(l, want, "light dumps in {}", light.display());
        // Three modules, five kernels, mix_spill twice (a retry).
        assert_eq!(l.iter().filter(|n| n.ends_with(".spv")).count(), 3, "{l:?}");
        assert_eq!(
            l.iter().filter(|n| n.contains("_1_simd")).count(),
            2,
            "{l:?}"
        );
        assert!(
            f.iter().any(|n| n.ends_with(".ll")) && f.iter().any(|n| n.ends_with(".kernbin")),
            "{f:?}"
        );
        for n in &l {
            let (a, b) = (
                std::fs::read(light.join(n)).expect("read"),
                std::fs::read(full.join(n)).expect("read"),
            );
            if n.ends_with(".asm") {
                let differing: Vec<(&str, &str)> = std::str::from_utf8(&a)
                    .expect("text")
                    .lines()
                    .zip(std::str::from_utf8(&b).expect("text").lines())
                    .filter(|(x, y)| x != y)
                    .collect();
                assert!(
                    differing.len() <= 1
                        && differing
                            .iter()
                            .all(|(x, _)| x.starts_with("//.full_options")),
                    "{n}: {differing:?}"
                );
            } else {
                assert!(a == b, "{n} differs from IGC's full dump");
            }
        }
        for v in [
            "IGC_EnableVISAOutput",
            "IGC_EnableVISABinary",
            "IGC_EnableVISADumpCommonISA",
        ] {
            assert_eq!(setting(&rec, v), Some(("1", false)), "{v}: {:#?}", rec.env);
        }
        assert_eq!(
            setting(&rec, "IGC_ShaderDumpEnable"),
            None,
            "{:#?}",
            rec.env
        );
    }
}

/// xpu-asm-run passes `XPU_ASM_IGC=1` on the Debian 12 stack (IGC 1 is the
/// only IGC there) and nothing on sid (IGC 2); with `--keep all` or
/// `--isa binary` never.
#[test]
fn xpu_asm_run_says_which_igc() {
    require_stack();
    let tmp = temp_dir("igc1-env");
    let env_of = |tag: &str, extra: &[&str]| -> Option<String> {
        let out = tmp.path().join(tag);
        let mut cmd = Command::new(xpu_asm_run());
        cmd.args(["--quiet"])
            .args(extra)
            .arg("-o")
            .arg(&out)
            .args(["--", "env"]);
        hermetic(&mut cmd);
        let o = run_with_timeout(&mut cmd);
        assert!(
            o.status.success(),
            "{}",
            describe("xpu-asm-run -- env", &o, &out)
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("XPU_ASM_IGC=").map(str::to_string))
    };
    let want = (stack() == Stack::Debian12).then(|| "1".to_string());
    assert_eq!(env_of("default", &[]), want);
    assert_eq!(env_of("all", &["--keep", "all"]), None);
    assert_eq!(env_of("binary", &["--isa", "binary"]), None);
}

/// The default capture (light dumps on Debian 12) reports what IGC's full
/// dumps report (`IGC_ShaderDumpEnable=1` set by the user): the same
/// kernels matched, the same `.asm` chosen, the same counts, SIMD, GRF,
/// instructions, mix, flow, the same verdicts on each attempt. mix_spill's
/// two attempts: the module binary tells the one that ran, as `.kernbin`
/// does.
#[test]
fn the_light_capture_reports_what_the_full_dumps_report() {
    require_stack();
    let tmp = temp_dir("igc1-report");
    let (light, _) = light_and_full(tmp.path(), "light", "");
    let lr = light.report();
    assert_eq!(lr["totals"]["matched"], 5, "{}", light.ctx());
    let recs = records(&tmp.path().join("light"));
    assert_eq!(
        recs.iter()
            .all(|r| setting(r, "IGC_ShaderDumpEnable").is_none()),
        stack() == Stack::Debian12,
        "{}",
        light.ctx()
    );
    let spill = lr["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .find(|k| k["name"] == "mix_spill")
        .expect("mix_spill");
    let verdicts: Vec<(u64, Value)> = spill["asm_candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            (
                c["retry"].as_u64().expect("retry"),
                c["final_binary"].clone(),
            )
        })
        .collect();
    if stack() == Stack::Debian12 {
        // IGC 1 kept its first attempt at SIMD32 or the retry; exactly one
        // is the code that ran, and it is the one chosen.
        assert_eq!(verdicts.len(), 2, "{spill:#}");
        let kept: Vec<u64> = verdicts
            .iter()
            .filter(|(_, v)| v == &Value::Bool(true))
            .map(|(r, _)| *r)
            .collect();
        assert_eq!(kept.len(), 1, "{spill:#}");
        assert!(verdicts.iter().all(|(_, v)| v.is_boolean()), "{spill:#}");
        assert!(
            spill["asm"]
                .as_str()
                .is_some_and(|a| a.contains(if kept[0] == 1 { "_1_simd32" } else { "asm" })),
            "{spill:#}"
        );
        assert!(
            spill["asm_choice"]
                .as_str()
                .is_some_and(|w| w.contains("byte-identical to the final binary")),
            "{spill:#}"
        );
    }
}

/// The kernels the workload launches, as the report names them.
const LAUNCHED: [&str; 5] = ["mix_slm", "mix_spill", "only_in_b", "scale", "scale_v2"];

fn report_kernel<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no kernel {name} in {report:#}"))
}

/// `xpu-asm-run show DIR KERNEL --lines`: its output.
fn show_lines(out: &Path, name: &str) -> String {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("show").arg(out).args([name, "--lines"]);
    hermetic(&mut cmd);
    let o = run_with_timeout(&mut cmd);
    assert!(
        o.status.success(),
        "{}",
        describe(
            &format!("xpu-asm-run show {} {name} --lines", out.display()),
            &o,
            out
        )
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `xpu-asm-run collect DIR` (with `env` set): the report.
fn collect_again(out: &Path, env: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.args(["collect", "--quiet"]).arg(out);
    hermetic(&mut cmd);
    cmd.envs(env.iter().copied());
    let r = run(cmd, out);
    r.assert_status(0);
    r.report()
}

/// The rebuild folders of a capture (`dumps/rebuild-*`), with their
/// markers.
fn rebuild_folders(out: &Path) -> BTreeMap<String, Value> {
    file_names(&out.join("dumps"))
        .into_iter()
        .filter(|n| n.starts_with("rebuild-"))
        .map(|n| {
            let marker = out.join("dumps").join(&n).join("xpu-asm-rebuild.json");
            let text = std::fs::read_to_string(&marker)
                .unwrap_or_else(|e| panic!("{}: {e}", marker.display()));
            (n, serde_json::from_str(&text).expect("a JSON marker"))
        })
        .collect()
}

fn source_warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("source lines"))
        .map(str::to_string)
        .collect()
}

fn has_lines(k: &Value) -> bool {
    k["source"]["lines"]
        .as_array()
        .is_some_and(|l| !l.is_empty())
}

/// A light capture of `-g` builds (Debian 12) has exactly the source lines
/// of IGC's full dumps (`IGC_ShaderDumpEnable=1` set by the user): each
/// launched module with line information compiled again once, after the
/// run, with the full dumps, and each kernel's `.asm` taken from it, its
/// code being the code that ran. The same report, the same `show --lines`,
/// no warning; `collect` again compiles nothing again. On sid (IGC 2) the
/// default capture has IGC's full dumps, their source lines, and nothing
/// is compiled again.
#[test]
fn a_light_capture_of_g_builds_has_the_full_dumps_source_lines() {
    require_stack();
    let tmp = temp_dir("igc1-lines");
    let (light, full) = light_and_full(tmp.path(), "g", "-g");
    let lr = light.report();
    assert_eq!(
        source_warnings(&lr),
        Vec::<String>::new(),
        "{}",
        light.ctx()
    );
    assert_eq!(lr["totals"]["matched"], 5, "{}", light.ctx());
    for name in LAUNCHED {
        assert!(
            has_lines(report_kernel(&lr, name)),
            "{name}: {}",
            light.ctx()
        );
        let (l, f) = (show_lines(&light.out, name), show_lines(&full.out, name));
        assert_eq!(l, f, "show {name} --lines");
        assert!(l.contains("kernels_"), "{l}");
    }
    let rebuilt = rebuild_folders(&light.out);
    assert_eq!(rebuild_folders(&full.out).len(), 0);
    match stack() {
        Stack::Debian12 => {
            // One compile of the three modules, each built; every launched
            // kernel's .asm is from it.
            assert_eq!(rebuilt.len(), 1, "{rebuilt:#?}");
            let (folder, marker) = rebuilt.iter().next().expect("one");
            let modules = marker["modules"].as_array().expect("modules");
            assert_eq!(modules.len(), 3, "{marker:#}");
            assert!(
                modules
                    .iter()
                    .all(|m| m["status"] == "built" && m["build_flags"] == "-g"),
                "{marker:#}"
            );
            for name in LAUNCHED {
                let asm = report_kernel(&lr, name)["asm"]
                    .as_str()
                    .expect("asm")
                    .to_string();
                assert!(
                    asm.starts_with(&format!("dumps/{folder}/")),
                    "{name}: {asm}"
                );
            }
        }
        Stack::Sid => assert_eq!(rebuilt.len(), 0, "{rebuilt:#?}"),
    }
    // Collecting again: the same report, the same compile, nothing more.
    let listed = file_names(&light.out.join("dumps"));
    let marker_time = |r: &BTreeMap<String, Value>| -> Vec<std::time::SystemTime> {
        r.keys()
            .map(|n| {
                let p = light.out.join("dumps").join(n).join("xpu-asm-rebuild.json");
                std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .expect("marker")
            })
            .collect()
    };
    let before = marker_time(&rebuilt);
    let again = collect_again(&light.out, &[]);
    assert_eq!(comparable(&again), comparable(&lr));
    assert_eq!(source_warnings(&again), Vec::<String>::new());
    assert_eq!(file_names(&light.out.join("dumps")), listed);
    assert_eq!(rebuild_folders(&light.out), rebuilt);
    assert_eq!(marker_time(&rebuilt), before);
}

/// Kernels whose code compiled again is not the code that ran keep their
/// light `.asm` and are reported without source lines, and a warning names
/// them and why: here the command sets an IGC variable itself (`env
/// IGC_ForceOCLSIMDWidth=16 workload`), which the compile after the run
/// cannot see, so IGC compiled SIMD16 code in the run and SIMD32 code
/// after it. `collect` again says the same. On sid IGC 2's full dumps
/// have the SIMD16 code's source lines, and nothing is compiled again.
#[test]
fn kernels_whose_code_compiled_again_differs_keep_their_light_asm_and_say_why() {
    require_stack();
    let tmp = temp_dir("igc1-differs");
    let prefix = ["env", "IGC_ForceOCLSIMDWidth=16"];
    let c = capture_via(tmp.path(), "simd16", "-g", &[], &prefix);
    let r = c.report();
    assert_eq!(r["totals"]["matched"], 5, "{}", c.ctx());
    for name in LAUNCHED {
        assert_eq!(report_kernel(&r, name)["simd"], 16, "{name}: {}", c.ctx());
    }
    let warned = source_warnings(&r);
    let rebuilt = rebuild_folders(&c.out);
    match stack() {
        Stack::Debian12 => {
            assert_eq!(warned.len(), 1, "{warned:#?}");
            let w = &warned[0];
            assert!(
                w.contains(&format!("kernels {}:", LAUNCHED.join(", ")))
                    && w.contains("gave other code than the code that ran")
                    && w.contains("IGC_ShaderDumpEnable=1"),
                "{w}"
            );
            assert_eq!(rebuilt.len(), 1, "{rebuilt:#?}");
            let folder = rebuilt.keys().next().expect("one");
            for name in LAUNCHED {
                let k = report_kernel(&r, name);
                assert!(k["source"].is_null(), "{k:#}");
                let asm = k["asm"].as_str().expect("asm");
                assert!(!asm.contains(folder.as_str()), "{name}: {asm}");
                assert!(
                    k["asm_choice"]
                        .as_str()
                        .is_some_and(|w| w.contains("is the final binary IGC emitted")),
                    "{k:#}"
                );
            }
            let again = collect_again(&c.out, &[]);
            assert_eq!(source_warnings(&again), warned);
            assert_eq!(comparable(&again), comparable(&r));
            assert_eq!(rebuild_folders(&c.out), rebuilt);
        }
        Stack::Sid => assert_sid_dumps_have_the_lines(&c, &r, &warned),
    }
}

/// A compile after the run that fails loses nothing: the light result,
/// and a warning with the driver's words and the fix. Here the loader
/// finds no driver for xpu-asm-run (`ZE_ENABLE_ALT_DRIVERS` naming none)
/// while the command, started through `env -u`, has the real one. A failed
/// compile leaves nothing behind, so `collect` again where the driver is
/// compiles the modules and gives their source lines. On sid: nothing is
/// compiled again, IGC 2's dumps have the lines.
#[test]
fn a_failed_compile_again_loses_nothing_and_collect_tries_again() {
    require_stack();
    let tmp = temp_dir("igc1-no-driver");
    let no_driver = [("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_intel_gpu.so.1")];
    let prefix = ["env", "-u", "ZE_ENABLE_ALT_DRIVERS"];
    let c = capture_via(tmp.path(), "g", "-g", &no_driver, &prefix);
    let r = c.report();
    assert_eq!(r["totals"]["matched"], 5, "{}", c.ctx());
    let warned = source_warnings(&r);
    let figures = |r: &Value| -> Vec<Value> {
        LAUNCHED
            .iter()
            .map(|n| {
                let k = report_kernel(r, n);
                serde_json::json!([
                    k["launches"],
                    k["simd"],
                    k["grf"],
                    k["instructions"],
                    k["spill_bytes"]
                ])
            })
            .collect()
    };
    match stack() {
        Stack::Debian12 => {
            assert_eq!(warned.len(), 1, "{warned:#?}");
            let w = &warned[0];
            assert!(
                w.contains("compiling the module again with them failed: zeInit failed")
                    && w.contains(&format!("xpu-asm-run collect {}", c.out.display()))
                    && w.contains("IGC_ShaderDumpEnable=1"),
                "{w}"
            );
            assert_eq!(rebuild_folders(&c.out).len(), 0);
            for name in LAUNCHED {
                assert!(
                    report_kernel(&r, name)["source"].is_null(),
                    "{name}: {}",
                    c.ctx()
                );
            }
            let again = collect_again(&c.out, &[]);
            assert_eq!(source_warnings(&again), Vec::<String>::new(), "{again:#}");
            assert_eq!(rebuild_folders(&c.out).len(), 1);
            for name in LAUNCHED {
                assert!(has_lines(report_kernel(&again, name)), "{name}: {again:#}");
            }
            assert_eq!(figures(&again), figures(&r));
        }
        Stack::Sid => assert_sid_dumps_have_the_lines(&c, &r, &warned),
    }
}

/// A job's light capture (two ranks, `mpirun`, the default `--isa`): the
/// rank that collects compiles the module both ranks built once, and the
/// kernel has its source lines. On sid the default takes every kernel's
/// ISA from its module binary (IGC 2 alone): no dumps, no compile again,
/// the source lines from the binary's DWARF line tables.
#[test]
fn a_jobs_light_capture_compiles_each_module_once() {
    require_stack();
    let tmp = temp_dir("igc1-job");
    let out = tmp.path().join("job");
    let mut cmd = xpu_asm_tests::jobs::command("mpirun.openmpi");
    xpu_asm_tests::jobs::open_mpi_session_dir(&mut cmd, &tmp.path().join("ompi"));
    cmd.current_dir(tmp.path())
        .args(["--oversubscribe", "-np", "2"])
        .arg(xpu_asm_run())
        .args(["--emulate", "pvc", "--quiet", "-o"])
        .arg(&out)
        .arg("--")
        .arg(workload())
        .args(["--via", "ddi", "--module"])
        .arg(format!("a={}", spirv_with("a", "-g").display()))
        .args(["--build-flags", "-g", "imm:a:scale:5"]);
    let r = run(cmd, &out);
    r.assert_status(0);
    let report = r.report();
    let scale = report_kernel(&report, "scale");
    assert_eq!(scale["launches"], 10, "{}", r.ctx());
    assert_eq!(
        source_warnings(&report),
        Vec::<String>::new(),
        "{}",
        r.ctx()
    );
    let rebuilt = rebuild_folders(&out);
    let modules: Vec<usize> = rebuilt
        .values()
        .map(|m| m["modules"].as_array().map_or(0, Vec::len))
        .collect();
    match stack() {
        Stack::Debian12 => {
            assert_eq!(modules, [1], "{rebuilt:#?}");
            assert!(has_lines(scale), "{}", r.ctx());
            let asm = scale["asm"].as_str().expect("asm");
            let folder = rebuilt.keys().next().expect("one");
            assert!(asm.starts_with(&format!("dumps/{folder}/")), "{asm}");
        }
        Stack::Sid => {
            assert_eq!(modules, Vec::<usize>::new(), "{rebuilt:#?}");
            assert_eq!(report["isa"], "binary", "{}", r.ctx());
            assert_eq!(scale["isa_source"], "module-binary", "{scale:#}");
            assert!(has_lines(scale), "{scale:#}");
        }
    }
}

/// On sid (IGC 2's dumps, `--isa dump`): no warning about source lines,
/// nothing compiled again, every launched kernel with its lines.
fn assert_sid_dumps_have_the_lines(c: &Run, r: &Value, warned: &[String]) {
    assert_eq!(warned, Vec::<String>::new());
    assert_eq!(rebuild_folders(&c.out).len(), 0);
    for name in LAUNCHED {
        assert!(has_lines(report_kernel(r, name)), "{name}: {}", c.ctx());
    }
}
