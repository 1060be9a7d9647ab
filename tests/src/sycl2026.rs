//! Support for the SYCL 2026 test (tests/tests/sycl2026.rs): oneAPI 2026.2's
//! SYCL runtime from PyPI on today's stack (NEO 26, IGC 2, loader 1.32), in
//! the Debian sid root of scripts/sid-root.sh.
//!
//! - [`SidCommand`]: a command run on that stack, with exactly the
//!   environment it is given. A test binary that runs inside the root (the
//!   root's `/.xpu-asm-sid-root` exists) runs it directly; one on the host
//!   enters the root for it (`scripts/sid-root.sh run`), so the test runs from
//!   either place.
//! - [`dpnp_venv`]: the venv of scripts/sycl2026-venv.sh (dpctl 0.22.1, dpnp
//!   0.20.0), inside the root; [`llama_venv`], scripts/llama-venv.sh's
//!   (llama.cpp's SYCL backend).
//! - [`resident_shim`]: tests/shim/ze_resident.c built in the root, which
//!   SYCL's v2 adapter needs in NEO's no-hardware mode, and nothing else.
//! - [`ur_launches`]: the independent count, launches per kernel name read
//!   from the Unified Runtime's tracing layer (`UR_ENABLE_LAYERS`), which
//!   sits inside the SYCL runtime above both adapters and knows nothing of
//!   Level Zero or of xpu-asm.
//! - [`ze_tracer`], [`ze_trace_shapes`]: the independent count of launch
//!   shapes in three dimensions, from a tracer of the Level Zero loader's
//!   own tracing layer (tests/shim/ze_tracer.c).

use crate::{build_dir, shell_words, workspace_dir};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The marker file scripts/sid-root.sh writes into a finished root; seen at
/// `/` from inside it.
pub const SID_MARKER: &str = "/.xpu-asm-sid-root";

/// The venv's path inside the root unless `XPU_ASM_SYCL2026_VENV` says
/// otherwise (scripts/sycl2026-venv.sh has the same default).
pub const DEFAULT_VENV: &str = "/opt/xpu-asm/sycl2026-venv";
const VENV_MARKER: &str = ".xpu-asm-sycl2026-venv";

/// Whether this process runs inside the sid root.
pub fn inside_sid_root() -> bool {
    Path::new(SID_MARKER).is_file()
}

/// A command for today's stack. Its environment is exactly `PATH`, `HOME`
/// and what [`SidCommand::env`] adds (`env -i`): nothing of the test's own
/// environment, which is the host's, leaks into the SYCL runtime.
pub struct SidCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    cwd: PathBuf,
}

impl SidCommand {
    /// `program` as the root sees it (an absolute path, or a name in the
    /// root's `PATH`); it runs in `cwd`, which must be visible inside the
    /// root at the same path (the workspace, the target folder, `/tmp`).
    pub fn new(program: impl AsRef<OsStr>, cwd: &Path) -> SidCommand {
        SidCommand {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            env: vec![
                (
                    "PATH".to_string(),
                    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
                ),
                ("HOME".to_string(), cwd.as_os_str().to_os_string()),
            ],
            cwd: cwd.to_path_buf(),
        }
    }

    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut SidCommand {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, a: I) -> &mut SidCommand {
        self.args
            .extend(a.into_iter().map(|s| s.as_ref().to_os_string()));
        self
    }

    /// Sets `key` (replacing an earlier value, `HOME` and `PATH` included).
    pub fn env(&mut self, key: &str, value: impl AsRef<OsStr>) -> &mut SidCommand {
        self.env.retain(|(k, _)| k != key);
        self.env
            .push((key.to_string(), value.as_ref().to_os_string()));
        self
    }

