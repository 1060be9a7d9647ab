//! Which of a kernel's `.asm` files the report shows ([`choose`]), its
//! files over processes folded into one per compilation ([`fold`]), and the
//! warning when processes compiled it differently ([`disagreement`]).

use crate::names;
use crate::sources::{AsmFile, IsaSourceKind};
use std::collections::HashMap;
use std::sync::Arc;

/// Picks the file the report shows among a kernel's `.asm` files, and says why.
///
/// IGC leaves several `.asm` for one kernel when it compiled it more than
/// once: a retry of the whole module after spills (`_1_`, `_2_` in the
/// name), or more than one SIMD width. The rule, best evidence first:
///
/// 1. A file whose machine code (`.dat`) is byte-identical to the final
///    binary IGC emitted (`.kernbin`): that is the code that runs.
/// 2. Otherwise the latest retry: IGC's RetryManager keeps the retry's code
///    unless it spills much more than the attempt before.
/// 3. Then the widest SIMD: IGC tries the widest width first and finishes a
///    narrower one only when the wider one aborted on spills (an aborted
///    width leaves no `.asm`).
pub fn choose(cands: &[AsmFile]) -> Option<(usize, String)> {
    choose_among(cands)
}

/// [`choose`] over borrowed or shared files.
pub fn choose_among<A: AsRef<AsmFile>>(cands: &[A]) -> Option<(usize, String)> {
    // Borrowed where they are (a kernel's choice is made 100,000 times).
    let files = || cands.iter().map(AsRef::as_ref);
    if cands.is_empty() {
        return None;
    }
    let verified = files().any(|c| c.final_binary == Some(true));
    fn key(verified: bool, c: &AsmFile) -> (bool, u32, u32, &str) {
        (
            !verified || c.final_binary == Some(true),
            c.name.retry,
            c.name.simd.unwrap_or(0),
            c.file_name.as_str(),
        )
    }
    let key = |c| key(verified, c);
    // The last of the greatest, as `max_by_key` (borrowing the names).
    let best =
        (0..cands.len()).max_by(|&i, &j| key(cands[i].as_ref()).cmp(&key(cands[j].as_ref())))?;
    let b = cands[best].as_ref();
    if let Some(o) = &b.binary {
        let member = o
            .fat_entry
            .as_ref()
            .map(|e| format!(", fat binary member {e}"))
            .unwrap_or_default();
        return Some((
            best,
            format!(
                "disassembled by IGA from its module's binary ({}{member}, modules/{}.bin), which is the code the driver ran",
                o.format,
                names::short_sha(&o.sha256)
            ),
        ));
    }
    if cands.len() == 1 {
        let why = match b.final_binary {
            Some(true) => "the only .asm IGC wrote for this kernel; its machine code is the final binary IGC emitted",
            _ => "the only .asm IGC wrote for this kernel",
        };
        return Some((best, why.to_string()));
    }
    let others = cands.len() - 1;
    if verified {
        return Some((
            best,
            format!(
                "its machine code (.dat) is byte-identical to the final binary IGC emitted (.kernbin, or the module binary with IGC 1's light dumps); {others} other attempt(s) listed"
            ),
        ));
    }
    let spill = |c: &AsmFile| c.header.as_ref().and_then(|h| h.spill_bytes).unwrap_or(0);
    let mut why = if files().any(|c| c.name.retry != b.name.retry) {
        format!(
            "the latest of IGC's compilations (retry {}); IGC keeps a retry unless it spills much more than the attempt before",
            b.name.retry
        )
    } else {
        "the widest SIMD width IGC finished (it finishes a narrower width only when a wider one aborts on spills)"
            .to_string()
    };
    if files().any(|c| spill(c) < spill(b)) {
        why.push_str(
            "; this one spills more than another attempt, so IGC may have kept that one instead",
        );
    }
    why.push_str("; no final binary was left in the dump to confirm");
    Some((best, why))
}

/// What makes two processes' `.asm` files the same compilation of a kernel:
/// the same file in IGC's dump folder (its name says module hash, retry,
/// SIMD and entry) with the same figures in its header. A module binary's
/// file is already one per binary content: its path says it all.
type Compilation<'a> = (
    IsaSourceKind,
    &'a str,
    Option<u32>,
    u32,
    Option<u64>,
    Option<u64>,
);

fn compilation(a: &AsmFile) -> Compilation<'_> {
    let h = a.header.as_ref();
    let file = match a.source {
        IsaSourceKind::ModuleBinary => a.shown.as_str(),
        _ => a.file_name.as_str(),
    };
    (
        a.source,
        file,
        a.name.simd,
        a.name.retry,
        h.and_then(|h| h.instructions),
        h.and_then(|h| h.spill_bytes),
    )
}

