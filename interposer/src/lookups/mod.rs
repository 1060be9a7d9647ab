//! The name lookups: the functions the interposer stands in for when a
//! program finds them by name, through `dlsym` ([`dlsym`]) or from the
//! driver's `zeDriverGetExtensionFunctionAddress` (how SYCL's v2 adapter
//! gets the graph functions, under their experimental ...Exp names), and
//! OpenCL's `clGetExtensionFunctionAddress[ForPlatform]`; what each gets
//! instead ([`stand_in`], handed to the hooks at load through
//! [`crate::real::set_stand_in`]).

#[cfg(target_arch = "x86_64")]
pub mod dlsym;

use crate::cl::hooks::*;
use crate::real::{Real, SLOTS};
use crate::ze::hooks::*;
use crate::ze::queries::{GET_GRAPH, IS_GRAPH_CAPTURE_ENABLED};
use crate::ze::tables::*;

/// A function the interposer stands in for when looked up by name: its
/// real functions and the hook slots.
pub struct Known {
    pub real: &'static Real,
    pub addrs: fn() -> [usize; SLOTS],
}

/// The `Known` of the hook module `$m`.
macro_rules! k {
    ($m:ident) => {
        Some(Known {
            real: &$m::REAL,
            addrs: $m::addrs,
        })
    };
}

/// The hooked function called `name`, if any.
pub fn known(name: &[u8]) -> Option<Known> {
    match name {
        b"zeGetModuleProcAddrTable" => k!(get_module_table),
        b"zeGetDeviceProcAddrTable" => k!(get_device_table),
        b"zeGetKernelProcAddrTable" => k!(get_kernel_table),
        b"zeGetCommandQueueProcAddrTable" => k!(get_command_queue_table),
        b"zeGetCommandListProcAddrTable" => k!(get_command_list_table),
        b"zeGetCommandListExpProcAddrTable" => k!(get_command_list_exp_table),
        b"zeGetGraphProcAddrTable" => k!(get_graph_table),
        b"zeGetExecutableGraphProcAddrTable" => k!(get_executable_graph_table),
        b"zeGetDriverProcAddrTable" => k!(get_driver_table),
        b"zeGetEventProcAddrTable" => k!(get_event_table),
        b"zeGetEventPoolProcAddrTable" => k!(get_event_pool_table),
        b"zeGetFenceProcAddrTable" => k!(get_fence_table),
        b"zeGetContextProcAddrTable" => k!(get_context_table),
        b"zeModuleCreate" => k!(module_create),
        b"zeKernelCreate" => k!(kernel_create),
        b"zeKernelDestroy" => k!(kernel_destroy),
        b"zeKernelSetGroupSize" => k!(kernel_set_group_size),
        b"zeKernelSetArgumentValue" => k!(kernel_set_argument_value),
        b"zeCommandListCreate" => k!(command_list_create),
        b"zeCommandListCreateImmediate" => k!(command_list_create_immediate),
        b"zeCommandListDestroy" => k!(command_list_destroy),
        b"zeCommandListReset" => k!(command_list_reset),
        b"zeCommandListAppendLaunchKernel" => k!(append_launch_kernel),
        b"zeCommandListAppendLaunchCooperativeKernel" => k!(append_launch_cooperative_kernel),
        b"zeCommandListAppendLaunchKernelIndirect" => k!(append_launch_kernel_indirect),
        b"zeCommandListAppendLaunchMultipleKernelsIndirect" => {
            k!(append_launch_multiple_kernels_indirect)
        }
        b"zeCommandListAppendLaunchKernelWithParameters" => {
            k!(append_launch_kernel_with_parameters)
        }
        b"zeCommandListAppendLaunchKernelWithArguments" => k!(append_launch_kernel_with_arguments),
        b"zeCommandQueueExecuteCommandLists" => k!(command_queue_execute_command_lists),
        b"zeCommandListImmediateAppendCommandListsExp" => {
            k!(command_list_immediate_append_command_lists_exp)
        }
        b"zeCommandListImmediateAppendCommandListsWithParameters" => {
            k!(command_list_immediate_append_command_lists_with_parameters)
        }
        b"zeGraphCreateExt" => k!(graph_create_ext),
        b"zeGraphCreateExp" => k!(graph_create_exp),
        b"zeCommandListBeginGraphCaptureExt" => k!(begin_graph_capture_ext),
        b"zeCommandListBeginGraphCaptureExp" => k!(begin_graph_capture_exp),
        b"zeCommandListBeginCaptureIntoGraphExt" => k!(begin_capture_into_graph_ext),
        b"zeCommandListBeginCaptureIntoGraphExp" => k!(begin_capture_into_graph_exp),
        b"zeCommandListEndGraphCaptureExt" => k!(end_graph_capture_ext),
        b"zeCommandListEndGraphCaptureExp" => k!(end_graph_capture_exp),
        b"zeGraphInstantiateExt" => k!(graph_instantiate_ext),
        b"zeCommandListInstantiateGraphExp" => k!(command_list_instantiate_graph_exp),
        b"zeCommandListAppendGraphExt" => k!(append_graph_ext),
        b"zeCommandListAppendGraphExp" => k!(append_graph_exp),
        b"zeGraphDestroyExt" => k!(graph_destroy_ext),
        b"zeGraphDestroyExp" => k!(graph_destroy_exp),
        b"zeExecutableGraphDestroyExt" => k!(executable_graph_destroy_ext),
        b"zeExecutableGraphDestroyExp" => k!(executable_graph_destroy_exp),
        b"zeCommandListGetNextCommandIdExp" => k!(get_next_command_id_exp),
        b"zeCommandListGetNextCommandIdWithKernelsExp" => k!(get_next_command_id_with_kernels_exp),
        b"zeCommandListUpdateMutableCommandKernelsExp" => k!(update_mutable_command_kernels_exp),
        b"zeDriverGetExtensionFunctionAddress" => k!(driver_get_extension_function_address),
        _ if crate::config::timing() => known_time(name)
            .or_else(|| known_cl_time(name))
            .or_else(|| known_cl(name)),
        _ => known_cl(name),
    }
}

