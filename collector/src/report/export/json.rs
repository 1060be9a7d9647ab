//! The report as JSON: `report.json`, and what `--json` prints.

use crate::report::Report;
use std::io::Write;

/// `report` as pretty JSON and a newline, streamed (the report of a large
/// capture is 100+ MB of JSON).
pub fn write(w: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    w.write_all(b"\n")
}
