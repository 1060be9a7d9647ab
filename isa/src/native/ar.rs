//! ocloc's fat binaries: `ar` archives with one member per target, named
//! `<pointer bits>.<IP version>` (`64.12.60.7`) or
//! `<pointer bits>.<product>[.<stepping>]` (`64.pvc`), between `pad_N`
//! padding members, and maybe a `generic_ir` member (SPIR-V, no code).

use super::platform::Device;
use super::program::NativeError;
use object::read::archive::ArchiveFile;

pub(crate) fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(b"!<arch>\n")
}

/// The members that can hold code, with their bytes.
pub(crate) fn members(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, NativeError> {
    let corrupt = |e: object::Error| NativeError::Corrupt(format!("fat binary (ar archive): {e}"));
    let archive = ArchiveFile::parse(bytes).map_err(corrupt)?;
    let mut out = Vec::new();
    for m in archive.members() {
        let m = m.map_err(corrupt)?;
        let name = String::from_utf8_lossy(m.name()).into_owned();
        let data = m.data(bytes).map_err(corrupt)?;
        if name.starts_with("pad_") || name.is_empty() {
            continue;
        }
        out.push((name, data));
    }
    Ok(out)
}

/// A test of a member's name.
type Wanted = Box<dyn Fn(&str) -> bool>;

/// The member for `device`, chosen in NEO's order of preference: exact IP
/// version, product and stepping, IP major.minor, product. 64-bit members
/// only (a 32-bit program is not what Level Zero runs).
pub(crate) fn select<'a>(
    bytes: &'a [u8],
    device: Option<&Device>,
) -> Result<(String, &'a [u8]), NativeError> {
    let all = members(bytes)?;
    let native: Vec<&(String, &[u8])> = all.iter().filter(|(n, _)| n != "generic_ir").collect();
    let entries = || all.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let Some(device) = device else {
        // No device recorded: only a single-target archive is unambiguous.
        return match native.as_slice() {
            [(name, data)] => Ok((name.clone(), data)),
            _ => Err(NativeError::NoEntryForDevice {
                device: Device::default().describe(),
                entries: entries(),
            }),
        };
    };
    let mut wanted: Vec<Wanted> = Vec::new();
    if let Some((a, r, v)) = device.ip() {
        let full = format!("64.{a}.{r}.{v}");
        wanted.push(Box::new(move |n: &str| n == full));
    }
    for p in device.product_names() {
        let stepped = format!("64.{p}.");
        wanted.push(Box::new(move |n: &str| {
            n.strip_prefix(&stepped)
                .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        }));
    }
    if let Some((a, r, _)) = device.ip() {
        let short = format!("64.{a}.{r}");
        let prefix = format!("{short}.");
        wanted.push(Box::new(move |n: &str| {
            n == short || n.starts_with(&prefix)
        }));
    }
    for p in device.product_names() {
        let plain = format!("64.{p}");
        wanted.push(Box::new(move |n: &str| n == plain));
    }
    for w in &wanted {
        if let Some((name, data)) = native.iter().find(|(n, _)| w(n)) {
            return Ok((name.clone(), data));
        }
    }
    Err(NativeError::NoEntryForDevice {
        device: device.describe(),
        entries: entries(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = b"!<arch>\n".to_vec();
        for (name, data) in members {
            out.extend_from_slice(
                format!(
                    "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                    format!("{name}/"),
                    0,
                    0,
                    0,
                    644,
                    data.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(data);
            if data.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        out
    }

    fn dev(product: &str) -> Device {
        Device {
            product: Some(product.into()),
            ..Device::default()
        }
    }

    #[test]
    fn the_member_of_the_device_is_chosen() {
        let a = archive(&[
            ("pad_0", b"\0\0\0\0\0\0\0\0"),
            ("64.12.60.7", b"pvc"),
            ("pad_1", b"\0\0"),
            ("64.12.0.0", b"tgl"),
        ]);
        assert_eq!(
            select(&a, Some(&dev("pvc"))).unwrap(),
            ("64.12.60.7".into(), &b"pvc"[..])
        );
        assert_eq!(select(&a, Some(&dev("tgllp"))).unwrap().1, b"tgl");
        let by_id = Device {
            device_id: Some(0x0bd5),
            ..Device::default()
        };
        assert_eq!(select(&a, Some(&by_id)).unwrap().1, b"pvc");
        match select(&a, Some(&dev("dg2"))) {
            Err(NativeError::NoEntryForDevice { device, entries }) => {
                assert_eq!(device, "dg2 (IP 12.55.8)");
                assert_eq!(entries, ["64.12.60.7", "64.12.0.0"]);
            }
            other => panic!("{other:?}"),
        }
        // Two targets and no device: no guess.
        assert!(matches!(
            select(&a, None),
            Err(NativeError::NoEntryForDevice { .. })
        ));
    }

    #[test]
    fn product_names_and_major_minor_match_too() {
        let a = archive(&[("64.pvc", b"p"), ("64.12.55", b"d")]);
        assert_eq!(select(&a, Some(&dev("pvc"))).unwrap().1, b"p");
        assert_eq!(select(&a, Some(&dev("acm-g10"))).unwrap().1, b"d");
        // ocloc 26 names a member after the name it was given (`-device
        // dg2,bmg`), or its IP version: a device recorded by PCI id and IP
        // version finds it by any of its product's names.
        let today = archive(&[("64.dg2", b"d"), ("64.bmg", b"b"), ("64.30.0.4", b"p")]);
        let recorded = |id, ip| Device {
            device_id: Some(id),
            ip_version: Some(ip),
            ..Device::default()
        };
        assert_eq!(
            select(&today, Some(&recorded(0x4f80, 0x030d_c008)))
                .unwrap()
                .1,
            b"d"
        );
        assert_eq!(
            select(&today, Some(&recorded(0xe202, 0x0500_4000)))
                .unwrap()
                .1,
            b"b"
        );
        assert_eq!(
            select(&today, Some(&recorded(0xb080, 0x0780_0004)))
                .unwrap()
                .1,
            b"p"
        );
        assert_eq!(select(&today, Some(&dev("bmg-g21"))).unwrap().1, b"b");
        let single = archive(&[("pad_0", b""), ("64.12.60.7", b"x")]);
        assert_eq!(select(&single, None).unwrap().1, b"x");
    }

    #[test]
    fn a_member_size_past_the_end_is_corrupt() {
        let mut a = archive(&[("64.12.60.7", b"abcd")]);
        // Size field of the first member header: bytes 8+48 .. 8+58.
        a[56..66].copy_from_slice(b"9999999999");
        assert!(matches!(
            select(&a, Some(&dev("pvc"))),
            Err(NativeError::Corrupt(_))
        ));
        a[56..66].copy_from_slice(b"-1        ");
        assert!(matches!(
            select(&a, Some(&dev("pvc"))),
            Err(NativeError::Corrupt(_))
        ));
        let cut = &archive(&[("64.12.60.7", b"abcd")])[..40];
        assert!(select(cut, Some(&dev("pvc"))).is_err());
    }
}
