//! The idle kind's rows: per server, memory per idle connection (the PSS
//! fit's slope), and at each level held the PSS, threads, idle CPU, the
//! time to open it and the connections lost; medians over the repetitions.

use std::collections::BTreeMap;

use netbench_records::facts::{Facts, IdleFacts};
use netbench_records::RunDetail;
use serde::Serialize;

use crate::format::{bytes, thousands};
use crate::kinds::{groups, median, per_connection, KindSection, KindTable, ScenarioInfo};

/// One server's idle cell.
#[derive(Debug, Clone, Serialize)]
pub struct IdleRow {
    pub test: String,
    pub server: String,
    /// The largest level (the cell's connection count).
    pub connections: u32,
    pub repetitions: usize,
    pub failed: usize,
    pub failure: Option<String>,
    /// Memory per idle connection, bytes: the median of the repetitions'
    /// PSS-fit slopes. None without a fit (fewer than two full levels).
    pub bytes_per_connection: Option<f64>,
    /// The fit's r² (median) and points (fewest), so a poor line shows.
    pub fit_r2: Option<f64>,
    pub fit_points: Option<u32>,
    pub levels: Vec<IdleLevelRow>,
}

/// One level held, medians over the repetitions that reached it.
#[derive(Debug, Clone, Serialize)]
pub struct IdleLevelRow {
    pub connections: u32,
    pub open: f64,
    pub failed: f64,
    pub closed_by_server: f64,
    pub open_s: f64,
    pub pss_bytes: f64,
    pub threads: f64,
    pub cpu_cores_mean: f64,
    pub cpu_cores_peak: f64,
}

pub(crate) fn rows(
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) -> Vec<IdleRow> {
    fn pick(f: &Facts) -> Option<&IdleFacts> {
        match f {
            Facts::Idle(i) => Some(i),
            _ => None,
        }
    }
    groups(run, scenarios, columns, "idle", pick)
        .into_iter()
        .map(|g| {
            let facts: Vec<&IdleFacts> = g.facts.iter().map(|(f, _)| *f).collect();
            row_of(
                g.test,
                g.server,
                g.connections,
                &facts,
                g.repetitions,
                g.failed,
                g.failure,
            )
        })
        .collect()
}

fn row_of(
    test: String,
    server: String,
    connections: u32,
    facts: &[&IdleFacts],
    repetitions: usize,
    failed: usize,
    failure: Option<String>,
) -> IdleRow {
    let fits: Vec<_> = facts.iter().filter_map(|f| f.pss_fit).collect();
    let mut counts: Vec<u32> = facts
        .iter()
        .flat_map(|f| f.levels.iter().map(|l| l.connections))
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let levels = counts
        .into_iter()
        .filter_map(|c| {
            let at: Vec<_> = facts
                .iter()
                .filter_map(|f| f.levels.iter().find(|l| l.connections == c))
                .collect();
            let med = |v: &dyn Fn(&netbench_records::facts::IdleLevelFacts) -> f64| {
                median(at.iter().map(|l| v(l)))
            };
            Some(IdleLevelRow {
                connections: c,
                open: med(&|l| f64::from(l.open))?,
                failed: med(&|l| f64::from(l.failed))?,
                closed_by_server: med(&|l| f64::from(l.closed_by_server))?,
                open_s: med(&|l| l.open_s)?,
                pss_bytes: med(&|l| l.pss_bytes as f64)?,
                threads: med(&|l| f64::from(l.threads))?,
                cpu_cores_mean: med(&|l| l.cpu_cores_mean)?,
                cpu_cores_peak: med(&|l| l.cpu_cores_peak)?,
            })
        })
        .collect();
    IdleRow {
        test,
        server,
        connections,
        repetitions,
        failed,
        failure,
        bytes_per_connection: median(fits.iter().map(|f| f.slope)),
        fit_r2: median(fits.iter().map(|f| f.r2)),
        fit_points: fits.iter().map(|f| f.points).min(),
        levels,
    }
}

/// The fit as a phrase: "1.2 KiB/conn (r² 0.99, 4 levels)".
pub(crate) fn slope_text(r: &IdleRow) -> String {
    match r.bytes_per_connection {
        None => "no fit".into(),
        Some(b) => format!(
            "{} (r² {:.2}, {} levels)",
            per_connection(b),
            r.fit_r2.unwrap_or(f64::NAN),
            r.fit_points.unwrap_or(0)
        ),
    }
}

/// The idle CPU at the largest level held: the figure compared across runs.
pub(crate) fn idle_cpu_at_largest(f: &IdleFacts) -> Option<f64> {
    f.levels
        .iter()
        .max_by_key(|l| l.connections)
        .map(|l| l.cpu_cores_mean)
}

