//! The least of Level Zero that compiles a module: the real loader
//! (`libze_loader.so.1`, opened at run time: xpu-asm-run itself links no
//! Level Zero), a driver's device, a context, `zeModuleCreate`.

use libloading::Library;
use std::ffi::{c_char, c_void, CStr, CString};

type Handle = *mut c_void;
type ZeResult = u32;

const ZE_INIT_FLAG_GPU_ONLY: u32 = 1;
const STYPE_DEVICE_PROPERTIES: u32 = 0x3;
const STYPE_CONTEXT_DESC: u32 = 0xd;
const STYPE_MODULE_DESC: u32 = 0x1b;
const STYPE_KERNEL_DESC: u32 = 0x1d;
const FORMAT_IL_SPIRV: u32 = 0;
const FORMAT_NATIVE: u32 = 1;
/// The loader's name, as NEO's packages install it.
pub const LOADER: &str = "libze_loader.so.1";

/// `ze_device_properties_t` (API 1.0 on; later ones only chain more
/// through `pNext`), with room to spare.
#[repr(C)]
struct DeviceProperties {
    stype: u32,
    p_next: *mut c_void,
    kind: u32,
    vendor_id: u32,
    device_id: u32,
    rest: [u8; 1024],
}

#[repr(C)]
struct ContextDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
}

#[repr(C)]
struct ModuleDesc {
    stype: u32,
    p_next: *const c_void,
    format: u32,
    input_size: usize,
    p_input_module: *const u8,
    p_build_flags: *const c_char,
    p_constants: *const c_void,
}

#[repr(C)]
struct KernelDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
    p_kernel_name: *const c_char,
}

/// `ze_module_constants_t`.
#[repr(C)]
struct ModuleConstants {
    count: u32,
    ids: *const u32,
    values: *const *const c_void,
}

/// `ze_module_program_exp_desc_t`: a module of several SPIR-V inputs.
#[repr(C)]
struct ModuleProgramExpDesc {
    stype: u32,
    p_next: *const c_void,
    count: u32,
    input_sizes: *const usize,
    p_input_modules: *const *const u8,
    p_build_flags: *const *const c_char,
    p_constants: *const *const ModuleConstants,
}

const STYPE_MODULE_PROGRAM_EXP_DESC: u32 = 0x0002_0002;

/// One input of a module to build: its bytes (SPIR-V, or a native binary
/// for a module of one input), build flags and specialization constants
/// (id, value: the low bytes the driver reads at the constant's type's
/// size).
pub struct ModuleInput<'a> {
    pub bytes: &'a [u8],
    pub flags: &'a str,
    pub constants: Vec<(u32, u64)>,
}

/// An input's flags and constants as the driver takes them (kept alive
/// while the descriptors point into them).
struct InputParts {
    flags: CString,
    ids: Vec<u32>,
    values: Vec<*const c_void>,
    consts: ModuleConstants,
}

impl InputParts {
    fn new(i: &ModuleInput) -> Result<Box<InputParts>, String> {
        let flags = CString::new(i.flags).map_err(|_| "build flags hold a NUL byte".to_string())?;
        let mut p = Box::new(InputParts {
            flags,
            ids: i.constants.iter().map(|(id, _)| *id).collect(),
            values: i
                .constants
                .iter()
                .map(|(_, v)| (v as *const u64).cast())
                .collect(),
            consts: ModuleConstants {
                count: i.constants.len() as u32,
                ids: std::ptr::null(),
                values: std::ptr::null(),
            },
        });
        p.consts.ids = p.ids.as_ptr();
        p.consts.values = p.values.as_ptr();
        Ok(p)
    }

    /// Its constants, or NULL without any.
    fn constants(&self) -> *const ModuleConstants {
        if self.ids.is_empty() {
            std::ptr::null()
        } else {
            &self.consts
        }
    }
}

type InitFn = unsafe extern "C" fn(u32) -> ZeResult;
type GetFn = unsafe extern "C" fn(Handle, *mut u32, *mut Handle) -> ZeResult;
type DriverGetFn = unsafe extern "C" fn(*mut u32, *mut Handle) -> ZeResult;
type PropsFn = unsafe extern "C" fn(Handle, *mut DeviceProperties) -> ZeResult;
type ContextCreateFn = unsafe extern "C" fn(Handle, *const ContextDesc, *mut Handle) -> ZeResult;
type ModuleCreateFn =
    unsafe extern "C" fn(Handle, Handle, *const ModuleDesc, *mut Handle, *mut Handle) -> ZeResult;
