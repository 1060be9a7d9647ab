//! Support for xpu-asm's integration tests: builds the C workload and its
//! kernels, runs programs under the real interposer against the real Level
//! Zero stack (see docs/real-stack.md) and reads back what they recorded.
//!
//! Everything here panics with a message that says how to fix the problem:
//! a test that cannot run its real program must fail, never skip.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use xpu_asm_record::read::ProcessRecord;

pub use xpu_asm_record as record;

/// A temporary folder of the test's own, `xpu-asm-<what>-XXXXXX`, removed
/// when dropped.
pub fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("xpu-asm-{what}-"))
        .tempdir()
        .expect("a temporary folder")
}

/// A temporary folder of the test's own ([`temp_dir`]), for a test that
/// needs the real stack ([`require_stack`] first).
pub fn stack_temp_dir(what: &str) -> tempfile::TempDir {
    require_stack();
    temp_dir(what)
}

/// A count of a report's JSON.
pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Removes from `cmd` what the test's own environment could add to a run:
/// an outer xpu-asm run's variables (`LD_PRELOAD`, `XPU_ASM_OUT`,
/// `XPU_ASM_OWNED`, `XPU_ASM_IGC`), IGC's dump settings and NEO's no-hardware keys.
pub fn hermetic(cmd: &mut Command) {
    cmd.env_remove("LD_PRELOAD")
        .env_remove(record::OUT_ENV)
        .env_remove(record::OWNED_ENV);
    for (name, _) in record::DUMP_ENV.iter().chain(&record::IGC1_DUMP_ENV) {
        cmd.env_remove(name);
    }
    cmd.env_remove(record::IGC_ENV);
    for (name, _) in neo_env() {
        cmd.env_remove(name);
    }
    for (name, _) in NEO22_ENV {
        cmd.env_remove(name);
    }
}

/// [`hermetic`], and `NO_COLOR` removed too: for runs whose colour (on a
/// terminal, or asked for) a test checks.
pub fn hermetic_without_no_color(cmd: &mut Command) {
    hermetic(cmd);
    cmd.env_remove("NO_COLOR");
}

const LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu";
const LOADER: &str = "libze_loader.so.1";
const NEO_DRIVER: &str = "libze_intel_gpu.so.1";

/// No test program may run longer than this; a hang becomes a failure that
/// shows what the program printed so far.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// The three ways the workload reaches Level Zero (`--via`).
pub const WAYS: [&str; 3] = ["link", "ddi", "dlsym"];

/// Kernel names of `kernels_a.cl`.
pub const VECTOR_ADD: &str = "_ZTSZ4mainE10vector_add";
pub const SCALE: &str = "scale";
pub const SCALE_V2: &str = "scale_v2";
pub const COMMON: &str = "common_kernel";
/// Kernel only in `kernels_b.cl` (which also has [`COMMON`]).
pub const ONLY_IN_B: &str = "only_in_b";

/// The driver stacks the tests run on (docs/real-stack.md): the same tests
/// on each, chosen by `XPU_ASM_STACK` (scripts/test.sh runs the suite once on
/// the host's Debian 12 and once inside scripts/sid-root.sh's root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// Debian 12's packages: Level Zero loader 1.8.12, NEO 22.43, IGC 1.0.12504.
    Debian12,
    /// Debian sid's: loader 1.32, NEO 26.27, IGC 2.40.
    Sid,
}

/// The variable that names the stack (`debian12`, the default, or `sid`).
pub const STACK_ENV: &str = "XPU_ASM_STACK";

impl Stack {
    pub fn name(self) -> &'static str {
        match self {
            Stack::Debian12 => "debian12",
            Stack::Sid => "sid",
        }
    }

    /// The devices its NEO emulates (`--emulate`, `ProductFamilyOverride`),
    /// among pvc, dg2, mtl, bmg, lnl, ptl.
    pub fn products(self) -> &'static [&'static str] {
        match self {
            Stack::Debian12 => &["pvc", "dg2"],
            Stack::Sid => &["pvc", "dg2", "mtl", "bmg", "lnl", "ptl"],
        }
    }

    /// The first part of its NEO's version (`intel-opencl-icd`'s).
    fn neo_prefix(self) -> &'static str {
        match self {
            Stack::Debian12 => "22.",
            Stack::Sid => "26.",
        }
    }
}

/// What is installed: the package versions of the stack's parts.
#[derive(Debug)]
pub struct StackInfo {
    pub stack: Stack,
    pub neo: String,
    pub igc: String,
    pub loader: String,
}

