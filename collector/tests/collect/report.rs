//! What the report lists and keeps: filters, keep modes, copies, its JSON
//! contract.

use super::*;

#[test]
fn all_lists_unlaunched_kernels_and_filter_limits_the_list() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    let r = collect(t.path(), &with(Keep::All, true)).unwrap();
    assert_eq!(r.kernels.len(), 5);
    let un = r.kernels.last().unwrap();
    assert_eq!(
        (un.name.as_str(), un.status, un.launches),
        ("vector_add_scaled", Status::NotLaunched, 0)
    );
    assert_eq!(un.rank, 5);
    assert!(un.asm.is_some() && un.asm_copy.is_none());

    let opts = Options {
        filter: Some(regex::Regex::new("^vector").unwrap()),
        keep: Keep::All,
        ..Default::default()
    };
    let r = collect(t.path(), &opts).unwrap();
    let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["vector_add", "vector_add"]);
    assert_eq!(r.totals.filtered_out, 2);
    assert_eq!(r.filter.as_deref(), Some("^vector"));
    // A view: report.json holds every launched kernel, unfiltered, and the
    // kernels shown keep their ranks in it.
    let written: Report =
        serde_json::from_slice(&std::fs::read(t.path().join("report.json")).unwrap()).unwrap();
    assert_eq!((written.kernels.len(), written.filter), (4, None));
    assert_eq!(written.totals.filtered_out, 0);
    for k in &r.kernels {
        assert_eq!(&written.kernels[k.rank - 1], k);
    }
    // The demangled form matches too.
    let mut p = Process::new(5);
    let t2 = tempfile::tempdir().unwrap();
    let d = t2.path().join("dumps/h-5");
    let sha = write_spv(&d, "00000000000000cc", b"s");
    let mangled = b"_ZTSZ4mainEUlN4sycl3_V12idILi1EEEE_";
    write_asm(
        &d,
        "OCL_asm00000000000000cc_simd32_entry_0001.asm",
        mangled,
        3,
        None,
    );
    p.modules = vec![Module::spirv(1, sha)];
    p.kernels = vec![record_kernel(1, 1, mangled, 1)];
    p.write(t2.path());
    let opts = Options {
        filter: Some(regex::Regex::new(r"lambda\(sycl").unwrap()),
        ..Default::default()
    };
    let r = collect(t2.path(), &opts).unwrap();
    assert_eq!(r.kernels.len(), 1);
    assert_eq!(r.kernels[0].demangled, "main::{lambda(sycl::_V1::id<1>)#1}");
    assert!(r.kernels[0]
        .asm_copy
        .as_deref()
        .unwrap()
        .starts_with("asm/001-main_lambda_sycl_V1_id_1_1-"));
}

#[test]
fn keep_modes_prune_the_dumps_and_report_sizes() {
    let base = tempfile::tempdir().unwrap();
    let make = |name: &str| {
        let out = base.path().join(name);
        pvc_capture(&out);
        // An intermediate IGC leaves, and a file in a subfolder.
        let d = out.join("dumps/h-100");
        std::fs::write(
            d.join("OCL_asm6f30f910931b48ea_codegen.ll"),
            vec![b'x'; 5000],
        )
        .unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/x.visaasm"), b"x").unwrap();
        out
    };
    let files = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = walkdir::WalkDir::new(out.join("dumps"))
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };

    let out = make("all");
    let r = collect(&out, &with(Keep::All, false)).unwrap();
    assert_eq!(r.dumps.before, r.dumps.after);
    assert_eq!(files(&out).len(), 13);

    let out = make("asm");
    let r = collect(&out, &with(Keep::Asm, false)).unwrap();
    assert!(files(&out)
        .iter()
        .all(|f| f.ends_with(".asm") || f.ends_with(".spv")));
    assert_eq!(files(&out).len(), 9);
    assert_eq!(r.dumps.before.files, 13);
    assert_eq!(r.dumps.after.files, 9);
    assert!(r.dumps.after.bytes < r.dumps.before.bytes);
    assert_eq!(r.dumps.keep, "asm");
    // Collecting again reports the same sizes (the "before" is remembered).
    assert_eq!(collect(&out, &with(Keep::Asm, false)).unwrap(), r);
    // --keep all afterwards keeps what is left, and the table says that
    // an earlier collection pruned the rest.
    let r = collect(&out, &with(Keep::All, false)).unwrap();
    assert_eq!((r.dumps.before.files, r.dumps.after.files), (13, 9));
    let style = xpu_asm_collector::report::export::table::TableStyle {
        width: 120,
        color: false,
        dir: "d".into(),
        sort: None,
    };
    let table = xpu_asm_collector::report::export::table::render_table(&r, &style);
    let line = table.lines().find(|l| l.starts_with("dumps: ")).unwrap();
    assert!(
        line.contains(" in 13 files, ")
            && line.contains(
                " in 9 files since an earlier collection pruned them; what it removed is gone"
            )
            && !line.contains("keeps everything"),
        "{line}"
    );

    let out = make("launched");
    // --filter limits the report, not what is kept.
    let opts = Options {
        keep: Keep::Launched,
        filter: Some(regex::Regex::new("^light$").unwrap()),
        ..Default::default()
    };
    let r = collect(&out, &opts).unwrap();
    assert_eq!(r.kernels.len(), 1);
    assert_eq!(
        files(&out),
        [
            "OCL_asm0ffa4fea61191b0a.spv",
            "OCL_asm0ffa4fea61191b0a_simd32_entry_0001.asm",
            "OCL_asm0ffa4fea61191b0a_simd32_entry_0002.asm",
            "OCL_asm16db3a16823c3d45.spv",
            "OCL_asm16db3a16823c3d45_1_simd32_entry_0001.asm",
            "OCL_asm16db3a16823c3d45_simd32_entry_0001.asm",
            "OCL_asm6f30f910931b48ea.spv",
            "OCL_asm6f30f910931b48ea_simd32_entry_0001.asm",
        ]
    );
}

