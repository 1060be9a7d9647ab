//! Running the command: the capture folder, the interposer, the child's
//! environment, signals, and `run.json`.

use crate::capture::layout::{is_capture, CollectError, CAPTURE_ENTRIES};
use crate::capture::run::Exit;
use crate::names;
use crate::run::emulate::{emulate_env, NeoDevices};
use crate::run::interposer::{self, PlaceError};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

/// File name of the interposer library.
pub const INTERPOSER_LIB: &str = interposer::FILE_NAME;
/// Environment variable naming the interposer library.
pub const INTERPOSER_ENV: &str = "XPU_ASM_INTERPOSER";

/// `dev` of `option` (`--emulate`, `--port-to`, `--to`) on this system:
/// an error naming the option, NEO's version and the devices it has when
/// its NEO does not know `dev` (NEO 22.43 has no mtl, bmg, lnl, ptl: it
/// would abort inside the driver). `version` gives NEO's version for that
/// error.
pub fn check_emulated_device(
    option: &'static str,
    dev: &str,
    neo: Option<&NeoDevices>,
    version: impl FnOnce() -> String,
) -> Result<(), LaunchError> {
    match neo {
        Some(n) if !n.has(dev) => Err(LaunchError::NoSuchDevice {
            option,
            device: dev.to_string(),
            version: version(),
            devices: n.products().join(", "),
        }),
        _ => Ok(()),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "{0} is not empty and is not an earlier xpu-asm capture; choose another folder with -o, \
         or empty it first"
    )]
    OutNotEmpty(PathBuf),
    #[error(
        "{0} holds an earlier capture; add --force to replace it, choose another folder with -o, \
         or report on it again with `xpu-asm-run collect {0}`"
    )]
    OutIsCapture(PathBuf),
    #[error("{0} exists and is not a folder; choose another folder with -o")]
    OutNotDir(PathBuf),
    /// A folder xpu-asm-run writes into that another user owns or can
    /// write (docs/limits.md, "Security").
    #[error(
        "the {what} {path} {why}: another user could replace what xpu-asm-run writes there or \
         put records of their own in it. Use a folder only you can write (-o DIR for the capture), \
         or, if it is yours, `chmod go-w {path}`"
    )]
    NotYours {
        what: &'static str,
        path: PathBuf,
        why: String,
    },
    /// The user's staging folder is not theirs.
    #[error("{0}")]
    Staging(String),
    #[error("cannot create {path}: {source}")]
    OutCreate {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}", interposer_message(.0))]
    InterposerNotFound(Vec<(PathBuf, String)>),
    #[error(
        "the interposer's path {0} holds a space or colon, which LD_PRELOAD cannot carry; \
         copy the library to a plain path and give it with --interposer"
    )]
    InterposerPath(PathBuf),
    /// Something not ours where the embedded interposer goes.
    #[error("{0}")]
    InterposerRefused(String),
    #[error(
        "cannot write the interposer xpu-asm-run carries: in the cache: {cache}; in the capture \
         folder: {capture}. Set XDG_CACHE_HOME to a folder only you can write, or give a library \
         with --interposer PATH"
    )]
    InterposerNowhere { cache: String, capture: String },
    #[error("cannot run {cmd}: {source}")]
    CannotStart { cmd: String, source: std::io::Error },
    #[error(transparent)]
    Write(#[from] CollectError),
    /// One instance per rank: the folder or the job's variables do not fit.
    #[error("{0}")]
    Job(String),
    #[error(
        "{option} {device}: this system's NEO {version} cannot emulate {device}; its ocloc \
         has: {devices}. Choose one of them, or install a NEO that has {device} (NEO 26: \
         pvc, dg2, mtl, bmg, lnl, ptl; see docs/real-stack.md)"
    )]
    NoSuchDevice {
        /// The option that named it: `--emulate`, `--port-to`, `--to`.
        option: &'static str,
        device: String,
        version: String,
        devices: String,
    },
}

impl LaunchError {
    /// Exit status of xpu-asm-run for this error: 127 (126) when the
    /// command cannot be started, as a shell does; 2 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            LaunchError::CannotStart { source, .. }
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                126
            }
            LaunchError::CannotStart { .. } => 127,
            _ => 2,
        }
    }
}

