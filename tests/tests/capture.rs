//! Capture: every kernel a program creates and every launch it makes through
//! Level Zero must be in its record, exactly, whichever way the program
//! reaches the loader (`link`, `ddi`, `dlsym`: see tests/workload/workload.c).
//!
//! Each scenario is a function of the way; `per_way!` turns it into one test
//! per way so that a failure names both.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use xpu_asm_record::read::ProcessRecord;
use xpu_asm_tests::*;

macro_rules! per_way {
    ($($test:ident),* $(,)?) => {
        per_way!(@way link, $($test),*);
        per_way!(@way ddi, $($test),*);
        per_way!(@way dlsym, $($test),*);
    };
    (@way $way:ident, $($test:ident),*) => {
        mod $way {
            $(
                #[test]
                fn $test() {
                    super::$test(stringify!($way));
                }
            )*
        }
    };
}

per_way!(
    immediate_list_counts_every_launch,
    cooperative_launches,
    indirect_launches,
    multiple_kernels_indirect,
    prefix_names_counted_apart,
    same_name_in_two_modules_counted_apart,
    regular_list_counts_each_execution,
    regular_list_reset_drops_nothing_appended,
    threads_with_their_own_handles,
    recreated_kernel_adds_up,
    reused_handle_goes_to_the_new_kernel,
    native_module,
    module_binaries_are_kept,
    dump_folder_names_every_launched_kernel,
    record_shows_the_dump_settings,
    sigkill_after_the_last_launch_loses_nothing,
    sigterm_loses_nothing,
    abnormal_ends_lose_nothing,
    forked_child_has_its_own_record,
    switched_off_only_forwards,
);

/// `--via <via> --module a=... [--module b=...]` then `steps`.
fn args(via: &str, with_b: bool, steps: &[&str]) -> Vec<String> {
    let mut a = vec!["--via".to_string(), via.to_string()];
    a.push("--module".into());
    a.push(format!("a={}", spirv("a").display()));
    if with_b {
        a.push("--module".into());
        a.push(format!("b={}", spirv("b").display()));
    }
    a.extend(steps.iter().map(|s| s.to_string()));
    a
}

fn traced_into(s: &Scratch, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_traced(&s.out, &args)
}

fn spirv_a_sha() -> String {
    sha256_file(&spirv("a"))
}

fn spirv_b_sha() -> String {
    sha256_file(&spirv("b"))
}

/// The step lines the workload printed, which show that every step ran.
fn assert_stdout(output: &Output, want: &[&str]) {
    assert_eq!(
        stdout_lines(output),
        want,
        "the workload printed other step lines; stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The record's `(launches, appended)` per (kernel name, module sha256) must
/// be exactly `want`, with no launch of an unknown kernel.
fn assert_record_counts(rec: &ProcessRecord, want: &[(&str, &str, u64, u64)]) {
    let want: BTreeMap<KernelKey, (u64, u64)> = want
        .iter()
        .map(|(name, sha, l, a)| ((name.to_string(), sha.to_string()), (*l, *a)))
        .collect();
    let got = counts(rec);
    if got == want && rec.unknown_launches == 0 {
        return;
    }
    let keys: BTreeSet<&KernelKey> = want.keys().chain(got.keys()).collect();
    let mut diff = String::new();
    for k in keys {
        let w = want.get(k);
        let g = got.get(k);
        let mark = if w == g { "  " } else { "!!" };
        diff.push_str(&format!(
            "{mark} {} (module {}): expected (launches, appended) {}, recorded {}\n",
            k.0,
            k.1,
            w.map_or("none".to_string(), |c| format!("{c:?}")),
            g.map_or("none".to_string(), |c| format!("{c:?}")),
        ));
    }
    panic!(
        "recorded launch counts differ\n{diff}unknown-kernel launches: {} (expected 0)\nrecord: {rec:#?}",
        rec.unknown_launches
    );
}

fn immediate_list_counts_every_launch(via: &str) {
    let s = scratch("capture");
    let step = format!("imm:a:{VECTOR_ADD}:5");
    let output = traced_into(&s, &args(via, false, &[&step]));
    assert_stdout(&output, &[&format!("imm a {VECTOR_ADD} 5")]);
    let rec = only_record(&s.out);
    assert_record_counts(&rec, &[(VECTOR_ADD, &spirv_a_sha(), 5, 5)]);
}

fn cooperative_launches(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["coop:a:scale:3"]));
    assert_stdout(&output, &["coop a scale 3"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE, &spirv_a_sha(), 3, 3)]);
}

