//! The counting core under concurrency: many threads launching many kernels
//! at once while other threads create and destroy kernels (fresh handles,
//! reused handles, enough distinct kernels to map a second chunk of the
//! counts file) and record, execute, reset and destroy regular command
//! lists. The totals read back from the counts file through the record
//! reader must be exact.
//!
//! The interposer reads `XPU_ASM_OUT` once, in its library constructor,
//! which runs when this test binary loads: too early for the test to set
//! it. So the test re-runs its own binary with `XPU_ASM_OUT` set (and
//! [`CHILD_ENV`]), the child does the work and writes what it expects, and
//! the parent compares that with what the child's record says. The core is
//! process-global: this file holds this one test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use xpu_asm_interposer::state;
use xpu_asm_record::{read, OUT_ENV, RECORDS_DIR};

const TEST_NAME: &str = "counting_core_is_exact_under_concurrency";
/// Set in the child: the file to write the expected totals to.
const CHILD_ENV: &str = "XPU_ASM_STRESS_EXPECTED";
const CHILD_TIMEOUT: Duration = Duration::from_secs(300);

/// Threads launching on long-lived kernels, each on its own immediate list,
/// at least this often and until the other threads are done.
const LAUNCHERS: usize = 6;
const LAUNCHES_PER_LAUNCHER: usize = 200_000;
/// Threads creating, launching and destroying kernels.
const CHURNERS: usize = 2;
/// Distinct kernels each churner creates: together more than the 4096
/// counter slots of one mapping of the counts file.
const CHURN_KERNELS: usize = 2_200;
/// Threads recording and executing regular command lists.
const LISTERS: usize = 2;
const LIST_ROUNDS: usize = 8_000;
/// Long-lived kernels of the stable module.
const STABLE: usize = 16;

// Fake handles shaped like heap pointers; the ranges never overlap.
fn stable_kernel(i: usize) -> usize {
    0x5555_0000_0000 + (i + 1) * 0x240
}
fn churn_kernel(churner: usize, j: usize) -> usize {
    0x5600_0000_0000 + churner * 0x1_0000_0000 + (j + 1) * 0x240
}
fn reused_kernel(churner: usize) -> usize {
    0x5700_0000_0000 + (churner + 1) * 0x240
}
fn never_created_kernel(t: usize) -> usize {
    0x5800_0000_0000 + (t + 1) * 0x240
}
fn immediate_list(t: usize) -> usize {
    0x7700_0000_0000 + (t + 1) * 0x1c0
}
fn regular_list(t: usize) -> usize {
    0x7800_0000_0000 + (t + 1) * 0x1c0
}
fn module(i: usize) -> usize {
    0x6600_0000_0000 + (i + 1) * 0x300
}

fn stable_name(i: usize) -> String {
    format!("stable_{i}")
}

fn create_module(handle: usize, seed: u8, names: &[String]) {
    let spirv: Vec<u8> = (0..512u32).map(|i| (i as u8) ^ seed).collect();
    let names: Vec<Vec<u8>> = names.iter().map(|n| n.clone().into_bytes()).collect();
    state::modules::module_created(
        handle,
        0,
        &[state::modules::ModuleInput {
            bytes: &spirv,
            build_flags: b"",
            spec_constants: Vec::new(),
        }],
        &names,
        Err("not built".into()),
        state::modules::DeviceRef::UNKNOWN,
    );
}

/// What one thread launched: name -> (launches, appended), and launches of
/// kernel handles never created.
#[derive(Default)]
struct Tally {
    kernels: BTreeMap<String, (u64, u64)>,
    unknown: u64,
    /// Launch calls of the launcher threads.
    launcher_calls: u64,
}

impl Tally {
    fn add(&mut self, name: &str, launches: u64, appended: u64) {
        let e = self.kernels.entry(name.to_string()).or_insert((0, 0));
        e.0 += launches;
        e.1 += appended;
    }

    fn merge(&mut self, other: Tally) {
        for (name, (l, a)) in other.kernels {
            self.add(&name, l, a);
        }
        self.unknown += other.unknown;
        self.launcher_calls += other.launcher_calls;
    }
}

