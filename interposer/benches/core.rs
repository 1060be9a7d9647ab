//! The interposer's counting core alone, without any driver: what one counted
//! launch costs, on 1, 2 and 8 threads, and what the interposer's memory
//! does over 10 million launches spread over 10,000 kernels.
//!
//! `cargo bench -p xpu-asm-interposer --bench core` (scripts/bench.sh runs it).
//! Prints a table to stdout, and for scripts one `key=value` line per figure
//! (prefixed `RESULT `).
//!
//! The core is driven through `xpu_asm_interposer::state` exactly as the hooks
//! drive it: `kernel_created` for each kernel (fake handles), `launch(list,
//! kernel)` per launch, `list_created` / `execute` for regular lists. Every
//! section runs in a fresh child process (this same binary, re-executed) with
//! its own `XPU_ASM_OUT`: the interposer reads its configuration once, at
//! load time, and memory figures need a process of their own.
//!
//! Options: `--quick` (fewer launches, for a smoke test); any other argument
//! (cargo passes `--bench`) is ignored.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Barrier;
use std::time::Instant;
use xpu_asm_interposer::state;
use xpu_asm_interposer::ze::queries::capture_graph;
use xpu_asm_record::{OUT_ENV, RECORDS_DIR};

const SECTION_ENV: &str = "XPU_ASM_BENCH_SECTION";
const QUICK_ENV: &str = "XPU_ASM_BENCH_QUICK";

/// Fake handles look like heap pointers: aligned, spread out.
fn kernel_handle(i: usize) -> usize {
    0x5555_0000_0000 + (i + 1) * 0x240
}

fn list_handle(i: usize) -> usize {
    0x7777_0000_0000 + (i + 1) * 0x1c0
}

fn module_handle(i: usize) -> usize {
    0x6666_0000_0000 + (i + 1) * 0x300
}

fn quick() -> bool {
    std::env::var_os(QUICK_ENV).is_some()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// `VmRSS`, `RssAnon`, `RssFile`, `VmHWM` of this process, in KiB.
fn rss_kib() -> [u64; 4] {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    [
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:"),
        field("VmHWM:"),
    ]
}

/// The record files this process writes, found by the `.counts` suffix.
fn record_file(ext: &str) -> Option<PathBuf> {
    let dir = Path::new(&std::env::var(OUT_ENV).ok()?).join(RECORDS_DIR);
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == ext))
}

/// The launches this process's record holds, over all its kernels, read as
/// the collector reads them (`xpu_asm_record::read`: each kernel's counter
/// and its shapes' heads; a shape's tail slot holds its key, no count).
fn counted_launches() -> u64 {
    let Ok(dir) = std::env::var(OUT_ENV) else {
        return 0;
    };
    let recs =
        xpu_asm_record::read::read_dir(&Path::new(&dir).join(RECORDS_DIR)).unwrap_or_default();
    recs.iter()
        .flat_map(|r| r.kernels.values())
        .map(|k| k.launches)
        .sum()
}

fn result(key: &str, value: impl std::fmt::Display) {
    println!("RESULT {key}={value}");
}

/// One module of `kernels` kernels, as the hooks report them.
fn create_kernels(module: usize, first: usize, kernels: usize) {
    let names: Vec<Vec<u8>> = (first..first + kernels)
        .map(|i| format!("_ZTSZ4mainE12bench_kernel{i}").into_bytes())
        .collect();
    let spirv: Vec<u8> = (0..256u32)
        .flat_map(|w| (w ^ module as u32).to_le_bytes())
        .collect();
    state::modules::module_created(
        module_handle(module),
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
    for (j, name) in names.iter().enumerate() {
        state::modules::kernel_created(module_handle(module), name, kernel_handle(first + j), None);
    }
}

/// Launch cost on `threads` threads, each launching `per_thread` times on
/// its own immediate list. Thread `t` launches kernel `t * stride`: stride 0
/// is one kernel for all (one contended counter), stride 1 neighbouring
/// kernels (whose 32-byte counter slots share cache lines), stride 4 kernels
/// whose slots are in separate cache lines.
fn launch_threads(threads: usize, per_thread: u64, stride: usize) -> (f64, f64) {
    let barrier = Barrier::new(threads);
    let start = Instant::now();
    let cpu: f64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    let kernel = kernel_handle(t * stride);
                    let list = list_handle(1000 + t);
                    barrier.wait();
                    let c0 = thread_cpu_ns();
                    for _ in 0..per_thread {
                        state::launch_with(
                            black_box(list),
                            black_box(kernel),
                            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
                        );
                    }
                    thread_cpu_ns() - c0
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    });
    let wall = start.elapsed().as_nanos() as f64;
    let total = threads as f64 * per_thread as f64;
    // Wall time per launch of one thread, CPU time per launch over all.
    (wall / per_thread as f64, cpu / total)
}

