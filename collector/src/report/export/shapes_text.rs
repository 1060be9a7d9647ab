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

/// What the launches of shapes not listed were: `(other shapes: 224 less
/// launched, and shapes not kept: 47 launches)`.
pub fn other_text(o: &crate::report::launch::OtherShapes) -> String {
    let mut parts = Vec::new();
    if o.shapes > 0 {
        parts.push(format!("{} less launched", o.shapes));
    }
    if o.unkept_launches > 0 {
        parts.push(format!(
            "shapes not kept (past {} per kernel and process): {} launches",
            xpu_asm_record::shapes::MAX_SHAPES,
            o.unkept_launches
        ));
    }
    format!("(other shapes: {})", parts.join(", and "))
}

/// One line per shape of `k`, most launched first, then its other
/// shapes: for `show`.
pub fn lines(k: &KernelEntry) -> Vec<String> {
    let mut out = Vec::new();
    for s in &k.shapes {
        let slm = s.slm_bytes.map_or("?".to_string(), |b| b.to_string());
        let detail = match &s.occupancy {
            Some(o) => format!(
                "{:>7}% {:<8} groups/Xe-core {:>3}, threads/group {:>4}, {}% idle lanes",
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
        out.push(format!("{:>10}  {}", o.launches, other_text(o)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_shapes_say_what_they_hold() {
        use crate::report::launch::OtherShapes;
        let o = |shapes, unkept_launches| OtherShapes {
            launches: 271,
            appended: 271,
            shapes,
            unkept_launches,
        };
        assert_eq!(
            other_text(&o(224, 47)),
            "(other shapes: 224 less launched, and shapes not kept (past 256 per kernel and process): 47 launches)"
        );
        assert_eq!(other_text(&o(3, 0)), "(other shapes: 3 less launched)");
        // The page says the same, with the same bound.
        let js = include_str!("html/page.js");
        let bound = format!("const MAX_SHAPES = {};", xpu_asm_record::shapes::MAX_SHAPES);
        assert!(js.contains(&bound), "page.js lacks {bound:?}");
    }

    #[test]
    fn dimensions_drop_trailing_ones() {
        assert_eq!(dims([64, 1, 1]), "64");
        assert_eq!(dims([16, 8, 1]), "16x8");
        assert_eq!(dims([4, 1, 4]), "4x1x4");
        assert_eq!(dims([1, 1, 1]), "1");
    }
}