impl std::fmt::Display for StackInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stack {} (NEO {}, IGC {}, Level Zero loader {})",
            self.stack.name(),
            self.neo,
            self.igc,
            self.loader
        )
    }
}

fn package_version(names: &[&str]) -> Option<String> {
    names.iter().find_map(|p| {
        let out = Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", p])
            .output()
            .ok()?;
        let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !v.is_empty()).then_some(v)
    })
}

/// The stack of this run: `XPU_ASM_STACK`, checked against the installed
/// NEO. The first call also makes every later panic of the process name the
/// stack, so that a failure says which stack it is of.
pub fn stack_info() -> &'static StackInfo {
    static INFO: OnceLock<StackInfo> = OnceLock::new();
    INFO.get_or_init(|| {
        let stack = match std::env::var(STACK_ENV).as_deref() {
            Err(_) | Ok("") | Ok("debian12") => Stack::Debian12,
            Ok("sid") => Stack::Sid,
            Ok(other) => panic!("{STACK_ENV}={other:?}: expected debian12 or sid"),
        };
        let unknown = || "(not installed)".to_string();
        let info = StackInfo {
            stack,
            neo: package_version(&["intel-opencl-icd", "libze-intel-gpu1"]).unwrap_or_else(unknown),
            igc: package_version(&["libigc2", "libigc1"]).unwrap_or_else(unknown),
            loader: package_version(&["libze1"]).unwrap_or_else(unknown),
        };
        assert!(
            info.neo.starts_with(stack.neo_prefix()),
            "{STACK_ENV}={} but this system's NEO is {}: run the {} tests where that stack is \
             (scripts/test.sh runs the sid tests inside scripts/sid-root.sh's root)",
            stack.name(),
            info.neo,
            stack.name()
        );
        let shown = info.to_string();
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |p| {
            eprintln!("[xpu-asm-tests: on {shown}]");
            default_hook(p);
        }));
        info
    })
}

/// The stack of this run (see [`stack_info`]).
pub fn stack() -> Stack {
    stack_info().stack
}

/// Panics unless the real Level Zero loader, the NEO driver and `ocloc` are
/// installed.
pub fn require_stack() {
    let info = stack_info();
    let mut missing = Vec::new();
    for lib in [LOADER, NEO_DRIVER] {
        let p = Path::new(LIB_DIR).join(lib);
        if !p.exists() {
            missing.push(p.display().to_string());
        }
    }
    if find_in_path("ocloc").is_none() {
        missing.push("ocloc in PATH".to_string());
    }
    if find_in_path("gcc").is_none() {
        missing.push("gcc in PATH".to_string());
    }
    if !Path::new("/usr/include/level_zero/ze_api.h").exists() {
        missing.push("/usr/include/level_zero/ze_api.h".to_string());
    }
    assert!(
        missing.is_empty(),
        "the real Level Zero stack is missing ({}) on {info}; run scripts/install-deps.sh",
        missing.join(", ")
    );
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The variables that make NEO create a PVC device without GPU hardware and
/// write no AUB capture (see docs/real-stack.md): what `--emulate pvc` sets.
pub fn neo_env() -> Vec<(String, String)> {
    neo_env_for("pvc")
}

/// NEO 22.43's keys for writing no AUB stream (its sub-capture mode with a
/// filter past any kernel), as collector/src/run/launch.rs's
/// `EMULATE_NEO22_ENV`: on Debian 12 only.
const NEO22_ENV: [(&str, &str); 3] = [
    ("AUBDumpSubCaptureMode", "1"),
    ("AUBDumpFilterKernelStartIdx", "999999999"),
    ("AUBDumpFilterKernelEndIdx", "999999999"),
];

/// [`neo_env`] for `product`, as `xpu-asm-run --emulate` sets it on this
/// stack (collector/src/run/launch.rs's tables).
pub fn neo_env_for(product: &str) -> Vec<(String, String)> {
    let mut env = vec![
        ("NEOReadDebugKeys", "1"),
        ("SetCommandStreamReceiver", "1"),
        ("ProductFamilyOverride", product),
        ("HardwareInfoOverride", "1x4x8"),
        // OpenCL's waits: else clFinish and blocking reads never return.
        ("EnableTimestampWaitForQueues", "0"),
        // NEO 26: without it zeInit segfaults (Debian builds it without aubstream).
        ("UseAubStream", "0"),
        // NEO 26 on dg2, mtl, bmg, lnl, ptl: else it aborts at device creation.
        ("UseExternalAllocatorForSshAndDsh", "0"),
    ];
    if stack() == Stack::Debian12 {
        env.extend(NEO22_ENV);
    }
    // Else the device id reads 0: lnl's on NEO 26, dg2's on NEO 22.43.
    match product {
        "dg2" => env.push(("ForceDeviceId", "4f80")),
        "lnl" => env.push(("ForceDeviceId", "64a0")),
        _ => {}
    }
    env.into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The workspace root (this crate is `<root>/tests`).
pub fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// Cargo's target folder: `CARGO_TARGET_DIR` when set, else `<root>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                workspace_dir().join(d)
            }
        }
        _ => workspace_dir().join("target"),
    }
}

