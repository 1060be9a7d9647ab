//! Modules, their kernels and the devices they were built for: each
//! recorded once, as an event, and each kernel given its counter.

use super::*;

/// One input of a module, as the interposer saw it.
pub struct ModuleInput<'a> {
    pub bytes: &'a [u8],
    pub build_flags: &'a [u8],
    /// Its specialization constants, by id ([`super::constants`]).
    pub spec_constants: Vec<super::constants::SpecConstant>,
}

/// What the driver says about a device.
pub struct DeviceInfo {
    pub vendor_id: u32,
    pub device_id: u32,
    pub name: Vec<u8>,
    pub ip_version: Option<u32>,
    /// Its compute units and limits, when the driver gives them.
    pub compute: Option<DeviceCompute>,
}

/// A device's compute units and limits (the device event's `compute`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceCompute {
    pub slices: u32,
    pub subslices_per_slice: u32,
    pub eus_per_subslice: u32,
    pub threads_per_eu: u32,
    pub eu_simd_width: u32,
    pub max_group_size: u32,
    pub max_slm_bytes: u32,
}

/// The device a module was built for, and how to ask the driver about it
/// (done once per device).
pub struct DeviceRef<'a> {
    pub handle: usize,
    pub query: &'a dyn Fn() -> Option<DeviceInfo>,
}

fn no_device() -> Option<DeviceInfo> {
    None
}

impl DeviceRef<'static> {
    /// A device the driver cannot be asked about (for tools and tests that
    /// drive the state directly).
    pub const UNKNOWN: DeviceRef<'static> = DeviceRef {
        handle: 0,
        query: &no_device,
    };
}

/// The record's id of `dev`, writing its `device` event the first time.
fn device_id(r: &mut Registry, dev: &DeviceRef) -> u32 {
    if let Some(id) = r.devices.get(&dev.handle) {
        return *id;
    }
    let Some(info) = (dev.query)() else {
        r.devices.insert(dev.handle, 0);
        return 0;
    };
    let id = r.next_device;
    r.next_device += 1;
    r.devices.insert(dev.handle, id);
    let mut line = format!(
        "{{\"type\":\"device\",\"id\":{id},\"vendor_id\":{},\"device_id\":{},",
        info.vendor_id, info.device_id
    )
    .into_bytes();
    push_json_bytes_field(&mut line, "name", &info.name);
    match info.ip_version {
        Some(v) => line.extend_from_slice(format!(",\"ip_version\":{v}").as_bytes()),
        None => line.extend_from_slice(b",\"ip_version\":null"),
    }
    if let Some(c) = info.compute {
        line.extend_from_slice(
            format!(
                ",\"compute\":{{\"slices\":{},\"subslices_per_slice\":{},\"eus_per_subslice\":{},\
                 \"threads_per_eu\":{},\"eu_simd_width\":{},\"max_group_size\":{},\"max_slm_bytes\":{}}}",
                c.slices,
                c.subslices_per_slice,
                c.eus_per_subslice,
                c.threads_per_eu,
                c.eu_simd_width,
                c.max_group_size,
                c.max_slm_bytes
            )
            .as_bytes(),
        );
    }
    line.extend_from_slice(b"}\n");
    r.out.event(&line, true);
    id
}

/// A module is about to be built: IGC's dump folder is made again if it
/// went (the capture folder removed while the program runs).
pub fn module_build_begins() {
    if let Some(cfg) = config::get() {
        crate::output::ensure_dump_folder(cfg);
    }
}

/// A module was created successfully. `binary` is its GPU code (what the
/// program passed for a native module, the driver's build of a SPIR-V
/// one), or why there is none; it is saved once per content under
/// `<out>/modules/`.
pub fn module_created(
    handle: usize,
    format: u32,
    inputs: &[ModuleInput],
    kernel_names: &[Vec<u8>],
    binary: Result<&[u8], String>,
    device: DeviceRef,
) {
    let module = CreatedModule {
        handle,
        format,
        inputs,
        kernel_names,
        api: Api::LevelZero,
        program_build_flags: None,
    };
    module_built(module, binary, None, device);
}

/// The API a module was made through.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Api {
    LevelZero,
    /// An OpenCL program, once built: its module event says so
    /// (`"api":"opencl"`) and what the program was made from.
    OpenCl,
}

