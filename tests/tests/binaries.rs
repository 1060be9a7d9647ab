//! ISA from module binaries, on the real stack: the C workload loads native
//! modules that `ocloc` builds at test time, in every format this stack
//! makes (zebin, NEO's patch-token ELF, an ocloc fat binary, a binary for
//! another GPU), or runs with `--isa binary`; `xpu-asm-run` must give every
//! launched kernel its ISA from the module's binary, with exact counts, or
//! a clear reason. And the strongest check of the disassembly: for each
//! kernel, the instructions IGA decodes from the driver's binary are the
//! instructions of IGC's own `.asm` of that kernel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use xpu_asm_collector::report::{KernelEntry, Report};
use xpu_asm_collector::sources::IsaSourceKind;
use xpu_asm_collector::sources::Status;
use xpu_asm_isa::native;
use xpu_asm_tests::*;

/// Runs the C workload (`--via link`) under `xpu-asm-run --emulate pvc
/// --json` with `options`, into `<root>/<name>`; returns the capture folder
/// and its report. Panics with everything to diagnose unless it succeeds.
/// NEO 26's compiler cache, which `--isa binary` leaves on, is a folder of
/// the capture's own (`<root>/<name>.neo-cache`), never the user's.
fn capture_report(
    s: &Scratch,
    name: &str,
    options: &[&str],
    env: &[(&str, &str)],
    args: &[String],
) -> (PathBuf, Report) {
    let out = s.root.join(name);
    let neo_cache = s.folder(&format!("{name}.neo-cache"));
    // IGC's dumps on both stacks unless told otherwise (sid's default is
    // `binary`): these captures set binaries beside IGC's dumps.
    let r = Capture::emulating("pvc", &out)
        .options(options)
        .isa_dump_unless_set()
        .option("--json")
        .program(workload_link())
        .args(["--via", "link"])
        .args(args)
        .dir(&s.root)
        .env("NEO_CACHE_DIR", &neo_cache)
        .envs(env.iter().copied())
        .run();
    let (shown, output) = (&r.shown, &r.output);
    assert!(
        output.status.success(),
        "xpu-asm-run failed\n{}",
        describe(shown, output, &out)
    );
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("no report.json ({e})\n{}", describe(shown, output, &out)));
    let report: Report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("report.json does not parse as schema 6: {e}\n{text}"));
    assert_eq!(report.schema, 6, "{text}");
    (out, report)
}

fn native_arg(name: &str, kind: Native) -> [String; 2] {
    [
        "--native".into(),
        format!("{name}={}", native_a_as(kind).display()),
    ]
}

fn spirv_args(with_b: bool) -> Vec<String> {
    let mut a = vec![
        "--module".to_string(),
        format!("a={}", spirv("a").display()),
    ];
    if with_b {
        a.push("--module".into());
        a.push(format!("b={}", spirv("b").display()));
    }
    a
}

/// The report's launched kernels as (name, module sha256) -> entry.
fn by_kernel(r: &Report) -> BTreeMap<(String, String), &KernelEntry> {
    r.kernels
        .iter()
        .map(|k| {
            (
                (k.name.clone(), k.module_sha256.clone().unwrap_or_default()),
                k,
            )
        })
        .collect()
}

/// IGC's `.asm` of kernel `name` in the dump folder `dir`, from the
/// compilation of the SPIR-V whose SHA-256 is `spv_sha` (its
/// `OCL_asm<hash>.spv`).
///
/// IGC 1's light dumps (Debian 12) have no `.spv` of a module NEO found in
/// a native binary: there, `spv` names it by IGC 1's hash of its bytes.
fn dumped_asm(dir: &Path, spv_sha: &str, name: &str, spv: &Path) -> PathBuf {
    let spv = std::fs::read_dir(dir)
        .expect("the dump folder")
        .filter_map(|e| Some(e.ok()?.path()))
        .find(|p| p.extension().is_some_and(|e| e == "spv") && sha256_file(p) == spv_sha)
        .or_else(|| {
            let bytes = std::fs::read(spv).ok()?;
            (stack() == Stack::Debian12)
                .then(|| dir.join(xpu_asm_record::igc1_spv_file_name(&bytes)))
        })
        .unwrap_or_else(|| panic!("no .spv of SHA-256 {spv_sha} in {}", dir.display()));
    let prefix = format!("{}_", spv.file_stem().unwrap().to_string_lossy());
    asm_kernels(dir)
        .into_iter()
        .find(|(p, n)| {
            n == name
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&prefix)
        })
        .unwrap_or_else(|| panic!("no .asm of {name} from {}", spv.display()))
        .0
}

