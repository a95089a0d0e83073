//! End-to-end tests: the real accept loop on a loopback port, driven by
//! tokio-tungstenite's client and by raw HTTP/1.1 requests. The database test
//! needs DATABASE_URL (scripts/pg-dev.sh starts one) and is skipped without it.

use std::future::pending;
use std::net::SocketAddr;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

use crate::{forever, serve, work, App, Protocol, Root};

const PATIENCE: Duration = Duration::from_secs(10);

async fn start(db: Option<deadpool_postgres::Pool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Box::leak(Box::new(App {
        root: Root::NotFound,
        db,
        static_dir: "static-missing".into(),
        sessions: Default::default(),
    }));
    tokio::spawn(serve(listener, app, forever(Protocol::http1()), pending()));
    addr
}

/// Status and body of one request on its own connection.
async fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head[9..12].parse().unwrap();
    (status, body.to_owned())
}

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

async fn next(ws: &mut Client) -> Option<Message> {
    timeout(PATIENCE, ws.next())
        .await
        .expect("an answer in time")
        .map(|m| m.expect("a valid message"))
}

#[tokio::test]
async fn websocket_echo() {
    let addr = start(None).await;
    let (mut ws, response) = connect_async(format!("ws://{addr}/ws")).await.unwrap();
    assert_eq!(response.status(), 101);
    assert!(response.headers().get("sec-websocket-extensions").is_none());

    let big_text: String = (0..64 * 1024)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    let big_binary: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
    let messages = [
        Message::text("hello"),
        Message::text(""),
        Message::text("ünïcödé ✓"),
        Message::binary(vec![0u8, 1, 2, 255]),
        Message::binary(Vec::new()),
        Message::binary(vec![7u8; 126]),
        Message::text(big_text),
        Message::binary(big_binary),
    ];
    for message in messages {
        ws.send(message.clone()).await.unwrap();
        assert_eq!(next(&mut ws).await, Some(message));
    }

    ws.send(Message::Ping("are you there".into()))
        .await
        .unwrap();
    assert_eq!(
        next(&mut ws).await,
        Some(Message::Pong("are you there".into()))
    );

    // Three fragments with a ping between them: the pong comes first, then
    // the whole message.
    let fragments = [
        Message::Frame(Frame::message("one ", OpCode::Data(Data::Text), false)),
        Message::Ping("between".into()),
        Message::Frame(Frame::message("two ", OpCode::Data(Data::Continue), false)),
        Message::Frame(Frame::message("three", OpCode::Data(Data::Continue), true)),
    ];
    for fragment in fragments {
        ws.send(fragment).await.unwrap();
    }
    assert_eq!(next(&mut ws).await, Some(Message::Pong("between".into())));
    assert_eq!(next(&mut ws).await, Some(Message::text("one two three")));

    let close = CloseFrame {
        code: CloseCode::Away,
        reason: "bye".into(),
    };
    ws.send(Message::Close(Some(close))).await.unwrap();
    match next(&mut ws).await {
        Some(Message::Close(Some(frame))) => assert_eq!(frame.code, CloseCode::Away),
        other => panic!("expected a close, got {other:?}"),
    }
    // The server closes the TCP connection after its close.
    assert_eq!(next(&mut ws).await, None);
}

#[tokio::test]
async fn websocket_refuses_unmasked_frames() {
    let addr = start(None).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await
        .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        timeout(PATIENCE, stream.read_exact(&mut byte))
            .await
            .unwrap()
            .unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap().to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="));

    // A final text frame "hi" without the mask bit.
    stream.write_all(&[0x81, 0x02, b'h', b'i']).await.unwrap();
    let mut rest = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut rest))
        .await
        .expect("the server closes the connection")
        .ok();
    // Either nothing or a close frame (opcode 8), never the echo (opcode 1).
    assert!(
        rest.is_empty() || rest[0] == 0x88,
        "after an unmasked frame: {rest:?}"
    );
}

#[tokio::test]
async fn ws_and_db_refusals() {
    let addr = start(None).await;
    assert_eq!(get(addr, "/ws").await.0, 426);
    assert_eq!(get(addr, "/db?id=1").await.0, 503);
    assert_eq!(get(addr, "/db/list?from=1").await.0, 503);
    assert_eq!(get(addr, "/blank").await, (200, "OK".to_owned()));
}

