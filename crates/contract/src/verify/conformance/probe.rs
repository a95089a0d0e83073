//! The raw TCP prober: sends a case's exact bytes (malformed ones too),
//! reads the answers with a deadline, and notes how the connection ended.
//! The byte-level reading of answers (`Answers`) is pure, so it is tested
//! on scripted bytes; only `probe` touches a socket.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use netbench_engine::{parse_head, ChunkedDecoder, Framing};

use super::cases::{answers_wanted, wants_end, Case, Expect, Send};

/// The most body bytes kept of an answer: enough for `/echo/` bodies and a
/// reason; the rest is counted, not kept.
const KEEP_BODY: usize = 256;

/// The most bytes read from one case's connection: a server that streams
/// without end stops being read here.
const READ_CAP: usize = 4 * 1024 * 1024;

/// One final answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// Sent with `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// The first bytes of its body.
    pub body: Vec<u8>,
}

/// How the connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The server closed it (a read returned 0).
    Closed,
    /// The server reset it.
    Reset,
    /// Still open when the deadline passed.
    Open,
    /// We stopped reading: every answer wanted came and no end was asked for.
    NotWatched,
    /// Bytes that are no answer: what the parser said.
    Garbage(String),
}

/// What came back for one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Interim (1xx) statuses, in order.
    pub interim: Vec<u16>,
    pub answers: Vec<Answer>,
    pub end: End,
    /// A write that failed (the server stopped reading): its error.
    pub write_error: Option<String>,
    /// For cases that ask: whether a fresh connection was answered after.
    pub alive_after: Option<bool>,
}

/// Answers parsed from bytes as they arrive. Pure: fed bytes, asked to
/// parse, never reads a socket.
#[derive(Debug, Default)]
pub struct Answers {
    buf: Vec<u8>,
    pub interim: Vec<u16>,
    pub answers: Vec<Answer>,
    /// Which final answers (by index) answer a HEAD: they carry no body.
    heads: Vec<usize>,
}

impl Answers {
    pub fn new(heads: Vec<usize>) -> Self {
        Answers {
            heads,
            ..Answers::default()
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Parses every whole answer in the bytes so far; `eof` says no more
    /// will come (a body framed by the close ends there). Err on bytes
    /// that are no answer.
    pub fn parse(&mut self, eof: bool) -> Result<(), String> {
        loop {
            if self.buf.is_empty() {
                return Ok(());
            }
            let head_request = self.heads.contains(&self.answers.len());
            let head = match parse_head(&self.buf, head_request) {
                Ok(Some(h)) => h,
                Ok(None) if eof => return Err("the connection ended inside a head".into()),
                Ok(None) => return Ok(()),
                Err(e) => {
                    let start = String::from_utf8_lossy(&self.buf[..self.buf.len().min(40)])
                        .escape_debug()
                        .to_string();
                    return Err(format!("{e}: \"{start}\""));
                }
            };
            let (status, len) = (head.status, head.len);
            if (100..200).contains(&status) {
                self.interim.push(status);
                self.buf.drain(..len);
                continue;
            }
            let rest = &self.buf[len..];
            let (body, used) = match head.framing {
                Framing::Empty => (Vec::new(), 0),
                Framing::ContentLength(n) => {
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    if rest.len() < n {
                        if eof {
                            return Err(format!(
                                "the connection ended {} bytes into a body of {n}",
                                rest.len()
                            ));
                        }
                        return Ok(());
                    }
                    (rest[..n.min(KEEP_BODY)].to_vec(), n)
                }
                Framing::Chunked => {
                    let mut dec = ChunkedDecoder::default();
                    let mut body = Vec::new();
                    let used = dec
                        .decode(rest, |d| {
                            let room = KEEP_BODY.saturating_sub(body.len());
                            body.extend_from_slice(&d[..d.len().min(room)]);
                        })
                        .map_err(|e| format!("a chunked answer: {e}"))?;
                    if !dec.is_done() {
                        if eof {
                            return Err("the connection ended inside a chunked body".into());
                        }
                        return Ok(());
                    }
                    (body, used)
                }
                Framing::UntilClose => {
                    if !eof {
                        return Ok(());
                    }
                    (rest[..rest.len().min(KEEP_BODY)].to_vec(), rest.len())
                }
            };
            self.answers.push(Answer {
                status,
                chunked: head.framing == Framing::Chunked,
                body,
            });
            self.buf.drain(..len + used);
        }
    }

    /// Whether a body framed by the close is still being read.
    fn waiting_for_close(&self) -> bool {
        let head_request = self.heads.contains(&self.answers.len());
        matches!(
            parse_head(&self.buf, head_request),
            Ok(Some(h)) if h.framing == Framing::UntilClose && !(100..200).contains(&h.status)
        )
    }
}

/// Where a case's answers are awaited until: one deadline for the whole
/// case, so a server that trickles cannot stretch it.
struct Deadline(Instant);

impl Deadline {
    fn left(&self) -> Option<Duration> {
        let left = self.0.saturating_duration_since(Instant::now());
        (left > Duration::ZERO).then_some(left)
    }
}

/// Runs one case against `addr`; `timeout` bounds the whole case (and the
/// liveness check after it).
pub fn probe(
    addr: SocketAddr,
    case: &Case,
    timeout: Duration,
    alive: &[u8],
) -> Result<Seen, String> {
    let deadline = Deadline(Instant::now() + timeout);
    let mut stream = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    stream.set_nodelay(true).ok();
    // The first answer of a HEAD case answers the HEAD: no content.
    let heads = if case.expect == Expect::HeadThenGet {
        vec![0]
    } else {
        Vec::new()
    };
    let mut answers = Answers::new(heads);
    let mut write_error = None;
    let mut write = |stream: &mut TcpStream, bytes: &[u8]| {
        let _ = stream.set_write_timeout(deadline.left().or(Some(Duration::from_millis(1))));
        if let Err(e) = stream.write_all(bytes) {
            write_error = Some(e.to_string());
        }
    };
    let end = match &case.send {
        Send::Once(bytes) => {
            write(&mut stream, bytes);
            read_until(&mut stream, &mut answers, case, &deadline)
        }
        Send::AwaitContinue { head, body } => {
            write(&mut stream, head);
            // Read until an interim or a final answer, then send the body
            // only after a 100.
            let first = read_some(&mut stream, &mut answers, &deadline, |a| {
                !a.interim.is_empty() || !a.answers.is_empty()
            });
            match first {
                Some(end) => end,
                None => {
                    if answers.answers.is_empty() && answers.interim.contains(&100) {
                        write(&mut stream, body);
                    }
                    read_until(&mut stream, &mut answers, case, &deadline)
                }
            }
        }
    };
    let _ = stream.shutdown(Shutdown::Both);
    let alive_after = case.alive_after.then(|| answered(addr, alive, timeout));
    Ok(Seen {
        interim: answers.interim,
        answers: answers.answers,
        end,
        write_error,
        alive_after,
    })
}

/// Reads until the case has its answers, and, when it asks, the end.
fn read_until(
    stream: &mut TcpStream,
    answers: &mut Answers,
    case: &Case,
    deadline: &Deadline,
) -> End {
    let want = answers_wanted(&case.expect);
    let watch_end = wants_end(&case.expect);
    read_some(stream, answers, deadline, |a| {
        a.answers.len() >= want && !watch_end
    })
    .unwrap_or(End::NotWatched)
}

/// Reads and parses until `enough` says so (`None`), the connection ends,
/// bytes turn out not to be answers, or the deadline passes.
fn read_some(
    stream: &mut TcpStream,
    answers: &mut Answers,
    deadline: &Deadline,
    enough: impl Fn(&Answers) -> bool,
) -> Option<End> {
    let mut chunk = [0u8; 16 * 1024];
    let mut read = 0usize;
    loop {
        if let Err(e) = answers.parse(false) {
            return Some(End::Garbage(e));
        }
        if enough(answers) && !answers.waiting_for_close() {
            return None;
        }
        let Some(left) = deadline.left() else {
            return Some(End::Open);
        };
        if read > READ_CAP {
            return Some(End::Garbage(format!(
                "more than {READ_CAP} bytes of answers"
            )));
        }
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut chunk) {
            Ok(0) => {
                return Some(match answers.parse(true) {
                    Ok(()) => End::Closed,
                    Err(e) => End::Garbage(e),
                })
            }
            Ok(n) => {
                read += n;
                answers.feed(&chunk[..n]);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Some(End::Open)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                let _ = answers.parse(true);
                return Some(End::Reset);
            }
        }
    }
}

/// Whether a fresh connection gets a final answer to `request`.
fn answered(addr: SocketAddr, request: &[u8], timeout: Duration) -> bool {
    let deadline = Deadline(Instant::now() + timeout);
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, timeout) else {
        return false;
    };
    let _ = stream.set_write_timeout(Some(timeout));
    if stream.write_all(request).is_err() {
        return false;
    }
    let mut answers = Answers::default();
    let _ = read_some(&mut stream, &mut answers, &deadline, |a| {
        !a.answers.is_empty()
    });
    !answers.answers.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(bytes: &[u8], heads: Vec<usize>, eof: bool) -> (Answers, Result<(), String>) {
        let mut a = Answers::new(heads);
        a.feed(bytes);
        let r = a.parse(eof);
        (a, r)
    }

