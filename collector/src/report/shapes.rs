//! Each launched kernel's launch shapes with their occupancy and device
//! times, and the device each process ran on: from the records
//! ([`by_kernel`], [`device_of`]), added to the report's entries
//! ([`fill`]).
//!
//! A shape's local memory is the kernel's static local memory plus its
//! arguments set with a size and no value that its module binary says
//! are in local memory (a NULL value is also a null pointer); without the
//! binary's word on it, the dynamic part is unknown (`slm_bytes` null).

use super::launch::{DeviceEntry, OtherShapes, ShapeEntry, LISTED_SHAPES};
use super::time::{self, TimeEntry};
use super::{Api, KernelEntry};
use crate::analysis::occupancy::{self, Family};
use std::collections::HashMap;
use std::path::Path;
use xpu_asm_isa::native;
use xpu_asm_record::read::{DeviceCompute, ProcessRecord};
use xpu_asm_record::shapes::{ShapeKey, FLAG_INDIRECT, FLAG_NO_GROUP_SIZE};
use xpu_asm_record::times::Times;

/// A kernel's shapes over the records, and what occupancy needs of it.
#[derive(Debug, Default)]
pub struct KernelShapes {
    /// By resolved shape.
    shapes: Vec<Shape>,
    /// Launches and appends of shapes the records did not keep.
    other: (u64, u64),
    /// Its device times, over its processes (`--time`).
    time: Option<Times>,
    /// Whether a process that launched it timed launches.
    timing: bool,
    slm_static: Option<u32>,
    /// From its module binary.
    barrier: Option<bool>,
    device: Option<occupancy::Device>,
}

/// One shape's launches and device times over the records.
#[derive(Debug)]
struct Shape {
    resolved: Resolved,
    launches: u64,
    appended: u64,
    time: Option<Times>,
}

/// Adds `t` to `into`.
fn add_times(into: &mut Option<Times>, t: Option<&Times>) {
    match (into.as_mut(), t) {
        (Some(a), Some(t)) => a.add(t),
        (None, Some(t)) => *into = Some(t.clone()),
        (_, None) => {}
    }
}

/// A shape with its local memory resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resolved {
    group_size: Option<[u32; 3]>,
    group_count: Option<[u32; 3]>,
    global_size: Option<[u32; 3]>,
    slm_dynamic: Option<u64>,
}

/// A kernel as the report tells kernels apart (as `entries::KernelKey`):
/// name, module SHA-256 and API.
type KernelKey = (Vec<u8>, Option<String>, Api);

pub type ByKernel = HashMap<KernelKey, KernelShapes>;

/// What a module binary says of each of its kernels: name -> (local
/// memory arguments, barriers, static local memory).
type BinaryFacts = HashMap<Vec<u8>, (Option<Vec<u32>>, Option<u32>, Option<u64>)>;

/// Every launched kernel's shapes, from the records under capture `dir`.
pub fn by_kernel(dir: &Path, recs: &[ProcessRecord]) -> ByKernel {
    let mut out: ByKernel = HashMap::new();
    let mut binaries: HashMap<String, Option<BinaryFacts>> = HashMap::new();
    for r in recs {
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
            let facts = module.and_then(|m| {
                let file = m
                    .built_binary
                    .as_ref()
                    .or(m.binary.as_ref())?
                    .file
                    .clone()?;
                binaries
                    .entry(file.clone())
                    .or_insert_with(|| binary_facts(&dir.join(&file)))
                    .as_ref()?
                    .get(&k.name)
                    .cloned()
            });
            let e = out.entry(key).or_default();
            // The driver's word, else the binary's (OpenCL kernels).
            let binary_slm = facts
                .as_ref()
                .and_then(|f| f.2)
                .and_then(|v| u32::try_from(v).ok());
            e.slm_static = e.slm_static.or(k.slm_static).or(binary_slm);
            if let Some((_, Some(b), _)) = &facts {
                e.barrier = Some(*b > 0);
            }
            if e.device.is_none() {
                e.device = module
                    .and_then(|m| r.devices.get(&m.device?))
                    .and_then(|d| occupancy_device(d.ip_version, d.device_id, d.compute.as_ref()?));
            }
            let local = facts.as_ref().and_then(|f| f.0.as_deref());
            e.timing |= r.time.is_some();
            add_times(&mut e.time, k.time.as_ref());
            let (mut sl, mut sa) = (0, 0);
            for s in &k.shapes {
                let resolved = resolve(&s.key, local);
                sl += s.launches;
                sa += s.appended;
                match e.shapes.iter_mut().find(|x| x.resolved == resolved) {
                    Some(x) => {
                        x.launches += s.launches;
                        x.appended += s.appended;
                        add_times(&mut x.time, s.time.as_ref());
                    }
                    None => e.shapes.push(Shape {
                        resolved,
                        launches: s.launches,
                        appended: s.appended,
                        time: s.time.clone(),
                    }),
                }
            }
            e.other.0 += k.launches.saturating_sub(sl);
            e.other.1 += k.appended.saturating_sub(sa);
        }
    }
    out
}