fn interposer_message(tried: &[(PathBuf, String)]) -> String {
    let mut s = format!("no interposer library found; looked for {INTERPOSER_LIB} at:\n");
    for (p, why) in tried {
        s.push_str(&format!("  {} ({why})\n", p.display()));
    }
    s.push_str(
        "give the path of a libxpu_asm_interposer.so with --interposer PATH or \
         XPU_ASM_INTERPOSER=PATH, or leave both unset: xpu-asm-run carries its own",
    );
    s
}

/// Where the interposer comes from (see [`find_interposer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A library given, or found beside the binary: absolute.
    Path(PathBuf),
    /// None of those: the one xpu-asm-run carries ([`interposer`]).
    Embedded,
}

/// Finds the interposer: `--interposer`, then `$XPU_ASM_INTERPOSER` (each
/// final when given: a wrong explicit path is an error, not a reason to
/// pick another library), then next to the executable, then `../lib` from
/// it (an install of the pair, as scripts/install.sh makes), then the one
/// the executable carries.
pub fn find_interposer(
    explicit: Option<&Path>,
    env: Option<OsString>,
    exe: Option<PathBuf>,
) -> Result<Found, LaunchError> {
    let given = explicit
        .map(|p| (p.to_path_buf(), "--interposer".to_string()))
        .or_else(|| {
            env.filter(|v| !v.is_empty())
                .map(|v| (PathBuf::from(v), format!("${INTERPOSER_ENV}")))
        });
    let candidates = match &given {
        Some(g) => vec![g.clone()],
        None => {
            let mut c = Vec::new();
            if let Some(dir) = exe.as_deref().and_then(Path::parent) {
                c.push((dir.join(INTERPOSER_LIB), "next to xpu-asm-run".to_string()));
                c.push((
                    dir.join("..").join("lib").join(INTERPOSER_LIB),
                    "../lib from xpu-asm-run".to_string(),
                ));
            }
            c
        }
    };
    for (p, _) in &candidates {
        if p.is_file() {
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            if !interposer::preloadable(&p) {
                return Err(LaunchError::InterposerPath(p));
            }
            return Ok(Found::Path(p));
        }
    }
    match given {
        Some(_) => Err(LaunchError::InterposerNotFound(candidates)),
        None => Ok(Found::Embedded),
    }
}

/// The interposer of a run, before its capture folder exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interposer {
    /// Given, found beside the binary, or the embedded one in the cache.
    Ready(PathBuf),
    /// The embedded one, to be written into the capture folder: the cache
    /// cannot hold it (why).
    ForCapture(String),
}

/// [`find_interposer`], and the embedded library placed in the user's cache
/// (`$XDG_CACHE_HOME` or `~/.cache`; see [`interposer`]) when it is the one.
/// A planted file there is an error; a cache that cannot hold it leaves the
/// capture folder ([`Interposer::into_path`]).
pub fn resolve_interposer(
    explicit: Option<&Path>,
    env: Option<OsString>,
    exe: Option<PathBuf>,
    quiet: bool,
) -> Result<Interposer, LaunchError> {
    if let Found::Path(p) = find_interposer(explicit, env, exe)? {
        return Ok(Interposer::Ready(p));
    }
    let home = interposer::home();
    let Some(cache) = interposer::cache_home(std::env::var_os("XDG_CACHE_HOME"), home.as_deref())
    else {
        return Ok(Interposer::ForCapture(
            "neither XDG_CACHE_HOME nor HOME is set".into(),
        ));
    };
    match interposer::place_in_cache(&cache, home.as_deref()) {
        Ok(placed) => Ok(Interposer::Ready(announce(placed, quiet))),
        Err(PlaceError::Refused(why)) => Err(LaunchError::InterposerRefused(why)),
        Err(PlaceError::Unusable(why)) => Ok(Interposer::ForCapture(why)),
    }
}

fn announce(placed: interposer::Placed, quiet: bool) -> PathBuf {
    if placed.written && !quiet {
        eprintln!(
            "xpu-asm-run: wrote the interposer it carries to {} (once for this version; later \
             runs load it from there)",
            placed.path.display()
        );
    }
    placed.path
}

