//! The C workload on each GPU that `--emulate` names, through each of the
//! three ways to Level Zero: on the devices the stack's NEO has (pvc and dg2
//! on Debian 12's NEO 22.43; pvc, dg2, mtl, Xe2's bmg and lnl and Xe3's ptl
//! on sid's NEO 26), every launch counted exactly, every kernel matched to
//! IGC's `.asm` for that device, the device recorded as NEO gives it; on
//! the others, a refusal before the program runs that names the stack's NEO
//! and the devices it has.
//!
//! In both ISA modes: the default (IGC's dumps) and `--isa binary`, where
//! every kernel's ISA is IGA's disassembly of the module binary the driver
//! ran, with the instruction count of IGC's `.asm` for it.
//!
//! `per_device!` makes one test per device, way and mode, so that a
//! failure names them (and the harness adds the stack).

use serde_json::Value;
use std::collections::BTreeMap;
use xpu_asm_tests::*;

macro_rules! per_device {
    ($($dev:ident),* $(,)?) => {
        $(
            mod $dev {
                #[test]
                fn link() {
                    super::workload_on(stringify!($dev), "link");
                }
                #[test]
                fn ddi() {
                    super::workload_on(stringify!($dev), "ddi");
                }
                #[test]
                fn dlsym() {
                    super::workload_on(stringify!($dev), "dlsym");
                }
                #[test]
                fn link_isa_binary() {
                    super::isa_binary_on(stringify!($dev), "link");
                }
                #[test]
                fn ddi_isa_binary() {
                    super::isa_binary_on(stringify!($dev), "ddi");
                }
                #[test]
                fn dlsym_isa_binary() {
                    super::isa_binary_on(stringify!($dev), "dlsym");
                }
            }
        )*
    };
}

per_device!(pvc, dg2, mtl, bmg, lnl, ptl);

/// What NEO and IGC make of each device: the PCI device id and IP version
/// NEO reports (NEO 22.43 reports no IP version), and IGC's `//.platform`, SIMD width and register count of
/// the workload's kernels.
struct Expected {
    device_id: u32,
    ip_version: u32,
    platform: &'static str,
    simd: u64,
    grf: u64,
}

fn expected_device(dev: &str) -> Expected {
    let e = |device_id, ip_version, platform, grf| Expected {
        device_id,
        ip_version,
        platform,
        simd: 32,
        grf,
    };
    match dev {
        "pvc" => e(0x0bd5, 0x030f_0007, "PVCXT", 128),
        "dg2" => e(0x4f80, 0x030d_c008, "DG2", 128),
        "mtl" => e(0x7d40, 0x0311_8004, "MTL", 128),
        "bmg" => e(0xe202, 0x0500_4000, "XE2", 128),
        "lnl" => e(0x64a0, 0x0501_0004, "XE2", 128),
        // Xe3: IGC gives these kernels 64 registers.
        "ptl" => e(0xb080, 0x0780_0004, "XE3", 64),
        other => panic!("no expectation for {other}"),
    }
}

/// The steps, with a distinct count for each kernel and module.
fn steps_a_and_b() -> Vec<String> {
    [
        format!("imm:a:{VECTOR_ADD}:5"),
        "coop:a:scale:3".into(),
        "reg:a:scale:2:4".into(),
        "indirect:a:scale_v2:4".into(),
        "multi:a:common_kernel,scale_v2:2".into(),
        "imm:b:common_kernel:7".into(),
        "imm:b:only_in_b:1".into(),
    ]
    .into()
}

/// `(launches, appended)` per (kernel, module sha256) for [`steps_a_and_b`].
fn want_counts() -> BTreeMap<(String, String), (u64, u64)> {
    let (a, b) = (sha256_file(&spirv("a")), sha256_file(&spirv("b")));
    [
        (VECTOR_ADD, &a, (5, 5)),
        // 3 cooperative, then 2 appended to a list executed 4 times.
        (SCALE, &a, (3 + 8, 3 + 2)),
        (SCALE_V2, &a, (4 + 2, 4 + 2)),
        (COMMON, &a, (2, 2)),
        (COMMON, &b, (7, 7)),
        (ONLY_IN_B, &b, (1, 1)),
    ]
    .into_iter()
    .map(|(n, sha, c)| ((n.to_string(), sha.clone()), c))
    .collect()
}

