//! The native binary readers and IGA, on binaries the real `ocloc` builds
//! here from OpenCL C, checked against IGC's own `.asm` dumps of the same
//! compilation.
//!
//! The tools are those of the stack the tests run on: `ocloc` from `PATH`,
//! IGA found the collector's way (no variable set). Debian 12's stack
//! (NEO 22.43, IGC 1) builds patch-token binaries and zebins for pvc, dg2,
//! tgllp, icllp and skl; today's (NEO 26, IGC 2: Debian sid, run inside
//! the root that scripts/sid-root.sh makes) builds zebins only, for pvc
//! and dg2 to Xe2 (bmg, lnl), Xe3 (ptl, wcl, nvl-s) and Xe3P (nvl-p, cri).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xpu_asm_isa::header;
use xpu_asm_isa::native::iga::{Iga, IgaError};
use xpu_asm_isa::native::{
    self, instructions, render_asm, Device, Format, NativeError, Platform, Program,
};

/// Kernels with branches (labels), shared local memory, bit operations IGC
/// turns into `bfn`, atomics, 64-bit integer division (emulated), SIMD16
/// sub-group operations and private memory, beside the project's workload
/// kernels.
const EXTRA_CL: &str = r#"
__kernel void branchy(__global float *x, int n) {
    size_t i = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (x[j] > 0.5f) acc += x[j] * j; else acc -= 1.0f;
    }
    x[i] = acc;
}

__kernel void with_slm(__global float *x) {
    __local float tile[256];
    size_t l = get_local_id(0);
    tile[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = tile[255 - l];
}

__kernel void bitwise(__global uint *x) {
    size_t i = get_global_id(0);
    x[i] = (x[i] & x[i + 1]) | x[i + 2];
    x[i + 1] = x[i + 3] ^ (x[i + 4] & ~x[i + 5]);
}

__kernel void atomics(__global int *x, __global float *f) {
    size_t i = get_global_id(0);
    atomic_add(&x[0], (int)i);
    atomic_max(&x[1], (int)i);
    atomic_xchg(&f[0], (float)i);
}

__kernel void int64(__global long *x, __global ulong *y) {
    size_t i = get_global_id(0);
    x[i] = x[i] * x[i + 1] / (x[i + 2] | 1) + (long)(y[i] >> 3) % 7;
}

__attribute__((intel_reqd_sub_group_size(16)))
__kernel void subgroups(__global float *x) {
    size_t i = get_global_id(0);
    float v = x[i];
    v += intel_sub_group_shuffle(v, (get_sub_group_local_id() + 1) % 16);
    v += sub_group_reduce_add(v);
    x[i] = v + sub_group_broadcast(v, 3);
}

__kernel void with_private(__global float *x, __global const int *idx, int n) {
    size_t i = get_global_id(0);
    float tmp[256];
    for (int j = 0; j < 256; ++j) tmp[idx[j]] = x[j + i];
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += tmp[idx[j + 256]];
    x[i] = acc;
}
"#;

/// A SIMD32 kernel with more live values than registers: IGC spills, and
/// compiles the module a second time to try to spill less.
const SPILL_CL: &str = r#"
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void spills(__global float *x, int n) {
    size_t i = get_global_id(0);
    float v[96];
    #pragma unroll
    for (int j = 0; j < 96; ++j) v[j] = x[i + j * 4096];
    for (int r = 0; r < n; ++r) {
        #pragma unroll
        for (int j = 0; j < 96; ++j) v[j] = v[j] * v[(j + 1) % 96] + v[(j + 7) % 96];
    }
    float acc = 0.0f;
    #pragma unroll
    for (int j = 0; j < 96; ++j) acc += v[j] * j;
    x[i] = acc;
}
"#;

const KERNELS_A: [&str; 4] = [
    "_ZTSZ4mainE10vector_add",
    "scale",
    "scale_v2",
    "common_kernel",
];
const KERNELS_B: [&str; 2] = ["common_kernel", "only_in_b"];
const KERNELS_EXTRA: [&str; 7] = [
    "branchy",
    "with_slm",
    "bitwise",
    "atomics",
    "int64",
    "subgroups",
    "with_private",
];

const KERNELS_MIX: [&str; 5] = [
    "mix_mad_loop",
    "mix_atomics",
    "mix_slm",
    "mix_scratch",
    "mix_spill",
];

/// The driver stack of the `ocloc` on `PATH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// Debian 12: NEO 22.43, IGC 1.0.12504 (its ocloc has no `--version`).
    Neo22,
    /// Debian sid: NEO 26.27, IGC 2.40.
    Neo26,
}

