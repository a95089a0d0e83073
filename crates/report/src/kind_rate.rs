//! The open-loop kinds' rows: a rate sweep's latency against offered load
//! with its peak and knee, and the fixed rate's server CPU per request,
//! ranked lowest first; medians over the repetitions. The fixed rate is
//! what ranks servers the client cannot saturate (issue 43 item 6): its CPU
//! per request and p99 carry their intervals over rounds, and the servers
//! that held the rate their rank intervals.

use std::collections::BTreeMap;

use netbench_records::facts::{Facts, FixedRateFacts, SweepFacts};
use netbench_records::RunDetail;
use serde::Serialize;

use netbench_stats::{median_interval, rank_row, Bootstrap, Estimate, RankInterval, Rounds};

use crate::format::{format_duration_ns, thousands};
use crate::kinds::{groups, median, KindSection, KindTable, ScenarioInfo};

/// One server's sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub test: String,
    pub server: String,
    pub connections: u32,
    pub repetitions: usize,
    pub failed: usize,
    pub failure: Option<String>,
    /// The closed-loop peak, requests/s.
    pub peak_rps: Option<f64>,
    /// The highest offered rate that met the SLO (median over the
    /// repetitions, a repetition without one counting as below every rate);
    /// None: no knee, not even at the lowest step.
    pub knee_per_s: Option<f64>,
    pub slo_p99_ns: Option<f64>,
    /// By step, in the sweep's order.
    pub steps: Vec<SweepStepRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepStepRow {
    pub fraction: f64,
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub server_cpu_us_per_request: Option<f64>,
    /// The client was the limit at this step in any repetition.
    pub client_bound: bool,
}

/// One server at the fixed rate.
#[derive(Debug, Clone, Serialize)]
pub struct FixedRateRow {
    pub test: String,
    pub server: String,
    pub connections: u32,
    pub repetitions: usize,
    pub failed: usize,
    pub failure: Option<String>,
    /// The suite's rate, and the rate offered (lower where the server could
    /// not keep up with the suite's).
    pub rate_per_s: Option<f64>,
    pub offered_per_s: Option<f64>,
    pub achieved_per_s: Option<f64>,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub server_cpu_us_per_request: Option<f64>,
    /// Offered less than the suite's rate: not the same work as the others.
    pub reduced: bool,
    /// Offered the suite's rate and answered at least 99% of it (median
    /// over the rounds): only such a server is ranked.
    pub holds_rate: bool,
    /// Server CPU per request (µs): the median over the rounds with its
    /// bootstrap 95% interval (none below 5 rounds).
    pub cpu_per_request: Option<Estimate>,
    /// p99 latency (ns) at the rate, the same way.
    pub p99: Option<Estimate>,
    /// Its rank by CPU per request (1 the lowest) among the servers of its
    /// test that held the rate, with the rank's 95% interval.
    pub rank: Option<RankInterval>,
}

/// The knee over repetitions: a missing knee counts as 0 (below any rate),
/// so a median of 0 is "none".
pub(crate) fn median_knee(knees: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    median(knees.into_iter().map(|k| k.unwrap_or(0.0))).filter(|&k| k > 0.0)
}

