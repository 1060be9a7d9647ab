//! The floor of a collection's scan: only its system calls, on the
//! collector's readers, nothing analysed. Every folder under DUMPS is
//! listed, and each `.asm` in it is opened, measured (`fstat`), read and
//! closed as the scan does: a launched kernel's file whole, another's
//! first 1 KiB (its `//.kernel` line); each `.spv` is read whole (the scan
//! hashes it). Which files are launched is not known here: every Nth
//! `.asm` of a folder, in name order, stands for them (`--whole-every N`;
//! 1: all launched, 10: a tenth, as `bench/gen_capture.py --launched 0.1`
//! launches a tenth of each module's kernels, whose files are the same
//! size as the others'). Prints the median of the rounds in seconds.
//!
//! `cargo run --release -p xpu-asm-collector --example scan_floor -- DUMPS [--whole-every N] [--rounds N]`

use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: scan_floor DUMPS [--whole-every N] [--rounds N]";
    let root = PathBuf::from(args.next().ok_or(usage)?);
    let (mut every, mut rounds) = (1usize, 5usize);
    while let Some(flag) = args.next() {
        let n: usize = args.next().ok_or(usage)?.parse()?;
        match flag.as_str() {
            "--whole-every" if n > 0 => every = n,
            "--rounds" if n > 0 => rounds = n,
            _ => return Err(usage.into()),
        }
    }
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut times = Vec::new();
    let mut read = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        read = xpu_asm_collector::sources::with_readers(|| {
            folders.par_iter().map(|f| scan(f, every)).sum::<u64>()
        });
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "floor_folders={} floor_bytes={read} floor_s={:.3} floor_s_lo={:.3}",
        folders.len(),
        times[times.len() / 2],
        times[0]
    );
    Ok(())
}

/// One folder as the scan reads it; the bytes read.
fn scan(folder: &Path, every: usize) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    let mut names: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    names.sort();
    let mut asm = 0;
    let jobs: Vec<(&Path, bool)> = names
        .iter()
        .filter_map(|(n, p)| {
            if n.ends_with(".spv") {
                Some((p.as_path(), true))
            } else if n.ends_with(".asm") {
                asm += 1;
                Some((p.as_path(), (asm - 1) % every == 0))
            } else {
                None
            }
        })
        .collect();
    jobs.par_iter()
        .map(|&(p, whole)| read_one(p, whole).unwrap_or(0))
        .sum()
}

/// Opens, measures, reads (whole, or the first 1 KiB) and closes `p`.
fn read_one(p: &Path, whole: bool) -> std::io::Result<u64> {
    use std::os::unix::fs::OpenOptionsExt;
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOATIME)
        .open(p)?;
    let len = f.metadata()?.len() as usize;
    let want = if whole { len } else { len.min(1024) };
    BUF.with_borrow_mut(|b| {
        b.resize(want.max(b.len()), 0);
        let mut got = 0;
        while got < want {
            match f.read(&mut b[got..want])? {
                0 => break,
                n => got += n,
            }
        }
        Ok(got as u64)
    })
}
