//! The instruction mix: a kernel's instructions counted by class, from ISA
//! text in IGC's syntax (IGC's `.asm` dumps, IGA's disassembly).
//!
//! Memory messages are told apart by their symbolic form
//! (`load.ugm...`, `store.slm...`, `atomic_iadd.ugm...`), which IGC and IGA
//! print for LSC sends, or, for a raw `send.<sfid>`, by the description in
//! its comment (`// wr:1h+0, rd:2; hword scratch block read x4`, or IGA's
//! `// wr:4+0, rd:8; load.ugm.d32x4.a64`). Spill and fill messages are
//! those IGC's register allocator annotates (`scratch space spill: ...`,
//! `scratch space fill: ...`); other scratch traffic is private memory.

use super::bytes::{positions, skip_space, word_end};
use serde::{Deserialize, Serialize};

/// Instructions by class; the classes sum to `instructions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix {
    pub instructions: u64,
    /// Loads, stores and atomics on global memory (LSC `ugm`, `ugml`,
    /// `tgm`; legacy data-port messages `dc0`, `dc1`, `dc2`, `hdc*`).
    pub load_global: u64,
    pub store_global: u64,
    pub atomic_global: u64,
    /// Shared local memory (LSC `slm`, legacy SLM messages).
    pub load_slm: u64,
    pub store_slm: u64,
    pub atomic_slm: u64,
    /// Scratch (private memory: `ss[...]` surface-state addressing, legacy
    /// scratch block messages), without spills and fills.
    pub load_scratch: u64,
    pub store_scratch: u64,
    /// Register spills (stores to scratch) and fills (loads back).
    pub spill: u64,
    pub fill: u64,
    /// Other sends: end of thread, sampler, render target, ...
    pub send_other: u64,
    /// `dpas`, `dpasw`.
    pub dpas: u64,
    /// Extended math: `math.*`.
    pub math: u64,
    /// `mov`, `movi`, `smov`.
    pub mov: u64,
    /// Every other computing instruction: `add`, `mad`, `mul`, `cmp`, `sel`,
    /// `and`, `shl`, `bfn`, `add3`, ...
    pub alu: u64,
    /// `jmpi`, `brc`, `brd`, `if`, `else`, `endif`, `while`, `break`,
    /// `cont`, `halt`, `goto`, `join`, `call`, `calla`, `ret`.
    pub control: u64,
    /// `sync.*`, `wait`, fences and barrier messages.
    pub sync: u64,
}

/// The class of one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Load(Memory),
    Store(Memory),
    Atomic(Memory),
    Spill,
    Fill,
    SendOther,
    Dpas,
    Math,
    Mov,
    Alu,
    Control,
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    Global = 0,
    Slm = 1,
    Scratch = 2,
}

impl Class {
    /// The [`Mix`] field that counts it.
    pub fn field(self) -> &'static str {
        use Memory::*;
        match self {
            Class::Load(Global) => "load_global",
            Class::Store(Global) => "store_global",
            Class::Atomic(Global) => "atomic_global",
            Class::Load(Slm) => "load_slm",
            Class::Store(Slm) => "store_slm",
            Class::Atomic(Slm) => "atomic_slm",
            Class::Load(Scratch) => "load_scratch",
            Class::Store(Scratch) | Class::Atomic(Scratch) => "store_scratch",
            Class::Spill => "spill",
            Class::Fill => "fill",
            Class::SendOther => "send_other",
            Class::Dpas => "dpas",
            Class::Math => "math",
            Class::Mov => "mov",
            Class::Alu => "alu",
            Class::Control => "control",
            Class::Sync => "sync",
        }
    }
}

impl Mix {
    /// Counts one instruction (the text of a [`super::line::Line::Instruction`]).
    pub fn add(&mut self, instruction: &str) {
        self.add_class(classify(instruction));
    }

    /// Counts one instruction of class `c`.
    pub fn add_class(&mut self, c: Class) {
        self.instructions += 1;
        *self.slot(c) += 1;
    }

