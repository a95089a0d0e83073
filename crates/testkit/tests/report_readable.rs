//! Issue 29: the report of a run with 30 servers is readable on a laptop.
//! The run is synthesised (no server is started, so the test takes seconds):
//! 30 servers of seven threading models, two tests at 100 connections, eight
//! rounds each (so every row is ranked over rounds, with its rankings
//! section), an A/A twin, a client-bound leader and another client-bound
//! cell, a noisy one and a server whose every repetition failed, warm-up curves for the start-up chart, and a
//! cell of every kind beyond throughput (idle, storm, short-lived, rate
//! sweep, fixed rate) for each server, and blank over TLS for the
//! protocols section. The page is opened in Chromium at
//! 1280 px, where the checker fails on a legend of more than 10 entries, a
//! ranked bar under 10 px tall, a bar whose server is not its axis label, a
//! ranking out of order, a curve whose lines are not each named at their
//! end (or whose names overlap), a table that scrolls sideways, and a page
//! wider than the window; a screenshot of each section is kept under the
//! test's output folder for a look.

mod common;

use std::path::Path;

use common::check_in_browser_with;
use netbench_engine::LatencySummary;
use netbench_records::fixtures;
use netbench_report::{build_report, write_html, Spectrum, SpectrumPoint};
use netbench_suite::kinds::{
    Facts, FixedRateFacts, IdleFacts, IdleLevelFacts, LineFit, ShortLivedFacts, StormFacts,
    SweepFacts, SweepStep,
};
use netbench_suite::store::*;

const SUITE: &str = r#"
servers = ["*"]
repetitions = 8
[[scenarios]]
name = "blank"
endpoint = "blank"
connections = [100]
[[scenarios]]
name = "work"
endpoint = "work"
connections = [100]
[[scenarios]]
name = "blank-tls"
endpoint = "blank"
protocol = "tls"
connections = [100]
[[scenarios]]
name = "idle"
kind = "idle"
endpoint = "blank"
connections = [100, 1000]
hold = "1s"
[[scenarios]]
name = "storm"
kind = "storm"
endpoint = "blank"
connections = [3000]
[[scenarios]]
name = "keepalive-off"
kind = "short-lived"
requests_per_connection = 1
endpoint = "blank"
connections = [100]
[[scenarios]]
name = "sweep"
kind = "rate-sweep"
endpoint = "blank"
connections = [100]
steps = [0.25, 0.5, 1.0]
slo_p99 = "10ms"
[[scenarios]]
name = "fixed-rate"
kind = "fixed-rate"
rate = 10000
endpoint = "work"
connections = [100]
"#;

const MODELS: [&str; 7] = [
    "thread-per-connection",
    "thread-pool",
    "event-loop",
    "event-loops-per-core",
    "work-stealing",
    "green-threads",
    "virtual-threads",
];

/// Thirty names as long as real ones (`java-jdk:nodelay` and the like).
fn names() -> Vec<String> {
    let langs = [
        "rust", "go", "java", "node", "python", "c", "kotlin", "haskell",
    ];
    let frameworks = ["hyper", "stdlib", "netty", "uvicorn", "actix", "undertow"];
    (0..30)
        .map(|i| {
            let name = format!(
                "{}-{}",
                langs[i % langs.len()],
                frameworks[i % frameworks.len()]
            );
            if i == 28 {
                // The first server named twice: its A/A twin.
                "rust-hyper0:twin".to_string()
            } else if i >= 24 {
                format!("{name}:tuned{i}")
            } else {
                format!("{name}{i}")
            }
        })
        .collect()
}

/// The engine's result at `rps` with a p99 of `p99_ms`, over 10 s.
fn load_result(rps: f64, p99_ms: f64, client_bound: bool) -> String {
    let r = fixtures::load_result(rps, p99_ms * 1e6, 10.0);
    if client_bound {
        fixtures::client_bound(&r)
    } else {
        r
    }
}

