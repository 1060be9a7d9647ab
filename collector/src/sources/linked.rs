//! Modules linked from several SPIR-V inputs (`ze_module_program_exp_desc_t`:
//! SYCL's kernels with its device libraries, as llama.cpp's and oneMKL's
//! are built). IGC dumps each input as `OCL_asm<h>_<h2>.spv`, then compiles
//! the linked module, whose `.asm` files it names after a hash of its own
//! (of the linked LLVM module, which nothing in the capture can compute):
//! no `.spv` names that hash. So the linked module's dump is told by its
//! code: a hash without a `.spv` whose kernels are exactly the module's and
//! whose every kernel has an attempt (`.dat`) that is byte for byte the
//! code of the module's binary the driver ran (`modules/<sha256>.bin`).
//! That is the module's own compile, never a look-alike: another module's
//! kernel of the same name is other code, or its module other kernels.
//!
//! A linked module's dumps are then looked up under a key of its own
//! ([`super::dumps::dump_key`]), so that the standalone compile of its first input (whose
//! SHA-256 the record gives the module) is never taken for it.

use super::dumps::{dump_key, is_linked, DumpFolder};
use super::light::{module_device, read_program, saved_binary};
use crate::capture::layout::Stopped;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use xpu_asm_record::read::{Module, ProcessRecord};

/// A linked module's dump key, its SHA-256 and the hashes of its own
/// compiles.
type Found = (String, String, Vec<String>);

/// Finds, in each process's folder, the dump of each of its linked
/// modules whose binary was saved, and files it under the module's
/// [`dump_key`] (and its hash under the module's SHA-256, as a `.spv`
/// would be, for the list of kernels nobody launched).
///
/// `known` is what an earlier collection found (`collect.json`'s
/// `linked`), whose `.dat` files it may have pruned since.
pub fn find_linked(
    dir: &Path,
    recs: &[ProcessRecord],
    folders: &mut [DumpFolder],
    known: &BTreeMap<String, [String; 2]>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<(), Stopped> {
    for (rec, folder) in recs.iter().zip(folders.iter_mut()) {
        if !folder.exists {
            continue;
        }
        let before = remember(folder, known);
        let modules: Vec<&Module> = rec
            .modules
            .values()
            .filter(|m| is_linked(m) && saved_binary(m).is_some())
            .filter(|m| !before.contains(dump_key(m).as_ref()))
            .collect();
        if modules.is_empty() {
            if !before.is_empty() {
                folder.reindex();
            }
            continue;
        }
        let candidates = unnamed_hashes(folder);
        let found: Vec<Result<Found, Stopped>> = modules
            .par_iter()
            .map(|m| {
                if stop() {
                    return Err(Stopped);
                }
                let hashes = own_compiles(dir, rec, m, folder, &candidates);
                Ok((
                    dump_key(m).into_owned(),
                    m.sha256.to_ascii_lowercase(),
                    hashes,
                ))
            })
            .collect();
        for f in found {
            let (key, sha, hashes) = f?;
            for h in hashes {
                file_under(folder, &key, &sha, h);
            }
        }
        folder.reindex();
    }
    Ok(())
}

/// Files the linked module's hash `h` under its dump key `key` and its
/// module's SHA-256 `sha`.
fn file_under(folder: &mut DumpFolder, key: &str, sha: &str, h: String) {
    folder
        .sha_by_hash
        .entry(h.clone())
        .or_insert(sha.to_string());
    let hashes = folder.spv_by_sha.entry(key.to_string()).or_default();
    if !hashes.contains(&h) {
        hashes.push(h);
        hashes.sort();
    }
}

/// Files what an earlier collection found in `folder`; the keys filed.
fn remember(folder: &mut DumpFolder, known: &BTreeMap<String, [String; 2]>) -> BTreeSet<String> {
    let prefix = format!("{} ", folder.shown);
    let mut keys = BTreeSet::new();
    for (at, [key, sha]) in known.range(prefix.clone()..) {
        let Some(h) = at.strip_prefix(&prefix) else {
            break;
        };
        if folder.asm.iter().any(|a| a.name.hash == h) {
            file_under(folder, key, sha, h.to_string());
            keys.insert(key.clone());
        }
    }
    keys
}

/// What `folder` has of linked modules, as `collect.json` keeps it.
pub fn found(folder: &DumpFolder) -> impl Iterator<Item = (String, [String; 2])> + '_ {
    folder
        .spv_by_sha
        .iter()
        .filter(|(key, _)| key.starts_with("linked:"))
        .flat_map(move |(key, hashes)| {
            hashes.iter().filter_map(move |h| {
                let sha = folder.sha_by_hash.get(h)?;
                Some((format!("{} {h}", folder.shown), [key.clone(), sha.clone()]))
            })
        })
}

/// The module hashes of `folder`'s `.asm` files that no `.spv` names, each
/// with its files' indices by `//.kernel` name.
fn unnamed_hashes(folder: &DumpFolder) -> BTreeMap<&str, BTreeMap<&[u8], Vec<usize>>> {
    let mut out: BTreeMap<&str, BTreeMap<&[u8], Vec<usize>>> = BTreeMap::new();
    for (i, a) in folder.asm.iter().enumerate() {
        if folder.sha_by_hash.contains_key(&a.name.hash) {
            continue;
        }
        let Some(name) = a.header.as_ref().and_then(|h| h.kernel.as_deref()) else {
            continue;
        };
        out.entry(a.name.hash.as_str())
            .or_default()
            .entry(name)
            .or_default()
            .push(i);
    }
    out
}

/// The candidate hashes that are `m`'s own compile: exactly its binary's
/// kernels, each with an attempt whose code is the binary's.
fn own_compiles(
    dir: &Path,
    rec: &ProcessRecord,
    m: &Module,
    folder: &DumpFolder,
    candidates: &BTreeMap<&str, BTreeMap<&[u8], Vec<usize>>>,
) -> Vec<String> {
    let Some(file) = saved_binary(m) else {
        return Vec::new();
    };
    let Some(program) = read_program(&dir.join(file), module_device(rec, m).as_ref()) else {
        return Vec::new();
    };
    let names: BTreeSet<&[u8]> = program.kernels.iter().map(|k| k.name.as_slice()).collect();
    candidates
        .iter()
        .filter(|(_, kernels)| kernels.keys().copied().collect::<BTreeSet<_>>() == names)
        .filter(|(_, kernels)| {
            program.kernels.iter().all(|k| {
                kernels.get(k.name.as_slice()).is_some_and(|attempts| {
                    attempts.iter().any(|&i| {
                        std::fs::read(folder.asm[i].path.with_extension("dat"))
                            .is_ok_and(|code| code == k.code)
                    })
                })
            })
        })
        .map(|(h, _)| h.to_string())
        .collect()
}
