//! Where the launch counters live: chunks of [`CHUNK_SLOTS`] counters,
//! each mapped once and never unmapped (a forked child replaces them in
//! place).
//!
//! A launch writes its counter with one atomic add, so a counter must be
//! memory whose write can never fault for want of space: a page the
//! filesystem has not allocated, or must allocate again (copy-on-write
//! filesystems, a network filesystem's grant), makes the kernel raise
//! SIGBUS in the workload. Each chunk is placed, in this order:
//!
//! 1. [`Place::File`]: in the capture's counts file, when its filesystem
//!    writes a mapped page in place (`sys::maps_safely`), after the chunk's
//!    bytes are written (zeros: real blocks, not a sparse hole) and its
//!    pages populated. Every launch is on disk's page cache at once: a kill
//!    loses nothing.
//! 2. [`Place::Staged`]: in the process's staged counts file, in node-local
//!    memory (`XPU_ASM_STAGING`, default `/dev/shm`), its pages allocated
//!    first (`fallocate`); written into the counts file at exit, or, after
//!    a kill, by `xpu-asm-run` on that host.
//! 3. [`Place::Memory`]: anonymous memory, written into the counts file
//!    at exit; a kill loses it (the record says so).
//!
//! Each placement but the first is said in the events (`counts` events),
//! with the reason.

use crate::sys::{self, Errno};
use std::ffi::CString;
use xpu_asm_record::{
    counts_header, CHUNK_SLOTS, COUNTS_HEADER_LEN, COUNTS_SLOT_LEN, STAGED_COUNTS_MAGIC,
    STAGED_FLAGS_AT, STAGED_HEAD_LEN,
};

pub const CHUNK_BYTES: usize = CHUNK_SLOTS * COUNTS_SLOT_LEN;
const PAGE: usize = 4096;
/// A chunk's mapping starts at a page-aligned file offset and reaches one
/// page further to cover the header's shift of its last slots.
pub const MAP_LEN: usize = CHUNK_BYTES + PAGE;

static ZEROS: [u8; CHUNK_BYTES] = [0; CHUNK_BYTES];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    File,
    Staged,
    Memory,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::File => "file",
            Place::Staged => "staged",
            Place::Memory => "memory",
        }
    }
}

#[derive(Clone, Copy)]
pub struct Chunk {
    pub base: usize,
    pub place: Place,
}

pub struct Counts {
    pub path: CString,
    /// The counts file this process created (which file it is), when it could.
    file: Option<sys::Identity>,
    /// Why chunks are not placed in the file, once known.
    pub not_in_file: Option<String>,
    pub staged_path: Option<CString>,
    staged_made: bool,
    staged_head: Vec<u8>,
    pub chunks: Vec<Chunk>,
}

/// The bytes of chunk `c` that are its own, as (offset in the chunk's
/// mapping, offset in the counts file, length): its slots, and for chunk
/// 0 the header before them.
fn own_bytes(c: usize) -> (usize, u64, usize) {
    match c {
        0 => (0, 0, COUNTS_HEADER_LEN + CHUNK_BYTES),
        _ => (
            COUNTS_HEADER_LEN,
            (c * CHUNK_BYTES + COUNTS_HEADER_LEN) as u64,
            CHUNK_BYTES,
        ),
    }
}

impl Counts {
    pub fn new(path: CString, staged_path: Option<CString>, staged_head: Vec<u8>) -> Counts {
        Counts {
            path,
            file: None,
            not_in_file: None,
            staged_path,
            staged_made: false,
            staged_head,
            chunks: Vec::new(),
        }
    }

    /// Creates the counts file with its header, and tells whether its
    /// filesystem takes the counters in place.
    pub fn create(&mut self) {
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
        let made = sys::open(&self.path, flags, 0o644).and_then(|f| {
            f.pwrite_all(&counts_header(), 0)?;
            let (id, _) = f.stat()?;
            Ok((id, f.fs_type()?))
        });
        match made {
            Ok((id, fs)) => {
                self.file = Some(id);
                self.not_in_file = (!sys::maps_safely(fs)).then(|| {
                    format!(
                        "the capture's filesystem ({}) can fail a write into a mapped file for want of space",
                        xpu_asm_record::filesystem_name(fs)
                    )
                });
            }
            Err(e) => self.not_in_file = Some(format!("cannot create it: {}", sys::describe(e))),
        }
    }

    /// Places chunk `c` (at address `at` when given), saying why it is not
    /// in the file when it is not. `None`: no memory at all.
    pub fn place(&mut self, c: usize, at: Option<usize>) -> Option<(Chunk, Option<String>)> {
        let mut why = self.not_in_file.clone();
        if why.is_none() {
            match self.map_in_file(c, at) {
                Ok(base) => {
                    return Some((
                        Chunk {
                            base,
                            place: Place::File,
                        },
                        None,
                    ))
                }
                Err(e) => why = Some(e),
            }
        }
        let why = why.unwrap_or_default();
        if let Ok(base) = self.map_staged(c, at) {
            return Some((
                Chunk {
                    base,
                    place: Place::Staged,
                },
                Some(why),
            ));
        }
        let base = sys::map_anonymous(MAP_LEN, at).ok()?;
        if c == 0 {
            write_header(base);
        }
        Some((
            Chunk {
                base,
                place: Place::Memory,
            },
            Some(why),
        ))
    }

