//! Compiling modules again for their source lines (see
//! [`crate::capture::rebuilt`]): `xpu-asm-run` runs itself as a child
//! (`xpu-asm-run __rebuild FOLDER`, hidden) with the environment the
//! program had, minus the interposer, plus `IGC_ShaderDumpEnable=1` and
//! `IGC_DumpToCustomDir=FOLDER`; the child compiles each module through
//! the real Level Zero driver ([`super::ze`]), as the program did, so
//! that NEO adds its own options exactly as then. A child of its own:
//! IGC reads its settings once per process, and a driver that fails or
//! aborts takes only the child with it.

use super::emulate::emulate_env;
use super::launch::inherited_owned_vars;
use super::ze::{Target, Ze};
use crate::capture::rebuilt::{folder_name, write_marker, Marker, RebuiltModule, BUILT, MARKER};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The hidden subcommand the child runs.
pub const SUBCOMMAND: &str = "__rebuild";
/// A compile that takes longer than this is stopped.
const TIME_LIMIT: Duration = Duration::from_secs(600);
/// What the child prints for each module: `<key> <status>`.
const STATUS_PREFIX: &str = "xpu-asm-rebuild ";

/// How to compile again: `exe` (this xpu-asm-run) in the capture `dir`,
/// with NEO's no-hardware variables of `emulate` when the run had them.
pub struct Rebuild<'a> {
    pub exe: &'a Path,
    pub dir: &'a Path,
    pub emulate: Option<&'a str>,
}

impl Rebuild<'_> {
    /// Compiles `modules` (distinct SPIR-V, one device) in a new rebuild
    /// folder: its name and marker, each module with its status; or why
    /// nothing could be compiled (the folder then removed).
    pub fn run(
        &self,
        mut modules: Vec<RebuiltModule>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<(String, Marker), String> {
        let keys: Vec<&str> = modules.iter().map(|m| m.key.as_str()).collect();
        let name = folder_name(&keys);
        let folder = self.dir.join(xpu_asm_record::DUMPS_DIR).join(&name);
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder)
            .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        // IGC takes the folder as given: absolute, whatever the child's
        // working folder.
        let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
        let mut marker = Marker {
            schema: 1,
            modules: modules.clone(),
            seconds: None,
        };
        write_marker(&folder, &marker).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let ran = self.child(&folder, stop);
        let seconds = started.elapsed().as_secs_f64();
        let statuses = match ran {
            Ok(s) if !s.is_empty() => s,
            Ok(_) => {
                let _ = std::fs::remove_dir_all(&folder);
                return Err("the compile said nothing about its modules".into());
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&folder);
                return Err(e);
            }
        };
        for m in &mut modules {
            m.status = Some(statuses.get(&m.key).cloned().unwrap_or_else(|| {
                "the compile ended before this module (see the other modules)".to_string()
            }));
        }
        keep_only_read_files(&folder);
        marker.modules = modules;
        marker.seconds = Some(seconds);
        write_marker(&folder, &marker).map_err(|e| e.to_string())?;
        Ok((name, marker))
    }

    /// Runs the child on `folder` and waits for it: each module's status
    /// by key, or why it failed as a whole.
    fn child(
        &self,
        folder: &Path,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<BTreeMap<String, String>, String> {
        let mut cmd = std::process::Command::new(self.exe);
        cmd.arg(SUBCOMMAND)
            .arg(folder)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let (set, unset) = child_env(folder, self.emulate);
        for k in &unset {
            cmd.env_remove(k);
        }
        cmd.envs(set);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        let out = drain(child.stdout.take());
        let err = drain(child.stderr.take());
        let status = wait(&mut child, stop);
        let (out, err) = (joined(out), joined(err));
        let statuses: BTreeMap<String, String> = out
            .lines()
            .filter_map(|l| l.strip_prefix(STATUS_PREFIX))
            .filter_map(|l| l.split_once(' '))
            .map(|(k, s)| (k.to_string(), s.to_string()))
            .collect();
        match status {
            Ok(s) if s.success() => Ok(statuses),
            Ok(s) => Err(failure(&s, &err)),
            Err(why) => Err(why),
        }
    }
}

/// What the child's end says: its last words on stderr, or the signal.
fn failure(status: &std::process::ExitStatus, err: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let said: Vec<&str> = err
        .lines()
        .map(|l| l.strip_prefix("xpu-asm-run: ").unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = said[said.len().saturating_sub(3)..].join(" / ");
    match (status.signal(), tail.is_empty()) {
        (Some(sig), _) => format!(
            "the compile was killed by signal {sig} ({}){}",
            crate::capture::run::signal_name(sig),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        ),
        (None, false) => tail,
        (None, true) => format!("the compile ended with {status}"),
    }
}

/// Waits for `child`, killing it when told to stop or past the limit.
fn wait(
    child: &mut std::process::Child,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<std::process::ExitStatus, String> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(s),
            Ok(None) => {}
            Err(e) => return Err(format!("cannot wait for the compile: {e}")),
        }
        let why = if stop() {
            Some("stopped (interrupted)".to_string())
        } else if started.elapsed() > TIME_LIMIT {
            Some(format!(
                "stopped after {} s, the time limit",
                TIME_LIMIT.as_secs()
            ))
        } else {
            None
        };
        if let Some(why) = why {
            let _ = child.kill();
            let _ = child.wait();
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A pipe read to its end on a thread of its own (a child writing much
/// to a pipe nobody reads would block).
fn drain<R: Read + Send + 'static>(r: Option<R>) -> Option<std::thread::JoinHandle<String>> {
    let mut r = r?;
    std::thread::Builder::new()
        .spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            String::from_utf8_lossy(&b).into_owned()
        })
        .ok()
}

