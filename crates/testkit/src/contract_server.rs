//! A server that follows the contract, built on the contract crate's
//! reference answer, or breaks it in one chosen way so tests can check that
//! `netbench verify` and `netbench load --work` catch it.

use std::collections::HashMap;
use std::io::{self, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use netbench_contract::{answer, format_http_date};

use crate::apps_server::Then;
use crate::db_server::DbConn;
use crate::{http1, spawn_server, TestServer};

/// The one way a contract server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// None: a correct server.
    None,
    /// Answers every work request with the answer to the first one.
    CannedWork,
    /// Caches work answers by requestId.
    CachedWork,
    /// `/blank` answers with Content-Type text/html.
    WrongContentType,
    /// No Date header anywhere.
    NoDate,
    /// A Date header that never changes.
    StuckDate,
    /// Not a flaw: a correct server whose cached Date is refreshed every
    /// 2 s, as a once-a-second tick that a busy machine delays by a second
    /// refreshes it. `verify` must pass it (issue 26: a 1.1 s check failed
    /// uvicorn under load).
    LateDateTick,
    /// Accepts a date that is not a valid timestamp (compares strings).
    LaxDates,
    /// Answers a db row or list it has answered before from a cache, so
    /// rows changed in the database are not seen.
    CachedDb,
    /// Echoes every WebSocket message with the right type and length but a
    /// fixed payload (`x` bytes).
    WsFixedPayload,
    /// Serves each static file without its last 1,000 bytes (and a
    /// Content-Length that says so).
    StaticTruncated,
    /// Ignores `If-None-Match`: the whole file every time, never 304.
    StaticNo304,
    /// A static file's Content-Length 10 short of the bytes it sends.
    StaticWrongLength,
    /// Answers an upload with a SHA-256 one hex digit off.
    UploadWrongDigest,
    /// Answers an upload from its head, before reading the body.
    UploadEarly,
    /// Reads an upload of any size, a 10 GB one included, instead of
    /// refusing one over the limit with 413.
    UploadNoLimit,
    /// Says `Content-Encoding: gzip` (or `br`) and sends the plain answer.
    GzipClaimPlain,
    /// Answers gzip to any request with an Accept-Encoding, even one that
    /// does not allow gzip (`identity`, `br`).
    GzipUnasked,
    /// Answers gzip requests with 16 MiB of zeros in 16 KB of gzip.
    GzipBomb,
    /// Renders fortunes' messages without HTML escaping.
    FortunesUnescaped,
    /// Lists fortunes in the table's order, not sorted by message.
    FortunesUnsorted,
    /// Serves the first fortunes page it rendered from then on.
    FortunesCached,
    /// Answers /queries with made-up rows, never reading the database.
    QueriesFabricated,
    /// Takes `queries=N` as it comes: 0 rows for 0, 501 for 501.
    QueriesUnclamped,
    /// Answers a World row it has read before from a cache.
    QueriesCached,
    /// Answers /updates with new numbers but never writes them.
    UpdatesUnwritten,
    /// Counts the app's visits once for all sessions, not per session: a
    /// page shows another session's counter.
    AppGlobalCounter,
    /// Makes a session on the app's first page but never sets its cookie.
    AppNoCookie,
    /// Keeps the app's counter in the cookie (a new one each page), with
    /// nothing on the server: no session to lock.
    AppCookieState,
    /// Reads a session's visits and writes them back after a pause,
    /// without its lock: requests at once count the same visit.
    AppNoLock,
    /// Renders the app's item rows without HTML escaping.
    AppUnescaped,
    /// Leaves contract/app's script out of the page.
    AppNoFiles,
    /// Makes a new session under the id a client sent (session fixation).
    AppAdoptsCookie,
    /// Answers the logout 200 and keeps the session.
    AppLogoutIgnored,
    /// Reads a page number it cannot parse, or out of range, as page 1.
    AppLax400,
    /// Shows the time of the render as the session's `since`.
    AppSinceNow,
    // Conformance flaws (issue 33): each makes its probes fail
    // (crates/testkit/tests/conformance.rs names which).
    /// Frames bodies carelessly: the last Content-Length wins, `+5` and
    /// junk parse, an unknown Transfer-Encoding is ignored, and a request
    /// with both CL and TE leaves the connection open.
    LaxFraming,
    /// Takes whitespace before the colon, folded lines and a line that
    /// starts with whitespace as fields of their own.
    LaxHeaders,
    /// Ends lines only at CRLF, so a request with bare LFs never ends.
    CrlfOnly,
    /// No Host checks: missing, doubled or invalid Host all served.
    LaxHost,
    /// Takes the first two whitespace-separated words of the request line,
    /// whatever follows, and never checks the version or the target's form.
    LaxRequestLine,
    /// Over-strict: 505 for HTTP/1.9, 400 for a leading empty line and for
    /// an absolute-form target.
    StrictRequestLine,
    /// No limit on the request line or the header block.
    NoHeaderLimit,
    /// Never closes after an answer: ignores `Connection: close`, HTTP/1.0
    /// and the close that CL with TE asks for.
    KeepsOpen,
    /// Answers HTTP/1.0 requests with a chunked body.
    Http10Chunked,
    /// Ignores `Expect: 100-continue`: waits for a body that waits for it.
    No100Continue,
    /// Sends 100 Continue to HTTP/1.0 requests too.
    ContinueHttp10,
    /// Answers the second of two pipelined requests first.
    PipelineReorder,
    /// Sends the body with a HEAD answer.
    HeadBody,
    /// Reads chunk sizes carelessly: leading hex digits, wrapping, and
    /// any two bytes after the data as its CRLF.
    LaxChunks,
    /// Refuses any chunk extension (RFC 9112 §7.1.1: ignore them).
    ChunkExtRejected,
}

