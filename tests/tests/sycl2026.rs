//! SYCL of 2026 on today's stack: dpnp 0.20.0 and dpctl 0.22.1 on oneAPI
//! 2026.2's SYCL runtime from PyPI (the venv of scripts/sycl2026-venv.sh), on
//! NEO 26.27, IGC 2.40 and loader 1.32 in the Debian sid root of
//! scripts/sid-root.sh, in NEO's no-hardware mode, through both of SYCL's
//! Level Zero adapters:
//!
//! - v1 (`libur_adapter_level_zero.so`), which SYCL picks for pvc;
//! - v2 (`..._v2.so`), its default on Xe2 and later (bmg, ptl), which
//!   launches with `zeCommandListAppendLaunchKernelWithArguments` and reaches
//!   Level Zero only through pointers of its own: `dlopen` of the loader,
//!   `dlsym` of every function, and `zeDriverGetExtensionFunctionAddress`.
//!   In no-hardware mode it needs tests/shim/ze_resident.c (preloaded behind
//!   the interposer, and named by `UMF_ZE_LOADER_LIB_NAME`).
//!
//! The workload, tests/sycl/dpnp_ops.py, calls a few dpnp operations a
//! different number of times each: dpnp's own kernels and oneMKL's vector
//! math, which SYCL builds from the programs in the libraries, and oneMKL's
//! GEMM, whose kernels oneMKL builds in Level Zero itself (generated native
//! code, or its own SPIR-V) and hands to SYCL. The expected launches per
//! kernel come from an independent count: the Unified Runtime's tracing
//! layer, inside the SYCL runtime above both adapters
//! ([`xpu_asm_tests::sycl2026::ur_launches`]), which involves nothing of
//! xpu-asm. The count is itself checked against the workload ([`ANCHORS`]
//! and the GEMM rule in [`assert_anchors`]).
//!
//! oneMKL picks its GEMM at its first call: it launches a probe kernel
//! (`binary_test`) and reads back what the probe wrote. Kernels do not run
//! here, so what it reads back is not the probe's doing, and its pick (the
//! generated `sgemm_nocopy_*`, or its SPIR-V `sgemm_beta`, `_itcopy`,
//! `_kernel`, `_oncopy`) differs from run to run. So each run's report is
//! held to the trace of that same run, exactly, for every kernel; and the
//! kernels SYCL builds are held, in addition, to a run without xpu-asm.
//!
//! Per platform, under the xpu-asm-run built here: `--isa dump` (the
//! default), `--isa binary`, and SYCL's persistent cache on, twice (second
//! run: every module SYCL built comes native from the cache, its kernels'
//! ISA from those binaries with the instructions IGC's dumps of the first
//! run have). Every kernel matched to its ISA.
//!
//! The test binary may run on the host (each command then enters the root)
//! or inside the root; see [`xpu_asm_tests::sycl2026::SidCommand`].

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use tempfile::TempDir;
use xpu_asm_collector::report::Report;
use xpu_asm_collector::sources::IsaSourceKind;
use xpu_asm_collector::sources::Status;
use xpu_asm_tests::sycl2026::{
    dpnp_venv, neo26_env, resident_shim, ur_launches, Adapter, Platform, SidCommand, UrCount, BMG,
    PTL, PVC,
};
use xpu_asm_tests::*;

/// dpnp_ops.py's operations, in its order, and how often each is called:
/// all different, so that a kernel counted for the wrong operation shows.
const TIMES: [(&str, u64); 6] = [
    ("matmul", 7),
    ("add", 2),
    ("sin", 3),
    ("sum", 4),
    ("where", 5),
    ("astype", 6),
];

/// The kernels SYCL builds, fixed by the workload whatever the GPU:
/// (operation, the one kernel whose name holds this, launches per call).
/// dpnp.add and dpnp.sin of float32 go to oneMKL's vector math (`add_s_ha`,
/// `sin_s_ha`); a float32 sum of 65536 elements is dpnp's two-pass
/// reduction (two launches of one kernel); where and astype are dpnp's
/// contiguous kernels. matmul is oneMKL's GEMM: see [`assert_anchors`].
const ANCHORS: [(&str, &str, u64); 5] = [
    ("add", "add_s_ha", 1),
    ("sin", "sin_s_ha", 1),
    ("sum", "reduction_over_group_temps_krn", 2),
    ("where", "where_contig_kernel", 1),
    ("astype", "copy_cast_contig_kernel", 1),
];