/// The cases of [`section_launch`]: name and kernel stride between threads.
const CASES: [(&str, usize); 3] = [("own", 1), ("spread", 4), ("shared", 0)];

fn section_launch() {
    create_kernels(0, 0, 32);
    let total: u64 = if quick() { 2_000_000 } else { 20_000_000 };
    let reps = if quick() { 3 } else { 7 };
    let mut expected = 0u64;
    for (case, stride) in CASES {
        for threads in [1usize, 2, 8] {
            let per_thread = total / threads as u64;
            let (mut walls, mut cpus) = (Vec::new(), Vec::new());
            launch_threads(threads, per_thread / 10, stride); // warm-up
            expected += threads as u64 * (per_thread / 10);
            for _ in 0..reps {
                let (w, c) = launch_threads(threads, per_thread, stride);
                walls.push(w);
                cpus.push(c);
                expected += threads as u64 * per_thread;
            }
            let tag = format!("core_{case}_t{threads}");
            let (w, c) = (median(&mut walls), median(&mut cpus));
            let (lo, hi) = (cpus[0], cpus[cpus.len() - 1]);
            result(&format!("{tag}_cpu_ns"), format!("{c:.2}"));
            result(&format!("{tag}_cpu_ns_min"), format!("{lo:.2}"));
            result(&format!("{tag}_cpu_ns_max"), format!("{hi:.2}"));
            result(
                &format!("{tag}_wall_ns_per_thread_launch"),
                format!("{w:.2}"),
            );
        }
    }
    let counted = counted_launches();
    result(
        "core_launch_check",
        if counted == expected {
            "ok"
        } else {
            "MISMATCH"
        },
    );
    result("core_launch_counted", counted);
    result("core_launch_expected", expected);
}

/// Regular command lists: appends recorded per list, counted on execution.
fn section_regular() {
    create_kernels(0, 0, 4);
    let list = list_handle(1);
    state::list_created(list, false);
    let (appends, executions): (usize, u64) = if quick() { (1000, 100) } else { (1000, 2000) };
    let reps = if quick() { 3 } else { 7 };
    let (mut per_append, mut per_exec_launch) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        state::list_reset(list);
        let t0 = Instant::now();
        for i in 0..appends {
            state::launch_with(
                black_box(list),
                black_box(kernel_handle(i % 4)),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
        }
        let t1 = Instant::now();
        for _ in 0..executions {
            state::execute(black_box(&[list]));
        }
        let t2 = Instant::now();
        per_append.push((t1 - t0).as_nanos() as f64 / appends as f64);
        per_exec_launch.push((t2 - t1).as_nanos() as f64 / (appends as u64 * executions) as f64);
    }
    result(
        "core_regular_append_ns",
        format!("{:.2}", median(&mut per_append)),
    );
    result(
        "core_regular_execute_ns_per_launch",
        format!("{:.2}", median(&mut per_exec_launch)),
    );
    let expected = reps as u64 * appends as u64 * executions;
    let counted = counted_launches();
    result(
        "core_regular_check",
        if counted == expected {
            "ok"
        } else {
            "MISMATCH"
        },
    );
}

/// Graphs: appends captured on an immediate list (each an append, as to a
/// regular list), the graph instantiated and appended (replayed) to the
/// immediate list: ns per captured append and per launch a replay counts.
fn section_graph() {
    create_kernels(0, 0, 4);
    let list = list_handle(2);
    state::list_created(list, true);
    let (appends, replays): (usize, u64) = if quick() { (1000, 100) } else { (1000, 2000) };
    let reps = if quick() { 3 } else { 7 };
    let (mut per_append, mut per_replay_launch) = (Vec::new(), Vec::new());
    for r in 0..reps {
        let (graph, exec) = (
            0x7900_0000_0000 + (r + 1) * 0x100,
            0x7a00_0000_0000 + (r + 1) * 0x100,
        );
        state::graphs::capture_began(list, Some(graph), capture_graph);
        let t0 = Instant::now();
        for i in 0..appends {
            state::launch_with(
                black_box(list),
                black_box(kernel_handle(i % 4)),
                xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
            );
        }
        let t1 = Instant::now();
        state::graphs::capture_ended(list, graph);
        state::graphs::graph_instantiated(graph, exec);
        let t2 = Instant::now();
        for _ in 0..replays {
            state::graphs::graph_appended(black_box(list), black_box(exec));
        }
        let t3 = Instant::now();
        per_append.push((t1 - t0).as_nanos() as f64 / appends as f64);
        per_replay_launch.push((t3 - t2).as_nanos() as f64 / (appends as u64 * replays) as f64);
    }
    result(
        "core_graph_append_ns",
        format!("{:.2}", median(&mut per_append)),
    );
    result(
        "core_graph_replay_ns_per_launch",
        format!("{:.2}", median(&mut per_replay_launch)),
    );
    let expected = reps as u64 * appends as u64 * replays;
    let counted = counted_launches();
    result(
        "core_graph_check",
        if counted == expected {
            "ok"
        } else {
            "MISMATCH"
        },
    );
}

