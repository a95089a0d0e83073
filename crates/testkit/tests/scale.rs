//! 10,000 connections from one engine against a real server (hyper, in its
//! own process so each side has its own descriptor limit).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use netbench_engine::*;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server() -> (Server, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_netbench-testserver"))
        .args(["--listen", "127.0.0.1:0", "--threads", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("netbench-testserver starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the server says where it listens");
    let addr = parse_url(url).unwrap().resolve().unwrap();
    (Server(child), addr)
}

#[test]
fn ten_thousand_connections() {
    let (_server, addr) = start_server();
    let url = parse_url(&format!("http://{addr}/")).unwrap();
    let plan = LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr,
        connections: 10_000,
        workers: 2,
        stop: Stop::After(Duration::from_secs(3)),
        pacing: Pacing::Closed,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(10),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        // The test server answers 200 text/plain "OK" on every path.
        requests: vec![netbench_contract::blank_request(&url, true)],
        ws: None,
        tls: None,
        session: None,
        h2: false,
    };
    let r = run(&plan, &RunControl::new(&plan))
        .expect("the descriptor limit allows 10,000 connections");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connects, 10_000, "every connection was made");
    assert!(r.requests >= 10_000, "{} answers", r.requests);
    assert_eq!(r.configured_connections, 10_000);
    assert!(r.achieved_concurrency > 0.0);
    assert!(r.verdict.in_flight.is_some());
}
