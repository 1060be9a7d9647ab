//! The analyses (liveness, the kernel view) against IGA's own.

use super::*;

/// The live registers of [`xpu_asm_collector::analysis::live`], from the
/// operands in IGA's JSON, against IGA's own dataflow (`-Xprint-defs`) of
/// the same code: equal before every instruction of every kernel on the
/// GPUs whose messages are LSC (pvc, Xe2, Xe3: loops, predication, SLM,
/// atomics, scratch, spills, sub-groups, 64-bit division); on dg2 and
/// tgllp, whose legacy data-port messages IGA decodes to the bytes they
/// touch where xpu-asm counts most of them whole, never below IGA's.
/// Panics naming the stack, the kernel and the first instruction that
/// differs.
#[test]
fn liveness_is_igas_dataflow() {
    for (device, source) in [("dg2", "extra"), ("tgllp", "mix")] {
        if ocloc_stack() == Stack::Neo22 {
            let p = native::parse(&built_zebin(device, source).bytes, None).unwrap();
            let platform = p.platform.clone().unwrap();
            for k in &p.kernels {
                at_least_igas(device, &platform, &k.name, &k.code);
            }
        }
    }
    let builds: &[(&str, &str)] = match ocloc_stack() {
        Stack::Neo22 => &[("pvc", "mix"), ("pvc", "extra"), ("pvc", "spill")],
        Stack::Neo26 => &[
            ("pvc", "mix"),
            ("pvc", "extra"),
            ("pvc", "spill"),
            ("bmg", "mix"),
            ("bmg", "extra"),
            ("ptl", "extra"),
        ],
    };
    let mut jobs = Vec::new();
    for &(device, source) in builds {
        let p = native::parse(&built_zebin(device, source).bytes, None).unwrap();
        let platform = p.platform.clone().unwrap();
        for k in p.kernels {
            jobs.push((device, platform.clone(), k));
        }
    }
    let compared: Vec<usize> = std::thread::scope(|s| {
        let chunks: Vec<_> = jobs.chunks(jobs.len().div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(d, p, k)| same_liveness(d, p, &k.name, &k.code))
                        .sum::<usize>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let n: usize = compared.iter().sum();
    assert!(
        n > 3000,
        "{:?}: only {n} instructions compared",
        ocloc_stack()
    );
}

/// IGA's live bytes and ours before each instruction of a kernel.
fn both_liveness(platform: &Platform, code: &[u8]) -> Vec<(Option<u64>, Option<u64>, String)> {
    use xpu_asm_collector::analysis::flow;
    use xpu_asm_isa::igajson;
    let grf = platform.grf_bytes();
    let inputs = flow::Inputs {
        classes: &[],
        lines: None,
        grf_bytes: grf,
        budget: None,
    };
    let theirs = igajson::parse(&iga().disassemble_json(platform, code, true).unwrap()).unwrap();
    let mut ours = igajson::parse(&iga().disassemble_json(platform, code, false).unwrap()).unwrap();
    let f = flow::analyze(&mut ours, &inputs);
    assert_eq!(f.liveness, "operands");
    assert_eq!(theirs.insts.len(), ours.insts.len());
    theirs
        .insts
        .iter()
        .zip(&ours.insts)
        .map(|(t, o)| (t.live_bytes, o.live_bytes, format!("{} {}", t.op, t.subop)))
        .collect()
}

/// Ours never below IGA's on a kernel.
fn at_least_igas(device: &str, platform: &Platform, name: &[u8], code: &[u8]) {
    let name = String::from_utf8_lossy(name);
    for (i, (t, o, op)) in both_liveness(platform, code).into_iter().enumerate() {
        assert!(t.is_some() && o.is_some());
        assert!(
            o >= t,
            "{:?}: {device} {name}: live GRF bytes before instruction {i} ({op}): {o:?}, IGA's {t:?}",
            ocloc_stack()
        );
    }
}

/// Compares the two analyses on one kernel's code; the instructions
/// compared.
fn same_liveness(device: &str, platform: &Platform, name: &[u8], code: &[u8]) -> usize {
    let name = String::from_utf8_lossy(name);
    let both = both_liveness(platform, code);
    for (i, (t, o, op)) in both.iter().enumerate() {
        assert!(t.is_some(), "{device} {name}: IGA gave no live totals");
        assert_eq!(
            o,
            t,
            "{:?}: {device} {name}: live GRF bytes before instruction {i} ({op})",
            ocloc_stack()
        );
    }
    both.len()
}

/// The binaries of this stack for [`kernel_view_is_igas_json`]: on Debian
/// 12 the C workload's, the extra and spilling kernels for PVC, tgllp,
/// icllp, dg2 and skl (zebins and patch tokens); on sid those of every GPU
/// of [`TODAYS_GPUS`] and tgllp.
fn kernel_view_binaries() -> Vec<(String, &'static Built)> {
    let mut out: Vec<(String, &'static Built)> = Vec::new();
    match ocloc_stack() {
        Stack::Neo22 => {
            for which in [
                "zebin-a",
                "zebin-b",
                "zebin-extra",
                "zebin-spill",
                "pt-a",
                "pt-extra",
                "pt-spill",
                "zebin-tgllp-extra",
                "zebin-icllp-a",
                "pt-dg2-extra",
                "pt-skl-a",
            ] {
                out.push((which.to_string(), built_natives(which)));
            }
            for (device, source) in [("pvc", "mix"), ("dg2", "extra"), ("tgllp", "mix")] {
                out.push((format!("{device} {source}"), built_zebin(device, source)));
            }
        }
        Stack::Neo26 => {
            let devices = TODAYS_GPUS.iter().map(|(d, _)| *d).chain(["tgllp"]);
            for device in devices {
                for (source, _) in SOURCES {
                    out.push((format!("{device} {source}"), built_zebin(device, source)));
                }
            }
        }
    }
    out
}

/// The code IGA's KernelView API gives ([`Iga::decode`]) is the code read
/// from IGA's JSON of it, field for field, for every kernel of every GPU
/// this stack compiles for, and so is the analysis made of it (blocks,
/// loops, live and spilled registers before each instruction).
#[test]
fn kernel_view_is_igas_json() {
    use xpu_asm_collector::analysis::flow;
    use xpu_asm_isa::igajson;
    let binaries = kernel_view_binaries();
    let mut kernels = 0;
    let mut instructions = 0;
    let mut platforms = std::collections::BTreeSet::new();
    let mut unread = std::collections::BTreeSet::new();
    for (which, b) in &binaries {
        let p = native::parse(&b.bytes, None).unwrap();
        let platform = p.platform.clone().unwrap();
        for k in &p.kernels {
            let name = format!("{which}: {}", String::from_utf8_lossy(&k.name));
            let json = iga().disassemble_json(&platform, &k.code, false).unwrap();
            let decoded = iga().decode(&platform, &k.code);
            let mut theirs = match igajson::parse(&json) {
                Ok(code) => code,
                Err(e) => {
                    // IGA's JSON that does not parse (IGA 2.40 writes
                    // Xe3P's `sendg` so): no code from either.
                    assert!(decoded.is_err(), "{:?}: {name}: {e}", ocloc_stack());
                    unread.insert(platform.name.clone());
                    continue;
                }
            };
            let mut ours = decoded.unwrap_or_else(|e| panic!("{:?}: {name}: {e}", ocloc_stack()));
            assert_same_code(&name, &ours, &theirs);
            let inputs = flow::Inputs {
                classes: &[],
                lines: None,
                grf_bytes: platform.grf_bytes(),
                budget: k.grf,
            };
            let (a, b) = (
                flow::analyze(&mut ours, &inputs),
                flow::analyze(&mut theirs, &inputs),
            );
            assert_eq!(a, b, "{:?}: {name}: the analyses differ", ocloc_stack());
            kernels += 1;
            instructions += ours.insts.len();
            platforms.insert(platform.name.clone());
        }
    }
    eprintln!(
        "{:?}: {kernels} kernels, {instructions} instructions, platforms {platforms:?}; no JSON that parses on {unread:?}",
        ocloc_stack()
    );
    let (want_kernels, want_unread): (usize, &[&str]) = match ocloc_stack() {
        Stack::Neo22 => (65, &[]),
        Stack::Neo26 => (190, &["NVL", "XE3P_CRI"]),
    };
    assert_eq!(kernels, want_kernels, "{:?}: {platforms:?}", ocloc_stack());
    assert_eq!(unread.iter().collect::<Vec<_>>(), want_unread);
    assert!(platforms.len() >= 5, "{platforms:?}");
}

/// Panics naming the first instruction or block where two codes differ.
fn assert_same_code(
    name: &str,
    ours: &xpu_asm_isa::decoded::Code,
    theirs: &xpu_asm_isa::decoded::Code,
) {
    assert_eq!(
        (&ours.version, &ours.platform, ours.insts.len()),
        (&theirs.version, &theirs.platform, theirs.insts.len()),
        "{:?}: {name}",
        ocloc_stack()
    );
    for (i, (a, b)) in ours.insts.iter().zip(&theirs.insts).enumerate() {
        assert_eq!(a, b, "{:?}: {name}: instruction {i}", ocloc_stack());
    }
    for (i, (a, b)) in ours.blocks.iter().zip(&theirs.blocks).enumerate() {
        assert_eq!(a, b, "{:?}: {name}: block {i}", ocloc_stack());
    }
    assert_eq!(ours, theirs, "{:?}: {name}", ocloc_stack());
}
