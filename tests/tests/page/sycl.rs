//! The page of a SYCL capture.

use super::*;

/// The SYCL capture's kernels (dpctl's, in report order) as its table
/// names them at its default width: namespaces gone, the arguments that
/// fit, `sum`'s kernel cut in the middle.
const SYCL_NAMES: [&str; 6] = [
    "copy_cast_contig_kernel<float, int, …>",
    "where_contig_kernel<float, bool, 4, 2>",
    "__usmfill<float>",
    "sum_reduction_axis1_o…atomics_contig_krn<…>",
    "sin_contig_kernel<float, float, …>",
    "add_contig_kernel<float, float, float, …>",
];

/// The same kernels as `diff`'s table names them (its column is 48 wide).
const SYCL_DIFF_NAMES: [&str; 6] = [
    "copy_cast_contig_kernel<float, int, …>",
    "where_contig_kernel<float, bool, 4, 2>",
    "__usmfill<float>",
    "sum_reduction_axis1_ove…th_atomics_contig_krn<…>",
    "sin_contig_kernel<float, float, …>",
    "add_contig_kernel<float, float, float, …>",
];

/// A SYCL capture (tests/sycl/ops.py: six dpctl kernels, launched 2 to 6
/// times): its page, every kernel in it, each one's ISA as its data has it.
#[test]
fn the_page_of_a_sycl_capture() {
    require_stack();
    let tmp = temp_dir("page-sycl");
    let venv = sycl_venv();
    let out = tmp.path().join("sycl");
    let mut cmd = Command::new(xpu_asm_run());
    // The table printed (not on a terminal: at its default width).
    cmd.args(["--emulate", "pvc", "-o"])
        .arg(&out)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(workspace_dir().join("tests/sycl/ops.py"))
        .args(["1", "add=2", "sin=3", "sum=4", "where=5", "astype=6"])
        .current_dir(tmp.path())
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    hermetic(&mut cmd);
    for v in [
        "PYTHONPATH",
        "PYTHONHOME",
        "SYCL_DEVICE_FILTER",
        "SYCL_PI_TRACE",
        "COLUMNS",
    ] {
        cmd.env_remove(v);
    }
    let r = run(cmd, &out);
    r.assert_status(0);
    let report = assert_capture_page_file(&out);
    let launches: Vec<u64> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| u(&k["launches"]))
        .collect();
    assert_eq!(launches, [6, 5, 4, 4, 3, 2], "{}", r.ctx());
    assert_eq!(report["totals"]["matched"], 6, "{}", r.ctx());
    let names = SYCL_NAMES.map(String::from);
    let (data, _) = read_page(&out.join("report.html"));
    assert_page_names(&data, &names, &table_names(&r.stdout()));
    // The capture beside itself: diff's column is wider.
    let diff_page = tmp.path().join("diff.html");
    let d = diff(&out, &out, &diff_page);
    let diff_names = SYCL_DIFF_NAMES.map(String::from);
    let (diff_data, _) = read_page(&diff_page);
    assert_page_names(&diff_data, &diff_names, &diff_table_names(&d));
    if stack() == Stack::Sid {
        // No browser in the root: the files were checked above, exactly.
        return;
    }
    // Parts of the full names the short ones lost find their rows.
    let filters: [(&str, &[u64]); 3] = [
        ("copy_and_cast", &[0]),
        ("TwoOffsets_CombinedIndexer", &[3]),
        ("dpctl::tensor::kernels::", &[0, 1, 3, 4, 5]),
    ];
    let shots = tmp.path().join("shots");
    let v = assert_capture_page_browsed(&out, &report, &names, &filters, 0, &shots);
    assert_not_blank(&v["kernel_shot"], "a SYCL kernel");
    let mut args = vec!["--kernels", "3"];
    for (f, _) in &filters {
        args.extend(["--filter", f]);
    }
    let dv = browse(&diff_page, &tmp.path().join("diff-shots"), &args);
    let full: Vec<&str> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["demangled"].as_str().unwrap())
        .collect();
    assert_table(&dv, 0, &diff_names, &full, &filters);
    assert_eq!(dv["opened"][0]["title"], full[3]);
}
