//! Issue 28 end to end: a suite that warms until steady and reuses a
//! server's process for its round. Every cell carries its warm phase; the
//! first cell of each server's round runs on a fresh process (with its
//! start-up time), the others on the same process, warm; a server's cells of
//! one round run together, and rounds stay interleaved across servers.

mod common;

use common::{fake_server_with, request, scratch, Quiet};

use netbench_suite::run_suite;
use netbench_suite::store::{MeasurementStatus, ProcessUse, RunStatus, Store};

#[test]
fn warm_until_steady_with_one_process_per_server_round() {
    let work = scratch("steady");
    let servers = work.join("servers");
    let tag = format!("--tag steady-{}", std::process::id());
    // alpha's runtime compiles while it runs (jit): its fresh processes
    // warm the whole trend look-back before they may settle.
    fake_server_with(&servers, "alpha", "", "jit = true\n", "", &tag);
    // beta says its fresh processes warm at least 2.5 s (`warm_min`).
    fake_server_with(&servers, "beta", "", "warm_min = \"2500ms\"\n", "", &tag);
    let suite = r#"
        servers = ["*"]
        repetitions = 2
        cooldown = "0s"
        quiet_wait = "0s"
        [warmup]
        until = "steady"
        window = "200ms"
        min = "1s"
        cap = "3s"
        span = "2s"
        process = "round"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [2]
        warmup = "100ms"
        duration = "300ms"
        [[scenarios]]
        name = "work"
        endpoint = "work"
        connections = [2]
        warmup = "100ms"
        duration = "300ms"
        work_documents = 20
    "#;
    let req = request(suite, servers, &work);
    let mut store = Store::open_in_memory().unwrap();
    let mut quiet = Quiet {
        cancel_after: None,
        finished: 0,
    };
    let outcome = run_suite(&req, &mut store, &mut quiet).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let run = store.run(outcome.run).unwrap();
    assert_eq!(run.measurements.len(), 8);

    let mut cells: Vec<_> = run.measurements.iter().collect();
    cells.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    for m in &cells {
        assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
        let w = m.warmup.as_ref().expect("every cell warms until steady");
        assert_eq!(w.window_s, 0.2);
        // At least the minimum of 1 s (5 windows), at most the cap of 3 s.
        assert!(
            (5..=16).contains(&w.curve.len()),
            "{:?}: {} windows",
            m.key,
            w.curve.len()
        );
        assert!(w.curve.iter().all(|&r| r > 0.0), "{:?}", w.curve);
        // Measured at once on the connections the warm-up opened.
        let result: serde_json::Value =
            serde_json::from_str(m.result_json.as_deref().unwrap()).unwrap();
        assert_eq!(
            result["connects"], 0,
            "{:?}: a new connection was measured",
            m.key
        );
        assert_eq!(w.capped, w.settled_s.is_none());
        assert!(
            ["flat", "warmed", "slowdown", "no-steady-state"].contains(&w.class.as_str()),
            "{}",
            w.class
        );
    }
    // In time order: round 1 of alpha (blank, work), of beta, then round 2
    // of each; the first cell of each is a fresh process.
    let order: Vec<(String, u32, String, ProcessUse)> = cells
        .iter()
        .map(|m| {
            (
                m.key.server.clone(),
                m.key.repetition,
                m.key.scenario.clone(),
                m.warmup.as_ref().unwrap().process,
            )
        })
        .collect();
    let want = |server: &str, rep: u32| {
        vec![
            (
                server.to_string(),
                rep,
                "blank".to_string(),
                ProcessUse::Fresh,
            ),
            (
                server.to_string(),
                rep,
                "work".to_string(),
                ProcessUse::Reused,
            ),
        ]
    };
    let expected: Vec<_> = [
        want("alpha", 1),
        want("beta", 1),
        want("alpha", 2),
        want("beta", 2),
    ]
    .concat();
    assert_eq!(order, expected);
    for pair in cells.chunks(2) {
        let (fresh, reused) = (
            pair[0].warmup.as_ref().unwrap(),
            pair[1].warmup.as_ref().unwrap(),
        );
        // A fresh process of a jit runtime warms the whole trend look-back
        // (2 s, 10 windows) before it may be called settled; any other
        // process its minimum (1 s, checked above).
        if pair[0].key.server == "alpha" {
            assert!(fresh.curve.len() >= 10, "{fresh:?}");
            assert!(fresh.settled_s.is_none_or(|s| s >= 2.0), "{fresh:?}");
        } else {
            // beta's warm_min: 2.5 s of 0.2 s windows, settled or not.
            assert!(fresh.curve.len() >= 13, "{fresh:?}");
        }
        assert!(fresh.ready_s.is_some_and(|r| r > 0.0), "{fresh:?}");
        assert_eq!(reused.ready_s, None);
        // The same process, later in its life.
        assert!(reused.since_start_s > fresh.since_start_s + 1.0);
    }
    let _ = std::fs::remove_dir_all(&work);
}