    fn slot(&mut self, c: Class) -> &mut u64 {
        use Memory::*;
        match c {
            Class::Load(Global) => &mut self.load_global,
            Class::Store(Global) => &mut self.store_global,
            Class::Atomic(Global) => &mut self.atomic_global,
            Class::Load(Slm) => &mut self.load_slm,
            Class::Store(Slm) => &mut self.store_slm,
            Class::Atomic(Slm) => &mut self.atomic_slm,
            Class::Load(Scratch) => &mut self.load_scratch,
            Class::Store(Scratch) | Class::Atomic(Scratch) => &mut self.store_scratch,
            Class::Spill => &mut self.spill,
            Class::Fill => &mut self.fill,
            Class::SendOther => &mut self.send_other,
            Class::Dpas => &mut self.dpas,
            Class::Math => &mut self.math,
            Class::Mov => &mut self.mov,
            Class::Alu => &mut self.alu,
            Class::Control => &mut self.control,
            Class::Sync => &mut self.sync,
        }
    }

    /// Every class as (field name, count), in the order of the JSON.
    pub fn fields(&self) -> [(&'static str, u64); 18] {
        [
            ("instructions", self.instructions),
            ("load_global", self.load_global),
            ("store_global", self.store_global),
            ("atomic_global", self.atomic_global),
            ("load_slm", self.load_slm),
            ("store_slm", self.store_slm),
            ("atomic_slm", self.atomic_slm),
            ("load_scratch", self.load_scratch),
            ("store_scratch", self.store_scratch),
            ("spill", self.spill),
            ("fill", self.fill),
            ("send_other", self.send_other),
            ("dpas", self.dpas),
            ("math", self.math),
            ("mov", self.mov),
            ("alu", self.alu),
            ("control", self.control),
            ("sync", self.sync),
        ]
    }

    /// All sends (memory messages and others).
    pub fn sends(&self) -> u64 {
        self.load_global
            + self.store_global
            + self.atomic_global
            + self.load_slm
            + self.store_slm
            + self.atomic_slm
            + self.load_scratch
            + self.store_scratch
            + self.spill
            + self.fill
            + self.send_other
    }
}

/// A class as the place of its count in [`Counts`], a number: the
/// analysis counts by place, as an index rather than a jump per class
/// (which instructions of random classes mispredicted). [`PLACES`] has
/// each place's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place(u8);

/// The class of each [`Place`]: the memory classes by memory then kind
/// (load, store, atomic), then the others.
const PLACES: [Class; 18] = [
    Class::Load(Memory::Global),
    Class::Store(Memory::Global),
    Class::Atomic(Memory::Global),
    Class::Load(Memory::Slm),
    Class::Store(Memory::Slm),
    Class::Atomic(Memory::Slm),
    Class::Load(Memory::Scratch),
    Class::Store(Memory::Scratch),
    Class::Atomic(Memory::Scratch),
    Class::Spill,
    Class::Fill,
    Class::SendOther,
    Class::Dpas,
    Class::Math,
    Class::Mov,
    Class::Alu,
    Class::Control,
    Class::Sync,
];

impl Place {
    const LOAD_SCRATCH: Place = Place(6);
    const STORE_SCRATCH: Place = Place(7);
    const SPILL: Place = Place(9);
    const FILL: Place = Place(10);
    const SEND_OTHER: Place = Place(11);
    const DPAS: Place = Place(12);
    const MATH: Place = Place(13);
    const MOV: Place = Place(14);
    const ALU: Place = Place(15);
    const CONTROL: Place = Place(16);
    const SYNC: Place = Place(17);

    /// A load (`kind` 0), store (1) or atomic (2) on `memory`.
    fn memory(kind: u8, memory: Memory) -> Place {
        Place(3 * memory as u8 + kind)
    }

    pub(crate) fn class(self) -> Class {
        PLACES[usize::from(self.0)]
    }
}

/// Instructions counted by [`Place`], made a [`Mix`] at the end.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts([u64; 18]);

impl Counts {
    pub(crate) fn add(&mut self, p: Place) {
        self.0[usize::from(p.0)] += 1;
    }

    pub(crate) fn mix(&self) -> Mix {
        let mut m = Mix::default();
        for (&c, &n) in PLACES.iter().zip(&self.0) {
            m.instructions += n;
            *m.slot(c) += n;
        }
        m
    }
}

/// The instruction mix of ISA text.
pub fn count(text: &str) -> Mix {
    let mut m = Mix::default();
    for l in super::line::lines(text) {
        if let super::line::Line::Instruction(i) = l {
            m.add(i);
        }
    }
    m
}

/// Classifies the instructions of one kernel's ISA text: [`classify`],
/// and, for a kernel whose scratch space holds spills only, its scratch
/// loads and stores as fills and spills. IGC's dumps annotate those
/// (`scratch space spill: ...`), IGA's text of a binary does not: with
/// this both texts of one code count alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Classifier {
    spills_only: bool,
}

