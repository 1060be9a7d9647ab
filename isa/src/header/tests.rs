use super::*;
use std::path::Path;

/// The fields IGC 1.0.12504 writes after a name (a kernel that spills).
const IGC1: &[u8] = b"//.platform PVCXT\n//.thread_config numGRF=128, numAcc=4, numSWSB=16\n\
//.options_string \"\"\n//.full_options \"-emitLocation -TotalGRFNum 128 \"\n//.instCount 1274\n\
//.RA type\tGRAPH_COLORING_SPILL_FF_RA\n//.spill size 1024\n//.spill GRF est. ref count 67\n\
//.private memory size 8192\n\n//.declare BuiltInR0 (0)  rf=r size=64 type=ud align=32 words (r0.0)\n\n\
// .inputs\n    mov (16|M0)   r1.0<1>:ud  0x0:ud\n";

/// The fields IGC 2.40 writes after a name.
const IGC2: &[u8] = b"//.platform PVCXT\n//.thread_config numGRF=128, numAcc=4, numSWSB=16\n\
//.options_string \"-emitCrossThreadOffR0Reloc -hashmovs 3893716550 1221546089 -hashmovs1 0 3 \"\n\
//.full_options \"-emitLocation -wideMulMadOpsEn\"\n//.instCount 48\n//.RA type\tLOCAL_ROUND_ROBIN_BC_RA\n\
//.git-hash \n\n//.declare BuiltInR0 (0)  rf=r size=64 type=ud align=32 words (r0.0) IsBuiltin\n\
    mov (16|M0)   r1.0<1>:ud  0x0:ud\n";

/// The `.asm` text IGC writes for kernel `name`: `//.kernel NAME` then `fields`.
fn asm(name: &[u8], fields: &[u8]) -> Vec<u8> {
    let mut t = KERNEL_LINE.to_vec();
    t.extend_from_slice(name);
    t.push(b'\n');
    t.extend_from_slice(fields);
    t
}

fn known(names: &[&[u8]]) -> KnownNames {
    KnownNames::new(names.iter().map(|n| n.to_vec()))
}

fn parse(text: &[u8], names: &[&[u8]]) -> AsmHeader {
    parse_header(text, &known(names)).unwrap()
}

const FORGED: &[u8] = b"victim\n//.spill size 4096\n//.instCount 99999\n//.platform FORGED";

#[test]
fn igcs_headers_are_read_whole() {
    for (fields, inst, spill, git) in [(IGC1, 1274, Some(1024), None), (IGC2, 48, None, Some(""))] {
        let h = parse(&asm(b"k", fields), &[b"k", b"other"]);
        assert_eq!(h.kernel.as_deref(), Some(&b"k"[..]));
        assert_eq!(h.platform.as_deref(), Some("PVCXT"));
        assert_eq!((h.grf, h.acc, h.swsb), (Some(128), Some(4), Some(16)));
        assert_eq!(h.instructions, Some(inst));
        assert_eq!(h.spill_bytes, spill);
        assert_eq!(
            h.igc_git_hash.as_deref(),
            git.filter(|g: &&str| !g.is_empty())
        );
        assert_eq!((h.truncated, h.unresolved), (false, None));
    }
}

/// A name that holds header lines: the file of the kernel of that name is
/// that kernel's, with IGC's figures, and the lines of the name are no
/// field of it nor of the kernel its first line names.
#[test]
fn the_lines_of_a_name_are_never_fields() {
    let both: &[&[u8]] = &[b"victim", FORGED];
    for fields in [IGC1, IGC2] {
        let plain = parse(&asm(b"victim", fields), both);
        assert_eq!(plain.kernel.as_deref(), Some(&b"victim"[..]));
        let forged = parse(&asm(FORGED, fields), both);
        assert_eq!(forged.kernel.as_deref(), Some(FORGED));
        // Its own figures, exactly those of the same fields under a plain name.
        assert_eq!(
            AsmHeader {
                kernel: plain.kernel.clone(),
                ..forged.clone()
            },
            plain
        );
        // Its module without the forging name: its file names no kernel
        // (`victim` then fields out of IGC's order).
        let alone = parse(&asm(FORGED, fields), &[b"victim"]);
        assert_eq!(alone.kernel, None);
        assert_eq!(alone.unresolved, Some(Unresolved::NotIgcs));
        assert_eq!((alone.spill_bytes, alone.instructions), (None, None));
    }
    // A name that holds a whole header of IGC's and the line that ends
    // one: the longest name's reading is taken, the fields IGC wrote.
    let mut whole = b"victim\n".to_vec();
    whole.extend_from_slice(
        b"//.platform X\n//.thread_config numGRF=512\n//.instCount 1\n//.spill size 4096\n",
    );
    let h = parse(&asm(&whole, IGC2), &[b"victim", &whole]);
    assert_eq!(h.kernel.as_deref(), Some(&whole[..]));
    assert_eq!(
        (h.grf, h.instructions, h.spill_bytes),
        (Some(128), Some(48), None)
    );
    // And the file of `victim` is victim's, whatever names the module has
    // that its text starts with.
    let victim = asm(b"victim", IGC2);
    let cut = victim
        .windows(16)
        .position(|w| w == b"\n//.full_options")
        .unwrap();
    let prefix = &victim[KERNEL_LINE.len()..cut];
    let h = parse(&victim, &[b"victim", prefix, b"victim\n//.platform PVCXT"]);
    assert_eq!(h.kernel.as_deref(), Some(&b"victim"[..]));
    assert_eq!(h.instructions, Some(48));
}

