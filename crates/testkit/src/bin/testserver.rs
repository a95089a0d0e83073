//! netbench-testserver: a real HTTP/1.1 server (hyper on tokio) for load
//! tests at scale and for `make run`. Answers every request with 200
//! text/plain `OK`. Prints `listening on http://ADDR/` once it accepts.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};

const USAGE: &str = "usage: netbench-testserver [--listen ADDR] [--threads N]\n\
  --listen ADDR   address to bind (default 127.0.0.1:0, a free port)\n\
  --threads N     tokio worker threads (default 1)";

async fn ok(_req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut resp = Response::new(Full::new(Bytes::from_static(b"OK")));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain"),
    );
    Ok(resp)
}

fn parse_args() -> Result<(SocketAddr, usize), String> {
    let mut listen: SocketAddr = "127.0.0.1:0".parse().expect("constant address");
    let mut threads = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--listen" => listen = value()?.parse().map_err(|e| format!("--listen: {e}"))?,
            "--threads" => threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((listen, threads))
}

/// A listener with a deep accept queue, so thousands of simultaneous
/// connects are not dropped and retried a second later.
fn listen_on(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(8192)
}

fn main() {
    // Load tests open thousands of connections: take every descriptor allowed.
    let _ = netbench_engine::raise_fd_limit(0);
    let (listen, threads) = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("netbench-testserver: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(if e.is_empty() { 0 } else { 2 });
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let listener = match listen_on(listen) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("netbench-testserver: cannot listen on {listen}: {e}");
                std::process::exit(2);
            }
        };
        let addr = listener.local_addr().expect("local addr");
        println!("listening on http://{addr}/");
        let _ = std::io::stdout().flush();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of descriptors or similar: keep serving what is open.
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(ok))
                    .await;
            });
        }
    });
}