/// Where the workload and SPIR-V files are built: one folder per stack,
/// since each stack's gcc and ocloc build them.
pub fn build_dir() -> PathBuf {
    let d = target_dir().join("xpu-asm-tests").join(stack().name());
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
    d
}

/// The folder holding the workload's sources.
pub fn workload_src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workload")
}

/// Runs a build command, panicking with its output when it fails.
fn run_build(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "build step failed: {shown}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds into a name private to this process, then renames into place, so
/// that test binaries running at the same time never see a half-written file.
fn build_atomically(dest: &Path, build: impl FnOnce(&Path)) {
    let tmp = dest.with_extension(format!("tmp-{}", std::process::id()));
    build(&tmp);
    std::fs::rename(&tmp, dest)
        .unwrap_or_else(|e| panic!("cannot rename {} to {}: {e}", tmp.display(), dest.display()));
}

struct Workloads {
    /// Linked with `-lze_loader`; only does `--via link`.
    link: PathBuf,
    /// Not linked with the loader; does `--via ddi` and `--via dlsym`.
    dl: PathBuf,
}

fn workloads() -> &'static Workloads {
    static W: OnceLock<Workloads> = OnceLock::new();
    W.get_or_init(|| {
        require_stack();
        let src = workload_src_dir().join("workload.c");
        let dir = build_dir();
        let gcc = |out: &Path, defines: &[&str], libs: &[&str]| {
            let mut cmd = Command::new("gcc");
            cmd.args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                .args(defines)
                .arg(&src)
                .arg("-o")
                .arg(out)
                .args(libs)
                .arg("-lpthread");
            run_build(&mut cmd);
        };
        let link = dir.join("workload-link");
        build_atomically(&link, |out| gcc(out, &["-DVIA_LINK"], &["-lze_loader"]));
        let dl = dir.join("workload-dl");
        // Only libc: the loader must come in by dlopen, not DT_NEEDED.
        build_atomically(&dl, |out| gcc(out, &[], &["-ldl"]));
        Workloads { link, dl }
    })
}

/// The workload binary that does not link the loader (`--via ddi|dlsym`).
pub fn workload() -> PathBuf {
    workloads().dl.clone()
}

/// The workload binary linked with `-lze_loader` (`--via link`).
pub fn workload_link() -> PathBuf {
    workloads().link.clone()
}

/// The workload binary that does `--via <via>`.
pub fn workload_for(via: &str) -> PathBuf {
    match via {
        "link" => workload_link(),
        "ddi" | "dlsym" => workload(),
        other => panic!("unknown way {other:?}; expected one of {WAYS:?}"),
    }
}

/// The two ways the OpenCL workload reaches the ICD loader (`--via`).
pub const CL_WAYS: [&str; 2] = ["link", "dlsym"];

/// The OpenCL workload (`tests/workload/opencl.c`) that does `--via <via>`:
/// linked with the ICD loader (`link`), or `dlopen`ing it (`dlsym`), built
/// once per test process with the stack's gcc and OpenCL headers.
pub fn opencl_workload(via: &str) -> PathBuf {
    static BUILT: [OnceLock<PathBuf>; 2] = [const { OnceLock::new() }; 2];
    let i = CL_WAYS
        .iter()
        .position(|w| *w == via)
        .unwrap_or_else(|| panic!("unknown way {via:?}; expected one of {CL_WAYS:?}"));
    BUILT[i]
        .get_or_init(|| {
            require_stack();
            for need in ["/usr/include/CL/cl.h", "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1"] {
                assert!(
                    Path::new(need).exists(),
                    "{need} is missing on {}: run scripts/install-deps.sh (opencl-c-headers, ocl-icd-libopencl1)",
                    stack_info()
                );
            }
            let dest = build_dir().join(format!("opencl-{via}"));
            build_atomically(&dest, |out| {
                let mut cmd = Command::new("gcc");
                cmd.args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"]);
                if via == "link" {
                    cmd.arg("-DVIA_LINK");
                }
                cmd.arg(workload_src_dir().join("opencl.c")).arg("-o").arg(out);
                cmd.arg(if via == "link" { "-l:libOpenCL.so.1" } else { "-ldl" });
                run_build(&mut cmd);
            });
            dest
        })
        .clone()
}

