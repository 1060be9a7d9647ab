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
use crate::report::time::TimeSummary;
use crate::report::{
    CountsKeptInRun, DumpsInfo, KernelEntry, LeftOut, ProcessEntry, Report, Totals,
};
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
    #[serde(skip_serializing_if = "Option::is_none")]
    asm_copies: &'a Option<LeftOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_kernels: &'a Option<LeftOut>,
    counts_incomplete: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    counts_kept: &'a [CountsKeptInRun],
    #[serde(skip_serializing_if = "Option::is_none")]
    time: &'a Option<TimeSummary>,
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
        asm_copies,
        page_kernels,
        counts_incomplete,
        counts_kept,
        time,
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
        asm_copies,
        page_kernels,
        counts_incomplete,
        counts_kept,
        time,
        warnings,
    };
    (head, kernels, tail)
}

/// `report` as `serde_json` lays it out (without a final newline).
pub fn write_report(w: &mut dyn Write, report: &Report, layout: Layout) -> std::io::Result<()> {
    write_report_from(w, report, layout, None)
}

/// [`write_report`], the kernels' JSON taken from `shared` (made once
/// for it and another file of the same report) when given.
pub fn write_report_from(
    w: &mut dyn Write,
    report: &Report,
    layout: Layout,
    shared: Option<&mut Reader>,
) -> std::io::Result<()> {
    write_report_first(w, report, usize::MAX, layout, shared)
}

/// [`write_report_from`] of the report with only its first `n` kernels:
/// what serializing it with the others removed writes. A `shared` reader
/// leaves once it has read the batches it needs, holding up nothing.
pub fn write_report_first(
    w: &mut dyn Write,
    report: &Report,
    n: usize,
    layout: Layout,
    shared: Option<&mut Reader>,
) -> std::io::Result<()> {
    let (head, kernels, tail) = parts(report);
    let kernels = &kernels[..n.min(kernels.len())];
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
    match shared {
        Some(r) if std::ptr::eq(r.shared.kernels.as_ptr(), kernels.as_ptr()) => {
            write_shared(w, r, kernels.len(), layout)?
        }
        _ => write_kernels(w, kernels, layout)?,
    }
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
    write_elements(w, kernels, true, layout)?;
    close_array(w, layout)
}

/// The elements `kernels` of the array, serialized on every core, a batch
/// at a time; `first`: they begin the array.
fn write_elements(
    w: &mut dyn Write,
    kernels: &[KernelEntry],
    first: bool,
    layout: Layout,
) -> std::io::Result<()> {
    for (b, batch) in kernels.chunks(PER_BATCH).enumerate() {
        let pieces = batch
            .par_chunks(PER_TASK)
            .enumerate()
            .map(|(t, task)| elements(task, first && b == 0 && t == 0, layout))
            .collect::<std::io::Result<Vec<Vec<u8>>>>()?;
        for p in pieces {
            w.write_all(&p)?;
        }
    }
    Ok(())
}

/// The end of the kernels' array.
fn close_array(w: &mut dyn Write, layout: Layout) -> std::io::Result<()> {
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

/// The kernels' array of the first `n` kernels from the compact JSON of
/// `r`'s batches: as is, or laid out as [`elements`] lays them out pretty
/// ([`pretty_batch`], a batch's pieces on every core). Short of them all,
/// `r` reads the whole batches in them and leaves; the rest are
/// serialized here.
fn write_shared(
    w: &mut dyn Write,
    r: &mut Reader,
    n: usize,
    layout: Layout,
) -> std::io::Result<()> {
    let whole = r.batches_of_first(n);
    r.only_first(whole);
    if n == 0 {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    while let Some(batch) = r.next_batch()? {
        match layout {
            Layout::Compact => {
                for piece in batch.iter() {
                    w.write_all(piece)?;
                }
            }
            Layout::Pretty => {
                let pretty: Vec<Vec<u8>> = batch
                    .par_iter()
                    .map(|piece| {
                        let mut out = Vec::with_capacity(piece.len() * 2);
                        pretty_batch(piece, &mut out);
                        out
                    })
                    .collect();
                for piece in &pretty {
                    w.write_all(piece)?;
                }
            }
        }
    }
    let from = (whole * PER_BATCH).min(n);
    if from < n {
        write_elements(w, &r.shared.kernels[from..n], from == 0, layout)?;
    }
    close_array(w, layout)
}

/// Compact JSON elements of the kernels' array (each an object, after
/// its comma but the array's first) laid out as [`elements`] lays them
/// out pretty: as `serde_json`'s pretty printer would (two spaces a
/// level, `": "` after a key, `[]` and `{}` when empty), four spaces in,
/// each element on a line of its own. Only the layout is added: strings,
/// numbers and literals are copied as they are.
fn pretty_batch(compact: &[u8], out: &mut Vec<u8>) {
    let b = compact;
    let mut depth = 0usize;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.extend_from_slice(b"\n    ");
        for _ in 0..depth {
            out.extend_from_slice(b"  ");
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i;
                i = string_end(b, i);
                out.extend_from_slice(&b[start..i]);
                continue;
            }
            b'{' | b'[' => {
                if depth == 0 {
                    newline(out, 0);
                }
                let close = if c == b'{' { b'}' } else { b']' };
                out.push(c);
                if b.get(i + 1) == Some(&close) {
                    out.push(close);
                    i += 2;
                    continue;
                }
                depth += 1;
                newline(out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                if depth > 0 {
                    newline(out, depth);
                }
            }
            b':' => out.extend_from_slice(b": "),
            _ => {
                // A number or literal, to the next structural byte.
                let start = i;
                while i < b.len() && !matches!(b[i], b'"' | b'{' | b'[' | b'}' | b']' | b',' | b':')
                {
                    i += 1;
                }
                out.extend_from_slice(&b[start..i]);
                continue;
            }
        }
        i += 1;
    }
}

/// Where the JSON string that starts at `start` (its opening quote)
/// ends: after its closing quote (or at the end of `b`).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(j) = b
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        i += j;
        if b[i] == b'"' {
            return i + 1;
        }
        // An escape: the backslash and the character after it.
        i += 2;
    }
    b.len()
}

