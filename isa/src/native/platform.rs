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
    /// `XE3P_CRI` (CRI), `NVL` (NVL-P, the other Xe3P products), `XE3`
    /// (PTL, WCL, NVL-S and NVL-U), `XE2` (BMG and LNL), `PVCXT` (PVC at
    /// revision 3 and later, the XT steppings), `PVC`, `ARL` (ARL-H; ARL-S
    /// and ARL-U are of MTL's product family), `MTL`, `DG2`, `XeHP_SDV`,
    /// `TGLLP` (also for DG1, RKL and ADL, as IGC does), `ICLLP`, `SKL`.
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
const IGA_XE3: u32 = 3 << 24;
const IGA_XE3P_XPC: u32 = (3 << 24) | 3;

// GFXCORE_FAMILY values (gmmlib's igfxfmid.h, as NEO and IGC use them;
// patch-token program header `Device`, zebin GFX core note).
const CORE_GEN9: u32 = 12;
const CORE_GEN11: u32 = 15;
const CORE_GEN11LP: u32 = 16;
const CORE_GEN12LP: u32 = 18;
const CORE_XE_HP: u32 = 0xC05;
const CORE_XE_HPG: u32 = 0xC07;
const CORE_XE_HPC: u32 = 0xC08;
/// Xe2's, LPG and HPG alike (LNL, BMG).
const CORE_XE2: u32 = 0xC09;
const CORE_XE3: u32 = 0x1E00;
const CORE_XE3P: u32 = 0x2300;

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
const FAMILY_ARL: u32 = 1273;
const FAMILY_BMG: u32 = 1274;
const FAMILY_LNL: u32 = 1275;
const FAMILY_PTL: u32 = 1300;
/// NVL-S and NVL-U: Xe3 graphics (`IGFX_NVL_XE3G`).
const FAMILY_NVL_XE3G: u32 = 1340;
/// NVL-P: Xe3P graphics.
const FAMILY_NVL: u32 = 1360;
const FAMILY_CRI: u32 = 1380;

/// A product ocloc knows: its name, numbers, IP version and PCI ids.
struct Product {
    name: &'static str,
    aliases: &'static [&'static str],
    family: Option<u32>,
    core: u32,
    ip: (u32, u32, u32),
    ids: &'static [u32],
}

