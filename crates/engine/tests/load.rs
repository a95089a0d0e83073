//! The load models against real (test) servers on 127.0.0.1:0: exact counts,
//! pipelining, a connection per request, request pools, open loop,
//! warm-up and cancellation.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::*;
use netbench_engine::*;
use netbench_testkit::{serve, Behavior};

#[test]
fn exact_count_over_several_connections_and_workers() {
    let server = serve(Behavior::Good);
    for (conns, workers, n) in [(1, 1, 1), (10, 2, 1000), (7, 2, 333), (3, 3, 2)] {
        let r = run_plan(&count_plan(server.addr, conns, workers, n));
        assert_eq!(r.requests, n, "{conns} connections, {workers} workers");
        assert_eq!(r.errors.total(), 0);
        assert!(!r.interrupted);
        assert_eq!(r.latency.count, n);
        assert_eq!(r.workers.iter().map(|w| w.requests).sum::<u64>(), n);
    }
}

#[test]
fn chunked_answers_are_read_and_checked() {
    let server = serve(Behavior::Chunked);
    let r = run_plan(&count_plan(server.addr, 4, 1, 200));
    assert_eq!(r.requests, 200);
    assert_eq!(r.errors.total(), 0);
}

#[test]
fn pipelined_requests_all_count() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 4, 2, 400);
    plan.pipeline = 8;
    let r = run_plan(&plan);
    assert_eq!(r.requests, 400);
    assert_eq!(r.errors.total(), 0);
}

#[test]
fn no_keepalive_makes_a_connection_per_request() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 5, 1, 50);
    plan.keepalive = false;
    plan.requests = vec![ok_request(false)];
    let r = run_plan(&plan);
    assert_eq!(r.requests, 50);
    assert_eq!(r.errors.total(), 0);
    assert!(
        r.connects >= 50 && r.connects <= 55,
        "{} connects",
        r.connects
    );
    assert_eq!(r.connect.count, r.connects);
}

#[test]
fn a_pool_of_bodies_is_sent_round_robin_each_with_its_own_answer() {
    let server = serve(Behavior::ReverseBody);
    let url = parse_url("http://127.0.0.1/echo").unwrap();
    let template = |body: &str, expect: &str| RequestTemplate {
        bytes: build_request(&RequestParts {
            method: "POST",
            url: &url,
            headers: &[],
            body: body.as_bytes(),
            keepalive: true,
        }),
        is_head: false,
        expect: Expect {
            body: BodyExpect::Exact(expect.as_bytes().to_vec()),
            ..Expect::default()
        },
    };
    let mut plan = count_plan(server.addr, 3, 1, 300);
    plan.requests = vec![
        template("abc", "cba"),
        template("hello", "olleh"),
        template("xy", "yx"),
    ];
    let r = run_plan(&plan);
    assert_eq!(r.requests, 300);
    assert_eq!(r.errors.total(), 0);

    // A server that answered every request of the pool alike would fail
    // all but one of them: here the expectations are shifted by one.
    plan.requests = vec![
        template("abc", "olleh"),
        template("hello", "yx"),
        template("xy", "cba"),
    ];
    let r = run_plan(&plan);
    assert_eq!(r.requests, 0);
    assert_eq!(r.errors.get(ErrorKind::Body), 300);
}

