//! compare's tests: the verdict rules, the control, the run-wide shift
//! and every kind's figure, on synthetic runs.

use super::*;

#[test]
fn direction_of_better_depends_on_the_metric() {
    let slow = [100.0, 101.0, 99.0, 100.5];
    let fast = [120.0, 121.0, 119.0, 120.5];
    let r = row(Metric::RequestsPerS, "blank", 1, "s", &slow, &fast);
    assert_eq!(r.verdict, Verdict::Better);
    assert!((r.change - 120.25 / 100.25 + 1.0).abs() < 1e-12);
    assert!((r.p - 2.0 / 70.0).abs() < 1e-9);
    let (lo, hi) = r.change_ci95.unwrap();
    assert!(lo > 0.0 && lo <= r.change && r.change <= hi, "[{lo}, {hi}]");
    // The same numbers as latencies: higher is worse.
    let r = row(Metric::LatencyP99, "blank", 1, "s", &slow, &fast);
    assert_eq!(r.verdict, Verdict::Worse);
}

#[test]
fn overlap_is_no_change_and_three_a_side_is_too_few() {
    let a = [100.0, 104.0, 98.0, 102.0];
    let b = [101.0, 97.0, 103.0, 99.0];
    assert_eq!(
        row(Metric::RequestsPerS, "t", 1, "s", &a, &b).verdict,
        Verdict::NoChange
    );
    let r = row(
        Metric::RequestsPerS,
        "t",
        1,
        "s",
        &a[..3],
        &[200.0, 201.0, 202.0],
    );
    assert_eq!(r.verdict, Verdict::TooFew);
    assert!((r.p - 0.1).abs() < 1e-9);
}

#[test]
fn the_chance_note_counts_only_tests_that_could_reach_alpha() {
    let run = crate::environment::tests::run(serde_json::Value::Null);
    let four = [100.0, 104.0, 98.0, 102.0];
    let testable = row(Metric::RequestsPerS, "t", 1, "s", &four, &four);
    let too_few = row(Metric::RequestsPerS, "t", 2, "s", &four[..2], &four[..2]);
    let mut c = Comparison {
        format: "netbench-compare/1",
        method: METHOD,
        alpha: ALPHA,
        a: run.clone(),
        b: run,
        rows: vec![testable.clone(), too_few],
        only_in_a: vec![],
        only_in_b: vec![],
        in_neither: vec![],
        environment_differences: vec![],
        normalised_to_probe_ns: None,
        run_shift: vec![],
    };
    assert_eq!(chance_note(&c), None);
    c.rows
        .extend([testable.clone(), testable.clone(), testable]);
    let note = chance_note(&c).unwrap();
    assert!(note.starts_with("4 tests at p < 0.05"), "{note}");
    assert!(note.contains("about 0.2 of them"), "{note}");
}

fn figures(rps: f64, p99: f64, probe: Option<f64>) -> RepetitionFigures {
    RepetitionFigures {
        rps,
        requests: 1,
        errors: Default::default(),
        latency_mean_ns: p99,
        latency_p50_ns: p99,
        latency_p90_ns: p99,
        latency_p99_ns: p99,
        latency_p999_ns: p99,
        latency_p9999_ns: p99,
        latency_max_ns: p99,
        client_cpu_s: 0.0,
        achieved_concurrency: 1.0,
        client_bound: false,
        bytes_per_answer: None,
        server: None,
        probe_server_ns: probe,
        probe_loopback_ns: None,
    }
}

/// Six servers at blank c=100, five repetitions each; in run B every
/// server is `host` times its figure in A, and s0 is `s0` times more.
pub(crate) fn drifted(host: f64, s0: f64) -> (Report, Report) {
    use crate::kinds::testing::{load_result, measurement, run};
    let suite = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [100]\n";
    let make = |scale: &dyn Fn(usize) -> f64| {
        let mut ms = Vec::new();
        for server in 0..6 {
            for rep in 1..=5u32 {
                let rps = 1000.0 * (1.0 + f64::from(rep) * 0.01) * scale(server);
                let json = Some(load_result(rps));
                ms.push(measurement(
                    &format!("s{server}"),
                    "blank",
                    100,
                    rep,
                    None,
                    json,
                ));
            }
        }
        let mut detail = run(suite, ms);
        let template = detail.servers[0].clone();
        detail.servers = (0..6)
            .map(|i| netbench_records::ServerRecord {
                server: format!("s{i}"),
                ..template.clone()
            })
            .collect();
        crate::build_report(&detail)
    };
    let a = make(&|_| 1.0);
    let b = make(&|server| host * if server == 0 { s0 } else { 1.0 });
    (a, b)
}

