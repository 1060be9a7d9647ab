//! What a native binary says of how it was made: the devices it was
//! built for (each member of an ocloc fat binary, else the binary's own
//! GPU, by ocloc's product names where the binary names a product) and
//! whether IGC made it. IGC's and ocloc's zebins name the product family
//! (or, from IGC 2 on, the product config) in their `IntelGT` notes; the
//! zebins nGEN writes at run time (oneDNN's, oneMKL's generated kernels)
//! carry the GFX core family alone.

use super::platform::{ip_version, Device};

/// How a native binary was made, as far as its bytes say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Built {
    /// The devices it carries code for (`pvc`, `dg2`, `bmg`; a
    /// platform's name where no product is named: `xe2`).
    pub targets: Vec<String>,
    /// `Some(true)`: IGC (or ocloc) made it; `Some(false)`: a zebin that
    /// names no product, as nGEN's; `None`: neither can be told (patch
    /// tokens, unreadable).
    pub by_igc: Option<bool>,
}

/// How `bytes`, a module binary, was made.
pub fn built(bytes: &[u8]) -> Built {
    if super::ar::is_archive(bytes) {
        return fat(bytes);
    }
    if let Some((product, by_igc)) = super::zebin::product_named(bytes) {
        let targets = match product {
            Some(p) => vec![p],
            None => platform_name(bytes).into_iter().collect(),
        };
        return Built {
            targets,
            by_igc: Some(by_igc),
        };
    }
    Built {
        targets: platform_name(bytes).into_iter().collect(),
        by_igc: None,
    }
}

/// The GPU a single binary's own platform names (lower case).
fn platform_name(bytes: &[u8]) -> Option<String> {
    let p = super::parse(bytes, None).ok()?.platform?;
    // IGC names PVC's XT steppings apart; ocloc's product is pvc.
    Some(match p.name.as_str() {
        "PVCXT" => "pvc".into(),
        n => n.to_ascii_lowercase(),
    })
}

/// An ocloc fat binary: each 64-bit member's device.
fn fat(bytes: &[u8]) -> Built {
    let Ok(members) = super::ar::members(bytes) else {
        return Built::default();
    };
    let mut out = Built::default();
    for (name, data) in members {
        let Some(target) = name.strip_prefix("64.") else {
            continue;
        };
        let ip: Vec<u32> = target.split('.').filter_map(|p| p.parse().ok()).collect();
        let product = match ip[..] {
            [a, r, v] if target.split('.').count() == 3 => Device {
                ip_version: Some(ip_version(a, r, v)),
                ..Device::default()
            }
            .family_name(),
            _ => None,
        };
        // `64.pvc.2` (a product and its stepping): the product.
        let named = product.unwrap_or_else(|| target.split('.').next().unwrap_or(target).into());
        if !out.targets.contains(&named) {
            out.targets.push(named);
        }
        out.by_igc = out.by_igc.or(built(data).by_igc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> Vec<u8> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../collector/tests/data/module-binaries/"
        );
        std::fs::read(format!("{dir}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn ngens_zebins_are_not_igcs_and_name_their_generation() {
        let b = built(&data("ngen_trivial.bmg.zebin"));
        assert_eq!(b.by_igc, Some(false));
        assert_eq!(b.targets, vec!["xe2".to_string()]);
        let p = built(&data("ngen_trivial.pvc.zebin"));
        assert_eq!(
            (p.by_igc, p.targets),
            (Some(false), vec!["pvc".to_string()])
        );
    }

    #[test]
    fn igcs_zebins_name_their_product() {
        for (file, product) in [
            ("module_a.bmg.zebin", "bmg"),
            ("module_a.pvc.zebin", "pvc"),
            ("module_a.ptl.zebin", "ptl"),
        ] {
            let b = built(&data(file));
            assert_eq!(
                (b.by_igc, b.targets),
                (Some(true), vec![product.to_string()]),
                "{file}"
            );
        }
        let fat = [
            ("64.12.60.7", "pvc"),
            ("64.12.0.0", "tgllp"),
            ("64.pvc.2", "pvc"),
        ];
        for (member, name) in fat {
            let ip: Vec<u32> = member[3..]
                .split('.')
                .filter_map(|p| p.parse().ok())
                .collect();
            let got = match ip[..] {
                [a, r, v] => Device {
                    ip_version: Some(ip_version(a, r, v)),
                    ..Device::default()
                }
                .family_name(),
                _ => None,
            };
            assert!(
                got.as_deref() == Some(name) || ip.len() != 3,
                "{member}: {got:?}"
            );
        }
        let tokens = built(&data("module_a.pvc.bin"));
        assert_eq!(tokens.by_igc, None);
        assert_eq!(tokens.targets, vec!["pvc".to_string()]);
    }
}
