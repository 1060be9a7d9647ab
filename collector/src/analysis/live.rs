//! Register liveness of a kernel's code, from the operands IGA decodes
//! ([`xpu_asm_isa::decoded`]), and the spilled values it holds in scratch memory.
//!
//! IGA can compute liveness itself (`-Xprint-defs`), but its analysis
//! follows one path per use and takes seconds on a kernel of a thousand
//! instructions (1.7 s for the demo's `mix_spill`, 1,338 instructions,
//! against 20 ms for the JSON without it). This is the classic backward analysis
//! over bytes instead: a block's live-out is the union of its successors'
//! live-in, and going back through an instruction, the bytes it writes die
//! and the bytes it reads become live. The bytes an operand touches are
//! IGA's (its `RegSet`): a region's channels `es / w` rows of `w` elements at
//! strides `v` and `h`, ternary regions completed by the hardware's rules, a
//! load's or store's payload as its message lays it out (address bits per
//! channel, elements per address, transposed or one element per register),
//! `dpas` operands by repeat count and systolic depth, other sends' whole
//! registers. What differs from IGA: a predicated write never kills (IGA
//! lets it kill a later use under the same predicate, or with its
//! complement), so the figures here are IGA's or above in predicated code.
//!
//! Spills: a spill send writes a slot of scratch memory that a fill send
//! reads back. Tracked as bytes of a second file, scratch slots live from
//! the spill to the last fill are the values the kernel wanted in registers
//! and could not keep there: added to the live registers they give the
//! register demand of the code, which can exceed the register budget where
//! the live registers cannot.

use xpu_asm_isa::decoded::{Code, Inst, Operand};
use xpu_asm_isa::mix::Class;

/// GRF registers a thread can have (the large-GRF mode's 256).
const MAX_GRF: u32 = 256;
/// Scratch bytes tracked at most (beyond, spilled values are not counted).
const MAX_SCRATCH: u32 = 1 << 20;

/// The blocks of the code: each one's first instruction and instruction
/// count, and its successors.
pub struct Blocks<'a> {
    pub extents: &'a [(usize, usize)],
    pub succs: &'a [Vec<usize>],
}

