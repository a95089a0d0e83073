//! netbench reference server on hyper 1.x and the tokio multi-thread runtime:
//! one task per connection, epoll underneath. This file owns the process
//! (environment, arguments, signals), the listeners, the accept loop and the
//! routing; the endpoints with real work live in their own modules.
//!
//! Environment: `HOST` (default `127.0.0.1`), `PORT` (default `1234`),
//! `DATABASE_URL` and `DATABASE_POOL_SIZE` for `/db` (optional),
//! `STATIC_DIR` for `/static/` (default `static`, which the build writes).
//! Each of these opens one more listener on `HOST` when set: `TLS_PORT`
//! (with `TLS_CERT` and `TLS_KEY`: every endpoint over TLS, HTTP/1.1 or
//! HTTP/2 by ALPN), `H2C_PORT` (every endpoint over HTTP/2 with prior
//! knowledge) and `GRPC_PORT` (`netbench.Work/Compute` on tonic).
//! `/app`'s stylesheet and script are built in from contract/app.
//! Optional first argument `0` or `1`: `/` answers as `/blank` or `/work`.

mod apps;
mod db;
mod fortunes;
mod grpc;
#[cfg(test)]
mod protocol_tests;
#[cfg(test)]
mod server_tests;
mod tls;
mod webapp;
mod work;
mod world;
mod ws;

use std::convert::Infallible;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Duration;

use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tonic::transport::server::TcpIncoming;

const TEXT: HeaderValue = HeaderValue::from_static("text/plain");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// What `/` answers, chosen by the optional first command-line argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    NotFound,
    Blank,
    Work,
}

/// What every connection shares.
struct App {
    root: Root,
    /// `None` without DATABASE_URL: `/db` then answers 503.
    db: Option<deadpool_postgres::Pool>,
    /// The folder served at `/static/`.
    static_dir: PathBuf,
    /// `/app`'s sessions.
    sessions: webapp::Sessions,
}

/// Every answer's body: whole, or a file streamed from disk (`/static/`).
type Body = Either<Full<Bytes>, apps::FileBody>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Blank,
    Work,
    Echo,
    Db,
    DbList,
    Fortunes,
    Queries,
    Updates,
    Ws,
    Static,
    Upload,
    App,
    AppLogout,
    NotFound,
}

fn route(path: &str, root: Root) -> Route {
    match path {
        "/blank" => Route::Blank,
        "/work" => Route::Work,
        "/db" => Route::Db,
        "/db/list" => Route::DbList,
        "/fortunes" => Route::Fortunes,
        "/queries" => Route::Queries,
        "/updates" => Route::Updates,
        "/ws" => Route::Ws,
        "/upload" => Route::Upload,
        "/app" => Route::App,
        "/app/logout" => Route::AppLogout,
        "/" => match root {
            Root::Blank => Route::Blank,
            Root::Work => Route::Work,
            Root::NotFound => Route::NotFound,
        },
        _ if path.starts_with("/echo/") => Route::Echo,
        _ if path.starts_with("/static/") => Route::Static,
        _ => Route::NotFound,
    }
}

fn respond(
    status: StatusCode,
    content_type: HeaderValue,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    // A `Full` body has an exact length, so hyper frames it with Content-Length.
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, content_type);
    response
}

