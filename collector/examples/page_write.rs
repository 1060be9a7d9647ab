//! Writes the page of a capture (`DIR/report.html`) from its `report.json`
//! and prints how long that took and how large the page is: the cost the
//! page adds to a collection (scripts/bench.sh runs it).
//!
//! `cargo run --release -p xpu-asm-collector --example page_write -- DIR [--rounds N]`

use std::time::Instant;
use xpu_asm_collector::report::export::html;
use xpu_asm_collector::report::Report;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: page_write DIR [--rounds N]")?);
    let rounds: usize = match (args.next().as_deref(), args.next()) {
        (Some("--rounds"), Some(n)) => n.parse()?,
        _ => 3,
    };
    let report: Report = serde_json::from_slice(&std::fs::read(dir.join("report.json"))?)?;
    let mut times = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        html::write_capture_page(&dir, &report)?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let page = std::fs::metadata(dir.join(html::PAGE_FILE))?.len();
    let isa: u64 = report
        .kernels
        .iter()
        .filter_map(|k| k.asm_copy.as_ref())
        .filter_map(|p| std::fs::metadata(dir.join(p)).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "page_kernels={} page_write_s={:.3} page_write_s_lo={:.3} page_write_s_hi={:.3} page_bytes={page} page_isa_bytes={isa}",
        report.kernels.len(),
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    Ok(())
}
