//! NEO's patch-token program binary (IGC's `patch_list.h` and
//! `patch_shared.h`, NEO's `patchtokens_decoder.cpp`), and the ELF that
//! wraps it.
//!
//! Layout, all little-endian `u32` unless said:
//!
//! * program header (28 bytes): magic `CTNI`, version, GFX core family,
//!   pointer size, number of kernels, stepping, patch list size; then the
//!   program's patch list;
//! * per kernel, a header (40 bytes): checksum, shader hash (`u64`), name
//!   size, patch list size, kernel heap size, general, dynamic and surface
//!   state heap sizes, unpadded kernel size; then the name (NUL-padded),
//!   the kernel heap (the code), the three state heaps, the patch list;
//! * a patch token: token number, total size, fields.

use super::platform::{Device, Platform};
use super::program::{u32_at, Format, NativeError, NativeKernel, Program};
use object::{Object, ObjectSection};

const MAGIC: &[u8; 4] = b"CTNI";
const PROGRAM_HEADER: usize = 28;
const KERNEL_HEADER: usize = 40;
const ELF_SECTION: &str = "Intel(R) OpenCL Device Binary";

// Patch token numbers and the offsets (from the token's start, its 8-byte
// header included) of the fields read.
const TOKEN_ALLOCATE_LOCAL_SURFACE: u32 = 15;
const LOCAL_SURFACE_SIZE_AT: usize = 12; // TotalInlineLocalMemorySize
const TOKEN_MEDIA_VFE_STATE: u32 = 18;
const VFE_SCRATCH_AT: usize = 12; // PerThreadScratchSpace
const TOKEN_EXECUTION_ENVIRONMENT: u32 = 23;
const EXEC_SIMD_AT: usize = 20; // LargestCompiledSIMDSize
const EXEC_BARRIERS_AT: usize = 28; // HasBarriers
const TOKEN_DATA_PARAMETER_BUFFER: u32 = 17;
const DATA_PARAMETER_TYPE_AT: usize = 8; // Type
const DATA_PARAMETER_ARG_AT: usize = 12; // ArgumentNumber
/// `DATA_PARAMETER_SUM_OF_LOCAL_MEMORY_OBJECT_ARGUMENT_SIZES`: the
/// argument it names is in local memory.
const DATA_PARAMETER_LOCAL_ARG_SIZES: u32 = 8;
const EXEC_GRF_AT: usize = 88; // NumGRFRequired
const TOKEN_ALLOCATE_STATELESS_PRIVATE_MEMORY: u32 = 38;
const PRIVATE_SIZE_AT: usize = 20; // PerThreadPrivateMemorySize
const PRIVATE_SIMT_AT: usize = 24; // IsSimtThread: the size is per SIMT lane

pub(crate) fn is_patchtokens(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The patch-token program inside NEO's ELF wrapper.
pub(crate) fn parse_elf(bytes: &[u8], device: Option<&Device>) -> Result<Program, NativeError> {
    let file = object::File::parse(bytes).map_err(|e| NativeError::Corrupt(format!("ELF: {e}")))?;
    let mut found = None;
    for s in file.sections() {
        let named = s.name_bytes().is_ok_and(|n| n == ELF_SECTION.as_bytes());
        let data = s.data();
        if named {
            found = Some(data.map_err(|e| {
                NativeError::Corrupt(format!("ELF section \"{ELF_SECTION}\": {e}"))
            })?);
            break;
        }
        if found.is_none() {
            if let Ok(d) = data {
                if is_patchtokens(d) {
                    found = Some(d);
                }
            }
        }
    }
    let spirv_only = file
        .sections()
        .any(|s| s.name_bytes().is_ok_and(|n| n == b"SPIRV Object"));
    match found {
        Some(program) => parse(program, device, Format::PatchTokensElf),
        None if spirv_only => Err(NativeError::NotNative(
            "NEO's program ELF with SPIR-V and no device binary".into(),
        )),
        None => Err(NativeError::Unsupported(format!(
            "an ELF file that is neither a zebin (machine 205) nor NEO's patch-token wrapper (no section \"{ELF_SECTION}\")"
        ))),
    }
}

/// A bare patch-token program.
pub(crate) fn parse(
    bytes: &[u8],
    device: Option<&Device>,
    format: Format,
) -> Result<Program, NativeError> {
    let corrupt = |what: String| NativeError::Corrupt(format!("patch-token program: {what}"));
    if bytes.len() < PROGRAM_HEADER || !is_patchtokens(bytes) {
        return Err(corrupt(format!(
            "{} bytes, shorter than its {PROGRAM_HEADER}-byte header",
            bytes.len()
        )));
    }
    let h = |i: usize| u32_at(bytes, 4 * i).unwrap_or(0);
    let (core, kernels_n, stepping, patch_list) = (h(2), h(4), h(5), h(6));
    let mut pos = PROGRAM_HEADER
        .checked_add(patch_list as usize)
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| {
            corrupt(format!(
                "its patch list ({patch_list} bytes) runs past its end ({} bytes)",
                bytes.len()
            ))
        })?;
    let mut kernels = Vec::new();
    for i in 0..kernels_n {
        let (k, next) = kernel(bytes, pos).map_err(|m| corrupt(format!("kernel {i}: {m}")))?;
        kernels.push(k);
        pos = next;
    }
    let platform = Platform::from_core_family(core, Some(stepping))
        .or_else(|| device.and_then(Device::platform));
    Ok(Program {
        format,
        platform,
        fat_entry: None,
        kernels,
    })
}