fn not_allowed(allow: &'static str) -> Response<Full<Bytes>> {
    let mut response = respond(StatusCode::METHOD_NOT_ALLOWED, TEXT, "method not allowed");
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

async fn handle(
    request: Request<Incoming>,
    app: &'static App,
) -> Result<Response<Body>, Infallible> {
    let route = route(request.uri().path(), app.root);
    // Owned, so that `/ws` can take the request itself for its upgrade.
    let method = request.method().clone();
    if route == Route::Static && (method == Method::GET || method == Method::HEAD) {
        let name = &request.uri().path()["/static/".len()..];
        let head = method == Method::HEAD;
        return Ok(
            match apps::static_file(&app.static_dir, name, request.headers(), head).await {
                apps::StaticAnswer::Full(r) => r.map(Either::Left),
                apps::StaticAnswer::File(r) => r.map(Either::Right),
            },
        );
    }
    let response = match (route, method) {
        (Route::Blank, Method::GET) => respond(StatusCode::OK, TEXT, "OK"),
        (Route::Echo, Method::GET) => {
            let text = request
                .uri()
                .path()
                .strip_prefix("/echo/")
                .unwrap_or_default();
            let text = Bytes::copy_from_slice(text.as_bytes());
            respond(StatusCode::OK, TEXT, text)
        }
        (Route::Work, Method::POST) => {
            let (head, body) = request.into_parts();
            // Content-Length or chunked: hyper decodes both.
            apps::vary(match body.collect().await {
                Ok(body) => match work::answer(&body.to_bytes()) {
                    Ok(json) => apps::compressible(&head.headers, JSON, json),
                    Err(e) => respond(StatusCode::BAD_REQUEST, TEXT, e.to_string()),
                },
                Err(_) => respond(StatusCode::BAD_REQUEST, TEXT, "cannot read the body"),
            })
        }
        (Route::Upload, Method::POST) => apps::upload(request).await,
        (Route::Db, Method::GET) => db::one(app.db.as_ref(), request.uri().query()).await,
        (Route::DbList, Method::GET) => db::list(app.db.as_ref(), request.uri().query()).await,
        (Route::Fortunes, Method::GET) => fortunes::page(app.db.as_ref()).await,
        (Route::Queries, Method::GET) => {
            world::answer(app.db.as_ref(), request.uri().query(), false).await
        }
        (Route::Updates, Method::GET) => {
            world::answer(app.db.as_ref(), request.uri().query(), true).await
        }
        (Route::Ws, Method::GET) => ws::upgrade(request),
        (Route::App, Method::GET) => {
            webapp::page(&app.sessions, request.uri().query(), request.headers())
        }
        (Route::AppLogout, Method::POST) => webapp::logout(&app.sessions, request.headers()),
        (Route::NotFound, _) => respond(StatusCode::NOT_FOUND, TEXT, "not found"),
        (Route::Work | Route::Upload | Route::AppLogout, _) => not_allowed("POST"),
        (
            Route::Blank
            | Route::Echo
            | Route::Db
            | Route::DbList
            | Route::Fortunes
            | Route::Queries
            | Route::Updates
            | Route::Ws
            | Route::Static
            | Route::App,
            _,
        ) => not_allowed("GET"),
    };
    Ok(response.map(Either::Left))
}

/// How a listener speaks HTTP, each with hyper's default settings.
enum Protocol {
    /// `PORT`: HTTP/1.1 in the clear, with the upgrades `/ws` needs.
    Http1(http1::Builder),
    /// `H2C_PORT`: HTTP/2 from the client preface on (prior knowledge).
    H2c(http2::Builder<TokioExecutor>),
    /// `TLS_PORT`: TLS, then HTTP/2 or HTTP/1.1 as the client's first bytes
    /// say (a client that negotiated ALPN `h2` sends the HTTP/2 preface).
    Tls(TlsAcceptor, auto::Builder<TokioExecutor>),
}

impl Protocol {
    fn http1() -> Protocol {
        Protocol::Http1(http1::Builder::new())
    }

    fn h2c() -> Protocol {
        Protocol::H2c(http2::Builder::new(TokioExecutor::new()))
    }

    fn tls(acceptor: TlsAcceptor) -> Protocol {
        Protocol::Tls(acceptor, auto::Builder::new(TokioExecutor::new()))
    }
}

/// Accepts and serves connections until `shutdown` completes, then lets the
/// requests in flight finish for at most a second.
async fn serve(
    listener: TcpListener,
    app: &'static App,
    protocol: &'static Protocol,
    shutdown: impl Future<Output = ()>,
) {
    // hyper-util's GracefulShutdown cannot watch a connection served
    // `with_upgrades()`, which `/ws` needs, so this does the same by hand: a
    // watch channel tells every connection to stop, and `closed()` resolves
    // once the last one has dropped its receiver.
    let (stop, stopping) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(conn) => conn,
                    Err(e) => {
                        // EMFILE and the like: keep serving the connections we have.
                        eprintln!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                tokio::spawn(connection(stream, app, protocol, stopping.clone()));
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    drop(stopping);
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(1), stop.closed()).await;
}

/// Serves one accepted connection until it ends or `stopping` changes.
async fn connection(
    stream: TcpStream,
    app: &'static App,
    protocol: &'static Protocol,
    mut stopping: watch::Receiver<()>,
) {
    let service = service_fn(move |request| handle(request, app));
    match protocol {
        Protocol::Http1(http) => {
            let connection = http
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            until_stopped(connection, stopping, |c| c.graceful_shutdown()).await;
        }
        Protocol::H2c(http) => {
            let connection = http.serve_connection(TokioIo::new(stream), service);
            until_stopped(connection, stopping, |c| c.graceful_shutdown()).await;
        }
        Protocol::Tls(acceptor, http) => {
            // A failed handshake is a client's problem: nothing to report.
            let stream = tokio::select! {
                handshake = acceptor.accept(stream) => match handshake {
                    Ok(stream) => stream,
                    Err(_) => return,
                },
                _ = stopping.changed() => return,
            };
            let connection = http.serve_connection_with_upgrades(TokioIo::new(stream), service);
            until_stopped(connection, stopping, |c| c.graceful_shutdown()).await;
        }
    }
}

/// Drives `connection` to its end; once `stopping` changes, asks it to close
/// after the requests in flight (`shut`: its `graceful_shutdown`).
async fn until_stopped<C: Future>(
    connection: C,
    mut stopping: watch::Receiver<()>,
    shut: fn(Pin<&mut C>),
) {
    tokio::pin!(connection);
    // Errors here are clients going away mid-request: nothing to report.
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = stopping.changed() => {
            shut(connection.as_mut());
            let _ = connection.await;
        }
    }
}

