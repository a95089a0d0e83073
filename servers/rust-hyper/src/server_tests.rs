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

use crate::{serve, work, App, Root};

const PATIENCE: Duration = Duration::from_secs(10);

async fn start(db: Option<deadpool_postgres::Pool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Box::leak(Box::new(App {
        root: Root::NotFound,
        db,
    }));
    tokio::spawn(serve(listener, app, pending()));
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
