//! `netbench run`'s runner end to end: the quick matrix against two real
//! reference servers read back from the store, and every kind of fault
//! (missing toolchain, never ready, fails verify, crashes mid-run) recorded
//! with its reason while the run completes; an interrupted run resumes; no
//! server process is left behind. Here rather than in the suite crate
//! because the misbehaving servers are this crate's binaries.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{fake_server, repo, request, scratch, Quiet};

use netbench_engine::LoadResult;
use netbench_suite::store::{BuildStatus, MeasurementStatus, RunStatus, Store};
use netbench_suite::{run_suite, Event, Observer, Stopped};

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) && !cmd.contains("run_suite-") {
                found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn quick_matrix_against_two_real_servers() {
    let work = scratch("quick");
    // The shipped quick suite, narrowed to two servers that build in seconds.
    let quick = std::fs::read_to_string(repo().join("suites/quick.toml")).unwrap();
    let suite = quick.replace(
        "servers = [\"*\"]",
        "servers = [\"go-nethttp\", \"node-http\"]",
    );
    assert_ne!(
        suite, quick,
        "the quick suite's server line changed; update this test"
    );
    let mut req = request(&suite, repo().join("servers"), &work);
    req.ready_within = Duration::from_secs(30);
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

    // Everything is read back from a fresh handle on the file.
    drop(store);
    let run = Store::open(&work.join("db.sqlite"))
        .unwrap()
        .run(outcome.run)
        .unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert!(run.environment["cpu_model"].is_string() || run.environment["kernel"].is_string());
    assert_eq!(run.servers.len(), 2);
    for s in &run.servers {
        assert_eq!(s.build_status, BuildStatus::Ok, "{s:?}");
        assert!(s.excluded_reason.is_none(), "{:?}", s.excluded_reason);
        assert!(s.ready_s.is_some());
        assert!(s.verify_json.as_deref().unwrap().contains("\"checks\""));
    }
    assert_eq!(run.measurements.len(), 8);
    for m in &run.measurements {
        assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
        let r: LoadResult = serde_json::from_str(m.result_json.as_deref().unwrap()).unwrap();
        assert!(r.requests > 0, "{:?}", m.key);
        assert_eq!(r.errors.total(), 0, "{:?}: {:?}", m.key, r.errors);
        assert!(!m.histogram.as_deref().unwrap().is_empty());
        assert!(m.samples.len() >= 5, "{} samples", m.samples.len());
        assert!(m
            .samples
            .iter()
            .all(|s| s.rss_bytes > 0 && s.processes >= 1));
        // The machine-speed control and the noise around the cell.
        let n = m.noise.expect("a measured cell keeps its noise facts");
        assert!(n.probe_server_ns > 0.0 && n.probe_client_ns > 0.0, "{n:?}");
        assert!((0.0..=1.0).contains(&n.steal), "{n:?}");
        assert!(n.other_busy_cores >= 0.0 && n.quiet_wait_s == 0.0, "{n:?}");
    }
    // Interleaved: in the order they ran, the servers alternate.
    let mut in_order: Vec<_> = run.measurements.iter().collect();
    in_order.sort_by_key(|m| m.id);
    assert!(in_order
        .windows(2)
        .all(|w| w[0].key.server != w[1].key.server));
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn faults_are_recorded_with_their_reasons_and_the_run_goes_on() {
    let work = scratch("faults");
    let servers = work.join("servers");
    let tag = format!("--tag faults-{}", std::process::id());
    fake_server(&servers, "good", "", &tag);
    fake_server(&servers, "crasher", "", &format!("--crash-after 400 {tag}"));
    fake_server(&servers, "sleeper", "", &format!("--never-ready {tag}"));
    fake_server(&servers, "canned", "", &format!("--flaw canned-work {tag}"));
    fake_server(&servers, "uncompilable", "no-such-compiler-xyz build", &tag);
    fake_server(
        &servers,
        "broken-build",
        "echo compiling; echo error: it broke >&2; exit 7",
        &tag,
    );
    let suite = r#"
        servers = ["*"]
        cooldown = "50ms"
        quiet_wait = "0s"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [2]
        duration = "1500ms"
    "#;
    let req = request(suite, servers, &work);
    let mut store = Store::open_in_memory().unwrap();
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
    let run = store.run(outcome.run).unwrap();

    let reason = |name: &str| {
        run.servers
            .iter()
            .find(|s| s.server == name)
            .unwrap_or_else(|| panic!("{name} not recorded"))
            .excluded_reason
            .clone()
    };
    assert_eq!(reason("good"), None);
    assert_eq!(reason("crasher"), None);
    assert!(
        reason("sleeper").unwrap().contains("not ready within"),
        "{:?}",
        reason("sleeper")
    );
    assert!(
        reason("canned").unwrap().contains("fails verify: work"),
        "{:?}",
        reason("canned")
    );
    assert!(reason("uncompilable")
        .unwrap()
        .contains("toolchain not installed: no-such-compiler-xyz"));
    let broken = reason("broken-build").unwrap();
    assert!(
        broken.contains("the build of broken-build failed") && broken.contains("error: it broke"),
        "{broken}"
    );

    let cell = |name: &str| {
        run.measurements
            .iter()
            .find(|m| m.key.server == name)
            .unwrap()
    };
    assert_eq!(cell("good").status, MeasurementStatus::Ok);
    let crashed = cell("crasher");
    assert_eq!(crashed.status, MeasurementStatus::Failed);
    let why = crashed.failure.as_deref().unwrap();
    assert!(
        why.contains("exited during the measurement") && why.contains("crashing on purpose"),
        "{why}"
    );
    assert_eq!(run.measurements.len(), 2, "left-out servers have no cells");

    assert!(
        processes_with(&format!("faults-{}", std::process::id())).is_empty(),
        "{:?}",
        processes_with("faults-")
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn an_interrupted_run_resumes_where_it_stopped() {
    let work = scratch("resume");
    let servers = work.join("servers");
    let tag = format!("--tag resume-{}", std::process::id());
    fake_server(&servers, "good", "", &tag);
    let suite = r#"
        servers = ["good"]
        repetitions = 2
        cooldown = "10ms"
        quiet_wait = "0s"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [1, 2, 3]
        duration = "300ms"
    "#;
    let db = work.join("db.sqlite");
    let mut store = Store::open(&db).unwrap();
    let req = request(suite, servers.clone(), &work);
    let mut stop_after_two = Quiet {
        cancel_after: Some((2, Arc::clone(&req.cancel))),
        finished: 0,
    };
    let first = run_suite(&req, &mut store, &mut stop_after_two).unwrap();
    assert_eq!(first.status, RunStatus::Interrupted);
    let done = store.completed_cells(first.run).unwrap();
    assert_eq!(done.len(), 2);
    let before = store.run(first.run).unwrap();
    assert!(processes_with(&format!("resume-{}", std::process::id())).is_empty());

    let stored = store.run(first.run).unwrap();
    let mut again = request(&stored.suite_toml, servers, &work);
    again.resume = Some(first.run);
    let second = run_suite(
        &again,
        &mut store,
        &mut Quiet {
            cancel_after: None,
            finished: 0,
        },
    )
    .unwrap();
    assert_eq!(second.run, first.run);
    assert_eq!(second.status, RunStatus::Complete);
    let after = store.run(first.run).unwrap();
    assert_eq!(after.measurements.len(), 6);
    assert!(after
        .measurements
        .iter()
        .all(|m| m.status == MeasurementStatus::Ok));
    for m in &before.measurements {
        let same = after.measurements.iter().find(|a| a.key == m.key).unwrap();
        assert_eq!(same.id, m.id, "finished cells are kept, not redone");
        assert_eq!(same.started_at, m.started_at);
    }
    assert!(processes_with(&format!("resume-{}", std::process::id())).is_empty());
    let _ = std::fs::remove_dir_all(&work);
}

/// Records how adaptive repetitions ended.
#[derive(Default)]
struct Adaptive {
    rounds: Vec<(u32, usize)>,
    stopped: Option<(Stopped, usize)>,
}

impl Observer for Adaptive {
    fn event(&mut self, e: Event<'_>) {
        match e {
            Event::AdaptiveRound { round, cells } => self.rounds.push((round, cells)),
            Event::AdaptiveStopped { stopped, unsettled } => {
                self.stopped = Some((stopped, unsettled))
            }
            _ => {}
        }
    }
}

#[test]
fn adaptive_repetitions_add_rounds_until_settled_the_maximum_or_the_budget() {
    let work = scratch("adaptive");
    let servers = work.join("servers");
    let tag = format!("--tag adaptive-{}", std::process::id());
    fake_server(&servers, "good", "", &tag);
    let suite = |budget: &str| {
        format!(
            r#"
            servers = ["good"]
            repetitions = "auto"
            cooldown = "10ms"
            quiet_wait = "0s"
            [auto]
            min = 2
            max = 4
            budget = "{budget}"
            [[scenarios]]
            name = "blank"
            endpoint = "blank"
            connections = [1, 2]
            duration = "200ms"
        "#
        )
    };
    // The rule is the caller's: one that never settles, one that always does.
    let never: fn(&[f64], f64) -> bool = |_, _| false;
    let always: fn(&[f64], f64) -> bool = |_, _| true;
    let cases = [
        (never, "10m", 4, (Stopped::Max, 2), vec![(3, 2), (4, 2)]),
        (always, "10m", 2, (Stopped::Settled, 0), vec![]),
        // A round costs about 2.4 s by the suite's own estimate; after the
        // first two there is no room for another.
        (never, "3s", 2, (Stopped::Budget, 2), vec![]),
    ];
    for (rule, budget, reps, stopped, rounds) in cases {
        let mut store = Store::open(&work.join(format!("{budget}-{reps}.sqlite"))).unwrap();
        let mut req = request(&suite(budget), servers.clone(), &work);
        req.settle = rule;
        let mut seen = Adaptive::default();
        let outcome = run_suite(&req, &mut store, &mut seen).unwrap();
        assert_eq!(outcome.status, RunStatus::Complete);
        assert_eq!(seen.stopped, Some(stopped));
        assert_eq!(seen.rounds, rounds);
        let run = store.run(outcome.run).unwrap();
        assert_eq!(run.measurements.len(), 2 * reps as usize);
        for c in [1, 2] {
            let mut got: Vec<u32> = run
                .measurements
                .iter()
                .filter(|m| m.key.connections == c)
                .map(|m| m.key.repetition)
                .collect();
            got.sort();
            assert_eq!(got, (1..=reps).collect::<Vec<_>>(), "c={c}");
        }
        let a = run.adaptive.expect("the run keeps its adaptive settings");
        assert_eq!((a.min, a.max), (2, 4));
    }
    assert!(processes_with(&format!("adaptive-{}", std::process::id())).is_empty());
    let _ = std::fs::remove_dir_all(&work);
}
