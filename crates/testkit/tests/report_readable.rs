//! Issue 29: the report of a run with 30 servers is readable on a laptop.
//! The run is synthesised (no server is started, so the test takes seconds):
//! 30 servers of seven threading models, two tests at 100 connections, three
//! repetitions each, a client-bound cell, a noisy one and a server whose
//! every repetition failed, warm-up curves for the start-up chart. The page
//! is opened in Chromium at 1280 px, where the checker fails on a legend of
//! more than 10 entries, a ranked bar under 10 px tall, a bar whose server
//! is not its axis label, a ranking out of order, and a page wider than the
//! window; a screenshot of each section is kept under the test's output
//! folder for a look.

mod common;

use std::path::Path;

use common::check_in_browser_with;
use netbench_report::{build_report, write_html, Spectrum, SpectrumPoint};
use netbench_suite::store::*;

const SUITE: &str = r#"
servers = ["*"]
repetitions = 3
[[scenarios]]
name = "blank"
endpoint = "blank"
connections = [100]
[[scenarios]]
name = "work"
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
            if i >= 24 {
                format!("{name}:tuned{i}")
            } else {
                format!("{name}{i}")
            }
        })
        .collect()
}

fn load_result(rps: f64, p99_ms: f64, client_bound: bool) -> String {
    let ns = p99_ms * 1e6;
    let latency = serde_json::json!({"count": 1000, "min_ns": ns / 20.0, "mean_ns": ns / 4.0,
        "stdev_ns": ns / 8.0, "p50_ns": ns / 5.0, "p90_ns": ns / 2.0, "p99_ns": ns,
        "p999_ns": ns * 2.0, "p9999_ns": ns * 3.0, "max_ns": ns * 4.0});
    serde_json::json!({
        "interrupted": false, "requests": (rps * 10.0) as u64,
        "errors": [0, 0, 0, 0, 0, 0, 0, 0, 0],
        "duration_s": 10.0, "rps": rps, "latency": latency, "connect": latency,
        "connects": 100, "bytes_read": 0, "bytes_written": 0, "workers": [],
        "client_cpu_s": 1.0, "process_cpu_s": 1.0, "configured_connections": 100,
        "achieved_concurrency": 100.0, "rate": null,
        "verdict": {"client_bound": client_bound, "reasons": [], "busiest_cpu": 0.5,
                    "busiest_loop": 0.5, "in_flight": 100.0}
    })
    .to_string()
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
        for (test, scale) in [("blank", 1.0), ("work", 0.3)] {
            for repetition in 1..=3u32 {
                // Spread over 40x with a few percent of noise (the slowest
                // few under 5% apart, so they share a tier); server 7
                // noisy, server 9 client-bound on blank, server 29 failing
                // every repetition.
                let base = 200_000.0 * scale / (1.0 + f64::from(i as u32) * 1.3);
                let jitter = 1.0 + 0.02 * (f64::from(repetition) - 2.0);
                let rps = if i == 7 {
                    base * [0.5, 1.0, 1.6][repetition as usize - 1]
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
                    result_json: (!failed)
                        .then(|| load_result(rps, 1.0 + i as f64 * 0.4, i == 9 && test == "blank")),
                    histogram: None,
                    client_bound: i == 9 && test == "blank",
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
                });
            }
        }
    }
    RunDetail {
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
    // CPU-second and memory ranked, 29 servers with figures in each.
    let bars = readable["bars"].as_array().unwrap();
    assert_eq!(bars.len(), 2 * 5, "{readable}");
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
    assert!(readable["scrollWidth"].as_u64() <= readable["innerWidth"].as_u64());
    for section in ["summary", "throughput", "latency", "resources", "startup"] {
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