/// `xpu-asm-run --emulate DEV --json -o OUT -- workload --via VIA ...`.
fn capture_device(s: &Scratch, dev: &str, via: &str) -> Run {
    capture_device_with(s, dev, via, &[], None)
}

/// [`capture_device`] with more options of xpu-asm-run (`--isa binary`), and
/// NEO's compiler cache in `neo_cache` when given.
fn capture_device_with(
    s: &Scratch,
    dev: &str,
    via: &str,
    options: &[&str],
    neo_cache: Option<&std::path::Path>,
) -> Run {
    let mut c = Capture::emulating(dev, &s.out)
        .options(["--json", "-q"])
        .options(options)
        .program(workload_for(via))
        .args(["--via", via])
        .module("a", &spirv("a"))
        .module("b", &spirv("b"))
        .args(steps_a_and_b());
    if let Some(cache) = neo_cache {
        c = c.env("NEO_CACHE_DIR", cache);
    }
    // Nothing of NEO's from the test's own environment: --emulate sets it.
    for (k, _) in neo_env_for(dev) {
        c = c.env_remove(k);
    }
    c.run()
}

fn workload_on(dev: &str, via: &str) {
    let s = scratch("devices");
    let r = capture_device(&s, dev, via);
    if !stack().products().contains(&dev) {
        // Refused before anything runs: no capture folder, no program.
        r.assert_status(2);
        let err = r.stderr();
        let info = stack_info();
        // 22.43 of 22.43.24595.41-1: ocloc's own version goes on as
        // 24595 or 039122.
        let neo: Vec<&str> = info.neo.split('.').take(2).collect();
        let neo = neo.join(".");
        assert!(
            err.contains(&format!("--emulate {dev}: this system's NEO {neo}."))
                && err.contains(&format!(" cannot emulate {dev}; its ocloc has: "))
                && stack().products().iter().all(|p| err.contains(p)),
            "{}",
            r.ctx()
        );
        assert!(r.stdout().is_empty(), "{}", r.ctx());
        assert!(!s.out.exists(), "{}", r.ctx());
        return;
    }
    r.assert_status(0);
    let report = r.report();
    let want = expected_device(dev);
    let mut got = BTreeMap::new();
    for k in report["kernels"].as_array().into_iter().flatten() {
        let field = |f: &str| k[f].as_u64().unwrap_or(u64::MAX);
        let key = (
            k["name"].as_str().unwrap_or("?").to_string(),
            k["module_sha256"].as_str().unwrap_or("?").to_string(),
        );
        assert!(
            got.insert(key, (field("launches"), field("appended")))
                .is_none(),
            "listed twice: {k}\n{}",
            r.ctx()
        );
        assert_eq!(k["status"], "matched", "{k}\n{}", r.ctx());
        assert_eq!(
            (k["platform"].as_str(), field("simd"), field("grf")),
            (Some(want.platform), want.simd, want.grf),
            "{k}\n{}",
            r.ctx()
        );
        let asm = r.out.join(k["asm"].as_str().unwrap_or("?"));
        let text = std::fs::read_to_string(&asm)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", asm.display(), r.ctx()));
        let header: Vec<&str> = text.lines().take(2).collect();
        assert_eq!(
            header,
            [
                format!("//.kernel {}", k["name"].as_str().unwrap_or("?")),
                format!("//.platform {}", want.platform)
            ],
            "{}",
            asm.display()
        );
    }
    assert_eq!(got, want_counts(), "launches per kernel\n{}", r.ctx());
    let totals: Value = serde_json::json!({
        "kernels": 6, "launches": 32, "appended": 26, "matched": 6, "unmatched": 0, "filtered_out": 0, "incomplete": 0
    });
    assert_eq!(report["totals"], totals, "{}", r.ctx());
    let rec = only_record(&s.out);
    let devices: Vec<_> = rec.devices.values().collect();
    assert_eq!(devices.len(), 1, "{}", r.ctx());
    let d = devices[0];
    assert_eq!(
        (d.vendor_id, d.device_id, d.ip_version, d.name.as_str()),
        (
            0x8086,
            want.device_id,
            // NEO 22.43 has no ZE_extension_device_ip_version.
            (stack() != Stack::Debian12).then_some(want.ip_version),
            format!("Intel(R) Graphics [{:#06x}]", want.device_id).as_str()
        ),
        "the emulated {dev}\n{}",
        r.ctx()
    );
}

