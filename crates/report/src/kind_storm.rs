//! The storm kind's rows: per server and number of clients, how long until
//! every client was done, connects per second and their latency, what
//! failed and how (refused, timed out, other), and the listen queue the
//! kernel gave the server; medians over the repetitions.

use std::collections::BTreeMap;

use netbench_records::facts::{Facts, StormFacts};
use netbench_records::RunDetail;
use serde::Serialize;

use crate::format::{format_duration_ns, thousands};
use crate::kinds::{groups, median, KindSection, KindTable, ScenarioInfo};

/// One server at one storm size.
#[derive(Debug, Clone, Serialize)]
pub struct StormRow {
    pub test: String,
    pub server: String,
    pub clients: u32,
    pub repetitions: usize,
    pub failed: usize,
    pub failure: Option<String>,
    /// Medians over the good repetitions; None when there are none.
    pub all_done_s: Option<f64>,
    pub connects_per_s: Option<f64>,
    pub connect_p50_ns: Option<f64>,
    pub connect_p99_ns: Option<f64>,
    pub connect_max_ns: Option<f64>,
    pub answered: Option<f64>,
    pub refused: Option<f64>,
    pub connect_timeouts: Option<f64>,
    pub other_errors: Option<f64>,
    /// Machine and listener facts: the last repetition's (they do not move
    /// between repetitions), overflows and drops the median.
    pub somaxconn: Option<u32>,
    pub listen_backlog: Option<u32>,
    pub listen_overflows: Option<f64>,
    pub listen_drops: Option<f64>,
    /// The client was the limit in any repetition.
    pub client_bound: bool,
}

pub(crate) fn rows(
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) -> Vec<StormRow> {
    fn pick(f: &Facts) -> Option<&StormFacts> {
        match f {
            Facts::Storm(s) => Some(s),
            _ => None,
        }
    }
    groups(run, scenarios, columns, "storm", pick)
        .into_iter()
        .map(|g| {
            let f: Vec<&StormFacts> = g.facts.iter().map(|(f, _)| *f).collect();
            let med = |v: &dyn Fn(&StormFacts) -> f64| median(f.iter().map(|s| v(s)));
            let med_opt = |v: &dyn Fn(&StormFacts) -> Option<u64>| {
                median(f.iter().filter_map(|s| v(s)).map(|x| x as f64))
            };
            StormRow {
                test: g.test.clone(),
                server: g.server.clone(),
                clients: g.connections,
                repetitions: g.repetitions,
                failed: g.failed,
                failure: g.failure.clone(),
                all_done_s: med(&|s| s.all_done_s),
                connects_per_s: med(&|s| s.connects_per_s),
                connect_p50_ns: med(&|s| s.connect.p50_ns),
                connect_p99_ns: med(&|s| s.connect.p99_ns),
                connect_max_ns: med(&|s| s.connect.max_ns),
                answered: med(&|s| s.answered as f64),
                refused: med(&|s| s.refused as f64),
                connect_timeouts: med(&|s| s.connect_timeouts as f64),
                other_errors: med(&|s| s.other_errors as f64),
                somaxconn: f.iter().rev().find_map(|s| s.somaxconn),
                listen_backlog: f.iter().rev().find_map(|s| s.listen_backlog),
                listen_overflows: med_opt(&|s| s.listen_overflows),
                listen_drops: med_opt(&|s| s.listen_drops),
                client_bound: f.iter().any(|s| s.client_bound),
            }
        })
        .collect()
}

pub(crate) fn metrics(s: &StormFacts) -> Vec<(String, &'static str, f64)> {
    let mut m = vec![
        ("storm_all_done".to_string(), "s", s.all_done_s),
        ("storm_connects_per_s".into(), "1/s", s.connects_per_s),
        ("storm_connect_p50".into(), "ns", s.connect.p50_ns),
        ("storm_connect_p99".into(), "ns", s.connect.p99_ns),
        ("storm_connect_max".into(), "ns", s.connect.max_ns),
        ("storm_answered".into(), "count", s.answered as f64),
        ("storm_refused".into(), "count", s.refused as f64),
        (
            "storm_connect_timeouts".into(),
            "count",
            s.connect_timeouts as f64,
        ),
        ("storm_other_errors".into(), "count", s.other_errors as f64),
        (
            "storm_client_bound".into(),
            "bool",
            if s.client_bound { 1.0 } else { 0.0 },
        ),
    ];
    let opt = [
        ("somaxconn", s.somaxconn.map(u64::from)),
        ("listen_backlog", s.listen_backlog.map(u64::from)),
        ("listen_overflows", s.listen_overflows),
        ("listen_drops", s.listen_drops),
    ];
    for (name, v) in opt {
        if let Some(v) = v {
            m.push((name.into(), "count", v as f64));
        }
    }
    m
}