pub(crate) fn sweep_rows(
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) -> Vec<SweepRow> {
    fn pick(f: &Facts) -> Option<&SweepFacts> {
        match f {
            Facts::RateSweep(s) => Some(s),
            _ => None,
        }
    }
    groups(run, scenarios, columns, "rate-sweep", pick)
        .into_iter()
        .map(|g| {
            let f: Vec<&SweepFacts> = g.facts.iter().map(|(f, _)| *f).collect();
            let n = f.iter().map(|s| s.steps.len()).max().unwrap_or(0);
            let steps = (0..n)
                .filter_map(|i| {
                    let at: Vec<_> = f.iter().filter_map(|s| s.steps.get(i)).collect();
                    let med = |v: &dyn Fn(&netbench_records::facts::SweepStep) -> f64| {
                        median(at.iter().map(|s| v(s)))
                    };
                    Some(SweepStepRow {
                        fraction: med(&|s| s.fraction)?,
                        offered_per_s: med(&|s| s.offered_per_s)?,
                        achieved_per_s: med(&|s| s.achieved_per_s)?,
                        p50_ns: med(&|s| s.p50_ns)?,
                        p99_ns: med(&|s| s.p99_ns)?,
                        p999_ns: med(&|s| s.p999_ns)?,
                        server_cpu_us_per_request: median(
                            at.iter().filter_map(|s| s.server_cpu_us_per_request),
                        ),
                        client_bound: at.iter().any(|s| s.client_bound),
                    })
                })
                .collect();
            SweepRow {
                test: g.test.clone(),
                server: g.server.clone(),
                connections: g.connections,
                repetitions: g.repetitions,
                failed: g.failed,
                failure: g.failure.clone(),
                peak_rps: median(f.iter().map(|s| s.peak_rps)),
                knee_per_s: if f.is_empty() {
                    None
                } else {
                    // From the steps, not the stored knee: runs stored
                    // under an earlier rule read as the current one does.
                    median_knee(
                        f.iter()
                            .map(|s| netbench_records::facts::knee(&s.steps, s.slo_p99_ns)),
                    )
                },
                slo_p99_ns: f.first().map(|s| s.slo_p99_ns),
                steps,
            }
        })
        .collect()
}

pub(crate) fn fixed_rows(
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) -> Vec<FixedRateRow> {
    fn pick(f: &Facts) -> Option<&FixedRateFacts> {
        match f {
            Facts::FixedRate(x) => Some(x),
            _ => None,
        }
    }
    let mut rows: Vec<FixedRateRow> = groups(run, scenarios, columns, "fixed-rate", pick)
        .into_iter()
        .map(|g| {
            let f: Vec<&FixedRateFacts> = g.facts.iter().map(|(f, _)| *f).collect();
            let med = |v: &dyn Fn(&FixedRateFacts) -> f64| median(f.iter().map(|x| v(x)));
            let rate = med(&|x| x.rate_per_s);
            let offered = med(&|x| x.offered_per_s);
            let achieved = med(&|x| x.achieved_per_s);
            let reduced = matches!((rate, offered), (Some(r), Some(o)) if o < r * 0.999);
            let boot = Bootstrap::default();
            let cpu: Vec<f64> = f
                .iter()
                .filter_map(|x| x.server_cpu_us_per_request)
                .collect();
            let p99: Vec<f64> = f.iter().map(|x| x.p99_ns).collect();
            FixedRateRow {
                test: g.test.clone(),
                server: g.server.clone(),
                connections: g.connections,
                repetitions: g.repetitions,
                failed: g.failed,
                failure: g.failure.clone(),
                rate_per_s: rate,
                offered_per_s: offered,
                achieved_per_s: achieved,
                p50_ns: med(&|x| x.p50_ns),
                p99_ns: med(&|x| x.p99_ns),
                server_cpu_us_per_request: median(cpu.iter().copied()),
                reduced,
                holds_rate: !reduced
                    && matches!((offered, achieved), (Some(o), Some(a)) if a >= o * 0.99),
                cpu_per_request: median_interval(&cpu, &boot),
                p99: median_interval(&p99, &boot),
                rank: None,
            }
        })
        .collect();
    rank_fixed(&mut rows, run, scenarios, columns);
    // Within each test (the groups come in suite order), lowest CPU per
    // request first; a server without the figure goes last.
    rows.sort_by(|a, b| {
        let test = |r: &FixedRateRow| scenarios.get(&r.test).map_or(usize::MAX, |s| s.order);
        let cpu = |r: &FixedRateRow| r.server_cpu_us_per_request.unwrap_or(f64::INFINITY);
        (test(a), &a.test, a.connections)
            .cmp(&(test(b), &b.test, b.connections))
            .then(cpu(a).total_cmp(&cpu(b)))
    });
    rows
}