/// `k`'s ISA (a disassembly of the driver's build of a native module it
/// did not run as passed) is exactly IGC's `.asm` of that build in the
/// capture's dump: the same instructions, as many as its header says.
fn assert_isa_is_igcs(out: &Path, k: &KernelEntry, igc_asm: &Path) {
    let igc = std::fs::read_to_string(igc_asm).expect("IGC's .asm");
    let given = std::fs::read_to_string(out.join(k.asm.as_ref().expect("matched")))
        .expect("the report's .asm");
    let n = same_instructions(&igc, &given).unwrap_or_else(|e| {
        panic!(
            "{}: the ISA given is not what the driver built ({}): {e}",
            k.name,
            igc_asm.display()
        )
    });
    assert_eq!(k.instructions, Some(n as u64), "{k:?}");
}

/// The record's module of binary `sha`.
fn module_of<'a>(rec: &'a record::read::ProcessRecord, sha: &str) -> &'a record::read::Module {
    rec.modules
        .values()
        .find(|m| m.sha256 == sha)
        .unwrap_or_else(|| panic!("no module {sha} in the record"))
}

/// The SHA-256 of the driver's build of a native module it did not run as
/// passed, as recorded (`None`: it ran the binary passed).
fn built_sha(rec: &record::read::ProcessRecord, sha: &str) -> Option<String> {
    let b = module_of(rec, sha).built_binary.as_ref()?;
    assert!(b.file.is_some() && b.error.is_none(), "{b:?}");
    Some(b.sha256.clone())
}

/// Exactly the kernels `want` (name, module sha256, launches), each matched
/// from `source`, its `.asm` (and the copy under asm/) naming it exactly on
/// its `//.kernel` line, with as many instructions as the header says.
fn assert_all_matched(out: &Path, r: &Report, want: &[(&str, &str, u64)], source: IsaSourceKind) {
    let ctx = || serde_json::to_string_pretty(r).unwrap_or_default();
    let got = by_kernel(r);
    let got_counts: BTreeMap<(String, String), u64> =
        got.iter().map(|(k, e)| (k.clone(), e.launches)).collect();
    let want_counts: BTreeMap<(String, String), u64> = want
        .iter()
        .map(|(n, sha, l)| ((n.to_string(), sha.to_string()), *l))
        .collect();
    assert_eq!(
        got_counts,
        want_counts,
        "kernels and launches; report:\n{}",
        ctx()
    );
    for ((name, _), k) in got {
        assert_eq!(
            k.status,
            Status::Matched,
            "{name}: {:?}\n{}",
            k.reason,
            ctx()
        );
        assert_eq!(k.isa_source, Some(source), "{name}\n{}", ctx());
        for path in [k.asm.as_ref(), k.asm_copy.as_ref()] {
            let path = out.join(path.unwrap_or_else(|| panic!("{name} has no .asm\n{}", ctx())));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                text.lines().next(),
                Some(format!("//.kernel {name}").as_str()),
                "{}",
                path.display()
            );
            let n = native::instructions(&text).len() as u64;
            assert!(n > 0, "{}: no instructions", path.display());
            if source == IsaSourceKind::ModuleBinary {
                assert_eq!(k.instructions, Some(n), "{}", path.display());
            }
        }
    }
    assert_eq!(r.totals.unmatched, 0, "{}", ctx());
}