fn ocloc_stack() -> Stack {
    static STACK: OnceLock<Stack> = OnceLock::new();
    *STACK.get_or_init(|| {
        let out = Command::new("ocloc")
            .arg("--version")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run ocloc: {e}; it comes with intel-opencl-icd (scripts/install-deps.sh)")
            });
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        if text.contains("Invalid option (arg 1): --version") {
            Stack::Neo22
        } else if text.trim().starts_with("26.") {
            Stack::Neo26
        } else {
            panic!("ocloc --version says {text:?}: these tests know NEO 22.43 (Debian 12) and NEO 26 (Debian sid)")
        }
    })
}

/// The package of this stack's IGA.
fn iga_package() -> &'static str {
    match ocloc_stack() {
        Stack::Neo22 => "libigc1",
        Stack::Neo26 => "libigc2",
    }
}

fn workload_cl(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/workload")
        .join(name)
}

fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("native-tests");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder for the test binaries");
        std::fs::write(dir.join("extra.cl"), EXTRA_CL).expect("extra.cl written");
        std::fs::write(dir.join("spill.cl"), SPILL_CL).expect("spill.cl written");
        dir
    })
}

/// A binary built by the real ocloc (`ocloc compile -file <cl> <args>`),
/// with IGC's dumps in `<root>/<tag>.dumps` when `dumps`. Panics with
/// ocloc's output when it fails, or when ocloc is missing.
fn build(tag: &str, cl: &Path, args: &[&str], dumps: bool) -> (Vec<u8>, PathBuf) {
    let work = root().join(tag);
    std::fs::create_dir_all(&work).unwrap();
    let dump_dir = root().join(format!("{tag}.dumps"));
    let mut cmd = Command::new("ocloc");
    // ocloc writes into its working folder.
    cmd.current_dir(&work)
        .arg("compile")
        .arg("-file")
        .arg(cl)
        .args(args)
        .args(["-output", "out", "-output_no_suffix", "-q"]);
    if dumps {
        cmd.env("IGC_ShaderDumpEnable", "1")
            .env("IGC_DumpToCustomDir", &dump_dir);
    } else {
        cmd.env_remove("IGC_ShaderDumpEnable");
    }
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run {shown}: {e}; ocloc comes with intel-opencl-icd (scripts/install-deps.sh)"
        )
    });
    assert!(
        out.status.success(),
        "{shown} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // NEO 26's ocloc writes out.bin (-output_no_suffix drops the device
    // only), NEO 22.43's out; a fat binary is out on both.
    let file = [work.join("out"), work.join("out.bin")]
        .into_iter()
        .find(|f| f.exists())
        .unwrap_or_else(|| panic!("{shown} left neither out nor out.bin"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    (bytes, dump_dir)
}

struct Built {
    bytes: Vec<u8>,
    dumps: PathBuf,
}

/// Each binary once per test process.
fn built_natives(which: &'static str) -> &'static Built {
    static CACHE: BuildCache = OnceLock::new();
    once(&CACHE, which, || build_named(which))
}

/// Binaries by name, each built once however many tests ask for it at once
/// (two builds of one name would write the same folders together).
type BuildCache = OnceLock<std::sync::Mutex<BTreeMap<String, &'static OnceLock<Built>>>>;

/// `key`'s binary from `cache`, made by `make` for the first test that asks
/// while the others wait for it.
fn once(cache: &'static BuildCache, key: &str, make: impl FnOnce() -> Built) -> &'static Built {
    let cell: &'static OnceLock<Built> = cache
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key.to_string())
        .or_insert_with(|| Box::leak(Box::default()));
    cell.get_or_init(make)
}

fn build_named(which: &str) -> Built {
    let a = workload_cl("kernels_a.cl");
    let b = workload_cl("kernels_b.cl");
    let extra = root().join("extra.cl");
    let spill = root().join("spill.cl");
    let zebin = ["-device", "pvc", "--format", "zebin"];
    let (bytes, dumps) = match which {
        "zebin-a" => build(which, &a, &zebin, true),
        "zebin-b" => build(which, &b, &zebin, true),
        "zebin-extra" => build(which, &extra, &zebin, true),
        "pt-a" => build(which, &a, &["-device", "pvc"], true),
        "pt-b" => build(which, &b, &["-device", "pvc"], true),
        "pt-extra" => build(which, &extra, &["-device", "pvc"], true),
        "fat-a" => build(which, &a, &["-device", "pvc,tgllp"], false),
        "fat-today" => build(which, &a, &["-device", "dg2,bmg,ptl-h"], false),
        "zebin-tgllp-extra" => build(
            which,
            &extra,
            &["-device", "tgllp", "--format", "zebin"],
            true,
        ),
        "zebin-icllp-a" => build(which, &a, &["-device", "icllp", "--format", "zebin"], true),
        "pt-dg2-extra" => build(which, &extra, &["-device", "acm-g10"], true),
        "pt-skl-a" => build(which, &a, &["-device", "skl"], true),
        "zebin-spill" => build(which, &spill, &zebin, true),
        "pt-spill" => build(which, &spill, &["-device", "pvc"], true),
        other => panic!("no binary {other}"),
    };
    Built { bytes, dumps }
}

/// A zebin of `source` (`a`, `b`, `mix`: the workload's; `extra`, `spill`)
/// for `device`, with IGC's dumps, once per test process.
fn built_zebin(device: &str, source: &str) -> &'static Built {
    static CACHE: BuildCache = OnceLock::new();
    let key = format!("zebin-{device}-{source}");
    once(&CACHE, &key, || {
        let cl = match source {
            "a" => workload_cl("kernels_a.cl"),
            "b" => workload_cl("kernels_b.cl"),
            "mix" => workload_cl("kernels_mix.cl"),
            "extra" => root().join("extra.cl"),
            "spill" => root().join("spill.cl"),
            other => panic!("no source {other}"),
        };
        let (bytes, dumps) = build(&key, &cl, &["-device", device, "--format", "zebin"], true);
        Built { bytes, dumps }
    })
}

/// The sources of [`built_zebin`] and their kernels.
const SOURCES: [(&str, &[&str]); 5] = [
    ("a", &KERNELS_A),
    ("b", &KERNELS_B),
    ("mix", &KERNELS_MIX),
    ("extra", &KERNELS_EXTRA),
    ("spill", &["spills"]),
];

/// ocloc's committed patch-token binary of module A (NEO 22.43's, in its
/// ELF wrapper): what NEO 26's ocloc cannot build.
fn committed_patch_tokens() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/module-binaries/module_a.pvc.bin"),
    )
    .unwrap()
}

