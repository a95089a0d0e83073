//! A small blocking HTTP/1.1 client for conformance checks: exact control
//! over the bytes sent (split writes, chunked bodies), and answers parsed with
//! the engine's own response parser.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netbench_engine::{parse_head, ChunkedDecoder, Framing};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("could not connect: {0}")]
    Connect(io::Error),
    #[error("could not send the request: {0}")]
    Write(io::Error),
    #[error("no complete answer: {0}")]
    Read(io::Error),
    #[error("the connection closed before the answer was complete")]
    Closed,
    #[error("the answer is not valid HTTP/1.1: {0}")]
    Malformed(String),
    #[error("no complete answer within {0:?} (raise --timeout if the server is slow but right)")]
    TimedOut(Duration),
    #[error(
        "not sent: an earlier request to this server got no complete answer within the timeout"
    )]
    GaveUp,
}

/// The longest answer head read before the answer counts as malformed.
const MAX_HEAD: usize = 64 * 1024;
/// The longest body read; contract answers are a few hundred bytes.
const MAX_BODY: usize = 8 << 20;

/// A complete answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub framing: Framing,
    /// The server said it closes the connection after this answer.
    pub close: bool,
}

impl Response {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Where to send requests and how long to wait. `timeout` bounds each whole
/// exchange (connect, write, every read), whatever pace the server keeps.
/// Once one exchange runs out of time the client (and its clones) sends
/// nothing more, so a server that trickles cannot stretch a run of checks to
/// a timeout per request.
#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub host: String,
    pub timeout: Duration,
    gave_up: Arc<AtomicBool>,
}

/// One connection, reused for as many requests as the server allows.
pub struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
    host: String,
    timeout: Duration,
    /// When the exchange under way must be over.
    deadline: Option<Instant>,
    gave_up: Arc<AtomicBool>,
}

impl Client {
    /// A client for the server at `addr`, named `addr` in the Host header.
    pub fn new(addr: SocketAddr, timeout: Duration) -> Self {
        Client {
            addr,
            host: addr.to_string(),
            timeout,
            gave_up: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether an exchange ran out of time, so nothing more is sent.
    pub fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::Relaxed)
    }

    pub fn connect(&self) -> Result<Connection, ClientError> {
        if self.gave_up() {
            return Err(ClientError::GaveUp);
        }
        let stream =
            TcpStream::connect_timeout(&self.addr, self.timeout).map_err(ClientError::Connect)?;
        stream.set_nodelay(true).map_err(ClientError::Connect)?;
        Ok(Connection {
            stream,
            buf: Vec::new(),
            host: self.host.clone(),
            timeout: self.timeout,
            deadline: None,
            gave_up: self.gave_up.clone(),
        })
    }

    /// A client for the same server whose give-up is its own: a check that
    /// may wait out the timeout on purpose (a server reading a 10 GB body)
    /// must not stop the checks after it from being sent.
    pub fn detached(&self) -> Client {
        Client {
            gave_up: Arc::new(AtomicBool::new(false)),
            ..self.clone()
        }
    }

    /// One request on a fresh connection.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Response, ClientError> {
        self.connect()?.request(method, path, body)
    }
}

