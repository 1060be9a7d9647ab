//! Wrapping the DDI function tables.
//!
//! `zeGet<Object>ProcAddrTable` fills a table of function pointers. It is
//! called by the loader on the driver (to build its dispatch) and by runtimes
//! that call Level Zero only through tables (the SYCL adapter). The
//! interposer stands in for these getters (exported, and returned by its
//! `dlsym`): after the real getter filled the table, each hooked entry is
//! replaced by the hook slot that holds that entry as its real function.
//! Entries that already are hooks are left alone, so a table copied from an
//! already wrapped one is not wrapped twice.

use super::ffi::*;
use super::hooks;
use crate::real::{Real, SLOTS};
use crate::state;

/// Replaces entry `e` of `table` by the hook slot for its current value.
/// Returns that slot.
///
/// # Safety
/// `table` was just filled by a real getter for `version`.
unsafe fn patch(
    table: *mut usize,
    version: u32,
    e: Entry,
    real: &Real,
    hooks: [usize; SLOTS],
) -> Option<usize> {
    if version < e.since {
        return None;
    }
    // SAFETY: a table filled for `version` has this entry (e.since <= version).
    let slot = unsafe { table.add(e.index) };
    // SAFETY: as above.
    let current = unsafe { *slot };
    if current == 0 {
        return None;
    }
    if let Some(s) = hooks.iter().position(|h| *h == current) {
        return Some(s);
    }
    match real.claim(current) {
        Some(s) => {
            // SAFETY: as above; the table belongs to the caller, who asked
            // for it to be filled.
            unsafe { *slot = hooks[s] };
            Some(s)
        }
        None => {
            crate::output::warn(&format!(
                "more than {} distinct implementations of {:?}; one table is left unwrapped",
                SLOTS - 1,
                real.name
            ));
            None
        }
    }
}

