//! Level Zero functions the interposer calls itself, without hooking them:
//! what a new module holds (its kernels' names, the driver's binary), the
//! device it was built for, a new kernel's local memory, and whether an
//! immediate list records into a graph (asked about a list while some
//! capture is active, and when a capture begins). Their real functions are
//! found as the hooks' are (exports, tables, and by name), by the layers
//! above.

use super::ffi::*;
use crate::real::{Real, SLOTS};
use std::ffi::{c_char, CStr};

/// Real `zeModuleGetKernelNames` of each `zeModuleCreate` slot (not hooked:
/// the interposer calls it to list a new module's kernels).
pub static GET_KERNEL_NAMES: Real = Real::new(c"zeModuleGetKernelNames");
/// Real `zeModuleGetNativeBinary` of each `zeModuleCreate` slot (not hooked:
/// the interposer calls it once per module, to keep the driver's binary of
/// what it compiled, or of what it rebuilt from a native module).
pub static GET_NATIVE_BINARY: Real = Real::new(c"zeModuleGetNativeBinary");
/// Real `zeDeviceGetProperties` (not hooked: asked once per device that a
/// module is built for). Slots other than 0 hold the implementations found
/// beside `zeModuleCreate` through `dlsym` or in device tables; slot 0, the
/// next definition of the exported symbol, answers only once the program
/// called the exported `zeInit`.
pub static DEVICE_GET_PROPERTIES: Real = Real::new(c"zeDeviceGetProperties");
/// Real `zeDeviceGetComputeProperties` (not hooked: asked with
/// [`DEVICE_GET_PROPERTIES`], found beside it).
pub static DEVICE_GET_COMPUTE_PROPERTIES: Real = Real::new(c"zeDeviceGetComputeProperties");
/// Real `zeKernelGetProperties` of each `zeKernelCreate` slot (not hooked:
/// asked once per kernel created, for its static local memory).
pub static KERNEL_GET_PROPERTIES: Real = Real::new(c"zeKernelGetProperties");

/// A kernel's static local memory per group (`localMemSize`), or `None`
/// when the driver cannot be asked.
///
/// # Safety
/// `f` is a real `zeKernelGetProperties` or 0; `kernel` a live kernel.
pub unsafe fn kernel_slm(f: usize, kernel: Handle) -> Option<u32> {
    type GetProps = unsafe extern "C" fn(Handle, *mut KernelProperties) -> ZeResult;
    if f == 0 {
        return None;
    }
    // SAFETY: per this function's contract.
    let f: GetProps = unsafe { std::mem::transmute::<usize, GetProps>(f) };
    // SAFETY: plain data; all-zero is a valid value of every field.
    let mut props: KernelProperties = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    // SAFETY: a valid properties structure for the driver to fill.
    (unsafe { f(kernel, &mut props) } == ZE_RESULT_SUCCESS).then_some(props.local_mem_size)
}