/// Row `i` as contract/db/schema.sql seeds it.
fn seeded(i: i64) -> Value {
    let updated = Utc
        .timestamp_millis_opt(1_577_836_800_000 + i * 1_234_567)
        .unwrap();
    json!({
        "id": i,
        "name": format!("item-{i}"),
        "description": format!(r#"Row {i} of the netbench items table: "seeded", fixed & checked."#),
        "quantity": (i * 31) % 1000,
        "price": ((i * 7919) % 100_000) as f64 / 100.0,
        "updated": work::format_date(updated),
    })
}

async fn get_json(addr: SocketAddr, target: &str) -> Value {
    let (status, body) = get(addr, target).await;
    assert_eq!(status, 200, "{target}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn database_rows() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!("database_rows skipped: DATABASE_URL is not set (scripts/pg-dev.sh start)");
        return;
    };
    let addr = start(Some(crate::db::pool(&url, 4).unwrap())).await;

    for id in [1, 2, 99, 1000, 5000, 9999, 10000] {
        assert_eq!(get_json(addr, &format!("/db?id={id}")).await, seeded(id));
    }
    let list = |ids: std::ops::RangeInclusive<i64>| Value::Array(ids.map(seeded).collect());
    assert_eq!(get_json(addr, "/db/list?from=50").await, list(50..=149));
    assert_eq!(get_json(addr, "/db/list?from=1&count=1").await, list(1..=1));
    assert_eq!(
        get_json(addr, "/db/list?from=9999&count=5").await,
        list(9999..=10000)
    );
    assert_eq!(get_json(addr, "/db/list?from=10001").await, json!([]));
    assert_eq!(
        get_json(addr, "/db/list?from=1&count=1000")
            .await
            .as_array()
            .unwrap()
            .len(),
        1000
    );

    for target in ["/db?id=0", "/db?id=10001"] {
        assert_eq!(get(addr, target).await.0, 404, "{target}");
    }
    for target in [
        "/db?id=abc",
        "/db?id=1.5",
        "/db?id=",
        "/db",
        "/db?id=2147483648",
        "/db/list?from=1&count=0",
        "/db/list?from=1&count=1001",
        "/db/list?count=5",
    ] {
        assert_eq!(get(addr, target).await.0, 400, "{target}");
    }
}

// -- static, upload, json-comp (contract 1.2) ---------------------------------

/// The contract's static files and their SHA-256 (CONTRACT.md, "static").
const STATIC_FILES: [(&str, usize, &str); 2] = [
    (
        "14k",
        14 << 10,
        "57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be",
    ),
    (
        "1m",
        1 << 20,
        "3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c",
    ),
];

/// The contract's formula for a static file of `size` bytes, as
/// contract/static/make.py writes it.
fn static_bytes(size: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = size as u64 % (1 << 31);
    (0..size)
        .map(|i| {
            s = (1_103_515_245 * s + 12_345) % (1 << 31);
            if i % 64 == 63 {
                b'\n'
            } else {
                ALPHABET[((s >> 16) % 64) as usize]
            }
        })
        .collect()
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A folder of its own under the temporary folder, removed when dropped.
pub(crate) struct TempDir(pub(crate) std::path::PathBuf);

impl TempDir {
    pub(crate) fn new(what: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("rust-hyper-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn start_static(dir: std::path::PathBuf) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Box::leak(Box::new(App {
        root: Root::NotFound,
        db: None,
        static_dir: dir,
        sessions: Default::default(),
    }));
    tokio::spawn(serve(listener, app, forever(Protocol::http1()), pending()));
    addr
}

/// One answer: status, head and body as sent.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `request` (which asks for `Connection: close`) and reads until the
/// server closes; a reset after the answer counts as the close.
async fn exchange(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // A refused upload may be answered before the body is all written.
    let _ = stream.write_all(request).await;
    let mut all = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match timeout(PATIENCE, stream.read(&mut buf))
            .await
            .expect("the server answers and closes")
        {
            Ok(0) | Err(_) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
    }
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8(all[..end].to_vec()).unwrap();
    Answer {
        status: head[9..12].parse().unwrap(),
        head,
        body: all[end + 4..].to_vec(),
    }
}

fn get_with(target: &str, header: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: test\r\n{header}Connection: close\r\n\r\n").into_bytes()
}

#[tokio::test]
async fn static_files() {
    let tmp = TempDir::new("static");
    let dir = tmp.0.join("static");
    std::fs::create_dir(&dir).unwrap();
    for (name, size, digest) in STATIC_FILES {
        let data = static_bytes(size);
        assert_eq!(
            sha256_hex(&data),
            digest,
            "the test's formula makes {name} wrong"
        );
        std::fs::write(dir.join(name), data).unwrap();
    }
    std::fs::write(tmp.0.join("secret"), "outside").unwrap();
    let addr = start_static(dir).await;

    for (name, size, _) in STATIC_FILES {
        let target = format!("/static/{name}");
        let a = exchange(addr, &get_with(&target, "")).await;
        assert_eq!(a.status, 200, "{target}");
        assert!(
            a.body == static_bytes(size),
            "{target}: {} bytes",
            a.body.len()
        );
        assert_eq!(a.header("content-length"), Some(size.to_string().as_str()));
        assert_eq!(a.header("transfer-encoding"), None);
        let etag = a.header("etag").expect("an ETag").to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
            "{etag}"
        );
        let modified = httpdate::parse_http_date(a.header("last-modified").unwrap()).unwrap();
        let date = httpdate::parse_http_date(a.header("date").unwrap()).unwrap();
        assert!(modified <= date);
        let again = exchange(addr, &get_with(&target, "")).await;
        assert_eq!(again.header("etag"), Some(etag.as_str()));

        for tag in [etag.clone(), format!("W/{etag}"), format!("\"x\", {etag}")] {
            let a = exchange(
                addr,
                &get_with(&target, &format!("If-None-Match: {tag}\r\n")),
            )
            .await;
            assert_eq!((a.status, a.body.len()), (304, 0), "If-None-Match: {tag}");
            assert_eq!(a.header("etag"), Some(etag.as_str()));
        }
        let other = exchange(addr, &get_with(&target, "If-None-Match: \"other\"\r\n")).await;
        assert_eq!((other.status, other.body.len()), (200, size));
    }

    // The file and then another request on one connection: the length is right.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /static/14k HTTP/1.1\r\nHost: t\r\n\r\nGET /blank HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut both = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut both))
        .await
        .unwrap()
        .unwrap();
    assert!(
        both.ends_with(b"\r\n\r\nOK"),
        "{}",
        String::from_utf8_lossy(&both[both.len() - 100..])
    );

    for target in [
        "/static/nope",
        "/static/",
        "/static/..%2Fsecret",
        "/static/../secret",
        "/static/.",
        "/static/14k/x",
    ] {
        assert_eq!(
            exchange(addr, &get_with(target, "")).await.status,
            404,
            "{target}"
        );
    }
    // Without the folder, every file is 404.
    let addr = start(None).await;
    assert_eq!(
        exchange(addr, &get_with("/static/14k", "")).await.status,
        404
    );
}