type DestroyFn = unsafe extern "C" fn(Handle) -> ZeResult;
type KernelCreateFn = unsafe extern "C" fn(Handle, *const KernelDesc, *mut Handle) -> ZeResult;
type LogStringFn = unsafe extern "C" fn(Handle, *mut usize, *mut c_char) -> ZeResult;

/// The loader's entry points used here.
pub struct Ze {
    init: InitFn,
    driver_get: DriverGetFn,
    device_get: GetFn,
    properties: PropsFn,
    context_create: ContextCreateFn,
    context_destroy: DestroyFn,
    module_create: ModuleCreateFn,
    module_destroy: DestroyFn,
    log_string: LogStringFn,
    log_destroy: DestroyFn,
    kernel_create: KernelCreateFn,
    kernel_destroy: DestroyFn,
    _lib: Library,
}

/// A device to compile for, in a context of its driver.
pub struct Target<'a> {
    ze: &'a Ze,
    context: Handle,
    device: Handle,
    pub device_id: u32,
}

impl Ze {
    /// Opens the loader and initialises its GPU drivers.
    pub fn open() -> Result<Ze, String> {
        // SAFETY: loading runs the loader's initialisers, which only
        // register its tables; the same library every Level Zero program
        // loads.
        let lib = unsafe { Library::new(LOADER) }
            .map_err(|e| format!("cannot load the Level Zero loader {LOADER}: {e}"))?;
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the prototype is ze_api.h's; the pointer is used
                // only while `lib` lives (kept in the same struct).
                let s: libloading::Symbol<$t> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{LOADER} has no {}: {e}", $name))?;
                *s
            }};
        }
        let ze = Ze {
            init: sym!(InitFn, "zeInit"),
            driver_get: sym!(DriverGetFn, "zeDriverGet"),
            device_get: sym!(GetFn, "zeDeviceGet"),
            properties: sym!(PropsFn, "zeDeviceGetProperties"),
            context_create: sym!(ContextCreateFn, "zeContextCreate"),
            context_destroy: sym!(DestroyFn, "zeContextDestroy"),
            module_create: sym!(ModuleCreateFn, "zeModuleCreate"),
            module_destroy: sym!(DestroyFn, "zeModuleDestroy"),
            log_string: sym!(LogStringFn, "zeModuleBuildLogGetString"),
            log_destroy: sym!(DestroyFn, "zeModuleBuildLogDestroy"),
            kernel_create: sym!(KernelCreateFn, "zeKernelCreate"),
            kernel_destroy: sym!(DestroyFn, "zeKernelDestroy"),
            _lib: lib,
        };
        // SAFETY: zeInit takes flags only.
        let r = unsafe { (ze.init)(ZE_INIT_FLAG_GPU_ONLY) };
        if r != 0 {
            return Err(format!(
                "zeInit failed ({}): no Level Zero GPU driver here",
                result_name(r)
            ));
        }
        Ok(ze)
    }

    /// Every device of every driver, with its driver and PCI device id.
    fn devices(&self) -> Result<Vec<(Handle, Handle, u32)>, String> {
        let drivers = list(|n, p| {
            // SAFETY: the count-then-fill protocol of zeDriverGet.
            unsafe { (self.driver_get)(n, p) }
        })
        .map_err(|r| format!("zeDriverGet failed ({})", result_name(r)))?;
        let mut out = Vec::new();
        for d in drivers {
            let devices = list(|n, p| {
                // SAFETY: a live driver handle; count then fill.
                unsafe { (self.device_get)(d, n, p) }
            })
            .map_err(|r| format!("zeDeviceGet failed ({})", result_name(r)))?;
            for dev in devices {
                let mut props = DeviceProperties {
                    stype: STYPE_DEVICE_PROPERTIES,
                    p_next: std::ptr::null_mut(),
                    kind: 0,
                    vendor_id: 0,
                    device_id: 0,
                    rest: [0; 1024],
                };
                // SAFETY: a live device and a properties struct larger
                // than the API's.
                if unsafe { (self.properties)(dev, &mut props) } == 0 {
                    out.push((d, dev, props.device_id));
                }
            }
        }
        Ok(out)
    }

    /// A context on the device with PCI id `device_id` (the first device
    /// when `None`).
    pub fn target(&self, device_id: Option<u32>) -> Result<Target<'_>, String> {
        let all = self.devices()?;
        let found = match device_id {
            Some(id) => all.iter().find(|(_, _, d)| *d == id),
            None => all.first(),
        };
        let Some(&(driver, device, id)) = found else {
            let have: Vec<String> = all.iter().map(|(_, _, d)| format!("{d:#06x}")).collect();
            return Err(format!(
                "no device {} here (the drivers have: {})",
                device_id.map_or("at all".into(), |d| format!("{d:#06x}")),
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            ));
        };
        let desc = ContextDesc {
            stype: STYPE_CONTEXT_DESC,
            p_next: std::ptr::null(),
            flags: 0,
        };
        let mut context: Handle = std::ptr::null_mut();
        // SAFETY: a live driver, a valid descriptor, a place for the handle.
        let r = unsafe { (self.context_create)(driver, &desc, &mut context) };
        if r != 0 {
            return Err(format!("zeContextCreate failed ({})", result_name(r)));
        }
        Ok(Target {
            ze: self,
            context,
            device,
            device_id: id,
        })
    }
}

