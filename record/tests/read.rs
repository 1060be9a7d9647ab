//! The record read back: events and counts written as the interposer
//! writes them (names of any bytes, devices, module binaries, OpenCL
//! programs, launch shapes, device times), truncated, newer or short
//! records.
#![cfg(feature = "read")]

use xpu_asm_record::read::*;
use xpu_asm_record::*;

fn line(body: &str) -> String {
    format!("{body}\n")
}

fn header() -> String {
    line(&format!(
        r#"{{"record":"xpu-asm","version":{VERSION},"type":"process","pid":7,"ppid":1,"host":"h","exe":"/bin/x","dump_dir":"dumps/h-7","env":{{"IGC_ShaderDumpEnable":{{"value":"1","set_by":"xpu-asm"}}}}}}"#
    ))
}

#[test]
fn round_trip_names_and_counts() {
    let mut ev = header();
    let mut k = br#"{"type":"kernel","id":1,"module":1,"#.to_vec();
    push_json_bytes_field(&mut k, "name", b"bad\xffname\n\"q\"");
    k.extend_from_slice(b"}\n");
    ev.push_str(&line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"]}"#));
    let mut bytes = ev.into_bytes();
    bytes.extend_from_slice(&k);
    let mut k2 = br#"{"type":"kernel","id":2,"module":1,"#.to_vec();
    push_json_bytes_field(&mut k2, "name", "añ\u{1}".as_bytes());
    k2.extend_from_slice(b"}\n");
    bytes.extend_from_slice(&k2);
    let mut rec = ProcessRecord::default();
    parse_events(&bytes, "t", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    assert_eq!(rec.kernels[&1].name, b"bad\xffname\n\"q\"");
    assert_eq!(rec.kernels[&2].name, "añ\u{1}".as_bytes());
    assert_eq!(rec.env[0].name, "IGC_ShaderDumpEnable");
    assert!(!rec.env[0].by_user);

    let mut counts = counts_header().to_vec();
    for (l, a) in [(5u64, 6u64), (10, 11), (20, 21)] {
        counts.extend_from_slice(&encode_slot(l, a));
    }
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.unknown_launches, 5);
    assert_eq!(
        (rec.kernels[&1].launches, rec.kernels[&1].appended),
        (10, 11)
    );
    assert_eq!(
        (rec.kernels[&2].launches, rec.kernels[&2].appended),
        (20, 21)
    );
}

#[test]
fn the_rank_in_the_header_is_read() {
    let ev = header().replace(
        r#""env":"#,
        r#""job":{"launcher":"pmi","rank":3,"local_rank":1,"size":4,"id":null},"env":"#,
    );
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert_eq!(
        rec.rank,
        Some(ranks::Rank {
            launcher: ranks::Launcher::Pmi,
            rank: 3,
            local_rank: Some(1),
            size: Some(4),
            job: None,
        })
    );
    // Records without one (older, or not in a job) have none.
    let mut rec = ProcessRecord::default();
    parse_events(header().as_bytes(), "t", &mut rec);
    assert_eq!(rec.rank, None);
}

#[test]
fn round_trip_devices_and_module_binaries() {
    let mut ev = header().into_bytes();
    let mut d = br#"{"type":"device","id":1,"vendor_id":32902,"device_id":3029,"#.to_vec();
    push_json_bytes_field(&mut d, "name", b"Intel(R) Graphics [0x0bd5]");
    d.extend_from_slice(b",\"ip_version\":null}\n");
    ev.extend_from_slice(&d);
    ev.extend_from_slice(line(r#"{"type":"device","id":2,"vendor_id":32902,"device_id":3029,"name":"x","ip_version":201326592}"#).as_bytes());
    ev.extend_from_slice(line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"],"device":1,"binary":{"size":9,"sha256":"cd","file":"modules/cd.bin"}}"#).as_bytes());
    ev.extend_from_slice(line(r#"{"type":"module","id":2,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"],"device":2,"binary":{"error":"zeModuleGetNativeBinary failed (0x78000001)"}}"#).as_bytes());
    // Written before module binaries were kept: no device, no binary.
    ev.extend_from_slice(line(r#"{"type":"module","id":3,"format":"native","size":3,"sha256":"ef","build_flags":"","kernel_names":[]}"#).as_bytes());
    // A native module the driver built again, and one whose build could
    // not be read.
    ev.extend_from_slice(line(r#"{"type":"module","id":4,"format":"native","size":3,"sha256":"ef","build_flags":"","kernel_names":["a"],"device":1,"binary":{"size":3,"sha256":"ef","file":"modules/ef.bin"},"built_binary":{"size":7,"sha256":"0a","file":"modules/0a.bin"}}"#).as_bytes());
    ev.extend_from_slice(line(r#"{"type":"module","id":5,"format":"native","size":3,"sha256":"ef","build_flags":"","kernel_names":["a"],"binary":{"size":3,"sha256":"ef","file":"modules/ef.bin"},"built_binary":{"error":"zeModuleGetNativeBinary failed (0x78000001)"}}"#).as_bytes());
    let mut rec = ProcessRecord::default();
    parse_events(&ev, "t", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    assert_eq!(
        rec.devices[&1],
        Device {
            id: 1,
            vendor_id: 0x8086,
            device_id: 0x0bd5,
            name: "Intel(R) Graphics [0x0bd5]".into(),
            ip_version: None,
            compute: None,
        }
    );
    assert_eq!(rec.devices[&2].ip_version, Some(0x0c00_0000));
    assert_eq!(rec.modules[&1].device, Some(1));
    assert_eq!(
        rec.modules[&1].binary,
        Some(ModuleBinary {
            sha256: "cd".into(),
            size: 9,
            file: Some("modules/cd.bin".into()),
            error: None
        })
    );
    let failed = rec.modules[&2].binary.as_ref().unwrap();
    assert_eq!(failed.file, None);
    assert!(failed.error.as_deref().unwrap().contains("0x78000001"));
    assert_eq!(
        (rec.modules[&3].device, &rec.modules[&3].binary),
        (None, &None)
    );
    // Modules without a build of their own (SPIR-V, native run as
    // passed, older records) have no built binary.
    for id in [1, 2, 3] {
        assert_eq!(rec.modules[&id].built_binary, None, "module {id}");
    }
    assert_eq!(
        rec.modules[&4].built_binary,
        Some(ModuleBinary {
            sha256: "0a".into(),
            size: 7,
            file: Some("modules/0a.bin".into()),
            error: None
        })
    );
    assert_eq!(rec.modules[&4].binary.as_ref().unwrap().sha256, "ef");
    let unread = rec.modules[&5].built_binary.as_ref().unwrap();
    assert_eq!((unread.file.as_deref(), unread.sha256.as_str()), (None, ""));
    assert!(unread.error.as_deref().unwrap().contains("0x78000001"));
    assert!(!rec.isa_binary);
    let binary_mode = header().replace(
        r#""type":"process","#,
        r#""type":"process","isa":"binary","#,
    );
    let mut rec = ProcessRecord::default();
    parse_events(binary_mode.as_bytes(), "t", &mut rec);
    assert!(rec.isa_binary);
}

#[test]
fn opencl_programs_say_their_api_and_what_they_were_made_from() {
    let mut ev = header().into_bytes();
    ev.extend_from_slice(line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"],"binary":{"size":9,"sha256":"cd","file":"modules/cd.bin"},"api":"opencl","from":"source","from_size":40,"from_sha256":"12"}"#).as_bytes());
    ev.extend_from_slice(line(r#"{"type":"module","id":2,"format":"spirv","size":3,"sha256":"ef","build_flags":"","kernel_names":["a"],"api":"opencl","from":"link","from_inputs":[{"from":"source","from_size":4,"from_sha256":"34"}]}"#).as_bytes());
    // Level Zero's modules say no api.
    ev.extend_from_slice(line(r#"{"type":"module","id":3,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"]}"#).as_bytes());
    let mut rec = ProcessRecord::default();
    parse_events(&ev, "t", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    let m = |id: u32| &rec.modules[&id];
    assert_eq!(
        (m(1).api, m(1).from.as_deref(), m(1).from_sha256.as_deref()),
        (Api::OpenCl, Some("source"), Some("12"))
    );
    assert_eq!(
        (m(2).api, m(2).from.as_deref(), m(2).from_sha256.as_deref()),
        (Api::OpenCl, Some("link"), None)
    );
    assert_eq!((m(3).api, m(3).from.as_deref()), (Api::LevelZero, None));
    assert_eq!(
        (Api::OpenCl.as_str(), Api::LevelZero.as_str()),
        ("opencl", "level_zero")
    );
}

#[test]
fn truncated_last_line_is_reported_not_fatal() {
    let mut ev = header();
    ev.push_str(&line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":[]}"#));
    ev.push_str(r#"{"type":"kernel","id":1,"mod"#);
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert_eq!(rec.modules.len(), 1);
    assert_eq!(rec.kernels.len(), 0);
    assert_eq!(rec.warnings.len(), 1);
    assert!(rec.warnings[0].contains("truncated"), "{:?}", rec.warnings);
}

#[test]
fn newer_version_is_refused_with_a_message() {
    let ev = header().replace(&format!("\"version\":{VERSION}"), "\"version\":99");
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert!(rec.warnings[0].contains("version 99"), "{:?}", rec.warnings);
}

#[test]
fn slot_totals_add_immediate_and_regular_counts() {
    let mut slot = [0u8; COUNTS_SLOT_LEN];
    slot[..8].copy_from_slice(&7u64.to_le_bytes()); // immediate
    slot[8..16].copy_from_slice(&3u64.to_le_bytes()); // regular appends
    slot[16..24].copy_from_slice(&12u64.to_le_bytes()); // regular launches
    assert_eq!(decode_slot(&slot), Some((19, 10)));
    assert_eq!(decode_slot(&encode_slot(4, 5)), Some((4, 5)));
    assert_eq!(decode_slot(&slot[..20]), None);
}

#[test]
fn short_counts_file_keeps_known_kernels() {
    let mut rec = ProcessRecord::default();
    rec.kernels.insert(
        3,
        Kernel {
            id: 3,
            ..Default::default()
        },
    );
    let counts = counts_header().to_vec();
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.kernels[&3].launches, 0);
    assert!(rec.warnings[0].contains("kernel id 3"));
}

#[test]
fn shapes_and_devices_round_trip() {
    use xpu_asm_record::shapes::{encode_shape, ShapeKey, FLAG_INDIRECT};
    let mut ev = header();
    ev.push_str(&line(r#"{"type":"device","id":1,"vendor_id":32902,"device_id":3029,"name":"g","ip_version":null,"compute":{"slices":1,"subslices_per_slice":4,"eus_per_subslice":8,"threads_per_eu":8,"eu_simd_width":16,"max_group_size":1024,"max_slm_bytes":131072}}"#));
    ev.push_str(&line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"],"device":1}"#));
    ev.push_str(&line(
        r#"{"type":"kernel","id":1,"module":1,"name":"a","slm_static":1024}"#,
    ));
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    let c = rec.devices[&1].compute.clone().expect("compute");
    assert_eq!(
        (
            c.slices * c.subslices_per_slice,
            c.eus_per_subslice,
            c.max_slm_bytes
        ),
        (4, 8, 131072)
    );
    assert_eq!(rec.kernels[&1].slm_static, Some(1024));
    // Slot 1: the kernel's counter (3 launches of other shapes); 2: a
    // slot left zero; 3-4 and 5-6: its shapes; 7-8: a shape cut short
    // by a kill (tagged, no launches).
    let key = ShapeKey {
        group_size: [64, 1, 1],
        group_count: [16, 2, 1],
        ..ShapeKey::default()
    };
    let indirect = ShapeKey {
        flags: FLAG_INDIRECT,
        ..key
    };
    let mut counts = counts_header().to_vec();
    counts.extend_from_slice(&encode_slot(0, 0));
    counts.extend_from_slice(&encode_slot(3, 3));
    counts.extend_from_slice(&encode_slot(0, 0));
    counts.extend_from_slice(&encode_shape(1, 7, 2, &key));
    counts.extend_from_slice(&encode_shape(1, 5, 5, &indirect));
    counts.extend_from_slice(&encode_shape(1, 0, 0, &key));
    apply_counts(&counts, "c", &mut rec);
    let k = &rec.kernels[&1];
    assert_eq!(
        (k.launches, k.appended, rec.unattributed_launches),
        (15, 10, 0)
    );
    let got: Vec<_> = k
        .shapes
        .iter()
        .map(|s| (s.key, s.launches, s.appended))
        .collect();
    assert_eq!(got, [(key, 7, 2), (indirect, 5, 5)]);
    // Read twice (staged counts after the file's): the same.
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.kernels[&1].shapes.len(), 2);
    assert_eq!(rec.kernels[&1].launches, 15);
}

/// A counts file with kernel 1's counter at slot 1, its shapes' pairs
/// at 2-3 and 4-5, then the given time blocks, each at its slot.
fn counts_with_times(blocks: &[(u32, xpu_asm_record::times::Times)]) -> Vec<u8> {
    use xpu_asm_record::shapes::{encode_shape, ShapeKey};
    let key = |x| ShapeKey {
        group_size: [32, 1, 1],
        group_count: [x, 1, 1],
        ..ShapeKey::default()
    };
    let mut counts = counts_header().to_vec();
    counts.extend_from_slice(&encode_slot(0, 0));
    counts.extend_from_slice(&encode_slot(2, 2));
    counts.extend_from_slice(&encode_shape(1, 30, 30, &key(4)));
    counts.extend_from_slice(&encode_shape(1, 5, 1, &key(8)));
    for (owner, t) in blocks {
        counts.extend_from_slice(&t.encode(*owner));
    }
    counts
}

fn kernel_one() -> ProcessRecord {
    let mut ev = header().replace(
        r#""type":"process","#,
        r#""type":"process","time":{"policy":"sample","first":10,"every":100},"#,
    );
    ev.push_str(&line(r#"{"type":"module","id":1,"format":"spirv","size":3,"sha256":"ab","build_flags":"","kernel_names":["a"],"device":1}"#));
    ev.push_str(&line(r#"{"type":"kernel","id":1,"module":1,"name":"a"}"#));
    ev.push_str(&line(
        r#"{"type":"timer","device":1,"ticks_per_second":19200000,"valid_bits":32}"#,
    ));
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    rec
}

#[test]
fn device_times_round_trip_per_shape_and_kernel() {
    use xpu_asm_record::times::{NotTimed, Policy, Times};
    let mut rec = kernel_one();
    assert_eq!(rec.time, Some(Policy::DEFAULT));
    assert_eq!(
        rec.timers,
        [Timer {
            device: Some(1),
            ticks_per_second: 19_200_000,
            valid_bits: 32
        }]
    );
    // Shape 1 (head at slot 2): 3 launches timed, 1 not complete, 1
    // pending; shape 2 (head 4): 1 timed; the kernel's own (slot 1): 1
    // pool full.
    let mut a = Times::default();
    for ns in [1000, 3000, 2000] {
        a.record(ns);
    }
    a.sampled += 2;
    a.not_timed[NotTimed::NotComplete.index()] = 1;
    let mut b = Times::default();
    b.record(7);
    let mut own = Times {
        sampled: 1,
        ..Times::default()
    };
    own.not_timed[NotTimed::PoolFull.index()] = 1;
    let counts = counts_with_times(&[(2, a.clone()), (4, b.clone()), (1, own.clone())]);
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    let k = &rec.kernels[&1];
    assert_eq!((k.launches, rec.unattributed_launches), (37, 0));
    assert_eq!(k.shapes[0].time.as_ref(), Some(&a));
    assert_eq!(k.shapes[1].time.as_ref(), Some(&b));
    let t = k.time.clone().expect("the kernel's times");
    assert_eq!(
        (t.sampled, t.timed, t.total_ns, t.min_ns, t.max_ns),
        (7, 4, 6007, Some(7), Some(3000))
    );
    assert_eq!(t.pending(), 1);
    assert_eq!(
        t.reasons(),
        [(NotTimed::NotComplete, 1), (NotTimed::PoolFull, 1)]
    );
    let m = a.median().expect("a median");
    assert_eq!((m.lo_ns, m.hi_ns), (1920, 2047));
    assert!(m.ns.abs_diff(2000) * 16 <= 2000, "{m:?}");
    // Read again (staged counts after the file's): the same.
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.kernels[&1].time, Some(t));
}

#[test]
fn a_time_block_cut_short_or_of_a_lost_kernel_is_skipped() {
    use xpu_asm_record::times::{Times, W_LAYOUT};
    let mut rec = kernel_one();
    let mut t = Times::default();
    t.record(500);
    // A block tagged with its layout and nothing else (a kill between
    // the tag and the first result), and one of kernel 9, whose event
    // was lost.
    let mut counts = counts_with_times(&[(2, Times::default()), (9, t)]);
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
    assert_eq!(rec.kernels[&1].time, None);
    assert_eq!(rec.kernels[&1].shapes[0].time, None);
    // Neither block is read as launches of a lost kernel.
    assert_eq!(rec.unattributed_launches, 0);
    // A tag without its layout (a newer block's): one slot skipped, no
    // launches made of it either.
    let at = COUNTS_HEADER_LEN + 6 * COUNTS_SLOT_LEN + W_LAYOUT * 8;
    counts[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.kernels[&1].launches, 37);
}

#[test]
fn medians_of_histograms_add_up_across_processes() {
    use xpu_asm_record::times::Times;
    // Rank 0 timed 1, 2, 3 us; rank 1 timed 100 us three times: the
    // median of the six (the lower middle one, 3 us) from the sum.
    let (mut r0, mut r1) = (Times::default(), Times::default());
    for ns in [1000, 2000, 3000] {
        r0.record(ns);
        r1.record(100_000);
    }
    let mut all = r0.clone();
    all.add(&r1);
    assert_eq!(
        (all.timed, all.total_ns, all.min_ns, all.max_ns),
        (6, 306_000, Some(1000), Some(100_000))
    );
    let m = all.median().expect("a median");
    assert!(m.lo_ns <= 3000 && 3000 <= m.hi_ns, "{m:?}");
    assert!(m.ns.abs_diff(3000) * 16 <= 3000, "{m:?}");
    // One launch: exact.
    let mut one = Times::default();
    one.record(123_456_789);
    let m = one.median().expect("a median");
    assert_eq!(
        (m.ns, m.lo_ns, m.hi_ns),
        (123_456_789, 123_456_789, 123_456_789)
    );
    assert_eq!(Times::default().median(), None);
}

#[test]
fn buckets_tile_the_durations() {
    use xpu_asm_record::times::{bucket_bounds, bucket_of, BUCKETS, TOP_NS};
    let mut next = 0;
    for i in 0..BUCKETS {
        let (lo, hi) = bucket_bounds(i);
        assert_eq!(lo, next, "bucket {i}");
        assert_eq!(bucket_of(lo), i);
        match hi {
            Some(h) => {
                assert_eq!(bucket_of(h - 1), i);
                // At most an eighth of its lower bound wide.
                assert!((h - lo) * 8 <= lo.max(8), "bucket {i}: {lo}..{h}");
                next = h;
            }
            None => assert_eq!(i, BUCKETS - 1),
        }
    }
    assert_eq!(bucket_of(TOP_NS), BUCKETS - 1);
    assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
}

#[test]
fn ticks_become_ns_masked_with_one_wrap() {
    use xpu_asm_record::times::duration_ns;
    // 12.5 MHz: 80 ns a tick.
    assert_eq!(duration_ns(100, 350, 32, 12_500_000), Some(20_000));
    // Bits past the valid ones are masked; the counter wrapped once.
    assert_eq!(
        duration_ns(0xffff_ff00 | 7 << 40, 0x100, 32, 1_000_000_000),
        Some(0x200)
    );
    // 19.2 MHz: rounded to the nearest ns.
    assert_eq!(duration_ns(0, 1, 36, 19_200_000), Some(52));
    assert_eq!(duration_ns(0, 3, 64, 19_200_000), Some(156));
    assert_eq!(duration_ns(0, 3, 64, 0), None);
    assert_eq!(duration_ns(0, 3, 0, 1), None);
}

#[test]
fn policies_choose_the_first_launches_then_one_in_n() {
    use xpu_asm_record::times::Policy;
    let p = Policy {
        all: false,
        first: 3,
        every: 5,
    };
    let chosen: Vec<u64> = (0..21).filter(|&n| p.chosen(n)).collect();
    assert_eq!(chosen, [0, 1, 2, 5, 10, 15, 20]);
    for launches in 0..40 {
        let by_hand = (0..launches).filter(|&n| p.chosen(n)).count() as u64;
        assert_eq!(p.chosen_of(launches), by_hand, "{launches}");
        assert_eq!(Policy::ALL.chosen_of(launches), launches);
    }
    for v in ["1", "sample", "all", "sample:3:5"] {
        let p = Policy::from_env(v).expect(v);
        assert_eq!(Policy::from_env(&p.env_value()), Some(p));
    }
    assert_eq!(Policy::from_env("sample:3:5"), Some(p));
    for bad in [
        "",
        "0",
        "sample:3",
        "sample:3:0",
        "sample:a:5",
        "sample:1:2:3",
    ] {
        assert_eq!(Policy::from_env(bad), None, "{bad:?}");
    }
    assert_eq!(
        Policy::DEFAULT.json(),
        r#"{"policy":"sample","first":10,"every":100}"#
    );
}

#[test]
fn time_blocks_start_within_one_chunk() {
    use xpu_asm_record::times::{block_start, BLOCK_SLOTS};
    assert_eq!(block_start(10), 10);
    let last = (CHUNK_SLOTS - BLOCK_SLOTS) as u32;
    assert_eq!(block_start(last), last);
    assert_eq!(block_start(last + 1), CHUNK_SLOTS as u32);
}

#[test]
fn reasons_keep_their_index_and_name() {
    use xpu_asm_record::times::NotTimed;
    for (i, r) in NotTimed::ALL.iter().enumerate() {
        assert_eq!((r.index(), NotTimed::from_index(i)), (i, *r));
    }
    assert_eq!(NotTimed::NotComplete.name(), "not_complete");
    assert_eq!(NotTimed::from_index(13), NotTimed::Other(13));
    assert_eq!(NotTimed::Other(13).name(), "reason_13");
}

#[test]
fn version_3_records_still_read_without_times() {
    let ev = header().replace(&format!("\"version\":{VERSION}"), "\"version\":3");
    let mut rec = ProcessRecord::default();
    parse_events(ev.as_bytes(), "t", &mut rec);
    assert_eq!((rec.warnings.len(), rec.time), (0, None));
    let mut counts = counts_header().to_vec();
    counts[8..12].copy_from_slice(&3u32.to_le_bytes());
    apply_counts(&counts, "c", &mut rec);
    assert_eq!(rec.warnings, Vec::<String>::new());
}