impl Classifier {
    /// For a kernel that spills `spill_bytes` and keeps `private_bytes` of
    /// private memory in scratch space: scratch holds spills only when it
    /// spills and has no such private memory.
    pub fn new(spill_bytes: Option<u64>, private_bytes: Option<u64>) -> Classifier {
        Classifier {
            spills_only: spill_bytes.unwrap_or(0) > 0 && private_bytes.unwrap_or(0) == 0,
        }
    }

    /// From the header of `text`: its `//.spill size` and `//.private
    /// memory size` lines, among the comment lines it starts with (the two
    /// fields [`super::header::AsmHeader`] reads, read here alone).
    pub fn of_text(text: &str) -> Classifier {
        let mut h = HeaderFields::default();
        for l in text
            .as_bytes()
            .split(|&c| c == b'\n')
            .take_while(|l| l.starts_with(b"//"))
        {
            h.line(l);
        }
        h.classifier()
    }

    /// The class of `instruction`, a line of this kernel's text.
    pub fn classify(&self, instruction: &str) -> Class {
        self.adjust(classify(instruction))
    }

    /// [`Classifier::adjust`] of a [`Place`].
    pub(crate) fn adjust_place(&self, p: Place) -> Place {
        match p {
            Place::STORE_SCRATCH if self.spills_only => Place::SPILL,
            Place::LOAD_SCRATCH if self.spills_only => Place::FILL,
            other => other,
        }
    }

    /// `c` with scratch loads and stores as fills and spills where scratch
    /// holds spills only.
    pub fn adjust(&self, c: Class) -> Class {
        match c {
            Class::Store(Memory::Scratch) if self.spills_only => Class::Spill,
            Class::Load(Memory::Scratch) if self.spills_only => Class::Fill,
            other => other,
        }
    }
}

/// The two header fields of a [`Classifier`], read from the comment
/// lines a text starts with, one by one (as [`Classifier::of_text`] and
/// the analysis of bytes read them).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HeaderFields {
    spill: Option<u64>,
    private: Option<u64>,
}

impl HeaderFields {
    /// Reads one line of the header (without its `\n`), a `//` comment.
    pub(crate) fn line(&mut self, l: &[u8]) {
        if let Some(v) = l.strip_prefix(b"//.spill size") {
            self.spill = header_number(v);
        } else if let Some(v) = l.strip_prefix(b"//.private memory size") {
            self.private = header_number(v);
        }
    }

    pub(crate) fn classifier(self) -> Classifier {
        Classifier::new(self.spill, self.private)
    }
}

/// The number that starts the value of a header field (after any
/// whitespace, Unicode's included); bytes that are not UTF-8 read lossily.
fn header_number(v: &[u8]) -> Option<u64> {
    let v = String::from_utf8_lossy(v);
    let digits = v.trim_start();
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<u64>().ok()
}

/// The class of one instruction line (predicate, opcode, operands,
/// comment).
pub fn classify(instruction: &str) -> Class {
    classify_bytes(instruction.as_bytes()).class()
}

/// [`classify`] of an instruction line as bytes, as its [`Place`]; bytes
/// that are not UTF-8 class as the line read lossily would (only ASCII
/// decides a class, but where Unicode whitespace could, the bytes are
/// read lossily).
#[inline]
pub(crate) fn classify_bytes(b: &[u8]) -> Place {
    // On bytes: this runs for every instruction of every launched kernel.
    let mut start = skip_space(b, 0);
    // Predicate: `(W)`, `(f0.0)`, `(W&~f2.0)`: a few bytes, found without
    // a call.
    if b.get(start) == Some(&b'(') {
        if let Some(end) = b[start..].iter().position(|&c| c == b')') {
            start = skip_space(b, start + end + 1);
        }
    }
    let opcode = &b[start..word_end(b, start)];
    let base = before_dot(opcode);
    let code = mnemonic(b, start, base.len());
    if code < SEND {
        return Place(code);
    }
    let rest = &b[start..];
    let kind = match code {
        SEND => return classify_send(opcode, rest),
        LOAD => Kind::Load,
        STORE => Kind::Store,
        FENCE => Kind::Fence,
        _ => match symbolic(base) {
            Some(kind) => kind,
            None => return Place::ALU,
        },
    };
    let (body, c) = split_comment(rest);
    memory_class(kind, opcode, body, c)
}