/// Reads a C string, or `None` for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// The driver's binary of a built module (`zeModuleGetNativeBinary`).
///
/// # Safety
/// `f` is a real `zeModuleGetNativeBinary`, `module` a live module.
pub unsafe fn native_binary(f: usize, module: Handle) -> Result<Vec<u8>, String> {
    type GetBinary = unsafe extern "C" fn(Handle, *mut usize, *mut u8) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetBinary = unsafe { std::mem::transmute::<usize, GetBinary>(f) };
    let mut size = 0usize;
    // SAFETY: the two-call pattern of the API: first the size.
    let r = unsafe { f(module, &mut size, std::ptr::null_mut()) };
    if r != ZE_RESULT_SUCCESS {
        return Err(format!("zeModuleGetNativeBinary failed (0x{r:x})"));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: buf has room for `size` bytes.
    let r = unsafe { f(module, &mut size, buf.as_mut_ptr()) };
    if r != ZE_RESULT_SUCCESS {
        return Err(format!("zeModuleGetNativeBinary failed (0x{r:x})"));
    }
    buf.truncate(size);
    Ok(buf)
}

/// What the driver says about `device`: PCI device id, name, IP version.
///
/// # Safety
/// `f` is 0 or a real `zeDeviceGetProperties`; `device` a live device.
pub unsafe fn device_properties(
    f: usize,
    device: Handle,
) -> Option<crate::state::modules::DeviceInfo> {
    if device.is_null() {
        return None;
    }
    // The module's own slot first, then the others, then the export.
    let mut tried = Vec::with_capacity(SLOTS + 1);
    let slots = std::iter::once(f).chain((1..SLOTS).map(|s| DEVICE_GET_PROPERTIES.loaded(s)));
    for g in slots.chain(std::iter::once_with(|| DEVICE_GET_PROPERTIES.get(0))) {
        if g == 0 || tried.contains(&g) {
            continue;
        }
        tried.push(g);
        // SAFETY: a real zeDeviceGetProperties; the device is live.
        if let Some(mut info) = unsafe { device_properties_with(g, device) } {
            if let Some(c) = info.compute.as_mut() {
                // SAFETY: the device is live.
                if let Some((group, slm)) = unsafe { device_compute(device) } {
                    c.max_group_size = group;
                    c.max_slm_bytes = slm;
                }
            }
            return Some(info);
        }
    }
    None
}

/// `zeDeviceGetComputeProperties` of `device`: the largest group and the
/// most local memory a group can have.
///
/// # Safety
/// `device` is a live device.
unsafe fn device_compute(device: Handle) -> Option<(u32, u32)> {
    type GetCompute = unsafe extern "C" fn(Handle, *mut DeviceComputeProperties) -> ZeResult;
    let slots = (1..SLOTS).map(|s| DEVICE_GET_COMPUTE_PROPERTIES.loaded(s));
    let mut tried = Vec::with_capacity(SLOTS);
    for g in slots.chain(std::iter::once_with(|| {
        DEVICE_GET_COMPUTE_PROPERTIES.get(0)
    })) {
        if g == 0 || tried.contains(&g) {
            continue;
        }
        tried.push(g);
        // SAFETY: a real zeDeviceGetComputeProperties.
        let f: GetCompute = unsafe { std::mem::transmute::<usize, GetCompute>(g) };
        // SAFETY: plain data; all-zero is a valid value of every field.
        let mut p: DeviceComputeProperties = unsafe { std::mem::zeroed() };
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
        // SAFETY: a valid properties structure for the driver to fill.
        if unsafe { f(device, &mut p) } == ZE_RESULT_SUCCESS {
            return Some((p.max_total_group_size, p.max_shared_local_memory));
        }
    }
    None
}

/// [`device_properties`] through one implementation `f` (not 0).
///
/// # Safety
/// As [`device_properties`].
unsafe fn device_properties_with(
    f: usize,
    device: Handle,
) -> Option<crate::state::modules::DeviceInfo> {
    type GetProps = unsafe extern "C" fn(Handle, *mut DeviceProperties) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetProps = unsafe { std::mem::transmute::<usize, GetProps>(f) };
    let mut ip = DeviceIpVersionExt {
        stype: ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT,
        p_next: std::ptr::null(),
        ip_version: 0,
    };
    // SAFETY: plain data; all-zero is a valid value of every field.
    let mut props: DeviceProperties = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    props.p_next = (&mut ip as *mut DeviceIpVersionExt).cast();
    // SAFETY: a valid, chained properties structure for the driver to fill.
    let mut r = unsafe { f(device, &mut props) };
    if r != ZE_RESULT_SUCCESS {
        // A driver that refuses the unknown extension: ask without it.
        props.p_next = std::ptr::null_mut();
        ip.ip_version = 0;
        // SAFETY: as above, without the chain.
        r = unsafe { f(device, &mut props) };
    }
    if r != ZE_RESULT_SUCCESS {
        return None;
    }
    let end = props
        .name
        .iter()
        .position(|b| *b == 0)
        .unwrap_or(props.name.len());
    Some(crate::state::modules::DeviceInfo {
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        name: props.name[..end].to_vec(),
        ip_version: (ip.ip_version != 0).then_some(ip.ip_version),
        compute: Some(crate::state::modules::DeviceCompute {
            slices: props.num_slices,
            subslices_per_slice: props.num_subslices_per_slice,
            eus_per_subslice: props.num_eus_per_subslice,
            threads_per_eu: props.num_threads_per_eu,
            eu_simd_width: props.physical_eu_simd_width,
            max_group_size: 0,
            max_slm_bytes: 0,
        }),
    })
}

/// # Safety
/// `f` is a real `zeModuleGetKernelNames`, `module` a live module.
pub unsafe fn kernel_names(f: usize, module: Handle) -> Vec<Vec<u8>> {
    type GetNames = unsafe extern "C" fn(Handle, *mut u32, *mut *const c_char) -> ZeResult;
    // SAFETY: per this function's contract.
    let f: GetNames = unsafe { std::mem::transmute::<usize, GetNames>(f) };
    let mut count = 0u32;
    // SAFETY: the two-call pattern of the API.
    if unsafe { f(module, &mut count, std::ptr::null_mut()) } != ZE_RESULT_SUCCESS {
        return Vec::new();
    }
    let mut ptrs = vec![std::ptr::null::<c_char>(); count as usize];
    // SAFETY: ptrs has room for count names.
    if unsafe { f(module, &mut count, ptrs.as_mut_ptr()) } != ZE_RESULT_SUCCESS {
        return Vec::new();
    }
    ptrs.iter()
        .take(count as usize)
        // SAFETY: names owned by the module, valid while it lives.
        .filter_map(|p| unsafe { c_bytes(*p) }.map(<[u8]>::to_vec))
        .collect()
}

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
