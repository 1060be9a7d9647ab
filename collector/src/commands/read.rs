//! A collected capture read back for the commands over it (`show`,
//! `diff`): its report, the kernel a selector picks, that kernel's ISA
//! file, and what can go wrong.

use crate::capture::layout::REPORT_FILE;
use crate::report::{KernelEntry, Report};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    #[error("{0}: no such folder")]
    NotFound(PathBuf),
    #[error("{path}: {why}; run `xpu-asm-run collect {dir}` to write it")]
    NoReport {
        path: PathBuf,
        dir: String,
        why: String,
    },
    #[error("no kernel of {dir} is {selector:?} (a rank number, an exact or demangled name, or a regular expression); `xpu-asm-run collect {dir}` lists them")]
    NoMatch { dir: String, selector: String },
    #[error("{selector:?} matches {} kernels of {dir}; give one by its rank number:\n{}", .matches.len(), .matches.join("\n"))]
    Ambiguous {
        dir: String,
        selector: String,
        matches: Vec<String>,
    },
    #[error("kernel #{rank} {name} has no ISA file: {reason}")]
    NoIsa {
        rank: usize,
        name: String,
        reason: String,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("kernel #{rank} {name} has no line information; build it with -g (module build flags `-g`, or `ocloc compile -options -g`)")]
    NoLines { rank: usize, name: String },
    #[error("kernel #{rank} {name} has no control-flow analysis: {reason}")]
    NoFlow {
        rank: usize,
        name: String,
        reason: String,
    },
}

/// The report of the capture folder `dir`.
pub fn load_report(dir: &Path) -> Result<Report, ShowError> {
    if !dir.is_dir() {
        return Err(ShowError::NotFound(dir.to_path_buf()));
    }
    let path = dir.join(REPORT_FILE);
    let no_report = |why: String| ShowError::NoReport {
        path: path.clone(),
        dir: dir.display().to_string(),
        why,
    };
    let bytes = std::fs::read(&path).map_err(|e| no_report(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        no_report(format!(
            "not a report this xpu-asm-run reads ({e}); it may come from another version"
        ))
    })
}

/// The kernels of `r` that `selector` names: the one of that rank (a
/// number), else those whose exact or demangled name it is, else those a
/// regular expression matches (mangled or demangled name).
pub fn find_kernels<'a>(r: &'a Report, selector: &str) -> Vec<&'a KernelEntry> {
    if let Ok(rank) = selector.parse::<usize>() {
        if let Some(k) = r.kernels.iter().find(|k| k.rank == rank) {
            return vec![k];
        }
    }
    let exact: Vec<&KernelEntry> = r
        .kernels
        .iter()
        .filter(|k| k.name == selector || k.demangled == selector)
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    match regex::Regex::new(selector) {
        Ok(re) => r
            .kernels
            .iter()
            .filter(|k| re.is_match(&k.name) || re.is_match(&k.demangled))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The one kernel of `r` that `selector` names, or an error that lists
/// what it matched.
pub fn select<'a>(r: &'a Report, dir: &Path, selector: &str) -> Result<&'a KernelEntry, ShowError> {
    let found = find_kernels(r, selector);
    match found.as_slice() {
        [k] => Ok(k),
        [] => Err(ShowError::NoMatch {
            dir: dir.display().to_string(),
            selector: selector.to_string(),
        }),
        many => Err(ShowError::Ambiguous {
            dir: dir.display().to_string(),
            selector: selector.to_string(),
            matches: many.iter().map(|k| describe(k)).collect(),
        }),
    }
}

/// `#rank name [module 12345678]`.
pub fn describe(k: &KernelEntry) -> String {
    let sha = k.module_sha256.as_deref().unwrap_or("");
    format!(
        "  #{} {} [module {}]",
        k.rank,
        k.display_name(),
        sha.get(..8).unwrap_or(sha)
    )
}

/// The ISA file of `k` in the capture `dir`: its copy under `asm/`, else
/// the dump.
pub fn isa_path(dir: &Path, k: &KernelEntry) -> Result<PathBuf, ShowError> {
    k.asm_copy
        .iter()
        .chain(k.asm.iter())
        .map(|p| dir.join(p))
        .find(|p| p.is_file())
        .ok_or_else(|| ShowError::NoIsa {
            rank: k.rank,
            name: k.display_name(),
            reason: k
                .reason
                .clone()
                .unwrap_or_else(|| "its file is gone from the capture".into()),
        })
}
