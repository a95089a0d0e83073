//! The per-connection HTTP/1.1 state machine: queued request bytes out,
//! response bytes in, answers checked and handed to a sink. Generic over
//! `Read`/`Write`; it never creates, configures or closes a socket.

use std::collections::VecDeque;
use std::io::{Read, Write};

use crate::answer::{AnswerBody, AnswerHead};
use crate::error_kind::ErrorKind;
use crate::parse::{parse_head, ChunkedDecoder, Framing};
use crate::plan::ConnPlan;
use crate::session::{Session, LOGOUT};
use crate::transport::{read_turn, Fed, Outbox, ReadOutcome, Turn};

/// A response head larger than this is treated as malformed rather than
/// buffered without end.
const MAX_HEAD: usize = 64 * 1024;

/// One request on the wire, waiting for its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlight {
    /// Index into the plan's request templates (or the session's logout:
    /// [`ConnPlan::template`]).
    pub template: u32,
    /// When the request was meant to be sent: latency counts from here.
    pub intended_ns: u64,
    /// When it was actually queued for writing: the timeout counts from here.
    pub sent_ns: u64,
    /// Sent during the measured phase; warm-up answers are dropped.
    pub measured: bool,
}

/// Receives every request's end: a checked answer or a failure.
pub(crate) trait AnswerSink {
    fn answer(&mut self, req: &InFlight, outcome: Result<(), ErrorKind>, now: u64);
}

#[derive(Debug)]
enum BodyState {
    Length(u64),
    Chunked(ChunkedDecoder),
    UntilClose,
}

#[derive(Debug)]
enum ReadState {
    Head,
    Body {
        head: AnswerHead,
        /// The server closes the connection after this answer.
        close: bool,
        body: BodyState,
    },
}

#[derive(Debug)]
pub(crate) struct Conn {
    inflight: VecDeque<InFlight>,
    /// Request bytes not yet written.
    out: Outbox,
    /// Input that did not yet make a whole response head.
    pending: Vec<u8>,
    /// The body of the answer under way, as its check takes it.
    body: AnswerBody,
    state: ReadState,
    /// The server announced it closes after the last answer.
    close_after: bool,
    /// The browser's session, for a plan with sessions (the contract's
    /// `app`); boxed so that other plans pay a pointer per connection.
    session: Option<Box<Session>>,
}

impl Conn {
    pub(crate) fn new(pipeline: usize) -> Self {
        Conn {
            inflight: VecDeque::with_capacity(pipeline),
            out: Outbox::default(),
            pending: Vec::new(),
            body: AnswerBody::default(),
            state: ReadState::Head,
            close_after: false,
            session: None,
        }
    }

    /// A connection for `plan`: with a session when the plan has them.
    pub(crate) fn for_plan(plan: &ConnPlan<'_>) -> Self {
        let mut conn = Conn::new(plan.pipeline);
        if plan.session.is_some() {
            conn.session = Some(Box::default());
        }
        conn
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// The oldest request's actual send time, for timeouts.
    pub(crate) fn oldest_sent(&self) -> Option<u64> {
        self.inflight.front().map(|r| r.sent_ns)
    }

    /// The server said it will close: send nothing more on this connection.
    pub(crate) fn closing(&self) -> bool {
        self.close_after
    }

    pub(crate) fn has_output(&self) -> bool {
        !self.out.is_empty()
    }

    /// Queues a request; [`Conn::flush`] writes it.
    pub(crate) fn enqueue(&mut self, req: InFlight, bytes: &[u8]) {
        self.out.queue().extend_from_slice(bytes);
        self.inflight.push_back(req);
    }

    /// Queues the request `req` names in `plan`: as it is, or, on a
    /// connection with a session, with its cookie, and the logout in its
    /// place once the session has had its pages.
    pub(crate) fn enqueue_planned(&mut self, mut req: InFlight, plan: &ConnPlan<'_>) {
        let (Some(session), Some(sessions)) = (self.session.as_deref(), plan.session) else {
            return self.enqueue(req, &plan.requests[req.template as usize].bytes);
        };
        if session.logout_due(sessions.pages) {
            req.template = LOGOUT;
        }
        session.write_request(&plan.template(req.template).bytes, self.out.queue());
        self.inflight.push_back(req);
    }

    /// Writes queued bytes until done or the socket is full. Returns the
    /// bytes written.
    pub(crate) fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        self.out.flush(io)
    }

