//! The SYCL device images each DPC++-built object registered
//! (`__sycl_register_lib`, recorded by the interposer: target, format,
//! where its bytes lie), and what they say of a kernel's origin: the
//! image a module's bytes were, the devices the object's native images
//! carry code for, and so whether the ahead-of-time code covered the
//! device it ran on. A native image's bytes are read from the object's
//! file, where the record says they lie: nothing is copied at run time.

use super::origin::{Library, Origin, SyclImages};
use std::collections::{BTreeMap, HashMap};
use xpu_asm_isa::native::targets;
use xpu_asm_record::origins::{Object, SyclImage};
use xpu_asm_record::read::{Module, ProcessRecord};

/// The fix for ahead-of-time code that does not cover the device.
pub const FIX: &str =
    "build with the device in its AOT targets (TORCH_XPU_ARCH_LIST / -fsycl-targets)";

/// The devices of native images, by (file, offset): read once per run.
pub type DeviceCache = HashMap<(String, u64, u64), Vec<String>>;

/// What one object registered, as the collector reads it: all its
/// registrations.
struct Registered<'a> {
    object: u32,
    spirv: bool,
    images: Vec<(&'a SyclImage, Kind)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Spirv,
    /// The devices it carries code for (empty: not told).
    Native(Vec<String>),
    Other,
}

fn path_of(r: &ProcessRecord, o: &Object) -> String {
    match o.path.is_empty() {
        true => r.exe.clone(),
        false => String::from_utf8_lossy(&o.path).into_owned(),
    }
}

/// The bytes at address `vaddr` (of the object's own addresses), `size`
/// of them, in ELF file `path`.
fn read_at(path: &str, vaddr: u64, size: u64) -> Option<Vec<u8>> {
    use object::{Object as _, ObjectSegment};
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a read-only mapping of a library the run loaded; its bytes
    // are only read.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let elf = object::File::parse(&*map).ok()?;
    let seg = elf
        .segments()
        .find(|s| (s.address()..s.address() + s.size()).contains(&vaddr))?;
    let (off, len) = seg.file_range();
    let at = off + (vaddr - seg.address());
    (at + size <= off + len).then(|| map[at as usize..(at + size) as usize].to_vec())
}

fn kind(r: &ProcessRecord, i: &SyclImage, cache: &mut DeviceCache) -> Kind {
    let m = &i.magic;
    if m.starts_with(&[0x03, 0x02, 0x23, 0x07]) || i.format == 2 {
        return Kind::Spirv;
    }
    let native = i.format == 1
        || m.starts_with(b"\x7fELF")
        || m.starts_with(b"!<arch>")
        || i.target == "spir64_gen";
    if !native {
        return Kind::Other;
    }
    let object = i.object.and_then(|id| r.objects.get(&id));
    let (Some(o), Some(off)) = (object, i.offset) else {
        return Kind::Native(Vec::new());
    };
    let path = path_of(r, o);
    // The object's own addresses: the offset from its base.
    let devices = cache
        .entry((path.clone(), off, i.size))
        .or_insert_with(|| {
            read_at(&path, off, i.size)
                .map(|b| targets::built(&b).targets)
                .unwrap_or_default()
        })
        .clone();
    Kind::Native(devices)
}

fn registered<'a>(r: &'a ProcessRecord, cache: &mut DeviceCache) -> Vec<Registered<'a>> {
    let mut out: Vec<Registered> = Vec::new();
    for reg in &r.sycl_images {
        let Some(object) = reg.object else {
            continue;
        };
        let at = match out.iter().position(|g| g.object == object) {
            Some(at) => at,
            None => {
                out.push(Registered {
                    object,
                    spirv: false,
                    images: Vec::new(),
                });
                out.len() - 1
            }
        };
        let images: Vec<_> = reg.images.iter().map(|i| (i, kind(r, i, cache))).collect();
        let g = &mut out[at];
        g.spirv |= reg.spirv > 0 || images.iter().any(|(_, k)| *k == Kind::Spirv);
        g.images.extend(images);
    }
    out
}

fn summary(r: &ProcessRecord, reg: &Registered, image: Option<&SyclImage>) -> Option<SyclImages> {
    let o = r.objects.get(&reg.object)?;
    let mut native: Vec<String> = Vec::new();
    for (_, k) in &reg.images {
        if let Kind::Native(d) = k {
            for d in d {
                if !native.contains(d) {
                    native.push(d.clone());
                }
            }
        }
    }
    Some(SyclImages {
        library: Library {
            path: path_of(r, o),
            build_id: o.build_id.clone(),
            function: None,
        },
        native_images: reg
            .images
            .iter()
            .filter(|(_, k)| matches!(k, Kind::Native(_)))
            .count(),
        image: image.map(|i| i.target.clone()),
        native,
        spirv: reg.spirv,
    })
}

/// The object whose path is `path` in process `r`.
fn object_id(r: &ProcessRecord, path: &str) -> Option<u32> {
    r.objects
        .values()
        .find(|o| path_of(r, o) == path)
        .map(|o| o.id)
}

