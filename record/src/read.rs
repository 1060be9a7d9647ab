//! Reading records back. Tolerant by design: a record that is truncated,
//! corrupt or of a newer version yields what can be read plus warnings that
//! name the file and line; it never panics.

use crate::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A variable the interposer set, or found set by the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSetting {
    pub name: String,
    pub value: String,
    /// `true` when the user had set it before the interposer loaded.
    pub by_user: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Module {
    pub id: u32,
    /// `"spirv"`, `"native"` or `"unknown(N)"`.
    pub format: String,
    pub size: u64,
    pub sha256: String,
    pub build_flags: String,
    pub kernel_names: Vec<Vec<u8>>,
    /// Id of the device event of the device it was built for (records
    /// older than this field have none).
    pub device: Option<u32>,
    /// Its GPU binary as saved under `modules/` (older records: `None`).
    pub binary: Option<ModuleBinary>,
    /// For a native module the driver did not run as passed (NEO compiles
    /// the SPIR-V that a binary for another device carries): what it built
    /// instead (`zeModuleGetNativeBinary` after the build). `None` when the
    /// driver runs the bytes passed, for SPIR-V modules, and in older
    /// records.
    pub built_binary: Option<ModuleBinary>,
    /// The API it was made through (`"api"`; absent: Level Zero).
    pub api: Api,
    /// For an OpenCL program: what it was made from (`source`, `il`,
    /// `binary`, `link`, `unknown`), and that input's SHA-256 (none for a
    /// link). Its `format` and `sha256` are of what IGC compiled: the
    /// SPIR-V its binary carries (`spirv`), or the binary (`native`).
    pub from: Option<String>,
    pub from_sha256: Option<String>,
    /// Bytes free on the dump folder's filesystem after the build, when
    /// that was low: IGC may have failed to write its dumps (it says
    /// nothing when a write fails).
    pub space_left: Option<u64>,
    /// Its specialization constants (`spec_constants`, of its first
    /// input), ordered by id; empty when none were given.
    pub spec_constants: Vec<crate::spec::SpecConstant>,
    /// Each input of a module built from several (`inputs`), in order.
    pub inputs: Vec<crate::spec::ModuleInput>,
    /// A module of several inputs: the descriptor's own build flags
    /// (`program_build_flags`; `None`: NULL, or an older record).
    pub program_build_flags: Option<String>,
    pub creation: crate::origins::Creation,
}

/// The API a module was made through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Api {
    #[default]
    LevelZero,
    OpenCl,
}

impl Api {
    /// As the record and the report write it: `level_zero`, `opencl`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::LevelZero => "level_zero",
            Api::OpenCl => "opencl",
        }
    }
}

/// A module's GPU binary: for a native module the bytes the program passed,
/// for a SPIR-V module what the driver built from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleBinary {
    pub sha256: String,
    pub size: u64,
    /// `modules/<sha256>.bin`, relative to the capture folder; `None` when
    /// it could not be saved.
    pub file: Option<String>,
    /// Why there is no binary, or no file.
    pub error: Option<String>,
}

/// A device modules were built for, as the driver described it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Device {
    pub id: u32,
    pub vendor_id: u32,
    /// PCI device id (`0x0bd5` for PVC).
    pub device_id: u32,
    pub name: String,
    /// `ze_device_ip_version_ext_t`, when the driver gives it.
    pub ip_version: Option<u32>,
    /// Its compute units and limits (`"compute"`; older records: `None`).
    pub compute: Option<DeviceCompute>,
}

/// A device's compute units and limits, as the driver reports them
/// (`zeDeviceGetProperties`, `zeDeviceGetComputeProperties`; OpenCL's
/// `clGetDeviceInfo`): what occupancy is computed against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceCompute {
    pub slices: u32,
    pub subslices_per_slice: u32,
    pub eus_per_subslice: u32,
    pub threads_per_eu: u32,
    pub eu_simd_width: u32,
    pub max_group_size: u32,
    /// Shared local memory one group can have, in bytes.
    pub max_slm_bytes: u32,
}

