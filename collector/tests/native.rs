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

#[test]
fn zebin_kernels_with_their_metadata() {
    let p = native::parse(&built_natives("zebin-a").bytes, None).unwrap();
    assert_eq!(p.format, Format::Zebin);
    assert_eq!(p.fat_entry, None);
    // From the binary's own notes: no device was given.
    assert_eq!(
        p.platform,
        Some(Platform {
            iga_gen: 0x0100_0004,
            name: "PVCXT".into()
        })
    );
    assert_eq!(kernel_names(&p), KERNELS_A);
    for k in &p.kernels {
        assert_eq!((k.simd, k.grf), (Some(32), Some(128)), "{:?}", k.name);
        // Code only, without the section's padding: whole instructions.
        assert!(!k.code.is_empty() && k.code.len() % 8 == 0);
    }
    let extra = native::parse(&built_natives("zebin-extra").bytes, None).unwrap();
    assert_eq!(kernel_names(&extra), KERNELS_EXTRA);
    let slm = extra.kernel(b"with_slm").unwrap();
    assert_eq!(slm.slm_bytes, Some(1024));
    assert_eq!(extra.kernel(b"subgroups").unwrap().simd, Some(16));
}

#[test]
fn patch_token_kernels_with_their_metadata_bare_and_wrapped() {
    if ocloc_stack() == Stack::Neo26 {
        // The committed binary (module A of the collector's test data):
        // read as on Debian 12.
        let bytes = committed_patch_tokens();
        let p = native::parse(&bytes, None).unwrap();
        assert_eq!(p.format, Format::PatchTokensElf);
        assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
        assert_eq!(kernel_names(&p), ["vector_add", "vector_add_scaled"]);
        assert_no_patch_tokens_on_neo26();
        return;
    }
    let bytes = &built_natives("pt-a").bytes;
    let p = native::parse(bytes, None).unwrap();
    assert_eq!(p.format, Format::PatchTokensElf);
    assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
    assert_eq!(kernel_names(&p), KERNELS_A);
    for k in &p.kernels {
        assert_eq!((k.simd, k.grf), (Some(32), Some(128)), "{:?}", k.name);
    }

    // The program alone, out of its ELF wrapper: the same kernels.
    use object::{Object, ObjectSection};
    let elf = object::File::parse(&bytes[..]).unwrap();
    let section = elf
        .section_by_name("Intel(R) OpenCL Device Binary")
        .expect("ocloc's patch-token ELF has the program section");
    let bare = native::parse(section.data().unwrap(), None).unwrap();
    assert_eq!(bare.format, Format::PatchTokens);
    assert_eq!(bare.kernels, p.kernels);

    let extra = native::parse(&built_natives("pt-extra").bytes, None).unwrap();
    assert_eq!(kernel_names(&extra), KERNELS_EXTRA);
    assert_eq!(extra.kernel(b"with_slm").unwrap().slm_bytes, Some(1024));
    assert_eq!(extra.kernel(b"subgroups").unwrap().simd, Some(16));
}

#[test]
fn a_fat_binary_gives_the_member_of_the_device() {
    let bytes = &built_natives("fat-a").bytes;
    let p = native::parse(bytes, Some(&pvc())).unwrap();
    assert_eq!(p.fat_entry.as_deref(), Some("64.12.60.7"));
    assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
    assert_eq!(kernel_names(&p), KERNELS_A);

    // The device as the driver reports it: PCI id only, or IP version only.
    let by_id = Device {
        device_id: Some(0x0bd5),
        ..Device::default()
    };
    assert_eq!(
        native::parse(bytes, Some(&by_id))
            .unwrap()
            .fat_entry
            .as_deref(),
        Some("64.12.60.7")
    );
    let tgl = Device {
        ip_version: Some(native::ip_version(12, 0, 0)),
        ..Device::default()
    };
    let t = native::parse(bytes, Some(&tgl)).unwrap();
    assert_eq!(t.fat_entry.as_deref(), Some("64.12.0.0"));
    assert_eq!(t.platform.as_ref().map(|p| p.name.as_str()), Some("TGLLP"));
    assert_eq!(kernel_names(&t), KERNELS_A);
    // Another GPU's code: IGA reads it as that GPU's.
    for k in &t.kernels {
        let text = iga()
            .disassemble(t.platform.as_ref().unwrap(), &k.code)
            .unwrap();
        // The end of thread, then (IGC 2) padding after it.
        assert!(
            instructions(&text).iter().any(|i| i.contains("EOT")),
            "{text}"
        );
    }

    let dg2 = Device {
        product: Some("dg2".into()),
        ..Device::default()
    };
    match native::parse(bytes, Some(&dg2)) {
        Err(e @ NativeError::NoEntryForDevice { .. }) => {
            let NativeError::NoEntryForDevice { device, entries } = &e else {
                unreachable!()
            };
            assert_eq!(device, "dg2 (IP 12.55.8)");
            assert_eq!(entries, &["64.12.60.7", "64.12.0.0"]);
            assert!(e.to_string().contains("64.12.60.7, 64.12.0.0"), "{e}");
        }
        other => panic!("expected no entry for dg2, got {other:?}"),
    }
    assert!(matches!(
        native::parse(bytes, None),
        Err(NativeError::NoEntryForDevice { .. })
    ));
    if ocloc_stack() == Stack::Neo26 {
        todays_fat_binary();
    }
}