/// What [`MNEMONICS`] say of a mnemonic (without its subfunction): below
/// [`SEND`], the [`Place`] of its instructions; else one of these.
const SEND: u8 = 18;
const LOAD: u8 = 19;
const STORE: u8 = 20;
const FENCE: u8 = 21;
/// Not one of [`MNEMONICS`]: a symbolic memory operation by its prefix
/// (`load_block2d`, `atomic_iadd`), or an ALU instruction.
const OTHER: u8 = u8::MAX;

/// The mnemonics that make a class of their own, or begin one.
const MNEMONICS: [(&str, u8); 30] = [
    ("mov", Place::MOV.0),
    ("movi", Place::MOV.0),
    ("smov", Place::MOV.0),
    ("math", Place::MATH.0),
    ("dpas", Place::DPAS.0),
    ("dpasw", Place::DPAS.0),
    ("sync", Place::SYNC.0),
    ("wait", Place::SYNC.0),
    ("send", SEND),
    ("sends", SEND),
    ("sendc", SEND),
    ("sendsc", SEND),
    // The ops that branch (IGA's `OpSpec::isBranching`).
    ("jmpi", Place::CONTROL.0),
    ("brc", Place::CONTROL.0),
    ("brd", Place::CONTROL.0),
    ("if", Place::CONTROL.0),
    ("else", Place::CONTROL.0),
    ("endif", Place::CONTROL.0),
    ("while", Place::CONTROL.0),
    ("break", Place::CONTROL.0),
    ("cont", Place::CONTROL.0),
    ("halt", Place::CONTROL.0),
    ("goto", Place::CONTROL.0),
    ("join", Place::CONTROL.0),
    ("call", Place::CONTROL.0),
    ("calla", Place::CONTROL.0),
    ("ret", Place::CONTROL.0),
    ("load", LOAD),
    ("store", STORE),
    ("fence", FENCE),
];

/// A mnemonic of at most 7 bytes as a number: its bytes from the lowest,
/// and its length in the highest byte. Longer ones are none of
/// [`MNEMONICS`].
const fn key(b: &[u8]) -> u64 {
    let mut k = (b.len() as u64) << 56;
    let mut i = 0;
    while i < b.len() {
        k |= (b[i] as u64) << (8 * i);
        i += 1;
    }
    k
}

/// The slot of a key in [`TABLE`]: a multiply, its top 6 bits. The
/// multiplier was found by trying: with it the keys of [`MNEMONICS`] are
/// in slots of their own (the table is built at compile time and fails
/// the build otherwise).
const fn slot(key: u64) -> usize {
    (key.wrapping_mul(0x2ef1_6b6c_97f5_c337) >> 58) as usize
}

/// [`MNEMONICS`] by [`slot`]: one look-up, no chain of comparisons whose
/// branches random opcodes mispredict.
const TABLE: [(u64, u8); 64] = {
    let mut t = [(0, OTHER); 64];
    let mut i = 0;
    while i < MNEMONICS.len() {
        let (name, code) = MNEMONICS[i];
        let k = key(name.as_bytes());
        assert!(t[slot(k)].1 == OTHER, "two mnemonics in one slot");
        t[slot(k)] = (k, code);
        i += 1;
    }
    t
};

/// The code of the mnemonic of `len` bytes at `b[start..]` ([`SEND`] and
/// the others, or a [`Place`]'s number).
fn mnemonic(b: &[u8], start: usize, len: usize) -> u8 {
    if len > 7 {
        return OTHER;
    }
    let k = match b.get(start..start + 8) {
        // Eight bytes read as one number, those after the mnemonic masked.
        Some(w) => {
            let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
            w & ((1 << (8 * len)) - 1) | (len as u64) << 56
        }
        None => key(&b[start..start + len]),
    };
    match TABLE[slot(k)] {
        (key, code) if key == k => code,
        _ => OTHER,
    }
}

/// The ops that branch (IGA's `OpSpec::isBranching`), by mnemonic
/// without its subfunction: the control class of the mix, and the
/// instructions that end a block.
pub fn is_branch(op: &str) -> bool {
    mnemonic(op.as_bytes(), 0, op.len()) == Place::CONTROL.0
}

