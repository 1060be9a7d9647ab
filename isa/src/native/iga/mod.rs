//! IGA, Intel's GPU ISA disassembler, in-process through its C API
//! (`iga.h`): `libiga64.so.2` of IGC 2 (Debian package `libigc2`, Intel's
//! `intel-igc-core-2`) or `libiga64.so.1` of IGC 1 (`libigc1`,
//! `intel-igc-core`).
//!
//! The library is opened at run time, not linked: `xpu-asm-run` runs (and
//! reports everything but disassembly) where it is missing. It is looked
//! for by name (the dynamic loader's search), then beside the IGC that NEO
//! would load (NEO opens `libigc.so.N` by name, with its own run path), and
//! when it is nowhere the error names the package of this system's IGC.

mod igcs;

pub use igcs::{only_igc, ENV};

use super::Platform;
use igcs::{advice, installed_igcs, library_dirs, newer, system_igcs, wanted};
use libloading::Library;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};

/// Tried in order when [`ENV`] is not set: IGC 2's IGA (it knows every
/// platform IGC 1's does, and Xe2, Xe3 and Xe3P), IGC 1's, then the
/// development link of `libigc-dev`.
pub const DEFAULT_NAMES: &[&str] = &["libiga64.so.2", "libiga64.so.1", "libiga64.so"];

// iga.h
type Status = i32;
const IGA_SUCCESS: Status = 0;
/// `IGA_FORMATTING_OPT_PRINT_LDST`: sends as load/store (`load.ugm...`),
/// the syntax of IGC's `.asm` dumps.
const FORMATTING_OPT_PRINT_LDST: u32 = 0x40;
/// `IGA_FORMATTING_OPT_PRINT_HEX_FLOATS`: float immediates in hexadecimal,
/// as IGC's dumps print them (`0x3F800000:f`, not `1.0:f`).
const FORMATTING_OPT_PRINT_HEX_FLOATS: u32 = 0x4;
/// `IGA_FORMATTING_OPT_PRINT_BFNEXPRS`: `bfn` with its function as an
/// expression (`bfn.(s0&s1|s2)`), as IGC's dumps print it, not `bfn.0xF8`.
const FORMATTING_OPT_PRINT_BFNEXPRS: u32 = 0x80;
/// `IGA_FORMATTING_OPT_PRINT_JSON`: JSON instead of assembly text (the
/// blocks with their predecessors and successors, the instructions).
const FORMATTING_OPT_PRINT_JSON: u32 = 0x200;
/// `IGA_FORMATTING_OPT_PRINT_DEFS`: with each instruction, the registers it
/// defines and uses and the live register totals of IGA's dataflow analysis.
const FORMATTING_OPT_PRINT_DEFS: u32 = 0x400;
/// The options of [`Iga::disassemble`].
const TEXT_OPTS: u32 =
    FORMATTING_OPT_PRINT_LDST | FORMATTING_OPT_PRINT_HEX_FLOATS | FORMATTING_OPT_PRINT_BFNEXPRS;

#[repr(C)]
struct ContextOptions {
    cb: usize,
    gen: u32,
}

#[repr(C)]
struct DisassembleOptions {
    cb: u32,
    formatting_opts: u32,
    reserved0: u32,
    reserved1: u32,
    decoder_opts: u32,
    base_pc_offset: u32,
}

#[repr(C)]
struct Diagnostic {
    line: u32,
    column: u32,
    offset: u32,
    extent: u32,
    message: *const c_char,
}

type LabelFn = unsafe extern "C" fn(i32, *mut c_void) -> *const c_char;
type CreateFn = unsafe extern "C" fn(*const ContextOptions, *mut *mut c_void) -> Status;
type ReleaseFn = unsafe extern "C" fn(*mut c_void) -> Status;
type DisassembleFn = unsafe extern "C" fn(
    *mut c_void,
    *const DisassembleOptions,
    *const c_void,
    u32,
    Option<LabelFn>,
    *mut c_void,
    *mut *mut c_char,
) -> Status;
type DiagnosticsFn = unsafe extern "C" fn(*mut c_void, *mut *const Diagnostic, *mut u32) -> Status;
type StatusStringFn = unsafe extern "C" fn(Status) -> *const c_char;
type VersionFn = unsafe extern "C" fn() -> *const c_char;

