//! The HTTP/2 connection driven by bytes a fuzzer chooses (the `h2_conn`
//! target): apart from `conn.rs`, so the state machine's file holds only
//! the state machine.

use std::io::Read;

use super::conn::H2Conn;
use crate::check::BodyExpect;
use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::ErrorKind;
use crate::plan::ConnPlan;
use crate::transport::ReadOutcome;

/// For the fuzz target `h2_conn`: an HTTP/2 connection with one stream per
/// request of a GET expecting `OK` in flight (`streams` of them) reads
/// `server` as the peer's bytes, `piece` bytes a read (the end of the stream
/// after them). Returns the answers it judged and how reading ended; it must
/// end, never panic or loop, and never judge more answers than it asked
/// for. Not API.
#[doc(hidden)]
pub fn fuzz_feed(
    server: &[u8],
    piece: usize,
    streams: usize,
) -> (Vec<Result<(), ErrorKind>>, Option<ErrorKind>) {
    use crate::check::{Expect, StatusExpect};
    use crate::plan::RequestTemplate;
    use std::io;

    struct Pieces<'a>(&'a [u8], usize);
    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1.max(1)).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    struct Answers(Vec<Result<(), ErrorKind>>);
    impl AnswerSink for Answers {
        fn answer(&mut self, _: &InFlight, outcome: Result<(), ErrorKind>, _: u64) {
            self.0.push(outcome);
        }
    }
    let template = RequestTemplate {
        bytes: b"GET /blank HTTP/1.1\r\nHost: h\r\n\r\n".to_vec(),
        is_head: false,
        expect: Expect {
            status: StatusExpect::Exact(200),
            content_type: Some("text/plain".into()),
            body: BodyExpect::Exact(b"OK".to_vec()),
            coding: Default::default(),
        },
    };
    let h2 = super::h2_requests(std::slice::from_ref(&template), "http").expect("a fixed request");
    let plan = ConnPlan {
        pipeline: streams,
        requests: std::slice::from_ref(&template),
        ws: None,
        tls: None,
        session: None,
        h2: &h2,
    };
    let mut conn = H2Conn::new();
    conn.start();
    let req = InFlight {
        template: 0,
        intended_ns: 0,
        sent_ns: 0,
        measured: true,
    };
    for _ in 0..conn.room(streams) {
        conn.enqueue(req, &plan);
    }
    let mut sink = Answers(Vec::new());
    let mut input = Pieces(server, piece);
    let mut scratch = vec![0u8; 4096];
    // Each call reads at least a byte or ends; the bound only guards the
    // fuzzer against a loop this function would have.
    for _ in 0..=server.len() + 1 {
        let outcome = conn.on_readable(&mut input, true, &mut scratch, &plan, 0, &mut sink, &mut 0);
        match outcome {
            ReadOutcome::Failed(kind) => return (sink.0, Some(kind)),
            ReadOutcome::Eof => return (sink.0, None),
            ReadOutcome::Open | ReadOutcome::More => {}
        }
    }
    panic!("reading {} bytes did not end", server.len());
}