fn upload_request(body: &[u8], chunked: bool) -> Vec<u8> {
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_owned()
    } else {
        format!("Content-Length: {}", body.len())
    };
    let mut out = format!(
        "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\n{framing}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    if chunked {
        for piece in body.chunks(100_000) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(body);
    }
    out
}

#[tokio::test]
async fn uploads() {
    let addr = start(None).await;
    let a = exchange(addr, &upload_request(&[0u8; 1024], false)).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert_eq!(
        String::from_utf8(a.body).unwrap(),
        r#"{"length":1024,"sha256":"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"}"#
    );

    // 8 MiB of varied bytes, with a Content-Length and chunked.
    let mut s = 7u64;
    let body: Vec<u8> = (0..8 << 20)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (s >> 56) as u8
        })
        .collect();
    let want = json!({ "length": body.len(), "sha256": sha256_hex(&body) });
    for chunked in [false, true] {
        let a = exchange(addr, &upload_request(&body, chunked)).await;
        assert_eq!(a.status, 200, "chunked: {chunked}");
        assert_eq!(serde_json::from_slice::<Value>(&a.body).unwrap(), want);
    }
}

#[tokio::test]
async fn oversized_uploads_are_refused_from_the_head() {
    let addr = start(None).await;
    for length in [(16u64 << 20) + 1, 10_000_000_000] {
        let mut request = format!(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n"
        )
        .into_bytes();
        request.extend_from_slice(&[b'x'; 64 * 1024]);
        // `exchange` waits for the close: the server must not wait for the body.
        let a = exchange(addr, &request).await;
        assert_eq!(a.status, 413, "Content-Length {length}");
        assert_eq!(a.header("connection"), Some("close"));
    }
    // A chunked body refused once it passes 16 MiB.
    let a = exchange(addr, &upload_request(&vec![1u8; 17 << 20], true)).await;
    assert_eq!(a.status, 413);
}