/// Why IGA gave no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IgaError {
    /// The library could not be opened.
    #[error("IGA's library cannot be loaded ({tried}: {reason}); {advice}")]
    Missing {
        /// What was tried: a path, or the default names and the paths
        /// beside IGC.
        tried: String,
        /// The loader's messages.
        reason: String,
        /// What this system needs: the package of its IGC's IGA.
        advice: String,
    },
    /// The library lacks a function of IGA's C API.
    #[error("{path} has no {symbol}: not IGA's library, or too old; set {ENV} to {wanted}")]
    Symbol {
        /// The library.
        path: String,
        /// The missing function.
        symbol: String,
        /// The IGA library this system's IGC comes with, and its package.
        wanted: String,
    },
    /// IGA refused the platform.
    #[error("IGA {version} ({path}) cannot disassemble for {platform} (iga_gen 0x{iga_gen:08x}): {status}; a newer IGA may know it: IGC 2's libiga64.so.2 (Debian package libigc2, Intel's intel-igc-core-2) knows Xe2, Xe3 and Xe3P{newer}")]
    Platform {
        /// The library, as it was opened.
        path: String,
        /// Where this system has a newer IGA than the one in use, if it
        /// does: `; this system has one: set XPU_ASM_IGA=<path>`.
        newer: String,
        /// [`Platform::name`].
        platform: String,
        /// [`Platform::iga_gen`].
        iga_gen: u32,
        /// IGA's version string.
        version: String,
        /// IGA's status.
        status: String,
    },
    /// IGA could not decode the code.
    #[error("IGA could not decode the kernel's code ({status}): {messages}")]
    Decode {
        /// IGA's status.
        status: String,
        /// IGA's error messages, with the byte offsets they concern.
        messages: String,
    },
    /// The code is larger than IGA's API takes (4 GiB).
    #[error("kernel code of {0} bytes is more than IGA takes")]
    TooLarge(usize),
}

/// IGA's library, opened, with the functions xpu-asm calls.
///
/// `Iga` is `Send` and `Sync`: each [`Iga::disassemble`] makes its own IGA
/// context and releases it, so calls from many threads at once share no
/// IGA state.
pub struct Iga {
    create: CreateFn,
    release: ReleaseFn,
    disassemble: DisassembleFn,
    errors: DiagnosticsFn,
    status_string: StatusStringFn,
    version: String,
    path: String,
    /// Its KernelView API ([`super::kv`]), or what it lacks of it.
    kv: Result<super::kv::Api, super::kv::KvError>,
    // Last: the functions above point into it.
    _lib: Library,
}

impl std::fmt::Debug for Iga {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iga")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

impl Iga {
    /// Opens IGA: the library [`ENV`] names when set (and only it), else
    /// the first of [`DEFAULT_NAMES`] the dynamic loader finds, else IGA
    /// beside the IGC that NEO finds.
    pub fn load() -> Result<Iga, IgaError> {
        Iga::load_as_set(std::env::var_os(ENV).as_deref())
    }

    /// [`Iga::load`] with `setting` as the value of [`ENV`] (`None`: unset).
    fn load_as_set(setting: Option<&std::ffi::OsStr>) -> Result<Iga, IgaError> {
        match setting {
            Some(p) if !p.is_empty() => Iga::load_from(Path::new(p)),
            _ => Iga::load_default(DEFAULT_NAMES, &library_dirs()),
        }
    }

    /// The first of `names` the dynamic loader finds, else IGA beside the
    /// IGC found from `search` (the folders the loader searches).
    fn load_default(names: &[&str], search: &[PathBuf]) -> Result<Iga, IgaError> {
        let mut tried: Vec<String> = Vec::new();
        let mut reasons = Vec::new();
        let mut attempt = |path: &Path, tried: &mut Vec<String>| {
            tried.push(path.display().to_string());
            match Iga::open(path) {
                Err(IgaError::Missing { reason, .. }) => {
                    reasons.push(reason);
                    None
                }
                other => Some(other),
            }
        };
        for name in names {
            if let Some(done) = attempt(Path::new(name), &mut tried) {
                return done;
            }
        }
        let igcs = installed_igcs(search);
        for (igc, library) in &igcs {
            let dir = library.parent().unwrap_or(Path::new("/"));
            for name in [igc.iga, "libiga64.so"] {
                let path = dir.join(name);
                if path.exists() {
                    if let Some(done) = attempt(&path, &mut tried) {
                        return done;
                    }
                }
            }
        }
        Err(IgaError::Missing {
            tried: tried.join(", "),
            reason: reasons.join("; "),
            advice: advice(&igcs),
        })
    }

