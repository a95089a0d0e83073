//! The report JSON of a run with every scenario kind (idle, storm,
//! short-lived, rate-sweep, fixed-rate, pipelined, and a failed idle cell)
//! against the schema checked into the repository, and a schema that
//! refuses a kind row it does not know.

use netbench_engine::LatencySummary;
use netbench_records::facts::*;
use netbench_records::*;
use netbench_records::{fixtures, Bandwidth, NetPlacement, NetworkPath, ScenarioRecord};
use netbench_report::build_report;
use serde_json::Value;

fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/report.v2.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema itself is valid")
}

fn measurement(scenario: &str, connections: u32, facts: Option<Facts>, ok: bool) -> Measurement {
    let idle = matches!(facts, Some(Facts::Idle(_)));
    let key = fixtures::key("s", scenario, connections, 1);
    Measurement {
        result_json: ok.then(|| {
            if idle {
                "{}".to_string()
            } else {
                fixtures::load_result(1000.0, 1.0, 1.0)
            }
        }),
        facts,
        server_cpu_s: Some(0.5),
        // Over a shaped veth pair, so the schema sees every field of a path.
        network: ok.then(|| NetworkPath {
            placement: NetPlacement::Netns,
            server_addr: "10.213.0.2".parse().unwrap(),
            client_addr: "10.213.0.1".parse().unwrap(),
            mtu: 1500,
            bandwidth: Some(Bandwidth {
                bits_per_s: 1_000_000_000,
            }),
            burst_bytes: Some(125_000),
        }),
        warmup: None,
        ..if ok {
            fixtures::ok(key, 1000.0)
        } else {
            fixtures::failed(key, "crashed")
        }
    }
}

/// A fresh process's warm phase: first answer at 0.3 s, 9 s of windows
/// from 0.4 s, a window without a figure (NaN, written as null) among them.
fn warm_up() -> WarmUp {
    let mut curve: Vec<f64> = (1..=18).map(|i| 100.0 * f64::from(i)).collect();
    curve[3] = f64::NAN;
    WarmUp {
        process: ProcessUse::Fresh,
        ready_s: Some(0.3),
        since_start_s: 0.4,
        window_s: 0.5,
        curve,
        settled_s: Some(11.0),
        capped: false,
        class: "warmed".into(),
        steady_from_s: Some(9.5),
    }
}

/// The run's scenarios: (name, kind, connections), in the suite's order.
const SCENARIOS: [(&str, &str, &[u32]); 9] = [
    ("blank", "throughput", &[10]),
    ("held", "idle", &[10, 100]),
    ("held-too", "idle", &[10, 100]),
    ("burst", "storm", &[100]),
    ("k1", "short-lived", &[10]),
    ("sweep", "rate-sweep", &[10]),
    ("fixed", "fixed-rate", &[10]),
    ("piped", "pipelined", &[10]),
    ("abuse", "hostile", &[10]),
];

fn scenarios() -> Vec<ScenarioRecord> {
    SCENARIOS
        .iter()
        .enumerate()
        .map(|(i, (name, kind, connections))| ScenarioRecord {
            kind: kind.to_string(),
            requests_per_connection: (*kind == "short-lived").then_some(1),
            ..fixtures::scenario(i as u32, name, connections)
        })
        .collect()
}

