//! Sockets for the attacks: connecting to a [`LoopbackTarget`] with the
//! options that must be set before the handshake, and blocking reads and
//! writes that give up at the attack's end (deadline or stop flag) instead of
//! blocking past it.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netbench_engine::{parse_head, Framing};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::plan::LoopbackTarget;
use crate::tally::{Failure, Tally};

/// How long a blocking call waits before it looks at the end again: the
/// bound on how late an attack stops after its deadline or a signal.
pub const SLICE: Duration = Duration::from_millis(100);

/// The longest a connect may take: Linux sends the SYN again after 1 s and
/// 3 s when a server's accept queue is full and drops it, so 3 s gives a
/// full server one retry before the attempt counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The longest the floods wait for an answer before giving up on it.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest answer head read; a longer one counts as not HTTP.
const MAX_HEAD: usize = 64 * 1024;

/// When an attack ends: its deadline, or the stop flag (a signal).
#[derive(Debug, Clone, Copy)]
pub struct End<'a> {
    pub deadline: Instant,
    pub stop: &'a AtomicBool,
}

impl End<'_> {
    pub fn reached(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }
}

/// Options set on a socket before it connects.
#[derive(Debug, Clone, Copy, Default)]
pub struct SocketOptions {
    /// SO_RCVBUF: set before the handshake so the window the server sees is
    /// small from the first byte.
    pub recv_buffer: Option<usize>,
    /// TCP_MAXSEG: the largest segment this side announces and sends.
    pub max_segment: Option<u32>,
    pub nodelay: bool,
}

/// Starts a non-blocking connect to `target` with `opts` set first; the
/// socket is connected once writable and [`connected`] says so.
pub fn start_connect(target: LoopbackTarget, opts: SocketOptions) -> io::Result<Socket> {
    let addr = target.addr();
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if let Some(size) = opts.recv_buffer {
        socket.set_recv_buffer_size(size)?;
    }
    if let Some(mss) = opts.max_segment {
        socket.set_tcp_mss(mss)?;
    }
    socket.set_tcp_nodelay(opts.nodelay)?;
    socket.set_nonblocking(true)?;
    match socket.connect(&SockAddr::from(addr)) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// Whether a started connect succeeded, once its socket polled writable
/// (or in error): the pending error if any, else the peer must be known.
pub fn connected(socket: &Socket) -> io::Result<()> {
    if let Some(e) = socket.take_error()? {
        return Err(e);
    }
    socket.peer_addr().map(|_| ())
}

/// Opens a blocking connection to `target` (the floods), counting it or its
/// failure; waits at most [`CONNECT_TIMEOUT`], looking at the end every
/// [`SLICE`]. `None` when it failed or the attack ended.
pub fn connect(
    target: LoopbackTarget,
    opts: SocketOptions,
    end: &End,
    tally: &Tally,
) -> Option<TcpStream> {
    let give_up = Instant::now() + CONNECT_TIMEOUT;
    let attempt = || -> io::Result<Option<TcpStream>> {
        let socket = start_connect(target, opts)?;
        loop {
            if end.reached() {
                return Ok(None);
            }
            if Instant::now() >= give_up {
                return Err(io::ErrorKind::TimedOut.into());
            }
            let mut pfd = libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one valid pollfd, alive for the call.
            if unsafe { libc::poll(&mut pfd, 1, SLICE.as_millis() as libc::c_int) } > 0 {
                connected(&socket)?;
                socket.set_nonblocking(false)?;
                return Ok(Some(socket.into()));
            }
        }
    };
    match attempt() {
        Ok(Some(stream)) => {
            tally.opened();
            Some(stream)
        }
        Ok(None) => None,
        Err(_) => {
            tally.failed(Failure::Connect);
            None
        }
    }
}

/// Why a blocking exchange stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broke {
    /// The attack's end came first.
    End,
    /// The server closed (end of stream).
    Closed,
    /// An error, of this kind.
    Failed(Failure),
}

/// Writes all of `buf` in pieces of at most `piece` bytes with `pause`
/// between them, counting the bytes that went out.
pub fn write_pieces(
    stream: &mut TcpStream,
    buf: &[u8],
    piece: usize,
    pause: Duration,
    end: &End,
    tally: &Tally,
) -> Result<(), Broke> {
    stream
        .set_write_timeout(Some(SLICE))
        .map_err(|e| Broke::Failed(Failure::of_io(&e)))?;
    let mut at = 0;
    while at < buf.len() {
        if end.reached() {
            return Err(Broke::End);
        }
        let upto = at.saturating_add(piece.max(1)).min(buf.len());
        match stream.write(&buf[at..upto]) {
            Ok(0) => return Err(Broke::Closed),
            Ok(n) => {
                tally.sent(n);
                at += n;
                if !pause.is_zero() && at < buf.len() {
                    std::thread::sleep(pause);
                }
            }
            Err(e) if is_slice_over(&e) => {}
            Err(e) => return Err(Broke::Failed(Failure::of_io(&e))),
        }
    }
    Ok(())
}

/// What came back for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The status code; 0 when the bytes were not an HTTP answer.
    pub status: u16,
    /// The connection can carry another request: the answer was framed by
    /// a length, read whole, and did not announce a close.
    pub reusable: bool,
}