pub(crate) fn metrics(f: &IdleFacts) -> Vec<(String, &'static str, f64)> {
    let mut m = Vec::new();
    if let Some(fit) = f.pss_fit {
        m.push(("idle_pss_per_connection".into(), "bytes", fit.slope));
        m.push(("idle_pss_fit_r2".into(), "ratio", fit.r2));
    }
    for l in &f.levels {
        let c = l.connections;
        m.push((format!("idle_open_{c}"), "count", f64::from(l.open)));
        m.push((format!("idle_failed_{c}"), "count", f64::from(l.failed)));
        m.push((
            format!("idle_closed_by_server_{c}"),
            "count",
            f64::from(l.closed_by_server),
        ));
        m.push((format!("idle_open_time_{c}"), "s", l.open_s));
        m.push((format!("idle_pss_{c}"), "bytes", l.pss_bytes as f64));
        m.push((format!("idle_threads_{c}"), "count", f64::from(l.threads)));
        m.push((format!("idle_cpu_mean_{c}"), "cores", l.cpu_cores_mean));
        m.push((format!("idle_cpu_peak_{c}"), "cores", l.cpu_cores_peak));
    }
    m
}

/// The section: memory per connection per server, then each level.
pub(crate) fn section(rows: &[IdleRow]) -> Option<KindSection> {
    if rows.is_empty() {
        return None;
    }
    let fits = rows
        .iter()
        .map(|r| {
            vec![
                r.test.clone(),
                r.server.clone(),
                slope_text(r),
                if r.failed > 0 {
                    format!("{} ({} failed)", r.repetitions, r.failed)
                } else {
                    r.repetitions.to_string()
                },
            ]
        })
        .collect();
    let levels = rows
        .iter()
        .flat_map(|r| {
            r.levels.iter().map(|l| {
                vec![
                    r.test.clone(),
                    r.server.clone(),
                    thousands(u64::from(l.connections)),
                    bytes(l.pss_bytes as u64),
                    format!("{:.0}", l.threads),
                    format!("{:.3}", l.cpu_cores_mean),
                    format!("{:.3}", l.cpu_cores_peak),
                    format!("{:.2} s", l.open_s),
                    format!("{:.0}", l.failed),
                    format!("{:.0}", l.closed_by_server),
                ]
            })
        })
        .collect();
    Some(KindSection {
        id: "idle",
        title: "Idle connections",
        legend: "Connections opened in levels and held open and silent. Memory per idle \
                 connection is the slope of the server's PSS against connections held (least \
                 squares over the levels where every connection was held); CPU in cores while \
                 held: the mean over the hold and the busiest sample interval. Medians over the \
                 repetitions."
            .into(),
        tables: vec![
            KindTable::new(
                &["test", "server", "memory per connection", "repetitions"],
                fits,
            ),
            KindTable::new(
                &[
                    "test",
                    "server",
                    "connections",
                    "PSS",
                    "threads",
                    "CPU mean (cores)",
                    "CPU peak (cores)",
                    "time to open",
                    "failed",
                    "closed by server",
                ],
                levels,
            ),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::{failed, measurement, run};
    use netbench_records::facts::{IdleLevelFacts, LineFit};

    fn idle(slope: f64, pss_at_100: u64, threads: u32) -> Facts {
        let level = |connections: u32, pss_bytes: u64| IdleLevelFacts {
            threads,
            ..netbench_records::fixtures::idle_level(connections, pss_bytes)
        };
        Facts::Idle(IdleFacts {
            hold_s: 1.0,
            heartbeat_s: None,
            levels: vec![level(10, 1_000_000), level(100, pss_at_100)],
            pss_fit: Some(LineFit {
                slope,
                intercept: 0.0,
                r2: 0.98,
                points: 2,
            }),
        })
    }

    const SUITE: &str = "[[scenarios]]\nname = \"held\"\nendpoint = \"blank\"\n\
                         connections = [10, 100]\nkind = \"idle\"\nhold = \"1s\"\n";

    #[test]
    fn the_slope_and_each_level_are_medians_over_the_repetitions() {
        let r = run(
            SUITE,
            vec![
                measurement("a", "held", 100, 1, Some(idle(1000.0, 2_000_000, 4)), None),
                measurement("a", "held", 100, 2, Some(idle(1300.0, 2_400_000, 6)), None),
                measurement("a", "held", 100, 3, Some(idle(1228.8, 2_200_000, 5)), None),
                measurement("b", "held", 100, 1, Some(idle(500.0, 1_500_000, 1)), None),
                failed("b", "held", 100, 2),
            ],
        );
        let rows = rows(&r, &crate::kinds::scenarios(&r), &["b".into(), "a".into()]);
        // In column order.
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].server.as_str(), rows[1].server.as_str()),
            ("b", "a")
        );
        let a = &rows[1];
        assert_eq!(a.bytes_per_connection, Some(1228.8));
        assert_eq!(slope_text(a), "1.2 KiB/conn (r² 0.98, 2 levels)");
        assert_eq!(a.levels.len(), 2);
        assert_eq!(a.levels[1].pss_bytes, 2_200_000.0);
        assert_eq!(a.levels[1].threads, 5.0);
        let b = &rows[0];
        assert_eq!((b.repetitions, b.failed), (2, 1));
        assert_eq!(b.failure.as_deref(), Some("server exited"));
        assert_eq!(slope_text(b), "500 B/conn (r² 0.98, 2 levels)");
        let mut md = Vec::new();
        crate::kinds::write_markdown(
            &mut md,
            &crate::kinds::KindSections {
                idle: rows,
                ..Default::default()
            },
        )
        .unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains("| held | a | 1.2 KiB/conn (r² 0.98, 2 levels) | 3 |"),
            "{md}"
        );
        assert!(md.contains("| 2 (1 failed) |"), "{md}");
    }
}
