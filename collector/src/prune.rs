//! The dump folders pruned to what `--keep` keeps, once matching has
//! chosen each launched kernel's files ([`Keep`]), and `collect.json`,
//! what the first collection learned from the dump files it then pruned
//! (so that a collection again gives the same report).

use crate::capture::files::{
    is_real_dir, prune_measured, usage_knowing, write_atomic, Known, Listing, Usage,
};
use crate::capture::layout::{strip_dir, CollectError, Stopped};
use crate::capture::rebuilt::MARKER;
use crate::capture::state::CollectState;
use crate::matching::Matching;
use crate::sources::dumps::file_names::parse_spv_file_name;
use crate::sources::dumps::{DumpFolder, DumpLocation};
use crate::sources::rebuilt::Rebuilt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use xpu_asm_isa::fast::{FastMap, FastSet};

/// Which dump files survive collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// Every `.asm` and `.spv`; the other intermediates (LLVM IR, vISA,
    /// binaries...) are deleted.
    #[default]
    Asm,
    /// Only the launched kernels' `.asm` files and their modules' `.spv`.
    Launched,
    /// Everything IGC wrote.
    All,
}

impl Keep {
    pub fn as_str(self) -> &'static str {
        match self {
            Keep::Asm => "asm",
            Keep::Launched => "launched",
            Keep::All => "all",
        }
    }
}

/// The dump folders of a collection: each process's, where its record
/// says, and those of modules compiled again for their source lines.
pub struct Dumps<'a> {
    pub folders: &'a [DumpFolder],
    pub locations: &'a [DumpLocation],
    pub rebuilt: &'a Rebuilt,
}

/// Measures the dumps, saves in `collect.json` what pruning is about to
/// destroy, then prunes as `keep` says. Returns the pruning's warnings
/// and the dumps' size after it.
#[allow(clippy::too_many_arguments)]
pub fn save_state_and_prune(
    dir: &Path,
    keep: Keep,
    state_path: &Path,
    state: &mut CollectState,
    dumps: Dumps,
    matching: &Matching,
    stop: &dyn Fn() -> bool,
    progress: &dyn Fn(&str),
) -> Result<(Vec<String>, Usage), CollectError> {
    let interrupted = || CollectError::Interrupted(dir.to_path_buf());
    let dumps_root = dir.join(xpu_asm_record::DUMPS_DIR);
    let folders = || dumps.folders.iter().chain(&dumps.rebuilt.folders);
    let scanned = Scanned::new(folders());
    let dumps_now = usage_knowing(&dumps_root, &scanned);
    if let Err(e) = save_state(state_path, state, folders(), dumps_now) {
        // What pruning would delete is what collect.json keeps the facts
        // of: without it, nothing is pruned.
        let w = format!("{e}; the dumps are not pruned");
        return Ok((vec![w], dumps_now));
    }
    if stop() {
        return Err(interrupted());
    }
    if keep == Keep::All || !is_real_dir(&dumps_root) {
        return Ok((Vec::new(), dumps_now));
    }
    progress("pruning dumps");
    let (mut warnings, mut deleted) =
        prune_dumps(dir, keep, dumps.locations, matching, &scanned, stop)
            .map_err(|_| interrupted())?;
    // A compile again keeps its .asm (each kernel's, whether taken or
    // not: a later collection says the same) and what it was.
    let (w, d) = prune_dumps(
        dir,
        Keep::Asm,
        &dumps.rebuilt.locations,
        matching,
        &scanned,
        stop,
    )
    .map_err(|_| interrupted())?;
    warnings.extend(w);
    deleted.files += d.files;
    deleted.bytes += d.bytes;
    Ok((warnings, dumps_now.minus(deleted)))
}

/// What the scan learned of `folders`: their listings and the sizes it
/// measured, by folder and file name.
struct Scanned<'a> {
    by_path: HashMap<&'a Path, ScannedFolder<'a>>,
}

struct ScannedFolder<'a> {
    asm: FastMap<&'a str, u64>,
    spv: &'a HashMap<String, u64>,
    listing: Option<&'a Listing>,
}

