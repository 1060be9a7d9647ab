//! A kernel's code decoded through IGA's KernelView C API (`kv.h`), into
//! the [`Code`] that [`crate::igajson::parse`] reads from IGA's JSON of
//! the same code, without IGA formatting the whole kernel as JSON (the
//! C++ streams of its JSON formatter and the parse of their output are
//! most of the time of the analysis).
//!
//! IGA decodes the kernel once (`kv_create`); each instruction is then
//! read field by field: its opcode (IGA's `Op`, named by IGA's opspec
//! table of the platform), execution size, predicate, and its operands'
//! kinds, registers, regions, types and immediates, as IGA's JSON
//! formatter writes them (a ternary's short regions completed, no region
//! or type where IGA leaves them implicit). The instructions whose JSON
//! needs more than these fields (sends, whose message IGA decodes into
//! `load.ugm...` with its address and data; branches, with their labels;
//! `math`, `bfn`, `dpas`, `sync` and macros, with their subfunctions;
//! operands in registers whose regions the KernelView API does not give)
//! are formatted by IGA as the JSON of that one instruction
//! (`kv_get_inst_syntax`), and read as [`crate::igajson`] reads them:
//! the same text, so the same fields. Both IGAs (IGC 1's, whose JSON is
//! version 1.0, and IGC 2's, 2.0) have the API; the JSON's version and the
//! value IGA gives the GRF register file (IGA 2 has one more register file
//! before it) are read from the instructions formatted so.
//!
//! Blocks are IGA's (`kv_is_inst_target`: a block starts at each), labelled
//! as IGA's JSON labels them (`L` and the byte offset, four digits at
//! least); with version 2.0 each block's successors are those IGA's JSON
//! lists, by the same rules.

use crate::decoded::{add_entry_block, type_bits, Block, Code, Inst, Operand};
use crate::igajson;
use crate::mix::is_branch;
use libloading::Library;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Mutex};

/// Why the KernelView API gave no [`Code`] (the caller then has IGA's
/// JSON of the code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    #[error("IGA's library has no KernelView API ({0})")]
    Missing(&'static str),
    #[error("IGA's KernelView cannot decode the code (status {status}): {messages}")]
    Decode { status: i32, messages: String },
    #[error("IGA's KernelView: {0}")]
    Unexpected(String),
}

// kv.h, iga.h
type Kv = *mut c_void;
type LabelFn = unsafe extern "C" fn(i32, *mut c_void) -> *const c_char;
type CreateFn =
    unsafe extern "C" fn(u32, *const c_void, usize, *mut i32, *mut c_char, usize, u32) -> Kv;
type DeleteFn = unsafe extern "C" fn(Kv);
type PcFn = unsafe extern "C" fn(Kv, i32) -> i32;
type PcUFn = unsafe extern "C" fn(Kv, i32) -> u32;
type SrcFn = unsafe extern "C" fn(Kv, i32, u32) -> i32;
type SrcUFn = unsafe extern "C" fn(Kv, i32, u32) -> u32;
type SyntaxFn =
    unsafe extern "C" fn(Kv, i32, *mut c_char, usize, u32, Option<LabelFn>, *mut c_void) -> usize;
type DstRegionFn = unsafe extern "C" fn(Kv, i32, *mut u32) -> i32;
type SrcRegionFn = unsafe extern "C" fn(Kv, i32, u32, *mut u32, *mut u32, *mut u32) -> i32;
type ImmFn = unsafe extern "C" fn(Kv, i32, u32, *mut u64) -> i32;
type OpspecsFn = unsafe extern "C" fn(u32, *mut *const c_void, *mut usize) -> i32;
type OpspecOpFn = unsafe extern "C" fn(*const c_void, *mut u32) -> i32;
type OpspecTextFn = unsafe extern "C" fn(*const c_void, *mut c_char, *mut usize) -> i32;
type PlatformNamesFn = unsafe extern "C" fn(u32, usize, *mut *const c_char, *mut usize) -> i32;

