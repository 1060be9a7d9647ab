//! ISA source 2: module binaries, one module each.
//!
//! The interposer saves every module's GPU binary under
//! `modules/<sha256>.bin` (native modules: the bytes the program passed;
//! SPIR-V modules: the driver's build, from `zeModuleGetNativeBinary`). A
//! kernel whose ISA IGC's dumps do not have is looked up here: its module's
//! binary is parsed ([`native::parse`], with the device the module
//! was built for, which picks a fat binary's member), its code disassembled
//! by IGA, and the text written, under a header in IGC's style, to
//! `isa/<sha256>[/<fat member>]/<name>-<tag>.asm`. From there on it is an
//! `.asm` like IGC's: the same header parser reads it, and it is copied
//! into `asm/` like the others.
//!
//! Only what is asked for is disassembled (the launched kernels that the
//! dumps lack), each kernel once, on every core. A file already written by
//! an earlier collection is read back, not disassembled again.

use super::native::{self, iga::Iga, Device, NativeError, Program};
use super::{AsmFile, AsmName, BinaryOrigin, IsaSource, IsaSourceKind, Lookup, Status};
use crate::capture::layout::ISA_DIR;
use crate::isa::header::{parse_header, read_header, HEADER_MAX_BYTES};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use xpu_asm_record::read::{Module, ProcessRecord};

/// What a kernel's lookup in a module binary needs: the binary and the
/// device it ran on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BinaryKey {
    /// SHA-256 of the binary.
    pub sha256: String,
    /// PCI device id and IP version of the device, when recorded.
    pub device: Option<(u32, Option<u32>)>,
}

/// A kernel asked for, by the binary of its module.
#[derive(Debug, Clone)]
pub struct Request {
    pub key: BinaryKey,
    /// The saved file, relative to the capture folder (`None`: not saved,
    /// `error` says why).
    pub file: Option<String>,
    pub error: Option<String>,
    pub name: Vec<u8>,
}

/// The binary of `module` as `rec` recorded it, as a [`Request`] for kernel
/// `name`; `Err` when the record has no binary for it.
pub fn request(
    rec: &ProcessRecord,
    module: &Module,
    name: &[u8],
) -> Result<Request, Lookup<'static>> {
    let Some(b) = &module.binary else {
        return Err(Lookup::Missing(
            Status::NoBinary,
            "the record has no binary of its module (recorded by an xpu-asm that did not keep module binaries); run the program again with this xpu-asm-run".into(),
        ));
    };
    let device = module
        .device
        .and_then(|d| rec.devices.get(&d))
        .map(|d| (d.device_id, d.ip_version));
    if b.sha256.is_empty() || b.file.is_none() {
        let why = b.error.as_deref().unwrap_or("no file was written");
        return Err(Lookup::Missing(
            Status::NoBinary,
            format!("its module's binary was not saved at run time ({why}); make the capture folder writable and run again"),
        ));
    }
    Ok(Request {
        key: BinaryKey {
            sha256: b.sha256.to_ascii_lowercase(),
            device,
        },
        file: b.file.clone(),
        error: b.error.clone(),
        name: name.to_vec(),
    })
}

/// The outcome for one kernel.
type Outcome = Result<AsmFile, (Status, String)>;

/// The module binaries of a capture, with the kernels asked of them
/// disassembled.
#[derive(Debug, Default)]
pub struct ModuleBinaries {
    kernels: HashMap<(BinaryKey, Vec<u8>), Outcome>,
    /// Binaries that could not be read or parsed (for the warnings).
    pub warnings: Vec<String>,
}

/// A parsed binary, or why not.
pub type Parsed = Result<Program, (Status, String)>;

fn native_device(key: &BinaryKey) -> Option<Device> {
    key.device.map(|(id, ip)| Device {
        product: None,
        device_id: Some(id),
        ip_version: ip,
    })
}

/// `modules/<hex>.bin`: the only form of file the collector reads from a
/// record (a record is input, and input may be hostile).
fn safe_module_file(file: &str) -> bool {
    let p = Path::new(file);
    let parts: Vec<Component> = p.components().collect();
    matches!(parts.as_slice(), [Component::Normal(d), Component::Normal(f)]
    if d.to_str() == Some(xpu_asm_record::MODULES_DIR)
        && f.to_str().is_some_and(|f| {
            f.strip_suffix(".bin")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit()))
        }))
}

