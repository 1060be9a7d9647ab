//! Which GPU a binary is for: IGA's platform code and IGC's name for it,
//! from the numbers binaries carry (product family, GFX core family,
//! revision) or from the device a program ran on.

/// The GPU a program ran on, as recorded at run time. Any field may be
/// missing; what is there chooses a fat binary's member and stands in for
/// the platform when a binary does not name it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Device {
    /// ocloc's name of the product: `pvc`, `tgllp`, `acm-g10` (or `dg2`), ...
    pub product: Option<String>,
    /// The PCI device id (`ze_device_properties_t::deviceId`), e.g. 0x0bd5.
    pub device_id: Option<u32>,
    /// The raw `ze_device_ip_version_ext_t::ipVersion`: architecture in bits
    /// 31..22, release in 21..14, revision in 5..0 (12.60.7 for PVC).
    pub ip_version: Option<u32>,
}

/// A GPU platform: what IGA needs to decode its code, and the name to show.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Platform {
    /// IGA's `iga_gen_t` value (`IGA_XE_HPC` = 0x0100_0004, ...).
    pub iga_gen: u32,
    /// The name IGC's `.asm` dumps print on their `//.platform` line:
    /// `PVCXT` (PVC at revision 3 and later, the XT steppings), `PVC`,
    /// `DG2`, `MTL`, `XeHP_SDV`, `TGLLP` (also for DG1, RKL and ADL, as
    /// IGC does), `ICLLP`, `SKL`.
    pub name: String,
}

// IGA's platform codes (iga.h: GEN_VER(maj, min) = maj << 16 | min,
// XE_VER(maj, min) = maj << 24 | min).
const IGA_GEN9: u32 = 9 << 16;
const IGA_GEN11: u32 = 11 << 16;
const IGA_XE: u32 = 1 << 24;
const IGA_XE_HP: u32 = (1 << 24) | 1;
const IGA_XE_HPG: u32 = (1 << 24) | 2;
const IGA_XE_HPC: u32 = (1 << 24) | 4;
const IGA_XE2: u32 = 2 << 24;

// NEO's GFXCORE_FAMILY values (patch-token program header `Device`, zebin
// GFX core note).
const CORE_GEN9: u32 = 12;
const CORE_GEN11: u32 = 15;
const CORE_GEN11LP: u32 = 16;
const CORE_GEN12LP: u32 = 18;
const CORE_XE_HP: u32 = 0xC05;
const CORE_XE_HPG: u32 = 0xC07;
const CORE_XE_HPC: u32 = 0xC08;
const CORE_XE2: u32 = 0xC09;

// PRODUCT_FAMILY values (zebin product family note). Those of integrated
// GPUs moved between versions of the enum (igfxfmid.h): these are the ones
// NEO 22.43's ocloc writes, checked here (skl 18, icllp 26, tgllp 29, rkl
// 30, adl-s 31, adl-p 32, adl-n 33; newer enums give tgllp 33). Those of
// discrete GPUs (1210 and up) have not moved.
const FAMILY_GEN9: std::ops::RangeInclusive<u32> = 18..=20; // skl, kbl, cfl
const FAMILY_GEN11: std::ops::RangeInclusive<u32> = 26..=28; // icllp, lkf, jsl/ehl
const FAMILY_GEN12LP: std::ops::RangeInclusive<u32> = 29..=33; // tgllp, rkl, adl-s/p/n
const FAMILY_TGLLP: u32 = 29;
/// Product family numbers below this one are those that moved.
pub(crate) const FAMILY_STABLE_FROM: u32 = 1210;
const FAMILY_DG1: u32 = 1210;
const FAMILY_XE_HP_SDV: u32 = 1250;
const FAMILY_DG2: u32 = 1270;
const FAMILY_PVC: u32 = 1271;
const FAMILY_MTL: u32 = 1272;