/// Memory after `launches` launches spread over `kernels` kernels (100
/// kernels per module).
fn section_memory(kernels: usize, launches: u64) {
    state::activate();
    let before = rss_kib();
    for m in 0..kernels.div_ceil(100) {
        let first = m * 100;
        create_kernels(m, first, 100.min(kernels - first));
    }
    let created = rss_kib();
    let kernel_of = |i: u64| kernel_handle(((i.wrapping_mul(7919)) % kernels as u64) as usize);
    let list = list_handle(1);
    let t0 = Instant::now();
    let tenth = launches / 10;
    for i in 0..tenth {
        state::launch_with(
            black_box(list),
            kernel_of(i),
            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
        );
    }
    let after_tenth = rss_kib();
    for i in tenth..launches {
        state::launch_with(
            black_box(list),
            kernel_of(i),
            xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 },
        );
    }
    let ns = t0.elapsed().as_nanos() as f64 / launches as f64;
    let after = rss_kib();
    let size = |ext| {
        record_file(ext)
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let tag = format!("mem_k{kernels}");
    result(&format!("{tag}_launches"), launches);
    result(&format!("{tag}_rss_start_kib"), before[0]);
    result(&format!("{tag}_rss_kernels_kib"), created[0]);
    result(&format!("{tag}_rss_tenth_kib"), after_tenth[0]);
    result(&format!("{tag}_rss_end_kib"), after[0]);
    result(&format!("{tag}_anon_start_kib"), before[1]);
    result(&format!("{tag}_anon_end_kib"), after[1]);
    result(&format!("{tag}_file_end_kib"), after[2]);
    result(&format!("{tag}_hwm_kib"), after[3]);
    result(&format!("{tag}_counts_bytes"), size("counts"));
    result(&format!("{tag}_events_bytes"), size("events"));
    result(&format!("{tag}_ns_per_launch"), format!("{ns:.2}"));
    let counted = counted_launches();
    result(
        &format!("{tag}_check"),
        if counted == launches {
            "ok"
        } else {
            "MISMATCH"
        },
    );
}

/// The stack `depth` calls deeper, unwound (what a first launch pays
/// beside making its shape).
#[inline(never)]
fn unwind_at(depth: usize) -> usize {
    if depth == 0 {
        return xpu_asm_interposer::objects::unwind().frames().len();
    }
    black_box(unwind_at(black_box(depth - 1))) + 1 - 1
}

/// A kernel's first launch (its shape made, its stack unwound and written)
/// against its later ones, and the unwind alone at two depths.
fn section_first() {
    let kernels = if quick() { 200 } else { 2_000 };
    create_kernels(0, 0, kernels);
    let list = list_handle(2000);
    let gc = xpu_asm_interposer::common::GroupCount { x: 1, y: 1, z: 1 };
    let time_all = || {
        let c0 = thread_cpu_ns();
        for k in 0..kernels {
            state::launch_with(black_box(list), black_box(kernel_handle(k)), gc);
        }
        (thread_cpu_ns() - c0) / kernels as f64
    };
    result("first_launch_ns", format!("{:.0}", time_all()));
    result("later_launch_ns", format!("{:.1}", time_all()));
    for depth in [0usize, 40] {
        let mut v: Vec<f64> = (0..if quick() { 200 } else { 2_000 })
            .map(|_| {
                let c0 = thread_cpu_ns();
                black_box(unwind_at(depth));
                thread_cpu_ns() - c0
            })
            .collect();
        result(&format!("unwind_depth{depth}_frames"), unwind_at(depth));
        result(
            &format!("unwind_depth{depth}_ns"),
            format!("{:.0}", median(&mut v)),
        );
    }
    let events = record_file("events").and_then(|p| std::fs::read_to_string(p).ok());
    let stacks = events.map_or(0, |e| e.matches("\"type\":\"stack\"").count());
    result("first_stacks_written", stacks);
}

fn run_section(name: &str) {
    match name {
        "first" => section_first(),
        "launch" => section_launch(),
        "regular" => section_regular(),
        "graph" => section_graph(),
        "mem1k" => section_memory(1_000, if quick() { 1_000_000 } else { 10_000_000 }),
        "mem10k" => section_memory(10_000, if quick() { 1_000_000 } else { 10_000_000 }),
        other => {
            eprintln!("core bench: unknown section {other:?}");
            std::process::exit(2);
        }
    }
}

