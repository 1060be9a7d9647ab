//! Programs that never use Level Zero: as without xpu-asm, but for the
//! documented variables.

use super::*;

/// The variables the interposer documents (docs/internals.md, "Environment set at
/// load") plus the two xpu-asm-run sets: nothing else may differ.
fn documented_vars() -> BTreeSet<String> {
    let mut v: BTreeSet<String> = DUMP_ENV
        .iter()
        .chain(&IGC1_DUMP_ENV)
        .map(|(n, _)| n.to_string())
        .collect();
    v.insert(IGC_ENV.to_string());
    v.insert(xpu_asm_record::ISA_ENV.to_string());
    v.insert(OWNED_ENV.to_string());
    v.insert(OUT_ENV.to_string());
    v.insert("LD_PRELOAD".to_string());
    v.insert(xpu_asm_record::NOTIFY_ENV.to_string());
    v.insert(xpu_asm_record::NOTIFY_KEY_ENV.to_string());
    v
}

/// A fixed environment for both runs of a comparison.
fn base_env() -> Vec<(String, String)> {
    let mut env = vec![("LANG".to_string(), "C".to_string())];
    for k in ["PATH", "HOME"] {
        if let Ok(v) = std::env::var(k) {
            env.push((k.to_string(), v));
        }
    }
    env
}

/// Runs `argv` plainly and under `xpu-asm-run -q`, each with exactly
/// [`base_env`], in empty folders; returns both.
fn plain_and_traced(s: &WorkScratch, name: &str, argv: &[&str]) -> (Run, Run) {
    // The same working folder for both (a shell puts it in PWD), empty
    // before each run and checked to be empty after it.
    let dir = s.root.join(format!("work-{name}"));
    let out = s.root.join(format!("out-{name}"));
    std::fs::create_dir_all(&dir).expect("a folder");
    let mut plain = Command::new(argv[0]);
    plain
        .args(&argv[1..])
        .env_clear()
        .envs(base_env())
        .current_dir(&dir);
    let plain = run(plain, &dir);
    assert!(
        list_files(&dir).is_empty(),
        "{name}: the command left files in its working folder\n{}",
        plain.ctx()
    );
    let mut traced = Command::new(xpu_asm_run());
    traced
        .arg("-q")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(argv)
        .env_clear()
        .envs(base_env())
        .current_dir(&dir);
    let traced = run(traced, &out);
    assert!(
        list_files(&dir).is_empty(),
        "{name}: the command left files in its working folder under xpu-asm-run\n{}",
        traced.ctx()
    );
    (plain, traced)
}

/// A capture of a run in which no process used Level Zero holds xpu-asm-run's
/// own files and nothing else: no record, no dump folder.
fn assert_nothing_recorded(r: &Run) {
    let files: Vec<String> = list_files(&r.out)
        .into_iter()
        .map(|f| f.split(' ').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        files,
        ["collect.json", "report.html", "report.json", "run.json"],
        "files of the capture\n{}",
        r.ctx()
    );
    for sub in ["records", "dumps", "asm"] {
        let n = std::fs::read_dir(r.out.join(sub)).map_or(usize::MAX, |d| d.count());
        assert_eq!(n, 0, "{sub}/ must be empty\n{}", r.ctx());
    }
    assert_eq!(processes(&r.report()).len(), 0, "{}", r.ctx());
}

fn assert_same_behaviour(name: &str, plain: &Run, traced: &Run) {
    assert_eq!(
        (
            traced.output.status.code(),
            &traced.output.stdout,
            &traced.output.stderr
        ),
        (
            plain.output.status.code(),
            &plain.output.stdout,
            &plain.output.stderr
        ),
        "{name}: under xpu-asm-run the command behaved otherwise\nplain run:\n{}\ntraced run:\n{}",
        plain.ctx(),
        traced.ctx()
    );
    assert_nothing_recorded(traced);
}

#[test]
fn programs_without_level_zero_behave_exactly_as_without_xpu_asm() {
    let s = work_scratch();
    let cases: [(&str, &[&str], i32); 6] = [
        ("true", &["true"], 0),
        ("false", &["false"], 1),
        (
            "sh",
            &[
                "sh",
                "-c",
                "echo out; echo err >&2; printf 'b\\na\\n' | sort; exit 3",
            ],
            3,
        ),
        (
            "sh-children",
            &[
                "sh",
                "-c",
                "sh -c 'exit 5'; echo child $?; env true; exec sh -c 'exit 6'",
            ],
            6,
        ),
        ("python-pass", &["python3", "-c", "pass"], 0),
        (
            "python-exit",
            &[
                "python3",
                "-c",
                "import sys; print('py'); sys.stderr.write('e\\n'); sys.exit(4)",
            ],
            4,
        ),
    ];
    for (name, argv, code) in cases {
        let (plain, traced) = plain_and_traced(&s, name, argv);
        assert_eq!(plain.output.status.code(), Some(code), "{}", plain.ctx());
        assert_same_behaviour(name, &plain, &traced);
    }
}