/// Builds `tests/workload/<cl>` with `ocloc compile` and `args` into
/// `<build dir>/<stem>.<tag>`; `out_file` is what ocloc writes for
/// `-output out -output_no_suffix` (`out`, or `out.spv` with `-spv_only`).
fn ocloc_build(cl: &str, args: &[&str], tag: &str, out_file: &str) -> PathBuf {
    require_stack();
    let stem = cl.trim_end_matches(".cl");
    let dest = build_dir().join(format!("{stem}.{tag}"));
    // ocloc writes into its working folder (it ignores folders in -output).
    let work = tempfile::Builder::new()
        .prefix("ocloc-")
        .tempdir_in(build_dir())
        .expect("a temporary folder in the build folder");
    let mut cmd = Command::new("ocloc");
    cmd.current_dir(work.path())
        .arg("compile")
        .arg("-file")
        .arg(workload_src_dir().join(cl))
        .args(args)
        .args(["-output", "out", "-output_no_suffix", "-q"]);
    run_build(&mut cmd);
    let produced = work.path().join(out_file);
    assert!(
        produced.is_file(),
        "ocloc reported success but left no {} (it left {:?})",
        produced.display(),
        list_files(work.path())
    );
    build_atomically(&dest, |tmp| {
        std::fs::copy(&produced, tmp)
            .unwrap_or_else(|e| panic!("cannot copy {}: {e}", produced.display()));
    });
    dest
}

/// SPIR-V of `tests/workload/kernels_<name>.cl` (`name` is `a` or `b`), built
/// once per test process with `ocloc -spv_only`.
pub fn spirv(name: &str) -> PathBuf {
    static A: OnceLock<PathBuf> = OnceLock::new();
    static B: OnceLock<PathBuf> = OnceLock::new();
    let spv = |cl| ocloc_build(cl, &["-spv_only", "-device", "pvc"], "spv", "out.spv");
    match name {
        "a" => A.get_or_init(|| spv("kernels_a.cl")).clone(),
        "b" => B.get_or_init(|| spv("kernels_b.cl")).clone(),
        other => panic!("no kernel source for module {other:?} (have a, b)"),
    }
}

/// SPIR-V of `tests/workload/kernels_<name>.cl` (`a`, `b`, `mix` or `loops`) built
/// with `ocloc -spv_only -options OPTIONS` (`-g`: with line information),
/// once per test process and options.
pub fn spirv_with(name: &str, options: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<BTreeMap<(String, String), PathBuf>> =
        std::sync::Mutex::new(BTreeMap::new());
    assert!(
        ["a", "b", "mix", "loops", "many", "cl", "spec", "program_a", "program_b"].contains(&name),
        "no kernel source for module {name:?} (have a, b, mix, loops, many, cl, spec, program_a, program_b)"
    );
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built
        .entry((name.to_string(), options.to_string()))
        .or_insert_with(|| {
            let mut args = vec!["-spv_only", "-device", "pvc"];
            if !options.is_empty() {
                args.extend(["-options", options]);
            }
            let tag: String = options
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let tag = if tag.is_empty() {
                "spv".to_string()
            } else {
                format!("{tag}.spv")
            };
            ocloc_build(&format!("kernels_{name}.cl"), &args, &tag, "out.spv")
        })
        .clone()
}

/// A native PVC binary of `kernels_a.cl` in `ocloc`'s default format on this
/// stack, for `--native`: NEO's patch-token program in its ELF wrapper on
/// Debian 12 (NEO 22.43), a zebin on sid (NEO 26 makes nothing else).
pub fn native_a() -> PathBuf {
    native_a_as(match stack() {
        Stack::Debian12 => Native::PatchTokens,
        Stack::Sid => Native::Zebin,
    })
}

/// The native binaries `ocloc` makes (see docs/real-stack.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    /// `ocloc compile -device pvc` of NEO 22.43: a patch-token program in
    /// NEO's ELF wrapper. NEO 26's ocloc makes none (and NEO 26 reads none):
    /// on sid it is [`PATCH_TOKENS_A`], made by NEO 22.43's ocloc.
    PatchTokens,
    /// `ocloc compile -device pvc --format zebin`.
    Zebin,
    /// `ocloc compile -device pvc,tgllp`: an `ar` archive, one member per device.
    FatPvcTgllp,
    /// `ocloc compile -device tgllp`: for another GPU than the emulated pvc.
    TgllpOnly,
}

