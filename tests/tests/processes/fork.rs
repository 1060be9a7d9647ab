//! `fork`: the records of parent and child kept apart.

use super::*;

/// The workload forks after launching; the child initialises Level Zero
/// again and launches on its own. The child's record holds only its own
/// launches, the parent's only the parent's, before and after the fork.
#[test]
fn fork_after_launches_keeps_the_records_apart() {
    let s = work_scratch();
    let r = run(
        xpu_in_work(
            &s,
            &["-q", "--emulate", "pvc"],
            &workload_line(
                "ddi",
                &[
                    "imm:a:scale:2",
                    "reg:a:scale_v2:1:3",
                    "fork:a:scale:5",
                    "imm:a:scale_v2:4",
                ],
            ),
        ),
        &s.out,
    );
    r.assert_status(0);
    let rep = r.report();
    assert_kernels(&r, &rep, &[(SCALE, 2 + 5, 2 + 5), (SCALE_V2, 3 + 4, 1 + 4)]);
    let procs = processes(&rep);
    assert_eq!(procs.len(), 2, "{}", r.ctx());
    let parent = procs
        .iter()
        .find(|p| p["forked_from"].is_null())
        .unwrap_or_else(|| panic!("no parent process\n{}", r.ctx()));
    let child = procs
        .iter()
        .find(|p| !p["forked_from"].is_null())
        .unwrap_or_else(|| panic!("no forked child\n{}", r.ctx()));
    assert_eq!(child["forked_from"], parent["pid"], "{}", r.ctx());
    assert_eq!(child["ppid"], parent["pid"], "{}", r.ctx());
    assert_eq!(process_counts(parent), (9, 7, 0), "parent\n{}", r.ctx());
    assert_eq!(process_counts(child), (5, 5, 0), "child\n{}", r.ctx());
    assert_eq!(
        (&parent["exit"], parent["ended"].as_str()),
        (&json!({"code": 0}), Some(SEEN)),
        "{}",
        r.ctx()
    );
    assert_eq!(
        (&child["exit"], child["ended"].as_str()),
        (&json!({"code": 0}), Some(EXIT_EVENT)),
        "{}",
        r.ctx()
    );
    // The records themselves, kernel by kernel.
    let recs = records(&s.out);
    let sha = sha256_file(&spirv("a"));
    for rec in &recs {
        assert!(rec.warnings.is_empty(), "{:#?}\n{}", rec.warnings, r.ctx());
        let got = counts(rec);
        let scale = got
            .get(&(SCALE.to_string(), sha.clone()))
            .copied()
            .unwrap_or_default();
        let v2 = got
            .get(&(SCALE_V2.to_string(), sha.clone()))
            .copied()
            .unwrap_or_default();
        let want = if rec.forked_from.is_some() {
            ((5, 5), (0, 0))
        } else {
            ((2, 2), (7, 5))
        };
        assert_eq!(
            (scale, v2),
            want,
            "record of {} (forked_from {:?})\n{}",
            rec.pid,
            rec.forked_from,
            r.ctx()
        );
        assert_eq!(rec.unknown_launches, 0, "{}", r.ctx());
    }
}