impl Interposer {
    /// The library's path, writing the embedded one into the capture folder
    /// `out` when the cache could not hold it.
    pub fn into_path(self, out: &Path, quiet: bool) -> Result<PathBuf, LaunchError> {
        let why = match self {
            Interposer::Ready(p) => return Ok(p),
            Interposer::ForCapture(why) => why,
        };
        eprintln!(
            "xpu-asm-run: warning: the cache cannot hold the interposer ({why}); writing it \
             into the capture folder {} instead",
            out.display()
        );
        match interposer::place_in_capture(out, interposer::home().as_deref()) {
            Ok(placed) => Ok(announce(placed, quiet)),
            Err(PlaceError::Refused(m)) => Err(LaunchError::InterposerRefused(m)),
            Err(PlaceError::Unusable(capture)) => Err(LaunchError::InterposerNowhere {
                cache: why,
                capture,
            }),
        }
    }
}

/// Local time as `YYYYmmdd-HHMMSS`.
pub fn timestamp() -> String {
    // SAFETY: time(NULL) only returns the time.
    let t = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: tm is plain old data; all-zero is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals; localtime_r is thread-safe.
    unsafe { libc::localtime_r(&t, &mut tm) };
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `xpu-asm-<command basename>-<timestamp>`
pub fn default_out_name(cmd0: &OsStr, stamp: &str) -> String {
    let base = Path::new(cmd0)
        .file_name()
        .map(|b| String::from_utf8_lossy(b.as_bytes()).into_owned())
        .unwrap_or_default();
    let mut name = names::safe_component(&base, 40);
    if name.is_empty() {
        name = "cmd".into();
    }
    format!("xpu-asm-{name}-{stamp}")
}

/// Deletes the entries of an earlier capture in `d` (`--force`), leaving
/// other files alone.
pub fn clear_capture(d: &Path) -> Result<(), LaunchError> {
    for e in CAPTURE_ENTRIES {
        let p = d.join(e);
        let r = match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p),
            Ok(_) => std::fs::remove_file(&p),
            Err(_) => Ok(()),
        };
        match r {
            // Another rank of the same --force run was quicker.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            r => r.map_err(|source| LaunchError::OutCreate {
                path: p.clone(),
                source,
            })?,
        }
    }
    Ok(())
}

/// The capture folder made by [`prepare_out_dir`].
#[derive(Debug, Clone)]
pub struct OutDir {
    /// Absolute.
    pub path: PathBuf,
    /// It did not exist before: removing it leaves no trace.
    pub created: bool,
}

/// Makes the capture folder (see `--out` and `--force`), with `records/`
/// and `dumps/` in it.
pub fn prepare_out_dir(
    out: Option<&Path>,
    force: bool,
    cmd0: &OsStr,
) -> Result<OutDir, LaunchError> {
    let create = |p: &Path| {
        crate::capture::trust::make_folder(p).map_err(|source| LaunchError::OutCreate {
            path: p.to_path_buf(),
            source,
        })
    };
    let mut created = true;
    let dir = match out {
        None => {
            let base = default_out_name(cmd0, &timestamp());
            let mut dir = PathBuf::from(&base);
            let mut n = 2;
            while std::fs::symlink_metadata(&dir).is_ok() {
                dir = PathBuf::from(format!("{base}-{n}"));
                n += 1;
            }
            dir
        }
        Some(d) => {
            match std::fs::symlink_metadata(d) {
                Err(_) => {}
                Ok(_) if !d.is_dir() => return Err(LaunchError::OutNotDir(d.to_path_buf())),
                Ok(_) => {
                    created = false;
                    check_own("capture folder", d)?;
                    let empty = std::fs::read_dir(d)
                        .map(|mut r| r.next().is_none())
                        .unwrap_or(false);
                    if !empty {
                        if !is_capture(d) {
                            return Err(LaunchError::OutNotEmpty(d.to_path_buf()));
                        }
                        if !force {
                            return Err(LaunchError::OutIsCapture(d.to_path_buf()));
                        }
                        clear_capture(d)?;
                    }
                }
            }
            d.to_path_buf()
        }
    };
    create(&dir.join(xpu_asm_record::RECORDS_DIR))?;
    create(&dir.join(xpu_asm_record::DUMPS_DIR))?;
    check_capture_folders(&dir)?;
    let path = std::fs::canonicalize(&dir)
        .map_err(|source| LaunchError::OutCreate { path: dir, source })?;
    Ok(OutDir { path, created })
}

