//! A collected capture read back for the commands over it (`show`,
//! `diff`): its report, the kernel a selector picks, that kernel's ISA
//! file, and what can go wrong.

use crate::capture::layout::REPORT_FILE;
use crate::report::export::table::Sort;
use crate::report::{KernelEntry, Report};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    #[error("{0}: no such folder")]
    NotFound(PathBuf),
    #[error(
        "{0} is a file, not a capture folder; give the folder that `xpu-asm-run -o DIR` wrote{1}"
    )]
    NotAFolder(PathBuf, String),
    #[error(
        "{0} is not an xpu-asm capture (it has no {marks}); give the folder that \
         `xpu-asm-run -o DIR` wrote",
        marks = crate::capture::layout::capture_marks()
    )]
    NotACapture(PathBuf),
    #[error("{path}: {why}; run `xpu-asm-run collect {dir}` to write it")]
    NoReport {
        path: PathBuf,
        dir: String,
        why: String,
    },
    #[error("no kernel of {dir} is {selector:?} (a rank number, an exact or demangled name, or a regular expression); `xpu-asm-run collect {dir}` lists them")]
    NoMatch { dir: String, selector: String },
    #[error("no kernel of {dir} has the name {selector} exactly (as the program gave it, or demangled); `xpu-asm-run collect {dir}` lists them")]
    NoName { dir: String, selector: String },
    #[error("--name-hex {hex:?} is not hex (two digits per byte, e.g. 626164ff)")]
    NotHex { hex: String },
    #[error("{dir} has no kernel #{rank}: {listed} (`xpu-asm-run collect {dir}` lists them)")]
    NoRank {
        dir: String,
        rank: usize,
        /// `its kernels are #1 to #8`
        listed: String,
    },
    #[error("no kernel of {a} nor of {b} is {selector:?} (a rank number, an exact or demangled name, or a regular expression); `xpu-asm-run diff {a} {b} --all` lists them")]
    NoMatchInEither {
        a: String,
        b: String,
        selector: String,
    },
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

/// Why `dir` is not a capture folder to read: missing, a file (with the
/// folder to give instead when it is a capture's file), or a folder that
/// holds no capture.
pub fn check_capture_folder(dir: &Path) -> Result<(), ShowError> {
    use crate::capture::layout::{folder_instead_of, is_capture};
    if dir.is_file() {
        return Err(ShowError::NotAFolder(
            dir.to_path_buf(),
            folder_instead_of(dir),
        ));
    }
    if !dir.is_dir() {
        return Err(ShowError::NotFound(dir.to_path_buf()));
    }
    if !is_capture(dir) {
        return Err(ShowError::NotACapture(dir.to_path_buf()));
    }
    Ok(())
}

/// The report of the capture folder `dir`.
pub fn load_report(dir: &Path) -> Result<Report, ShowError> {
    check_capture_folder(dir)?;
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
/// regular expression matches (mangled or demangled name). A number is
/// never a regular expression: `0` names no kernel, not every name with a
/// 0 in it.
pub fn find_kernels<'a>(r: &'a Report, selector: &str) -> Vec<&'a KernelEntry> {
    let rank = selector.parse::<usize>().ok();
    if let Some(rank) = rank {
        if let Some(k) = r.kernels.iter().find(|k| k.rank == rank) {
            return vec![k];
        }
    }
    let exact: Vec<&KernelEntry> = r
        .kernels
        .iter()
        .filter(|k| k.name == selector || k.demangled == selector)
        .collect();
    if !exact.is_empty() || rank.is_some() {
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
/// what it matched (by device time in a report that has it, else by rank).
pub fn select<'a>(r: &'a Report, dir: &Path, selector: &str) -> Result<&'a KernelEntry, ShowError> {
    select_listing(r, dir, selector, None)
}