#[derive(Clone, Copy)]
enum Kind {
    Load,
    Store,
    Atomic,
    Fence,
}

/// The kind of a symbolic LSC operation (`load`, `load_block2d`, `store`,
/// `atomic_iadd`, `fence`, ...), given its name before the first dot.
fn symbolic(base: &[u8]) -> Option<Kind> {
    if base == b"load" || base.starts_with(b"load_") {
        // `load_status` reads no memory but is a data-port message all the same.
        Some(Kind::Load)
    } else if base == b"store" || base.starts_with(b"store_") {
        Some(Kind::Store)
    } else if base.starts_with(b"atomic") {
        Some(Kind::Atomic)
    } else if base == b"fence" {
        Some(Kind::Fence)
    } else {
        None
    }
}

/// The second component of `op`: `ugm` of `load.ugm.d32.a64`.
fn sfid(op: &[u8]) -> &[u8] {
    let rest = &op[before_dot(op).len()..];
    let rest = rest.strip_prefix(b".").unwrap_or(rest);
    before_dot(rest)
}

/// Whether `needle` occurs in `haystack`: [`str::contains`] without
/// building a searcher, for the short comments of instructions (built per
/// call, it cost more than the search), nor a call per occurrence of its
/// first byte.
fn has(h: &[u8], n: &[u8]) -> bool {
    let Some((&first, rest)) = n.split_first() else {
        return true;
    };
    positions(h, first).any(|i| h[i + 1..].starts_with(rest))
}

/// `op` up to its first dot: `load` of `load.ugm.d32.a64`.
fn before_dot(op: &[u8]) -> &[u8] {
    // Not memchr: an opcode is a few bytes, fewer than a call costs.
    match op.iter().position(|&c| c == b'.') {
        Some(i) => &op[..i],
        None => op,
    }
}

/// An instruction split at its first `//`: the code, and the comment.
fn split_comment(b: &[u8]) -> (&[u8], &[u8]) {
    // Not memmem: a searcher built per line costs more than it saves.
    for i in positions(b, b'/') {
        if b.get(i + 1) == Some(&b'/') {
            return (&b[..i], &b[i + 2..]);
        }
    }
    (b, b"")
}

/// A symbolic memory operation `op` (its SFID the second component), with
/// `body` the code of its instruction and `comment` the comment.
fn memory_class(kind: Kind, op: &[u8], body: &[u8], comment: &[u8]) -> Place {
    let memory = if sfid(op) == b"slm" {
        Memory::Slm
    } else if scratch_address(body) || scratch_address(op) {
        Memory::Scratch
    } else {
        Memory::Global
    };
    match kind {
        Kind::Fence => Place::SYNC,
        Kind::Store if has(comment, b"spill") => Place::SPILL,
        Kind::Load if has(comment, b"fill") => Place::FILL,
        Kind::Load => Place::memory(0, memory),
        Kind::Store => Place::memory(1, memory),
        Kind::Atomic => Place::memory(2, memory),
    }
}

/// `ss[...]`: surface-state addressing, which IGC uses for scratch
/// (`bss[...]`, bindless surfaces, is not).
fn scratch_address(b: &[u8]) -> bool {
    positions(b, b'[')
        .any(|i| i >= 2 && &b[i - 2..i] == b"ss" && (i == 2 || !b[i - 3].is_ascii_alphanumeric()))
}

/// A raw `send.<sfid>`: what its comment says it does.
fn classify_send(opcode: &[u8], line: &[u8]) -> Place {
    let c = split_comment(line).1;
    match described(c) {
        Some(place) => place,
        None => described_send(sfid(opcode), c),
    }
}

/// The class of IGA's description of an LSC message in the comment `c` of
/// a send (`wr:4+0, rd:8; load.ugm.d32x4.a64`): the first part (between
/// `;`) whose first word is a symbolic operation with a dot.
fn described(c: &[u8]) -> Option<Place> {
    if !c.is_ascii() {
        // Unicode whitespace trims and splits the parts: read as text.
        let text = String::from_utf8_lossy(c);
        return text.split(';').find_map(|part| {
            let p = part.trim();
            let op = p.split(char::is_whitespace).next().unwrap_or("");
            described_part(p.as_bytes(), op.as_bytes(), text.as_bytes())
        });
    }
    // The whitespace of `char::is_whitespace` that is ASCII.
    let space = |b: &u8| matches!(b, b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | b' ');
    c.split(|&b| b == b';').find_map(|part| {
        let from = part.iter().position(|b| !space(b)).unwrap_or(part.len());
        let to = part.iter().rposition(|b| !space(b)).map_or(from, |i| i + 1);
        let p = &part[from..to];
        let op = p.split(space).next().unwrap_or(b"");
        described_part(p, op, c)
    })
}