/// The kernels' compact JSON made a batch at a time, once, for two
/// readers (`report.json` and the page, written side by side on threads
/// of their own): the first to need a batch makes it (its kernels on
/// every core), the other takes it; a batch goes when both have read it.
/// The one ahead waits when [`AHEAD`] batches are held for the other
/// (memory), unless the other will not read that batch: it is gone
/// ([`Reader`] dropped), or reads only the batches before it
/// ([`Reader::only_first`]).
pub struct Shared<'a> {
    kernels: &'a [KernelEntry],
    state: std::sync::Mutex<State>,
    changed: std::sync::Condvar,
}

/// Batches held for the reader behind, at most.
const AHEAD: usize = 4;

/// One batch's JSON: its tasks' pieces, in order.
type Batch = std::sync::Arc<Vec<Vec<u8>>>;

struct State {
    slots: Vec<Slot>,
    /// The batches each reader reads: those before this (0 once gone).
    ends: [usize; 2],
}

enum Slot {
    Empty,
    Making,
    /// Made, and yet to be read by the other reader.
    Ready(Batch),
    Read,
}

/// One reader of [`Shared`] batches, in order.
pub struct Reader<'s, 'a> {
    shared: &'s Shared<'a>,
    /// Which of the two.
    id: usize,
    next: usize,
}

impl<'a> Shared<'a> {
    /// The batches of `kernels`, for two readers ([`Shared::readers`]).
    pub fn new(kernels: &'a [KernelEntry]) -> Self {
        let n = kernels.len().div_ceil(PER_BATCH);
        Shared {
            kernels,
            state: std::sync::Mutex::new(State {
                slots: (0..n).map(|_| Slot::Empty).collect(),
                ends: [n; 2],
            }),
            changed: std::sync::Condvar::new(),
        }
    }

    /// Its two readers.
    pub fn readers(&self) -> (Reader<'_, 'a>, Reader<'_, 'a>) {
        let r = |id| Reader {
            shared: self,
            id,
            next: 0,
        };
        (r(0), r(1))
    }

    fn lock(&self) -> std::io::Result<std::sync::MutexGuard<'_, State>> {
        self.state.lock().map_err(|_| poisoned())
    }
}

impl Reader<'_, '_> {
    /// The next batch, `None` after the last it reads.
    fn next_batch(&mut self) -> std::io::Result<Option<Batch>> {
        let shared = self.shared;
        let b = self.next;
        let mut st = shared.lock()?;
        if b >= st.ends[self.id] {
            return Ok(None);
        }
        // The other reader reads this batch too: held for it once made.
        let other = 1 - self.id;
        loop {
            let held = st
                .slots
                .iter()
                .filter(|s| matches!(s, Slot::Ready(..)))
                .count();
            let for_other = st.ends[other] > b;
            match &mut st.slots[b] {
                Slot::Ready(batch) => {
                    let batch = batch.clone();
                    st.slots[b] = Slot::Read;
                    shared.changed.notify_all();
                    self.next += 1;
                    return Ok(Some(batch));
                }
                Slot::Empty if held < AHEAD || !for_other => break,
                _ => {}
            }
            st = shared.changed.wait(st).map_err(|_| poisoned())?;
        }
        st.slots[b] = Slot::Making;
        drop(st);
        let made = make_batch(shared.kernels, b);
        let mut st = shared.lock()?;
        let batch = match made {
            Ok(m) => std::sync::Arc::new(m),
            Err(e) => {
                st.slots[b] = Slot::Empty;
                shared.changed.notify_all();
                return Err(e);
            }
        };
        st.slots[b] = match st.ends[other] > b {
            true => Slot::Ready(batch.clone()),
            false => Slot::Read,
        };
        shared.changed.notify_all();
        self.next += 1;
        Ok(Some(batch))
    }

