//! The engine over HTTP/2 (issue 32): h2c with prior knowledge and h2 over
//! TLS against hyper's HTTP/2, streams kept in flight and replaced as they
//! end, bodies sent as the server's windows allow, the server's limits kept,
//! PING answered, and every way a server breaks HTTP/2 counted as its own
//! kind within the run's time. Runs on epoll, and on io_uring under
//! NETBENCH_TEST_IO=uring. Counts only, never speed.

mod common;

use std::time::{Duration, Instant};

use common::*;
use netbench_engine::*;
use netbench_testkit::{serve_broken_h2, serve_h2c, serve_tls, H2Flaw, TlsFlaw};

fn h2_plan(addr: std::net::SocketAddr, connections: usize, streams: usize, n: u64) -> LoadPlan {
    let url = parse_url(&format!("http://{addr}/blank")).unwrap();
    LoadPlan {
        h2: true,
        pipeline: streams,
        requests: vec![RequestTemplate {
            bytes: build_request(&RequestParts {
                method: "GET",
                url: &url,
                headers: &[],
                body: b"",
                keepalive: true,
            }),
            ..ok_request(true)
        }],
        ..count_plan(addr, connections, 1, n)
    }
}

/// A POST of `body` expecting `OK` (the hand-written server's answer).
fn post(body: &[u8]) -> RequestTemplate {
    let url = parse_url("http://127.0.0.1/upload").unwrap();
    RequestTemplate {
        bytes: build_request(&RequestParts {
            method: "POST",
            url: &url,
            headers: &[],
            body,
            keepalive: true,
        }),
        ..ok_request(true)
    }
}

#[test]
fn h2c_answers_are_checked_with_many_streams_per_connection() {
    let server = serve_h2c();
    for streams in [1, 10, 100] {
        let plan = h2_plan(server.addr, 2, streams, 2_000);
        let r = run_plan(&plan);
        assert_eq!(
            (r.requests, r.errors.total()),
            (2_000, 0),
            "{streams}: {:?}",
            r.errors
        );
        // Streams in flight at once, measured: more than one connection's
        // worth when there are many.
        if streams == 100 {
            assert!(r.achieved_concurrency > 4.0, "{}", r.achieved_concurrency);
        }
    }
}

#[test]
fn work_answers_go_as_http2_and_are_checked_each_against_its_own() {
    use netbench_contract::{work_requests, WorkGenerator};
    let server = serve_h2c();
    let url = parse_url(&server.url("/work")).unwrap();
    let mut plan = h2_plan(server.addr, 2, 10, 500);
    plan.requests = work_requests(&url, true, WorkGenerator::new(3, 5).cases(50));
    let r = run_plan(&plan);
    assert_eq!((r.requests, r.errors.total()), (500, 0), "{:?}", r.errors);
    // The same plan with every expected answer shifted by one: each answer
    // is checked against its own request, so every one fails.
    let mut shifted = plan.clone();
    let expects: Vec<Expect> = plan.requests.iter().map(|t| t.expect.clone()).collect();
    for (i, t) in shifted.requests.iter_mut().enumerate() {
        t.expect = expects[(i + 1) % expects.len()].clone();
    }
    let r = run_plan(&shifted);
    assert_eq!(r.errors.get(ErrorKind::Body), 500, "{:?}", r.errors);
}

#[test]
fn h2_over_tls_agrees_on_h2_by_alpn() {
    let server = serve_tls(serve_h2c(), TlsFlaw::AlpnH2Only);
    let mut plan = h2_plan(server.addr, 2, 10, 500);
    plan.tls = Some(
        TlsPlan::new(
            &TlsOptions {
                cacert: Some(server.ca_file.clone()),
                alpn: vec![b"h2".to_vec()],
                ..TlsOptions::default()
            },
            "127.0.0.1",
        )
        .unwrap(),
    );
    let r = run_plan(&plan);
    assert_eq!((r.requests, r.errors.total()), (500, 0), "{:?}", r.errors);
    assert_eq!(r.tls.unwrap().alpn.as_deref(), Some("h2"));
}

/// Issue 42 (low): a TLS server that agrees no ALPN protocol does not
/// speak HTTP/2 there; the client refuses it at the handshake, counted as
/// `tls_alert` with its hint, not as `h2_protocol` after trying.
#[test]
fn h2_without_alpn_h2_is_refused_at_the_handshake() {
    let server = serve_tls(serve_h2c(), TlsFlaw::NoAlpn);
    let mut plan = h2_plan(server.addr, 1, 1, 5);
    plan.tls = Some(
        TlsPlan::new(
            &TlsOptions {
                cacert: Some(server.ca_file.clone()),
                alpn: vec![b"h2".to_vec()],
                ..TlsOptions::default()
            },
            "127.0.0.1",
        )
        .unwrap(),
    );
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.get(ErrorKind::TlsAlert), 5, "{:?}", r.errors);
    assert!(only_errors_of(&r, ErrorKind::TlsAlert), "{:?}", r.errors);
}

