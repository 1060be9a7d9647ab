//! The evidence that a kernel ran, for `show --json`: each process whose
//! record in the capture counted its launches, read from `records/` (the
//! interposer's own record, not the report), and the sentences that say
//! why its ISA file is that kernel's.

use crate::report::KernelEntry;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use xpu_asm_record::read::ProcessRecord;

/// One process's share of the kernel, as its record holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessLaunches {
    pub host: String,
    pub pid: u32,
    pub exe: String,
    /// Its rank in a parallel job, when it had one.
    pub rank: Option<u32>,
    /// The record, relative to the capture folder.
    pub record: String,
    pub launches: u64,
    pub appended: u64,
    /// Kernel handles of this name the process created in the module.
    pub handles: u64,
    /// What the process made the module from: `spirv` or `native`.
    pub module_format: String,
    pub module_bytes: u64,
    pub build_flags: String,
}

/// Every process of the capture `dir` whose record launched `k` (same
/// name bytes, module and API), by host and pid. `None` when the capture
/// has no readable `records/` (the answer then says so).
pub fn processes(dir: &Path, k: &KernelEntry) -> Option<Vec<ProcessLaunches>> {
    let records = dir.join(xpu_asm_record::RECORDS_DIR);
    let paths = xpu_asm_record::read::events_paths(&records).ok()?;
    // A record is named after its host and pid: only those of the
    // kernel's pids are read (a job's hundreds are not).
    let paths: Vec<_> = paths
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| k.pids.iter().any(|pid| n.contains(&format!("-{pid}"))))
        })
        .collect();
    let name = name_bytes(k);
    let mut found: Vec<ProcessLaunches> = paths
        .par_iter()
        .filter_map(|p| {
            let rec = xpu_asm_record::read::read_process(p);
            share(&rec, &name, k).map(|s| ProcessLaunches {
                record: relative(dir, p),
                ..s
            })
        })
        .collect();
    found.sort_by(|a, b| (&a.host, a.pid).cmp(&(&b.host, b.pid)));
    Some(found)
}

/// The exact bytes of the kernel's name.
fn name_bytes(k: &KernelEntry) -> Vec<u8> {
    k.name_hex
        .as_deref()
        .and_then(xpu_asm_record::unhex)
        .unwrap_or_else(|| k.name.clone().into_bytes())
}

