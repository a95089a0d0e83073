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
