//! OpenCL programs (docs/internals.md, "OpenCL"): a program is a module once
//! built, its kernels are kernels, and an enqueue is a launch (counted in
//! the parent module, on the launch path).

use super::modules::{module_built, Api, CreatedModule, DeviceRef, ModuleInput};
use super::*;

// OpenCL (docs/internals.md, "OpenCL"): a program is a module once built,
// its kernels are kernels, and an enqueue is a launch, counted as an append
// to an immediate list is.

/// An OpenCL program was created from `input` (`kind`: `source`, `il`,
/// `binary`). A handle seen before is a new program: its old module is
/// forgotten until this one is built.
pub fn program_created(handle: usize, kind: &'static str, input: &[u8]) {
    let from = ProgramFrom::Input {
        kind,
        size: input.len(),
        sha256: sha256_hex(input),
    };
    super::constants::program_forgotten(handle);
    with_registry(|r, _| {
        r.modules.remove(&handle);
        r.programs.insert(handle, from);
    });
}

/// `clLinkProgram` made program `handle` of `inputs`.
pub fn program_linked(handle: usize, inputs: &[usize]) {
    with_registry(|r, _| {
        let from = inputs
            .iter()
            .map(|i| {
                r.programs
                    .get(i)
                    .cloned()
                    .unwrap_or(ProgramFrom::Link(Vec::new()))
            })
            .collect();
        r.modules.remove(&handle);
        r.programs.insert(handle, ProgramFrom::Link(from));
    });
}

/// Whether OpenCL program `handle` is recorded as a module (built where
/// the interposer saw it, or recorded since).
pub fn program_recorded(handle: usize) -> bool {
    with_registry(|r, _| r.modules.contains_key(&handle)).unwrap_or(true)
}

/// Program `handle` has no binary after a build (an asynchronous build
/// still running, a failed one): its kernels' creation records it.
pub fn program_unbuilt(handle: usize) {
    with_registry(|r, _| r.modules.remove(&handle));
}

/// What a built OpenCL program holds.
pub struct BuiltProgram<'a> {
    pub handle: usize,
    /// `CL_PROGRAM_BINARIES`: what the driver runs.
    pub binary: &'a [u8],
    /// The SPIR-V IGC compiled, carried in the binary (`None`: a binary
    /// without it, which IGC did not compile).
    pub spirv: Option<&'a [u8]>,
    pub build_flags: &'a [u8],
    pub kernel_names: &'a [Vec<u8>],
}

/// An OpenCL program was built (or linked): a module, of the SPIR-V IGC
/// compiled when its binary carries it (so that its dumps are found as a
/// Level Zero module's are), else of its binary; `binary` is its binary.
pub fn program_built(p: BuiltProgram, device: DeviceRef) {
    let input = [ModuleInput {
        bytes: p.spirv.unwrap_or(p.binary),
        build_flags: p.build_flags,
        spec_constants: super::constants::program_constants(p.handle),
    }];
    let module = CreatedModule {
        handle: p.handle,
        format: match p.spirv {
            Some(_) => crate::common::ZE_MODULE_FORMAT_IL_SPIRV,
            None => crate::common::ZE_MODULE_FORMAT_NATIVE,
        },
        inputs: &input,
        kernel_names: p.kernel_names,
        api: Api::OpenCl,
        program_build_flags: None,
    };
    module_built(module, Ok(p.binary), None, device);
}

/// `clCloneKernel`: the clone counts with the kernel it was cloned from.
pub fn kernel_cloned(source: usize, clone: usize) {
    with_registry(|_, _| match MAPS.kernels.get(source) {
        0 => MAPS.kernels.set(clone, 0),
        // SAFETY: the registry lock is held; a value of the kernel map.
        s => MAPS
            .kernels
            .set(clone, unsafe { crate::shapes::handle_cloned(s, clone) }),
    });
}