/// A module [`module_created`] records.
pub struct CreatedModule<'a> {
    pub handle: usize,
    pub format: u32,
    pub inputs: &'a [ModuleInput<'a>],
    pub kernel_names: &'a [Vec<u8>],
    pub api: Api,
    /// A module of several inputs: the descriptor's own build flags
    /// beside each input's (`None`: NULL), which the driver adds to
    /// theirs.
    pub program_build_flags: Option<&'a [u8]>,
}

/// [`module_created`], with `rebuilt`: for a native module whose binary the
/// driver did not run as passed, what it built instead (or why it could not
/// be read), saved too.
pub fn module_built(
    m: CreatedModule,
    binary: Result<&[u8], String>,
    rebuilt: Option<Result<&[u8], String>>,
    device: DeviceRef,
) {
    let CreatedModule {
        handle,
        format,
        inputs,
        kernel_names,
        api,
        program_build_flags,
    } = m;
    // Hashed before the lock is taken: a module can be megabytes.
    let first = inputs.first();
    if let ([input], crate::common::ZE_MODULE_FORMAT_IL_SPIRV) = (inputs, format) {
        write_igc1_spv(input.bytes);
    }
    let sha = first.map(|i| sha256_hex(i.bytes)).unwrap_or_default();
    let binary = hash_binary(format, first, &sha, binary);
    let rebuilt = rebuilt.map(|r| r.map(|b| (b, sha256_hex(b))));
    let stack = crate::objects::unwind();
    let input = first
        .filter(|_| api == Api::LevelZero)
        .map(|i| i.bytes.as_ptr() as usize);
    with_registry(|r, cfg| {
        let device_id = device_id(r, &device);
        let id = r.next_module;
        r.next_module += 1;
        r.modules.insert(handle, id);
        let mut line = Vec::with_capacity(256);
        push_module_head(&mut line, id, format, inputs, &sha);
        if let (Some(f), true) = (program_build_flags, inputs.len() > 1) {
            line.push(b',');
            push_json_bytes_field(&mut line, "program_build_flags", f);
        }
        push_kernel_names(&mut line, kernel_names);
        if device_id != 0 {
            line.extend_from_slice(format!(",\"device\":{device_id}").as_bytes());
        }
        // IGC's writes fail silently on a full filesystem: the collector
        // then trusts no dump of this module.
        if let Some(free) = crate::output::space_left_if_low(cfg) {
            line.extend_from_slice(format!(",\"space_left\":{free}").as_bytes());
        }
        push_binary(&mut line, "binary", &binary, &mut r.out);
        if let Some(rebuilt) = &rebuilt {
            push_binary(&mut line, "built_binary", rebuilt, &mut r.out);
        }
        if api == Api::OpenCl {
            push_program_from(&mut line, r.programs.get(&handle));
        }
        r.origins
            .push_creation(&mut r.out, &mut line, &stack, input);
        line.extend_from_slice(b"}\n");
        r.out.event(&line, true);
    });
}

/// The device images a DPC++-built object registered with the SYCL
/// runtime (`desc`, its descriptor), recorded once.
pub fn sycl_images_registered(desc: usize, images: &[super::origins::Image]) {
    with_registry(|r, _| r.origins.push_sycl_images(&mut r.out, desc, images));
}

/// `{"type":"module_refused","result":R,"size":S,"magic":"..",...}`: a
/// native module the driver would not create (`result`, its answer), with
/// the device and where its bytes lie (`input_object`, `input_offset`).
pub fn module_refused(bytes: &[u8], result: i64, device: DeviceRef) {
    let stack = crate::objects::unwind();
    let magic = &bytes[..bytes.len().min(super::origins::MAGIC_BYTES)];
    // Saved as a module's binary is: what it was built for is in it.
    let binary = Ok((bytes, sha256_hex(bytes)));
    with_registry(|r, _| {
        let device_id = device_id(r, &device);
        let mut line = format!(
            "{{\"type\":\"module_refused\",\"result\":{result},\"size\":{},\"magic\":\"{}\"",
            bytes.len(),
            hex(magic)
        )
        .into_bytes();
        if device_id != 0 {
            line.extend_from_slice(format!(",\"device\":{device_id}").as_bytes());
        }
        push_binary(&mut line, "binary", &binary, &mut r.out);
        r.origins
            .push_creation(&mut r.out, &mut line, &stack, Some(bytes.as_ptr() as usize));
        line.extend_from_slice(b"}\n");
        r.out.event(&line, true);
    });
}