    /// Opens IGA from `path` (a file name alone is looked up the dynamic
    /// loader's way).
    pub fn load_from(path: &Path) -> Result<Iga, IgaError> {
        Iga::open(path).map_err(|e| match e {
            IgaError::Missing { tried, reason, .. } => IgaError::Missing {
                tried,
                reason,
                advice: advice(system_igcs()),
            },
            other => other,
        })
    }

    /// [`Iga::load_from`], its errors without advice.
    fn open(path: &Path) -> Result<Iga, IgaError> {
        let shown = path.display().to_string();
        // SAFETY: loading runs the library's initialisers; libiga64's are
        // C++ static constructors that only build tables.
        let lib = unsafe { Library::new(path) }.map_err(|e| IgaError::Missing {
            tried: shown.clone(),
            reason: e.to_string(),
            advice: String::new(),
        })?;
        let symbol_error = |symbol: &str| IgaError::Symbol {
            path: shown.clone(),
            symbol: symbol.to_string(),
            wanted: wanted(system_igcs()),
        };
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the type is the function's prototype in iga.h,
                // whose ABI has been stable since IGA's first C API; the
                // pointer is used only while `lib` lives (it is kept in
                // the same struct).
                let s: libloading::Symbol<$t> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|_| symbol_error($name))?;
                *s
            }};
        }
        let create = sym!(CreateFn, "iga_context_create");
        let release = sym!(ReleaseFn, "iga_context_release");
        let disassemble = sym!(DisassembleFn, "iga_context_disassemble");
        let errors = sym!(DiagnosticsFn, "iga_context_get_errors");
        let status_string = sym!(StatusStringFn, "iga_status_to_string");
        let version_fn = sym!(VersionFn, "iga_version_string");
        // SAFETY: iga_version_string returns a static NUL-terminated string.
        let version = unsafe { c_text(version_fn()) };
        let path = PathBuf::from(path).display().to_string();
        let kv = super::kv::Api::load(&lib);
        Ok(Iga {
            create,
            release,
            disassemble,
            errors,
            status_string,
            version,
            path,
            kv,
            _lib: lib,
        })
    }

    /// IGA's version string (e.g. `1.0.12504`'s IGA says its own).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The library's path or name, as it was opened.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn status(&self, st: Status) -> String {
        // SAFETY: iga_status_to_string returns a static string for any
        // value (unknown ones included).
        let s = unsafe { c_text((self.status_string)(st)) };
        if s.is_empty() {
            format!("status {st}")
        } else {
            s
        }
    }

    /// The text of `code` (one kernel's machine code) for `platform`, in
    /// IGA's syntax as IGC's dumps print it (sends as loads and stores,
    /// floats in hexadecimal, `bfn` functions as expressions), labels named
    /// by IGA.
    pub fn disassemble(&self, platform: &Platform, code: &[u8]) -> Result<String, IgaError> {
        self.format(platform, code, TEXT_OPTS)
    }

    /// IGA's JSON of `code` (`-Xprint-json`): the blocks with their
    /// predecessors and successors, and per instruction its syntax and
    /// operands; with `dataflow` (`-Xprint-defs`), also IGA's definitions,
    /// uses and live register totals, which take IGA seconds on a large
    /// kernel. Its instructions are those of [`Iga::disassemble`], in the
    /// same order.
    pub fn disassemble_json(
        &self,
        platform: &Platform,
        code: &[u8],
        dataflow: bool,
    ) -> Result<String, IgaError> {
        let defs = if dataflow {
            FORMATTING_OPT_PRINT_DEFS
        } else {
            0
        };
        self.format(platform, code, TEXT_OPTS | FORMATTING_OPT_PRINT_JSON | defs)
    }

    /// `code` decoded through IGA's KernelView API ([`super::kv`]): what
    /// [`crate::igajson::parse`] reads from [`Iga::disassemble_json`]
    /// (without IGA's dataflow), without IGA formatting the kernel.
    pub fn decode(
        &self,
        platform: &Platform,
        code: &[u8],
    ) -> Result<crate::decoded::Code, super::kv::KvError> {
        let api = self.kv.as_ref().map_err(Clone::clone)?;
        super::kv::decode(api, platform.iga_gen, code)
    }

    /// `code` disassembled for `platform` with IGA's formatting options
    /// `formatting_opts`.
    fn format(
        &self,
        platform: &Platform,
        code: &[u8],
        formatting_opts: u32,
    ) -> Result<String, IgaError> {
        let len = u32::try_from(code.len()).map_err(|_| IgaError::TooLarge(code.len()))?;
        let ctx = Context::new(self, platform)?;
        let opts = DisassembleOptions {
            cb: std::mem::size_of::<DisassembleOptions>() as u32,
            formatting_opts,
            reserved0: 0,
            reserved1: 0,
            decoder_opts: 0,
            base_pc_offset: 0,
        };
        let mut text: *mut c_char = std::ptr::null_mut();
        // SAFETY: ctx is a live context; opts, code and text outlive the
        // call; no label callback. IGA owns the returned text until the
        // next call on ctx, and it is copied before ctx is released.
        let st = unsafe {
            (self.disassemble)(
                ctx.0,
                &opts,
                code.as_ptr().cast(),
                len,
                None,
                std::ptr::null_mut(),
                &mut text,
            )
        };
        if st != IGA_SUCCESS {
            return Err(IgaError::Decode {
                status: self.status(st),
                messages: ctx.errors(),
            });
        }
        // SAFETY: on success text is IGA's NUL-terminated output (or null).
        Ok(unsafe { c_text(text) })
    }
}