/// ocloc's name of product family `family` (only for the
/// families whose numbers did not move between IGC versions).
pub(crate) fn product_of_family(family: u32) -> Option<&'static str> {
    if family < FAMILY_STABLE_FROM {
        return None;
    }
    // The family's shortest name: `pvc` of pvc-sdv, pvc and pvc-vg.
    PRODUCTS
        .iter()
        .filter(|p| p.family == Some(family))
        .map(|p| p.name)
        .min_by_key(|n| n.len())
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
    // From here on: NEO 26.27's products (its `ocloc ids <name>` gives the
    // IP version, its device_ids_configs_*.h the PCI ids).
    Product {
        name: "pvc-vg",
        aliases: &["pvc-xt-c0-vg"],
        family: Some(FAMILY_PVC),
        core: CORE_XE_HPC,
        ip: (12, 61, 7),
        ids: &[],
    },
    Product {
        name: "mtl",
        aliases: &["mtl-u", "mtl-m", "mtl-s", "arl-s", "arl-u"],
        family: Some(FAMILY_MTL),
        core: CORE_XE_HPG,
        ip: (12, 70, 4),
        ids: &[0x7D40, 0x7D45, 0x7D67, 0x7D41],
    },
    Product {
        name: "mtl-h",
        aliases: &["mtl-p"],
        family: Some(FAMILY_MTL),
        core: CORE_XE_HPG,
        ip: (12, 71, 4),
        ids: &[0x7D55, 0x7DD5],
    },
    Product {
        name: "arl-h",
        aliases: &["arl"],
        family: Some(FAMILY_ARL),
        core: CORE_XE_HPG,
        ip: (12, 74, 4),
        ids: &[0x7D51, 0x7DD1],
    },
    Product {
        name: "bmg",
        aliases: &["bmg-g21"],
        family: Some(FAMILY_BMG),
        core: CORE_XE2,
        ip: (20, 1, 0),
        ids: &[
            0xE202, 0xE209, 0xE20B, 0xE20C, 0xE20D, 0xE210, 0xE211, 0xE212, 0xE215, 0xE216,
        ],
    },
    Product {
        name: "bmg-g31",
        aliases: &[],
        family: Some(FAMILY_BMG),
        core: CORE_XE2,
        ip: (20, 2, 0),
        ids: &[0xE220, 0xE221, 0xE222, 0xE223],
    },
    Product {
        name: "lnl",
        aliases: &["lnl-m"],
        family: Some(FAMILY_LNL),
        core: CORE_XE2,
        ip: (20, 4, 4),
        ids: &[0x6420, 0x64A0, 0x64B0],
    },
    Product {
        name: "ptl",
        aliases: &["ptl-h"],
        family: Some(FAMILY_PTL),
        core: CORE_XE3,
        ip: (30, 0, 4),
        ids: &[
            0xB080, 0xB081, 0xB082, 0xB083, 0xB084, 0xB085, 0xB086, 0xB087, 0xB08F, 0xB0A0, 0xB0B0,
        ],
    },
    Product {
        name: "ptl-u",
        aliases: &[],
        family: Some(FAMILY_PTL),
        core: CORE_XE3,
        ip: (30, 1, 0),
        ids: &[0xB090],
    },
    Product {
        name: "wcl",
        aliases: &[],
        family: Some(FAMILY_PTL),
        core: CORE_XE3,
        ip: (30, 3, 1),
        ids: &[0xFD80, 0xFD81],
    },
    Product {
        name: "nvl-s",
        aliases: &["nvl-hx", "nvl-ul"],
        family: Some(FAMILY_NVL_XE3G),
        core: CORE_XE3,
        ip: (30, 4, 4),
        ids: &[0xD740, 0xD743, 0xD744],
    },
    Product {
        name: "nvl-u",
        aliases: &["nvl-h"],
        family: Some(FAMILY_NVL_XE3G),
        core: CORE_XE3,
        ip: (30, 5, 4),
        ids: &[0xD741, 0xD742, 0xD745],
    },
    Product {
        name: "nvl-p",
        aliases: &[],
        family: Some(FAMILY_NVL),
        core: CORE_XE3P,
        ip: (35, 10, 4),
        ids: &[
            0xD750, 0xD751, 0xD752, 0xD753, 0xD754, 0xD755, 0xD756, 0xD757, 0xD75F, 0xD74A, 0xD74B,
        ],
    },
    Product {
        name: "cri",
        aliases: &[],
        family: Some(FAMILY_CRI),
        core: CORE_XE3P,
        ip: (35, 11, 0),
        ids: &[0x674C],
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
            // The same architecture and release; of their revisions
            // (steppings), the device's own, else the nearest above it
            // (pvc's 7 for 12.60.3, an XT stepping), else the nearest below.
            if let Some(found) = PRODUCTS
                .iter()
                .filter(|q| (q.ip.0, q.ip.1) == (ip.0, ip.1))
                .min_by_key(|q| (q.ip.2 < ip.2, q.ip.2.abs_diff(ip.2)))
            {
                return Some(found);
            }
        }
        let id = self.device_id?;
        PRODUCTS.iter().find(|q| q.ids.contains(&id))
    }

    /// ocloc's name of the product's family (`pvc` for each of PVC's
    /// steppings and products), else of the product.
    pub fn family_name(&self) -> Option<String> {
        let p = self.product()?;
        Some(
            p.family
                .and_then(product_of_family)
                .unwrap_or(p.name)
                .to_string(),
        )
    }

    /// ocloc's name of the product, as given or as found from the IP
    /// version or PCI id.
    pub fn product_name(&self) -> Option<String> {
        match &self.product {
            Some(p) if !p.trim().is_empty() => Some(p.trim().to_ascii_lowercase()),
            _ => self.product().map(|p| p.name.to_string()),
        }
    }

    /// Every name ocloc knows the product by: the one given or found,
    /// then the rest of the product's names (`dg2` for `acm-g10`: ocloc
    /// names a fat binary's member after the name it was given).
    pub(crate) fn product_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.product_name().into_iter().collect();
        if let Some(p) = self.product() {
            for n in std::iter::once(p.name).chain(p.aliases.iter().copied()) {
                if !names.iter().any(|m| m == n) {
                    names.push(n.to_string());
                }
            }
        }
        names
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
    /// Bytes per GRF register: 64 from PVC (Xe-HPC) on, 32 before.
    pub fn grf_bytes(&self) -> u32 {
        if self.iga_gen >= IGA_XE_HPC {
            64
        } else {
            32
        }
    }

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
            FAMILY_ARL => Platform::new(IGA_XE_HPG, "ARL"),
            FAMILY_PVC => pvc(revision),
            FAMILY_BMG | FAMILY_LNL => Platform::new(IGA_XE2, "XE2"),
            FAMILY_PTL | FAMILY_NVL_XE3G => Platform::new(IGA_XE3, "XE3"),
            FAMILY_NVL => Platform::new(IGA_XE3P_XPC, "NVL"),
            FAMILY_CRI => Platform::new(IGA_XE3P_XPC, "XE3P_CRI"),
            _ => return None,
        })
    }

    /// From NEO's GFXCORE_FAMILY value (patch-token program header, zebin's
    /// GFX core note). A core family can be shared by products IGC names
    /// apart (DG2, MTL and ARL; PVC's steppings; the Xe3P products): the
    /// name is that of the first (`DG2`; `NVL`, as IGC names every Xe3P
    /// product but CRI), IGA's platform that of all.
    pub fn from_core_family(core: u32, revision: Option<u32>) -> Option<Platform> {
        Some(match core {
            CORE_GEN9 => Platform::new(IGA_GEN9, "SKL"),
            CORE_GEN11 | CORE_GEN11LP => Platform::new(IGA_GEN11, "ICLLP"),
            CORE_GEN12LP => Platform::new(IGA_XE, "TGLLP"),
            CORE_XE_HP => Platform::new(IGA_XE_HP, "XeHP_SDV"),
            CORE_XE_HPG => Platform::new(IGA_XE_HPG, "DG2"),
            CORE_XE_HPC => pvc(revision),
            CORE_XE2 => Platform::new(IGA_XE2, "XE2"),
            CORE_XE3 => Platform::new(IGA_XE3, "XE3"),
            CORE_XE3P => Platform::new(IGA_XE3P_XPC, "NVL"),
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

    /// IGA's platform and IGC's `//.platform` name of each product family
    /// of NEO 26 (gmmlib's numbers; the names as IGC 2.40's dumps print
    /// them for `ocloc compile -device <product>`).
    #[test]
    fn todays_product_families() {
        for (family, product, iga_gen, name) in [
            (1210, "dg1", IGA_XE, "TGLLP"),
            (1250, "xe-hp-sdv", IGA_XE_HP, "XeHP_SDV"),
            (1270, "dg2", 0x0100_0002, "DG2"),
            (1272, "mtl, arl-s, arl-u", 0x0100_0002, "MTL"),
            (1273, "arl-h", 0x0100_0002, "ARL"),
            (1274, "bmg", 0x0200_0000, "XE2"),
            (1275, "lnl", 0x0200_0000, "XE2"),
            (1300, "ptl, wcl", 0x0300_0000, "XE3"),
            (1340, "nvl-s, nvl-u", 0x0300_0000, "XE3"),
            (1360, "nvl-p", 0x0300_0003, "NVL"),
            (1380, "cri", 0x0300_0003, "XE3P_CRI"),
        ] {
            assert_eq!(
                Platform::from_product_family(family, None),
                Some(Platform::new(iga_gen, name)),
                "{product}"
            );
        }
        assert_eq!(
            Platform::from_product_family(1271, Some(7)).unwrap().name,
            "PVCXT"
        );
        assert_eq!(Platform::from_product_family(1299, None), None);
    }

    #[test]
    fn todays_core_families() {
        for (core, iga_gen, name) in [
            (0xC05, IGA_XE_HP, "XeHP_SDV"),
            (0xC07, IGA_XE_HPG, "DG2"),
            (0xC09, 0x0200_0000, "XE2"),
            (0x1E00, 0x0300_0000, "XE3"),
            (0x2300, 0x0300_0003, "NVL"),
        ] {
            assert_eq!(
                Platform::from_core_family(core, None),
                Some(Platform::new(iga_gen, name)),
                "0x{core:x}"
            );
        }
    }

    /// Devices as NEO 26.27 reports them in its no-hardware mode (PCI id,
    /// IP version), by either, and by ocloc's names.
    #[test]
    fn todays_devices() {
        for (product, id, ip, name, iga_gen) in [
            ("pvc", 0x0bd5, 0x030f_0007, "PVCXT", IGA_XE_HPC),
            ("acm-g10", 0x4f80, 0x030d_c008, "DG2", IGA_XE_HPG),
            ("mtl", 0x7d40, 0x0311_8004, "MTL", IGA_XE_HPG),
            ("bmg", 0xe202, 0x0500_4000, "XE2", IGA_XE2),
            ("lnl", 0x64a0, 0x0501_0004, "XE2", IGA_XE2),
            ("ptl", 0xb080, 0x0780_0004, "XE3", IGA_XE3),
        ] {
            let both = Device {
                device_id: Some(id),
                ip_version: Some(ip),
                ..Device::default()
            };
            assert_eq!(both.product_name().as_deref(), Some(product));
            assert_eq!(
                both.platform(),
                Some(Platform::new(iga_gen, name)),
                "{product}"
            );
            let by_id = Device {
                device_id: Some(id),
                ..Device::default()
            };
            assert_eq!(
                by_id.platform(),
                Some(Platform::new(iga_gen, name)),
                "{product}"
            );
            assert_eq!(by_id.ip().map(|(a, r, v)| ip_version(a, r, v)), Some(ip));
            let by_ip = Device {
                ip_version: Some(ip),
                ..Device::default()
            };
            assert_eq!(by_ip.product_name().as_deref(), Some(product));
        }
        // arl-h reads device id 0 in NEO's no-hardware mode: its IP version
        // names it.
        let arl = Device {
            device_id: Some(0),
            ip_version: Some(0x0312_8004),
            ..Device::default()
        };
        assert_eq!(arl.platform().unwrap().name, "ARL");
        assert_eq!(arl.describe(), "arl-h (device 0x0000, IP 12.74.4)");
        let bmg = Device {
            device_id: Some(0xe202),
            ip_version: Some(0x0500_4000),
            ..Device::default()
        };
        assert_eq!(bmg.describe(), "bmg (device 0xe202, IP 20.1.0)");
        for (alias, product, name) in [
            ("bmg-g21", "bmg", "XE2"),
            ("bmg-g31", "bmg-g31", "XE2"),
            ("lnl-m", "lnl", "XE2"),
            ("ptl-h", "ptl", "XE3"),
            ("ptl-u", "ptl-u", "XE3"),
            ("wcl", "wcl", "XE3"),
            ("nvl-s", "nvl-s", "XE3"),
            ("nvl-u", "nvl-u", "XE3"),
            ("nvl-p", "nvl-p", "NVL"),
            ("cri", "cri", "XE3P_CRI"),
            ("arl-s", "mtl", "MTL"),
            ("mtl-h", "mtl-h", "MTL"),
            ("arl-h", "arl-h", "ARL"),
        ] {
            let d = Device {
                product: Some(alias.into()),
                ..Device::default()
            };
            assert_eq!(d.product().map(|p| p.name), Some(product), "{alias}");
            assert_eq!(
                d.platform().map(|p| p.name).as_deref(),
                Some(name),
                "{alias}"
            );
        }
    }

    /// Every product and stepping NEO 26.27's ocloc knows, by its IP version
    /// (`ocloc ids <name>`): the product, and the stepping's revision.
    #[test]
    fn every_stepping_of_neo_26_by_ip_version() {
        for (ip, product, name) in [
            ((12, 60, 0), "pvc-sdv", "PVC"),
            ((12, 60, 1), "pvc-sdv", "PVC"),
            ((12, 60, 3), "pvc", "PVCXT"),
            ((12, 60, 5), "pvc", "PVCXT"),
            ((12, 61, 7), "pvc-vg", "PVCXT"),
            ((12, 55, 0), "acm-g10", "DG2"),
            ((12, 56, 4), "acm-g11", "DG2"),
            ((12, 70, 0), "mtl", "MTL"),
            ((12, 71, 0), "mtl-h", "MTL"),
            ((12, 74, 0), "arl-h", "ARL"),
            ((20, 1, 0), "bmg", "XE2"),
            ((20, 2, 0), "bmg-g31", "XE2"),
            ((20, 4, 0), "lnl", "XE2"),
            ((20, 4, 1), "lnl", "XE2"),
            ((30, 0, 0), "ptl", "XE3"),
            ((30, 1, 0), "ptl-u", "XE3"),
            ((30, 3, 0), "wcl", "XE3"),
            ((30, 4, 0), "nvl-s", "XE3"),
            ((30, 5, 1), "nvl-u", "XE3"),
            ((35, 10, 0), "nvl-p", "NVL"),
            ((35, 11, 0), "cri", "XE3P_CRI"),
        ] {
            let d = Device {
                ip_version: Some(ip_version(ip.0, ip.1, ip.2)),
                ..Device::default()
            };
            assert_eq!(d.product_name().as_deref(), Some(product), "{ip:?}");
            assert_eq!(
                d.platform().map(|p| p.name).as_deref(),
                Some(name),
                "{ip:?}"
            );
        }
        let unknown = Device {
            ip_version: Some(ip_version(40, 0, 0)),
            ..Device::default()
        };
        assert_eq!(unknown.platform(), None);
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
