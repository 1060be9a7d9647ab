//! How fast the collector analyses ISA text (source lines and instruction
//! mix, `isa::analyze`), on one thread, from memory: the part of a
//! collection's scan that is not reading files. Prints nanoseconds per
//! line and megabytes per second, medians of the rounds.
//!
//! `cargo run --release -p xpu-asm-collector --example analyze_speed -- FOLDER [--rounds N]`
//! (FOLDER: a dump folder, e.g. one of bench/gen_capture.py's).

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: analyze_speed FOLDER [--rounds N]")?;
    let rounds: usize = match (args.next().as_deref(), args.next()) {
        (Some("--rounds"), Some(n)) => n.parse()?,
        _ => 5,
    };
    let mut texts = Vec::new();
    for e in std::fs::read_dir(&dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "asm") {
            texts.push(std::fs::read_to_string(&p)?);
        }
    }
    texts.sort();
    let bytes: usize = texts.iter().map(String::len).sum();
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    let mut times = Vec::new();
    let mut instructions = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        instructions = texts
            .iter()
            .map(|t| xpu_asm_isa::analyze(t).mix.instructions)
            .sum::<u64>();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let med = times[times.len() / 2];
    println!(
        "analyze_files={} analyze_bytes={bytes} analyze_lines={lines} analyze_instructions={instructions} \
         analyze_ns_per_line={:.1} analyze_mb_per_s={:.0} analyze_s={med:.3} analyze_s_lo={:.3}",
        texts.len(),
        med * 1e9 / lines as f64,
        bytes as f64 / med / 1e6,
        times[0]
    );
    Ok(())
}
