//! Each launched kernel's origin (how the ISA that ran was made, and the
//! library that carried its code or created its module) and its callers
//! (the stacks of its first launches), from the records
//! ([`by_kernel`]), added to the report's entries ([`fill`]).
//!
//! The kinds: `jit` (IGC compiled the module's SPIR-V during the run),
//! `cache` (the driver took it from NEO's or SYCL's compiler cache),
//! `aot` (a native binary the program passed: its devices), `generated`
//! (a native binary made during the run: its bytes lay in no loaded
//! object's image and its notes name no product, as nGEN's zebins),
//! `opencl-source`, `opencl-il`, `opencl-binary` (an OpenCL program's).

use super::origin::{Cache, Caller, Library, Origin, LISTED_CALLERS};
use super::{sycl_images, Api, KernelEntry};
use crate::kernel_isa::Status;
use crate::sources::symbols::{Frame, Symbolizer};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use xpu_asm_isa::native::{targets, Device};
use xpu_asm_record::origins::Object;
use xpu_asm_record::read::{Module, ProcessRecord};

/// A kernel as the report tells kernels apart: name, module, API.
type KernelKey = (Vec<u8>, Option<String>, Api);

/// What the records say of each launched kernel's origin and callers.
#[derive(Debug, Default)]
pub struct KernelOrigins {
    origin: Option<Origin>,
    /// A SPIR-V module of a process with NEO's cache on.
    neo_cache: Option<Cache>,
    callers: Vec<Caller>,
}

pub type ByKernel = HashMap<KernelKey, KernelOrigins>;

