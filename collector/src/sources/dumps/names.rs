//! The exact names of each module's kernels, which the `.asm` headers of
//! its dumps are read against (`xpu_asm_isa::header`): the entry points of
//! the module's `.spv` (read as it is hashed) and the kernels its records
//! name ([`ModuleNames`]); a module without a `.spv`, every name of its
//! folder.

use super::file_names::parse_spv_file_name;
use crate::capture::files::open_noatime;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xpu_asm_isa::header::KnownNames;
use xpu_asm_record::read::ProcessRecord;

/// The kernel names the records give each module, by the SHA-256 of its
/// SPIR-V (lower case): the driver's list of the module's kernels and each
/// kernel created from it. A dump folder's `.asm` headers are read against
/// these and the entry points of the module's `.spv`.
#[derive(Debug, Clone, Default)]
pub struct ModuleNames {
    by_sha: HashMap<String, Vec<Vec<u8>>>,
}

impl ModuleNames {
    /// The names of the modules of `recs`.
    pub fn of<'a>(recs: impl IntoIterator<Item = &'a ProcessRecord>) -> ModuleNames {
        let mut n = ModuleNames::default();
        for rec in recs {
            for m in rec.modules.values() {
                n.add(&m.sha256, m.kernel_names.iter().cloned());
            }
            for k in rec.kernels.values() {
                if let Some(m) = rec.modules.get(&k.module) {
                    n.add(&m.sha256, [k.name.clone()]);
                }
            }
        }
        n
    }

    /// Adds `names` to the module whose SPIR-V has SHA-256 `sha`.
    pub fn add(&mut self, sha: &str, names: impl IntoIterator<Item = Vec<u8>>) {
        self.by_sha
            .entry(sha.to_ascii_lowercase())
            .or_default()
            .extend(names);
    }

    pub(super) fn of_sha(&self, sha: &str) -> &[Vec<u8>] {
        self.by_sha.get(sha).map_or(&[], Vec::as_slice)
    }

    pub(super) fn all(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.by_sha.values().flatten()
    }
}

/// A `.spv` of the folder read: its SHA-256, size and entry points' names.
pub(super) type SpvRead = std::io::Result<(String, u64, Vec<Vec<u8>>)>;

/// Each `.spv` of the folder read on every core, by index into `files`.
pub(super) fn read_spvs(
    files: &[(String, PathBuf)],
    stop: &(dyn Fn() -> bool + Sync),
) -> BTreeMap<usize, (String, SpvRead)> {
    files
        .par_iter()
        .enumerate()
        .filter_map(|(i, (name, p))| {
            let hash = parse_spv_file_name(name)?;
            if stop() {
                return None;
            }
            Some((i, (hash, read_spv(p))))
        })
        .collect()
}

/// The names the `.asm` files of each module hash are read against: its
/// `.spv`'s entry points and the names `names` gives the module of that
/// SPIR-V; for a hash without a `.spv` (a module linked from several
/// inputs, a `.spv` that could not be read), every name of the folder.
pub(super) struct Known {
    by_hash: HashMap<String, Arc<KnownNames>>,
    folder: Arc<KnownNames>,
}

impl Known {
    pub(super) fn of(&self, hash: &str) -> &KnownNames {
        self.by_hash.get(hash).unwrap_or(&self.folder)
    }
}

pub(super) fn known_names(spvs: &BTreeMap<usize, (String, SpvRead)>, names: &ModuleNames) -> Known {
    let mut by_hash = HashMap::new();
    let mut all: Vec<Vec<u8>> = names.all().cloned().collect();
    for (hash, read) in spvs.values() {
        let Ok((sha, _, entries)) = read else {
            continue;
        };
        all.extend(entries.iter().cloned());
        let mine = entries.iter().chain(names.of_sha(sha)).cloned();
        by_hash.insert(hash.clone(), Arc::new(KnownNames::new(mine)));
    }
    Known {
        by_hash,
        folder: Arc::new(KnownNames::new(all)),
    }
}

/// A `.spv`'s SHA-256 and size (all of it read), and the names of its
/// entry points (the module's kernels), read as it is hashed.
pub(super) fn read_spv(p: &Path) -> SpvRead {
    let mut entries = xpu_asm_isa::spirv::EntryPoints::default();
    let (sha, size) = read_spv_with(p, |chunk| entries.feed(chunk))?;
    Ok((sha, size, entries.names()))
}

/// Lower-case hex SHA-256 of a file and its size, read in chunks, each
/// chunk also given to `each`.
pub(super) fn read_spv_with(
    p: &Path,
    mut each: impl FnMut(&[u8]),
) -> std::io::Result<(String, u64)> {
    let mut file = open_noatime(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
        each(&buf[..n]);
    }
    Ok((xpu_asm_record::hex(&h.finalize()), size))
}