/// NEO 26's fat binary of dg2, bmg and ptl-h (members `64.dg2`, `64.bmg`
/// and `64.30.0.4`: ocloc names each after the name it was given, or its
/// IP version): each device, as NEO 26 reports it (PCI id and IP version),
/// gets its member and its platform.
fn todays_fat_binary() {
    let bytes = &built_natives("fat-today").bytes;
    for (id, ip, entry, name) in [
        (0x4f80, (12, 55, 8), "64.dg2", "DG2"),
        (0xe202, (20, 1, 0), "64.bmg", "XE2"),
        (0xb080, (30, 0, 4), "64.30.0.4", "XE3"),
    ] {
        let device = Device {
            device_id: Some(id),
            ip_version: Some(native::ip_version(ip.0, ip.1, ip.2)),
            ..Device::default()
        };
        let p = native::parse(bytes, Some(&device)).unwrap();
        assert_eq!(p.fat_entry.as_deref(), Some(entry));
        let platform = p.platform.clone().unwrap();
        assert_eq!(platform.name, name);
        assert_eq!(kernel_names(&p), KERNELS_A);
        for k in &p.kernels {
            let text = iga().disassemble(&platform, &k.code).unwrap();
            assert!(
                instructions(&text).iter().any(|i| i.contains("EOT")),
                "{text}"
            );
        }
    }
}

/// IGC's `.asm` files of kernel `name` in `dumps`, for SIMD width `simd`:
/// one, or one per compilation when IGC compiled the module again after
/// spills (`OCL_asm<hash>_1_simd32...`).
fn igc_asms(dumps: &Path, name: &[u8], simd: u32) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dumps)
        .unwrap_or_else(|e| panic!("IGC left no dumps in {}: {e}", dumps.display()))
    {
        let path = e.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !file.ends_with(".asm") || !file.contains(&format!("_simd{simd}_")) {
            continue;
        }
        let h = header::parse_header(std::fs::File::open(&path).unwrap(), 1 << 20).unwrap();
        if h.kernel.as_deref() == Some(name) {
            found.push(path);
        }
    }
    assert!(
        !found.is_empty(),
        "no SIMD{simd} .asm of {} in {}",
        String::from_utf8_lossy(name),
        dumps.display()
    );
    found
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Every kernel's disassembly, rendered, has exactly the instructions of
/// IGC's `.asm` for it (of one of them, when IGC compiled it more than
/// once): the same lines once comments and label names are set aside, so
/// the same count and the same opcodes in the same order.
fn cross_check(which: &'static str, expected: &[&str]) {
    cross_check_built(which, built_natives(which), expected);
}

