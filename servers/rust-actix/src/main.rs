//! netbench reference server on actix-web 4 with its defaults: one
//! single-threaded tokio runtime (an event loop) per worker thread, one worker
//! per available CPU, each accepted connection owned by one worker. This file
//! owns the process (environment, arguments), the listeners and the routes.
//!
//! Environment: `HOST` (default `127.0.0.1`), `PORT` (default `1234`).
//! Each of these opens one more listener on `HOST` when set: `TLS_PORT`
//! (with `TLS_CERT` and `TLS_KEY`: every endpoint over TLS, HTTP/2 or
//! HTTP/1.1 by ALPN) and `H2C_PORT` (every endpoint over HTTP/2 with prior
//! knowledge, or HTTP/1.1).
//! Optional first argument `0` or `1`: `/` answers as `/blank` or `/work`.
//! actix-server itself stops on SIGTERM, SIGINT and SIGQUIT (gracefully).

#[cfg(test)]
mod protocol_tests;
mod tls;
mod work;

use std::net::SocketAddr;
use std::process::ExitCode;

use actix_web::dev::Server;
use actix_web::http::header::ContentType;
use actix_web::{web, App, HttpResponse, HttpServer};

/// What `/` answers, chosen by the optional first command-line argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Root {
    NotFound,
    Blank,
    Work,
}

/// `text/plain; charset=utf-8`, as actix-web answers a `&str` or a `String`.
async fn blank() -> &'static str {
    "OK"
}

/// The rest of the path after `/echo/`, without the query string.
async fn echo(text: web::Path<String>) -> String {
    text.into_inner()
}

/// `web::Json` reads the whole body (Content-Length or chunked), requires an
/// `application/json` Content-Type (parameters allowed) and deserializes with
/// serde_json; a body that is not JSON or of the wrong shape is answered
/// `400` by the extractor, before this runs.
async fn work(doc: web::Json<work::Doc>) -> HttpResponse {
    match work::answer(&doc) {
        Ok(answer) => HttpResponse::Ok().json(answer),
        Err(e) => HttpResponse::BadRequest()
            .content_type(ContentType::plaintext())
            .body(e.to_string()),
    }
}

async fn not_found() -> HttpResponse {
    HttpResponse::NotFound()
        .content_type(ContentType::plaintext())
        .body("not found")
}

/// The routes of the contract. A known path with another method is answered
/// `405` by actix-web; any other path `404`.
fn routes(root: Root) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.route("/blank", web::get().to(blank))
            .route("/work", web::post().to(work))
            .route("/echo/{text:.*}", web::get().to(echo));
        match root {
            Root::Blank => {
                cfg.route("/", web::get().to(blank));
            }
            Root::Work => {
                cfg.route("/", web::post().to(work));
            }
            Root::NotFound => {}
        }
        cfg.default_service(web::to(not_found));
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

/// The ports to listen on; the last two only when set.
struct Ports {
    plain: u16,
    /// With the TLS configuration it serves.
    tls: Option<(u16, rustls::ServerConfig)>,
    h2c: Option<u16>,
}

/// The running server and the addresses each listener has.
struct Listening {
    server: Server,
    plain: Vec<SocketAddr>,
    tls: Vec<SocketAddr>,
    h2c: Vec<SocketAddr>,
}

/// Binds every listener on `host` with actix-web's own `bind` calls (its
/// backlog and socket options) and starts the workers.
fn listen(root: Root, host: &str, ports: Ports) -> Result<Listening, String> {
    let cannot = |port: u16| move |e| format!("cannot listen on {host} port {port}: {e}");
    // A bare IPv6 address such as `::1` works too: the pair is not a "host:port" string.
    let mut server = HttpServer::new(move || App::new().configure(routes(root)))
        .bind((host, ports.plain))
        .map_err(cannot(ports.plain))?;
    let plain = server.addrs();
    // Each bind adds its addresses after the ones before.
    let mut tls = Vec::new();
    if let Some((port, config)) = ports.tls {
        let before = server.addrs().len();
        server = server
            .bind_rustls_0_23((host, port), config)
            .map_err(cannot(port))?;
        tls = server.addrs()[before..].to_vec();
    }
    let mut h2c = Vec::new();
    if let Some(port) = ports.h2c {
        let before = server.addrs().len();
        server = server.bind_auto_h2c((host, port)).map_err(cannot(port))?;
        h2c = server.addrs()[before..].to_vec();
    }
    Ok(Listening {
        server: server.run(),
        plain,
        tls,
        h2c,
    })
}

/// A port from the environment: `None` when the variable is unset or empty.
fn port_from_env(name: &str) -> Result<Option<u16>, String> {
    match std::env::var(name).ok().filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|e| format!("{name}: {e}")),
    }
}

