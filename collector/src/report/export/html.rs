//! The report as one self-contained HTML page (`report.html`, and the
//! page of a `diff`): the kernels table, and per kernel its figures, its
//! mix, its ISA with its source lines, its control-flow graph and its
//! register pressure, built by the page's script when the kernel is
//! opened. The template, script and style are files of their own
//! (`html/`), included at build time.
//!
//! Everything the page shows is data, never markup: one JSON document in a
//! `<script type="application/json">` (with `<`, `>` and `&` escaped, so
//! that no name can close the tag or open a comment) and, per kernel, its
//! ISA text gzip-compressed and base64-encoded in a tag of its own, which
//! the browser decompresses (`DecompressionStream`) when the kernel is
//! opened. The script sets text only; the page's Content-Security-Policy
//! allows its own script and style (by hash) and no network at all.

use crate::capture::files::{write_pending, Pending};
use crate::capture::layout::CollectError;
use crate::report::export::pieces::{self, Layout};
use crate::report::{KernelEntry, Report};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use xpu_asm_isa::{self as isa, mix, mix::Mix, Line};

const TEMPLATE: &str = include_str!("html/template.html");
const SCRIPT: &str = include_str!("html/page.js");
const STYLE: &str = include_str!("html/page.css");

/// The page a collection writes beside `report.json`.
pub const PAGE_FILE: &str = "report.html";

/// The kernels a capture's page holds unless told otherwise
/// (`--page-kernels`): the most launched, in report order. A page of
/// 5,000 kernels opens in about 2 s in Chromium; one of 100,000 (190 MB)
/// did not open within a minute. The kernels past it are in `report.json`,
/// and `show` prints any of them.
pub const DEFAULT_PAGE_KERNELS: usize = 5_000;

/// How many of `report`'s kernels its page holds: the first, as its
/// `page_kernels` says.
pub fn page_count(report: &Report) -> usize {
    let n = report.kernels.len();
    report
        .page_kernels
        .map_or(n, |p| usize::try_from(p.limit).unwrap_or(n).min(n))
}

/// ISA texts larger than this are left out of a page (IGC's largest
/// kernels make a few MiB of text).
pub const MAX_ISA_BYTES: u64 = 32 << 20;

/// Where the page finds a kernel's ISA text, or why it has none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsaRef {
    /// The id of its element (`isa-3`); null when the page has no text.
    pub id: Option<String>,
    /// The text's size in bytes, before compression.
    pub bytes: u64,
    /// Why the text is missing (the kernel has an ISA file).
    pub note: Option<String>,
    /// The class of each instruction, in order, as [`xpu_asm_isa::mix`]
    /// counts it: one letter each, `a` for the first of [`classes`].
    pub classes: Option<String>,
}

/// The instruction classes of [`IsaRef::classes`], by letter from `a`:
/// the fields of [`Mix`] but `instructions`.
pub fn classes() -> Vec<&'static str> {
    Mix::default()
        .fields()
        .iter()
        .skip(1)
        .map(|(n, _)| *n)
        .collect()
}

/// One letter per instruction of `text`: its class among [`classes`].
pub fn class_letters(text: &str) -> String {
    let names = classes();
    let classifier = mix::Classifier::of_text(text);
    isa::lines(text)
        .filter_map(|l| match l {
            Line::Instruction(i) => {
                let field = classifier.classify(i).field();
                let n = names.iter().position(|f| *f == field).unwrap_or(0);
                Some(char::from(b'a' + n as u8))
            }
            _ => None,
        })
        .collect()
}

/// One kernel's ISA text, compressed, ready for the page.
pub struct IsaText {
    pub id: String,
    /// Gzip of the text's bytes.
    pub gzip: Vec<u8>,
}

/// What a page embeds: its data (any JSON document, read by the page's
/// script) and the ISA texts it refers to.
pub struct Page<'a, T: Serialize> {
    pub title: &'a str,
    pub data: &'a T,
    pub isa: Vec<IsaText>,
}

/// The data of a capture's page: these fields, then `report`, then those
/// of [`CaptureTail`] ([`write_capture_data`]).
#[derive(Serialize)]
struct CaptureHead {
    /// `capture` (a `diff`'s page says `diff`).
    kind: &'static str,
    dir: String,
    /// The names of the instruction classes of [`IsaRef::classes`].
    classes: Vec<&'static str>,
}

