//! Resident servers (`[warmup] process = "run"`) end to end: every server
//! started once and kept for the run, rounds visiting their cells in the
//! stored seed's order, A/A twins, a server that crashes (recorded,
//! restarted, its cells of that round failed, given up on after its
//! restarts), and one that spins while it waits its turn (recorded as such).

mod common;

use std::collections::HashMap;

use common::{fake_server, request, scratch, Quiet};

use netbench_records::resident::JUDGED_WAIT_S;
use netbench_records::ServerEventKind;
use netbench_suite::store::{MeasurementStatus, RunStatus, Store};
use netbench_suite::{rounds, run_suite};

/// `rounds` rounds of blank and a fixed rate at 2 connections, servers
/// resident, short windows.
fn suite(servers: &str, rounds: u32) -> String {
    blank_only(servers, rounds)
        + r#"
        [[scenarios]]
        name = "rate"
        kind = "fixed-rate"
        rate = 200
        endpoint = "blank"
        connections = [2]
        warmup = "100ms"
        duration = "300ms"
    "#
}

/// `rounds` rounds of blank alone.
fn blank_only(servers: &str, rounds: u32) -> String {
    format!(
        r#"
        servers = [{servers}]
        repetitions = {rounds}
        cooldown = "10ms"
        quiet_wait = "0s"
        [warmup]
        process = "run"
        [[scenarios]]
        name = "blank"
        endpoint = "blank"
        connections = [2]
        warmup = "100ms"
        duration = "300ms"
    "#
    )
}

/// The process ids of the servers a run started, from their tag.
fn running(tag: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c).replace('\0', " ");
                c.contains(tag) && c.contains("netbench-contract-server")
            })
        })
        .count()
}

