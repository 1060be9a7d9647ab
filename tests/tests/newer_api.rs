//! Launch entry points of newer Level Zero versions, which the real stack
//! here (loader 1.8, NEO 22.43) does not have: `...LaunchKernelWithArguments`
//! and `...WithParameters` (API 1.14, the default of current SYCL runtimes)
//! and `zeCommandListImmediateAppendCommandListsExp` (API 1.9). A stand-in
//! driver (tests/fake/newer_driver.c) hands them out through its tables; the
//! program calls only through the tables, as the SYCL adapter does. This is
//! the one place where a stand-in replaces the real driver.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xpu_asm_tests::*;

fn gcc_strict(args: &[&str], out: &Path) {
    let o = Command::new("gcc")
        .args(["-O1", "-Wall", "-Wextra", "-Werror"])
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("gcc runs");
    assert!(
        o.status.success(),
        "gcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `(stand-in driver, program)`, built once per test process.
fn binaries() -> &'static (PathBuf, PathBuf) {
    static B: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    B.get_or_init(|| {
        let src = workspace_dir().join("tests/fake");
        let dir = build_dir().join(format!("newer-api-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("build folder");
        let driver = dir.join("libnewer_driver.so");
        let program = dir.join("newer_api");
        let d = src.join("newer_driver.c");
        let p = src.join("newer_api.c");
        gcc_strict(&["-shared", "-fPIC", d.to_str().unwrap()], &driver);
        gcc_strict(&[p.to_str().unwrap(), "-ldl"], &program);
        (driver, program)
    })
}

fn run_newer_api(out: &Path, args: [u32; 4]) -> std::process::Output {
    let (driver, program) = binaries();
    let mut cmd = Command::new(program);
    cmd.arg(driver)
        .args(args.map(|a| a.to_string()))
        .env("LD_PRELOAD", interposer())
        .env(xpu_asm_record::OUT_ENV, out);
    let shown = format!("{cmd:?}");
    let o = run_with_timeout(&mut cmd);
    assert!(o.status.success(), "{}", describe(&shown, &o, out));
    o
}

#[test]
fn with_arguments_with_parameters_and_immediate_append_are_counted() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("out");
    // 5 + 3 launches on an immediate list; a regular list of 4 appends run 6 times.
    run_newer_api(&out, [5, 3, 4, 6]);
    let rec = only_record(&out);
    let got: Vec<(String, (u64, u64))> = counts(&rec)
        .into_iter()
        .map(|((name, _), c)| (name, c))
        .collect();
    assert_eq!(
        got,
        vec![
            ("with_arguments".to_string(), (5 + 4 * 6, 5 + 4)),
            ("with_parameters".to_string(), (3, 3)),
        ],
        "record: {rec:#?}"
    );
    assert_eq!(rec.unknown_launches, 0);
    let module = rec.modules.values().next().expect("one module");
    assert_eq!(
        module.kernel_names,
        vec![b"with_arguments".to_vec(), b"with_parameters".to_vec()]
    );
    assert_eq!(module.build_flags, "-g");
}

#[test]
fn an_older_table_is_not_written_past_its_end() {
    // newer_api fails when entries past an API 1.4 table were written; the
    // interposer patches entries 36 and 37 only for tables of API 1.14 on.
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("out");
    let o = run_newer_api(&out, [1, 1, 1, 1]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "newer_api: 1 with_arguments, 1 with_parameters, regular 1 x 1\n"
    );
}
