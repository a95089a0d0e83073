//! The per-connection WebSocket state machine: the upgrade request and the
//! check of its `101`, then one message at a time: a fresh random payload
//! sent masked, its echo (in one frame or several) compared byte for byte as
//! it arrives, a server's most recent ping answered with a pong, a close ending the
//! connection. Generic over `Read`/`Write`; it never creates, configures or
//! closes a socket, like the HTTP one in `conn.rs`.

use std::io::{Read, Write};

use super::frame::{self, FrameHead, Opcode, Sender, MAX_CONTROL_PAYLOAD, MAX_HEAD};
use super::handshake;
use super::Rng;
use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::ErrorKind;
use crate::proto::{ConnPlan, Protocol};
use crate::transport::{read_turn, Fed, Outbox, ReadOutcome, Turn};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No socket yet, or one still connecting.
    Down,
    /// The upgrade request is queued or sent (since `since`); the `101` is
    /// awaited.
    Handshake { since: u64 },
    /// Messages may flow.
    Open,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadState {
    /// Between frames; `head[..head_len]` holds a head split across reads.
    Head,
    /// Inside a frame of the echo: `left` payload bytes still to come.
    Data { left: u64, fin: bool },
    /// Inside a control frame, its payload gathered into `control`.
    Control { opcode: Opcode, left: usize },
}

/// What reading found besides answers.
enum Flow {
    Go,
    /// The server sent a close frame: the connection is over.
    Closed,
}

#[derive(Debug)]
pub(crate) struct WsConn {
    rng: Rng,
    message_size: usize,
    binary: bool,
    stage: Stage,
    /// The `Sec-WebSocket-Accept` the current handshake's key calls for.
    accept: [u8; 28],
    /// Bytes not yet written (the upgrade, a message, a pong). Bounded: the
    /// worker queues the next message only once this is written, and at most
    /// one pong is in it.
    out: Outbox,
    /// The payload of the one pong still to be queued: the most recent
    /// ping's. RFC 6455 §5.5.3 lets an endpoint answer only the most recent
    /// ping, so a server that floods pings and never reads costs one pong,
    /// not a pile of them (issue 27). Framed into `out` once `out` is
    /// written.
    pong: [u8; MAX_CONTROL_PAYLOAD],
    pong_len: Option<usize>,
    /// Answer bytes that do not yet make a whole `101` head.
    answer: Vec<u8>,
    head: [u8; MAX_HEAD],
    head_len: usize,
    read: ReadState,
    /// The message in flight, at most one (no pipelining).
    inflight: Option<InFlight>,
    /// Its payload as sent, before masking: the echo must equal it. Reused
    /// for every message, so sending allocates nothing once it has grown.
    sent: Vec<u8>,
    /// Echo bytes compared so far.
    echo_at: usize,
    /// The echo's first frame came: only continuations may follow.
    echo_started: bool,
    /// The echo differs (bytes or message type); it is read to its end so
    /// the next message starts in step.
    echo_wrong: bool,
    control: [u8; MAX_CONTROL_PAYLOAD],
    control_len: usize,
}

impl WsConn {
    pub(crate) fn new(message_size: usize, binary: bool, seed: u64) -> Self {
        WsConn {
            rng: Rng::new(seed),
            message_size,
            binary,
            stage: Stage::Down,
            accept: [0; 28],
            out: Outbox::default(),
            pong: [0; MAX_CONTROL_PAYLOAD],
            pong_len: None,
            answer: Vec::new(),
            head: [0; MAX_HEAD],
            head_len: 0,
            read: ReadState::Head,
            inflight: None,
            sent: Vec::with_capacity(message_size),
            echo_at: 0,
            echo_started: false,
            echo_wrong: false,
            control: [0; MAX_CONTROL_PAYLOAD],
            control_len: 0,
        }
    }

    /// Appends a frame to what is queued, dropping what was written already.
    fn queue(&mut self) -> &mut Vec<u8> {
        self.out.queue()
    }