const EXAMPLE: &str = r#"{"product":"WidgetPro-7","requestId":"5f0c6a3e","group":{"kind":"retail","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z"]}}"#;

fn work_request(accept_encoding: Option<&str>, body: &str) -> Vec<u8> {
    let ae = accept_encoding.map_or(String::new(), |v| format!("Accept-Encoding: {v}\r\n"));
    format!(
        "POST /work HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n{ae}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn work_compressed() {
    let addr = start(None).await;
    let plain = exchange(addr, &work_request(None, EXAMPLE)).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("vary"), Some("accept-encoding"));
    assert_eq!(
        serde_json::from_slice::<Value>(&plain.body).unwrap(),
        json!({"product": "WidgetPro-7", "requestId": "5f0c6a3e", "client": {
            "balance": 1234.56, "minDate": "2019-03-01T00:00:00.000Z", "maxDate": "2020-01-12T10:53:17.773Z"}})
    );
    for ae in ["gzip", "gzip, br", "deflate, gzip;q=0.5", "*"] {
        let a = exchange(addr, &work_request(Some(ae), EXAMPLE)).await;
        assert_eq!(a.status, 200, "{ae}");
        assert_eq!(a.header("content-encoding"), Some("gzip"), "{ae}");
        assert_eq!(a.header("vary"), Some("accept-encoding"), "{ae}");
        assert_eq!(a.header("content-type"), Some("application/json"), "{ae}");
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&a.body[..]), &mut decoded)
            .unwrap();
        assert_eq!(decoded, plain.body, "{ae}");
    }
    // No brotli here: br alone, identity, or gzip refused get the plain answer.
    for ae in ["identity", "br", "gzip;q=0", "*;q=0"] {
        let a = exchange(addr, &work_request(Some(ae), EXAMPLE)).await;
        assert_eq!(a.status, 200, "{ae}");
        assert_eq!(a.header("content-encoding"), None, "{ae}");
        assert_eq!(a.body, plain.body, "{ae}");
    }
    let bad = exchange(addr, &work_request(Some("gzip"), "{\"product\":")).await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.header("vary"), Some("accept-encoding"));
}

// The app part (contract 1.4).

/// A request for `target` with our cookie and an `Accept-Encoding`, each
/// only when given.
fn app_request(method: &str, target: &str, sid: Option<&str>, ae: Option<&str>) -> Vec<u8> {
    let cookie = sid.map_or(String::new(), |s| format!("Cookie: sid={s}\r\n"));
    let ae = ae.map_or(String::new(), |v| format!("Accept-Encoding: {v}\r\n"));
    let length = if method == "POST" {
        "Content-Length: 0\r\n"
    } else {
        ""
    };
    format!(
        "{method} {target} HTTP/1.1\r\nHost: t\r\n{cookie}{ae}{length}Connection: close\r\n\r\n"
    )
    .into_bytes()
}

async fn app_get(addr: SocketAddr, k: u32, sid: Option<&str>, ae: Option<&str>) -> Answer {
    exchange(
        addr,
        &app_request("GET", &format!("/app?page={k}"), sid, ae),
    )
    .await
}

/// The `name=value` of every `Set-Cookie`.
fn set_cookies(a: &Answer) -> Vec<String> {
    a.head
        .lines()
        .filter_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case("set-cookie")
                .then(|| v.trim().split(';').next().unwrap_or("").to_owned())
        })
        .collect()
}

/// The id of the one `Set-Cookie` a new session must carry.
fn new_sid(a: &Answer) -> String {
    let cookies = set_cookies(a);
    assert_eq!(cookies.len(), 1, "{}", a.head);
    let id = cookies[0]
        .strip_prefix("sid=")
        .expect("our cookie")
        .to_owned();
    assert!((16..=128).contains(&id.len()), "{id}");
    id
}

/// The body, gunzipped when it says gzip.
fn page_text(a: &Answer) -> String {
    let bytes = if a.header("content-encoding") == Some("gzip") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&a.body[..]), &mut out)
            .expect("a gzip body");
        out
    } else {
        a.body.clone()
    };
    String::from_utf8(bytes).unwrap()
}