/// `--isa binary` on `dev` through `via`: the same launches as in the
/// default mode, every kernel matched from its module's binary (IGA's
/// disassembly, under the device's platform name), with the instruction
/// count IGC's `.asm` of the default mode has for it, and no dump written.
fn isa_binary_on(dev: &str, via: &str) {
    if !stack().products().contains(&dev) {
        // Refused as in the default mode (see workload_on).
        let s = scratch("devices");
        capture_device_with(&s, dev, via, &["--isa", "binary"], None).assert_status(2);
        assert!(!s.out.exists());
        return;
    }
    let (dumped, binary) = (scratch("devices"), scratch("devices"));
    let d = capture_device(&dumped, dev, via);
    d.assert_status(0);
    // NEO's compiler cache is on in this mode: one of the test's own.
    let cache = binary.out.with_file_name("neo-cache");
    std::fs::create_dir_all(&cache).expect("a cache folder");
    let b = capture_device_with(&binary, dev, via, &["--isa", "binary"], Some(&cache));
    b.assert_status(0);
    let instructions = |r: &Run| -> BTreeMap<(String, String), u64> {
        r.report()["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| {
                let key = (
                    k["name"].as_str().unwrap_or("?").to_string(),
                    k["module_sha256"].as_str().unwrap_or("?").to_string(),
                );
                (key, k["instructions"].as_u64().unwrap_or(0))
            })
            .collect()
    };
    let want = expected_device(dev);
    let report = b.report();
    let mut got = BTreeMap::new();
    for k in report["kernels"].as_array().into_iter().flatten() {
        let key = (
            k["name"].as_str().unwrap_or("?").to_string(),
            k["module_sha256"].as_str().unwrap_or("?").to_string(),
        );
        let field = |f: &str| k[f].as_u64().unwrap_or(u64::MAX);
        got.insert(key, (field("launches"), field("appended")));
        assert_eq!(
            (
                k["status"].as_str(),
                k["isa_source"].as_str(),
                k["platform"].as_str()
            ),
            (Some("matched"), Some("module-binary"), Some(want.platform)),
            "{k}\n{}",
            b.ctx()
        );
    }
    assert_eq!(got, want_counts(), "launches per kernel\n{}", b.ctx());
    assert_eq!(
        instructions(&b),
        instructions(&d),
        "instructions per kernel: --isa binary vs IGC's dumps\n{}\n{}",
        b.ctx(),
        d.ctx()
    );
    let dumps = binary.out.join("dumps");
    let dumped_files = list_files(&dumps);
    assert!(
        dumped_files.iter().all(|f| !f.ends_with(".asm")),
        "IGC dumped in --isa binary: {dumped_files:?}\n{}",
        b.ctx()
    );
}