impl Flaw {
    pub const NAMES: [(&'static str, Flaw); 51] = [
        ("none", Flaw::None),
        ("canned-work", Flaw::CannedWork),
        ("cached-work", Flaw::CachedWork),
        ("wrong-content-type", Flaw::WrongContentType),
        ("no-date", Flaw::NoDate),
        ("stuck-date", Flaw::StuckDate),
        ("late-date-tick", Flaw::LateDateTick),
        ("lax-dates", Flaw::LaxDates),
        ("cached-db", Flaw::CachedDb),
        ("ws-fixed-payload", Flaw::WsFixedPayload),
        ("static-truncated", Flaw::StaticTruncated),
        ("static-no-304", Flaw::StaticNo304),
        ("static-wrong-length", Flaw::StaticWrongLength),
        ("upload-wrong-digest", Flaw::UploadWrongDigest),
        ("upload-early", Flaw::UploadEarly),
        ("upload-no-limit", Flaw::UploadNoLimit),
        ("gzip-claim-plain", Flaw::GzipClaimPlain),
        ("gzip-unasked", Flaw::GzipUnasked),
        ("gzip-bomb", Flaw::GzipBomb),
        ("fortunes-unescaped", Flaw::FortunesUnescaped),
        ("fortunes-unsorted", Flaw::FortunesUnsorted),
        ("fortunes-cached", Flaw::FortunesCached),
        ("queries-fabricated", Flaw::QueriesFabricated),
        ("queries-unclamped", Flaw::QueriesUnclamped),
        ("queries-cached", Flaw::QueriesCached),
        ("updates-unwritten", Flaw::UpdatesUnwritten),
        ("app-global-counter", Flaw::AppGlobalCounter),
        ("app-no-cookie", Flaw::AppNoCookie),
        ("app-cookie-state", Flaw::AppCookieState),
        ("app-no-lock", Flaw::AppNoLock),
        ("app-unescaped", Flaw::AppUnescaped),
        ("app-no-files", Flaw::AppNoFiles),
        ("app-adopts-cookie", Flaw::AppAdoptsCookie),
        ("app-logout-ignored", Flaw::AppLogoutIgnored),
        ("app-lax-400", Flaw::AppLax400),
        ("app-since-now", Flaw::AppSinceNow),
        ("lax-framing", Flaw::LaxFraming),
        ("lax-headers", Flaw::LaxHeaders),
        ("crlf-only", Flaw::CrlfOnly),
        ("lax-host", Flaw::LaxHost),
        ("lax-request-line", Flaw::LaxRequestLine),
        ("strict-request-line", Flaw::StrictRequestLine),
        ("no-header-limit", Flaw::NoHeaderLimit),
        ("keeps-open", Flaw::KeepsOpen),
        ("http10-chunked", Flaw::Http10Chunked),
        ("no-100-continue", Flaw::No100Continue),
        ("continue-http10", Flaw::ContinueHttp10),
        ("pipeline-reorder", Flaw::PipelineReorder),
        ("head-body", Flaw::HeadBody),
        ("lax-chunks", Flaw::LaxChunks),
        ("chunk-ext-rejected", Flaw::ChunkExtRejected),
    ];

    /// The conformance flaws (issue 33), each failing its probes.
    pub const CONFORMANCE: [Flaw; 15] = [
        Flaw::LaxFraming,
        Flaw::LaxHeaders,
        Flaw::CrlfOnly,
        Flaw::LaxHost,
        Flaw::LaxRequestLine,
        Flaw::StrictRequestLine,
        Flaw::NoHeaderLimit,
        Flaw::KeepsOpen,
        Flaw::Http10Chunked,
        Flaw::No100Continue,
        Flaw::ContinueHttp10,
        Flaw::PipelineReorder,
        Flaw::HeadBody,
        Flaw::LaxChunks,
        Flaw::ChunkExtRejected,
    ];

    pub fn name(self) -> &'static str {
        Flaw::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    pub fn from_name(name: &str) -> Option<Flaw> {
        Flaw::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }
}

pub(crate) type Cache = Arc<Mutex<HashMap<String, Vec<u8>>>>;

pub fn serve_contract(flaw: Flaw) -> TestServer {
    serve_contract_db(flaw, None)
}

/// A contract server whose `db` part reads the database at `database_url`.
pub fn serve_contract_db(flaw: Flaw, database_url: Option<String>) -> TestServer {
    let cache: Cache = Arc::default();
    spawn_server(move |stream| {
        let mut db = DbConn::new(database_url.clone());
        let _ = handle(stream, flaw, &cache, &mut db, &|| {});
    })
}

/// Serves the contract on `listener` in this thread, forever. After
/// `crash_after` requests the process exits with status 3, as a server that
/// crashes under load would. After `accept_limit` connections it closes its
/// listener and serves only those, so later connects are refused: a server
/// that turns away part of a connection storm.
/// Spends `d` of this thread's CPU time (not wall time: a preempted thread
/// spins on until it has used it), so a server asked to burn costs that much
/// more CPU per request: a planted slowdown of a known size for the paired
/// A/B gate (bench/ab_gate.py).
fn burn_cpu(d: std::time::Duration) {
    if d.is_zero() {
        return;
    }
    let now = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    };
    let until = now() + d;
    while now() < until {
        std::hint::spin_loop();
    }
}

