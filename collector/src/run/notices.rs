//! Notices from processes of the command that could write their record
//! nowhere (neither the capture folder nor the staging folder): the
//! interposer sends one datagram to an abstract Unix socket of
//! xpu-asm-run's (`XPU_ASM_NOTIFY`), which needs no file on either side.
//! Read after the command ends, they go into `run.json` (or the rank's
//! instance file), so that the report names those processes.

use crate::capture::run::Notice;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The socket xpu-asm-run listens on while the command runs.
pub struct Notices {
    name: String,
    sock: UnixDatagram,
}

impl Notices {
    /// A socket of this xpu-asm-run's own (abstract: nothing on disk;
    /// close-on-exec: the command does not inherit it). `None` when one
    /// cannot be had: the command runs without it.
    pub fn listen() -> Option<Notices> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("xpu-asm-{}-{nanos:08x}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).ok()?;
        let sock = UnixDatagram::bind_addr(&addr).ok()?;
        Some(Notices { name, sock })
    }

    /// Its name, for `XPU_ASM_NOTIFY`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The notices received (the command has ended: none is coming).
    pub fn take(&self) -> Vec<Notice> {
        let _ = self.sock.set_nonblocking(true);
        let mut got = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        while let Ok(n) = self.sock.recv(&mut buf) {
            if let Ok(notice) = serde_json::from_slice::<Notice>(&buf[..n]) {
                got.push(notice);
            }
        }
        got
    }
}
