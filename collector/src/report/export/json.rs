//! The report as JSON: `report.json`, and what `--json` prints.

use crate::report::Report;
use std::io::Write;

/// `report` as pretty JSON and a newline, streamed (the report of a large
/// capture is 100+ MB of JSON).
pub fn write(w: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    write_from(w, report, None)
}

/// [`write`], the kernels' JSON taken from `shared` when given.
pub fn write_from(
    w: &mut dyn Write,
    report: &Report,
    shared: Option<&mut super::pieces::Reader>,
) -> std::io::Result<()> {
    // A buffer of a type the serializer knows: its many small writes are
    // copies into it, not calls through `dyn Write`.
    let mut b = std::io::BufWriter::with_capacity(64 << 10, w);
    // Its kernels serialized on every core.
    super::pieces::write_report_from(&mut b, report, super::pieces::Layout::Pretty, shared)?;
    b.write_all(b"\n")?;
    b.flush()
}