    #[test]
    fn pipelined_answers_are_split_by_their_framing() {
        let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\np1\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\np2\r\n0\r\n\r\n\
HTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n";
        let (a, r) = parsed(bytes, vec![], false);
        assert_eq!(r, Ok(()));
        let got: Vec<_> = a
            .answers
            .iter()
            .map(|x| (x.status, x.chunked, x.body.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (200, false, b"p1".to_vec()),
                (200, true, b"p2".to_vec()),
                (404, false, vec![])
            ]
        );
    }

    #[test]
    fn interim_answers_are_kept_apart() {
        let (a, r) = parsed(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            vec![],
            false,
        );
        assert_eq!(r, Ok(()));
        assert_eq!(a.interim, vec![100]);
        assert_eq!(a.answers.len(), 1);
    }

    #[test]
    fn a_head_answer_has_no_body_and_a_body_after_it_is_garbage() {
        let good = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK";
        let (a, r) = parsed(good, vec![0], false);
        assert_eq!(r, Ok(()));
        assert_eq!(a.answers.len(), 2);
        let bad = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOKHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK";
        let (a, r) = parsed(bad, vec![0], false);
        assert_eq!(a.answers.len(), 1);
        assert!(r.is_err(), "{r:?}");
    }

    #[test]
    fn partial_answers_wait_and_end_of_stream_settles_them() {
        let (a, r) = parsed(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
            vec![],
            false,
        );
        assert_eq!((a.answers.len(), r), (0, Ok(())));
        let (_, r) = parsed(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
            vec![],
            true,
        );
        assert!(r.is_err());
        let (a, r) = parsed(b"HTTP/1.0 200 OK\r\n\r\nuntil close", vec![], false);
        assert_eq!((a.answers.len(), r), (0, Ok(())));
        assert!(a.waiting_for_close());
        let (a, r) = parsed(b"HTTP/1.0 200 OK\r\n\r\nuntil close", vec![], true);
        assert_eq!(r, Ok(()));
        assert_eq!(a.answers[0].body, b"until close");
    }
}
