//! The test workload itself, on the real stack and without the interposer:
//! if these fail, a capture test failing says nothing about xpu-asm.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use xpu_asm_tests::*;

fn module_args(via: &str) -> Vec<String> {
    vec![
        "--via".into(),
        via.into(),
        "--module".into(),
        format!("a={}", spirv("a").display()),
        "--module".into(),
        format!("b={}", spirv("b").display()),
        "--native".into(),
        format!("n={}", native_a().display()),
    ]
}

/// Every kind of step, in each way, succeeds on the real loader and driver.
#[test]
fn every_step_runs_in_every_way() {
    let steps = [
        format!("imm:a:{VECTOR_ADD}:5"),
        "coop:a:scale:3".into(),
        "indirect:a:scale_v2:4".into(),
        format!("multi:a:scale,{VECTOR_ADD}:2"),
        "imm:a:common_kernel:2".into(),
        "imm:b:common_kernel:3".into(),
        "imm:b:only_in_b:1".into(),
        "reg:a:scale:3:4".into(),
        "regreset:a:scale_v2:2:3".into(),
        "threads:a:scale:4:5".into(),
        "recreate:a:scale:3".into(),
        "swap:a:scale:scale_v2:2".into(),
        "imm:n:scale:2".into(),
        "fork:a:scale:3".into(),
    ];
    for via in WAYS {
        let dir = temp_dir("workload");
        let mut args = module_args(via);
        args.extend(steps.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run_plain(dir.path(), &args);
        let lines = stdout_lines(&output);
        // The fork lines carry the child's pid; the rest is fixed.
        let fixed: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.starts_with("fork"))
            .collect();
        assert_eq!(
            fixed,
            [
                &format!("imm a {VECTOR_ADD} 5"),
                "coop a scale 3",
                "indirect a scale_v2 4",
                &format!("multi a scale,{VECTOR_ADD} 2"),
                "imm a common_kernel 2",
                "imm b common_kernel 3",
                "imm b only_in_b 1",
                "reg a scale 3 4",
                "regreset a scale_v2 2 3",
                "threads a scale 4 5",
                "recreate a scale 3 same_handle=yes",
                "swap a scale scale_v2 2 same_handle=yes",
                "imm n scale 2",
            ],
            "--via {via}"
        );
        let forks: Vec<&String> = lines.iter().filter(|l| l.starts_with("fork")).collect();
        assert_eq!(forks.len(), 2, "--via {via}: {lines:?}");
        assert!(
            forks[0].starts_with("fork-child a scale 3 pid="),
            "{forks:?}"
        );
        assert!(forks[1].starts_with("fork a scale 3 child="), "{forks:?}");
        assert!(
            list_files(dir.path()).is_empty(),
            "--via {via} left files (an AUB capture?): {:?}",
            list_files(dir.path())
        );
    }
}

fn dynamic_section(bin: &Path) -> (BTreeSet<String>, String) {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(bin)
        .output()
        .expect("readelf (binutils) must be installed");
    assert!(out.status.success(), "readelf -d {} failed", bin.display());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let needed = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1))
        .map(|s| s.trim_end_matches(']').to_string())
        .collect();
    (needed, text)
}

/// The unlinked workload must reach the loader only by dlopen, or a symbol
/// interposer would see its calls for the wrong reason.
#[test]
fn ddi_and_dlsym_binary_does_not_link_the_loader() {
    let bin = workload();
    let (needed, text) = dynamic_section(&bin);
    assert_eq!(
        needed,
        BTreeSet::from(["libc.so.6".to_string()]),
        "DT_NEEDED of {}:\n{text}",
        bin.display()
    );
    let ldd = Command::new("ldd").arg(&bin).output().expect("ldd");
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(!ldd.contains("libze"), "ldd {}:\n{ldd}", bin.display());
}

/// The linked workload calls the loader's exported functions through the PLT.
#[test]
fn link_binary_calls_the_loader_through_the_plt() {
    let bin = workload_link();
    let (needed, text) = dynamic_section(&bin);
    assert!(
        needed.contains("libze_loader.so.1"),
        "DT_NEEDED of {}:\n{text}",
        bin.display()
    );
    let relocs = Command::new("readelf")
        .arg("-rW")
        .arg(&bin)
        .output()
        .expect("readelf");
    let relocs = String::from_utf8_lossy(&relocs.stdout);
    let plt: BTreeSet<&str> = relocs
        .lines()
        .filter(|l| l.contains("R_X86_64_JUMP_SLO"))
        .filter_map(|l| l.split_whitespace().nth(4))
        .collect();
    for f in [
        "zeInit",
        "zeKernelCreate",
        "zeCommandListAppendLaunchKernel",
        "zeCommandListAppendLaunchCooperativeKernel",
        "zeCommandListAppendLaunchKernelIndirect",
        "zeCommandListAppendLaunchMultipleKernelsIndirect",
        "zeCommandQueueExecuteCommandLists",
    ] {
        assert!(
            plt.contains(f),
            "{f} has no PLT slot in {}: {plt:?}",
            bin.display()
        );
    }
}