    fn on_eof(&self) -> ReadOutcome {
        match self.stage {
            Stage::Handshake { .. } => ReadOutcome::Failed(ErrorKind::WsHandshake),
            _ => ReadOutcome::Eof,
        }
    }

    fn feed<S: AnswerSink>(
        &mut self,
        data: &[u8],
        now: u64,
        sink: &mut S,
    ) -> Result<Flow, ErrorKind> {
        if self.stage == Stage::Open {
            return self.frames(data, now, sink);
        }
        // The handshake: the answer head, then perhaps frames already.
        let whole = self.answer.is_empty();
        if !whole {
            self.answer.extend_from_slice(data);
        }
        let buf = if whole { data } else { &self.answer[..] };
        match handshake::check_answer(buf, &self.accept) {
            Ok(Some(n)) => {
                self.stage = Stage::Open;
                let rest = std::mem::take(&mut self.answer);
                let flow = if whole {
                    self.frames(&data[n..], now, sink)
                } else {
                    self.frames(&rest[n..], now, sink)
                };
                self.answer = rest;
                self.answer.clear();
                flow
            }
            Ok(None) => {
                if whole {
                    self.answer.extend_from_slice(data);
                }
                Ok(Flow::Go)
            }
            Err(_) => Err(ErrorKind::WsHandshake),
        }
    }

    /// Consumes frames from `buf`: echo bytes compared, control frames acted
    /// on, a head split across reads kept for the next.
    fn frames<S: AnswerSink>(
        &mut self,
        buf: &[u8],
        now: u64,
        sink: &mut S,
    ) -> Result<Flow, ErrorKind> {
        let mut pos = 0;
        loop {
            match self.read {
                ReadState::Head => {
                    if pos == buf.len() {
                        return Ok(Flow::Go);
                    }
                    let Some(head) = self.next_head(buf, &mut pos)? else {
                        return Ok(Flow::Go);
                    };
                    self.start_frame(head)?;
                }
                ReadState::Data { left, fin } => {
                    let take = left.min((buf.len() - pos) as u64) as usize;
                    let end = self.echo_at + take;
                    // start_frame made sure the frame fits in what was sent.
                    if buf[pos..pos + take] != self.sent[self.echo_at..end] {
                        self.echo_wrong = true;
                    }
                    self.echo_at = end;
                    pos += take;
                    let left = left - take as u64;
                    if left > 0 {
                        self.read = ReadState::Data { left, fin };
                        return Ok(Flow::Go);
                    }
                    self.read = ReadState::Head;
                    if fin {
                        self.finish_message(now, sink);
                    }
                }
                ReadState::Control { opcode, left } => {
                    let take = left.min(buf.len() - pos);
                    self.control[self.control_len..self.control_len + take]
                        .copy_from_slice(&buf[pos..pos + take]);
                    self.control_len += take;
                    pos += take;
                    if left > take {
                        self.read = ReadState::Control {
                            opcode,
                            left: left - take,
                        };
                        return Ok(Flow::Go);
                    }
                    self.read = ReadState::Head;
                    match opcode {
                        Opcode::Ping => {
                            // Replaces a pong not yet queued: only the most
                            // recent ping is answered.
                            let len = self.control_len;
                            self.pong[..len].copy_from_slice(&self.control[..len]);
                            self.pong_len = Some(len);
                        }
                        Opcode::Close => return Ok(Flow::Closed),
                        // An unasked pong (a heartbeat) needs nothing.
                        _ => {}
                    }
                }
            }
        }
    }

