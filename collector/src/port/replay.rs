//! The child that compiles for a product: `xpu-asm-run __port PLAN`, run
//! under the interposer with NEO emulating the product, creates every
//! module of the plan through the real Level Zero driver, as the program
//! did (its SPIR-V, build flags and specialization constants), and each
//! launched kernel in it, so that the interposer records them and IGC
//! compiles them exactly as in a run on that product.

use super::plan::{Plan, PlanModule};
use crate::run::ze::{Target, Ze};
use std::path::Path;

/// The hidden subcommand the child runs.
pub const SUBCOMMAND: &str = "__port";
/// What the child prints for each module: `<key> <status>`.
pub const STATUS_PREFIX: &str = "xpu-asm-port ";
/// A module's status when it was built and its kernels created.
pub const BUILT: &str = "built";

/// `xpu-asm-run __port PLAN`: compiles each module of the plan, printing
/// `xpu-asm-port <key> <status>` for each; 0, or 2 (and why, on stderr)
/// when nothing can be compiled here.
pub fn child_main(plan: &Path) -> i32 {
    let plan: Plan = match std::fs::read(plan)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("xpu-asm-run: {}: {e}", plan.display());
            return 2;
        }
    };
    let ze = match Ze::open() {
        Ok(z) => z,
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            return 2;
        }
    };
    let target = match ze.target(None) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            return 2;
        }
    };
    for m in &plan.modules {
        let status = build_one(&target, m);
        let line = format!("{STATUS_PREFIX}{} {}\n", m.key, status.replace('\n', " / "));
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes());
    }
    0
}

/// Builds one module and creates its kernels: [`BUILT`], or why not.
fn build_one(t: &Target, m: &PlanModule) -> String {
    if m.api != "level_zero" {
        return format!("a module of {} is not compiled here", m.api);
    }
    let spirv = match std::fs::read(&m.spirv) {
        Ok(b) => b,
        Err(e) => return format!("cannot read {}: {e}", m.spirv.display()),
    };
    let sha = {
        use sha2::Digest;
        xpu_asm_record::hex(&sha2::Sha256::digest(&spirv))
    };
    if !sha.eq_ignore_ascii_case(&m.sha256) {
        return format!(
            "{} is not the module's SPIR-V (its SHA-256 differs)",
            m.spirv.display()
        );
    }
    match t.build_module(&spirv, &m.build_flags, &m.constants(), &m.kernels) {
        Ok(()) => BUILT.to_string(),
        Err(e) => e,
    }
}