fn parse_error(e: NativeError) -> (Status, String) {
    match e {
        NativeError::NoEntryForDevice { .. } => (Status::DeviceNotInBinary, format!("{e}")),
        NativeError::NotNative(_) | NativeError::Corrupt(_) | NativeError::Unsupported(_) => (
            Status::BinaryUnreadable,
            format!("its module's binary cannot be read: {e}"),
        ),
    }
}

pub fn read_and_parse(dir: &Path, key: &BinaryKey, file: &str) -> Parsed {
    if !safe_module_file(file) {
        return Err((
            Status::BinaryUnreadable,
            format!(
                "the record names its module's binary {file:?}, not a file under {}/; ignored",
                xpu_asm_record::MODULES_DIR
            ),
        ));
    }
    let path = dir.join(file);
    let bytes = match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => std::fs::read(&path),
        Ok(_) => Err(std::io::Error::other("not a regular file")),
        Err(e) => Err(e),
    }
    .map_err(|e| {
        (
            Status::BinaryUnreadable,
            format!("its module's binary {file} cannot be read ({e}); it is saved at run time: keep the capture folder whole"),
        )
    })?;
    let device = native_device(key);
    let program = native::parse(&bytes, device.as_ref()).map_err(parse_error)?;
    // NEO takes a binary for another GPU without complaint when it carries
    // SPIR-V too: it compiles that instead. The code in the binary is then
    // not what ran.
    if let (Some(d), Some(p)) = (&device, &program.platform) {
        if let Some(dp) = d.platform().filter(|dp| dp.iga_gen != p.iga_gen) {
            return Err((
                Status::DeviceNotInBinary,
                format!(
                    "its module's binary ({file}, {}) is for {}, but the program ran on {} ({}): this code is not what ran (the driver compiles the SPIR-V such a binary also carries); build the binary for this device too (ocloc -device ...)",
                    program.format,
                    p.name,
                    d.describe(),
                    dp.name
                ),
            ));
        }
    }
    Ok(program)
}

/// The folder a binary's disassembled kernels go to, made once, with the
/// files an earlier collection left there (listed once: one `open` per
/// kernel less, which counts with 10,000 kernels).
struct IsaFolder {
    path: PathBuf,
    /// Relative to the capture folder.
    rel: String,
    /// Why it cannot be made, if so.
    error: Option<String>,
    existing: HashSet<String>,
}