/// One launch shape of a kernel in one process, with its counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelShape {
    pub key: crate::shapes::ShapeKey,
    pub launches: u64,
    pub appended: u64,
    /// Its device times (version 4, with `--time`; `None`: no launch of
    /// it was chosen for timing, or no time was asked for).
    pub time: Option<crate::times::Times>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kernel {
    pub id: u32,
    pub module: u32,
    /// Raw bytes of the name as the program passed it.
    pub name: Vec<u8>,
    pub launches: u64,
    pub appended: u64,
    /// Its counts are not whole: they were kept out of the counts file and
    /// lost, or the process still runs (the collector sets it, from
    /// [`ProcessRecord::counts_places`]).
    pub incomplete: bool,
    /// Its launch shapes (version 3), in the order the process met them;
    /// `launches` minus theirs were of other shapes.
    pub shapes: Vec<KernelShape>,
    /// Static shared local memory per group, in bytes, as the driver
    /// reports it at the kernel's creation (`slm_static`; `None` when not).
    pub slm_static: Option<u32>,
    /// Its device times: its shapes' and those of its launches counted in
    /// its own counter (other shapes), added up (version 4, with `--time`;
    /// `None`: none of its launches was chosen for timing).
    pub time: Option<crate::times::Times>,
}

/// A device's timer, as the interposer read it to turn ticks into ns (a
/// `timer` event: `zeDeviceGetProperties` with the 1.2 properties type).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timer {
    /// The device event's id (`None`: the device has none).
    pub device: Option<u32>,
    /// `timerResolution`: ticks per second.
    pub ticks_per_second: u64,
    /// `kernelTimestampValidBits`.
    pub valid_bits: u32,
}

/// Where a chunk of a process's counters was, by its last `counts` event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CountsPlace {
    /// `file`, `staged` or `memory`.
    pub place: String,
    pub reason: String,
}

/// Everything one process left.
#[derive(Debug, Clone, Default)]
pub struct ProcessRecord {
    pub events_path: PathBuf,
    pub pid: u32,
    pub ppid: u32,
    pub host: String,
    pub exe: String,
    pub dump_dir: String,
    pub forked_from: Option<u32>,
    /// Its rank in a parallel job (`job` in the header), when it had one.
    pub rank: Option<ranks::Rank>,
    pub env: Vec<EnvSetting>,
    pub modules: BTreeMap<u32, Module>,
    pub kernels: BTreeMap<u32, Kernel>,
    pub devices: BTreeMap<u32, Device>,
    /// Recorded with `XPU_ASM_ISA=binary`: no IGC dumps were asked for.
    pub isa_binary: bool,
    /// The rank whose IGC dumps serve this process's kernels (a rank other
    /// than 0 of a job dumps nothing: `Some(0)`).
    pub dumps_by: Option<u32>,
    /// Launches of kernel handles never seen being created.
    pub unknown_launches: u64,
    /// Launches counted in slots of kernels that have no kernel event:
    /// their creation was recorded, but that event was lost.
    pub unattributed_launches: u64,
    /// Each chunk of counters (of `CHUNK_SLOTS` kernel ids) that was not
    /// (only) in the counts file, by its last `counts` event.
    pub counts_places: BTreeMap<u32, CountsPlace>,
    /// Each chunk of counters that was kept out of the counts file during
    /// the run, by its first `counts` event saying so: where it was kept
    /// and why (it may have been written into the file since).
    pub counts_kept: BTreeMap<u32, CountsPlace>,
    /// Why the counts file could not be read, when it could not.
    pub counts_missing: Option<String>,
    /// The process's start time, clock ticks since boot (`start` in the
    /// header): with host and pid, whether it still runs.
    pub start_ticks: Option<u64>,
    /// Why its counts are not whole, one reason each (the collector fills
    /// it, from what the record and the staging folder hold).
    pub counts_incomplete: Vec<String>,
    pub notes: Vec<String>,
    /// The process wrote its exit event: it ended through `exit()`.
    pub exited: bool,
    /// The status it passed to `exit()`, from its exit event.
    pub exit_code: Option<i32>,
    /// The timing policy in force (`"time"` in the header): `None` when
    /// the process timed nothing (no `--time`).
    pub time: Option<crate::times::Policy>,
    /// The devices' timers it read (`timer` events).
    pub timers: Vec<Timer>,
    /// Problems met while reading; each names the file.
    pub warnings: Vec<String>,
    /// The loaded objects it named, by id; its kernels' launch stacks.
    pub objects: BTreeMap<u32, crate::origins::Object>,
    pub stacks: Vec<crate::origins::LaunchStack>,
    /// The SYCL device images each DPC++-built object registered.
    pub sycl_images: Vec<crate::origins::Registration>,
    /// The native modules the driver refused to create.
    pub refused: Vec<crate::origins::Refused>,
}