fn parse_args() -> Result<Root, String> {
    let mut args = std::env::args().skip(1);
    let root = match args.next().as_deref() {
        None => Root::NotFound,
        Some("0") => Root::Blank,
        Some("1") => Root::Work,
        Some(other) => return Err(format!("unknown argument {other:?}")),
    };
    if args.next().is_some() {
        return Err("too many arguments".into());
    }
    Ok(root)
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

/// A port from the environment: `None` when the variable is unset or empty.
fn port_from_env(name: &str) -> Result<Option<u16>, String> {
    match std::env::var(name).ok().filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|e| format!("{name}: {e}")),
    }
}

/// The ports from the environment: `PORT`, and each other one only when set
/// (the TLS one with the acceptor of the certificate it was given).
struct Ports {
    plain: u16,
    tls: Option<(u16, TlsAcceptor)>,
    h2c: Option<u16>,
    grpc: Option<u16>,
}

fn ports_from_env() -> Result<Ports, String> {
    let plain = port_from_env("PORT")?.unwrap_or(1234);
    let tls = match port_from_env("TLS_PORT")? {
        Some(port) => Some((port, tls::acceptor_from_env()?)),
        None => None,
    };
    let h2c = port_from_env("H2C_PORT")?;
    let grpc = port_from_env("GRPC_PORT")?;
    Ok(Ports {
        plain,
        tls,
        h2c,
        grpc,
    })
}

async fn bind(host: &str, port: u16) -> Result<TcpListener, String> {
    // A bare IPv6 address such as `::1` works too: the pair is not a "host:port" string.
    TcpListener::bind((host, port))
        .await
        .map_err(|e| format!("cannot listen on {host} port {port}: {e}"))
}

/// Every listener, bound before any serves, so that a port in use stops the start.
struct Listeners {
    plain: TcpListener,
    tls: Option<(TcpListener, TlsAcceptor)>,
    h2c: Option<TcpListener>,
    grpc: Option<TcpIncoming>,
}

async fn bind_all(host: &str, ports: Ports) -> Result<Listeners, String> {
    let plain = bind(host, ports.plain).await?;
    let tls = match ports.tls {
        Some((port, acceptor)) => Some((bind(host, port).await?, acceptor)),
        None => None,
    };
    let h2c = match ports.h2c {
        Some(port) => Some(bind(host, port).await?),
        None => None,
    };
    let grpc = match ports.grpc {
        Some(port) => Some(grpc::bind(host, port).await?),
        None => None,
    };
    Ok(Listeners {
        plain,
        tls,
        h2c,
        grpc,
    })
}

/// The leaked value: it lives as long as the process, and a plain reference
/// spares every request an atomic reference count shared by all worker
/// threads.
fn forever<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

