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
//! A native module the driver did not run as passed (NEO compiles the
//! SPIR-V that a binary for another device carries, and NEO 26 reads no
//! patch tokens) has a second binary in the record, `built_binary`: what
//! the driver built. A kernel's code is taken from the binary passed when
//! the driver's build has the same code for it (a fat binary's member), and
//! from the build otherwise, with a note saying so.
//!
//! Only what is asked for is disassembled (the launched kernels that the
//! dumps lack), each kernel once, on every core. A file already written by
//! an earlier collection is read back, not disassembled again.

use super::{AsmFile, AsmName, BinaryOrigin, IsaSource, IsaSourceKind, Lookup, Status};
use crate::capture::layout::ISA_DIR;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};
use xpu_asm_isa::header::{parse_own_header, read_own_header};
use xpu_asm_isa::native::{self, iga::Iga, Device, NativeError, Program};
use xpu_asm_record::read::{Module, ProcessRecord};

/// What a kernel's lookup in a module binary needs: the binary and the
/// device it ran on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BinaryKey {
    /// SHA-256 of the binary.
    pub sha256: String,
    /// PCI device id and IP version of the device, when recorded.
    pub device: Option<(u32, Option<u32>)>,
    /// SHA-256 of what the driver built from a native module it did not
    /// run as passed (the record's `built_binary`), when saved.
    pub built: Option<String>,
}

/// A kernel asked for, by the binary of its module.
#[derive(Debug, Clone)]
pub struct Request {
    pub key: BinaryKey,
    /// The saved file, relative to the capture folder (`None`: not saved,
    /// `error` says why).
    pub file: Option<String>,
    pub error: Option<String>,
    /// The saved file of the driver's build ([`BinaryKey::built`]).
    pub built_file: Option<String>,
    pub name: Vec<u8>,
}

/// Whether a write failed for want of space (or quota).
fn no_space(why: &str) -> bool {
    why.contains("No space left") || why.contains("quota")
}

/// What to do when a module binary could not be saved, by why.
fn fix_for(why: &str) -> &'static str {
    if no_space(why) {
        "free space where the capture folder is (or put it elsewhere: -o) and run again"
    } else {
        "make the capture folder writable and run again"
    }
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
        let status = match no_space(why) {
            true => Status::NoSpace,
            false => Status::NoBinary,
        };
        return Err(Lookup::Missing(
            status,
            format!(
                "its module's binary was not saved at run time ({why}); {}",
                fix_for(why)
            ),
        ));
    }
    let built = module
        .built_binary
        .as_ref()
        .filter(|b| !b.sha256.is_empty())
        .and_then(|b| Some((b.sha256.to_ascii_lowercase(), b.file.clone()?)));
    Ok(Request {
        key: BinaryKey {
            sha256: b.sha256.to_ascii_lowercase(),
            device,
            built: built.as_ref().map(|(sha, _)| sha.clone()),
        },
        file: b.file.clone(),
        error: b.error.clone(),
        built_file: built.map(|(_, f)| f),
        name: name.to_vec(),
    })
}

/// The outcome for one kernel.
type Outcome = Result<Arc<AsmFile>, (Status, String)>;

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
pub(super) fn safe_module_file(file: &str) -> bool {
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
    native::parse(&bytes, device.as_ref()).map_err(parse_error)
}

/// `for X, but the program ran on Y (Z)` when `program` is for another
/// generation of GPU than the device of `key`. NEO takes such a binary
/// without complaint when it carries SPIR-V too: it compiles that instead,
/// and the code in the binary is not what ran.
fn for_another_device(program: &Program, key: &BinaryKey) -> Option<String> {
    let p = program.platform.as_ref()?;
    let device = native_device(key)?;
    let dp = device.platform().filter(|dp| dp.iga_gen != p.iga_gen)?;
    Some(format!(
        "for {}, but the program ran on {} ({})",
        p.name,
        device.describe(),
        dp.name
    ))
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

/// Writes `bytes` to `path` (in a folder of ours) under a temporary name of
/// its own (two jobs may write the same file: one binary can be two modules'
/// code, e.g. a module's and another module's build by the driver), then
/// renames it into place.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.tmp.{}.{n}", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A binary asked for, with the kernels asked of it.
struct Asked<'a> {
    key: &'a BinaryKey,
    /// The binary passed.
    file: &'a str,
    /// The driver's build of it, when it did not run it as passed.
    built_file: Option<&'a str>,
    names: BTreeSet<&'a [u8]>,
}

