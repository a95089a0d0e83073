//! Which kind each stored measurement is of, and the run's kind sections:
//! the rows of every kind beyond throughput (idle, storm, rate-sweep,
//! fixed-rate, short-lived), built once from the store for every output.
//! The main throughput tables ask [`in_throughput_tables`] what they may
//! show; each kind's own module (kind_idle.rs, kind_storm.rs, kind_rate.rs,
//! kind_short.rs) turns its measurements into plain rows.

use std::collections::BTreeMap;

use netbench_records::facts::Facts;
use netbench_records::{Measurement, MeasurementStatus, RunDetail};
use serde::Serialize;

use crate::kind_idle::IdleRow;
use crate::kind_rate::{FixedRateRow, SweepRow};
use crate::kind_short::ShortGroup;
use crate::kind_storm::StormRow;
use crate::suite_table::label;

/// What the run recorded of one scenario, as far as the reports need it.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioInfo {
    /// Its place in the suite file.
    pub order: usize,
    pub kind: &'static str,
    pub endpoint: String,
    pub keepalive: bool,
    pub requests_per_connection: Option<u32>,
}

/// The kinds a suite can name, as they are spelled.
const KINDS: [&str; 8] = [
    "throughput",
    "idle",
    "storm",
    "short-lived",
    "rate-sweep",
    "fixed-rate",
    "pipelined",
    "hostile",
];

/// The run's scenarios by name, from its scenario records (empty for a run
/// stored by an older netbench whose suite file no longer parses: then the
/// facts alone tell the kinds apart).
pub(crate) fn scenarios(run: &RunDetail) -> BTreeMap<String, ScenarioInfo> {
    run.scenarios
        .iter()
        .enumerate()
        .map(|(order, sc)| {
            (
                sc.name.clone(),
                ScenarioInfo {
                    order,
                    // A kind a later netbench added reads as throughput:
                    // its cells show with the closed-loop ones.
                    kind: KINDS
                        .into_iter()
                        .find(|k| *k == sc.kind)
                        .unwrap_or("throughput"),
                    endpoint: sc.endpoint.clone(),
                    keepalive: sc.keepalive,
                    requests_per_connection: sc.requests_per_connection,
                },
            )
        })
        .collect()
}

/// A measurement's kind: its facts say it; a failed one has none, so its
/// scenario's kind in the suite file does; "throughput" otherwise (and for
/// runs stored before kinds).
pub(crate) fn kind_of(m: &Measurement, scenarios: &BTreeMap<String, ScenarioInfo>) -> &'static str {
    match &m.facts {
        Some(f) => f.kind(),
        None => scenarios
            .get(&m.key.scenario)
            .map_or("throughput", |s| s.kind),
    }
}

/// Whether a kind's requests/s belongs in the throughput tables: closed loop
/// at saturation. Idle, storm, rate-sweep and fixed-rate cells have tables of
/// their own and are neither shown nor counted as failed there.
pub(crate) fn in_throughput_tables(kind: &str) -> bool {
    matches!(kind, "throughput" | "short-lived" | "pipelined")
}

/// The median of the values, NaN left out; None when there are none.
pub(crate) fn median(xs: impl IntoIterator<Item = f64>) -> Option<f64> {
    crate::stats::median(&xs.into_iter().collect::<Vec<_>>())
}

/// The repetitions of one cell of a kind: its good facts and its failures.
pub(crate) struct Group<'a, T> {
    pub test: String,
    pub connections: u32,
    pub server: String,
    /// Each good repetition's facts, with its measurement.
    pub facts: Vec<(&'a T, &'a Measurement)>,
    pub repetitions: usize,
    pub failed: usize,
    /// The first failure's reason.
    pub failure: Option<String>,
}

