//! The child that compiles for a product: `xpu-asm-run __port PLAN`, run
//! under the interposer with NEO emulating the product, creates every
//! module of the plan through the real Level Zero driver, as the program
//! did (its SPIR-V, build flags and specialization constants), and each
//! launched kernel in it, so that the interposer records them and IGC
//! compiles them exactly as in a run on that product.

use super::cl::Cl;
use super::plan::{ze_constants, Plan, PlanModule};
use crate::run::ze::{ModuleInput, Ze};
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
    // Each API opened when a module of it comes, once.
    let mut ze: Option<Result<Ze, String>> = None;
    let mut cl: Option<Result<Cl, String>> = None;
    for m in &plan.modules {
        let status = match read_spirv(m) {
            Err(e) => e,
            Ok(spirv) if m.api == "opencl" => match cl.get_or_insert_with(Cl::open) {
                Ok(cl) => built(cl.build(&spirv, &m.build_flags, &m.constant_bytes(), &m.kernels)),
                Err(e) => e.clone(),
            },
            Ok(spirv) => match (ze.get_or_insert_with(Ze::open), read_more(m)) {
                (Ok(ze), Ok(more)) => match ze.target(None) {
                    Ok(t) => {
                        let first = ModuleInput {
                            bytes: &spirv,
                            flags: &m.build_flags,
                            constants: m.constants(),
                        };
                        let inputs: Vec<ModuleInput> = std::iter::once(first)
                            .chain(m.more_inputs.iter().zip(&more).map(|(i, b)| ModuleInput {
                                bytes: b,
                                flags: &i.build_flags,
                                constants: ze_constants(&i.spec_constants),
                            }))
                            .collect();
                        built(t.build_module(
                            &inputs,
                            m.program_build_flags.as_deref(),
                            m.format == "native",
                            &m.kernels,
                        ))
                    }
                    Err(e) => e,
                },
                (Err(e), _) => e.clone(),
                (_, Err(e)) => e,
            },
        };
        let status = match (m.format.as_str(), status == BUILT) {
            ("native", false) => format!(
                "the product's driver does not take its native binary (built ahead of time for \
                 another device, without SPIR-V it could compile): {status}"
            ),
            _ => status,
        };
        let line = format!("{STATUS_PREFIX}{} {}\n", m.key, status.replace('\n', " / "));
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes());
    }
    0
}

fn built(r: Result<(), String>) -> String {
    match r {
        Ok(()) => BUILT.to_string(),
        Err(e) => e,
    }
}

/// The module's input (its SPIR-V, or its native binary), checked against its SHA-256.
fn read_spirv(m: &PlanModule) -> Result<Vec<u8>, String> {
    read_checked(&m.spirv, &m.sha256)
}

/// The module's further SPIR-V inputs, each checked.
fn read_more(m: &PlanModule) -> Result<Vec<Vec<u8>>, String> {
    m.more_inputs
        .iter()
        .map(|i| read_checked(&i.spirv, &i.sha256))
        .collect()
}

/// The file `path`, whose SHA-256 must be `sha`.
fn read_checked(path: &Path, sha: &str) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let got = {
        use sha2::Digest;
        xpu_asm_record::hex(&sha2::Sha256::digest(&bytes))
    };
    if !got.eq_ignore_ascii_case(sha) {
        return Err(format!(
            "{} is not the module's SPIR-V (its SHA-256 differs)",
            path.display()
        ));
    }
    Ok(bytes)
}
