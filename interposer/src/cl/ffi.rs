//! The slice of the OpenCL C API the interposer needs: handle and result
//! types, the query constants it asks with, and the positions of the
//! functions it calls itself in the ICD dispatch table (`cl_icd.h`'s
//! `struct _cl_icd_dispatch`), which every object of an ICD starts with.

use std::ffi::c_void;

/// `cl_int`.
pub type ClInt = i32;
/// `cl_uint`.
pub type ClUint = u32;
/// Any OpenCL object (`cl_program`, `cl_kernel`, `cl_device_id`, ...).
pub type ClHandle = *mut c_void;

pub const CL_SUCCESS: ClInt = 0;
/// What a hook answers when it has no real function to call.
pub const CL_INVALID_OPERATION: ClInt = -59;

/// A hook's answers (`hook!`): success, and without a real function to
/// call, `CL_INVALID_OPERATION`.
impl crate::common::Status for ClInt {
    const SUCCESS: Self = CL_SUCCESS;
    const MISSING: Self = CL_INVALID_OPERATION;
}

pub const CL_DEVICE_VENDOR_ID: ClUint = 0x1001;
pub const CL_DEVICE_NAME: ClUint = 0x102B;
/// `cl_intel_device_attribute_query`: the IP version (NEO 26: Level Zero's
/// `ze_device_ip_version_ext_t`; NEO 22.43: another encoding, below 1 << 22).
pub const CL_DEVICE_IP_VERSION_INTEL: ClUint = 0x4250;
/// `cl_intel_device_attribute_query`: the PCI device id.
pub const CL_DEVICE_ID_INTEL: ClUint = 0x4251;
pub const CL_DEVICE_NUM_SLICES_INTEL: ClUint = 0x4252;
pub const CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL: ClUint = 0x4253;
pub const CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL: ClUint = 0x4254;
pub const CL_DEVICE_NUM_THREADS_PER_EU_INTEL: ClUint = 0x4255;
pub const CL_DEVICE_MAX_WORK_GROUP_SIZE: ClUint = 0x1004;
pub const CL_DEVICE_LOCAL_MEM_SIZE: ClUint = 0x1023;

pub const CL_PROGRAM_NUM_DEVICES: ClUint = 0x1162;
pub const CL_PROGRAM_DEVICES: ClUint = 0x1163;
pub const CL_PROGRAM_BINARY_SIZES: ClUint = 0x1165;
pub const CL_PROGRAM_BINARIES: ClUint = 0x1166;
pub const CL_PROGRAM_NUM_KERNELS: ClUint = 0x1167;
pub const CL_PROGRAM_KERNEL_NAMES: ClUint = 0x1168;
pub const CL_PROGRAM_BUILD_STATUS: ClUint = 0x1181;
pub const CL_PROGRAM_BUILD_OPTIONS: ClUint = 0x1182;
pub const CL_BUILD_SUCCESS: ClInt = 0;

pub const CL_KERNEL_FUNCTION_NAME: ClUint = 0x1190;

/// Entries of the ICD dispatch table the interposer calls (index of the
/// function pointer; the table's layout is fixed by the ICD ABI).
pub const DISPATCH_GET_PLATFORM_IDS: usize = 0;
pub const DISPATCH_GET_DEVICE_INFO: usize = 3;
pub const DISPATCH_GET_PROGRAM_INFO: usize = 32;
pub const DISPATCH_GET_PROGRAM_BUILD_INFO: usize = 33;
pub const DISPATCH_GET_KERNEL_INFO: usize = 39;
pub const DISPATCH_GET_EVENT_INFO: usize = 42;
pub const DISPATCH_RETAIN_EVENT: usize = 43;
pub const DISPATCH_RELEASE_EVENT: usize = 44;
pub const DISPATCH_GET_EVENT_PROFILING_INFO: usize = 45;

// Timing (`cl::time`): queues, events and their profiling.
/// `cl_command_queue_properties` in `clCreateCommandQueue`, and the key of
/// that bit field in a properties array, and `clGetCommandQueueInfo`'s.
pub const CL_QUEUE_PROPERTIES: u64 = 0x1093;
/// `clGetCommandQueueInfo`: the properties array the queue was made with.
pub const CL_QUEUE_PROPERTIES_ARRAY: ClUint = 0x1098;
pub const CL_QUEUE_PROFILING_ENABLE: u64 = 1 << 1;
pub const CL_QUEUE_ON_DEVICE: u64 = 1 << 2;
pub const CL_EVENT_COMMAND_QUEUE: ClUint = 0x11D0;
pub const CL_EVENT_COMMAND_EXECUTION_STATUS: ClUint = 0x11D3;
pub const CL_COMPLETE: ClInt = 0;
pub const CL_PROFILING_COMMAND_START: ClUint = 0x1282;
pub const CL_PROFILING_COMMAND_END: ClUint = 0x1283;
pub const CL_PROFILING_INFO_NOT_AVAILABLE: ClInt = -7;
pub const CL_TRUE: ClUint = 1;

/// `cl_khr_icd` 2.0.0: an object whose dispatch table starts with this
/// value (in place of `clGetPlatformIDs`) keeps its loader's table in its
/// second word (`disp_data`), the table first there.
pub const CL_ICD2_TAG_KHR: usize = 0x4F50_454E_434C_3331;

/// `clGet{Program,Kernel,Device,Event}Info`, `clGetEventProfilingInfo`.
pub type GetInfo = unsafe extern "C" fn(ClHandle, ClUint, usize, *mut c_void, *mut usize) -> ClInt;
/// `clRetainEvent`, `clReleaseEvent`.
pub type EventRef = unsafe extern "C" fn(ClHandle) -> ClInt;
/// `clGetProgramBuildInfo`.
pub type GetBuildInfo =
    unsafe extern "C" fn(ClHandle, ClHandle, ClUint, usize, *mut c_void, *mut usize) -> ClInt;