fn indirect_launches(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["indirect:a:scale_v2:4"]));
    assert_stdout(&output, &["indirect a scale_v2 4"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE_V2, &spirv_a_sha(), 4, 4)]);
}

fn multiple_kernels_indirect(via: &str) {
    let s = scratch("capture");
    let step = format!("multi:a:{VECTOR_ADD},scale_v2:3");
    let output = traced_into(&s, &args(via, false, &[&step]));
    assert_stdout(&output, &[&format!("multi a {VECTOR_ADD},scale_v2 3")]);
    let sha = spirv_a_sha();
    assert_record_counts(
        &only_record(&s.out),
        &[(VECTOR_ADD, &sha, 3, 3), (SCALE_V2, &sha, 3, 3)],
    );
}

/// `scale` is a prefix of `scale_v2`: a matcher by substring would merge them.
fn prefix_names_counted_apart(via: &str) {
    let s = scratch("capture");
    let output = traced_into(
        &s,
        &args(via, false, &["imm:a:scale:2", "imm:a:scale_v2:7"]),
    );
    assert_stdout(&output, &["imm a scale 2", "imm a scale_v2 7"]);
    let sha = spirv_a_sha();
    assert_record_counts(
        &only_record(&s.out),
        &[(SCALE, &sha, 2, 2), (SCALE_V2, &sha, 7, 7)],
    );
}

fn same_name_in_two_modules_counted_apart(via: &str) {
    let s = scratch("capture");
    let output = traced_into(
        &s,
        &args(
            via,
            true,
            &[
                "imm:a:common_kernel:2",
                "imm:b:common_kernel:5",
                "imm:b:only_in_b:1",
            ],
        ),
    );
    assert_stdout(
        &output,
        &[
            "imm a common_kernel 2",
            "imm b common_kernel 5",
            "imm b only_in_b 1",
        ],
    );
    let rec = only_record(&s.out);
    let (a, b) = (spirv_a_sha(), spirv_b_sha());
    assert_ne!(
        a, b,
        "kernels_a.cl and kernels_b.cl compiled to the same SPIR-V"
    );
    assert_record_counts(
        &rec,
        &[
            (COMMON, &a, 2, 2),
            (COMMON, &b, 5, 5),
            (ONLY_IN_B, &b, 1, 1),
        ],
    );
    let modules: BTreeSet<(String, String, u64)> = rec
        .modules
        .values()
        .map(|m| (m.sha256.clone(), m.format.clone(), m.size))
        .collect();
    let size = |p: PathBuf| std::fs::metadata(p).expect("the SPIR-V file").len();
    let want: BTreeSet<(String, String, u64)> = [
        (a, "spirv".to_string(), size(spirv("a"))),
        (b, "spirv".to_string(), size(spirv("b"))),
    ]
    .into_iter()
    .collect();
    assert_eq!(modules, want, "modules of the record: {:#?}", rec.modules);
}

/// Work appended to a regular list runs each time the list is executed.
fn regular_list_counts_each_execution(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["reg:a:scale:3:4"]));
    assert_stdout(&output, &["reg a scale 3 4"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE, &spirv_a_sha(), 12, 3)]);
}