/// An asked binary parsed: the binary passed, and the driver's build.
type ParsedPair = (Parsed, Option<Parsed>);

/// One kernel to disassemble.
struct Job<'a> {
    key: &'a BinaryKey,
    from: Pick<'a>,
    /// Index of its [`IsaFolder`].
    folder: usize,
}

/// The code a kernel is disassembled from: of the binary passed, or of the
/// driver's build of it (then with a note that says why).
struct Pick<'a> {
    /// SHA-256 of the binary the code is taken from.
    sha: &'a str,
    program: &'a Program,
    kernel: &'a native::NativeKernel,
    note: Option<String>,
}

/// Kernel `name`'s code in what `a` asks for: the binary passed when the
/// driver ran it as passed (no build recorded, or one with the same code
/// for it), else the driver's build.
fn pick<'a>(
    a: &Asked<'a>,
    parsed: &'a ParsedPair,
    name: &[u8],
) -> Result<Pick<'a>, (Status, String)> {
    let other_device = parsed
        .0
        .as_ref()
        .ok()
        .and_then(|p| for_another_device(p, a.key));
    let passed = match &parsed.0 {
        Ok(p) => match (p.kernel(name), &other_device) {
            (_, Some(other)) => Err((
                Status::DeviceNotInBinary,
                format!(
                    "its module's binary ({}, {}) is {other}: this code is not what ran (the driver compiles the SPIR-V such a binary also carries); build the binary for this device too (ocloc -device ...)",
                    a.file, p.format
                ),
            )),
            (Some(k), None) => Ok(Pick {
                sha: &a.key.sha256,
                program: p,
                kernel: k,
                note: None,
            }),
            (None, None) => Err((Status::KernelNotInBinary, not_in_binary(a.file, p))),
        },
        Err(e) => Err(e.clone()),
    };
    let (Some(Ok(built)), Some(sha), Some(file)) = (&parsed.1, &a.key.built, a.built_file) else {
        return passed;
    };
    let Some(kernel) = built.kernel(name) else {
        return passed;
    };
    let why = match (passed, other_device) {
        (Ok(p), _) if p.kernel.code == kernel.code => return Ok(p),
        (_, Some(other)) => format!("is {other}"),
        (Ok(_), None) => "has other code for this kernel than the driver built".into(),
        (Err((_, why)), None) => format!("was not run: {why}"),
    };
    let (passed_format, built_format) = (
        parsed.0.as_ref().map_or("unreadable", |p| p.format.name()),
        built.format.name(),
    );
    Ok(Pick {
        sha,
        program: built,
        kernel,
        note: Some(format!(
            "ISA of the driver's build ({file}, {built_format}: zeModuleGetNativeBinary after the build, NEO's compilation of the SPIR-V the binary carries), not of the binary passed ({}, {passed_format}), which {why}",
            a.file
        )),
    })
}