    /// The next frame head from `buf` at `pos`, joining a head split across
    /// reads; `None` when `buf` ends inside it.
    fn next_head(&mut self, buf: &[u8], pos: &mut usize) -> Result<Option<FrameHead>, ErrorKind> {
        let had = self.head_len;
        let take = (MAX_HEAD - had).min(buf.len() - *pos);
        let parsed = if had == 0 {
            frame::parse_head(&buf[*pos..], Sender::Server)
        } else {
            self.head[had..had + take].copy_from_slice(&buf[*pos..*pos + take]);
            frame::parse_head(&self.head[..had + take], Sender::Server)
        };
        match parsed {
            Ok(Some(head)) => {
                *pos += head.head_len - had;
                self.head_len = 0;
                Ok(Some(head))
            }
            Ok(None) => {
                // Fewer than MAX_HEAD bytes, or the parse would have ended.
                self.head[had..had + take].copy_from_slice(&buf[*pos..*pos + take]);
                self.head_len = had + take;
                *pos += take;
                Ok(None)
            }
            Err(_) => Err(ErrorKind::WsProtocol),
        }
    }

    fn start_frame(&mut self, head: FrameHead) -> Result<(), ErrorKind> {
        match head.opcode {
            Opcode::Text | Opcode::Binary => {
                // A message nobody asked for, or one starting inside the
                // echo, would be taken for (part of) the next echo.
                if self.inflight.is_none() || self.echo_started {
                    return Err(ErrorKind::WsProtocol);
                }
                self.echo_started = true;
                if (head.opcode == Opcode::Binary) != self.binary {
                    self.echo_wrong = true;
                }
            }
            Opcode::Continuation if !self.echo_started => return Err(ErrorKind::WsProtocol),
            Opcode::Continuation => {}
            opcode => {
                self.control_len = 0;
                self.read = ReadState::Control {
                    opcode,
                    left: head.len as usize,
                };
                return Ok(());
            }
        }
        if self.echo_at as u64 + head.len > self.sent.len() as u64 {
            // Longer than what was sent: it cannot match, and reading on
            // through a frame of any announced length would only wait.
            return Err(ErrorKind::WsEchoMismatch);
        }
        self.read = ReadState::Data {
            left: head.len,
            fin: head.fin,
        };
        Ok(())
    }

    fn finish_message<S: AnswerSink>(&mut self, now: u64, sink: &mut S) {
        let outcome = if self.echo_wrong || self.echo_at != self.sent.len() {
            Err(ErrorKind::WsEchoMismatch)
        } else {
            Ok(())
        };
        self.echo_at = 0;
        self.echo_started = false;
        self.echo_wrong = false;
        if let Some(req) = self.inflight.take() {
            sink.answer(&req, outcome, now);
        }
    }
}

impl Protocol for WsConn {
    fn for_plan(plan: &ConnPlan<'_>, seed: u64) -> Self {
        let ws = plan
            .ws
            .expect("a WebSocket connection needs a WebSocket plan");
        WsConn::new(ws.message_size, ws.binary, seed)
    }

    fn on_connected(&mut self, plan: &ConnPlan<'_>, now: u64) {
        let ws = plan
            .ws
            .expect("a WebSocket connection needs a WebSocket plan");
        let key = handshake::key_from(self.rng.bytes16());
        self.accept = handshake::accept_for(&key);
        handshake::write_upgrade_request(self.queue(), &ws.path, &ws.host, &key);
        self.stage = Stage::Handshake { since: now };
    }

    fn set_up(&self) -> bool {
        self.stage == Stage::Open
    }

    fn in_flight(&self) -> usize {
        usize::from(self.inflight.is_some())
    }

    fn oldest_sent(&self) -> Option<u64> {
        match (self.inflight, self.stage) {
            (Some(req), _) => Some(req.sent_ns),
            (None, Stage::Handshake { since }) => Some(since),
            _ => None,
        }
    }

    fn closing(&self) -> bool {
        false
    }

    fn has_output(&self) -> bool {
        !self.out.is_empty() || self.pong_len.is_some()
    }

