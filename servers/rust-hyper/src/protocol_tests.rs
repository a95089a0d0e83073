//! Tests of the listeners beside `PORT`: TLS with HTTP/1.1 and HTTP/2 (by
//! ALPN), h2c and gRPC, each the real accept loop on a loopback port, driven
//! by rustls' client and the h2 crate (gRPC's framing written by hand, so
//! the tests need no gRPC client). The certificate is made by openssl in a
//! temporary folder.

use std::future::pending;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Bytes;
use hyper::{HeaderMap, Request, StatusCode};
use prost::Message;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ProtocolVersion, RootCertStore};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::grpc::proto::{Group, WorkReply, WorkRequest};
use crate::server_tests::TempDir;
use crate::{forever, grpc, serve, tls, App, Protocol, Root};

const PATIENCE: Duration = Duration::from_secs(10);

const DOC: &str = r#"{"product":"WidgetPro-7","requestId":"5f0c6a3e","group":{"kind":"retail","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z"]}}"#;

/// A self-signed certificate for localhost and 127.0.0.1, as the brief's
/// manual runs make it; the folder holds `cert.pem` and `key.pem`.
fn certificate(what: &str) -> TempDir {
    let dir = TempDir::new(what);
    let status = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args([
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .current_dir(&dir.0)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(status.success(), "openssl made the certificate");
    dir
}

async fn start(protocol: Protocol) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = forever(App {
        root: Root::NotFound,
        db: None,
        static_dir: "static-missing".into(),
        sessions: Default::default(),
    });
    tokio::spawn(serve(listener, app, forever(protocol), pending()));
    addr
}

/// The TLS listener with a fresh certificate, and a client that trusts it.
async fn start_tls(what: &str) -> (SocketAddr, Arc<ClientConfig>) {
    let dir = certificate(what);
    let cert = dir.0.join("cert.pem");
    let key = dir.0.join("key.pem");
    let acceptor = tls::acceptor_from_files(cert.to_str().unwrap(), key.to_str().unwrap()).unwrap();
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&cert).unwrap())
        .unwrap();
    let config = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (start(Protocol::tls(acceptor)).await, Arc::new(config))
}

async fn connect_tls(
    addr: SocketAddr,
    config: &ClientConfig,
    alpn: &[&[u8]],
) -> TlsStream<TcpStream> {
    let mut config = config.clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    timeout(
        PATIENCE,
        TlsConnector::from(Arc::new(config)).connect(name, tcp),
    )
    .await
    .expect("a handshake in time")
    .expect("a handshake")
}

/// One HTTP/1.1 request with `Connection: close`: the status line and
/// headers, and the body.
async fn http1(mut stream: impl AsyncRead + AsyncWrite + Unpin, target: &str) -> (String, String) {
    let request = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // rustls' client reports a close without close_notify as an error, after the bytes.
    let _ = timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes");
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    (head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn tls_serves_http1() {
    let (addr, client) = start_tls("tls-http1").await;
    for alpn in [&[b"http/1.1".as_slice()][..], &[]] {
        let stream = connect_tls(addr, &client, alpn).await;
        let (_, session) = stream.get_ref();
        assert_eq!(session.protocol_version(), Some(ProtocolVersion::TLSv1_3));
        let want: Option<&[u8]> = alpn.first().copied();
        assert_eq!(session.alpn_protocol(), want);
        let (head, body) = http1(stream, "/blank").await;
        assert!(head.starts_with("http/1.1 200 "), "{head}");
        assert!(head.contains("\r\ncontent-type: text/plain"), "{head}");
        assert!(head.contains("\r\ndate: "), "{head}");
        assert_eq!(body, "OK");
    }
    let (head, body) = http1(connect_tls(addr, &client, &[]).await, "/echo/x-1").await;
    assert!(head.starts_with("http/1.1 200 "), "{head}");
    assert_eq!(body, "x-1");
}

/// One HTTP/2 exchange: status, headers, body and trailers.
struct Exchange {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
    trailers: Option<HeaderMap>,
}

async fn h2_exchange(
    mut client: h2::client::SendRequest<Bytes>,
    request: Request<()>,
    body: Option<Vec<u8>>,
) -> Exchange {
    client = client.ready().await.unwrap();
    let (response, mut send) = client.send_request(request, body.is_none()).unwrap();
    if let Some(body) = body {
        send.send_data(body.into(), true).unwrap();
    }
    let response = timeout(PATIENCE, response)
        .await
        .expect("an answer in time")
        .unwrap();
    let (head, mut received) = response.into_parts();
    let mut body = Vec::new();
    while let Some(chunk) = received.data().await {
        let chunk = chunk.unwrap();
        let _ = received.flow_control().release_capacity(chunk.len());
        body.extend_from_slice(&chunk);
    }
    Exchange {
        status: head.status,
        headers: head.headers,
        body,
        trailers: received.trailers().await.unwrap(),
    }
}

/// The h2 client of a connection that has done its handshake.
async fn h2_client<T>(io: T) -> h2::client::SendRequest<Bytes>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) = timeout(PATIENCE, h2::client::handshake(io))
        .await
        .expect("an HTTP/2 handshake in time")
        .unwrap();
    tokio::spawn(connection);
    client
}

