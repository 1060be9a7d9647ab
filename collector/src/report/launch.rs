//! The report's launch shapes and devices, as `report.json` holds them
//! (schema 4): the types alone, made by [`super::shapes`].

use crate::analysis::occupancy::Occupancy;
use serde::{Deserialize, Serialize};

/// One launch shape of a kernel, with its launches in every process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeEntry {
    /// Work-items per group, x y z; null when the driver chose it (an
    /// OpenCL enqueue without a local size).
    pub group_size: Option<[u32; 3]>,
    /// Groups, x y z; null for an indirect launch (in device memory) and
    /// when the driver chose the group size.
    pub group_count: Option<[u32; 3]>,
    /// The global size of an OpenCL enqueue whose group size the driver
    /// chose (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_size: Option<[u32; 3]>,
    /// The group's shared local memory, static and dynamic, in bytes;
    /// null when the dynamic part is unknown.
    pub slm_bytes: Option<u64>,
    /// Its dynamic part (arguments in local memory).
    pub slm_dynamic_bytes: Option<u64>,
    pub launches: u64,
    pub appended: u64,
    /// Theoretical occupancy; null when it cannot be told
    /// (`occupancy_reason` says why).
    pub occupancy: Option<Occupancy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy_reason: Option<String>,
    /// Its device times (schema 6, `--time`; absent without, and when
    /// none of its launches was timed: `time_reason` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<super::time::TimeEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_reason: Option<String>,
}

/// The device a process ran on (or emulated), as the driver reported it,
/// with the family's numbers occupancy takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceEntry {
    pub name: String,
    pub device_id: u32,
    pub ip_version: Option<u32>,
    /// `xe-hpc`, `xe-hpg`, `xe2`, `xe3`; null for a device occupancy does
    /// not know.
    pub family: Option<String>,
    pub xe_cores: u32,
    pub eus_per_xe_core: u32,
    pub threads_per_eu: u32,
    pub eu_simd_width: u32,
    pub max_group_size: u32,
    /// The most shared local memory one group can have, in bytes.
    pub max_slm_per_group_bytes: u32,
    /// From the family's numbers (null when the family is unknown).
    pub slm_per_xe_core_bytes: Option<u64>,
    pub max_groups_per_xe_core: Option<u32>,
    pub barriers_per_xe_core: Option<u32>,
}

/// The launches of a kernel's shapes that `shapes` does not list: shapes
/// past the [`LISTED_SHAPES`] most launched, and shapes the records did
/// not keep (past `MAX_SHAPES` per kernel and process).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherShapes {
    pub launches: u64,
    pub appended: u64,
    /// Distinct shapes kept but not listed (less launched than those
    /// listed); the shapes not kept are not counted.
    pub shapes: u64,
    /// The launches, of `launches`, whose shapes the records did not
    /// keep: 0 means the shapes listed are exactly the most launched.
    pub unkept_launches: u64,
}

/// Shapes the report lists per kernel, most launched first.
pub const LISTED_SHAPES: usize = 32;