/// A module binary's word on its kernels' local memory arguments and
/// barriers (`None`: none to read).
fn binary_facts(path: &Path) -> Option<BinaryFacts> {
    let bytes = std::fs::read(path).ok()?;
    let program = native::parse(&bytes, None).ok()?;
    Some(
        program
            .kernels
            .into_iter()
            // A kernel the binary describes without static local memory
            // has none (zebin and patch tokens leave it out when 0).
            .map(|k| (k.name, (k.local_args, k.barriers, k.slm_bytes.or(Some(0)))))
            .collect(),
    )
}

/// A recorded shape with its dynamic local memory: the sizes of its
/// NULL-valued arguments less those the binary says are not in local
/// memory (pointers, 8 bytes each); unknown without the binary's word.
fn resolve(key: &ShapeKey, local: Option<&[u32]>) -> Resolved {
    let no_group_size = key.flags & FLAG_NO_GROUP_SIZE != 0;
    let slm_dynamic = match (key.null_args, local) {
        (0, _) => Some(u64::from(key.null_bytes)),
        (_, None) => None,
        (mask, Some(local)) => {
            let pointers = (0..64u32)
                .filter(|i| mask & (1 << i) != 0 && !local.contains(i))
                .count() as u64;
            Some(u64::from(key.null_bytes).saturating_sub(8 * pointers))
        }
    };
    Resolved {
        group_size: (!no_group_size).then(|| key.group_size.map(u32::from)),
        group_count: (key.flags & (FLAG_INDIRECT | FLAG_NO_GROUP_SIZE) == 0)
            .then_some(key.group_count),
        global_size: no_group_size.then_some(key.group_count),
        slm_dynamic,
    }
}

/// What occupancy needs of a device, when its family is known.
fn occupancy_device(ip: Option<u32>, id: u32, c: &DeviceCompute) -> Option<occupancy::Device> {
    Some(occupancy::Device {
        family: Family::of(ip, id)?,
        xe_cores: c.slices * c.subslices_per_slice,
        eus_per_xe_core: c.eus_per_subslice,
    })
}

/// The device `r` ran on: the one its first module was built for.
pub fn device_of(r: &ProcessRecord) -> Option<DeviceEntry> {
    let d = r
        .modules
        .values()
        .find_map(|m| r.devices.get(&m.device?))
        .or_else(|| r.devices.values().next())?;
    let c = d.compute.clone().unwrap_or_default();
    let family = Family::of(d.ip_version, d.device_id);
    let limits = family.map(Family::limits);
    Some(DeviceEntry {
        name: d.name.clone(),
        device_id: d.device_id,
        ip_version: d.ip_version,
        family: family.map(|f| f.name().to_string()),
        xe_cores: c.slices * c.subslices_per_slice,
        eus_per_xe_core: c.eus_per_subslice,
        threads_per_eu: c.threads_per_eu,
        eu_simd_width: c.eu_simd_width,
        max_group_size: c.max_group_size,
        max_slm_per_group_bytes: c.max_slm_bytes,
        slm_per_xe_core_bytes: limits.map(|l| l.slm_per_xe_core),
        max_groups_per_xe_core: limits.map(|l| l.max_groups_per_xe_core),
        barriers_per_xe_core: limits.map(|l| l.barriers_per_xe_core),
    })
}