/// Preloaded without `XPU_ASM_OUT` (recording off), every hook only
/// forwards: the same launches as with recording on all reach the driver
/// and succeed (the workload checks each call and prints its step lines),
/// and nothing is written.
fn switched_off_only_forwards(via: &str) {
    let s = scratch("capture");
    let imm = format!("imm:a:{VECTOR_ADD}:5");
    let a = args(via, false, &[&imm, "reg:a:scale:3:4", "coop:a:scale:2"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut cmd = workload_command(&s.out, &a);
    trace(&mut cmd, &s.out);
    cmd.env_remove(xpu_asm_record::OUT_ENV);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "the workload failed under the interposer switched off\n{}",
        describe(&shown, &output, &s.out)
    );
    assert_stdout(
        &output,
        &[
            &format!("imm a {VECTOR_ADD} 5"),
            "reg a scale 3 4",
            "coop a scale 2",
        ],
    );
    assert_eq!(
        list_files(&s.out),
        Vec::<String>::new(),
        "the interposer switched off wrote files\n{}",
        describe(&shown, &output, &s.out)
    );
}

/// A reset list holds only what was appended after the reset: 4 appends,
/// reset, 1 append, 3 executions launch 3 times; 5 appends were made.
fn regular_list_reset_drops_nothing_appended(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["regreset:a:scale_v2:4:3"]));
    assert_stdout(&output, &["regreset a scale_v2 4 3"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE_V2, &spirv_a_sha(), 3, 5)]);
}

fn threads_with_their_own_handles(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["threads:a:scale:4:25"]));
    assert_stdout(&output, &["threads a scale 4 25"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE, &spirv_a_sha(), 100, 100)]);
}

fn recreated_kernel_adds_up(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["recreate:a:scale:3"]));
    let lines = stdout_lines(&output);
    assert!(
        lines.len() == 1 && lines[0].starts_with("recreate a scale 3 same_handle="),
        "unexpected output {lines:?}"
    );
    assert_record_counts(&only_record(&s.out), &[(SCALE, &spirv_a_sha(), 6, 6)]);
}

/// NEO gives a new kernel the handle of the one just destroyed; launches of
/// that handle belong to the new kernel.
fn reused_handle_goes_to_the_new_kernel(via: &str) {
    let s = scratch("capture");
    let output = traced_into(&s, &args(via, false, &["swap:a:scale:scale_v2:4"]));
    assert_stdout(&output, &["swap a scale scale_v2 4 same_handle=yes"]);
    let sha = spirv_a_sha();
    assert_record_counts(
        &only_record(&s.out),
        &[(SCALE, &sha, 4, 4), (SCALE_V2, &sha, 4, 4)],
    );
}

fn native_module(via: &str) {
    let s = scratch("capture");
    let native = native_a();
    let output = traced_into(
        &s,
        &[
            "--via".to_string(),
            via.to_string(),
            "--native".to_string(),
            format!("n={}", native.display()),
            "imm:n:scale:2".to_string(),
        ],
    );
    assert_stdout(&output, &["imm n scale 2"]);
    let rec = only_record(&s.out);
    let sha = sha256_file(&native);
    assert_record_counts(&rec, &[(SCALE, &sha, 2, 2)]);
    let formats: Vec<&str> = rec.modules.values().map(|m| m.format.as_str()).collect();
    assert_eq!(formats, ["native"], "modules: {:#?}", rec.modules);
}