/// The data of a capture's page after its report.
#[derive(Serialize)]
struct CaptureTail {
    /// Each kernel's name as the terminal table names it (told apart from
    /// the others, not escaped), in `report.kernels` order.
    names: Vec<String>,
    /// Each kernel's most launched shape and its occupancy as the
    /// terminal table's columns give them (`64 x 16`, `12.5% launch`), in
    /// `report.kernels` order; empty when no kernel has shapes (the table
    /// has no such columns then).
    tops: Vec<[String; 2]>,
    /// Each kernel's time and share as the terminal table's columns give
    /// them, in `report.kernels` order (none without `--time`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    times: Vec<[String; 2]>,
    /// The terminal table's lines of the run's device time (`--time`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    device_time: Vec<String>,
    /// Each kernel's ISA, in `report.kernels` order.
    isa: Vec<IsaRef>,
}

/// The compressed ISA a page holds at most, and the kernels whose ISA it
/// holds at most: kernels past either (in report order: the most launched
/// first) are listed without their text, which stays in its file (its
/// `asm/` copy, else its dump). They bound what the page adds to a
/// collection (reading and compressing 1,000 kernels' ISA of 22 KB each
/// takes about 0.06 s of CPU: 6% of a collection of 100,000 kernels of
/// which a tenth launched).
pub const MAX_PAGE_ISA_BYTES: usize = 16 << 20;
pub const MAX_PAGE_ISA_KERNELS: usize = 2000;

/// The ISA texts of `kernels` (their readable copy under `asm/`, else the
/// file shown), read from the capture `dir` and compressed, on every core,
/// in report order until [`MAX_PAGE_ISA_BYTES`]: element ids
/// `{prefix}-{index}`.
pub fn read_isa(dir: &Path, kernels: &[KernelEntry], prefix: &str) -> (Vec<IsaRef>, Vec<IsaText>) {
    read_isa_from(dir, kernels, prefix, &|_| None)
}

/// [`read_isa`], reading kernel `i`'s text from `file(i)` when it says.
fn read_isa_from(
    dir: &Path,
    kernels: &[KernelEntry],
    prefix: &str,
    file: &(dyn Fn(usize) -> Option<PathBuf> + Sync),
) -> (Vec<IsaRef>, Vec<IsaText>) {
    let mut refs = Vec::with_capacity(kernels.len());
    let mut texts = Vec::new();
    let mut total = 0usize;
    // Chunks in order, each read in parallel: the budget is spent in
    // report order whatever the threads do.
    for (c, chunk) in kernels.chunks(256).enumerate() {
        if total > MAX_PAGE_ISA_BYTES || texts.len() >= MAX_PAGE_ISA_KERNELS {
            refs.extend(chunk.iter().map(|k| left_out(k, total)));
            continue;
        }
        let read: Vec<(IsaRef, Option<IsaText>)> = chunk
            .par_iter()
            .enumerate()
            .map(|(i, k)| {
                let n = c * 256 + i;
                read_one(dir, k, file(n), format!("{prefix}-{n}"))
            })
            .collect();
        for (k, (r, t)) in chunk.iter().zip(read) {
            match t {
                Some(_) if total > MAX_PAGE_ISA_BYTES || texts.len() >= MAX_PAGE_ISA_KERNELS => {
                    refs.push(left_out(k, total))
                }
                Some(t) => {
                    total += t.gzip.len();
                    refs.push(r);
                    texts.push(t);
                }
                None => refs.push(r),
            }
        }
    }
    (refs, texts)
}

/// A kernel whose ISA the page has no room for.
fn left_out(k: &KernelEntry, total: usize) -> IsaRef {
    let file = k.asm_copy.as_deref().or(k.asm.as_deref());
    IsaRef {
        note: file.map(|f| {
            format!(
                "left out: a page holds the ISA of {MAX_PAGE_ISA_KERNELS} kernels and {} MiB of \
                 compressed ISA at most (this one {} MiB); {f} has it",
                MAX_PAGE_ISA_BYTES >> 20,
                total >> 20
            )
        }),
        ..IsaRef::default()
    }
}