/// A product ocloc knows: its name, numbers, IP version and PCI ids.
struct Product {
    name: &'static str,
    aliases: &'static [&'static str],
    family: Option<u32>,
    core: u32,
    ip: (u32, u32, u32),
    ids: &'static [u32],
}

const PRODUCTS: &[Product] = &[
    Product {
        name: "tgllp",
        aliases: &[],
        family: Some(FAMILY_TGLLP),
        core: CORE_GEN12LP,
        ip: (12, 0, 0),
        ids: &[
            0xFF20, 0x9A40, 0x9A49, 0x9A59, 0x9A60, 0x9A68, 0x9A70, 0x9A78,
        ],
    },
    Product {
        name: "rkl",
        aliases: &[],
        family: Some(30),
        core: CORE_GEN12LP,
        ip: (12, 1, 0),
        ids: &[],
    },
    Product {
        name: "adl-s",
        aliases: &[],
        family: Some(31),
        core: CORE_GEN12LP,
        ip: (12, 2, 0),
        ids: &[],
    },
    Product {
        name: "adl-p",
        aliases: &[],
        family: Some(32),
        core: CORE_GEN12LP,
        ip: (12, 3, 0),
        ids: &[],
    },
    Product {
        name: "adl-n",
        aliases: &[],
        family: Some(33),
        core: CORE_GEN12LP,
        ip: (12, 4, 0),
        ids: &[],
    },
    Product {
        name: "dg1",
        aliases: &[],
        family: Some(FAMILY_DG1),
        core: CORE_GEN12LP,
        ip: (12, 10, 0),
        ids: &[0x4905, 0x4906, 0x4907, 0x4908],
    },
    Product {
        name: "xe-hp-sdv",
        aliases: &[],
        family: Some(FAMILY_XE_HP_SDV),
        core: CORE_XE_HP,
        ip: (12, 50, 4),
        ids: &[],
    },
    Product {
        name: "acm-g10",
        aliases: &["dg2", "dg2-g10", "ats-m150"],
        family: Some(FAMILY_DG2),
        core: CORE_XE_HPG,
        ip: (12, 55, 8),
        ids: &[
            0x4F80, 0x4F81, 0x4F82, 0x4F83, 0x4F84, 0x5690, 0x5691, 0x5692, 0x56A0, 0x56A1, 0x56A2,
            0x56C0,
        ],
    },
    Product {
        name: "acm-g11",
        aliases: &["dg2-g11", "ats-m75"],
        family: Some(FAMILY_DG2),
        core: CORE_XE_HPG,
        ip: (12, 56, 5),
        ids: &[
            0x4F87, 0x4F88, 0x5693, 0x5694, 0x5695, 0x56A5, 0x56A6, 0x56B0, 0x56B1, 0x56C1,
        ],
    },
    Product {
        name: "acm-g12",
        aliases: &["dg2-g12"],
        family: Some(FAMILY_DG2),
        core: CORE_XE_HPG,
        ip: (12, 57, 0),
        ids: &[
            0x4F85, 0x4F86, 0x5696, 0x5697, 0x56A3, 0x56A4, 0x56B2, 0x56B3,
        ],
    },
    Product {
        name: "pvc-sdv",
        aliases: &[],
        family: Some(FAMILY_PVC),
        core: CORE_XE_HPC,
        ip: (12, 60, 1),
        ids: &[],
    },
    Product {
        name: "pvc",
        aliases: &[],
        family: Some(FAMILY_PVC),
        core: CORE_XE_HPC,
        ip: (12, 60, 7),
        ids: &[
            0x0BD0, 0x0BD4, 0x0BD5, 0x0BD6, 0x0BD7, 0x0BD8, 0x0BD9, 0x0BDA, 0x0BDB, 0x0B69, 0x0B6E,
        ],
    },
];

/// `ze_device_ip_version_ext_t::ipVersion` as (architecture, release,
/// revision).
pub(crate) fn decode_ip(v: u32) -> (u32, u32, u32) {
    ((v >> 22) & 0x3ff, (v >> 14) & 0xff, v & 0x3f)
}

