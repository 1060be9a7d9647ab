//! Launch shapes and devices written as the interposer writes them, read
//! back: a round trip, a shape cut short by a kill, counts read twice.
#![cfg(feature = "read")]

/// A record's header line and an event line (as read.rs's tests).
fn header() -> String {
    let mut h = format!(
        r#"{{"record":"xpu-asm","version":{},"type":"process","pid":1,"ppid":0,"host":"h","exe":"e","cmdline":[],"dump_dir":"d","forked_from":null,"env":{{}}}}"#,
        xpu_asm_record::VERSION
    );
    h.push('\n');
    h
}

fn line(body: &str) -> String {
    format!("{body}\n")
}

#[test]
fn shapes_and_devices_round_trip() {
    use xpu_asm_record::read::{apply_counts, parse_events, ProcessRecord};
    use xpu_asm_record::shapes::{encode_shape, ShapeKey, FLAG_INDIRECT};
    use xpu_asm_record::{counts_header, encode_slot};
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
