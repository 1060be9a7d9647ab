//! Specialization constants, part of what a module is built from: Level
//! Zero's `ze_module_constants_t` (ids and pointers to values whose sizes
//! the SPIR-V's types give) and OpenCL's `clSetProgramSpecializationConstant`
//! (each value with its size), recorded on the module event as
//! `"spec_constants":[{"id":N,"value":"<hex of its bytes>"}]`, so that the
//! module can be built again exactly (`xpu-asm-run port`).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// One specialization constant: its SpecId and the bytes of its value, as
/// the driver reads them (little-endian, its type's size).
pub type SpecConstant = (u32, Vec<u8>);

/// `ze_module_constants_t`.
#[repr(C)]
pub struct ZeModuleConstants {
    pub num_constants: u32,
    pub p_constant_ids: *const u32,
    pub p_constant_values: *const *const c_void,
}

const SPIRV_MAGIC: u32 = 0x0723_0203;
const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_SPEC_CONSTANT_TRUE: u32 = 48;
const OP_SPEC_CONSTANT_FALSE: u32 = 49;
const OP_SPEC_CONSTANT: u32 = 50;
const OP_DECORATE: u32 = 71;
const DECORATION_SPEC_ID: u32 = 1;

/// The size in bytes of each specialization constant of `spirv`, by
/// SpecId: a scalar's width (a boolean: one byte, as NEO takes it). Empty
/// for what is not SPIR-V.
pub fn spec_constant_sizes(spirv: &[u8]) -> HashMap<u32, usize> {
    let words: Vec<u32> = spirv
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut sizes = HashMap::new();
    if words.len() < 5 || words[0] != SPIRV_MAGIC {
        return sizes;
    }
    // Result id -> SpecId; type id -> size; result id -> its type.
    let mut spec_ids: HashMap<u32, u32> = HashMap::new();
    let mut type_sizes: HashMap<u32, usize> = HashMap::new();
    let mut constant_types: Vec<(u32, u32)> = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if count == 0 || at + count > words.len() {
            break;
        }
        let w = &words[at..at + count];
        match (op, w.len()) {
            (OP_DECORATE, 4..) if w[2] == DECORATION_SPEC_ID => {
                spec_ids.insert(w[1], w[3]);
            }
            (OP_TYPE_BOOL, 2..) => {
                type_sizes.insert(w[1], 1);
            }
            (OP_TYPE_INT | OP_TYPE_FLOAT, 3..) => {
                type_sizes.insert(w[1], (w[2] as usize).div_ceil(8));
            }
            (OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT, 3..) => {
                constant_types.push((w[2], w[1]));
            }
            _ => {}
        }
        at += count;
    }
    for (result, ty) in constant_types {
        if let (Some(id), Some(size)) = (spec_ids.get(&result), type_sizes.get(&ty)) {
            sizes.insert(*id, *size);
        }
    }
    sizes
}

/// The constants of a Level Zero module built from `spirv`, each value
/// read at its type's size. An id the SPIR-V does not declare is left out
/// (the driver has nothing to specialize with it).
///
/// # Safety
/// `p` is NULL or a `ze_module_constants_t` the driver accepted: its
/// arrays `num_constants` long, each value readable for its type's size.
pub unsafe fn from_ze(p: *const ZeModuleConstants, spirv: &[u8]) -> Vec<SpecConstant> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: per this function's contract.
    let c = unsafe { &*p };
    if c.num_constants == 0 || c.p_constant_ids.is_null() || c.p_constant_values.is_null() {
        return Vec::new();
    }
    let sizes = spec_constant_sizes(spirv);
    let mut out = Vec::new();
    for i in 0..c.num_constants as usize {
        // SAFETY: arrays of `num_constants` entries, per the API.
        let (id, value) = unsafe { (*c.p_constant_ids.add(i), *c.p_constant_values.add(i)) };
        let Some(size) = sizes.get(&id) else { continue };
        if value.is_null() {
            continue;
        }
        // SAFETY: the driver read `size` bytes from here.
        let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), *size) };
        set(&mut out, id, bytes);
    }
    out
}

/// Sets constant `id` in `list` (a later value replaces an earlier one, as
/// the drivers take it), keeping `list` ordered by id.
fn set(list: &mut Vec<SpecConstant>, id: u32, value: &[u8]) {
    match list.binary_search_by_key(&id, |(i, _)| *i) {
        Ok(at) => list[at].1 = value.to_vec(),
        Err(at) => list.insert(at, (id, value.to_vec())),
    }
}

/// OpenCL programs' constants, set before their build (a rare call: a
/// plain lock).
static PROGRAMS: Mutex<Option<HashMap<usize, Vec<SpecConstant>>>> = Mutex::new(None);