#[test]
fn timed_run_ends_on_time() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 4, 2, 1);
    plan.stop = Stop::After(Duration::from_millis(500));
    plan.warmup = Duration::from_millis(200);
    let started = Instant::now();
    let r = run_plan(&plan);
    let took = started.elapsed();
    assert!(r.requests > 0);
    assert_eq!(r.errors.total(), 0);
    // The window ends at its deadline, so it can only be shortened (by a
    // loop that noticed the end of warm-up late), never stretched.
    assert!(
        r.duration_s > 0.0 && r.duration_s <= 0.5 + 1e-6,
        "measured {}s",
        r.duration_s
    );
    // Warm-up plus measurement at least; the upper bound only catches a run
    // that does not end (a loaded machine may add seconds, not minutes).
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn open_loop_keeps_its_rate() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 10, 2, 1);
    plan.stop = Stop::After(Duration::from_secs(2));
    plan.pacing = Pacing::Open { per_second: 500.0 };
    let r = run_plan(&plan);
    let rate = r.rate.expect("open loop reports its rate");
    assert_eq!(rate.target_per_s, 500.0);
    // Never more than the schedule holds (2 s at 500/s, plus the one due at
    // the start of each worker's schedule); a shared machine may deliver fewer, so the lower bound is
    // loose. How close it comes is bench/'s job, not a test's.
    assert!(
        r.attempts() >= 500 && r.attempts() <= 1002,
        "{} attempts",
        r.attempts()
    );
    // The same bound as a rate: each worker's first send is due at its own
    // start, so the schedule holds 2 s × 500/s plus one per worker, and the
    // window (first start to last stop) is never shorter than the 2 s.
    let most = (2.0 * 500.0 + plan.workers as f64) / (2.0 * 500.0);
    assert!(rate.ratio <= most + 1e-9, "ratio {} > {most}", rate.ratio);
    assert_eq!(r.errors.total(), 0);
}

#[test]
fn open_loop_latency_counts_from_the_intended_send_time() {
    // One connection to a server that takes 50 ms per answer can serve 20/s;
    // asked for 50/s, the queue grows and latency from the intended send time
    // grows with it, as users of such a server would see. A closed loop (or
    // a client measuring from the actual send) would report about 50 ms.
    let server = serve(Behavior::Delay(50));
    let mut plan = count_plan(server.addr, 1, 1, 1);
    plan.stop = Stop::After(Duration::from_secs(2));
    plan.pacing = Pacing::Open { per_second: 50.0 };
    let r = run_plan(&plan);
    assert!(r.requests >= 20, "{} answers", r.requests);
    assert!(r.latency.max_ns > 500e6, "max {} ns", r.latency.max_ns);
    assert!(r.latency.p50_ns > 200e6, "p50 {} ns", r.latency.p50_ns);
    let rate = r.rate.unwrap();
    assert!(rate.ratio < 0.7, "ratio {}", rate.ratio);
    assert!(!r.verdict.client_bound);
    assert!(
        r.verdict
            .reasons
            .iter()
            .any(|s| s.contains("server fell behind")),
        "{:?}",
        r.verdict.reasons
    );

    plan.pacing = Pacing::Closed;
    let closed = run_plan(&plan);
    assert!(
        closed.latency.p50_ns < 150e6,
        "closed-loop p50 {} ns",
        closed.latency.p50_ns
    );
}

#[test]
fn cancel_ends_the_run_early_with_a_result() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 4, 2, 1);
    plan.stop = Stop::After(Duration::from_secs(60));
    let control = RunControl::new(&plan);
    let cancel = control.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.store(true, Ordering::Relaxed);
    });
    let started = Instant::now();
    let r = netbench_engine::run(&plan, &control).unwrap();
    canceller.join().unwrap();
    assert!(r.interrupted);
    assert!(r.requests > 0);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(r.duration_s < 5.0);
    let seen = control.progress.snapshot();
    assert_eq!(seen.requests, r.requests);
}