impl Connection {
    /// The head of a request with `headers` added, up to its blank line;
    /// the caller sends the body and says how it is framed.
    pub fn head_bytes(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut out = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: netbench-verify\r\n",
            self.host
        );
        for (name, value) in headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        out.into_bytes()
    }

    /// Whether the server sent anything within `wait`, before the request
    /// was all sent: bytes of an answer it should not have given yet
    /// (kept for `read_response`), or `Closed` when it hung up.
    pub fn early_bytes(&mut self, wait: Duration) -> Result<usize, ClientError> {
        let mut chunk = [0u8; 4096];
        self.stream
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .map_err(ClientError::Read)?;
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(ClientError::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e) if is_timeout(&e) => Ok(0),
            Err(e) => Err(ClientError::Read(e)),
        }
    }

    /// The bytes of a request with a Content-Length body (or none).
    pub fn request_bytes(&self, method: &str, path: &str, body: Option<&[u8]>) -> Vec<u8> {
        let mut out = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: netbench-verify\r\n",
            self.host
        )
        .into_bytes();
        if let Some(b) = body {
            out.extend_from_slice(
                format!(
                    "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    b.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(b);
        } else {
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    /// The bytes of a request whose body is sent in chunks of `chunk` bytes.
    pub fn chunked_request_bytes(&self, path: &str, body: &[u8], chunk: usize) -> Vec<u8> {
        let mut out = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: netbench-verify\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
            self.host
        )
        .into_bytes();
        for piece in body.chunks(chunk.max(1)) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        out
    }

    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Response, ClientError> {
        let bytes = self.request_bytes(method, path, body);
        self.send(&bytes)?;
        self.read_response(method == "HEAD")
    }

    /// Writes `bytes` in `pieces` separate writes, `gap` apart.
    pub fn send_split(
        &mut self,
        bytes: &[u8],
        pieces: usize,
        gap: Duration,
    ) -> Result<(), ClientError> {
        let size = bytes.len().div_ceil(pieces.max(1));
        for (i, piece) in bytes.chunks(size.max(1)).enumerate() {
            if i > 0 {
                std::thread::sleep(gap);
            }
            self.send(piece)?;
        }
        Ok(())
    }

    /// Writes `bytes`; the exchange's deadline starts with its first write.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let mut rest = bytes;
        while !rest.is_empty() {
            let left = self.time_left()?;
            self.stream
                .set_write_timeout(Some(left))
                .map_err(ClientError::Write)?;
            match self.stream.write(rest) {
                Ok(0) => return Err(ClientError::Write(io::ErrorKind::WriteZero.into())),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => return Err(self.give_up()),
                Err(e) => return Err(ClientError::Write(e)),
            }
        }
        Ok(())
    }

    /// Time left in the exchange under way (starting one if none is).
    fn time_left(&mut self) -> Result<Duration, ClientError> {
        let timeout = self.timeout;
        let deadline = *self
            .deadline
            .get_or_insert_with(|| Instant::now() + timeout);
        match deadline.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => Ok(left),
            _ => Err(self.give_up()),
        }
    }

    fn give_up(&mut self) -> ClientError {
        self.gave_up.store(true, Ordering::Relaxed);
        ClientError::TimedOut(self.timeout)
    }

    fn fill(&mut self) -> Result<usize, ClientError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let left = self.time_left()?;
            self.stream
                .set_read_timeout(Some(left))
                .map_err(ClientError::Read)?;
            match self.stream.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => return Err(self.give_up()),
                Err(e) => return Err(ClientError::Read(e)),
            }
        }
    }

    /// Reads one complete answer (skipping interim 1xx answers), within
    /// the client's timeout counted from the request's first write.
    pub fn read_response(&mut self, head_request: bool) -> Result<Response, ClientError> {
        let answer = self.read_answer(head_request);
        self.deadline = None;
        answer
    }

    fn read_answer(&mut self, head_request: bool) -> Result<Response, ClientError> {
        loop {
            let parsed = parse_head(&self.buf, head_request)
                .map_err(|e| ClientError::Malformed(e.to_string()))?;
            let Some(head) = parsed else {
                if self.buf.len() > MAX_HEAD {
                    return Err(ClientError::Malformed(format!(
                        "the head is longer than {} KiB",
                        MAX_HEAD / 1024
                    )));
                }
                if self.fill()? == 0 {
                    return Err(ClientError::Closed);
                }
                continue;
            };
            let (status, framing, close, len) = (head.status, head.framing, head.close, head.len);
            let headers = all_headers(&self.buf[..len]);
            self.buf.drain(..len);
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let body = self.read_body(framing)?;
            return Ok(Response {
                status,
                headers,
                body,
                framing,
                close,
            });
        }
    }

    fn read_body(&mut self, framing: Framing) -> Result<Vec<u8>, ClientError> {
        match framing {
            Framing::Empty => Ok(Vec::new()),
            Framing::ContentLength(n) => {
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_BODY)
                    .ok_or_else(|| too_long(format!("Content-Length {n}")))?;
                while self.buf.len() < n {
                    if self.fill()? == 0 {
                        return Err(ClientError::Closed);
                    }
                }
                Ok(self.buf.drain(..n).collect())
            }
            Framing::Chunked => {
                let mut dec = ChunkedDecoder::default();
                let mut body = Vec::new();
                loop {
                    let used = dec
                        .decode(&self.buf, |d| body.extend_from_slice(d))
                        .map_err(|e| ClientError::Malformed(e.to_string()))?;
                    self.buf.drain(..used);
                    if body.len() > MAX_BODY {
                        return Err(too_long("a chunked body".into()));
                    }
                    if dec.is_done() {
                        return Ok(body);
                    }
                    if self.fill()? == 0 {
                        return Err(ClientError::Closed);
                    }
                }
            }
            Framing::UntilClose => {
                while self.fill()? > 0 {
                    if self.buf.len() > MAX_BODY {
                        return Err(too_long("a body ended by close".into()));
                    }
                }
                Ok(std::mem::take(&mut self.buf))
            }
        }
    }
}

fn too_long(what: String) -> ClientError {
    ClientError::Malformed(format!(
        "{what} is longer than the {} MiB a contract answer may have",
        MAX_BODY >> 20
    ))
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn all_headers(head: &[u8]) -> Vec<(String, String)> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(head) {
        Ok(_) => resp
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}