#[tokio::main]
async fn main() -> ExitCode {
    let root = match parse_args() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("{e}\nusage: rust-hyper [0|1]  (0: / is /blank, 1: / is /work)");
            return ExitCode::from(2);
        }
    };
    let host = env_or("HOST", "127.0.0.1");
    // The certificate is read only for a TLS listener; a bad one stops the start.
    let ports = match ports_from_env() {
        Ok(ports) => ports,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let db = match db::pool_from_env() {
        Ok(db) => db,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let listeners = match bind_all(&host, ports).await {
        Ok(listeners) => listeners,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = listeners.plain;
    let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut interrupt = signal(SignalKind::interrupt()).expect("SIGINT handler");
    if let Ok(addr) = listener.local_addr() {
        let db = if db.is_some() { "with" } else { "without" };
        eprintln!("rust-hyper listening on {addr}, {db} a database");
    }
    let static_dir = PathBuf::from(env_or("STATIC_DIR", "static"));
    if !static_dir.is_dir() {
        eprintln!(
            "no static files in {}: /static/ answers 404",
            static_dir.display()
        );
    }
    let app = forever(App {
        root,
        db,
        static_dir,
        sessions: webapp::Sessions::default(),
    });

    // Every listener stops on the same signal.
    let (quit, quitting) = watch::channel(());
    let stopped = || {
        let mut quitting = quitting.clone();
        async move {
            let _ = quitting.changed().await;
        }
    };
    let mut servers = JoinSet::new();
    servers.spawn(serve(listener, app, forever(Protocol::http1()), stopped()));
    if let Some((listener, acceptor)) = listeners.tls {
        if let Ok(addr) = listener.local_addr() {
            eprintln!("TLS (HTTP/2 and HTTP/1.1) on {addr}");
        }
        let protocol = forever(Protocol::tls(acceptor));
        servers.spawn(serve(listener, app, protocol, stopped()));
    }
    if let Some(listener) = listeners.h2c {
        if let Ok(addr) = listener.local_addr() {
            eprintln!("h2c (HTTP/2 with prior knowledge) on {addr}");
        }
        servers.spawn(serve(listener, app, forever(Protocol::h2c()), stopped()));
    }
    if let Some(incoming) = listeners.grpc {
        if let Ok(addr) = incoming.local_addr() {
            eprintln!("gRPC on {addr}");
        }
        servers.spawn(grpc::serve(incoming, stopped()));
    }
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    let _ = quit.send(());
    // The HTTP listeners give their requests in flight a second; tonic's
    // graceful shutdown waits for its clients to close, which may be never.
    let _ = tokio::time::timeout(Duration::from_secs(2), servers.join_all()).await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(route("/blank", Root::NotFound), Route::Blank);
        assert_eq!(route("/work", Root::NotFound), Route::Work);
        assert_eq!(route("/echo/abc-1.2_x~y", Root::NotFound), Route::Echo);
        assert_eq!(route("/echo/", Root::NotFound), Route::Echo);
        assert_eq!(route("/echo", Root::NotFound), Route::NotFound);
        assert_eq!(route("/nope", Root::NotFound), Route::NotFound);
        assert_eq!(route("/", Root::NotFound), Route::NotFound);
        assert_eq!(route("/", Root::Blank), Route::Blank);
        assert_eq!(route("/", Root::Work), Route::Work);
        assert_eq!(route("/blank/", Root::Blank), Route::NotFound);
        assert_eq!(route("/db", Root::NotFound), Route::Db);
        assert_eq!(route("/db/list", Root::NotFound), Route::DbList);
        assert_eq!(route("/fortunes", Root::NotFound), Route::Fortunes);
        assert_eq!(route("/updates", Root::NotFound), Route::Updates);
        assert_eq!(route("/db/", Root::NotFound), Route::NotFound);
        assert_eq!(route("/ws", Root::NotFound), Route::Ws);
        assert_eq!(route("/ws/", Root::NotFound), Route::NotFound);
        assert_eq!(route("/static/14k", Root::NotFound), Route::Static);
        assert_eq!(route("/static", Root::NotFound), Route::NotFound);
        assert_eq!(route("/upload", Root::NotFound), Route::Upload);
        assert_eq!(route("/upload/", Root::NotFound), Route::NotFound);
        assert_eq!(route("/app", Root::NotFound), Route::App);
        assert_eq!(route("/app/logout", Root::NotFound), Route::AppLogout);
        assert_eq!(route("/app/", Root::NotFound), Route::NotFound);
    }
}
