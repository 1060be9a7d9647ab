//! NEO's persistent compiler cache under xpu-asm, on the real stacks: each
//! run of the C workload gets a cache of its own (`NEO_CACHE_DIR`, and
//! `./l0_cache` in its working folder, where NEO 22.43 looks; `HOME` a
//! temporary folder too), never the user's.
//!
//! What each NEO does (docs/formats.md, "NEO's compiler cache"):
//! - NEO 26 caches in `NEO_CACHE_DIR` when that folder exists, and leaves
//!   the cache off when any `IGC_*` variable is set or
//!   `NEO_CACHE_PERSISTENT=0`; `./l0_cache` means nothing to it.
//! - NEO 22.43's Level Zero driver ignores `NEO_CACHE_*`: it caches in the
//!   folder `l0_cache_dir` names (default `./l0_cache`) whenever that
//!   folder exists, `IGC_*` variables or not.
//!
//! So the default mode (IGC's dumps) sets `NEO_CACHE_PERSISTENT=0` and
//! `l0_cache_dir=/dev/null`: no cache is touched, IGC compiles and dumps in
//! every run. `--isa binary` sets nothing: the cache is written by the
//! first run and read by the second, which compiles nothing, and the
//! report is the same. That the cache is what a warm run creates its
//! module from is shown by putting another build's entry in its place:
//! the next run's module binary, and so its ISA, is that build's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use tempfile::TempDir;
use xpu_asm_collector::report::Report;
use xpu_asm_collector::sources::{IsaSourceKind, Status};
use xpu_asm_isa::native;
use xpu_asm_tests::*;

/// A run's own caches, home and working folder.
struct Caches {
    _dir: TempDir,
    root: PathBuf,
    /// `NEO_CACHE_DIR` (an existing, empty folder).
    neo: PathBuf,
    /// The workload's working folder, which holds `l0_cache/`.
    work: PathBuf,
}

impl Caches {
    fn new() -> Caches {
        let dir = temp_dir("neo-cache");
        let root = dir.path().to_path_buf();
        let (neo, work) = (root.join("neo-cache"), root.join("work"));
        for d in [neo.clone(), work.join("l0_cache"), root.join("home")] {
            std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        }
        Caches {
            _dir: dir,
            root,
            neo,
            work,
        }
    }

    fn l0(&self) -> PathBuf {
        self.work.join("l0_cache")
    }

    /// The cache this stack's NEO uses, and the one it ignores.
    fn used_and_ignored(&self) -> (PathBuf, PathBuf) {
        match stack() {
            Stack::Sid => (self.neo.clone(), self.l0()),
            Stack::Debian12 => (self.l0(), self.neo.clone()),
        }
    }
}

/// The launches of every run: three kernels of module a, on immediate and
/// regular lists.
fn steps_of_a() -> Vec<String> {
    vec![
        "imm:a:scale:2".into(),
        "imm:a:scale_v2:3".into(),
        format!("reg:a:{VECTOR_ADD}:2:5"),
    ]
}

/// Runs the C workload under `xpu-asm-run --emulate pvc OPTIONS` with the
/// caches of `c`, building module a with `flags`; returns the capture
/// folder and its report.
fn capture_cached(c: &Caches, name: &str, options: &[&str], flags: &str) -> (PathBuf, Report) {
    let out = c.root.join(name);
    let mut cap = Capture::emulating("pvc", &out)
        .option("--json")
        .options(options)
        .program(workload_link())
        .args(["--via", "link", "--build-flags", flags])
        .module("a", &spirv("a"))
        .args(steps_of_a())
        .dir(&c.work)
        .env("NEO_CACHE_DIR", &c.neo)
        .env("HOME", c.root.join("home"))
        .env_remove("XDG_CACHE_HOME")
        .env_remove("l0_cache_dir");
    // Any IGC_* variable turns NEO 26's cache off.
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("IGC_") {
            cap = cap.env_remove(k);
        }
    }
    let run = cap.run_ok();
    let r: Report = serde_json::from_value(run.report())
        .unwrap_or_else(|e| panic!("report.json does not parse: {e}\n{}", run.ctx()));
    (out, r)
}

