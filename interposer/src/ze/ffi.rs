//! The slice of the Level Zero C API the interposer needs: handle and result
//! types, the descriptor layouts it reads, and the positions of the hooked
//! entries inside the DDI tables (`ze_ddi.h`).

use std::ffi::{c_char, c_void};

pub use crate::common::{GroupCount, Handle, ZE_MODULE_FORMAT_IL_SPIRV, ZE_MODULE_FORMAT_NATIVE};

pub type ZeResult = u32;

pub const ZE_RESULT_SUCCESS: ZeResult = 0;
pub const ZE_RESULT_ERROR_UNINITIALIZED: ZeResult = 0x7800_0001;
pub const ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: ZeResult = 0x7800_0003;
/// `ZE_RESULT_QUERY_TRUE` / `_FALSE` of Level Zero 1.15's headers, the
/// answers of `zeCommandListIsGraphCaptureEnabledExt`.
pub const ZE_RESULT_QUERY_TRUE: ZeResult = 0x7800_0022;
pub const ZE_RESULT_QUERY_FALSE: ZeResult = 0x7800_0023;
/// What NEO 26 answers instead (the graph extension's experimental values).
pub const ZE_RESULT_EXP_QUERY_TRUE: ZeResult = 0x7fff_0000;
pub const ZE_RESULT_EXP_QUERY_FALSE: ZeResult = 0x7fff_0001;

/// A hook's answers (`hook!`): success, and without a real function to
/// call, uninitialized.
impl crate::common::Status for ZeResult {
    const SUCCESS: Self = ZE_RESULT_SUCCESS;
    const MISSING: Self = ZE_RESULT_ERROR_UNINITIALIZED;
}

pub const ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC: u32 = 0x0002_0002;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES: u32 = 0x3;
/// `ze_device_ip_version_ext_t` (Level Zero 1.6; newer than this machine's
/// headers): a driver that does not know it leaves `ip_version` at 0.
pub const ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT: u32 = 0x0001_000f;

/// `ZE_MAKE_VERSION(major, minor)`
pub const fn api_version(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xffff)
}

#[repr(C)]
pub struct ModuleDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub format: u32,
    pub input_size: usize,
    pub p_input_module: *const u8,
    pub p_build_flags: *const c_char,
    pub p_constants: *const c_void,
}

#[repr(C)]
pub struct ModuleProgramExpDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub count: u32,
    pub input_sizes: *const usize,
    pub p_input_modules: *const *const u8,
    pub p_build_flags: *const *const c_char,
    pub p_constants: *const c_void,
}

/// Any Level Zero structure starts with these two fields.
#[repr(C)]
pub struct BaseDesc {
    pub stype: u32,
    pub p_next: *const c_void,
}

/// `ze_device_properties_t` (Level Zero 1.0 layout, which later versions
/// only extend through `pNext`).
#[repr(C)]
pub struct DeviceProperties {
    pub stype: u32,
    pub p_next: *mut c_void,
    pub device_type: u32,
    pub vendor_id: u32,
    pub device_id: u32,
    pub flags: u32,
    pub subdevice_id: u32,
    pub core_clock_rate: u32,
    pub max_mem_alloc_size: u64,
    pub max_hardware_contexts: u32,
    pub max_command_queue_priority: u32,
    pub num_threads_per_eu: u32,
    pub physical_eu_simd_width: u32,
    pub num_eus_per_subslice: u32,
    pub num_subslices_per_slice: u32,
    pub num_slices: u32,
    pub timer_resolution: u64,
    pub timestamp_valid_bits: u32,
    pub kernel_timestamp_valid_bits: u32,
    pub uuid: [u8; 16],
    pub name: [u8; 256],
}

/// `ze_device_ip_version_ext_t`, chained in `DeviceProperties::p_next`.
#[repr(C)]
pub struct DeviceIpVersionExt {
    pub stype: u32,
    pub p_next: *const c_void,
    pub ip_version: u32,
}

