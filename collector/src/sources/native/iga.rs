//! IGA, Intel's GPU ISA disassembler, in-process through its C API
//! (`iga.h`) in `libiga64.so.1` (Debian package `libigc1`).
//!
//! The library is opened at run time, not linked: `xpu-asm-run` runs (and
//! reports everything but disassembly) where it is missing.

use super::Platform;
use libloading::Library;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};

/// The variable that names IGA's library in place of the default.
pub const ENV: &str = "XPU_ASM_IGA";

/// Tried in order when [`ENV`] is not set: `libigc1`'s versioned name,
/// then the development link of `libigc-dev`.
pub const DEFAULT_NAMES: &[&str] = &["libiga64.so.1", "libiga64.so"];

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
    #[error("IGA's library cannot be loaded ({tried}: {reason}); install the Debian package libigc1 (apt-get install libigc1), or set {ENV} to the path of libiga64.so.1")]
    Missing {
        /// What was tried: a path, or the default names.
        tried: String,
        /// The loader's message.
        reason: String,
    },
    /// The library lacks a function of IGA's C API.
    #[error("{path} has no {symbol}: not IGA's library, or too old; set {ENV} to the libiga64.so.1 of package libigc1")]
    Symbol {
        /// The library.
        path: String,
        /// The missing function.
        symbol: String,
    },
    /// IGA refused the platform.
    #[error("IGA ({version}) cannot disassemble for {platform} (iga_gen 0x{iga_gen:08x}): {status}; a newer libigc1 may know it")]
    Platform {
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
    /// the first of [`DEFAULT_NAMES`] the dynamic loader finds.
    pub fn load() -> Result<Iga, IgaError> {
        Iga::load_as_set(std::env::var_os(ENV).as_deref())
    }

    /// [`Iga::load`] with `setting` as the value of [`ENV`] (`None`: unset).
    fn load_as_set(setting: Option<&std::ffi::OsStr>) -> Result<Iga, IgaError> {
        match setting {
            Some(p) if !p.is_empty() => Iga::load_from(Path::new(p)),
            _ => {
                let mut reasons = Vec::new();
                for name in DEFAULT_NAMES {
                    match Iga::load_from(Path::new(name)) {
                        Ok(iga) => return Ok(iga),
                        Err(IgaError::Missing { reason, .. }) => reasons.push(reason),
                        Err(other) => return Err(other),
                    }
                }
                Err(IgaError::Missing {
                    tried: DEFAULT_NAMES.join(", "),
                    reason: reasons.join("; "),
                })
            }
        }
    }

    /// Opens IGA from `path` (a file name alone is looked up the dynamic
    /// loader's way).
    pub fn load_from(path: &Path) -> Result<Iga, IgaError> {
        let shown = path.display().to_string();
        // SAFETY: loading runs the library's initialisers; libiga64's are
        // C++ static constructors that only build tables.
        let lib = unsafe { Library::new(path) }.map_err(|e| IgaError::Missing {
            tried: shown.clone(),
            reason: e.to_string(),
        })?;
        let symbol_error = |symbol: &str| IgaError::Symbol {
            path: shown.clone(),
            symbol: symbol.to_string(),
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
        Ok(Iga {
            create,
            release,
            disassemble,
            errors,
            status_string,
            version,
            path,
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
        let len = u32::try_from(code.len()).map_err(|_| IgaError::TooLarge(code.len()))?;
        let ctx = Context::new(self, platform)?;
        let opts = DisassembleOptions {
            cb: std::mem::size_of::<DisassembleOptions>() as u32,
            formatting_opts: FORMATTING_OPT_PRINT_LDST
                | FORMATTING_OPT_PRINT_HEX_FLOATS
                | FORMATTING_OPT_PRINT_BFNEXPRS,
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
    use super::*;

    #[test]
    fn a_missing_library_says_which_package_to_install() {
        let e = Iga::load_from(Path::new("/nonexistent/libiga64.so.1")).unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, IgaError::Missing { .. }));
        assert!(
            m.contains("libigc1") && m.contains(ENV) && m.contains("/nonexistent/libiga64.so.1"),
            "{m}"
        );
    }

    #[test]
    fn the_variable_names_the_library_and_nothing_else_is_tried() {
        let nowhere = std::ffi::OsStr::new("/nonexistent/iga.so");
        match Iga::load_as_set(Some(nowhere)) {
            Err(IgaError::Missing { tried, .. }) => assert_eq!(tried, "/nonexistent/iga.so"),
            other => panic!("{other:?}"),
        }
        // Unset or empty: the library of package libigc1, installed here.
        let iga = Iga::load_as_set(None).unwrap();
        assert_eq!(iga.path(), DEFAULT_NAMES[0]);
        assert!(!iga.version().is_empty());
        assert_eq!(
            Iga::load_as_set(Some(std::ffi::OsStr::new("")))
                .unwrap()
                .path(),
            DEFAULT_NAMES[0]
        );
    }

    #[test]
    fn a_library_without_igas_api_is_named() {
        let e = Iga::load_from(Path::new("libc.so.6")).unwrap_err();
        assert!(
            matches!(&e, IgaError::Symbol { symbol, .. } if symbol == "iga_context_create"),
            "{e}"
        );
    }
}
