//! Launch shapes as text, for the table, `show` and `diff`: `64 x 16`
//! (work-group size x group count, trailing dimensions of 1 left out),
//! `256 x ?` for an indirect launch, `auto / 4096` for a group size the
//! driver chose (of a global size); occupancy as `12.5% launch`.

use crate::report::launch::ShapeEntry;
use crate::report::KernelEntry;

/// `64`, `16x8`, `4x4x4`.
pub fn dims(v: [u32; 3]) -> String {
    let n = match v {
        [_, 1, 1] => 1,
        [_, _, 1] => 2,
        _ => 3,
    };
    v[..n]
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// A shape's group size and count.
pub fn shape(s: &ShapeEntry) -> String {
    match (s.group_size, s.group_count, s.global_size) {
        (Some(gs), Some(gc), _) => format!("{} x {}", dims(gs), dims(gc)),
        (Some(gs), None, _) => format!("{} x ?", dims(gs)),
        (None, _, Some(g)) => format!("auto / {}", dims(g)),
        (None, _, None) => "auto".to_string(),
    }
}

/// A shape's occupancy and what limits it, or `-`.
pub fn occupancy(s: &ShapeEntry) -> String {
    match &s.occupancy {
        Some(o) => format!("{}% {}", o.percent, o.limited_by.name()),
        None => "-".to_string(),
    }
}

/// The most launched shape of `k` and its occupancy (`-` without one).
pub fn top(k: &KernelEntry) -> (String, String) {
    match k.shapes.first() {
        Some(s) => (shape(s), occupancy(s)),
        None => ("-".to_string(), "-".to_string()),
    }
}

/// One line per shape of `k`, most launched first, then its other
/// shapes: for `show`.
pub fn lines(k: &KernelEntry) -> Vec<String> {
    let mut out = Vec::new();
    for s in &k.shapes {
        let slm = s.slm_bytes.map_or("?".to_string(), |b| b.to_string());
        let detail = match &s.occupancy {
            Some(o) => format!(
                "{:>7}% {:<8} {:>3} groups/Xe-core of {} threads, {}% idle lanes",
                o.percent,
                o.limited_by.name(),
                o.groups_per_xe_core,
                o.threads_per_group,
                o.idle_lanes_percent
            ),
            None => format!(
                "       - {}",
                s.occupancy_reason.as_deref().unwrap_or("no occupancy")
            ),
        };
        out.push(format!(
            "{:>10}  {:<22} {:>7}  {}",
            s.launches,
            shape(s),
            slm,
            detail
        ));
    }
    if let Some(o) = &k.other_shapes {
        out.push(format!("{:>10}  (other shapes)", o.launches));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_drop_trailing_ones() {
        assert_eq!(dims([64, 1, 1]), "64");
        assert_eq!(dims([16, 8, 1]), "16x8");
        assert_eq!(dims([4, 1, 4]), "4x1x4");
        assert_eq!(dims([1, 1, 1]), "1");
    }
}