/// `ze_kernel_properties_t` (Level Zero 1.0 layout).
#[repr(C)]
pub struct KernelProperties {
    pub stype: u32,
    pub p_next: *mut c_void,
    pub num_kernel_args: u32,
    pub required_group_size: [u32; 3],
    pub required_num_sub_groups: u32,
    pub required_subgroup_size: u32,
    pub max_subgroup_size: u32,
    pub max_num_subgroups: u32,
    pub local_mem_size: u32,
    pub private_mem_size: u32,
    pub spill_mem_size: u32,
    pub uuid: [u8; 32],
}

pub const ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES: u32 = 0x1e;
pub const ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES: u32 = 0x4;

/// `ze_device_compute_properties_t`.
#[repr(C)]
pub struct DeviceComputeProperties {
    pub stype: u32,
    pub p_next: *mut c_void,
    pub max_total_group_size: u32,
    pub max_group_size: [u32; 3],
    pub max_group_count: [u32; 3],
    pub max_shared_local_memory: u32,
    pub num_sub_group_sizes: u32,
    pub sub_group_sizes: [u32; 8],
}

#[repr(C)]
pub struct KernelDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub flags: u32,
    pub p_kernel_name: *const c_char,
}

/// `ze_group_size_t`, passed by value to `...LaunchKernelWithArguments`.
pub type GroupSize = GroupCount;

/// Index of an entry in a DDI table (counted in function pointers from the
/// start of the table) and the API version from which the table has it; a
/// table filled for an older version is shorter and must not be written past
/// its end.
#[derive(Clone, Copy)]
pub struct Entry {
    pub index: usize,
    pub since: u32,
}

const V1_0: u32 = api_version(1, 0);

pub mod module_table {
    use super::*;
    pub const CREATE: Entry = Entry {
        index: 0,
        since: V1_0,
    };
    pub const GET_NATIVE_BINARY: Entry = Entry {
        index: 3,
        since: V1_0,
    };
    pub const GET_KERNEL_NAMES: Entry = Entry {
        index: 5,
        since: V1_0,
    };
}

pub mod device_table {
    use super::*;
    pub const GET_PROPERTIES: Entry = Entry {
        index: 2,
        since: V1_0,
    };
    pub const GET_COMPUTE_PROPERTIES: Entry = Entry {
        index: 3,
        since: V1_0,
    };
}

pub mod kernel_table {
    use super::*;
    pub const CREATE: Entry = Entry {
        index: 0,
        since: V1_0,
    };
    pub const DESTROY: Entry = Entry {
        index: 1,
        since: V1_0,
    };
    pub const SET_GROUP_SIZE: Entry = Entry {
        index: 3,
        since: V1_0,
    };
    pub const SET_ARGUMENT_VALUE: Entry = Entry {
        index: 6,
        since: V1_0,
    };
    pub const GET_PROPERTIES: Entry = Entry {
        index: 10,
        since: V1_0,
    };
}

pub mod command_queue_table {
    use super::*;
    pub const EXECUTE_COMMAND_LISTS: Entry = Entry {
        index: 2,
        since: V1_0,
    };
}

pub mod command_list_table {
    use super::*;
    pub const CREATE: Entry = Entry {
        index: 0,
        since: V1_0,
    };
    pub const CREATE_IMMEDIATE: Entry = Entry {
        index: 1,
        since: V1_0,
    };
    pub const DESTROY: Entry = Entry {
        index: 2,
        since: V1_0,
    };
    pub const RESET: Entry = Entry {
        index: 4,
        since: V1_0,
    };
    pub const APPEND_LAUNCH_KERNEL: Entry = Entry {
        index: 22,
        since: V1_0,
    };
    pub const APPEND_LAUNCH_COOPERATIVE_KERNEL: Entry = Entry {
        index: 23,
        since: V1_0,
    };
    pub const APPEND_LAUNCH_KERNEL_INDIRECT: Entry = Entry {
        index: 24,
        since: V1_0,
    };
    pub const APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT: Entry = Entry {
        index: 25,
        since: V1_0,
    };
    pub const APPEND_LAUNCH_KERNEL_WITH_PARAMETERS: Entry = Entry {
        index: 36,
        since: api_version(1, 14),
    };
    pub const APPEND_LAUNCH_KERNEL_WITH_ARGUMENTS: Entry = Entry {
        index: 37,
        since: api_version(1, 14),
    };
}

