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
    Global,
    Slm,
    Scratch,
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
        let number = |v: &str| {
            let digits = v.trim_start();
            let end = digits
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(digits.len());
            digits[..end].parse::<u64>().ok()
        };
        let (mut spill, mut private) = (None, None);
        for l in text.lines().take_while(|l| l.starts_with("//")) {
            if let Some(v) = l.strip_prefix("//.spill size") {
                spill = number(v);
            } else if let Some(v) = l.strip_prefix("//.private memory size") {
                private = number(v);
            }
        }
        Classifier::new(spill, private)
    }

    /// The class of `instruction`, a line of this kernel's text.
    pub fn classify(&self, instruction: &str) -> Class {
        self.adjust(classify(instruction))
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

/// The class of one instruction line (predicate, opcode, operands,
/// comment).
pub fn classify(instruction: &str) -> Class {
    // On bytes: this runs for every instruction of every launched kernel.
    let b = instruction.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    // Predicate: `(W)`, `(f0.0)`, `(W&~f2.0)`: a few bytes, found without
    // a call.
    if b.get(i) == Some(&b'(') {
        if let Some(end) = b[i..].iter().position(|&c| c == b')') {
            i += end + 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
        }
    }
    let start = i;
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    // Both ends are at ASCII bytes (or the ends of the text).
    let opcode = &instruction[start..i];
    let rest = &instruction[start..];
    let base = before_dot(opcode);
    match base {
        "mov" | "movi" | "smov" => Class::Mov,
        "math" => Class::Math,
        "dpas" | "dpasw" => Class::Dpas,
        "sync" | "wait" => Class::Sync,
        "send" | "sends" | "sendc" | "sendsc" => classify_send(opcode, rest),
        _ if is_branch(base) => Class::Control,
        _ => match symbolic(base) {
            Some(kind) => memory_class(kind, opcode, rest),
            None => Class::Alu,
        },
    }
}

/// The ops that branch (IGA's `OpSpec::isBranching`), by mnemonic
/// without its subfunction: the control class of the mix, and the
/// instructions that end a block.
pub fn is_branch(op: &str) -> bool {
    matches!(
        op,
        "jmpi"
            | "brc"
            | "brd"
            | "if"
            | "else"
            | "endif"
            | "while"
            | "break"
            | "cont"
            | "halt"
            | "goto"
            | "join"
            | "call"
            | "calla"
            | "ret"
    )
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
fn symbolic(base: &str) -> Option<Kind> {
    if base == "load" || base.starts_with("load_") {
        // `load_status` reads no memory but is a data-port message all the same.
        Some(Kind::Load)
    } else if base == "store" || base.starts_with("store_") {
        Some(Kind::Store)
    } else if base.starts_with("atomic") {
        Some(Kind::Atomic)
    } else if base == "fence" {
        Some(Kind::Fence)
    } else {
        None
    }
}

/// The second component of `op`: `ugm` of `load.ugm.d32.a64`.
fn sfid(op: &str) -> &str {
    let rest = &op[before_dot(op).len()..];
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    before_dot(rest)
}

/// Whether `needle` occurs in `haystack`: [`str::contains`] without
/// building a searcher, for the short comments of instructions (built per
/// call, it cost more than the search).
fn has(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return true;
    };
    let mut at = 0;
    while let Some(i) = memchr::memchr(first, &h[at..]) {
        let start = at + i + 1;
        if h[start..].starts_with(rest) {
            return true;
        }
        at = start;
    }
    false
}

/// `op` up to its first dot: `load` of `load.ugm.d32.a64`.
fn before_dot(op: &str) -> &str {
    match op.bytes().position(|c| c == b'.') {
        Some(i) => &op[..i],
        None => op,
    }
}

/// An instruction split at its first `//`: the code, and the comment.
fn split_comment(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    // memchr, not memmem: a searcher built per line costs more than it saves.
    for i in memchr::memchr_iter(b'/', b) {
        if b.get(i + 1) == Some(&b'/') {
            return (&s[..i], &s[i + 2..]);
        }
    }
    (s, "")
}

/// The comment of an instruction (after its first `//`), or "".
fn comment(s: &str) -> &str {
    split_comment(s).1
}

/// A symbolic memory operation `op` (its SFID the second component) with
/// `line` the whole instruction.
fn memory_class(kind: Kind, op: &str, line: &str) -> Class {
    let sfid = sfid(op);
    let (body, c) = split_comment(line);
    let memory = if sfid == "slm" {
        Memory::Slm
    } else if scratch_address(body) || scratch_address(op) {
        Memory::Scratch
    } else {
        Memory::Global
    };
    with_memory(kind, memory, c)
}

fn with_memory(kind: Kind, memory: Memory, comment: &str) -> Class {
    match kind {
        Kind::Fence => Class::Sync,
        Kind::Store if has(comment, "spill") => Class::Spill,
        Kind::Load if has(comment, "fill") => Class::Fill,
        Kind::Load => Class::Load(memory),
        Kind::Store => Class::Store(memory),
        Kind::Atomic => Class::Atomic(memory),
    }
}

/// `ss[...]`: surface-state addressing, which IGC uses for scratch
/// (`bss[...]`, bindless surfaces, is not).
fn scratch_address(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr_iter(b'[', b)
        .any(|i| i >= 2 && &b[i - 2..i] == b"ss" && (i == 2 || !b[i - 3].is_ascii_alphanumeric()))
}

/// A raw `send.<sfid>`: what its comment says it does.
fn classify_send(opcode: &str, line: &str) -> Class {
    let sfid = sfid(opcode);
    let c = comment(line);
    // IGA's description of an LSC message: `wr:4+0, rd:8; load.ugm.d32x4.a64`.
    for part in c.split(';') {
        let p = part.trim();
        let op = p.split(|ch: char| ch.is_whitespace()).next().unwrap_or("");
        if let Some(kind) = symbolic(before_dot(op)) {
            if op.contains('.') {
                return memory_class(kind, op, &format!("{p} //{c}"));
            }
        }
    }
    let data_port = matches!(sfid, "dc0" | "dc1" | "dc2" | "ugm" | "ugml" | "tgm" | "slm")
        || sfid.starts_with("hdc");
    if has(c, "barrier") || has(c, "fence") {
        return Class::Sync;
    }
    if !data_port {
        return Class::SendOther;
    }
    if has(c, "scratch space spill") {
        return Class::Spill;
    }
    if has(c, "scratch space fill") {
        return Class::Fill;
    }
    let memory = if sfid == "slm" || has(c, "slm") || has(c, "SLM") {
        Memory::Slm
    } else if has(c, "scratch") {
        Memory::Scratch
    } else {
        Memory::Global
    };
    if has(c, "atomic") {
        Class::Atomic(memory)
    } else if has(c, "read") || has(c, "load") {
        Class::Load(memory)
    } else if has(c, "write") || has(c, "store") {
        Class::Store(memory)
    } else {
        Class::SendOther
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
                assert_eq!(has(h, n), h.contains(n), "{h:?} {n:?}");
            }
        }
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