/// Refuses `dir` when it is not the user's (`capture::trust`).
pub fn check_own(what: &'static str, dir: &Path) -> Result<(), LaunchError> {
    crate::capture::trust::check_own_folder(dir).map_err(|(path, why)| LaunchError::NotYours {
        what,
        path,
        why,
    })
}

/// The capture folder and the folders in it that the processes write
/// into (made or found there): each the user's.
pub fn check_capture_folders(dir: &Path) -> Result<(), LaunchError> {
    check_own("capture folder", dir)?;
    for sub in [
        xpu_asm_record::RECORDS_DIR,
        xpu_asm_record::DUMPS_DIR,
        xpu_asm_record::MODULES_DIR,
    ] {
        let p = dir.join(sub);
        if std::fs::symlink_metadata(&p).is_ok() {
            if let Some(why) = crate::capture::trust::folder_not_own(&p) {
                return Err(LaunchError::NotYours {
                    what: "capture's folder",
                    path: p,
                    why,
                });
            }
        }
    }
    Ok(())
}

/// Before the command runs: a dump folder the user chose
/// (`IGC_DumpToCustomDir`), when it exists, must be theirs; the staging
/// folder is made and must be theirs.
pub fn check_other_folders() -> Result<(), LaunchError> {
    if let Some(d) = std::env::var_os("IGC_DumpToCustomDir").filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        if d.is_dir() {
            check_own("dump folder (IGC_DumpToCustomDir)", &d)?;
        }
    }
    crate::capture::staged::prepare().map_err(LaunchError::Staging)
}

/// The variables set for the command (on top of the inherited
/// environment): the interposer in front of any `LD_PRELOAD` the user has,
/// `XPU_ASM_OUT`, and with `emulate` NEO's no-hardware variables.
pub fn child_env(
    interposer: &Path,
    out: &Path,
    user_preload: Option<&OsStr>,
    emulate: Option<&str>,
) -> Vec<(OsString, OsString)> {
    let ours = interposer.as_os_str().as_bytes();
    let mut preload = ours.to_vec();
    if let Some(existing) = user_preload {
        // ld.so takes colons and spaces as separators; keep every entry but ours.
        for entry in existing
            .as_bytes()
            .split(|b| *b == b':' || *b == b' ')
            .filter(|e| !e.is_empty() && *e != ours)
        {
            preload.push(b':');
            preload.extend_from_slice(entry);
        }
    }
    let mut env = vec![
        (
            OsString::from("LD_PRELOAD"),
            OsStr::from_bytes(&preload).to_os_string(),
        ),
        (
            OsString::from(xpu_asm_record::OUT_ENV),
            out.as_os_str().to_os_string(),
        ),
    ];
    if let Some(dev) = emulate {
        env.extend(emulate_env(dev));
    }
    env
}

/// Variables an outer xpu-asm run's interposer set (listed in
/// `XPU_ASM_OWNED`): not the user's, so not passed on as if they were.
pub fn inherited_owned_vars() -> Vec<OsString> {
    let Some(list) = std::env::var_os(xpu_asm_record::OWNED_ENV) else {
        return Vec::new();
    };
    let mut v: Vec<OsString> = list
        .as_bytes()
        .split(|b| *b == b',')
        .filter(|s| !s.is_empty())
        .map(|s| OsStr::from_bytes(s).to_os_string())
        .collect();
    v.push(xpu_asm_record::OWNED_ENV.into());
    v
}

/// Whether the user asked IGC for its dumps (`IGC_ShaderDumpEnable` set
/// and not 0, and not set by an outer xpu-asm run).
pub fn users_dump_enable() -> bool {
    const NAME: &str = "IGC_ShaderDumpEnable";
    std::env::var_os(NAME).is_some_and(|v| v != "0")
        && !inherited_owned_vars().iter().any(|n| n == NAME)
}

// ---- signals ----------------------------------------------------------

const PHASE_IDLE: u8 = 0;
const PHASE_RUNNING: u8 = 1;
const PHASE_COLLECTING: u8 = 2;