fn run() -> RunDetail {
    let level = |connections: u32| IdleLevelFacts {
        rss_bytes: 2_000_000,
        cpu_cores_peak: 0.02,
        ..fixtures::idle_level(connections, 1_000_000 + u64::from(connections) * 2000)
    };
    let idle = Facts::Idle(IdleFacts {
        hold_s: 1.0,
        heartbeat_s: None,
        levels: vec![level(10), level(100)],
        pss_fit: fit_line(&[(10.0, 1_020_000.0), (100.0, 1_200_000.0)]),
    });
    let storm = Facts::Storm(StormFacts {
        clients: 100,
        answered: 100,
        refused: 0,
        connect_timeouts: 0,
        other_errors: 0,
        all_done_s: 0.2,
        connects_per_s: 500.0,
        connect: LatencySummary::default(),
        somaxconn: Some(4096),
        listen_backlog: None,
        listen_overflows: Some(0),
        listen_drops: None,
        client_bound: false,
    });
    // Over the 10 ms SLO: the sweep has no knee.
    let step = SweepStep {
        fraction: 0.5,
        offered_per_s: 500.0,
        achieved_per_s: 500.0,
        p50_ns: 1e5,
        p99_ns: 2e7,
        p999_ns: 4e7,
        errors: 0,
        server_cpu_us_per_request: None,
        client_bound: false,
    };
    let sweep = Facts::RateSweep(SweepFacts {
        peak_rps: 1000.0,
        slo_p99_ns: 1e7,
        steps: vec![step],
        knee_per_s: None,
    });
    let fixed = Facts::FixedRate(FixedRateFacts {
        rate_per_s: 500.0,
        offered_per_s: 500.0,
        achieved_per_s: 499.0,
        p50_ns: 1e5,
        p99_ns: 1e6,
        server_cpu_us_per_request: Some(30.0),
    });
    let short = Facts::ShortLived(ShortLivedFacts {
        requests_per_connection: 1,
    });
    let piped = Facts::Pipelined(PipelinedFacts { depth: 16 });
    RunDetail {
        events: Vec::new(),
        scenarios: scenarios(),
        servers: vec![fixtures::server("s", "")],
        measurements: vec![
            Measurement {
                warmup: Some(warm_up()),
                ..measurement("blank", 10, None, true)
            },
            measurement("held", 100, Some(idle), true),
            measurement("held-too", 100, None, false),
            measurement("burst", 100, Some(storm), true),
            measurement("k1", 10, Some(short), true),
            measurement("sweep", 10, Some(sweep), true),
            measurement("fixed", 10, Some(fixed), true),
            measurement("piped", 10, Some(piped), true),
            measurement("abuse", 10, Some(hostile()), true),
        ],
        ..fixtures::run(1, "kinds")
    }
}

/// A hostile cell (issue 33): one attack that held, one that crashed the
/// server.
fn hostile() -> Facts {
    let mut crash = fixtures::hostile_attack("malformed", 0.2, 40.0);
    crash.crashed = Some("exit status: 3".into());
    crash.recovery_s = None;
    fixtures::hostile(vec![fixtures::hostile_attack("slowloris", 1.0, 1.1), crash])
}

#[test]
fn a_report_with_every_kind_matches_the_schema() {
    let json = serde_json::to_value(build_report(&run())).unwrap();
    let v = validator();
    let problems: Vec<String> = v
        .iter_errors(&json)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}\n{json:#}");
    let kinds = &json["kinds"];
    for key in ["storm", "rate_sweep", "fixed_rate", "short_lived"] {
        assert_eq!(
            kinds[key].as_array().map(Vec::len),
            Some(1),
            "{key}: {kinds:#}"
        );
    }
    // The failed idle cell is a row of its own kind, not a failed cell of
    // the throughput table.
    assert_eq!(kinds["idle"][1]["failure"], "crashed");
    assert_eq!(kinds["idle"][1]["failed"], 1);
    // 2,000 bytes per connection, from the two levels.
    let slope = kinds["idle"][0]["bytes_per_connection"].as_f64().unwrap();
    assert!((slope - 2000.0).abs() < 1e-6, "{slope}");
    assert_eq!(kinds["rate_sweep"][0]["knee_per_s"], Value::Null);
    // The throughput cells: keep-alive, short-lived and pipelined only.
    let tests: Vec<&str> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["test"].as_str().unwrap())
        .collect();
    assert_eq!(tests, ["blank", "k1", "piped"]);
    // Each throughput cell alone in its row: tier 1.
    assert_eq!(json["cells"][0]["tier"], 1);

    // Issue 28: the warm phase per repetition, the start-up per server.
    let blank = &json["repetitions"][0];
    assert_eq!(blank["steady_state"]["class"], "warmed");
    assert_eq!(blank["steady_state"]["curve"][3], Value::Null);
    assert!(json["repetitions"][1].get("steady_state").is_none());
    let startup = &json["startup"];
    assert_eq!(startup["process"], "fresh");
    assert_eq!(startup["servers"][0]["test"], "blank");
    assert_eq!(startup["servers"][0]["first_10s_rps"], Value::Null);
    let covers = startup["servers"][0]["curve_covers_s"].as_f64().unwrap();
    assert!((covers - 9.1).abs() < 1e-9, "{covers}");
    // The first second after the answer (0.3–1.3 s): window 0 (0.4–0.9 s)
    // whole and 0.4 s of window 1 (0.9–1.4 s); nothing before 0.4 s.
    let first = startup["servers"][0]["first_1s_rps"].as_f64().unwrap();
    assert!(
        (first - (100.0 * 0.5 + 200.0 * 0.4) / 0.9).abs() < 1e-9,
        "{first}"
    );
    assert_eq!(startup["curves"][0]["repetition"], 1);
    let mut bad = json.clone();
    bad["repetitions"][0]["steady_state"]["class"] = "lukewarm".into();
    assert!(!v.is_valid(&bad));
    let mut bad = json.clone();
    bad["startup"]["process"] = "recycled".into();
    assert!(!v.is_valid(&bad));
    let mut bad = json.clone();
    bad["cells"][0]["tier"] = 0.into();
    assert!(!v.is_valid(&bad));

    // Issue 33: the hostile table, and a cell field it does not know refused.
    let hostile = &json["hostile"][0];
    assert_eq!(
        hostile["attacks"],
        serde_json::json!(["slowloris", "malformed"])
    );
    assert_eq!(hostile["rows"][0]["broken"], 1);
    assert_eq!(hostile["rows"][0]["conformance"], Value::Null);
    let mut bad = json.clone();
    bad["hostile"][0]["rows"][0]["cells"][0]["surprise"] = serde_json::json!(1);
    assert!(!v.is_valid(&bad));

    // A row of a kind the schema does not know is refused.
    let mut bad = json.clone();
    bad["kinds"]["quantum"] = serde_json::json!([]);
    assert!(!v.is_valid(&bad));
    let mut bad = json;
    bad["kinds"]["idle"][0]["surprise"] = serde_json::json!(1);
    assert!(!v.is_valid(&bad));
}