/// A cell's text as the contract reads it back: references decoded, ends
/// trimmed; a raw `<`, or a `&` that starts no reference, fails.
fn decode_cell(raw: &str) -> String {
    assert!(!raw.contains('<'), "raw < in {raw:?}");
    let mut out = String::new();
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let semi = after
            .find(';')
            .unwrap_or_else(|| panic!("raw & in {raw:?}"));
        let name = &after[..semi];
        let code = match name {
            "amp" => '&' as u32,
            "lt" => '<' as u32,
            "gt" => '>' as u32,
            "quot" => '"' as u32,
            "apos" => '\'' as u32,
            _ if name.starts_with("#x") || name.starts_with("#X") => {
                u32::from_str_radix(&name[2..], 16).expect("a hex reference")
            }
            _ if name.starts_with('#') => name[1..].parse().expect("a decimal reference"),
            _ => panic!("raw & in {raw:?}"),
        };
        out.push(char::from_u32(code).unwrap());
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    out.trim().to_owned()
}

fn cells(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("<td>") {
        let after = &rest[start + 4..];
        let end = after.find("</td>").expect("a closed cell");
        out.push(decode_cell(&after[..end]));
        rest = &after[end + 5..];
    }
    out
}

/// A 200 page's `visits` and `since`, its shape checked.
fn page_ok(a: &Answer, k: u32) -> (u64, u64) {
    assert_eq!(a.status, 200, "page={k}: {}", a.head);
    assert!(
        a.header("content-type").unwrap().starts_with("text/html"),
        "{}",
        a.head
    );
    let c = cells(&page_text(a));
    assert_eq!(c.len(), 4 + 50 * 5, "page={k}");
    assert_eq!((c[0].as_str(), c[2].as_str()), ("visits", "since"));
    (c[1].parse().unwrap(), c[3].parse().unwrap())
}

#[tokio::test]
async fn app_sessions() {
    let addr = start(None).await;
    let first = app_get(addr, 1, None, None).await;
    let a = new_sid(&first);
    let (visits, since_a) = page_ok(&first, 1);
    let now = chrono::Utc::now().timestamp_millis() as u64;
    assert_eq!(visits, 1);
    assert!(now.abs_diff(since_a) < 60_000, "since {since_a}, now {now}");
    let second = app_get(addr, 1, None, None).await;
    let b = new_sid(&second);
    assert_ne!(a, b);
    // Interleaved: each counts on its own, and gets no cookie again.
    for want in 2..=3 {
        for id in [&a, &b] {
            let answer = app_get(addr, 1, Some(id), None).await;
            let (visits, since) = page_ok(&answer, 1);
            assert_eq!(visits, want, "session {id}");
            if id == &a {
                assert_eq!(since, since_a);
            }
            assert!(set_cookies(&answer).is_empty(), "{}", answer.head);
        }
    }
    // Our cookie among others.
    let request = format!(
        "GET /app?page=1 HTTP/1.1\r\nHost: t\r\nCookie: theme=dark; sid={a}; lang=en\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(page_ok(&exchange(addr, request.as_bytes()).await, 1).0, 4);
}

#[tokio::test]
async fn app_ids() {
    let addr = start(None).await;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        assert!(seen.insert(new_sid(&app_get(addr, 2, None, None).await)));
    }
    // A made-up cookie names no session: a new one, with a new id.
    let made_up = "0123456789abcdef0123456789abcdef";
    let a = app_get(addr, 2, Some(made_up), None).await;
    let id = new_sid(&a);
    assert!(id != made_up && !seen.contains(&id));
    assert_eq!(page_ok(&a, 2).0, 1);
}

#[tokio::test]
async fn app_page_rows() {
    let addr = start(None).await;
    let labels = [
        "Tom & Jerry's cheese board",
        "<b>bold</b> move of the week",
        "\"Quoted\" goods, boxed",
        "O'Brien's pick for winter",
        "a < b > c, the ordered set",
    ];
    let money = |c: u64| format!("{}.{:02}", c / 100, c % 100);
    for k in [1u64, 4711, 99_999, 100_000] {
        let a = app_get(addr, k as u32, None, None).await;
        page_ok(&a, k as u32);
        let page = page_text(&a);
        assert!(page.contains(&format!("<title>Orders, page {k}</title>")));
        let c = cells(&page);
        for i in 1..=50u64 {
            let q = (k * 7 + i * 13) % 100 + 1;
            let price = (k * 7919 + i * 104_729) % 100_000;
            let want = [
                ((k - 1) * 50 + i).to_string(),
                format!("{}, no. {k}.{i}", labels[((k + i) % 5) as usize]),
                q.to_string(),
                money(price),
                money(q * price),
            ];
            let at = 4 + (i as usize - 1) * 5;
            assert_eq!(c[at..at + 5], want, "page={k} row {i}");
        }
    }
    assert_eq!((money(5), money(99_999)), ("0.05".into(), "999.99".into()));
}

