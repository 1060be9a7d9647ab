//! Which IGCs are installed, and where: the folders the dynamic loader
//! searches (`/etc/ld.so.conf`), NEO's run path, the IGA each IGC comes
//! with, and what to install when none is there.

use std::ffi::c_void;
use std::path::{Path, PathBuf};

/// The variable that names IGA's library in place of the default.
pub const ENV: &str = "XPU_ASM_IGA";

/// An IGC: its compiler library, the IGA that comes with it, and the
/// packages that ship that IGA.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Igc {
    pub(super) major: u32,
    pub(super) library: &'static str,
    pub(super) iga: &'static str,
    pub(super) debian: &'static str,
    pub(super) intel: &'static str,
}

/// Newest first.
pub(super) const IGCS: &[Igc] = &[
    Igc {
        major: 2,
        library: "libigc.so.2",
        iga: "libiga64.so.2",
        debian: "libigc2",
        intel: "intel-igc-core-2",
    },
    Igc {
        major: 1,
        library: "libigc.so.1",
        iga: "libiga64.so.1",
        debian: "libigc1",
        intel: "intel-igc-core",
    },
];

/// NEO's Level Zero driver, whose run path (if any) is where it finds IGC.
pub(super) const NEO_LIBRARY: &str = "libze_intel_gpu.so.1";

