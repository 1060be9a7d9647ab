//! The least of OpenCL that builds a program again: the ICD loader
//! (`libOpenCL.so.1`, opened at run time), the first GPU, a context,
//! `clCreateProgramWithIL`, `clSetProgramSpecializationConstant`,
//! `clBuildProgram` with the program's options, `clCreateKernel`. An OpenCL
//! program is ported through OpenCL, not Level Zero: NEO gives the two
//! APIs different internal options.

use libloading::Library;
use std::ffi::{c_char, c_void, CString};

type Handle = *mut c_void;
type ClInt = i32;

/// The ICD loader's name (ocl-icd).
const LOADER: &str = "libOpenCL.so.1";
const CL_DEVICE_TYPE_GPU: u64 = 1 << 2;
const CL_PROGRAM_BUILD_LOG: u32 = 0x1183;

type PlatformIdsFn = unsafe extern "C" fn(u32, *mut Handle, *mut u32) -> ClInt;
type DeviceIdsFn = unsafe extern "C" fn(Handle, u64, u32, *mut Handle, *mut u32) -> ClInt;
type ContextFn = unsafe extern "C" fn(
    *const isize,
    u32,
    *const Handle,
    *const c_void,
    *mut c_void,
    *mut ClInt,
) -> Handle;
type WithIlFn = unsafe extern "C" fn(Handle, *const c_void, usize, *mut ClInt) -> Handle;
type SpecFn = unsafe extern "C" fn(Handle, u32, usize, *const c_void) -> ClInt;
type BuildFn = unsafe extern "C" fn(
    Handle,
    u32,
    *const Handle,
    *const c_char,
    *const c_void,
    *mut c_void,
) -> ClInt;
type BuildInfoFn =
    unsafe extern "C" fn(Handle, Handle, u32, usize, *mut c_void, *mut usize) -> ClInt;
type KernelFn = unsafe extern "C" fn(Handle, *const c_char, *mut ClInt) -> Handle;
type ReleaseFn = unsafe extern "C" fn(Handle) -> ClInt;

/// The loader's entry points used here, a context on the first GPU.
pub struct Cl {
    with_il: WithIlFn,
    spec: SpecFn,
    build: BuildFn,
    build_info: BuildInfoFn,
    kernel: KernelFn,
    release_kernel: ReleaseFn,
    release_program: ReleaseFn,
    release_context: ReleaseFn,
    context: Handle,
    device: Handle,
    _lib: Library,
}