    /// Reads what the socket has (the shared loop, [`read_turn`], in the
    /// worker's `scratch`), parses answers, checks them and hands them to
    /// `sink`.
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
            Turn::Eof => self.on_eof(plan, now, sink),
        }
    }

    fn on_eof<S: AnswerSink>(
        &mut self,
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> ReadOutcome {
        // A body without a length ends exactly here.
        if let ReadState::Body {
            head,
            close,
            body: BodyState::UntilClose,
        } = self.state
        {
            self.state = ReadState::Head;
            self.finish(head, close, plan, now, sink);
        }
        ReadOutcome::Eof
    }

    /// Fails every request in flight with `kind` and clears the connection
    /// for reuse on a new socket.
    pub(crate) fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        while let Some(req) = self.inflight.pop_front() {
            sink.answer(&req, Err(kind), now);
        }
        self.reset();
    }

    /// Back to a fresh state, keeping buffer capacity. Nothing may be in flight.
    pub(crate) fn reset(&mut self) {
        debug_assert!(self.inflight.is_empty());
        self.out.clear();
        self.pending.clear();
        self.body.start();
        self.state = ReadState::Head;
        self.close_after = false;
        // A new socket is a new browser visit: its first page makes a new
        // session (what the old one's last answer did is unknown).
        if let Some(session) = self.session.as_deref_mut() {
            session.end();
        }
    }

    /// Keeps body bytes up to the check's limit; past it, notes that the
    /// body cannot match and keeps nothing more.
    fn feed<S: AnswerSink>(
        &mut self,
        data: &[u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<(), ErrorKind> {
        if self.pending.is_empty() {
            // The common case: whole answers in one read, parsed in place.
            let used = self.process(data, plan, now, sink)?;
            self.pending.extend_from_slice(&data[used..]);
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let result = self.process(&buf, plan, now, sink);
        match result {
            Ok(used) => buf.drain(..used),
            Err(_) => buf.drain(..),
        };
        self.pending = buf;
        result.map(|_| ())
    }

    /// Consumes as many bytes of `buf` as make progress; returns how many.
    /// Only an incomplete head is left unconsumed.
    fn process<S: AnswerSink>(
        &mut self,
        buf: &[u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<usize, ErrorKind> {
        let mut pos = 0;
        while pos < buf.len() {
            if self.close_after {
                // Anything after an answer that closes is not ours to read.
                return Ok(buf.len());
            }
            match std::mem::replace(&mut self.state, ReadState::Head) {
                ReadState::Head => {
                    if self.inflight.is_empty() {
                        // Bytes nobody asked for (a body longer than its
                        // Content-Length, an answer sent twice, a greeting):
                        // were they kept, they would be taken for the next
                        // request's answer.
                        return Err(ErrorKind::Malformed);
                    }
                    let front = self.inflight[0];
                    let template = plan.template(front.template);
                    let head = match parse_head(&buf[pos..], template.is_head) {
                        Ok(Some(h)) => h,
                        Ok(None) if buf.len() - pos > MAX_HEAD => return Err(ErrorKind::Malformed),
                        Ok(None) => break,
                        Err(_) => return Err(ErrorKind::Malformed),
                    };
                    pos += head.len;
                    if (100..200).contains(&head.status) && head.status != 101 {
                        continue; // an interim answer; the real one follows
                    }
                    if let Some(session) = self.session.as_deref_mut() {
                        session.on_head(head.set_cookie, head.set_cookies);
                    }
                    let answer = AnswerHead::new(
                        head.status,
                        head.content_type,
                        head.content_encoding,
                        &template.expect,
                    );
                    let close = head.close;
                    self.body.start();
                    let body = match head.framing {
                        Framing::Empty => {
                            self.finish(answer, close, plan, now, sink);
                            continue;
                        }
                        Framing::ContentLength(n) => BodyState::Length(n),
                        Framing::Chunked => BodyState::Chunked(ChunkedDecoder::default()),
                        Framing::UntilClose => BodyState::UntilClose,
                    };
                    self.state = ReadState::Body {
                        head: answer,
                        close,
                        body,
                    };
                }
                ReadState::Body {
                    head,
                    close,
                    mut body,
                } => {
                    let avail = &buf[pos..];
                    let expect = &plan.template(self.inflight[0].template).expect;
                    let answer = &mut self.body;
                    let mut take = |d: &[u8]| answer.take(&head, expect, d);
                    let done = match &mut body {
                        BodyState::Length(rest) => {
                            let n = (*rest).min(avail.len() as u64) as usize;
                            take(&avail[..n]);
                            *rest -= n as u64;
                            pos += n;
                            *rest == 0
                        }
                        BodyState::Chunked(dec) => {
                            let used = dec
                                .decode(avail, &mut take)
                                .map_err(|_| ErrorKind::Malformed)?;
                            pos += used;
                            dec.is_done()
                        }
                        BodyState::UntilClose => {
                            take(avail);
                            pos = buf.len();
                            false
                        }
                    };
                    if done {
                        self.finish(head, close, plan, now, sink);
                    } else {
                        self.state = ReadState::Body { head, close, body };
                    }
                }
            }
        }
        Ok(pos)
    }

    fn finish<S: AnswerSink>(
        &mut self,
        head: AnswerHead,
        close: bool,
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) {
        let Some(req) = self.inflight.pop_front() else {
            return;
        };
        let mut outcome = self.body.judge(&head, &plan.template(req.template).expect);
        if let Some(session) = self.session.as_deref_mut() {
            if req.template == LOGOUT {
                session.end();
            } else {
                outcome = match outcome {
                    Ok(Some(shown)) => session.on_page(shown, wall_ms).map(|()| None),
                    Ok(None) => Ok(None),
                    Err(kind) => {
                        session.end();
                        Err(kind)
                    }
                };
            }
        }
        sink.answer(&req, outcome.map(|_| ()), now);
        if close {
            self.close_after = true;
        }
    }
}

/// The wall clock in milliseconds since the Unix epoch, asked only when a
/// new session's time of creation is judged.
fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