#[tokio::test]
async fn app_escapes_and_carries_the_files() {
    let addr = start(None).await;
    let a = app_get(addr, 3, None, None).await;
    page_ok(&a, 3);
    let page = page_text(&a);
    for raw in [
        "Tom & Jerry",
        "<b>bold",
        "a < b > c",
        "\"Quoted\"",
        "O'Brien",
    ] {
        assert!(!page.contains(raw), "unescaped {raw:?}");
    }
    // Read here, not through the server's include_str!.
    for name in ["app.css", "app.js"] {
        let file = std::fs::read_to_string(format!("../../contract/app/{name}")).unwrap();
        assert!(
            page.contains(&file),
            "{name} is not in the page byte for byte"
        );
    }
    assert_eq!(a.header("cache-control"), Some("no-store"));
}

#[tokio::test]
async fn app_gzip() {
    let addr = start(None).await;
    for ae in ["gzip", "gzip, deflate, br", "*"] {
        let a = app_get(addr, 7, None, Some(ae)).await;
        assert_eq!(a.header("content-encoding"), Some("gzip"), "{ae}");
        assert_eq!(a.header("vary"), Some("accept-encoding"), "{ae}");
        assert!(a.body.len() < page_text(&a).len(), "{ae}");
        page_ok(&a, 7);
    }
    for ae in [None, Some("identity"), Some("gzip;q=0"), Some("br")] {
        let a = app_get(addr, 7, None, ae).await;
        assert_eq!(a.header("content-encoding"), None, "{ae:?}");
        assert_eq!(a.header("vary"), Some("accept-encoding"), "{ae:?}");
        page_ok(&a, 7);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn app_lock() {
    let addr = start(None).await;
    let id = new_sid(&app_get(addr, 1, None, None).await);
    let tasks: Vec<_> = (0..8u32)
        .map(|w| {
            let id = id.clone();
            tokio::spawn(async move {
                let mut visits = Vec::new();
                for n in 0..25 {
                    let a = app_get(addr, w * 25 + n + 1, Some(&id), Some("gzip")).await;
                    visits.push(page_ok(&a, w * 25 + n + 1).0);
                }
                visits
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort_unstable();
    assert_eq!(all, (2..=201).collect::<Vec<u64>>());
}

#[tokio::test]
async fn app_logout() {
    let addr = start(None).await;
    let old = new_sid(&app_get(addr, 9, None, None).await);
    app_get(addr, 9, Some(&old), None).await;
    let out = exchange(addr, &app_request("POST", "/app/logout", Some(&old), None)).await;
    assert_eq!(out.status, 200);
    let a = app_get(addr, 9, Some(&old), None).await;
    assert_ne!(new_sid(&a), old);
    assert_eq!(page_ok(&a, 9).0, 1);
    // Without a cookie, or with a dead one: 200 too.
    for sid in [None, Some(old.as_str())] {
        let out = exchange(addr, &app_request("POST", "/app/logout", sid, None)).await;
        assert_eq!(out.status, 200, "{sid:?}");
    }
}

#[tokio::test]
async fn app_errors() {
    let addr = start(None).await;
    let id = new_sid(&app_get(addr, 1, None, None).await);
    for query in [
        "?page=0",
        "?page=100001",
        "?page=abc",
        "?page=",
        "",
        "?other=1",
        "?page=-1",
        "?page=%2B1",
        "?page=1.5",
        "?page=99999999999999999999999",
    ] {
        let target = format!("/app{query}");
        let a = exchange(addr, &app_request("GET", &target, Some(&id), None)).await;
        assert_eq!(a.status, 400, "{target}");
    }
    // The 400s left the session alone.
    assert_eq!(
        page_ok(&app_get(addr, 100_000, Some(&id), None).await, 100_000).0,
        2
    );
    // Another method: 405.
    let a = exchange(addr, &app_request("POST", "/app?page=1", None, None)).await;
    assert_eq!(a.status, 405);
}