impl Cl {
    /// Opens the loader and makes a context on the first GPU.
    pub fn open() -> Result<Cl, String> {
        // SAFETY: loading runs the loader's initialisers; the library every
        // OpenCL program loads.
        let lib = unsafe { Library::new(LOADER) }
            .map_err(|e| format!("cannot load the OpenCL loader {LOADER}: {e}"))?;
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the prototype is cl.h's; used only while `lib`
                // lives (kept in the same struct).
                let s: libloading::Symbol<$t> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{LOADER} has no {}: {e}", $name))?;
                *s
            }};
        }
        let platforms: PlatformIdsFn = sym!(PlatformIdsFn, "clGetPlatformIDs");
        let devices: DeviceIdsFn = sym!(DeviceIdsFn, "clGetDeviceIDs");
        let create_context: ContextFn = sym!(ContextFn, "clCreateContext");
        let device = first_gpu(platforms, devices)?;
        let mut err: ClInt = 0;
        // SAFETY: one live device, no callback.
        let context = unsafe {
            create_context(
                std::ptr::null(),
                1,
                &device,
                std::ptr::null(),
                std::ptr::null_mut(),
                &mut err,
            )
        };
        if context.is_null() {
            return Err(format!("clCreateContext failed ({err})"));
        }
        Ok(Cl {
            with_il: sym!(WithIlFn, "clCreateProgramWithIL"),
            spec: sym!(SpecFn, "clSetProgramSpecializationConstant"),
            build: sym!(BuildFn, "clBuildProgram"),
            build_info: sym!(BuildInfoFn, "clGetProgramBuildInfo"),
            kernel: sym!(KernelFn, "clCreateKernel"),
            release_kernel: sym!(ReleaseFn, "clReleaseKernel"),
            release_program: sym!(ReleaseFn, "clReleaseProgram"),
            release_context: sym!(ReleaseFn, "clReleaseContext"),
            context,
            device,
            _lib: lib,
        })
    }

    /// Builds `spirv` with `options` and the specialization `constants`
    /// (id, the value's bytes), creates each of `kernels` (then releases
    /// all): the build log when the build fails.
    pub fn build(
        &self,
        spirv: &[u8],
        options: &str,
        constants: &[(u32, Vec<u8>)],
        kernels: &[Vec<u8>],
    ) -> Result<(), String> {
        let options =
            CString::new(options).map_err(|_| "build options hold a NUL byte".to_string())?;
        let mut err: ClInt = 0;
        // SAFETY: a live context, the IL's bytes for the call.
        let program =
            unsafe { (self.with_il)(self.context, spirv.as_ptr().cast(), spirv.len(), &mut err) };
        if program.is_null() {
            return Err(format!("clCreateProgramWithIL failed ({err})"));
        }
        let result = self.build_program(program, &options, constants, kernels);
        // SAFETY: the program made above, released once.
        unsafe { (self.release_program)(program) };
        result
    }

    fn build_program(
        &self,
        program: Handle,
        options: &CString,
        constants: &[(u32, Vec<u8>)],
        kernels: &[Vec<u8>],
    ) -> Result<(), String> {
        for (id, value) in constants {
            // SAFETY: a live program; the value's bytes for the call.
            let r = unsafe { (self.spec)(program, *id, value.len(), value.as_ptr().cast()) };
            if r != 0 {
                return Err(format!(
                    "clSetProgramSpecializationConstant({id}) failed ({r})"
                ));
            }
        }
        // SAFETY: a live program and device, options for the call, no callback.
        let r = unsafe {
            (self.build)(
                program,
                1,
                &self.device,
                options.as_ptr(),
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        if r != 0 {
            return Err(format!(
                "clBuildProgram failed ({r}): {}",
                self.build_log(program).trim()
            ));
        }
        for name in kernels {
            // The exact bytes of the name, as the program gave them.
            let shown = crate::names::in_message(name);
            let c = CString::new(name.as_slice())
                .map_err(|_| format!("kernel name {shown} holds a NUL byte"))?;
            let mut err: ClInt = 0;
            // SAFETY: a built program, a name for the call.
            let k = unsafe { (self.kernel)(program, c.as_ptr(), &mut err) };
            if k.is_null() {
                return Err(format!("clCreateKernel({shown}) failed ({err})"));
            }
            // SAFETY: the kernel made above, released once.
            unsafe { (self.release_kernel)(k) };
        }
        Ok(())
    }

    fn build_log(&self, program: Handle) -> String {
        let mut size = 0usize;
        // SAFETY: a live program and device; size query first.
        let r = unsafe {
            (self.build_info)(
                program,
                self.device,
                CL_PROGRAM_BUILD_LOG,
                0,
                std::ptr::null_mut(),
                &mut size,
            )
        };
        if r != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: a buffer of the size the driver asked for.
        let r = unsafe {
            (self.build_info)(
                program,
                self.device,
                CL_PROGRAM_BUILD_LOG,
                size,
                buf.as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        };
        if r != 0 {
            return String::new();
        }
        String::from_utf8_lossy(buf.split(|b| *b == 0).next().unwrap_or_default()).into_owned()
    }
}

impl Drop for Cl {
    fn drop(&mut self) {
        // SAFETY: the context this made, released once.
        unsafe { (self.release_context)(self.context) };
    }
}

/// The first GPU of the first platform that has one.
fn first_gpu(platforms: PlatformIdsFn, devices: DeviceIdsFn) -> Result<Handle, String> {
    let mut n = 0u32;
    // SAFETY: count query.
    if unsafe { platforms(0, std::ptr::null_mut(), &mut n) } != 0 || n == 0 {
        return Err("no OpenCL platform here".into());
    }
    let mut list = vec![std::ptr::null_mut(); n as usize];
    // SAFETY: a list of the size counted.
    if unsafe { platforms(n, list.as_mut_ptr(), std::ptr::null_mut()) } != 0 {
        return Err("clGetPlatformIDs failed".into());
    }
    for p in list {
        let mut device: Handle = std::ptr::null_mut();
        let mut found = 0u32;
        // SAFETY: a live platform, room for one device.
        let r = unsafe { devices(p, CL_DEVICE_TYPE_GPU, 1, &mut device, &mut found) };
        if r == 0 && found > 0 && !device.is_null() {
            return Ok(device);
        }
    }
    Err("no OpenCL GPU here".into())
}
