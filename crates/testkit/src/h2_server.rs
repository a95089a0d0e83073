//! HTTP/2 servers for tests: a correct one on hyper's HTTP/2 (h2c, prior
//! knowledge) that answers the contract's blank, echo and work, and a small
//! one written with the engine's frame codec and loona-hpack that answers
//! `OK` to anything, or breaks HTTP/2 in one chosen way (`H2Flaw`), so the
//! engine's tests see every HTTP/2 error kind and every flow-control path.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use netbench_engine::h2::frame::{self, code, kind, parse_frame, setting, Frame};

use crate::{spawn_server, TestServer};

/// The one way the hand-written server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Flaw {
    /// None: `OK` to every request, its body read first.
    None,
    /// Answers every request with bytes that are no frame (a SETTINGS on a
    /// stream).
    Malformed,
    /// Answers with a header block of 80 KiB in HEADERS and CONTINUATIONs.
    HugeHeaders,
    /// Resets every stream (RST_STREAM, CANCEL).
    ResetEvery,
    /// Answers this many streams, then sends GOAWAY naming the last one it
    /// answered and takes no more.
    GoawayAfter(u32),
    /// Says INITIAL_WINDOW_SIZE 0 and never opens a window: a request body
    /// can never be sent.
    ZeroWindow,
    /// Windows of 100 bytes, opened again (WINDOW_UPDATE, stream and
    /// connection) as each DATA frame is read: bodies go in small steps.
    SmallWindows,
    /// MAX_CONCURRENT_STREAMS 2: a third stream at once is refused with
    /// RST_STREAM (REFUSED_STREAM), which a client keeping to the setting
    /// never sees.
    TwoStreams,
    /// Sends a PING before each answer, and resets the stream unless the
    /// PING before it was acknowledged.
    PingFirst,
    /// Not a flaw: SETTINGS_HEADER_TABLE_SIZE 64, held to from its
    /// acknowledgement on. The first header block after it must open with
    /// a table size update of at most 64 (RFC 7541 §4.2), or the connection
    /// ends with GOAWAY (COMPRESSION_ERROR), as a decode failure does.
    SmallTable,
    /// After its SETTINGS, sends PING frames without end and never reads
    /// again (issue 42: every PING's ACK was queued in the client).
    PingFlood,
    /// The same with SETTINGS frames, each owed an acknowledgement.
    SettingsFlood,
    /// The same with WINDOW_UPDATE frames of 1 on the connection, which
    /// ask for nothing back.
    WindowUpdateFlood,
    /// Reads until the client's first streams open, resets them, then
    /// resets them again without end (closed streams: ignored) and never
    /// reads again.
    RstFlood,
}

/// The header table [`H2Flaw::SmallTable`] asks for: room for one short
/// field (an `:authority` of 127.0.0.1 and a port is 57 octets).
pub const SMALL_TABLE: u32 = 64;

/// A correct HTTP/2 server (hyper, h2c with prior knowledge) on 127.0.0.1:0:
/// `GET /blank` is `OK`, `GET /echo/<text>` is `<text>`, `POST /work` the
/// contract's answer.
pub fn serve_h2c() -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let _ = tcp.set_nodelay(true);
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(tcp);
                    let _ = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(io, hyper::service::service_fn(contract_answer))
                    .await;
                });
            }
        });
    });
    TestServer { addr }
}

async fn contract_answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let post = req.method() == hyper::Method::POST;
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let (status, ct, out) = match (post, path.as_str()) {
        (false, "/blank") => (200, "text/plain", Bytes::from_static(b"OK")),
        (false, p) if p.starts_with("/echo/") => {
            (200, "text/plain", Bytes::from(p[6..].to_string()))
        }
        (true, "/work") => match netbench_contract::answer(&body) {
            Ok(v) => (
                200,
                "application/json",
                Bytes::from(serde_json::to_vec(&v).expect("a Value serializes")),
            ),
            Err(_) => (400, "text/plain", Bytes::from_static(b"bad request")),
        },
        _ => (404, "text/plain", Bytes::from_static(b"not found")),
    };
    let mut resp = Response::new(Full::new(out));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).expect("a status");
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(ct),
    );
    Ok(resp)
}

/// The hand-written HTTP/2 server with `flaw`, on 127.0.0.1:0.
pub fn serve_broken_h2(flaw: H2Flaw) -> TestServer {
    spawn_server(move |stream| {
        let _ = Session::new(stream, flaw).run();
    })
}