/// [`select`], the kernels it matched listed in the order `sort` says
/// (`show --sort`; `None`: as the table's default).
pub fn select_listing<'a>(
    r: &'a Report,
    dir: &Path,
    selector: &str,
    sort: Option<Sort>,
) -> Result<&'a KernelEntry, ShowError> {
    let mut found = find_kernels(r, selector);
    if found.len() > 1 {
        let order = crate::report::export::table::order(r, sort);
        let at: std::collections::HashMap<usize, usize> =
            order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        // Each kernel's place in the report, then in the order.
        let index = |k: &KernelEntry| r.kernels.iter().position(|x| std::ptr::eq(x, k));
        found.sort_by_key(|k| index(k).and_then(|i| at.get(&i).copied()));
    }
    match found.as_slice() {
        [k] => Ok(k),
        [] => Err(match selector.parse::<usize>() {
            Ok(rank) => ShowError::NoRank {
                dir: dir.display().to_string(),
                rank,
                listed: match r.kernels.iter().map(|k| k.rank).max() {
                    Some(last) => format!("its kernels are #1 to #{last}"),
                    None => "its report lists no kernel".into(),
                },
            },
            Err(_) => ShowError::NoMatch {
                dir: dir.display().to_string(),
                selector: selector.to_string(),
            },
        }),
        many => Err(ShowError::Ambiguous {
            dir: dir.display().to_string(),
            selector: selector.to_string(),
            matches: describe_all(r, many),
        }),
    }
}

/// The one kernel of `r` whose exact name (its bytes as the program gave
/// them) or demangled name is `name`, never a rank or a regular
/// expression; an error that lists them when several are (`typed` names
/// the option in messages).
pub fn select_named<'a>(
    r: &'a Report,
    dir: &Path,
    name: &[u8],
    typed: &str,
) -> Result<&'a KernelEntry, ShowError> {
    let found: Vec<&KernelEntry> = r
        .kernels
        .iter()
        .filter(|k| k.name_bytes() == name || k.demangled.as_bytes() == name)
        .collect();
    match found.as_slice() {
        [k] => Ok(k),
        [] => Err(ShowError::NoName {
            dir: dir.display().to_string(),
            selector: crate::names::escape_for_terminal(typed),
        }),
        many => Err(ShowError::Ambiguous {
            dir: dir.display().to_string(),
            selector: typed.to_string(),
            matches: describe_all(r, many),
        }),
    }
}

/// `#rank name [module 12345678, level zero]`: its rank, name, module and
/// API.
pub fn describe(k: &KernelEntry) -> String {
    format!("  #{} {}]", k.rank, what(k))
}

/// `name [module 12345678, level zero` of [`describe`].
fn what(k: &KernelEntry) -> String {
    let sha = k.module_sha256.as_deref().unwrap_or("");
    let api = match k.api {
        crate::report::Api::OpenCl => "opencl",
        crate::report::Api::LevelZero => "level zero",
    };
    format!(
        "{} [module {}, {api}",
        k.display_name(),
        sha.get(..8).unwrap_or(sha)
    )
}

/// [`describe`] of each of `many`, with its device time and share in a
/// report that has them (`  #2 add_two [module 1a2b3c4d, level zero]:
/// 1.60 ms, 57.1%`); entries that would read the same (one name in one
/// module, as the terminal shows it) with their exact names' tags too
/// (`[module 12345678, level zero, name 1a2b3c4d]`).
fn describe_all(r: &Report, many: &[&KernelEntry]) -> Vec<String> {
    let whats: Vec<String> = many.iter().map(|k| what(k)).collect();
    whats
        .iter()
        .zip(many)
        .map(|(w, k)| {
            let d = match whats.iter().filter(|o| *o == w).count() {
                1 => format!("  #{} {w}]", k.rank),
                _ => format!(
                    "  #{} {w}, name {}]",
                    k.rank,
                    crate::names::name_tag(&k.name_bytes())
                ),
            };
            match crate::report::export::table::time_columns(r, k) {
                Some([t, s]) => format!("{d}: {t}, {s}"),
                None => d,
            }
        })
        .collect()
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