/// [`cross_check`] of binary `b`, named `which` in failures. Returns the
/// number of instructions compared.
fn cross_check_built(which: &str, b: &Built, expected: &[&str]) -> usize {
    let mut compared = 0;
    let p = native::parse(&b.bytes, None).unwrap();
    assert_eq!(kernel_names(&p), expected);
    let platform = p.platform.clone().unwrap();
    for k in &p.kernels {
        let shown = String::from_utf8_lossy(&k.name);
        let text = iga().disassemble(&platform, &k.code).unwrap();
        let ours = render_asm(k, &p, &text, &native::SourceFiles::default());
        let all = igc_asms(&b.dumps, &k.name, k.simd.unwrap());
        let a = instructions(&ours);
        let theirs = all.iter().find(|t| instructions(t) == a).unwrap_or(&all[0]);
        let t = instructions(theirs);
        if a != t {
            let first = a.iter().zip(&t).position(|(x, y)| x != y);
            panic!(
                "{which}: {shown}: {} instructions disassembled, {} in IGC's .asm; first difference at {first:?}:\n  ours:  {:?}\n  IGC's: {:?}",
                a.len(),
                t.len(),
                first.map(|i| &a[i]),
                first.map(|i| &t[i])
            );
        }
        // The headers agree where both speak.
        let ha = header::parse_header(ours.as_bytes(), 1 << 20).unwrap();
        let ht = header::parse_header(theirs.as_bytes(), 1 << 20).unwrap();
        assert_eq!(ha.kernel, ht.kernel);
        assert_eq!(ha.platform, ht.platform, "{shown}");
        assert_eq!(ha.grf, ht.grf, "{shown}");
        assert_eq!(ha.instructions, ht.instructions, "{shown}");
        assert_eq!(ha.instructions, Some(a.len() as u64));
        compared += a.len();
        if k.name == b"spills" {
            match ht.spill_bytes {
                // The binary's scratch space holds IGC's spills.
                Some(spill) => assert!(
                    spill > 0 && k.scratch_bytes >= Some(spill),
                    "{which}: IGC spilled {spill} bytes, the binary has scratch {:?}",
                    k.scratch_bytes
                ),
                // Xe3's IGC chooses the register file's size: 256
                // registers, and no spill.
                None => assert!(
                    ht.grf > Some(128) && k.grf == ht.grf,
                    "{which}: IGC neither spilled nor took more than 128 registers ({:?})",
                    ht.grf
                ),
            }
        }
        if k.name == b"with_private" {
            // 256 floats for each of 32 lanes, on the stack in scratch
            // space (PVC) or in stateless private memory (DG2). IGC's
            // header speaks of the stack only.
            assert_eq!(
                k.scratch_bytes.or(k.stateless_private_bytes),
                Some(32768),
                "{which}"
            );
            assert_eq!(ht.private_memory_bytes, k.scratch_bytes, "{which}");
        }
        // The binary's private memory in scratch space is IGC's figure
        // (IGC 2's `private_size`); IGC 1's zebins do not give it.
        if p.format == native::Format::Zebin {
            let expected = match ocloc_stack() {
                Stack::Neo26 => ht.private_memory_bytes,
                Stack::Neo22 => None,
            };
            assert_eq!(k.private_memory_bytes, expected, "{which}: {shown}");
        }
    }
    compared
}

#[test]
fn zebin_disassembly_is_igcs_asm() {
    cross_check("zebin-a", &KERNELS_A);
    cross_check("zebin-b", &KERNELS_B);
    cross_check("zebin-extra", &KERNELS_EXTRA);
}

#[test]
fn patch_token_disassembly_is_igcs_asm() {
    if ocloc_stack() == Stack::Neo26 {
        assert_no_patch_tokens_on_neo26();
        return;
    }
    cross_check("pt-a", &KERNELS_A);
    cross_check("pt-b", &KERNELS_B);
    cross_check("pt-extra", &KERNELS_EXTRA);
}

#[test]
fn spilling_kernel_disassembly_is_igcs_asm() {
    cross_check("zebin-spill", &["spills"]);
    match ocloc_stack() {
        Stack::Neo22 => cross_check("pt-spill", &["spills"]),
        Stack::Neo26 => assert_no_patch_tokens_on_neo26(),
    }
}

