//! The driver stacks the tests run on (docs/real-stack.md), and the
//! environment a run gets from them.

use crate::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

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
    cmd.env_remove(record::IGC_ENV)
        .env_remove(record::times::TIME_ENV);
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