/// Without IGC's dumps (`--isa binary`), the SPIR-V of a module whose
/// binary does not carry it (NEO 22.43's Level Zero binaries; the hook
/// tells) is saved as `<out>/modules/<sha256>.spv`, once per content: what
/// `xpu-asm-run port` compiles for another product.
pub fn keep_spirv(spirv: &[u8]) {
    let Some(cfg) = config::get().filter(|c| c.isa_binary) else {
        return;
    };
    write_kept(cfg, spirv);
}

/// Each SPIR-V input of a module built from several is saved so, in
/// either ISA mode: neither its binary nor IGC's dumps hold the inputs
/// apart.
pub fn keep_input_spirv(spirv: &[u8]) {
    if let Some(cfg) = config::get() {
        write_kept(cfg, spirv);
    }
}

fn write_kept(cfg: &config::Config, spirv: &[u8]) {
    let dir = format!(
        "{}/{}",
        cfg.out.trim_end_matches('/'),
        xpu_asm_record::MODULES_DIR
    );
    let name = format!("{}.spv", sha256_hex(spirv));
    if let Err(e) = crate::output::write_once(&dir, &name, spirv) {
        crate::output::warn(&format!("cannot keep the SPIR-V of a module ({e})"));
    }
}

/// With IGC 1's light dumps ([`Config::igc1_light`]), the module's SPIR-V
/// as IGC's full dumps would have written it: `OCL_asm<hash>.spv` in the
/// dump folder, where the collector ties IGC's module hash to the module.
fn write_igc1_spv(spirv: &[u8]) {
    let Some(cfg) = config::get().filter(|c| c.igc1_light) else {
        return;
    };
    let name = xpu_asm_record::igc1_spv_file_name(spirv);
    if let Err(e) = crate::output::write_once(&cfg.dump_dir_abs, &name, spirv) {
        crate::output::warn(&format!(
            "cannot write {name}: {e}; the collector takes that module's ISA from its binary"
        ));
    }
}

/// `binary` with its SHA-256: a native module's binary is its input, whose
/// hash `input_sha` is reused rather than computed twice.
fn hash_binary<'a>(
    format: u32,
    first: Option<&ModuleInput>,
    input_sha: &str,
    binary: Result<&'a [u8], String>,
) -> Result<(&'a [u8], String), String> {
    binary.map(|b| {
        let same_as_input = format == crate::common::ZE_MODULE_FORMAT_NATIVE
            && first.is_some_and(|i| std::ptr::eq(i.bytes, b));
        let sha = if same_as_input {
            input_sha.to_string()
        } else {
            sha256_hex(b)
        };
        (b, sha)
    })
}

/// The module event up to its kernel names: id, format, and its input
/// (the first one; with several, each one's size and hash too).
fn push_module_head(line: &mut Vec<u8>, id: u32, format: u32, inputs: &[ModuleInput], sha: &str) {
    let first = inputs.first();
    let fmt = match format {
        crate::common::ZE_MODULE_FORMAT_IL_SPIRV => "spirv".to_string(),
        crate::common::ZE_MODULE_FORMAT_NATIVE => "native".to_string(),
        n => format!("unknown({n})"),
    };
    line.extend_from_slice(format!("{{\"type\":\"module\",\"id\":{id},\"format\":").as_bytes());
    push_json_str(line, &fmt);
    let size = first.map(|i| i.bytes.len()).unwrap_or(0);
    line.extend_from_slice(format!(",\"size\":{size},\"sha256\":").as_bytes());
    push_json_str(line, sha);
    line.push(b',');
    push_json_bytes_field(
        line,
        "build_flags",
        first.map(|i| i.build_flags).unwrap_or(b""),
    );
    if let Some(i) = first {
        super::constants::push_json(line, &i.spec_constants);
    }
    if inputs.len() > 1 {
        line.extend_from_slice(b",\"inputs\":[");
        for (i, input) in inputs.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(
                format!("{{\"size\":{},\"sha256\":", input.bytes.len()).as_bytes(),
            );
            push_json_str(line, &sha256_hex(input.bytes));
            line.push(b',');
            push_json_bytes_field(line, "build_flags", input.build_flags);
            super::constants::push_json(line, &input.spec_constants);
            line.push(b'}');
        }
        line.push(b']');
    }
}