/// Ranks each fixed-rate test's servers that held the rate by CPU per
/// request over rounds (lowest first), paired within rounds like the
/// throughput rows: a round slower for every server leaves the ranks alone.
fn rank_fixed(
    rows: &mut [FixedRateRow],
    run: &RunDetail,
    scenarios: &BTreeMap<String, ScenarioInfo>,
    columns: &[String],
) {
    fn pick(f: &Facts) -> Option<&FixedRateFacts> {
        match f {
            Facts::FixedRate(x) => Some(x),
            _ => None,
        }
    }
    let groups = groups(run, scenarios, columns, "fixed-rate", pick);
    let mut tests: Vec<(String, u32)> = Vec::new();
    for r in rows.iter() {
        if !tests.contains(&(r.test.clone(), r.connections)) {
            tests.push((r.test.clone(), r.connections));
        }
    }
    for (test, connections) in tests {
        let held: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                rows[i].test == test && rows[i].connections == connections && rows[i].holds_rate
            })
            .collect();
        let by_round: Vec<Vec<(u32, f64)>> = held
            .iter()
            .map(|&i| {
                groups
                    .iter()
                    .find(|g| {
                        g.test == test && g.connections == connections && g.server == rows[i].server
                    })
                    .map_or_else(Vec::new, |g| {
                        g.facts
                            .iter()
                            .filter_map(|(f, m)| {
                                Some((m.key.repetition, f.server_cpu_us_per_request?))
                            })
                            .collect()
                    })
            })
            .collect();
        let rounds = by_round
            .iter()
            .flatten()
            .map(|(r, _)| *r as usize)
            .max()
            .unwrap_or(0);
        let table = Rounds::new(
            by_round
                .iter()
                .map(|v| {
                    let mut out = vec![None; rounds];
                    for &(r, x) in v {
                        if r >= 1 {
                            out[r as usize - 1] = Some(x);
                        }
                    }
                    out
                })
                .collect(),
        );
        let ranking = rank_row(&table, false, &[], &Bootstrap::default());
        for (k, &i) in held.iter().enumerate() {
            rows[i].rank = ranking.rank[k];
        }
    }
}

pub(crate) fn sweep_metrics(s: &SweepFacts) -> Vec<(String, &'static str, f64)> {
    let mut m = vec![("sweep_peak_rps".to_string(), "1/s", s.peak_rps)];
    m.push(("sweep_slo_p99".into(), "ns", s.slo_p99_ns));
    if let Some(k) = s.knee_per_s {
        m.push(("sweep_knee".into(), "1/s", k));
    }
    for (i, st) in s.steps.iter().enumerate() {
        let p = format!("sweep_step{}", i + 1);
        m.push((format!("{p}_offered"), "1/s", st.offered_per_s));
        m.push((format!("{p}_achieved"), "1/s", st.achieved_per_s));
        m.push((format!("{p}_p50"), "ns", st.p50_ns));
        m.push((format!("{p}_p99"), "ns", st.p99_ns));
        m.push((format!("{p}_p99.9"), "ns", st.p999_ns));
        if let Some(c) = st.server_cpu_us_per_request {
            m.push((format!("{p}_server_cpu_per_request"), "us", c));
        }
    }
    m
}

pub(crate) fn fixed_metrics(x: &FixedRateFacts) -> Vec<(String, &'static str, f64)> {
    let mut m = vec![
        ("fixed_rate".to_string(), "1/s", x.rate_per_s),
        ("fixed_offered".into(), "1/s", x.offered_per_s),
        ("fixed_achieved".into(), "1/s", x.achieved_per_s),
        ("fixed_p50".into(), "ns", x.p50_ns),
        ("fixed_p99".into(), "ns", x.p99_ns),
    ];
    if let Some(c) = x.server_cpu_us_per_request {
        m.push(("fixed_server_cpu_per_request".into(), "us", c));
    }
    m
}

fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{}/s", thousands(x.round() as u64)))
}

