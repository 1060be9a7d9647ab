//! Occupancy against a table computed by hand from the model, on the
//! devices the tests emulate (NEO's `HardwareInfoOverride=1x4x8`: 4
//! Xe-cores of 8 EUs) of each family, each limiter reached.

use super::*;

fn dev(family: Family) -> Device {
    Device {
        family,
        xe_cores: 4,
        eus_per_xe_core: 8,
    }
}

/// (family, group size, group count, SLM bytes, SIMD, GRF, barrier) ->
/// (percent, limiter, groups per Xe-core, threads per group, idle lanes %).
type Row = (
    Family,
    [u32; 3],
    Option<[u32; 3]>,
    u64,
    u32,
    u32,
    bool,
    (f64, Limiter, u32, u32, f64),
);

/// Worked by hand: threads per group = ceil(items / SIMD); slots = 8 EUs x
/// threads per EU at the GRF (8, 4 at 256 before Xe3; Xe3: 10 at <= 96, 8
/// at <= 128, 6 at <= 160, 5 at <= 192, 4); groups = the least of slots /
/// threads per group, 128 KiB / SLM, 64 barriers, 64 groups, ceil(groups
/// launched / 4); percent = groups x threads per group / (8 x 8, or 8 x 10
/// on Xe3).
const TABLE: &[Row] = &[
    // pvc: 1024 items at SIMD32 are 32 threads; 64 slots hold 2 groups:
    // 64 of 64 threads.
    (
        Family::XeHpc,
        [1024, 1, 1],
        Some([64, 1, 1]),
        0,
        32,
        128,
        false,
        (100.0, Limiter::Threads, 2, 32, 0.0),
    ),
    // 16 threads per group; 48 KiB of SLM each: 2 fit in 128 KiB; 32 of 64.
    (
        Family::XeHpc,
        [16, 16, 1],
        Some([1000, 1, 1]),
        49152,
        16,
        128,
        false,
        (50.0, Limiter::Slm, 2, 16, 0.0),
    ),
    // 8 groups on 4 Xe-cores: 2 each, of 2 threads: 4 of 64.
    (
        Family::XeHpc,
        [64, 1, 1],
        Some([8, 1, 1]),
        0,
        32,
        128,
        false,
        (6.25, Limiter::Launch, 2, 2, 0.0),
    ),
    // 256 GRF: 4 threads per EU, 32 slots; 32 threads per group: 1 group,
    // 32 of 64.
    (
        Family::XeHpc,
        [8, 8, 8],
        Some([100, 1, 1]),
        0,
        16,
        256,
        false,
        (50.0, Limiter::Threads, 1, 32, 0.0),
    ),
    // 16 items on SIMD32: 1 thread, half its lanes idle; 64 slots, 64
    // groups: threads named first.
    (
        Family::XeHpc,
        [16, 1, 1],
        None,
        0,
        32,
        128,
        true,
        (100.0, Limiter::Threads, 64, 1, 50.0),
    ),
    // bmg: 128 items at SIMD16, 8 threads; 64 KiB: 2 groups; 16 of 64.
    (
        Family::Xe2,
        [128, 1, 1],
        Some([1024, 1, 1]),
        65536,
        16,
        128,
        false,
        (25.0, Limiter::Slm, 2, 8, 0.0),
    ),
    // 256 GRF: 32 slots, 2 threads per group: 16 groups, 32 of 64.
    (
        Family::Xe2,
        [4, 4, 2],
        Some([64, 64, 1]),
        0,
        16,
        256,
        false,
        (50.0, Limiter::Threads, 16, 2, 0.0),
    ),
    // 3 groups on 4 Xe-cores: 1 each, 1 thread of 64; 8 of 16 lanes idle.
    (
        Family::Xe2,
        [8, 1, 1],
        Some([3, 1, 1]),
        0,
        16,
        128,
        false,
        (1.56, Limiter::Launch, 1, 1, 50.0),
    ),
    // ptl: 96 GRF, 10 threads per EU: 80 slots; a barrier each: 64
    // groups of 1 thread, 64 of 80.
    (
        Family::Xe3,
        [32, 1, 1],
        Some([10000, 1, 1]),
        0,
        32,
        96,
        true,
        (80.0, Limiter::Barriers, 64, 1, 0.0),
    ),
    // No barrier: the most groups an Xe-core holds, 64.
    (
        Family::Xe3,
        [16, 1, 1],
        Some([10000, 1, 1]),
        0,
        16,
        96,
        false,
        (80.0, Limiter::Groups, 64, 1, 0.0),
    ),
    // 160 GRF: 6 threads per EU, 48 slots; 16 threads per group: 3, 48
    // of 80.
    (
        Family::Xe3,
        [16, 16, 1],
        Some([500, 1, 1]),
        0,
        16,
        160,
        false,
        (60.0, Limiter::Threads, 3, 16, 0.0),
    ),
    // 192 GRF: 5 per EU, 40 slots; 32 threads per group: 1, 32 of 80.
    (
        Family::Xe3,
        [1024, 1, 1],
        Some([500, 1, 1]),
        0,
        32,
        192,
        false,
        (40.0, Limiter::Threads, 1, 32, 0.0),
    ),
    // 128 GRF: 64 slots, 4 threads per group: 16; 40,000 bytes of SLM: 3
    // groups, 12 of 80.
    (
        Family::Xe3,
        [64, 1, 1],
        Some([500, 1, 1]),
        40000,
        16,
        128,
        false,
        (15.0, Limiter::Slm, 3, 4, 0.0),
    ),
    // Indirect (no group count): no launch limit.
    (
        Family::Xe3,
        [128, 2, 1],
        None,
        0,
        32,
        128,
        false,
        (80.0, Limiter::Threads, 8, 8, 0.0),
    ),
];

#[test]
fn occupancy_is_the_hand_computed_table() {
    for (i, &(family, gs, gc, slm, simd, grf, barrier, want)) in TABLE.iter().enumerate() {
        let shape = Shape {
            group_size: Some(gs),
            group_count: gc,
            slm_bytes: slm,
        };
        let code = Code { simd, grf, barrier };
        let o = occupancy(&shape, &code, &dev(family))
            .unwrap_or_else(|e| panic!("row {i} ({family:?}): {e}"));
        let got = (
            o.percent,
            o.limited_by,
            o.groups_per_xe_core,
            o.threads_per_group,
            o.idle_lanes_percent,
        );
        assert_eq!(got, want, "row {i} ({family:?} {gs:?} x {gc:?})");
    }
    // Every limiter is reached.
    for l in [
        Limiter::Threads,
        Limiter::Slm,
        Limiter::Barriers,
        Limiter::Groups,
        Limiter::Launch,
    ] {
        assert!(TABLE.iter().any(|r| r.7 .1 == l), "{l:?} never reached");
    }
}

#[test]
fn no_occupancy_without_a_group_size() {
    let shape = Shape {
        group_size: None,
        group_count: Some([64, 1, 1]),
        slm_bytes: 0,
    };
    let code = Code {
        simd: 32,
        grf: 128,
        barrier: false,
    };
    assert_eq!(
        occupancy(&shape, &code, &dev(Family::XeHpc)),
        Err("the driver chose the work-group size".to_string())
    );
}
