//! Builders of stored records for tests (feature `fixtures`): one place that
//! knows every field, so a test names only what it is about and a new field
//! is added here once, not in every test that builds a run.

use crate::facts::IdleLevelFacts;
use crate::run::{
    BuildStatus, CellKey, Measurement, MeasurementStatus, NewRun, RunDetail, RunStatus,
    ServerRecord,
};
use crate::scenario::ScenarioRecord;
use crate::server::ServerFacts;
use crate::NetPlacement;

/// A run of `suite` about to begin, with no scenarios recorded.
pub fn new_run(suite: &str) -> NewRun {
    NewRun {
        suite: suite.into(),
        suite_toml: format!("name = \"{suite}\"\n"),
        command: format!("netbench run {suite}"),
        environment: serde_json::json!({}),
        placement: serde_json::json!({}),
        repetitions: None,
        work_seed: 1,
        adaptive: None,
        scenarios: Vec::new(),
    }
}

/// A complete stored run of `suite` with no servers, scenarios or
/// measurements yet.
pub fn run(id: i64, suite: &str) -> RunDetail {
    let n = new_run(suite);
    RunDetail {
        events: Vec::new(),
        id,
        suite: n.suite,
        suite_toml: n.suite_toml,
        command: n.command,
        started_at: "2026-11-26T12:00:00Z".into(),
        finished_at: Some("2026-11-26T12:10:00Z".into()),
        status: RunStatus::Complete,
        environment: n.environment,
        placement: n.placement,
        repetitions: None,
        work_seed: Some(1),
        adaptive: None,
        scenarios: Vec::new(),
        servers: Vec::new(),
        measurements: Vec::new(),
    }
}

/// A throughput scenario on loopback at its place in the suite.
pub fn scenario(position: u32, name: &str, connections: &[u32]) -> ScenarioRecord {
    ScenarioRecord {
        position,
        name: name.into(),
        kind: "throughput".into(),
        endpoint: "blank".into(),
        connections: connections.to_vec(),
        keepalive: true,
        requests_per_connection: None,
        needs: None,
        placement: NetPlacement::Loopback,
        bandwidth: None,
        same_cells_as: name.into(),
        protocol: Default::default(),
        streams: 1,
    }
}

/// A server variant that built and took part ("" for the default variant),
/// with no start-up time recorded.
pub fn server(name: &str, variant: &str) -> ServerRecord {
    ServerRecord {
        server: name.into(),
        variant: variant.into(),
        manifest_toml: format!("name = \"{name}\"\nrun = \"./server\"\n"),
        build_status: BuildStatus::Ok,
        build_s: 1.0,
        artefact_bytes: None,
        ready_s: None,
        verify_json: None,
        excluded_reason: None,
        allocator: None,
        facts: ServerFacts::default(),
    }
}

/// The key of one repetition of a default variant's cell.
pub fn key(server: &str, scenario: &str, connections: u32, repetition: u32) -> CellKey {
    CellKey {
        server: server.into(),
        variant: String::new(),
        scenario: scenario.into(),
        connections,
        repetition,
    }
}

/// The engine's result (`LoadResult` as JSON) of a measurement at `rps`
/// whose latencies scale with `p99_ns`, over `duration_s`.
pub fn load_result(rps: f64, p99_ns: f64, duration_s: f64) -> String {
    let latency = serde_json::json!({"count": 1000, "min_ns": p99_ns / 20.0,
        "mean_ns": p99_ns / 4.0, "stdev_ns": p99_ns / 8.0, "p50_ns": p99_ns / 4.0,
        "p90_ns": p99_ns / 2.0, "p99_ns": p99_ns, "p999_ns": p99_ns * 2.0,
        "p9999_ns": p99_ns * 3.0, "max_ns": p99_ns * 4.0});
    serde_json::json!({
        "interrupted": false, "requests": (rps * duration_s) as u64,
        "errors": [0, 0, 0, 0, 0, 0, 0, 0, 0],
        "duration_s": duration_s, "rps": rps, "latency": latency, "connect": latency,
        "connects": 100, "bytes_read": 0, "bytes_written": 0, "workers": [],
        "client_cpu_s": 0.1, "process_cpu_s": 0.1, "configured_connections": 100,
        "achieved_concurrency": 100.0, "rate": null,
        "verdict": {"client_bound": false, "reasons": [], "busiest_cpu": 0.1,
                    "busiest_loop": 0.1, "in_flight": 1.0}
    })
    .to_string()
}