/// Two seconds of samples: `cores` busy, `rss` bytes at the peak.
fn samples(cores: f64, rss: u64) -> Vec<Sample> {
    (0..=20)
        .map(|i| {
            let t = f64::from(i) / 10.0;
            Sample {
                t_s: t,
                cpu_user_s: cores * t * 0.8,
                cpu_sys_s: cores * t * 0.2,
                rss_bytes: rss - 1000 * (20 - i as u64),
                pss_bytes: rss / 2,
                threads: 8,
                voluntary_ctxt: 0,
                involuntary_ctxt: 0,
                processes: 1,
            }
        })
        .collect()
}

fn warm_up(rps: f64) -> WarmUp {
    WarmUp {
        process: ProcessUse::Fresh,
        ready_s: Some(0.2),
        since_start_s: 0.3,
        window_s: 0.5,
        curve: (1..=20).map(|i| rps * (1.0 - 0.5 / f64::from(i))).collect(),
        settled_s: Some(10.0),
        capped: false,
        class: "warmed".into(),
        steady_from_s: Some(8.0),
    }
}

/// A good measurement of one of the kinds beyond throughput.
fn kind_measurement(
    label: &str,
    scenario: &str,
    connections: u32,
    facts: Facts,
    result_json: Option<String>,
) -> Measurement {
    let (server, variant) = label.split_once(':').unwrap_or((label, ""));
    let key = CellKey {
        variant: variant.into(),
        ..fixtures::key(server, scenario, connections, 1)
    };
    Measurement {
        result_json,
        duration_s: 1.0,
        facts: Some(facts),
        ..fixtures::ok(key, 0.0)
    }
}

/// Server `i`'s cells of each kind beyond throughput, its figures a step
/// apart from its neighbours' and not in column order, so every kind's
/// charts have 30 servers to rank.
fn kind_measurements(i: usize, label: &str) -> Vec<Measurement> {
    let f = 1.0 + ((i * 7) % 30) as f64 * 0.15;
    let level = |connections: u32| IdleLevelFacts {
        rss_bytes: 20 << 20,
        cpu_cores_mean: 0.002 * f,
        cpu_cores_peak: 0.01 * f,
        ..fixtures::idle_level(
            connections,
            (10 << 20) + u64::from(connections) * (2000.0 * f) as u64,
        )
    };
    let idle = Facts::Idle(IdleFacts {
        hold_s: 1.0,
        heartbeat_s: None,
        levels: vec![level(100), level(1000)],
        pss_fit: Some(LineFit {
            slope: 2000.0 * f,
            intercept: 10.0 * 1048576.0,
            r2: 0.99,
            points: 2,
        }),
    });
    let storm = Facts::Storm(StormFacts {
        clients: 3000,
        answered: 3000,
        refused: 0,
        connect_timeouts: 0,
        other_errors: 0,
        all_done_s: 0.4 * f,
        connects_per_s: 3000.0 / (0.4 * f),
        connect: LatencySummary {
            count: 3000,
            p50_ns: 2e5 * f,
            p99_ns: 3e6 * f,
            max_ns: 2e7 * f,
            ..LatencySummary::default()
        },
        somaxconn: Some(4096),
        listen_backlog: Some(1024),
        listen_overflows: Some(0),
        listen_drops: Some(0),
        client_bound: i == 3,
    });
    let peak = 100_000.0 / f;
    let step = |fraction: f64| SweepStep {
        fraction,
        offered_per_s: peak * fraction,
        achieved_per_s: peak * fraction.min(0.95),
        p50_ns: 2e5 * f / (1.05 - fraction.min(1.0)),
        p99_ns: 1e6 * f / (1.05 - fraction.min(1.0)),
        p999_ns: 4e6 * f,
        errors: 0,
        server_cpu_us_per_request: Some(10.0 * f),
        client_bound: false,
    };
    let steps = vec![step(0.25), step(0.5), step(1.0)];
    let sweep = Facts::RateSweep(SweepFacts {
        peak_rps: peak,
        slo_p99_ns: 1e7,
        knee_per_s: netbench_suite::kinds::knee(&steps, 1e7),
        steps,
    });
    let fixed = Facts::FixedRate(FixedRateFacts {
        rate_per_s: 10_000.0,
        offered_per_s: 10_000.0,
        achieved_per_s: 10_000.0,
        p50_ns: 2e5 * f,
        p99_ns: 1e6 * f,
        server_cpu_us_per_request: Some(12.0 * f),
    });
    let short = Facts::ShortLived(ShortLivedFacts {
        requests_per_connection: 1,
    });
    // Connection set-up costs some servers far more than others: their
    // share of keep-alive falls apart from their keep-alive rank.
    let short_rps = 200_000.0 / (1.0 + i as f64 * 1.3) / f;
    vec![
        kind_measurement(label, "idle", 1000, idle, None),
        kind_measurement(label, "storm", 3000, storm, None),
        kind_measurement(label, "sweep", 100, sweep, None),
        kind_measurement(label, "fixed-rate", 100, fixed, None),
        kind_measurement(
            label,
            "keepalive-off",
            100,
            short,
            Some(load_result(short_rps, 2.0, false)),
        ),
    ]
}

