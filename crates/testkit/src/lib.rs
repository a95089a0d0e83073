//! Servers for tests: a well-behaved HTTP/1.1 server and deliberately broken
//! ones, one thread per connection, each bound to 127.0.0.1:0 so tests pass
//! the address in. Small and slow on purpose; the load tests at scale use the
//! `netbench-testserver` binary instead. `serve_contract` runs a server that
//! follows the contract, or breaks it in one chosen way.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

mod app_server;
mod apps_server;
mod contract_server;
mod db_server;
mod h2_server;
mod http1;
mod protocol_server;
mod tls_server;
mod ws_server;

pub use contract_server::{run_contract_server, serve_contract, serve_contract_db, Flaw};
pub use h2_server::{serve_broken_h2, serve_h2c, H2Flaw};
pub use protocol_server::{serve_protocols, ProtocolFlaw, ProtocolServer};
pub use tls_server::{make_certs, serve_tls, server_config, TestCerts, TlsFlaw, TlsTestServer};

/// How a test server answers each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// 200, text/plain, body `OK`, keep-alive (closes when asked to).
    Good,
    /// Like `Good` but the body is sent chunked.
    Chunked,
    /// Answers with the request body reversed (so each request of a pool has
    /// its own expected answer).
    ReverseBody,
    /// Waits this many milliseconds before each answer.
    Delay(u64),
    /// A good answer with another status code.
    Status(u16),
    /// A good answer with Content-Type text/html.
    WrongContentType,
    /// Body `NO` instead of `OK`.
    WrongBody,
    /// `HELLO THERE` instead of a status line.
    GarbageStatusLine,
    /// Content-Length 1 with a 2-byte body.
    ShortContentLength,
    /// Content-Length 10, three bytes of body, then close.
    CloseMidBody,
    /// Reads requests and never answers.
    Silent,
    /// Sends a good answer one byte at a time, a millisecond apart.
    ByteAtATime,
    /// Reads the request, then resets the connection (RST).
    ResetAfterRequest,
    /// Reads a few bytes, then resets, while the client is still writing.
    ResetWhileReading,
    /// Reads the request, then closes cleanly without answering.
    CloseWithoutAnswer,
    /// Announces `Content-Length: 10^18` and streams body bytes without end.
    EndlessBody,
    /// A chunked body whose chunks never end.
    EndlessChunked,
    /// A header line that never ends.
    EndlessHeader,
    /// Each good answer written twice: the second answers nothing asked.
    DoubleAnswer,
    /// A good answer at one byte a second.
    Trickle,
    /// 200 text/plain with terminal escape sequences in the body.
    Escapes,
    /// Accepts a WebSocket upgrade, then sends 125-byte pings without end
    /// and never reads again (issue 27: the pongs piled up in the client).
    WsPingFlood,
}

/// A running test server; it lives until the test process exits.
pub struct TestServer {
    pub addr: SocketAddr,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

/// Starts a server on 127.0.0.1:0 that runs `handle` on each connection in
/// a thread of its own.
pub(crate) fn spawn_server<H>(handle: H) -> TestServer
where
    H: Fn(TcpStream) + Send + Clone + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let handle = handle.clone();
            std::thread::spawn(move || handle(stream));
        }
    });
    TestServer { addr }
}

/// Starts a server with `behavior` on 127.0.0.1:0.
pub fn serve(behavior: Behavior) -> TestServer {
    spawn_server(move |stream| {
        let _ = handle(stream, behavior);
    })
}

/// A port on 127.0.0.1 with nothing listening (bound, then released).
pub fn refused_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr")
}

pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
    pub close: bool,
    /// The Sec-WebSocket-Key of a request that asks to upgrade to a
    /// WebSocket (`Upgrade: websocket`).
    pub ws_key: Option<String>,
    /// Every header as sent, in order.
    pub headers: Vec<(String, String)>,
    /// How the body comes, as the head says: read by `read_body`.
    pub body_length: BodyLength,
    /// Sent as HTTP/1.0 (no persistence unless asked, no chunked answers).
    pub http10: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyLength {
    Known(u64),
    Chunked,
}

impl Request {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The largest body a test server reads into memory: the contract's upload
/// limit (CONTRACT.md, "upload"), so a hostile Content-Length never becomes
/// an allocation of its size.
pub(crate) const BODY_LIMIT: u64 = netbench_contract::UPLOAD_LIMIT;

pub(crate) fn over_limit() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a request body over {BODY_LIMIT} bytes"),
    )
}

/// Reads a chunked request body of at most `limit` bytes.
fn read_chunked(r: &mut BufReader<TcpStream>, limit: u64) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let size = line.trim_end().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size.trim(), 16)
            .map_err(|_| io::Error::other("bad chunk size"))?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if r.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
                    return Ok(body);
                }
            }
        }
        if (body.len() + size) as u64 > limit {
            return Err(over_limit());
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
    }
}