/// The cells of `kind` in suite order, then connections, then column order
/// (`columns`: the report's, by model then name), with the facts `pick`
/// takes out of each good repetition.
pub(crate) fn groups<'a, T>(
    run: &'a RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
    kind: &str,
    pick: impl Fn(&'a Facts) -> Option<&'a T>,
) -> Vec<Group<'a, T>> {
    let mut out: Vec<Group<'a, T>> = Vec::new();
    for m in &run.measurements {
        if kind_of(m, scenarios) != kind {
            continue;
        }
        let server = label(&m.key.server, &m.key.variant);
        let i = match out.iter().position(|g| {
            g.test == m.key.scenario && g.connections == m.key.connections && g.server == server
        }) {
            Some(i) => i,
            None => {
                out.push(Group {
                    test: m.key.scenario.clone(),
                    connections: m.key.connections,
                    server,
                    facts: Vec::new(),
                    repetitions: 0,
                    failed: 0,
                    failure: None,
                });
                out.len() - 1
            }
        };
        let g = &mut out[i];
        g.repetitions += 1;
        match (m.status, m.facts.as_ref().and_then(&pick)) {
            (MeasurementStatus::Ok, Some(f)) => g.facts.push((f, m)),
            _ => {
                g.failed += 1;
                if g.failure.is_none() {
                    g.failure = Some(
                        m.failure
                            .clone()
                            .unwrap_or_else(|| "no facts stored for the measurement".to_string()),
                    );
                }
            }
        }
    }
    let order = |g: &Group<'a, T>| {
        (
            scenarios.get(&g.test).map_or(usize::MAX, |s| s.order),
            g.test.clone(),
            g.connections,
            columns
                .iter()
                .position(|c| c == &g.server)
                .unwrap_or(usize::MAX),
        )
    };
    out.sort_by_key(|g| order(g));
    out
}

/// Every kind's rows in a run; each list is empty when the run has no cell
/// of the kind (and then left out of the JSON).
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindSections {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<IdleRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub storm: Vec<StormRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rate_sweep: Vec<SweepRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixed_rate: Vec<FixedRateRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub short_lived: Vec<ShortGroup>,
}

impl KindSections {
    pub fn is_empty(&self) -> bool {
        self.idle.is_empty()
            && self.storm.is_empty()
            && self.rate_sweep.is_empty()
            && self.fixed_rate.is_empty()
            && self.short_lived.is_empty()
    }
}

impl KindSections {
    /// Every kind cell with a failed repetition: test, connections, server
    /// and the first failure's reason.
    pub fn failures(&self) -> Vec<(&str, u32, &str, &str)> {
        let idle = self
            .idle
            .iter()
            .map(|r| (&r.test, r.connections, &r.server, &r.failure));
        let storm = self
            .storm
            .iter()
            .map(|r| (&r.test, r.clients, &r.server, &r.failure));
        let sweep = self
            .rate_sweep
            .iter()
            .map(|r| (&r.test, r.connections, &r.server, &r.failure));
        let fixed = self
            .fixed_rate
            .iter()
            .map(|r| (&r.test, r.connections, &r.server, &r.failure));
        idle.chain(storm)
            .chain(sweep)
            .chain(fixed)
            .filter_map(|(t, c, s, f)| Some((t.as_str(), c, s.as_str(), f.as_deref()?)))
            .collect()
    }
}

/// The kind sections of a run, with servers in `columns` order.
pub(crate) fn build_kinds(run: &RunDetail, columns: &[String]) -> KindSections {
    let sc = scenarios(run);
    KindSections {
        idle: crate::kind_idle::rows(run, &sc, columns),
        storm: crate::kind_storm::rows(run, &sc, columns),
        rate_sweep: crate::kind_rate::sweep_rows(run, &sc, columns),
        fixed_rate: crate::kind_rate::fixed_rows(run, &sc, columns),
        short_lived: crate::kind_short::groups(run, &sc, columns),
    }
}