/// Sets each instruction's `live_bytes` (GRF bytes live before it) and
/// `spilled_bytes` (scratch bytes of spilled values live before it).
/// `classes` tells spill and fill sends apart from others.
pub fn compute(code: &mut Code, blocks: &Blocks, classes: &[Class], grf_bytes: u32) {
    let prints = Prints::of(&code.insts, classes, grf_bytes);
    let words = (prints.file_bytes as usize).div_ceil(64);
    let n = blocks.extents.len();
    let mut live_in = vec![Bits::new(words); n];
    // Backward problem: blocks in reverse order until nothing changes.
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let live = block_in(b, blocks, &live_in, &prints, words, |_, _| {});
            if live != live_in[b] {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    for b in 0..n {
        block_in(b, blocks, &live_in, &prints, words, |i, live| {
            let (grf, scratch) = live.counts(prints.grf_file);
            if let Some(inst) = code.insts.get_mut(i) {
                inst.live_bytes = Some(grf);
                inst.spilled_bytes = scratch;
            }
        });
    }
}

/// Block `b`'s live-in from its successors' `live_in`, going back through
/// its instructions; `each` sees the bytes live before each of them.
fn block_in(
    b: usize,
    blocks: &Blocks,
    live_in: &[Bits],
    prints: &Prints,
    words: usize,
    mut each: impl FnMut(usize, &Bits),
) -> Bits {
    let mut live = live_out(b, blocks, live_in, words);
    let (first, count) = blocks.extents[b];
    for i in (first..first + count).rev() {
        prints.step(i, &mut live);
        each(i, &live);
    }
    live
}

fn live_out(b: usize, blocks: &Blocks, live_in: &[Bits], words: usize) -> Bits {
    let mut out = Bits::new(words);
    for &s in &blocks.succs[b] {
        if let Some(l) = live_in.get(s) {
            out.union(l);
        }
    }
    out
}

/// A byte range `[start, end)` of the register file (scratch slots after
/// the GRF).
type Range = (u32, u32);

/// What each instruction kills and uses, as ranges in one flat list.
struct Prints {
    ranges: Vec<Range>,
    /// Per instruction: its kills `ranges[a..b]`, its uses `ranges[b..c]`.
    at: Vec<(u32, u32, u32)>,
    grf_file: u32,
    file_bytes: u32,
}

impl Prints {
    fn of(insts: &[Inst], classes: &[Class], grf_bytes: u32) -> Prints {
        let grf_file = MAX_GRF * grf_bytes;
        let mut p = Prints {
            ranges: Vec::new(),
            at: Vec::with_capacity(insts.len()),
            grf_file,
            file_bytes: grf_file,
        };
        let mut acc = Footprint::new(grf_bytes);
        for (i, inst) in insts.iter().enumerate() {
            acc.clear();
            acc.instruction(inst);
            match classes.get(i) {
                Some(Class::Spill) => acc.spill(inst, grf_file, true),
                Some(Class::Fill) => acc.spill(inst, grf_file, false),
                // IGC writes scratch block messages for spill code alone
                // (private memory is addressed per channel): a spill or
                // fill even where the binary does not say the kernel spills.
                _ if scratch_block(inst) => {
                    let write = descriptor(inst).is_some_and(|d| d & (1 << 17) != 0);
                    acc.spill(inst, grf_file, write)
                }
                _ => {}
            }
            let a = p.ranges.len() as u32;
            p.ranges.extend(acc.kills.iter().copied());
            let b = p.ranges.len() as u32;
            p.ranges.extend(acc.uses.iter().copied());
            let c = p.ranges.len() as u32;
            p.at.push((a, b, c));
        }
        p.file_bytes = p
            .ranges
            .iter()
            .map(|r| r.1)
            .max()
            .unwrap_or(0)
            .max(grf_file);
        p
    }

    /// Back through instruction `i`: what it writes dies, what it reads
    /// lives.
    fn step(&self, i: usize, live: &mut Bits) {
        let Some(&(a, b, c)) = self.at.get(i) else {
            return;
        };
        for &(s, e) in &self.ranges[a as usize..b as usize] {
            live.clear(s, e);
        }
        for &(s, e) in &self.ranges[b as usize..c as usize] {
            live.set(s, e);
        }
    }
}

/// The bytes one instruction writes unconditionally (`kills`) and reads
/// (`uses`).
struct Footprint {
    grf: u32,
    kills: Vec<Range>,
    uses: Vec<Range>,
}

impl Footprint {
    fn new(grf: u32) -> Footprint {
        Footprint {
            grf,
            kills: Vec::new(),
            uses: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.kills.clear();
        self.uses.clear();
    }

    fn instruction(&mut self, i: &Inst) {
        // `sel` reads its flag; it writes whatever the flag says. Another
        // predicated write may leave its destination as it was: no kill.
        let kills = !i.predicated || i.op == "sel";
        let mut out = std::mem::take(&mut self.kills);
        if let Some(d) = i.dst.as_ref().filter(|_| kills) {
            self.operand(i, -1, d, &mut out);
        }
        self.kills = out;
        let mut ins = std::mem::take(&mut self.uses);
        for (ix, s) in i.srcs.iter().enumerate() {
            self.operand(i, ix as i32, s, &mut ins);
        }
        self.uses = ins;
    }

    /// The bytes of operand `ix` (-1: the destination) of `i`.
    fn operand(&self, i: &Inst, ix: i32, op: &Operand, out: &mut Vec<Range>) {
        if i.op == "dpas" || i.op == "dpasw" {
            if let Operand::Region {
                grf: true,
                reg,
                sub,
                bits,
                ..
            } = op
            {
                self.dpas(i, ix, *reg, *sub, bits.unwrap_or(32), out);
            }
            return;
        }
        match op {
            Operand::Region {
                grf: true,
                reg,
                sub,
                rgn,
                bits,
            } => {
                let t = bits.unwrap_or(32);
                let base = (reg * self.grf * 8 + sub * t) as u64;
                if ix < 0 {
                    let h = rgn.map_or(1, |r| r.2);
                    let h = if h == 0 { 1 } else { h };
                    push_elements(out, base, 1, i.es, 0, h, t);
                } else {
                    let (v, w, h) = self.region(i, ix, *rgn);
                    let rows = (i.es / w).max(1);
                    push_elements(out, base, rows, w, v, h, t);
                }
            }
            Operand::Data { reg: Some(r), len } => self.payload(i, ix, *r, *len, out),
            Operand::Address {
                reg: Some(r), len, ..
            } => match Message::of(i) {
                Some(m) if !m.block2d => {
                    let bytes = (m.width(i) * m.addr_bits).div_ceil(8).max(1);
                    push(out, r * self.grf, bytes);
                }
                // A block message reads one dword of its header.
                _ if scratch_block(i) || oword_block(i) => push(out, r * self.grf, 4),
                _ if a64_atomic(i) => push(out, r * self.grf, 8 * i.es.max(1)),
                _ => push(out, r * self.grf, len * self.grf),
            },
            _ => {}
        }
    }

    /// A source region completed as the hardware reads it.
    fn region(&self, i: &Inst, ix: i32, rgn: Option<(u32, u32, u32)>) -> (u32, u32, u32) {
        let Some((v, w, h)) = rgn else {
            return (1, 1, 0);
        };
        let ternary = i.srcs.len() == 3 && !i.op.starts_with("math");
        if !ternary {
            return (v, w.max(1), h);
        }
        if ix < 2 {
            // <V;H>: the width is implied.
            let w = if v == 0 && h == 0 {
                1
            } else if h == 0 || v == 0 {
                v
            } else {
                v / h
            };
            (v, w.max(1), h)
        } else {
            // <H>, which IGA's JSON already writes as <H;1,0>.
            (v, 1, 0)
        }
    }

    /// A load's destination or a store's data (`ix` 1) registers.
    fn payload(&self, i: &Inst, ix: i32, reg: u32, len: u32, out: &mut Vec<Range>) {
        let start = reg * self.grf;
        if a64_atomic(i) {
            push(out, start, 4 * i.es.max(1));
            return;
        }
        let Some(m) = Message::of(i).filter(|m| !m.block2d) else {
            push(out, start, len * self.grf);
            return;
        };
        let width = m.width(i);
        if m.transposed {
            push(
                out,
                start,
                (m.elems * width * m.reg_bits).div_ceil(8).max(1),
            );
            return;
        }
        let bytes = (width * m.reg_bits).div_ceil(8).max(1);
        let step = bytes.div_ceil(self.grf) * self.grf;
        let elems = if ix == 1 && m.compare_swap {
            m.elems * 2
        } else {
            m.elems
        };
        for e in 0..elems {
            push(out, start + e * step, bytes);
        }
    }

    /// `dpas` operands: repeat count `R` rows of the destination and
    /// `src0`, systolic depth `S` of `src1`, `src2` per row.
    fn dpas(&self, i: &Inst, ix: i32, reg: u32, sub: u32, t: u32, out: &mut Vec<Range>) {
        let (s, r) = i
            .subop
            .split_once('x')
            .and_then(|(s, r)| Some((s.parse::<u32>().ok()?, r.parse::<u32>().ok()?)))
            .unwrap_or((8, 8));
        let bits = |k: usize| match i.srcs.get(k) {
            Some(Operand::Region { bits, .. }) => bits.unwrap_or(8),
            _ => 8,
        };
        let mul = bits(1).max(bits(2)).max(1);
        let per = (32 / mul).max(1);
        let start = (reg * self.grf * 8 + sub * t) as u64;
        let es = i.es;
        let mut add = |off: u64, nbits: u64| {
            let b = (off / 8) as u32;
            push(out, b, ((nbits / 8) as u32).max(1));
        };
        if ix <= 0 {
            add(start, (es * t * r) as u64);
        } else if ix == 1 {
            add(start, (es * t * per * s) as u64);
        } else {
            for row in 0..r {
                add(start + (row * per * t * 8) as u64, (s * per * t) as u64);
            }
        }
    }

    /// A spill (`store`) or fill's scratch slot: the bytes of its data at
    /// its immediate offset.
    fn spill(&mut self, i: &Inst, file: u32, store: bool) {
        let Some(offset) = i.srcs.iter().find_map(|s| match s {
            Operand::Address { offset, .. } => Some(*offset),
            _ => None,
        }) else {
            return;
        };
        let data = if store {
            i.srcs.iter().find_map(|s| match s {
                Operand::Data { reg: Some(_), len } => Some(*len),
                _ => None,
            })
        } else {
            match &i.dst {
                Some(Operand::Data { reg: Some(_), len }) => Some(*len),
                _ => None,
            }
        };
        let (Some(len), Ok(off)) = (data, u32::try_from(offset)) else {
            return;
        };
        let bytes = len * self.grf;
        if off.saturating_add(bytes) > MAX_SCRATCH {
            return;
        }
        let r = (file + off, file + off + bytes);
        if store {
            self.kills.push(r);
        } else {
            self.uses.push(r);
        }
    }
}

/// A legacy data-port scratch block read or write (`send.dc0`, bit 18 of
/// its immediate descriptor): its header's first dword is its address.
fn scratch_block(i: &Inst) -> bool {
    i.subop == "dc0" && descriptor(i).is_some_and(|d| d & (1 << 18) != 0)
}

/// A legacy data-port OWord block read or write (`send.dc0`, message type
/// 0, 1 or 8): its address is one dword of its header.
fn oword_block(i: &Inst) -> bool {
    i.subop == "dc0"
        && descriptor(i)
            .is_some_and(|d| d & (1 << 18) == 0 && matches!((d >> 14) & 0x1f, 0 | 1 | 8))
}

/// A legacy data-port A64 untyped atomic on 32-bit integers (`send.dc1`,
/// message type 0x12): 64-bit addresses and 32-bit data per channel.
fn a64_atomic(i: &Inst) -> bool {
    i.subop == "dc1" && descriptor(i).is_some_and(|d| (d >> 14) & 0x1f == 0x12)
}

/// A send's immediate message descriptor (the last of its immediates).
fn descriptor(i: &Inst) -> Option<u64> {
    i.srcs.iter().rev().find_map(|s| match s {
        Operand::Immediate(v) => Some(*v),
        _ => None,
    })
}

/// `rows` rows of `w` elements of `t` bits from bit `base`, at strides `v`
/// (rows) and `h` (elements), in elements.
fn push_elements(out: &mut Vec<Range>, base: u64, rows: u32, w: u32, v: u32, h: u32, t: u32) {
    let bytes = (t / 8).max(1);
    for y in 0..rows as u64 {
        let row = base + y * (v * t) as u64;
        for x in 0..w as u64 {
            let off = ((row + x * (h * t) as u64) / 8) as u32;
            push(out, off, bytes);
        }
    }
}

/// Adds `[start, start + len)` to `out`, merged with the last range when
/// they touch.
fn push(out: &mut Vec<Range>, start: u32, len: u32) {
    let end = start
        .saturating_add(len)
        .min(MAX_GRF * 64 + MAX_SCRATCH * 2);
    if let Some(last) = out.last_mut() {
        if start >= last.0 && start <= last.1 {
            last.1 = last.1.max(end);
            return;
        }
    }
    out.push((start, end));
}

/// What a load, store or atomic's message says of its payload (IGA's
/// `ldst` syntax: `ugm.d32x4t.a64`, `slm.d16u32.a32`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Message {
    addr_bits: u32,
    /// Bits of an element in registers (`d16u32`: 32).
    reg_bits: u32,
    /// Elements per address (`x4`, or the components of `xyzw`).
    elems: u32,
    transposed: bool,
    compare_swap: bool,
    block2d: bool,
}

impl Message {
    fn of(i: &Inst) -> Option<Message> {
        let op = i.op.as_str();
        if !(op.starts_with("load") || op.starts_with("store") || op.starts_with("atomic")) {
            return None;
        }
        let mut m = Message {
            addr_bits: 0,
            reg_bits: 0,
            elems: 1,
            transposed: false,
            compare_swap: op == "atomic_icas" || op == "atomic_fcas",
            block2d: op.contains("block2d"),
        };
        for part in i.subop.split('.') {
            if let Some(a) = part.strip_prefix('a').and_then(|a| a.parse::<u32>().ok()) {
                m.addr_bits = a;
            } else if let Some(d) = part.strip_prefix('d') {
                m.data(d)?;
            } else if !part.is_empty() && part.chars().all(|c| "xyzw".contains(c)) {
                m.elems = part.len() as u32;
            }
        }
        (m.addr_bits > 0 && m.reg_bits > 0).then_some(m)
    }

    /// `32`, `16u32`, `32x4t`, `64x2`.
    fn data(&mut self, d: &str) -> Option<()> {
        let (d, t) = match d.strip_suffix('t') {
            Some(d) => (d, true),
            None => (d, false),
        };
        self.transposed = t;
        let (size, vec) = match d.split_once('x') {
            Some((s, v)) => (s, Some(v.parse::<u32>().ok()?)),
            None => (d, None),
        };
        // `16u32`: 16 bits in memory, 32 in registers; the memory size is
        // checked to be a number but not needed.
        let (mem, reg) = size.split_once('u').unwrap_or((size, size));
        mem.parse::<u32>().ok()?;
        self.reg_bits = reg.parse::<u32>().ok()?;
        if let Some(v) = vec {
            self.elems = v;
        }
        Some(())
    }

    /// Channels the message moves (a transposed one: one).
    fn width(&self, i: &Inst) -> u32 {
        if self.transposed {
            1
        } else {
            i.es.max(1)
        }
    }
}

/// A set of bytes, as bits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(words: usize) -> Bits {
        Bits(vec![0; words])
    }

    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= *b;
        }
    }

    fn set(&mut self, s: u32, e: u32) {
        self.apply(s, e, |w, m| *w |= m);
    }

    fn clear(&mut self, s: u32, e: u32) {
        self.apply(s, e, |w, m| *w &= !m);
    }

    fn apply(&mut self, s: u32, e: u32, f: impl Fn(&mut u64, u64)) {
        let e = e.min((self.0.len() * 64) as u32);
        let mut b = s;
        while b < e {
            let w = (b / 64) as usize;
            let lo = b % 64;
            let hi = (e - w as u32 * 64).min(64);
            let n = hi - lo;
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << lo
            };
            f(&mut self.0[w], mask);
            b = (w as u32 + 1) * 64;
        }
    }

    /// Bytes set below `split` and from it.
    fn counts(&self, split: u32) -> (u64, u64) {
        let k = (split / 64) as usize;
        let count = |ws: &[u64]| ws.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        (
            count(&self.0[..k.min(self.0.len())]),
            count(&self.0[k.min(self.0.len())..]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xpu_asm_isa::igajson::parse;

    fn blocks_of(code: &Code) -> (Vec<(usize, usize)>, Vec<Vec<usize>>) {
        let n = code.blocks.len();
        let ext: Vec<_> = (0..n)
            .map(|b| {
                let first = code.blocks[b].first;
                let end = code.blocks.get(b + 1).map_or(code.insts.len(), |x| x.first);
                (first, end - first)
            })
            .collect();
        let succs = (0..n)
            .map(|b| {
                code.blocks[b].succs.clone().unwrap_or_else(|| {
                    if b + 1 < n {
                        vec![b + 1]
                    } else {
                        vec![]
                    }
                })
            })
            .collect();
        (ext, succs)
    }

    fn live(json: &str, classes: &[Class], grf: u32) -> Vec<(u64, u64)> {
        let mut code = parse(json).unwrap();
        let (ext, succs) = blocks_of(&code);
        compute(
            &mut code,
            &Blocks {
                extents: &ext,
                succs: &succs,
            },
            classes,
            grf,
        );
        code.insts
            .iter()
            .map(|i| (i.live_bytes.unwrap(), i.spilled_bytes))
            .collect()
    }

    #[test]
    fn regions_writes_and_reads() {
        // r1 = r2 + r3 (SIMD16 floats: 64 bytes each); r4 = r1 * r1; eot r4.
        let j = r#"{"version":"1.0","insts":[
          {"kind":"L","value":"L0000"},
          {"kind":"I","op":"add","es":16,"pred":null,
           "dst":{"kind":"RD","reg":{"rn":"r","r":1,"sr":0},"rgn":{"Hz":1},"type":"f"},
           "srcs":[{"kind":"RD","reg":{"rn":"r","r":2,"sr":0},"rgn":{"Vt":1,"Wi":1,"Hz":0},"type":"f"},
                   {"kind":"RD","reg":{"rn":"r","r":3,"sr":0},"rgn":{"Vt":0,"Wi":1,"Hz":0},"type":"f"}]},
          {"kind":"I","op":"mul","es":16,"pred":null,
           "dst":{"kind":"RD","reg":{"rn":"r","r":4,"sr":0},"rgn":{"Hz":1},"type":"f"},
           "srcs":[{"kind":"RD","reg":{"rn":"r","r":1,"sr":0},"rgn":{"Vt":1,"Wi":1,"Hz":0},"type":"f"},
                   {"kind":"RD","reg":{"rn":"r","r":1,"sr":0},"rgn":{"Vt":1,"Wi":1,"Hz":0},"type":"f"}]},
          {"kind":"I","op":"send","es":16,"pred":null,"opts":["EOT"],
           "dst":{"kind":"DA","reg":{"rn":"null","r":0,"sr":0},"len":0},
           "srcs":[{"kind":"AD","surf":{"type":"bti"},"addr":{"reg":{"rn":"r","r":4,"sr":0},"len":1},"offset":0}]}
        ]}"#;
        // before add: r2 (64) + r3.0 (4); before mul: r1 (64); before send: r4 (64).
        assert_eq!(live(j, &[], 64), [(68, 0), (64, 0), (64, 0)]);
    }

    #[test]
    fn a_predicated_write_does_not_kill_and_loops_carry() {
        let j = r#"{"version":"2.0","elems":[
          {"kind":"L","id":0,"symbol":"L0000","succs":[1]},
          {"kind":"I","op":"mov","es":8,"dst":{"kind":"RD","reg":{"rn":"r","r":5},"rgn":{"h":1},"type":"d"},
           "srcs":[{"kind":"IM","value":"0"}]},
          {"kind":"L","id":1,"symbol":"L0016","succs":[1,2]},
          {"kind":"I","op":"add","es":8,"pred":{"func":""},
           "dst":{"kind":"RD","reg":{"rn":"r","r":5},"rgn":{"h":1},"type":"d"},
           "srcs":[{"kind":"RD","reg":{"rn":"r","r":5},"rgn":{"v":1,"w":1,"h":0},"type":"d"},{"kind":"IM","value":"1"}]},
          {"kind":"I","op":"jmpi","es":1,"pred":{"func":""},"srcs":[{"kind":"LB","target":"L0016"}]},
          {"kind":"L","id":2,"symbol":"L0048","succs":[]},
          {"kind":"I","op":"send","es":8,"opts":["EOT"],"dst":{"kind":"DA","reg":{"rn":"null"},"len":0},
           "srcs":[{"kind":"AD","areg":{"rn":"r","r":5},"alen":1,"stype":"bti"}]}
        ]}"#;
        // r5.0-7 (32 bytes) live around the loop and into the send.
        assert_eq!(live(j, &[], 32), [(0, 0), (32, 0), (32, 0), (32, 0)]);
    }

    #[test]
    fn messages_touch_what_they_move() {
        let m = |op: &str, sub: &str, es: u32| {
            let i = Inst {
                op: op.into(),
                subop: sub.into(),
                es,
                ..Inst::default()
            };
            Message::of(&i).map(|m| (m.addr_bits, m.reg_bits, m.elems, m.transposed, m.width(&i)))
        };
        assert_eq!(
            m("load", "ugm.d32x32t.a32.ca.ca", 1),
            Some((32, 32, 32, true, 1))
        );
        assert_eq!(m("load", "ugm.d32x4.a64", 32), Some((64, 32, 4, false, 32)));
        assert_eq!(
            m("store", "slm.d16u32.a32", 16),
            Some((32, 32, 1, false, 16))
        );
        assert_eq!(
            m("load_quad", "ugm.d32.xyz.a32", 16),
            Some((32, 32, 3, false, 16))
        );
        assert_eq!(m("send", "dc0", 16), None);
        let f = Footprint::new(64);
        let i = Inst {
            op: "load".into(),
            subop: "ugm.d32x4.a64".into(),
            es: 32,
            ..Inst::default()
        };
        let mut out = Vec::new();
        f.payload(&i, -1, 6, 8, &mut out);
        // four elements, 128 bytes each, each starting a register pair.
        assert_eq!(out, [(384, 384 + 512)]);
    }

    #[test]
    fn spilled_slots_live_from_spill_to_fill() {
        let j = r#"{"version":"1.0","insts":[
          {"kind":"L","value":"L0000"},
          {"kind":"I","op":"send","es":16,"pred":null,"dst":{"kind":"DA","reg":{"rn":"null","r":0,"sr":0},"len":0},
           "srcs":[{"kind":"AD","surf":{"type":"bti"},"addr":{"reg":{"rn":"r","r":0,"sr":0},"len":1},"offset":128},
                   {"kind":"DA","reg":{"rn":"r","r":5,"sr":0},"len":2}]},
          {"kind":"I","op":"mov","es":16,"pred":null,"dst":{"kind":"RD","reg":{"rn":"r","r":5,"sr":0},"rgn":{"Hz":1},"type":"f"},
           "srcs":[{"kind":"IM","value":"0"}]},
          {"kind":"I","op":"send","es":16,"pred":null,"dst":{"kind":"DA","reg":{"rn":"r","r":7,"sr":0},"len":2},
           "srcs":[{"kind":"AD","surf":{"type":"bti"},"addr":{"reg":{"rn":"r","r":0,"sr":0},"len":1},"offset":128}]},
          {"kind":"I","op":"send","es":16,"pred":null,"opts":["EOT"],"dst":{"kind":"DA","reg":{"rn":"null"},"len":0},
           "srcs":[{"kind":"AD","surf":{"type":"bti"},"addr":{"reg":{"rn":"r","r":7,"sr":0},"len":2},"offset":0},
                   {"kind":"DA","reg":{"rn":"r","r":5,"sr":0},"len":1}]}
        ]}"#;
        let c = [Class::Spill, Class::Mov, Class::Fill, Class::SendOther];
        let l = live(j, &c, 64);
        // the slot (128 bytes) is live after the spill until the fill.
        assert_eq!(l.iter().map(|x| x.1).collect::<Vec<_>>(), [0, 128, 128, 0]);
        // before the spill: r0 and r5:2 live, 192 bytes.
        assert_eq!(l[0].0, 192);
    }
}