/// Reads one answer: its head, then a body framed by Content-Length (any
/// other framing, or a close, leaves the connection unusable). Gives up
/// after `timeout` with a timeout failure.
pub fn read_answer(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    timeout: Duration,
    end: &End,
    tally: &Tally,
) -> Result<Answer, Broke> {
    stream
        .set_read_timeout(Some(SLICE))
        .map_err(|e| Broke::Failed(Failure::of_io(&e)))?;
    let give_up = Instant::now() + timeout;
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    let mut read_some = |stream: &mut TcpStream, buf: &mut Vec<u8>| -> Result<(), Broke> {
        loop {
            if end.reached() {
                return Err(Broke::End);
            }
            if Instant::now() >= give_up {
                return Err(Broke::Failed(Failure::Timeout));
            }
            match stream.read(&mut chunk) {
                Ok(0) => return Err(Broke::Closed),
                Ok(n) => {
                    tally.received(n);
                    buf.extend_from_slice(&chunk[..n]);
                    return Ok(());
                }
                Err(e) if is_slice_over(&e) => {}
                Err(e) => return Err(Broke::Failed(Failure::of_io(&e))),
            }
        }
    };
    let (status, framing, close, head_len) = loop {
        let parsed = match parse_head(buf, false) {
            Ok(Some(head)) => Some((head.status, head.framing, head.close, head.len)),
            Ok(None) if buf.len() < MAX_HEAD => None,
            _ => {
                return Ok(Answer {
                    status: 0,
                    reusable: false,
                })
            }
        };
        if let Some(head) = parsed {
            break head;
        }
        // An answer cut short by a close still counts as what it was.
        if let Err(broke) = read_some(stream, buf) {
            if broke == Broke::Closed && !buf.is_empty() {
                return Ok(Answer {
                    status: status_of_line(buf),
                    reusable: false,
                });
            }
            return Err(broke);
        }
    };
    let body = match framing {
        Framing::Empty => Some(0),
        Framing::ContentLength(n) => Some(n),
        Framing::Chunked | Framing::UntilClose => None,
    };
    let Some(body) = body.filter(|_| !close) else {
        return Ok(Answer {
            status,
            reusable: false,
        });
    };
    // Skip the body; bytes past it (an answer nobody asked for) are dropped.
    let mut have = (buf.len() - head_len) as u64;
    while have < body {
        buf.clear();
        match read_some(stream, buf) {
            Ok(()) => have += buf.len() as u64,
            Err(_) => {
                return Ok(Answer {
                    status,
                    reusable: false,
                })
            }
        }
    }
    Ok(Answer {
        status,
        reusable: true,
    })
}

/// The status code of an answer's first line (`HTTP/1.x NNN`), 0 when it
/// has none: for answers cut short before their head ended.
pub fn status_of_line(buf: &[u8]) -> u16 {
    let line = buf.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let mut parts = line.split(|&b| b == b' ');
    match (parts.next(), parts.next()) {
        (Some(v), Some(code)) if v.starts_with(b"HTTP/1.") && code.len() >= 3 => {
            std::str::from_utf8(&code[..3])
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0)
        }
        _ => 0,
    }
}

/// A blocking call that returned because its slice ran out, not because of
/// the peer.
fn is_slice_over(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Sleeps for `d` or until the attack's end, whichever comes first.
pub fn pause(d: Duration, end: &End) {
    let until = Instant::now() + d;
    while !end.reached() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(SLICE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_cut_short() {
        assert_eq!(status_of_line(b"HTTP/1.1 400 Bad"), 400);
        assert_eq!(status_of_line(b"HTTP/1.0 431\r\n"), 431);
        assert_eq!(status_of_line(b"HTTP/1.1 4"), 0);
        assert_eq!(status_of_line(b"garbage here"), 0);
        assert_eq!(status_of_line(b""), 0);
    }

    /// A whole request in one piece (`usize::MAX`) that the socket takes
    /// in parts: the second write starts where the first stopped (the
    /// piece's end once overflowed, and the attacker panicked).
    #[test]
    fn a_request_the_socket_takes_in_parts_goes_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            // Slow enough that writes time out part-way.
            std::thread::sleep(Duration::from_millis(300));
            let mut all = Vec::new();
            std::io::Read::read_to_end(&mut s, &mut all).unwrap();
            all.len()
        });
        let mut stream = TcpStream::connect(addr).unwrap();
        let stop = AtomicBool::new(false);
        let end = End {
            deadline: Instant::now() + Duration::from_secs(30),
            stop: &stop,
        };
        let tally = Tally::default();
        let buf = vec![b'x'; 16 << 20];
        assert!(write_pieces(&mut stream, &buf, usize::MAX, Duration::ZERO, &end, &tally).is_ok());
        drop(stream);
        assert_eq!(reader.join().unwrap(), buf.len());
    }

    #[test]
    fn the_end_is_the_deadline_or_the_flag() {
        let stop = AtomicBool::new(false);
        let end = End {
            deadline: Instant::now() + Duration::from_secs(60),
            stop: &stop,
        };
        assert!(!end.reached());
        stop.store(true, Ordering::Relaxed);
        assert!(end.reached());
        let stop = AtomicBool::new(false);
        let past = End {
            deadline: Instant::now(),
            stop: &stop,
        };
        assert!(past.reached());
    }
}