/// One kernel's ISA text, read (from `file` when given) and compressed,
/// as element `id`.
fn read_one(
    dir: &Path,
    k: &KernelEntry,
    file: Option<PathBuf>,
    id: String,
) -> (IsaRef, Option<IsaText>) {
    let Some(rel) = k.asm_copy.as_deref().or(k.asm.as_deref()) else {
        return (IsaRef::default(), None);
    };
    match read_capped(&file.unwrap_or_else(|| dir.join(rel))) {
        Ok(bytes) => {
            let r = IsaRef {
                id: Some(id.clone()),
                bytes: bytes.len() as u64,
                note: None,
                // Decoded only when not UTF-8 already (IGC writes ASCII).
                classes: Some(match std::str::from_utf8(&bytes) {
                    Ok(text) => class_letters(text),
                    Err(_) => class_letters(&String::from_utf8_lossy(&bytes)),
                }),
            };
            (
                r,
                Some(IsaText {
                    id,
                    gzip: gzip(&bytes),
                }),
            )
        }
        Err(e) => {
            let note = Some(format!("{rel}: {e}"));
            (
                IsaRef {
                    note,
                    ..IsaRef::default()
                },
                None,
            )
        }
    }
}

/// The file at `path`, unless larger than [`MAX_ISA_BYTES`].
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = crate::capture::files::open_noatime(path)?;
    let len = f.metadata()?.len();
    if len > MAX_ISA_BYTES {
        return Err(std::io::Error::other(format!(
            "{len} bytes, more than a page holds ({MAX_ISA_BYTES})"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `bytes` in gzip, as `flate2`'s `GzEncoder` at its fastest level
/// writes it (the same header, deflate stream and trailer), with the
/// thread's compressor reset rather than made anew: a new one is
/// hundreds of KiB of tables allocated and zeroed, more than compressing
/// a kernel's text costs. The backend is `zlib-rs` (zlib-ng's deflate in
/// Rust): its fastest level took 5% less of a collection's CPU than
/// `miniz_oxide`'s (a tenth of 100,000 kernels launched, paired rounds),
/// for texts 4% larger.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    thread_local! {
        static DEFLATE: std::cell::RefCell<Option<Compress>> = const { std::cell::RefCell::new(None) };
    }
    // No name, no time; extra flags 4: the fastest level; OS unknown.
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255];
    let mut out = Vec::with_capacity(bytes.len() / 4 + 64);
    out.extend_from_slice(&HEADER);
    DEFLATE.with_borrow_mut(|d| {
        let d = d.get_or_insert_with(|| Compress::new(Compression::fast(), false));
        d.reset();
        // As the encoder feeds it (the stream depends on the room it is
        // given): all the input unflushed, then the end, each time into
        // a buffer of 32 KiB emptied into `out`.
        let mut buf: Vec<u8> = Vec::with_capacity(32 * 1024);
        let mut input = bytes;
        while !input.is_empty() {
            out.append(&mut buf);
            let before = d.total_in();
            if d.compress_vec(input, &mut buf, FlushCompress::None)
                .is_err()
            {
                break;
            }
            input = &input[(d.total_in() - before) as usize..];
        }
        loop {
            out.append(&mut buf);
            match d.compress_vec(&[], &mut buf, FlushCompress::Finish) {
                Ok(Status::StreamEnd) | Err(_) => break,
                Ok(_) => {}
            }
        }
        out.append(&mut buf);
    });
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out
}

/// Writes the page of the capture `dir` as `dir/report.html`.
pub fn write_capture_page(dir: &Path, report: &Report) -> Result<(), CollectError> {
    write_capture_page_pending(dir, report, &|_| None)?.commit()
}

/// The page of the capture `dir`, written next to `dir/report.html`, to
/// be put in place by [`Pending::commit`]. The ISA text of kernel `i` of
/// the report is read from `file(i)` when it says (the file its `asm/`
/// copy is being made of: the same bytes), else from the copy or file the
/// entry names.
pub fn write_capture_page_pending(
    dir: &Path,
    report: &Report,
    file: &(dyn Fn(usize) -> Option<PathBuf> + Sync),
) -> Result<Pending, CollectError> {
    write_capture_page_from(dir, report, file, None)
}

/// [`write_capture_page_pending`], the kernels' JSON taken from `shared`
/// when given.
pub fn write_capture_page_from(
    dir: &Path,
    report: &Report,
    file: &(dyn Fn(usize) -> Option<PathBuf> + Sync),
    mut shared: Option<pieces::Reader>,
) -> Result<Pending, CollectError> {
    write_pending(&dir.join(PAGE_FILE), |w| {
        write_capture_page_to(w, dir, report, file, shared.as_mut())
    })
}

/// The page of the capture `dir`, streamed to `w`.
fn write_capture_page_to(
    w: &mut dyn Write,
    dir: &Path,
    report: &Report,
    file: &(dyn Fn(usize) -> Option<PathBuf> + Sync),
    mut shared: Option<&mut pieces::Reader>,
) -> std::io::Result<()> {
    // Of the kernels the page holds, the names made while the ISA is read
    // (both on every core); the other reader of the kernels' JSON told
    // at once that none past them is to be held for the page.
    let n = page_count(report);
    if let Some(r) = shared.as_deref_mut() {
        r.only_first(r.batches_of_first(n));
    }
    let ((isa, texts), names) = rayon::join(
        || read_isa_from(dir, &report.kernels[..n], "isa", file),
        || super::table::short_names(report, n),
    );
    let head = CaptureHead {
        kind: "capture",
        dir: dir.display().to_string(),
        classes: classes(),
    };
    let kernels = &report.kernels[..n];
    let tops = match kernels.iter().any(|k| !k.shapes.is_empty()) {
        true => kernels
            .iter()
            .map(|k| <[String; 2]>::from(super::shapes_text::top(k)))
            .collect(),
        false => Vec::new(),
    };
    let (times, device_time) = super::table::page_times(report, kernels);
    let tail = CaptureTail {
        names,
        tops,
        times,
        device_time,
        isa,
    };
    let title = format!("xpu-asm: {}", dir.display());
    render_with(w, &title, &texts, &mut |w| {
        write_capture_data(w, &head, report, &tail, shared.as_deref_mut())
    })
}

/// The capture page's data: what serializing one object of the fields of
/// `head`, then `report` with the kernels the page holds ([`page_count`]),
/// then those of `tail` writes, the report written in [`pieces`] (its
/// kernels on every core).
fn write_capture_data(
    w: &mut dyn Write,
    head: &CaptureHead,
    report: &Report,
    tail: &CaptureTail,
    shared: Option<&mut pieces::Reader>,
) -> std::io::Result<()> {
    let (head, tail) = (serde_json::to_vec(head)?, serde_json::to_vec(tail)?);
    let (Some(head), Some(tail)) = (head.strip_suffix(b"}"), tail.strip_prefix(b"{")) else {
        return Err(std::io::Error::other("a page's fields are not an object"));
    };
    w.write_all(head)?;
    w.write_all(b",\"report\":")?;
    pieces::write_report_first(w, report, page_count(report), Layout::Compact, shared)?;
    w.write_all(b",")?;
    w.write_all(tail)
}

/// The page: the template with its style, data, ISA texts and script.
pub fn render<T: Serialize>(p: &Page<'_, T>) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = render_to(&mut out, p);
    String::from_utf8(out).unwrap_or_default()
}

/// [`render`], streamed to `w`: the data is serialized and made safe for
/// its element on the way, never held whole (a capture's is hundreds of
/// MB).
pub fn render_to<T: Serialize>(w: &mut dyn Write, p: &Page<'_, T>) -> std::io::Result<()> {
    render_with(w, p.title, &p.isa, &mut |w| {
        // Large writes to escape: the serializer's many small ones gathered.
        let mut b = std::io::BufWriter::with_capacity(64 << 10, w);
        serde_json::to_writer(&mut b, p.data)?;
        b.flush()
    })
}

/// [`render_to`] of a page whose data `json` writes.
fn render_with(
    w: &mut dyn Write,
    title: &str,
    isa: &[IsaText],
    json: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tool = format!("xpu-asm-run {}", env!("CARGO_PKG_VERSION"));
    let title = html_text(title);
    let (mut data, mut texts) = (true, true);
    fill_to(w, TEMPLATE, |name, w| {
        match name {
            "CSP" => w.write_all(csp().as_bytes())?,
            "TOOL" => w.write_all(tool.as_bytes())?,
            "TITLE" => w.write_all(title.as_bytes())?,
            "STYLE" => w.write_all(STYLE.as_bytes())?,
            "DATA" if std::mem::take(&mut data) => write_data(w, json)?,
            "ISA" if std::mem::take(&mut texts) => write_isa(w, isa)?,
            "SCRIPT" => w.write_all(SCRIPT.as_bytes())?,
            _ => return Ok(false),
        }
        Ok(true)
    })
}

/// The JSON `json` writes, made safe inside a `<script>` element
/// ([`script_json`]).
fn write_data(
    w: &mut dyn Write,
    json: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut safe = ScriptSafe {
        inner: w,
        held: Vec::new(),
    };
    json(&mut safe)?;
    safe.finish()
}

/// The ISA texts' elements, one a line.
fn write_isa(w: &mut dyn Write, texts: &[IsaText]) -> std::io::Result<()> {
    let mut b64 = String::new();
    for t in texts {
        // Ids are ours (`isa-3`), base64 has no markup characters.
        w.write_all(b"<script type=\"application/x-gzip-base64\" id=\"")?;
        w.write_all(html_text(&t.id).as_bytes())?;
        w.write_all(b"\">")?;
        b64.clear();
        base64_into(&t.gzip, &mut b64);
        w.write_all(b64.as_bytes())?;
        w.write_all(b"</script>\n")?;
    }
    Ok(())
}

/// Passes JSON text on with what [`script_json`] escapes escaped. A line
/// separator cut between two writes is held until the next.
struct ScriptSafe<'a> {
    inner: &'a mut dyn Write,
    /// The start of a separator (`E2`, or `E2 80`) that ended a write.
    held: Vec<u8>,
}