/// `iga::Operand::Kind`.
const KIND_DIRECT: u32 = 1;
const KIND_MACRO: u32 = 2;
const KIND_INDIRECT: u32 = 3;
const KIND_IMMEDIATE: u32 = 4;
/// `iga::Region`: `VT_VxH`, `VT_INVALID`, `WI_INVALID`, `HZ_INVALID`.
const VT_VXH: u32 = 31;
const VT_INVALID: u32 = 63;
const WI_INVALID: u32 = 31;
const HZ_INVALID: u32 = 15;

/// The KernelView functions of an IGA library.
pub struct Api {
    create: CreateFn,
    delete: DeleteFn,
    inst_size: PcFn,
    is_target: PcUFn,
    syntax: SyntaxFn,
    opcode: PcUFn,
    exec_size: PcUFn,
    predicate: PcUFn,
    has_dst: PcFn,
    dst_reg: PcFn,
    dst_sub: PcFn,
    dst_type: PcUFn,
    dst_file: PcUFn,
    dst_kind: PcUFn,
    dst_region: DstRegionFn,
    sources: PcFn,
    src_reg: SrcFn,
    src_sub: SrcFn,
    src_type: SrcUFn,
    src_file: SrcUFn,
    src_kind: SrcUFn,
    src_region: SrcRegionFn,
    src_imm: ImmFn,
    opspecs: OpspecsFn,
    opspec_op: OpspecOpFn,
    opspec_mnemonic: OpspecTextFn,
    platform_names: PlatformNamesFn,
    /// Per platform (`iga_gen`): IGA's mnemonic of each `Op`, and IGA's
    /// name of the platform.
    tables: Mutex<HashMap<u32, Arc<Table>>>,
}

/// What IGA says of one platform.
struct Table {
    mnemonics: HashMap<u32, String>,
    name: String,
}