/// An IGA context, released when dropped.
struct Context<'a>(*mut c_void, &'a Iga);

impl<'a> Context<'a> {
    fn new(iga: &'a Iga, platform: &Platform) -> Result<Context<'a>, IgaError> {
        let opts = ContextOptions {
            cb: std::mem::size_of::<ContextOptions>(),
            gen: platform.iga_gen,
        };
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: opts and ctx are valid for the call.
        let st = unsafe { (iga.create)(&opts, &mut ctx) };
        if st != IGA_SUCCESS || ctx.is_null() {
            return Err(IgaError::Platform {
                path: iga.path.clone(),
                newer: newer_iga(iga),
                platform: platform.name.clone(),
                iga_gen: platform.iga_gen,
                version: iga.version.clone(),
                status: iga.status(st),
            });
        }
        Ok(Context(ctx, iga))
    }

    /// The errors of the last call, `message (at byte N)` each.
    fn errors(&self) -> String {
        let mut ds: *const Diagnostic = std::ptr::null();
        let mut n: u32 = 0;
        // SAFETY: a live context; ds and n are valid for the call.
        let st = unsafe { (self.1.errors)(self.0, &mut ds, &mut n) };
        if st != IGA_SUCCESS || ds.is_null() || n == 0 {
            return "no details from IGA".to_string();
        }
        // SAFETY: IGA returns an array of n diagnostics that stays valid
        // until the next call on this context.
        let ds = unsafe { std::slice::from_raw_parts(ds, n as usize) };
        ds.iter()
            .take(10)
            // SAFETY: each message is NUL-terminated (or null).
            .map(|d| format!("{} (at byte {})", unsafe { c_text(d.message) }, d.offset))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: the context was created by iga_context_create and is
        // released once.
        unsafe { (self.1.release)(self.0) };
    }
}

/// `; this system has one: set XPU_ASM_IGA=<path>` when an IGC newer than
/// the one whose IGA is in use has its IGA here, else nothing.
fn newer_iga(iga: &Iga) -> String {
    newer(&iga.path, system_igcs())
}

/// A C string's text (empty for null).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: as the caller promises.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::igcs::*;
    use super::*;

    /// The IGC this system has (the newest, if several), with its library.
    fn this_igc() -> (&'static Igc, PathBuf) {
        installed_igcs(&library_dirs())
            .into_iter()
            .next()
            .expect("an IGC on this system (libigc1 or libigc2: scripts/install-deps.sh)")
    }