impl<'a> Scanned<'a> {
    fn new(folders: impl Iterator<Item = &'a DumpFolder>) -> Self {
        let by_path = folders
            .map(|f| {
                let asm = f
                    .asm
                    .iter()
                    .filter_map(|a| Some((a.file_name.as_str(), a.size?)))
                    .collect();
                let folder = ScannedFolder {
                    asm,
                    spv: &f.spv_sizes,
                    listing: f.listing.as_ref(),
                };
                (f.path.as_path(), folder)
            })
            .collect();
        Scanned { by_path }
    }
}

impl Known for Scanned<'_> {
    fn size(&self, dir: &Path, name: &std::ffi::OsStr) -> Option<u64> {
        let name = name.to_str()?;
        let f = self.by_path.get(dir)?;
        f.asm.get(name).or_else(|| f.spv.get(name)).copied()
    }

    fn listing(&self, dir: &Path) -> Option<&Listing> {
        self.by_path.get(dir)?.listing
    }
}

/// Saves in `collect.json` (when they changed) the dumps' size before the
/// first pruning and the final-binary verdicts of `folders`' files.
fn save_state<'a>(
    state_path: &Path,
    state: &mut CollectState,
    folders: impl Iterator<Item = &'a DumpFolder>,
    dumps_now: Usage,
) -> Result<(), CollectError> {
    let mut new_state = state.clone();
    new_state.schema = 1;
    if new_state.dumps_before.is_none() {
        new_state.dumps_before = Some(dumps_now);
    }
    for f in folders {
        for a in &f.asm {
            if let Some(v) = a.final_binary {
                new_state.final_binary.insert(a.shown.clone(), v);
            }
        }
        new_state.linked.extend(crate::sources::linked::found(f));
    }
    if new_state.dumps_before != state.dumps_before
        || new_state.final_binary != state.final_binary
        || new_state.linked != state.linked
    {
        let bytes = serde_json::to_vec_pretty(&new_state).unwrap_or_default();
        write_atomic(state_path, &bytes)?;
        *state = new_state;
    }
    Ok(())
}

/// Deletes from the prunable dump folders of `locations` what `keep` does
/// not keep: the warnings, and what was deleted.
fn prune_dumps(
    dir: &Path,
    keep: Keep,
    locations: &[DumpLocation],
    matching: &Matching,
    known: &dyn Known,
    stop: &dyn Fn() -> bool,
) -> Result<(Vec<String>, Usage), Stopped> {
    // Launched kernels' .asm files, and the hashes of their modules
    // (all launched kernels: --filter limits the report, not the data).
    let launched_only = keep == Keep::Launched;
    // Looked up once per dump file: hashed (a tree compared 100,000 long
    // paths component by component 17 times each).
    let keep_files: FastSet<&Path> = matching
        .launched
        .iter()
        .filter(|_| launched_only)
        .flat_map(|k| {
            k.candidates
                .iter()
                .map(|a| a.path.as_path())
                .chain(k.same_files.iter().map(|p| p.as_path()))
        })
        .collect();
    let keep_hashes: FastSet<&str> = matching
        .launched
        .iter()
        .filter(|_| launched_only)
        .flat_map(|k| k.candidates.iter().map(|a| a.name.hash.as_str()))
        .collect();
    let kept = |p: &Path| -> bool {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        match keep {
            _ if name == MARKER => true,
            Keep::All => true,
            Keep::Asm => name.ends_with(".asm") || name.ends_with(".spv"),
            Keep::Launched => {
                keep_files.contains(p)
                    || parse_spv_file_name(&name).is_some_and(|h| keep_hashes.contains(h.as_str()))
            }
        }
    };
    let mut warnings = Vec::new();
    let mut deleted = Usage::default();
    for loc in locations.iter().filter(|l| l.prunable) {
        // Only real folders under <dir>/dumps, never through a link.
        let mut cur = dir.to_path_buf();
        let mut real = true;
        for c in Path::new(&loc.shown).components() {
            cur.push(c);
            real &= is_real_dir(&cur);
        }
        if !real {
            continue;
        }
        let (gone, errs) = prune_measured(&loc.path, &kept, known, stop)?;
        deleted.files += gone.files;
        deleted.bytes += gone.bytes;
        warnings.extend(errs.iter().map(|e| strip_dir(dir, e)));
    }
    Ok((warnings, deleted))
}