/// Native modules of every format `ocloc` makes for the device: every
/// launched kernel matched from its module's binary, exactly counted, the
/// fat binary's pvc member taken. On sid, where NEO 26 compiles the SPIR-V
/// of the patch-token binary (made by NEO 22.43's ocloc) instead of reading
/// it, that module's kernels have the ISA of NEO's build (its
/// `zeModuleGetNativeBinary`, recorded as the module's built binary), with a
/// note: exactly IGC's dump of that compilation.
#[test]
fn native_modules_of_every_format_matched_from_their_binaries() {
    let s = scratch("binaries");
    let mut args = Vec::new();
    args.extend(native_arg("z", Native::Zebin));
    args.extend(native_arg("p", Native::PatchTokens));
    args.extend(native_arg("f", Native::FatPvcTgllp));
    args.extend(
        [
            "imm:z:scale:2",
            "imm:z:scale_v2:3",
            "imm:p:scale:5",
            &format!("imm:p:{VECTOR_ADD}:7"),
            "imm:f:common_kernel:11",
            "reg:f:scale_v2:2:13",
        ]
        .map(String::from),
    );
    let (out, r) = capture_report(&s, "native", &[], &[], &args);
    let z = sha256_file(&native_a_as(Native::Zebin));
    let p = sha256_file(&native_a_as(Native::PatchTokens));
    let f = sha256_file(&native_a_as(Native::FatPvcTgllp));
    assert_all_matched(
        &out,
        &r,
        &[
            (SCALE, &z, 2),
            (SCALE_V2, &z, 3),
            (SCALE, &p, 5),
            (VECTOR_ADD, &p, 7),
            (COMMON, &f, 11),
            (SCALE_V2, &f, 26),
        ],
        IsaSourceKind::ModuleBinary,
    );
    // What the driver holds after each build: the bytes passed for z (and
    // on Debian 12 for p), the pvc member of f (the same bytes as ocloc's
    // own pvc build: p on Debian 12, z on sid), and on sid its own build of
    // p's SPIR-V.
    let rec = only_record(&out);
    let (p_built, f_built) = (built_sha(&rec, &p), built_sha(&rec, &f));
    assert_eq!(built_sha(&rec, &z), None);
    match stack() {
        Stack::Debian12 => {
            assert_eq!(p_built, None);
            assert_eq!(f_built.as_deref(), Some(p.as_str()));
        }
        Stack::Sid => {
            assert!(p_built.as_ref().is_some_and(|b| *b != p), "{p_built:?}");
            assert_eq!(f_built.as_deref(), Some(z.as_str()));
        }
    }
    // NEO 26 reads no patch tokens: it compiles the SPIR-V that p carries,
    // and what ran is that build, which IGC dumped.
    let dumps = out.join(&rec.dump_dir);
    let rebuilt = asm_kernels(&dumps);
    match stack() {
        Stack::Debian12 => assert!(rebuilt.is_empty(), "IGC compiled {rebuilt:?}"),
        Stack::Sid => assert_eq!(
            rebuilt
                .values()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>(),
            [VECTOR_ADD, SCALE, SCALE_V2, COMMON]
                .map(String::from)
                .into(),
            "NEO 26 compiled p's SPIR-V"
        ),
    }
    for k in &r.kernels {
        let b = k
            .binary
            .as_ref()
            .expect("a module-binary kernel names its binary");
        let sha = k.module_sha256.as_deref().unwrap_or_default();
        if sha == p && stack() == Stack::Sid {
            // Its ISA is the code NEO built, not the binary's NEO 22.43 code:
            // from the built binary, with a note naming both.
            let built = p_built.as_deref().expect("checked above");
            assert_eq!((b.sha256.as_str(), b.format.as_str()), (built, "zebin"));
            let note = k.isa_note.as_deref().unwrap_or_default();
            assert!(
                note.contains(&format!("modules/{built}.bin"))
                    && note.contains(&format!("modules/{p}.bin")),
                "{note}"
            );
            let (dump, _) = rebuilt
                .iter()
                .find(|(_, name)| **name == k.name)
                .unwrap_or_else(|| panic!("no .asm of {} in the dump", k.name));
            assert_isa_is_igcs(&out, k, dump);
            continue;
        }
        assert_eq!(k.isa_note, None, "{k:?}");
        // On sid ocloc's fat binary holds zebins.
        let fat_format = match stack() {
            Stack::Debian12 => "patch-tokens-elf",
            Stack::Sid => "zebin",
        };
        let (format, entry) = if sha == z {
            ("zebin", None)
        } else if sha == p {
            ("patch-tokens-elf", None)
        } else {
            (fat_format, Some(()))
        };
        assert_eq!(b.sha256, sha, "a native module's binary is its input");
        assert_eq!(b.format, format, "{}", k.name);
        assert_eq!(b.fat_entry.is_some(), entry.is_some(), "{}: {b:?}", k.name);
        assert!(
            k.platform.as_deref().is_some_and(|p| p.starts_with("PVC")),
            "{k:?}"
        );
        assert_eq!(k.grf, Some(128), "{k:?}");
        assert_eq!(k.simd, Some(32), "{k:?}");
    }
}

