//! The instruction mix of kernels whose mix is known from their source.

use super::*;

fn mix_of(k: &Value) -> BTreeMap<String, u64> {
    k["mix"]
        .as_object()
        .unwrap_or_else(|| panic!("no mix: {k:#}"))
        .iter()
        .map(|(f, v)| (f.clone(), u(v)))
        .collect()
}

/// The mix of the kernels of `kernels_mix.cl`, each class checked against
/// what its source must produce; and the same kernels' machine code,
/// disassembled by IGA, gives the same mix (IGA does not say which scratch
/// messages are spills: those count as scratch).
#[test]
fn mix_of_kernels_with_known_answers() {
    let dir = stack_temp_dir("isa");
    let c = capture_mix(dir.path(), "mix", "", &["--keep", "all"]);
    let memory = [
        "load_global",
        "store_global",
        "atomic_global",
        "load_slm",
        "store_slm",
        "atomic_slm",
        "load_scratch",
        "store_scratch",
        "spill",
        "fill",
    ];
    let mut mixes = BTreeMap::new();
    for step in MIX_STEPS {
        let name = step.split(':').nth(2).expect("a step names its kernel");
        let k = c.kernel(name);
        let m = mix_of(k);
        let classes: u64 = m
            .iter()
            .filter(|(f, _)| *f != "instructions")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(classes, m["instructions"], "{name}: {m:?}");
        assert_eq!(m["instructions"], u(&k["instructions"]), "{name}: {m:?}");
        // One end-of-thread message each; nothing of the other memories
        // than the kernel's own.
        assert_eq!(m["send_other"], 1, "{name}: {m:?}");
        assert_eq!(m["dpas"], 0, "{name}: {m:?}");
        let nonzero = |f: &str| m[f] > 0;
        let mem: Vec<&str> = memory.iter().copied().filter(|f| nonzero(f)).collect();
        match name {
            "mix_mad_loop" => {
                assert_eq!(mem, ["load_global", "store_global"], "{name}: {m:?}");
                assert_eq!(m["store_global"], 1, "{name}: {m:?}");
                // The loop: a branch back at least; the unrolled mads are ALU.
                assert!(m["control"] >= 2, "{name}: {m:?}");
                let text = std::fs::read_to_string(c.out.join(k["asm"].as_str().unwrap())).unwrap();
                let mads = text
                    .lines()
                    .filter(|l| {
                        let t = l.trim_start();
                        let t = if t.starts_with('(') {
                            t.split_once(')').map_or(t, |x| x.1).trim_start()
                        } else {
                            t
                        };
                        t.starts_with("mad ") && t.contains(":f")
                    })
                    .count() as u64;
                assert!(mads >= 8, "{name}: {mads} float mads");
                assert!(m["alu"] >= mads, "{name}: {m:?}");
            }
            "mix_atomics" => {
                assert_eq!(mem, ["load_global", "atomic_global"], "{name}: {m:?}");
                assert_eq!(m["atomic_global"], 2, "{name}: {m:?}");
            }
            "mix_slm" => {
                assert_eq!(
                    mem,
                    ["load_global", "store_global", "load_slm", "store_slm"],
                    "{name}: {m:?}"
                );
                assert_eq!(
                    (m["load_slm"], m["store_slm"], m["store_global"]),
                    (1, 1, 1),
                    "{name}: {m:?}"
                );
                // A fence and a barrier at least.
                assert!(m["sync"] >= 2, "{name}: {m:?}");
            }
            "mix_scratch" => {
                assert_eq!(
                    mem,
                    [
                        "load_global",
                        "store_global",
                        "load_scratch",
                        "store_scratch"
                    ],
                    "{name}: {m:?}"
                );
                // Two reads of the private array at run-time indices.
                assert_eq!(m["load_scratch"], 2, "{name}: {m:?}");
                assert!(u(&k["private_memory_bytes"]) > 0, "{name}: {k:#}");
                assert!(k["spill_bytes"].is_null(), "{name}: {k:#}");
            }
            "mix_spill" => {
                assert!(m["spill"] > 0 && m["fill"] > 0, "{name}: {m:?}");
                assert!(u(&k["spill_bytes"]) > 0, "{name}: {k:#}");
                assert_eq!(
                    m["atomic_global"] + m["atomic_slm"] + m["load_slm"] + m["store_slm"],
                    0,
                    "{name}: {m:?}"
                );
            }
            other => panic!("no expectation for {other}"),
        }
        mixes.insert(name.to_string(), (k.clone(), m));
    }

    // The machine code IGC emitted for each, disassembled by IGA.
    for (name, (k, m)) in &mixes {
        let asm = c.out.join(k["asm"].as_str().expect("an ISA file"));
        let dat = asm.with_extension("dat");
        assert!(
            dat.is_file(),
            "{name}: no machine code {} (--keep all)",
            dat.display()
        );
        let mut cmd = Command::new("iga64");
        cmd.args(["-d", "-p=12p72"]).arg(&dat);
        let r = run_hermetic(cmd, &c.out);
        r.assert_status(0);
        let iga = xpu_asm_isa::mix::count(&r.stdout());
        let iga: BTreeMap<String, u64> = iga
            .fields()
            .iter()
            .map(|(f, n)| (f.to_string(), *n))
            .collect();
        let mut want = m.clone();
        *want.get_mut("store_scratch").unwrap() += want["spill"];
        *want.get_mut("load_scratch").unwrap() += want["fill"];
        want.insert("spill".into(), 0);
        want.insert("fill".into(), 0);
        assert_eq!(iga, want, "{name}: IGA's disassembly of {}", dat.display());
    }
}