#[test]
fn bodies_wait_for_the_servers_windows_and_its_stream_limit_is_kept() {
    // 1,000-byte bodies through windows of 100 bytes, opened frame by frame.
    let server = serve_broken_h2(H2Flaw::SmallWindows);
    let mut plan = h2_plan(server.addr, 2, 4, 200);
    plan.requests = vec![post(&[b'x'; 1000])];
    let r = run_plan(&plan);
    assert_eq!((r.requests, r.errors.total()), (200, 0), "{:?}", r.errors);

    // Ten streams asked for, two allowed: the server resets any third.
    let server = serve_broken_h2(H2Flaw::TwoStreams);
    let r = run_plan(&h2_plan(server.addr, 2, 10, 400));
    assert_eq!((r.requests, r.errors.total()), (400, 0), "{:?}", r.errors);

    // Every PING is acknowledged before the next answer is asked for.
    let server = serve_broken_h2(H2Flaw::PingFirst);
    let r = run_plan(&h2_plan(server.addr, 1, 1, 100));
    assert_eq!((r.requests, r.errors.total()), (100, 0), "{:?}", r.errors);
}

#[test]
fn request_headers_index_the_servers_table_within_the_size_it_sets() {
    // The hand-written server decodes every block with one table per
    // connection and ends the connection (GOAWAY, COMPRESSION_ERROR) on a
    // block it cannot decode: each connection's blocks after its first
    // are indexes into that table.
    let server = serve_broken_h2(H2Flaw::None);
    let r = run_plan(&h2_plan(server.addr, 2, 4, 300));
    assert_eq!((r.requests, r.errors.total()), (300, 0), "{:?}", r.errors);

    // A table of 64 octets, set after the first blocks went: the next block
    // opens with a size update, and the fields that no longer fit (a
    // header of 70 octets here) go as literals from then on.
    let server = serve_broken_h2(H2Flaw::SmallTable);
    let url = parse_url(&format!("http://{}/blank", server.addr)).unwrap();
    let mut plan = h2_plan(server.addr, 2, 4, 300);
    plan.requests[0].bytes = build_request(&RequestParts {
        method: "GET",
        url: &url,
        headers: &[("x-trace".to_string(), "t".repeat(31))],
        body: b"",
        keepalive: true,
    });
    let r = run_plan(&plan);
    assert_eq!((r.requests, r.errors.total()), (300, 0), "{:?}", r.errors);
}

#[test]
fn each_way_a_server_breaks_http2_is_its_own_kind_and_no_hang() {
    let cases = [
        (H2Flaw::Malformed, ErrorKind::H2Protocol),
        (H2Flaw::HugeHeaders, ErrorKind::H2Protocol),
        (H2Flaw::ResetEvery, ErrorKind::H2Reset),
    ];
    for (flaw, kind) in cases {
        let server = serve_broken_h2(flaw);
        let r = run_plan(&h2_plan(server.addr, 2, 4, 100));
        assert_eq!(r.errors.get(kind), 100, "{flaw:?}: {:?}", r.errors);
        assert!(only_errors_of(&r, kind), "{flaw:?}: {:?}", r.errors);
    }
    // A GOAWAY after 10 answers: the streams above its last fail as going
    // away, and each new connection gets 10 more.
    let server = serve_broken_h2(H2Flaw::GoawayAfter(10));
    let r = run_plan(&h2_plan(server.addr, 1, 4, 200));
    assert!(r.requests >= 150, "{} answered: {:?}", r.requests, r.errors);
    assert!(r.errors.get(ErrorKind::H2Goaway) > 0, "{:?}", r.errors);
    assert!(only_errors_of(&r, ErrorKind::H2Goaway), "{:?}", r.errors);

    // A window that never opens: bodies never go, each request times out,
    // and the run ends within its duration and the timeout. (The streams a
    // new connection starts before the server's SETTINGS arrive may go
    // with the default window, as RFC 9113 allows.)
    let server = serve_broken_h2(H2Flaw::ZeroWindow);
    let mut plan = h2_plan(server.addr, 1, 2, 1);
    plan.requests = vec![post(b"hello")];
    plan.stop = Stop::After(Duration::from_millis(500));
    plan.timeout = Duration::from_millis(300);
    let began = Instant::now();
    let r = run_plan(&plan);
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
    assert!(r.requests < 10, "{} answered", r.requests);
    assert!(r.errors.get(ErrorKind::Timeout) > 0, "{:?}", r.errors);
}