/// Origin `o` of module `m` with the SYCL images of the object its bytes
/// lay in (the image they were), else of the object that carried or
/// created it; and, where that object's native code is for other devices
/// than the one it ran on while the ISA was compiled from SPIR-V, the
/// note and the fix.
pub fn add(r: &ProcessRecord, m: &Module, o: &mut Origin, cache: &mut DeviceCache) {
    if r.sycl_images.is_empty() {
        return;
    }
    let regs = registered(r, cache);
    let input = m.creation.input_object.flatten();
    let image = input.zip(m.creation.input_offset).and_then(|(id, at)| {
        regs.iter().find_map(|reg| {
            reg.images.iter().find_map(|(i, _)| {
                let off = i.offset?;
                (i.object == Some(id) && (off..off + i.size).contains(&at)).then_some((reg, *i))
            })
        })
    });
    let by_path = |l: &Option<Library>| {
        let id = object_id(r, &l.as_ref()?.path)?;
        regs.iter().find(|reg| reg.object == id)
    };
    let reg = image
        .map(|(reg, _)| reg)
        .or_else(|| by_path(&o.library))
        .or_else(|| by_path(&o.created_by));
    let Some(reg) = reg else {
        return;
    };
    o.sycl_images = summary(r, reg, image.map(|(_, i)| i));
    let Some(s) = &o.sycl_images else {
        return;
    };
    let device = o.device.clone();
    let uncovered = device
        .as_ref()
        .is_some_and(|d| !s.native.is_empty() && !s.native.contains(d));
    if o.kind == "jit" && uncovered {
        o.devices = s.native.clone();
        o.note = Some(format!(
            "JIT: {} carries native code for {}, not for {} (the device)",
            base_name(&s.library.path),
            s.native.join(", "),
            device.as_deref().unwrap_or("the device"),
        ));
        o.fix = Some(FIX.into());
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The summary's warnings: each object whose ahead-of-time code did not
/// cover the device, once, with its kernels compiled from SPIR-V instead
/// and the fix; `fallbacks` maps the object to (its native devices, the
/// device, the kernels).
pub fn warnings(fallbacks: &BTreeMap<String, (Vec<String>, String, usize)>) -> Vec<String> {
    fallbacks
        .iter()
        .map(|(lib, (native, device, n))| {
            format!(
                "AOT that does not cover the device: {lib} carries native code for {}, not for {device} (the device): {n} kernel{} compiled from SPIR-V during the run instead; {FIX}",
                native.join(", "),
                if *n == 1 { " was" } else { "s were" },
            )
        })
        .collect()
}

/// The ocloc name of device `id` of process `r`.
pub fn device_named(r: &ProcessRecord, id: Option<u32>) -> Option<String> {
    let d = r.devices.get(&id?)?;
    xpu_asm_isa::native::Device {
        device_id: Some(d.device_id),
        ip_version: d.ip_version,
        ..Default::default()
    }
    .family_name()
}

/// The summary's warnings of the native modules the driver refused: each
/// once, naming the object that carried the bytes (the SYCL image they
/// were), the devices they carry code for, the device and the fix.
/// `is_runtime` tells the runtimes' objects (whose frames are not the
/// caller's).
pub fn refused_warnings(
    dir: &std::path::Path,
    r: &ProcessRecord,
    cache: &mut DeviceCache,
    is_runtime: fn(&str) -> bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &r.refused {
        let object = f
            .creation
            .input_object
            .flatten()
            .and_then(|id| r.objects.get(&id));
        let at = f.creation.input_offset;
        let path = object.map(|o| path_of(r, o));
        let image = object.zip(at).and_then(|(o, at)| {
            r.sycl_images.iter().flat_map(|g| &g.images).find(|i| {
                i.object == Some(o.id) && i.offset.is_some_and(|s| (s..s + i.size).contains(&at))
            })
        });
        let saved = f.binary_file.as_ref();
        let devices = match (&path, at, saved) {
            (_, _, Some(file)) => std::fs::read(dir.join(file))
                .map(|b| targets::built(&b).targets)
                .unwrap_or_default(),
            (Some(p), Some(at), None) => cache
                .entry((p.clone(), at, f.size))
                .or_insert_with(|| {
                    read_at(p, at, f.size)
                        .map(|b| targets::built(&b).targets)
                        .unwrap_or_default()
                })
                .clone(),
            _ => Vec::new(),
        };
        let device = device_named(r, f.device);
        // Bytes in memory (the SYCL runtime's copy of an image): the
        // object that asked for the module.
        let caller = || {
            f.creation.stack.iter().find_map(|&a| {
                let o = r.objects.values().find(|o| (o.start..o.end).contains(&a))?;
                let p = path_of(r, o);
                (!is_runtime(&p)).then_some(p)
            })
        };
        let lib = path.or_else(caller).unwrap_or_else(|| "the program".into());
        let what = image.map_or(String::new(), |i| format!(" (its {} image)", i.target));
        let covered = device.as_ref().is_some_and(|d| devices.contains(d));
        let line = match (covered, devices.is_empty()) {
            (false, false) => format!(
                "the driver refused a native image: {lib}{what} carries native code for {}, not for {} (the device); zeModuleCreate answered {:#x}; {FIX}",
                devices.join(", "),
                device.as_deref().unwrap_or("the device"),
                f.result
            ),
            _ => format!(
                "the driver refused a native image of {lib}{what} on {}: zeModuleCreate answered {:#x}",
                device.as_deref().unwrap_or("the device"),
                f.result
            ),
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}