fn run() -> RunDetail {
    let names = names();
    let servers = names
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let (server, variant) = label.split_once(':').unwrap_or((label, ""));
            let manifest = format!(
                "name = \"{server}\"\nlanguage = \"Rust\"\nframework = \"test\"\nmodel = \"{}\"\n{}",
                MODELS[i % MODELS.len()],
                if variant.is_empty() {
                    String::new()
                } else {
                    format!("[[variants]]\nname = \"{variant}\"\n")
                }
            );
            ServerRecord {
                server: server.into(),
                variant: variant.into(),
                build_status: BuildStatus::Ok,
                build_s: 1.0,
                artefact_bytes: Some(1 << 20),
                ready_s: Some(0.2),
                verify_json: None,
                excluded_reason: None,
                allocator: None,
                facts: netbench_suite::records_of::server_facts(&manifest, variant),
                manifest_toml: manifest,
            }
        })
        .collect();
    let mut measurements = Vec::new();
    for (i, label) in names.iter().enumerate() {
        let (server, variant) = label.split_once(':').unwrap_or((label, ""));
        // TLS costs each server between 10% and 55% of its blank figure,
        // not in column order, so the protocols chart has 29 to rank.
        let twin_of = if i == 28 { 0 } else { i };
        let tls = 0.45 + ((twin_of * 11) % 30) as f64 * 0.015;
        for (test, scale) in [("blank", 1.0), ("work", 0.3), ("blank-tls", tls)] {
            for repetition in 1..=8u32 {
                // Spread over 40x with a few percent of noise (the slowest
                // few under 5% apart, so they share a tier); server 7
                // noisy, servers 0 (the leader) and 9 client-bound on
                // blank, server 28 server 0's twin, server 29 failing every
                // repetition; round 4 at half speed for everyone.
                let at = if i == 28 { 0 } else { i };
                let base = 200_000.0 * scale / (1.0 + f64::from(at as u32) * 1.3);
                let speed = if repetition == 4 { 0.5 } else { 1.0 };
                let jitter = 1.0 + 0.01 * (((repetition as usize + i) % 5) as f64 - 2.0);
                let rps = speed
                    * if i == 7 {
                        base * [0.5, 1.0, 1.6][(repetition as usize - 1) % 3]
                    } else {
                        base * jitter
                    };
                let failed = i == 29;
                measurements.push(Measurement {
                    id: None,
                    key: CellKey {
                        server: server.into(),
                        variant: variant.into(),
                        scenario: test.into(),
                        connections: 100,
                        repetition,
                    },
                    status: if failed {
                        MeasurementStatus::Failed
                    } else {
                        MeasurementStatus::Ok
                    },
                    failure: failed.then(|| "the server exited".to_string()),
                    result_json: (!failed).then(|| {
                        load_result(
                            rps,
                            1.0 + i as f64 * 0.4,
                            (i == 0 || i == 9) && test == "blank",
                        )
                    }),
                    histogram: None,
                    client_bound: (i == 0 || i == 9) && test == "blank",
                    started_at: String::new(),
                    duration_s: 10.0,
                    samples: if failed {
                        Vec::new()
                    } else {
                        samples(0.5 + (i % 5) as f64 * 0.35, (20 + i as u64 * 7) << 20)
                    },
                    noise: None,
                    facts: None,
                    server_cpu_s: None,
                    network: None,
                    warmup: (repetition == 1 && !failed).then(|| warm_up(rps)),
                    server_output_cut: None,
                });
            }
        }
    }
    for (i, label) in names.iter().enumerate().filter(|(i, _)| *i != 29) {
        measurements.extend(kind_measurements(i, label));
    }
    RunDetail {
        events: Vec::new(),
        id: 1,
        suite: "standard".into(),
        suite_toml: SUITE.into(),
        command: "netbench run".into(),
        started_at: "2026-11-26T00:00:00Z".into(),
        finished_at: None,
        status: RunStatus::Complete,
        environment: serde_json::json!({}),
        placement: serde_json::json!({}),
        repetitions: None,
        work_seed: None,
        adaptive: None,
        scenarios: netbench_suite::records_of::scenario_records_of_text("standard", SUITE),
        servers,
        measurements,
    }
}