/// Runs one section in a child process; returns its `RESULT` pairs.
fn child(section: &str, base: &Path) -> Vec<(String, String)> {
    let out = base.join(section);
    let exe = std::env::current_exe().expect("the bench knows its own path");
    let o = Command::new(exe)
        .env(SECTION_ENV, section)
        .env(OUT_ENV, &out)
        .output()
        .expect("the bench can run itself");
    if !o.status.success() {
        eprintln!(
            "core bench: section {section} failed ({}):\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        std::process::exit(1);
    }
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn main() {
    if let Ok(section) = std::env::var(SECTION_ENV) {
        if std::env::var_os(OUT_ENV).is_none() {
            eprintln!("core bench: {OUT_ENV} must be set for a section");
            std::process::exit(2);
        }
        if !state::enabled() {
            eprintln!("core bench: the interposer did not pick up {OUT_ENV}");
            std::process::exit(1);
        }
        run_section(&section);
        return;
    }
    if std::env::args().any(|a| a == "--quick") {
        std::env::set_var(QUICK_ENV, "1");
    }
    let base = std::env::temp_dir().join(format!("xpu-asm-bench-core-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("a temporary folder");
    let mut all = Vec::new();
    for section in ["launch", "regular", "graph", "first", "mem1k", "mem10k"] {
        eprintln!("core bench: {section} ...");
        all.extend(child(section, &base));
    }
    let _ = std::fs::remove_dir_all(&base);
    let get = |k: &str| {
        all.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "?".into())
    };

    println!();
    println!("Counting core alone (no driver): ns per counted launch, median of runs");
    println!("  CPU ns = thread CPU time / launches (not inflated when threads > cores)");
    println!(
        "  {:<42} {:>8} {:>8} {:>8} {:>14}",
        "case", "CPU ns", "min", "max", "wall ns/thread"
    );
    for (case, _) in CASES {
        for t in [1, 2, 8] {
            let tag = format!("core_{case}_t{t}");
            let what = match case {
                "own" => "own kernel (slots share lines)",
                "spread" => "own kernel, own cache line",
                _ => "one kernel for all",
            };
            let label = format!("{t} thread{}, {what}", if t > 1 { "s" } else { "" });
            println!(
                "  {:<42} {:>8} {:>8} {:>8} {:>14}",
                label,
                get(&format!("{tag}_cpu_ns")),
                get(&format!("{tag}_cpu_ns_min")),
                get(&format!("{tag}_cpu_ns_max")),
                get(&format!("{tag}_wall_ns_per_thread_launch")),
            );
        }
    }
    println!(
        "  regular list: append {} ns, execute {} ns per launch counted",
        get("core_regular_append_ns"),
        get("core_regular_execute_ns_per_launch")
    );
    println!(
        "  graph: captured append {} ns, replay {} ns per launch counted (a graph of 1000 appends, 4 kernels in turn)",
        get("core_graph_append_ns"),
        get("core_graph_replay_ns_per_launch")
    );
    println!(
        "  counts check: immediate {}, regular {}, graph {}",
        get("core_launch_check"),
        get("core_regular_check"),
        get("core_graph_check")
    );
    println!(
        "  first launch of a kernel {} ns (its shape made, its stack unwound and written: {} stacks), later launches {} ns",
        get("first_launch_ns"),
        get("first_stacks_written"),
        get("later_launch_ns")
    );
    println!(
        "  the unwind alone: {} ns for {} frames, {} ns for {} frames",
        get("unwind_depth0_ns"),
        get("unwind_depth0_frames"),
        get("unwind_depth40_ns"),
        get("unwind_depth40_frames")
    );
    println!();
    println!("Memory of the counting core (KiB of RSS; counts file in bytes)");
    println!(
        "  {:<8} {:>11} {:>10} {:>13} {:>12} {:>12} {:>12} {:>13} {:>6}",
        "kernels",
        "launches",
        "start",
        "+kernels",
        "+10% launch",
        "end",
        "counts B",
        "events B",
        "check"
    );
    for k in ["1000", "10000"] {
        let tag = format!("mem_k{k}");
        println!(
            "  {:<8} {:>11} {:>10} {:>13} {:>12} {:>12} {:>12} {:>13} {:>6}",
            k,
            get(&format!("{tag}_launches")),
            get(&format!("{tag}_rss_start_kib")),
            get(&format!("{tag}_rss_kernels_kib")),
            get(&format!("{tag}_rss_tenth_kib")),
            get(&format!("{tag}_rss_end_kib")),
            get(&format!("{tag}_counts_bytes")),
            get(&format!("{tag}_events_bytes")),
            get(&format!("{tag}_check")),
        );
    }
    for (k, v) in &all {
        println!("RESULT {k}={v}");
    }
}
