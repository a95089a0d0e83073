//! Issue 33: the Conformance section read back from the servers' stored
//! verify JSON: rows best first, a server never probed left out, and every
//! view carrying the same score and failed ids; the JSON against the schema.

use netbench_records::{fixtures, RunDetail};
use netbench_report::{build_report, write_csv, write_html, write_markdown};
use serde_json::{json, Value};

fn stored(passed: u32, failed: &[&str]) -> String {
    let mut cases: Vec<Value> = failed
        .iter()
        .map(|id| {
            json!({"id": id, "rfc": "RFC 9112 §3.2", "title": "a title", "status": "fail",
                   "reason": "200, connection kept; expected 400"})
        })
        .collect();
    cases.extend((0..passed).map(|i| {
        json!({"id": format!("ok-{i}"), "rfc": "RFC 9112 §2.2", "title": "t", "status": "pass",
               "reason": "fine"})
    }));
    json!({"seed": 1, "checks": [], "skipped": [], "conformance": {
        "passed": passed, "total": passed + failed.len() as u32, "cases": cases}})
    .to_string()
}

fn run() -> RunDetail {
    let server = |name: &str, verify: Option<String>| netbench_records::ServerRecord {
        verify_json: verify,
        ..fixtures::server(name, "")
    };
    RunDetail {
        events: Vec::new(),
        scenarios: vec![fixtures::scenario(0, "blank", &[100])],
        servers: vec![
            server(
                "lax",
                Some(stored(29, &["host-missing", "host-double", "host-invalid"])),
            ),
            server("strict", Some(stored(32, &[]))),
            // Stored before issue 33: no conformance key at all.
            server("old", Some(r#"{"seed":1,"checks":[],"skipped":[]}"#.into())),
        ],
        measurements: vec![],
        ..fixtures::run(7, "conf")
    }
}

#[test]
fn rows_rank_by_score_and_leave_out_servers_never_probed() {
    let r = build_report(&run());
    let rows: Vec<(&str, u32, u32, String)> = r
        .conformance
        .iter()
        .map(|c| (c.server.as_str(), c.passed, c.total, c.failed_ids()))
        .collect();
    assert_eq!(
        rows,
        [
            ("strict", 32, 32, "none".to_string()),
            (
                "lax",
                29,
                32,
                "host-missing, host-double, host-invalid".to_string()
            ),
        ]
    );
}

#[test]
fn every_view_carries_the_scores() {
    let r = build_report(&run());
    let mut md = Vec::new();
    write_markdown(&mut md, &r).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("| lax | 29/32 | host-missing, host-double, host-invalid |"),
        "{md}"
    );
    let mut csv = Vec::new();
    write_csv(&mut csv, &r).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.contains("7,conf,,,,lax,,conformance_passed,cases,29"),
        "{csv}"
    );
    assert!(
        csv.contains("7,conf,,,,lax,,conformance_total,cases,32"),
        "{csv}"
    );
    let mut html = Vec::new();
    write_html(&mut html, &r).unwrap();
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("<section id=\"conformance\">"));
    assert!(html.contains("<a href=\"#conformance\">Conformance</a>"));
    assert!(html.contains(">host-double</code>"));
}

#[test]
fn the_json_matches_the_schema_and_is_absent_without_probes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/report.v2.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let json = serde_json::to_value(build_report(&run())).unwrap();
    let problems: Vec<String> = v.iter_errors(&json).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(json["conformance"][1]["failed"][0]["rfc"], "RFC 9112 §3.2");
    let mut bad = json.clone();
    bad["conformance"][0]["passed"] = "all".into();
    assert!(!v.is_valid(&bad));
    let mut plain = run();
    plain.servers.truncate(0);
    let json = serde_json::to_value(build_report(&plain)).unwrap();
    assert!(json.get("conformance").is_none());
}
