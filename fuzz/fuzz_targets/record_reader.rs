//! `parse_events` and `apply_counts` on any bytes: never a panic, and what
//! they return stays consistent with the input.
//!
//! Input: a little-endian `u16` N, then N bytes of events file, then the
//! counts file (the rest).

#![no_main]

use libfuzzer_sys::fuzz_target;
use xpu_asm_record::read::{apply_counts, parse_events, ProcessRecord};
use xpu_asm_record::{decode_slot, COUNTS_HEADER_LEN, COUNTS_SLOT_LEN};

fuzz_target!(|data: &[u8]| {
    let (events, counts) = match data {
        [a, b, rest @ ..] => {
            let n = (u16::from_le_bytes([*a, *b]) as usize).min(rest.len());
            rest.split_at(n)
        }
        _ => (data, &[][..]),
    };
    let mut rec = ProcessRecord::default();
    parse_events(events, "fuzz.events", &mut rec);
    let kernels_before: Vec<u32> = rec.kernels.keys().copied().collect();
    apply_counts(counts, "fuzz.counts", &mut rec);
    // Counts never add or drop kernels, only fill in their counters.
    let kernels_after: Vec<u32> = rec.kernels.keys().copied().collect();
    assert_eq!(kernels_before, kernels_after);
    for w in &rec.warnings {
        assert!(
            w.starts_with("fuzz.events") || w.starts_with("fuzz.counts"),
            "a warning that does not name its file: {w}"
        );
    }
    // A kernel's counts read from a well-formed counts file are its slot's
    // value plus its shapes'.
    let well_formed = rec.warnings.iter().all(|w| !w.starts_with("fuzz.counts"));
    if well_formed && counts.len() >= COUNTS_HEADER_LEN {
        for k in rec.kernels.values() {
            let off = COUNTS_HEADER_LEN + k.id as usize * COUNTS_SLOT_LEN;
            let slot = decode_slot(&counts[off..off + COUNTS_SLOT_LEN]).map(|(l, a)| {
                k.shapes.iter().fold((l, a), |(l, a), s| {
                    (l.wrapping_add(s.launches), a.wrapping_add(s.appended))
                })
            });
            assert_eq!(Some((k.launches, k.appended)), slot);
        }
    }
});
