//! Theoretical occupancy of a launch shape: how many of an Xe-core's
//! hardware threads the launch's work-groups keep busy, in the model of
//! Intel's GPU Occupancy Calculator (docs/report.md, "Occupancy"):
//!
//! - threads per group = ceil(work-group size / SIMD width);
//! - an Xe-core's thread slots = its EUs x the threads an EU holds at the
//!   kernel's GRF size ([`products`]);
//! - work-groups an Xe-core holds = the least of: slots / threads per
//!   group (`threads`), its SLM / the group's SLM (`slm`), its barriers
//!   when the kernel uses one (`barriers`), the most groups it holds
//!   (`groups`), and ceil(the launch's groups / Xe-cores) (`launch`: too
//!   few groups to fill the device);
//! - occupancy = groups x threads per group / (EUs x the most threads an
//!   EU holds, at its smallest GRF).

pub mod products;

pub use products::Family;
use serde::{Deserialize, Serialize};

/// What holds a launch's occupancy down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limiter {
    Threads,
    Slm,
    Barriers,
    Groups,
    Launch,
}

impl Limiter {
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Threads => "threads",
            Limiter::Slm => "slm",
            Limiter::Barriers => "barriers",
            Limiter::Groups => "groups",
            Limiter::Launch => "launch",
        }
    }
}

/// The device a shape ran on, as occupancy needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    pub family: Family,
    pub xe_cores: u32,
    pub eus_per_xe_core: u32,
}

/// One launch shape of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `None`: the driver chose it (an OpenCL enqueue without a local
    /// size).
    pub group_size: Option<[u32; 3]>,
    /// `None`: unknown on the host (an indirect launch).
    pub group_count: Option<[u32; 3]>,
    /// The group's whole shared local memory, static and dynamic.
    pub slm_bytes: u64,
}

/// The kernel's side of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub simd: u32,
    pub grf: u32,
    pub barrier: bool,
}

/// A shape's occupancy, as the report gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Busy hardware threads of an Xe-core, in percent of all it has.
    pub percent: f64,
    pub limited_by: Limiter,
    /// Work-groups an Xe-core holds at once.
    pub groups_per_xe_core: u32,
    pub threads_per_group: u32,
    /// An Xe-core's thread slots at the kernel's GRF size.
    pub thread_slots: u32,
    /// Its threads at the smallest GRF size (occupancy's denominator).
    pub max_threads: u32,
    /// Lanes of a group's threads with no work-item, in percent (a group
    /// of 16 work-items on a SIMD32 kernel leaves half).
    pub idle_lanes_percent: f64,
    /// Each limit in work-groups per Xe-core (`null`: it does not apply).
    pub limits: Limits,
}

// Its percentages are never NaN (finite quotients of positive counts).
impl Eq for Occupancy {}

/// The work-groups per Xe-core each limit allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub threads: u32,
    pub slm: Option<u32>,
    pub barriers: Option<u32>,
    pub groups: u32,
    pub launch: Option<u32>,
}

/// Rounded to hundredths (what the report prints).
fn hundredths(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The occupancy of `shape` of a kernel of `code` on `device`, or why
/// there is none.
pub fn occupancy(shape: &Shape, code: &Code, device: &Device) -> Result<Occupancy, String> {
    let Some(gs) = shape.group_size else {
        return Err("the driver chose the work-group size".to_string());
    };
    let items: u64 = gs.iter().map(|&v| u64::from(v)).product();
    if items == 0 || code.simd == 0 || device.eus_per_xe_core == 0 || device.xe_cores == 0 {
        return Err("an empty work-group, SIMD width or device".to_string());
    }
    let simd = u64::from(code.simd);
    let per_group = items.div_ceil(simd);
    let family = device.family.limits();
    let slots =
        u64::from(device.eus_per_xe_core) * u64::from(device.family.threads_per_eu(code.grf));
    let max_threads = u64::from(device.eus_per_xe_core) * u64::from(family.max_threads_per_eu);
    let clamp = |v: u64| v.min(u64::from(u32::MAX)) as u32;
    let limits = Limits {
        threads: clamp(slots / per_group),
        slm: (shape.slm_bytes > 0).then(|| clamp(family.slm_per_xe_core / shape.slm_bytes)),
        barriers: code.barrier.then_some(family.barriers_per_xe_core),
        groups: family.max_groups_per_xe_core,
        launch: shape.group_count.map(|c| {
            let groups: u64 = c.iter().map(|&v| u64::from(v)).product();
            clamp(groups.div_ceil(u64::from(device.xe_cores)))
        }),
    };
    // The first of the least, in this order.
    let candidates = [
        (Limiter::Threads, Some(limits.threads)),
        (Limiter::Slm, limits.slm),
        (Limiter::Barriers, limits.barriers),
        (Limiter::Groups, Some(limits.groups)),
        (Limiter::Launch, limits.launch),
    ];
    let (limited_by, groups) = candidates
        .iter()
        .filter_map(|&(l, v)| Some((l, v?)))
        .fold(None, |best: Option<(Limiter, u32)>, (l, v)| match best {
            Some((_, b)) if b <= v => best,
            _ => Some((l, v)),
        })
        .expect("threads always applies");
    let busy = u64::from(groups) * per_group;
    let lanes = per_group * simd;
    Ok(Occupancy {
        percent: hundredths(busy as f64 * 100.0 / max_threads as f64),
        limited_by,
        groups_per_xe_core: groups,
        threads_per_group: clamp(per_group),
        thread_slots: clamp(slots),
        max_threads: clamp(max_threads),
        idle_lanes_percent: hundredths((lanes - items) as f64 * 100.0 / lanes as f64),
        limits,
    })
}

#[cfg(test)]
mod tests;