/// Reads one request's head, leaving its body unread; `None` at a clean
/// end of the connection.
pub(crate) fn read_head(r: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let http10 = line.trim_end().ends_with("HTTP/1.0");
    let mut length = 0u64;
    let mut chunked = false;
    let mut close = false;
    let (mut upgrade_ws, mut ws_key) = (false, None);
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((name, value)) = l.split_once(':') {
            let value = value.trim();
            headers.push((name.to_string(), value.to_string()));
            if name.eq_ignore_ascii_case("upgrade") {
                upgrade_ws = value.eq_ignore_ascii_case("websocket");
            } else if name.eq_ignore_ascii_case("sec-websocket-key") {
                ws_key = Some(value.to_string());
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().map_err(|_| io::Error::other("bad length"))?;
            } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close")
            {
                close = true;
            } else if name.eq_ignore_ascii_case("transfer-encoding")
                && value.eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
    }
    Ok(Some(Request {
        method,
        path,
        body: Vec::new(),
        close,
        ws_key: ws_key.filter(|_| upgrade_ws),
        headers,
        body_length: if chunked {
            BodyLength::Chunked
        } else {
            BodyLength::Known(length)
        },
        http10,
    }))
}

/// Reads the body `req`'s head announced, refusing one over `BODY_LIMIT`
/// before reading any of it.
pub(crate) fn read_body(r: &mut BufReader<TcpStream>, req: &mut Request) -> io::Result<()> {
    req.body = match req.body_length {
        BodyLength::Chunked => read_chunked(r, BODY_LIMIT)?,
        BodyLength::Known(n) if n > BODY_LIMIT => return Err(over_limit()),
        BodyLength::Known(n) => {
            let mut body = vec![0; n as usize];
            r.read_exact(&mut body)?;
            body
        }
    };
    Ok(())
}

/// Reads one request, head and body; `None` at a clean end of the connection.
pub(crate) fn read_request(r: &mut BufReader<TcpStream>) -> io::Result<Option<Request>> {
    let Some(mut req) = read_head(r)? else {
        return Ok(None);
    };
    read_body(r, &mut req)?;
    Ok(Some(req))
}

fn reset(stream: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: valid socket descriptor and a valid linger struct of the size given.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

fn answer(status: u16, content_type: &str, body: &[u8], close: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// Writes `chunk` until the client goes away (the write fails).
fn stream_forever(w: &mut TcpStream, chunk: &[u8]) -> io::Result<()> {
    loop {
        w.write_all(chunk)?;
    }
}

fn handle(stream: TcpStream, behavior: Behavior) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut w = stream.try_clone()?;
    if behavior == Behavior::ResetWhileReading {
        let mut first = [0u8; 1024];
        let _ = (&stream).read(&mut first)?;
        reset(&stream);
        return Ok(());
    }
    let mut r = BufReader::new(stream);
    while let Some(req) = read_request(&mut r)? {
        let ok = |close| answer(200, "text/plain", b"OK", close);
        match behavior {
            Behavior::WsPingFlood => match &req.ws_key {
                Some(key) => return ws_server::ping_flood(w, key),
                None => w.write_all(&answer(400, "text/plain", b"ws only", true))?,
            },
            Behavior::Good => w.write_all(&ok(req.close))?,
            Behavior::Chunked => w.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nO\r\n1\r\nK\r\n0\r\n\r\n",
            )?,
            Behavior::ReverseBody => {
                let mut body = req.body.clone();
                body.reverse();
                w.write_all(&answer(200, "text/plain", &body, req.close))?
            }
            Behavior::Delay(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                w.write_all(&ok(req.close))?
            }
            Behavior::Status(code) => w.write_all(&answer(code, "text/plain", b"OK", req.close))?,
            Behavior::WrongContentType => w.write_all(&answer(200, "text/html", b"OK", req.close))?,
            Behavior::WrongBody => w.write_all(&answer(200, "text/plain", b"NO", req.close))?,
            Behavior::GarbageStatusLine => w.write_all(b"HELLO THERE\r\n\r\n")?,
            Behavior::ShortContentLength => {
                w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nOK")?
            }
            Behavior::CloseMidBody => {
                w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc")?;
                return Ok(());
            }
            Behavior::Silent => {}
            Behavior::ByteAtATime => {
                for b in ok(req.close) {
                    w.write_all(&[b])?;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Behavior::ResetAfterRequest => {
                reset(&w);
                return Ok(());
            }
            Behavior::CloseWithoutAnswer => return Ok(()),
            Behavior::EndlessBody => {
                w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000000000000000\r\n\r\n")?;
                stream_forever(&mut w, &[b'x'; 64 * 1024])?;
            }
            Behavior::EndlessChunked => {
                w.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")?;
                let mut chunk = b"8000\r\n".to_vec();
                chunk.extend_from_slice(&[b'x'; 0x8000]);
                chunk.extend_from_slice(b"\r\n");
                stream_forever(&mut w, &chunk)?;
            }
            Behavior::EndlessHeader => {
                w.write_all(b"HTTP/1.1 200 OK\r\nX-Endless: ")?;
                stream_forever(&mut w, &[b'a'; 16 * 1024])?;
            }
            Behavior::Escapes => w.write_all(&answer(
                200,
                "text/plain",
                b"\x1b]0;pwned\x07\x1b[2J\x1b[31mOK",
                req.close,
            ))?,
            Behavior::DoubleAnswer => w.write_all(&[ok(false), ok(false)].concat())?,
            Behavior::Trickle => {
                for b in ok(req.close) {
                    w.write_all(&[b])?;
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            Behavior::ResetWhileReading => unreachable!("handled above"),
        }
        if req.close {
            return Ok(());
        }
    }
    Ok(())
}