    pub fn envs<K: AsRef<str>, V: AsRef<OsStr>>(
        &mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> &mut SidCommand {
        for (k, v) in vars {
            self.env(k.as_ref(), v);
        }
        self
    }

    /// The process to start: `env -i -C CWD VARS... PROGRAM ARGS...`, inside
    /// the root, entered through scripts/sid-root.sh from the host.
    pub fn command(&self) -> Command {
        let mut cmd = if inside_sid_root() {
            Command::new("env")
        } else {
            let mut c = Command::new("bash");
            c.arg(sid_root_sh()).args(["run", "--", "env"]);
            c
        };
        cmd.arg("-i").arg("-C").arg(&self.cwd);
        for (k, v) in &self.env {
            let mut kv = OsString::from(k);
            kv.push("=");
            kv.push(v);
            cmd.arg(kv);
        }
        cmd.arg(&self.program).args(&self.args);
        cmd
    }
}

/// scripts/sid-root.sh, which makes the root and enters it.
fn sid_root_sh() -> PathBuf {
    let s = workspace_dir().join("scripts/sid-root.sh");
    assert!(
        s.is_file(),
        "{} not found: it makes the Debian sid root (NEO 26) this test runs in and enters it",
        s.display()
    );
    s
}

/// A venv that a script of scripts/ makes inside the root.
struct VenvSpec {
    /// What the test needs it for, in a failure.
    what: &'static str,
    script: &'static str,
    /// The variable naming its path inside the root, and the default.
    env: &'static str,
    default: &'static str,
    marker: &'static str,
}

const DPNP_VENV: VenvSpec = VenvSpec {
    what: "the SYCL 2026 venv (CPython 3.12 with dpctl 0.22.1, dpnp 0.20.0 inside the sid root)",
    script: "scripts/sycl2026-venv.sh",
    env: "XPU_ASM_SYCL2026_VENV",
    default: DEFAULT_VENV,
    marker: VENV_MARKER,
};

const LLAMA_VENV: VenvSpec = VenvSpec {
    what: "the llama.cpp venv (CPython 3.12 with cyllama-sycl 0.7.0 on oneAPI 2025.3 inside the sid root)",
    script: "scripts/llama-venv.sh",
    env: "XPU_ASM_LLAMA_VENV",
    default: "/opt/xpu-asm/llama-venv",
    marker: ".xpu-asm-llama-venv",
};

/// The venv of scripts/sycl2026-venv.sh, as a path inside the root. From
/// the host, the script makes it on first use (about a minute, 880 MB of
/// downloads, 2.9 GB on disk) and checks it otherwise; from inside the root,
/// where the script cannot run, it must be there already. Never skipped: no
/// venv, no test.
pub fn dpnp_venv() -> PathBuf {
    static V: OnceLock<PathBuf> = OnceLock::new();
    V.get_or_init(|| made_venv(&DPNP_VENV)).clone()
}

/// The venv of scripts/llama-venv.sh (cyllama-sycl 0.7.0, llama.cpp's SYCL
/// backend, on oneAPI 2025.3's runtime, and gguf), as [`dpnp_venv`] is
/// made.
pub fn llama_venv() -> PathBuf {
    static V: OnceLock<PathBuf> = OnceLock::new();
    V.get_or_init(|| made_venv(&LLAMA_VENV)).clone()
}

fn made_venv(spec: &VenvSpec) -> PathBuf {
    if inside_sid_root() {
        let v = match std::env::var_os(spec.env) {
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(spec.default),
        };
        assert!(
            v.join(spec.marker).is_file() && v.join("bin/python").is_file(),
            "no complete {} at {} inside the sid root; make it from the host with \
             {} (scripts/install-deps.sh does)",
            spec.what,
            v.display(),
            spec.script
        );
        return v;
    }
    let script = workspace_dir().join(spec.script);
    let mut cmd = Command::new("bash");
    cmd.arg(&script).current_dir(workspace_dir());
    let shown = shell_words(&cmd);
    // No timeout: the first run downloads close to 1 GB.
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} could not be made or checked; this test needs it\n\
         command: {shown}\nstatus: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        spec.what,
        out.status
    );
    let path = stdout
        .lines()
        .last()
        .map(|l| PathBuf::from(l.trim()))
        .unwrap_or_default();
    assert!(
        path.is_absolute(),
        "{shown} succeeded but its last line is not the venv's path\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    path
}