fn ops_args() -> Vec<String> {
    let mut a = vec!["1".to_string()];
    a.extend(TIMES.iter().map(|(op, n)| format!("{op}={n}")));
    a
}

fn dpnp_ops_py() -> PathBuf {
    workspace_dir().join("tests/sycl/dpnp_ops.py")
}

/// A test's own folder (under /tmp, which the root shares).
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new(p: &Platform, what: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("xpu-asm-sycl2026-{}-{what}-", p.product))
            .tempdir_in("/tmp")
            .expect("a temporary folder under /tmp");
        Scratch { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// What one run of the workload left.
struct Ran {
    shown: String,
    output: Output,
    /// What the UR tracing layer counted in this run.
    ur: UrCount,
    /// Where a failure should look.
    dir: PathBuf,
}

impl Ran {
    fn ctx(&self) -> String {
        describe(&self.shown, &self.output, &self.dir)
    }
}

/// dpnp_ops.py on `p`, with `wrap` in front of it (nothing, or xpu-asm-run
/// and its options), the UR tracing layer and the Level Zero adapters' log
/// on, and what SYCL needs here; `extra` is added to the environment.
/// Checks what the workload printed, which adapter SYCL used, and counts
/// its launches from the trace.
fn run_workload(p: &Platform, dir: &Path, wrap: &[OsString], extra: &[(&str, &Path)]) -> Ran {
    let venv = dpnp_venv();
    let trace = dir.join("ur-trace.txt");
    let adapter_log = dir.join("ur-level-zero.txt");
    let mut sc = match wrap.split_first() {
        None => SidCommand::new(venv.join("bin/python"), dir),
        Some((program, args)) => {
            let mut sc = SidCommand::new(program, dir);
            sc.args(args).arg("--").arg(venv.join("bin/python"));
            sc
        }
    };
    sc.arg(dpnp_ops_py())
        .args(ops_args())
        .envs(neo26_env(p.product))
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        // The wheels carry no RPATH.
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("UR_ENABLE_LAYERS", "UR_LAYER_TRACING")
        .env(
            "UR_LOG_TRACING",
            format!("level:info;output:file,{}", trace.display()),
        )
        .env(
            "UR_LOG_LEVEL_ZERO",
            format!("level:info;output:file,{}", adapter_log.display()),
        );
    let shim = (p.adapter == Adapter::V2).then(resident_shim);
    if let Some(shim) = &shim {
        // Behind the interposer: xpu-asm-run keeps a user's LD_PRELOAD after
        // its own (checked below).
        sc.env("LD_PRELOAD", shim)
            .env("UMF_ZE_LOADER_LIB_NAME", shim);
    }
    for (k, v) in extra {
        sc.env(k, v);
    }
    let mut cmd = sc.command();
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let mut ran = Ran {
        shown,
        output,
        ur: UrCount::default(),
        dir: dir.to_path_buf(),
    };
    assert!(
        ran.output.status.success(),
        "dpnp_ops.py on {} failed\n{}",
        p.product,
        ran.ctx()
    );

    let lines = stdout_lines(&ran.output);
    let said: Vec<&String> = lines
        .iter()
        .filter(|l| {
            ["called ", "device ", "preload "]
                .iter()
                .any(|w| l.starts_with(w))
        })
        .collect();
    let mut want: Vec<String> = TIMES
        .iter()
        .map(|(op, n)| format!("called {op} {n}"))
        .collect();
    want.push(format!("device {}", p.device_name));
    // The interposer (under xpu-asm-run) first, then the shim (v2).
    let mut preload: Vec<String> = Vec::new();
    if !wrap.is_empty() {
        preload.push(interposer().display().to_string());
    }
    if let Some(shim) = &shim {
        preload.push(shim.display().to_string());
    }
    want.push(format!("preload {}", preload.join(":")));
    assert_eq!(
        said,
        want.iter().collect::<Vec<_>>(),
        "dpnp_ops.py did not report the calls asked of it, on the expected device, with the \
         expected preloads\n{}",
        ran.ctx()
    );

    let log = std::fs::read_to_string(&adapter_log).unwrap_or_else(|e| {
        panic!(
            "no Level Zero adapter log {} ({e})\n{}",
            adapter_log.display(),
            ran.ctx()
        )
    });
    assert!(
        log.contains(p.adapter.chosen_line()),
        "SYCL did not take its {:?} adapter on {}: the adapters' log lacks {:?}\nlog:\n{log}\n{}",
        p.adapter,
        p.product,
        p.adapter.chosen_line(),
        ran.ctx()
    );

    let text = std::fs::read_to_string(&trace)
        .unwrap_or_else(|e| panic!("no UR trace {} ({e})\n{}", trace.display(), ran.ctx()));
    ran.ur = ur_launches(&text)
        .unwrap_or_else(|e| panic!("the UR trace {}: {e}\n{}", trace.display(), ran.ctx()));
    assert_anchors(p, &ran);
    ran
}

/// The count of a run on `p` without xpu-asm: launches per kernel from the
/// UR tracing layer. Once per platform and test process.
fn without_xpu_asm(p: &Platform) -> &'static UrCount {
    static COUNTS: [OnceLock<UrCount>; 3] = [const { OnceLock::new() }; 3];
    let i = match p.product {
        "pvc" => 0,
        "bmg" => 1,
        "ptl" => 2,
        other => panic!("no count without xpu-asm for {other}"),
    };
    COUNTS[i].get_or_init(|| {
        let s = Scratch::new(p, "plain");
        run_workload(p, s.path(), &[], &[]).ur
    })
}