fn rps_verdicts(c: &Comparison) -> Vec<(String, Verdict)> {
    c.rows
        .iter()
        .filter(|r| r.metric == Metric::RequestsPerS)
        .map(|r| (r.server.clone(), r.verdict))
        .collect()
}

#[test]
fn a_host_that_moved_every_server_is_not_a_change_of_any() {
    // The A/A pair on this VM: B 4% faster everywhere, nothing changed.
    let (a, b) = drifted(1.04, 1.0);
    let c = compare(&a, &b);
    let v = rps_verdicts(&c);
    assert_eq!(v.len(), 6);
    assert!(v.iter().all(|(_, v)| *v == Verdict::NoChange), "{v:?}");
    let shift = c
        .run_shift
        .iter()
        .find(|m| m.metric == Metric::RequestsPerS)
        .unwrap();
    assert!((shift.shift.factor - 1.04).abs() < 1e-9 && shift.shift.cells == 6);
    assert_eq!((shift.test.as_str(), shift.connections), ("blank", 100));
    assert!(c.rows.iter().all(|r| r.shift.is_some()));
    let note = normalisation_note(&c);
    assert!(
        note.contains("requests/s at blank c=100 by +4.0% (median of 6 servers)"),
        "{note}"
    );
    // As measured, every server reads as better.
    let c = compare_with(&a, &b, false);
    assert!(c.run_shift.is_empty() && c.rows.iter().all(|r| r.shift.is_none()));
    let v = rps_verdicts(&c);
    assert!(v.iter().all(|(_, v)| *v == Verdict::Better), "{v:?}");
    assert!(normalisation_note(&c).starts_with("Raw figures"));
}

#[test]
fn a_real_change_stands_out_from_the_shift() {
    // s0 really got 30% faster while the host drifted 4% up.
    let (a, b) = drifted(1.04, 1.3);
    let c = compare(&a, &b);
    for (server, verdict) in rps_verdicts(&c) {
        let want = if server == "s0" {
            Verdict::Better
        } else {
            Verdict::NoChange
        };
        assert_eq!(verdict, want, "{server}");
    }
    let s0 = c
        .rows
        .iter()
        .find(|r| r.server == "s0" && r.metric == Metric::RequestsPerS);
    assert!((s0.unwrap().change - 0.3).abs() < 1e-9);
}

#[test]
fn too_few_cells_are_compared_as_measured() {
    let (mut a, mut b) = drifted(1.04, 1.0);
    for r in [&mut a, &mut b] {
        r.repetitions
            .retain(|x| x.server == "s0" || x.server == "s1" || x.server == "s2");
        r.cells
            .retain(|x| x.server == "s0" || x.server == "s1" || x.server == "s2");
    }
    let c = compare(&a, &b);
    assert!(c.run_shift.is_empty());
    assert!(rps_verdicts(&c).iter().all(|(_, v)| *v == Verdict::Better));
}

#[test]
fn the_control_takes_the_host_out_of_the_figures() {
    // B ran on a host 25% slower (probe 1250 ns against 1000): 80
    // requests/s there is 100 at A's speed, and 5 ms p99 is 4 ms.
    let f = figures(80.0, 5e6, Some(1250.0));
    assert!((Metric::RequestsPerS.value(&f, Some(1000.0)) - 100.0).abs() < 1e-9);
    assert!((Metric::LatencyP99.value(&f, Some(1000.0)) - 4e6).abs() < 1e-3);
    assert_eq!(Metric::RequestsPerS.value(&f, None), 80.0);
    // Without a probe on the repetition the figure stays as measured.
    assert_eq!(
        Metric::RequestsPerS.value(&figures(80.0, 1.0, None), Some(1000.0)),
        80.0
    );
}

#[test]
fn percent_has_no_negative_zero() {
    assert_eq!(percent(-0.0001), "0.0%");
    assert_eq!(percent(0.123), "+12.3%");
    assert_eq!(percent(-0.05), "-5.0%");
}