/// `ocloc compile -file kernels_a.cl -device pvc` of NEO 22.43 (Debian 12),
/// kept in the repository for the stacks whose ocloc makes no patch tokens;
/// workload.rs checks on Debian 12 that its ocloc makes exactly this file.
pub const PATCH_TOKENS_A: &str = "kernels_a.pvc.neo22.bin";

/// `kernels_a.cl` built by `ocloc` as `kind`, once per test process.
pub fn native_a_as(kind: Native) -> PathBuf {
    static BUILT: [OnceLock<PathBuf>; 4] = [const { OnceLock::new() }; 4];
    if kind == Native::PatchTokens && stack() != Stack::Debian12 {
        return workload_src_dir().join(PATCH_TOKENS_A);
    }
    let (i, args, tag): (usize, &[&str], &str) = match kind {
        Native::PatchTokens => (0, &["-device", "pvc"], "native"),
        Native::Zebin => (1, &["-device", "pvc", "--format", "zebin"], "zebin"),
        Native::FatPvcTgllp => (2, &["-device", "pvc,tgllp"], "fat"),
        Native::TgllpOnly => (3, &["-device", "tgllp"], "tgllp"),
    };
    // NEO 26's ocloc adds `.bin` to a single device's binary even with
    // -output_no_suffix (which only drops the device's name there).
    let out = match (stack(), kind) {
        (Stack::Sid, Native::Zebin | Native::TgllpOnly) => "out.bin",
        _ => "out",
    };
    BUILT[i]
        .get_or_init(|| ocloc_build("kernels_a.cl", args, tag, out))
        .clone()
}

/// `target/<profile>` of the running test binary (`.../<profile>/deps/x-hash`),
/// so that a `--release` test run uses the release interposer and never a
/// stale build of the other profile.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    let from_exe = exe
        .as_deref()
        .and_then(Path::parent)
        .filter(|deps| deps.file_name() == Some(OsStr::new("deps")))
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    from_exe.unwrap_or_else(|| {
        target_dir().join(if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        })
    })
}

fn profile_artifact(file: &str, what: &str) -> PathBuf {
    stack_info();
    let f = profile_dir().join(file);
    assert!(
        f.is_file(),
        "{what} not found at {}; build it with `cargo build --workspace` (scripts/test.sh does this)",
        f.display()
    );
    f
}

/// The interposer library built by cargo.
pub fn interposer() -> PathBuf {
    profile_artifact("libxpu_asm_interposer.so", "the interposer library")
}

/// The collector binary built by cargo.
pub fn xpu_asm_run() -> PathBuf {
    profile_artifact("xpu-asm-run", "the collector binary xpu-asm-run")
}

/// Every file under `dir`, relative, with its size; for failure messages.
pub fn list_files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
            match e.metadata() {
                Ok(m) if m.is_dir() => walk(base, &p, out),
                Ok(m) => out.push(format!("{rel} ({} bytes)", m.len())),
                Err(_) => out.push(rel),
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `cmd` with stdin closed, capturing its output, killing it after
/// [`RUN_TIMEOUT`].
pub fn run_with_timeout(cmd: &mut Command) -> Output {
    let mut f = run_until(cmd, RUN_TIMEOUT, Overrun::Kill);
    if let Some(why) = f.overran {
        f.output
            .stderr
            .extend_from_slice(format!("\n[xpu-asm-tests: {why}]\n").as_bytes());
    }
    f.output
}

/// How a command that outlives its time is stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// SIGKILL at once.
    Kill,
    /// SIGINT, as a user's Ctrl-C would be; SIGKILL 3 s later if needed.
    InterruptThenKill,
}

/// What [`run_until`] saw.
pub struct Finished {
    pub output: Output,
    pub elapsed: Duration,
    /// `Some(what happened)` when the command outlived its time.
    pub overran: Option<String>,
}

/// Linux's `ETXTBSY` (`io::ErrorKind::ExecutableFileBusy` is younger than
/// the workspace's Rust).
const ETXTBSY: i32 = 26;

