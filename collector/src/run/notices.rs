//! Notices from processes of the command that could write their record
//! nowhere (neither the capture folder nor the staging folder): the
//! interposer sends one datagram to an abstract Unix socket of
//! xpu-asm-run's (`XPU_ASM_NOTIFY`), which needs no file on either side.
//! They go into `run.json` (or the rank's instance file), so that the
//! report names those processes.
//!
//! The socket's name is public (`/proc/net/unix` lists it), so a notice is
//! taken only from the user's own processes of the command: the kernel
//! says who sent it (`SO_PASSCRED`: its uid must be the user's, and the
//! pid it claims the pid that sent it), and it carries the run's key
//! (`XPU_ASM_NOTIFY_KEY`, random, in the command's environment alone,
//! which other users cannot read). The rest is counted, dropped, and said
//! in a warning. A thread reads them while the command runs, so that
//! datagrams sent to fill the socket's queue cannot push the command's
//! out.

use crate::capture::run::Notice;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What arrived: the notices taken, and how many datagrams were refused.
#[derive(Debug, Default, Clone)]
pub struct Received {
    pub notices: Vec<Notice>,
    pub refused: u64,
}

/// The socket xpu-asm-run listens on while the command runs.
pub struct Notices {
    name: String,
    key: String,
    got: Arc<Mutex<Received>>,
    stop: Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<()>>,
    sock: Arc<UnixDatagram>,
}

/// A notice as sent: with the run's key.
#[derive(serde::Deserialize)]
struct Wire {
    key: String,
    host: String,
    pid: u32,
    reason: String,
}

/// 16 random bytes as hex, from the kernel's generator.
fn random_hex() -> Option<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .ok()?
        .read_exact(&mut b)
        .ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl Notices {
    /// A socket of this xpu-asm-run's own (abstract: nothing on disk;
    /// close-on-exec: the command does not inherit it), with a new key.
    /// `None` when one cannot be had: the command runs without it.
    pub fn listen() -> Option<Notices> {
        let key = random_hex()?;
        // The name is public: it holds nothing of the key.
        let name = format!("xpu-asm-{}-{}", std::process::id(), &random_hex()?[..8]);
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).ok()?;
        let sock = UnixDatagram::bind_addr(&addr).ok()?;
        let on: libc::c_int = 1;
        // SAFETY: setsockopt on our socket with an int option of its size.
        let rc = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PASSCRED,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return None;
        }
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .ok()?;
        let sock = Arc::new(sock);
        let got = Arc::new(Mutex::new(Received::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (sock, got, stop, key) = (sock.clone(), got.clone(), stop.clone(), key.clone());
            std::thread::Builder::new()
                .name("xpu-asm-notices".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        drain(&sock, &key, &got);
                    }
                })
                .ok()?
        };
        Some(Notices {
            name,
            key,
            got,
            stop,
            reader: Some(reader),
            sock,
        })
    }

    /// Its name, for `XPU_ASM_NOTIFY`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key notices must carry, for `XPU_ASM_NOTIFY_KEY`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What was received (the command has ended: none is coming).
    pub fn take(mut self) -> Received {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let _ = self.sock.set_nonblocking(true);
        drain(&self.sock, &self.key, &self.got);
        let got = self.got.lock().map(|g| g.clone()).unwrap_or_default();
        got
    }
}

/// Reads the datagrams waiting (up to the read timeout): each taken when
/// its sender is the user and it carries the key, else counted refused.
fn drain(sock: &UnixDatagram, key: &str, got: &Mutex<Received>) {
    let mut buf = vec![0u8; 64 << 10];
    while let Some((n, cred)) = recv_with_cred(sock, &mut buf) {
        let taken = cred
            .filter(|c| c.uid == crate::capture::trust::me())
            .and_then(|c| {
                let w: Wire = serde_json::from_slice(&buf[..n]).ok()?;
                (w.key == key && w.pid == c.pid).then_some(Notice {
                    host: w.host,
                    pid: w.pid,
                    reason: w.reason,
                })
            });
        let Ok(mut g) = got.lock() else { return };
        match taken {
            Some(n) => g.notices.push(n),
            None => g.refused += 1,
        }
    }
}

/// Who sent a datagram, as the kernel says.
#[derive(Clone, Copy)]
struct Cred {
    pid: u32,
    uid: u32,
}

/// One datagram and its sender's credentials; `None` when none waits.
fn recv_with_cred(sock: &UnixDatagram, buf: &mut [u8]) -> Option<(usize, Option<Cred>)> {
    // Room for one SCM_CREDENTIALS message, aligned as cmsghdr wants.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: plain data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at live buffers of the lengths it gives.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return None;
    }
    let mut cred = None;
    // SAFETY: walking the control messages recvmsg filled, within
    // msg_controllen, as CMSG_FIRSTHDR/CMSG_NXTHDR do.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_CREDENTIALS {
                let u: libc::ucred = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                cred = Some(Cred {
                    pid: u.pid as u32,
                    uid: u.uid,
                });
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Some((n as usize, cred))
}
