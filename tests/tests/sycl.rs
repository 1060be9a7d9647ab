//! The real SYCL runtime: prebuilt SYCL kernels from PyPI (dpctl 0.15.0 on the
//! oneAPI 2024.0 DPC++ runtime, in the venv of scripts/sycl-venv.sh) run
//! through the SYCL Level Zero backend on NEO's no-hardware mode. The
//! workload, tests/sycl/ops.py, calls a few dpctl.tensor operations a known
//! number of times; every kernel the SYCL runtime launched must be recorded
//! with its exact launch count, and have its `.asm` with the exact `//.kernel`
//! line.
//!
//! How the 2024.0 runtime reaches Level Zero (seen with `LD_DEBUG=bindings`
//! and the plugin's `ZE_DEBUG=1`): its plugin `libpi_level_zero.so`, which
//! libsycl `dlopen`s, links `libze_loader.so.1` (DT_NEEDED) and calls the
//! exported `ze*` functions through its PLT; it does not use DDI tables. The
//! loader thus comes in with a `dlopen` and sits outside the global scope,
//! where `dlsym(RTLD_NEXT)` from the preloaded interposer cannot find it,
//! while the plugin's and the loader's own PLT calls bind to the interposer.
//! By default the plugin appends to immediate command lists;
//! `SYCL_PI_LEVEL_ZERO_USE_IMMEDIATE_COMMANDLISTS=0` makes it use regular
//! lists, each executed once (`zeCommandQueueExecuteCommandLists`) and then
//! reset for reuse. Both are tested.
//!
//! Tests: the records the interposer leaves, once per kind of command list;
//! `xpu-asm-run --json`'s `report.json`; the SYCL persistent cache kept on
//! (second run: native modules, ISA from their binaries), which is also the
//! cross-check of IGA's disassembly against IGC's `.asm` on every kernel;
//! and `--isa binary`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use xpu_asm_tests::*;

/// One dpctl.tensor operation of ops.py and the kernels one call of it
/// launches, in order. The names are the `_ZTS` type names SYCL gives kernels,
/// fixed by the dpctl 0.15.0 wheel (and so by the pinned venv). What keeps
/// them exact is in ops.py's docstring: float32 inputs, all contiguous and of
/// one shape, `N_ELEMS` = 65536 elements.
struct Op {
    name: &'static str,
    kernels: &'static [&'static str],
}

const OPS: [Op; 5] = [
    // dpt.add(x, y): two contiguous float32 arrays of one shape, so dpctl's
    // binary elementwise dispatch takes the contiguous kernel (4-wide vectors,
    // 2 per work-item): one parallel_for per call. The result is a plain USM
    // allocation (no kernel).
    Op {
        name: "add",
        kernels: &["_ZTSN5dpctl6tensor7kernels3add17add_contig_kernelIfffLj4ELj2EEE"],
    },
    // dpt.sin(x): the unary contiguous kernel, one per call.
    Op {
        name: "sin",
        kernels: &["_ZTSN5dpctl6tensor7kernels3sin17sin_contig_kernelIffLj4ELj2EEE"],
    },
    // dpt.sum(x, dtype=float32): a 1-D contiguous reduction to one element.
    // dpctl (kernels/reductions.hpp) reduces it with work-groups that each
    // add their partial sum atomically into the result, so it first sets the
    // result to the identity with sycl::queue::fill<float>, which the DPC++
    // runtime implements as its own kernel, `__usmfill<float>` (only 1-byte
    // patterns become a memset). Then the one atomic reduction kernel, however
    // many work-groups. Two launches per call. (A reduction shorter than a
    // work-group would take `sum_reduction_seq_contig_krn` alone, no fill:
    // that is why ops.py uses 65536 elements. Without dtype=float32 the
    // accumulator would be float64 on this fp64 device: other names.)
    Op {
        name: "sum",
        kernels: &[
            "_ZTS9__usmfillIfE",
            "_ZTSN5dpctl6tensor7kernels54sum_reduction_axis1_over_group_with_atomics_contig_krnIffSt4plusIfENS0_12offset_utils26TwoOffsets_CombinedIndexerINS5_16Strided1DIndexerENS5_11NoOpIndexerEEES8_EE",
        ],
    },
    // dpt.where(mask, x, y): bool mask, two float32 arrays, all contiguous
    // and of one shape, x and y of one dtype (no cast): the contiguous where
    // kernel, one per call.
    Op {
        name: "where",
        kernels: &["_ZTSN5dpctl6tensor7kernels6search19where_contig_kernelIfbLi4ELi2EEE"],
    },
    // dpt.astype(x, int32): a contiguous source, so the contiguous
    // copy-and-cast kernel float -> int, one per call.
    Op {
        name: "astype",
        kernels: &["_ZTSN5dpctl6tensor7kernels13copy_and_cast23copy_cast_contig_kernelIfiLj2ELj4EEE"],
    },
];
// Nothing else launches a kernel: creating the queue, dpt.asarray from NumPy
// (a host-to-device zeCommandListAppendMemoryCopy) and q.wait() do not. So
// the expected kernels below are all the kernels of the run, and a kernel
// recorded beyond them is an error.

