//! A kernel's code as IGA decodes it, as far as the analysis of
//! the collector's `analysis::flow` and the collector's `analysis::live` reads it: the blocks in order, each
//! with its first instruction (and, from IGC 2's IGA, its successors), and
//! per instruction its opcode, execution size, whether it is predicated,
//! the labels it jumps to, its register operands, and the live GRF bytes.
//! Two readers make it, to the same values: [`super::igajson`] from IGA's
//! JSON of the code, and [`crate::native::kv`] through IGA's
//! KernelView API.

/// One kernel's code as IGA decodes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Code {
    /// The version of IGA's JSON of it (`1.0`: IGC 1's IGA, `2.0`: IGC
    /// 2's), whichever way it was read.
    pub version: String,
    /// IGA's name of the platform (`xehpc`, `xe2`, ...).
    pub platform: String,
    pub blocks: Vec<Block>,
    pub insts: Vec<Inst>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    /// Its label (`L0312`: the byte offset of its first instruction).
    pub label: String,
    /// Index of its first instruction (its instructions run to the next
    /// block's first).
    pub first: usize,
    /// Successors by block index, as IGA's JSON version 2.0 lists them.
    pub succs: Option<Vec<usize>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inst {
    pub op: String,
    /// Its subfunction or message (`ugm.d32x4.a64`, `8x8`, `nop`, ...).
    pub subop: String,
    /// Its execution size (channels).
    pub es: u32,
    pub predicated: bool,
    /// Its destination, when it writes a register.
    pub dst: Option<Operand>,
    /// Its sources (labels and immediates as [`Operand::Other`]).
    pub srcs: Vec<Operand>,
    /// The labels it may jump to (`LB` operands).
    pub targets: Vec<String>,
    /// Ends the thread (`{EOT}`).
    pub eot: bool,
    /// Live GRF bytes at this instruction (IGA's `liveTotals.r`, or
    /// the collector's `analysis::live`'s).
    pub live_bytes: Option<u64>,
    /// Bytes of spilled values held in scratch memory at this instruction
    /// (from the collector's `analysis::live`).
    pub spilled_bytes: u64,
}

/// One operand, as far as register liveness needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A register region (`r12.2<8;8,1>:f`): GRF when `grf`.
    Region {
        grf: bool,
        reg: u32,
        sub: u32,
        /// Vertical stride, width, horizontal stride (a destination's
        /// horizontal stride alone, as `(0, 0, h)`).
        rgn: Option<(u32, u32, u32)>,
        /// Its type's size in bits, when IGA names a type.
        bits: Option<u32>,
    },
    /// A send's data registers (`r10:4`): `reg` is `None` for `null`.
    Data { reg: Option<u32>, len: u32 },
    /// A send's address registers, and the message's immediate offset.
    Address {
        reg: Option<u32>,
        len: u32,
        offset: i64,
        surface: String,
    },
    /// An immediate value (a send's descriptors are the last two).
    Immediate(u64),
    /// A label, an indirect region or an architecture register other than
    /// GRF: no GRF it names.
    Other,
}

/// Block `0`, with no label, before instructions that no label starts
/// (what [`super::igajson::parse`] makes of IGA's blocks; every reader of
/// IGA's code makes the same).
pub fn add_entry_block(code: &mut Code) {
    if code.blocks.first().map_or(true, |b| b.first != 0) && !code.insts.is_empty() {
        code.blocks.insert(
            0,
            Block {
                label: String::new(),
                first: 0,
                succs: None,
            },
        );
    }
}

/// The size in bits of a type IGA names (`None`: not a register type).
pub fn type_bits(t: &str) -> Option<u32> {
    Some(match t {
        "u2" | "s2" => 2,
        "u4" | "s4" | "e2m1" => 4,
        "b" | "ub" | "bf8" | "hf8" => 8,
        "w" | "uw" | "hf" | "bf" => 16,
        "d" | "ud" | "f" | "tf32" => 32,
        "q" | "uq" | "df" => 64,
        _ => return None,
    })
}
