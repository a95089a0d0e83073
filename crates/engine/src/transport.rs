//! The bytes of a connection that every protocol shares: the output queue
//! and its flush, and the read loop that hands what arrives to a protocol's
//! parser. HTTP/1.1 (`conn.rs`) and WebSocket (`ws/conn.rs`) keep only what
//! is theirs (what to queue, what the bytes mean); TLS (`tls.rs`) reads the
//! socket through the same loop and feeds rustls. None of them touches a
//! socket: the backend passes a `Read` and a `Write`.

use std::io::{self, Read, Write};

use crate::error_kind::ErrorKind;

/// Reads per readiness turn before a connection yields to the others: a
/// server that never stops sending cannot starve the rest.
pub(crate) const READS_PER_TURN: usize = 4;

/// A connection's bytes to send: what was queued, and how much of it the
/// socket took. Bounded by its users: the worker queues the next request
/// only once this is written.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    buf: Vec<u8>,
    pos: usize,
}

impl Outbox {
    /// The queue to append to; what was written already is dropped first,
    /// so the buffer's capacity is reused and it never grows with the run.
    pub(crate) fn queue(&mut self) -> &mut Vec<u8> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        &mut self.buf
    }

    /// Everything queued was written.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// What is still to be written.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Once everything is written, gives back a buffer that grew past
    /// `keep` bytes (a large body's), so an idle connection holds little.
    pub(crate) fn give_back_over(&mut self, keep: usize) {
        if self.is_empty() && self.buf.capacity() > keep {
            *self = Outbox::default();
        }
    }

    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }

    /// Writes until everything queued is written or the socket is full;
    /// returns the bytes written.
    pub(crate) fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        let mut written = 0;
        while self.pos < self.buf.len() {
            match io.write(&self.buf[self.pos..]) {
                Ok(0) => return Err(ErrorKind::Write),
                Ok(n) => {
                    self.pos += n;
                    written += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(ErrorKind::Write),
            }
        }
        Ok(written)
    }
}

/// How reading left the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// Still usable; nothing more to read for now.
    Open,
    /// Still usable, and the socket may hold more: the read budget of this
    /// turn ran out. No new readiness edge will come for it, so the caller
    /// must call again on a later turn.
    More,
    /// The server closed its side. Requests still in flight failed early.
    Eof,
    /// The connection is broken; the caller fails what is in flight.
    Failed(ErrorKind),
}

/// What a protocol made of a piece of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// Taken; more may come.
    More,
    /// The peer ended the conversation (a WebSocket close frame).
    Closed,
}

/// How a read turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    Done(ReadOutcome),
    /// The stream ended: the protocol decides what that means (a body
    /// without a length ends here; a handshake under way failed).
    Eof,
}

