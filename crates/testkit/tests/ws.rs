//! WebSocket end to end (issue 15): `verify`'s ws checks and the engine's
//! WebSocket load against the contract server's `/ws` echo, an honest one
//! and one that answers every message with a fixed payload, and against a
//! server without `/ws`. Counts and kinds only, never speed.

use std::net::SocketAddr;
use std::time::Duration;

use netbench_contract::{verify, CheckStatus, Client, VerifyOptions, VerifyReport};
use netbench_engine::{run, ErrorKind, LoadPlan, LoadResult, Pacing, RunControl, Stop, WsPlan};
use netbench_testkit::{serve, serve_contract, Behavior, Flaw, TestServer};

const WS_CHECKS: [&str; 6] = [
    "ws-handshake",
    "ws-echo",
    "ws-fragmented",
    "ws-ping",
    "ws-close",
    "ws-unmasked",
];

fn verify_ws(server: &TestServer, ws: bool) -> VerifyReport {
    let mut opts = VerifyOptions::new(Client::new(server.addr, Duration::from_secs(5)), 0x5eed);
    opts.ws = ws;
    verify(&opts)
}

fn status(report: &VerifyReport, name: &str) -> (CheckStatus, String) {
    let c = report
        .get(name)
        .unwrap_or_else(|| panic!("{name} was not run: {:?}", report.checks));
    (c.status, c.reason.clone())
}

#[test]
fn an_honest_echo_passes_every_ws_check() {
    let report = verify_ws(&serve_contract(Flaw::None), true);
    for name in WS_CHECKS {
        let (s, why) = status(&report, name);
        assert_eq!(s, CheckStatus::Pass, "{name}: {why}");
    }
    assert!(report.ok(), "{:?}", report.checks);
    assert!(!report.skipped.iter().any(|s| s.starts_with("ws")));
}

#[test]
fn a_fixed_payload_fails_ws_echo() {
    let report = verify_ws(&serve_contract(Flaw::WsFixedPayload), true);
    assert_eq!(status(&report, "ws-handshake").0, CheckStatus::Pass);
    let (s, why) = status(&report, "ws-echo");
    assert_eq!(s, CheckStatus::Fail);
    assert!(why.contains("other bytes"), "{why}");
    // Ping, close and the unmasked frame do not depend on payloads.
    for name in ["ws-ping", "ws-close", "ws-unmasked"] {
        assert_eq!(status(&report, name).0, CheckStatus::Pass, "{name}");
    }
    assert!(!report.ok());
}

#[test]
fn without_ws_the_checks_are_skipped_and_said_so() {
    let report = verify_ws(&serve_contract(Flaw::None), false);
    assert!(report.checks.iter().all(|c| !c.name.starts_with("ws-")));
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.starts_with("ws: not asked for")),
        "{:?}",
        report.skipped
    );
}

#[test]
fn a_server_without_ws_fails_the_handshake_and_runs_nothing_more() {
    let report = verify_ws(&serve(Behavior::Status(404)), true);
    let (s, why) = status(&report, "ws-handshake");
    assert_eq!(s, CheckStatus::Fail);
    assert!(why.contains("404"), "{why}");
    for name in &WS_CHECKS[1..] {
        let (s, why) = status(&report, name);
        assert_eq!(s, CheckStatus::Fail, "{name}");
        assert!(why.starts_with("not run"), "{name}: {why}");
    }
}

fn ws_plan(
    addr: SocketAddr,
    connections: usize,
    workers: usize,
    pacing: Pacing,
    n: u64,
    message_size: usize,
    binary: bool,
) -> LoadPlan {
    LoadPlan {
        sources: Vec::new(),
        io: Default::default(),
        addr,
        connections,
        workers,
        stop: Stop::Count(n),
        pacing,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        keepalive: true,
        pipeline: 1,
        requests_per_connection: None,
        reconnect: true,
        requests: Vec::new(),
        ws: Some(WsPlan {
            path: "/ws".into(),
            host: addr.to_string(),
            message_size,
            binary,
        }),
        tls: None,
        session: None,
        h2: false,
    }
}

fn load(plan: &LoadPlan) -> LoadResult {
    run(plan, &RunControl::new(plan)).expect("the run starts")
}

fn only(r: &LoadResult, kind: ErrorKind) -> bool {
    r.errors.iter().all(|(k, n)| k == kind || n == 0)
}

#[test]
fn closed_loop_messages_are_all_echoed() {
    let server = serve_contract(Flaw::None);
    let plan = ws_plan(server.addr, 4, 2, Pacing::Closed, 2_000, 64, false);
    let r = load(&plan);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.requests, 2_000);
    assert_eq!(r.attempts(), 2_000);
    assert_eq!(r.latency.count, 2_000, "one round trip per message");
    assert_eq!(r.connects, 4, "one upgrade per connection, no reconnects");
    assert_eq!(r.workers.iter().map(|w| w.requests).sum::<u64>(), 2_000);
    assert!(
        r.bytes_written > 2_000 * 64,
        "every message went out masked"
    );
}

#[test]
fn open_loop_messages_are_all_echoed() {
    let server = serve_contract(Flaw::None);
    let plan = ws_plan(
        server.addr,
        8,
        2,
        Pacing::Open {
            per_second: 2_000.0,
        },
        600,
        300,
        false,
    );
    let r = load(&plan);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.requests, 600);
    assert_eq!(r.latency.count, 600);
    let rate = r.rate.expect("an open-loop run reports its rate");
    assert_eq!(rate.target_per_s, 2_000.0);
}

/// The engine's largest message, binary, echoed in two frames by the server
/// (it splits echoes over 4 KiB), so the client joins fragments under load.
#[test]
fn binary_messages_of_64_kib() {
    let server = serve_contract(Flaw::None);
    let plan = ws_plan(server.addr, 2, 1, Pacing::Closed, 100, 64 * 1024, true);
    let r = load(&plan);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.requests, 100);
    assert!(r.bytes_read >= 100 * 64 * 1024);
}

#[test]
fn a_fixed_payload_is_an_echo_mismatch_every_time() {
    let server = serve_contract(Flaw::WsFixedPayload);
    let plan = ws_plan(server.addr, 3, 1, Pacing::Closed, 300, 100, false);
    let r = load(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(
        r.errors.get(ErrorKind::WsEchoMismatch),
        300,
        "{:?}",
        r.errors
    );
    assert!(only(&r, ErrorKind::WsEchoMismatch), "{:?}", r.errors);
    assert_eq!(r.connects, 3, "a wrong echo does not end the connection");
}

#[test]
fn without_ws_every_connection_is_a_handshake_error() {
    let server = serve(Behavior::Status(404));
    // One connection per worker: each attempt is one connect and one error.
    let plan = ws_plan(server.addr, 2, 2, Pacing::Closed, 50, 64, false);
    let r = load(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.get(ErrorKind::WsHandshake), 50, "{:?}", r.errors);
    assert!(only(&r, ErrorKind::WsHandshake), "{:?}", r.errors);
    assert_eq!(r.connects, 50);
}