impl Api {
    /// The KernelView and opspec functions of `lib`, or the first it lacks.
    pub fn load(lib: &Library) -> Result<Api, KvError> {
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the type is the function's prototype in kv.h or
                // iga.h (kv_create with its trailing swsb_enc_mode, a
                // uint32_t enum); the pointer is used only while `lib`
                // lives (the `Iga` that holds this keeps its library).
                let s: libloading::Symbol<$t> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|_| KvError::Missing($name))?;
                *s
            }};
        }
        Ok(Api {
            create: sym!(CreateFn, "kv_create"),
            delete: sym!(DeleteFn, "kv_delete"),
            inst_size: sym!(PcFn, "kv_get_inst_size"),
            is_target: sym!(PcUFn, "kv_is_inst_target"),
            syntax: sym!(SyntaxFn, "kv_get_inst_syntax"),
            opcode: sym!(PcUFn, "kv_get_opcode"),
            exec_size: sym!(PcUFn, "kv_get_execution_size"),
            predicate: sym!(PcUFn, "kv_get_predicate"),
            has_dst: sym!(PcFn, "kv_get_has_destination"),
            dst_reg: sym!(PcFn, "kv_get_destination_register"),
            dst_sub: sym!(PcFn, "kv_get_destination_sub_register"),
            dst_type: sym!(PcUFn, "kv_get_destination_data_type"),
            dst_file: sym!(PcUFn, "kv_get_destination_register_type"),
            dst_kind: sym!(PcUFn, "kv_get_destination_register_kind"),
            dst_region: sym!(DstRegionFn, "kv_get_destination_region"),
            sources: sym!(PcFn, "kv_get_number_sources"),
            src_reg: sym!(SrcFn, "kv_get_source_register"),
            src_sub: sym!(SrcFn, "kv_get_source_sub_register"),
            src_type: sym!(SrcUFn, "kv_get_source_data_type"),
            src_file: sym!(SrcUFn, "kv_get_source_register_type"),
            src_kind: sym!(SrcUFn, "kv_get_source_register_kind"),
            src_region: sym!(SrcRegionFn, "kv_get_source_region"),
            src_imm: sym!(ImmFn, "kv_get_source_immediate"),
            opspecs: sym!(OpspecsFn, "iga_opspec_enumerate"),
            opspec_op: sym!(OpspecOpFn, "iga_opspec_op"),
            opspec_mnemonic: sym!(OpspecTextFn, "iga_opspec_mnemonic"),
            platform_names: sym!(PlatformNamesFn, "iga_platform_names"),
            tables: Mutex::default(),
        })
    }

    /// IGA's opspecs of platform `gen`, made once.
    fn table(&self, gen: u32) -> Result<Arc<Table>, KvError> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = tables.get(&gen) {
            return Ok(Arc::clone(t));
        }
        let t = Arc::new(Table {
            mnemonics: self.mnemonics(gen)?,
            name: self.platform_name(gen),
        });
        tables.insert(gen, Arc::clone(&t));
        Ok(t)
    }

    fn mnemonics(&self, gen: u32) -> Result<HashMap<u32, String>, KvError> {
        let mut n: usize = 0;
        // SAFETY: a null array asks for the count only, written to n.
        let st = unsafe { (self.opspecs)(gen, std::ptr::null_mut(), &mut n) };
        if st != 0 || n == 0 || n > 4096 {
            return Err(KvError::Unexpected(format!(
                "no opspecs for iga_gen 0x{gen:08x} (status {st})"
            )));
        }
        let mut ops: Vec<*const c_void> = vec![std::ptr::null(); n];
        let mut len = n;
        // SAFETY: ops has room for len handles; IGA writes at most len.
        let st = unsafe { (self.opspecs)(gen, ops.as_mut_ptr(), &mut len) };
        if st != 0 {
            return Err(KvError::Unexpected(format!("iga_opspec_enumerate: {st}")));
        }
        let mut out = HashMap::new();
        for &os in ops.iter().take(len.min(n)) {
            let mut op = 0u32;
            let mut buf = [0 as c_char; 64];
            let mut cap = buf.len();
            // SAFETY: os is a handle IGA gave for this platform; op, buf
            // (cap bytes) and cap are valid; IGA NUL-terminates within cap.
            let ok = unsafe {
                (self.opspec_op)(os, &mut op) == 0
                    && (self.opspec_mnemonic)(os, buf.as_mut_ptr(), &mut cap) == 0
            };
            if ok && cap <= buf.len() {
                // SAFETY: NUL-terminated within buf (checked length).
                let m = unsafe { CStr::from_ptr(buf.as_ptr()) };
                out.insert(op, m.to_string_lossy().into_owned());
            }
        }
        Ok(out)
    }

    /// IGA's first name of platform `gen` (`xehpc`), as its JSON names it.
    fn platform_name(&self, gen: u32) -> String {
        let mut names: [*const c_char; 8] = [std::ptr::null(); 8];
        let mut needed = 0usize;
        // SAFETY: names has room for 8 pointers (its size in bytes is
        // passed); IGA writes static strings' pointers.
        let st = unsafe {
            (self.platform_names)(
                gen,
                std::mem::size_of_val(&names),
                names.as_mut_ptr(),
                &mut needed,
            )
        };
        if st != 0 || names[0].is_null() {
            return String::new();
        }
        // SAFETY: a NUL-terminated string IGA keeps for its lifetime.
        unsafe { CStr::from_ptr(names[0]) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A kernel view, deleted when dropped.
struct View<'a> {
    kv: Kv,
    api: &'a Api,
}

impl View<'_> {
    /// `f` (a `kv_get_*` function of an instruction) at `pc`.
    fn at<T>(&self, f: unsafe extern "C" fn(Kv, i32) -> T, pc: i32) -> T {
        // SAFETY: a live view; each `kv_get_*` function given here looks
        // the offset up and returns its error value for one that is no
        // instruction's.
        unsafe { f(self.kv, pc) }
    }

    /// `f` (a `kv_get_source_*` function) of source `ix` at `pc`.
    fn src<T>(&self, f: unsafe extern "C" fn(Kv, i32, u32) -> T, pc: i32, ix: u32) -> T {
        // SAFETY: as in `at`; each checks `ix` against the instruction's
        // source count too.
        unsafe { f(self.kv, pc, ix) }
    }
}

impl Drop for View<'_> {
    fn drop(&mut self) {
        // SAFETY: made by kv_create, deleted once.
        unsafe { (self.api.delete)(self.kv) };
    }
}