/// A binary built for another GPU only: NEO takes it, but compiles the
/// SPIR-V the binary carries (on both stacks), so the binary's code is not
/// what ran: the kernel's ISA is that of NEO's build, recorded as the
/// module's built binary, with a note; exactly IGC's dump of that
/// compilation (of the stack's own `ocloc -spv_only` SPIR-V, which the
/// binary carries). The rest of the report intact.
#[test]
fn binary_for_another_gpu_is_not_taken_for_its_isa() {
    let s = scratch("binaries");
    let mut args = Vec::new();
    args.extend(native_arg("t", Native::TgllpOnly));
    args.extend(native_arg("p", Native::PatchTokens));
    args.extend(["imm:t:scale:4", "imm:p:scale_v2:6"].map(String::from));
    let (out, r) = capture_report(&s, "other-gpu", &[], &[], &args);
    let got = by_kernel(&r);
    let t = sha256_file(&native_a_as(Native::TgllpOnly));
    let p = sha256_file(&native_a_as(Native::PatchTokens));
    let rec = only_record(&out);
    let t_built = built_sha(&rec, &t).expect("NEO built t again");
    let tk = got[&(SCALE.to_string(), t.clone())];
    assert_eq!((tk.launches, tk.status), (4, Status::Matched), "{tk:?}");
    assert_eq!(tk.isa_source, Some(IsaSourceKind::ModuleBinary));
    let b = tk
        .binary
        .as_ref()
        .expect("a module-binary kernel names its binary");
    let built_format = match stack() {
        Stack::Debian12 => "patch-tokens-elf",
        Stack::Sid => "zebin",
    };
    assert_eq!(
        (b.sha256.as_str(), b.format.as_str()),
        (t_built.as_str(), built_format)
    );
    let note = tk.isa_note.as_deref().unwrap_or_default();
    assert!(
        note.contains("for TGLLP")
            && note.contains("pvc")
            && note.contains(&format!("modules/{t_built}.bin")),
        "{note}"
    );
    assert!(
        tk.platform.as_deref().is_some_and(|p| p.starts_with("PVC")),
        "{tk:?}"
    );
    let dumps = out.join(&rec.dump_dir);
    let igc = dumped_asm(&dumps, &sha256_file(&spirv("a")), SCALE, &spirv("a"));
    assert_isa_is_igcs(&out, tk, &igc);
    let pk = got[&(SCALE_V2.to_string(), p.clone())];
    assert_eq!((pk.launches, pk.status), (6, Status::Matched), "{pk:?}");
    // p is run as passed on Debian 12, built again from its SPIR-V on sid.
    assert_eq!(pk.isa_note.is_some(), stack() == Stack::Sid, "{pk:?}");
    assert_eq!(built_sha(&rec, &p).is_some(), stack() == Stack::Sid);
    assert_eq!((r.totals.matched, r.totals.unmatched), (2, 0));
}

/// `--isa binary`: IGC dumps nothing, caches stay as the user has them, and
/// every kernel of SPIR-V modules comes from the driver's binary.
#[test]
fn isa_binary_takes_every_kernel_from_the_drivers_binary() {
    let s = scratch("binaries");
    let mut args = spirv_args(true);
    args.extend(
        [
            &format!("imm:a:{VECTOR_ADD}:3"),
            "imm:a:scale:4",
            "imm:a:common_kernel:5",
            "imm:b:common_kernel:6",
            "reg:b:only_in_b:2:3",
        ]
        .map(String::from),
    );
    let (out, r) = capture_report(&s, "isa-binary", &["--isa", "binary"], &[], &args);
    let (a, b) = (sha256_file(&spirv("a")), sha256_file(&spirv("b")));
    assert_all_matched(
        &out,
        &r,
        &[
            (VECTOR_ADD, &a, 3),
            (SCALE, &a, 4),
            (COMMON, &a, 5),
            (COMMON, &b, 6),
            (ONLY_IN_B, &b, 6),
        ],
        IsaSourceKind::ModuleBinary,
    );
    assert_eq!(r.dumps.before.files, 0, "no IGC dump: {:?}", r.dumps);
    let rec = only_record(&out);
    assert!(rec.isa_binary);
    assert!(
        rec.env.iter().all(|e| e.by_user),
        "xpu-asm set {:?} with --isa binary",
        rec.env
    );
}

/// The user turned IGC's dumps off: the kernels still get their ISA, from
/// the driver's binary.
#[test]
fn users_dumps_off_still_matched_from_binaries() {
    let s = scratch("binaries");
    let mut args = spirv_args(false);
    args.extend(["imm:a:scale:2", "imm:a:scale_v2:9"].map(String::from));
    let (out, r) = capture_report(
        &s,
        "dumps-off",
        &[],
        &[("IGC_ShaderDumpEnable", "0")],
        &args,
    );
    let a = sha256_file(&spirv("a"));
    assert_all_matched(
        &out,
        &r,
        &[(SCALE, &a, 2), (SCALE_V2, &a, 9)],
        IsaSourceKind::ModuleBinary,
    );
}

/// Cross-check on the C workload: every kernel IGC compiled and dumped has,
/// in the driver's binary of its module, exactly the instructions of its
/// `.asm`.
#[test]
fn drivers_binary_has_the_instructions_of_igcs_asm() {
    let s = scratch("binaries");
    let mut args = spirv_args(true);
    args.extend(
        [
            &format!("imm:a:{VECTOR_ADD}:1"),
            "imm:a:scale:1",
            "imm:a:scale_v2:1",
            "imm:a:common_kernel:1",
            "imm:b:common_kernel:1",
            "imm:b:only_in_b:1",
        ]
        .map(String::from),
    );
    let (out, r) = capture_report(&s, "cross-check", &[], &[], &args);
    assert_eq!(r.kernels.len(), 6);
    let checked = cross_check_dumps_against_binaries(&out, &r);
    assert_eq!(checked, 6);
}