static PHASE: AtomicU8 = AtomicU8::new(PHASE_IDLE);
static CHILD: AtomicI32 = AtomicI32::new(0);
static OUR_PGRP: AtomicI32 = AtomicI32::new(0);
/// A signal that came before the child's pid was known.
static PENDING: AtomicI32 = AtomicI32::new(0);
/// Set by a signal during collection; [`crate::collect::Options::stop`] reads it.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// si_code of signals the kernel generated, such as a terminal's Ctrl-C.
const SI_KERNEL: libc::c_int = 0x80;

const HANDLED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only atomics, getpgid and kill here: all async-signal-safe.
    match PHASE.load(Ordering::SeqCst) {
        PHASE_RUNNING => {
            let child = CHILD.load(Ordering::SeqCst);
            if child <= 0 {
                PENDING.store(sig, Ordering::SeqCst);
                return;
            }
            // SAFETY: the kernel passes a valid siginfo with SA_SIGINFO; null checked.
            let from_kernel = !info.is_null() && unsafe { (*info).si_code } == SI_KERNEL;
            // SAFETY: plain syscalls on a pid.
            let same_group = unsafe { libc::getpgid(child) } == OUR_PGRP.load(Ordering::SeqCst);
            // A terminal's Ctrl-C already reached the child (same process
            // group); anything sent to xpu-asm-run alone is passed on.
            if !(from_kernel && same_group) {
                // SAFETY: kill on the child's pid.
                unsafe { libc::kill(child, sig) };
            }
        }
        // The first signal asks collection to stop at its next check; if a
        // further one comes, that check is not coming soon enough (a huge
        // file): end now, the default way.
        PHASE_COLLECTING if STOP.swap(true, Ordering::SeqCst) => {
            // SAFETY: signal and raise are async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
        _ => {}
    }
}

/// Installs the handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT: while the
/// command runs they go to it (xpu-asm-run itself does not die); during
/// collection the first sets [`STOP`] and a further one ends xpu-asm-run. A handler (not SIG_IGN) is reset to the
/// default by exec, so the command gets normal signal dispositions.
pub fn install_signal_handlers() {
    // SAFETY: getpgrp cannot fail.
    OUR_PGRP.store(unsafe { libc::getpgrp() }, Ordering::SeqCst);
    for sig in HANDLED {
        // SAFETY: sigaction is plain old data; all-zero is a valid start.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        // SAFETY: sa is initialised; the mask set is a field of it.
        unsafe {
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// From now on a signal stops collection instead of going to the child.
pub fn enter_collecting() {
    CHILD.store(0, Ordering::SeqCst);
    PHASE.store(PHASE_COLLECTING, Ordering::SeqCst);
}

/// The descriptor limit the user gave (soft, hard), when xpu-asm-run
/// raised its own soft limit above it: the command gets it back.
static USERS_FD_LIMIT: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();

/// Raises xpu-asm-run's own descriptor limit to the hard limit (a
/// collection reads many files at once), remembering the user's for the
/// command: `ulimit -n 16 ; xpu-asm-run -- cmd` runs cmd at 16.
pub fn raise_fd_limit() {
    // SAFETY: plain data filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit into a live struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 || r.rlim_cur >= r.rlim_max {
        return;
    }
    let raised = libc::rlimit {
        rlim_cur: r.rlim_max,
        rlim_max: r.rlim_max,
    };
    // SAFETY: setrlimit with a valid struct; raising the soft limit to the
    // hard one is always allowed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        let _ = USERS_FD_LIMIT.set((r.rlim_cur, r.rlim_max));
    }
}

/// Runs `cmd` with `env` added (and `remove` removed) and waits for it.
/// Returns its pid and how it ended.
pub fn spawn_and_wait(
    cmd: &[OsString],
    env: &[(OsString, OsString)],
    remove: &[OsString],
) -> Result<(u32, Exit), LaunchError> {
    let Some((program, args)) = cmd.split_first() else {
        return Err(LaunchError::CannotStart {
            cmd: String::new(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "empty command"),
        });
    };
    let mut c = std::process::Command::new(program);
    c.args(args);
    for k in remove {
        c.env_remove(k);
    }
    c.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(&(soft, hard)) = USERS_FD_LIMIT.get() {
        use std::os::unix::process::CommandExt;
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: setrlimit is async-signal-safe and touches no memory of
        // the parent's; it runs in the child between fork and exec.
        unsafe {
            c.pre_exec(move || {
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
                Ok(())
            });
        }
    }
    PHASE.store(PHASE_RUNNING, Ordering::SeqCst);
    let mut child = c.spawn().map_err(|source| {
        PHASE.store(PHASE_IDLE, Ordering::SeqCst);
        LaunchError::CannotStart {
            cmd: String::from_utf8_lossy(program.as_bytes()).into_owned(),
            source: if source.kind() == std::io::ErrorKind::NotFound {
                std::io::Error::new(source.kind(), "command not found")
            } else {
                source
            },
        }
    })?;
    let pid = child.id();
    CHILD.store(pid as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        // SAFETY: kill on the child's pid.
        unsafe { libc::kill(pid as i32, pending) };
    }
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(LaunchError::CannotStart {
                    cmd: String::from_utf8_lossy(program.as_bytes()).into_owned(),
                    source: e,
                })
            }
        }
    };
    CHILD.store(0, Ordering::SeqCst);
    let exit = match (status.code(), status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        (None, None) => Exit::Code(-1),
    };
    Ok((pid, exit))
}

