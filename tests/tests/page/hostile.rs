//! Kernel names and ISA text that try to inject markup into a page, and
//! the page of a capture that has them.

use super::*;

/// Kernel names no page may be injected by (names are the program's, so
/// anything), the last one given as bytes that are not UTF-8.
pub(crate) const HOSTILE: [&str; 8] = [
    "</script><script>window.pwned=1</script>",
    "<!--<script>window.pwned=2//",
    "<img src=x onerror=\"window.pwned=3\">",
    "\"'&amp;\u{2028}\u{2029}\u{0}",
    "two\nlines",
    "{{SCRIPT}}{{DATA}}]]>",
    "<svg onload=window.pwned=6>",
    "bad\u{fffd}\u{fffd}utf8",
];

/// A hostile name too long for the table's column (the ninth kernel's),
/// and the name the table shows for it: shortened, not escaped, markup kept
/// as text.
pub(crate) const HOSTILE_LONG: &str =
    "evil::<img src=x onerror=window.pwned=7>::kernel<<b>, two\nlines, \
                            </script><script>window.pwned=8</script>, <svg onload=window.pwned=9>>";
pub(crate) const HOSTILE_SHORT: &str = "kernel<<b>, two\nlines, …>";

/// How the page reads the name given as bytes that are not UTF-8 (the
/// last of [`HOSTILE`]): each such byte as `\xff`, as the terminal shows it.
pub(crate) const HOSTILE_BYTES_SHOWN: &str = r"bad\xff\xfeutf8";

/// A hostile name as the page shows it as text: each control or
/// invisible character of [`HOSTILE`] as its escape (the page marks it).
fn escaped(s: &str) -> String {
    s.replace('\n', r"\n")
        .replace('\u{2028}', r"\u{2028}")
        .replace('\u{2029}', r"\u{2029}")
        .replace('\u{0}', r"\u{0}")
}

/// An ISA text with markup in its source lines, its instructions and its
/// bytes (not UTF-8).
pub(crate) const HOSTILE_ISA: &[u8] = b"// File: </script><!--\n\
// Line 1:  </script><img src=x onerror=window.pwned=4>\n\
(W)     mov (1|M0)   r1.0<1>:ud  0x0:ud  // </script><script>window.pwned=5</script>\n\
        nop \xff\xfe<b>\n";

/// The capture `from`'s report with [`HOSTILE`] names, its second kernel's
/// ISA text [`HOSTILE_ISA`], and its page written by the collector's
/// exporter into `to` (a folder named with markup too).
pub(crate) fn hostile_page(from: &Path, to: &Path) -> xpu_asm_collector::report::Report {
    use xpu_asm_collector::report::Report;
    let mut r: Report =
        serde_json::from_slice(&std::fs::read(from.join("report.json")).unwrap()).unwrap();
    std::fs::create_dir_all(to.join("asm")).unwrap();
    for (i, k) in r.kernels.iter_mut().enumerate() {
        if let Some(n) = HOSTILE
            .get(i)
            .or((i == HOSTILE.len()).then_some(&HOSTILE_LONG))
        {
            k.name = n.to_string();
            k.demangled = n.to_string();
        }
        if i + 1 == HOSTILE.len() {
            k.name_hex = Some("626164fffe75746638".into());
        }
        let copy = k.asm_copy.as_deref().expect("a copy");
        let bytes = match i {
            1 => HOSTILE_ISA.to_vec(),
            _ => std::fs::read(from.join(copy)).unwrap(),
        };
        std::fs::write(to.join(copy), bytes).unwrap();
    }
    html::write_capture_page(to, &r).expect("the page written");
    r
}

/// The hostile page as a file: one data element and one element per ISA
/// text, no more; the report and the ISA bytes read back exactly.
pub(crate) fn assert_hostile_page_file(dir: &Path, r: &xpu_asm_collector::report::Report) {
    let path = dir.join("report.html");
    let text = std::fs::read_to_string(&path).unwrap();
    let n = r.kernels.len();
    assert_eq!(text.matches("<script").count(), n + 2, "script elements");
    assert_eq!(text.matches("</script>").count(), n + 2, "script elements");
    assert!(!text.contains("<!--") && !text.contains("<img") && !text.contains("<svg"));
    let (data, isa) = read_page(&path);
    assert_eq!(data["report"], serde_json::to_value(r).unwrap());
    let mut names: Vec<&str> = HOSTILE.to_vec();
    names[HOSTILE.len() - 1] = HOSTILE_BYTES_SHOWN;
    names.push(HOSTILE_SHORT);
    assert_eq!(strings(&data["names"]), names, "the page's names");
    assert_eq!(isa["isa-1"], HOSTILE_ISA);
}

/// The hostile page in the browser: nothing ran, nothing was added, every
/// name and text shown as it is.
pub(crate) fn assert_hostile_page_browsed(
    dir: &Path,
    r: &xpu_asm_collector::report::Report,
    shots: &Path,
) {
    let v = browse(&dir.join("report.html"), shots, &["--kernels", "1,4,7,8"]);
    let n = r.kernels.len();
    assert_eq!(
        v["injected"],
        serde_json::json!({"pwned": null, "scripts": n + 2, "images": 0, "iframes": 0}),
        "{v:#}"
    );
    // Each name as it is, but the long one shortened, its control and
    // invisible characters as their escapes (marked), the bytes that are
    // not UTF-8 as `\xff`; markup kept as text.
    let mut full: Vec<String> = r.kernels.iter().map(|k| escaped(&k.demangled)).collect();
    full[HOSTILE.len() - 1] = HOSTILE_BYTES_SHOWN.to_string();
    let mut want = full.clone();
    want[HOSTILE.len()] = escaped(HOSTILE_SHORT);
    let full_refs: Vec<&str> = full.iter().map(String::as_str).collect();
    assert_table(&v, 2, &want, &full_refs, &[]);
    let rows = v["kernels"].as_array().expect("rows");
    for (row, shown) in rows.iter().zip(&want) {
        assert_eq!(
            row["marks"],
            serde_json::json!(xpu_asm_tests::spirv_names::escapes_in(shown)),
            "{row:#}"
        );
        assert_eq!(row["empty"], false, "{row:#}");
    }
    let long = &v["opened"][3];
    assert_eq!(
        long["title"],
        format!(
            "#{} {}",
            r.kernels[HOSTILE.len()].rank,
            escaped(HOSTILE_LONG)
        ),
        "{long:#}"
    );
    assert_eq!(long["marks"], serde_json::json!([r"\n"]), "{long:#}");
    assert_eq!(long["names"][0], escaped(HOSTILE_LONG), "{long:#}");
    let one = &v["opened"][0];
    assert_eq!(one["names"][0], HOSTILE[1], "{one:#}");
    let listing = one["panes"][0]["text"]
        .as_str()
        .expect("the listing's text");
    for shown in [
        "// File: </script><!--",
        "script><!--:1  </script><img src=x onerror=window.pwned=4>",
        "// </script><script>window.pwned=5</script>",
        "nop \u{fffd}\u{fffd}<b>",
    ] {
        assert!(listing.contains(shown), "{shown:?} not shown in\n{listing}");
    }
    assert_eq!(v["opened"][2]["names"][1], "bytes: 626164fffe75746638");
}