impl IsaFolder {
    /// `isa/<sha>[/<fat member>]` for the binary `sha` as `program` read it.
    fn make(dir: &Path, sha: &str, program: &Program) -> IsaFolder {
        let mut rel = format!("{ISA_DIR}/{}", crate::names::safe_component(sha, 64));
        if let Some(e) = &program.fat_entry {
            let e = crate::names::safe_component(e, 64);
            rel.push('/');
            rel.push_str(if e.is_empty() { "member" } else { &e });
        }
        let path = dir.join(&rel);
        let error = make_real_dirs(dir, &rel)
            .err()
            .map(|e| format!("cannot create {rel}: {e}"));
        let existing = std::fs::read_dir(&path)
            .map(|rd| {
                rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        IsaFolder {
            path,
            rel,
            error,
            existing,
        }
    }

    /// The file of kernel `name`: a short safe form of its name and the
    /// [`crate::names::name_tag`] of the whole.
    fn file_name(name: &[u8]) -> String {
        let demangled = crate::names::demangle(name);
        let mut short = crate::names::safe_component(&demangled, 60);
        if short.is_empty() {
            short = "kernel".into();
        }
        format!("{short}-{}.asm", crate::names::name_tag(name))
    }
}

/// Makes the folders of `rel` under `dir`, each a real folder: whatever
/// else is in the way (a symbolic link, which would lead the writes out of
/// the capture, or a file) is removed first.
fn make_real_dirs(dir: &Path, rel: &str) -> std::io::Result<()> {
    let mut cur = dir.to_path_buf();
    for c in Path::new(rel).components() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => continue,
            Ok(_) => std::fs::remove_file(&cur)?,
            Err(_) => {}
        }
        match std::fs::create_dir(&cur) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` (in a folder of ours) under a temporary name,
/// then renames it into place.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp.{}", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A binary asked for: its key, its file, the names of the kernels asked.
type Asked<'a> = (&'a BinaryKey, &'a str, BTreeSet<&'a [u8]>);

/// One kernel to disassemble.
struct Job<'a> {
    key: &'a BinaryKey,
    program: &'a Program,
    kernel: &'a native::NativeKernel,
    /// Index of its [`IsaFolder`].
    folder: usize,
}

impl ModuleBinaries {
    /// Parses the binaries of `requests` and disassembles the kernels they
    /// ask for, on every core. `iga` is loaded on first need.
    pub fn prepare(dir: &Path, requests: &[Request], stop: &(dyn Fn() -> bool + Sync)) -> Self {
        let mut out = ModuleBinaries::default();
        let binaries = asked(requests);
        let parsed: Vec<Parsed> = binaries
            .par_iter()
            .map(|(key, file, _)| {
                if stop() {
                    return Err((
                        Status::BinaryUnreadable,
                        "collection was interrupted".into(),
                    ));
                }
                read_and_parse(dir, key, file)
            })
            .collect();
        let (jobs, folders) = out.jobs(dir, &binaries, &parsed);
        let iga: OnceLock<Result<Iga, String>> = OnceLock::new();
        let done: Vec<Outcome> = jobs
            .par_iter()
            .map(|j| {
                if stop() {
                    return Err((Status::IgaFailed, "collection was interrupted".into()));
                }
                disassemble(&folders[j.folder], j.key, j.program, j.kernel, &iga)
            })
            .collect();
        for (j, o) in jobs.iter().zip(done) {
            out.kernels
                .insert((j.key.clone(), j.kernel.name.clone()), o);
        }
        out
    }

    /// The kernels to disassemble of the binaries parsed, each binary's
    /// folder made; the outcome of every kernel that cannot be is set now
    /// (and a warning for each binary that cannot be read).
    fn jobs<'a>(
        &mut self,
        dir: &Path,
        binaries: &'a [Asked<'a>],
        parsed: &'a [Parsed],
    ) -> (Vec<Job<'a>>, Vec<IsaFolder>) {
        let mut jobs = Vec::new();
        let mut folders: Vec<IsaFolder> = Vec::new();
        for ((key, file, names), p) in binaries.iter().zip(parsed) {
            let program = match p {
                Ok(program) => program,
                Err((status, why)) => {
                    if *status == Status::BinaryUnreadable {
                        self.warnings.push(format!("{file}: {why}"));
                    }
                    for n in names {
                        self.kernels
                            .insert(((*key).clone(), n.to_vec()), Err((*status, why.clone())));
                    }
                    continue;
                }
            };
            let folder = folders.len();
            folders.push(IsaFolder::make(dir, &key.sha256, program));
            for n in names {
                match program.kernel(n) {
                    Some(kernel) => jobs.push(Job {
                        key,
                        program,
                        kernel,
                        folder,
                    }),
                    None => {
                        let why = not_in_binary(file, program);
                        self.kernels.insert(
                            ((*key).clone(), n.to_vec()),
                            Err((Status::KernelNotInBinary, why)),
                        );
                    }
                }
            }
        }
        (jobs, folders)
    }

    /// The outcome for kernel `name` of the binary `key`, as prepared.
    pub fn lookup(&self, key: &BinaryKey, name: &[u8]) -> Lookup<'_> {
        match self.kernels.get(&(key.clone(), name.to_vec())) {
            Some(Ok(a)) => Lookup::Found(vec![a]),
            Some(Err((s, why))) => Lookup::Missing(*s, why.clone()),
            None => Lookup::Missing(
                Status::NoBinary,
                "its module's binary was not looked at (not asked for)".into(),
            ),
        }
    }
}

/// The binaries `requests` ask for, each once, with the kernels asked of it.
fn asked(requests: &[Request]) -> Vec<Asked<'_>> {
    // Binary -> (file, names asked).
    let mut by_binary: BTreeMap<&BinaryKey, (&str, BTreeSet<&[u8]>)> = BTreeMap::new();
    for r in requests {
        if let Some(f) = &r.file {
            by_binary
                .entry(&r.key)
                .or_insert_with(|| (f.as_str(), BTreeSet::new()))
                .1
                .insert(&r.name);
        }
    }
    by_binary.into_iter().map(|(k, (f, n))| (k, f, n)).collect()
}

/// Why a kernel asked for is not in its module's binary `file`.
fn not_in_binary(file: &str, program: &Program) -> String {
    let mut have: Vec<String> = program
        .kernels
        .iter()
        .take(5)
        .map(|k| String::from_utf8_lossy(&k.name).into_owned())
        .collect();
    if program.kernels.len() > 5 {
        have.push(format!("and {} more", program.kernels.len() - 5));
    }
    format!(
        "its module's binary ({file}, {}) has no kernel of this exact name (it has {}: {}); the program may have renamed it, or the binary is not the one it launched from",
        program.format,
        program.kernels.len(),
        have.join(", ")
    )
}

/// Disassembles one kernel, or reads back the file an earlier collection
/// wrote.
fn disassemble(
    folder: &IsaFolder,
    key: &BinaryKey,
    program: &Program,
    kernel: &native::NativeKernel,
    iga: &OnceLock<Result<Iga, String>>,
) -> Outcome {
    let file_name = IsaFolder::file_name(&kernel.name);
    let path = folder.path.join(&file_name);
    let shown = format!("{}/{file_name}", folder.rel);
    let origin = BinaryOrigin {
        sha256: key.sha256.clone(),
        format: program.format.name().to_string(),
        fat_entry: program.fat_entry.clone(),
    };
    let file = |header, analysis| AsmFile {
        file_name: file_name.clone(),
        path: path.clone(),
        shown: shown.clone(),
        name: AsmName {
            hash: key.sha256.clone(),
            retry: 0,
            simd: kernel.simd,
            entry: None,
        },
        header: Some(header),
        final_binary: Some(true),
        source: IsaSourceKind::ModuleBinary,
        binary: Some(Box::new(origin.clone())),
        analysis,
    };
    // Written by an earlier collection: the same bytes give the same text.
    if folder.existing.contains(&file_name) {
        if let Ok(h) = read_header(&path) {
            if h.kernel.as_deref() == Some(kernel.name.as_slice()) {
                // Its source lines and mix are read after matching.
                return Ok(file(h, None));
            }
        }
    }
    let Some(platform) = &program.platform else {
        return Err((
            Status::IgaFailed,
            format!(
                "its module's binary ({}) does not say which GPU it is for, and no device was recorded for the module; IGA needs the platform",
                program.format
            ),
        ));
    };
    let iga = match iga.get_or_init(|| Iga::load().map_err(|e| e.to_string())) {
        Ok(i) => i,
        Err(e) => return Err((Status::IgaMissing, e.clone())),
    };
    let text = iga.disassemble(platform, &kernel.code).map_err(|e| {
        (
            Status::IgaFailed,
            format!("IGA refused the kernel's code: {e}"),
        )
    })?;
    let asm = native::render_asm(kernel, program, &text);
    if let Some(e) = &folder.error {
        return Err((Status::IgaFailed, e.clone()));
    }
    write_new(&path, asm.as_bytes())
        .map_err(|e| (Status::IgaFailed, format!("cannot write {shown}: {e}")))?;
    let header = parse_header(asm.as_bytes(), HEADER_MAX_BYTES)
        .map_err(|e| (Status::IgaFailed, format!("{e}")))?;
    // The text is at hand: analysed now rather than read back from the
    // file after matching (the same size limit as for a file).
    let analysis = (asm.len() as u64 <= crate::isa::MAX_ANALYZED_BYTES)
        .then(|| std::sync::Arc::new(crate::isa::analyze(&asm)));
    Ok(file(header, analysis))
}

impl IsaSource for ModuleBinaries {
    fn kind(&self) -> IsaSourceKind {
        IsaSourceKind::ModuleBinary
    }

    fn find<'a>(&'a self, rec: &ProcessRecord, module: &Module, name: &[u8]) -> Lookup<'a> {
        match request(rec, module, name) {
            Ok(r) => self.lookup(&r.key, name),
            Err(miss) => miss,
        }
    }
}

/// The binary `module` is looked up by, for [`ModuleBinaries::prepare`].
pub fn binary_key(rec: &ProcessRecord, module: &Module) -> Option<BinaryKey> {
    request(rec, module, b"").ok().map(|r| r.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_folders_never_lead_out_of_the_capture() {
        let t = tempfile::tempdir().unwrap();
        let (cap, elsewhere) = (t.path().join("cap"), t.path().join("elsewhere"));
        std::fs::create_dir_all(&cap).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, cap.join(ISA_DIR)).unwrap();
        make_real_dirs(&cap, "isa/ab").unwrap();
        assert!(std::fs::symlink_metadata(cap.join("isa")).unwrap().is_dir());
        assert!(cap.join("isa/ab").is_dir());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn only_plain_module_files_are_read() {
        assert!(safe_module_file("modules/0ab1.bin"));
        for bad in [
            "/etc/passwd",
            "modules/../x.bin",
            "modules/x.bin",
            "modules/.bin",
            "dumps/00.bin",
            "modules/00.bin/x",
            "modules/00",
        ] {
            assert!(!safe_module_file(bad), "{bad}");
        }
    }
}