fn count(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| thousands(x.round() as u64))
}

/// A storm row's cells as the Markdown table writes them.
fn cells(r: &StormRow) -> Vec<String> {
    vec![
        r.test.clone(),
        r.server.clone(),
        thousands(u64::from(r.clients)),
        r.all_done_s.map_or("-".into(), |s| format!("{s:.3} s")),
        count(r.connects_per_s),
        [r.connect_p50_ns, r.connect_p99_ns, r.connect_max_ns]
            .iter()
            .map(|v| v.map_or("-".into(), format_duration_ns))
            .collect::<Vec<_>>()
            .join(" / "),
        count(r.answered),
        count(r.refused),
        count(r.connect_timeouts),
        count(r.other_errors),
        r.somaxconn.map_or("-".into(), |v| v.to_string()),
        r.listen_backlog.map_or("-".into(), |v| v.to_string()),
        format!("{} / {}", count(r.listen_overflows), count(r.listen_drops)),
        if r.client_bound { "C" } else { "" }.to_string()
            + &if r.failed > 0 {
                format!(" {} of {} failed", r.failed, r.repetitions)
            } else {
                String::new()
            },
    ]
}

pub(crate) fn section(rows: &[StormRow]) -> Option<KindSection> {
    if rows.is_empty() {
        return None;
    }
    Some(KindSection {
        id: "storm",
        title: "Connection storm",
        legend: "Every client connects at once and sends one request, with no reconnects; \
                 medians over the repetitions. Listen overflows / drops are the machine's \
                 counters during the storm (SYNs or handshakes dropped on a full accept queue); \
                 somaxconn caps every listen backlog. C: the client was the limit."
            .into(),
        tables: vec![KindTable::new(
            &[
                "test",
                "server",
                "clients",
                "all done",
                "connects/s",
                "connect p50 / p99 / max",
                "answered",
                "refused",
                "connect timeouts",
                "other errors",
                "somaxconn",
                "listen backlog",
                "overflows / drops",
                "flags",
            ],
            rows.iter().map(cells).collect(),
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::{measurement, run};
    use netbench_engine::LatencySummary;

    fn storm(all_done_s: f64, refused: u64, overflows: Option<u64>) -> Facts {
        Facts::Storm(StormFacts {
            clients: 1000,
            answered: 1000 - refused,
            refused,
            connect_timeouts: 0,
            other_errors: 0,
            all_done_s,
            connects_per_s: 1000.0 / all_done_s,
            connect: LatencySummary {
                p50_ns: 1e5,
                p99_ns: 2e6,
                max_ns: 1e9,
                ..LatencySummary::default()
            },
            somaxconn: Some(4096),
            listen_backlog: Some(511),
            listen_overflows: overflows,
            listen_drops: overflows,
            client_bound: false,
        })
    }

    #[test]
    fn storm_rows_are_medians_with_the_listen_facts() {
        let suite = "[[scenarios]]\nname = \"burst\"\nendpoint = \"blank\"\n\
                     connections = [1000]\nkind = \"storm\"\n";
        let r = run(
            suite,
            vec![
                measurement("a", "burst", 1000, 1, Some(storm(0.5, 10, Some(3))), None),
                measurement("a", "burst", 1000, 2, Some(storm(0.7, 30, None)), None),
                measurement("a", "burst", 1000, 3, Some(storm(0.6, 20, Some(5))), None),
            ],
        );
        let rows = rows(&r, &crate::kinds::scenarios(&r), &["a".into()]);
        assert_eq!(rows.len(), 1);
        let a = &rows[0];
        assert_eq!(a.all_done_s, Some(0.6));
        assert_eq!(a.refused, Some(20.0));
        // Two repetitions read the counters: the median of those.
        assert_eq!(a.listen_overflows, Some(4.0));
        assert_eq!((a.somaxconn, a.listen_backlog), (Some(4096), Some(511)));
        let c = cells(a);
        assert_eq!(c[3], "0.600 s");
        assert_eq!(c[5], "100.0µs / 2.00ms / 1.00s");
        assert_eq!(c[12], "4 / 4");
    }
}