/// Other GPUs than PVC: their platform from the binary alone, and their
/// instructions and `//.platform` names as IGC's.
#[test]
fn other_gpus_disassembly_is_igcs_asm() {
    cross_check("zebin-tgllp-extra", &KERNELS_EXTRA);
    match ocloc_stack() {
        Stack::Neo22 => {
            cross_check("zebin-icllp-a", &KERNELS_A);
            cross_check("pt-dg2-extra", &KERNELS_EXTRA);
            cross_check("pt-skl-a", &KERNELS_A);
        }
        // IGC 2 compiles for Gen12 (tgllp) and later only.
        Stack::Neo26 => {
            cross_check_built(
                "zebin-dg2-extra",
                built_zebin("dg2", "extra"),
                &KERNELS_EXTRA,
            );
        }
    }
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

/// On today's stack, every GPU's zebins of the C workload's kernels (and
/// the kernels above): the platform from the binary alone, and IGA 2.40's
/// instructions are those of IGC 2.40's `.asm` for each kernel.
#[test]
fn todays_gpus_disassembly_is_igcs_asm() {
    if ocloc_stack() == Stack::Neo22 {
        // NEO 22.43's ocloc knows none of Xe2 and later.
        let out = Command::new("ocloc")
            .current_dir(root())
            .args(["compile", "-q", "-device", "bmg", "-file"])
            .arg(workload_cl("kernels_a.cl"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
        return;
    }
    let mut counts = Vec::new();
    for (device, name) in TODAYS_GPUS {
        let mut n = 0;
        for (source, kernels) in SOURCES {
            let b = built_zebin(device, source);
            let p = native::parse(&b.bytes, None).unwrap();
            assert_eq!(
                p.platform.as_ref().map(|p| p.name.as_str()),
                Some(name),
                "{device}"
            );
            n += cross_check_built(&format!("{device} {source}"), b, kernels);
        }
        counts.push(format!("{device} {n}"));
    }
    eprintln!("instructions compared: {}", counts.join(", "));
}

#[test]
fn iga_is_usable_from_many_threads_at_once() {
    let p = native::parse(&built_natives("zebin-extra").bytes, None).unwrap();
    let platform = p.platform.clone().unwrap();
    let serial: Vec<String> = p
        .kernels
        .iter()
        .map(|k| iga().disassemble(&platform, &k.code).unwrap())
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..5 {
                        for (k, want) in p.kernels.iter().zip(&serial) {
                            assert_eq!(&iga().disassemble(&platform, &k.code).unwrap(), want);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn iga_refusals_are_errors() {
    let unknown = Platform {
        iga_gen: 0x7777_0000,
        name: "nothing".into(),
    };
    let p = native::parse(&built_natives("zebin-a").bytes, None).unwrap();
    let code = &p.kernels[0].code;
    let e = iga().disassemble(&unknown, code).unwrap_err();
    assert!(matches!(e, IgaError::Platform { .. }), "{e}");
    assert!(e.to_string().contains("nothing"), "{e}");
    // Bytes that are no instruction at all.
    let platform = p.platform.clone().unwrap();
    let garbage: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) | 0x80).collect();
    match iga().disassemble(&platform, &garbage) {
        Err(IgaError::Decode { messages, .. }) => assert!(!messages.is_empty()),
        Ok(text) => panic!("garbage decoded as\n{text}"),
        Err(other) => panic!("{other}"),
    }
    // Real code with a few bytes changed: text or an error, never a crash.
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut decoded, mut refused) = (0, 0);
    for _ in 0..300 {
        let mut c = code.clone();
        for _ in 0..1 + next() % 6 {
            let at = (next() % c.len() as u64) as usize;
            c[at] = next() as u8;
        }
        match iga().disassemble(&platform, &c) {
            Ok(_) => decoded += 1,
            Err(IgaError::Decode { .. }) => refused += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(decoded + refused, 300);
    // A partial last instruction.
    let _ = iga().disassemble(&platform, &code[..code.len() - 3]);

    let e = Iga::load_from(Path::new("/nonexistent/libiga64.so.1")).unwrap_err();
    assert!(e.to_string().contains(iga_package()), "{e}");
}

/// Every prefix of a real binary, and the binary with each header byte
/// changed: an answer (error or not), never a panic or a huge allocation.
fn hostile(bytes: &[u8]) {
    let step = (bytes.len() / 400).max(1);
    for n in (0..bytes.len()).step_by(step) {
        let _ = native::parse(&bytes[..n], Some(&pvc()));
    }
    for at in 0..bytes.len().min(256) {
        for v in [0u8, 0xff, 0x7f] {
            let mut b = bytes.to_vec();
            b[at] = v;
            let _ = native::parse(&b, Some(&pvc()));
        }
    }
}

#[test]
fn without_its_notes_a_zebin_takes_the_platform_of_the_device() {
    use object::read::elf::{ElfFile64, FileHeader};
    use object::{Object, ObjectSection};
    let mut bytes = built_natives("zebin-a").bytes.clone();
    let (shoff, note) = {
        let elf = ElfFile64::<object::Endianness>::parse(&bytes[..]).unwrap();
        let shoff = elf.elf_header().e_shoff(elf.endian()) as usize;
        let note = elf
            .section_by_name(".note.intelgt.compat")
            .unwrap()
            .index()
            .0;
        (shoff, note)
    };
    // sh_type (4 bytes in) of the note's section header: now plain data.
    let at = shoff + 64 * note + 4;
    bytes[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(native::parse(&bytes, None).unwrap().platform, None);
    let tgl = Device {
        product: Some("tgllp".into()),
        ..Device::default()
    };
    let p = native::parse(&bytes, Some(&tgl)).unwrap();
    assert_eq!(p.platform.map(|p| p.name), Some("TGLLP".to_string()));
    assert_eq!(
        kernel_names(&native::parse(&bytes, Some(&pvc())).unwrap()),
        KERNELS_A
    );
}

/// Random changes (a fixed sequence) of a few bytes anywhere.
fn mutations(bytes: &[u8], count: usize) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..count {
        let mut b = bytes.to_vec();
        for _ in 0..1 + next() % 8 {
            let at = (next() % b.len() as u64) as usize;
            b[at] = next() as u8;
        }
        let _ = native::parse(&b, Some(&pvc()));
    }
}

#[test]
fn hostile_binaries_give_errors_not_panics() {
    let zebin = &built_natives("zebin-a").bytes;
    hostile(zebin);
    hostile(&patch_tokens());
    hostile(&built_natives("fat-a").bytes);
    for bytes in [zebin, &patch_tokens(), &built_natives("fat-a").bytes] {
        mutations(bytes, 2000);
    }

    // Truncated ELF: the section table is at the end.
    let cut = &zebin[..zebin.len() - 100];
    assert!(matches!(
        native::parse(cut, None),
        Err(NativeError::Corrupt(_))
    ));
    // Section headers said to be far past the end (e_shoff).
    let mut far = zebin.clone();
    far[0x28..0x30].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    assert!(matches!(
        native::parse(&far, None),
        Err(NativeError::Corrupt(_))
    ));
    // Wrong machine (x86-64): not a GPU binary.
    let mut x86 = zebin.clone();
    x86[18..20].copy_from_slice(&62u16.to_le_bytes());
    assert!(matches!(
        native::parse(&x86, None),
        Err(NativeError::Unsupported(_))
    ));

    // NEO's program ELF with its device binary section renamed: only
    // SPIR-V left, nothing native.
    let pt = &patch_tokens();
    let mut spirv_only = pt.clone();
    let name = b"Intel(R) OpenCL Device Binary";
    let at = spirv_only
        .windows(name.len())
        .position(|w| w == name)
        .unwrap();
    spirv_only[at] = b'X';
    let magic = spirv_only.windows(4).position(|w| w == b"CTNI").unwrap();
    spirv_only[magic] = b'X';
    assert!(matches!(
        native::parse(&spirv_only, None),
        Err(NativeError::NotNative(_))
    ));

    // A patch-token program whose kernel heap size points past its end.
    let pos = pt.windows(4).position(|w| w == b"CTNI").unwrap();
    let mut lying = pt.clone();
    let heap_size_at = pos + 28 + 20;
    lying[heap_size_at..heap_size_at + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    match native::parse(&lying, None) {
        Err(NativeError::Corrupt(m)) => assert!(m.contains("past the end"), "{m}"),
        other => panic!("{other:?}"),
    }

    // An ar member whose size points past the archive's end.
    let fat = &built_natives("fat-a").bytes;
    let mut bad = fat.clone();
    // The first member's size field (ar header: 48 bytes in, 10 wide).
    bad[8 + 48..8 + 58].copy_from_slice(b"999999999 ");
    assert!(matches!(
        native::parse(&bad, Some(&pvc())),
        Err(NativeError::Corrupt(_))
    ));
}

/// The live registers of [`xpu_asm_collector::analysis::live`], from the
/// operands in IGA's JSON, against IGA's own dataflow (`-Xprint-defs`) of
/// the same code: equal before every instruction of every kernel on the
/// GPUs whose messages are LSC (pvc, Xe2, Xe3: loops, predication, SLM,
/// atomics, scratch, spills, sub-groups, 64-bit division); on dg2 and
/// tgllp, whose legacy data-port messages IGA decodes to the bytes they
/// touch where xpu-asm counts most of them whole, never below IGA's.
/// Panics naming the stack, the kernel and the first instruction that
/// differs.
#[test]
fn liveness_is_igas_dataflow() {
    for (device, source) in [("dg2", "extra"), ("tgllp", "mix")] {
        if ocloc_stack() == Stack::Neo22 {
            let p = native::parse(&built_zebin(device, source).bytes, None).unwrap();
            let platform = p.platform.clone().unwrap();
            for k in &p.kernels {
                at_least_igas(device, &platform, &k.name, &k.code);
            }
        }
    }
    let builds: &[(&str, &str)] = match ocloc_stack() {
        Stack::Neo22 => &[("pvc", "mix"), ("pvc", "extra"), ("pvc", "spill")],
        Stack::Neo26 => &[
            ("pvc", "mix"),
            ("pvc", "extra"),
            ("pvc", "spill"),
            ("bmg", "mix"),
            ("bmg", "extra"),
            ("ptl", "extra"),
        ],
    };
    let mut jobs = Vec::new();
    for &(device, source) in builds {
        let p = native::parse(&built_zebin(device, source).bytes, None).unwrap();
        let platform = p.platform.clone().unwrap();
        for k in p.kernels {
            jobs.push((device, platform.clone(), k));
        }
    }
    let compared: Vec<usize> = std::thread::scope(|s| {
        let chunks: Vec<_> = jobs.chunks(jobs.len().div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(d, p, k)| same_liveness(d, p, &k.name, &k.code))
                        .sum::<usize>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let n: usize = compared.iter().sum();
    assert!(
        n > 3000,
        "{:?}: only {n} instructions compared",
        ocloc_stack()
    );
}

/// IGA's live bytes and ours before each instruction of a kernel.
fn both_liveness(platform: &Platform, code: &[u8]) -> Vec<(Option<u64>, Option<u64>, String)> {
    use xpu_asm_collector::analysis::flow;
    use xpu_asm_isa::igajson;
    let grf = platform.grf_bytes();
    let inputs = flow::Inputs {
        classes: &[],
        lines: None,
        grf_bytes: grf,
        budget: None,
    };
    let theirs = igajson::parse(&iga().disassemble_json(platform, code, true).unwrap()).unwrap();
    let mut ours = igajson::parse(&iga().disassemble_json(platform, code, false).unwrap()).unwrap();
    let f = flow::analyze(&mut ours, &inputs);
    assert_eq!(f.liveness, "operands");
    assert_eq!(theirs.insts.len(), ours.insts.len());
    theirs
        .insts
        .iter()
        .zip(&ours.insts)
        .map(|(t, o)| (t.live_bytes, o.live_bytes, format!("{} {}", t.op, t.subop)))
        .collect()
}

/// Ours never below IGA's on a kernel.
fn at_least_igas(device: &str, platform: &Platform, name: &[u8], code: &[u8]) {
    let name = String::from_utf8_lossy(name);
    for (i, (t, o, op)) in both_liveness(platform, code).into_iter().enumerate() {
        assert!(t.is_some() && o.is_some());
        assert!(
            o >= t,
            "{:?}: {device} {name}: live GRF bytes before instruction {i} ({op}): {o:?}, IGA's {t:?}",
            ocloc_stack()
        );
    }
}

/// Compares the two analyses on one kernel's code; the instructions
/// compared.
fn same_liveness(device: &str, platform: &Platform, name: &[u8], code: &[u8]) -> usize {
    let name = String::from_utf8_lossy(name);
    let both = both_liveness(platform, code);
    for (i, (t, o, op)) in both.iter().enumerate() {
        assert!(t.is_some(), "{device} {name}: IGA gave no live totals");
        assert_eq!(
            o,
            t,
            "{:?}: {device} {name}: live GRF bytes before instruction {i} ({op})",
            ocloc_stack()
        );
    }
    both.len()
}

/// The binaries of this stack for [`kernel_view_is_igas_json`]: on Debian
/// 12 the C workload's, the extra and spilling kernels for PVC, tgllp,
/// icllp, dg2 and skl (zebins and patch tokens); on sid those of every GPU
/// of [`TODAYS_GPUS`] and tgllp.
fn kernel_view_binaries() -> Vec<(String, &'static Built)> {
    let mut out: Vec<(String, &'static Built)> = Vec::new();
    match ocloc_stack() {
        Stack::Neo22 => {
            for which in [
                "zebin-a",
                "zebin-b",
                "zebin-extra",
                "zebin-spill",
                "pt-a",
                "pt-extra",
                "pt-spill",
                "zebin-tgllp-extra",
                "zebin-icllp-a",
                "pt-dg2-extra",
                "pt-skl-a",
            ] {
                out.push((which.to_string(), built_natives(which)));
            }
            for (device, source) in [("pvc", "mix"), ("dg2", "extra"), ("tgllp", "mix")] {
                out.push((format!("{device} {source}"), built_zebin(device, source)));
            }
        }
        Stack::Neo26 => {
            let devices = TODAYS_GPUS.iter().map(|(d, _)| *d).chain(["tgllp"]);
            for device in devices {
                for (source, _) in SOURCES {
                    out.push((format!("{device} {source}"), built_zebin(device, source)));
                }
            }
        }
    }
    out
}

/// The code IGA's KernelView API gives ([`Iga::decode`]) is the code read
/// from IGA's JSON of it, field for field, for every kernel of every GPU
/// this stack compiles for, and so is the analysis made of it (blocks,
/// loops, live and spilled registers before each instruction).
#[test]
fn kernel_view_is_igas_json() {
    use xpu_asm_collector::analysis::flow;
    use xpu_asm_isa::igajson;
    let binaries = kernel_view_binaries();
    let mut kernels = 0;
    let mut instructions = 0;
    let mut platforms = std::collections::BTreeSet::new();
    let mut unread = std::collections::BTreeSet::new();
    for (which, b) in &binaries {
        let p = native::parse(&b.bytes, None).unwrap();
        let platform = p.platform.clone().unwrap();
        for k in &p.kernels {
            let name = format!("{which}: {}", String::from_utf8_lossy(&k.name));
            let json = iga().disassemble_json(&platform, &k.code, false).unwrap();
            let decoded = iga().decode(&platform, &k.code);
            let mut theirs = match igajson::parse(&json) {
                Ok(code) => code,
                Err(e) => {
                    // IGA's JSON that does not parse (IGA 2.40 writes
                    // Xe3P's `sendg` so): no code from either.
                    assert!(decoded.is_err(), "{:?}: {name}: {e}", ocloc_stack());
                    unread.insert(platform.name.clone());
                    continue;
                }
            };
            let mut ours = decoded.unwrap_or_else(|e| panic!("{:?}: {name}: {e}", ocloc_stack()));
            assert_same_code(&name, &ours, &theirs);
            let inputs = flow::Inputs {
                classes: &[],
                lines: None,
                grf_bytes: platform.grf_bytes(),
                budget: k.grf,
            };
            let (a, b) = (
                flow::analyze(&mut ours, &inputs),
                flow::analyze(&mut theirs, &inputs),
            );
            assert_eq!(a, b, "{:?}: {name}: the analyses differ", ocloc_stack());
            kernels += 1;
            instructions += ours.insts.len();
            platforms.insert(platform.name.clone());
        }
    }
    eprintln!(
        "{:?}: {kernels} kernels, {instructions} instructions, platforms {platforms:?}; no JSON that parses on {unread:?}",
        ocloc_stack()
    );
    let (want_kernels, want_unread): (usize, &[&str]) = match ocloc_stack() {
        Stack::Neo22 => (65, &[]),
        Stack::Neo26 => (190, &["NVL", "XE3P_CRI"]),
    };
    assert_eq!(kernels, want_kernels, "{:?}: {platforms:?}", ocloc_stack());
    assert_eq!(unread.iter().collect::<Vec<_>>(), want_unread);
    assert!(platforms.len() >= 5, "{platforms:?}");
}

/// Panics naming the first instruction or block where two codes differ.
fn assert_same_code(
    name: &str,
    ours: &xpu_asm_isa::decoded::Code,
    theirs: &xpu_asm_isa::decoded::Code,
) {
    assert_eq!(
        (&ours.version, &ours.platform, ours.insts.len()),
        (&theirs.version, &theirs.platform, theirs.insts.len()),
        "{:?}: {name}",
        ocloc_stack()
    );
    for (i, (a, b)) in ours.insts.iter().zip(&theirs.insts).enumerate() {
        assert_eq!(a, b, "{:?}: {name}: instruction {i}", ocloc_stack());
    }
    for (i, (a, b)) in ours.blocks.iter().zip(&theirs.blocks).enumerate() {
        assert_eq!(a, b, "{:?}: {name}: block {i}", ocloc_stack());
    }
    assert_eq!(ours, theirs, "{:?}: {name}", ocloc_stack());
}