#[test]
fn collect_on_a_copy_gives_the_same_report() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    pvc_capture(&a);
    let first = collect_defaults(&a);
    let b = t.path().join("b");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(status.success());
    let second = collect_defaults(&b);
    assert_eq!(first, second);
    assert_eq!(report_json(&a), report_json(&b));
    // And again on the original, after its pruning.
    assert_eq!(collect_defaults(&a), first);
}

#[test]
fn report_json_contract() {
    let t = tempfile::tempdir().unwrap();
    pvc_capture(t.path());
    collect_defaults(t.path());
    let j = report_json(t.path());
    assert_eq!(j["schema"], 6);
    assert_eq!(j["command"], serde_json::json!(["./app", "--x"]));
    assert_eq!(j["exit"], serde_json::json!({"code": 0}));
    for key in ["processes", "kernels", "warnings"] {
        assert!(j[key].is_array(), "{key}");
    }
    assert!(j["unlaunched_compiled"].is_u64());
    assert!(j["dumps"]["before"]["bytes"].is_u64());
    assert!(j["dumps"]["after"]["files"].is_u64());
    let p = &j["processes"][0];
    assert_eq!(p["pid"], 100);
    assert_eq!(p["host"], "h");
    assert_eq!(p["launches"], 1115);
    assert_eq!(p["exit"], serde_json::json!({"code": 0}));
    // Not a parallel job: no rank.
    assert_eq!(
        (&p["rank"], &p["local_rank"], &p["job_id"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    let k = &j["kernels"][0];
    for key in [
        "name",
        "demangled",
        "module_sha256",
        "launches",
        "appended",
        "pids",
        "asm",
        "asm_candidates",
        "status",
        "reason",
        "simd",
        "grf",
        "instructions",
        "spill_bytes",
        "platform",
    ] {
        assert!(k.get(key).is_some(), "kernel field {key} missing: {k}");
    }
    assert_eq!(k["status"], "matched");
    assert_eq!(k["reason"], Value::Null);
    assert_eq!(k["spill_bytes"], Value::Null);
    // Built without line information; its mix read from the whole file.
    assert_eq!(k["source"], Value::Null);
    let m = k["mix"].as_object().expect("a mix");
    let classes: u64 = m
        .iter()
        .filter(|(f, _)| *f != "instructions")
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert!(classes > 0);
    assert_eq!(m["instructions"].as_u64(), Some(classes));
    assert_eq!(k["pids"], serde_json::json!([100]));
    assert_eq!(k["asm_candidates"][0]["processes"], 1);
    assert_eq!(k["ranks"], serde_json::json!([]));
    assert_eq!(k["launches_by_rank"], serde_json::json!([]));
    assert!(k["asm"].as_str().unwrap().starts_with("dumps/"));
    assert!(k.get("name_hex").is_none());
    // Paths are relative: nothing in the report names the temporary folder.
    let text = std::fs::read_to_string(t.path().join("report.json")).unwrap();
    assert!(!text.contains(&t.path().display().to_string()));
}
