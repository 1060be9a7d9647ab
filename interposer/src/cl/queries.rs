//! OpenCL functions the interposer calls itself, without hooking them: what
//! a built program holds (its devices, binaries, kernel names, build
//! status), a kernel's name, a device's ids. Each is called through the
//! dispatch table its object starts with, as every ICD loader calls it (the
//! ICD ABI), so no loader has to be found, and a program reached through
//! any loader (the system's, pyopencl's bundled copy) is asked the same
//! way. Rare paths only (a program built, a kernel created).

use super::ffi::*;
use crate::state::modules::DeviceInfo;
use std::ffi::c_void;

/// The function at `index` of `object`'s dispatch table, or 0 (`cl_khr_icd`
/// 2.0's tagged objects: the table their loader keeps in their second word).
///
/// # Safety
/// `object` is NULL or a live OpenCL object of an ICD.
pub(crate) unsafe fn dispatch(object: ClHandle, index: usize) -> usize {
    if object.is_null() {
        return 0;
    }
    // SAFETY: an ICD object starts with its dispatch table's address.
    let table = unsafe { *(object as *const *const usize) };
    if table.is_null() {
        return 0;
    }
    // SAFETY: a dispatch table has every entry up to `index`.
    let table = match unsafe { *table.add(DISPATCH_GET_PLATFORM_IDS) } {
        // SAFETY: a tagged object keeps its loader's table second.
        CL_ICD2_TAG_KHR => unsafe { *(object as *const *const usize).add(1) },
        _ => table,
    };
    if table.is_null() {
        return 0;
    }
    // SAFETY: as above.
    unsafe { *table.add(index) }
}