/// Every file under `dir` (relative path) with its bytes and mtime.
fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, SystemTime)>) {
        for e in std::fs::read_dir(dir).expect("a cache folder").flatten() {
            let p = e.path();
            let m = e.metadata().expect("metadata");
            if m.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().display().to_string();
                let bytes = std::fs::read(&p).expect("a cache file");
                out.insert(rel, (bytes, m.modified().expect("mtime")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The one compiled module NEO keeps (`<16 hex>.l0_cache`) of `dir`.
fn only_entry(dir: &Path) -> (String, Vec<u8>) {
    let entries: Vec<(String, Vec<u8>)> = files(dir)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".l0_cache"))
        .map(|(p, (b, _))| (p, b))
        .collect();
    match <[_; 1]>::try_from(entries) {
        Ok([e]) => e,
        Err(v) => panic!(
            "expected one .l0_cache file in {}, found {:?} (all: {:?})",
            dir.display(),
            v.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            files(dir).keys().collect::<Vec<_>>()
        ),
    }
}

/// What a report says of a kernel, keyed by (name, module): launches,
/// status, ISA source, instruction count, and the instructions of its ISA.
type Summary =
    BTreeMap<(String, String), (u64, Status, Option<IsaSourceKind>, Option<u64>, Vec<String>)>;

fn summary(out: &Path, r: &Report) -> Summary {
    assert_eq!(r.totals.unmatched, 0, "{r:#?}");
    r.kernels
        .iter()
        .map(|k| {
            let text = std::fs::read_to_string(out.join(k.asm.as_ref().expect("matched")))
                .expect("the kernel's .asm");
            let key = (k.name.clone(), k.module_sha256.clone().unwrap_or_default());
            let isa = native::instructions(&text);
            (
                key,
                (k.launches, k.status, k.isa_source, k.instructions, isa),
            )
        })
        .collect()
}

/// The SHA-256 of the one module binary a capture recorded.
fn module_binary(out: &Path) -> String {
    let rec = only_record(out);
    let [m] = <[_; 1]>::try_from(rec.modules.into_values().collect::<Vec<_>>())
        .unwrap_or_else(|v| panic!("expected one module: {v:#?}"));
    m.binary.expect("a saved binary").sha256
}

/// Exactly the three kernels of [`steps_of_a`], every one matched from `source`.
fn assert_the_three(out: &Path, r: &Report, source: IsaSourceKind) -> Summary {
    let s = summary(out, r);
    let a = sha256_file(&spirv("a"));
    let got: BTreeMap<(String, String), u64> = s.iter().map(|(k, v)| (k.clone(), v.0)).collect();
    let want: BTreeMap<(String, String), u64> = [(SCALE, 2), (SCALE_V2, 3), (VECTOR_ADD, 10)]
        .into_iter()
        .map(|(n, l)| ((n.to_string(), a.clone()), l))
        .collect();
    assert_eq!(got, want, "{r:#?}");
    for (k, v) in &s {
        assert_eq!((v.1, v.2), (Status::Matched, Some(source)), "{k:?}");
        assert!(
            !v.4.is_empty() && v.3 == Some(v.4.len() as u64),
            "{k:?}: {v:?}"
        );
    }
    s
}

/// `--isa binary`: the stack's cache gets the module in the first run;
/// the second reads it, writes nothing, compiles nothing, and reports
/// exactly what the first did; a third, with another build's entry in its
/// place, runs that build.
#[test]
fn isa_binary_a_warm_neo_cache_gives_the_same_report() {
    let c = Caches::new();
    let (used, ignored) = c.used_and_ignored();
    let (o1, r1) = capture_cached(&c, "run1", &["--isa", "binary"], "");
    let s1 = assert_the_three(&o1, &r1, IsaSourceKind::ModuleBinary);
    assert_eq!(r1.dumps.before.files, 0, "no IGC dump: {:?}", r1.dumps);
    let (entry, bytes) = only_entry(&used);
    assert_eq!(files(&ignored).len(), 0, "{}", ignored.display());
    // NEO 26 keeps the zebin zeModuleGetNativeBinary gives; NEO 22.43 a form
    // of its own.
    let built = std::fs::read(o1.join(format!("modules/{}.bin", module_binary(&o1)))).unwrap();
    assert_eq!(bytes == built, stack() == Stack::Sid, "{entry}");
    let before = files(&used);
    std::thread::sleep(std::time::Duration::from_millis(20));

    let (o2, r2) = capture_cached(&c, "run2", &["--isa", "binary"], "");
    assert_eq!(
        files(&used),
        before,
        "run 2 wrote to the cache: it compiled"
    );
    assert_eq!(files(&ignored).len(), 0);
    assert_eq!(assert_the_three(&o2, &r2, IsaSourceKind::ModuleBinary), s1);
    assert_eq!(module_binary(&o2), module_binary(&o1));
    for (k1, k2) in r1.kernels.iter().zip(&r2.kernels) {
        let text = |o: &Path, k: &xpu_asm_collector::report::KernelEntry| {
            std::fs::read_to_string(o.join(k.asm.as_ref().unwrap())).unwrap()
        };
        assert_eq!(text(&o1, k1), text(&o2, k2), "{}", k1.name);
    }

    // The entry of a build with -cl-opt-disable, made in caches of its own,
    // in place of this one: run 3 creates its module from it.
    let other = Caches::new();
    let (o0, r0) = capture_cached(
        &other,
        "opt-disable",
        &["--isa", "binary"],
        "-cl-opt-disable",
    );
    let s0 = assert_the_three(&o0, &r0, IsaSourceKind::ModuleBinary);
    assert_ne!(s0, s1, "-cl-opt-disable built the same code");
    std::fs::write(used.join(&entry), only_entry(&other.used_and_ignored().0).1).unwrap();
    let (o3, r3) = capture_cached(&c, "run3", &["--isa", "binary"], "");
    assert_eq!(assert_the_three(&o3, &r3, IsaSourceKind::ModuleBinary), s0);
    assert_ne!(module_binary(&o3), module_binary(&o1));
    // NEO 26 gives the cached zebin as it is (run 0's bytes); NEO 22.43
    // wraps the cached program in an ELF that names the module's own build
    // options: none here, `-cl-opt-disable` in run 0's.
    let read =
        |o: &Path| std::fs::read(o.join(format!("modules/{}.bin", module_binary(o)))).unwrap();
    let names_options = |b: &[u8]| b.windows(15).any(|w| w == b"-cl-opt-disable");
    match stack() {
        Stack::Sid => assert_eq!(module_binary(&o3), module_binary(&o0)),
        Stack::Debian12 => assert_eq!(
            (names_options(&read(&o0)), names_options(&read(&o3))),
            (true, false)
        ),
    }
}

/// The default: on sid (IGC 2 alone) `binary`, so the stack's cache gets
/// the module in the first run and the second compiles nothing, as
/// without xpu-asm; on Debian 12 `dump`, neither cache touched.
#[test]
fn the_default_uses_neo_26s_cache_as_a_plain_run_does() {
    let c = Caches::new();
    let (used, _) = c.used_and_ignored();
    let (o1, r1) = capture_cached(&c, "run1", &[], "");
    let (source, isa) = match stack() {
        Stack::Sid => (IsaSourceKind::ModuleBinary, Some("binary")),
        Stack::Debian12 => (IsaSourceKind::IgcDump, None),
    };
    assert_eq!(r1.isa.as_deref(), isa);
    let s1 = assert_the_three(&o1, &r1, source);
    match stack() {
        Stack::Sid => drop(only_entry(&used)),
        Stack::Debian12 => assert_eq!(files(&used).len(), 0, "{}", used.display()),
    }
    let before = files(&used);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (o2, r2) = capture_cached(&c, "run2", &[], "");
    assert_eq!(
        files(&used),
        before,
        "run 2 wrote to the cache: it compiled"
    );
    assert_eq!(assert_the_three(&o2, &r2, source), s1);
}

/// `--keep all` (or `launched`) is about IGC's dumps: with it the default
/// is `dump` on both stacks, neither cache touched, every file IGC wrote
/// kept.
#[test]
fn keeping_dumps_asks_for_them() {
    let c = Caches::new();
    let (out, r) = capture_cached(&c, "keep-all", &["--keep", "all"], "");
    assert_eq!(r.isa, None, "{r:#?}");
    assert_the_three(&out, &r, IsaSourceKind::IgcDump);
    assert!(
        r.dumps.before.files > 0 && r.dumps.after == r.dumps.before,
        "{:?}",
        r.dumps
    );
    for dir in [c.neo.clone(), c.l0()] {
        assert_eq!(files(&dir).len(), 0, "keep-all wrote to {}", dir.display());
    }
}

/// `--isa dump`: neither cache is touched, IGC compiles and dumps the
/// module in both runs, and the reports are the same.
#[test]
fn isa_dump_leaves_neo_caches_off_and_igc_compiles_each_run() {
    let c = Caches::new();
    let mut summaries = Vec::new();
    for name in ["run1", "run2"] {
        let (out, r) = capture_cached(&c, name, &["--isa", "dump"], "");
        summaries.push(assert_the_three(&out, &r, IsaSourceKind::IgcDump));
        for dir in [c.neo.clone(), c.l0()] {
            assert_eq!(files(&dir).len(), 0, "{name} wrote to {}", dir.display());
        }
        let rec = only_record(&out);
        let dumped = dumped_modules(&out.join(&rec.dump_dir));
        let names = &dumped[&sha256_file(&spirv("a"))];
        for k in [SCALE, SCALE_V2, VECTOR_ADD] {
            assert!(names.contains(k), "{name}: IGC did not dump {k}: {names:?}");
        }
        for (var, value) in [("NEO_CACHE_PERSISTENT", "0"), ("l0_cache_dir", "/dev/null")] {
            assert!(
                rec.env
                    .iter()
                    .any(|e| e.name == var && e.value == value && !e.by_user),
                "{var}: {:?}",
                rec.env
            );
        }
    }
    assert_eq!(summaries[0], summaries[1]);
}