/// Without a device, where a newcomer lands first: the program's own
/// error, its exit status, `no kernel was launched`, and a hint that no
/// device was found and that `--emulate` compiles its kernels without one
/// (with the products this stack's NEO emulates). For Level Zero on the
/// real driver (this host has no GPU), for Level Zero without any driver
/// (the loader pointed at none), and for OpenCL; never under `--emulate`.
#[test]
fn without_a_device_the_run_says_to_emulate() {
    let s = stack_scratch("no-device");
    let hint = format!(
        "xpu-asm-run: no Level Zero or OpenCL device was found: this host has no Intel GPU (no \
         Intel render node under /dev/dri). `xpu-asm-run --emulate pvc -- COMMAND` compiles the \
         program's kernels for that GPU without one, through the real driver and IGC, and \
         reports their ISA (the kernels do not execute); this system's NEO emulates {}",
        stack().products().join(", ")
    );
    // On a host with an Intel GPU the program may find one: no hint there.
    let gpu = xpu_asm_collector::run::emulate::has_intel_gpu(std::path::Path::new("/sys"));
    let cl_source = format!(
        "src=source:{}",
        workload_src_dir().join("kernels_cl.cl").display()
    );
    // The workload's own arguments (its path first).
    let ze = workload_line("ddi", &["imm:a:scale:3"])[1..].to_vec();
    let cl = [
        "--via",
        "link",
        "--program",
        &cl_source,
        "nd:src:cl_scale:3",
    ]
    .map(String::from);
    let (level_zero, opencl) = (workload_for("ddi"), opencl_workload("link"));
    // The loader (via ddi) finds no driver to load.
    let no_driver = [("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_no_driver.so.1")];
    let cases = [
        ("driver", &level_zero, &ze[..], &[][..], "zeInit failed"),
        (
            "no-driver",
            &level_zero,
            &ze[..],
            &no_driver[..],
            "zeLoaderInit failed",
        ),
        ("opencl", &opencl, &cl[..], &[][..], "clGetPlatformIDs"),
    ];
    for (tag, program, args, env, failed) in cases {
        let r = Capture::new(s.folder(tag))
            .program(program)
            .args(args)
            .envs(env.iter().copied())
            .dir(&s.root)
            .hermetic()
            .run();
        r.assert_status(1);
        let (out, err) = (r.stdout(), r.stderr());
        assert!(
            out.contains("no kernel was launched") && err.contains(failed),
            "{tag}: the program's own error\n{}",
            r.ctx()
        );
        let lines = err.lines().filter(|l| *l == hint).count();
        assert_eq!(
            lines,
            usize::from(!gpu),
            "{tag} on {}: the hint\n{}",
            stack().name(),
            r.ctx()
        );
    }
    // Emulated, the same program launches its kernel: no hint.
    let r = Capture::emulating("pvc", s.folder("emulated"))
        .program(workload_for("ddi"))
        .args(&ze)
        .dir(&s.root)
        .hermetic()
        .run_ok();
    assert!(
        !r.stderr().contains("no Level Zero or OpenCL device"),
        "{}",
        r.ctx()
    );
}

/// A device in any case (`--emulate PVC`: ocloc lists `PVC`) is that
/// device; a product the stack's NEO lacks is refused before anything
/// runs by the option that named it (`--port-to zz`, `port --to zz`),
/// never blamed on `--emulate`.
#[test]
fn a_device_in_any_case_and_a_refusal_naming_its_option() {
    let s = stack_scratch("device-case");
    let ze = workload_line("ddi", &["imm:a:scale:3"])[1..].to_vec();
    let upper = s.folder("upper");
    let r = Capture::emulating("PVC", &upper)
        .options(["--json", "-q"])
        .program(workload_for("ddi"))
        .args(&ze)
        .dir(&s.root)
        .hermetic()
        .run_ok();
    let report = r.report();
    let launched: Vec<(&str, u64)> = report["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or("?"),
                k["launches"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        (report["emulate"].as_str(), launched),
        (Some("pvc"), vec![("scale", 3)]),
        "{}",
        r.ctx()
    );
    let neo = stack_info()
        .neo
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".");
    let refused = |err: &str, option: &str| {
        err.contains(&format!(
            "xpu-asm-run: {option} zz: this system's NEO {neo}."
        )) && err.contains(" cannot emulate zz; its ocloc has: ")
            && !err.contains("--emulate zz")
    };
    let zz = s.folder("zz");
    let r = Capture::emulating("pvc", &zz)
        .options(["--port-to", "dg2,ZZ"])
        .program(workload_for("ddi"))
        .args(&ze)
        .dir(&s.root)
        .hermetic()
        .run();
    r.assert_status(2);
    assert!(refused(&r.stderr(), "--port-to"), "{}", r.ctx());
    assert_eq!(std::fs::read_dir(&zz).unwrap().count(), 0, "nothing ran");
    let r = run_xpu_asm(&["port", upper.to_str().unwrap(), "--to", "zz"], &upper);
    r.assert_status(2);
    assert!(refused(&r.stderr(), "--to"), "{}", r.ctx());
}