/// The kernel whose header is at `at`, and where the next one starts.
fn kernel(b: &[u8], at: usize) -> Result<(NativeKernel, usize), String> {
    if b.len().saturating_sub(at) < KERNEL_HEADER {
        return Err(format!(
            "its header at offset {at} runs past the end ({} bytes)",
            b.len()
        ));
    }
    let h = |i: usize| u32_at(b, at + 12 + 4 * i).unwrap_or(0) as usize;
    let (name_n, patch_n, heap_n) = (h(0), h(1), h(2));
    let (general_n, dynamic_n, surface_n, unpadded) = (h(3), h(4), h(5), h(6));
    let total = [name_n, heap_n, general_n, dynamic_n, surface_n, patch_n]
        .iter()
        .try_fold(KERNEL_HEADER, |acc, &n| acc.checked_add(n));
    let end = total
        .and_then(|t| at.checked_add(t))
        .filter(|&e| e <= b.len())
        .ok_or_else(|| {
            format!(
                "its sizes (name {name_n}, code {heap_n}, heaps {general_n}+{dynamic_n}+{surface_n}, patch list {patch_n}) run past the end ({} bytes)",
                b.len()
            )
        })?;
    let name_at = at + KERNEL_HEADER;
    let raw_name = &b[name_at..name_at + name_n];
    let name = raw_name
        .iter()
        .position(|&c| c == 0)
        .map_or(raw_name, |z| &raw_name[..z])
        .to_vec();
    // A kernel's name is any bytes but NUL, the empty name too.
    let heap_at = name_at + name_n;
    let code_n = if unpadded > 0 && unpadded <= heap_n {
        unpadded
    } else {
        heap_n
    };
    let mut k = NativeKernel {
        name,
        code: b[heap_at..heap_at + code_n].to_vec(),
        ..NativeKernel::default()
    };
    let patch_at = end - patch_n;
    tokens(&b[patch_at..end], &mut k)?;
    Ok((k, end))
}

