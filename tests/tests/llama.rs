//! llama.cpp's SYCL backend on today's stack: cyllama-sycl 0.7.0 from PyPI
//! (llama.cpp b11669, `libggml-sycl.so` built with DPC++ 2025.3.3, SPIR-V
//! only) on oneAPI 2025.3's runtime (the venv of scripts/llama-venv.sh),
//! on NEO 26.27, IGC 2.40 and loader 1.32 in the Debian sid root, in NEO's
//! no-hardware mode. The workload, tests/llama/decode.py, writes a tiny
//! model with the `gguf` package (a llama of two layers, random weights,
//! f16, Q8_0 and Q4_0 matrices), loads it with every layer on the GPU and
//! decodes fixed tokens (nothing executes, so nothing is sampled): a
//! prompt of 4 in one batch, then 3 single tokens.
//!
//! Each run's launches per kernel are held to an oracle in the same
//! process, the Unified Runtime's trace of its launches
//! ([`xpu_asm_tests::sycl2026::ur_launches`]), exactly; every kernel is
//! matched to its ISA. Through SYCL's Level Zero adapter v1 (pvc), under
//! `--isa dump`: every kernel SYCL built (ggml's) from IGC's dump, those
//! of modules linked with the device libraries among them; through the
//! v2 adapter (bmg, its default there: launches through
//! `zeCommandListAppendLaunchKernelWithArguments`), with the default
//! `--isa`; and through SYCL's OpenCL adapter (pvc). About three minutes on
//! an idle machine of two cores (a minute of CPU per run). The v2 adapter
//! needs tests/shim/ze_resident.c in NEO's no-hardware mode, as dpnp's
//! does (without it, SYCL 2025.3's context creation fails with
//! `UR_RESULT_ERROR_UNKNOWN`, with or without xpu-asm).
//!
//! `GGML_SYCL_ENABLE_VMM=0`: ggml's virtual-memory pool calls
//! `reserve_virtual_mem`, which fails without hardware, and aborts.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;
use xpu_asm_collector::report::Report;
use xpu_asm_collector::sources::{IsaSourceKind, Status};
use xpu_asm_tests::sycl2026::{
    llama_venv, neo26_env, resident_shim, ur_launches, Adapter, Platform, SidCommand, UrCount, BMG,
    PVC,
};
use xpu_asm_tests::*;

/// The prompt's tokens (one batch), then the single tokens decoded.
const PROMPT: u32 = 4;
const DECODES: u32 = 3;

/// How SYCL reaches the GPU.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    LevelZero,
    OpenCl,
}

/// One run of the workload.
struct Decoded {
    shown: String,
    output: Output,
    ur: UrCount,
    dir: PathBuf,
}

impl Decoded {
    fn ctx(&self) -> String {
        describe(&self.shown, &self.output, &self.dir)
    }
}

fn llama_scratch(p: &Platform, what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("xpu-asm-llama-{}-{what}-", p.product))
        .tempdir_in("/tmp")
        .expect("a temporary folder under /tmp")
}

/// decode.py on `p` through `backend`, under `xpu-asm-run --json -o
/// DIR/xpu OPTIONS`, with SYCL's trace of its launches on.
fn decode(p: &Platform, backend: Backend, dir: &Path, options: &[&str]) -> Decoded {
    let venv = llama_venv();
    let trace = dir.join("ur-trace.txt");
    let adapter_log = dir.join("ur-level-zero.txt");
    let mut wrap: Vec<OsString> = vec![
        xpu_asm_run().into(),
        "--json".into(),
        "-o".into(),
        dir.join("xpu").into(),
    ];
    wrap.extend(options.iter().map(OsString::from));
    let mut sc = SidCommand::new(&wrap[0], dir);
    sc.args(&wrap[1..])
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/llama/decode.py"))
        .arg(dir)
        .args([PROMPT.to_string(), DECODES.to_string()])
        .envs(neo26_env(p.product))
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("GGML_SYCL_ENABLE_VMM", "0")
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
    if p.adapter == Adapter::V2 && backend == Backend::LevelZero {
        // NEO's no-hardware mode answers UMF's residency calls with an
        // error; the shim turns them into success (docs/real-stack.md).
        let shim = resident_shim();
        sc.env("LD_PRELOAD", &shim)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
    }
    match backend {
        Backend::LevelZero => sc.env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu"),
        Backend::OpenCl => sc
            .env("ONEAPI_DEVICE_SELECTOR", "opencl:gpu")
            .env("EnableTimestampWaitForQueues", "0"),
    };
    let mut cmd = sc.command();
    let shown = shell_words(&cmd);
    let (output, _) = {
        let f = run_until(&mut cmd, RUN_TIMEOUT * 4, Overrun::Kill);
        (f.output, f.elapsed)
    };
    let mut d = Decoded {
        shown,
        output,
        ur: UrCount::default(),
        dir: dir.to_path_buf(),
    };
    assert!(
        d.output.status.success(),
        "decode.py on {} failed\n{}",
        p.product,
        d.ctx()
    );
    let decoded: Vec<String> = stdout_lines(&d.output)
        .into_iter()
        .filter(|l| l.starts_with("decoded "))
        .collect();
    let mut want = vec![format!("decoded {PROMPT}")];
    want.extend((0..DECODES).map(|_| "decoded 1".to_string()));
    assert_eq!(
        decoded,
        want,
        "decode.py did not decode as asked\n{}",
        d.ctx()
    );
    if backend == Backend::LevelZero {
        let log = std::fs::read_to_string(&adapter_log).unwrap_or_default();
        assert!(
            log.contains(p.adapter.chosen_line()),
            "SYCL did not take its {:?} adapter on {}: its log {} lacks {:?}\n{}",
            p.adapter,
            p.product,
            adapter_log.display(),
            p.adapter.chosen_line(),
            d.ctx()
        );
    }
    let text = std::fs::read_to_string(&trace)
        .unwrap_or_else(|e| panic!("no UR trace {} ({e})\n{}", trace.display(), d.ctx()));
    d.ur = ur_launches(&text)
        .unwrap_or_else(|e| panic!("the UR trace {}: {e}\n{}", trace.display(), d.ctx()));
    d
}