/// The UR count of a run must show what the workload fixes: the kernels
/// SYCL builds are exactly those of [`ANCHORS`], each launched its times
/// per call; the kernels oneMKL hands to SYCL are its probe `binary_test`,
/// launched once, and the GEMM kernels it picked, each launched once per
/// matmul call.
fn assert_anchors(p: &Platform, ran: &Ran) {
    let times = |op: &str| {
        TIMES
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, n)| *n)
            .expect("every operation is in TIMES")
    };
    let ctx = || format!("UR count: {:#?}\n{}", ran.ur, ran.ctx());
    let built = ran.ur.sycl_built();
    assert_eq!(
        built.len(),
        ANCHORS.len(),
        "on {}, SYCL built other kernels than those of ANCHORS\n{}",
        p.product,
        ctx()
    );
    for (op, part, per_call) in ANCHORS {
        let found: Vec<(&String, &u64)> = built.iter().filter(|(k, _)| k.contains(part)).collect();
        assert_eq!(
            found.len(),
            1,
            "on {}, exactly one kernel SYCL built must be named with {part:?} (for {op})\n{}",
            p.product,
            ctx()
        );
        assert_eq!(
            *found[0].1,
            times(op) * per_call,
            "on {}, {} launches for {} calls of {op}\n{}",
            p.product,
            found[0].0,
            times(op),
            ctx()
        );
    }
    let gemm: BTreeMap<&String, u64> = ran
        .ur
        .interop
        .iter()
        .filter(|k| k.as_str() != "binary_test")
        .map(|k| (k, ran.ur.launches[k]))
        .collect();
    assert!(
        ran.ur.launches.get("binary_test") == Some(&1)
            && ran.ur.interop.contains("binary_test")
            && !gemm.is_empty()
            && gemm.values().all(|n| *n == times("matmul")),
        "on {}, oneMKL's kernels must be its probe binary_test, launched once, and its GEMM \
         kernels, each launched once per matmul call ({})\n{}",
        p.product,
        times("matmul"),
        ctx()
    );
}

/// dpnp_ops.py under `xpu-asm-run --json -o OUT OPTIONS`; checks that SYCL
/// launched its kernels as it does without xpu-asm, and returns the report.
fn run_collected(
    p: &Platform,
    s: &Scratch,
    name: &str,
    options: &[&str],
    extra: &[(&str, &Path)],
) -> (Ran, Report) {
    let want = without_xpu_asm(p).sycl_built();
    let dir = s.path().join(name);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let out = dir.join("xpu");
    let mut wrap: Vec<OsString> = vec![
        xpu_asm_run().into(),
        "--json".into(),
        "-o".into(),
        out.clone().into(),
    ];
    wrap.extend(options.iter().map(OsString::from));
    let ran = run_workload(p, &dir, &wrap, extra);
    assert_eq!(
        ran.ur.sycl_built(),
        want,
        "on {}, SYCL launched its kernels otherwise under xpu-asm-run (left) than without it \
         (right), by the UR trace\n{}",
        p.product,
        ran.ctx()
    );
    let path = out.join("report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})\n{}", path.display(), ran.ctx()));
    let report: Report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a report: {e}\n{text}", path.display()));
    (ran, report)
}