/// `clGet*Info(object, param)` of the function at dispatch entry `index`:
/// its answer's bytes, or `None` when it fails.
///
/// # Safety
/// `object` is a live object of the kind the entry takes.
unsafe fn info(object: ClHandle, index: usize, param: ClUint) -> Option<Vec<u8>> {
    // SAFETY: per this function's contract.
    let f = unsafe { dispatch(object, index) };
    if f == 0 {
        return None;
    }
    // SAFETY: the entries `info` is used with are clGet*Info functions.
    let f: GetInfo = unsafe { std::mem::transmute::<usize, GetInfo>(f) };
    let mut size = 0usize;
    // SAFETY: the two-call pattern of the API: first the size.
    if unsafe { f(object, param, 0, std::ptr::null_mut(), &mut size) } != CL_SUCCESS {
        return None;
    }
    let mut buf = vec![0u8; size];
    // SAFETY: buf has room for `size` bytes.
    let r = unsafe {
        f(
            object,
            param,
            size,
            buf.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    (r == CL_SUCCESS).then_some(buf)
}

/// A `cl_uint` answer.
///
/// # Safety
/// As [`info`].
unsafe fn info_u32(object: ClHandle, index: usize, param: ClUint) -> Option<u32> {
    // SAFETY: per this function's contract.
    let b = unsafe { info(object, index, param) }?;
    Some(u32::from_ne_bytes(b.get(..4)?.try_into().ok()?))
}

/// A string answer, without its NUL.
fn c_string(mut b: Vec<u8>) -> Vec<u8> {
    if let Some(end) = b.iter().position(|c| *c == 0) {
        b.truncate(end);
    }
    b
}

/// What the driver says of `device`: vendor, PCI device id, name, IP
/// version (only in the encoding Level Zero gives: NEO 22.43's OpenCL
/// answers another one, and its Level Zero driver none).
///
/// # Safety
/// `device` is a live `cl_device_id`.
pub unsafe fn device_info(device: ClHandle) -> Option<DeviceInfo> {
    let i = DISPATCH_GET_DEVICE_INFO;
    // SAFETY: per this function's contract, for each query.
    unsafe {
        Some(DeviceInfo {
            vendor_id: info_u32(device, i, CL_DEVICE_VENDOR_ID)?,
            device_id: info_u32(device, i, CL_DEVICE_ID_INTEL).unwrap_or(0),
            name: info(device, i, CL_DEVICE_NAME)
                .map(c_string)
                .unwrap_or_default(),
            ip_version: info_u32(device, i, CL_DEVICE_IP_VERSION_INTEL).filter(|v| v >> 22 != 0),
            compute: device_compute(device),
        })
    }
}

/// A device's compute units and limits (`cl_intel_device_attribute_query`
/// and the core limits), when the driver answers them.
///
/// # Safety
/// `device` is a live `cl_device_id`.
unsafe fn device_compute(device: ClHandle) -> Option<crate::state::modules::DeviceCompute> {
    let i = DISPATCH_GET_DEVICE_INFO;
    let word = |param| -> Option<u64> {
        // SAFETY: per this function's contract.
        let b = unsafe { info(device, i, param) }?;
        let mut w = [0u8; 8];
        let n = b.len().min(8);
        w[..n].copy_from_slice(&b[..n]);
        Some(u64::from_ne_bytes(w))
    };
    let small = |param| word(param).map(|v| v as u32);
    Some(crate::state::modules::DeviceCompute {
        slices: small(CL_DEVICE_NUM_SLICES_INTEL)?,
        subslices_per_slice: small(CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL)?,
        eus_per_subslice: small(CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL)?,
        threads_per_eu: small(CL_DEVICE_NUM_THREADS_PER_EU_INTEL)?,
        eu_simd_width: 0,
        max_group_size: small(CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap_or(0),
        max_slm_bytes: small(CL_DEVICE_LOCAL_MEM_SIZE).unwrap_or(0),
    })
}

/// A kernel's name (`CL_KERNEL_FUNCTION_NAME`).
///
/// # Safety
/// `kernel` is a live `cl_kernel`.
pub unsafe fn kernel_name(kernel: ClHandle) -> Option<Vec<u8>> {
    // SAFETY: per this function's contract.
    unsafe { info(kernel, DISPATCH_GET_KERNEL_INFO, CL_KERNEL_FUNCTION_NAME) }.map(c_string)
}

/// How many kernels a built program has.
///
/// # Safety
/// `program` is a live `cl_program`.
pub unsafe fn kernel_count(program: ClHandle) -> Option<usize> {
    // SAFETY: per this function's contract.
    let b = unsafe { info(program, DISPATCH_GET_PROGRAM_INFO, CL_PROGRAM_NUM_KERNELS) }?;
    Some(usize::from_ne_bytes(b.get(..8)?.try_into().ok()?))
}

/// What a built program holds, for one device.
pub struct Built {
    pub device: ClHandle,
    /// `CL_PROGRAM_BINARIES`: what the driver runs.
    pub binary: Vec<u8>,
    pub kernel_names: Vec<Vec<u8>>,
}

/// A program's devices (`CL_PROGRAM_DEVICES`).
///
/// # Safety
/// `program` is a live `cl_program`.
unsafe fn devices(program: ClHandle) -> Vec<ClHandle> {
    // SAFETY: per this function's contract.
    let b = unsafe { info(program, DISPATCH_GET_PROGRAM_INFO, CL_PROGRAM_DEVICES) };
    b.unwrap_or_default()
        .chunks_exact(8)
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()) as ClHandle)
        .collect()
}

/// Whether `program` was built for `device` (an asynchronous build may
/// still be running when `clBuildProgram` returns).
///
/// # Safety
/// `program` is a live `cl_program`, `device` one of its devices.
pub unsafe fn built_for(program: ClHandle, device: ClHandle) -> bool {
    // SAFETY: per this function's contract.
    let f = unsafe { dispatch(program, DISPATCH_GET_PROGRAM_BUILD_INFO) };
    if f == 0 {
        return false;
    }
    // SAFETY: the entry is clGetProgramBuildInfo.
    let f: GetBuildInfo = unsafe { std::mem::transmute::<usize, GetBuildInfo>(f) };
    let mut status: ClInt = -1;
    let size = std::mem::size_of::<ClInt>();
    let p = (&mut status as *mut ClInt).cast::<c_void>();
    // SAFETY: status is writable for its size.
    let r = unsafe {
        f(
            program,
            device,
            CL_PROGRAM_BUILD_STATUS,
            size,
            p,
            std::ptr::null_mut(),
        )
    };
    r == CL_SUCCESS && status == CL_BUILD_SUCCESS
}

/// The options `program` was built for `device` with
/// (`CL_PROGRAM_BUILD_OPTIONS`), empty when the driver does not say.
///
/// # Safety
/// `program` is a live `cl_program`, `device` one of its devices.
pub unsafe fn build_options(program: ClHandle, device: ClHandle) -> Vec<u8> {
    // SAFETY: per this function's contract.
    let f = unsafe { dispatch(program, DISPATCH_GET_PROGRAM_BUILD_INFO) };
    if f == 0 {
        return Vec::new();
    }
    // SAFETY: the entry is clGetProgramBuildInfo.
    let f: GetBuildInfo = unsafe { std::mem::transmute::<usize, GetBuildInfo>(f) };
    let param = CL_PROGRAM_BUILD_OPTIONS;
    let mut size = 0usize;
    // SAFETY: the two-call pattern of the API: first the size.
    if unsafe { f(program, device, param, 0, std::ptr::null_mut(), &mut size) } != CL_SUCCESS {
        return Vec::new();
    }
    let mut buf = vec![0u8; size];
    let p = buf.as_mut_ptr().cast::<c_void>();
    // SAFETY: buf has room for `size` bytes.
    match unsafe { f(program, device, param, size, p, std::ptr::null_mut()) } {
        CL_SUCCESS => c_string(buf),
        _ => Vec::new(),
    }
}

/// A built program's binary and kernel names, for the first of its devices
/// that has a binary; `None` when it has none (not built, or built by an
/// asynchronous build still running).
///
/// # Safety
/// `program` is a live `cl_program`.
pub unsafe fn built(program: ClHandle) -> Option<Built> {
    let p = DISPATCH_GET_PROGRAM_INFO;
    // SAFETY: per this function's contract.
    let devices = unsafe { devices(program) };
    // SAFETY: as above.
    let sizes: Vec<usize> = unsafe { info(program, p, CL_PROGRAM_BINARY_SIZES) }?
        .chunks_exact(8)
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()))
        .collect();
    let at = sizes.iter().position(|&s| s != 0)?;
    let device = *devices.get(at)?;
    // SAFETY: as above.
    if !unsafe { built_for(program, device) } {
        return None;
    }
    let mut bufs: Vec<Vec<u8>> = sizes.iter().map(|&s| vec![0u8; s]).collect();
    let mut ptrs: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // SAFETY: as above.
    let f = unsafe { dispatch(program, p) };
    if f == 0 {
        return None;
    }
    // SAFETY: the entry is clGetProgramInfo; one buffer per device, each of
    // the size the driver gave.
    let r = unsafe {
        std::mem::transmute::<usize, GetInfo>(f)(
            program,
            CL_PROGRAM_BINARIES,
            ptrs.len() * std::mem::size_of::<*mut u8>(),
            ptrs.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    if r != CL_SUCCESS {
        return None;
    }
    // SAFETY: as above.
    let names = unsafe { info(program, p, CL_PROGRAM_KERNEL_NAMES) }.map(c_string);
    Some(Built {
        device,
        binary: std::mem::take(&mut bufs[at]),
        kernel_names: names
            .unwrap_or_default()
            .split(|c| *c == b';')
            .filter(|n| !n.is_empty())
            .map(<[u8]>::to_vec)
            .collect(),
    })
}