/// A kernel's files over processes, each compilation once.
pub struct Folded<'a> {
    /// One file per compilation, by path, with how many processes had it.
    pub listed: Vec<(&'a Arc<AsmFile>, u32)>,
    /// The other processes' files of a listed compilation.
    pub same: Vec<&'a Arc<AsmFile>>,
}

/// Folds `files` (each with the index of the process it is of) into one
/// file per compilation: the first by path, or `chosen` when that is one
/// of them. A file two processes share (a forked child writes into its
/// parent's folder) counts for both and is listed once.
pub fn fold<'a>(mut files: Vec<(usize, &'a Arc<AsmFile>)>, chosen: Option<&str>) -> Folded<'a> {
    if let [(_, a)] = files[..] {
        // One file: one compilation (most kernels).
        return Folded {
            listed: vec![(a, 1)],
            same: Vec::new(),
        };
    }
    files.sort_by(|a, b| (a.1.shown.as_str(), a.0).cmp(&(b.1.shown.as_str(), b.0)));
    files.dedup_by(|a, b| a.0 == b.0 && a.1.shown == b.1.shown);
    let mut listed: Vec<(&Arc<AsmFile>, u32)> = Vec::new();
    let mut same: Vec<&Arc<AsmFile>> = Vec::new();
    let mut group: HashMap<Compilation, usize> = HashMap::new();
    for (_, a) in files {
        match group.entry(compilation(a)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(listed.len());
                listed.push((a, 1));
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                let l = &mut listed[*o.get()];
                l.1 += 1;
                if l.0.shown == a.shown {
                    continue;
                }
                if chosen == Some(a.shown.as_str()) {
                    same.push(std::mem::replace(&mut l.0, a));
                } else {
                    same.push(a);
                }
            }
        }
    }
    listed.sort_by(|a, b| a.0.shown.cmp(&b.0.shown));
    Folded { listed, same }
}

/// The warning for a kernel whose processes compiled the chosen file
/// differently (other instruction count, SIMD, retry, spills, binary), so
/// that different ranks ran different code; `None` when they agree.
pub fn disagreement(
    name: &[u8],
    chosen: &AsmFile,
    listed: &[(&Arc<AsmFile>, u32)],
) -> Option<String> {
    let mut rivals: Vec<&(&Arc<AsmFile>, u32)> = listed
        .iter()
        .filter(|l| l.0.source == chosen.source && l.0.file_name == chosen.file_name)
        .collect();
    if rivals.len() < 2 {
        return None;
    }
    // Most processes first; the chosen file's compilation first among equals.
    rivals.sort_by_key(|l| (std::cmp::Reverse(l.1), l.0.shown != chosen.shown));
    let figures = |a: &AsmFile| {
        let h = a.header.as_ref();
        (
            h.and_then(|h| h.instructions),
            a.name.simd,
            a.name.retry,
            h.and_then(|h| h.spill_bytes),
        )
    };
    let all: Vec<_> = rivals.iter().map(|l| figures(l.0)).collect();
    let instructions = all.iter().any(|f| f.0 != all[0].0);
    let simd = all.iter().any(|f| f.1 != all[0].1);
    let retry = all.iter().any(|f| f.2 != all[0].2);
    let spill = all.iter().any(|f| f.3 != all[0].3);
    let opt = |v: Option<u64>| v.map_or("an unknown number of".to_string(), |v| v.to_string());
    let parts: Vec<String> = rivals
        .iter()
        .enumerate()
        .map(|(i, (a, n))| {
            let f = all[i];
            let mut what = Vec::new();
            if instructions {
                what.push(format!("{} instructions", opt(f.0)));
            }
            if simd {
                what.push(f.1.map_or("no SIMD width".into(), |s| format!("SIMD{s}")));
            }
            if retry {
                what.push(format!("retry {}", f.2));
            }
            if spill {
                what.push(format!("{} spill bytes", opt(f.3)));
            }
            if what.is_empty() {
                return format!("{n} with the code of {}", a.shown);
            }
            let mut s = format!("{n} with {}", what.join(", "));
            // Where to look at a version the report does not show.
            if a.shown != chosen.shown {
                s.push_str(&format!(" ({})", a.shown));
            }
            s
        })
        .collect();
    Some(format!(
        "kernel {}: processes compiled it differently: {}; the report shows {}",
        names::escape_for_terminal(&names::readable(name, &names::demangle(name))),
        parts.join(", "),
        chosen.shown
    ))
}