/// The report's launches per kernel are those the UR trace of the same run
/// counted, exactly, each kernel once, appended as often as launched
/// (immediate lists); the record is whole.
fn assert_counts_as_traced(p: &Platform, ran: &Ran, r: &Report) {
    let ctx = || {
        format!(
            "{}\nreport: {}",
            ran.ctx(),
            serde_json::to_string_pretty(r).unwrap_or_default()
        )
    };
    let out = ran.dir.join("xpu");
    let rec = only_record(&out);
    assert_eq!(
        rec.exit_code,
        Some(0),
        "the record has no normal exit: {rec:#?}"
    );
    assert_eq!(
        rec.unknown_launches, 0,
        "launches of kernel handles never seen being created: {rec:#?}"
    );
    let mut got: BTreeMap<String, u64> = BTreeMap::new();
    for k in &r.kernels {
        assert!(
            got.insert(k.name.clone(), k.launches).is_none(),
            "{} is in two entries\n{}",
            k.name,
            ctx()
        );
        assert_eq!(k.appended, k.launches, "appended of {}\n{}", k.name, ctx());
    }
    assert_eq!(
        got,
        ran.ur.launches,
        "on {}, xpu-asm's launches per kernel (left) differ from the UR trace's count (right)\n{}",
        p.product,
        ctx()
    );
    let total: u64 = got.values().sum();
    assert_eq!(r.totals.launches, total, "{}", ctx());
}

/// Every kernel matched to its ISA: from IGC's dump for dpnp's own kernels
/// and from the module's binary for every kernel of a native module when
/// `dump`, from the module's binary for all otherwise; the `.asm` copy's
/// `//.kernel` line is its name. Returns name -> instructions.
fn assert_matched(p: &Platform, ran: &Ran, r: &Report, dump: bool) -> BTreeMap<String, u64> {
    let ctx = || {
        format!(
            "{}\nreport: {}",
            ran.ctx(),
            serde_json::to_string_pretty(r).unwrap_or_default()
        )
    };
    let out = ran.dir.join("xpu");
    let rec = only_record(&out);
    let unmatched: Vec<String> = r
        .kernels
        .iter()
        .filter(|k| k.status != Status::Matched)
        .map(|k| {
            format!(
                "{}: {:?} {}",
                k.name,
                k.status,
                k.reason.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(
        unmatched.is_empty(),
        "on {}, kernels not matched to their ISA:\n  {}\n{}",
        p.product,
        unmatched.join("\n  "),
        ctx()
    );
    let mut instructions = BTreeMap::new();
    for k in &r.kernels {
        let format = rec
            .modules
            .values()
            .find(|m| Some(&m.sha256) == k.module_sha256.as_ref())
            .map(|m| m.format.as_str())
            .unwrap_or_else(|| panic!("{}: its module is not in the record\n{}", k.name, ctx()));
        let want = if !dump || format == "native" {
            Some(IsaSourceKind::ModuleBinary)
        } else if k.name.starts_with("_ZTSN4dpnp") {
            Some(IsaSourceKind::IgcDump)
        } else {
            // oneMKL's SPIR-V modules: either source is the exact ISA.
            k.isa_source
        };
        assert_eq!(
            k.isa_source,
            want,
            "on {}, where the ISA of {} (a {format} module) comes from\n{}",
            p.product,
            k.name,
            ctx()
        );
        let asm = out.join(
            k.asm_copy
                .as_deref()
                .unwrap_or_else(|| panic!("{} has no copy under asm/\n{}", k.name, ctx())),
        );
        let line = std::fs::read_to_string(&asm).ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("//.kernel ").map(|n| n.trim().to_string()))
        });
        assert_eq!(
            line.as_deref(),
            Some(k.name.as_str()),
            "the //.kernel line of {}\n{}",
            asm.display(),
            ctx()
        );
        instructions.insert(
            k.name.clone(),
            k.instructions
                .unwrap_or_else(|| panic!("{} has no instruction count\n{}", k.name, ctx())),
        );
    }
    instructions
}

