//! Configuration, read once at load time, and the environment set for the
//! driver and IGC before the program's own code runs.
//!
//! Only `libc::getenv`/`setenv` are used here: this runs in the library
//! constructor, before `main`, where `std::env` and I/O have no place.

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;
use xpu_asm_record::times::{Policy, TIME_ENV};
use xpu_asm_record::{
    ranks, DUMPS_DIR, DUMPS_ENV, DUMP_ENV, DUMP_FILTER, DUMP_FILTER_ENV, IGC1_DUMP_ENV, IGC_ENV,
    ISA_ENV, NOTIFY_ENV, NOTIFY_KEY_ENV, OUT_ENV, OWNED_ENV, STAGING_DEFAULT, STAGING_ENV,
};

/// Test only: `CALL:ERRNO[:N]` faults injected into the recorder's own
/// system calls (`sys::set_faults`).
const FAULTS_ENV: &str = "XPU_ASM_FAULTS";

pub struct Config {
    /// Absolute output folder (`XPU_ASM_OUT`).
    pub out: String,
    /// Host name, reduced to characters safe in a file name.
    pub host: String,
    /// IGC's dump folder as IGC will use it: relative to `out` when inside it.
    pub dump_dir: String,
    /// Absolute dump folder, created when Level Zero is first seen.
    pub dump_dir_abs: String,
    /// `(name, value, set_by_user)` for each variable of [`DUMP_ENV`] that
    /// is set.
    pub env: Vec<(String, String, bool)>,
    /// This process's token in its file names (see `xpu_asm_record::process_stem`).
    pub token: String,
    /// Its rank, from the launcher's variables.
    pub rank: Option<ranks::Rank>,
    /// `XPU_ASM_ISA=binary`: ISA from module binaries only, so the IGC dump
    /// and cache variables are left as the user has them (and those a
    /// parent process of this run set are removed).
    pub isa_binary: bool,
    /// A rank other than 0 of a job: IGC dumps nothing here, rank 0's
    /// dumps serve it (`dumps_by` 0; see [`dumps_by`]); `isa_binary` then.
    pub dumps_by: Option<u32>,
    /// IGC 1's light dumps ([`IGC_ENV`]): IGC writes only the `.asm` and
    /// `.dat` files, and the interposer each SPIR-V module's `.spv`.
    pub igc1_light: bool,
    /// The staging folder ([`STAGING_ENV`]): node-local memory for what
    /// cannot be put into the capture folder; `None` when it is not a
    /// folder this process can use.
    pub staging: Option<String>,
    /// The abstract socket `xpu-asm-run` listens on for notices
    /// ([`NOTIFY_ENV`]), and the key a notice carries ([`NOTIFY_KEY_ENV`]).
    pub notify: Option<(String, String)>,
    /// Which launches are timed on the device (`XPU_ASM_TIME`, which
    /// `xpu-asm-run --time` sets); `None`: none, and no driver call more.
    pub time: Option<Policy>,
}

/// Whether launches are timed (`Config::time` is set): one relaxed load,
/// for the paths that hand out the timed hooks.
static TIMING: AtomicBool = AtomicBool::new(false);

/// Whether this process times launches on the device.
#[inline(always)]
pub fn timing() -> bool {
    TIMING.load(Ordering::Relaxed)
}

static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// 0: not read yet; 1: off; 2: on. A copy of `CONFIG`'s answer that the
/// launch path can read with one relaxed load.
static ENABLED: AtomicU8 = AtomicU8::new(0);

/// The configuration, or `None` when `XPU_ASM_OUT` is unset: the interposer
/// then only passes calls through.
pub fn get() -> Option<&'static Config> {
    let c = CONFIG.get_or_init(load).as_ref();
    ENABLED.store(if c.is_some() { 2 } else { 1 }, Ordering::Relaxed);
    c
}

/// Whether recording is on in this process, for the launch path: one relaxed
/// load. The constructor has read the configuration by the time the program
/// runs; a hook called earlier than that (from another library's
/// constructor) only forwards.
#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed) == 2
}