impl ScriptSafe<'_> {
    fn escape(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if memchr::memchr(0xE2, buf).is_none() {
            return self.escape_ascii_marks(buf);
        }
        let mut start = 0;
        let mut i = 0;
        while i < buf.len() {
            let (esc, len): (&[u8], usize) = match buf[i] {
                b'<' => (b"\\u003c", 1),
                b'>' => (b"\\u003e", 1),
                b'&' => (b"\\u0026", 1),
                0xE2 => match buf.get(i + 1..i + 3) {
                    Some([0x80, 0xA8]) => (b"\\u2028", 3),
                    Some([0x80, 0xA9]) => (b"\\u2029", 3),
                    None if buf[i + 1..].iter().all(|&b| b == 0x80) => {
                        self.inner.write_all(&buf[start..i])?;
                        self.held.extend_from_slice(&buf[i..]);
                        return Ok(());
                    }
                    _ => {
                        i += 1;
                        continue;
                    }
                },
                _ => {
                    i += 1;
                    continue;
                }
            };
            self.inner.write_all(&buf[start..i])?;
            self.inner.write_all(esc)?;
            i += len;
            start = i;
        }
        self.inner.write_all(&buf[start..])
    }

    /// [`ScriptSafe::escape`] of text without a line separator: only `<`,
    /// `>` and `&` to escape, found by memchr3.
    fn escape_ascii_marks(&mut self, buf: &[u8]) -> std::io::Result<()> {
        let mut start = 0;
        for i in memchr::memchr3_iter(b'<', b'>', b'&', buf) {
            let esc: &[u8] = match buf[i] {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                _ => b"\\u0026",
            };
            self.inner.write_all(&buf[start..i])?;
            self.inner.write_all(esc)?;
            start = i + 1;
        }
        self.inner.write_all(&buf[start..])
    }

    /// Writes what is held (the end of the text).
    fn finish(mut self) -> std::io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.inner.write_all(&held)
    }
}