/// dpnp_ops.py without its GEMM (oneMKL picks its kernels anew in each run
/// here), 3 adds and sines, 4 sums, 5 wheres, in the dpnp venv, appended to
/// `sc` (the command before it: xpu-asm-run and its options, `--`), with
/// SYCL on Level Zero and, on the v2 adapter's platforms, the residency
/// shim behind the interposer. The driver's variables are the caller's.
pub fn dpnp_ops_time_workload(sc: &mut SidCommand, p: &Platform) {
    let venv = dpnp_venv();
    sc.arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/sycl/dpnp_ops.py"))
        .args(["3", "matmul=0", "sum=4", "where=5"])
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if p.adapter == Adapter::V2 {
        let shim = resident_shim();
        sc.env("LD_PRELOAD", &shim)
            .env("UMF_ZE_LOADER_LIB_NAME", &shim);
    }
}

/// tests/shim/ze_resident.c built inside the root (its gcc, its loader),
/// once per test process.
pub fn resident_shim() -> PathBuf {
    static S: OnceLock<PathBuf> = OnceLock::new();
    S.get_or_init(|| build_shim("ze_resident", "-ldl")).clone()
}

/// tests/shim/ze_tracer.c built inside the root, once per test process:
/// a tracer of the loader's own tracing layer, the independent count of
/// launch shapes ([`ze_trace_shapes`]).
pub fn ze_tracer() -> PathBuf {
    static S: OnceLock<PathBuf> = OnceLock::new();
    S.get_or_init(|| build_shim("ze_tracer", "-lpthread"))
        .clone()
}

/// tests/shim/`name`.c built inside the root as `lib<name>.so`, linked
/// with the loader and `lib`.
fn build_shim(name: &str, lib: &str) -> PathBuf {
    let dir = build_dir();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("shim/{name}.c"));
    let dest = dir.join(format!("lib{name}.so"));
    let tmp = dir.join(format!("lib{name}.so.tmp-{}", std::process::id()));
    let mut gcc = SidCommand::new("gcc", &dir);
    gcc.args([
        "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
    ])
    .arg(&src)
    .arg("-o")
    .arg(&tmp)
    .args(["-Wl,--no-as-needed", "-lze_loader", lib]);
    let mut cmd = gcc.command();
    let shown = shell_words(&cmd);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "building tests/shim/{name}.c failed: {shown}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &dest)
        .unwrap_or_else(|e| panic!("cannot rename {} to {}: {e}", tmp.display(), dest.display()));
    dest
}

/// A launch shape as the tracer writes it: the group size, the group count.
pub type ZeShape = ([u32; 3], [u32; 3]);

/// The launch shapes tests/shim/ze_tracer.c wrote into the files
/// `<prefix>.<pid>`: per kernel name, each shape and how many launches had
/// it. An "error" line, or an append to a regular list (which the tracer
/// does not follow to its executions), is an error.
pub fn ze_trace_shapes(prefix: &Path) -> Result<BTreeMap<String, BTreeMap<ZeShape, u64>>, String> {
    let dir = prefix.parent().ok_or("the trace prefix has no folder")?;
    let stem = format!(
        "{}.",
        prefix.file_name().ok_or("no file name")?.to_string_lossy()
    );
    let mut out: BTreeMap<String, BTreeMap<ZeShape, u64>> = BTreeMap::new();
    let mut files = 0;
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = e.map_err(|e| e.to_string())?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !name.starts_with(&stem) {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
        for line in text.lines() {
            let w: Vec<&str> = line.split(' ').collect();
            let n = |i: usize| w[i].parse::<u32>().map_err(|_| format!("{name}: {line}"));
            match w.first() {
                Some(&"launch") if w.len() == 8 => {
                    let shape = ([n(2)?, n(3)?, n(4)?], [n(5)?, n(6)?, n(7)?]);
                    *out.entry(w[1].to_string())
                        .or_default()
                        .entry(shape)
                        .or_insert(0) += 1;
                }
                _ => return Err(format!("{name}: {line}")),
            }
        }
    }
    if files == 0 {
        return Err(format!("no file {}*", prefix.display()));
    }
    Ok(out)
}