/// The same result with the engine's verdict that the client, not the
/// server, was the limit.
pub fn client_bound(load_result: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(load_result).expect("a load result");
    v["verdict"]["client_bound"] = true.into();
    v.to_string()
}

/// A good measurement of `key` at `rps` (p99 1 ms), nothing else recorded.
pub fn ok(key: CellKey, rps: f64) -> Measurement {
    Measurement {
        id: None,
        key,
        status: MeasurementStatus::Ok,
        failure: None,
        result_json: Some(load_result(rps, 1e6, 3.0)),
        histogram: None,
        client_bound: false,
        started_at: "2026-11-26T12:00:00Z".into(),
        duration_s: 3.0,
        samples: Vec::new(),
        noise: None,
        facts: None,
        server_cpu_s: None,
        network: None,
        warmup: None,
        server_output_cut: None,
    }
}

/// A failed measurement of `key`.
pub fn failed(key: CellKey, why: &str) -> Measurement {
    Measurement {
        status: MeasurementStatus::Failed,
        failure: Some(why.into()),
        result_json: None,
        duration_s: 0.5,
        ..ok(key, 0.0)
    }
}

/// One level of an idle cell: `connections` all open and held, `pss_bytes`
/// of proportional memory (RSS the same), 4 threads, a quiet CPU.
pub fn idle_level(connections: u32, pss_bytes: u64) -> IdleLevelFacts {
    IdleLevelFacts {
        connections,
        open: connections,
        failed: 0,
        closed_by_server: 0,
        open_s: 0.1,
        pss_bytes,
        rss_bytes: pss_bytes,
        threads: 4,
        cpu_cores_mean: 0.01,
        cpu_cores_peak: 0.05,
        heartbeats: 0,
        heartbeat_errors: 0,
        client_cpu_s: 0.0,
    }
}

/// One attack of a hostile cell: the good load's success rate and p99
/// (ms) beside it, against a baseline of 100% and 1 ms (see [`hostile`]);
/// no crash, recovered at once.
pub fn hostile_attack(attack: &str, success: f64, p99_ms: f64) -> crate::hostile::AttackFacts {
    let tried = 1000u64;
    let ok = (success * tried as f64).round() as u64;
    crate::hostile::AttackFacts {
        attack: attack.into(),
        restarted: false,
        baseline: None,
        during: crate::hostile::PhaseFigures {
            duration_s: 1.0,
            offered_per_s: 1000.0,
            achieved_per_s: ok as f64,
            requests: ok,
            errors: tried - ok,
            p50_ns: p99_ms * 0.3e6,
            p99_ns: p99_ms * 1e6,
            rss_peak_bytes: Some(20 << 20),
            server_cpu_s: Some(0.2),
            ..Default::default()
        },
        after: None,
        windows: Vec::new(),
        recovery_s: Some(0.0),
        crashed: None,
        stopped_accepting: false,
        attacker: None,
        attacker_failure: None,
    }
}

/// A hostile cell's facts at 1,000 requests/s whose baseline answered
/// everything with a p99 of 1 ms on 16 MiB and 0.1 s of CPU.
pub fn hostile(attacks: Vec<crate::hostile::AttackFacts>) -> crate::facts::Facts {
    crate::facts::Facts::Hostile(Box::new(crate::hostile::HostileFacts {
        rate_per_s: 1000.0,
        connections: 8,
        attack_connections: 200,
        attack_s: 3.0,
        after_s: 3.0,
        window_s: 0.5,
        margin: crate::hostile::RecoveryMargin::DEFAULT,
        baseline: crate::hostile::PhaseFigures {
            duration_s: 1.0,
            offered_per_s: 1000.0,
            achieved_per_s: 1000.0,
            requests: 1000,
            p50_ns: 0.3e6,
            p99_ns: 1e6,
            rss_peak_bytes: Some(16 << 20),
            server_cpu_s: Some(0.1),
            ..Default::default()
        },
        attacks,
    }))
}
