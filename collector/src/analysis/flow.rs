//! A kernel's control flow, loops and register pressure, from its code as
//! IGA decodes it ([`xpu_asm_isa::decoded`]).
//!
//! - Blocks are IGA's (a label starts each); their successors are the
//!   labels the block's last instruction jumps to and the next block unless
//!   that instruction is an unpredicated `jmpi`, `ret` or the end of the
//!   thread, with those IGA's JSON gives (IGC 2's IGA lists a block's
//!   edges, but not its fall-through when it ends without a branch).
//! - Loops are natural loops: an edge to a block that dominates its source
//!   is a back edge; the loop of a header is the header and every block
//!   that reaches one of its back edges without passing the header. A loop
//!   is inside another when its blocks are among the other's. Jumps into
//!   the middle of a cycle (irreducible flow, which IGC does not make)
//!   make no loop.
//! - Register pressure is the live GRF bytes before each instruction
//!   ([`super::live`]'s analysis of the operands, or IGA's dataflow when its
//!   JSON has it), shown in registers (rounded up), plus the spilled values
//!   held in scratch memory at that point: the registers the code would
//!   need to keep everything in registers. It is an estimate: every path
//!   counts as one that may run (a predicated or SIMD-divergent path counts
//!   as taken), and a register's bytes count only as far as its live parts.

use super::live;
use serde::{Deserialize, Serialize};
use xpu_asm_isa::decoded::Code;
use xpu_asm_isa::mix::{Class, Mix};

