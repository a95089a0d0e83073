//! The per-connection HTTP/1.1 state machine: queued request bytes out,
//! response bytes in, answers checked and handed to a sink. Generic over
//! `Read`/`Write`; it never creates, configures or closes a socket.

use std::collections::VecDeque;
use std::io::{Read, Write};

use crate::app_page::{read_app_page, PageSession};
use crate::check::{content_type_matches, BodyExpect, Coding, Expect, CODED_BODY_CAP};
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

/// Where an answer's body goes as it arrives: compared with the exact bytes
/// expected (nothing copied), kept up to `limit` for the check at its end,
/// or nowhere.
struct BodyTaken<'a> {
    kept: &'a mut Vec<u8>,
    over: &'a mut bool,
    at: &'a mut usize,
    limit: usize,
    want: Option<&'a [u8]>,
}

impl BodyTaken<'_> {
    fn take(&mut self, data: &[u8]) {
        if *self.over {
            return;
        }
        if let Some(want) = self.want {
            let end = *self.at + data.len();
            if want.get(*self.at..end) != Some(data) {
                *self.over = true;
            }
            *self.at = end;
            return;
        }
        if self.limit == 0 {
            return;
        }
        if self.kept.len() + data.len() > self.limit {
            *self.over = true;
            self.kept.clear();
            return;
        }
        self.kept.extend_from_slice(data);
    }
}

#[derive(Debug, Clone, Copy)]
struct AnswerHead {
    status: u16,
    content_type_ok: bool,
    close: bool,
    /// How much of the body the check needs kept; 0 when it needs none.
    keep_limit: usize,
    /// The body is compared as it arrives with the exact bytes expected.
    exact: bool,
    /// The coding the answer must come in (its body is then kept, coded,
    /// and checked once decoded), and whether its header says so.
    coding: Coding,
    coding_ok: bool,
    /// The answer said `Content-Encoding: br`.
    brotli: bool,
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
    Body { head: AnswerHead, body: BodyState },
}

#[derive(Debug)]
pub(crate) struct Conn {
    inflight: VecDeque<InFlight>,
    /// Request bytes not yet written.
    out: Outbox,
    /// Input that did not yet make a whole response head.
    pending: Vec<u8>,
    /// The body so far, kept only when the answer's check needs it, and only
    /// up to what the check can use.
    body: Vec<u8>,
    /// The body ran past what the check keeps, or differed from the exact
    /// bytes expected: it cannot match.
    body_over: bool,
    /// Body bytes compared so far with the exact bytes expected.
    body_at: usize,
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
            body: Vec::new(),
            body_over: false,
            body_at: 0,
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
            body: BodyState::UntilClose,
        } = self.state
        {
            self.state = ReadState::Head;
            self.finish(head, plan, now, sink);
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
        self.body.clear();
        self.body_over = false;
        self.body_at = 0;
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
                    let answer = AnswerHead {
                        status: head.status,
                        content_type_ok: match &template.expect.content_type {
                            None => true,
                            Some(want) => head
                                .content_type
                                .is_some_and(|ct| content_type_matches(want, ct)),
                        },
                        close: head.close,
                        keep_limit: match template.expect.coding {
                            Coding::Any => template.expect.body.keep_limit(),
                            _ => CODED_BODY_CAP,
                        },
                        exact: template.expect.coding == Coding::Any
                            && matches!(template.expect.body, BodyExpect::Exact(_)),
                        coding: template.expect.coding,
                        coding_ok: template.expect.coding.matches(head.content_encoding),
                        brotli: crate::check::is_brotli(head.content_encoding),
                    };
                    self.body.clear();
                    self.body_over = false;
                    self.body_at = 0;
                    let body = match head.framing {
                        Framing::Empty => {
                            self.finish(answer, plan, now, sink);
                            continue;
                        }
                        Framing::ContentLength(n) => BodyState::Length(n),
                        Framing::Chunked => BodyState::Chunked(ChunkedDecoder::default()),
                        Framing::UntilClose => BodyState::UntilClose,
                    };
                    self.state = ReadState::Body { head: answer, body };
                }
                ReadState::Body { head, mut body } => {
                    let avail = &buf[pos..];
                    let want = match &plan.template(self.inflight[0].template).expect.body {
                        BodyExpect::Exact(want) if head.exact => Some(want.as_slice()),
                        _ => None,
                    };
                    let mut taken = BodyTaken {
                        kept: &mut self.body,
                        over: &mut self.body_over,
                        at: &mut self.body_at,
                        limit: head.keep_limit,
                        want,
                    };
                    let done = match &mut body {
                        BodyState::Length(rest) => {
                            let take = (*rest).min(avail.len() as u64) as usize;
                            taken.take(&avail[..take]);
                            *rest -= take as u64;
                            pos += take;
                            *rest == 0
                        }
                        BodyState::Chunked(dec) => {
                            let used = dec
                                .decode(avail, |d| taken.take(d))
                                .map_err(|_| ErrorKind::Malformed)?;
                            pos += used;
                            dec.is_done()
                        }
                        BodyState::UntilClose => {
                            taken.take(avail);
                            pos = buf.len();
                            false
                        }
                    };
                    if done {
                        self.finish(head, plan, now, sink);
                    } else {
                        self.state = ReadState::Body { head, body };
                    }
                }
            }
        }
        Ok(pos)
    }

    fn finish<S: AnswerSink>(
        &mut self,
        head: AnswerHead,
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) {
        let Some(req) = self.inflight.pop_front() else {
            return;
        };
        let mut outcome = self.judge(head, &plan.template(req.template).expect);
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
        if head.close {
            self.close_after = true;
        }
    }

    /// The answer against what its request expects; a page of the app also
    /// says what session it shows, for the connection's session to judge.
    fn judge(&self, head: AnswerHead, expect: &Expect) -> Result<Option<PageSession>, ErrorKind> {
        if !expect.status.matches(head.status) {
            return Err(ErrorKind::Status);
        }
        if !head.content_type_ok {
            return Err(ErrorKind::ContentType);
        }
        if !head.coding_ok {
            return Err(ErrorKind::Encoding);
        }
        if head.exact {
            let whole =
                matches!(&expect.body, BodyExpect::Exact(want) if self.body_at == want.len());
            return if self.body_over || !whole {
                Err(ErrorKind::Body)
            } else {
                Ok(None)
            };
        }
        // Kept coded, bounded; decoded once whole. An allocation per answer,
        // which only compressed endpoints pay.
        let mut plain = Vec::new();
        let body = if head.coding != Coding::Any {
            if self.body_over
                || !head
                    .coding
                    .decode(head.brotli, &self.body, CODED_BODY_CAP, &mut plain)
            {
                return Err(ErrorKind::Encoding);
            }
            &plain
        } else if head.keep_limit == 0 {
            return Ok(None);
        } else if self.body_over {
            return Err(ErrorKind::Body);
        } else {
            &self.body
        };
        match &expect.body {
            BodyExpect::AppPage(page) => read_app_page(body, page, &mut Vec::new())
                .map(Some)
                .map_err(|_| ErrorKind::Body),
            other if other.matches(body) => Ok(None),
            _ => Err(ErrorKind::Body),
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