    /// It reads only the batches before `end` (told as early as known,
    /// so that the other reader holds none past them for it); those it
    /// has not read that were held for it, it will not read.
    pub fn only_first(&mut self, end: usize) {
        let Ok(mut st) = self.shared.state.lock() else {
            return;
        };
        let was = st.ends[self.id];
        let end = end.max(self.next).min(was);
        st.ends[self.id] = end;
        for slot in &mut st.slots[end..was] {
            if matches!(slot, Slot::Ready(..)) {
                *slot = Slot::Read;
            }
        }
        self.shared.changed.notify_all();
    }

    /// Gone (dropped, or done early): what it had yet to read is not held
    /// for it.
    fn leave(&mut self) {
        self.only_first(0);
    }

    /// The batches it reads of the first `n` kernels: the whole ones in
    /// them (all of them when `n` reaches the end).
    pub fn batches_of_first(&self, n: usize) -> usize {
        match n >= self.shared.kernels.len() {
            true => self.shared.kernels.len().div_ceil(PER_BATCH),
            false => n / PER_BATCH,
        }
    }
}

impl Drop for Reader<'_, '_> {
    fn drop(&mut self) {
        self.leave();
    }
}

fn poisoned() -> std::io::Error {
    std::io::Error::other("a writer of the report failed")
}