/// `,"kernel_names":[...]`, each name a string, or `{"hex":..}` when it is
/// not UTF-8.
fn push_kernel_names(line: &mut Vec<u8>, names: &[Vec<u8>]) {
    line.extend_from_slice(b",\"kernel_names\":[");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        match std::str::from_utf8(n) {
            Ok(s) => push_json_str(line, s),
            Err(_) => line.extend_from_slice(format!("{{\"hex\":\"{}\"}}", hex(n)).as_bytes()),
        }
    }
    line.push(b']');
}

/// `,"<key>":{...}`: a binary's size, hash and the file it is saved in, or
/// why there is no binary or no file. Saves the binary (once per content).
fn push_binary(
    line: &mut Vec<u8>,
    key: &str,
    binary: &Result<(&[u8], String), String>,
    out: &mut Output,
) {
    line.push(b',');
    push_json_str(line, key);
    line.extend_from_slice(b":{");
    match binary {
        Ok((b, sha)) => {
            line.extend_from_slice(format!("\"size\":{},\"sha256\":", b.len()).as_bytes());
            push_json_str(line, sha);
            match out.save_module_binary(sha, b) {
                Ok(file) => {
                    line.extend_from_slice(b",\"file\":");
                    push_json_str(line, &file);
                }
                Err(e) => {
                    line.extend_from_slice(b",\"error\":");
                    push_json_str(line, &e);
                }
            }
        }
        Err(e) => {
            line.extend_from_slice(b"\"error\":");
            push_json_str(line, e);
        }
    }
    line.push(b'}');
}

/// A kernel was created successfully: map its handle to its data (its
/// counter, its shapes). `slm_static` is its static local memory per
/// group, as the driver says.
pub fn kernel_created(module: usize, name: &[u8], handle: usize, slm_static: Option<u32>) {
    with_registry(|r, _| {
        let id = kernel_id(r, module, name, slm_static);
        let counter = r.out.counter(id);
        if counter.is_null() {
            return;
        }
        // SAFETY: the registry lock is held.
        let h = unsafe { crate::shapes::handle_created(handle, id, counter as usize) };
        MAPS.kernels.set(handle, h);
    });
}

/// The record's id of kernel `name` of `module`, writing its `kernel`
/// event the first time (a kernel created again keeps its id and counter).
fn kernel_id(r: &mut Registry, module: usize, name: &[u8], slm_static: Option<u32>) -> u32 {
    let module_id = r.modules.get(&module).copied().unwrap_or(0);
    let key = (module_id, name.to_vec());
    if let Some(id) = r.kernel_ids.get(&key) {
        return *id;
    }
    let id = r.next_kernel;
    r.next_kernel += 1;
    r.kernel_ids.insert(key, id);
    let mut line =
        format!("{{\"type\":\"kernel\",\"id\":{id},\"module\":{module_id},").into_bytes();
    push_json_bytes_field(&mut line, "name", name);
    if let Some(slm) = slm_static {
        line.extend_from_slice(format!(",\"slm_static\":{slm}").as_bytes());
    }
    line.extend_from_slice(b"}\n");
    r.out.event(&line, true);
    id
}

/// A kernel is about to be destroyed: forget its handle (the driver may hand
/// it out again for another kernel).
pub fn kernel_destroyed(handle: usize) {
    with_registry(|_, _| MAPS.kernels.set(handle, 0));
}

/// `,"api":"opencl","from":..`: what an OpenCL program was made from.
fn push_program_from(line: &mut Vec<u8>, from: Option<&ProgramFrom>) {
    line.extend_from_slice(b",\"api\":\"opencl\",");
    match from {
        Some(f) => push_from_fields(line, f),
        None => line.extend_from_slice(b"\"from\":\"unknown\""),
    }
}

/// `"from":"<kind>","from_size":N,"from_sha256":".."`, or for a link
/// `"from":"link","from_inputs":[{..},..]`.
fn push_from_fields(line: &mut Vec<u8>, from: &ProgramFrom) {
    match from {
        ProgramFrom::Input { kind, size, sha256 } => {
            line.extend_from_slice(b"\"from\":");
            push_json_str(line, kind);
            line.extend_from_slice(format!(",\"from_size\":{size},\"from_sha256\":").as_bytes());
            push_json_str(line, sha256);
        }
        ProgramFrom::Link(inputs) => {
            line.extend_from_slice(b"\"from\":\"link\",\"from_inputs\":[");
            for (i, input) in inputs.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.push(b'{');
                push_from_fields(line, input);
                line.push(b'}');
            }
            line.push(b']');
        }
    }
}