    fn enqueue(&mut self, req: InFlight, _plan: &ConnPlan<'_>) {
        debug_assert!(self.inflight.is_none() && self.stage == Stage::Open);
        // A fresh payload each time, so no answer can come from a cache.
        self.sent.resize(self.message_size, 0);
        if self.binary {
            self.rng.fill_bytes(&mut self.sent);
        } else {
            self.rng.fill_letters(&mut self.sent);
        }
        let mask = self.rng.mask();
        let opcode = if self.binary {
            Opcode::Binary
        } else {
            Opcode::Text
        };
        let sent = std::mem::take(&mut self.sent);
        frame::write_frame(self.queue(), true, opcode, &sent, Some(mask));
        self.sent = sent;
        self.inflight = Some(req);
    }

    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        let mut written = self.out.flush(io)?;
        // Whole frames only: the pong goes out after what was queued.
        while self.out.is_empty() {
            let Some(len) = self.pong_len.take() else {
                break;
            };
            let mask = self.rng.mask();
            let pong = self.pong;
            frame::write_frame(self.queue(), true, Opcode::Pong, &pong[..len], Some(mask));
            written += self.out.flush(io)?;
        }
        Ok(written)
    }

    fn on_readable<R: Read, S: AnswerSink>(
        &mut self,
        io: &mut R,
        peer_closed: bool,
        scratch: &mut [u8],
        _plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome {
        let turn = read_turn(io, peer_closed, scratch, bytes_read, |data| {
            match self.feed(data, now, sink)? {
                Flow::Go => Ok(Fed::More),
                Flow::Closed => Ok(Fed::Closed),
            }
        });
        match turn {
            Turn::Done(outcome) => outcome,
            Turn::Eof => self.on_eof(),
        }
    }

    fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        if let Some(req) = self.inflight.take() {
            sink.answer(&req, Err(kind), now);
        }
        self.reset();
    }

    fn reset(&mut self) {
        debug_assert!(self.inflight.is_none());
        self.stage = Stage::Down;
        self.out.clear();
        self.pong_len = None;
        self.answer.clear();
        self.head_len = 0;
        self.read = ReadState::Head;
        self.echo_at = 0;
        self.echo_started = false;
        self.echo_wrong = false;
        self.control_len = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::io;

    use super::*;
    use crate::plan::WsPlan;

    #[derive(Default)]
    struct Answers(Vec<Result<(), ErrorKind>>);

    impl AnswerSink for Answers {
        fn answer(&mut self, _req: &InFlight, outcome: Result<(), ErrorKind>, _now: u64) {
            self.0.push(outcome);
        }
    }

    /// A socket that hands out scripted reads, then WouldBlock or EOF.
    struct Script {
        reads: VecDeque<Vec<u8>>,
        eof: bool,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.reads.pop_front() {
                Some(mut chunk) => {
                    // A chunk longer than the buffer is read in pieces.
                    let n = chunk.len().min(buf.len());
                    buf[..n].copy_from_slice(&chunk[..n]);
                    if n < chunk.len() {
                        self.reads.push_front(chunk.split_off(n));
                    }
                    Ok(n)
                }
                None if self.eof => Ok(0),
                None => Err(io::ErrorKind::WouldBlock.into()),
            }
        }
    }

    fn plan(message_size: usize, binary: bool) -> WsPlan {
        WsPlan {
            path: "/ws".into(),
            host: "127.0.0.1:1".into(),
            message_size,
            binary,
        }
    }

    /// What the state machine reads of a run with `ws`.
    fn cp(ws: &WsPlan) -> ConnPlan<'_> {
        ConnPlan {
            pipeline: 1,
            requests: &[],
            ws: Some(ws),
            tls: None,
            session: None,
            h2: &[],
        }
    }

    fn req() -> InFlight {
        InFlight {
            template: 0,
            intended_ns: 0,
            sent_ns: 7,
            measured: true,
        }
    }

    /// The server's 101 for the upgrade request `c` has queued.
    fn switching(c: &WsConn) -> Vec<u8> {
        let text = String::from_utf8(c.out.pending().to_vec()).unwrap();
        let key = text
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .unwrap();
        let accept = handshake::accept_for(key.as_bytes());
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            std::str::from_utf8(&accept).unwrap()
        )
        .into_bytes()
    }

    fn read(c: &mut WsConn, p: &WsPlan, reads: Vec<Vec<u8>>, eof: bool) -> (ReadOutcome, Answers) {
        let mut sock = Script {
            reads: reads.into(),
            eof,
        };
        let mut sink = Answers::default();
        let mut scratch = [0u8; 256];
        let mut outcome = ReadOutcome::Open;
        let mut n = 0;
        for _ in 0..100_000 {
            outcome = c.on_readable(&mut sock, eof, &mut scratch, &cp(p), 0, &mut sink, &mut n);
            if !matches!(outcome, ReadOutcome::Open | ReadOutcome::More)
                || (sock.reads.is_empty() && !sock.eof)
            {
                break;
            }
        }
        (outcome, sink)
    }

    /// A connection past its handshake, with one message in flight.
    fn open_with_message(p: &WsPlan) -> WsConn {
        let mut c = WsConn::for_plan(&cp(p), 42);
        c.on_connected(&cp(p), 5);
        assert!(!c.set_up());
        assert_eq!(
            c.oldest_sent(),
            Some(5),
            "the handshake times out like a request"
        );
        let answer = switching(&c);
        c.flush(&mut Vec::new()).unwrap();
        let (outcome, answers) = read(&mut c, p, vec![answer], false);
        assert_eq!(outcome, ReadOutcome::Open);
        assert!(answers.0.is_empty());
        assert!(c.set_up());
        c.enqueue(req(), &cp(p));
        c
    }

    /// The frame the client queued, unmasked: its head and payload.
    fn sent_frame(c: &WsConn) -> (FrameHead, Vec<u8>) {
        client_frame(c.out.pending())
    }

    /// The first client frame in `bytes`, unmasked.
    fn client_frame(bytes: &[u8]) -> (FrameHead, Vec<u8>) {
        let head = frame::parse_head(bytes, Sender::Client).unwrap().unwrap();
        let end = head.head_len + head.len as usize;
        let mut payload = bytes[head.head_len..end].to_vec();
        frame::apply_mask(&mut payload, head.mask.unwrap(), 0);
        (head, payload)
    }

    /// What a flush writes when the socket takes everything.
    fn flushed(c: &mut WsConn) -> Vec<u8> {
        let mut wire = Vec::new();
        c.flush(&mut wire).unwrap();
        wire
    }

    /// A socket whose send buffer is full: nothing is ever taken.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::WouldBlock.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn server_frame(fin: bool, opcode: Opcode, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        frame::write_frame(&mut out, fin, opcode, payload, None);
        out
    }

    #[test]
    fn a_message_goes_out_masked_and_its_echo_passes() {
        let p = plan(300, false);
        let mut c = open_with_message(&p);
        let (head, payload) = sent_frame(&c);
        assert!(head.fin && head.opcode == Opcode::Text && head.len == 300);
        assert!(payload.iter().all(u8::is_ascii_alphabetic));
        assert_eq!(payload, c.sent);
        assert_eq!(c.oldest_sent(), Some(7));
        // The echo split at every awkward place: inside the head, the payload.
        let echo = server_frame(true, Opcode::Text, &payload);
        let (outcome, answers) = read(
            &mut c,
            &p,
            echo.chunks(3).map(<[u8]>::to_vec).collect(),
            false,
        );
        assert_eq!(outcome, ReadOutcome::Open);
        assert_eq!(answers.0, vec![Ok(())]);
        assert_eq!(c.in_flight(), 0);

        // The next message has a fresh payload.
        c.flush(&mut Vec::new()).unwrap();
        c.enqueue(req(), &cp(&p));
        let (_, again) = sent_frame(&c);
        assert_ne!(again, payload);
    }

    #[test]
    fn a_fragmented_echo_with_a_ping_between_passes_and_the_ping_gets_its_pong() {
        let p = plan(1000, true);
        let mut c = open_with_message(&p);
        let (head, payload) = sent_frame(&c);
        assert_eq!(head.opcode, Opcode::Binary);
        c.flush(&mut Vec::new()).unwrap();
        let mut echo = server_frame(false, Opcode::Binary, &payload[..10]);
        echo.extend(server_frame(true, Opcode::Ping, b"are you there"));
        echo.extend(server_frame(false, Opcode::Continuation, &payload[10..999]));
        echo.extend(server_frame(true, Opcode::Pong, b"unasked"));
        echo.extend(server_frame(true, Opcode::Continuation, &payload[999..]));
        let (_, answers) = read(&mut c, &p, vec![echo], false);
        assert_eq!(answers.0, vec![Ok(())]);
        assert!(c.has_output());
        let (pong, body) = client_frame(&flushed(&mut c));
        assert_eq!(pong.opcode, Opcode::Pong);
        assert_eq!(body, b"are you there");
        assert!(!c.has_output());
    }

    /// Issue 27: a server that floods pings and never reads. Only the most
    /// recent ping is answered (RFC 6455 §5.5.3), so what waits to be
    /// written stays one message and one pong however many pings come.
    #[test]
    fn a_ping_flood_never_read_keeps_one_pong_waiting() {
        let p = plan(64, false);
        let mut c = open_with_message(&p);
        let bound = c.out.pending().len() + MAX_HEAD + MAX_CONTROL_PAYLOAD;
        for _ in 0..100 {
            let pings: Vec<Vec<u8>> = (0..100u8)
                .map(|i| server_frame(true, Opcode::Ping, &[i; 125]))
                .collect();
            let (outcome, _) = read(&mut c, &p, pings, false);
            assert_eq!(outcome, ReadOutcome::Open);
            assert_eq!(c.flush(&mut Full), Ok(0));
            let queued = c.out.pending().len();
            assert!(queued <= bound, "{queued} bytes queued");
        }
        // Once the server reads: the message, then one pong, the last ping's.
        let wire = flushed(&mut c);
        let (message, _) = client_frame(&wire);
        let (pong, body) = client_frame(&wire[message.head_len + message.len as usize..]);
        assert_eq!(pong.opcode, Opcode::Pong);
        assert_eq!(body, [99; 125]);
        assert_eq!(wire.len(), message.head_len + 64 + pong.head_len + 125);
    }

    #[test]
    fn a_wrong_echo_is_a_mismatch_and_the_connection_goes_on() {
        for (echo, why) in [
            (server_frame(true, Opcode::Text, &[b'x'; 64]), "other bytes"),
            (server_frame(true, Opcode::Binary, b""), "other type"),
            (server_frame(true, Opcode::Text, &[b'x'; 10]), "shorter"),
        ] {
            let p = plan(64, false);
            let mut c = open_with_message(&p);
            let echo = if why == "other type" {
                server_frame(true, Opcode::Binary, &c.sent.clone())
            } else {
                echo
            };
            let (outcome, answers) = read(&mut c, &p, vec![echo], false);
            assert_eq!(outcome, ReadOutcome::Open, "{why}");
            assert_eq!(answers.0, vec![Err(ErrorKind::WsEchoMismatch)], "{why}");
            assert!(c.set_up());
        }
    }

    #[test]
    fn a_longer_echo_fails_at_its_head() {
        let p = plan(64, false);
        let mut c = open_with_message(&p);
        let mut huge = Vec::new();
        frame::write_head(&mut huge, true, Opcode::Text, 1 << 40, None);
        let (outcome, answers) = read(&mut c, &p, vec![huge], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::WsEchoMismatch));
        assert!(answers.0.is_empty(), "the worker fails what is in flight");
        assert_eq!(c.in_flight(), 1);
    }

    #[test]
    fn protocol_errors() {
        let masked = {
            let mut out = Vec::new();
            frame::write_frame(&mut out, true, Opcode::Text, b"hi", Some([1, 2, 3, 4]));
            out
        };
        let mut twice = server_frame(false, Opcode::Text, b"a");
        twice.extend(server_frame(true, Opcode::Text, b"b"));
        for bytes in [
            masked,
            vec![0xC1, 0x00],
            vec![0x83, 0x00],
            server_frame(true, Opcode::Continuation, b"x"),
            twice,
        ] {
            let p = plan(64, false);
            let mut c = open_with_message(&p);
            let (outcome, _) = read(&mut c, &p, vec![bytes.clone()], false);
            assert_eq!(
                outcome,
                ReadOutcome::Failed(ErrorKind::WsProtocol),
                "{bytes:02x?}"
            );
        }
        // A message when none is in flight.
        let p = plan(4, false);
        let mut c = open_with_message(&p);
        let echo = server_frame(true, Opcode::Text, &c.sent.clone());
        let (_, answers) = read(&mut c, &p, vec![echo.clone()], false);
        assert_eq!(answers.0, vec![Ok(())]);
        let (outcome, _) = read(&mut c, &p, vec![echo], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::WsProtocol));
    }

    #[test]
    fn a_close_ends_the_connection() {
        let p = plan(64, false);
        let mut c = open_with_message(&p);
        let (outcome, answers) = read(
            &mut c,
            &p,
            vec![server_frame(true, Opcode::Close, &[3, 232])],
            false,
        );
        assert_eq!(outcome, ReadOutcome::Eof);
        assert!(answers.0.is_empty());
        let mut sink = Answers::default();
        c.fail_all(ErrorKind::ClosedEarly, 0, &mut sink);
        assert_eq!(sink.0, vec![Err(ErrorKind::ClosedEarly)]);
        assert!(!c.set_up());
        assert_eq!(c.oldest_sent(), None);
    }

    #[test]
    fn handshake_failures() {
        let p = plan(64, false);
        let cases: [(Vec<u8>, bool); 4] = [
            (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(), false),
            (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n".to_vec(), false),
            (b"HTTP/1.1 101 Swi".to_vec(), true),
            (Vec::new(), true),
        ];
        for (answer, eof) in cases {
            let mut c = WsConn::for_plan(&cp(&p), 1);
            c.on_connected(&cp(&p), 0);
            let (outcome, _) = read(&mut c, &p, vec![answer.clone()], eof);
            assert_eq!(
                outcome,
                ReadOutcome::Failed(ErrorKind::WsHandshake),
                "{}",
                String::from_utf8_lossy(&answer)
            );
            assert_eq!(c.in_flight(), 0);
        }
    }

    #[test]
    fn frames_right_behind_the_101_are_read() {
        let p = plan(8, false);
        let mut c = WsConn::for_plan(&cp(&p), 9);
        c.on_connected(&cp(&p), 0);
        let mut answer = switching(&c);
        answer.extend(server_frame(true, Opcode::Ping, b"p"));
        // Split inside the head, so it is joined across reads.
        let (a, b) = answer.split_at(20);
        let (outcome, _) = read(&mut c, &p, vec![a.to_vec(), b.to_vec()], false);
        assert_eq!(outcome, ReadOutcome::Open);
        assert!(c.set_up());
        let wire = flushed(&mut c);
        let text = String::from_utf8_lossy(&wire).into_owned();
        assert!(text.starts_with("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"));
        let at = wire.iter().position(|&b| b == 0x8A).unwrap();
        let (pong, body) = client_frame(&wire[at..]);
        assert_eq!((pong.opcode, body.as_slice()), (Opcode::Pong, &b"p"[..]));
    }
}