/// Each module's GPU binary is saved once under `modules/`: a native
/// module's as the program passed it, a SPIR-V module's as the driver built
/// it; and the device it was built for is recorded once.
fn module_binaries_are_kept(via: &str) {
    let s = scratch("capture");
    let native = native_a();
    let mut a = args(via, false, &[]);
    a.extend([
        "--native".to_string(),
        format!("n={}", native.display()),
        "imm:a:scale:2".to_string(),
        "imm:n:scale:3".to_string(),
    ]);
    traced_into(&s, &a);
    let rec = only_record(&s.out);
    let ctx = || {
        format!(
            "record: {rec:#?}\nfiles:\n  {}",
            list_files(&s.out).join("\n  ")
        )
    };
    assert_eq!(rec.devices.len(), 1, "one device, recorded once; {}", ctx());
    let dev = rec.devices.values().next().expect("length checked");
    assert_eq!(
        (dev.vendor_id, dev.device_id),
        (0x8086, 0x0bd5),
        "the emulated PVC; {}",
        ctx()
    );
    assert!(dev.name.contains("0x0bd5"), "{}", ctx());
    let modules_dir = s.out.join(xpu_asm_record::MODULES_DIR);
    let mut saved = BTreeSet::new();
    for m in rec.modules.values() {
        assert_eq!(m.device, Some(dev.id), "{}", ctx());
        let b = m
            .binary
            .as_ref()
            .unwrap_or_else(|| panic!("module {} has no binary; {}", m.id, ctx()));
        let file = b
            .file
            .as_ref()
            .unwrap_or_else(|| panic!("module {}'s binary not saved; {}", m.id, ctx()));
        let bytes =
            std::fs::read(s.out.join(file)).unwrap_or_else(|e| panic!("{file}: {e}; {}", ctx()));
        assert_eq!(bytes.len() as u64, b.size, "{}", ctx());
        assert_eq!(sha256_bytes(&bytes), b.sha256, "{}", ctx());
        assert_eq!(file, &format!("modules/{}.bin", b.sha256), "{}", ctx());
        if m.format == "native" {
            assert_eq!(
                b.sha256,
                m.sha256,
                "a native module's binary is its input; {}",
                ctx()
            );
            assert_eq!(bytes, std::fs::read(&native).expect("the native binary"));
        } else {
            assert_ne!(
                b.sha256,
                m.sha256,
                "a SPIR-V module's binary is the driver's; {}",
                ctx()
            );
            assert_eq!(&bytes[..4], b"\x7fELF", "{}", ctx());
            let (e_type, machine) = elf_type_and_machine(&bytes);
            match stack() {
                // NEO 22.43's zeModuleGetNativeBinary: its patch-token ELF.
                Stack::Debian12 => assert_eq!(e_type, 0xff04, "{}", ctx()),
                // NEO 26's: a zebin (ELF REL for Intel GT), the very file
                // ocloc makes of the same source: `native` here.
                Stack::Sid => {
                    assert_eq!((e_type, machine), (1, 205), "{}", ctx());
                    assert_eq!(bytes, std::fs::read(&native).expect("the native binary"));
                }
            }
        }
        saved.insert(file.trim_start_matches("modules/").to_string());
    }
    assert_eq!(rec.modules.len(), 2, "{}", ctx());
    // Nothing else in modules/: one file per content, no temporary left.
    let present: BTreeSet<String> = std::fs::read_dir(&modules_dir)
        .expect("modules/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(present, saved, "{}", ctx());
    // On sid the two modules' binaries are one content, so one file.
    let files = match stack() {
        Stack::Debian12 => 2,
        Stack::Sid => 1,
    };
    assert_eq!(present.len(), files, "{}", ctx());
}

/// `(e_type, e_machine)` of a little-endian ELF.
fn elf_type_and_machine(b: &[u8]) -> (u16, u16) {
    let at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    (at(16), at(18))
}

fn dump_folder_names_every_launched_kernel(via: &str) {
    let s = scratch("capture");
    let launched = format!("imm:a:{VECTOR_ADD}:1");
    let output = traced_into(
        &s,
        &args(
            via,
            true,
            &[&launched, "imm:a:scale:1", "imm:b:common_kernel:1"],
        ),
    );
    assert_eq!(stdout_lines(&output).len(), 3);
    let rec = only_record(&s.out);
    // Record and dump folder are named alike: host, pid, the process's token.
    let stem = rec
        .events_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        stem.starts_with(&format!("{}-{}-", rec.host, rec.pid)),
        "record file {stem}"
    );
    assert_eq!(
        rec.dump_dir,
        format!("{}/{stem}", xpu_asm_record::DUMPS_DIR),
        "the record names another dump folder"
    );
    let dir = dump_dir(&s.out, &rec);
    let names = asm_kernel_names(&dir);
    for k in [VECTOR_ADD, SCALE, COMMON] {
        assert!(
            names.contains(k),
            "no .asm file in {} has `//.kernel {k}`; kernels of its .asm files: {names:?}\nfiles under out:\n  {}",
            dir.display(),
            list_files(&s.out).join("\n  ")
        );
    }
    // IGC compiles whole modules: each module's dump names exactly its kernels.
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    let want: BTreeMap<String, BTreeSet<String>> = [
        (spirv_a_sha(), set(&[VECTOR_ADD, SCALE, SCALE_V2, COMMON])),
        (spirv_b_sha(), set(&[COMMON, ONLY_IN_B])),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        dumped_modules(&dir),
        want,
        "dumped modules (sha256 of the dumped .spv -> kernels of its .asm files) of {}\nfiles under out:\n  {}",
        dir.display(),
        list_files(&s.out).join("\n  ")
    );
}