/// Calls per operation: all different, so that a kernel counted for the
/// wrong operation shows.
const TIMES: [(&str, u64); 5] = [
    ("add", 2),
    ("sin", 3),
    ("sum", 4),
    ("where", 5),
    ("astype", 6),
];

/// `ops.py` arguments for [`TIMES`].
fn ops_args_distinct() -> Vec<String> {
    let mut a = vec!["1".to_string()];
    a.extend(TIMES.iter().map(|(op, n)| format!("{op}={n}")));
    a
}

/// Calls per operation when ops.py is given only `N`.
fn times_all(n: u64) -> Vec<(&'static str, u64)> {
    OPS.iter().map(|op| (op.name, n)).collect()
}

/// Kernel name -> launches that `times` calls must make: each call of an
/// operation launches each of its kernels once.
fn expected_kernel_counts(times: &[(&str, u64)]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (name, n) in times {
        let op = OPS
            .iter()
            .find(|o| o.name == *name)
            .unwrap_or_else(|| panic!("no operation {name:?} in OPS"));
        for k in op.kernels {
            *m.entry(k.to_string()).or_insert(0) += n;
        }
    }
    m
}

/// The `called <op> <times>` lines ops.py prints for `times`.
fn expected_stdout(times: &[(&str, u64)]) -> Vec<String> {
    times
        .iter()
        .map(|(op, n)| format!("called {op} {n}"))
        .collect()
}

fn ops_py() -> PathBuf {
    workspace_dir().join("tests/sycl/ops.py")
}

/// What the SYCL runtime of the venv needs besides NEO's variables: the
/// wheels carry no RPATH, and the Level Zero GPU is the device. Variables
/// that would change what runs are removed.
fn sycl_env(cmd: &mut Command, venv: &Path) {
    cmd.env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for v in [
        "PYTHONPATH",
        "PYTHONHOME",
        "SYCL_DEVICE_FILTER",
        "SYCL_PI_LEVEL_ZERO_USE_IMMEDIATE_COMMANDLISTS",
        "SYCL_PI_LEVEL_ZERO_BATCH_SIZE",
        "SYCL_PI_TRACE",
        "ZE_DEBUG",
        "ZE_ENABLE_TRACING_LAYER",
        "ZE_ENABLE_VALIDATION_LAYER",
    ] {
        cmd.env_remove(v);
    }
}

/// Runs ops.py with `args` under the interposer (`XPU_ASM_OUT=out`), with the
/// NEO variables; `immediate` sets the runtime's choice of command lists.
fn run_ops_traced(out: &Path, args: &[String], immediate: bool) -> Output {
    let venv = sycl_venv();
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.arg(ops_py())
        .args(args)
        .current_dir(out)
        .envs(neo_env());
    sycl_env(&mut cmd, &venv);
    cmd.env(
        "SYCL_PI_LEVEL_ZERO_USE_IMMEDIATE_COMMANDLISTS",
        if immediate { "1" } else { "0" },
    );
    trace(&mut cmd, out);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "ops.py failed under the interposer\n{}",
        describe(&shown, &output, out)
    );
    output
}

