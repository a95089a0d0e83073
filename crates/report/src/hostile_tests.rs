//! The hostile section's model on synthetic runs: ranking, ratios,
//! conformance read from verify JSON fixtures, the worst cases in words.

use super::*;
use netbench_records::fixtures::{self, hostile, hostile_attack};

fn run_with(cells: Vec<(&str, Option<Facts>)>, verify: &[(&str, &str)]) -> RunDetail {
    let mut run = fixtures::run(1, "hostile");
    let mut sc = fixtures::scenario(0, "abuse", &[8]);
    sc.kind = "hostile".into();
    run.scenarios.push(sc);
    for (server, facts) in cells {
        let mut s = fixtures::server(server, "");
        s.verify_json = verify
            .iter()
            .find(|(n, _)| *n == server)
            .map(|(_, j)| j.to_string());
        run.servers.push(s);
        let key = fixtures::key(server, "abuse", 8, 1);
        run.measurements.push(match facts {
            Some(f) => {
                let mut m = fixtures::ok(key, 1000.0);
                m.facts = Some(f);
                m
            }
            None => fixtures::failed(key, "the server would not start"),
        });
    }
    run
}

#[test]
fn conformance_is_read_from_verify_json_and_absent_when_not_probed() {
    let probed = r#"{"checks": [], "conformance": {"passed": 23, "total": 27, "cases": [
        {"id": "cl-te", "rfc": "RFC 9112 6.1", "title": "CL and TE", "status": "fail",
         "reason": "answered 200"}]}}"#;
    assert_eq!(conformance_of(probed), Some((23, 27)));
    assert_eq!(conformance_of(r#"{"checks": []}"#), None);
    assert_eq!(conformance_of(r#"{"conformance": null}"#), None);
    assert_eq!(conformance_of("not json"), None);
}

#[test]
fn servers_rank_by_worst_success_then_breakage_then_p99() {
    let crashed = {
        let mut a = hostile_attack("malformed", 0.99, 2.0);
        a.crashed = Some("signal 11".into());
        a.recovery_s = None;
        a
    };
    let run = run_with(
        vec![
            // Worst success 90%.
            (
                "slow",
                Some(hostile(vec![
                    hostile_attack("slowloris", 0.90, 5.0),
                    hostile_attack("malformed", 1.0, 1.0),
                ])),
            ),
            // Worst success 99%, a crash: below the 99% without one.
            (
                "crashy",
                Some(hostile(vec![
                    hostile_attack("slowloris", 1.0, 1.0),
                    crashed,
                ])),
            ),
            // Worst success 99%, p99 4×.
            (
                "laggy",
                Some(hostile(vec![
                    hostile_attack("slowloris", 0.99, 4.0),
                    hostile_attack("malformed", 1.0, 1.0),
                ])),
            ),
            // Worst success 99%, p99 2×: ahead of laggy.
            (
                "steady",
                Some(hostile(vec![
                    hostile_attack("slowloris", 0.99, 2.0),
                    hostile_attack("malformed", 1.0, 1.5),
                ])),
            ),
            ("broken", None),
        ],
        &[(
            "steady",
            r#"{"conformance": {"passed": 25, "total": 27, "cases": []}}"#,
        )],
    );
    let tables = hostile_tables(&run);
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(t.attacks, ["slowloris", "malformed"]);
    let order: Vec<&str> = t.rows.iter().map(|r| r.server.as_str()).collect();
    assert_eq!(order, ["steady", "laggy", "crashy", "slow", "broken"]);
    assert_eq!(t.rows[0].rank, 1);
    assert_eq!(t.rows[0].conformance, Some((25, 27)));
    assert_eq!(t.rows[1].conformance, None);
    assert_eq!(t.rows[1].worst_p99_ratio, Some(4.0));
    assert_eq!(t.rows[2].broken, 1);
    assert!(t.rows[4]
        .failure
        .as_deref()
        .unwrap()
        .contains("would not start"));
    let cell = t.rows[0].cells[0].as_ref().unwrap();
    assert_eq!(cell.p99_ratio, Some(2.0));
    assert!((cell.success_rate - 0.99).abs() < 1e-9);
    assert_eq!(cell.rss_growth_bytes, Some(4 << 20));
    assert!((cell.cpu_ratio.unwrap() - 2.0).abs() < 1e-9);
    // The worst case first: the crash, then the 90% success.
    assert!(
        t.worst[0].starts_with("crashy under malformed"),
        "{:?}",
        t.worst
    );
    assert!(t.worst[0].contains("the server crashed"));
    assert!(t.worst[1].starts_with("slow under slowloris"));
    assert!(t.worst[1].contains("90.0%") && t.worst[1].contains("5.0×"));
    // Within 1% and under 3× p99: not a worst case.
    assert!(!t.worst.iter().any(|w| w.starts_with("steady")));
}

#[test]
fn a_run_without_hostile_cells_has_no_table_and_metrics_name_each_attack() {
    let run = fixtures::run(1, "quick");
    assert!(hostile_tables(&run).is_empty());
    let Facts::Hostile(h) = hostile(vec![hostile_attack("conn-flood", 0.5, 10.0)]) else {
        unreachable!()
    };
    let m = metrics(&h);
    let get = |n: &str| m.iter().find(|x| x.0 == n).map(|x| x.2);
    assert_eq!(get("hostile_conn_flood_success_rate"), Some(0.5));
    assert_eq!(get("hostile_conn_flood_p99_ratio"), Some(10.0));
    assert_eq!(get("hostile_conn_flood_crashed"), Some(0.0));
}

#[test]
fn a_server_slower_than_the_rate_is_shown_at_its_own() {
    let Facts::Hostile(mut slow) = hostile(vec![hostile_attack("slowloris", 1.0, 1.0)]) else {
        unreachable!()
    };
    slow.baseline.offered_per_s = 225.0;
    let run = run_with(
        vec![
            ("slow", Some(Facts::Hostile(slow))),
            (
                "kept-up",
                Some(hostile(vec![hostile_attack("slowloris", 1.0, 1.0)])),
            ),
        ],
        &[],
    );
    let t = &hostile_tables(&run)[0];
    let rate = |s: &str| {
        t.rows
            .iter()
            .find(|r| r.server == s)
            .unwrap()
            .lowered_rate_per_s
    };
    assert_eq!(rate("slow"), Some(225.0));
    assert_eq!(rate("kept-up"), None);
}