/// SYCL's two Level Zero adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// `libur_adapter_level_zero.so`: PVC and older.
    V1,
    /// `libur_adapter_level_zero_v2.so`: the default on Xe2 and later.
    V2,
}

impl Adapter {
    /// The line the adapter that steps aside writes to the `UR_LOG_LEVEL_ZERO`
    /// log (level info) when the device's IP version picks the other one.
    pub fn chosen_line(self) -> &'static str {
        match self {
            Adapter::V1 => "Skipping L0 V2 adapter",
            Adapter::V2 => "Skipping L0 V1 adapter",
        }
    }
}

/// A GPU that NEO 26 emulates, and what SYCL makes of it.
#[derive(Debug, Clone, Copy)]
pub struct Platform {
    /// NEO's `ProductFamilyOverride`.
    pub product: &'static str,
    /// The adapter SYCL picks for it by default.
    pub adapter: Adapter,
    /// The device's name as SYCL reports it.
    pub device_name: &'static str,
}

pub const PVC: Platform = Platform {
    product: "pvc",
    adapter: Adapter::V1,
    device_name: "Intel(R) Graphics [0x0bd5]",
};
pub const BMG: Platform = Platform {
    product: "bmg",
    adapter: Adapter::V2,
    device_name: "Intel(R) Graphics [0xe202]",
};
pub const PTL: Platform = Platform {
    product: "ptl",
    adapter: Adapter::V2,
    device_name: "Intel(R) Graphics [0xb080]",
};

/// NEO 26's no-hardware variables for `product` (docs/real-stack.md,
/// "Today's stack"): those of NEO 22.43, with the AUB capture off
/// (`UseAubStream=0`: Debian builds NEO without aubstream) and NEO's own
/// heap allocator (without it NEO aborts at device creation on Xe2 and
/// later).
pub fn neo26_env(product: &str) -> Vec<(&'static str, String)> {
    vec![
        ("NEOReadDebugKeys", "1".to_string()),
        ("SetCommandStreamReceiver", "1".to_string()),
        ("ProductFamilyOverride", product.to_string()),
        ("HardwareInfoOverride", "1x4x8".to_string()),
        ("UseAubStream", "0".to_string()),
        ("UseExternalAllocatorForSshAndDsh", "0".to_string()),
    ]
}

/// The `(handle)` after a pointer in a UR trace: `.phKernel = 0x7ffd (0x55c0)`.
fn pointee<'a>(args: &'a str, field: &str) -> Option<&'a str> {
    let rest = &args[args.find(field)? + field.len()..];
    let rest = rest.strip_prefix("0x")?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_hexdigit());
    let rest = rest.strip_prefix(" (")?;
    Some(&rest[..rest.find(')')?])
}

/// A plain field: `.hKernel = 0x55c0`.
fn field<'a>(args: &'a str, name: &str) -> Option<&'a str> {
    let rest = &args[args.find(name)? + name.len()..];
    Some(&rest[..rest.find([',', ')']).unwrap_or(rest.len())])
}

/// What the Unified Runtime's trace says a run launched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrCount {
    /// Launches per kernel name.
    pub launches: BTreeMap<String, u64>,
    /// The kernels among them that a library built itself in Level Zero and
    /// handed to SYCL (`urKernelCreateWithNativeHandle`): oneMKL's GEMM
    /// kernels and their probe. SYCL's persistent cache does not hold them.
    pub interop: BTreeSet<String>,
}