#[test]
fn the_html_report_has_a_section_and_charts_per_kind() {
    let report = build_report(&run());
    let mut html = Vec::new();
    netbench_report::write_html(&mut html, &report).unwrap();
    let html = String::from_utf8(html).unwrap();
    // Kept for a look in a browser (crates/testkit/browser/check.mjs).
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("kinds-report.html");
    std::fs::write(&out, &html).unwrap();
    for id in ["idle", "storm", "rate-sweep", "fixed-rate", "short-lived"] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    // The curves, and the figures at one level ranked (issue 29): a
    // ranked chart's canvas is named by its measure, test and level.
    for chart in ["idle-pss", "sweep"] {
        assert!(html.contains(&format!("data-chart=\"{chart}\"")), "{chart}");
    }
    for ranked in [
        "idle-memory-",
        "idle-cpu-",
        "storm-time-",
        "fixed-cpu-",
        "short-lived-",
    ] {
        assert!(
            html.contains(&format!("<canvas id=\"{ranked}")),
            "no ranked {ranked} chart"
        );
    }
    // The storm's connect latency was all zero: no chart of nothing.
    assert!(!html.contains("<canvas id=\"storm-connect-"));
    assert!(html.contains("2.0 KiB/conn (r² 1.00, 2 levels)"));
    assert!(html.contains("none (p99 ≤ 10.00ms)"));
    let mut md = Vec::new();
    netbench_report::write_markdown(&mut md, &report).unwrap();
    let md = String::from_utf8(md).unwrap();
    for title in [
        "#### Idle connections",
        "#### Connection storm",
        "#### Latency against offered load",
        "#### Server CPU at a fixed rate",
        "#### Short-lived connections",
    ] {
        assert!(md.contains(title), "{title}\n{md}");
    }
    assert!(md.contains("rows: P pipelined"), "{md}");
}

