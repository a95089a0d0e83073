//! Socket and timer set-up for the worker: the only place that makes file
//! descriptors.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use mio::net::TcpStream;

use crate::backend::Connect;

/// Starts a non-blocking connect with Nagle off (requests are written whole,
/// waiting for more would only add latency), from `source` when given.
pub(crate) fn connect(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<TcpStream> {
    let sock = match source {
        None => TcpStream::connect(addr)?,
        Some(ip) => connect_from(ip, addr)?,
    };
    sock.set_nodelay(true)?;
    Ok(sock)
}

/// A connect bound to a source address. IP_BIND_ADDRESS_NO_PORT leaves the
/// port to connect(), which picks it per (source, destination) pair: without
/// it bind() would take a port for every destination, and one source address
/// would run out of ports at the size of the ephemeral range for the whole
/// machine rather than per target.
fn connect_from(source: IpAddr, addr: SocketAddr) -> io::Result<TcpStream> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain syscall with constant arguments; the result is checked.
    let fd = unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    // SAFETY: a valid descriptor and a c_int option of the size given. An
    // old kernel without the option refuses it: bind then takes a port.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    let (from, from_len) = sockaddr(SocketAddr::new(source, 0));
    // SAFETY: `from` is a sockaddr_storage holding an address of `from_len`
    // bytes.
    if unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&from as *const libc::sockaddr_storage).cast(),
            from_len,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    let (to, to_len) = sockaddr(addr);
    // SAFETY: as above.
    let rc = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&to as *const libc::sockaddr_storage).cast(),
            to_len,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    // SAFETY: the descriptor is a connecting, non-blocking TCP socket that
    // the stream now owns.
    let std_stream = unsafe { std::net::TcpStream::from_raw_fd(fd.into_raw_fd()) };
    Ok(TcpStream::from_std(std_stream))
}

/// An address as the C socket calls take it.
pub(crate) fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; it is large enough and
    // aligned for either address family written into it below.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
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
