//! The HTTP/1.1 state machine driven by scripted reads: framing, checks,
//! bounds and the session of the contract's `app`.

use super::*;
use crate::check::{BodyExpect, Coding, Expect, StatusExpect, CODED_BODY_CAP};
use crate::plan::RequestTemplate;
use std::io;

/// A plan of `requests` alone, as the worker borrows one.
fn plan_of(requests: &[RequestTemplate]) -> ConnPlan<'_> {
    ConnPlan {
        pipeline: 1,
        requests,
        ws: None,
        tls: None,
        session: None,
        h2: &[],
    }
}

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
            &plan_of(std::slice::from_ref(t)),
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
                &plan_of(std::slice::from_ref(&t)),
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
                &plan_of(std::slice::from_ref(&t)),
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

/// A page of the app with one item row and one verbatim file, as the
/// session test asks for it and a server answers it.
fn app_page_template() -> RequestTemplate {
    use crate::app_page::AppPage;
    RequestTemplate {
        bytes: b"GET /app?page=1 HTTP/1.1\r\nHost: h\r\n\r\n".to_vec(),
        is_head: false,
        expect: Expect {
            status: StatusExpect::Exact(200),
            content_type: Some("text/html".into()),
            body: BodyExpect::AppPage(AppPage {
                items: vec![vec!["1".into(), "a < b".into()]],
                verbatim: vec![b"/* css */".to_vec()],
            }),
            coding: Default::default(),
        },
    }
}

fn app_answer(cookie: Option<&str>, visits: u64, since: i64) -> Vec<u8> {
    let body = format!(
        "<style>/* css */</style><table><tr><td>visits</td><td>{visits}</td></tr>\
         <tr><td>since</td><td>{since}</td></tr><tr><td>1</td><td>a &lt; b</td></tr></table>"
    );
    let cookie = cookie.map_or(String::new(), |c| format!("Set-Cookie: {c}; Path=/\r\n"));
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{cookie}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// One request queued as the worker queues it, its bytes as written, and
/// its answer read.
fn app_exchange(
    c: &mut Conn,
    plan: &ConnPlan<'_>,
    answer: &[u8],
) -> (Vec<u8>, Result<(), ErrorKind>) {
    c.enqueue_planned(req(), plan);
    let mut wrote = Vec::new();
    c.flush(&mut wrote).unwrap();
    let mut sock = Script {
        reads: VecDeque::from([answer.to_vec()]),
        eof: false,
    };
    let mut sink = Answers::default();
    let mut scratch = [0u8; 4096];
    let mut read = 0;
    c.on_readable(
        &mut sock,
        false,
        &mut scratch,
        plan,
        0,
        &mut sink,
        &mut read,
    );
    assert_eq!(sink.0.len(), 1, "one answer per request");
    (wrote, sink.0[0])
}

#[test]
fn a_session_carries_its_cookie_checks_each_page_and_logs_out_after_its_pages() {
    use crate::plan::SessionPlan;
    let page = app_page_template();
    let logout = RequestTemplate {
        bytes: b"POST /app/logout HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n".to_vec(),
        is_head: false,
        expect: Expect {
            status: StatusExpect::Exact(200),
            ..Expect::default()
        },
    };
    let sessions = SessionPlan { pages: 2, logout };
    let plan = ConnPlan {
        session: Some(&sessions),
        h2: &[],
        ..plan_of(std::slice::from_ref(&page))
    };
    let now = super::wall_ms();
    let cookie = "sid=0123456789abcdef0123";
    let mut c = Conn::for_plan(&plan);

    let (wrote, got) = app_exchange(&mut c, &plan, &app_answer(Some(cookie), 1, now));
    assert_eq!(got, Ok(()));
    assert_eq!(wrote, page.bytes, "the first page goes without a cookie");
    let (wrote, got) = app_exchange(&mut c, &plan, &app_answer(None, 2, now));
    assert_eq!(got, Ok(()));
    assert!(wrote.ends_with(b"Host: h\r\nCookie: sid=0123456789abcdef0123\r\n\r\n"));
    // Two pages: the third request is the logout, with the cookie.
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let (wrote, got) = app_exchange(&mut c, &plan, ok);
    assert_eq!(got, Ok(()));
    assert!(wrote.starts_with(b"POST /app/logout "));
    assert!(wrote.ends_with(b"Cookie: sid=0123456789abcdef0123\r\n\r\n"));
    // Then a new session, which must set a cookie again.
    let (wrote, got) = app_exchange(&mut c, &plan, &app_answer(None, 1, now));
    assert_eq!(wrote, page.bytes);
    assert_eq!(got, Err(ErrorKind::Session));
    // A page for another session's counter, or a wrong page, breaks it.
    let (_, got) = app_exchange(&mut c, &plan, &app_answer(Some(cookie), 1, now));
    assert_eq!(got, Ok(()));
    let (_, got) = app_exchange(&mut c, &plan, &app_answer(None, 5, now));
    assert_eq!(got, Err(ErrorKind::Session));
    let (_, got) = app_exchange(&mut c, &plan, &app_answer(Some(cookie), 1, now));
    assert_eq!(got, Ok(()));
    let wrong = String::from_utf8(app_answer(None, 2, now))
        .unwrap()
        .replace("a &lt; b", "a &lt; c");
    let (_, got) = app_exchange(&mut c, &plan, wrong.as_bytes());
    assert_eq!(got, Err(ErrorKind::Body));
    // After an error the session starts over: no cookie on the next page.
    let (wrote, _) = app_exchange(&mut c, &plan, &app_answer(Some(cookie), 1, now));
    assert_eq!(wrote, page.bytes);
}