/// A patch-token binary: built here on NEO 22.43, the committed one on
/// NEO 26.
fn patch_tokens() -> Vec<u8> {
    match ocloc_stack() {
        Stack::Neo22 => built_natives("pt-a").bytes.clone(),
        Stack::Neo26 => committed_patch_tokens(),
    }
}

/// NEO 26's ocloc ignores `--format patchtokens` and writes a zebin:
/// patch-token binaries cannot be built on today's stack (NEO reads them
/// no more since 26.18), and the tests that build them run on Debian 12's.
fn assert_no_patch_tokens_on_neo26() {
    assert_eq!(ocloc_stack(), Stack::Neo26);
    let (bytes, _) = build(
        "pt-refused",
        &workload_cl("kernels_a.cl"),
        &["-device", "pvc", "--format", "patchtokens"],
        false,
    );
    assert_eq!(native::parse(&bytes, None).unwrap().format, Format::Zebin);
}

fn pvc() -> Device {
    Device {
        product: Some("pvc".into()),
        ..Device::default()
    }
}

fn iga() -> &'static Iga {
    static IGA: OnceLock<Iga> = OnceLock::new();
    IGA.get_or_init(|| {
        let iga = Iga::load().unwrap_or_else(|e| panic!("{e}"));
        // Found without help: the IGA of this stack's IGC.
        let expected = match ocloc_stack() {
            Stack::Neo22 => "libiga64.so.1",
            Stack::Neo26 => "libiga64.so.2",
        };
        assert_eq!(iga.path(), expected);
        iga
    })
}

fn kernel_names(p: &Program) -> Vec<String> {
    p.kernels
        .iter()
        .map(|k| String::from_utf8_lossy(&k.name).into_owned())
        .collect()
}

/// The GPUs of today's stack, each with IGC's name for it, as IGC 2.40's
/// dumps print it: pvc, dg2, mtl and arl, Xe2 (bmg, lnl), Xe3 (ptl, wcl,
/// nvl-s) and Xe3P (nvl-p, cri).
const TODAYS_GPUS: [(&str, &str); 11] = [
    ("pvc", "PVCXT"),
    ("dg2", "DG2"),
    ("mtl", "MTL"),
    ("arl-h", "ARL"),
    ("bmg", "XE2"),
    ("lnl", "XE2"),
    ("ptl", "XE3"),
    ("wcl", "XE3"),
    ("nvl-s", "XE3"),
    ("nvl-p", "NVL"),
    ("cri", "XE3P_CRI"),
];

mod analyses;
mod disassembly;
mod iga;
mod metadata;