/// What the kernel's code says of its flow and pressure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// The version of IGA's JSON of the code (`1.0`: IGC 1's IGA, `2.0`:
    /// IGC 2's), whether the code was read from that JSON or through IGA's
    /// KernelView API, which give the same.
    pub iga_json: String,
    /// Bytes per GRF register on this platform (32, or 64 from PVC on).
    pub grf_bytes: u32,
    /// The kernel's GRF registers per thread (its header), when known.
    pub budget: Option<u32>,
    pub blocks: Vec<Block>,
    /// Outer loops before the loops inside them.
    pub loops: Vec<Loop>,
    /// Live GRF registers before each instruction, in order.
    pub live_grf: Vec<u32>,
    /// Spilled values held in scratch memory before each instruction, in
    /// registers (rounded up); empty when the kernel spills nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spilled_grf: Vec<u32>,
    /// Where the live GRF comes from: `operands` (xpu-asm's analysis of the
    /// operands IGA decodes) or `iga` (IGA's own dataflow).
    #[serde(default)]
    pub liveness: String,
    /// Where pressure (live and spilled registers) peaks (the first
    /// instruction at the highest).
    pub peak: Option<Peak>,
    /// Whether source lines come with it (IGC's dump of a `-g` build,
    /// mapped by position).
    pub lines: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub label: String,
    /// Its first instruction (0-based, in the kernel's order).
    pub first: u64,
    pub instructions: u64,
    pub preds: Vec<usize>,
    pub succs: Vec<usize>,
    /// The innermost loop it is in.
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loop {
    /// Its header block.
    pub header: usize,
    /// Its blocks, in order.
    pub blocks: Vec<usize>,
    /// Its back edges, `[from, to]` by block.
    pub back_edges: Vec<[usize; 2]>,
    /// The loop it is directly inside.
    pub parent: Option<usize>,
    /// 1 for an outermost loop.
    pub depth: u32,
    /// Its instructions (those of nested loops included), their mix (spill
    /// and fill sends in `mix.spill` and `mix.fill`).
    pub instructions: u64,
    pub mix: Mix,
    /// The highest pressure in it (live and spilled registers).
    pub peak_grf: u32,
    /// The source lines of its instructions, by file then line (empty
    /// without line information).
    pub source: Vec<SourceRef>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceRef {
    pub file: String,
    pub line: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peak {
    /// Live and spilled registers there.
    pub grf: u32,
    /// Of which live in registers, and held in scratch memory.
    #[serde(default)]
    pub live: u32,
    #[serde(default)]
    pub spilled: u32,
    /// Live and spilled bytes there.
    pub bytes: u64,
    pub instruction: u64,
    pub block: usize,
    #[serde(rename = "loop")]
    pub in_loop: Option<usize>,
    pub source: Option<SourceRef>,
    /// Its class (the [`Mix`] field that counts it: `spill`, `alu`, ...).
    pub class: String,
}

/// What the analysis takes besides the code.
pub struct Inputs<'a> {
    /// Each instruction's class, in order (as many as the code's).
    pub classes: &'a [Class],
    /// Each instruction's source line, when the kernel has line information.
    pub lines: Option<&'a [Option<SourceRef>]>,
    pub grf_bytes: u32,
    pub budget: Option<u32>,
}

/// The flow of `code`.
pub fn analyze(code: &mut Code, inputs: &Inputs) -> Flow {
    let mut blocks = make_blocks(code);
    let liveness = if code.insts.iter().all(|i| i.live_bytes.is_some()) {
        "iga"
    } else {
        let extents: Vec<(usize, usize)> = blocks
            .iter()
            .map(|b| (b.first as usize, b.instructions as usize))
            .collect();
        let succs: Vec<Vec<usize>> = blocks.iter().map(|b| b.succs.clone()).collect();
        let cfg = live::Blocks {
            extents: &extents,
            succs: &succs,
        };
        live::compute(code, &cfg, inputs.classes, inputs.grf_bytes);
        "operands"
    };
    let loops = find_loops(&blocks);
    for (i, l) in loops.iter().enumerate() {
        // Inner loops come later: the last assignment is the innermost.
        for &b in &l.blocks {
            blocks[b].in_loop = Some(i);
        }
    }
    let grf = inputs.grf_bytes.max(1) as u64;
    let live_grf: Vec<u32> = code
        .insts
        .iter()
        .map(|i| i.live_bytes.unwrap_or(0).div_ceil(grf) as u32)
        .collect();
    let spilled_grf: Vec<u32> = if code.insts.iter().any(|i| i.spilled_bytes > 0) {
        code.insts
            .iter()
            .map(|i| i.spilled_bytes.div_ceil(grf) as u32)
            .collect()
    } else {
        Vec::new()
    };
    let mut flow = Flow {
        iga_json: code.version.clone(),
        grf_bytes: inputs.grf_bytes,
        budget: inputs.budget,
        live_grf,
        spilled_grf,
        liveness: liveness.to_string(),
        lines: inputs.lines.is_some(),
        ..Flow::default()
    };
    let pressure = flow.pressure();
    flow.loops = loops
        .into_iter()
        .map(|l| fill_loop(l, &blocks, &pressure, inputs))
        .collect();
    flow.blocks = blocks;
    flow.peak = peak(code, &flow, inputs);
    flow
}

/// IGA's blocks with their extents and edges.
fn make_blocks(code: &Code) -> Vec<Block> {
    let n = code.blocks.len();
    let total = code.insts.len() as u64;
    let mut blocks: Vec<Block> = code
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let end = code.blocks.get(i + 1).map_or(total, |x| x.first as u64);
            Block {
                label: b.label.clone(),
                first: b.first as u64,
                instructions: end.saturating_sub(b.first as u64),
                ..Block::default()
            }
        })
        .collect();
    for i in 0..n {
        // IGA 2's edges lack a block's fall-through into the next when the
        // block ends without a branch: its own and the computed ones both.
        let mut succs = successors(code, &blocks, i);
        // IGA 2 also lists the next block after the end of the thread.
        let ends = blocks[i].instructions > 0
            && code.insts[(blocks[i].first + blocks[i].instructions - 1) as usize].eot;
        for &s in code.blocks[i].succs.iter().flatten().filter(|_| !ends) {
            if s < n && !succs.contains(&s) {
                succs.push(s);
            }
        }
        succs.sort_unstable();
        blocks[i].succs = succs;
    }
    for i in 0..n {
        for s in blocks[i].succs.clone() {
            if !blocks[s].preds.contains(&i) {
                blocks[s].preds.push(i);
            }
        }
    }
    blocks
}

/// The successors of block `b` from its last instruction (IGA 1's JSON).
fn successors(code: &Code, blocks: &[Block], b: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let blk = &blocks[b];
    let last =
        (blk.instructions > 0).then(|| &code.insts[(blk.first + blk.instructions - 1) as usize]);
    let mut falls = true;
    if let Some(i) = last {
        for t in &i.targets {
            if let Some(to) = code.blocks.iter().position(|x| &x.label == t) {
                if !out.contains(&to) {
                    out.push(to);
                }
            }
        }
        let op = i.op.as_str();
        falls = !(i.eot || op == "ret" || (op == "jmpi" && !i.predicated));
    }
    if falls && b + 1 < blocks.len() && !out.contains(&(b + 1)) {
        out.push(b + 1);
    }
    out
}

