//! The idle loop end to end: levels of WebSocket connections held against
//! the contract server's `/ws` echo, silent and with a heartbeat, every
//! connection of a level failing its upgrade against a server without `/ws`
//! or its first echo against one that echoes other bytes, and the HTTP
//! levels the same loop holds. Counts only, never speed.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use common::ok_request;
use netbench_engine::*;
use netbench_testkit::{serve, serve_contract, serve_tls, Behavior, Flaw, TlsFlaw};

fn ws_plan(addr: SocketAddr, levels: &[usize], heartbeat: Option<Duration>) -> IdlePlan {
    IdlePlan {
        addr,
        levels: levels.to_vec(),
        hold: Duration::from_millis(300),
        heartbeat,
        timeout: Duration::from_secs(5),
        request: None,
        ws: Some(WsPlan {
            path: "/ws".into(),
            host: addr.to_string(),
            message_size: 64,
            binary: false,
        }),
        tls: None,
        io: common::test_io(),
    }
}

fn hold(plan: &IdlePlan) -> IdleResult {
    run_idle(plan, Instant::now(), &AtomicBool::new(false)).expect("the idle run starts")
}

/// Every level reached its count, each connection with its first answer in,
/// and none failed or was closed while held.
fn all_held(r: &IdleResult, levels: &[usize]) {
    assert!(!r.interrupted);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let reached: Vec<usize> = r.levels.iter().map(|l| l.connections).collect();
    assert_eq!(reached, levels);
    for l in &r.levels {
        assert_eq!(l.open, l.connections, "{l:?}");
        assert_eq!((l.failed, l.closed_by_server), (0, 0), "{l:?}");
        assert_eq!(l.heartbeat_errors, 0, "{l:?}");
    }
    let most = *levels.last().unwrap() as u64;
    assert_eq!(r.connect.count, most, "one connect per connection");
    assert_eq!(r.first_answer.count, most, "one first echo per connection");
}

#[test]
fn websocket_levels_are_held_open_and_silent() {
    let server = serve_contract(Flaw::None);
    let r = hold(&ws_plan(server.addr, &[20, 60], None));
    all_held(&r, &[20, 60]);
    assert!(r.levels.iter().all(|l| l.heartbeats == 0), "{:?}", r.levels);
}

#[test]
fn websocket_heartbeats_are_echoed() {
    let server = serve_contract(Flaw::None);
    let mut plan = ws_plan(server.addr, &[20, 60], Some(Duration::from_millis(150)));
    // Each connection's first beat is due within 150 ms of the hold's start,
    // so a one-second hold answers at least one per connection.
    plan.hold = Duration::from_secs(1);
    let r = hold(&plan);
    all_held(&r, &[20, 60]);
    for l in &r.levels {
        assert!(l.heartbeats >= l.connections as u64, "{l:?}");
    }
}

#[test]
fn without_ws_every_connection_of_the_level_fails_its_upgrade() {
    let server = serve(Behavior::Status(404));
    let r = hold(&ws_plan(server.addr, &[20], None));
    assert_eq!(r.levels.len(), 1);
    let l = &r.levels[0];
    assert_eq!((l.connections, l.open, l.failed), (20, 0, 20), "{l:?}");
    assert_eq!(r.errors.get(ErrorKind::WsHandshake), 20, "{:?}", r.errors);
    assert_eq!(r.errors.total(), 20, "{:?}", r.errors);
    assert_eq!(r.first_answer.count, 0);
}

/// The negative control: a server whose echo has the right type and length
/// but other bytes gets no connection held.
#[test]
fn a_wrong_first_echo_fails_every_connection_of_the_level() {
    let server = serve_contract(Flaw::WsFixedPayload);
    let r = hold(&ws_plan(server.addr, &[10], None));
    let l = &r.levels[0];
    assert_eq!((l.connections, l.open, l.failed), (10, 0, 10), "{l:?}");
    assert_eq!(
        r.errors.get(ErrorKind::WsEchoMismatch),
        10,
        "{:?}",
        r.errors
    );
    assert_eq!(r.errors.total(), 10, "{:?}", r.errors);
}

#[test]
fn http_levels_are_held_with_heartbeats() {
    let server = serve(Behavior::Good);
    let plan = IdlePlan {
        addr: server.addr,
        levels: vec![10, 30],
        hold: Duration::from_secs(1),
        heartbeat: Some(Duration::from_millis(150)),
        timeout: Duration::from_secs(5),
        request: Some(ok_request(true)),
        ws: None,
        tls: None,
        io: common::test_io(),
    };
    let r = hold(&plan);
    all_held(&r, &[10, 30]);
    // On the backend asked for (make test runs these on both).
    assert_eq!((r.io, r.io_fallback.as_deref()), (common::test_io(), None));
    for l in &r.levels {
        assert!(l.heartbeats >= l.connections as u64, "{l:?}");
    }
}

#[test]
fn tls_levels_are_held_over_https_and_wss() {
    let insecure = TlsPlan::new(
        &TlsOptions {
            insecure: true,
            alpn: vec![b"http/1.1".to_vec()],
            ..TlsOptions::default()
        },
        "127.0.0.1",
    )
    .unwrap();
    let https = serve_tls(serve(Behavior::Good), TlsFlaw::None);
    let plan = IdlePlan {
        addr: https.addr,
        levels: vec![5, 15],
        hold: Duration::from_millis(400),
        heartbeat: Some(Duration::from_millis(150)),
        timeout: Duration::from_secs(5),
        request: Some(ok_request(true)),
        ws: None,
        tls: Some(insecure.clone()),
        io: common::test_io(),
    };
    let r = hold(&plan);
    all_held(&r, &[5, 15]);
    assert!(r.levels[1].heartbeats >= 15, "{:?}", r.levels[1]);

    let wss = serve_tls(serve_contract(Flaw::None), TlsFlaw::None);
    let mut plan = ws_plan(wss.addr, &[10], Some(Duration::from_millis(150)));
    plan.tls = Some(insecure);
    all_held(&hold(&plan), &[10]);
}

#[test]
fn a_plan_needs_its_request_or_ws_and_a_message_the_contract_allows() {
    let addr = SocketAddr::from(([127, 0, 0, 1], 1));
    let mut plan = ws_plan(addr, &[1], None);
    assert_eq!(plan.validate(), Ok(()));
    plan.ws.as_mut().unwrap().message_size = ws::MAX_MESSAGE + 1;
    assert_eq!(plan.validate(), Err(IdlePlanError::WsMessageSize));
    plan.ws = None;
    assert_eq!(plan.validate(), Err(IdlePlanError::NoRequest));
    plan.request = Some(ok_request(true));
    assert_eq!(plan.validate(), Ok(()));
}
