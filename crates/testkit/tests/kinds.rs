//! Every scenario kind end to end through `netbench run`'s runner against
//! the contract server (a thread per connection): what each kind stores, and
//! a storm that a server refuses in part.

mod common;

use common::{fake_server, request, scratch, Quiet};

use netbench_engine::LoadResult;
use netbench_suite::kinds::Facts;
use netbench_suite::run_suite;
use netbench_suite::store::{Measurement, MeasurementStatus, RunDetail, RunStatus, Store};

fn run(name: &str, suite: &str, servers: &[(&str, &str)]) -> RunDetail {
    let work = scratch(name);
    let dir = work.join("servers");
    for (server, args) in servers {
        fake_server(&dir, server, "true", args);
    }
    let req = request(suite, dir, &work);
    let mut store = Store::open(&work.join("db.sqlite")).unwrap();
    let outcome = run_suite(
        &req,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    drop(store);
    Store::open(&work.join("db.sqlite"))
        .unwrap()
        .run(outcome.run)
        .unwrap()
}

fn cell<'a>(run: &'a RunDetail, scenario: &str) -> &'a Measurement {
    let m = run
        .measurements
        .iter()
        .find(|m| m.key.scenario == scenario)
        .unwrap_or_else(|| panic!("no {scenario} cell in {:?}", run.measurements));
    assert_eq!(
        m.status,
        MeasurementStatus::Ok,
        "{scenario}: {:?}",
        m.failure
    );
    m
}

fn load(m: &Measurement) -> LoadResult {
    serde_json::from_str(m.result_json.as_deref().unwrap()).unwrap()
}

const KINDS: &str = r#"
servers = ["steady"]
repetitions = 1
cooldown = "0s"
quiet_wait = "0s"

[[scenarios]]
name = "idle"
kind = "idle"
endpoint = "blank"
connections = [10, 60]
hold = "800ms"
heartbeat = "300ms"

[[scenarios]]
name = "storm"
kind = "storm"
endpoint = "blank"
connections = [200]

[[scenarios]]
name = "keepalive-off"
kind = "short-lived"
endpoint = "blank"
connections = [4]
duration = "500ms"

[[scenarios]]
name = "k10"
kind = "short-lived"
requests_per_connection = 10
endpoint = "blank"
connections = [4]
duration = "500ms"

[[scenarios]]
name = "sweep"
kind = "rate-sweep"
endpoint = "blank"
connections = [4]
warmup = "100ms"
duration = "400ms"
steps = [0.25, 0.5]
slo_p99 = "50ms"

[[scenarios]]
name = "fixed"
kind = "fixed-rate"
rate = 500
endpoint = "work"
connections = [4]
warmup = "100ms"
duration = "500ms"
work_documents = 50

[[scenarios]]
name = "pipelined"
kind = "pipelined"
pipeline = 4
endpoint = "blank"
connections = [2]
duration = "500ms"
"#;

