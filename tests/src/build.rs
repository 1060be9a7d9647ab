//! Building what the tests run: the C workloads, their kernels (SPIR-V
//! and native binaries with `ocloc`), and finding cargo's own artifacts.

use crate::*;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The three ways the workload reaches Level Zero (`--via`).
pub const WAYS: [&str; 3] = ["link", "ddi", "dlsym"];

/// Kernel names of `kernels_a.cl`.
pub const VECTOR_ADD: &str = "_ZTSZ4mainE10vector_add";
pub const SCALE: &str = "scale";
pub const SCALE_V2: &str = "scale_v2";
pub const COMMON: &str = "common_kernel";
/// Kernel only in `kernels_b.cl` (which also has [`COMMON`]).
pub const ONLY_IN_B: &str = "only_in_b";

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
pub(crate) fn run_build(cmd: &mut Command) {
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
pub(crate) fn build_atomically(dest: &Path, build: impl FnOnce(&Path)) {
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

/// `tests/workload/callers.c` and its two libraries (`callers_lib.c` as
/// `libcallers_a.so` and `libcallers_b.so`, found by the program's run
/// path), built once per test process.
pub fn callers_workload() -> PathBuf {
    static W: OnceLock<PathBuf> = OnceLock::new();
    W.get_or_init(|| {
        require_stack();
        let src = workload_src_dir();
        let dir = build_dir().join("callers");
        std::fs::create_dir_all(&dir).expect("the callers build folder");
        let gcc = |out: &Path, args: &[&str], file: &str| {
            let mut cmd = Command::new("gcc");
            cmd.args(["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                .arg(src.join(file))
                .arg("-o")
                .arg(out)
                .args(["-L", &dir.display().to_string()])
                .args(args)
                .arg("-lze_loader");
            run_build(&mut cmd);
        };
        for lib in ["a", "b"] {
            let so = dir.join(format!("libcallers_{lib}.so"));
            let define = format!("-DLIB_{}", lib.to_uppercase());
            build_atomically(&so, |out| {
                gcc(out, &["-fPIC", "-shared", &define], "callers_lib.c")
            });
        }
        let exe = dir.join("callers");
        build_atomically(&exe, |out| {
            gcc(
                out,
                &["-Wl,-rpath,$ORIGIN", "-lcallers_a", "-lcallers_b"],
                "callers.c",
            )
        });
        exe
    })
    .clone()
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

/// The workload command line: the binary for `--via VIA`, module `a`
/// (`kernels_a.cl`'s SPIR-V), then `steps`.
pub fn workload_line(via: &str, steps: &[&str]) -> Vec<String> {
    let mut v = vec![
        workload_for(via).display().to_string(),
        "--via".into(),
        via.into(),
        "--module".into(),
        format!("a={}", spirv("a").display()),
    ];
    v.extend(steps.iter().map(|s| s.to_string()));
    v
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
pub(crate) fn ocloc_build(cl: &str, args: &[&str], tag: &str, out_file: &str) -> PathBuf {
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
    /// `ocloc compile -device pvc -exclude_ir`: a zebin without the SPIR-V
    /// a driver could compile instead (sid's ocloc).
    PvcWithoutIr,
}

/// `ocloc compile -file kernels_a.cl -device pvc` of NEO 22.43 (Debian 12),
/// kept in the repository for the stacks whose ocloc makes no patch tokens;
/// workload.rs checks on Debian 12 that its ocloc makes exactly this file.
pub const PATCH_TOKENS_A: &str = "kernels_a.pvc.neo22.bin";

/// `kernels_a.cl` built by `ocloc` as `kind`, once per test process.
pub fn native_a_as(kind: Native) -> PathBuf {
    static BUILT: [OnceLock<PathBuf>; 5] = [const { OnceLock::new() }; 5];
    if kind == Native::PatchTokens && stack() != Stack::Debian12 {
        return workload_src_dir().join(PATCH_TOKENS_A);
    }
    let (i, args, tag): (usize, &[&str], &str) = match kind {
        Native::PatchTokens => (0, &["-device", "pvc"], "native"),
        Native::Zebin => (1, &["-device", "pvc", "--format", "zebin"], "zebin"),
        Native::FatPvcTgllp => (2, &["-device", "pvc,tgllp"], "fat"),
        Native::TgllpOnly => (3, &["-device", "tgllp"], "tgllp"),
        Native::PvcWithoutIr => (4, &["-device", "pvc", "-exclude_ir"], "noir"),
    };
    // NEO 26's ocloc adds `.bin` to a single device's binary even with
    // -output_no_suffix (which only drops the device's name there).
    let out = match (stack(), kind) {
        (Stack::Sid, Native::Zebin | Native::TgllpOnly | Native::PvcWithoutIr) => "out.bin",
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
