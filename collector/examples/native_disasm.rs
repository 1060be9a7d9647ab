//! Disassembles every kernel of native GPU binaries with IGA, in-process,
//! and prints how fast: `cargo run --release -p xpu-asm-collector --example
//! native_disasm -- [--device pvc] [--rounds N] [--print] FILE...`.

use std::time::Instant;
use xpu_asm_collector::native::{self, iga::Iga, Device};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut device = None;
    let mut rounds = 1usize;
    let mut print = false;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--device" => {
                device = Some(Device {
                    product: args.next(),
                    ..Device::default()
                })
            }
            "--rounds" => rounds = args.next().ok_or("--rounds needs a number")?.parse()?,
            "--print" => print = true,
            _ => files.push(a),
        }
    }
    let iga = Iga::load()?;
    let mut kernels = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f)?;
        let p = native::parse(&bytes, device.as_ref())?;
        eprintln!(
            "{f}: {} {:?} {:?}, {} kernels",
            p.format,
            p.fat_entry,
            p.platform,
            p.kernels.len()
        );
        for k in &p.kernels {
            kernels.push((p.clone(), k.clone()));
        }
    }
    if print {
        for (p, k) in &kernels {
            let platform = p.platform.as_ref().ok_or("no platform")?;
            let text = iga.disassemble(platform, &k.code)?;
            print!("{}", native::render_asm(k, p, &text));
        }
        return Ok(());
    }
    let start = Instant::now();
    let mut n = 0usize;
    let mut bytes = 0usize;
    for _ in 0..rounds {
        for (p, k) in &kernels {
            let platform = p.platform.as_ref().ok_or("no platform")?;
            let text = iga.disassemble(platform, &k.code)?;
            bytes += text.len();
            n += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{n} kernels disassembled in {secs:.3} s: {:.0} kernels/s, {:.1} µs/kernel, {} bytes of text",
        n as f64 / secs,
        secs * 1e6 / n as f64,
        bytes
    );
    Ok(())
}
