//! `collect` on capture folders built in temporary folders: real IGC dumps
//! from tests/data or synthetic ones, records in the real format.

#[path = "../common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use xpu_asm_collector::collect::{collect, Options};
use xpu_asm_collector::prune::Keep;
use xpu_asm_collector::report::{LeftOut, Limit, Report};
use xpu_asm_collector::sources::Status;

fn with(keep: Keep, all: bool) -> Options {
    Options {
        keep,
        all,
        ..Default::default()
    }
}

fn find<'a>(r: &'a Report, name: &str, sha: &str) -> &'a xpu_asm_collector::report::KernelEntry {
    r.kernels
        .iter()
        .find(|k| k.name == name && k.module_sha256.as_deref() == Some(sha))
        .unwrap_or_else(|| panic!("{name} of {sha} not in {:#?}", r.kernels))
}

/// Synthetic `.asm` with a header naming `kernel`.
fn write_asm(dir: &Path, file: &str, kernel: &[u8], inst: u32, spill: Option<u32>) {
    let mut s = b"//.kernel ".to_vec();
    s.extend_from_slice(kernel);
    s.extend_from_slice(
        format!("\n//.platform PVCXT\n//.thread_config numGRF=256, numAcc=8, numSWSB=32\n//.instCount {inst}\n")
            .as_bytes(),
    );
    if let Some(sp) = spill {
        s.extend_from_slice(format!("//.spill size {sp}\n").as_bytes());
    }
    s.extend_from_slice(b"\n        nop\n");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), s).unwrap();
}

/// Writes `OCL_asm<hash>.spv` with `body` and returns its SHA-256.
fn write_spv(dir: &Path, hash: &str, body: &[u8]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(format!("OCL_asm{hash}.spv"));
    std::fs::write(&p, body).unwrap();
    xpu_asm_collector::sources::dumps::sha256_file(&p).unwrap()
}

fn kernbin(name: &[u8], code: &[u8]) -> Vec<u8> {
    let name_size = name.len().div_ceil(4) * 4 + 4;
    let mut b = vec![0u8; 40];
    b[12..16].copy_from_slice(&(name_size as u32).to_le_bytes());
    b[20..24].copy_from_slice(&(code.len() as u32).to_le_bytes());
    b[36..40].copy_from_slice(&(code.len() as u32).to_le_bytes());
    b.extend_from_slice(name);
    b.resize(40 + name_size, 0);
    b.extend_from_slice(code);
    b
}

mod candidates;
mod hostile;
mod processes;
mod report;