impl Write for ScriptSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.held.is_empty() {
            self.escape(buf)?;
        } else {
            let mut joined = std::mem::take(&mut self.held);
            joined.extend_from_slice(buf);
            self.escape(&joined)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `template` with each `{{NAME}}` replaced by `value(NAME)`, in one pass:
/// what is put in is never read again.
#[cfg(test)]
fn fill(template: &str, mut value: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = Vec::new();
    let _ = fill_to(&mut out, template, |name, w| match value(name) {
        Some(v) => w.write_all(v.as_bytes()).map(|_| true),
        None => Ok(false),
    });
    String::from_utf8(out).unwrap_or_default()
}

/// `template` written to `w` with each `{{NAME}}` replaced by what
/// `value(NAME, w)` writes (false: nothing, the placeholder stays), in one
/// pass: what is put in is never read again.
fn fill_to(
    w: &mut dyn Write,
    template: &str,
    mut value: impl FnMut(&str, &mut dyn Write) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        w.write_all(&rest.as_bytes()[..start])?;
        if !value(name, w)? {
            w.write_all(&rest.as_bytes()[start..start + 4 + len])?;
        }
        rest = &rest[start + 4 + len..];
    }
    w.write_all(rest.as_bytes())
}

/// The page's policy: its own script and style only (by their hashes),
/// images from data, nothing from the network.
fn csp() -> String {
    format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_source(SCRIPT),
        sha256_source(STYLE)
    )
}

