//! The protocols section's tests: which cells are set against which, the
//! ratio, the interval and whether it tells them apart, on synthetic runs
//! of the scenarios suites/protocols.toml has.

use super::*;
use crate::model::build_report;
use netbench_records::{fixtures, Measurement, RunDetail};

/// blank and work over h1, TLS, h2 (1 and 100 streams), h2c and gRPC,
/// as suites/protocols.toml has them, at 100 connections.
fn scenarios() -> Vec<ScenarioRecord> {
    let of = |pos: u32, name: &str, endpoint: &str, p: Protocol, streams: u32| ScenarioRecord {
        endpoint: endpoint.into(),
        protocol: p,
        streams,
        ..fixtures::scenario(pos, name, &[100])
    };
    vec![
        of(0, "blank-h1", "blank", Protocol::H1, 1),
        of(1, "blank-tls", "blank", Protocol::Tls, 1),
        of(2, "blank-h2-1", "blank", Protocol::H2, 1),
        of(3, "blank-h2-100", "blank", Protocol::H2, 100),
        of(4, "work-h1", "work", Protocol::H1, 1),
        of(5, "work-h2c", "work", Protocol::H2c, 10),
        of(6, "work-grpc", "work", Protocol::Grpc, 10),
        // No HTTP/1.1 scenario of db: no baseline, no rows.
        of(7, "db-tls", "db", Protocol::Tls, 1),
    ]
}

/// Good repetitions of `server` at `test` at these requests/s.
fn reps(server: &str, test: &str, rps: &[f64]) -> Vec<Measurement> {
    rps.iter()
        .enumerate()
        .map(|(i, &v)| fixtures::ok(fixtures::key(server, test, 100, i as u32 + 1), v))
        .collect()
}

/// A run of the scenarios above with servers a and b.
fn protocol_run(measurements: Vec<Measurement>) -> RunDetail {
    RunDetail {
        events: Vec::new(),
        scenarios: scenarios(),
        servers: vec![fixtures::server("a", ""), fixtures::server("b", "")],
        measurements,
        ..fixtures::run(1, "protocols")
    }
}