impl ModuleBinaries {
    /// Parses the binaries of `requests` and disassembles the kernels they
    /// ask for, on every core. `iga` is loaded on first need.
    pub fn prepare(dir: &Path, requests: &[Request], stop: &(dyn Fn() -> bool + Sync)) -> Self {
        let mut out = ModuleBinaries::default();
        let binaries = asked(requests);
        let parsed: Vec<ParsedPair> = binaries
            .par_iter()
            .map(|a| {
                if stop() {
                    let stopped = "collection was interrupted".to_string();
                    return (Err((Status::BinaryUnreadable, stopped)), None);
                }
                let built = a.built_file.map(|f| read_and_parse(dir, a.key, f));
                (read_and_parse(dir, a.key, a.file), built)
            })
            .collect();
        let (jobs, folders) = out.jobs(dir, &binaries, &parsed);
        let iga: OnceLock<Result<Iga, String>> = OnceLock::new();
        let sources = native::SourceFiles::default();
        let done: Vec<Outcome> = jobs
            .par_iter()
            .map(|j| {
                if stop() {
                    return Err((Status::IgaFailed, "collection was interrupted".into()));
                }
                disassemble(&folders[j.folder], &j.from, &iga, &sources)
            })
            .collect();
        for (j, o) in jobs.iter().zip(done) {
            out.kernels
                .insert((j.key.clone(), j.from.kernel.name.clone()), o);
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
        parsed: &'a [ParsedPair],
    ) -> (Vec<Job<'a>>, Vec<IsaFolder>) {
        let mut jobs = Vec::new();
        let mut folders: Vec<IsaFolder> = Vec::new();
        for (a, p) in binaries.iter().zip(parsed) {
            for (file, parsed) in [(Some(a.file), Some(&p.0)), (a.built_file, p.1.as_ref())] {
                if let (Some(file), Some(Err((Status::BinaryUnreadable, why)))) = (file, parsed) {
                    self.warnings.push(format!("{file}: {why}"));
                }
            }
            // One folder per binary a kernel's code is taken from.
            let mut folder_of: BTreeMap<&str, usize> = BTreeMap::new();
            for n in &a.names {
                match pick(a, p, n) {
                    Ok(from) => {
                        let folder = *folder_of.entry(from.sha).or_insert_with(|| {
                            folders.push(IsaFolder::make(dir, from.sha, from.program));
                            folders.len() - 1
                        });
                        jobs.push(Job {
                            key: a.key,
                            from,
                            folder,
                        });
                    }
                    Err(e) => {
                        self.kernels.insert((a.key.clone(), n.to_vec()), Err(e));
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
    let mut by_binary: BTreeMap<&BinaryKey, Asked> = BTreeMap::new();
    for r in requests {
        if let Some(f) = &r.file {
            by_binary
                .entry(&r.key)
                .or_insert_with(|| Asked {
                    key: &r.key,
                    file: f,
                    built_file: r.built_file.as_deref(),
                    names: BTreeSet::new(),
                })
                .names
                .insert(&r.name);
        }
    }
    by_binary.into_values().collect()
}

/// Why a kernel asked for is not in its module's binary `file`.
fn not_in_binary(file: &str, program: &Program) -> String {
    let mut have: Vec<String> = program
        .kernels
        .iter()
        .take(5)
        .map(|k| crate::names::in_message(&k.name))
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
    from: &Pick,
    iga: &OnceLock<Result<Iga, String>>,
    sources: &native::SourceFiles,
) -> Outcome {
    let (program, kernel) = (from.program, from.kernel);
    let file_name = IsaFolder::file_name(&kernel.name);
    let path = folder.path.join(&file_name);
    let shown = format!("{}/{file_name}", folder.rel);
    let origin = BinaryOrigin {
        sha256: from.sha.to_string(),
        format: program.format.name().to_string(),
        fat_entry: program.fat_entry.clone(),
        note: from.note.clone(),
    };
    let file = |header, analysis| AsmFile {
        file_name: file_name.clone(),
        path: path.clone(),
        shown: shown.clone(),
        name: AsmName {
            hash: from.sha.to_string(),
            retry: 0,
            simd: kernel.simd,
            entry: None,
        },
        header: Some(header),
        final_binary: Some(true),
        source: IsaSourceKind::ModuleBinary,
        binary: Some(Box::new(origin.clone())),
        analysis,
        size: None,
    };
    // Written by an earlier collection: the same bytes give the same text.
    if folder.existing.contains(&file_name) {
        if let Ok(mut h) = read_own_header(&path) {
            if h.kernel.as_deref() == Some(native::name_line(&kernel.name).as_bytes()) {
                // The binary's symbol names the kernel, exactly.
                h.kernel = Some(kernel.name.clone());
                // Its source lines and mix are read after matching.
                return Ok(Arc::new(file(h, None)));
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
    let asm = native::render_asm(kernel, program, &text, sources);
    if let Some(e) = &folder.error {
        return Err((Status::IgaFailed, e.clone()));
    }
    write_new(&path, asm.as_bytes())
        .map_err(|e| (Status::IgaFailed, format!("cannot write {shown}: {e}")))?;
    let mut header = parse_own_header(asm.as_bytes());
    header.kernel = Some(kernel.name.clone());
    // The text is at hand: analysed now rather than read back from the
    // file after matching (the same size limit as for a file).
    let analysis = (asm.len() as u64 <= xpu_asm_isa::MAX_ANALYZED_BYTES)
        .then(|| std::sync::Arc::new(xpu_asm_isa::analyze(&asm)));
    Ok(Arc::new(file(header, analysis)))
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
