//! A client's HTTP/2 connection (RFC 9113) as a state machine: the preface
//! and SETTINGS, each request a stream (as many at once as the plan's
//! streams and the server's SETTINGS_MAX_CONCURRENT_STREAMS allow), flow
//! control both ways (this client's windows opened wide at the start and
//! kept open, so it never throttles a server; request bodies sent as the
//! server's windows allow), each answer checked as HTTP/1.1's are
//! (`answer.rs`), PING answered, SETTINGS acknowledged (no more of either
//! owed at once than [`MAX_OWED_ACKS`]), RST_STREAM and GOAWAY counted by
//! kind. Like `conn.rs` it reads through the transport's
//! loop and never touches a socket. HPACK is `encoder.rs`'s for requests
//! and `hpack.rs`'s for answers (a table each way per connection); the
//! frames are `frame.rs`'s.

use std::io::{Read, Write};

use super::encoder::Encoder;
use super::fields::HeadFields;
use super::frame::{self, code, parse_frame, setting, Frame, MAX_WINDOW};
use super::hpack;
use crate::answer::{AnswerBody, AnswerHead};
use crate::check::BodyExpect;
use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::ErrorKind;
use crate::plan::ConnPlan;
use crate::proto::Protocol;
use crate::transport::{read_turn, Fed, Outbox, ReadOutcome, Turn};

/// The largest frame this client takes (what its SETTINGS says): the
/// default, which every server keeps to unless told more.
const MAX_FRAME: u32 = frame::DEFAULT_MAX_FRAME;

/// The most header block bytes kept for one answer (HEADERS and its
/// CONTINUATIONs): a server cannot make the client buffer without bound.
const MAX_HEADER_BLOCK: usize = 64 * 1024;

/// The connection window is topped up once this much of it was used, so a
/// server is never held back by it (it starts at [`MAX_WINDOW`]).
const WINDOW_TOP_UP: u32 = MAX_WINDOW / 2;

/// The most acknowledgements (PING and SETTINGS ACKs) queued at once
/// before the connection ends with ENHANCE_YOUR_CALM (RFC 9113 §10.5
/// lets an endpoint treat excessive control frames as a connection
/// error). Each PING or SETTINGS is owed an answer, but a peer that sends
/// them and never reads would otherwise have them all queued here: a
/// flood grew one connection past 2 GB in 5 s (issue 42). Counted from
/// the last time the queue was empty, so a peer that reads is never
/// owed more than one read's worth; nghttp2 keeps the same default
/// (`max_outbound_ack`). At most ~17 KB of answers.
pub(crate) const MAX_OWED_ACKS: u32 = 1_000;

/// What the server's SETTINGS said, or the defaults until it says (§6.5.2).
#[derive(Debug, Clone, Copy)]
struct Peer {
    max_frame: u32,
    initial_window: i64,
    max_streams: u32,
}

impl Default for Peer {
    fn default() -> Self {
        Peer {
            max_frame: frame::DEFAULT_MAX_FRAME,
            initial_window: 65_535,
            max_streams: u32::MAX,
        }
    }
}

/// One request in flight as a stream.
#[derive(Debug)]
struct Stream {
    id: u32,
    req: InFlight,
    /// The answer's head, once its HEADERS came (1xx heads are skipped).
    head: Option<AnswerHead>,
    body: AnswerBody,
    /// gRPC's `grpc-status` from the trailers: None until they come.
    grpc_status: Option<u32>,
    /// What the server's window for this stream still takes.
    send_window: i64,
    /// Request body bytes sent so far, of the template's body.
    sent: usize,
}

/// A header block under way: the stream it is for and what came of it.
#[derive(Debug, Default)]
struct Block {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
}

pub(crate) struct H2Conn {
    out: Outbox,
    /// Input that did not yet make a whole frame.
    pending: Vec<u8>,
    hpack: hpack::Decoder,
    /// What the server's table holds of this client's fields.
    encoder: Encoder,
    /// The header block of the request being started.
    block_out: Vec<u8>,
    fields: HeadFields,
    streams: Vec<Stream>,
    /// Streams that ended, kept for their buffers' capacity.
    spare: Vec<Stream>,
    next_id: u32,
    peer: Peer,
    /// What the server's connection window still takes.
    send_window: i64,
    /// DATA received since this client last opened its window.
    received: u32,
    /// A header block of HEADERS and CONTINUATION frames not yet ended.
    block: Option<Block>,
    /// Acknowledgements queued since the output queue was last empty
    /// (see [`MAX_OWED_ACKS`]).
    owed_acks: u32,
    /// The connection is going away (a GOAWAY either way, or a broken
    /// frame): no new stream starts on it.
    closing: bool,
    /// The preface went out.
    started: bool,
}

