//! Each error kind, produced by a deliberately misbehaving server. Every
//! attempt of an exact-count run must end as exactly one answer or error,
//! and no bad answer may stop or hang the run.

mod common;

use std::time::{Duration, Instant};

use common::*;
use netbench_engine::*;
use netbench_testkit::{refused_addr, serve, Behavior};

fn expect_all_fail(behavior: Behavior, kind: ErrorKind, n: u64) -> LoadResult {
    let server = serve(behavior);
    let mut plan = count_plan(server.addr, 2, 1, n);
    plan.timeout = Duration::from_millis(300);
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0, "{behavior:?}: {:?}", r.errors);
    assert_eq!(r.errors.get(kind), n, "{behavior:?}: {:?}", r.errors);
    assert!(only_errors_of(&r, kind), "{behavior:?}: {:?}", r.errors);
    assert_eq!(r.error_rate(), 1.0);
    r
}

#[test]
fn wrong_status() {
    expect_all_fail(Behavior::Status(500), ErrorKind::Status, 20);
}

#[test]
fn wrong_content_type() {
    expect_all_fail(Behavior::WrongContentType, ErrorKind::ContentType, 20);
}

#[test]
fn wrong_body() {
    expect_all_fail(Behavior::WrongBody, ErrorKind::Body, 20);
}

#[test]
fn garbage_status_line() {
    expect_all_fail(Behavior::GarbageStatusLine, ErrorKind::Malformed, 20);
}

#[test]
fn close_mid_body() {
    expect_all_fail(Behavior::CloseMidBody, ErrorKind::ClosedEarly, 20);
}

#[test]
fn close_without_answer() {
    expect_all_fail(Behavior::CloseWithoutAnswer, ErrorKind::ClosedEarly, 20);
}

#[test]
fn never_answers() {
    let started = Instant::now();
    expect_all_fail(Behavior::Silent, ErrorKind::Timeout, 4);
    // Two connections, two rounds of a 300 ms timeout each, scanned every 50 ms.
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn reset_after_the_request_is_a_read_error() {
    expect_all_fail(Behavior::ResetAfterRequest, ErrorKind::Read, 20);
}

#[test]
fn reset_while_the_request_is_being_written_is_a_write_error() {
    let server = serve(Behavior::ResetWhileReading);
    let mut plan = count_plan(server.addr, 1, 1, 3);
    let url = parse_url("http://127.0.0.1/upload").unwrap();
    // Far more than the socket buffers hold, so the write is still going when
    // the reset arrives.
    let body = vec![b'x'; 64 << 20];
    plan.requests[0].bytes = build_request(&RequestParts {
        method: "POST",
        url: &url,
        headers: &[],
        body: &body,
        keepalive: true,
    });
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.get(ErrorKind::Write), 3, "{:?}", r.errors);
}

#[test]
fn refused_connections() {
    let mut plan = count_plan(refused_addr(), 2, 1, 6);
    plan.timeout = Duration::from_millis(500);
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.get(ErrorKind::Connect), 6, "{:?}", r.errors);
}

#[test]
fn content_length_shorter_than_the_body() {
    // The first answer is taken as complete ("O", a body mismatch); the
    // stray "K" then spoils the next answer's status line.
    let server = serve(Behavior::ShortContentLength);
    let mut plan = count_plan(server.addr, 1, 1, 10);
    plan.timeout = Duration::from_millis(300);
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.total(), 10);
    assert!(r.errors.get(ErrorKind::Body) >= 1, "{:?}", r.errors);
    assert!(r.errors.get(ErrorKind::Malformed) >= 1, "{:?}", r.errors);
}

#[test]
fn answers_one_byte_at_a_time_are_still_right() {
    let server = serve(Behavior::ByteAtATime);
    let r = run_plan(&count_plan(server.addr, 2, 1, 10));
    assert_eq!(r.requests, 10, "{:?}", r.errors);
    assert_eq!(r.errors.total(), 0);
}

#[test]
fn a_timed_run_against_a_silent_server_ends_by_its_deadline() {
    let server = serve(Behavior::Silent);
    let mut plan = count_plan(server.addr, 3, 1, 1);
    plan.stop = Stop::After(Duration::from_millis(500));
    plan.timeout = Duration::from_secs(30);
    let started = Instant::now();
    let r = run_plan(&plan);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.requests, 0);
    // Issue 42: neither good nor errors, yet not lost: each connection's
    // request was still waiting at the end, since the run's start.
    assert_eq!(r.errors.total(), 0);
    assert_eq!(r.unfinished.requests, 3, "{:?}", r.unfinished);
    assert!(r.unfinished.oldest_s >= 0.4, "{:?}", r.unfinished);
    assert!(r.stalled_at_end());
}