/// The ops whose JSON needs more than their operands' fields: sends
/// (their messages), branches (labels), subfunctions, macros.
fn needs_json(mnemonic: &str) -> bool {
    mnemonic.starts_with("send")
        || is_branch(mnemonic)
        || matches!(
            mnemonic,
            "math"
                | "bfn"
                | "dpas"
                | "dpasw"
                | "bdpas"
                | "sync"
                | "madm"
                | "nop"
                | "illegal"
                | "wait"
        )
}

/// The formatting options of IGA's JSON of an instruction: those the
/// collector gives its JSON of a kernel (see [`super::iga`]).
const JSON_OPTS: u32 = 0x40 | 0x4 | 0x80 | 0x200;

/// What the instructions formatted as JSON tell of this IGA.
struct Dialect {
    /// The JSON's version (`1.0`, `2.0`).
    version: &'static str,
    /// IGA's `RegName::GRF_R`.
    grf: u32,
}

/// `code` (one kernel's machine code for platform `gen`) decoded.
pub fn decode(api: &Api, gen: u32, code: &[u8]) -> Result<Code, KvError> {
    let table = api.table(gen)?;
    let view = create(api, gen, code)?;
    let pcs = instruction_pcs(&view, code.len())?;
    // Each instruction's mnemonic when its fields give it whole.
    let by_fields: Vec<Option<&str>> = pcs
        .iter()
        .map(|&pc| {
            let op = view.at(api.opcode, pc);
            table
                .mnemonics
                .get(&op)
                .map(String::as_str)
                .filter(|m| !needs_json(m))
        })
        .collect();
    let mut insts: Vec<Option<Inst>> = vec![None; pcs.len()];
    let mut dialect = None;
    for (i, &pc) in pcs.iter().enumerate() {
        if by_fields[i].is_none() {
            let (inst, text) = json_inst(&view, pc)?;
            if dialect.is_none() {
                dialect = learn(&view, pc, &inst, &text);
            }
            insts[i] = Some(inst);
        }
    }
    let dialect = dialect.ok_or_else(|| {
        KvError::Unexpected("no send whose address is a GRF register to read IGA by".into())
    })?;
    let mut out = Vec::with_capacity(pcs.len());
    for (i, &pc) in pcs.iter().enumerate() {
        let inst = match (insts[i].take(), by_fields[i]) {
            (Some(inst), _) => inst,
            (None, op) => match op.and_then(|op| fields(&view, pc, op, &dialect)) {
                Some(inst) => inst,
                None => json_inst(&view, pc)?.0,
            },
        };
        out.push(inst);
    }
    Ok(assemble(&view, &pcs, code.len(), out, &dialect, &table))
}

/// What `inst` (at `pc`, IGA's JSON `text`), a send whose address operand
/// is a GRF register, tells of this IGA: the register file value that
/// operand has is IGA's GRF; version 1.0 writes `fm` (the flag modifier) for every instruction, 2.0
/// only for one that has a flag modifier, which no send has.
fn learn(view: &View, pc: i32, inst: &Inst, text: &str) -> Option<Dialect> {
    let Some(Operand::Address { reg: Some(_), .. }) = inst.srcs.first() else {
        return None;
    };
    let kind = view.src(view.api.src_kind, pc, 0);
    let grf = view.src(view.api.src_file, pc, 0);
    (kind == KIND_DIRECT).then_some(Dialect {
        version: if text.contains("\"fm\":") {
            "1.0"
        } else {
            "2.0"
        },
        grf,
    })
}

/// IGA's view of `code`, or why it has none.
fn create<'a>(api: &'a Api, gen: u32, code: &[u8]) -> Result<View<'a>, KvError> {
    let mut status: i32 = 0;
    let mut errors = vec![0 as c_char; 4096];
    // SAFETY: code, status and errors (its length passed) outlive the
    // call; swsb_enc_mode 0 (SWSBInvalidMode) lets IGA take the
    // platform's; IGA copies the code it decodes.
    let kv = unsafe {
        (api.create)(
            gen,
            code.as_ptr().cast(),
            code.len(),
            &mut status,
            errors.as_mut_ptr(),
            errors.len(),
            0,
        )
    };
    // SAFETY: IGA NUL-terminates what it writes within the buffer, which
    // was zeroed.
    let messages = unsafe { CStr::from_ptr(errors.as_ptr()) }
        .to_string_lossy()
        .trim()
        .to_string();
    if kv.is_null() {
        return Err(KvError::Decode { status, messages });
    }
    let view = View { kv, api };
    if status != 0 {
        return Err(KvError::Decode { status, messages });
    }
    Ok(view)
}

