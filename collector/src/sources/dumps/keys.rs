//! The key a module's dumps are found by in a [`super::DumpFolder`]: its SPIR-V's
//! SHA-256, or for a module linked from several SPIR-V inputs a key of its
//! own (`super::super::linked`), so that the standalone compile of its
//! first input (whose SHA-256 the record gives the module) is never taken
//! for it.

use std::borrow::Cow;
use xpu_asm_record::read::Module;

/// Whether `m` was linked from several SPIR-V inputs.
pub fn is_linked(m: &Module) -> bool {
    m.format == "spirv" && m.inputs.len() > 1
}

/// The key a module's dumps are found by in a [`DumpFolder`]: its SPIR-V's
/// SHA-256 (lower case), or for a linked module one that names every
/// input.
pub fn dump_key(m: &Module) -> Cow<'_, str> {
    if !is_linked(m) {
        return Cow::Owned(m.sha256.to_ascii_lowercase());
    }
    let mut key = String::from("linked");
    for i in &m.inputs {
        key.push(':');
        key.push_str(&i.sha256.to_ascii_lowercase());
    }
    Cow::Owned(key)
}