fn find<'a>(rows: &'a [ProtocolRow], server: &str, test: &str, base: &str) -> &'a ProtocolRow {
    rows.iter()
        .find(|r| r.server == server && r.test == test && r.baseline_test == base)
        .unwrap_or_else(|| panic!("no row {server} {test} ÷ {base}: {rows:#?}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn each_protocol_is_set_against_the_same_servers_http1_with_its_interval() {
    let m = [
        reps("a", "blank-h1", &[1000.0, 1010.0, 990.0]),
        reps("a", "blank-tls", &[800.0, 805.0, 795.0]),
        reps("a", "blank-h2-1", &[1000.0, 1100.0, 900.0]),
        reps("a", "blank-h2-100", &[3000.0, 3030.0, 2970.0]),
        reps("b", "blank-h1", &[500.0]),
        reps("b", "blank-tls", &[250.0]),
        reps("a", "db-tls", &[100.0, 100.0]),
    ]
    .concat();
    let report = build_report(&protocol_run(m));
    let rows = &report.protocols;

    let tls = find(rows, "a", "blank-tls", "blank-h1");
    assert_eq!(
        (tls.protocol, tls.streams, tls.connections),
        (Protocol::Tls, 1, 100)
    );
    assert!(close(tls.ratio, 0.8), "{tls:?}");
    assert_eq!((tls.rps, tls.baseline_rps), (800.0, 1000.0));
    let expected = welch_change_ci(&[1000.0, 1010.0, 990.0], &[800.0, 805.0, 795.0]);
    assert_eq!(tls.change_ci95, expected);
    let (lo, hi) = expected.unwrap();
    assert!(lo < -0.19 && hi > -0.21 && hi < 0.0, "[{lo}, {hi}]");
    assert!(tls.told_apart);
    assert_eq!(tls.verdict(), "costs 20%");
    assert!(tls
        .sentence()
        .starts_with("TLS costs a 20% of its HTTP/1.1 requests/s"));

    // A wide spread: the interval holds no change.
    let h2 = find(rows, "a", "blank-h2-1", "blank-h1");
    assert!(!h2.told_apart, "{h2:?}");
    assert_eq!(h2.verdict(), "≈ +0.0%");
    let many = find(rows, "a", "blank-h2-100", "blank-h1");
    assert_eq!((many.streams, many.told_apart), (100, true));
    assert_eq!(many.verdict(), "gains 200%");

    // One repetition a side: a ratio, no interval, not told apart.
    let b = find(rows, "b", "blank-tls", "blank-h1");
    assert!(close(b.ratio, 0.5));
    assert_eq!((b.change_ci95, b.told_apart), (None, false));
    assert_eq!(b.verdict(), "−50%");
    assert_eq!(b.detail(), "×0.50 · one repetition");

    // b has no h2 cells and db-tls no baseline: no rows for them.
    assert!(!rows
        .iter()
        .any(|r| r.server == "b" && r.protocol == Protocol::H2));
    assert!(!rows.iter().any(|r| r.test == "db-tls"), "{rows:#?}");
    assert_eq!(rows.len(), 4);
}

#[test]
fn a_server_without_a_good_http1_cell_has_no_rows() {
    let mut m = [
        reps("a", "blank-h1", &[1000.0, 1010.0]),
        reps("a", "blank-tls", &[800.0, 805.0]),
        // b measured over TLS, never over HTTP/1.1.
        reps("b", "blank-tls", &[900.0, 905.0]),
        // a's gRPC with its HTTP/1.1 but no h2c: against HTTP/1.1 only.
        reps("a", "work-h1", &[1000.0, 1000.0]),
        reps("a", "work-grpc", &[500.0, 500.0]),
    ]
    .concat();
    let pairs = |m: &[Measurement]| -> Vec<(String, String, String)> {
        build_report(&protocol_run(m.to_vec()))
            .protocols
            .into_iter()
            .map(|r| (r.server, r.test, r.baseline_test))
            .collect()
    };
    let expected = [
        ("a", "blank-tls", "blank-h1"),
        ("a", "work-grpc", "work-h1"),
    ]
    .map(|(s, t, b)| (s.to_string(), t.to_string(), b.to_string()));
    assert_eq!(pairs(&m), expected);

    // b's HTTP/1.1 cell there but every repetition of it failed: still
    // no row of b (a failed cell is no baseline).
    m.push(fixtures::failed(
        fixtures::key("b", "blank-h1", 100, 1),
        "server exited",
    ));
    assert_eq!(pairs(&m), expected);
    // Once b has a good one, it has its row: the case above is not
    // left out for another reason.
    m.push(fixtures::ok(fixtures::key("b", "blank-h1", 100, 2), 1000.0));
    let with_b = pairs(&m);
    assert_eq!(with_b.len(), 3, "{with_b:?}");
    assert_eq!(
        with_b[1],
        (
            "b".to_string(),
            "blank-tls".to_string(),
            "blank-h1".to_string()
        )
    );
}

#[test]
fn grpc_is_set_against_http1_and_against_json_over_h2c() {
    let m = [
        reps("a", "work-h1", &[1000.0, 1000.0]),
        reps("a", "work-h2c", &[1250.0, 1250.0]),
        reps("a", "work-grpc", &[500.0, 500.0]),
    ]
    .concat();
    let rows = build_report(&protocol_run(m)).protocols;
    let tests: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.test.as_str(), r.baseline_test.as_str()))
        .collect();
    assert_eq!(
        tests,
        [
            ("work-h2c", "work-h1"),
            ("work-grpc", "work-h1"),
            ("work-grpc", "work-h2c")
        ]
    );
    let h1 = find(&rows, "a", "work-grpc", "work-h1");
    assert!(close(h1.ratio, 0.5));
    assert_eq!(h1.baseline_protocol, Protocol::H1);
    let json = find(&rows, "a", "work-grpc", "work-h2c");
    assert!(close(json.ratio, 0.4));
    assert_eq!(
        (json.baseline_protocol, json.baseline_streams),
        (Protocol::H2c, 10)
    );
    // Equal repetitions: an interval of one point, told apart.
    let (lo, hi) = json.change_ci95.unwrap();
    assert!(close(lo, -0.6) && close(hi, -0.6));
    assert!(json.told_apart);
    assert!(
        json.sentence()
            .starts_with("gRPC with 10 streams costs a 60% of its JSON-over-h2c requests/s"),
        "{}",
        json.sentence()
    );

    let t = tables(&rows);
    assert_eq!(t.len(), 1);
    assert_eq!(
        (0..3).map(|i| t[0].column_title(i)).collect::<Vec<_>>(),
        [
            (
                "h2c, 10 streams".to_string(),
                "work-h2c ÷ work-h1".to_string()
            ),
            ("gRPC, 10 streams".into(), "work-grpc ÷ work-h1".into()),
            (
                "gRPC, 10 streams, against JSON over h2c".into(),
                "work-grpc ÷ work-h2c".into()
            ),
        ]
    );
}