impl UrCount {
    /// The launches of the kernels SYCL built itself (from the programs in
    /// the libraries' binaries: dpnp's, oneMKL's vector math).
    pub fn sycl_built(&self) -> BTreeMap<String, u64> {
        self.launches
            .iter()
            .filter(|(k, _)| !self.interop.contains(*k))
            .map(|(k, n)| (k.clone(), *n))
            .collect()
    }
}

/// Launches per kernel name in the text the Unified Runtime's tracing layer
/// writes (`UR_ENABLE_LAYERS=UR_LAYER_TRACING`,
/// `UR_LOG_TRACING=level:info;output:file,PATH`): one
/// `<--- urFunction(.arg = value, ...) -> UR_RESULT_...;` line per call
/// returned.
///
/// A kernel handle gets its name from `urKernelCreate` (`.pKernelName`), or,
/// for kernels a library built itself in Level Zero and handed to SYCL
/// (`urKernelCreateWithNativeHandle`: oneMKL's GEMM kernels), from the
/// `urKernelGetInfo(UR_KERNEL_INFO_FUNCTION_NAME)` that SYCL asks right
/// after. Every successful `urEnqueue...KernelLaunch...` is one launch of
/// its `.hKernel`'s kernel. `Err` for what this count cannot account for: a
/// launch of a handle without a name, a failed launch, a kernel appended to
/// a command buffer (a SYCL graph).
pub fn ur_launches(trace: &str) -> Result<UrCount, String> {
    // Handle -> (name, made from a native handle).
    let mut handles: BTreeMap<&str, (Option<&str>, bool)> = BTreeMap::new();
    let mut count = UrCount::default();
    for (i, line) in trace.lines().enumerate() {
        let Some(call) = line.trim_start().strip_prefix("<--- ") else {
            continue;
        };
        let at = || format!("line {}: {line}", i + 1);
        let open = call
            .find('(')
            .ok_or_else(|| format!("no '(' on {}", at()))?;
        let function = &call[..open];
        let (args, result) = call[open..]
            .rsplit_once(") -> ")
            .ok_or_else(|| format!("no result on {}", at()))?;
        let ok = result.trim_end_matches(';') == "UR_RESULT_SUCCESS";
        match function {
            "urKernelCreate" if ok => {
                let name = pointee(args, ".pKernelName = ")
                    .ok_or_else(|| format!("urKernelCreate without a name on {}", at()))?;
                let handle = pointee(args, ".phKernel = ")
                    .ok_or_else(|| format!("urKernelCreate without a handle on {}", at()))?;
                handles.insert(handle, (Some(name), false));
            }
            "urKernelCreateWithNativeHandle" if ok => {
                let handle = pointee(args, ".phKernel = ").ok_or_else(|| {
                    format!(
                        "urKernelCreateWithNativeHandle without a handle on {}",
                        at()
                    )
                })?;
                handles.insert(handle, (None, true));
            }
            "urKernelGetInfo"
                if ok && args.contains(".propName = UR_KERNEL_INFO_FUNCTION_NAME,") =>
            {
                if let (Some(handle), Some(name)) =
                    (field(args, ".hKernel = "), pointee(args, ".pPropValue = "))
                {
                    handles.entry(handle).or_insert((None, false)).0 = Some(name);
                }
            }
            f if f.starts_with("urCommandBuffer") && f.contains("KernelLaunch") => {
                return Err(format!(
                    "a kernel appended to a command buffer (a SYCL graph), which this count \
                     does not follow, on {}",
                    at()
                ));
            }
            f if f.starts_with("urEnqueue") && f.contains("KernelLaunch") => {
                if !ok {
                    return Err(format!("a failed launch on {}", at()));
                }
                let handle = field(args, ".hKernel = ")
                    .ok_or_else(|| format!("a launch without a kernel on {}", at()))?;
                let (name, interop) = match handles.get(handle) {
                    Some((Some(name), interop)) => (*name, *interop),
                    _ => {
                        return Err(format!(
                            "a launch of kernel handle {handle}, whose name the trace never gave, on {}",
                            at()
                        ))
                    }
                };
                *count.launches.entry(name.to_string()).or_insert(0) += 1;
                if interop {
                    count.interop.insert(name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(count)
}

/// A launch's sizes as the Unified Runtime's trace prints them: the
/// global size and the local size (`None`: `nullptr`, the adapter's
/// choice) of the first dimension only (the trace prints an array's first
/// element), which SYCL's Level Zero adapters make the group's `x`.
pub type UrSizes = (u64, Option<u64>);

/// Per kernel name, each [`UrSizes`] its launches had and how many: from
/// the same trace as [`ur_launches`], by the same names.
pub fn ur_shapes(trace: &str) -> Result<BTreeMap<String, BTreeMap<UrSizes, u64>>, String> {
    let mut handles: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out: BTreeMap<String, BTreeMap<UrSizes, u64>> = BTreeMap::new();
    let first = |args: &str, name: &str| -> Result<Option<u64>, String> {
        let rest = &args[args.find(name).ok_or(format!("no {name}"))? + name.len()..];
        if rest.starts_with("nullptr") {
            return Ok(None);
        }
        let v = pointee(args, name).ok_or(format!("no value of {name}"))?;
        v.parse().map(Some).map_err(|_| format!("{name} {v:?}"))
    };
    for (i, line) in trace.lines().enumerate() {
        let Some(call) = line.trim_start().strip_prefix("<--- ") else {
            continue;
        };
        let Some(open) = call.find('(') else { continue };
        let (function, args) = (&call[..open], &call[open..]);
        if !args.ends_with("-> UR_RESULT_SUCCESS;") {
            continue;
        }
        match function {
            "urKernelCreate" => {
                if let (Some(n), Some(h)) = (
                    pointee(args, ".pKernelName = "),
                    pointee(args, ".phKernel = "),
                ) {
                    handles.insert(h, n);
                }
            }
            "urKernelGetInfo" if args.contains(".propName = UR_KERNEL_INFO_FUNCTION_NAME,") => {
                if let (Some(h), Some(n)) =
                    (field(args, ".hKernel = "), pointee(args, ".pPropValue = "))
                {
                    handles.entry(h).or_insert(n);
                }
            }
            f if f.starts_with("urEnqueue") && f.contains("KernelLaunch") => {
                let at = |e: String| format!("line {}: {e}", i + 1);
                let h = field(args, ".hKernel = ").ok_or_else(|| at("no kernel".into()))?;
                let name = handles
                    .get(h)
                    .ok_or_else(|| at(format!("kernel handle {h} never named")))?;
                let global = first(args, ".pGlobalWorkSize = ")
                    .map_err(at)?
                    .ok_or_else(|| at("no global size".into()))?;
                let local = first(args, ".pLocalWorkSize = ").map_err(at)?;
                *out.entry(name.to_string())
                    .or_default()
                    .entry((global, local))
                    .or_insert(0) += 1;
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a real trace (dpnp 0.20 on pvc), arguments shortened.
    const TRACE: &str = "\
   ---> urKernelCreate
   <--- urKernelCreate(.hProgram = 0x55916efdd120, .pKernelName = 0x7eff817f05f4 (_ZTSN4dpnp6tensor7kernels12constructors27linear_sequence_step_kernelIfEE), .phKernel = 0x7ffc131880b0 (0x55916ba57aa0)) -> UR_RESULT_SUCCESS;
   ---> urEnqueueKernelLaunchWithArgsExp
   <--- urEnqueueKernelLaunchWithArgsExp(.hQueue = 0x55916f2553f0, .hKernel = 0x55916ba57aa0, .workDim = 1, .pArgs = 0x55916f168940 {(struct ur_exp_kernel_arg_properties_t){.index = 0}}, .phEvent = 0x7ffc13188290 (0x55916fd76c40)) -> UR_RESULT_SUCCESS;
   <--- urKernelCreateWithNativeHandle(.hNativeKernel = 0x5606d665cb68, .hContext = 0x5606d58d15f0, .pProperties = 0x7fffabe1d070 ((struct ur_kernel_native_properties_t){.isNativeHandleOwned = 1}), .phKernel = 0x7fffabe1d040 (0x55916ba57aa0)) -> UR_RESULT_SUCCESS;
   <--- urKernelGetInfo(.hKernel = 0x55916ba57aa0, .propName = UR_KERNEL_INFO_FUNCTION_NAME, .propSize = 0, .pPropValue = nullptr, .pPropSizeRet = 0x7fffabe1ce90 (25)) -> UR_RESULT_SUCCESS;
   <--- urKernelGetInfo(.hKernel = 0x55916ba57aa0, .propName = UR_KERNEL_INFO_FUNCTION_NAME, .propSize = 25, .pPropValue = 0x5606d6825970 (sgemm_nocopy_nn_32x8_1x4), .pPropSizeRet = nullptr) -> UR_RESULT_SUCCESS;
   <--- urEnqueueKernelLaunch(.hQueue = 0x5606d61b4550, .hKernel = 0x55916ba57aa0, .workDim = 3) -> UR_RESULT_SUCCESS;
   <--- urEnqueueKernelLaunch(.hQueue = 0x5606d61b4550, .hKernel = 0x55916ba57aa0, .workDim = 3) -> UR_RESULT_SUCCESS;
   <--- urEnqueueUSMMemcpy(.hQueue = 0x5606d61b4550, .blocking = 0) -> UR_RESULT_SUCCESS;
";

    #[test]
    fn names_from_create_and_from_get_info_with_handles_reused() {
        let got = ur_launches(TRACE).expect("a countable trace");
        let launches = BTreeMap::from([
            (
                "_ZTSN4dpnp6tensor7kernels12constructors27linear_sequence_step_kernelIfEE"
                    .to_string(),
                1,
            ),
            ("sgemm_nocopy_nn_32x8_1x4".to_string(), 2),
        ]);
        let interop = BTreeSet::from(["sgemm_nocopy_nn_32x8_1x4".to_string()]);
        assert_eq!(got, UrCount { launches, interop });
        assert_eq!(
            got.sycl_built().into_keys().collect::<Vec<_>>(),
            ["_ZTSN4dpnp6tensor7kernels12constructors27linear_sequence_step_kernelIfEE"]
        );
    }

    #[test]
    fn a_native_kernel_never_named_is_an_error() {
        let t = "<--- urKernelCreateWithNativeHandle(.hNativeKernel = 0x1, .phKernel = 0x7ff (0xabc)) -> UR_RESULT_SUCCESS;\n\
                 <--- urEnqueueKernelLaunch(.hQueue = 0x2, .hKernel = 0xabc, .workDim = 1) -> UR_RESULT_SUCCESS;\n";
        let e = ur_launches(t).expect_err("an unnamed kernel");
        assert!(e.contains("0xabc"), "{e}");
    }

    #[test]
    fn failed_launches_and_command_buffers_are_errors() {
        let failed = "<--- urKernelCreate(.pKernelName = 0x1 (k), .phKernel = 0x2 (0x3)) -> UR_RESULT_SUCCESS;\n\
                      <--- urEnqueueKernelLaunch(.hKernel = 0x3) -> UR_RESULT_ERROR_INVALID_VALUE;\n";
        assert!(ur_launches(failed).is_err());
        let graph = "<--- urCommandBufferAppendKernelLaunchExp(.hCommandBuffer = 0x1, .hKernel = 0x3) -> UR_RESULT_SUCCESS;\n";
        assert!(ur_launches(graph).is_err());
    }
}
