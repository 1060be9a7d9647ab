//! Kernels and their metadata, read from the binaries ocloc builds.

use super::*;

#[test]
fn zebin_kernels_with_their_metadata() {
    let p = native::parse(&built_natives("zebin-a").bytes, None).unwrap();
    assert_eq!(p.format, Format::Zebin);
    assert_eq!(p.fat_entry, None);
    // From the binary's own notes: no device was given.
    assert_eq!(
        p.platform,
        Some(Platform {
            iga_gen: 0x0100_0004,
            name: "PVCXT".into()
        })
    );
    assert_eq!(kernel_names(&p), KERNELS_A);
    for k in &p.kernels {
        assert_eq!((k.simd, k.grf), (Some(32), Some(128)), "{:?}", k.name);
        // Code only, without the section's padding: whole instructions.
        assert!(!k.code.is_empty() && k.code.len() % 8 == 0);
    }
    let extra = native::parse(&built_natives("zebin-extra").bytes, None).unwrap();
    assert_eq!(kernel_names(&extra), KERNELS_EXTRA);
    let slm = extra.kernel(b"with_slm").unwrap();
    assert_eq!(slm.slm_bytes, Some(1024));
    assert_eq!(extra.kernel(b"subgroups").unwrap().simd, Some(16));
}

#[test]
fn patch_token_kernels_with_their_metadata_bare_and_wrapped() {
    if ocloc_stack() == Stack::Neo26 {
        // The committed binary (module A of the collector's test data):
        // read as on Debian 12.
        let bytes = committed_patch_tokens();
        let p = native::parse(&bytes, None).unwrap();
        assert_eq!(p.format, Format::PatchTokensElf);
        assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
        assert_eq!(kernel_names(&p), ["vector_add", "vector_add_scaled"]);
        assert_no_patch_tokens_on_neo26();
        return;
    }
    let bytes = &built_natives("pt-a").bytes;
    let p = native::parse(bytes, None).unwrap();
    assert_eq!(p.format, Format::PatchTokensElf);
    assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
    assert_eq!(kernel_names(&p), KERNELS_A);
    for k in &p.kernels {
        assert_eq!((k.simd, k.grf), (Some(32), Some(128)), "{:?}", k.name);
    }

    // The program alone, out of its ELF wrapper: the same kernels.
    use object::{Object, ObjectSection};
    let elf = object::File::parse(&bytes[..]).unwrap();
    let section = elf
        .section_by_name("Intel(R) OpenCL Device Binary")
        .expect("ocloc's patch-token ELF has the program section");
    let bare = native::parse(section.data().unwrap(), None).unwrap();
    assert_eq!(bare.format, Format::PatchTokens);
    assert_eq!(bare.kernels, p.kernels);

    let extra = native::parse(&built_natives("pt-extra").bytes, None).unwrap();
    assert_eq!(kernel_names(&extra), KERNELS_EXTRA);
    assert_eq!(extra.kernel(b"with_slm").unwrap().slm_bytes, Some(1024));
    assert_eq!(extra.kernel(b"subgroups").unwrap().simd, Some(16));
}

#[test]
fn a_fat_binary_gives_the_member_of_the_device() {
    let bytes = &built_natives("fat-a").bytes;
    let p = native::parse(bytes, Some(&pvc())).unwrap();
    assert_eq!(p.fat_entry.as_deref(), Some("64.12.60.7"));
    assert_eq!(p.platform.as_ref().map(|p| p.name.as_str()), Some("PVCXT"));
    assert_eq!(kernel_names(&p), KERNELS_A);

    // The device as the driver reports it: PCI id only, or IP version only.
    let by_id = Device {
        device_id: Some(0x0bd5),
        ..Device::default()
    };
    assert_eq!(
        native::parse(bytes, Some(&by_id))
            .unwrap()
            .fat_entry
            .as_deref(),
        Some("64.12.60.7")
    );
    let tgl = Device {
        ip_version: Some(native::ip_version(12, 0, 0)),
        ..Device::default()
    };
    let t = native::parse(bytes, Some(&tgl)).unwrap();
    assert_eq!(t.fat_entry.as_deref(), Some("64.12.0.0"));
    assert_eq!(t.platform.as_ref().map(|p| p.name.as_str()), Some("TGLLP"));
    assert_eq!(kernel_names(&t), KERNELS_A);
    // Another GPU's code: IGA reads it as that GPU's.
    for k in &t.kernels {
        let text = iga()
            .disassemble(t.platform.as_ref().unwrap(), &k.code)
            .unwrap();
        // The end of thread, then (IGC 2) padding after it.
        assert!(
            instructions(&text).iter().any(|i| i.contains("EOT")),
            "{text}"
        );
    }

    let dg2 = Device {
        product: Some("dg2".into()),
        ..Device::default()
    };
    match native::parse(bytes, Some(&dg2)) {
        Err(e @ NativeError::NoEntryForDevice { .. }) => {
            let NativeError::NoEntryForDevice { device, entries } = &e else {
                unreachable!()
            };
            assert_eq!(device, "dg2 (IP 12.55.8)");
            assert_eq!(entries, &["64.12.60.7", "64.12.0.0"]);
            assert!(e.to_string().contains("64.12.60.7, 64.12.0.0"), "{e}");
        }
        other => panic!("expected no entry for dg2, got {other:?}"),
    }
    assert!(matches!(
        native::parse(bytes, None),
        Err(NativeError::NoEntryForDevice { .. })
    ));
    if ocloc_stack() == Stack::Neo26 {
        todays_fat_binary();
    }
}

/// NEO 26's fat binary of dg2, bmg and ptl-h (members `64.dg2`, `64.bmg`
/// and `64.30.0.4`: ocloc names each after the name it was given, or its
/// IP version): each device, as NEO 26 reports it (PCI id and IP version),
/// gets its member and its platform.
fn todays_fat_binary() {
    let bytes = &built_natives("fat-today").bytes;
    for (id, ip, entry, name) in [
        (0x4f80, (12, 55, 8), "64.dg2", "DG2"),
        (0xe202, (20, 1, 0), "64.bmg", "XE2"),
        (0xb080, (30, 0, 4), "64.30.0.4", "XE3"),
    ] {
        let device = Device {
            device_id: Some(id),
            ip_version: Some(native::ip_version(ip.0, ip.1, ip.2)),
            ..Device::default()
        };
        let p = native::parse(bytes, Some(&device)).unwrap();
        assert_eq!(p.fat_entry.as_deref(), Some(entry));
        let platform = p.platform.clone().unwrap();
        assert_eq!(platform.name, name);
        assert_eq!(kernel_names(&p), KERNELS_A);
        for k in &p.kernels {
            let text = iga().disassemble(&platform, &k.code).unwrap();
            assert!(
                instructions(&text).iter().any(|i| i.contains("EOT")),
                "{text}"
            );
        }
    }
}