/// `--isa dump`: IGC's dumps of this run's compilations, and the binaries
/// of native modules.
fn isa_dump(p: &Platform) {
    let s = Scratch::new(p, "dump");
    let (ran, r) = run_collected(p, &s, "dump", &["--isa", "dump"], &[]);
    assert_counts_as_traced(p, &ran, &r);
    assert_matched(p, &ran, &r, true);
    assert!(
        r.dumps.before.files > 0,
        "IGC dumped nothing: {:?}\n{}",
        r.dumps,
        ran.ctx()
    );
}

/// `--isa binary`: no IGC dump, every kernel from its module's binary.
fn isa_binary(p: &Platform) {
    from_binaries(p, "binary", &["--isa", "binary"]);
}

/// The default on this stack (NEO 26 with IGC 2 alone): every kernel's ISA
/// from its module's binary, as `--isa binary`, and IGC dumps nothing.
fn isa_default(p: &Platform) {
    from_binaries(p, "default", &[]);
}

/// A run with `options` (named `name`) that takes every kernel's ISA from
/// its module's binary: exact counts, all matched, no IGC dump.
fn from_binaries(p: &Platform, name: &str, options: &[&str]) {
    let s = Scratch::new(p, name);
    let (ran, r) = run_collected(p, &s, name, options, &[]);
    assert_eq!(r.isa.as_deref(), Some("binary"), "{name}\n{}", ran.ctx());
    assert_counts_as_traced(p, &ran, &r);
    assert_matched(p, &ran, &r, false);
    assert_eq!(
        r.dumps.before.files,
        0,
        "IGC dumped ({name}): {:?}\n{}",
        r.dumps,
        ran.ctx()
    );
}

/// SYCL's persistent cache kept on by the user: the second run creates
/// every module of a kernel SYCL built native, from the cache, and those
/// kernels get their ISA from these binaries, with the instructions of the
/// first run (IGC's dumps, for dpnp's kernels); so does every kernel in
/// both runs. (oneMKL's own modules are not SYCL's to cache: its SPIR-V
/// GEMM is compiled again, its generated one is native anyway.)
fn sycl_cache(p: &Platform) {
    let s = Scratch::new(p, "cache");
    let cache = s.path().join("sycl-cache");
    let env = [
        ("SYCL_CACHE_PERSISTENT", Path::new("1")),
        ("SYCL_CACHE_DIR", cache.as_path()),
    ];
    let (first_ran, first) = run_collected(p, &s, "first", &["--isa", "dump"], &env);
    assert_counts_as_traced(p, &first_ran, &first);
    let first_instr = assert_matched(p, &first_ran, &first, true);
    assert!(
        std::fs::read_dir(&cache).is_ok_and(|mut d| d.next().is_some()),
        "the first run left nothing in the SYCL cache {}",
        cache.display()
    );

    let (second_ran, second) = run_collected(p, &s, "second", &["--isa", "dump"], &env);
    assert_counts_as_traced(p, &second_ran, &second);
    let rec = only_record(&second_ran.dir.join("xpu"));
    let built = second_ran.ur.sycl_built();
    let formats: BTreeMap<&str, BTreeSet<&str>> = rec
        .kernels
        .values()
        .map(|k| {
            let name = std::str::from_utf8(&k.name).unwrap_or("(not UTF-8)");
            let format = rec
                .modules
                .get(&k.module)
                .map_or("(no module)", |m| m.format.as_str());
            (name, format)
        })
        .filter(|(name, _)| built.contains_key(*name))
        .fold(BTreeMap::new(), |mut m, (name, format)| {
            m.entry(name).or_insert_with(BTreeSet::new).insert(format);
            m
        });
    assert!(
        formats.len() == built.len() && formats.values().all(|f| f == &BTreeSet::from(["native"])),
        "on {}, with the cache, the module of every kernel SYCL built must be native in the \
         second run: {formats:#?}\n{rec:#?}",
        p.product
    );
    let second_instr = assert_matched(p, &second_ran, &second, true);
    for (name, n) in &second_instr {
        if let Some(first) = first_instr.get(name) {
            assert_eq!(
                n, first,
                "on {}, the instructions of {name}: the second run's (left), the first run's (right)",
                p.product
            );
        }
    }
    for name in built.keys() {
        assert!(
            second
                .kernels
                .iter()
                .any(|k| &k.name == name && k.isa_source == Some(IsaSourceKind::ModuleBinary)),
            "on {}, {name} must come from its cached binary in the second run",
            p.product
        );
    }
}