/// The report of a run: launches per kernel those of SYCL's trace of the
/// same run, exactly; every kernel matched, its `.asm` copy's `//.kernel`
/// line its name. Returns where each kernel's ISA came from (of each
/// entry, a kernel of one name in two modules having two).
fn assert_exact_and_matched(p: &Platform, d: &Decoded) -> BTreeMap<String, Vec<IsaSourceKind>> {
    let path = d.dir.join("xpu/report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})\n{}", path.display(), d.ctx()));
    let r: Report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a report: {e}\n{text}", path.display()));
    let ctx = || format!("{}\nreport: {text}", d.ctx());
    // SYCL's trace names kernels, not modules: a kernel of one name in
    // two of ggml's modules is summed.
    let mut got: BTreeMap<String, u64> = BTreeMap::new();
    for k in &r.kernels {
        *got.entry(k.name.clone()).or_insert(0) += k.launches;
    }
    assert_eq!(
        got,
        d.ur.launches,
        "on {}, xpu-asm's launches per kernel (left) differ from SYCL's trace (right)\n{}",
        p.product,
        ctx()
    );
    assert!(
        d.ur.sycl_built().len() >= 15,
        "ggml's kernels: {:?}\n{}",
        d.ur.launches,
        ctx()
    );
    let mut sources: BTreeMap<String, Vec<IsaSourceKind>> = BTreeMap::new();
    for k in &r.kernels {
        assert_eq!(
            k.status,
            Status::Matched,
            "on {}, {} not matched: {:?}\n{}",
            p.product,
            k.name,
            k.reason,
            ctx()
        );
        let copy = k.asm_copy.as_deref().unwrap_or_default();
        let asm = std::fs::read_to_string(d.dir.join("xpu").join(copy)).unwrap_or_default();
        assert!(
            asm.lines()
                .any(|l| l.trim_end() == format!("//.kernel {}", k.name)),
            "the //.kernel line of {copy} is not {}\n{}",
            k.name,
            ctx()
        );
        let kind = k
            .isa_source
            .unwrap_or_else(|| panic!("{}: no source\n{}", k.name, ctx()));
        sources.entry(k.name.clone()).or_default().push(kind);
    }
    eprintln!(
        "{}: {} kernels ({} entries, {} built by SYCL), {} launches",
        p.product,
        got.len(),
        r.kernels.len(),
        d.ur.sycl_built().len(),
        got.values().sum::<u64>()
    );
    sources
}

/// v1 on pvc with IGC's dumps: every kernel SYCL built from IGC's dump.
#[test]
fn v1_pvc_isa_dump_every_ggml_kernel_from_igcs_dump() {
    let t = llama_scratch(&PVC, "dump");
    let d = decode(&PVC, Backend::LevelZero, t.path(), &["--isa", "dump"]);
    let sources = assert_exact_and_matched(&PVC, &d);
    let from_binary: Vec<(String, &Vec<IsaSourceKind>)> =
        d.ur.sycl_built()
            .into_keys()
            .map(|k| {
                let s = &sources[&k];
                (k, s)
            })
            .filter(|(_, s)| s.iter().any(|s| *s != IsaSourceKind::IgcDump))
            .collect();
    let built = d.ur.sycl_built().len();
    eprintln!(
        "pvc: {} of {built} kernels SYCL built from IGC's dumps",
        built - from_binary.len()
    );
    assert!(
        from_binary.is_empty(),
        "kernels SYCL built that IGC dumped but that took another source: {from_binary:?}\n{}",
        d.ctx()
    );
}

/// SYCL's OpenCL adapter on pvc, with IGC's dumps.
#[test]
fn opencl_pvc_exact_counts_all_matched() {
    let t = llama_scratch(&PVC, "opencl");
    let d = decode(&PVC, Backend::OpenCl, t.path(), &["--isa", "dump"]);
    assert_exact_and_matched(&PVC, &d);
}

/// SYCL's Level Zero adapter v2 on bmg (its default there): launches
/// through `zeCommandListAppendLaunchKernelWithArguments` on immediate lists.
#[test]
fn v2_bmg_exact_counts_all_matched() {
    let t = llama_scratch(&BMG, "v2");
    let d = decode(&BMG, Backend::LevelZero, t.path(), &[]);
    assert_exact_and_matched(&BMG, &d);
}
