//! A small blocking WebSocket client for `verify`'s ws checks: exact control
//! over every frame sent (masked or not, fragmented, control frames between
//! fragments), frames read one at a time with the engine's codec, and every
//! exchange bounded by the client's timeout.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use netbench_engine::ws::frame::{self, FrameError, Opcode, Sender};
use netbench_engine::ws::handshake::{self, HandshakeError};

use crate::client::Client;
use crate::rng::SplitMix64;

#[derive(Debug, thiserror::Error)]
pub enum WsError {
    #[error("could not connect: {0}")]
    Connect(io::Error),
    #[error(
        "not sent: an earlier request to this server got no complete answer within the timeout"
    )]
    GaveUp,
    #[error("could not send: {0}")]
    Write(io::Error),
    #[error("reading failed: {0}")]
    Read(io::Error),
    #[error("the upgrade failed: {0}")]
    Handshake(HandshakeError),
    #[error("the server sent a bad frame: {0}")]
    Frame(FrameError),
    #[error("the server sent a frame of {0} bytes; messages are at most 64 KiB")]
    TooLong(u64),
    #[error("the connection closed")]
    Closed,
    #[error("the server broke the message framing: {0}")]
    Sequence(&'static str),
    #[error("nothing within {0:?} (raise --timeout if the server is slow but right)")]
    TimedOut(Duration),
}

/// One frame as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    pub opcode: Opcode,
    pub payload: Vec<u8>,
}

/// The longest frame the checks accept: the contract's largest message.
const MAX_FRAME: u64 = 64 * 1024;

/// One upgraded connection.
pub struct WsClient {
    stream: TcpStream,
    /// Bytes read past the last frame (or the 101's head).
    buf: Vec<u8>,
    timeout: Duration,
    rng: SplitMix64,
}

impl WsClient {
    /// Connects to `client`'s server and upgrades at `path`; keys and masks
    /// come from `seed`, so a failing run can be replayed.
    pub fn connect(client: &Client, path: &str, seed: u64) -> Result<WsClient, WsError> {
        if client.gave_up() {
            return Err(WsError::GaveUp);
        }
        let stream =
            TcpStream::connect_timeout(&client.addr, client.timeout).map_err(WsError::Connect)?;
        stream.set_nodelay(true).map_err(WsError::Connect)?;
        let mut ws = WsClient {
            stream,
            buf: Vec::new(),
            timeout: client.timeout,
            rng: SplitMix64::new(seed),
        };
        let mut random = [0u8; 16];
        ws.fill(&mut random);
        let key = handshake::key_from(random);
        let mut req = Vec::new();
        handshake::write_upgrade_request(&mut req, path, &client.host, &key);
        ws.stream.write_all(&req).map_err(WsError::Write)?;
        let accept = handshake::accept_for(&key);
        let deadline = Instant::now() + ws.timeout;
        loop {
            match handshake::check_answer(&ws.buf, &accept) {
                Ok(Some(n)) => {
                    ws.buf.drain(..n);
                    return Ok(ws);
                }
                Ok(None) => {}
                Err(e) => return Err(WsError::Handshake(e)),
            }
            if ws.read_more(deadline)? == 0 {
                return Err(WsError::Handshake(HandshakeError::Closed));
            }
        }
    }

    /// Random bytes from the client's seeded generator.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let r = self.rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }

    /// Sends one frame, masked with a fresh key unless `masked` is false
    /// (which the contract says a server must refuse).
    pub fn send(
        &mut self,
        fin: bool,
        opcode: Opcode,
        payload: &[u8],
        masked: bool,
    ) -> Result<(), WsError> {
        let mask = masked.then(|| {
            let mut m = [0u8; 4];
            self.fill(&mut m);
            m
        });
        let mut out = Vec::with_capacity(payload.len() + frame::MAX_HEAD);
        frame::write_frame(&mut out, fin, opcode, payload, mask);
        self.stream.write_all(&out).map_err(WsError::Write)
    }

    /// The next frame, within the timeout.
    pub fn frame(&mut self) -> Result<Frame, WsError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(head) =
                frame::parse_head(&self.buf, Sender::Server).map_err(WsError::Frame)?
            {
                if head.len > MAX_FRAME {
                    return Err(WsError::TooLong(head.len));
                }
                let end = head.head_len + head.len as usize;
                if self.buf.len() >= end {
                    let payload = self.buf[head.head_len..end].to_vec();
                    self.buf.drain(..end);
                    return Ok(Frame {
                        fin: head.fin,
                        opcode: head.opcode,
                        payload,
                    });
                }
            }
            if self.read_more(deadline)? == 0 {
                return Err(WsError::Closed);
            }
        }
    }

    /// The next whole message (its type and payload), joined from its
    /// fragments. Pings on the way are answered; every control frame seen is
    /// handed to `control` too, in order.
    pub fn message(
        &mut self,
        mut control: impl FnMut(&Frame),
    ) -> Result<(Opcode, Vec<u8>), WsError> {
        let mut message: Option<(Opcode, Vec<u8>)> = None;
        loop {
            let f = self.frame()?;
            match f.opcode {
                Opcode::Ping => {
                    self.send(true, Opcode::Pong, &f.payload, true)?;
                    control(&f);
                    continue;
                }
                Opcode::Pong => {
                    control(&f);
                    continue;
                }
                Opcode::Close => {
                    control(&f);
                    return Err(WsError::Closed);
                }
                Opcode::Continuation => match message.as_mut() {
                    Some((_, data)) => data.extend_from_slice(&f.payload),
                    None => {
                        return Err(WsError::Sequence(
                            "a continuation frame with no message to continue",
                        ))
                    }
                },
                opcode => {
                    if message.is_some() {
                        return Err(WsError::Sequence("a new message inside a fragmented one"));
                    }
                    message = Some((opcode, f.payload));
                }
            }
            if f.fin {
                return Ok(message.expect("a data frame came"));
            }
        }
    }

    /// Whether the server closes the connection within the timeout (a reset
    /// counts as closed); frames still arriving are handed to `seen`. With
    /// `answer_close`, a close from the server gets its close back, as a
    /// client finishing the close handshake would: a server may wait for it
    /// before it closes.
    pub fn closes(
        &mut self,
        answer_close: bool,
        mut seen: impl FnMut(&Frame),
    ) -> Result<bool, WsError> {
        loop {
            match self.frame() {
                Ok(f) => {
                    if answer_close && f.opcode == Opcode::Close {
                        let code = f.payload.get(..2).unwrap_or(&[]).to_vec();
                        // The server may be gone already; that is its right.
                        let _ = self.send(true, Opcode::Close, &code, true);
                    }
                    seen(&f)
                }
                Err(WsError::Closed) => return Ok(true),
                Err(WsError::Read(e)) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Ok(true)
                }
                Err(WsError::TimedOut(_)) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads once into the buffer before `deadline`; 0 at the end of the
    /// stream.
    fn read_more(&mut self, deadline: Instant) -> Result<usize, WsError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(WsError::TimedOut(self.timeout));
        }
        self.stream
            .set_read_timeout(Some(left))
            .map_err(WsError::Read)?;
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(WsError::TimedOut(self.timeout))
            }
            Err(e) => Err(WsError::Read(e)),
        }
    }
}

impl Drop for WsClient {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}