/// One hooked entry of a table: where it is, its real functions, and the
/// hook slots that stand in for them.
type Hooked = (Entry, &'static Real, [usize; SLOTS]);

/// The [`Hooked`] entry `$entry` of a table, stood in for by `hooks::$hook`.
macro_rules! hooked {
    ($entry:expr, $hook:ident) => {
        ($entry, &hooks::$hook::REAL, hooks::$hook::addrs())
    };
}

/// What to do to each table once filled.
///
/// # Safety
/// `table` was just filled by the real getter `getter` for `version`.
unsafe fn wrap(getter: &str, version: u32, table: *mut usize) {
    // SAFETY: forwarded from this function's contract in every call below.
    unsafe {
        match getter {
            "zeGetModuleProcAddrTable" => wrap_module_table(table, version),
            "zeGetDeviceProcAddrTable" => read_device_table(table, version),
            "zeGetKernelProcAddrTable" => wrap_kernel_table(table, version),
            "zeGetCommandQueueProcAddrTable" => patch_all(table, version, &command_queue_hooks()),
            "zeGetCommandListProcAddrTable" => {
                patch_all(table, version, &command_list_hooks());
                patch_all(table, version, &command_list_graph_hooks());
                read_capture_queries(table, version);
            }
            "zeGetCommandListExpProcAddrTable" => {
                patch_all(table, version, &command_list_exp_hooks())
            }
            "zeGetGraphProcAddrTable" => patch_all(table, version, &graph_hooks()),
            "zeGetExecutableGraphProcAddrTable" => {
                patch_all(table, version, &executable_graph_hooks())
            }
            "zeGetDriverProcAddrTable" => patch_all(table, version, &driver_hooks()),
            _ => {}
        }
        if crate::config::timing() {
            wrap_for_timing(getter, version, table);
        }
    }
}

/// While launches are timed: the functions timing calls itself are
/// learned from each table (before it is patched), and timing's own
/// hooks installed.
///
/// # Safety
/// As [`wrap`].
unsafe fn wrap_for_timing(getter: &str, version: u32, table: *mut usize) {
    // SAFETY: per this function's contract.
    unsafe {
        learn_for_timing(getter, version, table);
        patch_all(table, version, &timing_hooks(getter));
    }
}

/// The functions timing calls itself, from the table `getter` filled.
///
/// # Safety
/// As [`wrap`].
unsafe fn learn_for_timing(getter: &str, version: u32, table: *mut usize) {
    use crate::ze::time::fns::learn;
    use time_entries as e;
    // SAFETY: the entry is in a table filled for `version` (its `since`).
    let at = |x: Entry| match version >= x.since {
        true => unsafe { *table.add(x.index) },
        false => 0,
    };
    match getter {
        "zeGetEventProcAddrTable" => {
            let (c, r, q) = (
                at(e::EVENT_CREATE),
                at(e::EVENT_HOST_RESET),
                at(e::EVENT_QUERY_KERNEL_TIMESTAMP),
            );
            learn(c, |f| {
                (f.event_create, f.host_reset, f.query_timestamp) = (c, r, q)
            });
        }
        "zeGetEventPoolProcAddrTable" => {
            let c = at(e::POOL_CREATE);
            learn(c, |f| f.pool_create = c);
        }
        "zeGetCommandListProcAddrTable" => {
            let b = at(e::LIST_APPEND_BARRIER);
            learn(b, |f| f.append_barrier = b);
        }
        "zeGetDeviceProcAddrTable" => {
            let d = at(device_table::GET_PROPERTIES);
            learn(d, |f| f.device_properties = d);
        }
        _ => {}
    }
}

/// The [`Hooked`] entry `$entry` of a table, stood in for by timing's
/// hook `$hook`.
macro_rules! timing {
    ($entry:ident, $hook:ident) => {
        (
            time_entries::$entry,
            &crate::ze::time::hooks::$hook::REAL,
            crate::ze::time::hooks::$hook::addrs(),
        )
    };
}

/// Timing's own hooks in the table `getter` filled.
fn timing_hooks(getter: &str) -> Vec<Hooked> {
    match getter {
        "zeGetEventProcAddrTable" => vec![
            timing!(EVENT_CREATE, event_create),
            timing!(EVENT_DESTROY, event_destroy),
            timing!(EVENT_HOST_SYNCHRONIZE, event_host_synchronize),
            timing!(EVENT_QUERY_STATUS, event_query_status),
            timing!(EVENT_HOST_RESET, event_host_reset),
            timing!(EVENT_COUNTER_BASED_CREATE, event_counter_based_create),
        ],
        "zeGetEventPoolProcAddrTable" => vec![
            timing!(POOL_CREATE, event_pool_create),
            timing!(POOL_DESTROY, event_pool_destroy),
        ],
        "zeGetFenceProcAddrTable" => vec![
            timing!(FENCE_HOST_SYNCHRONIZE, fence_host_synchronize),
            timing!(FENCE_QUERY_STATUS, fence_query_status),
        ],
        "zeGetContextProcAddrTable" => vec![timing!(CONTEXT_DESTROY, context_destroy)],
        "zeGetCommandQueueProcAddrTable" => {
            vec![timing!(QUEUE_SYNCHRONIZE, command_queue_synchronize)]
        }
        "zeGetCommandListProcAddrTable" => vec![
            timing!(LIST_HOST_SYNCHRONIZE, command_list_host_synchronize),
            timing!(LIST_APPEND_EVENT_RESET, append_event_reset),
        ],
        _ => Vec::new(),
    }
}

/// Patches each of `entries` of `table` (see [`patch`]).
///
/// # Safety
/// As [`patch`].
unsafe fn patch_all(table: *mut usize, version: u32, entries: &[Hooked]) {
    for (e, real, hooks) in entries {
        // SAFETY: per this function's contract.
        unsafe { patch(table, version, *e, real, *hooks) };
    }
}

/// The module table: `zeModuleCreate` is wrapped, and the functions beside
/// it that the recording of a module calls are kept for its slot.
///
/// # Safety
/// `table` was just filled by a real `zeGetModuleProcAddrTable` for `version`.
unsafe fn wrap_module_table(table: *mut usize, version: u32) {
    use super::queries::{GET_KERNEL_NAMES, GET_NATIVE_BINARY};
    use hooks::module_create;
    // SAFETY: per this function's contract.
    let slot = unsafe {
        patch(
            table,
            version,
            module_table::CREATE,
            &module_create::REAL,
            module_create::addrs(),
        )
    };
    if let Some(s) = slot {
        // SAFETY: patch found CREATE, so the table is filled for a version
        // that has these entries too (as old as CREATE).
        unsafe {
            GET_KERNEL_NAMES.set(s, *table.add(module_table::GET_KERNEL_NAMES.index));
            GET_NATIVE_BINARY.set(s, *table.add(module_table::GET_NATIVE_BINARY.index));
        }
    }
}

/// The device table is not wrapped, only read: for asking a module's device
/// about itself where the exported function is not initialised (a program
/// that calls Level Zero through tables only).
///
/// # Safety
/// `table` was just filled by a real `zeGetDeviceProcAddrTable` for `version`.
unsafe fn read_device_table(table: *mut usize, version: u32) {
    let e = device_table::GET_PROPERTIES;
    if version < e.since {
        return;
    }
    // SAFETY: a table filled for `version` has this entry.
    let f = unsafe { *table.add(e.index) };
    if f != 0 {
        if let Some(s) = super::queries::DEVICE_GET_PROPERTIES.claim(f) {
            // SAFETY: the next entry, as old (Level Zero 1.0).
            let g = unsafe { *table.add(device_table::GET_COMPUTE_PROPERTIES.index) };
            super::queries::DEVICE_GET_COMPUTE_PROPERTIES.set(s, g);
        }
    }
}

/// The kernel table's hooked entries: a kernel is mapped to its counter when
/// created, forgotten when destroyed; its group size and the arguments set
/// without a value make its launches' shapes.
fn kernel_hooks() -> [Hooked; 3] {
    [
        hooked!(kernel_table::DESTROY, kernel_destroy),
        hooked!(kernel_table::SET_GROUP_SIZE, kernel_set_group_size),
        hooked!(kernel_table::SET_ARGUMENT_VALUE, kernel_set_argument_value),
    ]
}

/// The kernel table: [`kernel_hooks`], and `zeKernelCreate` wrapped with
/// the `zeKernelGetProperties` beside it kept for its slot.
///
/// # Safety
/// `table` was just filled by a real `zeGetKernelProcAddrTable` for `version`.
unsafe fn wrap_kernel_table(table: *mut usize, version: u32) {
    use super::queries::KERNEL_GET_PROPERTIES;
    use hooks::kernel_create;
    // SAFETY: per this function's contract.
    unsafe { patch_all(table, version, &kernel_hooks()) };
    // SAFETY: as above.
    let slot = unsafe {
        patch(
            table,
            version,
            kernel_table::CREATE,
            &kernel_create::REAL,
            kernel_create::addrs(),
        )
    };
    if let Some(s) = slot {
        // SAFETY: a table filled for a version with CREATE has this entry
        // (both Level Zero 1.0).
        unsafe { KERNEL_GET_PROPERTIES.set(s, *table.add(kernel_table::GET_PROPERTIES.index)) };
    }
}

/// The command queue table's hooked entry: executing regular lists makes
/// their appends launches.
fn command_queue_hooks() -> [Hooked; 1] {
    [hooked!(
        command_queue_table::EXECUTE_COMMAND_LISTS,
        command_queue_execute_command_lists
    )]
}

/// The command list table's hooked entries: lists are tracked, and every
/// kind of kernel append is counted.
fn command_list_hooks() -> [Hooked; 10] {
    use command_list_table as t;
    [
        hooked!(t::CREATE, command_list_create),
        hooked!(t::CREATE_IMMEDIATE, command_list_create_immediate),
        hooked!(t::DESTROY, command_list_destroy),
        hooked!(t::RESET, command_list_reset),
        hooked!(t::APPEND_LAUNCH_KERNEL, append_launch_kernel),
        hooked!(
            t::APPEND_LAUNCH_COOPERATIVE_KERNEL,
            append_launch_cooperative_kernel
        ),
        hooked!(
            t::APPEND_LAUNCH_KERNEL_INDIRECT,
            append_launch_kernel_indirect
        ),
        hooked!(
            t::APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT,
            append_launch_multiple_kernels_indirect
        ),
        hooked!(
            t::APPEND_LAUNCH_KERNEL_WITH_PARAMETERS,
            append_launch_kernel_with_parameters
        ),
        hooked!(
            t::APPEND_LAUNCH_KERNEL_WITH_ARGUMENTS,
            append_launch_kernel_with_arguments
        ),
    ]
}

/// The command list table's entries of API 1.16 and 1.17: regular lists
/// appended to an immediate one are executed (or captured), graph captures
/// begin and end, executable graphs are appended.
fn command_list_graph_hooks() -> [Hooked; 5] {
    use command_list_graph_entries as t;
    [
        hooked!(
            t::IMMEDIATE_APPEND_COMMAND_LISTS_WITH_PARAMETERS,
            command_list_immediate_append_command_lists_with_parameters
        ),
        hooked!(t::BEGIN_GRAPH_CAPTURE_EXT, begin_graph_capture_ext),
        hooked!(
            t::BEGIN_CAPTURE_INTO_GRAPH_EXT,
            begin_capture_into_graph_ext
        ),
        hooked!(t::END_GRAPH_CAPTURE_EXT, end_graph_capture_ext),
        hooked!(t::APPEND_GRAPH_EXT, append_graph_ext),
    ]
}

/// The command list table's capture queries are not wrapped, only kept:
/// the interposer asks them about immediate lists while a capture is active.
///
/// # Safety
/// `table` was just filled by a real `zeGetCommandListProcAddrTable` for `version`.
unsafe fn read_capture_queries(table: *mut usize, version: u32) {
    use command_list_graph_entries as t;
    for (e, real) in [
        (
            t::IS_GRAPH_CAPTURE_ENABLED_EXT,
            &super::queries::IS_GRAPH_CAPTURE_ENABLED,
        ),
        (t::GET_GRAPH_EXT, &super::queries::GET_GRAPH),
    ] {
        if version < e.since {
            continue;
        }
        // SAFETY: a table filled for `version` has this entry.
        let f = unsafe { *table.add(e.index) };
        if f != 0 {
            real.claim(f);
        }
    }
}

/// The command list extension table's hooked entries: regular lists
/// appended to an immediate one are executed; mutable commands are tracked
/// and their kernels swapped.
fn command_list_exp_hooks() -> [Hooked; 4] {
    use command_list_exp_table as t;
    [
        hooked!(
            t::IMMEDIATE_APPEND_COMMAND_LISTS_EXP,
            command_list_immediate_append_command_lists_exp
        ),
        hooked!(t::GET_NEXT_COMMAND_ID_EXP, get_next_command_id_exp),
        hooked!(
            t::GET_NEXT_COMMAND_ID_WITH_KERNELS_EXP,
            get_next_command_id_with_kernels_exp
        ),
        hooked!(
            t::UPDATE_MUTABLE_COMMAND_KERNELS_EXP,
            update_mutable_command_kernels_exp
        ),
    ]
}

/// The graph table's hooked entries: graphs are created, instantiated and
/// destroyed.
fn graph_hooks() -> [Hooked; 3] {
    [
        hooked!(graph_table::CREATE_EXT, graph_create_ext),
        hooked!(graph_table::INSTANTIATE_EXT, graph_instantiate_ext),
        hooked!(graph_table::DESTROY_EXT, graph_destroy_ext),
    ]
}

/// The executable graph table's hooked entry: an executable graph destroyed
/// is forgotten.
fn executable_graph_hooks() -> [Hooked; 1] {
    [hooked!(
        executable_graph_table::DESTROY_EXT,
        executable_graph_destroy_ext
    )]
}

/// The driver table's hooked entry: functions handed out by name are the
/// hooks.
fn driver_hooks() -> [Hooked; 1] {
    [hooked!(
        driver_table::GET_EXTENSION_FUNCTION_ADDRESS,
        driver_get_extension_function_address
    )]
}

macro_rules! getter {
    ($export:ident => $module:ident) => {
        pub mod $module {
            use super::*;
            pub type F = unsafe extern "C" fn(u32, *mut usize) -> ZeResult;
            pub static REAL: Real = Real::new(crate::macros::cstr!(stringify!($export)));

            /// # Safety
            /// Same contract as the Level Zero getter of this name.
            pub unsafe extern "C" fn hook<const S: usize>(
                version: u32,
                table: *mut usize,
            ) -> ZeResult {
                let p = REAL.get(S);
                if p == 0 {
                    return ZE_RESULT_ERROR_UNINITIALIZED;
                }
                // SAFETY: slot S holds a getter of this signature.
                let real: F = unsafe { std::mem::transmute::<usize, F>(p) };
                // SAFETY: forwarding the caller's arguments unchanged.
                let result = unsafe { real(version, table) };
                if result == ZE_RESULT_SUCCESS && !table.is_null() && state::enabled_now() {
                    state::activate();
                    // SAFETY: the real getter just filled `table` for `version`.
                    crate::guard::no_panic(|| unsafe { wrap(stringify!($export), version, table) });
                }
                result
            }

            pub const ALL: [F; SLOTS] = [
                hook::<0>, hook::<1>, hook::<2>, hook::<3>, hook::<4>, hook::<5>,
            ];

            pub fn addrs() -> [usize; SLOTS] {
                ALL.map(|f| f as usize)
            }
        }

        /// # Safety
        /// Same contract as the Level Zero getter of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $export(version: u32, table: *mut usize) -> ZeResult {
            // SAFETY: the caller keeps the Level Zero contract.
            unsafe { $module::hook::<0>(version, table) }
        }
    };
}

getter!(zeGetModuleProcAddrTable => get_module_table);
getter!(zeGetDeviceProcAddrTable => get_device_table);
getter!(zeGetKernelProcAddrTable => get_kernel_table);
getter!(zeGetCommandQueueProcAddrTable => get_command_queue_table);
getter!(zeGetCommandListProcAddrTable => get_command_list_table);
getter!(zeGetCommandListExpProcAddrTable => get_command_list_exp_table);
getter!(zeGetGraphProcAddrTable => get_graph_table);
getter!(zeGetExecutableGraphProcAddrTable => get_executable_graph_table);
getter!(zeGetDriverProcAddrTable => get_driver_table);
getter!(zeGetEventProcAddrTable => get_event_table);
getter!(zeGetEventPoolProcAddrTable => get_event_pool_table);
getter!(zeGetFenceProcAddrTable => get_fence_table);
getter!(zeGetContextProcAddrTable => get_context_table);
