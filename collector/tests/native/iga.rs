//! IGA itself: many threads at once, refusals, hostile binaries.

use super::*;

#[test]
fn iga_is_usable_from_many_threads_at_once() {
    let p = native::parse(&built_natives("zebin-extra").bytes, None).unwrap();
    let platform = p.platform.clone().unwrap();
    let serial: Vec<String> = p
        .kernels
        .iter()
        .map(|k| iga().disassemble(&platform, &k.code).unwrap())
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..5 {
                        for (k, want) in p.kernels.iter().zip(&serial) {
                            assert_eq!(&iga().disassemble(&platform, &k.code).unwrap(), want);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn iga_refusals_are_errors() {
    let unknown = Platform {
        iga_gen: 0x7777_0000,
        name: "nothing".into(),
    };
    let p = native::parse(&built_natives("zebin-a").bytes, None).unwrap();
    let code = &p.kernels[0].code;
    let e = iga().disassemble(&unknown, code).unwrap_err();
    assert!(matches!(e, IgaError::Platform { .. }), "{e}");
    assert!(e.to_string().contains("nothing"), "{e}");
    // Bytes that are no instruction at all.
    let platform = p.platform.clone().unwrap();
    let garbage: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) | 0x80).collect();
    match iga().disassemble(&platform, &garbage) {
        Err(IgaError::Decode { messages, .. }) => assert!(!messages.is_empty()),
        Ok(text) => panic!("garbage decoded as\n{text}"),
        Err(other) => panic!("{other}"),
    }
    // Real code with a few bytes changed: text or an error, never a crash.
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut decoded, mut refused) = (0, 0);
    for _ in 0..300 {
        let mut c = code.clone();
        for _ in 0..1 + next() % 6 {
            let at = (next() % c.len() as u64) as usize;
            c[at] = next() as u8;
        }
        match iga().disassemble(&platform, &c) {
            Ok(_) => decoded += 1,
            Err(IgaError::Decode { .. }) => refused += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(decoded + refused, 300);
    // A partial last instruction.
    let _ = iga().disassemble(&platform, &code[..code.len() - 3]);

    let e = Iga::load_from(Path::new("/nonexistent/libiga64.so.1")).unwrap_err();
    assert!(e.to_string().contains(iga_package()), "{e}");
}

/// Every prefix of a real binary, and the binary with each header byte
/// changed: an answer (error or not), never a panic or a huge allocation.
fn cut_and_changed_binaries_answer(bytes: &[u8]) {
    let step = (bytes.len() / 400).max(1);
    for n in (0..bytes.len()).step_by(step) {
        let _ = native::parse(&bytes[..n], Some(&pvc()));
    }
    for at in 0..bytes.len().min(256) {
        for v in [0u8, 0xff, 0x7f] {
            let mut b = bytes.to_vec();
            b[at] = v;
            let _ = native::parse(&b, Some(&pvc()));
        }
    }
}

#[test]
fn without_its_notes_a_zebin_takes_the_platform_of_the_device() {
    use object::read::elf::{ElfFile64, FileHeader};
    use object::{Object, ObjectSection};
    let mut bytes = built_natives("zebin-a").bytes.clone();
    let (shoff, note) = {
        let elf = ElfFile64::<object::Endianness>::parse(&bytes[..]).unwrap();
        let shoff = elf.elf_header().e_shoff(elf.endian()) as usize;
        let note = elf
            .section_by_name(".note.intelgt.compat")
            .unwrap()
            .index()
            .0;
        (shoff, note)
    };
    // sh_type (4 bytes in) of the note's section header: now plain data.
    let at = shoff + 64 * note + 4;
    bytes[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(native::parse(&bytes, None).unwrap().platform, None);
    let tgl = Device {
        product: Some("tgllp".into()),
        ..Device::default()
    };
    let p = native::parse(&bytes, Some(&tgl)).unwrap();
    assert_eq!(p.platform.map(|p| p.name), Some("TGLLP".to_string()));
    assert_eq!(
        kernel_names(&native::parse(&bytes, Some(&pvc())).unwrap()),
        KERNELS_A
    );
}

/// Random changes (a fixed sequence) of a few bytes anywhere.
fn mutations(bytes: &[u8], count: usize) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..count {
        let mut b = bytes.to_vec();
        for _ in 0..1 + next() % 8 {
            let at = (next() % b.len() as u64) as usize;
            b[at] = next() as u8;
        }
        let _ = native::parse(&b, Some(&pvc()));
    }
}

#[test]
fn hostile_binaries_give_errors_not_panics() {
    let zebin = &built_natives("zebin-a").bytes;
    cut_and_changed_binaries_answer(zebin);
    cut_and_changed_binaries_answer(&patch_tokens());
    cut_and_changed_binaries_answer(&built_natives("fat-a").bytes);
    for bytes in [zebin, &patch_tokens(), &built_natives("fat-a").bytes] {
        mutations(bytes, 2000);
    }

    // Truncated ELF: the section table is at the end.
    let cut = &zebin[..zebin.len() - 100];
    assert!(matches!(
        native::parse(cut, None),
        Err(NativeError::Corrupt(_))
    ));
    // Section headers said to be far past the end (e_shoff).
    let mut far = zebin.clone();
    far[0x28..0x30].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    assert!(matches!(
        native::parse(&far, None),
        Err(NativeError::Corrupt(_))
    ));
    // Wrong machine (x86-64): not a GPU binary.
    let mut x86 = zebin.clone();
    x86[18..20].copy_from_slice(&62u16.to_le_bytes());
    assert!(matches!(
        native::parse(&x86, None),
        Err(NativeError::Unsupported(_))
    ));

    // NEO's program ELF with its device binary section renamed: only
    // SPIR-V left, nothing native.
    let pt = &patch_tokens();
    let mut spirv_only = pt.clone();
    let name = b"Intel(R) OpenCL Device Binary";
    let at = spirv_only
        .windows(name.len())
        .position(|w| w == name)
        .unwrap();
    spirv_only[at] = b'X';
    let magic = spirv_only.windows(4).position(|w| w == b"CTNI").unwrap();
    spirv_only[magic] = b'X';
    assert!(matches!(
        native::parse(&spirv_only, None),
        Err(NativeError::NotNative(_))
    ));

    // A patch-token program whose kernel heap size points past its end.
    let pos = pt.windows(4).position(|w| w == b"CTNI").unwrap();
    let mut lying = pt.clone();
    let heap_size_at = pos + 28 + 20;
    lying[heap_size_at..heap_size_at + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    match native::parse(&lying, None) {
        Err(NativeError::Corrupt(m)) => assert!(m.contains("past the end"), "{m}"),
        other => panic!("{other:?}"),
    }

    // An ar member whose size points past the archive's end.
    let fat = &built_natives("fat-a").bytes;
    let mut bad = fat.clone();
    // The first member's size field (ar header: 48 bytes in, 10 wide).
    bad[8 + 48..8 + 58].copy_from_slice(b"999999999 ");
    assert!(matches!(
        native::parse(&bad, Some(&pvc())),
        Err(NativeError::Corrupt(_))
    ));
}