fn joined(h: Option<std::thread::JoinHandle<String>>) -> String {
    h.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// The child's variables: set (NEO's no-hardware ones when the run had
/// them, IGC's full dumps into `folder`, no compiler caches) and removed
/// (the interposer's, and what an outer run's interposer set).
fn child_env(folder: &Path, emulate: Option<&str>) -> (Vec<(OsString, OsString)>, Vec<OsString>) {
    let mut unset = inherited_owned_vars();
    for v in [
        xpu_asm_record::OUT_ENV,
        xpu_asm_record::IGC_ENV,
        xpu_asm_record::ISA_ENV,
        xpu_asm_record::DUMPS_ENV,
    ] {
        unset.push(v.into());
    }
    let mut set: Vec<(OsString, OsString)> = emulate.map(emulate_env).unwrap_or_default();
    match without_interposer(std::env::var_os("LD_PRELOAD")) {
        Some(p) => set.push(("LD_PRELOAD".into(), p)),
        None => unset.push("LD_PRELOAD".into()),
    }
    for (k, v) in [
        ("IGC_ShaderDumpEnable", "1"),
        ("NEO_CACHE_PERSISTENT", "0"),
        ("l0_cache_dir", "/dev/null"),
    ] {
        set.push((k.into(), v.into()));
    }
    set.push(("IGC_DumpToCustomDir".into(), folder.as_os_str().to_owned()));
    (set, unset)
}

/// `LD_PRELOAD` without the interposer; `None` when nothing is left.
fn without_interposer(preload: Option<OsString>) -> Option<OsString> {
    let p = preload?;
    let kept: Vec<&[u8]> = p
        .as_bytes()
        .split(|b| *b == b':' || *b == b' ')
        .filter(|e| !e.is_empty())
        .filter(|e| {
            Path::new(std::ffi::OsStr::from_bytes(e)).file_name()
                != Some(super::interposer::FILE_NAME.as_ref())
        })
        .collect();
    (!kept.is_empty()).then(|| std::ffi::OsStr::from_bytes(&kept.join(&b':')).to_owned())
}

/// Removes from a rebuild folder what the collector never reads: all but
/// the `.asm`, `.dat` and `.spv` files and the marker.
fn keep_only_read_files(folder: &Path) {
    let Ok(rd) = std::fs::read_dir(folder) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let read = [".asm", ".dat", ".spv"].iter().any(|x| name.ends_with(x)) || name == MARKER;
        if !read && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `xpu-asm-run __rebuild FOLDER`: compiles each module its marker names
/// and prints `xpu-asm-rebuild <key> <status>` for each; exit status 0,
/// or 2 (and why, on stderr) when nothing can be compiled here.
pub fn child_main(folder: &Path) -> i32 {
    let marker: Marker = match std::fs::read(folder.join(MARKER))
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(m) => m,
        Err(e) => {
            eprintln!("xpu-asm-run: {}: {e}", folder.join(MARKER).display());
            return 2;
        }
    };
    let dir: PathBuf = folder
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let ze = match Ze::open() {
        Ok(z) => z,
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            return 2;
        }
    };
    let mut targets: BTreeMap<Option<u32>, Result<Target, String>> = BTreeMap::new();
    for m in &marker.modules {
        let target = targets
            .entry(m.device_id)
            .or_insert_with(|| ze.target(m.device_id));
        let status = match target {
            Ok(t) => build_one(t, &dir, m),
            Err(e) => e.clone(),
        };
        // A closed stdout (the parent gone) is no reason to panic.
        let line = format!("{STATUS_PREFIX}{} {}\n", m.key, status.replace('\n', " / "));
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes());
    }
    0
}

/// Compiles one module: [`BUILT`], or why not.
fn build_one(t: &Target, dir: &Path, m: &RebuiltModule) -> String {
    let path = dir.join(&m.spirv);
    let spirv = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return format!("cannot read {}: {e}", m.spirv),
    };
    let sha = {
        use sha2::Digest;
        xpu_asm_record::hex(&sha2::Sha256::digest(&spirv))
    };
    if !sha.eq_ignore_ascii_case(&m.sha256) {
        return format!(
            "{} is not the module's SPIR-V (its SHA-256 differs)",
            m.spirv
        );
    }
    match t.build(&spirv, &m.build_flags) {
        Ok(()) => BUILT.to_string(),
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interposer_leaves_the_preload_list() {
        let w = |s: &str| without_interposer(Some(s.into())).map(|o| o.into_string().unwrap());
        assert_eq!(w("/c/libxpu_asm_interposer.so"), None);
        assert_eq!(
            w("liba.so /c/libxpu_asm_interposer.so:/x/libb.so"),
            Some("liba.so:/x/libb.so".into())
        );
        assert_eq!(without_interposer(None), None);
        let (set, unset) = child_env(Path::new("/cap/dumps/rebuild-1"), Some("pvc"));
        let get = |k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("IGC_ShaderDumpEnable"), Some("1".into()));
        assert_eq!(
            get("IGC_DumpToCustomDir"),
            Some("/cap/dumps/rebuild-1".into())
        );
        assert_eq!(get("ProductFamilyOverride"), Some("pvc".into()));
        assert!(unset.iter().any(|k| k == xpu_asm_record::OUT_ENV));
        let (set, _) = child_env(Path::new("/f"), None);
        assert_eq!(
            set.iter()
                .find(|(n, _)| n == "ProductFamilyOverride")
                .map(|(_, v)| v.clone()),
            None
        );
    }
}