/// The raw `ze_device_ip_version_ext_t::ipVersion` of IP version
/// `architecture.release.revision` (12.60.7 is PVC's).
pub fn ip_version(architecture: u32, release: u32, revision: u32) -> u32 {
    ((architecture & 0x3ff) << 22) | ((release & 0xff) << 14) | (revision & 0x3f)
}

impl Device {
    /// The device as a person would name it: `pvc (device 0x0bd5, IP
    /// 12.60.7)`, or `no device recorded`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(id) = self.device_id {
            parts.push(format!("device 0x{id:04x}"));
        }
        if let Some((a, r, v)) = self.ip() {
            parts.push(format!("IP {a}.{r}.{v}"));
        }
        match (self.product_name(), parts.is_empty()) {
            (Some(p), true) => p,
            (Some(p), false) => format!("{p} ({})", parts.join(", ")),
            (None, false) => parts.join(", "),
            (None, true) => "no device recorded".to_string(),
        }
    }

    fn product(&self) -> Option<&'static Product> {
        if let Some(p) = &self.product {
            let p = p.trim().to_ascii_lowercase();
            if let Some(found) = PRODUCTS
                .iter()
                .find(|q| q.name == p || q.aliases.contains(&p.as_str()))
            {
                return Some(found);
            }
        }
        if let Some(ip) = self.ip_version.map(decode_ip) {
            if let Some(found) = PRODUCTS.iter().find(|q| q.ip == ip) {
                return Some(found);
            }
        }
        let id = self.device_id?;
        PRODUCTS.iter().find(|q| q.ids.contains(&id))
    }

    /// ocloc's name of the product, as given or as found from the IP
    /// version or PCI id.
    pub(crate) fn product_name(&self) -> Option<String> {
        match &self.product {
            Some(p) if !p.trim().is_empty() => Some(p.trim().to_ascii_lowercase()),
            _ => self.product().map(|p| p.name.to_string()),
        }
    }

    /// The IP version (architecture, release, revision), as given or as
    /// known for the product.
    pub(crate) fn ip(&self) -> Option<(u32, u32, u32)> {
        self.ip_version
            .map(decode_ip)
            .or_else(|| self.product().map(|p| p.ip))
    }

    /// The platform of this device, when it is known.
    pub fn platform(&self) -> Option<Platform> {
        let p = self.product()?;
        let rev = self.ip().map(|(_, _, v)| v);
        p.family
            .and_then(|f| Platform::from_product_family(f, rev))
            .or_else(|| Platform::from_core_family(p.core, rev))
    }
}

impl Platform {
    fn new(iga_gen: u32, name: &str) -> Platform {
        Platform {
            iga_gen,
            name: name.to_string(),
        }
    }

    /// From NEO's PRODUCT_FAMILY value (zebin's product family note), for
    /// integrated GPUs in the numbering of NEO 22.43's ocloc (other
    /// versions number them differently: when the device is known, its
    /// [`Device::platform`] is the better answer for them). `revision`
    /// tells PVC's XT steppings from XL.
    pub fn from_product_family(family: u32, revision: Option<u32>) -> Option<Platform> {
        Some(match family {
            f if FAMILY_GEN9.contains(&f) => Platform::new(IGA_GEN9, "SKL"),
            f if FAMILY_GEN11.contains(&f) => Platform::new(IGA_GEN11, "ICLLP"),
            f if FAMILY_GEN12LP.contains(&f) => Platform::new(IGA_XE, "TGLLP"),
            // IGC names DG1 after the TGLLP platform it shares.
            FAMILY_DG1 => Platform::new(IGA_XE, "TGLLP"),
            FAMILY_XE_HP_SDV => Platform::new(IGA_XE_HP, "XeHP_SDV"),
            FAMILY_DG2 => Platform::new(IGA_XE_HPG, "DG2"),
            FAMILY_MTL => Platform::new(IGA_XE_HPG, "MTL"),
            FAMILY_PVC => pvc(revision),
            _ => return None,
        })
    }