/// One connection of the hand-written server.
struct Session {
    stream: TcpStream,
    flaw: H2Flaw,
    input: Vec<u8>,
    decoder: loona_hpack::Decoder<'static>,
    answered: u32,
    /// Streams whose HEADERS came and whose answer did not go yet.
    open: Vec<u32>,
    pings_sent: u64,
    pings_acked: u64,
    going_away: bool,
    /// SmallTable: the next header block must start with a size update.
    update_due: bool,
}

impl Session {
    fn new(stream: TcpStream, flaw: H2Flaw) -> Self {
        Session {
            stream,
            flaw,
            input: Vec::new(),
            decoder: loona_hpack::Decoder::new(),
            answered: 0,
            open: Vec::new(),
            pings_sent: 0,
            pings_acked: 0,
            going_away: false,
            update_due: false,
        }
    }

    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    fn run(mut self) -> std::io::Result<()> {
        let _ = self.stream.set_nodelay(true);
        let mut preface = [0u8; 24];
        self.stream.read_exact(&mut preface)?;
        if preface != frame::PREFACE {
            return Ok(());
        }
        let mut settings = Vec::new();
        let params: Vec<(u16, u32)> = match self.flaw {
            H2Flaw::ZeroWindow => vec![(setting::INITIAL_WINDOW_SIZE, 0)],
            H2Flaw::SmallWindows => vec![(setting::INITIAL_WINDOW_SIZE, 100)],
            H2Flaw::TwoStreams => vec![(setting::MAX_CONCURRENT_STREAMS, 2)],
            H2Flaw::SmallTable => vec![(setting::HEADER_TABLE_SIZE, SMALL_TABLE)],
            _ => Vec::new(),
        };
        frame::write_settings(&mut settings, &params, false);
        self.send(&settings)?;
        if let Some(unit) = self.flood_unit()? {
            return self.flood(&unit);
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            self.input.extend_from_slice(&chunk[..n]);
            let mut at = 0;
            while let Ok(Some((f, used))) = parse_frame(&self.input[at..], frame::MAX_FRAME_LIMIT) {
                let f = owned(f);
                at += used;
                self.frame(f)?;
            }
            self.input.drain(..at);
        }
    }

    fn frame(&mut self, f: OwnedFrame) -> std::io::Result<()> {
        let mut out = Vec::new();
        match f {
            OwnedFrame::Settings { ack: false } => frame::write_settings(&mut out, &[], true),
            OwnedFrame::Settings { ack: true } if self.flaw == H2Flaw::SmallTable => {
                self.decoder
                    .set_max_allowed_table_size(SMALL_TABLE as usize);
                self.update_due = true;
            }
            OwnedFrame::Ping { ack: true } => self.pings_acked += 1,
            OwnedFrame::Headers {
                stream,
                end_stream,
                block,
            } => {
                // 001xxxxx opens a size update; with a 5-bit prefix, 64 is
                // 0x3f then 0x21, so any first byte below 0x3f is at most 30.
                let updated = matches!(block.first(), Some(&b) if b & 0xe0 == 0x20)
                    && (block[0] != 0x3f || block.get(1).is_some_and(|&b| b <= 0x21));
                let decoded = self.decoder.decode_with_cb(&block, |_, _| {}).is_ok();
                if !decoded || (std::mem::take(&mut self.update_due) && !updated) {
                    // A connection error: GOAWAY, then the connection ends.
                    frame::write_goaway(&mut out, stream, code::COMPRESSION_ERROR);
                    self.send(&out)?;
                    return Err(std::io::Error::other("a header block failed to decode"));
                }
                if self.going_away {
                    return Ok(());
                }
                if self.flaw == H2Flaw::TwoStreams && self.open.len() >= 2 {
                    frame::write_rst_stream(&mut out, stream, 0x7);
                } else if end_stream {
                    self.answer(stream, &mut out);
                } else {
                    self.open.push(stream);
                }
            }
            OwnedFrame::Data {
                stream,
                end_stream,
                flow,
            } => {
                if self.flaw == H2Flaw::SmallWindows && flow > 0 {
                    frame::write_window_update(&mut out, 0, flow);
                    if !end_stream {
                        frame::write_window_update(&mut out, stream, flow);
                    }
                }
                if end_stream && self.open.contains(&stream) {
                    self.open.retain(|&s| s != stream);
                    self.answer(stream, &mut out);
                }
            }
            _ => {}
        }
        if !out.is_empty() {
            self.send(&out)?;
        }
        Ok(())
    }