#[test]
fn any_bytes_a_module_may_name_a_kernel_by() {
    let long = vec![b'n'; 250_000];
    let names: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\x1b[31mred\x1b[0m".to_vec(),
        b"<script>alert(1)</script>".to_vec(),
        b"bad\xff\xfename".to_vec(),
        "rtl\u{202e}txt\u{200b}".as_bytes().to_vec(),
        b"cr\r".to_vec(),
        b"../../etc/passwd".to_vec(),
        b"scale".to_vec(),
        b"scale_v2".to_vec(),
        b"a\nb".to_vec(),
        long,
    ];
    let k = KnownNames::new(names.clone());
    for n in &names {
        for fields in [IGC1, IGC2] {
            let h = parse_header(&asm(n, fields)[..], &k).unwrap();
            assert_eq!(
                h.kernel.as_deref(),
                Some(&n[..]),
                "{:?}",
                &n[..n.len().min(40)]
            );
            assert_eq!(h.grf, Some(128));
            assert!(h.instructions.is_some());
        }
    }
}

#[test]
fn a_header_that_names_no_kernel_of_its_module_gives_nothing() {
    let cases: [(&[u8], Unresolved); 8] = [
        (b"", Unresolved::NoKernelLine),
        (b"no header at all\n", Unresolved::NoKernelLine),
        (b"\n//.kernel k\n//.platform P\n", Unresolved::NoKernelLine),
        (b"//.kernel", Unresolved::NoKernelLine),
        (
            b"//.kernel unknown\n//.platform P\n//.instCount 5\n",
            Unresolved::UnknownName,
        ),
        // A known name not followed by a newline is not on the line.
        (b"//.kernel kk\n//.platform P\n", Unresolved::UnknownName),
        (b"//.kernel k", Unresolved::UnknownName),
        // The name, then not IGC's fields.
        (
            b"//.kernel k\n//.instCount 5\n//.platform P\n",
            Unresolved::NotIgcs,
        ),
    ];
    for (text, why) in cases {
        let h = parse(text, &[b"k"]);
        assert_eq!(h.kernel, None, "{text:?}");
        assert_eq!(h.unresolved, Some(why), "{text:?}");
        assert_eq!((h.grf, h.instructions, h.platform), (None, None, None));
    }
    for text in [
        &b"//.kernel k\n\n//.platform P\n"[..],
        b"//.kernel k\n//.foo\n//.platform P\n",
        b"//.kernel k\n//.platform P\n//.platform Q\n",
        b"//.kernel k\n//.platform P\n//.instCount 1\n//.thread_config numGRF=2\n",
        b"//.kernel k\n//.platform P\n//.kernel k\n//.instCount 1\n//.instCount 2\n",
    ] {
        assert_eq!(
            parse(text, &[b"k"]).unresolved,
            Some(Unresolved::NotIgcs),
            "{text:?}"
        );
    }
    // Lines IGC writes that are not read, and ones it may write that no
    // field is, between the fields.
    let h = parse(
        b"//.kernel k\r\n//.platform P\r\n//.kernel x\n//.instCount 7\r\r\n//.GRF count 9\n    mov\n",
        &[b"k\r", b"k"],
    );
    assert_eq!(
        (h.kernel.as_deref(), h.instructions),
        (Some(&b"k\r"[..]), Some(7))
    );
}

#[test]
fn a_header_longer_than_its_bound_is_not_checked_whole() {
    let mut fields = b"//.platform P\n".to_vec();
    while fields.len() < HEADER_FIELDS_MAX_BYTES as usize + 10 {
        fields.extend_from_slice(b"//.declare V0001 (1) rf=r size=4 type=ud\n");
    }
    let h = parse(&asm(b"k", &fields), &[b"k"]);
    assert_eq!(
        (h.kernel, h.unresolved, h.truncated),
        (None, Some(Unresolved::TooLong), true)
    );
    // Just within it: read.
    fields.truncate(HEADER_FIELDS_MAX_BYTES as usize - 100);
    let end = fields.iter().rposition(|&b| b == b'\n').unwrap();
    fields.truncate(end + 1);
    fields.extend_from_slice(b"//.instCount 3\n\nbody\n");
    let h = parse(&asm(b"k", &fields), &[b"k"]);
    assert_eq!((h.instructions, h.truncated), (Some(3), false));
}

/// The header read in chunks where it is parsed is the header
/// [`parse_header`] reads, at and around the chunks' ends; what is read is
/// bounded by the header, not by the file nor by the longest name.
#[test]
fn header_read_in_place_is_the_streamed_one() {
    let dir = tempfile::tempdir().unwrap();
    let long = vec![b'x'; 100_000];
    let k = KnownNames::new([b"k".to_vec(), b"a".to_vec(), FORGED.to_vec(), long.clone()]);
    let mut texts: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"//.kernel k".to_vec(),
        b"//.kernel k\n".to_vec(),
        b"//.kernel k\r\n//.platform P\n//.instCount 7\r\r\n    mov\n".to_vec(),
        b"\n//.kernel k\n".to_vec(),
        b"//.kernel a\n//.platform \xffX\n".to_vec(),
        asm(FORGED, IGC2),
        asm(b"victim", IGC2),
        asm(&long, IGC1),
        asm(&long[..50_000], IGC1),
    ];
    for len in [100, 4095, 4096, 4097, 8191, 8192, 9000, 70_000] {
        for tail in [&b""[..], b"\n", b"\n  add (1|M0)\n", b"x"] {
            let mut t = b"//.kernel k\n//.platform P\n".to_vec();
            while t.len() < len {
                t.extend_from_slice(b"//.declare V1 (1) rf=r size=4\n");
            }
            t.truncate(len);
            t.extend_from_slice(tail);
            texts.push(t);
        }
    }
    for (i, t) in texts.iter().enumerate() {
        let p = dir.path().join(format!("{i}.asm"));
        std::fs::write(&p, t).unwrap();
        assert_read_in_place(i, t, &p, &k);
    }
}

