//! Rankings over rounds (issue 43): per throughput row of 5 rounds or
//! more, each server's rank interval, median requests/s and relative
//! figure with their intervals, and its paired ratio to the next server in
//! the ranking; above them the rows whose leaders are client-bound and the
//! A/A twins' verdicts.

use crate::model::section::{CsvMetric, Section, Table, Unit, Value};
use crate::model::{Report, RowMethod};

const LEGEND: &str = "Per test and connection count measured in 5 rounds or more, the servers \
    best first. Each round measures every server once, in a fresh random order, so a slow \
    episode of the host slows the whole round; every figure here is taken within rounds and \
    resampled by whole rounds, which cancels it. rank: the 2.5th to 97.5th percentiles of the \
    server's rank over 2,000 resamples of the rounds (ranked by the median relative figure). \
    requests/s: the median over the rounds [its 95% interval]. relative: its requests/s over \
    the row's geometric mean in the same round, median over the rounds ±half its 95% interval \
    (the cell's ±x% everywhere in the report). over next: its requests/s over the next server's, \
    round by round, median [95% interval]; told apart: yes when the interval excludes 1, and a new \
    tier starts there. Intervals: the bootstrap of the median (percentiles expanded for small \
    samples; docs/method.md).";

pub(super) fn section(r: &Report) -> Option<Section> {
    let rows: Vec<_> = r
        .rows
        .iter()
        .filter(|x| x.method == RowMethod::Rounds)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = Section {
        id: "ranking",
        title: "Rankings over rounds".into(),
        legend: LEGEND.into(),
        hover: None,
        notes: Vec::new(),
        tables: Vec::new(),
        csv: Vec::new(),
        failures: Vec::new(),
    };
    for row in &rows {
        if let Some(note) = row.client_bound_note() {
            s.notes.push(note);
        }
        for t in &row.twins {
            let verdict = match (t.tied, t.ratio) {
                (Some(true), Some(e)) => format!(
                    "tied: {} over {} {}",
                    t.twin,
                    t.server,
                    crate::model::section::estimate_text(&e, Unit::Ratio)
                ),
                (Some(false), Some(e)) => format!(
                    "NOT tied: {} over {} {} (an A/A pair told apart: this row's intervals are \
                     too narrow, or the two processes differ)",
                    t.twin,
                    t.server,
                    crate::model::section::estimate_text(&e, Unit::Ratio)
                ),
                _ => format!("{} and {}: too few rounds to judge", t.server, t.twin),
            };
            s.notes.push(format!(
                "A/A twins at {} c={}: {verdict}.",
                row.test, row.connections
            ));
        }
    }
    for row in &rows {
        let mut table = Table::new(
            format!(
                "{} at {} connections, {} rounds",
                row.test,
                crate::format::thousands(u64::from(row.connections)),
                row.rounds
            ),
            &[
                "rank",
                "server",
                "requests/s",
                "relative",
                "over next",
                "told apart",
                "marks",
            ],
        );
        for (i, server) in row.order.iter().enumerate() {
            let Some(cell) = r.cell(&row.test, row.connections, server) else {
                continue;
            };
            let c = &cell.stats;
            let next = row.adjacent.get(i);
            table.rows.push(vec![
                c.rank.map_or(Value::Missing, Value::Rank),
                Value::Server(server.clone()),
                c.rps_median.map_or(Value::Missing, |e| Value::Estimate {
                    estimate: e,
                    unit: Unit::PerSecond,
                }),
                c.relative.map_or(Value::Missing, |e| Value::Estimate {
                    estimate: e,
                    unit: Unit::Relative,
                }),
                next.and_then(|p| p.ratio)
                    .map_or(Value::Missing, |e| Value::Estimate {
                        estimate: e,
                        unit: Unit::Ratio,
                    }),
                Value::Text(match next {
                    Some(p) if p.told_apart => "yes".into(),
                    Some(p) if p.ratio.is_some() => "no".into(),
                    _ => String::new(),
                }),
                Value::Marks(cell.flags.clone()),
            ]);
            let at = |name: &str, unit: &'static str, e: &netbench_stats::Estimate| {
                CsvMetric::estimate(&row.test, row.connections, server, name, unit, e)
            };
            if let Some(e) = &c.rps_median {
                s.csv.extend(at("rps_median", "1/s", e));
            }
            if let Some(e) = &c.relative {
                s.csv.extend(at("relative", "ratio", e));
            }
            if let Some(rank) = c.rank {
                let cell = |m: &str, v: usize| {
                    CsvMetric::cell(&row.test, row.connections, server, m, "rank", v as f64)
                };
                s.csv.push(cell("rank", rank.rank));
                if let Some((lo, hi)) = rank.ci95 {
                    s.csv.push(cell("rank_ci95_low", lo));
                    s.csv.push(cell("rank_ci95_high", hi));
                }
            }
            if let Some(p) = next {
                if let Some(e) = &p.ratio {
                    s.csv.extend(at("ratio_to_next", "ratio", e));
                    s.csv.push(CsvMetric::cell(
                        &row.test,
                        row.connections,
                        server,
                        "ratio_to_next_told_apart",
                        "bool",
                        if p.told_apart { 1.0 } else { 0.0 },
                    ));
                }
            }
        }
        for t in &row.twins {
            if let Some(e) = &t.ratio {
                s.csv.extend(CsvMetric::estimate(
                    &row.test,
                    row.connections,
                    &t.twin,
                    "twin_ratio",
                    "ratio",
                    e,
                ));
            }
            if let Some(tied) = t.tied {
                s.csv.push(CsvMetric::cell(
                    &row.test,
                    row.connections,
                    &t.twin,
                    "twin_tied",
                    "bool",
                    if tied { 1.0 } else { 0.0 },
                ));
            }
        }
        s.tables.push(table);
    }
    Some(s)
}