/// The ports from the environment, and the TLS configuration when `TLS_PORT`
/// asks for it.
fn ports_from_env() -> Result<Ports, String> {
    let plain = port_from_env("PORT")?.unwrap_or(1234);
    let tls = match port_from_env("TLS_PORT")? {
        Some(port) => Some((port, tls::config_from_env()?)),
        None => None,
    };
    let h2c = port_from_env("H2C_PORT")?;
    Ok(Ports { plain, tls, h2c })
}

#[actix_web::main]
async fn main() -> ExitCode {
    let root = match parse_args() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("{e}\nusage: rust-actix [0|1]  (0: / is /blank, 1: / is /work)");
            return ExitCode::from(2);
        }
    };
    let host = env_or("HOST", "127.0.0.1");
    let ports = match ports_from_env() {
        Ok(ports) => ports,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let listening = match listen(root, &host, ports) {
        Ok(listening) => listening,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for addr in &listening.plain {
        eprintln!("rust-actix listening on {addr}");
    }
    for addr in &listening.tls {
        eprintln!("TLS (HTTP/2 and HTTP/1.1) on {addr}");
    }
    for addr in &listening.h2c {
        eprintln!("h2c (HTTP/2 with prior knowledge, and HTTP/1.1) on {addr}");
    }
    match listening.server.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;
    use actix_web::dev::{Service, ServiceResponse};
    use actix_web::http::{header, Method, StatusCode};
    use actix_web::test::{self, TestRequest};

    const DOC: &str = r#"{"product":"p","requestId":"r","group":{"kind":"k","default":true,"balance":1234.56,"dates":["2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z"]}}"#;

    async fn call(root: Root, req: TestRequest) -> (StatusCode, String, String) {
        let app = test::init_service(App::new().configure(routes(root))).await;
        let resp: ServiceResponse = app.call(req.to_request()).await.unwrap();
        let status = resp.status();
        let ctype = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = to_bytes(resp.into_body()).await.unwrap();
        (status, ctype, String::from_utf8(body.to_vec()).unwrap())
    }

    fn post(path: &str, body: &str) -> TestRequest {
        TestRequest::post()
            .uri(path)
            .insert_header((header::CONTENT_TYPE, "application/json; charset=utf-8"))
            .set_payload(body.to_owned())
    }

    #[actix_web::test]
    async fn blank_echo_and_not_found() {
        let get = |path: &str| TestRequest::get().uri(path);
        let (status, ctype, body) = call(Root::NotFound, get("/blank")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "OK"));
        assert!(ctype.starts_with("text/plain"), "{ctype}");
        for (path, want) in [
            ("/echo/abc-1.2_x~y", "abc-1.2_x~y"),
            ("/echo/hello?q=1&r", "hello"),
            ("/echo/", ""),
        ] {
            let (status, ctype, body) = call(Root::NotFound, get(path)).await;
            assert_eq!((status, body.as_str()), (StatusCode::OK, want), "{path}");
            assert!(ctype.starts_with("text/plain"), "{ctype}");
        }
        for path in ["/nope", "/", "/echo", "/blank/", "/workx"] {
            let (status, _, _) = call(Root::NotFound, get(path)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
        let (status, _, _) = call(Root::NotFound, post("/", DOC)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _, _) = call(Root::NotFound, get("/work")).await;
        assert!(
            status == StatusCode::NOT_FOUND || status == StatusCode::METHOD_NOT_ALLOWED,
            "{status}"
        );
    }

    #[actix_web::test]
    async fn work_answers_and_refuses() {
        let (status, ctype, body) = call(Root::NotFound, post("/work", DOC)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ctype, "application/json");
        assert_eq!(
            body,
            r#"{"product":"p","requestId":"r","client":{"balance":1234.56,"minDate":"2019-03-01T00:00:00.000Z","maxDate":"2020-01-12T10:53:17.773Z"}}"#
        );
        for bad in [
            "",
            "{",
            "[]",
            r#"{"product":"p"}"#,
            &DOC.replace("2019-03-01T00:00:00.000Z", "2019-02-29T00:00:00.000Z"),
            &DOC.replace(
                r#""2020-01-12T10:53:17.773Z","2019-03-01T00:00:00.000Z""#,
                "",
            ),
        ] {
            let (status, _, body) = call(Root::NotFound, post("/work", bad)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        }
    }

    #[actix_web::test]
    async fn root_compat() {
        let (status, _, body) = call(Root::Blank, TestRequest::get().uri("/")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "OK"));
        let (status, _, body) = call(Root::Work, post("/", DOC)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.contains(r#""minDate":"2019-03-01T00:00:00.000Z""#),
            "{body}"
        );
        let req = TestRequest::default().method(Method::POST).uri("/");
        let (status, _, _) = call(Root::Blank, req).await;
        assert_ne!(status, StatusCode::OK);
    }
}