    #[test]
    fn a_missing_library_says_which_package_to_install() {
        let e = Iga::load_from(Path::new("/nonexistent/libiga64.so.1")).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, IgaError::Missing { .. }));
        let (igc, library) = this_igc();
        assert!(
            m.contains(igc.debian)
                && m.contains(igc.intel)
                && m.contains(igc.iga)
                && m.contains(&library.display().to_string())
                && m.contains(ENV)
                && m.contains("/nonexistent/libiga64.so.1"),
            "{m}"
        );
    }

    #[test]
    fn the_advice_names_the_package_of_the_igc_there_is() {
        let two = (&IGCS[0], PathBuf::from("/opt/x/libigc.so.2"));
        let one = (&IGCS[1], PathBuf::from("/usr/lib/libigc.so.1"));
        assert_eq!(
            advice(&[two.clone(), one.clone()]),
            "this system has IGC 2 (/opt/x/libigc.so.2), whose IGA is libiga64.so.2: install it (Debian, Ubuntu: apt-get install libigc2; Intel's packages: intel-igc-core-2), or set XPU_ASM_IGA to the path of libiga64.so.2"
        );
        assert_eq!(
            advice(std::slice::from_ref(&one)),
            "this system has IGC 1 (/usr/lib/libigc.so.1), whose IGA is libiga64.so.1: install it (Debian, Ubuntu: apt-get install libigc1; Intel's packages: intel-igc-core), or set XPU_ASM_IGA to the path of libiga64.so.1"
        );
        assert_eq!(
            advice(&[]),
            "no IGC was found on this system either (no libigc.so.2, libigc.so.1): install the IGA of the IGC that NEO uses, with IGC 2 libiga64.so.2 (Debian, Ubuntu: libigc2; Intel's packages: intel-igc-core-2), with IGC 1 libiga64.so.1 (libigc1; intel-igc-core), or set XPU_ASM_IGA to the path of IGA's library"
        );
        assert_eq!(
            wanted(&[one]),
            "the libiga64.so.1 beside this system's IGC 1 (/usr/lib/libigc.so.1; package libigc1 or intel-igc-core)"
        );
        assert_eq!(
            wanted(&[]),
            "libiga64.so.2 (package libigc2 or intel-igc-core-2) or libiga64.so.1 (package libigc1 or intel-igc-core)"
        );
    }

    #[test]
    fn a_newer_iga_of_this_system_is_named_when_the_one_in_use_refuses() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("libiga64.so.2"), "").unwrap();
        let both = [
            (&IGCS[0], t.path().join("libigc.so.2")),
            (&IGCS[1], PathBuf::from("/usr/lib/libigc.so.1")),
        ];
        assert_eq!(
            newer("libiga64.so.1", &both),
            format!(
                "; this system has one: set XPU_ASM_IGA={}/libiga64.so.2",
                t.path().display()
            )
        );
        assert_eq!(newer("libiga64.so.2", &both), "");
        assert_eq!(newer("/opt/iga/libiga64.so.1", &both[1..]), "");
        // Its IGA not beside IGC 2: nothing to name.
        std::fs::remove_file(t.path().join("libiga64.so.2")).unwrap();
        assert_eq!(newer("libiga64.so.1", &both), "");
    }

    #[test]
    fn the_variable_names_the_library_and_nothing_else_is_tried() {
        let nowhere = std::ffi::OsStr::new("/nonexistent/iga.so");
        match Iga::load_as_set(Some(nowhere)) {
            Err(IgaError::Missing { tried, .. }) => assert_eq!(tried, "/nonexistent/iga.so"),
            other => panic!("{other:?}"),
        }
        // Unset or empty: by name, the IGA of this system's IGC (the
        // loader's search and the search for IGC's library agree).
        let (igc, _) = this_igc();
        let iga = Iga::load_as_set(None).unwrap();
        assert_eq!(iga.path(), igc.iga);
        assert!(!iga.version().is_empty());
        assert_eq!(
            Iga::load_as_set(Some(std::ffi::OsStr::new("")))
                .unwrap()
                .path(),
            igc.iga
        );
    }

    #[test]
    fn the_default_names_newest_igc_first() {
        assert_eq!(
            DEFAULT_NAMES,
            ["libiga64.so.2", "libiga64.so.1", "libiga64.so"]
        );
        assert_eq!(
            IGCS.iter().map(|i| i.iga).collect::<Vec<_>>(),
            &DEFAULT_NAMES[..2]
        );
    }

    /// IGC and its IGA in a folder the dynamic loader does not search, where
    /// NEO's driver finds IGC through its run path (`$ORIGIN/../igc`): IGA
    /// is found there, by its full path. The driver is a library built here
    /// with that run path; IGC and IGA are this system's, linked into the
    /// folder.
    #[test]
    fn iga_is_found_beside_the_igc_neo_finds() {
        let t = tempfile::tempdir().unwrap();
        let (neo, igc_dir) = (t.path().join("neo"), t.path().join("igc"));
        std::fs::create_dir_all(&neo).unwrap();
        std::fs::create_dir_all(&igc_dir).unwrap();
        let (igc, library) = this_igc();
        let iga = library.parent().unwrap().join(igc.iga);
        std::os::unix::fs::symlink(&library, igc_dir.join(igc.library)).unwrap();
        std::os::unix::fs::symlink(&iga, igc_dir.join(igc.iga)).unwrap();
        std::fs::write(t.path().join("neo.c"), "int neo;\n").unwrap();
        let out = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(neo.join(NEO_LIBRARY))
            .arg(t.path().join("neo.c"))
            .arg("-Wl,--enable-new-dtags,-rpath,$ORIGIN/../igc")
            .output()
            .expect("cc (gcc) to build a library with a run path");
        assert!(out.status.success(), "{out:?}");

        let search = [neo.clone()];
        assert_eq!(neo_run_path(&search), [neo.join("../igc")]);
        // Debian's NEO (22.43 and 26.27 alike) has no run path.
        assert!(library_dirs().iter().any(|d| d.join(NEO_LIBRARY).exists()));
        assert_eq!(neo_run_path(&library_dirs()), Vec::<PathBuf>::new());
        let found = installed_igcs(&search);
        assert_eq!(found, [(igc, neo.join("../igc").join(igc.library))]);
        let loaded = Iga::load_default(&["libiga64-of-no-igc.so.9"], &search).unwrap();
        assert_eq!(
            loaded.path(),
            neo.join("../igc").join(igc.iga).display().to_string()
        );
        assert!(!loaded.version().is_empty());

        // Nothing by name, no IGC: every path tried is named, and both IGCs'
        // packages.
        let empty = [t.path().join("igc-less")];
        match Iga::load_default(&["libiga64-of-no-igc.so.9"], &empty) {
            Err(e @ IgaError::Missing { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains("libiga64-of-no-igc.so.9")
                        && m.contains("libigc2")
                        && m.contains("libigc1"),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
        // IGC there, its IGA not: the package of that IGC, and the path tried.
        std::fs::remove_file(igc_dir.join(igc.iga)).unwrap();
        match Iga::load_default(&["libiga64-of-no-igc.so.9"], &search) {
            Err(IgaError::Missing { advice, .. }) => {
                assert!(
                    advice.contains(igc.debian) && advice.contains(igc.intel),
                    "{advice}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ld_so_conf_and_its_includes_are_read_in_order() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("conf.d");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("b.conf"), "/b/lib\n# /not\n").unwrap();
        std::fs::write(d.join("a.conf"), "/a/lib # comment\n").unwrap();
        std::fs::write(d.join("a.notconf"), "/x\n").unwrap();
        let main = t.path().join("ld.so.conf");
        std::fs::write(
            &main,
            format!(
                "/first\ninclude {}/*.conf\ninclude {}\n",
                d.display(),
                main.display()
            ),
        )
        .unwrap();
        let mut out = Vec::new();
        ld_so_conf(&main, 0, &mut out);
        // The file includes itself: read again to the depth limit (eight
        // includes deep), not forever.
        assert_eq!(
            &out[..3],
            [
                Path::new("/first"),
                Path::new("/a/lib"),
                Path::new("/b/lib")
            ]
        );
        assert_eq!(out.len(), 3 * 8 + 1);
        assert!(library_dirs().contains(&PathBuf::from("/usr/lib")));
    }

    #[test]
    fn a_library_without_igas_api_is_named() {
        let e = Iga::load_from(Path::new("libc.so.6")).unwrap_err();
        assert!(
            matches!(&e, IgaError::Symbol { symbol, .. } if symbol == "iga_context_create"),
            "{e}"
        );
        let (igc, _) = this_igc();
        assert!(
            e.to_string().contains(igc.iga) && e.to_string().contains(igc.debian),
            "{e}"
        );
    }
}
