//! TLS for the test servers: a certificate authority made per call (rcgen),
//! a TLS front (tokio-rustls) that terminates TLS on 127.0.0.1:0 and relays
//! the plaintext to any plain test server, and peers that break TLS in one
//! chosen way, each of which the engine must count as its own error kind.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

use crate::{spawn_server, TestServer};

/// How a TLS test server goes wrong, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFlaw {
    /// A good server: a certificate for localhost and 127.0.0.1 signed by
    /// the server's CA, TLS 1.2 and 1.3, ALPN http/1.1.
    None,
    /// The certificate names only `other.example`.
    WrongName,
    /// The certificate expired in 2001.
    Expired,
    /// ALPN `h2` only: a client that offers http/1.1 alone is refused with
    /// an alert.
    AlpnH2Only,
    /// No ALPN at all: the handshake ends with no protocol agreed, whatever
    /// the client offered.
    NoAlpn,
    /// TLS 1.2 only: a client that offers 1.3 alone is refused with an
    /// alert.
    Tls12Only,
    /// Answers the ClientHello with a line of HTTP instead of a record.
    NotTls,
    /// Reads the ClientHello, then closes.
    CloseMidHandshake,
    /// Reads the ClientHello and never answers (for 30 s).
    Silent,
}

/// A TLS test server and the PEM file of the authority that signed its
/// certificate (pass it as `--cacert`).
pub struct TlsTestServer {
    pub addr: SocketAddr,
    pub ca_file: PathBuf,
}

impl TlsTestServer {
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{}", self.addr, path)
    }
}

/// A certificate authority and the certificate it signs for a server.
pub struct TestCerts {
    pub ca_pem: String,
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

/// Makes a CA and a server certificate for `names` (DNS names or IP
/// addresses), expired when `expired`.
pub fn make_certs(names: &[&str], expired: bool) -> TestCerts {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "netbench test CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
    let key = KeyPair::generate().expect("server key");
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("server params");
    if expired {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    }
    let cert = params
        .signed_by(&key, &ca, &ca_key)
        .expect("server certificate");
    TestCerts {
        ca_pem: ca.pem(),
        chain: vec![cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    }
}

/// Writes `pem` to a file of its own in the temporary folder.
pub(crate) fn write_ca(pem: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "netbench-testca-{}-{}.pem",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, pem).expect("write the test CA");
    path
}

/// The rustls server configuration of a good server, changed by `flaw`.
pub fn server_config(certs: &TestCerts, flaw: TlsFlaw) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&'static rustls::SupportedProtocolVersion] = match flaw {
        TlsFlaw::Tls12Only => &[&rustls::version::TLS12],
        _ => rustls::ALL_VERSIONS,
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs.chain.clone(), certs.key.clone_key())
        .expect("server certificate and key");
    config.alpn_protocols = match flaw {
        TlsFlaw::AlpnH2Only => vec![b"h2".to_vec()],
        TlsFlaw::NoAlpn => Vec::new(),
        _ => vec![b"http/1.1".to_vec()],
    };
    config
}

/// `plain` behind TLS with `flaw`: each TLS connection is relayed to a
/// connection of its own to `plain`.
pub fn serve_tls(plain: TestServer, flaw: TlsFlaw) -> TlsTestServer {
    let names: &[&str] = match flaw {
        TlsFlaw::WrongName => &["other.example"],
        _ => &["localhost", "127.0.0.1"],
    };
    let certs = make_certs(names, flaw == TlsFlaw::Expired);
    let ca_file = write_ca(&certs.ca_pem);
    let addr = match flaw {
        TlsFlaw::NotTls => {
            spawn_server(|mut s: TcpStream| {
                let mut hello = [0u8; 512];
                let _ = s.read(&mut hello);
                let _ = std::io::Write::write_all(&mut s, b"HTTP/1.1 400 Bad Request\r\n\r\n");
                std::thread::sleep(Duration::from_millis(200));
            })
            .addr
        }
        TlsFlaw::CloseMidHandshake => {
            spawn_server(|mut s: TcpStream| {
                let mut hello = [0u8; 512];
                let _ = s.read(&mut hello);
            })
            .addr
        }
        TlsFlaw::Silent => {
            spawn_server(|mut s: TcpStream| {
                let mut hello = [0u8; 512];
                let _ = s.read(&mut hello);
                std::thread::sleep(Duration::from_secs(30));
            })
            .addr
        }
        _ => front(server_config(&certs, flaw), plain.addr),
    };
    TlsTestServer { addr, ca_file }
}

/// Terminates TLS on 127.0.0.1:0 and relays each connection's plaintext to
/// `backend`, on a runtime thread of its own that lives as long as the test.
fn front(config: ServerConfig, backend: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    listener.set_nonblocking(true).expect("nonblocking");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
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
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = tcp.set_nodelay(true);
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = plain.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    addr
}