fn getenv(name: &str) -> Option<String> {
    let c = CString::new(name).ok()?;
    // SAFETY: `c` is a valid C string; getenv returns NULL or a C string that
    // stays valid until the next setenv of that name, and we copy it at once.
    let p = unsafe { libc::getenv(c.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null result of getenv is a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn getcwd() -> Option<String> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: buf is writable for its length; getcwd NUL-terminates on success.
    let p = unsafe { libc::getcwd(buf.as_mut_ptr().cast(), buf.len()) };
    if p.is_null() {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0)?;
    String::from_utf8(buf[..end].to_vec()).ok()
}

fn unsetenv(name: &str) {
    if let Ok(n) = CString::new(name) {
        // SAFETY: a valid C string; this runs in the constructor, before
        // the program starts threads of its own.
        unsafe { libc::unsetenv(n.as_ptr()) };
    }
}

fn setenv(name: &str, value: &str) {
    if let (Ok(n), Ok(v)) = (CString::new(name), CString::new(value)) {
        // SAFETY: both are valid C strings; this runs in the constructor,
        // before the program starts threads of its own.
        unsafe { libc::setenv(n.as_ptr(), v.as_ptr(), 1) };
    }
}

/// 8 random hex digits, fresh per process: two processes with the same host
/// name and pid (PID namespaces, containers) still name their files apart.
pub fn new_token() -> String {
    let mut b = [0u8; 4];
    // SAFETY: b is writable for its length; getrandom fills it or fails.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), libc::GRND_NONBLOCK) };
    if n != b.len() as isize {
        // No entropy yet (early boot): the clock's nanoseconds still differ
        // between two processes that start apart.
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a live timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        b = (ts.tv_nsec as u32 ^ (ts.tv_sec as u32).rotate_left(16)).to_le_bytes();
    }
    xpu_asm_record::hex(&b)
}

fn load() -> Option<Config> {
    let out = getenv(OUT_ENV).filter(|s| !s.is_empty())?;
    // A relative folder stays the same folder when the program changes
    // its working directory.
    let out = match out.starts_with('/') {
        true => out,
        false => match getcwd() {
            Some(d) => format!("{}/{out}", d.trim_end_matches('/')),
            None => out,
        },
    };
    crate::sys::remember_stderr();
    if let Some(spec) = getenv(FAULTS_ENV) {
        for bad in crate::sys::set_faults(&spec) {
            crate::sys::warn(&format!("{FAULTS_ENV}: cannot read {bad:?}; ignored"));
        }
    }
    let host = xpu_asm_record::host_name();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    // Variables a parent process of this run set are ours to replace; any
    // other value already there was set by the user and is kept.
    let owned_before: Vec<String> = getenv(OWNED_ENV)
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let dumps_prefix = format!("{}/{DUMPS_DIR}/", out.trim_end_matches('/'));
    // After exec the process is the same (same pid): it keeps its token, so
    // its dump folder stays the one it had before exec.
    let token = owned_before
        .iter()
        .any(|o| o == "IGC_DumpToCustomDir")
        .then(|| getenv("IGC_DumpToCustomDir"))
        .flatten()
        .and_then(|d| {
            let stem = d.strip_prefix(&dumps_prefix)?;
            let tok = stem.strip_prefix(&format!("{host}-{pid}-"))?;
            (tok.len() == 8 && tok.bytes().all(|b| b.is_ascii_hexdigit())).then(|| tok.to_string())
        })
        .unwrap_or_else(new_token);
    let ours_rel = format!(
        "{DUMPS_DIR}/{}",
        xpu_asm_record::process_stem(&host, pid, &token)
    );
    let ours_abs = format!("{}/{ours_rel}", out.trim_end_matches('/'));
    let rank = ranks::from_env(getenv);
    let dumps_by = dumps_by(rank.as_ref(), &owned_before);
    let isa_binary = getenv(ISA_ENV).is_some_and(|v| v == "binary") || dumps_by.is_some();
    let (env, igc1_light) = set_dump_env(&owned_before, &ours_abs, isa_binary);
    let dump_abs = env
        .iter()
        .find(|(n, _, _)| n == "IGC_DumpToCustomDir")
        .map(|(_, v, _)| v.clone())
        .unwrap_or(ours_abs);
    let prefix = format!("{}/", out.trim_end_matches('/'));
    let dump_dir = match dump_abs.strip_prefix(&prefix) {
        Some(rel) if rel.starts_with(DUMPS_DIR) => rel.to_string(),
        _ => dump_abs.clone(),
    };
    let time = time_policy();
    Some(Config {
        out,
        host,
        dump_dir,
        dump_dir_abs: dump_abs,
        env,
        token,
        rank,
        dumps_by,
        isa_binary,
        igc1_light,
        staging: staging_folder(),
        notify: getenv(NOTIFY_ENV)
            .filter(|n| !n.is_empty())
            .zip(getenv(NOTIFY_KEY_ENV).filter(|k| !k.is_empty())),
        time,
    })
}

/// The timing policy `XPU_ASM_TIME` asks for; a value that is none is
/// said once and times nothing.
fn time_policy() -> Option<Policy> {
    let v = getenv(TIME_ENV).filter(|v| !v.is_empty())?;
    let p = Policy::from_env(&v);
    match p {
        Some(_) => TIMING.store(true, Ordering::Relaxed),
        None => crate::sys::warn(&format!(
            "{TIME_ENV}={v:?} is not a timing policy (all, sample, sample:FIRST:EVERY); nothing is timed"
        )),
    }
    p
}

/// The user's staging folder, `<base>/xpu-asm-<uid>`
/// (`xpu_asm_record::trust::user_staging_folder`) in [`STAGING_ENV`] or
/// [`STAGING_DEFAULT`]; `None` when that filesystem is not a folder this
/// process can use (it is used only when something cannot be put into the
/// capture folder). Whether the folder is the user's is checked when the
/// record is made (`output::staging`).
fn staging_folder() -> Option<String> {
    let dir = getenv(STAGING_ENV).filter(|d| !d.is_empty());
    let dir = dir.unwrap_or_else(|| STAGING_DEFAULT.to_string());
    let c = CString::new(dir.as_str()).ok()?;
    // SAFETY: a valid C string; access only reads the file's metadata.
    let usable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    usable.then(|| xpu_asm_record::trust::user_staging_folder(&dir, uid))
}

/// Which rank's IGC dumps serve this process: `Some(0)` for a rank other
/// than 0 of a parallel job. A job's ranks compile the same modules; IGC
/// dumping each in every rank made a 512-rank job write 512 copies of
/// every `.asm` into the shared folder (a metadata storm on Lustre or
/// GPFS). Rank 0 dumps; the others save only their module binaries (once
/// per content), and the collection gives a rank's kernel rank 0's dump
/// when its module binary is byte for byte rank 0's (the same code), its
/// own binary's disassembly otherwise. `None` outside a job, for rank 0,
/// and when the user set `IGC_ShaderDumpEnable` (every rank then dumps as
/// told).
pub fn dumps_by(rank: Option<&ranks::Rank>, owned_before: &[String]) -> Option<u32> {
    let users_enable = getenv("IGC_ShaderDumpEnable").is_some()
        && !owned_before.iter().any(|o| o == "IGC_ShaderDumpEnable");
    rank.filter(|r| r.rank != 0 && !users_enable).map(|_| 0)
}

/// Sets each variable of [`DUMP_ENV`] that the user did not set (none with
/// `--isa binary`), lists them in [`OWNED_ENV`] for child processes, and
/// returns what the record says of each: `(name, value, set_by_user)`, and
/// whether IGC 1 makes light dumps ([`light_dumps`]). `ours_abs` is this
/// process's dump folder.
fn set_dump_env(
    owned_before: &[String],
    ours_abs: &str,
    isa_binary: bool,
) -> (Vec<(String, String, bool)>, bool) {
    // `--keep all`: IGC writes every dump file, unfiltered.
    let all_dumps = getenv(DUMPS_ENV).is_some_and(|v| v == "all");
    let light = light_dumps(owned_before, isa_binary, all_dumps);
    let mut owned = Vec::new();
    let mut env = Vec::new();
    for (name, default) in DUMP_ENV {
        let mine = owned_before.iter().any(|o| o == name);
        let current = getenv(name);
        if name == DUMP_FILTER_ENV && !isa_binary {
            set_filter(mine, current, all_dumps, &mut owned, &mut env);
            continue;
        }
        if name == "IGC_ShaderDumpEnable" && light {
            // Replaced by IGC 1's light variables below; one a parent
            // process of this run set goes.
            if mine {
                unsetenv(name);
            }
            continue;
        }
        let ours = if name == "IGC_DumpToCustomDir" {
            ours_abs
        } else {
            default
        };
        set_one(name, ours, mine, current, isa_binary, &mut owned, &mut env);
    }
    for (name, ours) in IGC1_DUMP_ENV {
        let mine = owned_before.iter().any(|o| o == name);
        if light {
            set_one(name, ours, mine, getenv(name), false, &mut owned, &mut env);
        } else if mine {
            // A parent process of this run had light dumps; this one not.
            unsetenv(name);
        }
    }
    setenv(OWNED_ENV, &owned.join(","));
    (env, light)
}

/// Whether IGC 1 gets [`IGC1_DUMP_ENV`] in place of
/// `IGC_ShaderDumpEnable`: `xpu-asm-run` said NEO loads IGC 1
/// ([`IGC_ENV`]), dumps are wanted, not all of them (`--keep all`), and the
/// user did not set `IGC_ShaderDumpEnable` (their value, either way, keeps
/// IGC's full dumps or none).
fn light_dumps(owned_before: &[String], isa_binary: bool, all_dumps: bool) -> bool {
    let users_enable = getenv("IGC_ShaderDumpEnable").is_some()
        && !owned_before.iter().any(|o| o == "IGC_ShaderDumpEnable");
    !isa_binary && !all_dumps && !users_enable && getenv(IGC_ENV).is_some_and(|v| v == "1")
}

/// One variable: the user's value kept, or ours set (none with `--isa
/// binary`, which leaves IGC's and the caches' settings as the user has
/// them: a cache hit still has its binary).
fn set_one<'a>(
    name: &'a str,
    ours: &str,
    mine: bool,
    current: Option<String>,
    isa_binary: bool,
    owned: &mut Vec<&'a str>,
    env: &mut Vec<(String, String, bool)>,
) {
    match current {
        Some(v) if !mine => env.push((name.to_string(), v, true)),
        // A parent process of this run set it (for its own dumps).
        Some(_) if isa_binary => unsetenv(name),
        _ if isa_binary => {}
        _ => {
            setenv(name, ours);
            owned.push(name);
            env.push((name.to_string(), ours.to_string(), false));
        }
    }
}

/// IGC's dump filter: a filter of the user's stays one, next to ours (IGC
/// writes what either matches); none of ours with `--keep all`.
fn set_filter(
    mine: bool,
    current: Option<String>,
    all_dumps: bool,
    owned: &mut Vec<&'static str>,
    env: &mut Vec<(String, String, bool)>,
) {
    let name = DUMP_FILTER_ENV;
    let user = current.and_then(|v| if mine { users_filter(&v) } else { Some(v) });
    match user {
        Some(u) => {
            setenv(name, &format!("{u}|{DUMP_FILTER}"));
            owned.push(name);
            env.push((name.to_string(), u, true));
        }
        None if all_dumps => {}
        None => {
            setenv(name, DUMP_FILTER);
            owned.push(name);
            env.push((name.to_string(), DUMP_FILTER.to_string(), false));
        }
    }
}

/// The user's part of a filter a parent process of this run set: `None`
/// when it is ours alone.
fn users_filter(value: &str) -> Option<String> {
    if value == DUMP_FILTER {
        return None;
    }
    let user = value
        .strip_suffix(DUMP_FILTER)
        .and_then(|v| v.strip_suffix('|'))
        .unwrap_or(value);
    Some(user.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parents_filter_gives_back_the_users_part() {
        assert_eq!(users_filter(DUMP_FILTER), None);
        assert_eq!(
            users_filter(&format!(r"_optimized\.ll$|{DUMP_FILTER}")).as_deref(),
            Some(r"_optimized\.ll$")
        );
        // Changed since: all of it is the user's.
        assert_eq!(users_filter(r"\.ll$").as_deref(), Some(r"\.ll$"));
        assert_eq!(
            users_filter(&format!("|{DUMP_FILTER}")).as_deref(),
            Some("")
        );
    }
}