/// The byte offset of each instruction, in order.
fn instruction_pcs(view: &View, len: usize) -> Result<Vec<i32>, KvError> {
    let len = i32::try_from(len).map_err(|_| KvError::Unexpected("code over 2 GiB".into()))?;
    let mut pcs = Vec::with_capacity(len as usize / 12);
    let mut pc = 0i32;
    while pc < len {
        let size = view.at(view.api.inst_size, pc);
        if size <= 0 {
            break;
        }
        pcs.push(pc);
        pc += size;
    }
    Ok(pcs)
}

/// IGA's JSON of the instruction at `pc`, read, and its text.
fn json_inst(view: &View, pc: i32) -> Result<(Inst, String), KvError> {
    let text = syntax(view, pc, JSON_OPTS)?;
    let inst = igajson::parse_inst(&text)
        .map_err(|e| KvError::Unexpected(format!("its JSON of the instruction at {pc}: {e}")))?;
    Ok((inst, text))
}

/// IGA's syntax of the instruction at `pc` with formatting options `opts`.
fn syntax(view: &View, pc: i32, opts: u32) -> Result<String, KvError> {
    let mut buf: Vec<u8> = vec![0; 2048];
    loop {
        // SAFETY: a live view; buf has buf.len() bytes, which IGA fills
        // with at most that many, NUL included; no label callback.
        let n = unsafe {
            (view.api.syntax)(
                view.kv,
                pc,
                buf.as_mut_ptr().cast(),
                buf.len(),
                opts,
                None,
                std::ptr::null_mut(),
            )
        };
        if n == 0 {
            return Err(KvError::Unexpected(format!("no syntax at {pc}")));
        }
        if n <= buf.len() {
            buf.truncate(n - 1);
            return String::from_utf8(buf)
                .map_err(|_| KvError::Unexpected(format!("syntax at {pc} is not UTF-8")));
        }
        if n > 1 << 24 {
            return Err(KvError::Unexpected(format!("syntax at {pc}: {n} bytes")));
        }
        buf = vec![0; n];
    }
}

/// The instruction at `pc` (of mnemonic `op`) from its fields, as IGA's
/// JSON gives it; `None` when its JSON has what the fields do not give.
fn fields(view: &View, pc: i32, op: &str, d: &Dialect) -> Option<Inst> {
    let api = view.api;
    let es = view.at(api.exec_size, pc);
    let predicated = view.at(api.predicate, pc) != 0;
    let dst = match view.at(api.has_dst, pc) {
        1 => Some(destination(view, pc, d)?),
        0 => None,
        _ => return None,
    };
    let n = u32::try_from(view.at(api.sources, pc)).ok()?;
    let srcs = (0..n)
        .map(|ix| source(view, pc, ix, d))
        .collect::<Option<Vec<_>>>()?;
    Some(Inst {
        op: op.to_string(),
        subop: String::new(),
        es,
        predicated,
        dst,
        srcs,
        ..Inst::default()
    })
}

/// The destination of a non-send instruction.
fn destination(view: &View, pc: i32, d: &Dialect) -> Option<Operand> {
    let api = view.api;
    match view.at(api.dst_kind, pc) {
        KIND_DIRECT => {}
        KIND_MACRO | KIND_INDIRECT => return Some(Operand::Other),
        _ => return None,
    }
    let mut hz = 0u32;
    // SAFETY: a live view; the function checks the offset; hz is valid
    // for the call.
    let got = unsafe { (api.dst_region)(view.kv, pc, &mut hz) };
    let (file, reg, sub) = (
        view.at(api.dst_file, pc),
        view.at(api.dst_reg, pc),
        view.at(api.dst_sub, pc),
    );
    let ty = view.at(api.dst_type, pc);
    if got != 0 || reg < 0 || sub < 0 {
        return None;
    }
    // Version 2.0 leaves out an invalid region; 1.0 writes its `Hz`.
    let rgn = (d.version == "1.0" || hz != HZ_INVALID).then_some((0, 0, hz));
    Some(Operand::Region {
        grf: file == d.grf,
        reg: reg as u32,
        sub: sub as u32,
        rgn,
        bits: type_name(ty).and_then(type_bits),
    })
}

