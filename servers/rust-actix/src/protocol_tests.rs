//! Tests of the listeners beside `PORT`: TLS with HTTP/1.1 and HTTP/2 (by
//! ALPN) and h2c, each a real actix-web server on loopback ports, driven by
//! rustls' client and the h2 crate. The certificate is made by openssl in a
//! temporary folder.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use http::{HeaderMap, Request, StatusCode};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ProtocolVersion, RootCertStore};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::{listen, tls, Ports, Root};

const PATIENCE: Duration = Duration::from_secs(10);

const DOC: &str = r#"{"product":"WidgetPro-7","requestId":"5f0c6a3e","group":{"kind":"retail","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z"]}}"#;

/// A folder of its own under the temporary folder, removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A self-signed certificate for localhost and 127.0.0.1, as the brief's
/// manual runs make it; the folder holds `cert.pem` and `key.pem`.
fn certificate(what: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("rust-actix-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = TempDir(dir);
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

/// A server with all three listeners on ports of the system's choosing: the
/// TLS one, the h2c one, and a client configuration that trusts the
/// server's certificate.
fn start(what: &str) -> (SocketAddr, SocketAddr, ClientConfig) {
    let dir = certificate(what);
    let cert = dir.0.join("cert.pem");
    let key = dir.0.join("key.pem");
    let config = tls::config_from_files(cert.to_str().unwrap(), key.to_str().unwrap()).unwrap();
    let ports = Ports {
        plain: 0,
        tls: Some((0, config)),
        h2c: Some(0),
    };
    let listening = listen(Root::NotFound, "127.0.0.1", ports).unwrap();
    actix_web::rt::spawn(listening.server);
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&cert).unwrap())
        .unwrap();
    let client = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (listening.tls[0], listening.h2c[0], client)
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
/// headers (in lower case), and the body.
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

#[actix_web::test]
async fn tls_serves_http1() {
    let (addr, _, client) = start("tls-http1");
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

/// One HTTP/2 exchange: status, headers and body.
struct Exchange {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

async fn h2_exchange(
    client: h2::client::SendRequest<Bytes>,
    request: Request<()>,
    body: Option<Vec<u8>>,
) -> Exchange {
    let mut client = client.ready().await.unwrap();
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
    }
}

/// The h2 client of a connection that has done its handshake.
async fn h2_client<T>(io: T) -> h2::client::SendRequest<Bytes>
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let (client, connection) = timeout(PATIENCE, h2::client::handshake(io))
        .await
        .expect("an HTTP/2 handshake in time")
        .unwrap();
    actix_web::rt::spawn(connection);
    client
}

/// Many streams at once on one connection: `/blank`, `/echo/`, `/work`
/// (good and bad) and an unknown path, each answered right.
async fn many_streams(client: h2::client::SendRequest<Bytes>, scheme: &str) {
    let mut calls = Vec::new();
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
                let want = format!(
                    r#"{{"product":"WidgetPro-7","requestId":"5f0c6a3e","client":{{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"{max}"}}}}"#
                );
                (json("/work"), Some(doc.into_bytes()), 200, want)
            }
            3 => {
                let bad = DOC.replace("2019-03-01", "2019-02-29");
                (json("/work"), Some(bad.into_bytes()), 400, String::new())
            }
            _ => (Request::get(uri("/nope")), None, 404, String::new()),
        };
        let request = request.body(()).unwrap();
        let call = h2_exchange(client.clone(), request, body);
        calls.push((actix_web::rt::spawn(call), status, want));
    }
    for (call, status, want) in calls {
        let answer = call.await.unwrap();
        assert_eq!(answer.status.as_u16(), status);
        assert!(answer.headers.contains_key("date"));
        if status == 200 {
            assert_eq!(String::from_utf8(answer.body).unwrap(), want);
        }
    }
}

#[actix_web::test]
async fn tls_serves_h2_by_alpn() {
    let (addr, _, client) = start("tls-h2");
    let stream = connect_tls(addr, &client, &[b"h2", b"http/1.1"]).await;
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    many_streams(h2_client(stream).await, "https").await;
}

#[actix_web::test]
async fn h2c_serves_prior_knowledge_and_http1() {
    let (_, addr, _) = start("h2c");
    let stream = TcpStream::connect(addr).await.unwrap();
    many_streams(h2_client(stream).await, "http").await;
    let (head, body) = http1(TcpStream::connect(addr).await.unwrap(), "/blank").await;
    assert!(head.starts_with("http/1.1 200 "), "{head}");
    assert_eq!(body, "OK");
}