/// Reads what `io` has into `scratch` and hands each piece to `feed`, at
/// most [`READS_PER_TURN`] reads (then `More`). A read shorter than
/// `scratch` means the socket is drained, which saves the read that would
/// only return EAGAIN, unless the peer already closed (`peer_closed`): then
/// no new readiness edge will come, so reading goes on to the end.
pub(crate) fn read_turn<R: Read>(
    io: &mut R,
    peer_closed: bool,
    scratch: &mut [u8],
    bytes_read: &mut u64,
    mut feed: impl FnMut(&[u8]) -> Result<Fed, ErrorKind>,
) -> Turn {
    let mut reads = 0;
    loop {
        if reads == READS_PER_TURN {
            return Turn::Done(ReadOutcome::More);
        }
        reads += 1;
        match io.read(scratch) {
            Ok(0) => return Turn::Eof,
            Ok(n) => {
                *bytes_read += n as u64;
                match feed(&scratch[..n]) {
                    Ok(Fed::More) => {}
                    Ok(Fed::Closed) => return Turn::Done(ReadOutcome::Eof),
                    Err(kind) => return Turn::Done(ReadOutcome::Failed(kind)),
                }
                if n < scratch.len() && !peer_closed {
                    return Turn::Done(ReadOutcome::Open);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Turn::Done(ReadOutcome::Open)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Turn::Done(ReadOutcome::Failed(ErrorKind::Read)),
        }
    }
}

/// [`read_turn`] for input used in whole units (TLS records): `scratch`
/// starts with `kept` bytes from earlier, `feed` gets everything not yet
/// used and says how much it used, and what it left (the start of a unit)
/// moves to the front for the next read; `kept` ends as its length. Not
/// `read_turn`'s body: cleartext's hot loop measured ~8% dearer per
/// request through it (bench, 2-byte answers on io_uring).
pub(crate) fn read_turn_keeping<R: Read>(
    io: &mut R,
    peer_closed: bool,
    scratch: &mut [u8],
    kept: &mut usize,
    bytes_read: &mut u64,
    mut feed: impl FnMut(&mut [u8]) -> Result<(Fed, usize), ErrorKind>,
) -> Turn {
    let mut reads = 0;
    loop {
        if reads == READS_PER_TURN {
            return Turn::Done(ReadOutcome::More);
        }
        if *kept >= scratch.len() {
            // A unit larger than the buffer: the peer's framing is wrong.
            return Turn::Done(ReadOutcome::Failed(ErrorKind::Malformed));
        }
        reads += 1;
        let room = scratch.len() - *kept;
        match io.read(&mut scratch[*kept..]) {
            Ok(0) => return Turn::Eof,
            Ok(n) => {
                *bytes_read += n as u64;
                let have = *kept + n;
                let (fed, used) = match feed(&mut scratch[..have]) {
                    Ok(done) => done,
                    Err(kind) => return Turn::Done(ReadOutcome::Failed(kind)),
                };
                let used = used.min(have);
                scratch.copy_within(used..have, 0);
                *kept = have - used;
                if fed == Fed::Closed {
                    return Turn::Done(ReadOutcome::Eof);
                }
                if n < room && !peer_closed {
                    return Turn::Done(ReadOutcome::Open);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Turn::Done(ReadOutcome::Open)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Turn::Done(ReadOutcome::Failed(ErrorKind::Read)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket that takes `room` bytes, then is full.
    struct Full {
        taken: Vec<u8>,
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.taken.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_socket_keeps_the_rest_and_the_queue_reuses_its_buffer() {
        let mut out = Outbox::default();
        out.queue().extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let mut sock = Full {
            taken: Vec::new(),
            room: 5,
        };
        assert_eq!(out.flush(&mut sock), Ok(5));
        assert_eq!(out.pending(), b" HTTP/1.1\r\n\r\n");
        assert!(!out.is_empty());
        sock.room = 100;
        assert_eq!(out.flush(&mut sock), Ok(13));
        assert!(out.is_empty());
        let capacity = out.buf.capacity();
        out.queue().extend_from_slice(b"next");
        assert_eq!(
            (out.pending(), out.buf.capacity()),
            (&b"next"[..], capacity)
        );
    }

    /// Reads `chunks` one per call, then WouldBlock (or the end).
    struct Chunks(Vec<&'static [u8]>, bool);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return if self.1 {
                    Ok(0)
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
                };
            }
            let c = self.0.remove(0);
            buf[..c.len()].copy_from_slice(c);
            Ok(c.len())
        }
    }

    #[test]
    fn a_turn_stops_at_a_short_read_the_budget_or_the_end() {
        let mut scratch = [0u8; 4];
        let mut fed = Vec::new();
        let mut read = 0;
        let mut io = Chunks(vec![b"abcd", b"ef"], false);
        let t = read_turn(&mut io, false, &mut scratch, &mut read, |b| {
            fed.extend_from_slice(b);
            Ok(Fed::More)
        });
        assert_eq!(
            (t, &fed[..], read),
            (Turn::Done(ReadOutcome::Open), &b"abcdef"[..], 6)
        );

        let mut io = Chunks(vec![b"aaaa"; 6], false);
        let t = read_turn(&mut io, false, &mut scratch, &mut read, |_| Ok(Fed::More));
        assert_eq!(t, Turn::Done(ReadOutcome::More));

        // Closed: short reads go on to the end.
        let mut io = Chunks(vec![b"ab"], true);
        let t = read_turn(&mut io, true, &mut scratch, &mut read, |_| Ok(Fed::More));
        assert_eq!(t, Turn::Eof);

        let mut io = Chunks(vec![b"ab"], false);
        let t = read_turn(&mut io, false, &mut scratch, &mut read, |_| {
            Err(ErrorKind::Malformed)
        });
        assert_eq!(t, Turn::Done(ReadOutcome::Failed(ErrorKind::Malformed)));
        let mut io = Chunks(vec![b"ab"], false);
        let t = read_turn(&mut io, false, &mut scratch, &mut read, |_| Ok(Fed::Closed));
        assert_eq!(t, Turn::Done(ReadOutcome::Eof));
    }
}
