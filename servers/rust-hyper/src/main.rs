//! netbench reference server on hyper 1.x (HTTP/1.1) and the tokio
//! multi-thread runtime: one task per connection, epoll underneath. This file
//! owns the process (environment, arguments, signals), the accept loop and
//! the routing; the endpoints with real work live in their own modules.
//!
//! Environment: `HOST` (default `127.0.0.1`), `PORT` (default `1234`),
//! `DATABASE_URL` and `DATABASE_POOL_SIZE` for `/db` (optional),
//! `STATIC_DIR` for `/static/` (default `static`, which the build writes).
//! `/app`'s stylesheet and script are built in from contract/app.
//! Optional first argument `0` or `1`: `/` answers as `/blank` or `/work`.

mod apps;
mod db;
mod fortunes;
#[cfg(test)]
mod server_tests;
mod webapp;
mod work;
mod world;
mod ws;

use std::convert::Infallible;
use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

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

/// Accepts and serves connections until `shutdown` completes, then lets the
/// requests in flight finish for at most a second.
async fn serve(listener: TcpListener, app: &'static App, shutdown: impl Future<Output = ()>) {
    // hyper-util's GracefulShutdown cannot watch a connection served
    // `with_upgrades()`, which `/ws` needs, so this does the same by hand: a
    // watch channel tells every connection to stop, and `closed()` resolves
    // once the last one has dropped its receiver.
    let (stop, stopping) = watch::channel(());
    let http = http1::Builder::new();
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
                let service = service_fn(move |request| handle(request, app));
                let connection = http.serve_connection(TokioIo::new(stream), service).with_upgrades();
                let mut stopping = stopping.clone();
                tokio::spawn(async move {
                    tokio::pin!(connection);
                    // Errors here are clients going away mid-request: nothing to report.
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = stopping.changed() => {
                            // Closes the connection once idle, after the request in flight.
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    drop(stopping);
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(1), stop.closed()).await;
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
    let port: u16 = match env_or("PORT", "1234").parse() {
        Ok(port) => port,
        Err(e) => {
            eprintln!("PORT: {e}");
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
    // A bare IPv6 address such as `::1` works too: the pair is not a "host:port" string.
    let listener = match TcpListener::bind((host.as_str(), port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("cannot listen on {host} port {port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut interrupt = signal(SignalKind::interrupt()).expect("SIGINT handler");
    if let Ok(addr) = listener.local_addr() {
        let db = if db.is_some() { "with" } else { "without" };
        eprintln!("rust-hyper listening on {addr}, {db} a database");
    }
    let shutdown = async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    };
    let static_dir = PathBuf::from(env_or("STATIC_DIR", "static"));
    if !static_dir.is_dir() {
        eprintln!(
            "no static files in {}: /static/ answers 404",
            static_dir.display()
        );
    }
    let app = App {
        root,
        db,
        static_dir,
        sessions: webapp::Sessions::default(),
    };
    // Leaked: it lives as long as the process, and a plain reference spares
    // every request an atomic reference count shared by all worker threads.
    serve(listener, Box::leak(Box::new(app)), shutdown).await;
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
