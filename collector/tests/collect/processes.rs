//! Processes merged per kernel and module; processes that compiled
//! differently.

use super::*;

#[test]
fn processes_are_merged_per_kernel_and_module() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    for (pid, n) in [(10, 7u64), (11, 5)] {
        let mut p = Process::new(pid);
        p.modules = vec![Module::spirv(1, sha_a())];
        p.kernels = vec![record_kernel(1, 1, b"vector_add", n)];
        if pid == 11 {
            p.exit = None;
            p.unknown_launches = 2;
        }
        p.write(out);
        copy_dumps("pvc", out, &p.dump_dir());
    }
    write_run_json(out, r#"{"signal":11}"#);
    let r = collect_defaults(out);
    assert_eq!(r.kernels.len(), 1);
    let k = &r.kernels[0];
    assert_eq!((k.launches, k.appended), (12, 12));
    assert_eq!(k.pids, [10, 11]);
    // The process that launched it most speaks for it.
    assert_eq!(
        k.asm.as_deref(),
        Some("dumps/h-10/OCL_asm6f30f910931b48ea_simd32_entry_0001.asm")
    );
    // Both processes compiled the same SPIR-V the same way: one candidate.
    assert_eq!(k.asm_candidates.len(), 1);
    assert_eq!(k.asm_candidates[0].path, k.asm.clone().unwrap());
    assert_eq!(k.asm_candidates[0].processes, 2);
    // vector_add_scaled of A plus everything of B and C, counted once.
    assert_eq!(r.unlaunched_compiled, 4);
    assert_eq!(
        r.exit,
        Some(xpu_asm_collector::capture::run::Exit::Signal(11))
    );
    assert_eq!(r.processes.len(), 2);
    assert_eq!(
        r.processes[0].exit,
        Some(xpu_asm_collector::capture::run::Exit::Code(0))
    );
    assert_eq!(r.processes[1].exit, None);
    assert!(r.processes[1].ended.contains("unknown"));
    assert_eq!(r.processes[1].unknown_launches, 2);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("2 launches of kernel handles")));
}

/// Processes 20..=24 launch `vector_add` of module A and `heavy` of module
/// C (n, 2n launches) with the same dumps; `change` edits one process's
/// file first.
fn ranks_capture(out: &Path, change: Option<(u32, &str, &str, &str)>) -> Vec<u64> {
    let mut launches = Vec::new();
    for (i, pid) in (20..=24u32).enumerate() {
        let n = [3u64, 5, 7, 11, 13][i];
        let mut p = Process::new(pid);
        p.modules = vec![Module::spirv(1, sha_a()), Module::spirv(3, sha_c())];
        p.kernels = vec![
            record_kernel(1, 1, b"vector_add", n),
            record_kernel(2, 3, b"heavy", 2 * n),
        ];
        p.write(out);
        copy_dumps("pvc", out, &p.dump_dir());
        if let Some((at, file, from, to)) = change.filter(|c| c.0 == pid) {
            let f = out.join(p.dump_dir()).join(file);
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(text.contains(from), "{from} not in {file}");
            std::fs::write(&f, text.replacen(from, to, 1)).unwrap();
            assert_eq!(at, pid);
        }
        launches.push(n);
    }
    write_run_json(out, r#"{"code":0}"#);
    launches
}

const VECTOR_ADD_A: &str = "OCL_asm6f30f910931b48ea_simd32_entry_0001.asm";

#[test]
fn identical_files_of_many_processes_are_one_candidate() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let n = ranks_capture(out, None);
    let r = collect(out, &with(Keep::Launched, false)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.launches, n.iter().sum::<u64>());
    assert_eq!(k.pids, [20, 21, 22, 23, 24]);
    // Shown: the file of the process that launched it most (pid 24), which
    // stays the one listed though it is last by path.
    let shown = format!("dumps/h-24/{VECTOR_ADD_A}");
    assert_eq!(k.asm.as_deref(), Some(shown.as_str()));
    let c: Vec<(&str, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.as_str(), c.processes))
        .collect();
    assert_eq!(c, [(shown.as_str(), 5)]);
    // Both of IGC's attempts at `heavy`, each once for all five processes:
    // the shown retry as shown, the other by its first path.
    let h = find(&r, "heavy", &sha_c());
    assert_eq!(h.launches, 2 * n.iter().sum::<u64>());
    let c: Vec<(&str, u32, u32)> = h
        .asm_candidates
        .iter()
        .map(|c| (c.path.as_str(), c.retry, c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (
                "dumps/h-20/OCL_asm16db3a16823c3d45_simd32_entry_0001.asm",
                0,
                5
            ),
            (
                "dumps/h-24/OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm",
                1,
                5
            ),
        ]
    );
    // `--keep launched` keeps every process's copy, not only the listed one:
    // collecting again gives the same report.
    for pid in 20..=24 {
        assert!(out.join(format!("dumps/h-{pid}/{VECTOR_ADD_A}")).is_file());
    }
    let again = collect(out, &with(Keep::Launched, false)).unwrap();
    assert_eq!(again.kernels, r.kernels);
}

#[test]
fn a_process_that_compiled_differently_is_its_own_candidate_and_warned() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    let n = ranks_capture(
        out,
        Some((22, VECTOR_ADD_A, "//.instCount 34", "//.instCount 41")),
    );
    let r = collect_defaults(out);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.launches, n.iter().sum::<u64>());
    assert_eq!(k.instructions, Some(34));
    let c: Vec<(String, Option<u64>, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.clone(), c.instructions, c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (format!("dumps/h-22/{VECTOR_ADD_A}"), Some(41), 1),
            (format!("dumps/h-24/{VECTOR_ADD_A}"), Some(34), 4),
        ]
    );
    assert_eq!(
        r.warnings,
        [format!(
            "kernel vector_add: processes compiled it differently: 4 with 34 instructions, \
             1 with 41 instructions (dumps/h-22/{VECTOR_ADD_A}); the report shows dumps/h-24/{VECTOR_ADD_A}"
        )]
    );
    // `heavy` was compiled alike everywhere.
    let h = find(&r, "heavy", &sha_c());
    assert!(h.asm_candidates.iter().all(|c| c.processes == 5));
    assert_eq!(h.asm_candidates.len(), 2);

    // The process shown (it launched most) is the one that differs: the
    // others' version is named by its first path.
    let t = tempfile::tempdir().unwrap();
    let out = t.path();
    ranks_capture(
        out,
        Some((24, VECTOR_ADD_A, "//.instCount 34", "//.instCount 41")),
    );
    let r = collect_defaults(out);
    let k = find(&r, "vector_add", &sha_a());
    assert_eq!(k.instructions, Some(41));
    let c: Vec<(String, u32)> = k
        .asm_candidates
        .iter()
        .map(|c| (c.path.clone(), c.processes))
        .collect();
    assert_eq!(
        c,
        [
            (format!("dumps/h-20/{VECTOR_ADD_A}"), 4),
            (format!("dumps/h-24/{VECTOR_ADD_A}"), 1),
        ]
    );
    assert_eq!(
        r.warnings,
        [format!(
            "kernel vector_add: processes compiled it differently: 4 with 34 instructions \
             (dumps/h-20/{VECTOR_ADD_A}), 1 with 41 instructions; the report shows dumps/h-24/{VECTOR_ADD_A}"
        )]
    );
}