#[test]
fn every_kind_is_compared_by_its_own_figure_in_the_right_direction() {
    use crate::kinds::testing::{measurement, run};
    use netbench_records::facts::{
        FixedRateFacts, IdleFacts, IdleLevelFacts, LineFit, StormFacts, SweepFacts,
    };
    let suite = "[[scenarios]]\nname = \"held\"\nendpoint = \"blank\"\nconnections = [10, 100]\n\
        kind = \"idle\"\nhold = \"1s\"\n\
        [[scenarios]]\nname = \"burst\"\nendpoint = \"blank\"\nconnections = [100]\n\
        kind = \"storm\"\n\
        [[scenarios]]\nname = \"sweep\"\nendpoint = \"blank\"\nconnections = [10]\n\
        kind = \"rate-sweep\"\n\
        [[scenarios]]\nname = \"fixed\"\nendpoint = \"blank\"\nconnections = [10]\n\
        kind = \"fixed-rate\"\nrate = 1000\n";
    // Run B: less memory, faster storm, higher knee, more CPU per request.
    let make = |scale: f64| {
        let mut ms = Vec::new();
        for rep in 1..=4u32 {
            let jitter = 1.0 + f64::from(rep) * 0.001;
            let level = IdleLevelFacts {
                connections: 100,
                open: 100,
                failed: 0,
                closed_by_server: 0,
                open_s: 0.1,
                pss_bytes: 1,
                rss_bytes: 1,
                threads: 1,
                cpu_cores_mean: 0.01 * jitter,
                cpu_cores_peak: 0.1,
                heartbeats: 0,
                heartbeat_errors: 0,
                client_cpu_s: 0.0,
            };
            let idle = Facts::Idle(IdleFacts {
                hold_s: 1.0,
                heartbeat_s: None,
                levels: vec![level],
                pss_fit: Some(LineFit {
                    slope: 2000.0 * jitter / scale,
                    intercept: 0.0,
                    r2: 1.0,
                    points: 2,
                }),
            });
            let storm = Facts::Storm(StormFacts {
                clients: 100,
                answered: 100,
                refused: 0,
                connect_timeouts: 0,
                other_errors: 0,
                all_done_s: 1.0 * jitter / scale,
                connects_per_s: 100.0,
                connect: Default::default(),
                somaxconn: None,
                listen_backlog: None,
                listen_overflows: None,
                listen_drops: None,
                client_bound: false,
            });
            let sweep = Facts::RateSweep(SweepFacts {
                peak_rps: 1e4,
                slo_p99_ns: 1e7,
                steps: vec![],
                knee_per_s: Some(4000.0 * jitter * scale),
            });
            let fixed = Facts::FixedRate(FixedRateFacts {
                rate_per_s: 1000.0,
                offered_per_s: 1000.0,
                achieved_per_s: 1000.0,
                p50_ns: 1.0,
                p99_ns: 1.0,
                server_cpu_us_per_request: Some(20.0 * jitter * scale),
            });
            for (name, conns, f) in [
                ("held", 100, idle),
                ("burst", 100, storm),
                ("sweep", 10, sweep),
                ("fixed", 10, fixed),
            ] {
                ms.push(measurement("a", name, conns, rep, Some(f), None));
            }
        }
        crate::build_report(&run(suite, ms))
    };
    let c = compare(&make(1.0), &make(2.0));
    let verdict = |m: Metric| {
        let rows: Vec<_> = c.rows.iter().filter(|r| r.metric == m).collect();
        assert_eq!(rows.len(), 1, "{m:?}: {:?}", c.rows);
        rows[0].verdict
    };
    assert_eq!(verdict(Metric::IdleBytesPerConnection), Verdict::Better);
    assert_eq!(verdict(Metric::IdleCpuCores), Verdict::NoChange);
    assert_eq!(verdict(Metric::StormAllDone), Verdict::Better);
    assert_eq!(verdict(Metric::SweepKnee), Verdict::Better);
    assert_eq!(verdict(Metric::FixedRateCpuPerRequest), Verdict::Worse);
    // No throughput figure for these cells, and none is missing.
    assert!(c.rows.iter().all(|r| r.metric != Metric::RequestsPerS));
    assert!(c.only_in_a.is_empty() && c.only_in_b.is_empty() && c.in_neither.is_empty());
    let mut text = Vec::new();
    write_compare_text(&mut text, &c).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("2.0 KiB/conn n=4  1002 B/conn n=4"), "{text}");
}
