//! `diff` of two captures: what changed, and `--fail-on`.

use super::*;

/// Two captures of the same build compare equal (exit 0, nothing listed);
/// a build with `-cl-opt-disable` changes every kernel's instructions,
/// which `--json` says field by field; `--fail-on` exits 1 exactly when its
/// condition holds.
#[test]
fn diff_shows_what_changed_between_two_builds() {
    let dir = stack_temp_dir("isa");
    let d1 = capture_ab(dir.path(), "default1", "", "");
    let d2 = capture_ab(dir.path(), "default2", "", "");
    let o0 = capture_ab(dir.path(), "optdisable", "", "-cl-opt-disable");
    let (a, a2, b) = (
        d1.out.to_str().unwrap(),
        d2.out.to_str().unwrap(),
        o0.out.to_str().unwrap(),
    );

    // Identical: no change, exit 0, also with --fail-on any.
    let r = run_xpu_asm(&["diff", a, a2], &d1.out);
    r.assert_status(0);
    assert!(
        r.stdout()
            .contains("6 kernels in both, 0 changed; 0 only in A, 0 only in B"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(
        &[
            "diff",
            a,
            a2,
            "--json",
            "--fail-on",
            "any,spill,missing,new,instructions+0",
        ],
        &d1.out,
    );
    r.assert_status(0);
    let j = r.json();
    assert_eq!(j["kernels"], serde_json::json!([]), "{}", r.ctx());
    assert_eq!(j["failed"], serde_json::json!([]), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, a2, "--json", "--all"], &d1.out);
    let j = r.json();
    let all = j["kernels"].as_array().unwrap();
    assert_eq!(all.len(), 6, "{}", r.ctx());
    for k in all {
        assert_eq!(k["changed"], serde_json::json!([]), "{}", r.ctx());
        assert_eq!(k["a"], k["b"], "{}", r.ctx());
    }
    let r = run_xpu_asm(&["diff", a, a2, "scale"], &d1.out);
    r.assert_status(0);
    assert_eq!(r.stdout(), "", "{}", r.ctx());

    // Optimisation off: the JSON contract, and every kernel changed.
    let r = run_xpu_asm(&["diff", a, b, "--json"], &d1.out);
    r.assert_status(0);
    let j = r.json();
    let ks = j["kernels"].as_array().unwrap();
    let names: Vec<(&str, u64)> = ks
        .iter()
        .map(|k| (k["name"].as_str().unwrap(), u(&k["a"]["launches"])))
        .collect();
    // A's order, a name's kernels together.
    let want = [
        ("_ZTSZ4mainE10vector_add", 11),
        ("scale", 7),
        ("common_kernel", 6),
        ("common_kernel", 4),
        ("scale_v2", 5),
        ("only_in_b", 2),
    ];
    assert_eq!(names, want, "{}", r.ctx());
    let mut growth = Vec::new();
    for k in ks {
        let (ka, kb) = (&k["a"], &k["b"]);
        for side in [ka, kb] {
            for f in [
                "rank",
                "launches",
                "simd",
                "grf",
                "instructions",
                "spill_bytes",
                "mix",
                "module_sha256",
            ] {
                assert!(side.get(f).is_some(), "{f} missing: {k:#}");
            }
        }
        assert_eq!(ka["launches"], kb["launches"], "{k:#}");
        let changed: Vec<&str> = k["changed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(changed.contains(&"instructions"), "{k:#}");
        assert!(!changed.contains(&"launches"), "{k:#}");
        // `changed` is exactly the fields that differ.
        for f in ["simd", "grf", "instructions", "spill_bytes"] {
            assert_eq!(changed.contains(&f), ka[f] != kb[f], "{f}: {k:#}");
        }
        for (f, v) in ka["mix"].as_object().unwrap() {
            if f != "instructions" {
                assert_eq!(
                    changed.contains(&format!("mix.{f}").as_str()),
                    *v != kb["mix"][f],
                    "{f}: {k:#}"
                );
            }
        }
        let (ia, ib) = (u(&ka["instructions"]) as f64, u(&kb["instructions"]) as f64);
        growth.push((ib - ia) * 100.0 / ia);
        assert_eq!(
            k["pairing"].is_null(),
            k["name"] != "common_kernel",
            "{k:#}"
        );
    }
    assert_eq!(
        j["summary"],
        serde_json::json!({"in_both": 6, "changed": 6, "only_a": 0, "only_b": 0})
    );
    // The two common_kernels paired by module order: a's with a's.
    let sha = |c: &Captured, m: usize| c.kernels("common_kernel")[m]["module_sha256"].clone();
    let commons: Vec<&Value> = ks.iter().filter(|k| k["name"] == "common_kernel").collect();
    assert_eq!(commons[0]["a"]["module_sha256"], sha(&d1, 0));
    assert_eq!(commons[0]["b"]["module_sha256"], sha(&o0, 0));
    assert_eq!(u(&commons[1]["a"]["launches"]), 4);

    // --fail-on instructions+N%: 1 exactly when some kernel grew by more.
    let max = growth.iter().cloned().fold(f64::MIN, f64::max);
    let above = format!("instructions+{}%", (max + 0.5).ceil());
    let below = format!("instructions+{}%", (max - 0.5).floor());
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", &above], &d1.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", &below], &d1.out);
    r.assert_status(1);
    let threshold = (max - 0.5).floor();
    let over = growth.iter().filter(|g| **g > threshold).count();
    assert!(over >= 1);
    assert_eq!(
        r.stderr().matches(&format!("--fail-on {below}: ")).count(),
        over,
        "{}",
        r.ctx()
    );
    // Back the other way nothing grows.
    let r = run_xpu_asm(&["diff", b, a, "--fail-on", "instructions+0,any"], &d1.out);
    r.assert_status(1);
    assert!(!r.stderr().contains("instructions+0:"), "{}", r.ctx());
    assert!(r.stderr().contains("--fail-on any:"), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", "spill,missing,new"], &d1.out);
    r.assert_status(0);

    // The ISA of one kernel: a unified diff without comments.
    let r = run_xpu_asm(&["diff", a, b, "scale_v2", "--normalize-regs"], &d1.out);
    r.assert_status(0);
    let t = r.stdout();
    assert!(
        t.starts_with("--- ") && t.contains("\n+++ ") && t.contains("\n@@ "),
        "{}",
        r.ctx()
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with('+') && !l.starts_with("+++")),
        "{}",
        r.ctx()
    );
    assert!(!t.contains("//"), "{}", r.ctx());

    // Bad conditions are refused (status 2) before anything is read.
    let r = run_xpu_asm(&["diff", a, b, "--fail-on", "instrs+5%"], &d1.out);
    r.assert_status(2);
    assert!(r.stderr().contains("unknown condition"), "{}", r.ctx());
    let r = run_xpu_asm(&["diff", a, "/nonexistent-capture"], &d1.out);
    r.assert_status(2);
}

/// `--fail-on spill` on a kernel that spills with 128 registers and not
/// with 256: 1 from the large to the default register file, 0 back; the
/// table shows the change on a terminal in colour.
#[test]
fn diff_fails_on_a_kernel_that_starts_spilling() {
    let dir = stack_temp_dir("isa");
    let large = capture_mix(dir.path(), "large", "-ze-opt-large-register-file", &[]);
    let small = capture_mix(dir.path(), "small", "", &[]);
    assert!(large.kernel("mix_spill")["spill_bytes"].is_null());
    assert!(u(&small.kernel("mix_spill")["spill_bytes"]) > 0);
    let (l, s) = (large.out.to_str().unwrap(), small.out.to_str().unwrap());
    let r = run_xpu_asm(&["diff", l, s, "--fail-on", "spill"], &large.out);
    r.assert_status(1);
    assert!(
        r.stderr()
            .contains("--fail-on spill: mix_spill: spill bytes 0 ->"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(&["diff", s, l, "--fail-on", "spill"], &large.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", s, l, "--fail-on", "grf+0"], &large.out);
    r.assert_status(1);
    let r = run_xpu_asm(&["diff", l, s, "--fail-on", "grf+0"], &large.out);
    r.assert_status(0);
    let r = run_xpu_asm(&["diff", l, s, "--json"], &large.out);
    let j = r.json();
    let k = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "mix_spill")
        .unwrap();
    let changed: Vec<&str> = k["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for f in ["grf", "spill_bytes", "mix.spill", "mix.fill"] {
        assert!(changed.contains(&f), "{f}: {k:#}");
    }

    // Kernels in one capture only: listed apart, null on the other side,
    // and `missing` / `new` hold exactly for them.
    let ab = capture_ab(dir.path(), "ab", "", "");
    let abs = ab.out.to_str().unwrap();
    let r = run_xpu_asm(&["diff", abs, s, "--json", "--fail-on", "missing"], &ab.out);
    r.assert_status(1);
    let j = r.json();
    // Names of the kernels whose `missing_side` is null.
    let only = |missing_side: &str| -> Vec<&str> {
        j["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k[missing_side].is_null())
            .map(|k| k["name"].as_str().unwrap())
            .collect()
    };
    let (only_a, only_b) = (only("b"), only("a"));
    let want_a: Vec<&str> = AB_KERNELS.iter().map(|(n, _, _)| *n).collect();
    let mut want_a_sorted = want_a.clone();
    want_a_sorted.sort();
    let mut got_a = only_a.clone();
    got_a.sort();
    assert_eq!(got_a, want_a_sorted, "{}", r.ctx());
    assert_eq!(
        only_b,
        [
            "mix_spill",
            "mix_scratch",
            "mix_slm",
            "mix_atomics",
            "mix_mad_loop"
        ],
        "{}",
        r.ctx()
    );
    assert_eq!(
        j["summary"],
        serde_json::json!({"in_both": 0, "changed": 0, "only_a": 6, "only_b": 5})
    );
    assert_eq!(j["failed"].as_array().unwrap().len(), 6, "{}", r.ctx());
    let r = run_xpu_asm(&["diff", abs, s, "--fail-on", "new"], &ab.out);
    r.assert_status(1);
    assert_eq!(
        r.stderr().matches("--fail-on new: ").count(),
        5,
        "{}",
        r.ctx()
    );
    let t = r.stdout();
    let (a_part, b_part) = t.split_once("only in B:").expect("only in B listed");
    assert!(
        a_part.contains("only in A:\n  #1 main::vector_add (11 launches"),
        "{}",
        r.ctx()
    );
    assert!(
        b_part.starts_with("\n  #1 mix_spill (5 launches"),
        "{}",
        r.ctx()
    );
    let r = run_xpu_asm(&["diff", abs, abs, "--fail-on", "missing,new"], &ab.out);
    r.assert_status(0);

    let argv = [
        xpu_asm_run().to_str().unwrap().to_string(),
        "diff".into(),
        l.into(),
        s.into(),
    ];
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (tty, status) = shown_at_terminal(&argv, &[]);
    assert_eq!(status, 0, "{tty}");
    assert!(
        tty.contains("\x1b[31m"),
        "growth in red on a terminal\n{tty}"
    );
    let (tty, _) = shown_at_terminal(&argv, &[("NO_COLOR", "1")]);
    assert!(!tty.contains('\x1b'), "{tty}");
    let piped = run_xpu_asm(&["diff", l, s], &large.out);
    assert!(!piped.stdout().contains('\x1b'), "{}", piped.ctx());
    assert_eq!(
        strip_ansi(&shown_at_terminal(&argv, &[]).0)
            .trim_end()
            .trim_end_matches("STATUS 0")
            .trim_end(),
        piped.stdout().trim_end()
    );
}
