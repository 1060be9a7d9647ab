//! The events file: JSON lines appended with `O_APPEND`, each through a
//! descriptor opened for that write alone (see `sys`).
//!
//! Space is reserved ahead of the lines (`fallocate` past the end of the
//! file, [`RESERVE`] at a time), so that a filesystem the workload fills
//! still takes the record's next events. A line that cannot be written
//! (no space even so, a read-only or vanished folder, no descriptor left)
//! waits in memory, in order, and in the process's staged events file
//! (node-local memory, `XPU_ASM_STAGING`), which survives a kill; the next
//! event, the process's exit or the collector after it writes it into the
//! record.

use crate::sys::{self, Errno};
use std::ffi::CString;

/// Reserved at a time past the end of the events file.
const RESERVE: u64 = 64 << 10;
/// A new reserve is asked for when less than this is left.
const LOW: u64 = 16 << 10;

pub struct Events {
    pub path: CString,
    /// Bytes the file holds, as far as this process wrote them.
    written: u64,
    /// Space reserved up to here (past `written`).
    reserved_to: u64,
    /// Not yet in the file, in order.
    pending: Vec<u8>,
    /// The staged events file, and how many bytes of `pending` it holds
    /// after its header line (`None`: there is none). It always holds a
    /// prefix of `pending` exactly.
    staged_path: Option<CString>,
    staged: Option<usize>,
    staged_head: Vec<u8>,
    /// Why the last write failed, while lines wait.
    pub failing: Option<Errno>,
}

impl Events {
    pub fn new(path: CString, staged_path: Option<CString>, staged_head: Vec<u8>) -> Events {
        Events {
            path,
            written: 0,
            reserved_to: 0,
            pending: Vec::new(),
            staged_path,
            staged: None,
            staged_head,
            failing: None,
        }
    }

    /// Creates the events file (`O_EXCL`: a file already there is never
    /// shared), with its first reserve.
    pub fn create(&mut self) -> Result<(), Errno> {
        let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_EXCL;
        let f = sys::open(&self.path, flags, 0o644)?;
        self.written = 0;
        self.reserved_to = 0;
        self.reserve(&f);
        Ok(())
    }

    /// Appends `line`: written at once when the file takes it, else kept
    /// (and staged) until it does. `Err(ENOENT)`: the file is gone (the
    /// capture folder was removed); the line waits.
    pub fn append(&mut self, line: &[u8]) -> Result<(), Errno> {
        self.pending.extend_from_slice(line);
        self.flush()
    }

    /// Writes what waits. On failure what is left is staged.
    pub fn flush(&mut self) -> Result<(), Errno> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let f = match sys::open(&self.path, libc::O_WRONLY | libc::O_APPEND, 0) {
            Ok(f) => f,
            Err(e) => return Err(self.failed(e)),
        };
        let (n, err) = f.write_all(&self.pending);
        self.pending.drain(..n);
        self.written += n as u64;
        if n > 0 && self.staged.is_some() {
            // The staged file holds what is now written: made again below,
            // or removed.
            self.unstage();
        }
        if let Some(e) = err {
            return Err(self.failed(e));
        }
        self.failing = None;
        self.reserve(&f);
        Ok(())
    }

    /// Records a failure: what waits goes to the staged file.
    fn failed(&mut self, e: Errno) -> Errno {
        self.failing = Some(e);
        self.stage();
        e
    }

    /// Keeps the reserve ahead of the file's end.
    fn reserve(&mut self, f: &sys::File) {
        if self.reserved_to >= self.written + LOW {
            return;
        }
        if f.fallocate(libc::FALLOC_FL_KEEP_SIZE, self.written, RESERVE)
            .is_ok()
        {
            self.reserved_to = self.written + RESERVE;
        }
    }

    /// Gives back the space reserved past the end (at the process's end).
    pub fn release_reserve(&mut self) {
        if self.reserved_to <= self.written || !self.pending.is_empty() {
            return;
        }
        if let Ok(f) = sys::open(&self.path, libc::O_WRONLY, 0) {
            if let Ok((_, size)) = f.stat() {
                let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                let _ = f.fallocate(mode, size, self.reserved_to.saturating_sub(size).max(1));
            }
        }
        self.reserved_to = 0;
    }

    /// The staged file made to hold all of `pending`: the new part
    /// appended, or the whole written again.
    fn stage(&mut self) {
        let Some(path) = &self.staged_path else {
            return;
        };
        let done = match self.staged {
            Some(k) if k <= self.pending.len() => {
                let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_NOFOLLOW;
                let appended = sys::open(path, flags, 0).map(|f| f.write_all(&self.pending[k..]));
                match appended {
                    Ok((n, None)) => Some(k + n),
                    _ => None,
                }
            }
            _ => None,
        };
        self.staged = done.or_else(|| {
            let f = super::staging::create(path, libc::O_WRONLY).ok()?;
            let mut whole = self.staged_head.clone();
            whole.extend_from_slice(&self.pending);
            match f.write_all(&whole) {
                (_, None) => Some(self.pending.len()),
                _ => {
                    drop(f);
                    sys::unlink(path);
                    None
                }
            }
        });
    }

    /// The staged file is out of date: removed, then made again with what
    /// still waits.
    fn unstage(&mut self) {
        if let Some(path) = &self.staged_path {
            sys::unlink(path);
        }
        self.staged = None;
        if !self.pending.is_empty() {
            self.stage();
        }
    }

    /// Forgets what waits (a record made again holds it already, or a
    /// forked child's parent writes it).
    pub fn forget_pending(&mut self, keep_staged: bool) {
        self.pending.clear();
        if self.staged.is_some() && !keep_staged {
            if let Some(path) = &self.staged_path {
                sys::unlink(path);
            }
        }
        self.staged = None;
        self.failing = None;
    }

    /// Bytes waiting to be written.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    /// Whether what waits is in the staged file.
    pub fn is_staged(&self) -> bool {
        self.staged.is_some()
    }
}