fn assert_ops_stdout(output: &Output, times: &[(&str, u64)]) {
    let lines = stdout_lines(output);
    let called: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("called "))
        .cloned()
        .collect();
    assert_eq!(
        called,
        expected_stdout(times),
        "ops.py did not report the calls asked of it\nstdout:\n{}\nstderr:\n{}",
        lines.join("\n"),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The record must hold exactly the expected kernels with exact counts, each
/// with a `.asm` whose `//.kernel` line is its name, from the module that was
/// launched.
fn check_records(out: &Path, times: &[(&str, u64)]) {
    let rec = only_record(out);
    assert_eq!(
        rec.exit_code,
        Some(0),
        "the record has no normal exit: {rec:#?}"
    );
    assert_eq!(
        rec.unknown_launches, 0,
        "launches of kernel handles never seen being created: {rec:#?}"
    );
    let want = expected_kernel_counts(times);
    // Name -> (launches, appended, module sha256) of every kernel that ran.
    let mut got: BTreeMap<String, (u64, u64, String)> = BTreeMap::new();
    for ((name, sha), (l, a)) in counts(&rec) {
        if l == 0 && a == 0 {
            continue;
        }
        if let Some(prev) = got.insert(name.clone(), (l, a, sha.clone())) {
            panic!(
                "kernel {name} launched from two modules ({} and {sha}): {rec:#?}",
                prev.2
            );
        }
    }
    // On an immediate list each append is a launch; a regular list is executed
    // once per append by this runtime (then reset), so appended equals
    // launches either way. A double-counting interposer breaks this equality.
    let got_counts: BTreeMap<String, (u64, u64)> = got
        .iter()
        .map(|(n, (l, a, _))| (n.clone(), (*l, *a)))
        .collect();
    let want_counts: BTreeMap<String, (u64, u64)> =
        want.iter().map(|(n, l)| (n.clone(), (*l, *l))).collect();
    assert_eq!(
        got_counts, want_counts,
        "recorded (launches, appended) per kernel differ from what ops.py's calls launch\nrecord: {rec:#?}"
    );

    let dir = dump_dir(out, &rec);
    let asm_names = asm_kernel_names(&dir);
    let modules = dumped_modules(&dir);
    for (name, (_, _, sha)) in &got {
        assert!(
            asm_names.contains(name),
            "no .asm in {} whose //.kernel line is {name}; .asm kernels: {asm_names:#?}\nfiles:\n  {}",
            dir.display(),
            list_files(&dir).join("\n  ")
        );
        let in_module = modules.get(sha);
        assert!(
            in_module.is_some_and(|names| names.contains(name)),
            "the module {sha} that {name} was launched from has no dumped .spv with that kernel's .asm beside it; \
             dumped modules (sha256 -> kernels): {modules:#?}"
        );
    }
}

/// SYCL's OpenCL backend (`ONEAPI_DEVICE_SELECTOR=opencl:gpu`: the
/// runtime's OpenCL plugin, through the system's ICD loader, to NEO's
/// OpenCL driver): the same kernels, each with its exact count and its
/// `.asm`, from modules of API `opencl` made from IL.
#[test]
fn the_opencl_backend_every_kernel_counted_with_its_asm() {
    let s = scratch("sycl").with_out_made();
    let venv = sycl_venv();
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.arg(ops_py())
        .args(ops_args_distinct())
        .current_dir(&s.out)
        .envs(neo_env());
    sycl_env(&mut cmd, &venv);
    cmd.env("ONEAPI_DEVICE_SELECTOR", "opencl:gpu");
    trace(&mut cmd, &s.out);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "ops.py failed under the interposer on the OpenCL backend\n{}",
        describe(&shown, &output, &s.out)
    );
    assert_ops_stdout(&output, &TIMES);
    check_records(&s.out, &TIMES);
    let rec = only_record(&s.out);
    let apis: BTreeSet<(String, String)> = rec
        .modules
        .values()
        .map(|m| {
            (
                m.api.as_str().to_string(),
                m.from.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        apis,
        BTreeSet::from([("opencl".to_string(), "il".to_string())]),
        "the modules' (api, from): {rec:#?}"
    );
}

#[test]
fn immediate_lists_every_kernel_counted_with_its_asm() {
    let s = scratch("sycl").with_out_made();
    let output = run_ops_traced(&s.out, &ops_args_distinct(), true);
    assert_ops_stdout(&output, &TIMES);
    check_records(&s.out, &TIMES);
}

#[test]
fn regular_lists_every_kernel_counted_with_its_asm() {
    let s = scratch("sycl").with_out_made();
    let output = run_ops_traced(&s.out, &ops_args_distinct(), false);
    assert_ops_stdout(&output, &TIMES);
    check_records(&s.out, &TIMES);
}

/// `xpu-asm-run --help` must show the options this test uses; until the
/// collector has them, this test fails here.
fn collector_ready(bin: &Path) {
    let mut cmd = Command::new(bin);
    cmd.arg("--help");
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let help = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && ["--emulate", "--json", "-o"].iter().all(|o| help.contains(o)),
        "the collector is not ready: `{shown}` must succeed and list --emulate, -o and --json\nstatus: {}\noutput:\n{help}",
        output.status
    );
}

fn json_str<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

fn json_u64(v: &serde_json::Value, key: &str) -> Option<u64> {
    v.get(key).and_then(serde_json::Value::as_u64)
}

/// The `//.kernel` line of an `.asm` file.
fn asm_kernel_line(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("//.kernel ").map(|n| n.trim().to_string()))
}

