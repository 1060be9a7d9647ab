//! The source lines of kernels built with `-g`, from dumps and binaries.

use super::*;

/// Built with `-g`, every launched kernel has `source` naming its `.cl`
/// file, with lines that exist in it (the text IGC quotes is the line's),
/// and instruction counts that sum with the prolog to the kernel's
/// instruction count; without `-g`, `source` is null.
#[test]
fn kernels_built_with_g_have_their_source_lines() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let plain = capture_ab(dir.path(), "plain", "", "");
    for (i, (name, module, _)) in AB_KERNELS.iter().enumerate() {
        let k = &g.report["kernels"][i];
        let file = cl_path(module);
        let src = &k["source"];
        assert_eq!(src["files"], serde_json::json!([file]), "{name}: {k:#}");
        let text = std::fs::read_to_string(&file).expect("the kernel source");
        let file_lines: Vec<&str> = text.lines().collect();
        let lines = src["lines"].as_array().expect("lines");
        assert!(!lines.is_empty(), "{name}: {k:#}");
        let mut sum = u(&src["no_line"]);
        let mut last = 0;
        for l in lines {
            assert_eq!(l["file"], file.as_str(), "{name}: {l}");
            let n = u(&l["line"]) as usize;
            assert!(n > last, "{name}: lines in order: {k:#}");
            last = n;
            assert!(
                n >= 1 && n <= file_lines.len(),
                "{name}: line {n} is not in {file}"
            );
            assert_eq!(l["text"], file_lines[n - 1].trim(), "{name}: line {n}");
            assert!(u(&l["instructions"]) > 0, "{name}: {l}");
            sum += u(&l["instructions"]);
        }
        assert_eq!(sum, u(&k["instructions"]), "{name}: {k:#}");
        assert_eq!(sum, u(&k["mix"]["instructions"]), "{name}: {k:#}");
        // The kernel's body line (the one with `x[i] = ...`) made code.
        assert!(
            lines
                .iter()
                .any(|l| l["text"].as_str().is_some_and(|t| t.starts_with("x[i] ="))),
            "{name}: {k:#}"
        );
    }
    for k in plain.report["kernels"].as_array().expect("kernels") {
        assert!(k["source"].is_null(), "{k:#}");
        assert_eq!(u(&k["mix"]["instructions"]), u(&k["instructions"]), "{k:#}");
    }
}

/// The same `-g` modules from the module binaries alone (`--isa binary`):
/// on sid, IGC 2's zebins carry DWARF line tables, and every kernel has the
/// `source` its dump gives (files, lines, text, counts, the prolog's
/// instructions without a line); on Debian 12 the binaries are patch-token
/// programs without line tables, and `source` is null.
#[test]
fn binaries_built_with_g_have_the_dumps_source_lines() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let modules = [("a", spirv_with("a", "-g")), ("b", spirv_with("b", "-g"))];
    let bin = capture_modules(
        dir.path(),
        "g-bin",
        &modules,
        "-g",
        &AB_STEPS,
        &["--isa", "binary"],
    );
    for (i, (name, _, _)) in AB_KERNELS.iter().enumerate() {
        let (d, b) = (&g.report["kernels"][i], &bin.report["kernels"][i]);
        assert_eq!((&d["name"], &b["name"]), (&(*name).into(), &(*name).into()));
        assert_eq!(b["isa_source"], "module-binary", "{name}");
        assert!(d["source"].is_object(), "{name}: {d:#}");
        match stack() {
            Stack::Sid => assert_eq!(b["source"], d["source"], "{name}"),
            Stack::Debian12 => assert!(b["source"].is_null(), "{name}: {b:#}"),
        }
    }
}
