//! `show`: a kernel's ISA with its source lines.

use super::*;

/// `show` of a `-g` kernel: header, mix, then the ISA in its order with
/// each source line (text from the file) before the instructions it made;
/// `--lines` ranks the lines; colour on a terminal only, never with
/// NO_COLOR.
#[test]
fn show_interleaves_source_lines_with_the_isa() {
    let dir = stack_temp_dir("isa");
    let g = capture_ab(dir.path(), "g", "-g", "-g");
    let out = g.out.to_str().expect("a UTF-8 path");
    let k = g.kernel("scale_v2");
    let r = run_xpu_asm(&["show", out, "scale_v2"], &g.out);
    r.assert_status(0);
    let text = r.stdout();
    assert!(
        !text.contains('\x1b'),
        "piped output has no colour\n{}",
        r.ctx()
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("#{} scale_v2", k["rank"]), "{}", r.ctx());
    assert!(
        text.contains(&format!("mix: {} instructions", k["instructions"])),
        "{}",
        r.ctx()
    );

    // Instructions in the ISA's order; each under the header of its line.
    let isa = isa_instructions(&g.out.join(k["asm_copy"].as_str().unwrap()));
    let file = std::fs::read_to_string(cl_path("a")).unwrap();
    let file_lines: Vec<&str> = file.lines().collect();
    let header = regex_lite_header();
    let mut shown_instructions = Vec::new();
    let mut shown_live = Vec::new();
    let mut under: BTreeMap<u64, u64> = BTreeMap::new();
    let mut announced: BTreeMap<u64, u64> = BTreeMap::new();
    let mut current: Option<u64> = None;
    let body = text
        .split_once("\n\n")
        .unwrap()
        .1
        .split_once("\n\n")
        .unwrap()
        .1;
    for l in body.lines() {
        if let Some((line, n, src)) = header(l) {
            assert_eq!(src, file_lines[line as usize - 1].trim(), "{l}");
            announced.insert(line, n);
            current = Some(line);
        } else if l.starts_with("(no source line)") {
            current = None;
        } else if !l.ends_with(':') {
            // The live-GRF column first (the kernel has no loop to mark).
            let (live, rest) = l.trim().split_once(' ').unwrap_or_default();
            shown_live.push(
                live.parse::<u64>()
                    .unwrap_or_else(|_| panic!("no live GRF: {l}")),
            );
            shown_instructions.push(rest.trim().to_string());
            if let Some(c) = current {
                *under.entry(c).or_default() += 1;
            }
        }
    }
    assert_eq!(shown_instructions, isa, "{}", r.ctx());
    let live: Vec<u64> = k["flow"]["live_grf"]
        .as_array()
        .expect("live_grf")
        .iter()
        .map(u)
        .collect();
    assert_eq!(shown_live, live, "{}", r.ctx());
    assert_eq!(
        under,
        announced,
        "each header's count is what follows it\n{}",
        r.ctx()
    );
    let report_lines: BTreeMap<u64, u64> = k["source"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (u(&l["line"]), u(&l["instructions"])))
        .collect();
    assert_eq!(under, report_lines, "{}", r.ctx());

    // --lines: ranked by instructions, the prolog last.
    let r = run_xpu_asm(&["show", out, &k["rank"].to_string(), "--lines"], &g.out);
    r.assert_status(0);
    let ranked: Vec<u64> = r
        .stdout()
        .lines()
        .skip_while(|l| !l.starts_with("instrs"))
        .skip(1)
        .filter(|l| l.contains("kernels_a.cl:"))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let mut sorted = ranked.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ranked, sorted, "{}", r.ctx());
    assert_eq!(ranked.len(), report_lines.len(), "{}", r.ctx());

    // Several matches are listed, by rank; no line information is said.
    let r = run_xpu_asm(&["show", out, "common_kernel"], &g.out);
    r.assert_status(1);
    assert_eq!(r.stderr().matches("#").count(), 2, "{}", r.ctx());
    let plain = capture_ab(dir.path(), "plain", "", "");
    let r = run_xpu_asm(
        &["show", plain.out.to_str().unwrap(), "scale", "--lines"],
        &plain.out,
    );
    r.assert_status(1);
    assert!(r.stderr().contains("build it with -g"), "{}", r.ctx());

    // On a terminal: colour, the same text; NO_COLOR: none.
    let (tty, status) = shown_at_terminal(
        &[xpu_asm_run().to_str().unwrap(), "show", out, "scale_v2"],
        &[],
    );
    assert_eq!(status, 0, "{tty}");
    assert!(tty.contains("\x1b[36mkernels_a.cl:"), "{tty}");
    assert_eq!(
        strip_ansi(&tty)
            .trim_end()
            .trim_end_matches("STATUS 0")
            .trim_end(),
        text.trim_end()
    );
    let (tty, _) = shown_at_terminal(
        &[xpu_asm_run().to_str().unwrap(), "show", out, "scale_v2"],
        &[("NO_COLOR", "1")],
    );
    assert!(!tty.contains('\x1b'), "{tty}");
}

/// `file:line  (N instructions)  text` -> (line, N, text)
fn regex_lite_header() -> impl Fn(&str) -> Option<(u64, u64, String)> {
    |l: &str| {
        let (at, rest) = l.split_once("  (")?;
        let (_, line) = at.rsplit_once(':')?;
        let line: u64 = line.parse().ok()?;
        let (n, text) = rest.split_once(" instruction")?;
        let n: u64 = n.parse().ok()?;
        let text = text.split_once(")  ").map_or("", |x| x.1);
        Some((line, n, text.to_string()))
    }
}