/// Launches on the stable kernels (all threads share them: contended
/// counters) and, now and then, on a handle nobody created.
fn launcher_thread(t: usize, others_done: &AtomicBool) -> Tally {
    let mut tally = Tally::default();
    let list = immediate_list(t);
    state::list_created(list, true);
    let mut i = 0;
    while i < LAUNCHES_PER_LAUNCHER || !others_done.load(Ordering::Relaxed) {
        i += 1;
        tally.launcher_calls += 1;
        if i % 997 == 0 {
            state::launch_with(
                list,
                never_created_kernel(t),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
            tally.unknown += 1;
            continue;
        }
        let k = (t * 7 + i * 13) % STABLE;
        state::launch_with(
            list,
            stable_kernel(k),
            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
        );
        tally.add(&stable_name(k), 1, 1);
    }
    state::list_destroyed(list);
    tally
}

/// Creates kernels with fresh handles (each a kernel of its own), launches
/// them, destroys them; and gives one handle to two kernels in turn.
fn churner(c: usize) -> Tally {
    let mut tally = Tally::default();
    let list = immediate_list(100 + c);
    state::list_created(list, true);
    let m = module(10 + c);
    create_module(m, 10 + c as u8, &[]);
    for j in 0..CHURN_KERNELS {
        let name = format!("churn_{c}_{j}");
        let h = churn_kernel(c, j);
        state::modules::kernel_created(m, name.as_bytes(), h, None);
        let n = (j % 5 + 1) as u64;
        for _ in 0..n {
            state::launch_with(
                list,
                h,
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
        }
        tally.add(&name, n, n);
        state::modules::kernel_destroyed(h);
        if j % 10 == 0 {
            // The driver hands a destroyed kernel's handle to the next one.
            let h = reused_kernel(c);
            for (name, n) in [(format!("reuse_a_{c}"), 2u64), (format!("reuse_b_{c}"), 3)] {
                state::modules::kernel_created(m, name.as_bytes(), h, None);
                for _ in 0..n {
                    state::launch_with(
                        list,
                        h,
                        xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
                    );
                }
                tally.add(&name, n, n);
                state::modules::kernel_destroyed(h);
            }
        }
    }
    state::list_destroyed(list);
    tally
}

/// Regular lists: appends count as launches once per execution; a reset
/// forgets them; the handle is then reused for an immediate list.
fn lister(t: usize) -> Tally {
    let mut tally = Tally::default();
    let list = regular_list(t);
    for r in 0..LIST_ROUNDS {
        state::list_created(list, false);
        let k = (r + t) % STABLE;
        let name = stable_name(k);
        let appends = (r % 7 + 1) as u64;
        for _ in 0..appends {
            state::launch_with(
                list,
                stable_kernel(k),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
        }
        let executions = (r % 3) as u64;
        for _ in 0..executions {
            state::execute(&[list]);
        }
        tally.add(&name, appends * executions, appends);
        if r % 4 == 0 {
            state::list_reset(list);
            let k2 = (k + 1) % STABLE;
            state::launch_with(
                list,
                stable_kernel(k2),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
            state::launch_with(
                list,
                stable_kernel(k2),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
            state::execute(&[list, list]);
            tally.add(&stable_name(k2), 4, 2);
        }
        state::list_destroyed(list);
        // The same handle, now an immediate list: launches count at once,
        // nothing of the regular list's appends survives.
        state::list_created(list, true);
        state::launch_with(
            list,
            stable_kernel(k),
            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
        );
        state::execute(&[list]);
        tally.add(&name, 1, 1);
        state::list_destroyed(list);
    }
    tally
}

/// The child's side: all of the above at once, then the expected totals.
fn child(expected_path: &Path) {
    assert!(
        state::enabled(),
        "the interposer did not pick up {OUT_ENV} in the child"
    );
    state::activate();
    let stable: Vec<String> = (0..STABLE).map(stable_name).collect();
    create_module(module(0), 0, &stable);
    for (i, name) in stable.iter().enumerate() {
        state::modules::kernel_created(module(0), name.as_bytes(), stable_kernel(i), None);
    }
    let threads = LAUNCHERS + CHURNERS + LISTERS;
    let barrier = Arc::new(Barrier::new(threads));
    let others_done = Arc::new(AtomicBool::new(false));
    let mut total = Tally::default();
    std::thread::scope(|s| {
        let mut launchers = Vec::new();
        for t in 0..LAUNCHERS {
            let b = barrier.clone();
            let others_done = others_done.clone();
            launchers.push(s.spawn(move || {
                b.wait();
                launcher_thread(t, &others_done)
            }));
        }
        let mut handles = Vec::new();
        for c in 0..CHURNERS {
            let b = barrier.clone();
            handles.push(s.spawn(move || {
                b.wait();
                churner(c)
            }));
        }
        for t in 0..LISTERS {
            let b = barrier.clone();
            handles.push(s.spawn(move || {
                b.wait();
                lister(t)
            }));
        }
        for h in handles {
            total.merge(h.join().expect("a stress thread panicked"));
        }
        others_done.store(true, Ordering::SeqCst);
        for h in launchers {
            total.merge(h.join().expect("a launcher thread panicked"));
        }
    });
    let mut text = format!(
        "unknown {}\nlauncher_calls {}\n",
        total.unknown, total.launcher_calls
    );
    for (name, (l, a)) in &total.kernels {
        text.push_str(&format!("kernel {name} {l} {a}\n"));
    }
    std::fs::write(expected_path, text)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", expected_path.display()));
}

/// The child's totals: per kernel name, unknown launches, launcher calls.
type Expected = (BTreeMap<String, (u64, u64)>, u64, u64);

fn parse_expected(text: &str) -> Expected {
    let mut kernels = BTreeMap::new();
    let (mut unknown, mut calls) = (None, None);
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["unknown", n] => unknown = n.parse().ok(),
            ["launcher_calls", n] => calls = n.parse().ok(),
            ["kernel", name, l, a] => {
                let (l, a) = (l.parse().expect("a count"), a.parse().expect("a count"));
                kernels.insert(name.to_string(), (l, a));
            }
            _ => panic!("unexpected line {line:?} in the expected totals"),
        }
    }
    (
        kernels,
        unknown.expect("the expected totals name the unknown launches"),
        calls.expect("the expected totals name the launcher calls"),
    )
}

/// A folder of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!("xpu-asm-stress-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(p),
                Ok(m) => out.push(format!("{} ({} bytes)", p.display(), m.len())),
                Err(_) => out.push(p.display().to_string()),
            }
        }
    }
    out.sort();
    out
}