#[test]
fn every_kind_stores_what_it_measured() {
    let run = run("kinds", KINDS, &[("steady", "")]);
    // One idle cell for both levels, one cell for each other scenario.
    assert_eq!(run.measurements.len(), 7, "{:?}", run.measurements);
    for m in &run.measurements {
        assert!(
            m.server_cpu_s.is_some_and(|c| c >= 0.0),
            "{}: the server's CPU over the window",
            m.key.scenario
        );
    }

    let idle = cell(&run, "idle");
    assert_eq!(
        idle.key.connections, 60,
        "an idle cell is keyed by its largest level"
    );
    let Some(Facts::Idle(f)) = &idle.facts else {
        panic!("idle facts: {:?}", idle.facts)
    };
    assert_eq!(f.levels.len(), 2);
    assert_eq!((f.levels[0].connections, f.levels[0].open), (10, 10));
    assert_eq!((f.levels[1].connections, f.levels[1].open), (60, 60));
    assert!(f
        .levels
        .iter()
        .all(|l| l.failed == 0 && l.closed_by_server == 0));
    // A thread per connection: 50 more connections are 50 more threads, and
    // their stacks are memory the fit sees.
    assert!(
        f.levels[1].threads >= f.levels[0].threads + 50,
        "{:?}",
        f.levels
    );
    let fit = f.pss_fit.expect("two full levels make a line");
    assert!(fit.slope > 0.0, "{fit:?}");
    assert!(f
        .levels
        .iter()
        .all(|l| l.heartbeats > 0 && l.heartbeat_errors == 0));
    assert!(f.levels.iter().all(|l| l.pss_bytes > 0 && l.open_s > 0.0));

    let storm = cell(&run, "storm");
    let Some(Facts::Storm(s)) = &storm.facts else {
        panic!("storm facts: {:?}", storm.facts)
    };
    assert_eq!(s.clients, 200);
    assert_eq!(s.answered, 200, "{s:?}");
    assert_eq!(s.refused + s.connect_timeouts + s.other_errors, 0);
    assert_eq!(
        s.connect.count, 200,
        "one connect per client, no reconnects"
    );
    assert!(s.all_done_s > 0.0 && s.connects_per_s > 0.0);
    assert!(s.somaxconn.is_some() && s.listen_backlog.is_some_and(|b| b > 0));

    // Keep-alive off: a connection per request (ab without -k); K = 10: one
    // per ten answers.
    let off = load(cell(&run, "keepalive-off"));
    assert!(
        off.requests > 0 && off.errors.total() == 0,
        "{:?}",
        off.errors
    );
    assert!(
        off.connects + 4 >= off.requests,
        "{} connects for {} requests",
        off.connects,
        off.requests
    );
    let k10 = cell(&run, "k10");
    assert!(matches!(&k10.facts, Some(Facts::ShortLived(f)) if f.requests_per_connection == 10));
    let k10 = load(k10);
    assert!(
        k10.requests > 0 && k10.errors.total() == 0,
        "{:?}",
        k10.errors
    );
    assert!(
        k10.connects * 10 + 40 >= k10.requests && k10.connects * 5 < k10.requests,
        "{} connects for {} requests",
        k10.connects,
        k10.requests
    );

    let sweep = cell(&run, "sweep");
    let Some(Facts::RateSweep(w)) = &sweep.facts else {
        panic!("sweep facts: {:?}", sweep.facts)
    };
    assert!(w.peak_rps > 0.0);
    assert_eq!(w.steps.len(), 2);
    for (step, share) in w.steps.iter().zip([0.25, 0.5]) {
        assert!((step.offered_per_s - share * w.peak_rps).abs() < 1e-6 * w.peak_rps);
        assert!(step.achieved_per_s > 0.0 && step.p99_ns >= step.p50_ns && step.p50_ns > 0.0);
        assert!(step.server_cpu_us_per_request.is_some_and(|c| c > 0.0));
    }
    assert_eq!(w.slo_p99_ns, 50e6);
    assert_eq!(
        w.knee_per_s,
        netbench_suite::kinds::knee(&w.steps, w.slo_p99_ns)
    );

    let fixed = cell(&run, "fixed");
    let Some(Facts::FixedRate(x)) = &fixed.facts else {
        panic!("fixed-rate facts: {:?}", fixed.facts)
    };
    assert_eq!(x.rate_per_s, 500.0);
    assert!(x.offered_per_s <= 500.0 && x.achieved_per_s > 0.0);
    assert!(x.server_cpu_us_per_request.is_some_and(|c| c > 0.0));
    assert_eq!(load(fixed).errors.total(), 0, "every work answer checked");

    let piped = cell(&run, "pipelined");
    assert!(matches!(&piped.facts, Some(Facts::Pipelined(p)) if p.depth == 4));
    let piped = load(piped);
    assert!(piped.requests > 0 && piped.errors.total() == 0);
}

#[test]
fn a_storm_the_server_refuses_in_part_is_reported_not_hidden() {
    let suite = r#"
servers = ["refusing"]
repetitions = 1
cooldown = "0s"
quiet_wait = "0s"

[[scenarios]]
name = "storm"
kind = "storm"
endpoint = "blank"
connections = [300]
"#;
    // The readiness poll takes a connection or two of the 100; the storm
    // gets the rest, and every later connect is refused.
    let run = run(
        "storm-refused",
        suite,
        &[("refusing", "--close-listener-after 100")],
    );
    let storm = cell(&run, "storm");
    let Some(Facts::Storm(s)) = &storm.facts else {
        panic!("storm facts: {:?}", storm.facts)
    };
    assert!(s.answered > 0 && s.answered < 100, "{s:?}");
    // A client whose connect was still waiting when the listener closed is
    // refused; one already in the listen backlog is reset (a read error).
    // Which of the two depends on how fast the connects went out (io_uring
    // sends them in one batch), never on whether they are counted.
    assert!(s.refused > 0, "{s:?}");
    assert!(s.refused + s.other_errors >= 200, "{s:?}");
    assert_eq!(
        s.answered + s.refused + s.connect_timeouts + s.other_errors,
        300,
        "every client is accounted for once: {s:?}"
    );
    let r = load(storm);
    assert_eq!(
        r.errors.get(netbench_engine::ErrorKind::Connect),
        s.refused + s.connect_timeouts
    );
}
