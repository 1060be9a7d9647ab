//! Reading the files of a dump folder, on every core: each `.asm`'s
//! header (against its module's kernel names) and, for a launched
//! kernel's, its analysis, through the folder opened once.

use super::file_names::{parse_asm_file_name, parse_kernbin_file_name};
use super::names::{Known, SpvRead};
use crate::capture::files::{open_noatime, without_atime};
use crate::sources::AsmName;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use xpu_asm_isa::header::{header_and_analysis_of, AsmHeader, KnownNames};

/// What reading one file of a dump folder gave.
// Nearly every item is an `Asm`: boxing it would only add allocations.
#[allow(clippy::large_enum_variant)]
pub(super) enum Scanned {
    /// Its module hash; its SHA-256 and size.
    Spv(String, std::io::Result<(String, u64)>),
    Asm(AsmName, std::io::Result<AsmRead>),
    OtherAsm,
    Kernbin(String),
    Other,
    Stopped,
}

/// The kernels whose files are read whole; whether they are most of the
/// folder's `.asm` files (then each small file is read at once); whether
/// the other kernels' headers are read whole.
struct Launched<'a> {
    kernels: &'a HashSet<&'a [u8]>,
    most: bool,
    all_headers: bool,
}

/// The files' contents, read on every core (the `.spv`s read already).
pub(super) fn read_files(
    files: &[(String, PathBuf)],
    mut spvs: BTreeMap<usize, (String, SpvRead)>,
    known: &Known,
    folder: Option<&OwnedFd>,
    launched: &HashSet<&[u8]>,
    all_headers: bool,
    stop: &(dyn Fn() -> bool + Sync),
) -> Vec<Scanned> {
    let asm = files.iter().filter(|(n, _)| n.ends_with(".asm")).count();
    let launched = &Launched {
        kernels: launched,
        most: launched.len() * 2 >= asm,
        all_headers,
    };
    let mut scanned: Vec<Scanned> = files
        .par_iter()
        .enumerate()
        .map(|(i, (name, p))| {
            if stop() {
                Scanned::Stopped
            } else if spvs.contains_key(&i) {
                // Filled in below.
                Scanned::Other
            } else if let Some(asm_name) = parse_asm_file_name(name) {
                let known = known.of(&asm_name.hash);
                let read = read_asm(folder, name, p, known, launched);
                Scanned::Asm(asm_name, read)
            } else if name.ends_with(".asm") {
                Scanned::OtherAsm
            } else if let Some(hash) = parse_kernbin_file_name(name) {
                Scanned::Kernbin(hash)
            } else {
                Scanned::Other
            }
        })
        .collect();
    for (i, (hash, read)) in std::mem::take(&mut spvs) {
        if matches!(scanned[i], Scanned::Other) {
            scanned[i] = Scanned::Spv(hash, read.map(|(sha, size, _)| (sha, size)));
        }
    }
    scanned
}

/// What the scan read of one `.asm`: its header, its analysis (when its
/// kernel was launched), its size (when known).
pub(super) type AsmRead = (AsmHeader, Option<xpu_asm_isa::Analysis>, Option<u64>);

/// The `.asm` `name` of `folder` (at `path`) read: its header, and its
/// analysis when `launched` names its kernel; its size from the open
/// file, which the analysis needs as well.
fn read_asm(
    folder: Option<&OwnedFd>,
    name: &str,
    path: &Path,
    known: &KnownNames,
    launched: &Launched,
) -> std::io::Result<AsmRead> {
    let f = open_in(folder, name, path)?;
    let meta = f.metadata().ok();
    let (header, analysis) = header_and_analysis_of(
        &f,
        meta.as_ref(),
        known,
        launched.kernels,
        launched.most,
        launched.all_headers,
    )?;
    let size = meta.filter(|m| m.is_file()).map(|m| m.len());
    Ok((header, analysis, size))
}

/// The folder at `path`, open for [`open_in`] (not through a link: then
/// files are opened by their paths).
pub(super) fn open_folder_fd(path: &Path) -> Option<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .ok()
        .map(OwnedFd::from)
}

/// The file `name` of `folder` opened for reading, as [`File::open`] of
/// its `path` opens it, without looking up each folder of the path again
/// (100,000 opens of a scan), and without updating its access time where
/// the file is ours ([`open_noatime`]); by its path when that does not go.
fn open_in(folder: Option<&OwnedFd>, name: &str, path: &Path) -> std::io::Result<File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if let (Some(dir), Ok(c)) = (folder, std::ffi::CString::new(name)) {
        let opened = without_atime(|flags| {
            // SAFETY: an open folder and a NUL-terminated name.
            let fd = unsafe {
                libc::openat(
                    dir.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC | flags,
                )
            };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `fd` was just opened and is owned by nothing else.
            Ok(unsafe { File::from_raw_fd(fd) })
        });
        if opened.is_ok() {
            return opened;
        }
    }
    open_noatime(path)
}