/// Source `ix` of a non-send instruction.
fn source(view: &View, pc: i32, ix: u32, d: &Dialect) -> Option<Operand> {
    let api = view.api;
    match view.src(api.src_kind, pc, ix) {
        KIND_DIRECT => {}
        KIND_MACRO | KIND_INDIRECT => return Some(Operand::Other),
        KIND_IMMEDIATE => return immediate(view, pc, ix),
        _ => return None,
    }
    let (mut v, mut w, mut h) = (0u32, 0u32, 0u32);
    // SAFETY: a live view; the function checks the offset and the source
    // index; v, w, h are valid for the call. It gives the region of GRF,
    // `sr` and `acc` registers only (else -1).
    let got = unsafe { (api.src_region)(view.kv, pc, ix, &mut v, &mut w, &mut h) };
    let (file, reg, sub) = (
        view.src(api.src_file, pc, ix),
        view.src(api.src_reg, pc, ix),
        view.src(api.src_sub, pc, ix),
    );
    let ty = view.src(api.src_type, pc, ix);
    if got != 0 || reg < 0 || sub < 0 {
        return None;
    }
    Some(Operand::Region {
        grf: file == d.grf,
        reg: reg as u32,
        sub: sub as u32,
        rgn: json_region(v, w, h),
        bits: type_name(ty).and_then(type_bits),
    })
}

/// A source region as IGA's JSON writes it: a ternary's `<H>` as
/// `<H;1,0>` and `<V;H>` with its width, no vertical stride for `VxH`.
fn json_region(v: u32, w: u32, h: u32) -> Option<(u32, u32, u32)> {
    let (v, w, h) = if v == VT_INVALID && w == WI_INVALID {
        if h == 0 {
            (0, 1, 0)
        } else {
            (h, 1, 0)
        }
    } else if w == WI_INVALID {
        // 1 for <0;0>, else V / H (V when H is 0), in IGA's 5-bit field.
        let w = if v == 0 && h == 0 {
            1
        } else {
            v.checked_div(h).unwrap_or(v)
        };
        (v, w & 31, h)
    } else {
        (v, w, h)
    };
    (v != VT_VXH).then_some((v, w, h))
}

/// An immediate source as IGA's JSON writes it, by its type (`None`: a
/// type whose JSON the fields do not give).
fn immediate(view: &View, pc: i32, ix: u32) -> Option<Operand> {
    let mut imm = 0u64;
    // SAFETY: a live view; the function checks the offset and the source
    // index; imm is valid for the call.
    let got = unsafe { (view.api.src_imm)(view.kv, pc, ix, &mut imm) };
    let ty = view.src(view.api.src_type, pc, ix);
    if got != 0 {
        return None;
    }
    let value = match type_name(ty)? {
        "ub" | "bf8" | "hf8" => imm & 0xff,
        "uw" | "bf" | "hf" => imm & 0xffff,
        "ud" | "f" | "tf32" | "v" | "uv" | "vf" => imm & 0xffff_ffff,
        "uq" | "df" => imm,
        "w" => imm as u16 as i16 as i64 as u64,
        "d" => imm as u32 as i32 as i64 as u64,
        "q" => imm,
        // `b` IGA writes as a character; the rest it does not write.
        _ => return None,
    };
    Some(Operand::Immediate(value))
}

/// IGA's name of an `iga::Type` (the same values in IGA 1 and 2).
fn type_name(t: u32) -> Option<&'static str> {
    const NAMES: [&str; 27] = [
        "", "u1", "u2", "u4", "s2", "s4", "ub", "b", "uw", "w", "ud", "d", "uq", "q", "hf", "qf",
        "bf", "hf8", "bf8", "tf32", "f", "df", "nf", "v", "uv", "vf", "e2m1",
    ];
    NAMES.get(t as usize).copied().filter(|n| !n.is_empty())
}