/// Spawns `cmd`, again while the executable is busy (ETXTBSY): a program a
/// test has just written can be held open for writing by a child another
/// test thread forked meanwhile, until that child execs.
pub fn spawn_retrying(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// Runs `cmd` with stdin closed, capturing its output; after `timeout` it is
/// stopped as `how` says.
pub fn run_until(cmd: &mut Command, timeout: Duration, how: Overrun) -> Finished {
    let shown = format!("{cmd:?}");
    let start = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_retrying(cmd).unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let mut so = child.stdout.take().expect("stdout was piped");
    let mut se = child.stderr.take().expect("stderr was piped");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let wait = |child: &mut std::process::Child| {
        child
            .try_wait()
            .unwrap_or_else(|e| panic!("cannot wait for {shown}: {e}"))
    };
    let mut overran = None;
    let status = loop {
        match wait(&mut child) {
            Some(s) => break s,
            None if start.elapsed() > timeout => {
                if how == Overrun::InterruptThenKill {
                    let _ = Command::new("kill")
                        .args(["-INT", &child.id().to_string()])
                        .status();
                    let asked = Instant::now();
                    let mut stopped = None;
                    while asked.elapsed() < Duration::from_secs(3) {
                        stopped = wait(&mut child);
                        if stopped.is_some() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    if let Some(s) = stopped {
                        overran = Some(format!(
                            "still running after {timeout:?}; SIGINT stopped it"
                        ));
                        break s;
                    }
                    overran = Some(format!(
                        "still running after {timeout:?}; SIGINT did not stop it within 3 s either, SIGKILL did"
                    ));
                } else {
                    overran = Some(format!("killed after {timeout:?}"));
                }
                let _ = child.kill();
                break child.wait().expect("wait after kill");
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    Finished {
        output: Output {
            status,
            stdout: t_out.join().unwrap_or_default(),
            stderr: t_err.join().unwrap_or_default(),
        },
        elapsed: start.elapsed(),
        overran,
    }
}

/// The command, its status and output, and the files left under `out`: what
/// a failing test must show.
pub fn describe(cmd: &str, output: &Output, out: &Path) -> String {
    format!(
        "on {}\ncommand: {cmd}\nstatus: {}\nstdout:\n{}\nstderr:\n{}\nfiles under {}:\n  {}",
        stack_info(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        out.display(),
        list_files(out).join("\n  ")
    )
}

fn via_of(args: &[&str]) -> &'static str {
    let via = args
        .iter()
        .position(|a| *a == "--via")
        .and_then(|i| args.get(i + 1))
        .unwrap_or_else(|| panic!("workload arguments {args:?} have no --via"));
    WAYS.iter()
        .find(|w| *w == via)
        .unwrap_or_else(|| panic!("unknown way {via:?}; expected one of {WAYS:?}"))
}

/// The workload command for `args` with the NEO no-hardware environment,
/// run in `out` (so that any stray file it writes shows in failure messages).
pub fn workload_command(out: &Path, args: &[&str]) -> Command {
    std::fs::create_dir_all(out).unwrap_or_else(|e| panic!("cannot create {}: {e}", out.display()));
    let mut cmd = Command::new(workload_for(via_of(args)));
    cmd.args(args).current_dir(out).envs(neo_env());
    cmd
}

/// Adds the interposer to `cmd`: `LD_PRELOAD` and `XPU_ASM_OUT=out`.
pub fn trace(cmd: &mut Command, out: &Path) {
    cmd.env("LD_PRELOAD", interposer())
        .env(xpu_asm_record::OUT_ENV, out);
}

/// Runs the workload under the interposer without judging how it ended.
pub fn run_traced_any(out: &Path, args: &[&str]) -> (String, Output) {
    let mut cmd = workload_command(out, args);
    trace(&mut cmd, out);
    let shown = shell_words(&cmd);
    (shown, run_with_timeout(&mut cmd))
}

/// Runs the workload under the interposer with `XPU_ASM_OUT=out`; panics with
/// everything needed to diagnose it unless it exits with status 0.
pub fn run_traced(out: &Path, args: &[&str]) -> Output {
    let (shown, output) = run_traced_any(out, args);
    assert!(
        output.status.success(),
        "the traced workload failed\n{}",
        describe(&shown, &output, out)
    );
    output
}

/// Runs the workload without the interposer; panics unless it succeeds.
pub fn run_plain(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = workload_command(dir, args);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "the workload failed without the interposer\n{}",
        describe(&shown, &output, dir)
    );
    output
}

/// The command as a shell line, environment first, for failure messages.
pub fn shell_words(cmd: &Command) -> String {
    let q = |s: &OsStr| {
        let s = s.to_string_lossy();
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
        {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    let mut words = Vec::new();
    if let Some(d) = cmd.get_current_dir() {
        words.push(format!("cd {} &&", q(d.as_os_str())));
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            words.push(format!("{}={}", k.to_string_lossy(), q(v)));
        }
    }
    words.push(q(cmd.get_program()));
    words.extend(cmd.get_args().map(q));
    words.join(" ")
}

/// Every process record under `out/records`.
pub fn records(out: &Path) -> Vec<ProcessRecord> {
    let dir = out.join(xpu_asm_record::RECORDS_DIR);
    xpu_asm_record::read::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "no records: {e}\nfiles under {}:\n  {}",
            out.display(),
            list_files(out).join("\n  ")
        )
    })
}

/// The one record under `out`, which must have been read without warnings.
pub fn only_record(out: &Path) -> ProcessRecord {
    let mut recs = records(out);
    assert_eq!(
        recs.len(),
        1,
        "expected the record of exactly one process, found {}:\n{recs:#?}\nfiles under {}:\n  {}",
        recs.len(),
        out.display(),
        list_files(out).join("\n  ")
    );
    let rec = recs.pop().expect("length checked above");
    assert!(
        rec.warnings.is_empty(),
        "reading the record gave warnings: {:#?}\nrecord: {rec:#?}",
        rec.warnings
    );
    rec
}

/// `(kernel name, module sha256)`: how a kernel is told apart across handles.
pub type KernelKey = (String, String);

/// `(launches, appended)` summed over every kernel handle of the same name in
/// the same module (threads, re-creation), keyed by name and module sha256.
pub fn counts(rec: &ProcessRecord) -> BTreeMap<KernelKey, (u64, u64)> {
    let mut m = BTreeMap::new();
    for k in rec.kernels.values() {
        let sha = match rec.modules.get(&k.module) {
            Some(module) => module.sha256.clone(),
            None => format!("<module id {} not in the record>", k.module),
        };
        let e = m
            .entry((String::from_utf8_lossy(&k.name).into_owned(), sha))
            .or_insert((0, 0));
        e.0 += k.launches;
        e.1 += k.appended;
    }
    m
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    xpu_asm_record::hex(&Sha256::digest(bytes))
}

/// Lower-case hex SHA-256 of a file's contents.
pub fn sha256_file(path: &Path) -> String {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    xpu_asm_record::hex(&Sha256::digest(&bytes))
}

/// The per-process IGC dump folder of `rec`, as its record names it:
/// `out/dumps/<host>-<pid>-<token>`.
pub fn dump_dir(out: &Path, rec: &ProcessRecord) -> PathBuf {
    out.join(&rec.dump_dir)
}

/// The kernel each `.asm` file of `dir` is for, from its `//.kernel` line
/// (a substring match would confuse `scale` with `scale_v2`).
pub fn asm_kernels(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut m = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return m;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.extension() != Some(OsStr::new("asm")) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        if let Some(name) = text
            .lines()
            .find_map(|l| l.strip_prefix("//.kernel "))
            .map(|n| n.trim().to_string())
        {
            m.insert(p, name);
        }
    }
    m
}

/// The distinct kernel names of [`asm_kernels`].
pub fn asm_kernel_names(dir: &Path) -> BTreeSet<String> {
    asm_kernels(dir).into_values().collect()
}

/// Stdout as lines.
pub fn stdout_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// What an IGC dump folder holds per module: the sha256 of each dumped
/// `OCL_asm<hash>.spv` and the kernels named by that module's
/// `OCL_asm<hash>_*.asm` files.
pub fn dumped_modules(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let kernels = asm_kernels(dir);
    let mut m = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return m;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let p = e.path();
        let (Some(stem), Some("spv")) = (
            p.file_stem().and_then(OsStr::to_str),
            p.extension().and_then(OsStr::to_str),
        ) else {
            continue;
        };
        let prefix = format!("{stem}_");
        let names = kernels
            .iter()
            .filter(|(asm, _)| {
                asm.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|f| f.starts_with(&prefix))
            })
            .map(|(_, name)| name.clone())
            .collect();
        m.insert(sha256_file(&p), names);
    }
    m
}