/// What a system with these IGCs (newest first, as [`installed_igcs`]
/// gives them) needs to have IGA.
pub(super) fn advice(igcs: &[(&'static Igc, PathBuf)]) -> String {
    match igcs.first() {
        Some((igc, library)) => format!(
            "this system has IGC {} ({}), whose IGA is {}: install it (Debian, Ubuntu: apt-get install {}; Intel's packages: {}), or set {ENV} to the path of {}",
            igc.major,
            library.display(),
            igc.iga,
            igc.debian,
            igc.intel,
            igc.iga
        ),
        None => format!(
            "no IGC was found on this system either (no {}): install the IGA of the IGC that NEO uses, with IGC 2 {} (Debian, Ubuntu: {}; Intel's packages: {}), with IGC 1 {} ({}; {}), or set {ENV} to the path of IGA's library",
            IGCS.iter().map(|i| i.library).collect::<Vec<_>>().join(", "),
            IGCS[0].iga,
            IGCS[0].debian,
            IGCS[0].intel,
            IGCS[1].iga,
            IGCS[1].debian,
            IGCS[1].intel
        ),
    }
}

/// The IGA library to name when one is not IGA's.
pub(super) fn wanted(igcs: &[(&'static Igc, PathBuf)]) -> String {
    match igcs.first() {
        Some((igc, library)) => format!(
            "the {} beside this system's IGC {} ({}; package {} or {})",
            igc.iga,
            igc.major,
            library.display(),
            igc.debian,
            igc.intel
        ),
        None => IGCS
            .iter()
            .map(|i| format!("{} (package {} or {})", i.iga, i.debian, i.intel))
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// [`newer_iga`] for the IGA opened as `in_use` on a system with `igcs`.
pub(super) fn newer(in_use: &str, igcs: &[(&'static Igc, PathBuf)]) -> String {
    let in_use = IGCS
        .iter()
        .find(|i| in_use.ends_with(i.iga))
        .map_or(u32::MAX, |i| i.major);
    igcs.iter()
        .filter(|(igc, _)| igc.major > in_use)
        .find_map(|(igc, library)| {
            let path = library.parent()?.join(igc.iga);
            path.exists()
                .then(|| format!("; this system has one: set {ENV}={}", path.display()))
        })
        .unwrap_or_default()
}

/// [`installed_igcs`] of the folders the dynamic loader searches, looked
/// for once (a refused platform asks for them for every kernel).
pub(super) fn system_igcs() -> &'static [(&'static Igc, PathBuf)] {
    static IGCS_HERE: std::sync::OnceLock<Vec<(&'static Igc, PathBuf)>> =
        std::sync::OnceLock::new();
    IGCS_HERE.get_or_init(|| installed_igcs(&library_dirs()))
}

/// The major version of the IGC that NEO loads when this system has one
/// IGC only (`libigc.so.1` or `libigc.so.2`, looked for as NEO's dynamic
/// loading would: NEO's run path, then the loader's folders); `None` when
/// it has none, or both (then which one NEO opens is not told here).
pub fn only_igc() -> Option<u32> {
    match system_igcs() {
        [(igc, _)] => Some(igc.major),
        _ => None,
    }
}

/// The IGCs this system has, newest first, each with the path of its
/// compiler library where NEO's dynamic loading finds it: the first of
/// NEO's run path (when NEO has one), then `search`.
pub(super) fn installed_igcs(search: &[PathBuf]) -> Vec<(&'static Igc, PathBuf)> {
    let mut dirs = neo_run_path(search);
    dirs.extend_from_slice(search);
    IGCS.iter()
        .filter_map(|igc| {
            dirs.iter()
                .map(|d| d.join(igc.library))
                .find(|p| p.exists())
                .map(|p| (igc, p))
        })
        .collect()
}

/// The run path (`DT_RUNPATH`, or else `DT_RPATH`) of NEO's driver, the
/// first found in `search`, `$ORIGIN` made its folder; empty when there is
/// none.
pub(super) fn neo_run_path(search: &[PathBuf]) -> Vec<PathBuf> {
    use object::read::elf::{Dyn, ElfFile64};
    let Some(neo) = search
        .iter()
        .map(|d| d.join(NEO_LIBRARY))
        .find(|p| p.exists())
    else {
        return Vec::new();
    };
    // NEO 26's driver is 60 MB: mapped, only its headers and dynamic
    // section are read.
    let Some(map) = Mapped::open(&neo) else {
        return Vec::new();
    };
    let data = map.bytes();
    let Ok(elf) = ElfFile64::<object::Endianness>::parse(data) else {
        return Vec::new();
    };
    let endian = elf.endian();
    let sections = elf.elf_section_table();
    let Ok(Some((entries, link))) = sections.dynamic(endian, data) else {
        return Vec::new();
    };
    let Ok(strings) = sections.strings(endian, data, link) else {
        return Vec::new();
    };
    let path_of = |tag: u32| {
        entries
            .iter()
            .find(|d| d.d_tag(endian) == u64::from(tag))
            .and_then(|d| d.string(endian, strings).ok())
    };
    let Some(value) = path_of(object::elf::DT_RUNPATH).or_else(|| path_of(object::elf::DT_RPATH))
    else {
        return Vec::new();
    };
    let origin = neo.parent().unwrap_or(Path::new("/")).display().to_string();
    String::from_utf8_lossy(value)
        .split(':')
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(p.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin)))
        .collect()
}

/// A file mapped read-only, unmapped when dropped.
struct Mapped {
    at: *mut c_void,
    len: usize,
}

impl Mapped {
    fn open(path: &Path) -> Option<Mapped> {
        let file = std::fs::File::open(path).ok()?;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        use std::os::fd::AsRawFd;
        // SAFETY: a private read-only mapping of an open file; the mapping
        // outlives the descriptor, which may be closed after the call.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(Mapped { at, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes are mapped readable at `at` until drop. (A
        // library being replaced while mapped would change these bytes:
        // they are only parsed, with every offset checked.)
        unsafe { std::slice::from_raw_parts(self.at.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe { libc::munmap(self.at, self.len) };
    }
}

/// The folders the dynamic loader searches, in its order:
/// `LD_LIBRARY_PATH`, those of `/etc/ld.so.conf` (and what it includes),
/// then the default ones.
pub(super) fn library_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| p.is_absolute())
                .collect()
        })
        .unwrap_or_default();
    ld_so_conf(Path::new("/etc/ld.so.conf"), 0, &mut dirs);
    let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
    for d in [
        format!("/lib/{triple}"),
        format!("/usr/lib/{triple}"),
        "/lib64".into(),
        "/usr/lib64".into(),
        "/lib".into(),
        "/usr/lib".into(),
    ] {
        dirs.push(PathBuf::from(d));
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The folders `conf` lists, with those of the files its `include` lines
/// name (`*` in their file name part), in order.
pub(super) fn ld_so_conf(conf: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(text) = std::fs::read_to_string(conf) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pattern) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            if depth >= 8 {
                continue;
            }
            let pattern = Path::new("/etc").join(pattern.trim());
            let (Some(dir), Some(file)) = (pattern.parent(), pattern.file_name()) else {
                continue;
            };
            let file = file.to_string_lossy();
            let (prefix, suffix) = file.split_once('*').unwrap_or((&file, ""));
            let exact = !file.contains('*');
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    n.is_some_and(|n| {
                        if exact {
                            n == file
                        } else {
                            n.len() >= prefix.len() + suffix.len()
                                && n.starts_with(prefix)
                                && n.ends_with(suffix)
                        }
                    })
                })
                .collect();
            files.sort();
            for f in files {
                ld_so_conf(&f, depth + 1, out);
            }
        } else if line.starts_with('/') {
            out.push(PathBuf::from(line));
        }
    }
}