fn sha256_source(s: &str) -> String {
    let mut out = String::from("sha256-");
    base64_into(&Sha256::digest(s.as_bytes()), &mut out);
    out
}

/// JSON text made safe inside a `<script>` element: `<`, `>`, `&` and the
/// line separators U+2028 and U+2029 as `\u` escapes (they occur only
/// inside strings, where an escape means the same character), so that no
/// `</script>` nor `<!--` can appear.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for an HTML element or attribute.
pub fn html_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (with padding) of `bytes`, appended to `out`.
pub fn base64_into(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        let sym = |shift: u32| BASE64[((n >> shift) & 63) as usize] as char;
        out.push(sym(18));
        out.push(sym(12));
        out.push(if c.len() > 1 { sym(6) } else { '=' });
        out.push(if c.len() > 2 { sym(0) } else { '=' });
    }
}

/// The ISA texts of a page read back: element id, text.
pub type PageIsa = Vec<(String, Vec<u8>)>;

/// What a page holds, read back from its text: its data, and each ISA
/// text by element id (decompressed). For tests and tools that check a
/// page without a browser.
pub fn read_page(html: &str) -> Result<(serde_json::Value, PageIsa), String> {
    let open = "<script id=\"data\" type=\"application/json\">";
    let start = html.find(open).ok_or("no data element")? + open.len();
    let len = html[start..]
        .find("</script>")
        .ok_or("the data element is not closed")?;
    let data = serde_json::from_str(&html[start..start + len]).map_err(|e| e.to_string())?;
    let mut isa = Vec::new();
    let tag = "<script type=\"application/x-gzip-base64\" id=\"";
    let mut rest = &html[start + len..];
    while let Some(p) = rest.find(tag) {
        rest = &rest[p + tag.len()..];
        let q = rest.find("\">").ok_or("an ISA element is not closed")?;
        let id = rest[..q].to_string();
        rest = &rest[q + 2..];
        let end = rest
            .find("</script>")
            .ok_or("an ISA element is not closed")?;
        let gz = base64_decode(&rest[..end]).ok_or_else(|| format!("{id}: not base64"))?;
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text)
            .map_err(|e| format!("{id}: {e}"))?;
        isa.push((id, text));
        rest = &rest[end..];
    }
    Ok((data, isa))
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| BASE64.iter().position(|&b| b == c).map(|v| v as u32);
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.chunks(4) {
        let mut n = 0u32;
        for (i, &b) in c.iter().enumerate() {
            n |= val(b)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..c.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_data_in_pieces_is_the_whole_serialized() {
        #[derive(Serialize)]
        struct Whole<'a> {
            kind: &'static str,
            dir: String,
            classes: Vec<&'static str>,
            report: &'a Report,
            names: Vec<String>,
            tops: Vec<[String; 2]>,
            times: Vec<[String; 2]>,
            device_time: Vec<String>,
            isa: Vec<IsaRef>,
        }
        let report = pieces::rich_report(70);
        let head = CaptureHead {
            kind: "capture",
            dir: "/tmp/a\"b<".into(),
            classes: classes(),
        };
        let one = IsaRef {
            id: Some("isa-0".into()),
            bytes: 3,
            note: None,
            classes: Some("ab".into()),
        };
        let tail = CaptureTail {
            names: vec!["a<b>".into(); 70],
            tops: vec![["64 x 16".into(), "12.5% launch".into()]; 70],
            times: vec![["~1.68 ms".into(), "51.3%".into()]; 70],
            device_time: vec!["device time: 1.68 ms".into()],
            isa: vec![one; 70],
        };
        let mut out = Vec::new();
        write_capture_data(&mut out, &head, &report, &tail, None).unwrap();
        let whole = Whole {
            kind: head.kind,
            dir: head.dir.clone(),
            classes: head.classes.clone(),
            report: &report,
            names: tail.names.clone(),
            tops: tail.tops.clone(),
            times: tail.times.clone(),
            device_time: tail.device_time.clone(),
            isa: tail.isa.clone(),
        };
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&whole).unwrap()
        );
    }

    /// The compressor reused is the gzip a new `GzEncoder` writes, on
    /// texts small and large, one after another on the same thread.
    #[test]
    fn gzip_is_flate2s() {
        // Text that compresses poorly: its gzip needs more than one of
        // the encoder's 32 KiB buffers.
        let mut t = Vec::new();
        let mut seed = 7u64;
        while t.len() < 90_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t.extend_from_slice(format!("r{:x} ", seed >> 20).as_bytes());
        }
        for len in [0, 1, 5000, 90_000, 20] {
            let t = &t[..len];
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(t).unwrap();
            let want = e.finish().unwrap();
            assert_eq!(gzip(t), want, "{len} bytes");
            assert!(len < 90_000 || want.len() > 40 * 1024, "{}", want.len());
        }
    }

    #[test]
    fn base64_round_trips() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let mut e = String::new();
            base64_into(s.as_bytes(), &mut e);
            assert_eq!(base64_decode(&e).unwrap(), s.as_bytes(), "{e}");
        }
        let mut e = String::new();
        base64_into(b"foobar", &mut e);
        assert_eq!(e, "Zm9vYmFy");
        e.clear();
        base64_into(b"fo", &mut e);
        assert_eq!(e, "Zm8=");
    }

    #[test]
    fn hostile_names_cannot_leave_the_data_element() {
        let name = "</script><script>alert(1)</script><!-- \u{2028} & '\"";
        let json = script_json(&serde_json::to_string(&name).unwrap());
        assert!(!json.contains('<') && !json.contains('>') && !json.contains('&'));
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), name);
        assert_eq!(
            html_text("<b a=\"x\">&'\n"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;\u{fffd}"
        );
    }

    /// The streamed escaping is [`script_json`]'s, however the text is cut
    /// into writes (a line separator cut in two included).
    #[test]
    fn streamed_escaping_is_script_json() {
        let text = "{\"a\":\"</script>&<!--\u{2028}x\u{2029}\u{2027}é€\"}\u{2028}";
        let want = script_json(text);
        let bytes = text.as_bytes();
        for step in 1..=bytes.len() {
            let mut out = Vec::new();
            let mut safe = ScriptSafe {
                inner: &mut out,
                held: Vec::new(),
            };
            for chunk in bytes.chunks(step) {
                safe.write_all(chunk).unwrap();
            }
            safe.finish().unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "writes of {step}");
        }
    }

    #[test]
    fn placeholders_are_filled_once() {
        let out = fill("a{{X}}b{{Y}}c{{Z}}", |n| match n {
            "X" => Some("{{Y}}".into()),
            "Y" => Some("y".into()),
            _ => None,
        });
        assert_eq!(out, "a{{Y}}byc{{Z}}");
    }

    #[test]
    fn a_page_reads_back() {
        let data = serde_json::json!({"name": "</script><!--", "n": 3});
        let text = b"(W) mov (16|M0) r1.0<1>:ud 0x0:ud\n\xff\n".to_vec();
        let html = render(&Page {
            title: "t <x>",
            data: &data,
            isa: vec![IsaText {
                id: "isa-0".into(),
                gzip: gzip(&text),
            }],
        });
        assert!(html.contains("<title>t &lt;x&gt;</title>"));
        assert_eq!(html.matches("</script>").count(), 3);
        let (back, isa) = read_page(&html).unwrap();
        assert_eq!(back, data);
        assert_eq!(isa, vec![("isa-0".to_string(), text)]);
        assert!(html.contains(&sha256_source(SCRIPT)));
    }
}