#[test]
fn counting_core_is_exact_under_concurrency() {
    if let Some(expected) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&expected));
        return;
    }
    let scratch = Scratch::new();
    let out = scratch.0.join("out");
    let expected_path = scratch.0.join("expected.txt");
    let exe = std::env::current_exe().expect("the test knows its own path");
    let mut cmd = Command::new(&exe);
    cmd.args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(OUT_ENV, &out)
        .env(CHILD_ENV, &expected_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = format!(
        "{OUT_ENV}={} {CHILD_ENV}={} {} {TEST_NAME} --exact --nocapture --test-threads=1",
        out.display(),
        expected_path.display(),
        exe.display()
    );
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let status = loop {
        match child.try_wait().expect("wait for the child") {
            Some(s) => break s,
            None if started.elapsed() > CHILD_TIMEOUT => {
                let _ = child.kill();
                break child.wait().expect("wait after kill");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let output = child.wait_with_output().expect("the child's output");
    let describe = || {
        format!(
            "command: {shown}\nstatus: {status} after {:?}\nstdout:\n{}\nstderr:\n{}\nfiles:\n  {}",
            started.elapsed(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            files_under(&scratch.0).join("\n  ")
        )
    };
    assert!(status.success(), "the stress child failed\n{}", describe());
    let text = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("no expected totals ({e})\n{}", describe()));
    let (want, want_unknown, launcher_calls) = parse_expected(&text);
    assert!(launcher_calls >= (LAUNCHERS * LAUNCHES_PER_LAUNCHER) as u64);

    let recs = read::read_dir(&out.join(RECORDS_DIR))
        .unwrap_or_else(|e| panic!("no records: {e}\n{}", describe()));
    assert_eq!(
        recs.len(),
        1,
        "one process, one record: {recs:#?}\n{}",
        describe()
    );
    let rec = &recs[0];
    assert!(
        rec.warnings.is_empty(),
        "reading the record gave warnings: {:#?}\n{}",
        rec.warnings,
        describe()
    );
    // One kernel event per distinct (module, name), however often created.
    let distinct = STABLE + CHURNERS * (CHURN_KERNELS + 2);
    assert_eq!(
        rec.kernels.len(),
        distinct,
        "kernel events in the record\n{}",
        describe()
    );
    assert!(
        rec.kernels.keys().max().copied().unwrap_or(0) as usize > 4096,
        "the test must reach past the first mapping of the counts file"
    );
    let mut got: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for k in rec.kernels.values() {
        let e = got
            .entry(String::from_utf8_lossy(&k.name).into_owned())
            .or_insert((0, 0));
        e.0 += k.launches;
        e.1 += k.appended;
    }
    assert_eq!(got.len(), want.len(), "kernel names: {:?}", got.keys());
    let diff: Vec<String> = want
        .iter()
        .filter(|(name, w)| got.get(*name) != Some(*w))
        .map(|(name, w)| format!("{name}: expected {w:?}, recorded {:?}", got.get(name)))
        .collect();
    assert!(
        diff.is_empty(),
        "recorded (launches, appended) differ for {} kernels:\n  {}",
        diff.len(),
        diff.join("\n  ")
    );
    assert_eq!(
        rec.unknown_launches, want_unknown,
        "launches of unknown kernels"
    );
    // The grand totals, counted independently of the threads' tallies.
    let mut launches = launcher_calls;
    let mut appended = launches;
    for j in 0..CHURN_KERNELS {
        let n = (j % 5 + 1) as u64 + if j % 10 == 0 { 5 } else { 0 };
        launches += CHURNERS as u64 * n;
        appended += CHURNERS as u64 * n;
    }
    for r in 0..LIST_ROUNDS {
        let a = (r % 7 + 1) as u64;
        let extra = if r % 4 == 0 { (4, 2) } else { (0, 0) };
        launches += LISTERS as u64 * (a * (r % 3) as u64 + extra.0 + 1);
        appended += LISTERS as u64 * (a + extra.1 + 1);
    }
    let recorded_launches: u64 = got.values().map(|c| c.0).sum::<u64>() + rec.unknown_launches;
    let recorded_appended: u64 = got.values().map(|c| c.1).sum();
    assert_eq!(
        (recorded_launches, recorded_appended),
        (launches, appended - want_unknown),
        "grand totals (launches incl. unknown kernels, appended of known kernels)"
    );
}