/// Issue 32: a run over HTTP/1.1, TLS, h2c and gRPC, whose report carries
/// each test's protocol and streams and the protocols section's rows.
#[test]
fn a_report_with_protocols_matches_the_schema() {
    let scenario =
        |pos: u32, name: &str, endpoint: &str, protocol: Protocol, streams: u32| ScenarioRecord {
            endpoint: endpoint.into(),
            protocol,
            streams,
            ..fixtures::scenario(pos, name, &[100])
        };
    let reps = |test: &str, rps: [f64; 2]| {
        rps.into_iter()
            .enumerate()
            .map(|(i, v)| fixtures::ok(fixtures::key("s", test, 100, i as u32 + 1), v))
            .collect::<Vec<_>>()
    };
    let run = RunDetail {
        events: Vec::new(),
        scenarios: vec![
            scenario(0, "blank-h1", "blank", Protocol::H1, 1),
            scenario(1, "blank-tls", "blank", Protocol::Tls, 1),
            scenario(2, "work-h1", "work", Protocol::H1, 1),
            scenario(3, "work-h2c", "work", Protocol::H2c, 10),
            scenario(4, "work-grpc", "work", Protocol::Grpc, 10),
        ],
        servers: vec![fixtures::server("s", "")],
        measurements: [
            reps("blank-h1", [1000.0, 1020.0]),
            reps("blank-tls", [800.0, 810.0]),
            reps("work-h1", [500.0, 510.0]),
            reps("work-h2c", [600.0, 590.0]),
            // One good repetition: a ratio without an interval (null).
            reps("work-grpc", [400.0, 0.0])[..1].to_vec(),
        ]
        .concat(),
        ..fixtures::run(1, "protocols")
    };
    let json = serde_json::to_value(build_report(&run)).unwrap();
    let v = validator();
    let problems: Vec<String> = v
        .iter_errors(&json)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}\n{json:#}");
    let tests: Vec<(&str, u64)> = json["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["protocol"].as_str().unwrap(),
                t["streams"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tests,
        [("h1", 1), ("tls", 1), ("h1", 1), ("h2c", 10), ("grpc", 10)]
    );
    let rows: Vec<(&str, &str)> = json["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["test"].as_str().unwrap(),
                r["baseline_test"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("blank-tls", "blank-h1"),
            ("work-h2c", "work-h1"),
            ("work-grpc", "work-h1"),
            ("work-grpc", "work-h2c")
        ]
    );
    assert_eq!(json["protocols"][3]["change_ci95"], Value::Null);
    assert_eq!(
        json["protocols"][0]["change_ci95"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let mut bad = json.clone();
    bad["tests"][1]["protocol"] = "h3".into();
    assert!(!v.is_valid(&bad));
    let mut bad = json.clone();
    bad["protocols"][0]["baseline_protocol"] = "tls".into();
    assert!(!v.is_valid(&bad));
    let mut bad = json;
    bad["protocols"][0]["surprise"] = 1.into();
    assert!(!v.is_valid(&bad));

    // The HTML has the section, the Markdown its table, the CSV the
    // protocol of every row and the section's figures.
    let report = build_report(&run);
    let mut html = Vec::new();
    netbench_report::write_html(&mut html, &report).unwrap();
    let html = String::from_utf8(html).unwrap();
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("protocols-report.html");
    std::fs::write(&out, &html).unwrap();
    assert!(html.contains("<section id=\"protocols\">"));
    assert!(html.contains("<a href=\"#protocols\">Protocols</a>"));
    let mut md = Vec::new();
    netbench_report::write_markdown(&mut md, &report).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("#### Protocols"), "{md}");
    assert!(md.contains("| server (work at 100 conn.) |"), "{md}");
    let mut csv = Vec::new();
    netbench_report::write_csv(&mut csv, &report).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.starts_with("run,suite,test,protocol,connections,"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("1,protocols,work-grpc,grpc,100,s,1,requests_per_s,")),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l == "1,protocols,work-grpc,grpc,100,s,,vs_h2c_told_apart,bool,0"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("1,protocols,blank-tls,tls,100,s,,vs_h1_ratio,ratio,0.79")),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l
                .starts_with("1,protocols,blank-tls,tls,100,s,,vs_h1_change_ci95_low,fraction,-")),
        "{csv}"
    );
    assert!(csv.lines().all(|l| l.split(',').count() == 10), "{csv}");
}

