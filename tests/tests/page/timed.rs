//! The pages of a capture with `--time` and of a `diff` of two.

use super::*;

/// A capture of the timed workload with `--time=all` on the simulated
/// driver, `ticks` per work-group.
fn capture_on_the_simulated_driver(out: &Path, ticks: &str) -> Run {
    Capture::new(out)
        .option("--time=all")
        .hermetic()
        .env_remove("COLUMNS")
        .envs([sim_drivers_env(false)])
        .env("XPU_ASM_SIM_TICKS", ticks)
        .program(timed_workload())
        .arg(time_spirv())
        .args(["imm:add_one:5:3", "imm:add_two:2:10"])
        .run_ok()
}

/// A capture with `--time=all` over the simulated driver
/// (`tests/fake/ze_sim.c`): the page's data has each kernel's time and
/// share as the terminal table's columns give them, and the run's device
/// time as its line says it; in the browser (the Debian 12 pass), the
/// kernels table has those columns, its rows ranked by time as the
/// terminal's, the line under it, and each kernel's figures its device
/// time in ns.
#[test]
fn the_page_of_a_timed_capture() {
    require_stack();
    let tmp = temp_dir("page-timed");
    let out = tmp.path().join("timed");
    let r = capture_on_the_simulated_driver(&out, "1000");
    let report = assert_capture_page_file(&out);
    let (data, _) = read_page(&out.join("report.html"));
    // add_one 1.20 ms (5 x 3 groups), add_two 1.60 ms (2 x 10), of 2.80 ms.
    let terminal = table_time_rows(&r.stdout());
    let row = |n: &str, t: &str, s: &str| (n.to_string(), t.to_string(), s.to_string());
    assert_eq!(
        terminal,
        [
            row("add_two", "1.60 ms", "57.1%"),
            row("add_one", "1.20 ms", "42.9%")
        ],
        "{}",
        r.ctx()
    );
    let names: Vec<&str> = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add_one", "add_two"], "{}", r.ctx());
    assert_eq!(
        data["times"],
        serde_json::json!([["1.20 ms", "42.9%"], ["1.60 ms", "57.1%"]]),
        "the page's times, in report order"
    );
    let line = "device time: 2.80 ms over 2 kernels (2.80 ms measured: 7 launches timed of 7 chosen, every launch)";
    assert_eq!(data["device_time"], serde_json::json!([line]));
    assert!(r.stdout_lines().iter().any(|l| l == line), "{}", r.ctx());
    if stack() != Stack::Debian12 {
        return;
    }
    let v = browse(
        &out.join("report.html"),
        &tmp.path().join("shots"),
        &["--kernels", "all"],
    );
    let columns: Vec<String> = strings(&v["columns"]);
    assert_eq!(
        columns[..5],
        ["#", "launches", "time", "share", "kernel"],
        "{v:#}"
    );
    let rows: Vec<Vec<String>> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| strings(&k["cells"])[..5].to_vec())
        .collect();
    assert_eq!(
        rows,
        [
            ["2", "2", "1.60 ms", "57.1%", "add_two"],
            ["1", "5", "1.20 ms", "42.9%", "add_one"]
        ],
        "ranked by time as the terminal's table: {v:#}"
    );
    assert_eq!(v["device_time"], serde_json::json!([line]), "{v:#}");
    let figures: Vec<&Value> = v["opened"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["panes"][0]["figures"]["device time"])
        .collect();
    assert_eq!(
        figures,
        [
            "1600000 ns over its launches (2 of 2 chosen timed: total 1600000 ns, min 800000, median 800000, max 800000 ns)",
            "1200000 ns over its launches (5 of 5 chosen timed: total 1200000 ns, min 240000, median 240000, max 240000 ns)",
        ],
        "{v:#}"
    );
}

/// The page of `diff --html` of two timed captures, the second on a
/// device 10% slower: `time A` and `time B` columns, in ns, and `time`
/// among the fields that changed; each side's figures its device time.
#[test]
fn the_page_of_a_diff_of_timed_captures() {
    require_stack();
    let tmp = temp_dir("page-timed-diff");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    capture_on_the_simulated_driver(&a, "1000");
    capture_on_the_simulated_driver(&b, "1100");
    let page = tmp.path().join("diff.html");
    let (ad, bd, pd) = (
        a.display().to_string(),
        b.display().to_string(),
        page.display().to_string(),
    );
    let d = run_xpu_asm(&["diff", &ad, &bd, "--html", &pd], &b);
    d.assert_status(0);
    let (data, _) = read_page(&page);
    let times: Vec<(u64, u64)> = data["diff"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (u(&k["a"]["time"]), u(&k["b"]["time"])))
        .collect();
    assert_eq!(times, [(1_200_000, 1_320_000), (1_600_000, 1_760_000)]);
    if stack() != Stack::Debian12 {
        return;
    }
    let v = browse(&page, &tmp.path().join("shots"), &["--kernels", "all"]);
    let columns = strings(&v["columns"]);
    assert_eq!(columns[8..], ["time A", "time B", "changed"], "{v:#}");
    let rows: Vec<Vec<String>> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let c = strings(&k["cells"]);
            vec![c[0].clone(), c[8].clone(), c[9].clone(), c[10].clone()]
        })
        .collect();
    assert_eq!(
        rows,
        [
            ["add_one", "1200000", "1320000", "time"],
            ["add_two", "1600000", "1760000", "time"]
        ],
        "{v:#}"
    );
    let sides: Vec<&Value> = v["opened"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["panes"].as_array().unwrap())
        .map(|p| &p["figures"]["device time"])
        .collect();
    assert_eq!(
        sides[..2],
        [
            "1200000 ns over its launches (5 of 5 chosen timed: total 1200000 ns, min 240000, median 240000, max 240000 ns)",
            "1320000 ns over its launches (5 of 5 chosen timed: total 1320000 ns, min 264000, median 264000, max 264000 ns)",
        ],
        "{v:#}"
    );
}
