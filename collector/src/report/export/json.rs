//! The report as JSON: `report.json`, and what `--json` prints.

use crate::report::Report;
use std::io::Write;

/// `report` as pretty JSON and a newline, streamed (the report of a large
/// capture is 100+ MB of JSON).
pub fn write(w: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    // A buffer of a type the serializer knows: its many small writes are
    // copies into it, not calls through `dyn Write`.
    let mut b = std::io::BufWriter::with_capacity(64 << 10, w);
    // Its kernels serialized on every core.
    super::pieces::write_report(&mut b, report, super::pieces::Layout::Pretty)?;
    b.write_all(b"\n")?;
    b.flush()
}
