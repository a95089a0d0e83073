//! The contract server's listeners of version 1.5 (CONTRACT.md, "tls, h2,
//! h2c, grpc"): the contract's answers over HTTP/2 (hyper, prior knowledge),
//! the gRPC service `netbench.Work` on HTTP/2 with trailers, and TLS in
//! front with ALPN h2 and http/1.1 (h2 relayed to an HTTP/2 listener of its own,
//! http/1.1 to the contract server); or one listener broken by a
//! `ProtocolFlaw`, so every check of `verify`'s 1.5 part can fail.

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};
use netbench_contract::grpc::{WorkReply, WorkRequest, COMPUTE_PATH, INVALID_ARGUMENT};
use prost::Message;

use crate::contract_server::Flaw;
use crate::tls_server::{make_certs, server_config, write_ca, TlsFlaw};
use crate::{serve_contract, TestServer};

/// The one way the 1.5 listeners misbehave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolFlaw {
    None,
    /// Every gRPC call gets the reply to the first call it answered.
    GrpcCanned,
    /// Every gRPC call gets `grpc-status` 0, invalid ones too (with an
    /// empty reply).
    GrpcNeverRefuses,
    /// The TLS listener offers ALPN http/1.1 alone: no HTTP/2 over TLS.
    NoH2Alpn,
    /// The "h2c" listener speaks HTTP/1.1 only.
    H2cIsHttp1,
}

/// The contract server on its cleartext port, and the 1.5 listeners beside
/// it, with the authority that signed its certificate.
pub struct ProtocolServer {
    pub plain: TestServer,
    pub tls: SocketAddr,
    pub h2c: SocketAddr,
    pub grpc: SocketAddr,
    pub ca_file: PathBuf,
}

pub fn serve_protocols(flaw: ProtocolFlaw) -> ProtocolServer {
    let plain = serve_contract(Flaw::None);
    let h2c_listener = bind();
    let grpc_listener = bind();
    let tls_listener = bind();
    // What the TLS front relays h2 to: its own, whatever the h2c port does.
    let h2_backend = bind();
    let h2_behind_tls = h2_backend.local_addr().expect("addr");
    let (h2c, grpc, tls) = (
        h2c_listener.local_addr().expect("addr"),
        grpc_listener.local_addr().expect("addr"),
        tls_listener.local_addr().expect("addr"),
    );
    let certs = make_certs(&["localhost", "127.0.0.1"], false);
    let ca_file = write_ca(&certs.ca_pem);
    let mut config = server_config(&certs, TlsFlaw::None);
    config.alpn_protocols = match flaw {
        ProtocolFlaw::NoH2Alpn => vec![b"http/1.1".to_vec()],
        _ => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    };
    let plain_addr = plain.addr;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let h2c_is_http1 = flaw == ProtocolFlaw::H2cIsHttp1;
            tokio::spawn(serve_h2(h2c_listener, h2c_is_http1, flaw));
            tokio::spawn(serve_h2(grpc_listener, false, flaw));
            tokio::spawn(serve_h2(h2_backend, false, flaw));
            tls_front(tls_listener, Arc::new(config), h2_behind_tls, plain_addr).await;
        });
    });
    ProtocolServer {
        plain,
        tls,
        h2c,
        grpc,
        ca_file,
    }
}

fn bind() -> TcpListener {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.set_nonblocking(true).expect("nonblocking");
    l
}

/// Serves the contract's answers and the gRPC service, over HTTP/2 with
/// prior knowledge (or HTTP/1.1 for the flaw that pretends).
async fn serve_h2(listener: TcpListener, http1: bool, flaw: ProtocolFlaw) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
    let canned: Arc<std::sync::Mutex<Option<Bytes>>> = Arc::default();
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let canned = canned.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(tcp);
            let service = hyper::service::service_fn(move |req| answer(req, flaw, canned.clone()));
            if http1 {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            } else {
                let _ =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, service)
                        .await;
            }
        });
    }
}

/// Relays each TLS connection by its ALPN: h2 to the HTTP/2 listener,
/// anything else to the contract server.
async fn tls_front(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
    h2: SocketAddr,
    http1: SocketAddr,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
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
            let to = match tls.get_ref().1.alpn_protocol() {
                Some(b"h2") => h2,
                _ => http1,
            };
            let Ok(mut plain) = tokio::net::TcpStream::connect(to).await else {
                return;
            };
            let _ = plain.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
        });
    }
}

type Canned = Arc<std::sync::Mutex<Option<Bytes>>>;

async fn answer(
    req: Request<Incoming>,
    flaw: ProtocolFlaw,
    canned: Canned,
) -> Result<Response<Reply>, Infallible> {
    let path = req.uri().path().to_string();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if path == COMPUTE_PATH {
        return Ok(grpc(&body, flaw, &canned));
    }
    let (status, ct, out) = match path.as_str() {
        "/blank" => (200, "text/plain", Bytes::from_static(b"OK")),
        "/work" => match netbench_contract::answer(&body) {
            Ok(v) => (
                200,
                "application/json",
                Bytes::from(serde_json::to_vec(&v).expect("a Value serializes")),
            ),
            Err(_) => (400, "text/plain", Bytes::from_static(b"bad request")),
        },
        _ => (404, "text/plain", Bytes::from_static(b"not found")),
    };
    let mut resp = Response::new(Reply::plain(out));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).expect("a status");
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    Ok(resp)
}

/// `netbench.Work/Compute`: the /work answer of the call's request as a
/// reply, or INVALID_ARGUMENT where /work answers 400.
fn grpc(body: &[u8], flaw: ProtocolFlaw, canned: &Canned) -> Response<Reply> {
    let computed = netbench_engine::grpc_message(body)
        .and_then(|m| WorkRequest::decode(m).ok())
        .and_then(|request| compute(&request));
    let (status, message) = match (computed, flaw) {
        (None, ProtocolFlaw::GrpcNeverRefuses) => (0, Some(Bytes::new())),
        (None, _) => (INVALID_ARGUMENT, None),
        (Some(reply), ProtocolFlaw::GrpcCanned) => {
            let mut first = canned.lock().expect("lock");
            (0, Some(first.get_or_insert(reply).clone()))
        }
        (Some(reply), _) => (0, Some(reply)),
    };
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(status));
    let data = message.map(|m| Bytes::from(netbench_contract::grpc::length_prefixed(&m)));
    let mut resp = Response::new(Reply {
        data,
        trailers: Some(trailers),
    });
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    resp
}

/// The reply to `request` through the contract's own /work answer.
fn compute(request: &WorkRequest) -> Option<Bytes> {
    let g = request.group.as_ref()?;
    let doc = serde_json::json!({
        "product": request.product,
        "requestId": request.request_id,
        "group": {"kind": g.kind, "default": g.default, "balance": g.balance, "dates": g.dates},
    });
    let v = netbench_contract::answer(&serde_json::to_vec(&doc).ok()?).ok()?;
    let reply = WorkReply {
        product: v["product"].as_str()?.to_string(),
        request_id: v["requestId"].as_str()?.to_string(),
        client: Some(netbench_contract::grpc::Client {
            balance: v["client"]["balance"].as_f64()?,
            min_date: v["client"]["minDate"].as_str()?.to_string(),
            max_date: v["client"]["maxDate"].as_str()?.to_string(),
        }),
    };
    Some(Bytes::from(reply.encode_to_vec()))
}

/// A body of one data frame and then, for gRPC, trailers.
pub(crate) struct Reply {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Reply {
    fn plain(data: Bytes) -> Self {
        Reply {
            data: Some(data),
            trailers: None,
        }
    }
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(d) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(d))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }
}