#[test]
fn issue29_thirty_servers_are_readable_at_1280_px() {
    let mut report = build_report(&run());
    assert_eq!(report.columns.len(), 30);
    // The stored run has no histograms: each cell gets a spectrum from its
    // p99, so the spectrum charts have 29 lines to draw.
    for c in &mut report.cells {
        if let Some(p99) = c.stats.p99_ns {
            let points = [(0.5, 0.2), (0.9, 0.5), (0.99, 1.0), (0.999, 2.0)]
                .iter()
                .map(|&(q, f)| SpectrumPoint {
                    quantile: q,
                    nines: -(1.0_f64 - q).log10(),
                    ns: p99 * f,
                })
                .collect();
            c.latency = Some(Spectrum {
                count: 3000,
                points,
                max_ns: p99 * 4.0,
            });
        }
    }
    let noisy = report.cell("blank", 100, &names()[7]).unwrap();
    assert!(noisy.flags.contains('~'), "{noisy:?}");
    let bound = report.cell("blank", 100, &names()[9]).unwrap();
    assert!(bound.flags.contains('C'), "{bound:?}");
    // Issue 43: every row ranked over its rounds; the blank row's leader
    // client-bound and said so; the twins judged.
    let blank = report.row("blank", 100).unwrap();
    assert_eq!(blank.method, netbench_report::RowMethod::Rounds);
    assert_eq!(blank.client_bound_leaders, [names()[0].clone()]);
    assert_eq!(blank.ranked_by, ["fixed-rate c=100"]);
    assert_eq!(blank.twins.len(), 1);
    assert_eq!(blank.twins[0].tied, Some(true), "{:?}", blank.twins);
    assert!(report.precision.line().is_some());
    assert_eq!(
        (report.precision.twin_rows, report.precision.twins_tied),
        (3, 3)
    );
    // The throughput rows of eight rounds rank every cell; the kinds' rows
    // (one repetition) keep the older rules.
    assert!(report
        .cells
        .iter()
        .filter(
            |c| c.stats.rps.is_some() && ["blank", "work", "blank-tls"].contains(&c.test.as_str())
        )
        .all(|c| c.stats.rank.is_some()));

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-readable");
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("report.html");
    write_html(&mut std::fs::File::create(&html).unwrap(), &report).unwrap();
    let found = check_in_browser_with(
        &html,
        &dir.join("report.png"),
        &[
            "--width".into(),
            "1280".into(),
            "--max-height".into(),
            "2400".into(),
            "--sections".into(),
            dir.display().to_string(),
        ],
    );
    let readable = &found["readable"];
    // Per test at 100 connections: throughput, p99, CPU, requests per
    // CPU-second and memory ranked (the short-lived test has no samples:
    // throughput and p99 alone); then the kinds' figures, ranked the same
    // way: idle memory per connection, idle CPU at each of two levels,
    // storm time and connect latency, CPU per request at the fixed rate
    // and the short-lived share of keep-alive; and TLS's share of each
    // server's HTTP/1.1 (issue 32). 29 servers in each.
    let bars = readable["bars"].as_array().unwrap();
    let count = |measure: &str| bars.iter().filter(|b| b["measure"] == measure).count();
    for (measure, n) in [
        ("throughput", 4),
        ("latency", 4),
        ("cpu", 3),
        ("efficiency", 3),
        ("memory", 3),
        ("idle-cpu", 2),
        ("idle-memory", 1),
        ("storm-done", 1),
        ("storm-connect", 1),
        ("fixed-cpu", 1),
        ("short-kept", 1),
        ("protocol-vs-h1", 1),
    ] {
        assert_eq!(count(measure), n, "{measure}: {readable}");
    }
    assert_eq!(bars.len(), 25, "{readable}");
    for b in bars {
        assert_eq!(b["servers"].as_array().unwrap().len(), 29, "{b}");
        let thinnest = b["heights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        assert!(thinnest >= 10.0, "{b}");
    }
    // Every chart with a legend names at most the seven models; the
    // spectrum's and the start-up curves' among them.
    let legends = readable["legends"].as_array().unwrap();
    assert!(
        legends.iter().all(|l| l["entries"].as_u64().unwrap() <= 7),
        "{readable}"
    );
    for kind in ["latency", "startup"] {
        let curves = found["charts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == kind)
            .count();
        assert!(curves >= 1, "no {kind} chart: {found}");
    }
    // Every curve (latency spectra, warm-up, idle memory, rate sweep) names
    // each of its lines at its end, the spectra's 29 among them; the
    // checker fails on a line without a name or names on top of each other.
    let curves = readable["curves"].as_array().unwrap();
    for kind in ["latency", "startup", "idle-pss", "sweep"] {
        assert!(
            curves
                .iter()
                .any(|c| c["chart"].as_str().unwrap().starts_with(kind)),
            "no {kind} curves: {readable}"
        );
    }
    for c in curves {
        assert_eq!(c["labels"], c["lines"], "{c}");
        assert_eq!(c["overlaps"], 0, "{c}");
        if c["chart"].as_str().unwrap().starts_with("latency") {
            assert_eq!(c["lines"], 29, "{c}");
        }
    }
    // No table scrolls inside itself at 1280 px: the servers table of 30
    // rows among them (issue 29).
    assert_eq!(
        readable["scrollingTables"].as_array().map(Vec::len),
        Some(0),
        "{readable}"
    );
    assert!(readable["scrollWidth"].as_u64() <= readable["innerWidth"].as_u64());
    for section in [
        "summary",
        "throughput",
        "latency",
        "resources",
        "startup",
        "idle",
        "storm",
        "rate-sweep",
        "fixed-rate",
        "short-lived",
        "protocols",
        "servers",
    ] {
        let png = dir.join(format!("report-{section}.png"));
        assert!(std::fs::metadata(&png).is_ok(), "{}", png.display());
    }
    // The summary: a server per row, best first on the first test.
    let page = std::fs::read_to_string(&html).unwrap();
    let first_row = page.split("<tr data-row=\"").nth(1).unwrap();
    assert!(
        first_row.starts_with(&format!("{}\"", names()[0])),
        "{first_row}"
    );
    assert_eq!(page.matches("<tr data-row=\"").count(), 30);
}