/// Issue 43: a run of rounds (eight, a failed cell in one) with an A/A
/// twin, a client-bound leader and a fixed-rate row over rounds: every
/// figure over rounds (intervals, ranks, paired ratios, twins, the
/// precision line) matches the schema, and the views carry them.
#[test]
fn a_report_over_rounds_matches_the_schema() {
    let suite = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [100]\n\
        [[scenarios]]\nname = \"fixed\"\nendpoint = \"blank\"\nconnections = [10]\n\
        kind = \"fixed-rate\"\nrate = 5000\n";
    let mut measurements = Vec::new();
    for round in 1..=8u32 {
        let speed = if round == 5 { 0.5 } else { 1.0 };
        let wobble = 1.0 + 0.003 * f64::from(round % 3);
        for (server, variant, rps, bound) in [
            ("a", "", 30_000.0, true),
            ("b", "", 20_000.0, false),
            ("b", "twin", 20_000.0, false),
        ] {
            let mut key = fixtures::key(server, "blank", 100, round);
            key.variant = variant.into();
            let value = rps
                * speed
                * if variant.is_empty() {
                    wobble
                } else {
                    1.0 / wobble
                };
            let mut m = fixtures::ok(key.clone(), value);
            if bound {
                m.result_json = Some(fixtures::client_bound(m.result_json.as_deref().unwrap()));
            }
            if server == "b" && variant.is_empty() && round == 2 {
                m = fixtures::failed(key, "crashed");
            }
            measurements.push(m);
            let mut key = fixtures::key(server, "fixed", 10, round);
            key.variant = variant.into();
            let cpu = if server == "a" { 20.0 } else { 30.0 } * speed * wobble;
            measurements.push(Measurement {
                facts: Some(Facts::FixedRate(FixedRateFacts {
                    rate_per_s: 5000.0,
                    offered_per_s: 5000.0,
                    achieved_per_s: 5000.0,
                    p50_ns: 1e5,
                    p99_ns: 1e6 * wobble,
                    server_cpu_us_per_request: Some(cpu),
                })),
                ..fixtures::ok(key, 5000.0)
            });
        }
    }
    let run = RunDetail {
        events: Vec::new(),
        scenarios: netbench_suite_free_scenarios(suite),
        servers: vec![
            fixtures::server("a", ""),
            fixtures::server("b", ""),
            fixtures::server("b", "twin"),
        ],
        measurements,
        ..fixtures::run(1, "rounds")
    };
    let report = build_report(&run);
    let json = serde_json::to_value(&report).unwrap();
    let v = validator();
    let errors: Vec<String> = v
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let row = &json["rows"][0];
    assert_eq!(row["method"], "rounds");
    assert_eq!(row["order"][0], "a");
    assert_eq!(row["twins"][0]["tied"], true, "{row}");
    assert_eq!(row["client_bound_leaders"], serde_json::json!(["a"]));
    assert_eq!(row["ranked_by"], serde_json::json!(["fixed c=10"]));
    assert!(json["precision"]["cells"].as_u64().unwrap() == 3);
    let fixed = &json["kinds"]["fixed_rate"][0];
    assert_eq!(fixed["server"], "a");
    assert_eq!(fixed["rank"]["ci95"], serde_json::json!([1, 1]));

    let mut text = Vec::new();
    netbench_report::write_run_table(&mut text, &report).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("note: blank c=100: the leaders (a) are client-bound (C)"),
        "{text}"
    );
    assert!(
        text.contains("server CPU per request at a fixed rate ranks them: fixed c=10"),
        "{text}"
    );
    assert!(text.contains("A/A twins tied in 1 of 1 rows"), "{text}");
    assert!(text.contains("#### Rankings over rounds"), "{text}");
    let mut md = Vec::new();
    netbench_report::write_markdown(&mut md, &report).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("| rank | server | requests/s | relative | over next | told apart | marks |"),
        "{md}"
    );
    let mut csv = Vec::new();
    netbench_report::write_csv(&mut csv, &report).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    for metric in [
        "relative_ci95_low",
        "rank_ci95_high",
        "twin_ratio",
        "twin_tied,bool,1",
        "fixed_rank,rank,1",
        "fixed_cpu_per_request_median_ci95_low",
    ] {
        assert!(csv.contains(metric), "{metric}: {csv}");
    }
    let mut html = Vec::new();
    netbench_report::write_html(&mut html, &report).unwrap();
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("<section id=\"ranking\"><h2>Rankings over rounds</h2>"));
    assert!(html.contains("<p class=\"note client-bound\">blank c=100: the leaders (a)"));
    assert!(html.contains("data-precision"));
}

/// The scenario records of a suite text, read by hand (the report's tests
/// do not depend on the suite crate).
fn netbench_suite_free_scenarios(suite: &str) -> Vec<ScenarioRecord> {
    let table: toml_like::Table = toml_like::parse(suite);
    table
        .into_iter()
        .enumerate()
        .map(|(i, (name, kind, connections))| ScenarioRecord {
            kind,
            ..fixtures::scenario(i as u32, &name, &connections)
        })
        .collect()
}

/// Just enough of TOML for the suite above.
mod toml_like {
    pub type Table = Vec<(String, String, Vec<u32>)>;
    pub fn parse(text: &str) -> Table {
        let v: toml::Table = toml::from_str(text).unwrap();
        v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let s = s.as_table().unwrap();
                (
                    s["name"].as_str().unwrap().to_string(),
                    s.get("kind")
                        .and_then(|k| k.as_str())
                        .unwrap_or("throughput")
                        .to_string(),
                    s["connections"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c.as_integer().unwrap() as u32)
                        .collect(),
                )
            })
            .collect()
    }
}