fn relative(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

/// What `rec` holds of the kernel `name` of `k`'s module and API; `None`
/// when it launched none.
fn share(rec: &ProcessRecord, name: &[u8], k: &KernelEntry) -> Option<ProcessLaunches> {
    let mut s = ProcessLaunches {
        host: rec.host.clone(),
        pid: rec.pid,
        exe: rec.exe.clone(),
        rank: rec.rank.as_ref().map(|r| r.rank),
        record: String::new(),
        launches: 0,
        appended: 0,
        handles: 0,
        module_format: String::new(),
        module_bytes: 0,
        build_flags: String::new(),
    };
    for kernel in rec.kernels.values().filter(|x| x.name == name) {
        let Some(m) = rec.modules.get(&kernel.module) else {
            continue;
        };
        if Some(&m.sha256) != k.module_sha256.as_ref() || m.api.as_str() != k.api.as_str() {
            continue;
        }
        s.launches += kernel.launches;
        s.appended += kernel.appended;
        s.handles += 1;
        s.module_format.clone_from(&m.format);
        s.module_bytes = m.size;
        s.build_flags.clone_from(&m.build_flags);
    }
    (s.launches + s.appended > 0).then_some(s)
}

/// `launch-evidence`: why the ISA file is that of the kernel that ran, in
/// sentences a person (or an agent's answer) can quote.
pub fn sentences(
    k: &KernelEntry,
    procs: Option<&[ProcessLaunches]>,
    kernel_line: Option<&str>,
) -> String {
    let api = match k.api.as_str() {
        "opencl" => "OpenCL",
        _ => "Level Zero",
    };
    let at_least = if k.counts_incomplete { "at least " } else { "" };
    let mut out = vec![format!(
        "xpu-asm's interposer counted {at_least}{} launches of {} through {api} \
         (from {} appends to command lists), in the driver calls that append and run them.",
        k.launches, k.demangled, k.appended
    )];
    out.push(match procs {
        Some([]) | None => "The capture holds no record of its processes: \
            the counts are the report's alone."
            .to_string(),
        Some(ps) => records_sentence(ps),
    });
    if let Some(sha) = &k.module_sha256 {
        out.push(format!(
            "The kernel is told apart by its exact name and its module's SHA-256, {sha}."
        ));
    }
    out.push(match (&k.asm, &k.asm_choice) {
        (Some(asm), Some(choice)) => format!("Its ISA file, {asm}, was chosen by these: {choice}."),
        _ => format!(
            "It has no ISA file: {}.",
            k.reason.as_deref().unwrap_or("the report gives no reason")
        ),
    });
    if let Some(line) = kernel_line {
        let same = if line == k.name {
            "the exact name the program launched"
        } else {
            "not the name the program launched"
        };
        out.push(format!("The file's //.kernel line is {line}, {same}."));
    }
    out.join(" ")
}

/// The records sentence: which processes, and their counts.
fn records_sentence(ps: &[ProcessLaunches]) -> String {
    let each: Vec<String> = ps
        .iter()
        .take(4)
        .map(|p| {
            let format = match p.module_format.as_str() {
                "spirv" => "SPIR-V",
                "native" => "a native binary",
                other => other,
            };
            format!(
                "{} launches in pid {} on {} ({}), {}, its module {} bytes of {format}",
                p.launches, p.pid, p.host, p.exe, p.record, p.module_bytes
            )
        })
        .collect();
    let more = match ps.len() - each.len() {
        0 => String::new(),
        n => format!("; and {n} more processes"),
    };
    format!(
        "The capture's records of {} process{} hold them: {}{more}.",
        ps.len(),
        if ps.len() == 1 { "" } else { "es" },
        each.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(extra: &str) -> KernelEntry {
        let json = format!(
            r#"{{"rank": 2, "name": "k", "demangled": "k", "module_sha256": "ab12", "launches": 7,
            "appended": 3, "pids": [42], "status": "matched", "reason": null, "isa_source": "igc-dump",
            "binary": null, "asm": "dumps/h-42-t/OCL_asm1_simd32_entry_0001.asm",
            "asm_copy": "asm/002-k-1.asm", "asm_choice": "the only .asm IGC wrote for this kernel",
            "asm_candidates": [], "simd": 32, "grf": 128, "instructions": 9, "spill_bytes": null,
            "platform": null, "ra_type": null, "spill_grf_refs": null, "private_memory_bytes": null,
            "source": null, "mix": null {extra}}}"#
        );
        serde_json::from_str(&json).expect("an entry")
    }

    fn process() -> ProcessLaunches {
        ProcessLaunches {
            host: "h".into(),
            pid: 42,
            exe: "/bin/app".into(),
            rank: None,
            record: "records/h-42-t.events".into(),
            launches: 7,
            appended: 3,
            handles: 1,
            module_format: "spirv".into(),
            module_bytes: 100,
            build_flags: String::new(),
        }
    }

    #[test]
    fn the_evidence_says_what_was_counted_where_and_why_that_file() {
        let k = entry("");
        let text = sentences(&k, Some(&[process()]), Some("k"));
        assert_eq!(
            text,
            "xpu-asm's interposer counted 7 launches of k through Level Zero (from 3 appends \
             to command lists), in the driver calls that append and run them. The capture's \
             records of 1 process hold them: 7 launches in pid 42 on h (/bin/app), \
             records/h-42-t.events, its module 100 bytes of SPIR-V. The kernel is told apart \
             by its exact name and its module's SHA-256, ab12. Its ISA file, \
             dumps/h-42-t/OCL_asm1_simd32_entry_0001.asm, was chosen by these: the only .asm \
             IGC wrote for this kernel. The file's //.kernel line is k, the exact name the \
             program launched."
        );
    }

    #[test]
    fn without_records_or_isa_the_evidence_says_so() {
        let mut k = entry(r#", "counts_incomplete": true, "api": "opencl""#);
        k.asm = None;
        k.asm_choice = None;
        k.reason = Some("no .asm has this exact //.kernel line".into());
        let text = sentences(&k, None, None);
        assert!(
            text.starts_with(
                "xpu-asm's interposer counted at least 7 launches of k through OpenCL"
            ),
            "{text}"
        );
        assert!(
            text.contains("The capture holds no record of its processes"),
            "{text}"
        );
        assert!(
            text.ends_with("It has no ISA file: no .asm has this exact //.kernel line."),
            "{text}"
        );
        let text = sentences(&k, Some(&[]), Some("other"));
        assert!(
            text.ends_with(
                "The file's //.kernel line is other, not the name the program launched."
            ),
            "{text}"
        );
    }

    #[test]
    fn more_than_four_processes_are_counted_not_listed() {
        let ps: Vec<ProcessLaunches> = (0..6)
            .map(|i| ProcessLaunches {
                pid: i,
                ..process()
            })
            .collect();
        let s = records_sentence(&ps);
        assert!(
            s.starts_with("The capture's records of 6 processes hold them: "),
            "{s}"
        );
        assert!(s.ends_with("; and 2 more processes."), "{s}");
        assert_eq!(s.matches(" launches in pid ").count(), 4, "{s}");
    }
}
