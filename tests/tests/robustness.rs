//! `xpu-asm-run collect` on hostile capture folders: truncated, corrupt and
//! newer records, records and dump files that cannot be read, `.asm` files
//! without a header or of 100 MB, kernel names made to escape the folder or
//! break the terminal. Each bad item gets a message that names it, all the
//! rest is still reported, nothing panics, and nothing is written outside
//! the capture folder.
//!
//! Every test starts from a real capture (the workload under xpu-asm-run
//! on the real stack, dumps kept whole) and adds its hostile items to it, or
//! writes records by hand where the interposer would never write them.
//!
//! Unreadable files: the tests run as root, and `chmod 000` does not stop
//! root from reading. What makes a read fail (or never finish) for root is
//! the kind of file: a FIFO (opening it for reading waits for a writer), a
//! directory named like a file (`read` fails with EISDIR), a dangling
//! symlink (ENOENT).

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use tempfile::TempDir;
use xpu_asm_tests::record::{self as rec};
use xpu_asm_tests::*;

/// `collect` never needs long on these folders; a hang fails the test.
const COLLECT_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------
// Support

/// A test's folder: `root/deep/er/out` is the capture, so that names
/// climbing three levels out of it still land inside `root`, where
/// [`Snapshot`] sees them. `root/bait` holds files an escape would touch.
struct BaitScratch {
    _dir: TempDir,
    root: PathBuf,
    out: PathBuf,
    bait: PathBuf,
}

fn bait_scratch() -> BaitScratch {
    require_stack();
    let dir = temp_dir("robustness");
    let root = dir.path().to_path_buf();
    let out = root.join("deep/er/out");
    let bait = root.join("bait");
    std::fs::create_dir_all(out.parent().expect("has a parent")).expect("mkdir");
    std::fs::create_dir_all(&bait).expect("mkdir");
    // IGC-like files: pruning would delete the .ll, copying would add files.
    std::fs::write(bait.join("keep.txt"), "bait\n").expect("write");
    std::fs::write(bait.join("OCL_asm00000000babebabe.spv"), "spv").expect("write");
    std::fs::write(bait.join("OCL_asm00000000babebabe_codegen.ll"), "ll").expect("write");
    std::fs::write(
        bait.join("OCL_asm00000000babebabe_simd32_entry_0001.asm"),
        "//.kernel evil_k\n",
    )
    .expect("write");
    BaitScratch {
        _dir: dir,
        root,
        out,
        bait,
    }
}

/// Everything under `root` except the capture folder: kind, size and a
/// hash of the contents (symlinks by target, never followed).
#[derive(Debug, PartialEq, Eq)]
struct Snapshot(BTreeMap<String, String>);

impl Snapshot {
    fn take(s: &BaitScratch) -> Snapshot {
        let mut m = BTreeMap::new();
        let mut stack = vec![s.root.clone()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p == s.out {
                    continue;
                }
                let rel = p.strip_prefix(&s.root).unwrap_or(&p).display().to_string();
                let Ok(meta) = std::fs::symlink_metadata(&p) else {
                    m.insert(rel, "vanished".into());
                    continue;
                };
                let ft = meta.file_type();
                let what = if ft.is_symlink() {
                    format!("link -> {:?}", std::fs::read_link(&p).ok())
                } else if ft.is_dir() {
                    stack.push(p.clone());
                    "dir".to_string()
                } else if ft.is_file() {
                    let bytes = std::fs::read(&p).unwrap_or_default();
                    format!(
                        "file {} {}",
                        meta.len(),
                        rec::hex(&Sha256::digest(&bytes)[..8])
                    )
                } else {
                    format!("special {:?}", ft)
                };
                m.insert(rel, what);
            }
        }
        Snapshot(m)
    }
}

/// A collect run, with what a failure must show.
struct Collected {
    shown: String,
    output: Output,
    out: PathBuf,
    elapsed: Duration,
    /// Why it had to be stopped, when it did not end by itself.
    timed_out: Option<String>,
}