/// `KEY=VALUE` lines as a map.
fn env_map(text: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `env` directly, `env` from a shell, and a grandchild's environment seen
/// from Python: the same as without xpu-asm, plus exactly the documented
/// variables, with the documented values.
#[test]
fn environment_differs_only_by_the_documented_variables() {
    let s = work_scratch();
    let interposer = interposer().display().to_string();
    let cases: [(&str, &[&str]); 3] = [
        ("env", &["env"]),
        ("sh-env", &["sh", "-c", "env; exit 0"]),
        (
            "python-env",
            &[
                "python3",
                "-c",
                "import os\nfor k, v in sorted(os.environ.items()): print(f'{k}={v}')",
            ],
        ),
    ];
    for (name, argv) in cases {
        let (plain, traced) = plain_and_traced(&s, name, argv);
        assert_eq!(plain.output.status.code(), Some(0), "{}", plain.ctx());
        assert_eq!(traced.output.status.code(), Some(0), "{}", traced.ctx());
        assert_eq!(
            traced.output.stderr,
            plain.output.stderr,
            "{}",
            traced.ctx()
        );
        let p = env_map(&plain.output.stdout);
        let mut t = env_map(&traced.output.stdout);
        let mut ours: BTreeMap<String, String> = documented_vars()
            .iter()
            .filter_map(|k| t.remove_entry(k))
            .collect();
        // xpu-asm-run's socket for notices: `xpu-asm-<its pid>-<8 hex>`.
        let notify = ours.remove(xpu_asm_record::NOTIFY_ENV).unwrap_or_default();
        let parts: Vec<&str> = notify.split('-').collect();
        assert!(
            parts.len() == 4
                && parts[..2] == ["xpu", "asm"]
                && parts[2].parse::<u32>().is_ok()
                && parts[3].len() == 8
                && parts[3].bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}: {}={notify:?}\n{}",
            xpu_asm_record::NOTIFY_ENV,
            traced.ctx()
        );
        // The key a notice carries: 32 hex digits, drawn for the run.
        let key = ours
            .remove(xpu_asm_record::NOTIFY_KEY_ENV)
            .unwrap_or_default();
        assert!(
            key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}: {}={key:?}\n{}",
            xpu_asm_record::NOTIFY_KEY_ENV,
            traced.ctx()
        );
        // Python adds nothing of its own here, and neither may we.
        assert_eq!(
            t,
            p,
            "{name}: variables other than ours differ\n{}",
            traced.ctx()
        );
        let out = traced.out.canonicalize().expect("the capture folder");
        if stack() == Stack::Sid {
            // IGC 2 alone: every kernel's ISA from its module's binary, and
            // IGC's and the caches' settings as the user has them.
            let want: BTreeMap<String, String> = [
                (xpu_asm_record::ISA_ENV, "binary".to_string()),
                (OWNED_ENV, String::new()),
                (OUT_ENV, out.display().to_string()),
                ("LD_PRELOAD", interposer.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            assert_eq!(ours, want, "{name}: our variables\n{}", traced.ctx());
            assert_nothing_recorded(&traced);
            continue;
        }
        let dump = ours.get("IGC_DumpToCustomDir").cloned().unwrap_or_default();
        let want_prefix = format!("{}/dumps/", out.display());
        assert!(
            dump.starts_with(&want_prefix),
            "{name}: IGC_DumpToCustomDir={dump:?} is not under {want_prefix}\n{}",
            traced.ctx()
        );
        let mut want: BTreeMap<String, String> = [
            ("IGC_ShaderDumpEnable", "1".to_string()),
            ("IGC_DumpToCustomDir", dump.clone()),
            ("IGC_ShaderDumpRegexFilter", DUMP_FILTER.to_string()),
            ("NEO_CACHE_PERSISTENT", "0".to_string()),
            ("l0_cache_dir", "/dev/null".to_string()),
            ("SYCL_CACHE_PERSISTENT", "0".to_string()),
            (OWNED_ENV, DUMP_ENV.map(|(n, _)| n).join(",")),
            (OUT_ENV, out.display().to_string()),
            ("LD_PRELOAD", interposer.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if stack() == Stack::Debian12 {
            // IGC 1 alone: its light dumps in place of ShaderDumpEnable.
            want.remove("IGC_ShaderDumpEnable");
            let mut owned: Vec<&str> = DUMP_ENV
                .map(|(n, _)| n)
                .into_iter()
                .filter(|n| *n != "IGC_ShaderDumpEnable")
                .collect();
            for (n, v) in IGC1_DUMP_ENV {
                want.insert(n.to_string(), v.to_string());
                owned.push(n);
            }
            want.insert(OWNED_ENV.to_string(), owned.join(","));
            want.insert(IGC_ENV.to_string(), "1".to_string());
        }
        assert_eq!(ours, want, "{name}: our variables\n{}", traced.ctx());
        assert_nothing_recorded(&traced);
    }
}