pub fn run_contract_server(
    listener: TcpListener,
    flaw: Flaw,
    crash_after: Option<u64>,
    accept_limit: Option<u64>,
    database_url: Option<String>,
    burn: std::time::Duration,
) -> ! {
    let cache: Cache = Arc::default();
    let served = Arc::new(AtomicU64::new(0));
    for (accepted, stream) in listener.incoming().enumerate() {
        if accept_limit.is_some_and(|limit| accepted as u64 >= limit) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let (cache, served) = (Arc::clone(&cache), Arc::clone(&served));
        let mut db = DbConn::new(database_url.clone());
        std::thread::spawn(move || {
            let count = || {
                let n = served.fetch_add(1, Ordering::Relaxed) + 1;
                if crash_after.is_some_and(|limit| n > limit) {
                    eprintln!(
                        "netbench-contract-server: crashing on purpose after {limit} requests",
                        limit = n - 1
                    );
                    std::process::exit(3);
                }
                burn_cpu(burn);
            };
            let _ = handle(stream, flaw, &cache, &mut db, &count);
        });
    }
    if accept_limit.is_some() {
        // The connection over the limit is dropped with the listener; those
        // accepted are served on their own threads.
        drop(listener);
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    std::process::exit(1)
}

fn respond(
    w: &mut TcpStream,
    flaw: Flaw,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    respond_with(w, flaw, status, content_type, &[], body)
}

/// An answer with `extra` headers; no Content-Type when `content_type` is
/// empty, and no Content-Length on a 304 (it would name the 200's length).
pub(crate) fn respond_with(
    w: &mut TcpStream,
    flaw: Flaw,
    status: u16,
    content_type: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> io::Result<()> {
    w.write_all(head_bytes(flaw, status, content_type, extra, body.len()).as_bytes())?;
    w.write_all(body)
}

/// The head of an answer whose body is `len` bytes.
fn head_bytes(
    flaw: Flaw,
    status: u16,
    content_type: &str,
    extra: &[(&str, &str)],
    len: usize,
) -> String {
    let date = match flaw {
        Flaw::NoDate => String::new(),
        Flaw::StuckDate => "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n".to_string(),
        _ => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            let shown = if flaw == Flaw::LateDateTick {
                now - now.rem_euclid(2)
            } else {
                now
            };
            format!("Date: {}\r\n", format_http_date(shown))
        }
    };
    let mut head = format!("HTTP/1.1 {status} X\r\n{date}");
    if !content_type.is_empty() {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if status != 304 {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn work(flaw: Flaw, cache: &Cache, body: &[u8]) -> (u16, Vec<u8>) {
    let key = match flaw {
        Flaw::CannedWork => Some(String::new()),
        Flaw::CachedWork => serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|d| d["requestId"].as_str().map(str::to_string)),
        _ => None,
    };
    if let Some(hit) = key
        .as_ref()
        .and_then(|k| cache.lock().unwrap().get(k).cloned())
    {
        return (200, hit);
    }
    let result = match flaw {
        Flaw::LaxDates => lax_answer(body),
        _ => answer(body).map_err(|_| ()),
    };
    match result {
        Ok(v) => {
            let out = serde_json::to_vec(&v).expect("a Value always serializes");
            if let Some(k) = key {
                cache.lock().unwrap().insert(k, out.clone());
            }
            (200, out)
        }
        Err(()) => (400, b"bad request".to_vec()),
    }
}

/// The answer as a server that only compares date strings would give it.
fn lax_answer(body: &[u8]) -> Result<serde_json::Value, ()> {
    let mut doc: serde_json::Value = serde_json::from_slice(body).map_err(|_| ())?;
    let dates: Vec<String> = doc["group"]["dates"]
        .as_array()
        .ok_or(())?
        .iter()
        .map(|d| d.as_str().map(str::to_string).ok_or(()))
        .collect::<Result<_, _>>()?;
    let min = dates.iter().min().ok_or(())?.clone();
    let max = dates.iter().max().ok_or(())?.clone();
    // The reference checks the rest of the document, given one valid date.
    doc["group"]["dates"] = serde_json::json!(["2000-01-01T00:00:00.000Z"]);
    let mut v = answer(&serde_json::to_vec(&doc).map_err(|_| ())?).map_err(|_| ())?;
    v["client"]["minDate"] = min.into();
    v["client"]["maxDate"] = max.into();
    Ok(v)
}

fn handle(
    stream: TcpStream,
    flaw: Flaw,
    cache: &Cache,
    db: &mut DbConn,
    on_request: &dyn Fn(),
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut w = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    loop {
        let mut req = match read_request(&mut r, &mut w, flaw)? {
            Read::End => return Ok(()),
            Read::Refused(refusal) => return http1::refuse_and_close(&mut r, &mut w, refusal),
            Read::Request(req) => req,
        };
        on_request();
        if req.method == "POST" && req.path == "/upload" {
            match crate::apps_server::upload(&mut r, &mut w, flaw, &mut req)? {
                Then::Close => return Ok(()),
                Then::KeepOpen if req.close => return Ok(()),
                Then::KeepOpen => continue,
            }
        }
        if let Err(e) = http1::read_body(&mut r, &mut req, flaw) {
            if e.kind() != io::ErrorKind::InvalidData {
                return Err(e);
            }
            let refusal = http1::Refusal {
                status: 400,
                why: "a body that cannot be framed",
            };
            return http1::refuse_and_close(&mut r, &mut w, refusal);
        }
        if req.method == "GET" && req.path == "/ws" {
            if let Some(key) = req.ws_key.take() {
                let fixed = flaw == Flaw::WsFixedPayload;
                return crate::ws_server::serve(r, w, &key, fixed);
            }
        }
        let mut close = req.close;
        if flaw == Flaw::PipelineReorder && !r.buffer().is_empty() {
            // The next request, already here, is answered first.
            if let Read::Request(mut next) = read_request(&mut r, &mut w, flaw)? {
                http1::read_body(&mut r, &mut next, flaw)?;
                route(&mut w, flaw, cache, db, &next)?;
                close |= next.close;
            }
        }
        route(&mut w, flaw, cache, db, &req)?;
        if close {
            return Ok(());
        }
    }
}

enum Read {
    Request(crate::Request),
    Refused(http1::Refusal),
    End,
}

/// Reads a head, with the 100 Continue it asks for sent before its body.
fn read_request(r: &mut BufReader<TcpStream>, w: &mut TcpStream, flaw: Flaw) -> io::Result<Read> {
    Ok(match http1::read_head(r, flaw)? {
        http1::Head::End => Read::End,
        http1::Head::Refused(refusal) => Read::Refused(refusal),
        http1::Head::Request(req) => {
            if http1::wants_continue(&req, flaw) {
                w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            }
            Read::Request(req)
        }
    })
}

/// Answers one request whose body has been read.
fn route(
    w: &mut TcpStream,
    flaw: Flaw,
    cache: &Cache,
    db: &mut DbConn,
    req: &crate::Request,
) -> io::Result<()> {
    let path = req.path.split('?').next().unwrap_or("");
    match (req.method.as_str(), path) {
        ("GET", "/blank") if flaw == Flaw::Http10Chunked && req.http10 => w.write_all(
            b"HTTP/1.1 200 X\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
        )?,
        ("GET", "/blank") => {
            let ct = if flaw == Flaw::WrongContentType {
                "text/html"
            } else {
                "text/plain"
            };
            respond(w, flaw, 200, ct, b"OK")?
        }
        ("HEAD", p) => {
            // The head GET would send, without its content (RFC 9110 §9.3.2).
            let (status, body): (u16, &[u8]) = match p {
                "/blank" => (200, b"OK"),
                _ => (404, b"not found"),
            };
            w.write_all(head_bytes(flaw, status, "text/plain", &[], body.len()).as_bytes())?;
            if flaw == Flaw::HeadBody {
                w.write_all(body)?;
            }
        }
        ("POST", "/work") => {
            let (status, body) = work(flaw, cache, &req.body);
            crate::apps_server::work_answer(w, flaw, req, status, &body)?
        }
        ("GET", p) if p.starts_with("/static/") => {
            crate::apps_server::static_answer(w, flaw, req, &p["/static/".len()..])?
        }
        ("GET", "/app") => crate::app_server::page(w, flaw, req)?,
        ("POST", "/app/logout") => crate::app_server::logout(w, flaw, req)?,
        ("GET", "/fortunes") => {
            let (status, ct, body) = crate::db_server::fortunes(db, flaw, cache);
            respond(w, flaw, status, ct, &body)?
        }
        ("GET", "/queries" | "/updates") => {
            let (status, ct, body) = crate::db_server::world(db, flaw, cache, &req.path);
            respond(w, flaw, status, ct, &body)?
        }
        ("GET", "/db" | "/db/list") => {
            let (status, ct, body) = crate::db_server::answer(db, flaw, cache, &req.path);
            respond(w, flaw, status, ct, &body)?
        }
        ("GET", "/ws") => respond(w, flaw, 426, "text/plain", b"upgrade to a WebSocket")?,
        ("GET", p) if p.starts_with("/echo/") => {
            respond(w, flaw, 200, "text/plain", &p.as_bytes()[6..])?
        }
        _ => respond(w, flaw, 404, "text/plain", b"not found")?,
    }
    Ok(())
}
