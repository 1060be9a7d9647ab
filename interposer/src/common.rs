//! What both APIs and the state share: the handle and group count types,
//! the module formats a module event names, the answers of a hooked
//! function (`hook!`), and the SPIR-V section of a program binary (NEO's
//! binaries carry the SPIR-V they were compiled from, whichever API built
//! them).

use std::ffi::c_void;

/// Any Level Zero handle (`ze_*_handle_t`).
pub type Handle = *mut c_void;

/// `ze_group_count_t`: a launch's group count (Level Zero's), the shape
/// the launch path compares with each handle's last.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct GroupCount {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `ze_module_format_t`: a module's input, SPIR-V or native (OpenCL's
/// programs are recorded as modules of one of the two).
pub const ZE_MODULE_FORMAT_IL_SPIRV: u32 = 0;
pub const ZE_MODULE_FORMAT_NATIVE: u32 = 1;

/// The status code an API's functions answer (Level Zero's `ZeResult`,
/// OpenCL's `ClInt`), as the hooks answer it (`hook!`).
pub trait Status: Copy + PartialEq {
    /// Success: the hook records.
    const SUCCESS: Self;
    /// What a hook answers when it has no real function to call.
    const MISSING: Self;
}

/// Section type of a program binary's SPIR-V: NEO's OpenCL ELF
/// (`SPIRV Object`, NEO 22.43) and zebin (`.spv`, NEO 26) alike.
pub const SHT_SPIRV: u32 = 0xff00_0009;

/// The SPIR-V a program binary carries: the section IGC compiled, in NEO's
/// OpenCL ELF (NEO 22.43) and in zebin (NEO 26), byte for byte the `.spv`
/// of IGC's dumps. `None` for a binary without one.
pub fn spirv_section(elf: &[u8]) -> Option<&[u8]> {
    let word = |at: usize, n: usize| -> Option<u64> {
        let b = elf.get(at..at.checked_add(n)?)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b);
        Some(u64::from_le_bytes(v))
    };
    // ELF64, little-endian.
    if elf.get(..6) != Some(b"\x7fELF\x02\x01") {
        return None;
    }
    let (shoff, shentsize, shnum) = (word(0x28, 8)?, word(0x3a, 2)?, word(0x3c, 2)?);
    (0..shnum).find_map(|i| {
        let h = usize::try_from(shoff.checked_add(i.checked_mul(shentsize)?)?).ok()?;
        if word(h + 4, 4)? != u64::from(SHT_SPIRV) {
            return None;
        }
        let (off, size) = (word(h + 0x18, 8)?, word(h + 0x20, 8)?);
        let start = usize::try_from(off).ok()?;
        elf.get(start..start.checked_add(usize::try_from(size).ok()?)?)
    })
}

#[cfg(test)]
mod tests {
    use super::spirv_section;

    /// An ELF64 with one section header of `kind` over `payload`.
    fn elf(kind: u32, payload: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 0x40];
        b[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let data = b.len();
        b.extend_from_slice(payload);
        let shoff = b.len();
        b[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        b[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&[0u8; 64]);
        let mut h = vec![0u8; 64];
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[0x18..0x20].copy_from_slice(&(data as u64).to_le_bytes());
        h[0x20..0x28].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        b.extend_from_slice(&h);
        b
    }

    #[test]
    fn the_spirv_section_is_found_by_its_type_and_bounds_are_checked() {
        assert_eq!(
            spirv_section(&elf(0xff00_0009, b"spv!")),
            Some(&b"spv!"[..])
        );
        assert_eq!(spirv_section(&elf(1, b"code")), None);
        // The last header cut inside its offset field.
        let mut cut = elf(0xff00_0009, b"spv!");
        cut.truncate(cut.len() - 64 + 0x1c);
        assert_eq!(spirv_section(&cut), None);
        // A section past the end of the file.
        let mut far = elf(0xff00_0009, b"spv!");
        let n = far.len();
        far[n - 0x28..n - 0x20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(spirv_section(&far), None);
        assert_eq!(spirv_section(b"not an elf"), None);
    }
}