#[test]
fn v1_pvc_isa_dump_exact_counts_all_matched() {
    isa_dump(&PVC);
}

#[test]
fn v1_pvc_isa_binary_exact_counts_all_matched() {
    isa_binary(&PVC);
}

#[test]
fn v1_pvc_sycl_cache_second_run_native_all_matched() {
    sycl_cache(&PVC);
}

#[test]
fn v2_bmg_isa_dump_exact_counts_all_matched() {
    isa_dump(&BMG);
}

#[test]
fn v2_bmg_isa_binary_exact_counts_all_matched() {
    isa_binary(&BMG);
}

#[test]
fn v2_bmg_default_is_binary_exact_counts_all_matched() {
    isa_default(&BMG);
}

#[test]
fn v2_bmg_sycl_cache_second_run_native_all_matched() {
    sycl_cache(&BMG);
}

#[test]
fn v2_ptl_isa_dump_exact_counts_all_matched() {
    isa_dump(&PTL);
}

#[test]
fn v2_ptl_isa_binary_exact_counts_all_matched() {
    isa_binary(&PTL);
}

#[test]
fn v2_ptl_sycl_cache_second_run_native_all_matched() {
    sycl_cache(&PTL);
}

/// SYCL 2026's OpenCL backend (`ONEAPI_DEVICE_SELECTOR=opencl:gpu`: its
/// OpenCL adapter, the venv's ICD loader, NEO's OpenCL driver) on pvc,
/// under `xpu-asm-run --emulate pvc --isa dump`: each kernel's launches, of
/// API `opencl`, equal the UR trace's of the same run (dpnp's kernels,
/// oneMKL's vector math, and oneMKL's GEMM and its probe, which oneMKL
/// builds in OpenCL itself), every kernel matched.
#[test]
fn opencl_backend_pvc_exact_counts_all_matched() {
    let dir = tempfile::Builder::new()
        .prefix("xpu-asm-sycl2026-opencl-")
        .tempdir_in("/tmp")
        .expect("a temporary folder under /tmp");
    let (out, trace) = (dir.path().join("out"), dir.path().join("ur-trace.txt"));
    let venv = dpnp_venv();
    let mut sc = SidCommand::new(xpu_asm_run(), dir.path());
    sc.args(["--emulate", "pvc", "--isa", "dump", "-q", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(dpnp_ops_py())
        .args(ops_args())
        .env("ONEAPI_DEVICE_SELECTOR", "opencl:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("UR_ENABLE_LAYERS", "UR_LAYER_TRACING")
        .env(
            "UR_LOG_TRACING",
            format!("level:info;output:file,{}", trace.display()),
        );
    let run = run(sc.command(), &out);
    run.assert_status(0);
    let text = std::fs::read_to_string(&trace)
        .unwrap_or_else(|e| panic!("no UR trace {} ({e})\n{}", trace.display(), run.ctx()));
    let ur = ur_launches(&text).unwrap_or_else(|e| panic!("the UR trace: {e}\n{}", run.ctx()));
    let r = run.report();
    let mut got: BTreeMap<String, u64> = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        let name = k["name"].as_str().unwrap_or("?").to_string();
        assert_eq!(
            (k["status"].as_str(), k["api"].as_str()),
            (Some("matched"), Some("opencl")),
            "{name}\n{}",
            run.ctx()
        );
        *got.entry(name).or_insert(0) += k["launches"].as_u64().unwrap_or(0);
    }
    assert!(
        !ur.launches.is_empty(),
        "the UR trace counted nothing\n{}",
        run.ctx()
    );
    assert_eq!(
        got,
        ur.launches,
        "launches per kernel: the report's, the UR trace's\n{}",
        run.ctx()
    );
}
