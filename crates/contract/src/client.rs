//! A small blocking HTTP/1.1 client for conformance checks: exact control
//! over the bytes sent (split writes, chunked bodies), and answers parsed with
//! the engine's own response parser.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

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
}

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

/// Where to send requests and how long to wait.
#[derive(Debug, Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub host: String,
    pub timeout: Duration,
}

/// One connection, reused for as many requests as the server allows.
pub struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
    host: String,
}

impl Client {
    pub fn connect(&self) -> Result<Connection, ClientError> {
        let stream =
            TcpStream::connect_timeout(&self.addr, self.timeout).map_err(ClientError::Connect)?;
        stream
            .set_read_timeout(Some(self.timeout))
            .map_err(ClientError::Connect)?;
        stream
            .set_write_timeout(Some(self.timeout))
            .map_err(ClientError::Connect)?;
        stream.set_nodelay(true).map_err(ClientError::Connect)?;
        Ok(Connection {
            stream,
            buf: Vec::new(),
            host: self.host.clone(),
        })
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

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.stream.write_all(bytes).map_err(ClientError::Write)?;
        self.stream.flush().map_err(ClientError::Write)
    }

    fn fill(&mut self) -> Result<usize, ClientError> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).map_err(ClientError::Read)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads one complete answer (skipping interim 1xx answers).
    pub fn read_response(&mut self, head_request: bool) -> Result<Response, ClientError> {
        loop {
            let parsed = parse_head(&self.buf, head_request)
                .map_err(|e| ClientError::Malformed(e.to_string()))?;
            let Some(head) = parsed else {
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
                    .map_err(|_| ClientError::Malformed("huge Content-Length".into()))?;
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
                    if dec.is_done() {
                        return Ok(body);
                    }
                    if self.fill()? == 0 {
                        return Err(ClientError::Closed);
                    }
                }
            }
            Framing::UntilClose => {
                while self.fill()? > 0 {}
                Ok(std::mem::take(&mut self.buf))
            }
        }
    }
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