/// The knee as a phrase: "12,000/s", or "none (p99 ≤ 10.00ms)".
pub(crate) fn knee_text(r: &SweepRow) -> String {
    match (r.knee_per_s, r.slo_p99_ns) {
        (Some(k), _) => rate(Some(k)),
        (None, Some(slo)) => format!("none (p99 ≤ {})", format_duration_ns(slo)),
        (None, None) => "-".into(),
    }
}

/// The offered rate, saying when it is below the suite's.
pub(crate) fn offered_text(r: &FixedRateRow) -> String {
    if r.reduced {
        format!(
            "{} (suite's {} too fast)",
            rate(r.offered_per_s),
            rate(r.rate_per_s)
        )
    } else {
        rate(r.offered_per_s)
    }
}

pub(crate) fn cpu_text(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.1} µs"))
}

/// "12.5 µs ±2%": the median CPU per request with its spread.
fn cpu_interval_text(r: &FixedRateRow) -> String {
    let spread = crate::suite_table::spread_text(r.cpu_per_request.and_then(|e| e.half_width()));
    match spread {
        Some(s) => format!("{} {s}", cpu_text(r.server_cpu_us_per_request)),
        None => cpu_text(r.server_cpu_us_per_request),
    }
}

/// "1.00ms [0.95ms–1.10ms]": the median p99 with its interval.
fn p99_interval_text(r: &FixedRateRow) -> String {
    let median = r.p99_ns.map_or("-".into(), format_duration_ns);
    match r.p99.and_then(|e| e.ci95) {
        Some((lo, hi)) => format!(
            "{median} [{}–{}]",
            format_duration_ns(lo),
            format_duration_ns(hi)
        ),
        None => median,
    }
}

/// "#1–2", "not ranked: did not hold the rate", or "-".
fn fixed_rank_text(r: &FixedRateRow) -> String {
    if !r.holds_rate {
        return "not ranked: did not hold the rate".into();
    }
    crate::suite_table::rank_text(r.rank).unwrap_or_else(|| "-".into())
}

pub(crate) fn sweep_section(sweeps: &[SweepRow]) -> Option<KindSection> {
    if sweeps.is_empty() {
        return None;
    }
    let heads = sweeps
        .iter()
        .map(|r| {
            vec![
                r.test.clone(),
                r.server.clone(),
                rate(r.peak_rps),
                knee_text(r),
            ]
        })
        .collect();
    let steps = sweeps
        .iter()
        .flat_map(|r| {
            r.steps.iter().map(|s| {
                vec![
                    r.test.clone(),
                    r.server.clone(),
                    format!(
                        "{} ({:.0}%)",
                        rate(Some(s.offered_per_s)),
                        s.fraction * 100.0
                    ),
                    rate(Some(s.achieved_per_s)),
                    format_duration_ns(s.p50_ns),
                    format_duration_ns(s.p99_ns),
                    format_duration_ns(s.p999_ns),
                    cpu_text(s.server_cpu_us_per_request) + if s.client_bound { " C" } else { "" },
                ]
            })
        })
        .collect();
    Some(KindSection {
        id: "rate-sweep",
        title: "Latency against offered load",
        legend: "The closed-loop peak, then open-loop steps at shares of it; latency from each \
                 request's intended send time, so a server that falls behind shows it. The knee \
                 is the highest offered rate up to which every step met the SLO with at least \
                 99% of its rate achieved. Medians over the repetitions; C: the client was the limit at that step."
            .into(),
        tables: vec![
            KindTable::new(&["test", "server", "peak", "knee"], heads),
            KindTable::new(
                &[
                    "test",
                    "server",
                    "offered",
                    "achieved",
                    "p50",
                    "p99",
                    "p99.9",
                    "server CPU per request",
                ],
                steps,
            ),
        ],
    })
}