/// Every launched kernel's origin and callers, from the records under
/// capture `dir`; what could not be read for symbols into `warnings`.
pub fn by_kernel(dir: &Path, recs: &[ProcessRecord], warnings: &mut Vec<String>) -> ByKernel {
    let mut out: ByKernel = HashMap::new();
    let mut symbols = Symbolizer::default();
    let mut built: HashMap<String, targets::Built> = HashMap::new();
    let mut images = sycl_images::DeviceCache::new();
    let mut fallbacks = BTreeMap::new();
    for r in recs {
        for w in sycl_images::refused_warnings(dir, r, &mut images, is_runtime) {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        for k in r.kernels.values() {
            if k.launches == 0 && k.appended == 0 {
                continue;
            }
            let module = r.modules.get(&k.module);
            let key = (
                k.name.clone(),
                module.map(|m| m.sha256.clone()),
                module.map(|m| Api::from(m.api)).unwrap_or_default(),
            );
            let e = out.entry(key).or_default();
            if let (None, Some(m)) = (&e.origin, module) {
                let mut o = origin(dir, r, m, &mut symbols, &mut built);
                sycl_images::add(r, m, &mut o, &mut images);
                count_fallback(&mut fallbacks, &o, &r.exe);
                e.origin = Some(o);
                e.neo_cache = neo_cache(r).filter(|_| m.format == "spirv");
            }
            for s in r.stacks.iter().filter(|s| s.kernel == k.id) {
                let frames = symbols.stack(&r.objects, &r.exe, &s.frames);
                add_caller(&mut e.callers, frames);
            }
        }
    }
    warnings.extend(symbols.problems.iter().map(|p| format!("call stacks: {p}")));
    warnings.extend(sycl_images::warnings(&fallbacks));
    out
}

/// A kernel whose ahead-of-time code did not cover its device, counted
/// for the object that carried it (or created its module; else the
/// program).
fn count_fallback(
    fallbacks: &mut BTreeMap<String, (Vec<String>, String, usize)>,
    o: &Origin,
    exe: &str,
) {
    let (Some(_), Some(device)) = (&o.fix, &o.device) else {
        return;
    };
    let lib = o
        .sycl_images
        .as_ref()
        .map(|s| &s.library)
        .or(o.library.as_ref())
        .or(o.created_by.as_ref())
        .map_or(exe.to_string(), |l| l.path.clone());
    let e = fallbacks
        .entry(lib)
        .or_insert_with(|| (o.devices.clone(), device.clone(), 0));
    e.2 += 1;
}

/// Each launched kernel's `origin` and `callers`.
pub fn fill(kernels: &mut [KernelEntry], by_kernel: &ByKernel) {
    for k in kernels.iter_mut() {
        let name = match &k.name_hex {
            Some(h) => xpu_asm_record::unhex(h).unwrap_or_default(),
            None => k.name.as_bytes().to_vec(),
        };
        let Some(o) = by_kernel.get(&(name, k.module_sha256.clone(), k.api)) else {
            continue;
        };
        let mut origin = o.origin.clone();
        // No dump of its SPIR-V while NEO's cache was on: taken from it.
        if let (Some(origin), Some(cache), Status::NotCompiledHere) =
            (origin.as_mut(), &o.neo_cache, k.status)
        {
            origin.kind = "cache".into();
            origin.cache = Some(cache.clone());
        }
        k.origin = origin;
        k.callers = o.callers.iter().take(LISTED_CALLERS).cloned().collect();
    }
}

/// The stack `frames` (innermost first) as a caller: folded, and counted
/// once more where the same stack was seen.
fn add_caller(callers: &mut Vec<Caller>, frames: Vec<Frame>) {
    let folded = frames
        .iter()
        .take_while(|f| is_runtime(&f.object) || is_cxx_runtime(&f.object) || in_sycl_headers(f))
        .count();
    let mut kept = frames[folded..].to_vec();
    // Below `main`: the C library's start of the program.
    if let Some(main) = kept
        .iter()
        .position(|f| f.function.as_deref() == Some("main"))
    {
        kept.truncate(main + 1);
    }
    let kept = fold_python(kept);
    let op = kept
        .iter()
        .position(|f| f.function.as_deref().is_some_and(is_framework_op));
    match callers.iter_mut().find(|c| c.frames == kept) {
        Some(c) => c.processes += 1,
        None => callers.push(Caller {
            processes: 1,
            frames: kept,
            folded,
            op,
        }),
    }
}

/// Runs of frames in the Python interpreter, each one frame that says how
/// many it stands for (the Python frames themselves are not read).
fn fold_python(frames: Vec<Frame>) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    let mut run = 0;
    for f in frames {
        let python = is_python(&f.object);
        if python && run > 0 {
            run += 1;
            if let Some(last) = out.last_mut() {
                last.function = Some(format!("({run} frames of the Python interpreter)"));
            }
            continue;
        }
        run = usize::from(python);
        out.push(match python {
            true => Frame {
                function: Some("(1 frame of the Python interpreter)".into()),
                file: None,
                line: None,
                ..f
            },
            false => f,
        });
    }
    out
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// xpu-asm's and the GPU runtimes' own objects (Level Zero's loader and
/// layers, NEO, IGC, OpenCL's ICD loaders, the Unified Runtime, the SYCL
/// runtime, UMF), whose frames below the caller are folded away.
pub fn is_runtime(path: &str) -> bool {
    const RUNTIMES: &[&str] = &[
        "libxpu_asm_interposer",
        "libze_loader",
        "libze_intel_gpu",
        "libze_tracing_layer",
        "libze_validation_layer",
        "libigdrcl",
        "libigc",
        "libOpenCL",
        "libur_loader",
        "libur_adapter_",
        "libsycl",
        "libumf",
        "libpi_",
    ];
    let name = base_name(path);
    RUNTIMES.iter().any(|r| name.starts_with(r))
}

/// The C and C++ runtimes' objects (`std::call_once` and the
/// `pthread_once` below it, `std::function`), whose frames between the
/// GPU runtimes' are theirs.
fn is_cxx_runtime(path: &str) -> bool {
    let name = base_name(path);
    ["libstdc++", "libgcc_s", "libc++", "libc.so", "libpthread"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// A frame of the SYCL runtime's headers, inlined into the caller's
/// object (`queue::submit`): the runtime's, folded with it.
fn in_sycl_headers(f: &Frame) -> bool {
    f.file
        .as_deref()
        .is_some_and(|p| p.contains("/include/sycl/") || p.contains("/include/CL/sycl/"))
}

fn is_python(path: &str) -> bool {
    let name = base_name(path);
    name.starts_with("libpython") || name.starts_with("python3") || name == "python"
}

/// A framework's operation: PyTorch's (`at::native::`, `at::`, `torch::`,
/// IPEX's), dpnp's and dpctl's.
fn is_framework_op(function: &str) -> bool {
    const OPS: &[&str] = &[
        "at::native::",
        "at::",
        "torch::",
        "torch_ipex::",
        "dpnp::",
        "dpctl::",
    ];
    // The function's own name: before its template arguments and
    // parameters, past its return type (`void dpnp::...::f<..>(..)`).
    let head = function.split(['(', '<']).next().unwrap_or(function);
    let name = head.rsplit(' ').next().unwrap_or(head);
    let f = name.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '_');
    OPS.iter().any(|p| f.starts_with(p))
}

/// NEO's compiler cache, when the user left it on: the interposer turns
/// it off unless the user set `NEO_CACHE_PERSISTENT` (or, with
/// `--isa binary`, sets nothing).
fn neo_cache(r: &ProcessRecord) -> Option<Cache> {
    let env = |n: &str| r.env.iter().find(|e| e.name == n && e.by_user);
    let on = match env("NEO_CACHE_PERSISTENT") {
        Some(e) => e.value != "0",
        None => r.isa_binary,
    };
    on.then(|| Cache {
        by: "neo".into(),
        dir: env("NEO_CACHE_DIR")
            .map(|e| e.value.clone())
            .unwrap_or_else(|| "~/.cache/neo_compiler_cache".into()),
    })
}

/// SYCL's persistent cache, when the user switched it on.
fn sycl_cache(r: &ProcessRecord) -> Option<Cache> {
    let env = |n: &str| r.env.iter().find(|e| e.name == n && e.by_user);
    env("SYCL_CACHE_PERSISTENT")
        .filter(|e| e.value == "1")
        .map(|_| Cache {
            by: "sycl".into(),
            dir: env("SYCL_CACHE_DIR")
                .map(|e| e.value.clone())
                .unwrap_or_else(|| "~/.cache/libsycl_cache".into()),
        })
}

fn library(objects: &BTreeMap<u32, Object>, exe: &str, id: u32) -> Option<Library> {
    let o = objects.get(&id)?;
    Some(Library {
        path: match o.path.is_empty() {
            true => exe.to_string(),
            false => String::from_utf8_lossy(&o.path).into_owned(),
        },
        build_id: o.build_id.clone(),
        function: None,
    })
}

/// The first frame outside xpu-asm and the runtimes on a module's
/// creation stack.
fn creator(r: &ProcessRecord, m: &Module, symbols: &mut Symbolizer) -> Option<Library> {
    let frames = symbols.stack(&r.objects, &r.exe, &m.creation.stack);
    let f = frames
        .into_iter()
        .find(|f| !is_runtime(&f.object) && !is_cxx_runtime(&f.object) && !in_sycl_headers(f))?;
    let o = r.objects.values().find(|o| {
        f.object == String::from_utf8_lossy(&o.path) || (o.path.is_empty() && f.object == r.exe)
    })?;
    Some(Library {
        function: f.function,
        ..library(&r.objects, &r.exe, o.id)?
    })
}

/// The ocloc name of the device of module `m`'s process.
fn device_name(r: &ProcessRecord, m: &Module) -> Option<String> {
    let d = r.devices.get(&m.device?)?;
    Device {
        device_id: Some(d.device_id),
        ip_version: d.ip_version,
        ..Device::default()
    }
    .family_name()
}

/// The origin of module `m` of process `r`.
fn origin(
    dir: &Path,
    r: &ProcessRecord,
    m: &Module,
    symbols: &mut Symbolizer,
    built: &mut HashMap<String, targets::Built>,
) -> Origin {
    let mut o = Origin {
        device: device_name(r, m),
        created_by: creator(r, m, symbols),
        library: m
            .creation
            .input_object
            .flatten()
            .and_then(|id| library(&r.objects, &r.exe, id)),
        ..Origin::default()
    };
    let binary = m.binary.as_ref().and_then(|b| b.file.clone()).map(|file| {
        built
            .entry(file.clone())
            .or_insert_with(|| {
                std::fs::read(dir.join(&file))
                    .map(|b| targets::built(&b))
                    .unwrap_or_default()
            })
            .clone()
    });
    if m.api == xpu_asm_record::read::Api::OpenCl {
        o.kind = match m.from.as_deref() {
            Some("il") => "opencl-il",
            Some("binary") => "opencl-binary",
            _ => "opencl-source",
        }
        .into();
        if o.kind == "opencl-binary" {
            o.devices = binary.map(|b| b.targets).unwrap_or_default();
        }
        if m.from.as_deref() == Some("link") {
            o.note = Some("linked from programs (clLinkProgram)".into());
        }
        return o;
    }
    if m.format == "spirv" {
        o.kind = "jit".into();
        if r.isa_binary && neo_cache(r).is_some() {
            o.note = Some(
                "compiled during the run, or taken from NEO's cache (on with --isa binary): \
                 without IGC's dumps the two cannot be told apart"
                    .into(),
            );
        }
        return o;
    }
    native_origin(r, m, o, binary.unwrap_or_default())
}

/// The origin of a native module: what it was built for, and whether the
/// driver ran it.
fn native_origin(r: &ProcessRecord, m: &Module, mut o: Origin, built: targets::Built) -> Origin {
    o.devices = built.targets;
    // The driver built something else than the bytes passed: the member
    // of a fat binary it took for the device, or its compile of the
    // SPIR-V a binary for other devices carries.
    let covered = match &o.device {
        Some(d) => o.devices.contains(d),
        None => true,
    };
    if m.built_binary.is_some() && !covered {
        o.kind = "jit".into();
        o.note = Some(format!(
            "the native binary passed carries code for {}, not for {} (the device): the driver compiled the SPIR-V it carries",
            list_or_unknown(&o.devices),
            o.device.as_deref().unwrap_or("the device")
        ));
        o.fix = Some(sycl_images::FIX.into());
        return o;
    }
    let from_memory = m.creation.input_object == Some(None);
    let through_sycl = || {
        let frames = &m.creation.stack;
        frames.iter().any(|&a| {
            r.objects.values().any(|ob| {
                (ob.start..ob.end).contains(&a)
                    && base_name(&String::from_utf8_lossy(&ob.path)).starts_with("libsycl")
            })
        })
    };
    o.kind = if from_memory && built.by_igc == Some(false) {
        "generated"
    } else if from_memory && sycl_cache(r).is_some() && through_sycl() {
        o.cache = sycl_cache(r);
        "cache"
    } else {
        "aot"
    }
    .into();
    o
}

fn list_or_unknown(devices: &[String]) -> String {
    match devices.is_empty() {
        true => "other devices".into(),
        false => devices.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(object: &str, function: &str) -> Frame {
        Frame {
            function: Some(function.into()),
            file: None,
            line: None,
            object: object.into(),
            offset: 0,
        }
    }

    #[test]
    fn runtimes_fold_python_runs_and_the_op_is_found() {
        let mut callers = Vec::new();
        let stack = vec![
            frame("/x/libze_loader.so.1", "zeCommandListAppendLaunchKernel"),
            frame("/x/libur_adapter_level_zero.so.0", "urEnqueueKernelLaunch"),
            frame("/x/libsycl.so.8", "sycl::handler::finalize"),
            frame("/x/_blas_impl.so", "dpnp::extensions::blas::gemm"),
            frame("/usr/lib/libpython3.12.so.1.0", "_PyEval_EvalFrameDefault"),
            frame("/usr/lib/libpython3.12.so.1.0", "PyObject_Call"),
            frame("/usr/bin/python3.12", "main"),
        ];
        add_caller(&mut callers, stack.clone());
        add_caller(&mut callers, stack);
        let [c] = &callers[..] else {
            panic!("{callers:?}")
        };
        assert_eq!((c.processes, c.folded, c.op), (2, 3, Some(0)));
        let names: Vec<_> = c
            .frames
            .iter()
            .map(|f| f.function.clone().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "dpnp::extensions::blas::gemm",
                "(3 frames of the Python interpreter)"
            ]
        );
    }
}