    /// One unit of the flood a flooding flaw sends, or None.
    fn flood_unit(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut unit = Vec::new();
        match self.flaw {
            H2Flaw::PingFlood => {
                frame::write_header(&mut unit, 8, kind::PING, 0, 0);
                unit.extend_from_slice(b"floodppp");
            }
            H2Flaw::SettingsFlood => {
                frame::write_settings(&mut unit, &[(setting::MAX_CONCURRENT_STREAMS, 100)], false)
            }
            H2Flaw::WindowUpdateFlood => frame::write_window_update(&mut unit, 0, 1),
            H2Flaw::RstFlood => {
                for stream in self.first_streams()? {
                    frame::write_rst_stream(&mut unit, stream, code::CANCEL);
                }
            }
            _ => return Ok(None),
        }
        Ok(Some(unit))
    }

    /// Reads until a HEADERS frame has come; the streams opened by then.
    fn first_streams(&mut self) -> std::io::Result<Vec<u32>> {
        let mut chunk = [0u8; 16 * 1024];
        let mut streams = Vec::new();
        while streams.is_empty() {
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.input.extend_from_slice(&chunk[..n]);
            let mut at = 0;
            while let Ok(Some((f, used))) = parse_frame(&self.input[at..], frame::MAX_FRAME_LIMIT) {
                at += used;
                if let Frame::Headers { stream, .. } = f {
                    streams.push(stream);
                }
            }
            self.input.drain(..at);
        }
        Ok(streams)
    }

    /// Writes `unit` over and over (64 KiB at a time) and never reads,
    /// until the client goes away.
    fn flood(&mut self, unit: &[u8]) -> std::io::Result<()> {
        let batch = unit.repeat((64 * 1024 / unit.len()).max(1));
        loop {
            self.send(&batch)?;
        }
    }

    /// The answer to `stream`, as the flaw makes it.
    fn answer(&mut self, stream: u32, out: &mut Vec<u8>) {
        match self.flaw {
            H2Flaw::Malformed => {
                frame::write_header(out, 0, kind::SETTINGS, 0, stream);
                return;
            }
            H2Flaw::ResetEvery => {
                frame::write_rst_stream(out, stream, code::CANCEL);
                return;
            }
            H2Flaw::PingFirst => {
                if self.pings_acked < self.pings_sent {
                    frame::write_rst_stream(out, stream, code::PROTOCOL_ERROR);
                    return;
                }
                frame::write_header(out, 8, kind::PING, 0, 0);
                out.extend_from_slice(&self.pings_sent.to_be_bytes());
                self.pings_sent += 1;
            }
            _ => {}
        }
        let mut encoder = loona_hpack::Encoder::new();
        let mut fields: Vec<(&[u8], &[u8])> =
            vec![(b":status", b"200"), (b"content-type", b"text/plain")];
        // Values that differ, so the encoder cannot index them away.
        let fillers: Vec<Vec<u8>> = (0..80)
            .map(|i| format!("{i:04}{}", "x".repeat(996)).into_bytes())
            .collect();
        if self.flaw == H2Flaw::HugeHeaders {
            for f in &fillers {
                fields.push((b"x-filler", f));
            }
        }
        let block = encoder.encode(fields);
        frame::write_headers(out, stream, &block, false, frame::DEFAULT_MAX_FRAME);
        frame::write_data(out, stream, b"OK", true);
        self.answered += 1;
        if let H2Flaw::GoawayAfter(n) = self.flaw {
            if self.answered == n {
                frame::write_goaway(out, stream, code::NO_ERROR);
                self.going_away = true;
            }
        }
    }
}

/// What the server keeps of a frame past the buffer it was read from.
enum OwnedFrame {
    Settings {
        ack: bool,
    },
    Ping {
        ack: bool,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        block: Vec<u8>,
    },
    Data {
        stream: u32,
        end_stream: bool,
        flow: u32,
    },
    Other,
}

fn owned(f: Frame<'_>) -> OwnedFrame {
    match f {
        Frame::Settings { ack, .. } => OwnedFrame::Settings { ack },
        Frame::Ping { ack, .. } => OwnedFrame::Ping { ack },
        // The client's header blocks fit one frame (END_HEADERS); a longer
        // one is not this server's concern.
        Frame::Headers {
            stream,
            end_stream,
            block,
            ..
        } => OwnedFrame::Headers {
            stream,
            end_stream,
            block: block.to_vec(),
        },
        Frame::Data {
            stream,
            end_stream,
            flow,
            ..
        } => OwnedFrame::Data {
            stream,
            end_stream,
            flow,
        },
        _ => OwnedFrame::Other,
    }
}