fn record_shows_the_dump_settings(via: &str) {
    let s = scratch("capture");
    traced_into(&s, &args(via, false, &["imm:a:scale:1"]));
    let rec = only_record(&s.out);
    let setting = |name: &str| {
        rec.env
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("the record's env has no {name}: {:#?}", rec.env))
    };
    let enable = setting("IGC_ShaderDumpEnable");
    assert_eq!(
        (enable.value.as_str(), enable.by_user),
        ("1", false),
        "IGC_ShaderDumpEnable must be 1, set by xpu-asm: {enable:?}"
    );
    let custom = setting("IGC_DumpToCustomDir");
    assert!(!custom.by_user, "{custom:?}");
    let dir = dump_dir(&s.out, &rec);
    assert_eq!(
        std::fs::canonicalize(&custom.value).ok(),
        std::fs::canonicalize(&dir).ok(),
        "IGC_DumpToCustomDir {:?} is not the process's dump folder {}",
        custom.value,
        dir.display()
    );
}

/// The counts live in a shared mapping and the events are written before the
/// call that caused them returns: SIGKILL right after the last launch must
/// lose nothing.
fn sigkill_after_the_last_launch_loses_nothing(via: &str) {
    let s = scratch("capture");
    let a = args(
        via,
        false,
        &["imm:a:scale:7", "reg:a:scale_v2:2:5", "end:kill"],
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (shown, output) = run_traced_any(&s.out, &a);
    assert_eq!(
        output.status.signal(),
        Some(9),
        "the workload should have died of SIGKILL\n{}",
        describe(&shown, &output, &s.out)
    );
    assert_stdout(
        &output,
        &["imm a scale 7", "reg a scale_v2 2 5", "end kill"],
    );
    let rec = only_record(&s.out);
    let sha = spirv_a_sha();
    assert_record_counts(&rec, &[(SCALE, &sha, 7, 7), (SCALE_V2, &sha, 10, 2)]);
    assert_eq!(rec.exit_code, None, "a killed process cannot have exited");
}

fn sigterm_loses_nothing(via: &str) {
    let s = scratch("capture");
    let a = args(via, false, &["imm:a:scale:3", "end:term-wait"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut cmd = workload_command(&s.out, &a);
    trace(&mut cmd, &s.out);
    let shown = shell_words(&cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let stdout = child.stdout.take().expect("stdout was piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while lines.last().map(String::as_str) != Some("ready") {
        match rx.recv_timeout(RUN_TIMEOUT) {
            Ok(l) => lines.push(l),
            Err(e) => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "the workload never printed `ready` ({e}); printed {lines:?}, status {status:?}\ncommand: {shown}\nfiles under out:\n  {}",
                    list_files(&s.out).join("\n  ")
                );
            }
        }
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(killed.success());
    let status = child.wait().expect("wait for the workload");
    assert_eq!(
        (status.code(), status.signal()),
        (None, Some(15)),
        "the workload should die of SIGTERM\ncommand: {shown}\nstdout: {lines:?}"
    );
    assert_eq!(lines, ["imm a scale 3", "end term-wait", "ready"]);
    assert_record_counts(&only_record(&s.out), &[(SCALE, &spirv_a_sha(), 3, 3)]);
}

/// Ends that skip or break the normal exit path.
fn abnormal_ends_lose_nothing(via: &str) {
    for (end, code, signal) in [
        ("_exit", Some(0), None),
        ("abort", None, Some(6)),
        ("segv", None, Some(11)),
        ("thread-exit", Some(3), None),
        ("exit", Some(0), None),
    ] {
        let s = scratch("capture");
        let step = format!("end:{end}");
        let a = args(via, false, &["imm:a:scale:4", "reg:a:scale_v2:1:2", &step]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (shown, output) = run_traced_any(&s.out, &a);
        assert_eq!(
            (output.status.code(), output.status.signal()),
            (code, signal),
            "end:{end} ended otherwise than expected\n{}",
            describe(&shown, &output, &s.out)
        );
        assert_stdout(
            &output,
            &["imm a scale 4", "reg a scale_v2 1 2", &format!("end {end}")],
        );
        let rec = only_record(&s.out);
        let sha = spirv_a_sha();
        assert_record_counts(&rec, &[(SCALE, &sha, 4, 4), (SCALE_V2, &sha, 2, 1)]);
    }
}

/// A forked child initialises Level Zero again and launches on its own; its
/// launches go to its own record, not to the parent's, and the parent's
/// later launches stay the parent's.
fn forked_child_has_its_own_record(via: &str) {
    let s = scratch("capture");
    let output = traced_into(
        &s,
        &args(
            via,
            false,
            &["imm:a:scale:2", "fork:a:scale:3", "imm:a:scale_v2:4"],
        ),
    );
    let lines = stdout_lines(&output);
    let child_pid = lines
        .iter()
        .find_map(|l| l.strip_prefix("fork a scale 3 child="))
        .and_then(|p| p.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no fork line in {lines:?}"));
    assert_eq!(
        lines,
        [
            "imm a scale 2".to_string(),
            format!("fork-child a scale 3 pid={child_pid}"),
            format!("fork a scale 3 child={child_pid}"),
            "imm a scale_v2 4".to_string(),
        ]
    );
    let recs = records(&s.out);
    assert_eq!(
        recs.len(),
        2,
        "expected a parent and a child record: {recs:#?}"
    );
    let child = recs
        .iter()
        .find(|r| r.pid == child_pid)
        .unwrap_or_else(|| panic!("no record of the child {child_pid}: {recs:#?}"));
    let parent = recs
        .iter()
        .find(|r| r.pid != child_pid)
        .expect("two records, one is the child's");
    for r in [parent, child] {
        assert!(r.warnings.is_empty(), "warnings: {:#?}", r.warnings);
    }
    assert_eq!(parent.forked_from, None, "parent: {parent:#?}");
    assert_eq!(child.forked_from, Some(parent.pid), "child: {child:#?}");
    assert_eq!(child.ppid, parent.pid, "child: {child:#?}");
    let sha = spirv_a_sha();
    assert_record_counts(parent, &[(SCALE, &sha, 2, 2), (SCALE_V2, &sha, 4, 4)]);
    assert_record_counts(child, &[(SCALE, &sha, 3, 3)]);
    // IGC, loaded in the parent, keeps the parent's dump folder in the child;
    // wherever the record says the child's dumps are, they must be there.
    for r in [parent, child] {
        let dir = s.out.join(&r.dump_dir);
        let names = asm_kernel_names(&dir);
        assert!(
            names.contains(SCALE),
            "process {} (dump_dir {:?}): no .asm file in {} names {SCALE}: {names:?}\nfiles under out:\n  {}",
            r.pid,
            r.dump_dir,
            dir.display(),
            list_files(&s.out).join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------
// Inert: with XPU_ASM_OUT set, a program that never touches Level Zero runs
// exactly as without the interposer and leaves nothing.

fn inert_scratch() -> Scratch {
    require_stack();
    scratch("capture")
}

/// Runs `program args` with exactly `env` (plus the interposer when traced).
fn run_with_env(
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    out: &Path,
    traced: bool,
) -> (String, Output) {
    let mut cmd = Command::new(program);
    cmd.args(args).env_clear().envs(env.iter().copied());
    if traced {
        trace(&mut cmd, out);
    }
    let shown = shell_words(&cmd);
    (shown, run_with_timeout(&mut cmd))
}

fn assert_left_nothing(out: &Path, shown: &str, output: &Output) {
    let files = list_files(out);
    assert!(
        files.is_empty(),
        "a program that never used Level Zero left files\n{}",
        describe(shown, output, out)
    );
}

#[test]
fn inert_sh_true() {
    let s = inert_scratch();
    let env = [("PATH", "/usr/bin:/bin")];
    let (shown, output) = run_with_env("sh", &["-c", "true"], &env, &s.out, true);
    assert!(
        output.status.success(),
        "{}",
        describe(&shown, &output, &s.out)
    );
    assert_eq!(
        (output.stdout.as_slice(), output.stderr.as_slice()),
        (&b""[..], &b""[..]),
        "{}",
        describe(&shown, &output, &s.out)
    );
    assert_left_nothing(&s.out, &shown, &output);
}

#[test]
fn inert_output_and_status_identical() {
    let s = inert_scratch();
    let env = [("PATH", "/usr/bin:/bin")];
    let script = ["-c", "echo out; echo err >&2; ls / >/dev/null; exit 3"];
    let (_, plain) = run_with_env("sh", &script, &env, &s.out, false);
    let (shown, traced) = run_with_env("sh", &script, &env, &s.out, true);
    assert_eq!(
        (traced.status.code(), &traced.stdout, &traced.stderr),
        (plain.status.code(), &plain.stdout, &plain.stderr),
        "the interposer changed what a program without Level Zero does\n{}",
        describe(&shown, &traced, &s.out)
    );
    assert_eq!(plain.status.code(), Some(3));
    assert_left_nothing(&s.out, &shown, &traced);
}

/// The pid and token in `IGC_DumpToCustomDir=.../<host>-<pid>-<token>` of
/// `env`'s output; the token is 8 hex digits.
fn find_env_pid(lines: &BTreeSet<String>) -> (u32, String) {
    let v = lines
        .iter()
        .find_map(|l| l.strip_prefix("IGC_DumpToCustomDir="))
        .unwrap_or_else(|| panic!("env printed no IGC_DumpToCustomDir: {lines:?}"));
    let mut parts = v.rsplit('-');
    let token = parts.next().unwrap_or_default().to_string();
    let pid = parts.next().and_then(|p| p.parse().ok());
    assert!(
        token.len() == 8 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "no token in {v}"
    );
    (pid.unwrap_or_else(|| panic!("no pid in {v}")), token)
}

/// The host name as the interposer writes it in file names.
fn host() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    raw.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `env` prints the environment it got: what was passed plus the interposer's
/// documented variables, nothing else; and no file is left.
#[test]
fn inert_env_sees_only_its_own_environment() {
    let s = inert_scratch();
    let env = [("PATH", "/usr/bin:/bin"), ("HOME", "/nonexistent")];
    let (shown, output) = run_with_env("env", &[], &env, &s.out, true);
    assert!(
        output.status.success(),
        "{}",
        describe(&shown, &output, &s.out)
    );
    let got: BTreeSet<String> = stdout_lines(&output).into_iter().collect();
    let mut want: BTreeSet<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    want.insert(format!("LD_PRELOAD={}", interposer().display()));
    want.insert(format!("{}={}", xpu_asm_record::OUT_ENV, s.out.display()));
    // The interposer's own variables, set at load for the driver and IGC
    // (docs/internals.md, "Environment set at load"), and nothing else.
    let (pid, token) = find_env_pid(&got);
    for (name, value) in xpu_asm_record::DUMP_ENV {
        let value = if name == "IGC_DumpToCustomDir" {
            format!(
                "{}/{}/{}",
                s.out.display(),
                xpu_asm_record::DUMPS_DIR,
                xpu_asm_record::process_stem(&host(), pid, &token)
            )
        } else {
            value.to_string()
        };
        want.insert(format!("{name}={value}"));
    }
    want.insert(format!(
        "{}={}",
        xpu_asm_record::OWNED_ENV,
        xpu_asm_record::DUMP_ENV.map(|(n, _)| n).join(",")
    ));
    assert_eq!(
        got,
        want,
        "the interposer changed the environment of a program without Level Zero\n{}",
        describe(&shown, &output, &s.out)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        describe(&shown, &output, &s.out)
    );
    assert_left_nothing(&s.out, &shown, &output);
}