#[test]
fn report_json_every_kernel_with_exact_launches_and_asm() {
    const N: u64 = 7;
    let venv = sycl_venv();
    let bin = xpu_asm_run();
    collector_ready(&bin);
    let s = scratch("sycl").with_out_made();
    let out = s.out.join("xpu");
    let mut cmd = Command::new(&bin);
    cmd.args(["--emulate", "pvc", "-o"])
        .arg(&out)
        .arg("--json")
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(ops_py())
        .arg(N.to_string())
        .current_dir(&s.out);
    // The NEO variables are --emulate's job; the SYCL ones are the program's.
    sycl_env(&mut cmd, &venv);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let fail = |what: &str| -> String { format!("{what}\n{}", describe(&shown, &output, &s.out)) };
    assert!(output.status.success(), "{}", fail("xpu-asm-run failed"));
    let times = times_all(N);
    assert_ops_stdout(&output, &times);

    let report_path = out.join("report.json");
    let text = std::fs::read_to_string(&report_path).unwrap_or_else(|e| {
        panic!(
            "{}",
            fail(&format!("cannot read {}: {e}", report_path.display()))
        )
    });
    let report: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{}",
            fail(&format!("{} is not JSON: {e}", report_path.display()))
        )
    });
    let ctx = |what: &str| format!("{what}\nreport.json:\n{text}");

    assert_eq!(
        json_u64(&report, "schema"),
        Some(6),
        "{}",
        ctx("schema must be 6")
    );
    // `exit` is ops.py's exit status: a number, or an object with `code`.
    let exit = report.get("exit");
    let code = exit.and_then(|e| {
        e.as_i64()
            .or_else(|| e.get("code").and_then(serde_json::Value::as_i64))
    });
    assert_eq!(code, Some(0), "{}", ctx("exit must be ops.py's status, 0"));
    assert!(report.get("command").is_some(), "{}", ctx("no command"));

    let want = expected_kernel_counts(&times);
    let total: u64 = want.values().sum();
    let processes = report
        .get("processes")
        .and_then(serde_json::Value::as_array)
        .unwrap_or_else(|| panic!("{}", ctx("no processes array")));
    assert_eq!(processes.len(), 1, "{}", ctx("ops.py is one process"));
    let pid =
        json_u64(&processes[0], "pid").unwrap_or_else(|| panic!("{}", ctx("process without pid")));
    assert_eq!(
        json_u64(&processes[0], "launches"),
        Some(total),
        "{}",
        ctx(&format!("the process made {total} launches in all"))
    );

    let kernels = report
        .get("kernels")
        .and_then(serde_json::Value::as_array)
        .unwrap_or_else(|| panic!("{}", ctx("no kernels array")));
    // Every kernel that ran must be an expected one...
    let ran: BTreeSet<String> = kernels
        .iter()
        .filter(|k| json_u64(k, "launches").unwrap_or(0) > 0)
        .filter_map(|k| json_str(k, "name").map(str::to_string))
        .collect();
    let want_names: BTreeSet<String> = want.keys().cloned().collect();
    assert_eq!(
        ran,
        want_names,
        "{}",
        ctx("the kernels that ran differ from the ones ops.py's calls launch")
    );
    // ...and each expected one there once, exactly counted, with its .asm.
    for (name, launches) in &want {
        let entries: Vec<&serde_json::Value> = kernels
            .iter()
            .filter(|k| json_str(k, "name") == Some(name))
            .collect();
        assert_eq!(
            entries.len(),
            1,
            "{}",
            ctx(&format!("{name} must be one entry"))
        );
        let k = entries[0];
        assert_eq!(
            json_u64(k, "launches"),
            Some(*launches),
            "{}",
            ctx(&format!("launches of {name}"))
        );
        assert_eq!(
            json_u64(k, "appended"),
            Some(*launches),
            "{}",
            ctx(&format!("appended of {name}"))
        );
        let pids: Vec<u64> = k
            .get("pids")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect())
            .unwrap_or_default();
        assert_eq!(pids, [pid], "{}", ctx(&format!("pids of {name}")));
        let asm = json_str(k, "asm")
            .unwrap_or_else(|| panic!("{}", ctx(&format!("asm of {name} is null"))));
        let asm_path = out.join(asm);
        assert_eq!(
            asm_kernel_line(&asm_path).as_deref(),
            Some(name.as_str()),
            "{}",
            ctx(&format!(
                "the //.kernel line of {} (the asm of {name}); files under {}:\n  {}",
                asm_path.display(),
                out.display(),
                list_files(&out).join("\n  ")
            ))
        );
    }
    same_flows_either_way(&out, kernels);
}