#[test]
fn a_plan_the_engine_cannot_run_is_refused() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 2, 3, 10);
    assert!(matches!(
        netbench_engine::run(&plan, &RunControl::new(&plan)),
        Err(EngineError::Plan(PlanError::Workers))
    ));
    plan.workers = 1;
    let other = RunControl::new(&count_plan(server.addr, 2, 2, 10));
    assert!(matches!(
        netbench_engine::run(&plan, &other),
        Err(EngineError::ForeignControl)
    ));
    type Breaks = fn(&mut LoadPlan);
    let cases: [(Breaks, PlanError); 7] = [
        (|p| p.requests.clear(), PlanError::NoRequests),
        (|p| p.pipeline = 0, PlanError::NoPipeline),
        (
            |p| {
                p.pipeline = 4;
                p.keepalive = false
            },
            PlanError::PipelineWithoutKeepalive,
        ),
        (
            |p| {
                p.pipeline = 4;
                p.pacing = Pacing::Open { per_second: 10.0 }
            },
            PlanError::PipelineOpenLoop,
        ),
        (
            |p| {
                p.pacing = Pacing::Open {
                    per_second: f64::NAN,
                }
            },
            PlanError::Rate,
        ),
        (|p| p.timeout = Duration::ZERO, PlanError::Timeout),
        (
            |p| p.stop = Stop::After(Duration::ZERO),
            PlanError::Duration,
        ),
    ];
    for (break_it, want) in cases {
        let mut p = count_plan(server.addr, 2, 1, 10);
        assert_eq!(p.validate(), Ok(()));
        break_it(&mut p);
        assert_eq!(p.validate(), Err(want.clone()));
        assert!(matches!(
            netbench_engine::run(&p, &RunControl::new(&p)),
            Err(EngineError::Plan(e)) if e == want
        ));
    }
}

#[test]
fn the_result_records_the_backend_that_ran() {
    let server = serve(Behavior::Good);
    let r = run_plan(&count_plan(server.addr, 3, 1, 30));
    assert_eq!(r.requests, 30);
    assert_eq!(r.io, test_io());
    assert_eq!(r.io_fallback, None);
}

/// Issue 28: a caller that warms until some condition holds ends warm-up
/// early, and the run measures its whole duration from there on the
/// connections warm-up opened (no connect in the measured window).
#[test]
fn an_early_end_of_warm_up_measures_on_the_warm_connections() {
    let server = serve(Behavior::Good);
    let mut plan = count_plan(server.addr, 4, 2, 1);
    plan.warmup = Duration::from_secs(60);
    plan.stop = Stop::After(Duration::from_millis(400));
    let control = RunControl::new(&plan);
    let started = Instant::now();
    let r = std::thread::scope(|scope| {
        let engine = scope.spawn(|| netbench_engine::run(&plan, &control));
        // Warm-up answers are published, not measured.
        while control.progress.snapshot().answered < 200 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no warm-up answers"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let seen = control.progress.snapshot();
        assert_eq!(seen.requests, 0);
        assert!(!seen.measuring);
        assert!(control.end_warmup_at(Instant::now() + Duration::from_millis(30)));
        // Only the first call counts.
        assert!(!control.end_warmup_at(Instant::now()));
        engine.join().unwrap().unwrap()
    });
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!r.interrupted);
    assert!(r.requests > 0);
    // Its 0.4 s from the early end, not 60 s (a worker that looks late on
    // a busy machine starts its window late, never ends it late).
    assert!((0.1..1.0).contains(&r.duration_s), "{}", r.duration_s);
    assert_eq!(r.connects, 0, "the measured window opened connections");
    assert!(control.progress.snapshot().answered > r.requests);
}

#[test]
fn bytes_read_while_measuring_leave_the_warm_up_out() {
    let server = serve(Behavior::Good);
    // Without warm-up every answer is measured: the size of one answer.
    let exact = run_plan(&count_plan(server.addr, 2, 1, 100));
    assert_eq!(exact.measured_bytes_read, exact.bytes_read);
    assert_eq!(exact.bytes_read % 100, 0, "answers of one size");
    let size = exact.bytes_read / 100;

    let mut plan = count_plan(server.addr, 4, 1, 1);
    plan.warmup = Duration::from_millis(300);
    plan.stop = Stop::After(Duration::from_millis(300));
    let r = run_plan(&plan);
    assert!(r.requests > 100, "{} requests", r.requests);
    assert!(
        r.bytes_read > r.measured_bytes_read + 100 * size,
        "warm-up read too"
    );
    // Exact up to the answers in flight at the window's edges: one per
    // connection at each.
    let expected = r.requests * size;
    let slack = 2 * 4 * size;
    assert!(
        r.measured_bytes_read.abs_diff(expected) <= slack,
        "{} bytes measured for {} answers of {size}",
        r.measured_bytes_read,
        r.requests
    );
}