/// The functions only timing hooks, while launches are timed.
fn known_time(name: &[u8]) -> Option<Known> {
    use crate::ze::time::hooks::*;
    match name {
        b"zeEventPoolCreate" => k!(event_pool_create),
        b"zeEventPoolDestroy" => k!(event_pool_destroy),
        b"zeEventCreate" => k!(event_create),
        b"zeEventCounterBasedCreate" => k!(event_counter_based_create),
        b"zexCounterBasedEventCreate2" => k!(counter_based_event_create2),
        b"zeEventDestroy" => k!(event_destroy),
        b"zeEventHostReset" => k!(event_host_reset),
        b"zeEventHostSynchronize" => k!(event_host_synchronize),
        b"zeEventQueryStatus" => k!(event_query_status),
        b"zeCommandListAppendEventReset" => k!(append_event_reset),
        b"zeCommandListHostSynchronize" => k!(command_list_host_synchronize),
        b"zeCommandQueueSynchronize" => k!(command_queue_synchronize),
        b"zeFenceHostSynchronize" => k!(fence_host_synchronize),
        b"zeFenceQueryStatus" => k!(fence_query_status),
        b"zeContextDestroy" => k!(context_destroy),
        _ => None,
    }
}

/// The OpenCL functions only timing hooks, while launches are timed.
fn known_cl_time(name: &[u8]) -> Option<Known> {
    use crate::cl::time::hooks::*;
    match name {
        b"clCreateCommandQueue" => k!(create_command_queue),
        b"clCreateCommandQueueWithProperties" => k!(create_command_queue_with_properties),
        b"clGetCommandQueueInfo" => k!(get_command_queue_info),
        b"clGetEventProfilingInfo" => k!(get_event_profiling_info),
        b"clFinish" => k!(finish),
        b"clWaitForEvents" => k!(wait_for_events),
        b"clGetEventInfo" => k!(get_event_info),
        b"clReleaseEvent" => k!(release_event),
        b"clEnqueueReadBuffer" => k!(enqueue_read_buffer),
        _ => None,
    }
}

/// The hooked OpenCL function called `name`, if any.
fn known_cl(name: &[u8]) -> Option<Known> {
    match name {
        b"clCreateProgramWithSource" => k!(create_program_with_source),
        b"clCreateProgramWithIL" => k!(create_program_with_il),
        b"clCreateProgramWithILKHR" => k!(create_program_with_il_khr),
        b"clCreateProgramWithBinary" => k!(create_program_with_binary),
        b"clBuildProgram" => k!(build_program),
        b"clCompileProgram" => k!(compile_program),
        b"clSetProgramSpecializationConstant" => k!(set_program_specialization_constant),
        b"clLinkProgram" => k!(link_program),
        b"clCreateKernel" => k!(create_kernel),
        b"clCreateKernelsInProgram" => k!(create_kernels_in_program),
        b"clCloneKernel" => k!(clone_kernel),
        b"clSetKernelArg" => k!(set_kernel_arg),
        b"clEnqueueNDRangeKernel" => k!(enqueue_nd_range_kernel),
        b"clEnqueueTask" => k!(enqueue_task),
        b"clEnqueueNDCountKernelINTEL" => k!(enqueue_nd_count_kernel_intel),
        b"clGetExtensionFunctionAddress" => k!(get_extension_function_address),
        b"clGetExtensionFunctionAddressForPlatform" => {
            k!(get_extension_function_address_for_platform)
        }
        _ => None,
    }
}

/// What a program that looked `name` up gets instead of `real`: the hook
/// slot that stands in for it (claimed now if need be), or `real` itself
/// for a function not hooked, a hook already, or one past the slots. The
/// query functions the interposer calls itself are kept.
pub fn stand_in(name: &[u8], real: usize) -> usize {
    if !crate::state::enabled_now() {
        return real;
    }
    if matches!(
        name,
        b"zeCommandListIsGraphCaptureEnabledExt" | b"zeCommandListIsGraphCaptureEnabledExp"
    ) {
        IS_GRAPH_CAPTURE_ENABLED.claim(real);
    } else if name == b"zeCommandListGetGraphExt" {
        GET_GRAPH.claim(real);
    }
    let Some(k) = known(name) else { return real };
    let hooks = (k.addrs)();
    if hooks.contains(&real) {
        return real;
    }
    if name.starts_with(b"ze") {
        crate::state::activate();
    }
    match k.real.claim(real) {
        Some(slot) => hooks[slot],
        None => real,
    }
}
