//! The short-lived kind set beside keep-alive: per endpoint and connection
//! count, each server's requests/s with a new connection every K requests,
//! next to its keep-alive throughput row when the run has one (same
//! endpoint and connections); medians over the repetitions.

use std::collections::BTreeMap;

use netbench_engine::LoadResult;
use netbench_records::{MeasurementStatus, RunDetail};
use serde::Serialize;

use crate::format::thousands;
use crate::kinds::{kind_of, median, KindSection, KindTable, ScenarioInfo};
use crate::suite_table::label;

/// One endpoint at one connection count.
#[derive(Debug, Clone, Serialize)]
pub struct ShortGroup {
    pub endpoint: String,
    pub connections: u32,
    /// Keep-alive first (when the run has it), then K ascending.
    pub columns: Vec<ShortColumn>,
    /// A row per server with a figure, in column order of the report.
    pub rows: Vec<ShortRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShortColumn {
    pub test: String,
    /// None: keep-alive on (a throughput scenario).
    pub requests_per_connection: Option<u32>,
}

impl ShortColumn {
    pub fn title(&self) -> String {
        match self.requests_per_connection {
            None => "keep-alive".into(),
            Some(1) => "K = 1 (keep-alive off)".into(),
            Some(k) => format!("K = {k}"),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ShortRow {
    pub server: String,
    /// Median requests/s per column; None where the server has none.
    pub rps: Vec<Option<f64>>,
}

pub(crate) fn groups(
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) -> Vec<ShortGroup> {
    // Requests/s of every good repetition by (scenario, connections, server).
    let mut rps: BTreeMap<(String, u32, String), Vec<f64>> = BTreeMap::new();
    let mut wanted: Vec<(String, u32)> = Vec::new();
    let endpoint_of = |test: &str| scenarios.get(test).map_or("", |s| s.endpoint.as_str());
    for m in &run.measurements {
        let kind = kind_of(m, scenarios);
        if kind == "short-lived" {
            let k = (endpoint_of(&m.key.scenario).to_string(), m.key.connections);
            if !wanted.contains(&k) {
                wanted.push(k);
            }
        }
        if !matches!(kind, "short-lived" | "throughput") || m.status != MeasurementStatus::Ok {
            continue;
        }
        if let Some(r) = m
            .result_json
            .as_deref()
            .and_then(|j| serde_json::from_str::<LoadResult>(j).ok())
        {
            rps.entry((
                m.key.scenario.clone(),
                m.key.connections,
                label(&m.key.server, &m.key.variant),
            ))
            .or_default()
            .push(r.rps);
        }
    }
    let mut tests: Vec<(&String, &ScenarioInfo)> = scenarios.iter().collect();
    tests.sort_by_key(|(_, s)| s.order);
    wanted
        .into_iter()
        .map(|(endpoint, connections)| {
            let at = |name: &str| rps.keys().any(|k| k.0 == name && k.1 == connections);
            let mut cols: Vec<ShortColumn> = tests
                .iter()
                .filter(|(name, s)| {
                    s.endpoint == endpoint && s.kind == "throughput" && s.keepalive && at(name)
                })
                .take(1)
                .map(|(name, _)| ShortColumn {
                    test: (*name).clone(),
                    requests_per_connection: None,
                })
                .collect();
            let mut short: Vec<ShortColumn> = tests
                .iter()
                .filter(|(name, s)| s.endpoint == endpoint && s.kind == "short-lived" && at(name))
                .map(|(name, s)| ShortColumn {
                    test: (*name).clone(),
                    requests_per_connection: s.requests_per_connection,
                })
                .collect();
            if scenarios.is_empty() {
                // The suite file no longer parses: every short-lived test
                // at this count, K unknown.
                short = rps
                    .keys()
                    .filter(|k| k.1 == connections)
                    .map(|k| k.0.clone())
                    .fold(Vec::new(), |mut v: Vec<String>, t| {
                        if !v.contains(&t) {
                            v.push(t);
                        }
                        v
                    })
                    .into_iter()
                    .map(|test| ShortColumn {
                        test,
                        requests_per_connection: None,
                    })
                    .collect();
            }
            short.sort_by_key(|c| c.requests_per_connection);
            cols.extend(short);
            let rows = columns
                .iter()
                .map(|server| ShortRow {
                    server: server.clone(),
                    rps: cols
                        .iter()
                        .map(|c| {
                            rps.get(&(c.test.clone(), connections, server.clone()))
                                .and_then(|v| median(v.iter().copied()))
                        })
                        .collect(),
                })
                .filter(|r| r.rps.iter().any(Option::is_some))
                .collect();
            ShortGroup {
                endpoint,
                connections,
                columns: cols,
                rows,
            }
        })
        .collect()
}

pub(crate) fn section(groups: &[ShortGroup]) -> Option<KindSection> {
    if groups.is_empty() {
        return None;
    }
    let tables = groups
        .iter()
        .map(|g| {
            let mut headers = vec![format!(
                "server ({} at {} conn.)",
                g.endpoint,
                thousands(u64::from(g.connections))
            )];
            headers.extend(
                g.columns
                    .iter()
                    .map(|c| format!("{} ({})", c.title(), c.test)),
            );
            let rows = g
                .rows
                .iter()
                .map(|r| {
                    let mut line = vec![r.server.clone()];
                    line.extend(
                        r.rps
                            .iter()
                            .map(|v| v.map_or("-".into(), |x| thousands(x.round() as u64))),
                    );
                    line
                })
                .collect();
            KindTable { headers, rows }
        })
        .collect();
    Some(KindSection {
        id: "short-lived",
        title: "Short-lived connections",
        legend: "Median requests/s with a new connection every K requests (K = 1: keep-alive \
                 off), next to keep-alive at the same endpoint and connection count when the run \
                 has it."
            .into(),
        tables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::{load_result, measurement, run};
    use netbench_records::facts::{Facts, ShortLivedFacts};

    #[test]
    fn each_k_sits_next_to_keep_alive_of_the_same_endpoint() {
        let suite = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [10]\n\
            [[scenarios]]\nname = \"k10\"\nendpoint = \"blank\"\nconnections = [10]\n\
            kind = \"short-lived\"\nrequests_per_connection = 10\n\
            [[scenarios]]\nname = \"k1\"\nendpoint = \"blank\"\nconnections = [10]\n\
            kind = \"short-lived\"\nrequests_per_connection = 1\n";
        let short = |k| {
            Some(Facts::ShortLived(ShortLivedFacts {
                requests_per_connection: k,
            }))
        };
        let r = run(
            suite,
            vec![
                measurement("a", "blank", 10, 1, None, Some(load_result(50000.0))),
                measurement("a", "k1", 10, 1, short(1), Some(load_result(8000.0))),
                measurement("a", "k1", 10, 2, short(1), Some(load_result(9000.0))),
                measurement("a", "k10", 10, 1, short(10), Some(load_result(30000.0))),
                measurement("b", "k1", 10, 1, short(1), Some(load_result(7000.0))),
            ],
        );
        let g = groups(&r, &crate::kinds::scenarios(&r), &["a".into(), "b".into()]);
        assert_eq!(g.len(), 1);
        let titles: Vec<String> = g[0].columns.iter().map(ShortColumn::title).collect();
        assert_eq!(titles, ["keep-alive", "K = 1 (keep-alive off)", "K = 10"]);
        assert_eq!(
            g[0].rows[0].rps,
            [Some(50000.0), Some(8500.0), Some(30000.0)]
        );
        assert_eq!(g[0].rows[1].rps, [None, Some(7000.0), None]);
        let mut md = Vec::new();
        crate::kinds::write_markdown(
            &mut md,
            &crate::kinds::KindSections {
                short_lived: g,
                ..Default::default()
            },
        )
        .unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(md.contains("| a | 50,000 | 8,500 | 30,000 |"), "{md}");
    }
}