/// A Level Zero error ends the workload with the step and the result in hex.
#[test]
fn errors_name_the_step_and_the_result() {
    let dir = temp_dir("workload");
    for via in WAYS {
        let mut args = module_args(via);
        args.push("imm:a:no_such_kernel:1".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = workload_command(dir.path(), &args);
        let output = run_with_timeout(&mut cmd);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "--via {via}: {stderr}");
        assert!(
            stderr.contains("step imm:a:no_such_kernel:1:")
                && stderr.contains("zeKernelCreate")
                // ZE_RESULT_ERROR_INVALID_KERNEL_NAME
                && stderr.contains("0x78000011"),
            "--via {via}: {stderr}"
        );
    }
}

/// What the capture tests rely on about IGC, checked without the interposer:
/// each module's dump names exactly its kernels, and the dumped SPIR-V is the
/// file the workload loaded.
#[test]
fn igc_dumps_each_module_with_its_kernels() {
    let dir = temp_dir("workload");
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(&dumps).expect("dump folder");
    let mut args = module_args("ddi");
    args.extend(["imm:a:scale:1".to_string(), "imm:b:only_in_b:1".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = workload_command(dir.path(), &args);
    cmd.env("IGC_ShaderDumpEnable", "1")
        .env("IGC_DumpToCustomDir", &dumps)
        .env("NEO_CACHE_PERSISTENT", "0");
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "{}",
        describe(&shown, &output, dir.path())
    );
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    let want: BTreeMap<String, BTreeSet<String>> = [
        (
            sha256_file(&spirv("a")),
            set(&[VECTOR_ADD, SCALE, SCALE_V2, COMMON]),
        ),
        (sha256_file(&spirv("b")), set(&[COMMON, ONLY_IN_B])),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        dumped_modules(&dumps),
        want,
        "{}",
        describe(&shown, &output, dir.path())
    );
}

/// The patch-token binary kept for the stacks whose ocloc makes none
/// ([`PATCH_TOKENS_A`]) is exactly what Debian 12's ocloc makes, and each
/// NEO takes it its own way: NEO 22.43 runs its code as it is (IGC compiles
/// nothing); NEO 26, which reads no patch tokens, compiles the SPIR-V the
/// binary carries (one module in IGC's dump, with every kernel of
/// `kernels_a.cl`, its SPIR-V the binary's own).
#[test]
fn each_neo_takes_the_patch_token_binary_its_own_way() {
    let kept = workload_src_dir().join(PATCH_TOKENS_A);
    if stack() == Stack::Debian12 {
        assert_eq!(
            sha256_file(&native_a_as(Native::PatchTokens)),
            sha256_file(&kept),
            "{} is not what this ocloc makes of kernels_a.cl; rebuild it with \
             `ocloc compile -file tests/workload/kernels_a.cl -device pvc -output out -output_no_suffix`",
            kept.display()
        );
    }
    let dir = temp_dir("workload");
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(&dumps).expect("dump folder");
    let args = [
        "--via".to_string(),
        "link".into(),
        "--native".into(),
        format!("p={}", kept.display()),
        "imm:p:scale:2".into(),
        format!("imm:p:{VECTOR_ADD}:1"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = workload_command(dir.path(), &args);
    cmd.env("IGC_ShaderDumpEnable", "1")
        .env("IGC_DumpToCustomDir", &dumps)
        .env("NEO_CACHE_PERSISTENT", "0");
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    let ctx = || describe(&shown, &output, dir.path());
    assert!(output.status.success(), "{}", ctx());
    assert_eq!(
        stdout_lines(&output),
        ["imm p scale 2", &format!("imm p {VECTOR_ADD} 1")],
        "{}",
        ctx()
    );
    let dumped = dumped_modules(&dumps);
    match stack() {
        Stack::Debian12 => assert!(dumped.is_empty(), "IGC compiled {dumped:?}\n{}", ctx()),
        Stack::Sid => {
            let all: BTreeSet<String> = [VECTOR_ADD, SCALE, SCALE_V2, COMMON]
                .iter()
                .map(|n| n.to_string())
                .collect();
            assert_eq!(
                dumped.values().collect::<Vec<_>>(),
                [&all],
                "one module compiled, with every kernel\n{}",
                ctx()
            );
            let spv = std::fs::read_dir(&dumps)
                .expect("the dump folder")
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "spv"))
                .expect("the dumped SPIR-V");
            let spv = std::fs::read(spv).expect("the dumped SPIR-V");
            let binary = std::fs::read(&kept).expect("the kept binary");
            assert!(
                binary.windows(spv.len()).any(|w| w == spv.as_slice()),
                "the SPIR-V IGC compiled is not the one {} carries\n{}",
                kept.display(),
                ctx()
            );
        }
    }
}
