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

use crate::ffi::*;
use crate::hooks;
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

/// What to do to each table once filled.
///
/// # Safety
/// `table` was just filled by the real getter `getter` for `version`.
unsafe fn wrap(getter: &str, version: u32, table: *mut usize) {
    use hooks::*;
    // SAFETY: forwarded from this function's contract in every call below.
    unsafe {
        match getter {
            "zeGetModuleProcAddrTable" => {
                if let Some(s) = patch(
                    table,
                    version,
                    module_table::CREATE,
                    &module_create::REAL,
                    module_create::addrs(),
                ) {
                    let names = *table.add(module_table::GET_KERNEL_NAMES.index);
                    GET_KERNEL_NAMES.set(s, names);
                    let native = *table.add(module_table::GET_NATIVE_BINARY.index);
                    GET_NATIVE_BINARY.set(s, native);
                }
            }
            // Not wrapped: only read, for asking a module's device about
            // itself where the exported function is not initialised (a
            // program that calls Level Zero through tables only).
            "zeGetDeviceProcAddrTable" => {
                let e = device_table::GET_PROPERTIES;
                if version >= e.since {
                    let f = *table.add(e.index);
                    if f != 0 {
                        DEVICE_GET_PROPERTIES.claim(f);
                    }
                }
            }
            "zeGetKernelProcAddrTable" => {
                patch(
                    table,
                    version,
                    kernel_table::CREATE,
                    &kernel_create::REAL,
                    kernel_create::addrs(),
                );
                patch(
                    table,
                    version,
                    kernel_table::DESTROY,
                    &kernel_destroy::REAL,
                    kernel_destroy::addrs(),
                );
            }
            "zeGetCommandQueueProcAddrTable" => {
                patch(
                    table,
                    version,
                    command_queue_table::EXECUTE_COMMAND_LISTS,
                    &command_queue_execute_command_lists::REAL,
                    command_queue_execute_command_lists::addrs(),
                );
            }
            "zeGetCommandListProcAddrTable" => {
                use command_list_table as t;
                patch(
                    table,
                    version,
                    t::CREATE,
                    &command_list_create::REAL,
                    command_list_create::addrs(),
                );
                patch(
                    table,
                    version,
                    t::CREATE_IMMEDIATE,
                    &command_list_create_immediate::REAL,
                    command_list_create_immediate::addrs(),
                );
                patch(
                    table,
                    version,
                    t::DESTROY,
                    &command_list_destroy::REAL,
                    command_list_destroy::addrs(),
                );
                patch(
                    table,
                    version,
                    t::RESET,
                    &command_list_reset::REAL,
                    command_list_reset::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_KERNEL,
                    &append_launch_kernel::REAL,
                    append_launch_kernel::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_COOPERATIVE_KERNEL,
                    &append_launch_cooperative_kernel::REAL,
                    append_launch_cooperative_kernel::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_KERNEL_INDIRECT,
                    &append_launch_kernel_indirect::REAL,
                    append_launch_kernel_indirect::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_MULTIPLE_KERNELS_INDIRECT,
                    &append_launch_multiple_kernels_indirect::REAL,
                    append_launch_multiple_kernels_indirect::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_KERNEL_WITH_PARAMETERS,
                    &append_launch_kernel_with_parameters::REAL,
                    append_launch_kernel_with_parameters::addrs(),
                );
                patch(
                    table,
                    version,
                    t::APPEND_LAUNCH_KERNEL_WITH_ARGUMENTS,
                    &append_launch_kernel_with_arguments::REAL,
                    append_launch_kernel_with_arguments::addrs(),
                );
            }
            "zeGetCommandListExpProcAddrTable" => {
                patch(
                    table,
                    version,
                    command_list_exp_table::IMMEDIATE_APPEND_COMMAND_LISTS_EXP,
                    &command_list_immediate_append_command_lists_exp::REAL,
                    command_list_immediate_append_command_lists_exp::addrs(),
                );
            }
            _ => {}
        }
    }
}

macro_rules! getter {
    ($export:ident => $module:ident) => {
        pub mod $module {
            use super::*;
            pub type F = unsafe extern "C" fn(u32, *mut usize) -> ZeResult;
            pub static REAL: Real = Real::new(
                match std::ffi::CStr::from_bytes_with_nul(
                    concat!(stringify!($export), "\0").as_bytes(),
                ) {
                    Ok(c) => c,
                    Err(_) => panic!("bad name"),
                },
            );

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