/// Every launched kernel of the report at `out` (`kernels`) has its code
/// analysed, and `collect` reading each code through IGA's KernelView API
/// alone (`XPU_ASM_DECODER=kv`) and from IGA's JSON of it alone (`json`)
/// gives the same figures.
fn same_flows_either_way(out: &Path, kernels: &[serde_json::Value]) {
    let flows = |ks: &[serde_json::Value]| -> Vec<(String, serde_json::Value)> {
        ks.iter()
            .map(|k| {
                (
                    k["name"].as_str().unwrap_or("").to_string(),
                    k["flow"].clone(),
                )
            })
            .collect()
    };
    let ours = flows(kernels);
    let launched = kernels
        .iter()
        .filter(|k| json_u64(k, "launches").unwrap_or(0) > 0);
    assert!(
        launched.clone().count() > 0 && launched.clone().all(|k| k["flow"].is_object()),
        "a launched kernel without its analysis: {ours:?}"
    );
    for decoder in ["kv", "json"] {
        let mut cmd = Command::new(xpu_asm_run());
        cmd.args(["collect", "--json"]).arg(out);
        hermetic(&mut cmd);
        cmd.env("XPU_ASM_DECODER", decoder);
        let output = run_with_timeout(&mut cmd);
        assert!(output.status.success(), "{output:?}");
        let r: serde_json::Value = serde_json::from_slice(&output.stdout).expect("collect's JSON");
        let theirs = flows(r["kernels"].as_array().expect("kernels"));
        assert_eq!(ours, theirs, "XPU_ASM_DECODER={decoder}");
    }
}

/// Runs ops.py `n` times per operation under `xpu-asm-run --emulate pvc
/// --json` with `options` and the extra environment `env`, into `out`;
/// checks ops.py's output and returns the report.
fn run_ops_collected(
    s: &Scratch,
    out: &Path,
    options: &[&str],
    env: &[(&str, &Path)],
    n: u64,
) -> xpu_asm_collector::report::Report {
    let venv = sycl_venv();
    let mut cmd = Command::new(xpu_asm_run());
    // IGC's dumps on both stacks unless told otherwise (sid's default is
    // `binary`).
    if !options.contains(&"--isa") {
        cmd.args(["--isa", "dump"]);
    }
    cmd.args(["--emulate", "pvc", "--json", "-o"])
        .arg(out)
        .args(options)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(ops_py())
        .arg(n.to_string())
        .current_dir(&s.out);
    sycl_env(&mut cmd, &venv);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "xpu-asm-run failed\n{}",
        describe(&shown, &output, out)
    );
    assert_ops_stdout(&output, &times_all(n));
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report.json ({e})\n{}", describe(&shown, &output, out)));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("report.json: {e}\n{text}"))
}