/// Why the dynamic loader will not preload the interposer into `program`
/// (found through `PATH` like the shell would), or `None` when it will or
/// when that cannot be told (a script, a missing file: the run says more).
pub fn untraceable(program: &OsStr) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = resolve_in_path(program)?;
    let meta = std::fs::metadata(&path).ok()?;
    let shown = path.display();
    // SAFETY: geteuid/getegid have no preconditions.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if (meta.mode() & 0o4000 != 0 && meta.uid() != euid)
        || (meta.mode() & 0o2000 != 0 && meta.gid() != egid)
    {
        return Some(format!(
            "{shown} is setuid/setgid: the dynamic loader ignores LD_PRELOAD for it, so its own \
             Level Zero calls are not traced (programs it starts may be)"
        ));
    }
    let mut head = vec![0u8; 64];
    let mut f = std::fs::File::open(&path).ok()?;
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    if head[..4] != *b"\x7fELF" || head[4] != 2 || head[5] != 1 {
        return None; // a script, or not a 64-bit little-endian ELF
    }
    let u16_at = |o: usize| u16::from_le_bytes([head[o], head[o + 1]]) as u64;
    let phoff = u64::from_le_bytes(head[0x20..0x28].try_into().ok()?);
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    if phentsize < 4 || phnum == 0 {
        return None;
    }
    let mut ph = vec![0u8; (phentsize * phnum) as usize];
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(phoff)).ok()?;
    std::io::Read::read_exact(&mut f, &mut ph).ok()?;
    const PT_INTERP: u32 = 3;
    let has_interp = ph
        .chunks(phentsize as usize)
        .any(|e| e.len() >= 4 && u32::from_le_bytes([e[0], e[1], e[2], e[3]]) == PT_INTERP);
    (!has_interp).then(|| {
        format!(
            "{shown} is statically linked: LD_PRELOAD cannot load the interposer into it, so its \
             own Level Zero calls are not traced (programs it starts may be)"
        )
    })
}