/// Reads the fields of interest from a kernel's patch list.
fn tokens(list: &[u8], k: &mut NativeKernel) -> Result<(), String> {
    let mut pos = 0usize;
    // (size, per SIMT lane): the SIMD width may come in a later token.
    let mut private = None;
    // NEO stops when no more than a token header is left.
    while list.len() - pos > 8 {
        let token = u32_at(list, pos).unwrap_or(0);
        let size = u32_at(list, pos + 4).unwrap_or(0) as usize;
        if size < 8 || size > list.len() - pos {
            return Err(format!(
                "patch token {token} at offset {pos} of its patch list has size {size}, outside the list ({} bytes)",
                list.len()
            ));
        }
        let t = &list[pos..pos + size];
        let field = |at: usize| u32_at(t, at);
        match token {
            TOKEN_EXECUTION_ENVIRONMENT => {
                k.simd = field(EXEC_SIMD_AT).filter(|&s| s > 0);
                k.grf = field(EXEC_GRF_AT).filter(|&g| g > 0);
                k.barriers = field(EXEC_BARRIERS_AT);
                k.local_args.get_or_insert_with(Vec::new);
            }
            TOKEN_DATA_PARAMETER_BUFFER
                if field(DATA_PARAMETER_TYPE_AT) == Some(DATA_PARAMETER_LOCAL_ARG_SIZES) =>
            {
                if let Some(a) = field(DATA_PARAMETER_ARG_AT) {
                    k.local_args.get_or_insert_with(Vec::new).push(a);
                }
            }
            TOKEN_MEDIA_VFE_STATE => k.scratch_bytes = field(VFE_SCRATCH_AT).map(u64::from),
            TOKEN_ALLOCATE_STATELESS_PRIVATE_MEMORY => {
                private =
                    field(PRIVATE_SIZE_AT).map(|n| (n, field(PRIVATE_SIMT_AT).unwrap_or(0) != 0))
            }
            TOKEN_ALLOCATE_LOCAL_SURFACE => {
                k.slm_bytes = field(LOCAL_SURFACE_SIZE_AT).map(u64::from)
            }
            _ => {}
        }
        pos += size;
    }
    // NEO takes a size of 0 as no private memory; a size per SIMT lane is
    // the SIMD width times that per hardware thread.
    k.stateless_private_bytes = private.filter(|&(n, _)| n > 0).map(|(n, simt)| {
        let lanes = if simt { k.simd.unwrap_or(1) } else { 1 };
        u64::from(n) * u64::from(lanes)
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(number: u32, fields: &[u32]) -> Vec<u8> {
        let mut t = number.to_le_bytes().to_vec();
        t.extend_from_slice(&(8 + 4 * fields.len() as u32).to_le_bytes());
        for f in fields {
            t.extend_from_slice(&f.to_le_bytes());
        }
        t
    }

    fn kernel_blob(name: &[u8], code: &[u8], patches: &[u8]) -> Vec<u8> {
        let mut padded = name.to_vec();
        padded.push(0);
        while padded.len() % 4 != 0 {
            padded.push(0);
        }
        let mut k = vec![0u8; 12];
        for v in [padded.len(), patches.len(), code.len(), 0, 0, 0, code.len()] {
            k.extend_from_slice(&(v as u32).to_le_bytes());
        }
        k.extend_from_slice(&padded);
        k.extend_from_slice(code);
        k.extend_from_slice(patches);
        k
    }

    fn program(kernels: &[Vec<u8>]) -> Vec<u8> {
        let mut p = MAGIC.to_vec();
        for v in [1081u32, 0xC08, 8, kernels.len() as u32, 7, 0] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        for k in kernels {
            p.extend_from_slice(k);
        }
        p
    }

    #[test]
    fn kernels_and_their_tokens_are_read() {
        let mut exec = vec![0u32; 23];
        exec[3] = 16; // LargestCompiledSIMDSize
        exec[20] = 256; // NumGRFRequired
        let mut patches = token(TOKEN_EXECUTION_ENVIRONMENT, &exec);
        patches.extend(token(TOKEN_MEDIA_VFE_STATE, &[0, 64]));
        patches.extend(token(
            TOKEN_ALLOCATE_STATELESS_PRIVATE_MEMORY,
            &[0, 0, 0, 96, 1],
        ));
        patches.extend(token(TOKEN_ALLOCATE_LOCAL_SURFACE, &[0, 1024]));
        let p = program(&[
            kernel_blob(b"first", &[1; 32], &patches),
            kernel_blob(b"second", &[2; 16], &[]),
        ]);
        let prog = parse(&p, None, Format::PatchTokens).unwrap();
        assert_eq!(prog.platform.as_ref().unwrap().name, "PVCXT");
        let k = &prog.kernels[0];
        assert_eq!(k.name, b"first");
        assert_eq!(k.code, [1; 32]);
        assert_eq!((k.simd, k.grf), (Some(16), Some(256)));
        assert_eq!(k.scratch_bytes, Some(64));
        // 96 bytes per SIMT lane, 16 lanes.
        assert_eq!(k.stateless_private_bytes, Some(96 * 16));
        assert_eq!(k.private_memory_bytes, None);
        assert_eq!(k.slm_bytes, Some(1024));
        assert_eq!(prog.kernels[1].name, b"second");
        assert_eq!(prog.kernels[1].simd, None);
    }

    #[test]
    fn lying_sizes_are_errors() {
        let good = program(&[kernel_blob(b"k", &[1; 16], &token(99, &[1]))]);
        assert!(parse(&good, None, Format::PatchTokens).is_ok());
        // Every cut is an error, never a panic.
        for n in 0..good.len() {
            assert!(
                parse(&good[..n], None, Format::PatchTokens).is_err(),
                "cut at {n}"
            );
        }
        // Each size field of the kernel header, huge.
        for field in 0..7 {
            let mut bad = good.clone();
            let at = PROGRAM_HEADER + 12 + 4 * field;
            bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            let r = parse(&bad, None, Format::PatchTokens);
            if field != 6 {
                assert!(
                    matches!(r, Err(NativeError::Corrupt(_))),
                    "field {field}: {r:?}"
                );
            }
        }
        // A program patch list and a kernel count that lie.
        let mut bad = good.clone();
        bad[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&bad, None, Format::PatchTokens).is_err());
        let mut bad = good.clone();
        bad[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse(&bad, None, Format::PatchTokens),
            Err(NativeError::Corrupt(_))
        ));
        // The kernel of the empty name: a name like any other.
        let nameless = program(&[kernel_blob(b"", &[1; 16], &[])]);
        let p = parse(&nameless, None, Format::PatchTokens).unwrap();
        assert_eq!(p.kernel(b"").map(|k| k.code.len()), Some(16));
        // A token of size 0 and one past its list.
        let last = good.len() - 12;
        for size in [0u32, 4, 1000] {
            let mut bad = good.clone();
            bad[last + 4..last + 8].copy_from_slice(&size.to_le_bytes());
            assert!(
                parse(&bad, None, Format::PatchTokens).is_err(),
                "size {size}"
            );
        }
    }
}