    /// Chunk `c` in the counts file: its bytes written first.
    fn map_in_file(&mut self, c: usize, at: Option<usize>) -> Result<usize, String> {
        let f = sys::open(&self.path, libc::O_RDWR, 0)
            .map_err(|e| format!("cannot open the counts file: {}", sys::describe(e)))?;
        match f.stat() {
            Ok((id, _)) if Some(id) == self.file => {}
            _ => return Err("the counts file was removed or replaced".into()),
        }
        let (_, file_at, len) = own_bytes(c);
        let (zeros_at, zeros) = match c {
            0 => (COUNTS_HEADER_LEN as u64, CHUNK_BYTES),
            _ => (file_at, len),
        };
        let room = |e: Errno| format!("cannot reserve its space: {}", sys::describe(e));
        f.pwrite_all(&ZEROS[..zeros], zeros_at).map_err(room)?;
        sys::map_shared(&f, MAP_LEN, (c * CHUNK_BYTES) as u64, at)
            .map_err(|e| format!("cannot map it: {}", sys::describe(e)))
    }

    /// Chunk `c` in the staged counts file, its pages allocated first.
    fn map_staged(&mut self, c: usize, at: Option<usize>) -> Result<usize, Errno> {
        let path = self.staged_path.as_ref().ok_or(libc::ENOENT)?;
        let f = match self.staged_made {
            true => sys::open(path, libc::O_RDWR | libc::O_NOFOLLOW, 0)?,
            false => {
                let f = super::staging::create(path, libc::O_RDWR)?;
                if let Err(e) = f.pwrite_all(&staged_head_page(&self.staged_head), 0) {
                    sys::unlink(path);
                    return Err(e);
                }
                self.staged_made = true;
                f
            }
        };
        let at_file = (STAGED_HEAD_LEN + c * CHUNK_BYTES) as u64;
        f.fallocate(0, at_file, MAP_LEN as u64)?;
        let base = sys::map_shared(&f, MAP_LEN, at_file, at)?;
        if c == 0 {
            write_header(base);
        }
        if STAGED_FLAGS_AT + c < STAGED_HEAD_LEN {
            f.pwrite_all(&[1], (STAGED_FLAGS_AT + c) as u64)?;
        }
        Ok(base)
    }

    /// Writes the chunks not in the file into it (at the process's end).
    /// Returns, for each chunk written, its index; for each that could not
    /// be, the index and why.
    pub fn write_back(&self) -> (Vec<usize>, Vec<(usize, String)>) {
        let mut done = Vec::new();
        let mut failed = Vec::new();
        for (c, ch) in self.chunks.iter().enumerate() {
            if ch.place == Place::File {
                continue;
            }
            match self.write_chunk(c, ch.base) {
                Ok(()) => done.push(c),
                Err(e) => failed.push((c, sys::describe(e))),
            }
        }
        (done, failed)
    }

    fn write_chunk(&self, c: usize, base: usize) -> Result<(), Errno> {
        let f = sys::open(&self.path, libc::O_WRONLY | libc::O_CREAT, 0o644)?;
        if c > 0 && sys::size_of(&self.path).unwrap_or(0) < COUNTS_HEADER_LEN as u64 {
            f.pwrite_all(&counts_header(), 0)?;
        }
        let (in_map, file_at, len) = own_bytes(c);
        // SAFETY: the chunk's mapping is MAP_LEN bytes, never unmapped;
        // counters change under the copy, which takes them as they are.
        let bytes = unsafe { std::slice::from_raw_parts((base + in_map) as *const u8, len) };
        f.pwrite_all(bytes, file_at)
    }

    /// Removes the staged file (every chunk written back).
    pub fn remove_staged(&mut self) {
        if let (true, Some(p)) = (self.staged_made, &self.staged_path) {
            sys::unlink(p);
        }
        self.staged_made = false;
    }

    /// Whether the counts file this process created is still at its path
    /// (or none was ever made).
    pub fn file_is_there(&self) -> bool {
        let Some(id) = self.file else { return true };
        sys::open(&self.path, libc::O_RDONLY, 0)
            .and_then(|f| f.stat())
            .is_ok_and(|(now, _)| now == id)
    }

    /// The chunks in the file are no longer in it (it was removed):
    /// from now on they are memory, written back at the end. Returns them.
    pub fn detach_file(&mut self) -> Vec<usize> {
        self.file = None;
        self.not_in_file = Some("the counts file was removed while the process ran".into());
        let mut moved = Vec::new();
        for (c, ch) in self.chunks.iter_mut().enumerate() {
            if ch.place == Place::File {
                ch.place = Place::Memory;
                moved.push(c);
            }
        }
        moved
    }

    /// A forked child: a counts file and staged file of its own.
    pub fn restart(&mut self, path: CString, staged_path: Option<CString>, head: Vec<u8>) {
        self.path = path;
        self.file = None;
        self.not_in_file = None;
        self.staged_path = staged_path;
        self.staged_made = false;
        self.staged_head = head;
    }
}

/// The first page of a staged counts file (its chunk flags all 0).
fn staged_head_page(header: &[u8]) -> Vec<u8> {
    let mut page = vec![0u8; STAGED_HEAD_LEN];
    page[..8].copy_from_slice(&STAGED_COUNTS_MAGIC);
    let n = header.len().min(STAGED_FLAGS_AT - 16);
    page[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    page[16..16 + n].copy_from_slice(&header[..n]);
    page
}

fn write_header(base: usize) {
    let h = counts_header();
    // SAFETY: the first bytes of a fresh chunk 0 mapping, MAP_LEN long.
    unsafe { std::ptr::copy_nonoverlapping(h.as_ptr(), base as *mut u8, h.len()) };
}
