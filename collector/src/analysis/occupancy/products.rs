//! What occupancy needs of a GPU that its driver does not report: per
//! family, the hardware threads an EU (XVE) holds at a kernel's GRF size,
//! the shared local memory of an Xe-core, the most work-groups an Xe-core
//! holds, and its barriers. Each number's source is in docs/report.md
//! ("Occupancy"); in short:
//!
//! - threads per EU by GRF: NEO's `calculateAvailableThreadCount`
//!   (`shared/source/helpers/gfx_core_helper_base.inl`: 8, and 4 with the
//!   large GRF, for every family before Xe3;
//!   `gfx_core_helper_xe3_and_later.inl`: Xe3's table by GRF size);
//! - SLM per Xe-core, work-groups and barriers per Xe-core: Intel's GPU
//!   Occupancy Calculator (oneAPI-samples,
//!   `Tools/GPU-Occupancy-Calculator/index.html`, its `targets`:
//!   `xe_hpc_pvc`, `xe2_hpg`, `xe2_lpg`, `xe_hpg_dg2_arc`, `xe_lpg`), and
//!   NEO's `maxProgrammableSlmSize` of each product (`hw_info_pvc.cpp`,
//!   `hw_info_bmg.cpp`, `hw_info_ptl.cpp`: 128 KiB). The calculator has no
//!   Xe3 entry: Xe3 takes Xe2's work-groups and barriers.

use serde::{Deserialize, Serialize};

/// A GPU family, as occupancy tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Xe-HPG and Xe-LPG (dg2, mtl, arl): 16 EUs per Xe-core.
    XeHpg,
    /// Xe-HPC (pvc).
    XeHpc,
    /// Xe2 (bmg, lnl).
    Xe2,
    /// Xe3 (ptl).
    Xe3,
}

/// A family's numbers that no driver query gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Hardware threads per EU at the smallest GRF size: the denominator
    /// of occupancy.
    pub max_threads_per_eu: u32,
    pub slm_per_xe_core: u64,
    pub max_groups_per_xe_core: u32,
    pub barriers_per_xe_core: u32,
}

impl Family {
    /// The family of a device: by its IP version (architecture in bits
    /// 22 and up, release in bits 14 to 21) where the driver gives one,
    /// else by its PCI device id (NEO 22.43 gives no IP version).
    pub fn of(ip_version: Option<u32>, device_id: u32) -> Option<Family> {
        if let Some(ip) = ip_version {
            let (arch, release) = (ip >> 22, (ip >> 14) & 0xff);
            return match (arch, release) {
                (12, 60 | 61) => Some(Family::XeHpc),
                (12, 55..=57 | 70..=74) => Some(Family::XeHpg),
                (20, _) => Some(Family::Xe2),
                (30, _) => Some(Family::Xe3),
                _ => None,
            };
        }
        match device_id {
            0x0bd0..=0x0bdb | 0x0b69 | 0x0b6e => Some(Family::XeHpc),
            0x4f80..=0x4f8f | 0x5690..=0x56ff => Some(Family::XeHpg),
            0xe202..=0xe2ff => Some(Family::Xe2),
            _ => None,
        }
    }

    /// As the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Family::XeHpg => "xe-hpg",
            Family::XeHpc => "xe-hpc",
            Family::Xe2 => "xe2",
            Family::Xe3 => "xe3",
        }
    }

    /// Hardware threads an EU holds for a kernel of `grf` registers.
    pub fn threads_per_eu(self, grf: u32) -> u32 {
        match self {
            Family::Xe3 => match grf {
                0..=96 => 10,
                97..=128 => 8,
                129..=160 => 6,
                161..=192 => 5,
                _ => 4,
            },
            _ if grf > 128 => 4,
            _ => 8,
        }
    }

    pub fn limits(self) -> Limits {
        const KIB: u64 = 1024;
        match self {
            Family::XeHpg => Limits {
                max_threads_per_eu: 8,
                slm_per_xe_core: 128 * KIB,
                max_groups_per_xe_core: 128,
                barriers_per_xe_core: 128,
            },
            Family::XeHpc | Family::Xe2 => Limits {
                max_threads_per_eu: 8,
                slm_per_xe_core: 128 * KIB,
                max_groups_per_xe_core: 64,
                barriers_per_xe_core: 64,
            },
            Family::Xe3 => Limits {
                max_threads_per_eu: 10,
                slm_per_xe_core: 128 * KIB,
                max_groups_per_xe_core: 64,
                barriers_per_xe_core: 64,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_ip_version_and_device_id() {
        // NEO 26's answers on the products the tests emulate.
        assert_eq!(Family::of(Some(0x30f0007), 0x0bd5), Some(Family::XeHpc));
        assert_eq!(Family::of(Some(0x5004000), 0xe202), Some(Family::Xe2));
        assert_eq!(
            Family::of(Some(30 << 22 | 3 << 14), 0xb080),
            Some(Family::Xe3)
        );
        // NEO 22.43 gives no IP version.
        assert_eq!(Family::of(None, 0x0bd5), Some(Family::XeHpc));
        assert_eq!(Family::of(None, 0x4f80), Some(Family::XeHpg));
        assert_eq!(Family::of(None, 0x9a49), None);
    }

    #[test]
    fn threads_per_eu_follow_neos_rules() {
        assert_eq!(Family::XeHpc.threads_per_eu(128), 8);
        assert_eq!(Family::XeHpc.threads_per_eu(256), 4);
        assert_eq!(Family::Xe2.threads_per_eu(256), 4);
        let xe3: Vec<u32> = [64, 96, 128, 160, 192, 256]
            .iter()
            .map(|&g| Family::Xe3.threads_per_eu(g))
            .collect();
        assert_eq!(xe3, [10, 10, 8, 6, 5, 4]);
    }
}
