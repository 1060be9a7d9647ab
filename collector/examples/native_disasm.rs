//! Disassembles every kernel of native GPU binaries with IGA, in-process,
//! and prints how fast, on one thread and on several:
//!
//! `cargo run --release -p xpu-asm-collector --example native_disasm --
//! [--device pvc] [--rounds N] [--threads N] [--print] FILE...`
//!
//! `--print` writes each kernel's rendered `.asm` to stdout instead.

use std::time::Instant;
use xpu_asm_isa::native::{self, iga::Iga, Device, NativeKernel, Platform};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut device = None;
    let mut rounds = 5usize;
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
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
            "--threads" => threads = args.next().ok_or("--threads needs a number")?.parse()?,
            "--print" => print = true,
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        return Err("no binaries given".into());
    }
    let start = Instant::now();
    let iga = Iga::load()?;
    let sources = native::SourceFiles::default();
    let load = start.elapsed();
    let mut work: Vec<(Platform, NativeKernel)> = Vec::new();
    let mut instructions = 0usize;
    let binaries: Vec<Vec<u8>> = files.iter().map(std::fs::read).collect::<Result<_, _>>()?;
    let start = Instant::now();
    let programs: Vec<native::Program> = binaries
        .iter()
        .map(|b| native::parse(b, device.as_ref()))
        .collect::<Result<_, _>>()?;
    let parse = start.elapsed();
    let bytes: usize = binaries.iter().map(Vec::len).sum();
    for p in &programs {
        let platform = p
            .platform
            .clone()
            .ok_or("the binary names no platform; give --device")?;
        for k in &p.kernels {
            let text = iga.disassemble(&platform, &k.code)?;
            if print {
                print!("{}", native::render_asm(k, p, &text, &sources));
            }
            instructions += native::instructions(&text).len();
            work.push((platform.clone(), k.clone()));
        }
    }
    if print {
        return Ok(());
    }
    println!(
        "IGA {} ({}) loaded in {:.1} ms; {} binaries ({} bytes) parsed in {:.2} ms ({:.0} MB/s); {} kernels, {} instructions",
        iga.version(),
        iga.path(),
        load.as_secs_f64() * 1e3,
        binaries.len(),
        bytes,
        parse.as_secs_f64() * 1e3,
        bytes as f64 / parse.as_secs_f64() / 1e6,
        work.len(),
        instructions,
    );
    let mut base_cpu = None;
    for t in [1, threads] {
        let mut rates = Vec::new();
        let mut cpus = Vec::new();
        // Voluntary context switches: a thread waiting for a lock inside
        // IGA would show here, a busy machine would not.
        let mut waits = 0i64;
        for _ in 0..rounds {
            let start = Instant::now();
            let cpu: f64 = std::thread::scope(|s| {
                let chunk = work.len().div_ceil(t);
                let handles: Vec<_> = work
                    .chunks(chunk)
                    .map(|part| {
                        let iga = &iga;
                        s.spawn(move || {
                            let (cpu, waits) = thread_usage();
                            for (platform, k) in part {
                                iga.disassemble(platform, &k.code)
                                    .expect("disassembled once already");
                            }
                            let (cpu_end, waits_end) = thread_usage();
                            (cpu_end - cpu, waits_end - waits)
                        })
                    })
                    .collect();
                let mut total = 0.0;
                for h in handles {
                    let (cpu, w) = h.join().expect("no panic");
                    total += cpu;
                    waits += w;
                }
                total
            });
            rates.push(work.len() as f64 / start.elapsed().as_secs_f64());
            cpus.push(cpu * 1e6 / work.len() as f64);
        }
        rates.sort_by(f64::total_cmp);
        cpus.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        let cpu = cpus[cpus.len() / 2];
        let ratio = base_cpu.map_or(String::new(), |b: f64| {
            format!(" ({:.2}x one thread's)", cpu / b)
        });
        base_cpu.get_or_insert(cpu);
        println!(
            "{t} thread(s): median {median:.0} kernels/s ({:.0} instructions/s; min {:.0}, max {:.0} over {rounds} rounds); median CPU time {cpu:.0} µs per kernel{ratio}; {:.3} waits per kernel",
            median * instructions as f64 / work.len() as f64,
            rates[0],
            rates[rates.len() - 1],
            waits as f64 / (rounds * work.len()) as f64
        );
    }
    Ok(())
}

/// CPU time of the calling thread in seconds (unlike wall time, not
/// inflated by other processes on a busy machine) and its voluntary
/// context switches.
fn thread_usage() -> (f64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    // SAFETY: rusage is plain data; all zeros is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage for the call to fill.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9, ru.ru_nvcsw)
}