/// A table of a kind's section: header cells and rows of text, written
/// alike by Markdown, HTML and `netbench show`.
pub(crate) struct KindTable {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl KindTable {
    pub fn new(headers: &[&str], rows: Vec<Vec<String>>) -> Self {
        KindTable {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }
}

/// One kind's part of a report: a heading, what the numbers are, tables.
pub(crate) struct KindSection {
    /// The HTML section's id.
    pub id: &'static str,
    pub title: &'static str,
    pub legend: String,
    pub tables: Vec<KindTable>,
}

/// The run's kind sections in the order reports show them.
pub(crate) fn sections(k: &KindSections) -> Vec<KindSection> {
    [
        crate::kind_idle::section(&k.idle),
        crate::kind_storm::section(&k.storm),
        crate::kind_rate::sweep_section(&k.rate_sweep),
        crate::kind_rate::fixed_section(&k.fixed_rate),
        crate::kind_short::section(&k.short_lived),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The kind sections as Markdown tables (also what `netbench show` prints
/// under the throughput table): nothing when the run has none. The first
/// two columns are names, the rest figures, right-aligned.
pub(crate) fn write_markdown(
    out: &mut impl std::io::Write,
    k: &KindSections,
) -> std::io::Result<()> {
    let md = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for s in sections(k) {
        writeln!(out, "#### {}\n\n{}\n", s.title, s.legend)?;
        for t in &s.tables {
            let heads: Vec<String> = t.headers.iter().map(|h| md(h)).collect();
            writeln!(out, "| {} |", heads.join(" | "))?;
            let align: Vec<&str> = (0..t.headers.len())
                .map(|i| if i < 2 { "---" } else { "---:" })
                .collect();
            writeln!(out, "|{}|", align.join("|"))?;
            for row in &t.rows {
                let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
                writeln!(out, "| {} |", cells.join(" | "))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// A repetition's kind figures as CSV metrics (name, unit, value).
pub(crate) fn facts_metrics(f: &Facts) -> Vec<(String, &'static str, f64)> {
    match f {
        Facts::Idle(i) => crate::kind_idle::metrics(i),
        Facts::Storm(s) => crate::kind_storm::metrics(s),
        Facts::RateSweep(s) => crate::kind_rate::sweep_metrics(s),
        Facts::FixedRate(x) => crate::kind_rate::fixed_metrics(x),
        Facts::ShortLived(s) => vec![(
            "requests_per_connection".into(),
            "count",
            f64::from(s.requests_per_connection),
        )],
        Facts::Pipelined(p) => vec![("pipeline_depth".into(), "count", f64::from(p.depth))],
        Facts::Hostile(h) => crate::hostile::metrics(h),
    }
}

/// Memory per connection as people read it: "1.2 KiB/conn".
pub(crate) fn per_connection(bytes: f64) -> String {
    let a = bytes.abs();
    if a < 1024.0 {
        format!("{bytes:.0} B/conn")
    } else if a < 1024.0 * 1024.0 {
        format!("{:.1} KiB/conn", bytes / 1024.0)
    } else {
        format!("{:.2} MiB/conn", bytes / 1048576.0)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Synthetic stored runs for the kinds' row tests.
    use netbench_records::facts::Facts;
    use netbench_records::{
        fixtures, Bandwidth, CellKey, Measurement, MeasurementStatus, NetPlacement, Offer,
        RunDetail, ScenarioRecord,
    };

    /// A good measurement of `scenario` with `facts`.
    pub fn measurement(
        server: &str,
        scenario: &str,
        connections: u32,
        repetition: u32,
        facts: Option<Facts>,
        result_json: Option<String>,
    ) -> Measurement {
        Measurement {
            id: None,
            key: CellKey {
                server: server.into(),
                variant: String::new(),
                scenario: scenario.into(),
                connections,
                repetition,
            },
            status: MeasurementStatus::Ok,
            failure: None,
            result_json,
            histogram: None,
            client_bound: false,
            started_at: String::new(),
            duration_s: 1.0,
            samples: Vec::new(),
            noise: None,
            facts,
            server_cpu_s: None,
            network: None,
            warmup: None,
            server_output_cut: None,
        }
    }

    /// The same cell, failed.
    pub fn failed(server: &str, scenario: &str, connections: u32, repetition: u32) -> Measurement {
        Measurement {
            status: MeasurementStatus::Failed,
            failure: Some("server exited".into()),
            ..measurement(server, scenario, connections, repetition, None, None)
        }
    }

    /// The scenario records a run of this suite text would have stored: a
    /// test's shorthand for writing them out, reading only the fields the
    /// reports use (the suite crate's parser is what runs use).
    pub fn scenarios_of(suite_toml: &str) -> Vec<ScenarioRecord> {
        let table: toml::Table = toml::from_str(suite_toml).expect("a test's suite text");
        let text = |t: &toml::Table, k: &str, d: &str| {
            t.get(k).and_then(|v| v.as_str()).unwrap_or(d).to_string()
        };
        let mut out: Vec<ScenarioRecord> = Vec::new();
        let none = Vec::new();
        let listed = table
            .get("scenarios")
            .and_then(|s| s.as_array())
            .unwrap_or(&none);
        for (position, t) in listed.iter().enumerate() {
            let t = t.as_table().unwrap();
            let endpoint = text(t, "endpoint", "blank");
            let mut r = ScenarioRecord {
                position: position as u32,
                name: text(t, "name", ""),
                kind: text(t, "kind", "throughput"),
                connections: t["connections"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_integer().unwrap() as u32)
                    .collect(),
                keepalive: t.get("keepalive").and_then(|v| v.as_bool()).unwrap_or(true),
                requests_per_connection: t
                    .get("requests_per_connection")
                    .and_then(|v| v.as_integer())
                    .map(|n| n as u32),
                needs: match endpoint.as_str() {
                    "db" | "db-list" => Some(Offer::Db),
                    "static" | "static-1m" => Some(Offer::Static),
                    "upload" => Some(Offer::Upload),
                    "json-comp" | "json-comp-br" => Some(Offer::JsonComp),
                    "fortunes" => Some(Offer::Fortunes),
                    "queries" => Some(Offer::Queries),
                    "updates" => Some(Offer::Updates),
                    "ws" => Some(Offer::Ws),
                    _ => None,
                },
                endpoint,
                placement: match text(t, "placement", "loopback").as_str() {
                    "netns" => NetPlacement::Netns,
                    _ => NetPlacement::Loopback,
                },
                bandwidth: t.get("bandwidth").map(|b| {
                    let b = b.as_str().unwrap();
                    let gbit: u64 = b.strip_suffix("gbit").unwrap().parse().unwrap();
                    Bandwidth {
                        bits_per_s: gbit * 1_000_000_000,
                    }
                }),
                same_cells_as: String::new(),
                protocol: Default::default(),
                streams: 1,
            };
            let same = |a: &ScenarioRecord, b: &ScenarioRecord| {
                (
                    &a.kind,
                    &a.endpoint,
                    &a.connections,
                    a.keepalive,
                    a.requests_per_connection,
                ) == (
                    &b.kind,
                    &b.endpoint,
                    &b.connections,
                    b.keepalive,
                    b.requests_per_connection,
                )
            };
            r.same_cells_as = out
                .iter()
                .find(|o| same(o, &r))
                .map_or_else(|| r.name.clone(), |o| o.name.clone());
            out.push(r);
        }
        out
    }

    /// A run of `suite_toml` with servers a and b.
    pub fn run(suite_toml: &str, measurements: Vec<Measurement>) -> RunDetail {
        RunDetail {
            events: Vec::new(),
            scenarios: scenarios_of(suite_toml),
            servers: vec![fixtures::server("a", ""), fixtures::server("b", "")],
            measurements,
            ..fixtures::run(1, "t")
        }
    }

    /// A LoadResult's JSON with `rps`.
    pub fn load_result(rps: f64) -> String {
        let latency = serde_json::json!({"count": 10, "min_ns": 1.0, "mean_ns": 1.0,
            "stdev_ns": 0.0, "p50_ns": 1.0, "p90_ns": 1.0, "p99_ns": 2.0e6, "p999_ns": 1.0,
            "p9999_ns": 1.0, "max_ns": 1.0});
        serde_json::json!({
            "interrupted": false, "requests": 10, "errors": [0, 0, 0, 0, 0, 0, 0, 0, 0],
            "duration_s": 1.0, "rps": rps, "latency": latency, "connect": latency,
            "connects": 1, "bytes_read": 0, "bytes_written": 0, "workers": [],
            "client_cpu_s": 0.1, "process_cpu_s": 0.1, "configured_connections": 100,
            "achieved_concurrency": 100.0, "rate": null,
            "verdict": {"client_bound": false, "reasons": [], "busiest_cpu": 0.1,
                        "busiest_loop": 0.1, "in_flight": 1.0}
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use netbench_records::facts::{PipelinedFacts, ShortLivedFacts};

    #[test]
    fn memory_per_connection_reads_in_the_right_unit() {
        assert_eq!(per_connection(850.0), "850 B/conn");
        assert_eq!(per_connection(1228.8), "1.2 KiB/conn");
        assert_eq!(per_connection(-2048.0), "-2.0 KiB/conn");
        assert_eq!(per_connection(3.0 * 1048576.0), "3.00 MiB/conn");
    }

    #[test]
    fn a_failed_cell_takes_its_kind_from_the_suite() {
        let suite = "[[scenarios]]\nname = \"held\"\nendpoint = \"blank\"\n\
                     connections = [10, 100]\nkind = \"idle\"\nhold = \"1s\"\n";
        let r = run(suite, vec![failed("a", "held", 100, 1)]);
        let sc = scenarios(&r);
        assert_eq!(kind_of(&r.measurements[0], &sc), "idle");
        assert!(!in_throughput_tables("idle"));
        let short = measurement(
            "a",
            "k1",
            10,
            1,
            Some(Facts::ShortLived(ShortLivedFacts {
                requests_per_connection: 1,
            })),
            None,
        );
        assert_eq!(kind_of(&short, &sc), "short-lived");
        let piped = Facts::Pipelined(PipelinedFacts { depth: 8 });
        assert_eq!(
            facts_metrics(&piped),
            [("pipeline_depth".to_string(), "count", 8.0)]
        );
        // An unknown scenario of an old run is throughput.
        assert_eq!(kind_of(&failed("a", "blank", 1, 1), &sc), "throughput");
    }

    #[test]
    fn only_throughput_kinds_reach_the_main_table_and_idle_is_not_a_failure() {
        let suite = "[[scenarios]]\nname = \"blank\"\nendpoint = \"blank\"\nconnections = [10]\n\
            [[scenarios]]\nname = \"piped\"\nendpoint = \"blank\"\nconnections = [10]\n\
            kind = \"pipelined\"\n\
            [[scenarios]]\nname = \"held\"\nendpoint = \"blank\"\nconnections = [10, 100]\n\
            kind = \"idle\"\nhold = \"1s\"\n";
        let idle = Facts::Idle(netbench_records::facts::IdleFacts {
            hold_s: 1.0,
            heartbeat_s: None,
            levels: Vec::new(),
            pss_fit: None,
        });
        let r = run(
            suite,
            vec![
                measurement("a", "blank", 10, 1, None, Some(load_result(100.0))),
                measurement(
                    "a",
                    "piped",
                    10,
                    1,
                    Some(Facts::Pipelined(PipelinedFacts { depth: 16 })),
                    Some(load_result(900.0)),
                ),
                // An idle result is no LoadResult: it must not read as failed.
                measurement(
                    "a",
                    "held",
                    100,
                    1,
                    Some(idle),
                    Some("{\"levels\":[]}".into()),
                ),
                failed("b", "held", 100, 1),
            ],
        );
        let t = crate::suite_table::run_table(&r);
        assert_eq!(
            t.rows,
            [("blank".to_string(), 10), ("piped".to_string(), 10)]
        );
        assert!(t.cells.keys().all(|k| k.0 != "held"));
        assert!(t.cells.values().all(|c| c.failed == 0));
        assert_eq!(
            t.cells[&("piped".to_string(), 10, "a".to_string())].flags(),
            "P"
        );
        assert_eq!(
            t.cells[&("blank".to_string(), 10, "a".to_string())].flags(),
            ""
        );

        let report = crate::build_report(&r);
        assert!(report.cells.iter().all(|c| c.test != "held"));
        let held: Vec<_> = report
            .repetitions
            .iter()
            .filter(|x| x.test == "held")
            .collect();
        assert_eq!(held.len(), 2);
        assert!(held[0].ok && held[0].result.is_none() && held[0].kind == "idle");
        assert_eq!(report.kinds.idle.len(), 2);
        assert_eq!(
            report.kinds.failures(),
            [("held", 100, "b", "server exited")]
        );
        let mut csv = Vec::new();
        crate::write_csv(&mut csv, &report).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        // Only b's repetition failed; a's idle one has no figures to list.
        assert_eq!(csv.matches(",failed,bool,1").count(), 1, "{csv}");
        assert!(
            csv.contains("1,t,piped,h1,10,a,1,pipeline_depth,count,16"),
            "{csv}"
        );
        let mut text = Vec::new();
        crate::write_run_table(&mut text, &crate::build_report(&r)).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("rows: P pipelined"), "{text}");
        assert!(text.contains("#### Idle connections"), "{text}");
        assert!(text.contains("b held c=100: server exited"), "{text}");
    }
}