/// Reads every `*.events` file of `records_dir` (sorted by name).
pub fn read_dir(records_dir: &Path) -> Result<Vec<ProcessRecord>, String> {
    Ok(events_paths(records_dir)?
        .iter()
        .map(|p| read_process(p))
        .collect())
}

/// The `.events` files of `records_dir`, one per process, sorted: what
/// [`read_dir`] reads, for a caller that reads them with [`read_process`]
/// its own way (several at once).
pub fn events_paths(records_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(records_dir)
        .map_err(|e| format!("cannot read {}: {e}", records_dir.display()))?;
    let mut paths: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "events"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Reads one process's record, given its `.events` path (the `.counts` file
/// is found beside it).
pub fn read_process(events_path: &Path) -> ProcessRecord {
    let mut rec = ProcessRecord {
        events_path: events_path.to_path_buf(),
        ..Default::default()
    };
    let shown = events_path.display().to_string();
    let bytes = match read_regular(events_path) {
        Ok(b) => b,
        Err(e) => {
            rec.warnings.push(format!("{shown}: cannot read: {e}"));
            return rec;
        }
    };
    parse_events(&bytes, &shown, &mut rec);
    if rec.pid == 0 && rec.host.is_empty() {
        // No header (it could not be written): the file's name says which
        // process it is, so that its counts still speak.
        if let Some((host, pid)) = stem_of(events_path) {
            rec.host = host;
            rec.pid = pid;
        }
    }
    let counts_path = events_path.with_extension("counts");
    match read_regular(&counts_path) {
        Ok(c) => apply_counts(&c, &counts_path.display().to_string(), &mut rec),
        Err(e) => {
            rec.counts_missing = Some(format!("cannot read its counts file: {e}"));
            rec.warnings.push(format!(
                "{}: cannot read: {e}; launch counts of this process are unknown",
                counts_path.display()
            ))
        }
    }
    rec
}

/// `(host, pid)` from a record's file name, `H-P-T.events` or `H-P.events`.
fn stem_of(path: &Path) -> Option<(String, u32)> {
    let stem = path.file_stem()?.to_str()?;
    let mut parts = stem.rsplitn(3, '-');
    let last = parts.next()?;
    let (pid, host) = match last.len() == 8 && last.bytes().all(|b| b.is_ascii_hexdigit()) {
        true => (parts.next()?, parts.next()?),
        false => (last, stem.rsplit_once('-')?.0),
    };
    Some((host.to_string(), pid.parse().ok()?))
}

/// Parses more events of a record already read (those a process kept in
/// its staged events file): a process header among them is read only when
/// `rec` has none yet.
pub fn parse_more_events(bytes: &[u8], shown: &str, rec: &mut ProcessRecord) {
    if rec.pid == 0 && rec.host.is_empty() {
        parse_events(bytes, shown, rec);
        return;
    }
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let n = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let at = At {
            shown,
            lineno: i + 1,
        };
        let last_unterminated = i + 1 == n && !ends_with_newline;
        if line.is_empty() {
            continue;
        }
        let Some(v) = parse_line(line, last_unterminated, at, &mut rec.warnings) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("process") {
            read_event(&v, at, rec);
        }
    }
}

/// Reads a regular file (following symlinks) and refuses anything else: a
/// FIFO would block forever, a device never end.
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    std::fs::read(path)
}

/// Parses the JSON lines of an events file into `rec`: the process header,
/// then one event a line.
pub fn parse_events(bytes: &[u8], shown: &str, rec: &mut ProcessRecord) {
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let n = lines.len();
    let mut saw_header = false;
    for (i, line) in lines.into_iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        let at = At {
            shown,
            lineno: i + 1,
        };
        let last_unterminated = i + 1 == n && !ends_with_newline;
        let Some(v) = parse_line(line, last_unterminated, at, &mut rec.warnings) else {
            continue;
        };
        if saw_header {
            read_event(&v, at, rec);
            continue;
        }
        if let Err(why) = check_header(&v, at) {
            rec.warnings.push(why);
            return;
        }
        read_header(&v, rec);
        saw_header = true;
    }
    if !saw_header {
        rec.warnings
            .push(format!("{shown}: empty record (no process header)"));
    }
}

/// Where a line is, for warnings: `file:line`.
#[derive(Clone, Copy)]
struct At<'a> {
    shown: &'a str,
    lineno: usize,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}", self.shown, self.lineno)
    }
}

