//! A report's JSON made in pieces: its kernels (nearly all of a large
//! capture's 200 MB) serialized on every core, a batch at a time, and
//! written in order between the fields before and after them; byte for
//! byte what `serde_json` writes of the whole report.
//!
//! Pretty JSON (`report.json`) puts every element of the kernels' array on
//! lines of its own, four spaces in: an element is serialized alone, then
//! indented after each newline (JSON strings hold none: every newline is
//! the layout's). Compact JSON (the page's data) only joins them.

use crate::capture::run::Exit;
use crate::report::{DumpsInfo, KernelEntry, ProcessEntry, Report, Totals};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;

/// How the JSON is laid out: as `serde_json::to_writer_pretty` does, or
/// as `serde_json::to_writer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Pretty,
    Compact,
}

/// Kernels serialized by one task, and per batch: what is held at once,
/// about 2 MB of JSON per file (more raised the peak memory by tens of MB,
/// each file's batches beside the other's, each task's buffer in its
/// thread's heap).
const PER_TASK: usize = 16;
const PER_BATCH: usize = 1024;

/// The report's fields before its kernels.
#[derive(Serialize)]
struct Head<'a> {
    schema: u32,
    tool: &'a str,
    command: &'a Option<Vec<String>>,
    exit: &'a Option<Exit>,
    emulate: &'a Option<String>,
    processes: &'a [ProcessEntry],
}

/// The report's fields after its kernels.
#[derive(Serialize)]
struct Tail<'a> {
    totals: &'a Totals,
    unlaunched_compiled: u64,
    unlaunched_listed: bool,
    filter: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    isa: &'a Option<String>,
    dumps: &'a DumpsInfo,
    warnings: &'a [String],
}

fn parts(r: &Report) -> (Head<'_>, &[KernelEntry], Tail<'_>) {
    // Every field named, in the report's order: a field added to the
    // report does not compile until it is added here.
    let Report {
        schema,
        tool,
        command,
        exit,
        emulate,
        processes,
        kernels,
        totals,
        unlaunched_compiled,
        unlaunched_listed,
        filter,
        isa,
        dumps,
        warnings,
    } = r;
    let head = Head {
        schema: *schema,
        tool,
        command,
        exit,
        emulate,
        processes,
    };
    let tail = Tail {
        totals,
        unlaunched_compiled: *unlaunched_compiled,
        unlaunched_listed: *unlaunched_listed,
        filter,
        isa,
        dumps,
        warnings,
    };
    (head, kernels, tail)
}

/// `report` as `serde_json` lays it out (without a final newline).
pub fn write_report(w: &mut dyn Write, report: &Report, layout: Layout) -> std::io::Result<()> {
    let (head, kernels, tail) = parts(report);
    let (head, tail) = (json(&head, layout)?, json(&tail, layout)?);
    // `{...}` twice, joined around the kernels: the head without its
    // close, the tail without its open.
    let (close, key): (&[u8], &[u8]) = match layout {
        Layout::Pretty => (b"\n}", b",\n  \"kernels\": "),
        Layout::Compact => (b"}", b",\"kernels\":"),
    };
    let (Some(head), Some(tail)) = (head.strip_suffix(close), tail.strip_prefix(b"{")) else {
        return Err(std::io::Error::other("a report's fields are not an object"));
    };
    w.write_all(head)?;
    w.write_all(key)?;
    write_kernels(w, kernels, layout)?;
    w.write_all(b",")?;
    w.write_all(tail)
}

/// `value` as JSON laid out as `layout` says.
pub fn json<T: Serialize + ?Sized>(value: &T, layout: Layout) -> std::io::Result<Vec<u8>> {
    Ok(match layout {
        Layout::Pretty => serde_json::to_vec_pretty(value)?,
        Layout::Compact => serde_json::to_vec(value)?,
    })
}

/// The kernels' array, a field of the top-level object.
fn write_kernels(
    w: &mut dyn Write,
    kernels: &[KernelEntry],
    layout: Layout,
) -> std::io::Result<()> {
    if kernels.is_empty() {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    for (b, batch) in kernels.chunks(PER_BATCH).enumerate() {
        let pieces = batch
            .par_chunks(PER_TASK)
            .enumerate()
            .map(|(t, task)| elements(task, b == 0 && t == 0, layout))
            .collect::<std::io::Result<Vec<Vec<u8>>>>()?;
        for p in pieces {
            w.write_all(&p)?;
        }
    }
    match layout {
        Layout::Pretty => w.write_all(b"\n  ]"),
        Layout::Compact => w.write_all(b"]"),
    }
}

/// The elements `items`, each after its separator (none before the
/// array's first).
fn elements(items: &[KernelEntry], first: bool, layout: Layout) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(items.len() * 2048);
    let mut one = Vec::new();
    for (i, k) in items.iter().enumerate() {
        if !(first && i == 0) {
            out.push(b',');
        }
        match layout {
            Layout::Compact => serde_json::to_writer(&mut out, k)?,
            Layout::Pretty => {
                one.clear();
                serde_json::to_writer_pretty(&mut one, k)?;
                out.extend_from_slice(b"\n    ");
                indented(&one, &mut out);
            }
        }
    }
    Ok(out)
}

/// `text` onto `out` with four spaces after each newline.
fn indented(text: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text) {
        out.extend_from_slice(&text[start..=nl]);
        out.extend_from_slice(b"    ");
        start = nl + 1;
    }
    out.extend_from_slice(&text[start..]);
}