pub(crate) fn fixed_section(fixed: &[FixedRateRow]) -> Option<KindSection> {
    if fixed.is_empty() {
        return None;
    }
    let rows = fixed
        .iter()
        .map(|r| {
            vec![
                r.test.clone(),
                r.server.clone(),
                offered_text(r),
                rate(r.achieved_per_s),
                p99_interval_text(r),
                cpu_interval_text(r),
                fixed_rank_text(r),
            ]
        })
        .collect();
    Some(KindSection {
        id: "fixed-rate",
        title: "Server CPU at a fixed rate",
        legend: "Every server offered the same rate (less where it could not keep up, said so), \
                 ranked by the server's CPU time per answered request, lowest first: efficiency \
                 at equal work, and what ranks servers the client cannot saturate. Medians over \
                 the rounds; ±x%: half the bootstrap 95% interval of the CPU per request over \
                 its median; p99 [its 95% interval]; rank: the rank interval among the servers \
                 that held the rate (paired within rounds); a server that did not hold it is \
                 shown, not ranked. Rows of fewer than 5 rounds carry no interval."
            .into(),
        tables: vec![KindTable::new(
            &[
                "test",
                "server",
                "offered",
                "achieved",
                "p99",
                "server CPU per request",
                "rank",
            ],
            rows,
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::{measurement, run};
    use netbench_records::facts::SweepStep;

    fn sweep(peak: f64, knee: Option<f64>) -> Facts {
        let step = |fraction: f64, p99_ms: f64| SweepStep {
            fraction,
            offered_per_s: peak * fraction,
            achieved_per_s: peak * fraction,
            p50_ns: 1e5,
            p99_ns: p99_ms * 1e6,
            p999_ns: p99_ms * 2e6,
            errors: 0,
            server_cpu_us_per_request: Some(20.0),
            client_bound: false,
        };
        // The report reads the knee from the steps: with one, the first
        // step (at half the peak) meets the SLO; without, it misses.
        let first_p99_ms = if knee.is_some() { 1.0 } else { 50.0 };
        Facts::RateSweep(SweepFacts {
            peak_rps: peak,
            slo_p99_ns: 10e6,
            steps: vec![step(0.5, first_p99_ms), step(1.0, 50.0)],
            knee_per_s: knee,
        })
    }

    fn fixed(offered: f64, cpu: Option<f64>) -> Facts {
        Facts::FixedRate(FixedRateFacts {
            rate_per_s: 5000.0,
            offered_per_s: offered,
            achieved_per_s: offered,
            p50_ns: 1e5,
            p99_ns: 1e6,
            server_cpu_us_per_request: cpu,
        })
    }

    const SUITE: &str = "[[scenarios]]\nname = \"sweep\"\nendpoint = \"blank\"\n\
        connections = [10]\nkind = \"rate-sweep\"\n\
        [[scenarios]]\nname = \"fixed\"\nendpoint = \"blank\"\nconnections = [10]\n\
        kind = \"fixed-rate\"\nrate = 5000\n";

    #[test]
    fn a_knee_missing_in_most_repetitions_is_none() {
        assert_eq!(
            median_knee([Some(5000.0), None, Some(6000.0)]),
            Some(5000.0)
        );
        assert_eq!(median_knee([Some(5000.0), None, None]), None);
        let r = run(
            SUITE,
            vec![
                measurement("a", "sweep", 10, 1, Some(sweep(10000.0, None)), None),
                measurement("a", "sweep", 10, 2, Some(sweep(12000.0, None)), None),
                measurement("b", "sweep", 10, 1, Some(sweep(8000.0, Some(4000.0))), None),
            ],
        );
        let rows = sweep_rows(&r, &crate::kinds::scenarios(&r), &["a".into(), "b".into()]);
        assert_eq!(rows[0].peak_rps, Some(11000.0));
        assert_eq!(knee_text(&rows[0]), "none (p99 ≤ 10.00ms)");
        assert_eq!(knee_text(&rows[1]), "4,000/s");
        assert_eq!(rows[0].steps.len(), 2);
        assert_eq!(rows[0].steps[1].offered_per_s, 11000.0);
        assert_eq!(rows[0].steps[1].p99_ns, 50e6);
    }

    #[test]
    fn the_fixed_rate_ranks_by_cpu_per_request_lowest_first() {
        let r = run(
            SUITE,
            vec![
                measurement("a", "fixed", 10, 1, Some(fixed(5000.0, Some(30.0))), None),
                measurement("a", "fixed", 10, 2, Some(fixed(5000.0, Some(34.0))), None),
                // b could not keep up: offered less, and said so.
                measurement("b", "fixed", 10, 1, Some(fixed(3600.0, Some(12.5))), None),
            ],
        );
        let rows = fixed_rows(&r, &crate::kinds::scenarios(&r), &["a".into(), "b".into()]);
        let order: Vec<&str> = rows.iter().map(|r| r.server.as_str()).collect();
        assert_eq!(order, ["b", "a"]);
        assert_eq!(rows[1].server_cpu_us_per_request, Some(32.0));
        assert!(rows[0].reduced && !rows[1].reduced);
        assert_eq!(offered_text(&rows[0]), "3,600/s (suite's 5,000/s too fast)");
        let mut md = Vec::new();
        crate::kinds::write_markdown(
            &mut md,
            &crate::kinds::KindSections {
                fixed_rate: rows,
                ..Default::default()
            },
        )
        .unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains(
                "| fixed | b | 3,600/s (suite's 5,000/s too fast) | 3,600/s | 1.00ms | 12.5 µs | not ranked: did not hold the rate |"
            ),
            "{md}"
        );
    }

    /// Issue 43 item 6: over rounds, CPU per request and p99 carry their
    /// intervals, the servers that held the rate are ranked with rank
    /// intervals, one that did not is shown and not ranked.
    #[test]
    fn issue43_the_fixed_rate_ranks_with_intervals_over_rounds() {
        let speed = [1.0, 1.5, 1.0, 0.98, 1.02, 1.01, 0.99];
        let mut ms = Vec::new();
        for (i, s) in speed.iter().enumerate() {
            let round = i as u32 + 1;
            let jitter = 1.0 + 0.002 * f64::from(round % 3);
            ms.push(measurement(
                "a",
                "fixed",
                10,
                round,
                Some(fixed(5000.0, Some(30.0 * s * jitter))),
                None,
            ));
            ms.push(measurement(
                "b",
                "fixed",
                10,
                round,
                Some(fixed(5000.0, Some(20.0 * s / jitter))),
                None,
            ));
            ms.push(measurement(
                "c",
                "fixed",
                10,
                round,
                Some(fixed(3000.0, Some(5.0 * s))),
                None,
            ));
        }
        let mut r = run(SUITE, ms);
        r.servers.push(netbench_records::fixtures::server("c", ""));
        let columns = ["a".to_string(), "b".into(), "c".into()];
        let rows = fixed_rows(&r, &crate::kinds::scenarios(&r), &columns);
        let by = |s: &str| rows.iter().find(|r| r.server == s).unwrap();
        assert_eq!(by("b").rank.unwrap().ci95, Some((1, 1)));
        assert_eq!(by("a").rank.unwrap().ci95, Some((2, 2)));
        assert!(!by("c").holds_rate && by("c").rank.is_none());
        let cpu = by("a").cpu_per_request.unwrap();
        assert_eq!(cpu.n, 7);
        assert!(
            cpu.ci95.is_some() && (cpu.value - 30.0).abs() < 1.0,
            "{cpu:?}"
        );
        assert!(by("a").p99.unwrap().ci95.is_some());
        let table = &fixed_section(&rows).unwrap().tables[0];
        let a = table.rows.iter().find(|r| r[1] == "a").unwrap();
        assert_eq!(a[6], "#2");
        assert!(a[5].starts_with("30.") && a[5].contains(" ±"), "{a:?}");
        assert_eq!(a[4], "1.00ms [1.00ms–1.00ms]");
    }
}