/// The header of text `t` (the file `p`, text `i` of the test) read in
/// place as [`parse_header`] reads it against the names `k`, whole or up
/// to its `//.kernel` line.
fn assert_read_in_place(i: usize, t: &[u8], p: &Path, k: &KnownNames) {
    let want = parse_header(t, k).unwrap();
    let read = |stop: Option<&HashSet<&[u8]>>, whole: bool| {
        let f = File::open(p).unwrap();
        let mut bytes = Vec::new();
        if whole {
            crate::read_to_length(&f, &mut bytes, t.len()).unwrap();
        }
        let h = read_header_into(&f, &mut bytes, k, stop).unwrap();
        // What was read is the file's start.
        assert_eq!(&t[..bytes.len()], &bytes[..], "text {i}");
        (h, bytes.len())
    };
    let (got, n) = read(None, false);
    assert_eq!(got, want, "text {i}");
    // Bounded by the header: its `//.kernel` line, its fields, a chunk.
    let name = got.kernel.as_ref().map_or(0, Vec::len);
    let header_len = t
        .len()
        .min(KERNEL_LINE.len() + name + 1 + HEADER_FIELDS_MAX_BYTES as usize);
    assert!(
        n <= header_len + 2 * HEADER_READ_CHUNK,
        "text {i}: read {n}"
    );
    if t.len() as u64 <= k.header_bound() {
        assert_eq!(read(None, true).0, want, "text {i}, read whole");
    }
    // A launched kernel's header is read whole.
    let launched: HashSet<&[u8]> = k.iter().collect();
    assert_eq!(read(Some(&launched), false).0, want, "text {i}, launched");
    // Another's stops at its `//.kernel` line, after one short read when
    // its name is short.
    let (got, n) = read(Some(&HashSet::new()), false);
    match &want.kernel {
        Some(name) => {
            let only = AsmHeader {
                kernel: Some(name.clone()),
                kernel_only: true,
                ..Default::default()
            };
            assert_eq!(got, only, "text {i}, not launched");
            if name.len() < 1000 {
                assert_eq!(n, t.len().min(KERNEL_LINE_READ), "text {i}");
            }
        }
        // One name its line can hold: taken for the count of kernels
        // nobody launched, without reading the rest.
        None if got.kernel_only => assert!(
            matches!(
                want.unresolved,
                Some(Unresolved::NotIgcs | Unresolved::TooLong)
            ),
            "text {i}"
        ),
        None => assert_eq!(got, want, "text {i}, not launched"),
    }
}

#[test]
fn own_headers_are_one_line_names_then_fields() {
    let h = parse_own_header(
        b"//.kernel k\\n//.spill size 9\n//.platform P\n//.simd 16\n//.instCount 3\n\nx\n",
    );
    assert_eq!(h.kernel.as_deref(), Some(&b"k\\n//.spill size 9"[..]));
    assert_eq!(
        (h.platform.as_deref(), h.instructions, h.spill_bytes),
        (Some("P"), Some(3), None)
    );
    assert_eq!(
        parse_own_header(b"no").unresolved,
        Some(Unresolved::NoKernelLine)
    );
}

#[test]
fn known_names_bound_the_header() {
    let k = KnownNames::new([b"ab".to_vec(), b"a".to_vec(), b"ab".to_vec()]);
    assert_eq!(k.len(), 2);
    assert!(k.contains(b"a") && !k.contains(b"b"));
    assert_eq!(k.header_bound(), 10 + 2 + 1 + HEADER_FIELDS_MAX_BYTES);
    assert_eq!(
        KnownNames::default().header_bound(),
        11 + HEADER_FIELDS_MAX_BYTES
    );
}