/// Immediate dominators (`None`: unreachable from the entry), by the
/// iterative algorithm of Cooper, Harvey and Kennedy over reverse postorder.
fn dominators(blocks: &[Block]) -> Vec<Option<usize>> {
    let n = blocks.len();
    let rpo = reverse_postorder(blocks);
    let mut order = vec![usize::MAX; n];
    for (k, &b) in rpo.iter().enumerate() {
        order[b] = k;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    if n == 0 {
        return idom;
    }
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &blocks[b].preds {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(q) => intersect(&idom, &order, p, q),
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

fn intersect(idom: &[Option<usize>], order: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while order[a] > order[b] {
            a = idom[a].unwrap_or(0);
        }
        while order[b] > order[a] {
            b = idom[b].unwrap_or(0);
        }
    }
    a
}

/// The blocks reachable from the entry, in reverse postorder.
fn reverse_postorder(blocks: &[Block]) -> Vec<usize> {
    let mut seen = vec![false; blocks.len()];
    let mut post = Vec::with_capacity(blocks.len());
    if blocks.is_empty() {
        return post;
    }
    // (block, next successor to visit)
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&s) = blocks[b].succs.get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(d) if d != b => b = d,
            _ => return false,
        }
    }
}

/// The natural loops, one per header, outer before inner, with their
/// parents and depths.
fn find_loops(blocks: &[Block]) -> Vec<Loop> {
    let idom = dominators(blocks);
    let mut by_header: std::collections::BTreeMap<usize, Loop> = Default::default();
    for (u, b) in blocks.iter().enumerate() {
        if idom[u].is_none() {
            continue;
        }
        for &h in &b.succs {
            if dominates(&idom, h, u) {
                let l = by_header.entry(h).or_insert_with(|| Loop {
                    header: h,
                    blocks: vec![h],
                    ..Loop::default()
                });
                l.back_edges.push([u, h]);
                grow(l, blocks, u);
            }
        }
    }
    let mut loops: Vec<Loop> = by_header.into_values().collect();
    for l in &mut loops {
        l.blocks.sort_unstable();
    }
    // Outer first: more blocks first, then by header.
    loops.sort_by(|a, b| {
        b.blocks
            .len()
            .cmp(&a.blocks.len())
            .then(a.header.cmp(&b.header))
    });
    for i in 0..loops.len() {
        let parent = (0..i).rev().find(|&j| {
            loops[i]
                .blocks
                .iter()
                .all(|b| loops[j].blocks.binary_search(b).is_ok())
        });
        loops[i].parent = parent;
        loops[i].depth = parent.map_or(1, |p| loops[p].depth + 1);
    }
    loops
}

/// Adds to `l` every block that reaches `tail` without passing its header.
fn grow(l: &mut Loop, blocks: &[Block], tail: usize) {
    let mut work = vec![tail];
    while let Some(b) = work.pop() {
        if l.blocks.contains(&b) {
            continue;
        }
        l.blocks.push(b);
        work.extend(blocks[b].preds.iter().copied());
    }
}

/// A loop's instructions, mix, peak and source lines.
fn fill_loop(mut l: Loop, blocks: &[Block], live: &[u32], inputs: &Inputs) -> Loop {
    let mut lines = std::collections::BTreeSet::new();
    for &b in &l.blocks {
        let blk = &blocks[b];
        for i in blk.first..blk.first + blk.instructions {
            let i = i as usize;
            l.instructions += 1;
            if let Some(c) = inputs.classes.get(i) {
                l.mix.add_class(*c);
            }
            l.peak_grf = l.peak_grf.max(live.get(i).copied().unwrap_or(0));
            if let Some(Some(s)) = inputs.lines.map(|ls| ls.get(i).cloned().flatten()) {
                lines.insert(s);
            }
        }
    }
    l.source = lines.into_iter().collect();
    l
}

fn peak(code: &Code, flow: &Flow, inputs: &Inputs) -> Option<Peak> {
    let (at, bytes) = code
        .insts
        .iter()
        .enumerate()
        .map(|(i, x)| (i, x.live_bytes.unwrap_or(0) + x.spilled_bytes))
        .fold(None, |best: Option<(usize, u64)>, (i, b)| match best {
            Some((_, bb)) if bb >= b => best,
            _ => Some((i, b)),
        })?;
    let block = flow
        .blocks
        .iter()
        .position(|b| (at as u64) >= b.first && (at as u64) < b.first + b.instructions)
        .unwrap_or(0);
    let live = flow.live_grf[at];
    let spilled = flow.spilled_grf.get(at).copied().unwrap_or(0);
    Some(Peak {
        grf: live + spilled,
        live,
        spilled,
        bytes,
        instruction: at as u64,
        block,
        in_loop: flow.blocks.get(block).and_then(|b| b.in_loop),
        source: inputs.lines.and_then(|l| l.get(at).cloned().flatten()),
        class: inputs.classes.get(at).map_or("", |c| c.field()).to_string(),
    })
}

impl Flow {
    /// Live and spilled registers before each instruction.
    pub fn pressure(&self) -> Vec<u32> {
        let mut p = self.live_grf.clone();
        for (x, s) in p.iter_mut().zip(&self.spilled_grf) {
            *x += s;
        }
        p
    }