/// One line as JSON, or `None` after a warning that says why not (a
/// truncated last line is what a process that ended while writing leaves).
fn parse_line(
    line: &[u8],
    last_unterminated: bool,
    at: At,
    warnings: &mut Vec<String>,
) -> Option<Value> {
    match serde_json::from_slice(line) {
        Ok(v) => Some(v),
        Err(_) if last_unterminated => {
            warnings.push(format!(
                "{at}: truncated last event (the process ended while writing it); skipped"
            ));
            None
        }
        Err(e) => {
            warnings.push(format!("{at}: corrupt event ({e}); skipped"));
            None
        }
    }
}

/// Whether the first event is the header of a record this reader reads;
/// the warning that says why not otherwise (the file is then skipped).
fn check_header(v: &Value, at: At) -> Result<(), String> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    if ty != "process" || v.get("record").and_then(Value::as_str) != Some(RECORD_TAG) {
        return Err(format!(
            "{at}: not an xpu-asm record (first event is not the process header); skipped"
        ));
    }
    let version = v.get("version").and_then(Value::as_u64).unwrap_or(0);
    if !(OLDEST_VERSION as u64..=VERSION as u64).contains(&version) {
        return Err(format!(
            "{}: record version {version}, this xpu-asm reads version {VERSION}; \
             use the xpu-asm-run that wrote it, or a newer one; skipped",
            at.shown
        ));
    }
    Ok(())
}

/// The process header's fields: who the process was, where its dumps are,
/// its rank, and the environment the interposer set or found.
fn read_header(v: &Value, rec: &mut ProcessRecord) {
    rec.pid = get_u64(v, "pid") as u32;
    rec.ppid = get_u64(v, "ppid") as u32;
    rec.host = get_str(v, "host");
    rec.exe = get_str(v, "exe");
    rec.dump_dir = get_str(v, "dump_dir");
    rec.isa_binary = v.get("isa").and_then(Value::as_str) == Some("binary");
    rec.dumps_by = v.get("dumps_by").and_then(Value::as_u64).map(|r| r as u32);
    rec.forked_from = v
        .get("forked_from")
        .and_then(Value::as_u64)
        .map(|p| p as u32);
    rec.rank = v.get("job").and_then(parse_rank);
    rec.start_ticks = v.get("start").and_then(Value::as_u64);
    rec.time = v.get("time").and_then(time_policy);
    if let Some(env) = v.get("env").and_then(Value::as_object) {
        for (name, s) in env {
            rec.env.push(EnvSetting {
                name: name.clone(),
                value: get_str(s, "value"),
                by_user: s.get("set_by").and_then(Value::as_str) == Some("user"),
            });
        }
    }
}

/// One event after the header, by its type.
fn read_event(v: &Value, at: At, rec: &mut ProcessRecord) {
    match v.get("type").and_then(Value::as_str).unwrap_or("") {
        "module" => {
            let m = module_event(v);
            rec.modules.insert(m.id, m);
        }
        "device" => {
            let d = device_event(v);
            rec.devices.insert(d.id, d);
        }
        "kernel" => match kernel_event(v) {
            Some(k) => {
                rec.kernels.insert(k.id, k);
            }
            None => rec
                .warnings
                .push(format!("{at}: kernel event without a name; skipped")),
        },
        "note" => rec.notes.push(get_str(v, "message")),
        "object" => crate::origins::object_event(v, &mut rec.objects),
        "stack" => rec.stacks.push(crate::origins::stack_event(v)),
        "sycl_images" => rec.sycl_images.push(crate::origins::registration(v)),
        "module_refused" => rec.refused.push(crate::origins::refused(v)),
        "counts" => {
            let chunk = get_u64(v, "chunk") as u32;
            let place = CountsPlace {
                place: get_str(v, "place"),
                reason: get_str(v, "reason"),
            };
            if place.place != "file" {
                rec.counts_kept
                    .entry(chunk)
                    .or_insert_with(|| place.clone());
            }
            rec.counts_places.insert(chunk, place);
        }
        "timer" => rec.timers.push(Timer {
            device: v.get("device").and_then(Value::as_u64).map(|d| d as u32),
            ticks_per_second: get_u64(v, "ticks_per_second"),
            valid_bits: get_u64(v, "valid_bits") as u32,
        }),
        "exit" => {
            rec.exited = true;
            rec.exit_code = v.get("code").and_then(Value::as_i64).map(|c| c as i32);
        }
        other => rec
            .warnings
            .push(format!("{at}: unknown event type {other:?}; skipped")),
    }
}