/// The [`Code`] of instructions `insts` at `pcs` (code of `len` bytes).
fn assemble(
    view: &View,
    pcs: &[i32],
    len: usize,
    insts: Vec<Inst>,
    d: &Dialect,
    table: &Table,
) -> Code {
    let mut blocks = Vec::new();
    let mut starts = pcs
        .iter()
        .enumerate()
        .map(|(i, &pc)| (i, pc))
        .collect::<Vec<_>>();
    // A label past the last instruction starts an empty block.
    starts.push((pcs.len(), len as i32));
    for (i, pc) in starts {
        if view.at(view.api.is_target, pc) != 0 {
            blocks.push(Block {
                label: format!("L{pc:04}"),
                first: i,
                succs: None,
            });
        }
    }
    let mut code = Code {
        version: d.version.to_string(),
        platform: table.name.clone(),
        blocks,
        insts,
    };
    if d.version != "1.0" {
        successors(&mut code);
    }
    add_entry_block(&mut code);
    code
}

/// Each block's successors as IGA's JSON 2.0 lists them: a branch's label
/// targets, and the next block unless the branch is an unpredicated
/// `jmpi`; after another instruction, the next block only when that
/// instruction ends the thread or is predicated (IGA's rule); after an
/// empty block, the next.
fn successors(code: &mut Code) {
    let n = code.blocks.len();
    let by_label: HashMap<&str, usize> = code
        .blocks
        .iter()
        .enumerate()
        .map(|(b, x)| (x.label.as_str(), b))
        .collect();
    let mut all = Vec::with_capacity(n);
    for b in 0..n {
        let first = code.blocks[b].first;
        let end = code.blocks.get(b + 1).map_or(code.insts.len(), |x| x.first);
        let mut succs = Vec::new();
        let next = (b + 1 < n).then_some(b + 1);
        match code.insts.get(first..end).and_then(|s| s.last()) {
            None => succs.extend(next),
            Some(last) if is_branch(&last.op) => {
                succs.extend(last.targets.iter().filter_map(|t| by_label.get(t.as_str())));
                if last.op != "jmpi" || last.predicated {
                    succs.extend(next);
                }
            }
            Some(last) => {
                if last.eot || last.predicated {
                    succs.extend(next);
                }
            }
        }
        succs.sort_unstable();
        succs.dedup();
        all.push(succs);
    }
    for (b, s) in code.blocks.iter_mut().zip(all) {
        b.succs = Some(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ternary's short regions completed as IGA's JSON writes them.
    #[test]
    fn regions_as_igas_json_writes_them() {
        assert_eq!(json_region(8, 8, 1), Some((8, 8, 1)));
        // `<H>` (src2): `<H;1,0>`, `<0>`: `<0;1,0>`.
        assert_eq!(json_region(VT_INVALID, WI_INVALID, 1), Some((1, 1, 0)));
        assert_eq!(json_region(VT_INVALID, WI_INVALID, 0), Some((0, 1, 0)));
        // `<V;H>`: the width V / H, V when H is 0, 1 for `<0;0>`.
        assert_eq!(json_region(8, WI_INVALID, 1), Some((8, 8, 1)));
        assert_eq!(json_region(2, WI_INVALID, 0), Some((2, 2, 0)));
        assert_eq!(json_region(0, WI_INVALID, 0), Some((0, 1, 0)));
        assert_eq!(json_region(32, WI_INVALID, 0), Some((32, 0, 0)));
        // `VxH` has no vertical stride: no region.
        assert_eq!(json_region(VT_VXH, 1, 0), None);
    }

    #[test]
    fn types_by_igas_values() {
        assert_eq!(type_name(0), None);
        assert_eq!(type_name(10), Some("ud"));
        assert_eq!(type_name(20), Some("f"));
        assert_eq!(type_name(26), Some("e2m1"));
        assert_eq!(type_name(27), None);
    }

    /// A library without the KernelView API: named, no panic (the JSON
    /// route serves then).
    #[test]
    fn a_library_without_the_api_is_named() {
        // SAFETY: libc's initialisers are the process's own, already run.
        let lib = unsafe { Library::new("libc.so.6") }.unwrap();
        assert!(matches!(
            Api::load(&lib),
            Err(KvError::Missing("kv_create"))
        ));
    }
}