/// A report of `n` kernels with every kind of field filled: nested
/// objects and arrays, empty ones, nulls, strings JSON escapes.
#[cfg(test)]
pub(crate) fn rich_report(n: usize) -> Report {
    let kernel = r#"{"rank":4,"name":"mix_mad_loop","demangled":"mix_mad_loop",
      "module_sha256":"6648af9b71b71138eaee7300662444a583f8b621eb2c6e69840561501cf14546",
      "launches":50,"appended":50,"pids":[30510,7],"ranks":[0],
      "launches_by_rank":[{"rank":0,"launches":3,"appended":1}],"status":"matched",
      "reason":null,"isa_source":"module-binary","binary":{"sha256":"6648af9b","format":"zebin",
      "fat_entry":null},"isa_note":"a\nb\u2028c","asm":"isa/6648/mix_mad_loop-5283019a.asm",
      "asm_copy":"asm/004-mix_mad_loop-5283019a.asm","asm_choice":"disassembled by IGA",
      "asm_candidates":[{"path":"isa/6648/mix_mad_loop-5283019a.asm","source":"module-binary",
      "simd":32,"retry":0,"instructions":232,"spill_bytes":null,"final_binary":true,
      "processes":1}],"simd":32,"grf":128,"instructions":232,"spill_bytes":null,
      "platform":"PVCXT","ra_type":null,"spill_grf_refs":null,"private_memory_bytes":null,
      "source":{"files":["/src/k.cl","/src/inc.h"],"lines":[{"file":"/src/k.cl","line":3,
      "text":"x = \"a\" < b && c;\t</script>","instructions":4}],"no_line":1},
      "mix":{"instructions":232,"load_global":4,"store_global":1,"atomic_global":0,
      "load_slm":0,"store_slm":0,"atomic_slm":0,"load_scratch":0,"store_scratch":0,"spill":0,
      "fill":0,"send_other":1,"dpas":0,"math":0,"mov":14,"alu":200,"control":11,"sync":1},
      "flow":{"iga_json":"1.0","grf_bytes":64,"budget":128,"blocks":[{"label":"L0000",
      "first":0,"instructions":23,"preds":[],"succs":[1,16],"loop":null}],"loops":[{"header":6,
      "blocks":[6],"back_edges":[[6,6]],"parent":null,"depth":1,"instructions":131,
      "mix":{"instructions":131,"load_global":0,"store_global":0,"atomic_global":0,
      "load_slm":0,"store_slm":0,"atomic_slm":0,"load_scratch":0,"store_scratch":0,"spill":0,
      "fill":0,"send_other":0,"dpas":0,"math":0,"mov":0,"alu":130,"control":1,"sync":0},
      "peak_grf":8,"source":[]}],"live_grf":[1,1,2],"liveness":"operands",
      "peak":{"grf":10,"live":10,"spilled":0,"bytes":592,"instruction":37,"block":4,
      "loop":null,"source":null,"class":"control"},"lines":false,"spilled_grf":[0,1,2]},
      "flow_reason":null}"#;
    let kernel: KernelEntry = serde_json::from_str(kernel).unwrap();
    let report = r#"{"schema":3,"tool":"xpu-asm-run 0.1.0","command":["a b","\u001b","ü"],
      "exit":{"signal":9},"emulate":"pvc","processes":[{"pid":1,"ppid":0,"host":"h",
      "exe":"/bin/x","forked_from":null,"dump_dir":"dumps/h-1","dump_dir_exists":true,
      "launches":5,"appended":2,"unknown_launches":0,"exit":{"code":0},"ended":"seen",
      "rank":3,"local_rank":1,"job_id":"openmpi:1"}],"kernels":[],"totals":{"kernels":1,
      "launches":2,"appended":3,"matched":4,"unmatched":5,"filtered_out":6},
      "unlaunched_compiled":7,"unlaunched_listed":true,"filter":"x|y","isa":"binary",
      "dumps":{"keep":"asm","before":{"bytes":1,"files":2},"after":{"bytes":0,"files":0}},
      "warnings":["w","<&>"]}"#;
    let mut report: Report = serde_json::from_str(report).unwrap();
    report.kernels = (0..n)
        .map(|i| {
            let mut k = kernel.clone();
            k.rank = i + 1;
            k.name = format!("k{i}\u{2029}<{}>", "é".repeat(i % 3));
            if i % 2 == 1 {
                (k.flow, k.source, k.mix) = (None, None, None);
                k.pids.clear();
            }
            k
        })
        .collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(r: &Report, layout: Layout) -> String {
        let mut out = Vec::new();
        write_report(&mut out, r, layout).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn pieces_are_what_serde_writes_of_the_whole() {
        for n in [0, 1, 2, PER_TASK - 1, PER_TASK, PER_TASK + 1, PER_BATCH + 3] {
            let r = rich_report(n);
            assert_eq!(r.kernels.len(), n);
            assert_eq!(
                pieces(&r, Layout::Pretty),
                serde_json::to_string_pretty(&r).unwrap(),
                "{n} kernels"
            );
            assert_eq!(
                pieces(&r, Layout::Compact),
                serde_json::to_string(&r).unwrap(),
                "{n} kernels"
            );
        }
    }
}