/// Compares IGC's `.asm` of a kernel with IGA's disassembly of the same
/// kernel's machine code: the same number of instructions, the same
/// opcodes in the same order, with the same operands (comments and label
/// names aside: `native::instructions` of each text). Returns the count;
/// `Err` says where they part.
pub fn same_instructions(igc: &str, iga: &str) -> Result<usize, String> {
    use xpu_asm_isa::native::instructions;
    let (a, b) = (instructions(igc), instructions(iga));
    if a.len() != b.len() {
        return Err(format!(
            "IGC's .asm has {} instructions, IGA's disassembly {}",
            a.len(),
            b.len()
        ));
    }
    let differ: Vec<String> = a
        .iter()
        .zip(&b)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .take(5)
        .map(|(i, (x, y))| format!("  #{i}\n    IGC: {x}\n    IGA: {y}"))
        .collect();
    if differ.is_empty() {
        Ok(a.len())
    } else {
        Err(format!(
            "{} instructions each, but they differ; first differences:\n{}",
            a.len(),
            differ.join("\n")
        ))
    }
}

/// For each kernel of `r` (every one's ISA from IGC's dump), the driver's
/// binary of its module, saved in the capture `out`, disassembled by IGA:
/// the same instructions, in order, as IGC's `.asm`. Returns how many
/// kernels were compared.
pub fn cross_check_dumps_against_binaries(
    out: &Path,
    r: &xpu_asm_collector::report::Report,
) -> usize {
    use xpu_asm_collector::sources::IsaSourceKind;
    use xpu_asm_isa::native;
    let rec = only_record(out);
    let iga = native::iga::Iga::load().unwrap_or_else(|e| panic!("{e}"));
    let mut n = 0;
    for k in &r.kernels {
        assert_eq!(k.isa_source, Some(IsaSourceKind::IgcDump), "{k:?}");
        let module = rec
            .modules
            .values()
            .find(|m| Some(&m.sha256) == k.module_sha256.as_ref())
            .unwrap_or_else(|| panic!("no module {:?} in the record", k.module_sha256));
        let file = module
            .binary
            .as_ref()
            .and_then(|b| b.file.clone())
            .unwrap_or_else(|| panic!("module {} has no saved binary", module.id));
        let bytes = std::fs::read(out.join(&file)).expect("the saved binary");
        let device = module
            .device
            .and_then(|d| rec.devices.get(&d))
            .map(|d| native::Device {
                product: None,
                device_id: Some(d.device_id),
                ip_version: d.ip_version,
            });
        let program =
            native::parse(&bytes, device.as_ref()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let kernel = program
            .kernel(k.name.as_bytes())
            .unwrap_or_else(|| panic!("{file} has no kernel {}", k.name));
        let platform = program.platform.as_ref().expect("the binary's platform");
        let text = iga
            .disassemble(platform, &kernel.code)
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let igc = std::fs::read_to_string(out.join(k.asm.as_ref().expect("matched")))
            .expect("IGC's .asm");
        if let Err(e) = same_instructions(&igc, &text) {
            panic!("{}: {e}", k.name);
        }
        n += 1;
    }
    n
}

/// A finished run of a command that writes a capture folder (`out`): what
/// a test asserts on, with everything needed to explain a failure.
pub struct Run {
    /// The command, as a shell would take it.
    pub shown: String,
    pub output: Output,
    /// The capture folder.
    pub out: PathBuf,
    /// Whatever must live as long as the run (the test's temporary folder,
    /// when the run outlives the function that made it).
    kept: Option<Box<dyn std::any::Any>>,
}

/// Runs `cmd` (with the usual deadline) and keeps what it did.
pub fn run(mut cmd: Command, out: &Path) -> Run {
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    Run::new(shown, output, out)
}

impl Run {
    pub fn new(shown: String, output: Output, out: &Path) -> Run {
        Run {
            shown,
            output,
            out: out.to_path_buf(),
            kept: None,
        }
    }

    /// The command, its status and output, the capture's files and its
    /// report: what a failed assertion prints.
    pub fn ctx(&self) -> String {
        let report = std::fs::read_to_string(self.out.join("report.json"))
            .unwrap_or_else(|e| format!("(no report.json: {e})"));
        format!(
            "{}\nreport.json:\n{report}",
            describe(&self.shown, &self.output, &self.out)
        )
    }

    /// The capture's `report.json`.
    pub fn report(&self) -> serde_json::Value {
        let path = self.out.join("report.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}\n{}", path.display(), self.ctx()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{}", path.display(), self.ctx()))
    }

    /// The command's own exit status (it must exit, never die of a signal).
    pub fn assert_status(&self, code: i32) {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            (self.output.status.code(), self.output.status.signal()),
            (Some(code), None),
            "expected exit status {code}\n{}",
            self.ctx()
        );
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stdout_lines(&self) -> Vec<String> {
        stdout_lines(&self.output)
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Keeps `what` (a temporary folder) alive as long as the run.
    pub fn keep(&mut self, what: impl std::any::Any) {
        self.kept = Some(Box::new(what));
    }
}

/// What the tests of parallel jobs share: commands, workload, assertions.
pub mod jobs;

/// Intel MPI from PyPI (scripts/impi-venv.sh) for the tests.
pub mod impi;

/// A one-host Slurm cluster (scripts/slurm-cluster.sh) for the tests.
pub mod slurm;

/// The SYCL 2026 test's support: today's stack in the Debian sid root.
pub mod sycl2026;