pub mod command_list_exp_table {
    use super::*;
    pub const IMMEDIATE_APPEND_COMMAND_LISTS_EXP: Entry = Entry {
        index: 1,
        since: api_version(1, 9),
    };
    pub const GET_NEXT_COMMAND_ID_EXP: Entry = Entry {
        index: 2,
        since: api_version(1, 9),
    };
    pub const GET_NEXT_COMMAND_ID_WITH_KERNELS_EXP: Entry = Entry {
        index: 6,
        since: api_version(1, 10),
    };
    pub const UPDATE_MUTABLE_COMMAND_KERNELS_EXP: Entry = Entry {
        index: 7,
        since: api_version(1, 10),
    };
}

/// The command list table's graph entries and `...WithParameters` (NEO 26
/// fills them for API 1.16 and 1.17 on, as `ze_ddi.h` of loader 1.32 has them).
pub mod command_list_graph_entries {
    use super::*;
    pub const IMMEDIATE_APPEND_COMMAND_LISTS_WITH_PARAMETERS: Entry = Entry {
        index: 40,
        since: api_version(1, 16),
    };
    pub const BEGIN_GRAPH_CAPTURE_EXT: Entry = Entry {
        index: 45,
        since: api_version(1, 17),
    };
    pub const BEGIN_CAPTURE_INTO_GRAPH_EXT: Entry = Entry {
        index: 46,
        since: api_version(1, 17),
    };
    pub const IS_GRAPH_CAPTURE_ENABLED_EXT: Entry = Entry {
        index: 47,
        since: api_version(1, 17),
    };
    pub const END_GRAPH_CAPTURE_EXT: Entry = Entry {
        index: 48,
        since: api_version(1, 17),
    };
    pub const GET_GRAPH_EXT: Entry = Entry {
        index: 49,
        since: api_version(1, 17),
    };
    pub const APPEND_GRAPH_EXT: Entry = Entry {
        index: 50,
        since: api_version(1, 17),
    };
}

/// `ze_graph_dditable_t` (API 1.17).
pub mod graph_table {
    use super::*;
    pub const CREATE_EXT: Entry = Entry {
        index: 0,
        since: api_version(1, 17),
    };
    pub const INSTANTIATE_EXT: Entry = Entry {
        index: 3,
        since: api_version(1, 17),
    };
    pub const DESTROY_EXT: Entry = Entry {
        index: 6,
        since: api_version(1, 17),
    };
}

/// `ze_executable_graph_dditable_t` (API 1.17).
pub mod executable_graph_table {
    use super::*;
    pub const DESTROY_EXT: Entry = Entry {
        index: 1,
        since: api_version(1, 17),
    };
}

pub mod driver_table {
    use super::*;
    pub const GET_EXTENSION_FUNCTION_ADDRESS: Entry = Entry {
        index: 5,
        since: api_version(1, 1),
    };
}

// ---- for timing launches (`ze::time`) ------------------------------------