impl std::fmt::Debug for H2Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Conn")
            .field("streams", &self.streams.len())
            .field("next_id", &self.next_id)
            .field("closing", &self.closing)
            .finish_non_exhaustive()
    }
}

impl H2Conn {
    pub(crate) fn new() -> Self {
        H2Conn {
            out: Outbox::default(),
            pending: Vec::new(),
            hpack: hpack::Decoder::new(),
            encoder: Encoder::new(),
            block_out: Vec::new(),
            fields: HeadFields::default(),
            streams: Vec::new(),
            spare: Vec::new(),
            next_id: 1,
            peer: Peer::default(),
            send_window: 65_535,
            received: 0,
            block: None,
            owed_acks: 0,
            closing: false,
            started: false,
        }
    }

    /// The preface, this client's SETTINGS (no push, windows and frames as
    /// wide as allowed) and the connection window opened to its largest.
    pub(crate) fn start(&mut self) {
        let q = self.out.queue();
        q.extend_from_slice(frame::PREFACE);
        frame::write_settings(
            q,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, MAX_WINDOW),
                (setting::MAX_FRAME_SIZE, MAX_FRAME),
            ],
            false,
        );
        frame::write_window_update(q, 0, MAX_WINDOW - 65_535);
        self.started = true;
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.streams.len()
    }

    /// How many more requests may start now, of `streams` at most.
    pub(crate) fn room(&self, streams: usize) -> usize {
        if self.closing || !self.started || self.next_id > MAX_WINDOW - 2 {
            return 0;
        }
        let most = streams.min(self.peer.max_streams as usize);
        most.saturating_sub(self.streams.len())
    }

    pub(crate) fn oldest_sent(&self) -> Option<u64> {
        self.streams.iter().map(|s| s.req.sent_ns).min()
    }

    pub(crate) fn closing(&self) -> bool {
        self.closing
    }

    pub(crate) fn has_output(&self) -> bool {
        !self.out.is_empty()
    }

    pub(crate) fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        self.out.flush(io)
    }

    /// Starts the stream of `req`: its header block, then as much of its
    /// body as the server's windows take.
    pub(crate) fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>) {
        let h2 = &plan.h2[req.template as usize];
        let body_len = h2.body.len();
        let id = self.next_id;
        self.next_id += 2;
        self.block_out.clear();
        self.encoder.encode(&h2.fields, &mut self.block_out);
        frame::write_headers(
            self.out.queue(),
            id,
            &self.block_out,
            body_len == 0,
            self.peer.max_frame,
        );
        let mut stream = self.spare.pop().unwrap_or_else(|| Stream {
            id: 0,
            req,
            head: None,
            body: AnswerBody::default(),
            grpc_status: None,
            send_window: 0,
            sent: 0,
        });
        stream.id = id;
        stream.req = req;
        stream.head = None;
        stream.body.start();
        stream.grpc_status = None;
        stream.send_window = self.peer.initial_window;
        stream.sent = 0;
        self.streams.push(stream);
        if body_len > 0 {
            let last = self.streams.len() - 1;
            self.send_body(last, plan);
        }
    }

    /// Sends what the windows allow of stream `i`'s body.
    fn send_body(&mut self, i: usize, plan: &ConnPlan<'_>) {
        let s = &mut self.streams[i];
        let h2 = &plan.h2[s.req.template as usize];
        let bytes = &plan.requests[s.req.template as usize].bytes[h2.body.clone()];
        while s.sent < bytes.len() {
            let room = s
                .send_window
                .min(self.send_window)
                .min(i64::from(self.peer.max_frame));
            if room <= 0 {
                return;
            }
            let n = (bytes.len() - s.sent).min(room as usize);
            let end = s.sent + n == bytes.len();
            frame::write_data(self.out.queue(), s.id, &bytes[s.sent..s.sent + n], end);
            s.sent += n;
            s.send_window -= n as i64;
            self.send_window -= n as i64;
        }
    }

    /// Bodies held back by the windows, sent once they open.
    fn resume_bodies(&mut self, plan: &ConnPlan<'_>) {
        for i in 0..self.streams.len() {
            let t = self.streams[i].req.template as usize;
            if self.streams[i].sent < plan.h2[t].body.len() {
                self.send_body(i, plan);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_readable<R: Read, S: AnswerSink>(
        &mut self,
        io: &mut R,
        peer_closed: bool,
        scratch: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome {
        let turn = read_turn(io, peer_closed, scratch, bytes_read, |data| {
            self.feed(data, plan, now, sink).map(|()| Fed::More)
        });
        match turn {
            Turn::Done(outcome) => outcome,
            Turn::Eof => ReadOutcome::Eof,
        }
    }

    fn feed<S: AnswerSink>(
        &mut self,
        data: &[u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<(), ErrorKind> {
        if self.pending.is_empty() {
            // The common case: whole frames in one read, parsed in place.
            let used = self.frames(data, plan, now, sink)?;
            self.pending.extend_from_slice(&data[used..]);
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let result = self.frames(&buf, plan, now, sink);
        match result {
            Ok(used) => buf.drain(..used),
            Err(_) => buf.drain(..),
        };
        self.pending = buf;
        result.map(|_| ())
    }

    /// Acts on every whole frame at the start of `buf`; returns the bytes
    /// they took. A broken frame ends the connection: a GOAWAY says why.
    fn frames<S: AnswerSink>(
        &mut self,
        buf: &[u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<usize, ErrorKind> {
        let mut pos = 0;
        loop {
            let parsed = match parse_frame(&buf[pos..], MAX_FRAME) {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(pos),
                Err(e) => return Err(self.connection_error(e.code())),
            };
            let (f, n) = parsed;
            pos += n;
            self.frame(f, plan, now, sink)?;
        }
    }

    /// A connection error (§5.4.1): GOAWAY with `code`, and the connection
    /// is done.
    fn connection_error(&mut self, code: u32) -> ErrorKind {
        let last = self.next_id.saturating_sub(2);
        frame::write_goaway(self.out.queue(), last, code);
        self.closing = true;
        if code == code::ENHANCE_YOUR_CALM {
            ErrorKind::H2Flood
        } else {
            ErrorKind::H2Protocol
        }
    }

    /// One more acknowledgement is owed: allowed while fewer than
    /// [`MAX_OWED_ACKS`] wait unwritten, else the peer floods.
    fn owe_ack(&mut self) -> Result<(), ErrorKind> {
        if self.out.is_empty() {
            self.owed_acks = 0;
        }
        if self.owed_acks >= MAX_OWED_ACKS {
            return Err(self.connection_error(code::ENHANCE_YOUR_CALM));
        }
        self.owed_acks += 1;
        Ok(())
    }

    /// A stream this client never opened (§5.1): an odd one above the last
    /// it started, or an even one (push is off, so the server reserved
    /// none). Closed streams are not idle: frames on them are ignored.
    fn idle(&self, stream: u32) -> bool {
        stream.is_multiple_of(2) || stream >= self.next_id
    }

    fn frame<S: AnswerSink>(
        &mut self,
        f: Frame<'_>,
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<(), ErrorKind> {
        // Between a HEADERS without END_HEADERS and its last CONTINUATION
        // nothing else may come (§6.10).
        if self.block.is_some() && !matches!(f, Frame::Continuation { .. }) {
            return Err(self.connection_error(code::PROTOCOL_ERROR));
        }
        match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow,
            } => {
                self.received = self.received.saturating_add(flow);
                if self.received >= WINDOW_TOP_UP {
                    frame::write_window_update(self.out.queue(), 0, self.received);
                    self.received = 0;
                }
                let Some(i) = self.find(stream) else {
                    // Only HEADERS or PRIORITY may open a stream, and a
                    // server opens none (§5.1).
                    if self.idle(stream) {
                        return Err(self.connection_error(code::PROTOCOL_ERROR));
                    }
                    // A stream already ended here (reset, or failed): its
                    // bytes still count against the window above.
                    return Ok(());
                };
                let s = &mut self.streams[i];
                let Some(head) = s.head else {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                };
                let expect = &plan.template(s.req.template).expect;
                s.body.take(&head, expect, data);
                if end_stream {
                    self.finish(i, plan, now, sink);
                }
            }
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                block,
            } => {
                if end_headers {
                    return self.header_block(stream, end_stream, block, plan, now, sink);
                }
                if block.len() > MAX_HEADER_BLOCK {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                }
                self.block = Some(Block {
                    stream,
                    end_stream,
                    bytes: block.to_vec(),
                });
            }
            Frame::Continuation {
                stream,
                end_headers,
                block,
            } => {
                let Some(mut b) = self.block.take() else {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                };
                if b.stream != stream || b.bytes.len() + block.len() > MAX_HEADER_BLOCK {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                }
                b.bytes.extend_from_slice(block);
                if end_headers {
                    return self.header_block(b.stream, b.end_stream, &b.bytes, plan, now, sink);
                }
                self.block = Some(b);
            }
            Frame::Settings { ack: false, params } => {
                self.owe_ack()?;
                for (id, value) in frame::settings(params) {
                    self.setting(id, value)?;
                }
                frame::write_settings(self.out.queue(), &[], true);
                self.resume_bodies(plan);
            }
            Frame::Settings { ack: true, .. } | Frame::Priority { .. } | Frame::Unknown { .. } => {}
            Frame::Ping { ack, data } => {
                if !ack {
                    self.owe_ack()?;
                    frame::write_ping_ack(self.out.queue(), data);
                }
            }
            Frame::WindowUpdate { stream, increment } => {
                let inc = i64::from(increment);
                if stream != 0 && self.idle(stream) {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                }
                if stream == 0 {
                    self.send_window += inc;
                    if self.send_window > i64::from(MAX_WINDOW) {
                        return Err(self.connection_error(code::FLOW_CONTROL_ERROR));
                    }
                } else if let Some(i) = self.find(stream) {
                    self.streams[i].send_window += inc;
                    if self.streams[i].send_window > i64::from(MAX_WINDOW) {
                        return Err(self.connection_error(code::FLOW_CONTROL_ERROR));
                    }
                }
                self.resume_bodies(plan);
            }
            Frame::RstStream { stream, .. } => {
                if let Some(i) = self.find(stream) {
                    self.fail_stream(i, ErrorKind::H2Reset, now, sink);
                } else if self.idle(stream) {
                    // §6.4: a reset of a stream never opened.
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                }
            }
            Frame::GoAway { last_stream, .. } => {
                // Streams above the last one the server will process were
                // never taken: each fails as going away; the ones below may
                // still be answered. Nothing new starts here.
                self.closing = true;
                let mut i = 0;
                while i < self.streams.len() {
                    if self.streams[i].id > last_stream {
                        self.fail_stream(i, ErrorKind::H2Goaway, now, sink);
                    } else {
                        i += 1;
                    }
                }
            }
            // This client said ENABLE_PUSH 0 (§8.4).
            Frame::PushPromise { .. } => {
                return Err(self.connection_error(code::PROTOCOL_ERROR));
            }
        }
        Ok(())
    }

    fn setting(&mut self, id: u16, value: u32) -> Result<(), ErrorKind> {
        match id {
            setting::MAX_FRAME_SIZE => {
                if !(frame::DEFAULT_MAX_FRAME..=frame::MAX_FRAME_LIMIT).contains(&value) {
                    return Err(self.connection_error(code::PROTOCOL_ERROR));
                }
                self.peer.max_frame = value;
            }
            setting::INITIAL_WINDOW_SIZE => {
                if value > MAX_WINDOW {
                    return Err(self.connection_error(code::FLOW_CONTROL_ERROR));
                }
                // A change moves every open stream's window by the
                // difference (§6.9.2).
                let delta = i64::from(value) - self.peer.initial_window;
                for s in &mut self.streams {
                    s.send_window += delta;
                }
                self.peer.initial_window = i64::from(value);
            }
            setting::MAX_CONCURRENT_STREAMS => self.peer.max_streams = value,
            setting::ENABLE_PUSH if value > 1 => {
                return Err(self.connection_error(code::PROTOCOL_ERROR));
            }
            setting::HEADER_TABLE_SIZE => self.encoder.server_table(value),
            // The others it has no use for.
            _ => {}
        }
        Ok(())
    }

    /// A whole header block for `stream`: decoded (always, to keep the
    /// decoder's table in step with the server's), then the answer's head,
    /// or its trailers.
    fn header_block<S: AnswerSink>(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<(), ErrorKind> {
        let fields = &mut self.fields;
        fields.clear();
        let decoded = self
            .hpack
            .decode(block, |name, value| fields.read(name, value));
        if decoded.is_err() {
            return Err(self.connection_error(code::COMPRESSION_ERROR));
        }
        let Some(i) = self.find(stream) else {
            if self.idle(stream) {
                // A server opens no stream (push is off, §5.1).
                return Err(self.connection_error(code::PROTOCOL_ERROR));
            }
            return Ok(());
        };
        let s = &mut self.streams[i];
        let expect = &plan.template(s.req.template).expect;
        // A head with other than one `:status`, or trailers with one: a
        // malformed answer, a stream error (§8.1.1), never a status check.
        let want_statuses = u8::from(s.head.is_none());
        if self.fields.status_fields != want_statuses {
            let id = s.id;
            frame::write_rst_stream(self.out.queue(), id, code::PROTOCOL_ERROR);
            self.fail_stream(i, ErrorKind::Malformed, now, sink);
            return Ok(());
        }
        if s.head.is_none() {
            let Some(status) = self.fields.status else {
                return Err(self.connection_error(code::PROTOCOL_ERROR));
            };
            if (100..200).contains(&status) {
                return Ok(()); // an interim answer; the real one follows
            }
            s.head = Some(AnswerHead::new(
                status,
                self.fields.content_type.as_deref(),
                self.fields.content_encoding.as_deref(),
                expect,
            ));
            s.body.start();
        }
        if self.fields.grpc_status.is_some() {
            s.grpc_status = self.fields.grpc_status;
        }
        if end_stream {
            self.finish(i, plan, now, sink);
        }
        Ok(())
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    /// Stream `i` ended: its answer judged and handed on.
    fn finish<S: AnswerSink>(&mut self, i: usize, plan: &ConnPlan<'_>, now: u64, sink: &mut S) {
        let s = self.streams.swap_remove(i);
        let expect = &plan.template(s.req.template).expect;
        let outcome = match s.head {
            None => Err(ErrorKind::Malformed),
            Some(head) => s.body.judge(&head, expect).map(|_| ()),
        };
        // A gRPC call's answer is its trailers' status as much as its
        // message.
        let want_status = match expect.body {
            BodyExpect::Grpc { .. } => Some(0),
            BodyExpect::GrpcError { status } => Some(status),
            _ => None,
        };
        let status_ok = want_status.is_none_or(|want| s.grpc_status == Some(want));
        let outcome = outcome.and(if status_ok {
            Ok(())
        } else {
            Err(ErrorKind::GrpcStatus)
        });
        sink.answer(&s.req, outcome, now);
        self.spare.push(s);
    }

    fn fail_stream<S: AnswerSink>(&mut self, i: usize, kind: ErrorKind, now: u64, sink: &mut S) {
        let s = self.streams.swap_remove(i);
        sink.answer(&s.req, Err(kind), now);
        self.spare.push(s);
    }

    pub(crate) fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        while !self.streams.is_empty() {
            self.fail_stream(0, kind, now, sink);
        }
        self.reset();
    }

    /// Back to a fresh connection, keeping buffer capacity: a new socket
    /// starts with a new preface and a new HPACK table.
    pub(crate) fn reset(&mut self) {
        debug_assert!(self.streams.is_empty());
        self.out.clear();
        self.pending.clear();
        self.hpack.reset();
        self.encoder.reset();
        self.next_id = 1;
        self.peer = Peer::default();
        self.send_window = 65_535;
        self.received = 0;
        self.block = None;
        self.owed_acks = 0;
        self.closing = false;
        self.started = false;
    }
}

impl Default for H2Conn {
    fn default() -> Self {
        H2Conn::new()
    }
}

impl Protocol for H2Conn {
    fn for_plan(_plan: &ConnPlan<'_>, _seed: u64) -> Self {
        H2Conn::new()
    }

    fn on_connected(&mut self, _plan: &ConnPlan<'_>, _now: u64) {
        self.start();
    }

    /// Requests may follow the preface at once (RFC 9113 §3.4): the
    /// server's SETTINGS come when they come.
    fn set_up(&self) -> bool {
        self.started
    }

    fn in_flight(&self) -> usize {
        H2Conn::in_flight(self)
    }

    fn room(&self, limit: usize) -> usize {
        H2Conn::room(self, limit)
    }

    fn oldest_sent(&self) -> Option<u64> {
        H2Conn::oldest_sent(self)
    }

    fn closing(&self) -> bool {
        H2Conn::closing(self)
    }

    fn has_output(&self) -> bool {
        H2Conn::has_output(self)
    }

    fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>) {
        H2Conn::enqueue(self, req, plan)
    }

    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        H2Conn::flush(self, io)
    }

    fn on_readable<R: Read, S: AnswerSink>(
        &mut self,
        io: &mut R,
        peer_closed: bool,
        scratch: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome {
        H2Conn::on_readable(self, io, peer_closed, scratch, plan, now, sink, bytes_read)
    }

    fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        H2Conn::fail_all(self, kind, now, sink)
    }

    fn reset(&mut self) {
        H2Conn::reset(self)
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
