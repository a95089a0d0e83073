//! The per-connection HTTP/1.1 state machine: queued request bytes out,
//! response bytes in, answers checked and handed to a sink. Generic over
//! `Read`/`Write`; it never creates, configures or closes a socket.

use std::collections::VecDeque;
use std::io::{Read, Write};

use crate::check::{content_type_matches, BodyExpect, Coding, CODED_BODY_CAP};
use crate::error_kind::ErrorKind;
use crate::parse::{parse_head, ChunkedDecoder, Framing};
use crate::plan::RequestTemplate;
use crate::transport::{read_turn, Fed, Outbox, ReadOutcome, Turn};

/// A response head larger than this is treated as malformed rather than
/// buffered without end.
const MAX_HEAD: usize = 64 * 1024;

/// One request on the wire, waiting for its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlight {
    /// Index into the plan's request templates.
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
        }
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
        templates: &[RequestTemplate],
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome {
        let turn = read_turn(io, peer_closed, scratch, bytes_read, |data| {
            self.feed(data, templates, now, sink).map(|()| Fed::More)
        });
        match turn {
            Turn::Done(outcome) => outcome,
            Turn::Eof => self.on_eof(templates, now, sink),
        }
    }

    fn on_eof<S: AnswerSink>(
        &mut self,
        templates: &[RequestTemplate],
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
            self.finish(head, templates, now, sink);
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
    }

    /// Keeps body bytes up to the check's limit; past it, notes that the
    /// body cannot match and keeps nothing more.
    fn feed<S: AnswerSink>(
        &mut self,
        data: &[u8],
        templates: &[RequestTemplate],
        now: u64,
        sink: &mut S,
    ) -> Result<(), ErrorKind> {
        if self.pending.is_empty() {
            // The common case: whole answers in one read, parsed in place.
            let used = self.process(data, templates, now, sink)?;
            self.pending.extend_from_slice(&data[used..]);
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(data);
        let result = self.process(&buf, templates, now, sink);
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
        templates: &[RequestTemplate],
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
                    let template = &templates[front.template as usize];
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
                            self.finish(answer, templates, now, sink);
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
                    let want = match &templates[self.inflight[0].template as usize].expect.body {
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
                        self.finish(head, templates, now, sink);
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
        templates: &[RequestTemplate],
        now: u64,
        sink: &mut S,
    ) {
        let Some(req) = self.inflight.pop_front() else {
            return;
        };
        let expect = &templates[req.template as usize].expect;
        let outcome = if !expect.status.matches(head.status) {
            Err(ErrorKind::Status)
        } else if !head.content_type_ok {
            Err(ErrorKind::ContentType)
        } else if !head.coding_ok {
            Err(ErrorKind::Encoding)
        } else if head.coding != Coding::Any {
            // Kept coded, bounded; decoded once whole. An allocation per
            // answer, which only compressed endpoints pay.
            let mut plain = Vec::new();
            let decoded = head
                .coding
                .decode(head.brotli, &self.body, CODED_BODY_CAP, &mut plain);
            if self.body_over || !decoded {
                Err(ErrorKind::Encoding)
            } else if !expect.body.matches(&plain) {
                Err(ErrorKind::Body)
            } else {
                Ok(())
            }
        } else if head.exact {
            let whole =
                matches!(&expect.body, BodyExpect::Exact(want) if self.body_at == want.len());
            if self.body_over || !whole {
                Err(ErrorKind::Body)
            } else {
                Ok(())
            }
        } else if head.keep_limit > 0 && (self.body_over || !expect.body.matches(&self.body)) {
            Err(ErrorKind::Body)
        } else {
            Ok(())
        };
        sink.answer(&req, outcome, now);
        if head.close {
            self.close_after = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{BodyExpect, Expect, StatusExpect};
    use std::io;

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
                Some(chunk) => {
                    buf[..chunk.len()].copy_from_slice(&chunk);
                    Ok(chunk.len())
                }
                None if self.eof => Ok(0),
                None => Err(io::ErrorKind::WouldBlock.into()),
            }
        }
    }

    fn template(body: BodyExpect) -> RequestTemplate {
        RequestTemplate {
            bytes: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            is_head: false,
            expect: Expect {
                status: StatusExpect::Success,
                content_type: Some("text/plain".into()),
                body,
                coding: Default::default(),
            },
        }
    }

    fn req() -> InFlight {
        InFlight {
            template: 0,
            intended_ns: 0,
            sent_ns: 0,
            measured: true,
        }
    }

    fn run(
        conn: &mut Conn,
        t: &RequestTemplate,
        reads: Vec<&[u8]>,
        eof: bool,
    ) -> (ReadOutcome, Answers) {
        let mut sock = Script {
            reads: reads.into_iter().map(|r| r.to_vec()).collect(),
            eof,
        };
        let mut sink = Answers::default();
        let mut scratch = [0u8; 256];
        let mut outcome = ReadOutcome::Open;
        let mut read = 0;
        // The worker calls again on each readiness event; a test calls until
        // the script is used up.
        for _ in 0..1000 {
            outcome = conn.on_readable(
                &mut sock,
                eof,
                &mut scratch,
                std::slice::from_ref(t),
                0,
                &mut sink,
                &mut read,
            );
            if outcome != ReadOutcome::Open || (sock.reads.is_empty() && !sock.eof) {
                break;
            }
        }
        (outcome, sink)
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK";

    #[test]
    fn pipelined_answers_in_one_read() {
        let t = template(BodyExpect::Exact(b"OK".to_vec()));
        let mut c = Conn::new(3);
        for _ in 0..3 {
            c.enqueue(req(), &t.bytes);
        }
        let all = [OK, OK, OK].concat();
        let (outcome, answers) = run(&mut c, &t, vec![&all], false);
        assert_eq!(outcome, ReadOutcome::Open);
        assert_eq!(answers.0, vec![Ok(()), Ok(()), Ok(())]);
        assert_eq!(c.in_flight(), 0);
    }

    #[test]
    fn answer_split_byte_by_byte() {
        let t = template(BodyExpect::Exact(b"OK".to_vec()));
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let (_, answers) = run(&mut c, &t, OK.chunks(1).collect(), false);
        assert_eq!(answers.0, vec![Ok(())]);
    }

    #[test]
    fn chunked_body_checked() {
        let t = template(BodyExpect::Exact(b"OKOK".to_vec()));
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n2\r\nOK\r\n0\r\n\r\n";
        let (_, answers) = run(&mut c, &t, resp.chunks(7).collect(), false);
        assert_eq!(answers.0, vec![Ok(())]);
    }

    #[test]
    fn each_check_fails_with_its_kind() {
        let cases: [(&[u8], ErrorKind); 3] = [
            (
                b"HTTP/1.1 500 Oops\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK",
                ErrorKind::Status,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nOK",
                ErrorKind::ContentType,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nNO",
                ErrorKind::Body,
            ),
        ];
        for (resp, kind) in cases {
            let t = template(BodyExpect::Exact(b"OK".to_vec()));
            let mut c = Conn::new(1);
            c.enqueue(req(), &t.bytes);
            let (outcome, answers) = run(&mut c, &t, vec![resp], false);
            assert_eq!(outcome, ReadOutcome::Open);
            assert_eq!(answers.0, vec![Err(kind)]);
        }
    }

    #[test]
    fn garbage_is_malformed() {
        let t = template(BodyExpect::Any);
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let (outcome, _) = run(&mut c, &t, vec![b"SPAM SPAM SPAM\r\n\r\n"], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::Malformed));
    }

    #[test]
    fn bytes_nobody_asked_for_are_malformed_at_once() {
        let t = template(BodyExpect::Any);
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        // The tail of a body longer than its Content-Length.
        let short = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nOK";
        let (outcome, answers) = run(&mut c, &t, vec![short], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::Malformed));
        assert_eq!(answers.0, vec![Ok(())]);

        // A whole answer sent twice must not answer the next request.
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let (outcome, answers) = run(&mut c, &t, vec![&[OK, OK].concat()], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::Malformed));
        assert_eq!(answers.0, vec![Ok(())]);

        // A greeting before any request.
        let mut c = Conn::new(1);
        let (outcome, answers) = run(&mut c, &t, vec![OK], false);
        assert_eq!(outcome, ReadOutcome::Failed(ErrorKind::Malformed));
        assert!(answers.0.is_empty());
    }

    /// Reads that never end: `chunk` again and again.
    struct Endless(&'static [u8], usize);

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 += 1;
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            Ok(n)
        }
    }

    #[test]
    fn an_endless_body_yields_to_the_loop_and_keeps_little() {
        for body in [
            BodyExpect::Exact(b"OK".to_vec()),
            BodyExpect::json(serde_json::json!({"a": 1})),
        ] {
            let t = template(body);
            let mut c = Conn::new(1);
            c.enqueue(req(), &t.bytes);
            let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000000000000000\r\n\r\n";
            let mut sink = Answers::default();
            let mut scratch = [0u8; 256];
            let mut read = 0;
            let mut sock = Script {
                reads: VecDeque::from([head.to_vec()]),
                eof: false,
            };
            assert_eq!(
                c.on_readable(
                    &mut sock,
                    false,
                    &mut scratch,
                    std::slice::from_ref(&t),
                    0,
                    &mut sink,
                    &mut read
                ),
                ReadOutcome::Open
            );
            let mut endless = Endless(&[b'x'; 256], 0);
            for turn in 1..=2000 {
                let outcome = c.on_readable(
                    &mut endless,
                    false,
                    &mut scratch,
                    std::slice::from_ref(&t),
                    0,
                    &mut sink,
                    &mut read,
                );
                assert_eq!(outcome, ReadOutcome::More);
                assert_eq!(
                    endless.1,
                    turn * crate::transport::READS_PER_TURN,
                    "bounded reads per turn"
                );
            }
            assert!(
                c.body.capacity() <= 64 * 1024,
                "kept {} bytes",
                c.body.capacity()
            );
            assert!(sink.0.is_empty(), "still in flight; the timeout ends it");
        }
    }

    #[test]
    fn a_body_longer_than_the_exact_one_is_a_body_error() {
        let t = template(BodyExpect::Exact(b"OK".to_vec()));
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let long = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nOKOKO";
        let (_, answers) = run(&mut c, &t, long.chunks(3).collect(), false);
        assert_eq!(answers.0, vec![Err(ErrorKind::Body)]);
        // A long prefix of the right body is still wrong, chunked too.
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let chunked = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n1\r\nK\r\n0\r\n\r\n";
        let (_, answers) = run(&mut c, &t, vec![chunked], false);
        assert_eq!(answers.0, vec![Err(ErrorKind::Body)]);
    }

    #[test]
    fn an_exact_body_is_compared_as_it_arrives_and_never_kept() {
        // A file, as the contract's static part serves: checked in pieces
        // across many reads, with nothing of it copied.
        let file: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let t = template(BodyExpect::Exact(file.clone()));
        let answer = |body: &[u8]| {
            let mut a = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            a.extend_from_slice(body);
            a
        };
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let whole = answer(&file);
        let (_, answers) = run(&mut c, &t, whole.chunks(250).collect(), false);
        assert_eq!(answers.0, vec![Ok(())]);
        assert_eq!(c.body.capacity(), 0, "the body was copied");

        // One byte wrong near the end, or one byte short, fails.
        let mut wrong = file.clone();
        wrong[99_990] ^= 1;
        let short = &file[..file.len() - 1];
        for body in [&wrong[..], short] {
            let mut c = Conn::new(1);
            c.enqueue(req(), &t.bytes);
            let bytes = answer(body);
            let (_, answers) = run(&mut c, &t, bytes.chunks(250).collect(), false);
            assert_eq!(answers.0, vec![Err(ErrorKind::Body)]);
        }
    }

    #[test]
    fn a_gzip_answer_is_decoded_then_checked_and_anything_else_is_an_encoding_error() {
        use std::io::Write as _;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let mut t = template(BodyExpect::Exact(b"OK".to_vec()));
        t.expect.coding = Coding::Gzip;
        let answer = |coding: Option<&str>, body: &[u8]| {
            let mut a = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n{}Content-Length: {}\r\n\r\n",
                coding.map_or(String::new(), |c| format!("Content-Encoding: {c}\r\n")),
                body.len()
            )
            .into_bytes();
            a.extend_from_slice(body);
            a
        };
        let cases: [(Vec<u8>, Result<(), ErrorKind>); 5] = [
            (answer(Some("gzip"), &gz(b"OK")), Ok(())),
            (answer(Some("gzip"), &gz(b"NO")), Err(ErrorKind::Body)),
            // Plain, claimed or not: the request asked for gzip.
            (answer(None, b"OK"), Err(ErrorKind::Encoding)),
            (answer(Some("gzip"), b"OK"), Err(ErrorKind::Encoding)),
            // A bomb stops at the bound.
            (
                answer(Some("gzip"), &gz(&vec![b'O'; 4 << 20])),
                Err(ErrorKind::Encoding),
            ),
        ];
        for (bytes, want) in cases {
            let mut c = Conn::new(1);
            c.enqueue(req(), &t.bytes);
            let (_, answers) = run(&mut c, &t, bytes.chunks(250).collect(), false);
            assert_eq!(answers.0, vec![want]);
            assert!(c.body.capacity() <= CODED_BODY_CAP + 4096);
        }
    }

    #[test]
    fn eof_mid_body_leaves_request_in_flight() {
        let t = template(BodyExpect::Any);
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let (outcome, answers) = run(&mut c, &t, vec![&OK[..OK.len() - 1]], true);
        assert_eq!(outcome, ReadOutcome::Eof);
        assert!(answers.0.is_empty());
        assert_eq!(c.in_flight(), 1);
        let mut sink = Answers::default();
        c.fail_all(ErrorKind::ClosedEarly, 0, &mut sink);
        assert_eq!(sink.0, vec![Err(ErrorKind::ClosedEarly)]);
        assert_eq!(c.in_flight(), 0);
    }

    #[test]
    fn body_until_close_ends_at_eof() {
        let t = template(BodyExpect::Exact(b"OK".to_vec()));
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let resp = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nOK";
        let (outcome, answers) = run(&mut c, &t, vec![resp], true);
        assert_eq!(outcome, ReadOutcome::Eof);
        assert_eq!(answers.0, vec![Ok(())]);
    }

    #[test]
    fn interim_answers_are_skipped_and_close_is_noted() {
        let t = template(BodyExpect::Any);
        let mut c = Conn::new(1);
        c.enqueue(req(), &t.bytes);
        let resp = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        let (_, answers) = run(&mut c, &t, vec![resp], false);
        assert_eq!(answers.0, vec![Ok(())]);
        assert!(c.closing());
    }

    #[test]
    fn partial_writes_resume() {
        struct Tiny(Vec<u8>, usize);
        impl Write for Tiny {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.1 == 0 {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                self.1 -= 1;
                let n = buf.len().min(3);
                self.0.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut c = Conn::new(1);
        c.enqueue(req(), b"0123456789");
        let mut w = Tiny(Vec::new(), 2);
        assert_eq!(c.flush(&mut w), Ok(6));
        assert!(c.has_output());
        w.1 = 10;
        assert_eq!(c.flush(&mut w), Ok(4));
        assert!(!c.has_output());
        assert_eq!(w.0, b"0123456789");
    }
}