fn with_programs<T>(f: impl FnOnce(&mut HashMap<usize, Vec<SpecConstant>>) -> T) -> T {
    let mut g = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// `clSetProgramSpecializationConstant` succeeded on `program`.
pub fn program_constant_set(program: usize, id: u32, value: &[u8]) {
    with_programs(|p| set(p.entry(program).or_default(), id, value));
}

/// The constants set on `program` so far.
pub fn program_constants(program: usize) -> Vec<SpecConstant> {
    with_programs(|p| p.get(&program).cloned().unwrap_or_default())
}

/// A program handle made anew: the old program's constants go.
pub fn program_forgotten(program: usize) {
    with_programs(|p| p.remove(&program));
}

/// `,"spec_constants":[...]`, nothing when there are none.
pub fn push_json(line: &mut Vec<u8>, constants: &[SpecConstant]) {
    if constants.is_empty() {
        return;
    }
    line.extend_from_slice(b",\"spec_constants\":[");
    for (i, (id, value)) in constants.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(
            format!(
                "{{\"id\":{id},\"value\":\"{}\"}}",
                xpu_asm_record::hex(value)
            )
            .as_bytes(),
        );
    }
    line.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SPIR-V module declaring constants: SpecId 3 an int32, 7 a bool,
    /// 9 a double.
    pub fn spirv_with_constants() -> Vec<u8> {
        let op = |code: u32, operands: &[u32]| {
            let mut v = vec![((operands.len() as u32 + 1) << 16) | code];
            v.extend_from_slice(operands);
            v
        };
        let mut w = vec![SPIRV_MAGIC, 0x0001_0000, 0, 100, 0];
        w.extend(op(OP_DECORATE, &[10, DECORATION_SPEC_ID, 3]));
        w.extend(op(OP_DECORATE, &[11, DECORATION_SPEC_ID, 7]));
        w.extend(op(OP_DECORATE, &[12, DECORATION_SPEC_ID, 9]));
        w.extend(op(OP_TYPE_INT, &[1, 32, 1]));
        w.extend(op(OP_TYPE_BOOL, &[2]));
        w.extend(op(OP_TYPE_FLOAT, &[4, 64]));
        w.extend(op(OP_SPEC_CONSTANT, &[1, 10, 5]));
        w.extend(op(OP_SPEC_CONSTANT_FALSE, &[2, 11]));
        w.extend(op(OP_SPEC_CONSTANT, &[4, 12, 0, 0]));
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn sizes_come_from_the_types() {
        let s = spec_constant_sizes(&spirv_with_constants());
        assert_eq!(s, HashMap::from([(3, 4), (7, 1), (9, 8)]));
        assert!(spec_constant_sizes(b"not spir-v at all").is_empty());
        let cut = spirv_with_constants();
        assert_eq!(spec_constant_sizes(&cut[..cut.len() - 6]).len(), 2);
    }

    #[test]
    fn level_zero_values_are_read_at_their_sizes() {
        let ids = [9u32, 3, 42, 7];
        let (d, i, b) = (2.5f64, -2i32, 1u8);
        let values: [*const c_void; 4] = [
            (&d as *const f64).cast(),
            (&i as *const i32).cast(),
            std::ptr::null(),
            (&b as *const u8).cast(),
        ];
        let c = ZeModuleConstants {
            num_constants: 4,
            p_constant_ids: ids.as_ptr(),
            p_constant_values: values.as_ptr(),
        };
        // SAFETY: arrays of four, each value of its type's size.
        let got = unsafe { from_ze(&c, &spirv_with_constants()) };
        assert_eq!(
            got,
            vec![
                (3, (-2i32).to_le_bytes().to_vec()),
                (7, vec![1]),
                (9, 2.5f64.to_le_bytes().to_vec())
            ]
        );
        let mut line = Vec::new();
        push_json(&mut line, &got);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            ",\"spec_constants\":[{\"id\":3,\"value\":\"feffffff\"},{\"id\":7,\"value\":\"01\"},\
             {\"id\":9,\"value\":\"0000000000000440\"}]"
        );
        // SAFETY: NULL is allowed.
        assert!(unsafe { from_ze(std::ptr::null(), &[]) }.is_empty());
    }

    #[test]
    fn an_opencl_program_keeps_its_last_values_until_made_anew() {
        program_constant_set(0x51, 4, &[1, 0]);
        program_constant_set(0x51, 2, &[9]);
        program_constant_set(0x51, 4, &[7, 0]);
        assert_eq!(program_constants(0x51), vec![(2, vec![9]), (4, vec![7, 0])]);
        program_forgotten(0x51);
        assert!(program_constants(0x51).is_empty());
    }
}
