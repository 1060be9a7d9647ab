//! `DIR/port/index.html`: every product of a port side by side, as one
//! static page (no script, nothing loaded from elsewhere). The table gives
//! each launched kernel's figures on the device of the run and on each
//! product (SIMD, GRF, instructions, spills, the occupancy of its most
//! launched shape), what got worse marked; below it, each kernel's ISA on
//! every device in columns next to each other, and links to each
//! product's report and its page beside the run.

use super::view::{OnProduct, PortView, COMPARE_PAGE, FIGURES, INDEX_PAGE};
use crate::report::export::html::html_text;
use std::fmt::Write as _;
use std::path::Path;

/// Kernels whose ISA the page carries (the table has every kernel).
const ISA_KERNELS: usize = 200;
/// Lines of one ISA the page carries (its file has them all).
const ISA_LINES: usize = 4_000;

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}\
td.name,th.name{text-align:left;max-width:32em;overflow-wrap:anywhere}\
th.dev{background:#eef;text-align:center}td.worse{background:#fdd}td.none{color:#777;text-align:left}\
.isa{display:flex;gap:8px;align-items:flex-start;overflow-x:auto}\
.isa>div{flex:1 1 0;min-width:24em}.isa pre{font:12px monospace;background:#f7f7f7;\
padding:4px;max-height:40em;overflow:auto;margin:0}\
.esc{font:.85em monospace;color:#8a1c1c;background:#fdecea;border:1px solid #e8b4b0;border-radius:3px;padding:0 2px}";

/// A kernel's name (or a text that holds one) for an HTML page: as
/// [`html_text`], but each control character and each character that
/// shows nothing or reorders the text ([`crate::names::invisible`]) as
/// its escape in a marked `<span class="esc">` (`\u{202e}`), as the
/// terminal writes it.
pub fn html_name(s: &str) -> String {
    let escaped = crate::names::escape_for_terminal(s);
    if escaped == s {
        return html_text(s);
    }
    let mut out = String::with_capacity(s.len() + 32);
    for c in s.chars() {
        if c.is_control() || crate::names::invisible(c) {
            let esc = crate::names::escape_for_terminal(c.encode_utf8(&mut [0; 4]));
            out.push_str(&format!("<span class=\"esc\">{}</span>", html_text(&esc)));
        } else {
            out.push_str(&html_text(c.encode_utf8(&mut [0; 4])));
        }
    }
    out
}

/// ISA text for a `<pre>`: as [`html_name`] (its `//.kernel` line holds
/// a name), its newlines and tabs kept.
fn pre_text(s: &str) -> String {
    s.split('\n')
        .map(|l| l.split('\t').map(html_name).collect::<Vec<_>>().join("\t"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `dir/port/index.html` for `view`.
pub fn write(dir: &Path, view: &PortView) -> Result<std::path::PathBuf, String> {
    let file = dir.join(crate::port::PORT_DIR).join(INDEX_PAGE);
    let html = render(dir, view);
    crate::capture::files::write_atomic(&file, html.as_bytes()).map_err(|e| e.to_string())?;
    Ok(file)
}

/// The page.
fn render(dir: &Path, view: &PortView) -> String {
    let mut s = String::new();
    let title = format!("xpu-asm port of {}", dir.display());
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
        t = html_text(&title)
    );
    products(&mut s, view);
    table(&mut s, view);
    isa(&mut s, dir, view);
    s.push_str("</body></html>\n");
    s
}

/// Each product's port as a whole, with links to its pages.
fn products(s: &mut String, view: &PortView) {
    let _ = writeln!(
        s,
        "<p>The run's device: <b id=\"run-device\">{}</b>. Each product's kernels are \
         compiled from the run's modules the way its driver compiles them.</p><ul id=\"products\">",
        html_text(&view.device)
    );
    for p in &view.products {
        let dir = p
            .dir
            .trim_start_matches(crate::port::PORT_DIR)
            .trim_start_matches('/');
        let _ = write!(
            s,
            "<li data-product=\"{}\"><b>{}</b>: {} module{} compiled",
            html_text(&p.product),
            html_text(&p.product),
            p.modules_built,
            if p.modules_built == 1 { "" } else { "s" }
        );
        if p.modules_failed > 0 {
            let _ = write!(s, ", {} failed", p.modules_failed);
        }
        let _ = write!(s, " in {:.1} s", p.seconds);
        match (&p.report, &p.error) {
            (Some(_), _) => {
                let _ = write!(
                    s,
                    "; <a href=\"{d}/report.html\">its report</a>, \
                     <a href=\"{d}/{COMPARE_PAGE}\">beside the run</a>",
                    d = html_text(dir)
                );
            }
            (None, Some(e)) => {
                let _ = write!(s, "; no report: {}", html_text(e));
            }
            (None, None) => s.push_str("; no report"),
        }
        s.push_str("</li>\n");
    }
    s.push_str("</ul>\n");
}

/// The table: a row per kernel, five columns per device.
fn table(s: &mut String, view: &PortView) {
    let devices: Vec<&str> = std::iter::once(view.device.as_str())
        .chain(view.products.iter().map(|p| p.product.as_str()))
        .collect();
    s.push_str(
        "<table id=\"kernels\"><thead><tr><th class=\"name\" rowspan=\"2\">kernel</th>\
                <th rowspan=\"2\">launches</th><th rowspan=\"2\">top shape</th>",
    );
    for d in &devices {
        let _ = write!(
            s,
            "<th class=\"dev\" colspan=\"{}\">{}</th>",
            FIGURES.len(),
            html_text(d)
        );
    }
    s.push_str("</tr><tr>");
    for _ in &devices {
        for f in FIGURES {
            let _ = write!(s, "<th>{f}</th>");
        }
    }
    s.push_str("</tr></thead><tbody>\n");
    for (i, k) in view.kernels.iter().enumerate() {
        let _ = write!(
            s,
            "<tr data-kernel=\"{}\"><td class=\"name\">{}</td><td>{}</td><td>{}</td>",
            html_text(&k.name),
            if i < ISA_KERNELS {
                format!("<a href=\"#isa-{i}\">{}</a>", html_name(&k.shown))
            } else {
                html_name(&k.shown)
            },
            k.launches,
            html_text(k.top_shape.as_deref().unwrap_or("-"))
        );
        for p in std::iter::once(&k.run).chain(&k.products) {
            cells(s, p);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
}

/// One device's five cells of a kernel.
fn cells(s: &mut String, p: &OnProduct) {
    if let Some(why) = &p.not_ported {
        let _ = write!(
            s,
            "<td class=\"none\" colspan=\"{}\" data-device=\"{}\">not ported: {}</td>",
            FIGURES.len(),
            html_text(&p.product),
            html_text(why)
        );
        return;
    }
    let values = FIGURES.iter().zip(p.figure_texts());
    for (name, v) in values {
        let worse: Vec<&String> = p
            .worse
            .iter()
            .filter(|w| w.to_lowercase().starts_with(&name.to_lowercase()))
            .collect();
        let class = if worse.is_empty() {
            ""
        } else {
            " class=\"worse\""
        };
        let title = worse
            .first()
            .map(|w| format!(" title=\"worse: {}\"", html_text(w)))
            .unwrap_or_default();
        let _ = write!(
            s,
            "<td{class}{title} data-device=\"{}\" data-figure=\"{name}\">{}</td>",
            html_text(&p.product),
            html_text(&v)
        );
    }
}

/// Each kernel's ISA on every device, in columns side by side.
fn isa(s: &mut String, dir: &Path, view: &PortView) {
    s.push_str("<h2>ISA, device by device</h2>\n");
    for (i, k) in view.kernels.iter().take(ISA_KERNELS).enumerate() {
        let _ = write!(
            s,
            "<details id=\"isa-{i}\" data-kernel=\"{}\"><summary>{}</summary><div class=\"isa\">",
            html_text(&k.name),
            html_name(&k.shown)
        );
        for p in std::iter::once(&k.run).chain(&k.products) {
            column(s, dir, p);
        }
        s.push_str("</div></details>\n");
    }
    if view.kernels.len() > ISA_KERNELS {
        let _ = writeln!(
            s,
            "<p>The ISA of the first {ISA_KERNELS} kernels is above; every kernel's is in its \
             product's asm/ folder.</p>"
        );
    }
}

/// One device's ISA of a kernel (the first [`ISA_LINES`] lines of its copy).
fn column(s: &mut String, dir: &Path, p: &OnProduct) {
    let _ = write!(
        s,
        "<div data-device=\"{}\"><h3>{}</h3>",
        html_text(&p.product),
        html_text(&p.product)
    );
    let Some(copy) = &p.asm_copy else {
        let why = p.not_ported.as_deref().unwrap_or("no ISA");
        let _ = write!(s, "<p>{}</p></div>", html_text(why));
        return;
    };
    let text = std::fs::read(dir.join(copy))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|e| format!("cannot read {copy}: {e}"));
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines[..lines.len().min(ISA_LINES)].join("\n");
    let _ = write!(
        s,
        "<p><a href=\"../{}\">{}</a></p><pre>{}",
        html_text(copy),
        html_text(copy),
        pre_text(&shown)
    );
    if lines.len() > ISA_LINES {
        let _ = write!(s, "\n… {} more lines in the file", lines.len() - ISA_LINES);
    }
    s.push_str("</pre></div>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_on_a_page_shows_what_would_hide_marked() {
        assert_eq!(html_name("a<b>"), "a&lt;b&gt;");
        assert_eq!(
            html_name("rtl\u{202e}<i>\n"),
            "rtl<span class=\"esc\">\\u{202e}</span>&lt;i&gt;<span class=\"esc\">\\n</span>"
        );
    }
}
