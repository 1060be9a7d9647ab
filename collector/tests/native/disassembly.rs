//! IGA's disassembly of the built binaries against IGC's own `.asm` dumps.

use super::*;

/// IGC's `.asm` files of kernel `name` in `dumps`, for SIMD width `simd`:
/// one, or one per compilation when IGC compiled the module again after
/// spills (`OCL_asm<hash>_1_simd32...`).
fn igc_asms(dumps: &Path, name: &[u8], simd: u32) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dumps)
        .unwrap_or_else(|e| panic!("IGC left no dumps in {}: {e}", dumps.display()))
    {
        let path = e.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !file.ends_with(".asm") || !file.contains(&format!("_simd{simd}_")) {
            continue;
        }
        let known = header::KnownNames::one(name);
        let h = header::read_header(&path, &known).unwrap();
        if h.kernel.as_deref() == Some(name) {
            found.push(path);
        }
    }
    assert!(
        !found.is_empty(),
        "no SIMD{simd} .asm of {} in {}",
        String::from_utf8_lossy(name),
        dumps.display()
    );
    found
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Every kernel's disassembly, rendered, has exactly the instructions of
/// IGC's `.asm` for it (of one of them, when IGC compiled it more than
/// once): the same lines once comments and label names are set aside, so
/// the same count and the same opcodes in the same order.
fn cross_check(which: &'static str, expected: &[&str]) {
    cross_check_built(which, built_natives(which), expected);
}

/// [`cross_check`] of binary `b`, named `which` in failures. Returns the
/// number of instructions compared.
fn cross_check_built(which: &str, b: &Built, expected: &[&str]) -> usize {
    let mut compared = 0;
    let p = native::parse(&b.bytes, None).unwrap();
    assert_eq!(kernel_names(&p), expected);
    let platform = p.platform.clone().unwrap();
    for k in &p.kernels {
        let shown = String::from_utf8_lossy(&k.name);
        let text = iga().disassemble(&platform, &k.code).unwrap();
        let ours = render_asm(k, &p, &text, &native::SourceFiles::default());
        let all = igc_asms(&b.dumps, &k.name, k.simd.unwrap());
        let a = instructions(&ours);
        let theirs = all.iter().find(|t| instructions(t) == a).unwrap_or(&all[0]);
        let t = instructions(theirs);
        if a != t {
            let first = a.iter().zip(&t).position(|(x, y)| x != y);
            panic!(
                "{which}: {shown}: {} instructions disassembled, {} in IGC's .asm; first difference at {first:?}:\n  ours:  {:?}\n  IGC's: {:?}",
                a.len(),
                t.len(),
                first.map(|i| &a[i]),
                first.map(|i| &t[i])
            );
        }
        // The headers agree where both speak.
        let ha = header::parse_own_header(ours.as_bytes());
        let ht =
            header::parse_header(theirs.as_bytes(), &header::KnownNames::one(&k.name)).unwrap();
        assert_eq!(ha.kernel, ht.kernel);
        assert_eq!(ha.platform, ht.platform, "{shown}");
        assert_eq!(ha.grf, ht.grf, "{shown}");
        assert_eq!(ha.instructions, ht.instructions, "{shown}");
        assert_eq!(ha.instructions, Some(a.len() as u64));
        compared += a.len();
        if k.name == b"spills" {
            match ht.spill_bytes {
                // The binary's scratch space holds IGC's spills.
                Some(spill) => assert!(
                    spill > 0 && k.scratch_bytes >= Some(spill),
                    "{which}: IGC spilled {spill} bytes, the binary has scratch {:?}",
                    k.scratch_bytes
                ),
                // Xe3's IGC chooses the register file's size: 256
                // registers, and no spill.
                None => assert!(
                    ht.grf > Some(128) && k.grf == ht.grf,
                    "{which}: IGC neither spilled nor took more than 128 registers ({:?})",
                    ht.grf
                ),
            }
        }
        if k.name == b"with_private" {
            // 256 floats for each of 32 lanes, on the stack in scratch
            // space (PVC) or in stateless private memory (DG2). IGC's
            // header speaks of the stack only.
            assert_eq!(
                k.scratch_bytes.or(k.stateless_private_bytes),
                Some(32768),
                "{which}"
            );
            assert_eq!(ht.private_memory_bytes, k.scratch_bytes, "{which}");
        }
        // The binary's private memory in scratch space is IGC's figure
        // (IGC 2's `private_size`); IGC 1's zebins do not give it.
        if p.format == native::Format::Zebin {
            let expected = match ocloc_stack() {
                Stack::Neo26 => ht.private_memory_bytes,
                Stack::Neo22 => None,
            };
            assert_eq!(k.private_memory_bytes, expected, "{which}: {shown}");
        }
    }
    compared
}

#[test]
fn zebin_disassembly_is_igcs_asm() {
    cross_check("zebin-a", &KERNELS_A);
    cross_check("zebin-b", &KERNELS_B);
    cross_check("zebin-extra", &KERNELS_EXTRA);
}

#[test]
fn patch_token_disassembly_is_igcs_asm() {
    if ocloc_stack() == Stack::Neo26 {
        assert_no_patch_tokens_on_neo26();
        return;
    }
    cross_check("pt-a", &KERNELS_A);
    cross_check("pt-b", &KERNELS_B);
    cross_check("pt-extra", &KERNELS_EXTRA);
}

#[test]
fn spilling_kernel_disassembly_is_igcs_asm() {
    cross_check("zebin-spill", &["spills"]);
    match ocloc_stack() {
        Stack::Neo22 => cross_check("pt-spill", &["spills"]),
        Stack::Neo26 => assert_no_patch_tokens_on_neo26(),
    }
}

/// Other GPUs than PVC: their platform from the binary alone, and their
/// instructions and `//.platform` names as IGC's.
#[test]
fn other_gpus_disassembly_is_igcs_asm() {
    cross_check("zebin-tgllp-extra", &KERNELS_EXTRA);
    match ocloc_stack() {
        Stack::Neo22 => {
            cross_check("zebin-icllp-a", &KERNELS_A);
            cross_check("pt-dg2-extra", &KERNELS_EXTRA);
            cross_check("pt-skl-a", &KERNELS_A);
        }
        // IGC 2 compiles for Gen12 (tgllp) and later only.
        Stack::Neo26 => {
            cross_check_built(
                "zebin-dg2-extra",
                built_zebin("dg2", "extra"),
                &KERNELS_EXTRA,
            );
        }
    }
}

/// On today's stack, every GPU's zebins of the C workload's kernels (and
/// the kernels above): the platform from the binary alone, and IGA 2.40's
/// instructions are those of IGC 2.40's `.asm` for each kernel.
#[test]
fn todays_gpus_disassembly_is_igcs_asm() {
    if ocloc_stack() == Stack::Neo22 {
        // NEO 22.43's ocloc knows none of Xe2 and later.
        let out = Command::new("ocloc")
            .current_dir(root())
            .args(["compile", "-q", "-device", "bmg", "-file"])
            .arg(workload_cl("kernels_a.cl"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
        return;
    }
    let mut counts = Vec::new();
    for (device, name) in TODAYS_GPUS {
        let mut n = 0;
        for (source, kernels) in SOURCES {
            let b = built_zebin(device, source);
            let p = native::parse(&b.bytes, None).unwrap();
            assert_eq!(
                p.platform.as_ref().map(|p| p.name.as_str()),
                Some(name),
                "{device}"
            );
            n += cross_check_built(&format!("{device} {source}"), b, kernels);
        }
        counts.push(format!("{device} {n}"));
    }
    eprintln!("instructions compared: {}", counts.join(", "));
}