#[test]
fn the_markdown_and_json_carry_the_rows_and_a_run_without_protocols_has_none() {
    let m = [
        reps("a", "blank-h1", &[1000.0, 1010.0, 990.0]),
        reps("a", "blank-tls", &[800.0, 805.0, 795.0]),
        reps("b", "blank-h1", &[1000.0, 1010.0, 990.0]),
    ]
    .concat();
    let report = build_report(&protocol_run(m));
    let mut md = Vec::new();
    write_markdown(&mut md, &report.protocols).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("#### Protocols"), "{md}");
    assert!(
        md.contains("| server (blank at 100 conn.) | TLS (blank-tls ÷ blank-h1) |"),
        "{md}"
    );
    assert!(md.contains("| a | costs 20% (×0.80 · 95%: −"), "{md}");
    // b has no TLS cell: no row of b.
    assert!(!md.contains("| b |"), "{md}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["protocols"][0]["protocol"], "tls");
    assert_eq!(json["protocols"][0]["baseline_test"], "blank-h1");
    assert_eq!(json["tests"][1]["protocol"], "tls");
    assert_eq!(json["tests"][1]["streams"], 1);

    // The same cells with every scenario over HTTP/1.1: no section, no
    // key in the JSON, nothing in the Markdown.
    let mut plain = protocol_run(
        [
            reps("a", "blank-h1", &[1000.0, 1010.0]),
            reps("a", "blank-tls", &[800.0, 805.0]),
        ]
        .concat(),
    );
    for s in &mut plain.scenarios {
        s.protocol = Protocol::H1;
        s.streams = 1;
    }
    let report = build_report(&plain);
    assert!(report.protocols.is_empty());
    let json = serde_json::to_value(&report).unwrap();
    assert!(json.get("protocols").is_none());
    let mut md = Vec::new();
    write_markdown(&mut md, &report.protocols).unwrap();
    assert!(md.is_empty());
}

#[test]
fn signed_percentages_keep_their_sign_and_drop_it_at_zero() {
    assert_eq!(signed_percent(-0.18), "−18%");
    assert_eq!(signed_percent(0.025), "+2.5%");
    assert_eq!(signed_percent(-0.0001), "+0.0%");
    assert_eq!(signed_percent(2.0), "+200%");
    // 9.96% rounds past 10 at one decimal: shown whole.
    assert_eq!(signed_percent(-0.0996), "−10%");
    assert_eq!(signed_percent(-0.0994), "−9.9%");
    assert_eq!(percent_size(-0.18), "18%");
}
