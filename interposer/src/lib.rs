//! xpu-asm's interposer: preloaded into every process of a traced command,
//! it records each Level Zero module and OpenCL program and each kernel the
//! process creates, and counts each kernel launch (each OpenCL enqueue),
//! whichever way the process reaches Level Zero or an OpenCL ICD loader.
//!
//! Layout:
//! - `config`: read at load time; sets the IGC dump environment.
//! - `ze`, `cl`: the interposer by API, each with its `hooks` (the
//!   `extern "C"` boundary, exported symbols below), its `queries` (the
//!   functions the interposer calls itself: Level Zero's graph capture,
//!   OpenCL's through each object's dispatch table) and its `ffi` (its
//!   slice of the C API); Level Zero's DDI table wrapping in `ze::tables`.
//!   Both write their hooks with the one `hook!` of `macros`, and share
//!   `common` (the handle and group count types, the module formats, a
//!   hook's answers, the SPIR-V section of a program binary) with `state`.
//! - `lookups`: the name lookups (the `dlsym` trampoline, the functions
//!   stood in for by name).
//! - `real`: finding the real functions behind the hooks.
//! - `guard`: the reentrancy guard and the panic barrier.
//! - `state`, `handles`, `shapes`: what is known about the process, the
//!   launch path, and each kernel's launch shapes. The hooks call the
//!   state, never the other way: the Level Zero query the launch path
//!   needs while a graph is captured is handed to it when the capture
//!   begins.
//! - `objects`: the loaded objects and call stacks (raw addresses), for
//!   where modules come from and who launched each kernel.
//! - `output`: the per-process record files; `sys`: the recorder's own
//!   system calls (no descriptor kept, errors instead of signals, faults
//!   injected by tests).
//!
//! Exported symbols (all `extern "C"`):
//! `dlsym`; `zeGetModuleProcAddrTable`, `zeGetDeviceProcAddrTable` (read,
//! not wrapped), `zeGetKernelProcAddrTable`,
//! `zeGetCommandQueueProcAddrTable`, `zeGetCommandListProcAddrTable`,
//! `zeGetCommandListExpProcAddrTable`; `zeModuleCreate`, `zeKernelCreate`,
//! `zeKernelDestroy`, `zeKernelSetGroupSize`, `zeKernelSetArgumentValue`,
//! `zeCommandListCreate`, `zeCommandListCreateImmediate`,
//! `zeCommandListDestroy`, `zeCommandListReset`,
//! `zeCommandListAppendLaunchKernel`,
//! `zeCommandListAppendLaunchCooperativeKernel`,
//! `zeCommandListAppendLaunchKernelIndirect`,
//! `zeCommandListAppendLaunchMultipleKernelsIndirect`,
//! `zeCommandListAppendLaunchKernelWithParameters`,
//! `zeCommandListAppendLaunchKernelWithArguments`,
//! `zeCommandQueueExecuteCommandLists`,
//! `zeCommandListImmediateAppendCommandListsExp`,
//! `zeCommandListImmediateAppendCommandListsWithParameters`; the graphs'
//! `zeGetGraphProcAddrTable`, `zeGetExecutableGraphProcAddrTable`,
//! `zeGraphCreateExt`, `zeCommandListBeginGraphCaptureExt`,
//! `zeCommandListBeginCaptureIntoGraphExt`, `zeCommandListEndGraphCaptureExt`,
//! `zeGraphInstantiateExt`, `zeCommandListAppendGraphExt`, `zeGraphDestroyExt`,
//! `zeExecutableGraphDestroyExt` and their ...Exp forms (NEO's, handed out by
//! name only: `zeGraphCreateExp`, `zeCommandListInstantiateGraphExp`, ...);
//! mutable lists' `zeCommandListGetNextCommandIdExp`,
//! `zeCommandListGetNextCommandIdWithKernelsExp`,
//! `zeCommandListUpdateMutableCommandKernelsExp`; and
//! `zeGetDriverProcAddrTable`, `zeDriverGetExtensionFunctionAddress`.
//! OpenCL's: `clCreateProgramWithSource`, `clCreateProgramWithIL`,
//! `clCreateProgramWithILKHR`, `clCreateProgramWithBinary`,
//! `clSetProgramSpecializationConstant`, `clBuildProgram`, `clCompileProgram`, `clLinkProgram`, `clCreateKernel`,
//! `clCreateKernelsInProgram`, `clCloneKernel`, `clSetKernelArg`, `clEnqueueNDRangeKernel`,
//! `clEnqueueTask`, `clEnqueueNDCountKernelINTEL`,
//! `clGetExtensionFunctionAddress`, `clGetExtensionFunctionAddressForPlatform`.
//! SYCL's: `__sycl_register_lib` (the device images a DPC++-built object
//! registers, [`sycl`]).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod blocks;
pub mod cl;
pub mod common;
pub mod config;
mod direct;
pub mod guard;
pub mod handles;
pub mod lookups;
mod macros;
pub mod objects;
pub mod output;
pub mod real;
pub mod shapes;
pub mod state;
pub mod sycl;
pub mod sys;
pub mod ze;

/// Load time: read the configuration and set the environment the driver and
/// IGC read later. Nothing else: no threads, no files, no Level Zero.
#[ctor::ctor]
fn on_load() {
    guard::no_panic(|| {
        let _ = config::get();
        real::set_stand_in(lookups::stand_in);
    });
}

/// Unload (after every exit handler of the program's): the record's last
/// counts written (`state::unload`).
#[ctor::dtor]
fn on_unload() {
    guard::no_panic(state::unload);
}
