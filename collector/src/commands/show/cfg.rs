//! A kernel's control flow and loops as `show` prints them: the summary
//! under its figures, the loops, `--cfg` as text and `--cfg=dot` for
//! Graphviz.

use crate::analysis::flow::{Flow, Loop, SourceRef};
use crate::names;
use crate::report::KernelEntry;
use std::fmt::Write;

/// `lines 8-11` (`a.cl:8-11` with several files), or "" without lines.
pub fn line_span(source: &[SourceRef]) -> String {
    let mut files: Vec<&str> = source.iter().map(|s| s.file.as_str()).collect();
    files.dedup();
    let mut parts = Vec::new();
    for f in &files {
        let ls: Vec<u32> = source
            .iter()
            .filter(|s| s.file == *f)
            .map(|s| s.line)
            .collect();
        let (lo, hi) = (ls.iter().min(), ls.iter().max());
        let (Some(lo), Some(hi)) = (lo, hi) else {
            continue;
        };
        let span = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}-{hi}")
        };
        if files.len() == 1 {
            parts.push(format!("lines {span}"));
        } else {
            let base = std::path::Path::new(f)
                .file_name()
                .map_or_else(|| f.to_string(), |n| n.to_string_lossy().into_owned());
            parts.push(format!("{base}:{span}"));
        }
    }
    parts.join(", ")
}

/// `loop 2 (in 1, depth 2): 35 instructions, peak 8 GRF, 3 spills, 1 fill, lines 8-11`.
pub fn describe_loop(f: &Flow, i: usize) -> String {
    let l: &Loop = &f.loops[i];
    let mut s = format!("loop {}", i + 1);
    match l.parent {
        Some(p) => {
            let _ = write!(s, " (in loop {}, depth {})", p + 1, l.depth);
        }
        None => s.push_str(" (depth 1)"),
    }
    let _ = write!(
        s,
        ": {} instruction{}, peak {} GRF",
        l.instructions,
        plural(l.instructions),
        l.peak_grf
    );
    if l.mix.spill + l.mix.fill > 0 {
        let _ = write!(
            s,
            ", {} spill{}, {} fill{}",
            l.mix.spill,
            plural(l.mix.spill),
            l.mix.fill,
            plural(l.mix.fill)
        );
    }
    let span = line_span(&l.source);
    if !span.is_empty() {
        let _ = write!(s, ", {span}");
    }
    s
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The summary under the figures: blocks, loops, the peak and where it is;
/// or why there is no analysis.
pub fn summary(k: &KernelEntry) -> Vec<String> {
    let Some(f) = &k.flow else {
        return k
            .flow_reason
            .iter()
            .map(|r| format!("  flow:         none: {}", names::escape_for_terminal(r)))
            .collect();
    };
    let mut out = vec![format!(
        "  flow:         {} blocks, {} loop{}{}",
        f.blocks.len(),
        f.loops.len(),
        plural(f.loops.len() as u64),
        max_depth(f)
    )];
    if let Some(p) = &f.peak {
        let budget = f.budget.map_or_else(String::new, |b| format!(" of {b}"));
        let mut at = format!("instruction {}, block {}", p.instruction, p.block);
        if let Some(l) = p.in_loop {
            let _ = write!(at, ", loop {}", l + 1);
        }
        if let Some(s) = &p.source {
            let _ = write!(at, ", line {}", s.line);
        }
        let held = if p.spilled > 0 {
            format!("{} live, {} spilled", p.live, p.spilled)
        } else {
            format!("{} bytes live", p.bytes)
        };
        out.push(format!(
            "  pressure:     peak {} GRF{budget} ({held}) at {at} ({})",
            p.grf, p.class
        ));
    }
    for i in 0..f.loops.len() {
        out.push(format!("    {}", describe_loop(f, i)));
    }
    out
}

fn max_depth(f: &Flow) -> String {
    match f.loops.iter().map(|l| l.depth).max() {
        Some(d) if d > 1 => format!(", nested {d} deep"),
        _ => String::new(),
    }
}

/// `--cfg`: each block with its instructions, edges and loop.
pub fn text(f: &Flow) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "block  label     instructions      loop  succs");
    for (i, b) in f.blocks.iter().enumerate() {
        let range = if b.instructions == 0 {
            "-".to_string()
        } else {
            format!(
                "{}-{} ({})",
                b.first,
                b.first + b.instructions - 1,
                b.instructions
            )
        };
        let lp = b
            .in_loop
            .map_or_else(|| "-".into(), |l| (l + 1).to_string());
        let succs: Vec<String> = b
            .succs
            .iter()
            .map(|&s| {
                let back = f.loops.iter().any(|l| l.back_edges.contains(&[i, s]));
                format!("{s}{}", if back { " (back)" } else { "" })
            })
            .collect();
        let _ = writeln!(
            out,
            "{i:>5}  {:<8}  {range:<16}  {lp:>4}  {}",
            b.label,
            succs.join(", ")
        );
    }
    for i in 0..f.loops.len() {
        let l = &f.loops[i];
        let blocks: Vec<String> = l.blocks.iter().map(|b| b.to_string()).collect();
        let _ = writeln!(out, "{}; blocks {}", describe_loop(f, i), blocks.join(", "));
    }
    out
}

/// `--cfg=dot`: the graph for Graphviz, a cluster per loop, back edges
/// dashed.
pub fn dot(f: &Flow, title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph cfg {{");
    let _ = writeln!(out, "  label=\"{}\";", escape(title));
    let _ = writeln!(out, "  node [shape=box, fontname=monospace];");
    let pressure = f.pressure();
    let node = |i: usize| {
        let b = &f.blocks[i];
        let peak = pressure
            .iter()
            .skip(b.first as usize)
            .take(b.instructions as usize)
            .max()
            .copied()
            .unwrap_or(0);
        format!(
            "  b{i} [label=\"{i}: {}\\n{} instructions\\npeak {peak} GRF\"];",
            escape(&b.label),
            b.instructions
        )
    };
    // Loops as nested clusters: each loop's own blocks, then its children.
    let mut placed = vec![false; f.blocks.len()];
    for (i, l) in f
        .loops
        .iter()
        .enumerate()
        .filter(|(_, l)| l.parent.is_none())
    {
        cluster(&mut out, f, i, l, &node, &mut placed, 1);
    }
    for (i, p) in placed.iter().enumerate() {
        if !p {
            let _ = writeln!(out, "{}", node(i));
        }
    }
    for (i, b) in f.blocks.iter().enumerate() {
        for &s in &b.succs {
            let back = f.loops.iter().any(|l| l.back_edges.contains(&[i, s]));
            let style = if back {
                " [style=dashed, color=red]"
            } else {
                ""
            };
            let _ = writeln!(out, "  b{i} -> b{s}{style};");
        }
    }
    let _ = writeln!(out, "}}");
    out
}

fn cluster(
    out: &mut String,
    f: &Flow,
    i: usize,
    l: &Loop,
    node: &dyn Fn(usize) -> String,
    placed: &mut [bool],
    depth: usize,
) {
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}subgraph cluster_loop{} {{", i + 1);
    let _ = writeln!(out, "{pad}  label=\"{}\";", escape(&describe_loop(f, i)));
    for (j, c) in f
        .loops
        .iter()
        .enumerate()
        .filter(|(_, c)| c.parent == Some(i))
    {
        cluster(out, f, j, c, node, placed, depth + 1);
    }
    for &b in &l.blocks {
        if !placed[b] {
            placed[b] = true;
            let _ = writeln!(out, "{pad}{}", node(b));
        }
    }
    let _ = writeln!(out, "{pad}}}");
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
