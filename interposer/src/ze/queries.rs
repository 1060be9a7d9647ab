//! Level Zero functions the interposer calls itself, without hooking them:
//! whether an immediate list records into a graph (asked about a list
//! while some capture is active, and when a capture begins). Their real
//! functions are found as the hooks' are (exports, tables, and by name),
//! by the layers above.

use super::ffi::*;
use crate::real::{Real, SLOTS};

/// Real `zeCommandListIsGraphCaptureEnabledExt` (not hooked: asked about an
/// immediate list while some capture is active). Slot 0 is the loader's
/// export; others come from command list tables and, for its ...Exp form
/// (same signature), from zeDriverGetExtensionFunctionAddress.
pub static IS_GRAPH_CAPTURE_ENABLED: Real = Real::new(c"zeCommandListIsGraphCaptureEnabledExt");
/// Real `zeCommandListGetGraphExt` (not hooked: which graph a capturing
/// list records into).
pub static GET_GRAPH: Real = Real::new(c"zeCommandListGetGraphExt");

/// Whether `list` is capturing a graph, per the driver: `None` when it
/// cannot be asked, `Some(None)` when not, `Some(Some(graph))` when it is
/// (`graph` 0 when the driver cannot say which). Both answers of
/// `...IsGraphCaptureEnabledExt` are read: the header's
/// `ZE_RESULT_QUERY_TRUE`/`FALSE` and NEO 26's experimental values.
pub fn capture_graph(list: usize) -> Option<Option<usize>> {
    type IsEnabled = unsafe extern "C" fn(Handle) -> ZeResult;
    type GetGraph = unsafe extern "C" fn(Handle, *mut Handle) -> ZeResult;
    // Table entries first: the export (slot 0) answers only once the
    // program called the exported zeInit (a program of tables only crashes
    // the loader there).
    let first = |r: &Real| (1..SLOTS).chain([0]).map(|s| r.get(s)).find(|&f| f != 0);
    let f = first(&IS_GRAPH_CAPTURE_ENABLED)?;
    // SAFETY: a real zeCommandListIsGraphCaptureEnabledExt (or ...Exp).
    let answer = unsafe { std::mem::transmute::<usize, IsEnabled>(f)(list as Handle) };
    match answer {
        ZE_RESULT_QUERY_TRUE | ZE_RESULT_EXP_QUERY_TRUE => {}
        ZE_RESULT_QUERY_FALSE | ZE_RESULT_EXP_QUERY_FALSE => return Some(None),
        _ => return None,
    }
    let graph = first(&GET_GRAPH).map_or(0, |g| {
        let mut graph: Handle = std::ptr::null_mut();
        // SAFETY: a real zeCommandListGetGraphExt; graph is writable.
        let r = unsafe { std::mem::transmute::<usize, GetGraph>(g)(list as Handle, &mut graph) };
        if r == ZE_RESULT_SUCCESS {
            graph as usize
        } else {
            0
        }
    });
    Some(Some(graph))
}