fn module_event(v: &Value) -> Module {
    Module {
        id: get_u64(v, "id") as u32,
        format: get_str(v, "format"),
        size: get_u64(v, "size"),
        sha256: get_str(v, "sha256"),
        build_flags: get_str(v, "build_flags"),
        kernel_names: v
            .get("kernel_names")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(json_name).collect())
            .unwrap_or_default(),
        device: v.get("device").and_then(Value::as_u64).map(|d| d as u32),
        binary: binary_field(v, "binary"),
        built_binary: binary_field(v, "built_binary"),
        api: match v.get("api").and_then(Value::as_str) {
            Some("opencl") => Api::OpenCl,
            _ => Api::LevelZero,
        },
        from: v.get("from").and_then(Value::as_str).map(str::to_string),
        from_sha256: v
            .get("from_sha256")
            .and_then(Value::as_str)
            .map(str::to_string),
        space_left: v.get("space_left").and_then(Value::as_u64),
        spec_constants: crate::spec::spec_constants(v),
        inputs: crate::spec::inputs(v),
        program_build_flags: v
            .get("program_build_flags")
            .and_then(Value::as_str)
            .map(str::to_string),
        creation: crate::origins::creation(v),
    }
}

/// The binary object `key` of a module event, if there is one.
fn binary_field(v: &Value, key: &str) -> Option<ModuleBinary> {
    v.get(key).filter(|b| b.is_object()).map(|b| ModuleBinary {
        sha256: get_str(b, "sha256"),
        size: get_u64(b, "size"),
        file: b.get("file").and_then(Value::as_str).map(str::to_string),
        error: b.get("error").and_then(Value::as_str).map(str::to_string),
    })
}

fn device_event(v: &Value) -> Device {
    Device {
        id: get_u64(v, "id") as u32,
        vendor_id: get_u64(v, "vendor_id") as u32,
        device_id: get_u64(v, "device_id") as u32,
        name: bytes_field(v, "name")
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .unwrap_or_default(),
        ip_version: v
            .get("ip_version")
            .and_then(Value::as_u64)
            .map(|i| i as u32),
        compute: v.get("compute").filter(|c| c.is_object()).map(|c| {
            let g = |k: &str| get_u64(c, k) as u32;
            DeviceCompute {
                slices: g("slices"),
                subslices_per_slice: g("subslices_per_slice"),
                eus_per_subslice: g("eus_per_subslice"),
                threads_per_eu: g("threads_per_eu"),
                eu_simd_width: g("eu_simd_width"),
                max_group_size: g("max_group_size"),
                max_slm_bytes: g("max_slm_bytes"),
            }
        }),
    }
}

/// A kernel event, or `None` when it has no name.
fn kernel_event(v: &Value) -> Option<Kernel> {
    Some(Kernel {
        id: get_u64(v, "id") as u32,
        module: get_u64(v, "module") as u32,
        name: bytes_field(v, "name")?,
        launches: 0,
        appended: 0,
        incomplete: false,
        shapes: Vec::new(),
        time: None,
        slm_static: v
            .get("slm_static")
            .and_then(Value::as_u64)
            .map(|n| n as u32),
    })
}