/// Many streams at once on one connection: `/blank`, `/echo/`, `/work`
/// (good and bad) and an unknown path, each answered right.
async fn many_streams(client: h2::client::SendRequest<Bytes>, scheme: &str) {
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..40 {
        let uri = |path: &str| format!("{scheme}://localhost{path}");
        let json = |path: &str| Request::post(uri(path)).header("content-type", "application/json");
        let (request, body, status, want) = match i % 5 {
            0 => (Request::get(uri("/blank")), None, 200, "OK".to_owned()),
            1 => {
                let text = format!("s-{i}");
                (Request::get(uri(&format!("/echo/{text}"))), None, 200, text)
            }
            2 => {
                let max = format!("2020-01-12T10:53:{i:02}.773Z");
                let doc = DOC.replace("2020-01-12T10:53:17.773Z", &max);
                let want = json!({"product": "WidgetPro-7", "requestId": "5f0c6a3e", "client": {
                    "balance": 1234.56, "minDate": "2019-03-01T00:00:00.000Z", "maxDate": max}});
                (json("/work"), Some(doc.into_bytes()), 200, want.to_string())
            }
            3 => {
                let bad = DOC.replace("2019-03-01", "2019-02-29");
                (json("/work"), Some(bad.into_bytes()), 400, String::new())
            }
            _ => (Request::get(uri("/nope")), None, 404, String::new()),
        };
        let request = request.body(()).unwrap();
        let call = h2_exchange(client.clone(), request, body);
        calls.spawn(async move { (call.await, status, want) });
    }
    while let Some(call) = calls.join_next().await {
        let (answer, status, want) = call.unwrap();
        assert_eq!(answer.status.as_u16(), status);
        assert!(answer.headers.contains_key("date"));
        if status != 200 {
            continue;
        }
        if answer.headers["content-type"] == "application/json" {
            let got: Value = serde_json::from_slice(&answer.body).unwrap();
            assert_eq!(got, serde_json::from_str::<Value>(&want).unwrap());
        } else {
            assert_eq!(answer.headers["content-type"], "text/plain");
            assert_eq!(String::from_utf8(answer.body).unwrap(), want);
        }
    }
    assert!(
        client.current_max_send_streams() >= 100,
        "SETTINGS_MAX_CONCURRENT_STREAMS {}",
        client.current_max_send_streams()
    );
}

#[tokio::test]
async fn tls_serves_h2_by_alpn() {
    let (addr, client) = start_tls("tls-h2").await;
    let stream = connect_tls(addr, &client, &[b"h2", b"http/1.1"]).await;
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    many_streams(h2_client(stream).await, "https").await;
}

#[tokio::test]
async fn h2c_serves_prior_knowledge() {
    let addr = start(Protocol::h2c()).await;
    let stream = TcpStream::connect(addr).await.unwrap();
    many_streams(h2_client(stream).await, "http").await;
}

/// One gRPC call of `Compute`, framed by hand: the status and the reply.
async fn compute(addr: SocketAddr, request: &WorkRequest) -> (i32, Option<WorkReply>) {
    let client = h2_client(TcpStream::connect(addr).await.unwrap()).await;
    let message = request.encode_to_vec();
    // The length-prefixed message: not compressed, a 4-byte big-endian length.
    let mut body = vec![0u8];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(&message);
    let call = Request::post("http://localhost/netbench.Work/Compute")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let answer = h2_exchange(client, call, Some(body)).await;
    assert_eq!(answer.status, StatusCode::OK);
    // A call that fails at once is answered by its headers alone (trailers-only).
    let status = answer
        .trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| answer.headers.get("grpc-status"))
        .expect("a grpc-status")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let reply = (answer.body.len() >= 5).then(|| {
        assert_eq!(answer.body[0], 0, "an uncompressed message");
        let len = u32::from_be_bytes(answer.body[1..5].try_into().unwrap()) as usize;
        assert_eq!(answer.body.len(), 5 + len);
        WorkReply::decode(&answer.body[5..]).unwrap()
    });
    (status, reply)
}

fn work_request(dates: &[&str]) -> WorkRequest {
    WorkRequest {
        product: "WidgetPro-7".into(),
        request_id: "5f0c6a3e".into(),
        group: Some(Group {
            kind: "retail".into(),
            default: true,
            balance: 1234.56,
            dates: dates.iter().map(|d| d.to_string()).collect(),
        }),
    }
}

#[tokio::test]
async fn grpc_compute() {
    let incoming = grpc::bind("127.0.0.1", 0).await.unwrap();
    let addr = incoming.local_addr().unwrap();
    tokio::spawn(grpc::serve(incoming, pending()));

    let dates = [
        "2020-01-12T10:53:17.773Z",
        "2019-03-01T00:00:00.000Z",
        "2021-07-30T23:59:59.999Z",
    ];
    let (status, reply) = compute(addr, &work_request(&dates)).await;
    assert_eq!(status, 0);
    let reply = reply.expect("a reply");
    assert_eq!(reply.product, "WidgetPro-7");
    assert_eq!(reply.request_id, "5f0c6a3e");
    let client = reply.client.expect("the client");
    assert_eq!(client.balance, 1234.56);
    assert_eq!(client.min_date, "2019-03-01T00:00:00.000Z");
    assert_eq!(client.max_date, "2021-07-30T23:59:59.999Z");

    let mut no_group = work_request(&dates);
    no_group.group = None;
    for (what, request) in [
        ("no dates", work_request(&[])),
        ("2020-13-45", work_request(&["2020-13-45T99:00:00.000Z"])),
        (
            "29 February 2019",
            work_request(&[dates[0], "2019-02-29T00:00:00.000Z"]),
        ),
        ("a leap second", work_request(&["2016-12-31T23:59:60.000Z"])),
        ("no milliseconds", work_request(&["2020-01-12T10:53:17Z"])),
        ("no group", no_group),
    ] {
        let (status, reply) = compute(addr, &request).await;
        assert_eq!(status, 3, "{what}: INVALID_ARGUMENT");
        assert!(reply.is_none(), "{what}");
    }
}