/// Batch `b` of `kernels` as compact JSON, its tasks on every core.
fn make_batch(kernels: &[KernelEntry], b: usize) -> std::io::Result<Vec<Vec<u8>>> {
    let batch = &kernels[b * PER_BATCH..((b + 1) * PER_BATCH).min(kernels.len())];
    batch
        .par_chunks(PER_TASK)
        .enumerate()
        .map(|(t, task)| elements(task, b == 0 && t == 0, Layout::Compact))
        .collect()
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
      "flow_reason":null,"time":{"sampled":12,"timed":10,"total_ns":800,"estimated_ns":4000,
      "min_ns":80,"median_ns":80,"median_range_ns":[80,80],"max_ns":80,
      "not_timed":{"pool_full":2}}}"#;
    let kernel: KernelEntry = serde_json::from_str(kernel).unwrap();
    let report = r#"{"schema":3,"tool":"xpu-asm-run 0.1.0","command":["a b","\u001b","ü"],
      "exit":{"signal":9},"emulate":"pvc","processes":[{"pid":1,"ppid":0,"host":"h",
      "exe":"/bin/x","forked_from":null,"dump_dir":"dumps/h-1","dump_dir_exists":true,
      "launches":5,"appended":2,"unknown_launches":0,"exit":{"code":0},"ended":"seen",
      "rank":3,"local_rank":1,"job_id":"openmpi:1"}],"kernels":[],"totals":{"kernels":1,
      "launches":2,"appended":3,"matched":4,"unmatched":5,"filtered_out":6},
      "unlaunched_compiled":7,"unlaunched_listed":true,"filter":"x|y","isa":"binary",
      "dumps":{"keep":"asm","before":{"bytes":1,"files":2},"after":{"bytes":0,"files":0}},
      "asm_copies":{"limit":2,"left_out":5},"time":{"sampling":{"policy":"sample","first":10,
      "every":100},"sampled":12,"timed":10,"kernels_timed":1,"total_ns":800,"estimated_ns":4000,
      "not_timed":{"pool_full":2}},"warnings":["w","<&>"]}"#;
    let mut report: Report = serde_json::from_str(report).unwrap();
    report.kernels = (0..n)
        .map(|i| {
            let mut k = kernel.clone();
            k.rank = i + 1;
            k.name = format!("k{i}\u{2029}<{}>", "é".repeat(i % 3));
            if i % 2 == 1 {
                (k.flow, k.source, k.mix) = (None, None, None);
                k.pids.clear();
                (k.time, k.time_reason) = (None, Some("the device gave none".into()));
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

    /// Both files from one making of the kernels' JSON, written side by
    /// side, are what serde writes of each; and one reader gone early
    /// (a file that failed) holds up nothing.
    #[test]
    fn shared_batches_make_both_files() {
        for n in [
            0,
            1,
            PER_TASK + 1,
            PER_BATCH,
            AHEAD * PER_BATCH + 3 * PER_BATCH + 5,
        ] {
            let r = rich_report(n);
            let shared = Shared::new(&r.kernels);
            let (mut a, mut b) = shared.readers();
            let write = |layout, reader: &mut Reader| {
                let mut out = Vec::new();
                write_report_from(&mut out, &r, layout, Some(reader)).unwrap();
                String::from_utf8(out).unwrap()
            };
            let (pretty, compact) = std::thread::scope(|s| {
                let t = s.spawn(|| write(Layout::Pretty, &mut a));
                let compact = write(Layout::Compact, &mut b);
                (t.join().unwrap(), compact)
            });
            assert_eq!(pretty, serde_json::to_string_pretty(&r).unwrap(), "{n}");
            assert_eq!(compact, serde_json::to_string(&r).unwrap(), "{n}");
            let shared = Shared::new(&r.kernels);
            let (mut a, b) = shared.readers();
            drop(b);
            assert_eq!(write(Layout::Pretty, &mut a), pretty, "{n}, alone");
        }
    }

    /// A reader of the first kernels only (the page's), beside one of
    /// them all: each file is what serde writes of its report, and the
    /// reader of the first holds up nothing past them: neither once done
    /// (the other would wait for it past [`AHEAD`] batches), nor once it
    /// has said how many it reads, before reading any (the other then
    /// writes its whole file first).
    #[test]
    fn a_reader_of_the_first_kernels_holds_up_nothing_past_them() {
        let total = (AHEAD + 3) * PER_BATCH + 5;
        let r = rich_report(total);
        let all_of = |reader: &mut Reader| {
            let mut out = Vec::new();
            write_report_from(&mut out, &r, Layout::Pretty, Some(reader)).unwrap();
            out
        };
        let first_of = |n, reader: &mut Reader| {
            let mut out = Vec::new();
            write_report_first(&mut out, &r, n, Layout::Compact, Some(reader)).unwrap();
            out
        };
        let want_all = serde_json::to_vec_pretty(&r).unwrap();
        for n in [
            0,
            1,
            PER_TASK + 3,
            PER_BATCH,
            PER_BATCH + 17,
            AHEAD * PER_BATCH + 5,
            total - 1,
            total,
            total + 1,
        ] {
            let mut first = r.clone();
            first.kernels.truncate(n);
            let want = serde_json::to_vec(&first).unwrap();
            let shared = Shared::new(&r.kernels);
            let (mut a, mut b) = shared.readers();
            let (all, some) = std::thread::scope(|s| {
                let t = s.spawn(|| all_of(&mut a));
                let some = first_of(n, &mut b);
                // Still alive, done with its batches: the other goes on.
                (t.join().unwrap(), some)
            });
            drop(b);
            assert_eq!(all, want_all, "{n}");
            assert_eq!(some, want, "{n}");
            if n / PER_BATCH <= AHEAD {
                // Said first: the other is done before it reads a batch.
                let shared = Shared::new(&r.kernels);
                let (mut a, mut b) = shared.readers();
                b.only_first(b.batches_of_first(n));
                assert_eq!(all_of(&mut a), want_all, "{n}, said first");
                assert_eq!(first_of(n, &mut b), want, "{n}, said first");
            }
            // Without a shared reader, and pretty: the same.
            let mut out = Vec::new();
            write_report_first(&mut out, &r, n, Layout::Pretty, None).unwrap();
            assert_eq!(out, serde_json::to_vec_pretty(&first).unwrap(), "{n}");
        }
    }

    /// The pretty layout of compact JSON is serde's, on values of every
    /// shape and strings with every escape.
    #[test]
    fn pretty_of_compact_is_serdes() {
        let values = [
            r#"{"a":[],"b":{},"c":[{}],"d":[[],[1,[2]]],"e":"x\"y\\z\u001b:,{}[]","f":null}"#,
            r#"{"k":-1.5e-7,"t":true,"n":{"m":{"o":[false,"\\"]}}}"#,
        ];
        for v in values {
            let v: serde_json::Value = serde_json::from_str(v).unwrap();
            let compact = serde_json::to_vec(&v).unwrap();
            let mut want = b"\n    ".to_vec();
            indented(&serde_json::to_vec_pretty(&v).unwrap(), &mut want);
            let mut got = Vec::new();
            pretty_batch(&compact, &mut got);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
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