/// Each launched kernel's `slm_static_bytes`, `shapes` (most launched
/// first) with their occupancy, and `other_shapes`.
pub fn fill(kernels: &mut [KernelEntry], by_kernel: &ByKernel) {
    for k in kernels.iter_mut() {
        let Some(s) = by_kernel.get(&key_of(k)) else {
            continue;
        };
        k.slm_static_bytes = s.slm_static;
        if s.timing || s.time.is_some() {
            (k.time, k.time_reason) = time_fields(s.time.as_ref(), k.launches, s.timing);
        }
        // Most launched first; equal ones in the order the records met them.
        let mut kept: Vec<&Shape> = s.shapes.iter().collect();
        kept.sort_by(|a, b| {
            b.launches
                .cmp(&a.launches)
                .then(b.appended.cmp(&a.appended))
        });
        let unlisted = kept.split_off(kept.len().min(LISTED_SHAPES));
        let other = OtherShapes {
            launches: s.other.0 + unlisted.iter().map(|x| x.launches).sum::<u64>(),
            appended: s.other.1 + unlisted.iter().map(|x| x.appended).sum::<u64>(),
            shapes: unlisted.len() as u64,
            unkept_launches: s.other.0,
        };
        k.other_shapes = (other.launches > 0 || other.appended > 0).then_some(other);
        k.shapes = kept.into_iter().map(|x| entry(k, s, x)).collect();
    }
}

/// A kernel's or shape's `time`, or `time_reason` when it has none, in a
/// timed run.
fn time_fields(
    t: Option<&Times>,
    launches: u64,
    timing: bool,
) -> (Option<TimeEntry>, Option<String>) {
    match t.and_then(|t| TimeEntry::of(t, launches)) {
        Some(e) => (Some(e), None),
        None => (None, Some(time::reason(t, timing))),
    }
}

/// Each listed kernel's times over its processes, with its launches (for
/// the run's device time).
pub fn kernel_times<'a>(
    kernels: &'a [KernelEntry],
    by_kernel: &'a ByKernel,
) -> impl Iterator<Item = (&'a Times, u64)> + 'a {
    kernels.iter().filter_map(|k| {
        let s = by_kernel.get(&key_of(k))?;
        Some((s.time.as_ref()?, k.launches))
    })
}

/// The key of a report's kernel.
fn key_of(k: &KernelEntry) -> KernelKey {
    let name = match &k.name_hex {
        Some(h) => xpu_asm_record::unhex(h).unwrap_or_default(),
        None => k.name.as_bytes().to_vec(),
    };
    (name, k.module_sha256.clone(), k.api)
}

fn entry(k: &KernelEntry, s: &KernelShapes, x: &Shape) -> ShapeEntry {
    let (r, launches, appended) = (&x.resolved, x.launches, x.appended);
    let slm = r
        .slm_dynamic
        .map(|d| d + u64::from(s.slm_static.unwrap_or(0)));
    let occupancy = match (k.simd, k.grf, s.device, slm) {
        (Some(simd), Some(grf), Some(device), Some(slm_bytes)) => {
            let shape = occupancy::Shape {
                group_size: r.group_size,
                group_count: r.group_count,
                slm_bytes,
            };
            let code = occupancy::Code {
                simd,
                grf,
                barrier: s.barrier.unwrap_or(false),
            };
            occupancy::occupancy(&shape, &code, &device)
        }
        (None, ..) | (_, None, ..) => Err("the kernel's SIMD width or GRF size is unknown".to_string()),
        (_, _, None, _) => Err("the device is unknown to the occupancy model".to_string()),
        (.., None) => Err("its dynamic local memory is unknown (no module binary to tell its local memory arguments)".to_string()),
    };
    let (occupancy, occupancy_reason) = match occupancy {
        Ok(o) => (Some(o), None),
        Err(e) => (None, Some(e)),
    };
    let (time, time_reason) = match (s.timing || x.time.is_some(), &x.time, &s.time) {
        (false, ..) => (None, None),
        // Past the shapes a process times apart, its times are the kernel's.
        (true, None, Some(_)) => (None, Some(time::WITH_THE_KERNELS.to_string())),
        (true, ..) => time_fields(x.time.as_ref(), launches, s.timing),
    };
    ShapeEntry {
        group_size: r.group_size,
        group_count: r.group_count,
        global_size: r.global_size,
        slm_bytes: slm,
        slm_dynamic_bytes: r.slm_dynamic,
        launches,
        appended,
        occupancy,
        occupancy_reason,
        time,
        time_reason,
    }
}