/// Every expected kernel of `n` calls per operation, and nothing else, in
/// `r`: matched from `source`, exactly counted, its `.asm` named by its
/// `//.kernel` line. Returns name -> instruction count.
fn assert_ops_matched(
    out: &Path,
    r: &xpu_asm_collector::report::Report,
    n: u64,
    source: xpu_asm_collector::sources::IsaSourceKind,
) -> BTreeMap<String, u64> {
    use xpu_asm_collector::sources::Status;
    let ctx = || serde_json::to_string_pretty(r).unwrap_or_default();
    let got: BTreeMap<String, u64> = r
        .kernels
        .iter()
        .map(|k| (k.name.clone(), k.launches))
        .collect();
    assert_eq!(
        got.len(),
        r.kernels.len(),
        "a kernel in two entries:\n{}",
        ctx()
    );
    assert_eq!(
        got,
        expected_kernel_counts(&times_all(n)),
        "kernels and launches:\n{}",
        ctx()
    );
    let mut instructions = BTreeMap::new();
    for k in &r.kernels {
        assert_eq!(
            k.status,
            Status::Matched,
            "{}: {:?}\n{}",
            k.name,
            k.reason,
            ctx()
        );
        assert_eq!(k.isa_source, Some(source), "{}\n{}", k.name, ctx());
        let asm = out.join(k.asm_copy.as_deref().expect("a copy under asm/"));
        assert_eq!(asm_kernel_line(&asm).as_deref(), Some(k.name.as_str()));
        instructions.insert(
            k.name.clone(),
            k.instructions.expect("an instruction count"),
        );
    }
    instructions
}

/// The SYCL persistent cache kept on by the user: the second run's modules
/// are all native (the runtime hands Level Zero the cached binaries), and
/// every kernel still gets its ISA, from those binaries, with the
/// instructions IGC's `.asm` of the first run has. The first run is also
/// the cross-check on every kernel of the real SYCL workload: the driver's
/// binary of each, disassembled, has exactly the instructions of IGC's
/// `.asm`.
#[test]
fn sycl_cache_second_run_matched_from_binaries_with_igcs_instructions() {
    use xpu_asm_collector::sources::IsaSourceKind;
    const N: u64 = 3;
    let s = scratch("sycl").with_out_made();
    let cache = s.out.join("sycl-cache");
    let env = [
        ("SYCL_CACHE_PERSISTENT", Path::new("1")),
        ("SYCL_CACHE_DIR", cache.as_path()),
    ];
    let first_out = s.out.join("first");
    let first = run_ops_collected(&s, &first_out, &[], &env, N);
    let first_instr = assert_ops_matched(&first_out, &first, N, IsaSourceKind::IgcDump);
    let checked = cross_check_dumps_against_binaries(&first_out, &first);
    assert_eq!(checked, first.kernels.len());
    assert!(
        std::fs::read_dir(&cache).is_ok_and(|mut d| d.next().is_some()),
        "the first run left nothing in the SYCL cache {}",
        cache.display()
    );

    let second_out = s.out.join("second");
    let second = run_ops_collected(&s, &second_out, &[], &env, N);
    let rec = only_record(&second_out);
    let formats: BTreeSet<&str> = rec.modules.values().map(|m| m.format.as_str()).collect();
    assert_eq!(
        formats,
        BTreeSet::from(["native"]),
        "with the cache, every module of the second run is native: {rec:#?}"
    );
    let second_instr = assert_ops_matched(&second_out, &second, N, IsaSourceKind::ModuleBinary);
    assert_eq!(
        second_instr, first_instr,
        "instruction counts, from the binaries vs IGC's dumps"
    );
}

/// `--isa binary` on the real SYCL workload: no IGC dump, every kernel from
/// the driver's binary of its module.
#[test]
fn isa_binary_every_sycl_kernel_from_binaries() {
    use xpu_asm_collector::sources::IsaSourceKind;
    const N: u64 = 2;
    let s = scratch("sycl").with_out_made();
    let out = s.out.join("xpu");
    let r = run_ops_collected(&s, &out, &["--isa", "binary"], &[], N);
    assert_ops_matched(&out, &r, N, IsaSourceKind::ModuleBinary);
    assert_eq!(
        r.dumps.before.files, 0,
        "IGC dumped with --isa binary: {:?}",
        r.dumps
    );
}