#[test]
fn resident_servers_serve_every_round_in_the_seed_s_order_and_twins_run_apart() {
    let work = scratch("resident");
    let servers = work.join("servers");
    let tag = format!("resident-{}", std::process::id());
    fake_server(&servers, "a", "", &format!("--tag {tag}"));
    fake_server(&servers, "b", "", &format!("--tag {tag}"));
    let req = request(&suite("\"a\", \"a:twin\", \"b\"", 3), servers, &work);
    let mut store = Store::open_in_memory().unwrap();
    let outcome = run_suite(&req, &mut store, &mut Quiet::default()).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let run = store.run(outcome.run).unwrap();

    // a, its twin and b: three processes, each started once.
    let events = store.server_events(outcome.run).unwrap();
    let mut starts: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e.kind == ServerEventKind::Started)
        .map(|e| (e.server.as_str(), e.variant.as_str()))
        .collect();
    starts.sort();
    assert_eq!(starts, [("a", ""), ("a", "twin"), ("b", "")]);
    assert!(events
        .iter()
        .all(|e| matches!(e.kind, ServerEventKind::Started | ServerEventKind::Idle)));
    // Every visit after a server's first records its wait.
    let idle = events
        .iter()
        .filter(|e| e.kind == ServerEventKind::Idle)
        .count();
    assert_eq!(idle, 3 * 2 * 3 - 3, "{events:?}");
    assert!(events.iter().all(|e| !e.spinning()), "{events:?}");

    assert_eq!(run.measurements.len(), 3 * 2 * 3);
    for m in &run.measurements {
        assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
        assert!(m.server_cpu_s.is_some(), "{:?}", m.key);
    }
    // The twin is a server of its own in the record, with the same
    // manifest.
    let twin = run.servers.iter().find(|s| s.variant == "twin").unwrap();
    let a = run
        .servers
        .iter()
        .find(|s| s.server == "a" && s.variant.is_empty())
        .unwrap();
    assert_eq!(twin.manifest_toml, a.manifest_toml);

    // Each round after the first ran in the order the stored seed gives.
    let seed = run.work_seed.unwrap();
    let mut by_time: Vec<_> = run.measurements.iter().collect();
    by_time.sort_by(|x, y| x.started_at.cmp(&y.started_at));
    for round in 2..=3 {
        let ran: Vec<(String, String, String)> = by_time
            .iter()
            .filter(|m| m.key.repetition == round)
            .map(|m| {
                (
                    m.key.server.clone(),
                    m.key.variant.clone(),
                    m.key.scenario.clone(),
                )
            })
            .collect();
        let mut planned = Vec::new();
        for scenario in ["blank", "rate"] {
            for (server, variant) in [("a", ""), ("a", "twin"), ("b", "")] {
                planned.push((
                    server.to_string(),
                    variant.to_string(),
                    scenario.to_string(),
                ));
            }
        }
        rounds::shuffle(&mut planned, seed, round);
        assert_eq!(ran, planned, "round {round}");
    }
    assert_eq!(running(&tag), 0, "every resident server stopped");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_resident_server_that_crashes_is_restarted_and_given_up_on() {
    let work = scratch("resident-crash");
    let servers = work.join("servers");
    let tag = format!("resident-crash-{}", std::process::id());
    fake_server(&servers, "good", "", &format!("--tag {tag}"));
    // Passes verify, then crashes inside its first cell, and inside the
    // first cell after each restart: round 1 crashes, round 2 finds it
    // exited and starts it again, and so on; round 8 finds it exited a
    // fourth time and gives up, round 9 has no process.
    fake_server(
        &servers,
        "crasher",
        "",
        &format!("--crash-after 400 --tag {tag}"),
    );
    let req = request(&blank_only("\"good\", \"crasher\"", 9), servers, &work);
    let mut store = Store::open_in_memory().unwrap();
    let outcome = run_suite(&req, &mut store, &mut Quiet::default()).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let run = store.run(outcome.run).unwrap();
    let events = store.server_events(outcome.run).unwrap();
    let of = |kind| {
        events
            .iter()
            .filter(|e| e.server == "crasher" && e.kind == kind)
            .count()
    };
    assert_eq!(of(ServerEventKind::Started), 1);
    assert_eq!(
        of(ServerEventKind::Restarted),
        netbench_suite::MAX_RESTARTS as usize
    );
    assert_eq!(
        of(ServerEventKind::Crashed),
        of(ServerEventKind::Restarted) + 1
    );
    assert_eq!(of(ServerEventKind::GaveUp), 1);
    let crashed = events
        .iter()
        .find(|e| e.kind == ServerEventKind::Crashed)
        .unwrap();
    assert!(
        crashed
            .detail
            .as_deref()
            .unwrap()
            .contains("crashing on purpose"),
        "{crashed:?}"
    );
    assert!(events
        .iter()
        .filter(|e| e.server == "good")
        .all(|e| matches!(e.kind, ServerEventKind::Started | ServerEventKind::Idle)));

    let mut reasons: HashMap<&str, usize> = HashMap::new();
    for m in &run.measurements {
        if m.key.server == "good" {
            assert_eq!(m.status, MeasurementStatus::Ok, "{:?}", m.failure);
            continue;
        }
        assert_eq!(m.status, MeasurementStatus::Failed, "{:?}", m.key);
        let why = m.failure.as_deref().unwrap();
        let kind = [
            "exited during the measurement",
            "had exited when its turn came",
            "crashed earlier in round",
            "stops restarting it",
            "the run stopped restarting it",
        ]
        .into_iter()
        .find(|k| why.contains(k))
        .unwrap_or_else(|| panic!("unexpected reason: {why}"));
        *reasons.entry(kind).or_default() += 1;
    }
    assert_eq!(
        reasons,
        HashMap::from([
            ("exited during the measurement", 4),
            ("had exited when its turn came", 3),
            ("stops restarting it", 1),
            ("the run stopped restarting it", 1),
        ])
    );
    assert_eq!(running(&tag), 0, "nothing left running");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_resident_server_that_spins_while_it_waits_is_recorded() {
    let work = scratch("resident-spin");
    let servers = work.join("servers");
    let tag = format!("resident-spin-{}", std::process::id());
    for quiet in ["q1", "q2", "q3"] {
        fake_server(&servers, quiet, "", &format!("--tag {tag}"));
    }
    fake_server(&servers, "spinner", "", &format!("--spin --tag {tag}"));
    // Waits of seconds: only those are judged (JUDGED_WAIT_S).
    let suite = blank_only("\"q1\", \"q2\", \"q3\", \"spinner\"", 4)
        .replace("duration = \"300ms\"", "duration = \"900ms\"");
    let req = request(&suite, servers, &work);
    let mut store = Store::open_in_memory().unwrap();
    let outcome = run_suite(&req, &mut store, &mut Quiet::default()).unwrap();
    assert_eq!(outcome.status, RunStatus::Complete);
    let events = store.server_events(outcome.run).unwrap();
    let judged = |quiet: bool| {
        events
            .iter()
            .filter(|e| e.kind == ServerEventKind::Idle && (e.server == "spinner") != quiet)
            .filter(|e| e.waited_s.is_some_and(|w| w >= JUDGED_WAIT_S))
            .collect::<Vec<_>>()
    };
    let (spinner, quiet) = (judged(false), judged(true));
    assert!(!spinner.is_empty() && !quiet.is_empty(), "{events:?}");
    assert!(spinner.iter().all(|e| e.spinning()), "{spinner:?}");
    assert!(quiet.iter().all(|e| !e.spinning()), "{quiet:?}");
    assert_eq!(running(&tag), 0);
    let _ = std::fs::remove_dir_all(&work);
}