/// `program` as the shell would find it: as given when it holds a `/`, else
/// the first executable of that name in `PATH`.
fn resolve_in_path(program: &OsStr) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::emulate::emulate_env_for;

    #[test]
    fn preload_goes_in_front_and_keeps_the_users_list() {
        let env = child_env(
            Path::new("/x/libxpu_asm_interposer.so"),
            Path::new("/out"),
            Some(OsStr::new("liba.so /x/libxpu_asm_interposer.so:libb.so")),
            None,
        );
        assert_eq!(env[0].0, "LD_PRELOAD");
        assert_eq!(env[0].1, "/x/libxpu_asm_interposer.so:liba.so:libb.so");
        assert_eq!(env[1], ("XPU_ASM_OUT".into(), "/out".into()));
        assert_eq!(env.len(), 2);
        let env = child_env(Path::new("/i.so"), Path::new("/o"), None, Some("dg2"));
        assert_eq!(env[0].1, "/i.so");
        assert!(env.contains(&("ProductFamilyOverride".into(), "dg2".into())));
        assert!(env.contains(&("SetCommandStreamReceiver".into(), "1".into())));
        assert!(env.contains(&("EnableTimestampWaitForQueues".into(), "0".into())));
        assert!(!env.iter().any(|(k, _)| k == "AUBDumpCaptureFileName"));
        // NEO 22.43 alone writes an AUB stream unless told to write none.
        let old = emulate_env_for("pvc", true);
        assert!(old.contains(&("AUBDumpSubCaptureMode".into(), "1".into())));
        assert!(!emulate_env_for("pvc", false)
            .iter()
            .any(|(k, _)| k.to_string_lossy().starts_with("AUBDump")));
        assert!(env.contains(&("UseAubStream".into(), "0".into())));
        assert!(env.contains(&("UseExternalAllocatorForSshAndDsh".into(), "0".into())));
        assert!(env.contains(&("ForceDeviceId".into(), "4f80".into())));
        let env = child_env(Path::new("/i.so"), Path::new("/o"), None, Some("pvc"));
        assert!(!env.iter().any(|(k, _)| k == "ForceDeviceId"));
        let env = child_env(Path::new("/i.so"), Path::new("/o"), None, Some("lnl"));
        assert!(env.contains(&("ProductFamilyOverride".into(), "lnl".into())));
        assert!(env.contains(&("ForceDeviceId".into(), "64a0".into())));
    }

    #[test]
    fn the_interposer_search_order() {
        let d = std::env::temp_dir().join(format!("xpu-asm-search-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for sub in ["bin", "lib", "other"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let exe = Some(d.join("bin").join("xpu-asm-run"));
        let other = d.join("other").join(INTERPOSER_LIB);
        std::fs::write(&other, b"").unwrap();
        // Nothing beside the binary: the one it carries.
        assert_eq!(
            find_interposer(None, None, exe.clone()).unwrap(),
            Found::Embedded
        );
        assert_eq!(
            find_interposer(None, Some("".into()), None).unwrap(),
            Found::Embedded
        );
        // ../lib, then beside it, win over the one it carries.
        let lib = d.join("lib").join(INTERPOSER_LIB);
        std::fs::write(&lib, b"").unwrap();
        let found = find_interposer(None, None, exe.clone()).unwrap();
        assert_eq!(found, Found::Path(std::fs::canonicalize(&lib).unwrap()));
        let beside = d.join("bin").join(INTERPOSER_LIB);
        std::fs::write(&beside, b"").unwrap();
        let found = find_interposer(None, None, exe.clone()).unwrap();
        assert_eq!(found, Found::Path(beside.clone()));
        // The variable, then --interposer, win over both; each is final.
        let found = find_interposer(None, Some(other.clone().into()), exe.clone()).unwrap();
        assert_eq!(found, Found::Path(other.clone()));
        let found = find_interposer(Some(&other), Some(beside.into()), exe.clone()).unwrap();
        assert_eq!(found, Found::Path(other.clone()));
        let missing = d.join("missing.so");
        let e = find_interposer(Some(&missing), None, exe.clone()).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "no interposer library found; looked for {INTERPOSER_LIB} at:\n  {} (--interposer)\n",
                missing.display()
            )),
            "{e}"
        );
        let e = find_interposer(None, Some(missing.into()), exe).unwrap_err();
        assert!(e.to_string().contains("($XPU_ASM_INTERPOSER)"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn default_out_names_are_safe() {
        assert_eq!(
            default_out_name(OsStr::new("/usr/bin/python3"), "20260101-000000"),
            "xpu-asm-python3-20260101-000000"
        );
        assert_eq!(
            default_out_name(OsStr::new("../we ird/.."), "t"),
            "xpu-asm-cmd-t"
        );
        assert_eq!(timestamp().len(), 15);
    }

    #[test]
    fn a_dynamic_program_is_traceable() {
        // The statically linked and setuid cases run end to end in
        // tests/tests/processes.rs; here: no false warning for the usual case.
        assert_eq!(untraceable(OsStr::new("true")), None);
        assert_eq!(untraceable(OsStr::new("/bin/sh")), None);
        // Not found or not ELF: nothing to say here (the run reports it).
        assert_eq!(untraceable(OsStr::new("/no/such/program")), None);
    }
}