/// Reads the counters of a counts file into the kernels of `rec`.
pub fn apply_counts(bytes: &[u8], shown: &str, rec: &mut ProcessRecord) {
    if bytes.len() < COUNTS_HEADER_LEN || bytes[..8] != COUNTS_MAGIC {
        rec.warnings.push(format!(
            "{shown}: not an xpu-asm counts file (bad header); launch counts of this process are unknown"
        ));
        return;
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let slot = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    if !(OLDEST_VERSION..=VERSION).contains(&version) || slot != COUNTS_SLOT_LEN {
        rec.warnings.push(format!(
            "{shown}: counts version {version} (slot {slot} bytes), this xpu-asm reads version {VERSION}; counts skipped"
        ));
        return;
    }
    let read_slot = |id: u32| -> Option<(u64, u64)> {
        let off = COUNTS_HEADER_LEN + id as usize * COUNTS_SLOT_LEN;
        decode_slot(bytes.get(off..off + COUNTS_SLOT_LEN)?)
    };
    rec.unknown_launches = read_slot(UNKNOWN_KERNEL_ID).map(|s| s.0).unwrap_or(0);
    // Read again whole (a record's staged counts are read after its file's).
    rec.unattributed_launches = 0;
    for k in rec.kernels.values_mut() {
        k.shapes.clear();
        k.time = None;
        match read_slot(k.id) {
            Some((l, a)) => {
                k.launches = l;
                k.appended = a;
            }
            None => rec.warnings.push(format!(
                "{shown}: truncated: no counter for kernel id {}; counted as 0",
                k.id
            )),
        }
    }
    let slots = (bytes.len() - COUNTS_HEADER_LEN) / COUNTS_SLOT_LEN;
    let scan = crate::shapes::scan(bytes, COUNTS_HEADER_LEN, COUNTS_SLOT_LEN, slots);
    let mut heads = std::collections::HashMap::new();
    for (s, head) in scan.shapes.into_iter().zip(scan.heads) {
        match rec.kernels.get_mut(&s.kernel) {
            Some(k) => {
                k.launches = k.launches.wrapping_add(s.launches);
                k.appended = k.appended.wrapping_add(s.appended);
                heads.insert(head, (s.kernel, k.shapes.len()));
                k.shapes.push(KernelShape {
                    key: s.key,
                    launches: s.launches,
                    appended: s.appended,
                    time: None,
                });
            }
            None => rec.unattributed_launches += s.launches,
        }
    }
    apply_times(rec, scan.blocks, &heads);
    let shape_slots = scan.taken;
    // Counters of kernels whose event is missing (lost with events that
    // could not be written).
    rec.unattributed_launches += (1..slots as u32)
        .filter(|id| !rec.kernels.contains_key(id) && !shape_slots.contains(id))
        .filter_map(|id| read_slot(id).map(|s| s.0))
        .sum::<u64>();
}

/// Each time block to its owner: a shape (by its head's slot id) and its
/// kernel, or a kernel's own launches. A block of a kernel whose event was
/// lost goes with its launches (unattributed).
fn apply_times(
    rec: &mut ProcessRecord,
    blocks: Vec<(u32, crate::times::Times)>,
    heads: &std::collections::HashMap<u32, (u32, usize)>,
) {
    let add = |into: &mut Option<crate::times::Times>, t: &crate::times::Times| match into {
        Some(x) => x.add(t),
        None => *into = Some(t.clone()),
    };
    for (owner, t) in blocks {
        let (kernel, shape) = match heads.get(&owner) {
            Some(&(k, i)) => (k, Some(i)),
            None => (owner, None),
        };
        let Some(k) = rec.kernels.get_mut(&kernel) else {
            continue;
        };
        if let Some(i) = shape {
            add(&mut k.shapes[i].time, &t);
        }
        add(&mut k.time, &t);
    }
}

/// The header's `time` object: `{"policy":"all"}` or
/// `{"policy":"sample","first":F,"every":E}`.
fn time_policy(v: &Value) -> Option<crate::times::Policy> {
    match v.get("policy")?.as_str()? {
        "all" => Some(crate::times::Policy::ALL),
        "sample" => Some(crate::times::Policy {
            all: false,
            first: v.get("first")?.as_u64()?,
            every: v.get("every")?.as_u64()?,
        }),
        _ => None,
    }
}

/// The header's `job` object: `{"launcher","rank","local_rank","size","id"}`.
fn parse_rank(v: &Value) -> Option<ranks::Rank> {
    let small = |k: &str| v.get(k).and_then(Value::as_u64).map(|n| n as u32);
    Some(ranks::Rank {
        launcher: ranks::Launcher::parse(v.get("launcher")?.as_str()?)?,
        rank: small("rank")?,
        local_rank: small("local_rank"),
        size: small("size"),
        job: v.get("id").and_then(Value::as_str).map(str::to_string),
    })
}

fn get_u64(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn get_str(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A name written with [`push_json_bytes_field`]: `key` or `key_hex`.
fn bytes_field(v: &Value, key: &str) -> Option<Vec<u8>> {
    if let Some(s) = v.get(key).and_then(Value::as_str) {
        return Some(s.as_bytes().to_vec());
    }
    v.get(format!("{key}_hex"))
        .and_then(Value::as_str)
        .and_then(unhex)
}

/// An element of `kernel_names`: a string, or `{"hex": "..."}`.
fn json_name(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        other => other.get("hex").and_then(Value::as_str).and_then(unhex),
    }
}