pub const ZE_RESULT_NOT_READY: ZeResult = 1;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2: u32 = 0x0002_0006;
pub const ZE_STRUCTURE_TYPE_EVENT_POOL_DESC: u32 = 0x10;
pub const ZE_STRUCTURE_TYPE_EVENT_DESC: u32 = 0x11;
/// `ze_event_pool_counter_based_exp_desc_t` in a pool's `pNext`.
pub const ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC: u32 = 0x0002_0014;
pub const ZE_EVENT_POOL_FLAG_HOST_VISIBLE: u32 = 1;
pub const ZE_EVENT_POOL_FLAG_IPC: u32 = 2;
pub const ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: u32 = 4;
/// `ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP` (API 1.6): timestamps in
/// the host's time domain, which the workload asked for.
pub const ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP: u32 = 8;
pub const ZE_EVENT_SCOPE_FLAG_HOST: u32 = 4;
/// Counter-based events' flags (`ze_event_counter_based_flags_t`, NEO's
/// `zex_counter_based_event_flags_t` alike): timestamps of the device.
pub const COUNTER_BASED_FLAG_DEVICE_TIMESTAMP: u32 = 16;
pub const COUNTER_BASED_FLAG_HOST_TIMESTAMP: u32 = 32;
pub const COUNTER_BASED_FLAG_IPC: u32 = 8;
/// `ZE_COMMAND_QUEUE_FLAG_IN_ORDER` (an immediate list's queue descriptor).
pub const ZE_COMMAND_QUEUE_FLAG_IN_ORDER: u32 = 2;
/// `ZE_COMMAND_LIST_FLAG_IN_ORDER` (a regular list's descriptor).
pub const ZE_COMMAND_LIST_FLAG_IN_ORDER: u32 = 8;

#[repr(C)]
pub struct EventPoolDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub flags: u32,
    pub count: u32,
}

#[repr(C)]
pub struct EventDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub index: u32,
    pub signal: u32,
    pub wait: u32,
}

/// `ze_event_counter_based_desc_t` and NEO's `zex_counter_based_event_desc_t`.
#[repr(C)]
pub struct CounterBasedDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub flags: u32,
    pub signal: u32,
    pub wait: u32,
}

/// `ze_command_queue_desc_t` (an immediate list's).
#[repr(C)]
pub struct CommandQueueDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub ordinal: u32,
    pub index: u32,
    pub flags: u32,
    pub mode: u32,
    pub priority: u32,
}

/// `ze_command_list_desc_t`.
#[repr(C)]
pub struct CommandListDesc {
    pub stype: u32,
    pub p_next: *const c_void,
    pub ordinal: u32,
    pub flags: u32,
}

/// `ze_kernel_timestamp_result_t`: `global` (wall clock) and `context`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct KernelTimestampResult {
    pub global_start: u64,
    pub global_end: u64,
    pub context_start: u64,
    pub context_end: u64,
}

const fn entry(index: usize, since: u32) -> Entry {
    Entry { index, since }
}

pub mod time_entries {
    use super::*;
    pub const CONTEXT_DESTROY: Entry = entry(1, V1_0);
    pub const QUEUE_SYNCHRONIZE: Entry = entry(3, V1_0);
    pub const LIST_APPEND_BARRIER: Entry = entry(6, V1_0);
    pub const LIST_APPEND_EVENT_RESET: Entry = entry(20, V1_0);
    pub const LIST_HOST_SYNCHRONIZE: Entry = entry(28, api_version(1, 6));
    pub const FENCE_HOST_SYNCHRONIZE: Entry = entry(2, V1_0);
    pub const FENCE_QUERY_STATUS: Entry = entry(3, V1_0);
    pub const POOL_CREATE: Entry = entry(0, V1_0);
    pub const POOL_DESTROY: Entry = entry(1, V1_0);
    pub const EVENT_CREATE: Entry = entry(0, V1_0);
    pub const EVENT_DESTROY: Entry = entry(1, V1_0);
    pub const EVENT_HOST_SYNCHRONIZE: Entry = entry(3, V1_0);
    pub const EVENT_QUERY_STATUS: Entry = entry(4, V1_0);
    pub const EVENT_HOST_RESET: Entry = entry(5, V1_0);
    pub const EVENT_QUERY_KERNEL_TIMESTAMP: Entry = entry(6, V1_0);
    pub const EVENT_COUNTER_BASED_CREATE: Entry = entry(11, api_version(1, 15));
}