/// Issue 42: a count run drains, so nothing is left unfinished, and a timed
/// run against a quick server ends with requests in flight that waited no
/// longer than its answers took: no stall.
#[test]
fn what_a_healthy_run_leaves_in_flight_is_no_stall() {
    let server = serve(Behavior::Good);
    let r = run_plan(&count_plan(server.addr, 2, 1, 50));
    assert_eq!((r.requests, r.unfinished.requests), (50, 0));
    assert!(!r.stalled_at_end());
    let server = serve(Behavior::Delay(300));
    let mut plan = count_plan(server.addr, 2, 1, 1);
    plan.stop = Stop::After(Duration::from_millis(1000));
    let r = run_plan(&plan);
    assert!(r.requests >= 2, "{:?}", r.errors);
    assert!(r.unfinished.requests <= 2, "{:?}", r.unfinished);
    assert!(r.unfinished.oldest_s < 0.31 + 0.3, "{:?}", r.unfinished);
}

#[test]
fn connections_waiting_on_a_silent_server_count_as_in_flight() {
    // Every request times out, yet every connection was busy all along: the
    // achieved concurrency must say so, or a slow server would be taken for
    // a client that left its connections idle.
    let server = serve(Behavior::Silent);
    let mut plan = count_plan(server.addr, 4, 1, 1);
    plan.stop = Stop::After(Duration::from_millis(1200));
    plan.timeout = Duration::from_millis(200);
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert!(r.errors.get(ErrorKind::Timeout) >= 8, "{:?}", r.errors);
    assert!(
        r.achieved_concurrency > 3.5 && r.achieved_concurrency <= 4.01,
        "{}",
        r.achieved_concurrency
    );
    assert!(!r.verdict.client_bound, "{:?}", r.verdict);
}

/// Peak resident memory of this test process (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn endless_answers_end_by_the_deadline_with_bounded_memory() {
    for behavior in [
        Behavior::EndlessBody,
        Behavior::EndlessChunked,
        Behavior::EndlessHeader,
    ] {
        let server = serve(behavior);
        let mut plan = count_plan(server.addr, 2, 1, 1);
        plan.stop = Stop::After(Duration::from_millis(500));
        plan.timeout = Duration::from_millis(700);
        let started = Instant::now();
        let r = run_plan(&plan);
        let took = started.elapsed();
        // Duration plus timeout, with room for a slow shared machine; an
        // engine that never yields from reading never ends at all.
        assert!(took < Duration::from_secs(6), "{behavior:?}: {took:?}");
        assert_eq!(r.requests, 0, "{behavior:?}");
        // Nothing of an endless body is kept past the check's need (2 bytes
        // here); before the fix one run kept gigabytes.
        assert!(peak_rss() < 512 << 20, "{behavior:?}: {} bytes", peak_rss());
    }
}

#[test]
fn a_cancel_stops_a_run_stuck_in_an_endless_body() {
    let server = serve(Behavior::EndlessBody);
    let mut plan = count_plan(server.addr, 1, 1, 1);
    plan.stop = Stop::After(Duration::from_secs(60));
    plan.timeout = Duration::from_secs(60);
    let control = RunControl::new(&plan);
    let started = Instant::now();
    let r = std::thread::scope(|s| {
        let run = s.spawn(|| netbench_engine::run(&plan, &control).expect("run starts"));
        std::thread::sleep(Duration::from_millis(300));
        control
            .cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
        run.join().unwrap()
    });
    assert!(r.interrupted);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_answer_nobody_asked_for_is_malformed_not_good() {
    // Each request gets its answer twice; were the spare kept, it would be
    // taken for the next request's answer and every request would pass.
    let server = serve(Behavior::DoubleAnswer);
    let mut plan = count_plan(server.addr, 1, 1, 20);
    plan.timeout = Duration::from_millis(500);
    let r = run_plan(&plan);
    assert_eq!(r.requests + r.errors.total(), 20, "{:?}", r.errors);
    assert!(r.errors.get(ErrorKind::Malformed) >= 5, "{:?}", r.errors);
    assert!(only_errors_of(&r, ErrorKind::Malformed), "{:?}", r.errors);
}
