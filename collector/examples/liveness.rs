//! Compares xpu-asm's liveness (from the operands in IGA's JSON) with IGA's
//! own dataflow (`-Xprint-defs`) on every kernel of native module binaries.
//!
//!     cargo run --release -p xpu-asm-collector --example liveness -- FILE...
//!
//! Prints, per kernel: its instructions, the instructions where the live
//! GRF bytes are equal, the largest difference (ours minus IGA's, bytes),
//! the peak of each (registers), and the time each took.

use std::time::Instant;
use xpu_asm_collector::analysis::flow::{analyze, Inputs};
use xpu_asm_isa::igajson::parse;
use xpu_asm_isa::native::iga::Iga;

fn main() {
    let iga = Iga::load().unwrap_or_else(|e| {
        eprintln!("liveness: {e}");
        std::process::exit(2)
    });
    println!(
        "{:<40} {:>6} {:>6} {:>7} {:>7} {:>5} {:>5} {:>9} {:>9}",
        "kernel", "insts", "equal", "min", "max", "peakI", "peakO", "iga_ms", "ours_ms"
    );
    let mut totals = (0usize, 0usize, 0f64, 0f64);
    for f in std::env::args().skip(1) {
        let bytes = std::fs::read(&f).expect("read");
        let program = match xpu_asm_isa::native::parse(&bytes, None) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{f}: {e}");
                continue;
            }
        };
        let Some(platform) = program.platform.clone() else {
            eprintln!("{f}: no platform");
            continue;
        };
        let grf = platform.grf_bytes();
        for k in &program.kernels {
            let t = Instant::now();
            let with = iga
                .disassemble_json(&platform, &k.code, true)
                .expect("json");
            let theirs = parse(&with).expect("parse");
            let iga_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let without = iga
                .disassemble_json(&platform, &k.code, false)
                .expect("json");
            let mut ours = parse(&without).expect("parse");
            let inputs = Inputs {
                classes: &[],
                lines: None,
                grf_bytes: grf,
                budget: None,
            };
            let fo = analyze(&mut ours, &inputs);
            let ours_ms = t.elapsed().as_secs_f64() * 1e3;
            let mut theirs_c = theirs.clone();
            let fi = analyze(&mut theirs_c, &inputs);
            let n = theirs.insts.len().min(ours.insts.len());
            let mut equal = 0;
            let (mut lo, mut hi) = (0i64, 0i64);
            for i in 0..n {
                let a = theirs.insts[i].live_bytes.unwrap_or(0) as i64;
                let b = ours.insts[i].live_bytes.unwrap_or(0) as i64;
                if a == b {
                    equal += 1;
                }
                lo = lo.min(b - a);
                hi = hi.max(b - a);
            }
            let name = String::from_utf8_lossy(&k.name);
            let spilled = ours
                .insts
                .iter()
                .map(|i| i.spilled_bytes)
                .max()
                .unwrap_or(0);
            if spilled > 0 {
                println!(
                    "{name}: spilled values up to {spilled} bytes, peak {:?}",
                    fo.peak
                );
            }
            if std::env::var("LIVENESS_DUMP").is_ok_and(|d| d == name) {
                for i in 0..n {
                    let (t, o) = (&theirs.insts[i], &ours.insts[i]);
                    println!(
                        "{i:5} {:>6} {:>6} {} {} {}",
                        t.live_bytes.unwrap_or(0),
                        o.live_bytes.unwrap_or(0),
                        t.op,
                        t.subop,
                        if t.predicated { "(pred)" } else { "" }
                    );
                }
            }
            let short: String = name.chars().take(40).collect();
            println!(
                "{:<40} {:>6} {:>6} {:>7} {:>7} {:>5} {:>5} {:>9.2} {:>9.2}",
                short,
                n,
                equal,
                lo,
                hi,
                fi.peak.as_ref().map_or(0, |p| p.grf),
                fo.peak.as_ref().map_or(0, |p| p.grf),
                iga_ms,
                ours_ms
            );
            totals.0 += n;
            totals.1 += equal;
            totals.2 += iga_ms;
            totals.3 += ours_ms;
        }
    }
    println!(
        "total: {} instructions, {} equal ({:.2}%), IGA {:.1} ms, ours {:.1} ms",
        totals.0,
        totals.1,
        100.0 * totals.1 as f64 / totals.0.max(1) as f64,
        totals.2,
        totals.3
    );
}
