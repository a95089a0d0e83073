//! Socket and timer set-up for the worker: the only place that makes file
//! descriptors.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use mio::net::TcpStream;

/// Starts a non-blocking connect with Nagle off (requests are written whole,
/// waiting for more would only add latency).
pub(crate) fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let sock = TcpStream::connect(addr)?;
    sock.set_nodelay(true)?;
    Ok(sock)
}

/// Where a non-blocking connect stands when its socket reports readiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connect {
    Up,
    /// Woken before the handshake finished: wait for the next event.
    Pending,
    Failed,
}

/// Reads the outcome of a non-blocking connect from its socket.
pub(crate) fn connect_outcome(sock: &TcpStream) -> Connect {
    match sock.take_error() {
        Ok(None) => {}
        _ => return Connect::Failed,
    }
    match sock.peer_addr() {
        Ok(_) => Connect::Up,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Connect::Pending,
        Err(_) => Connect::Failed,
    }
}

/// A monotonic timerfd for open-loop pacing: epoll's own timeout has only
/// millisecond resolution, too coarse for intended send times.
pub(crate) struct Timer {
    fd: OwnedFd,
    /// The expiry it is armed for, in the caller's ns clock.
    armed_for: Option<u64>,
}

impl Timer {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain syscall with constant flags; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Timer {
            fd,
            armed_for: None,
        })
    }

    /// Arms the timer to fire at `at` (ns on the caller's clock, `now` being
    /// the current reading). Re-arming for the same time is free.
    pub(crate) fn arm(&mut self, at: u64, now: u64) {
        if self.armed_for == Some(at) {
            return;
        }
        // A zero it_value would disarm; one nanosecond fires at once.
        let delay = at.saturating_sub(now).max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (delay / 1_000_000_000) as libc::time_t,
                tv_nsec: (delay % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and a valid itimerspec.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc == 0 {
            self.armed_for = Some(at);
        }
    }

    /// Consumes an expiry so the edge-triggered registration fires again.
    pub(crate) fn fired(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer from our own descriptor;
        // EAGAIN (nothing expired) is fine to ignore.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed_for = None;
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