impl Target<'_> {
    /// Compiles `spirv` with `flags` (then destroys the module): the
    /// driver's build log when it fails.
    pub fn build(&self, spirv: &[u8], flags: &str) -> Result<(), String> {
        let input = ModuleInput {
            bytes: spirv,
            flags,
            constants: Vec::new(),
        };
        self.build_module(&[input], None, false, &[])
    }

    /// Compiles a module of `inputs` (one: a native binary when `native`;
    /// several SPIR-V inputs: linked by the driver, as
    /// `ze_module_program_exp_desc_t` asks, with `program_flags` the
    /// descriptor's own build flags, NULL for `None`), creates each kernel of
    /// `kernels` in it (then destroys them and the module): the driver's
    /// build log when the build fails, the kernel that could not be
    /// created.
    pub fn build_module(
        &self,
        inputs: &[ModuleInput],
        program_flags: Option<&str>,
        native: bool,
        kernels: &[Vec<u8>],
    ) -> Result<(), String> {
        let program_flags = program_flags
            .map(CString::new)
            .transpose()
            .map_err(|_| "build flags hold a NUL byte".to_string())?;
        let first = inputs.first().ok_or("a module without input")?;
        let parts: Vec<Box<InputParts>> = inputs
            .iter()
            .map(InputParts::new)
            .collect::<Result<_, _>>()?;
        let sizes: Vec<usize> = inputs.iter().map(|i| i.bytes.len()).collect();
        let modules: Vec<*const u8> = inputs.iter().map(|i| i.bytes.as_ptr()).collect();
        let flags: Vec<*const c_char> = parts.iter().map(|p| p.flags.as_ptr()).collect();
        let constants: Vec<*const ModuleConstants> = parts.iter().map(|p| p.constants()).collect();
        let program = ModuleProgramExpDesc {
            stype: STYPE_MODULE_PROGRAM_EXP_DESC,
            p_next: std::ptr::null(),
            count: inputs.len() as u32,
            input_sizes: sizes.as_ptr(),
            p_input_modules: modules.as_ptr(),
            p_build_flags: flags.as_ptr(),
            p_constants: constants.as_ptr(),
        };
        let desc = ModuleDesc {
            stype: STYPE_MODULE_DESC,
            p_next: if inputs.len() > 1 {
                (&program as *const ModuleProgramExpDesc).cast()
            } else {
                std::ptr::null()
            },
            format: if native {
                FORMAT_NATIVE
            } else {
                FORMAT_IL_SPIRV
            },
            input_size: first.bytes.len(),
            p_input_module: first.bytes.as_ptr(),
            p_build_flags: match (inputs.len(), &program_flags) {
                (1, _) => parts[0].flags.as_ptr(),
                (_, Some(f)) => f.as_ptr(),
                (_, None) => std::ptr::null(),
            },
            // With several inputs each has its constants in the extension.
            p_constants: if inputs.len() > 1 {
                std::ptr::null()
            } else {
                parts[0].constants().cast()
            },
        };
        self.create_module(&desc, kernels)
    }

    /// `zeModuleCreate` of `desc`, then each of `kernels` created in it,
    /// then the module destroyed: the driver's build log when it fails.
    fn create_module(&self, desc: &ModuleDesc, kernels: &[Vec<u8>]) -> Result<(), String> {
        let (mut module, mut log): (Handle, Handle) = (std::ptr::null_mut(), std::ptr::null_mut());
        let ze = self.ze;
        // SAFETY: live context and device, a descriptor whose pointers
        // outlive the call, places for the handles.
        let r =
            unsafe { (ze.module_create)(self.context, self.device, desc, &mut module, &mut log) };
        let text = if log.is_null() {
            String::new()
        } else {
            // SAFETY: a live build log, read then destroyed once.
            unsafe {
                let t = self.log_text(log);
                (ze.log_destroy)(log);
                t
            }
        };
        let made = match (r, module.is_null()) {
            (0, false) => self.create_kernels(module, kernels),
            _ => Ok(()),
        };
        if !module.is_null() {
            // SAFETY: the module just created, destroyed once.
            unsafe { (ze.module_destroy)(module) };
        }
        match r {
            0 => made,
            r => Err(format!(
                "zeModuleCreate failed ({}){}",
                result_name(r),
                if text.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", text.trim())
                }
            )),
        }
    }

    /// Creates (and destroys) each of `kernels` in `module`, by the exact
    /// bytes of each name.
    fn create_kernels(&self, module: Handle, kernels: &[Vec<u8>]) -> Result<(), String> {
        for name in kernels {
            let shown = crate::names::in_message(name);
            let c = CString::new(name.as_slice())
                .map_err(|_| format!("kernel name {shown} holds a NUL byte"))?;
            let desc = KernelDesc {
                stype: STYPE_KERNEL_DESC,
                p_next: std::ptr::null(),
                flags: 0,
                p_kernel_name: c.as_ptr(),
            };
            let mut kernel: Handle = std::ptr::null_mut();
            // SAFETY: a live module, a descriptor whose name outlives the
            // call, a place for the handle.
            let r = unsafe { (self.ze.kernel_create)(module, &desc, &mut kernel) };
            if r != 0 {
                return Err(format!(
                    "zeKernelCreate({shown}) failed ({})",
                    result_name(r)
                ));
            }
            // SAFETY: the kernel just created, destroyed once.
            unsafe { (self.ze.kernel_destroy)(kernel) };
        }
        Ok(())
    }

    /// # Safety
    /// `log` is a live build log.
    unsafe fn log_text(&self, log: Handle) -> String {
        let mut size = 0usize;
        // SAFETY: per this function's contract; size query first.
        if unsafe { (self.ze.log_string)(log, &mut size, std::ptr::null_mut()) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: a buffer of the size the driver asked for.
        if unsafe { (self.ze.log_string)(log, &mut size, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        CStr::from_bytes_until_nul(&buf)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Drop for Target<'_> {
    fn drop(&mut self) {
        // SAFETY: the context this target created, destroyed once.
        unsafe { (self.ze.context_destroy)(self.context) };
    }
}

/// The handles a count-then-fill call gives.
fn list(mut f: impl FnMut(*mut u32, *mut Handle) -> ZeResult) -> Result<Vec<Handle>, ZeResult> {
    let mut n = 0u32;
    match f(&mut n, std::ptr::null_mut()) {
        0 => {}
        r => return Err(r),
    }
    let mut v = vec![std::ptr::null_mut(); n as usize];
    match f(&mut n, v.as_mut_ptr()) {
        0 => {}
        r => return Err(r),
    }
    v.truncate(n as usize);
    Ok(v)
}

/// `ZE_RESULT_...` for the results a compile meets, else the number.
fn result_name(r: ZeResult) -> String {
    let name = match r {
        0x7000_0001 => "ZE_RESULT_ERROR_DEVICE_LOST",
        0x7000_0003 => "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        0x7000_0004 => "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
        0x7002_0000 => "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
        0x7800_0001 => "ZE_RESULT_ERROR_UNINITIALIZED",
        0x7800_0002 => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        0x7800_0003 => "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
        0x7800_0004 => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        0x7800_0008 => "ZE_RESULT_ERROR_INVALID_SIZE",
        0x7800_000f => "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY",
        0x7fff_fffe => "ZE_RESULT_ERROR_UNKNOWN",
        _ => return format!("{r:#x}"),
    };
    name.to_string()
}