/// [`described`] of one part `p` (trimmed) whose first word is `op`.
fn described_part(p: &[u8], op: &[u8], comment: &[u8]) -> Option<Place> {
    let kind = symbolic(before_dot(op))?;
    if !op.contains(&b'.') {
        return None;
    }
    // The part is the instruction's code, the whole comment its comment
    // (a `//` in the part cuts it there).
    let body = split_comment(p).0;
    Some(memory_class(kind, op, body, comment))
}

/// A raw send of SFID `sfid` whose comment `c` does not describe an LSC
/// message: what the comment's words say.
fn described_send(sfid: &[u8], c: &[u8]) -> Place {
    let data_port = matches!(
        sfid,
        b"dc0" | b"dc1" | b"dc2" | b"ugm" | b"ugml" | b"tgm" | b"slm"
    ) || sfid.starts_with(b"hdc");
    if has(c, b"barrier") || has(c, b"fence") {
        return Place::SYNC;
    }
    if !data_port {
        return Place::SEND_OTHER;
    }
    if has(c, b"scratch space spill") {
        return Place::SPILL;
    }
    if has(c, b"scratch space fill") {
        return Place::FILL;
    }
    let memory = if sfid == b"slm" || has(c, b"slm") || has(c, b"SLM") {
        Memory::Slm
    } else if has(c, b"scratch") {
        Memory::Scratch
    } else {
        Memory::Global
    };
    if has(c, b"atomic") {
        Place::memory(2, memory)
    } else if has(c, b"read") || has(c, b"load") {
        Place::memory(0, memory)
    } else if has(c, b"write") || has(c, b"store") {
        Place::memory(1, memory)
    } else {
        Place::SEND_OTHER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_of_a_kernel_that_only_spills_is_spills_and_fills() {
        let store =
            "(W)     store.ugm.d32x16t.a32.wb.wb (1|M0)  ss[a0.2][r5:1+0x40]  r6:2  {A@1,$3}";
        let load = "(W)     load.ugm.d32x16t.a32.ca.ca (1|M0)  r8:2  ss[a0.2][r5:1+0x40]  {$4}";
        assert_eq!(classify(store), Class::Store(Memory::Scratch));
        assert_eq!(classify(load), Class::Load(Memory::Scratch));
        let spills = Classifier::new(Some(64), None);
        assert_eq!(spills.classify(store), Class::Spill);
        assert_eq!(spills.classify(load), Class::Fill);
        // Private memory in scratch, or no spill: scratch stays scratch.
        for k in [
            Classifier::new(Some(64), Some(32)),
            Classifier::new(None, None),
            Classifier::new(Some(0), None),
        ] {
            assert_eq!(k.classify(store), Class::Store(Memory::Scratch));
            assert_eq!(k.classify(load), Class::Load(Memory::Scratch));
        }
        // The analysis adjusts places, the code's reasons classes: one rule.
        for k in [spills, Classifier::new(Some(64), Some(32))] {
            for p in 0..PLACES.len() as u8 {
                let c = Place(p).class();
                assert_eq!(k.adjust_place(Place(p)).class(), k.adjust(c), "{c:?}");
            }
        }
        let text = format!("//.kernel k\n//.spill size 64\n\n{store}\n");
        assert_eq!(Classifier::of_text(&text), spills);
        let text = format!("//.kernel k\n//.spill size 64\n//.private memory size 32\n\n{store}\n");
        assert_eq!(
            Classifier::of_text(&text),
            Classifier::new(Some(64), Some(32))
        );
    }
    use Memory::*;

    #[test]
    fn instructions_of_igc_and_iga_are_classified() {
        let cases: &[(&str, Class)] = &[
            ("(W)     mov (16|M0)   r127.0<1>:ud  0x0:ud  // $4", Class::Mov),
            ("        mad (32|M0)  acc0.0<1>:f  r4.11<0;0>:f  r11.0<1;0>:f  r4.10<0>:f // $37", Class::Alu),
            ("(W&~f2.0) jmpi    _0_015   // $22", Class::Control),
            ("(W)     math.inv (1|M0)   r2.2<1>:f   r2.1<0;1,0>:f  {F@1}  // $25", Class::Math),
            ("        sync.nop   null   {Compacted,I@2}  // $9", Class::Sync),
            ("        dpas.8x8 (8|M0)   r10:f  r10:f  r2:bf  r6.0:bf  {Atomic}", Class::Dpas),
            ("        load.ugm.d32.a64 (32|M0)  r11:2  [r7:4]  {A@1,$3} // ex_desc:0x0; desc:0x8200580 // $18", Class::Load(Global)),
            ("        store.ugm.d32.a64 (32|M0)  [r7:4]  r13:2  {F@1,$4} // ex_desc:0x0; desc:0x8000584 // $17", Class::Store(Global)),
            ("        load.ugm.d32x32t.a32.ca.ca (1|M0)  r1:2 bti[255][r127:1]  {A@1,$0} // $19", Class::Load(Global)),
            ("        store.slm.d32.a32 (32|M0)  [r16:2]  r14:2  {$4} // ex_desc:0x0; desc:0x4000504 // $15", Class::Store(Slm)),
            ("        load.slm.d32.a32 (32|M0)  r29:2  [r27:2]  {I@1,$6} // $45", Class::Load(Slm)),
            ("        atomic_iadd.slm.d32.a32 (32|M0)  r2:2  [r4:2]  r6:2", Class::Atomic(Slm)),
            ("        atomic_fadd.ugm.d32.a64 (32|M0)  null:2  [r4:4]  r6:2", Class::Atomic(Global)),
            ("        store.ugm.d32.a32.wb.wb (32|M0)  ss[a0.2][r20:2] r42:2  {ExBSO,$15} // ex_desc:a0.2; desc:0x440E0504 // $32", Class::Store(Scratch)),
            ("        load.ugm.d32.a32.ca.ca (32|M0)  r37:2   ss[a0.2][r33:2]  {ExBSO,I@2,$2} // $191", Class::Load(Scratch)),
            ("        load.ugm.d32.a32 (32|M0)  r37:2   bss[a0.2][r33:2]", Class::Load(Global)),
            ("(W)     send.dc1 (1|M0)   null  r8  r10:1  0x0  0x040487FF  {A@3,$4} // wr:2+1, rd:0; untyped a64 atomic int32 integer add // $13", Class::Atomic(Global)),
            ("(W)     send.dc0 (16|M0)  r8  r0  null:0  0x0  0x022C211C  {F@1,$1} // wr:1h+0, rd:2; hword scratch block read x4 //  scratch space fill: FL_Send_V0191_2 from offset[284x32]; $832", Class::Fill),
            ("(W)     send.dc0 (16|M0)  null  r0  r6:2  0x0  0x020F2118  {$13} // wr:1h+2, rd:0; hword scratch block write x4 //  scratch space spill: SP_GRF_V0135_0 from offset[280x32]; $133", Class::Spill),
            ("(W)     send.dc0 (16|M0)  null  r0  r5:4  0x0  0x020F3100  {$4} // wr:1h+4, rd:0; hword scratch block write x8", Class::Store(Scratch)),
            ("(W)     send.slm (1|M0)   r3  r0  null:0  0x0  0x0210011F  {$1} // wr:1+0, rd:1; fence.slm.none.group // $17", Class::Sync),
            ("(W)     send.gtwy (1|M0)  null  r18  null:0  0x0  0x02000004  {I@2,$5} // wr:1+0, rd:0; signal barrier // $18", Class::Sync),
            ("(W)     send.gtwy (8|M0)  null  r127  null:0  0x0  0x02000010  {EOT} // wr:1+0, rd:0; end of thread // $19", Class::SendOther),
            ("        send.ugm (32|M0)  r6  r15  null:0  0x0  0x08803580  {A@1,$5} // wr:4+0, rd:8; load.ugm.d32x4.a64", Class::Load(Global)),
            ("        send.ugm (32|M0)  null  r26  r6:2  a0.2  0x440E0504  {ExBSO,$5} // wr:2+2, rd:0; store.ugm.d32.a32.wb.wb.ss[a0.2]", Class::Store(Scratch)),
            ("        fence.ugm.none.threadgroup (1|M0)  null  r0", Class::Sync),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line), *want, "{line}");
        }
    }

    /// Unicode whitespace in a send's comment trims and splits its parts
    /// (the comment read as text), as does the ASCII vertical tab, which
    /// `char::is_whitespace` has and `u8::is_ascii_whitespace` does not.
    #[test]
    fn send_comments_split_at_unicode_whitespace() {
        let send = "(W)     send.ugm (1|M0)  r1  r2  null:0  0x0  0x0 // wr:1+0, rd:1; ";
        for (op, want) in [
            ("\u{3000}load.ugm.d32.a64", Class::Load(Global)),
            ("\x0bload.ugm.d32.a64\x0b", Class::Load(Global)),
            ("load.slm.d32\u{a0}x", Class::Load(Slm)),
            ("\u{a0}store.ugm.d32.a32.ss[a0.2]", Class::Store(Scratch)),
            ("\u{85}store.ugm//spill", Class::Spill),
        ] {
            assert_eq!(classify(&format!("{send}{op}")), want, "{op:?}");
        }
    }

    #[test]
    fn has_is_contains() {
        let hays = [
            "",
            "s",
            "spil",
            "spill",
            "xspillx",
            "sspill",
            "scratch space fill: x",
            "ssss",
            "é spill é",
        ];
        for h in hays {
            for n in ["", "s", "spill", "fill", "ss", "scratch space fill", "é"] {
                assert_eq!(
                    has(h.as_bytes(), n.as_bytes()),
                    h.contains(n),
                    "{h:?} {n:?}"
                );
            }
        }
    }

    #[test]
    fn counts_are_the_mix() {
        for (k, class) in PLACES.iter().enumerate() {
            let (mut counts, mut mix) = (Counts::default(), Mix::default());
            // Each place once, and this one k times more.
            for p in (0..PLACES.len()).chain(std::iter::repeat(k).take(k)) {
                counts.add(Place(p as u8));
                mix.add_class(Place(p as u8).class());
            }
            assert_eq!(counts.mix(), mix, "{class:?}");
        }
        // Atomics on scratch count as its stores, in their own place.
        assert_eq!(Class::Atomic(Scratch).field(), "store_scratch");
        assert_eq!(PLACES[8], Class::Atomic(Scratch));
    }

    /// The table of mnemonics finds each of them, and nothing else: not
    /// their prefixes, longer words, other cases, or NUL bytes after.
    #[test]
    fn mnemonics_are_looked_up() {
        for (name, code) in MNEMONICS {
            let line = format!("{name} (1|M0) r1 r2");
            assert_eq!(mnemonic(line.as_bytes(), 0, name.len()), code, "{name}");
            assert_eq!(mnemonic(name.as_bytes(), 0, name.len()), code, "{name}");
            for other in [
                format!("{name}x"),
                format!("x{name}"),
                format!("{name}\0"),
                name[..name.len() - 1].to_string(),
                name.to_uppercase(),
            ] {
                if !MNEMONICS.iter().any(|(n, _)| *n == other) {
                    let padded = format!("{other}        ");
                    assert_eq!(
                        mnemonic(other.as_bytes(), 0, other.len()),
                        OTHER,
                        "{other:?}"
                    );
                    assert_eq!(
                        mnemonic(padded.as_bytes(), 0, other.len()),
                        OTHER,
                        "{other:?}"
                    );
                }
            }
        }
        assert_eq!(mnemonic(b"", 0, 0), OTHER);
        assert_eq!(mnemonic(b"\0\0\0\0\0\0\0\0", 0, 0), OTHER);
        assert!(is_branch("jmpi") && is_branch("ret") && !is_branch("mov") && !is_branch("rets"));
    }

    #[test]
    fn classes_sum_to_the_instructions() {
        let m = count("//.kernel k\n(W) mov (1|M0) r1.0<1>:d 0:w\nL1:\n  add (1|M0) r1.0<1>:d r1.0<0;1,0>:d 1:w\n  jmpi L1\n");
        assert_eq!(m.instructions, 3);
        assert_eq!((m.mov, m.alu, m.control), (1, 1, 1));
        let sum: u64 = m.fields()[1..].iter().map(|(_, n)| n).sum();
        assert_eq!(sum, m.instructions);
    }
}