    /// From NEO's GFXCORE_FAMILY value (patch-token program header, zebin's
    /// GFX core note).
    pub fn from_core_family(core: u32, revision: Option<u32>) -> Option<Platform> {
        Some(match core {
            CORE_GEN9 => Platform::new(IGA_GEN9, "SKL"),
            CORE_GEN11 | CORE_GEN11LP => Platform::new(IGA_GEN11, "ICLLP"),
            CORE_GEN12LP => Platform::new(IGA_XE, "TGLLP"),
            CORE_XE_HP => Platform::new(IGA_XE_HP, "XeHP_SDV"),
            CORE_XE_HPG => Platform::new(IGA_XE_HPG, "DG2"),
            CORE_XE_HPC => pvc(revision),
            CORE_XE2 => Platform::new(IGA_XE2, "Xe2"),
            _ => return None,
        })
    }
}

/// PVC's revisions 0 to 2 are the XL steppings, 3 and later XT; IGC's
/// dumps name the latter `PVCXT`.
fn pvc(revision: Option<u32>) -> Platform {
    match revision {
        Some(r) if r >= 3 => Platform::new(IGA_XE_HPC, "PVCXT"),
        _ => Platform::new(IGA_XE_HPC, "PVC"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_known_by_any_of_its_names() {
        let by_id = Device {
            device_id: Some(0x0bd5),
            ..Device::default()
        };
        assert_eq!(by_id.product_name().as_deref(), Some("pvc"));
        assert_eq!(by_id.ip(), Some((12, 60, 7)));
        assert_eq!(by_id.describe(), "pvc (device 0x0bd5, IP 12.60.7)");
        let by_ip = Device {
            ip_version: Some(ip_version(12, 0, 0)),
            ..Device::default()
        };
        assert_eq!(by_ip.product_name().as_deref(), Some("tgllp"));
        let by_alias = Device {
            product: Some("DG2".into()),
            ..Device::default()
        };
        assert_eq!(by_alias.ip(), Some((12, 55, 8)));
        assert_eq!(by_alias.platform().unwrap().name, "DG2");
        assert_eq!(Device::default().describe(), "no device recorded");
        assert_eq!(Device::default().platform(), None);
    }

    #[test]
    fn ip_versions_round_trip() {
        assert_eq!(ip_version(12, 60, 7), 0x030f_0007);
        assert_eq!(decode_ip(0x030f_0007), (12, 60, 7));
    }

    #[test]
    fn integrated_gpus_product_families_as_neo_22_43_writes_them() {
        let name = |f| Platform::from_product_family(f, None).map(|p| p.name);
        assert_eq!(name(18).as_deref(), Some("SKL"));
        assert_eq!(name(26).as_deref(), Some("ICLLP"));
        for f in 29..=33 {
            assert_eq!(
                Platform::from_product_family(f, None).unwrap().iga_gen,
                IGA_XE
            );
        }
        assert_eq!(name(1210).as_deref(), Some("TGLLP"));
        let adl = Device {
            product: Some("adl-p".into()),
            ..Device::default()
        };
        assert_eq!(adl.platform().unwrap().name, "TGLLP");
    }

    #[test]
    fn pvc_xt_is_told_from_xl_by_revision() {
        assert_eq!(
            Platform::from_product_family(1271, Some(7)).unwrap().name,
            "PVCXT"
        );
        assert_eq!(
            Platform::from_core_family(0xC08, Some(1)).unwrap().name,
            "PVC"
        );
        assert_eq!(
            Platform::from_core_family(0xC08, None).unwrap().iga_gen,
            0x0100_0004
        );
        assert_eq!(Platform::from_core_family(99, None), None);
    }
}