impl Collected {
    fn ctx(&self) -> String {
        let report = std::fs::read_to_string(self.out.join("report.json"))
            .unwrap_or_else(|e| format!("(no report.json: {e})"));
        let timed = match &self.timed_out {
            Some(why) => format!("\nHUNG: {why}"),
            None => String::new(),
        };
        format!(
            "{}\nran {:?}{timed}\nreport.json:\n{report}",
            describe(&self.shown, &self.output, &self.out),
            self.elapsed
        )
    }

    fn report(&self) -> Value {
        let text = std::fs::read_to_string(self.out.join("report.json"))
            .unwrap_or_else(|e| panic!("no report.json ({e})\n{}", self.ctx()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("report.json is not JSON ({e})\n{}", self.ctx()))
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Finished in time, exited `code`, and no panic.
    fn assert_exit(&self, code: i32) {
        assert!(self.timed_out.is_none(), "collect hung\n{}", self.ctx());
        assert_eq!(
            (self.output.status.code(), self.output.status.signal()),
            (Some(code), None),
            "collect must exit with {code}\n{}",
            self.ctx()
        );
        assert!(
            !self.stderr().contains("panicked"),
            "collect panicked\n{}",
            self.ctx()
        );
    }

    /// The report's warnings, each checked to name its item.
    fn warnings(&self) -> Vec<String> {
        self.report()["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| w.as_str().unwrap_or("").to_string())
            .collect()
    }

    /// Some warning names `item` and says `what`.
    fn assert_warned(&self, item: &str, what: &str) {
        let w = self.warnings();
        assert!(
            w.iter().any(|w| w.contains(item) && w.contains(what)),
            "no warning names {item:?} and says {what:?}; warnings:\n  {}\n{}",
            w.join("\n  "),
            self.ctx()
        );
    }
}

/// `xpu-asm-run collect ARGS DIR`, interrupted after [`COLLECT_TIMEOUT`].
fn collect_in_time(dir: &Path, args: &[&str]) -> Collected {
    collect_within(dir, args, COLLECT_TIMEOUT)
}

/// `xpu-asm-run collect ARGS DIR`; after `timeout` it gets SIGINT (as from
/// Ctrl-C), and SIGKILL 3 s later if that did not stop it.
fn collect_within(dir: &Path, args: &[&str], timeout: Duration) -> Collected {
    let mut cmd = Command::new(xpu_asm_run());
    cmd.arg("collect")
        .args(args)
        .arg(dir)
        .current_dir(dir.parent().unwrap_or(dir));
    hermetic(&mut cmd);
    let shown = shell_words(&cmd);
    let f = run_until(&mut cmd, timeout, Overrun::InterruptThenKill);
    Collected {
        shown,
        output: f.output,
        out: dir.to_path_buf(),
        elapsed: f.elapsed,
        timed_out: f.overran,
    }
}

/// What the real capture holds.
struct Base {
    pid: u32,
    /// `dumps/<host>-<pid>`
    dump_dir: String,
    /// IGC's hash of module a (the `<hash>` of `OCL_asm<hash>.spv`).
    igc_hash: String,
}

/// The kernels of the real capture: `imm:a:scale:3`, `reg:a:scale_v2:2:2`.
const BASE_KERNELS: [(&str, u64, u64); 2] = [(SCALE, 3, 3), (SCALE_V2, 4, 2)];

/// A real capture in `s.out`, dumps kept whole.
fn base_capture(s: &BaitScratch) -> Base {
    let mut cmd = Command::new(xpu_asm_run());
    // IGC's dumps on both stacks: hostile dump files are among the cases.
    cmd.args([
        "-q",
        "--keep",
        "all",
        "--isa",
        "dump",
        "--emulate",
        "pvc",
        "-o",
    ])
    .arg(&s.out)
    .arg("--")
    .arg(workload())
    .args(["--via", "ddi", "--module"])
    .arg(format!("a={}", spirv("a").display()))
    .args(["imm:a:scale:3", "reg:a:scale_v2:2:2"])
    .current_dir(&s.root);
    hermetic(&mut cmd);
    let shown = shell_words(&cmd);
    let output = run_with_timeout(&mut cmd);
    assert!(
        output.status.success(),
        "the real capture failed\n{}",
        describe(&shown, &output, &s.out)
    );
    let recs = records(&s.out);
    assert_eq!(recs.len(), 1, "{}", describe(&shown, &output, &s.out));
    let r = &recs[0];
    let dump_dir = r.dump_dir.clone();
    let igc_hash = std::fs::read_dir(s.out.join(&dump_dir))
        .expect("the dump folder")
        .flatten()
        .find_map(|e| {
            let n = e.file_name().into_string().ok()?;
            Some(n.strip_prefix("OCL_asm")?.strip_suffix(".spv")?.to_string())
        })
        .unwrap_or_else(|| panic!("no OCL_asm*.spv in {dump_dir}"));
    Base {
        pid: r.pid,
        dump_dir,
        igc_hash,
    }
}

/// `(launches, appended, status)` per (name, pids) of the launched kernels.
fn kernel_rows_by_pids(r: &Value) -> BTreeMap<(String, Vec<u64>), (u64, u64, String)> {
    let mut m = BTreeMap::new();
    for k in r["kernels"].as_array().into_iter().flatten() {
        let pids = k["pids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        m.insert(
            (k["name"].as_str().unwrap_or("?").to_string(), pids),
            (
                k["launches"].as_u64().unwrap_or(u64::MAX),
                k["appended"].as_u64().unwrap_or(u64::MAX),
                k["status"].as_str().unwrap_or("?").to_string(),
            ),
        );
    }
    m
}

/// The real process's kernels are all there, exact and matched.
fn assert_base_reported(c: &Collected, base: &Base) {
    let rows = kernel_rows_by_pids(&c.report());
    for (name, l, a) in BASE_KERNELS {
        assert_eq!(
            rows.get(&(name.to_string(), vec![base.pid as u64])),
            Some(&(l, a, "matched".to_string())),
            "kernel {name} of the real process {}\n{}",
            base.pid,
            c.ctx()
        );
    }
}

/// A record written by hand, in the record format.
struct HandRecord {
    /// File names: `<file_stem>.events` / `.counts`.
    file_stem: String,
    host: String,
    pid: u32,
    /// `None`: the field is left out (the reader then uses the default).
    dump_dir: Option<String>,
    /// `(id, sha256)`
    modules: Vec<(u32, String)>,
    /// `(id, module, name, launches, appended)`
    kernels: Vec<(u32, u32, Vec<u8>, u64, u64)>,
}

impl HandRecord {
    fn new(pid: u32) -> HandRecord {
        HandRecord {
            file_stem: format!("h-{pid}"),
            host: "h".into(),
            pid,
            dump_dir: None,
            modules: vec![(1, "00".repeat(32))],
            kernels: vec![(1, 1, format!("k_{pid}").into_bytes(), pid as u64, 1)],
        }
    }

    fn header(&self) -> Vec<u8> {
        let mut l = format!(
            "{{\"record\":\"xpu-asm\",\"version\":{},\"type\":\"process\",\"pid\":{},\"ppid\":1,\"host\":",
            rec::VERSION,
            self.pid
        )
        .into_bytes();
        rec::push_json_str(&mut l, &self.host);
        l.extend_from_slice(b",\"exe\":\"/bin/hand\",\"cmdline\":[\"hand\"]");
        if let Some(d) = &self.dump_dir {
            l.extend_from_slice(b",\"dump_dir\":");
            rec::push_json_str(&mut l, d);
        }
        l.extend_from_slice(
            b",\"forked_from\":null,\"start_unix_ms\":1,\"env\":{\"IGC_ShaderDumpEnable\":{\"value\":\"1\",\"set_by\":\"xpu-asm\"}}}\n",
        );
        l
    }

    fn events(&self) -> Vec<u8> {
        let mut ev = self.header();
        for (id, sha) in &self.modules {
            ev.extend_from_slice(
                format!(
                    "{{\"type\":\"module\",\"id\":{id},\"format\":\"spirv\",\"size\":1,\"sha256\":\"{sha}\",\"build_flags\":\"\",\"kernel_names\":[]}}\n"
                )
                .as_bytes(),
            );
        }
        for (id, module, name, _, _) in &self.kernels {
            ev.extend_from_slice(
                format!("{{\"type\":\"kernel\",\"id\":{id},\"module\":{module},").as_bytes(),
            );
            rec::push_json_bytes_field(&mut ev, "name", name);
            ev.extend_from_slice(b"}\n");
        }
        ev.extend_from_slice(b"{\"type\":\"exit\"}\n");
        ev
    }

    fn counts(&self) -> Vec<u8> {
        let max = self.kernels.iter().map(|k| k.0).max().unwrap_or(0);
        let mut c = rec::counts_header().to_vec();
        for id in 0..=max {
            let (l, a) = self
                .kernels
                .iter()
                .find(|k| k.0 == id)
                .map_or((0, 0), |k| (k.3, k.4));
            c.extend_from_slice(&rec::encode_slot(l, a));
        }
        c
    }

    fn write(&self, out: &Path) {
        self.write_with(out, &self.events(), &self.counts());
    }

    fn write_with(&self, out: &Path, events: &[u8], counts: &[u8]) {
        let dir = out.join(rec::RECORDS_DIR);
        std::fs::create_dir_all(&dir).expect("records/");
        std::fs::write(dir.join(format!("{}.events", self.file_stem)), events).expect("write");
        std::fs::write(dir.join(format!("{}.counts", self.file_stem)), counts).expect("write");
    }
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo")
        .arg(p)
        .status()
        .expect("mkfifo(1) runs");
    assert!(st.success(), "mkfifo {} failed", p.display());
    let ft = std::fs::symlink_metadata(p).expect("the fifo").file_type();
    assert!(ft.is_fifo());
}

// ---------------------------------------------------------------------------
// Records

/// Truncated, corrupt, newer, empty and unreadable records and counts files:
/// each named in a warning; the real process and every readable part of the
/// others are reported.
#[test]
fn hostile_records_are_named_and_everything_else_reported() {
    let s = bait_scratch();
    let base = base_capture(&s);
    let records = s.out.join("records");

    // 101: the process was killed while writing its last event.
    let r101 = HandRecord::new(101);
    let mut ev = r101.events();
    ev.truncate(ev.len() - 1); // the exit event loses its newline...
    ev.extend_from_slice(b"{\"type\":\"kernel\",\"id\":9,\"mod"); // ...and a half event follows
    r101.write_with(&s.out, &ev, &r101.counts());
    // 102: a corrupt line in the middle.
    let r102 = HandRecord::new(102);
    let mut ev = r102.header();
    ev.extend_from_slice(b"{\"type\":\"module\",\"id\":1,\x00garbage\xff\n");
    ev.extend_from_slice(&r102.events()[r102.header().len()..]);
    r102.write_with(&s.out, &ev, &r102.counts());
    // 103: written by a newer xpu-asm.
    let r103 = HandRecord::new(103);
    let ev = String::from_utf8(r103.events()).expect("UTF-8").replace(
        &format!("\"version\":{}", rec::VERSION),
        &format!("\"version\":{}", rec::VERSION + 1),
    );
    r103.write_with(&s.out, ev.as_bytes(), &r103.counts());
    // 104: empty events file; 105: JSON, but not a record; 113: not JSON.
    HandRecord::new(104).write_with(&s.out, b"", &[]);
    HandRecord::new(105).write_with(&s.out, b"{\"hello\":\"world\"}\n", &[]);
    HandRecord::new(113).write_with(&s.out, b"\xff\xfe\x00 not json\n", &[]);
    // 106: counts file cut inside the header; 107: counts of a newer
    // version; 108: counts cut before the kernel's slot.
    let r106 = HandRecord::new(106);
    r106.write_with(&s.out, &r106.events(), &r106.counts()[..20]);
    let r107 = HandRecord::new(107);
    let mut c = r107.counts();
    c[8..12].copy_from_slice(&(rec::VERSION + 1).to_le_bytes());
    r107.write_with(&s.out, &r107.events(), &c);
    let r108 = HandRecord::new(108);
    r108.write_with(
        &s.out,
        &r108.events(),
        &r108.counts()[..rec::COUNTS_HEADER_LEN + rec::COUNTS_SLOT_LEN],
    );
    // 109: no counts file.
    let r109 = HandRecord::new(109);
    r109.write(&s.out);
    std::fs::remove_file(records.join("h-109.counts")).expect("rm");
    // 110: a folder named like an events file; 111: a dangling symlink.
    std::fs::create_dir(records.join("h-110.events")).expect("mkdir");
    std::os::unix::fs::symlink(s.root.join("nowhere"), records.join("h-111.events"))
        .expect("symlink");
    // 112: a module event with an id the kernel does not use, and a kernel
    // of a module the record never saw.
    let mut r112 = HandRecord::new(112);
    r112.kernels = vec![(1, 7, b"orphan_k".to_vec(), 5, 5)];
    r112.write(&s.out);

    let before = Snapshot::take(&s);
    let c = collect_in_time(&s.out, &[]);
    c.assert_exit(0);
    assert_base_reported(&c, &base);
    c.assert_warned("records/h-101.events:", "truncated last event");
    c.assert_warned("records/h-102.events:2", "corrupt event");
    c.assert_warned(
        "records/h-103.events",
        &format!("record version {}", rec::VERSION + 1),
    );
    c.assert_warned("records/h-104.events", "empty record");
    c.assert_warned("records/h-105.events", "not an xpu-asm record");
    c.assert_warned("records/h-113.events:1", "corrupt event");
    c.assert_warned("records/h-113.events", "empty record");
    c.assert_warned("records/h-106.counts", "not an xpu-asm counts file");
    c.assert_warned(
        "records/h-107.counts",
        &format!("counts version {}", rec::VERSION + 1),
    );
    c.assert_warned("records/h-108.counts", "no counter for kernel id 1");
    c.assert_warned("records/h-109.counts", "cannot read");
    c.assert_warned("records/h-110.events", "cannot read");
    c.assert_warned("records/h-111.events", "cannot read");
    // What could be read is reported: the truncated and the corrupt records
    // whole (bar the broken lines), counts where the counts file allows.
    let rows = kernel_rows_by_pids(&c.report());
    let row = |name: &str, pid: u64| rows.get(&(name.to_string(), vec![pid])).cloned();
    let missing = "dump-folder-missing".to_string();
    assert_eq!(
        row("k_101", 101),
        Some((101, 1, missing.clone())),
        "{}",
        c.ctx()
    );
    assert_eq!(
        row("k_102", 102),
        Some((102, 1, missing.clone())),
        "{}",
        c.ctx()
    );
    assert_eq!(
        row("k_109", 109),
        None,
        "unknown counts are no launches\n{}",
        c.ctx()
    );
    assert_eq!(
        row("orphan_k", 112),
        Some((5, 5, "module-unknown".to_string())),
        "{}",
        c.ctx()
    );
    for pid in [103, 104, 105, 110, 111, 113] {
        assert!(
            !rows.keys().any(|(_, pids)| pids.contains(&pid)),
            "nothing of the unreadable record {pid} can be reported\n{}",
            c.ctx()
        );
    }
    assert_eq!(
        Snapshot::take(&s),
        before,
        "files outside the capture changed"
    );
}

/// A FIFO named like an events or counts file: opening it for reading
/// waits for a writer that never comes. collect must not hang on it (nor
/// ignore a Ctrl-C while it waits): it names the item and goes on.
#[test]
fn fifos_in_records_do_not_hang_collect() {
    let s = bait_scratch();
    let base = base_capture(&s);
    let records = s.out.join("records");
    mkfifo(&records.join("h-120.events"));
    let r121 = HandRecord::new(121);
    r121.write(&s.out);
    std::fs::remove_file(records.join("h-121.counts")).expect("rm");
    mkfifo(&records.join("h-121.counts"));
    let c = collect_within(&s.out, &[], Duration::from_secs(15));
    c.assert_exit(0);
    assert_base_reported(&c, &base);
    c.assert_warned("records/h-120.events", "");
    c.assert_warned("records/h-121.counts", "");
}

// ---------------------------------------------------------------------------
// Dump folders

/// In the real process's dump folder: FIFOs, a folder and a dangling
/// symlink named like IGC's files, an `.asm` without a header, a 100 MB
/// `.asm` of a real kernel and a 100 MB `.asm` that is all header comment.
#[test]
fn hostile_dump_files_are_named_and_everything_else_reported() {
    let s = bait_scratch();
    let base = base_capture(&s);
    let d = s.out.join(&base.dump_dir);
    let h = &base.igc_hash;
    let name = |rest: &str| format!("OCL_asm{h}{rest}");
    let fifo_asm = name("_simd16_entry_0001.asm");
    let fifo_spv = "OCL_asm00000000facefeed.spv".to_string();
    let fifo_kernbin = name("_entry_0009.kernbin");
    let dir_asm = name("_simd16_entry_0002.asm");
    let dangling_asm = name("_simd16_entry_0003.asm");
    let headerless = name("_simd16_entry_0004.asm");
    let endless = name("_simd8_entry_0002.asm");
    let big_retry = name("_1_simd32_entry_0002.asm");
    // Found before the FIFOs exist: reading one would wait forever.
    let scale_asm = asm_kernels(&d)
        .into_iter()
        .find(|(_, k)| k == SCALE)
        .map(|(p, _)| p)
        .expect("the real scale .asm");
    mkfifo(&d.join(&fifo_asm));
    mkfifo(&d.join(&fifo_spv));
    mkfifo(&d.join(&fifo_kernbin));
    std::fs::create_dir(d.join(&dir_asm)).expect("mkdir");
    std::os::unix::fs::symlink(s.root.join("nowhere.asm"), d.join(&dangling_asm)).expect("symlink");
    std::fs::write(
        d.join(&headerless),
        "    mov (16|M0) r1.0<1>:f r2.0<1;1,0>:f\n",
    )
    .expect("write");
    // 100 MB of one comment line: the header never ends.
    let mut endless_text = b"//".to_vec();
    endless_text.resize(100 << 20, b'x');
    std::fs::write(d.join(&endless), &endless_text).expect("write");
    drop(endless_text);
    // A 100 MB retry of `scale`: its real header, then 100 MB of code.
    let mut big = std::fs::read(&scale_asm).expect("read");
    let line = b"         mov (16|M0)              r10.0<1>:f    r12.0<1;1,0>:f\n";
    while big.len() < 100 << 20 {
        big.extend_from_slice(line);
    }
    std::fs::write(d.join(&big_retry), &big).expect("write");
    drop(big);

    let before = Snapshot::take(&s);
    let c = collect_in_time(&s.out, &["--all"]);
    c.assert_exit(0);
    assert_base_reported(&c, &base);
    assert!(
        c.elapsed < Duration::from_secs(20),
        "a 100 MB .asm must not be read whole ({:?})\n{}",
        c.elapsed,
        c.ctx()
    );
    let dd = &base.dump_dir;
    c.assert_warned(&format!("{dd}/{headerless}"), "no `//.kernel` line");
    c.assert_warned(&format!("{dd}/{endless}"), "no `//.kernel` line");
    // The 100 MB retry is a candidate of `scale`, with its header read.
    let rep = c.report();
    let scale = rep["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|k| k["name"] == SCALE)
        .expect("scale is reported");
    let big_path = format!("{dd}/{big_retry}");
    let cand = scale["asm_candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["path"] == big_path.as_str())
        .unwrap_or_else(|| panic!("{big_path} is not a candidate of scale\n{}", c.ctx()));
    assert_eq!(cand["retry"], 1, "{}", c.ctx());
    assert_eq!(cand["instructions"], scale["instructions"], "{}", c.ctx());
    // Items that are not regular files cannot be IGC's dumps: each named.
    for item in [&fifo_asm, &fifo_spv, &fifo_kernbin, &dir_asm, &dangling_asm] {
        c.assert_warned(&format!("{dd}/{item}"), "");
    }
    assert_eq!(
        Snapshot::take(&s),
        before,
        "files outside the capture changed"
    );
}

// ---------------------------------------------------------------------------
// Names and paths that try to escape

/// Kernel names with `/`, `..`, a newline, 4,000 characters, bytes that are
/// not UTF-8, terminal escapes or nothing at all; records whose host or
/// dump folder climbs out of the capture or is absolute; `asm`,
/// `report.json` and `collect.json` replaced by symlinks to the outside.
/// Every kernel is reported exactly, copies stay inside, and nothing
/// outside the capture changes.
#[test]
fn hostile_names_and_paths_stay_inside_the_capture() {
    let s = bait_scratch();
    let base = base_capture(&s);
    let spv = b"\x03\x02\x23\x07 hostile module";
    let sha = rec::hex(&Sha256::digest(spv));
    let hash = "00000000feedface";
    let d = s.out.join("dumps/h-300");
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join(format!("OCL_asm{hash}.spv")), spv).expect("write");
    let names: Vec<Vec<u8>> = vec![
        b"a/b/c".to_vec(),
        b"../../../escape".to_vec(),
        b"..".to_vec(),
        b"/abs/escape".to_vec(),
        vec![b'k'; 4000],
        b"bad\xff\xfeutf8".to_vec(),
        b"\x1b]0;title\x07\x1b[2Jclear".to_vec(),
        b"".to_vec(),
        b"two\nlines".to_vec(),
    ];
    let mut r300 = HandRecord::new(300);
    r300.modules = vec![(1, sha.clone())];
    r300.kernels = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let id = i as u32 + 1;
        r300.kernels.push((id, 1, n.clone(), 1000 - i as u64, 1));
        // IGC writes the name raw, its newlines too.
        let mut asm = b"//.kernel ".to_vec();
        asm.extend_from_slice(n);
        asm.extend_from_slice(
            format!("\n//.platform PVCXT\n//.instCount {}\n\n  nop\n", 10 + i).as_bytes(),
        );
        std::fs::write(
            d.join(format!("OCL_asm{hash}_simd32_entry_{:04}.asm", i + 1)),
            asm,
        )
        .expect("write");
    }
    r300.write(&s.out);
    // Records whose dump folders point out of the capture.
    let mut r301 = HandRecord::new(301);
    r301.host = "../../../bait".into();
    r301.write(&s.out);
    let mut r302 = HandRecord::new(302);
    r302.dump_dir = Some("../../../bait".into());
    r302.write(&s.out);
    let mut r303 = HandRecord::new(303);
    r303.dump_dir = Some(s.bait.display().to_string());
    r303.modules = vec![(1, rec::hex(&Sha256::digest(b"spv")))];
    r303.kernels = vec![(1, 1, b"evil_k".to_vec(), 7, 7)];
    r303.write(&s.out);
    // Our own files replaced by links to the outside.
    std::fs::create_dir_all(s.out.join("asm")).expect("asm/");
    std::fs::remove_dir_all(s.out.join("asm")).expect("rm asm/");
    std::os::unix::fs::symlink(&s.bait, s.out.join("asm")).expect("symlink");
    for f in ["report.json", "collect.json"] {
        let _ = std::fs::remove_file(s.out.join(f));
        std::os::unix::fs::symlink(s.bait.join(f), s.out.join(f)).expect("symlink");
    }

    let before = Snapshot::take(&s);
    let c = collect_in_time(&s.out, &["--keep", "launched"]);
    c.assert_exit(0);
    assert_eq!(
        Snapshot::take(&s),
        before,
        "files outside the capture changed"
    );
    assert!(!Path::new("/abs/escape").exists() && !Path::new("/abs").exists());
    for f in ["asm", "report.json", "collect.json"] {
        let ft = std::fs::symlink_metadata(s.out.join(f))
            .expect("exists")
            .file_type();
        assert!(!ft.is_symlink(), "{f} is still a link\n{}", c.ctx());
    }
    assert_base_reported(&c, &base);
    c.assert_warned("process 301", "not a plain path inside the capture");
    c.assert_warned("process 302", "not a plain path inside the capture");
    c.assert_warned("process 303", "outside the capture");

    let rep = c.report();
    let entries: Vec<&Value> = rep["kernels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| k["pids"] == serde_json::json!([300]))
        .collect();
    assert_eq!(entries.len(), names.len(), "{}", c.ctx());
    for (i, n) in names.iter().enumerate() {
        let launches = 1000 - i as u64;
        let e = entries
            .iter()
            .find(|k| k["launches"] == launches)
            .unwrap_or_else(|| panic!("no kernel with {launches} launches\n{}", c.ctx()));
        let shown = String::from_utf8_lossy(n).into_owned();
        assert_eq!(e["name"], shown.as_str(), "{}", c.ctx());
        match std::str::from_utf8(n) {
            Ok(_) => assert!(e.get("name_hex").is_none(), "{}", c.ctx()),
            Err(_) => assert_eq!(e["name_hex"], rec::hex(n).as_str(), "{}", c.ctx()),
        }
        assert_eq!(e["status"], "matched", "{:?}\n{}", shown, c.ctx());
        assert_eq!(e["instructions"], 10 + i as u64, "{}", c.ctx());
        let copy = e["asm_copy"].as_str().unwrap_or("");
        let file = copy.strip_prefix("asm/").unwrap_or("");
        assert!(
            !file.is_empty()
                && file.len() <= 80
                && !file.starts_with('.')
                && file
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "unsafe copy name {copy:?} for {shown:?}\n{}",
            c.ctx()
        );
        let src = s.out.join(e["asm"].as_str().unwrap_or("-"));
        assert_eq!(
            std::fs::read(s.out.join(copy)).ok(),
            std::fs::read(&src).ok(),
            "{copy} is not a copy of {}\n{}",
            src.display(),
            c.ctx()
        );
    }
    // The table on stdout: no control character reaches the terminal, and
    // the two-line name stays on one line.
    let stdout = String::from_utf8_lossy(&c.output.stdout);
    assert!(
        !stdout.chars().any(|ch| ch.is_control() && ch != '\n'),
        "control characters in the table\n{}",
        c.ctx()
    );
    assert!(
        stdout.lines().any(|l| l.contains("two\\nlines"))
            && !stdout.lines().any(|l| l.starts_with("lines")),
        "the newline in a name must be shown escaped\n{}",
        c.ctx()
    );
    let copies = std::fs::read_dir(s.out.join("asm")).expect("asm/").count();
    // Process 303's `evil_k` is matched in the outside folder its record
    // names (read, never pruned): it has a copy too.
    assert_eq!(
        copies,
        names.len() - 1 + BASE_KERNELS.len() + 1,
        "one copy per matched kernel\n{}",
        c.ctx()
    );
}

// ---------------------------------------------------------------------------
// Folders that are not captures, and broken files of xpu-asm-run's own

#[test]
fn empty_and_foreign_folders_are_refused_with_a_clear_message() {
    let s = bait_scratch();
    let empty = s.root.join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let c = collect_in_time(&empty, &[]);
    c.assert_exit(1);
    assert!(
        c.stderr()
            .contains(&format!("{} is not an xpu-asm capture", empty.display())),
        "{}",
        c.ctx()
    );
    let missing = s.root.join("missing");
    let c = collect_in_time(&missing, &[]);
    c.assert_exit(1);
    assert!(
        c.stderr()
            .contains(&format!("{}: no such folder", missing.display())),
        "{}",
        c.ctx()
    );
    let file = s.bait.join("keep.txt");
    let c = collect_in_time(&file, &[]);
    c.assert_exit(1);
    assert!(
        c.stderr().contains(&file.display().to_string()),
        "{}",
        c.ctx()
    );
    assert!(
        list_files(&empty).is_empty(),
        "collect wrote into a folder it refused"
    );
}

/// A capture with an empty records folder, a corrupt `run.json` and a
/// corrupt `collect.json`: a report that says so, nothing else.
#[test]
fn broken_run_and_state_files_are_named_and_the_rest_reported() {
    let s = bait_scratch();
    let base = base_capture(&s);
    std::fs::write(s.out.join("run.json"), b"{\"schema\": 1, \"command\": [").expect("write");
    std::fs::write(s.out.join("collect.json"), b"\x00\xff").expect("write");
    let c = collect_in_time(&s.out, &[]);
    c.assert_exit(0);
    assert_base_reported(&c, &base);
    c.assert_warned("run.json", "unreadable");
    c.assert_warned("collect.json", "unreadable");
    assert!(c.report()["exit"].is_null(), "{}", c.ctx());

    let bare = s.root.join("bare");
    std::fs::create_dir_all(bare.join("records")).expect("mkdir");
    let c = collect_in_time(&bare, &[]);
    c.assert_exit(0);
    let rep = c.report();
    assert_eq!(rep["processes"], serde_json::json!([]), "{}", c.ctx());
    assert_eq!(rep["kernels"], serde_json::json!([]), "{}", c.ctx());
    c.assert_warned("run.json", "cannot read");
    assert!(
        String::from_utf8_lossy(&c.output.stdout).contains("no kernel was launched"),
        "{}",
        c.ctx()
    );
}