    /// The innermost loop of instruction `i`.
    pub fn loop_of(&self, i: u64) -> Option<usize> {
        let b = self
            .blocks
            .partition_point(|b| b.first <= i)
            .checked_sub(1)?;
        self.blocks[b].in_loop
    }

    /// Spill and fill sends in loop `l`.
    pub fn loop_spills(&self, l: usize) -> u64 {
        self.loops.get(l).map_or(0, |l| l.mix.spill + l.mix.fill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xpu_asm_isa::igajson::parse;

    /// Block 0 -> 1; 1 -> 2; 2 -> 2 (inner), 3; 3 -> 1 (outer), 4; 4 ends.
    const NESTED: &str = r#"{"version":"1.0","insts":[
      {"kind":"L","value":"L0000"},
      {"kind":"I","id":0,"op":"mov","liveTotals":{"r":64}},
      {"kind":"L","value":"L0016"},
      {"kind":"I","id":1,"op":"add","liveTotals":{"r":128}},
      {"kind":"L","value":"L0032"},
      {"kind":"I","id":2,"op":"mad","liveTotals":{"r":200}},
      {"kind":"I","id":3,"op":"jmpi","pred":{"inv":false},"srcs":[{"kind":"LB","target":"L0032"}],"liveTotals":{"r":192}},
      {"kind":"L","value":"L0064"},
      {"kind":"I","id":4,"op":"jmpi","pred":{"inv":true},"srcs":[{"kind":"LB","target":"L0016"}],"liveTotals":{"r":130}},
      {"kind":"L","value":"L0080"},
      {"kind":"I","id":5,"op":"send","opts":["EOT"],"liveTotals":{"r":64}}
    ]}"#;

    #[test]
    fn nested_loops_are_found_with_their_figures() {
        let mut code = parse(NESTED).unwrap();
        let classes = [
            Class::Mov,
            Class::Alu,
            Class::Spill,
            Class::Control,
            Class::Control,
            Class::SendOther,
        ];
        let src = |l| {
            Some(SourceRef {
                file: "k.cl".into(),
                line: l,
            })
        };
        let lines = [None, src(3), src(5), src(5), src(3), src(7)];
        let f = analyze(
            &mut code,
            &Inputs {
                classes: &classes,
                lines: Some(&lines),
                grf_bytes: 64,
                budget: Some(128),
            },
        );
        let succs: Vec<&[usize]> = f.blocks.iter().map(|b| b.succs.as_slice()).collect();
        assert_eq!(succs, [&[1][..], &[2], &[2, 3], &[1, 4], &[]]);
        assert_eq!(f.loops.len(), 2);
        let (outer, inner) = (&f.loops[0], &f.loops[1]);
        assert_eq!(
            (outer.header, &outer.blocks[..], outer.depth, outer.parent),
            (1, &[1, 2, 3][..], 1, None)
        );
        assert_eq!(
            (inner.header, &inner.blocks[..], inner.depth, inner.parent),
            (2, &[2][..], 2, Some(0))
        );
        assert_eq!(inner.back_edges, [[2, 2]]);
        assert_eq!(outer.back_edges, [[3, 1]]);
        assert_eq!((outer.instructions, inner.instructions), (4, 2));
        assert_eq!((inner.mix.spill, inner.mix.control), (1, 1));
        let lines: Vec<u32> = outer.source.iter().map(|s| s.line).collect();
        assert_eq!(lines, [3, 5]);
        assert_eq!(f.live_grf, [1, 2, 4, 3, 3, 1]);
        let p = f.peak.as_ref().unwrap();
        assert_eq!(
            (p.grf, p.bytes, p.instruction, p.block, p.in_loop),
            (4, 200, 2, 2, Some(1))
        );
        assert_eq!(
            (p.class.as_str(), p.source.as_ref().map(|s| s.line)),
            ("spill", Some(5))
        );
        assert_eq!(
            (f.loop_of(0), f.loop_of(1), f.loop_of(3), f.loop_of(5)),
            (None, Some(0), Some(1), None)
        );
    }

    #[test]
    fn straight_code_has_no_loop() {
        let json = r#"{"version":"2.0","elems":[{"kind":"L","id":0,"symbol":"L0000"},
          {"kind":"I","id":0,"op":"mov","liveTotals":{"r":32}},
          {"kind":"I","id":1,"op":"send","opts":["EOT"],"liveTotals":{"r":32}}]}"#;
        let mut code = parse(json).unwrap();
        let f = analyze(
            &mut code,
            &Inputs {
                classes: &[Class::Mov, Class::SendOther],
                lines: None,
                grf_bytes: 32,
                budget: None,
            },
        );
        assert!(f.loops.is_empty());
        assert_eq!(f.blocks.len(), 1);
        assert_eq!(f.live_grf, [1, 1]);
        assert!(!f.lines);
    }
}
