//! A chain of preloads: xpu-asm's interposer between two libraries of the
//! user's that interpose `dlsym` too (tests/shim/dlsym_count.c, built as
//! `front` and `back`), `LD_PRELOAD=front:interposer:back`. Each counts the
//! lookups it is asked; alone (`front:back`, with IGC's dump settings the
//! interposer would set) the two see the same. With the
//! interposer between them, the front one sees exactly the program's lookups
//! it saw alone (and the interposer's own calls of `dlsym`, which its
//! runtime makes through the PLT like any library), the back one exactly
//! what the front one saw: the interposer hands every lookup on to the next
//! `dlsym`, the ones it takes over too. And the capture is exact.

use super::*;

/// The workload's steps: 5 immediate launches of one kernel, 2 appends of
/// another to a regular list executed 3 times.
fn steps() -> [String; 2] {
    [
        format!("imm:a:{VECTOR_ADD}:5"),
        format!("reg:a:{SCALE}:2:3"),
    ]
}

/// One lookup as a counting library logged it: (caller, handle, name).
type Lookup = (String, String, String);

fn build_counter(s: &WorkScratch, tag: &str) -> PathBuf {
    let lib = s.root.join(format!("libdlsym_{tag}.so"));
    let src = workspace_dir().join("tests/shim/dlsym_count.c");
    let mut cmd = Command::new("gcc");
    cmd.args([
        "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
    ])
    .arg(format!("-DTAG=\"{tag}\""))
    .arg(&src)
    .arg("-o")
    .arg(&lib)
    .args(["-ldl", "-lpthread"]);
    let shown = shell_words(&cmd);
    let out = run_with_timeout(&mut cmd);
    assert!(
        out.status.success(),
        "cannot build {}\n{}",
        src.display(),
        describe(&shown, &out, &s.root)
    );
    lib
}

/// The lookups library `tag` logged in `dir` (one process: one file).
fn logged(dir: &Path, tag: &str) -> Vec<Lookup> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{tag}-")))
        })
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one log of {tag} in {}: {files:?}",
        dir.display()
    );
    let text = std::fs::read_to_string(&files[0]).expect("the log");
    text.lines()
        .map(|l| {
            assert!(!l.starts_with("dropped"), "{tag} dropped lookups: {l}");
            let mut f = l.splitn(3, ' ');
            let mut next = || f.next().unwrap_or_default().to_string();
            (next(), next(), next())
        })
        .collect()
}

/// How often each (handle, name) was asked, whoever asked.
fn by_name<'a>(lookups: impl IntoIterator<Item = &'a Lookup>) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for (_, handle, name) in lookups {
        *m.entry((handle.clone(), name.clone())).or_insert(0) += 1;
    }
    m
}

fn run_chain(s: &WorkScratch, via: &str, preload: &[&Path], logs: &Path) -> Run {
    std::fs::create_dir_all(logs).expect("the logs' folder");
    let steps = steps();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let line = workload_line(via, &steps);
    let mut cmd = Command::new(&line[0]);
    hermetic(&mut cmd);
    let preload: Vec<String> = preload.iter().map(|p| p.display().to_string()).collect();
    cmd.args(&line[1..])
        .envs(neo_env())
        .env("LD_PRELOAD", preload.join(":"))
        .env("DLSYM_COUNT_DIR", logs)
        .env(OUT_ENV, &s.out)
        .current_dir(&s.work);
    if !preload.iter().any(|p| p.contains("xpu_asm_interposer")) {
        // What the interposer sets for IGC, which then makes lookups of
        // its own (its builtins, when it dumps).
        for (k, v) in DUMP_ENV {
            match k {
                "IGC_DumpToCustomDir" => cmd.env(k, logs.join("dumps")),
                _ => cmd.env(k, v),
            };
        }
    }
    let r = run(cmd, &s.out);
    assert!(r.output.status.success(), "{}", r.ctx());
    assert_eq!(
        r.stdout_lines(),
        [
            format!("imm a {VECTOR_ADD} 5"),
            format!("reg a {SCALE} 2 3")
        ],
        "{}",
        r.ctx()
    );
    r
}

fn both_neighbours_see_every_lookup(via: &str) {
    let s = work_scratch();
    let front = build_counter(&s, "front");
    let back = build_counter(&s, "back");
    let alone_logs = s.root.join("alone");
    run_chain(&s, via, &[&front, &back], &alone_logs);
    let (alone_front, alone_back) = (logged(&alone_logs, "front"), logged(&alone_logs, "back"));
    assert_eq!(
        by_name(&alone_front),
        by_name(&alone_back),
        "alone, both see the same"
    );
    let program = by_name(&alone_front);
    assert!(
        program.contains_key(&(
            "handle".to_string(),
            match via {
                "dlsym" => "zeCommandListAppendLaunchKernel",
                _ => "zeGetCommandListProcAddrTable",
            }
            .to_string()
        )),
        "the program's lookups: {program:?}"
    );

    let logs = s.root.join("traced");
    let interposer = interposer();
    let r = run_chain(&s, via, &[&front, &interposer, &back], &logs);
    let (got_front, got_back) = (logged(&logs, "front"), logged(&logs, "back"));
    let not_ours = by_name(got_front.iter().filter(|(c, _, _)| c != "xpu-asm"));
    assert_eq!(
        not_ours,
        program,
        "in front of the interposer: the program's lookups as alone\n{}",
        r.ctx()
    );
    assert_eq!(
        by_name(&got_back),
        by_name(&got_front),
        "behind the interposer: every lookup the front library saw\n{}",
        r.ctx()
    );
    eprintln!(
        "{via}: the program made {} lookups; in front: {} of them, behind: {} (and {} of the interposer's runtime)",
        alone_front.len(),
        not_ours.values().sum::<u64>(),
        got_back.len() - (got_front.len() - not_ours.values().sum::<u64>() as usize),
        got_front.len() - not_ours.values().sum::<u64>() as usize,
    );
    let rec = only_record(&s.out);
    let a = sha256_file(&spirv("a"));
    let want: BTreeMap<KernelKey, (u64, u64)> = BTreeMap::from([
        ((VECTOR_ADD.to_string(), a.clone()), (5, 5)),
        ((SCALE.to_string(), a), (6, 2)),
    ]);
    assert_eq!(counts(&rec), want, "{}", r.ctx());
    assert_eq!(rec.unknown_launches, 0, "{}", r.ctx());
}

#[test]
fn two_dlsym_preloads_around_the_interposer_see_every_lookup_dlsym() {
    both_neighbours_see_every_lookup("dlsym");
}

#[test]
fn two_dlsym_preloads_around_the_interposer_see_every_lookup_ddi() {
    both_neighbours_see_every_lookup("ddi");
}
