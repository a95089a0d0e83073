//! The table people publish, rebuilt from a stored run: rows are test ×
//! connections, columns are servers, each cell the median requests/s over
//! the rounds with its tier and rank interval in its row
//! ([`crate::model::rows`]), its spread, p99 latency and every flag that
//! qualifies the number.

use std::collections::BTreeMap;

use netbench_engine::LoadResult;
use netbench_records::{MeasurementStatus, RunDetail};
use serde::Serialize;

use crate::flag::{marks, Flag};
use crate::format::{format_duration_ns, thousands};
use crate::kinds::{in_throughput_tables, kind_of, scenarios};
use crate::model::rows::{rank_rows, RowRanking};
use crate::ranking::Standing;
use crate::stats::{summarize, too_noisy, Summary};
use netbench_stats::{Estimate, RankInterval};

/// What a cell of the table shows.
pub(crate) const CELL_LEGEND: &str =
    "cells: median requests/s over the rounds and its tier; ±x%: half the 95% interval of its \
    relative figure (its requests/s over the row's geometric mean in the same round), over \
    that figure's median; #a–b: its rank interval in the row; median p99 latency. Rows of fewer \
    than 5 rounds carry no interval.";

/// One table cell: the repetitions of one server at one test and
/// connection count.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CellStats {
    pub rps: Option<Summary>,
    /// The median requests/s over the rounds with its bootstrap 95%
    /// interval (none below 5 rounds).
    pub rps_median: Option<Estimate>,
    /// Its requests/s over the row's geometric mean in the same round:
    /// the median over rounds with its interval (rows of 5 rounds or more).
    pub relative: Option<Estimate>,
    /// The cell's "±x%": half the relative figure's interval over its
    /// median (0.05 is ±5%).
    pub relative_half_width: Option<f64>,
    /// Its rank in its row and the rank's 95% interval (rows of 5 rounds or
    /// more).
    pub rank: Option<RankInterval>,
    /// Where the server stands in its row (see [`crate::ranking`]).
    #[serde(serialize_with = "standing_name")]
    pub standing: Standing,
    /// The cell's tier in its row (1 = the fastest group; servers not told
    /// apart share one), from the same figures as the standing; None for a
    /// cell without a good repetition and for a noisy one, which is left
    /// out of its row's tiers.
    pub tier: Option<usize>,
    /// The noise recorded around the cell's repetitions, the worst of them.
    pub noise: Option<CellNoise>,
    /// Each good repetition's requests/s, in order.
    #[serde(skip)]
    pub rps_values: Vec<f64>,
    /// The same with the round (repetition number) each was measured in.
    #[serde(skip)]
    pub by_round: Vec<(u32, f64)>,
    /// Its relative figure in each round it has one.
    #[serde(skip)]
    pub relative_values: Vec<f64>,
    pub p99_ns: Option<f64>,
    pub client_bound: bool,
    pub errors: u64,
    pub failed: usize,
    pub repetitions: usize,
    /// The first failure's reason, for the notes under the table.
    pub failure: Option<String>,
    /// "short-lived" or "pipelined" for those rows (marked K and P); None
    /// for plain keep-alive throughput.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
}

impl CellStats {
    /// Whether the cell's own spread makes it unusable: the figures its row
    /// is ranked by (its relative figures in a row ranked over rounds, else
    /// its requests/s) have a CV above [`crate::stats::NOISY_CV`].
    pub fn noisy(&self) -> bool {
        if self.relative_values.is_empty() {
            self.rps.as_ref().is_some_and(too_noisy)
        } else {
            summarize(&self.relative_values).is_some_and(|s| too_noisy(&s))
        }
    }

    /// Whether the measurements set `flag` (never [`Flag::VerifyWarnings`],
    /// which comes from verify, not from the measurements).
    pub(crate) fn has(&self, flag: Flag) -> bool {
        match flag {
            Flag::ClientBound => self.client_bound,
            Flag::Noisy => self.noisy(),
            Flag::Errors => self.errors > 0,
            Flag::Failed => self.failed > 0,
            Flag::Loaded => self
                .noise
                .is_some_and(|n| n.other_busy_cores >= crate::flag::LOADED_CORES),
            Flag::Pipelined => self.kind == Some("pipelined"),
            Flag::ShortLived => self.kind == Some("short-lived"),
            Flag::VerifyWarnings => false,
        }
    }

    /// Flags that qualify the number, as short marks.
    pub fn flags(&self) -> String {
        marks(
            Flag::MEASURED
                .into_iter()
                .chain(Flag::KIND)
                .filter(|&f| self.has(f)),
        )
    }
}

/// The noise around a cell: the worst of its repetitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CellNoise {
    /// Largest share of CPU time the host stole during a repetition.
    pub steal: f64,
    /// Most cores busy outside netbench and the server during a repetition.
    pub other_busy_cores: f64,
    /// Most cores busy outside netbench just before a repetition.
    pub other_busy_before_cores: f64,
    /// Time waited for quiet before the repetitions, together.
    pub quiet_wait_s: f64,
    /// Largest change of the machine-speed probe within a repetition.
    pub probe_drift: f64,
}

impl CellNoise {
    /// What made the cell noisy, in a phrase, when anything stands out.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.steal >= 0.02 {
            parts.push(format!("host steal up to {:.0}%", self.steal * 100.0));
        }
        if self.other_busy_cores >= 0.1 {
            parts.push(format!(
                "other processes kept {:.1} cores busy",
                self.other_busy_cores
            ));
        }
        if self.quiet_wait_s > 0.0 {
            parts.push(format!("waited {:.1} s for quiet", self.quiet_wait_s));
        }
        if self.probe_drift.abs() >= 0.05 {
            parts.push(format!(
                "machine speed moved {:+.0}% during a repetition",
                self.probe_drift * 100.0
            ));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

fn standing_name<S: serde::Serializer>(s: &Standing, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(match s {
        Standing::Leader => "leader",
        Standing::Tied => "tied",
        Standing::Behind => "behind",
    })
}

/// The run's median machine-speed probe (kept in the run's info; no figure
/// is normalised by it any more: it narrowed nothing, see docs/method.md).
pub(crate) fn control_reference(run: &RunDetail) -> Option<f64> {
    crate::stats::median(
        &run.measurements
            .iter()
            .filter_map(|m| m.noise.map(|n| n.probe_server_ns))
            .collect::<Vec<f64>>(),
    )
}

/// The table's content: row keys in suite order, column labels, cells.
#[derive(Debug, Clone)]
pub struct RunTable {
    pub rows: Vec<(String, u32)>,
    pub columns: Vec<String>,
    pub cells: BTreeMap<(String, u32, String), CellStats>,
    /// Each row's ranking, in `rows`' order.
    pub rankings: Vec<RowRanking>,
}

pub(crate) fn label(server: &str, variant: &str) -> String {
    if variant.is_empty() {
        server.to_string()
    } else {
        format!("{server}:{variant}")
    }
}

/// Groups a run's throughput measurements (keep-alive, short-lived and
/// pipelined) into table cells; the other kinds have tables of their own
/// (see [`crate::kinds`]) and are neither shown here nor counted as failed.
pub fn run_table(run: &RunDetail) -> RunTable {
    let scenarios = scenarios(run);
    let mut rows: Vec<(String, u32)> = run
        .scenarios
        .iter()
        .filter(|sc| sc.in_throughput_tables())
        .flat_map(|sc| sc.connections.iter().map(move |&c| (sc.name.clone(), c)))
        .collect();
    let mut columns: Vec<String> = run
        .servers
        .iter()
        .filter(|s| s.excluded_reason.is_none())
        .map(|s| label(&s.server, &s.variant))
        .collect();
    let mut raw: BTreeMap<(String, u32, String), Vec<&netbench_records::Measurement>> =
        BTreeMap::new();
    let mut kinds: BTreeMap<(String, u32, String), &'static str> = BTreeMap::new();
    for m in &run.measurements {
        let col = label(&m.key.server, &m.key.variant);
        let kind = kind_of(m, &scenarios);
        if !in_throughput_tables(kind) {
            if !columns.contains(&col) {
                columns.push(col);
            }
            continue;
        }
        if kind != "throughput" {
            kinds.insert(
                (m.key.scenario.clone(), m.key.connections, col.clone()),
                kind,
            );
        }
        if !columns.contains(&col) {
            columns.push(col.clone());
        }
        let row = (m.key.scenario.clone(), m.key.connections);
        if !rows.contains(&row) {
            rows.push(row.clone());
        }
        raw.entry((row.0, row.1, col)).or_default().push(m);
    }
    let mut cells: BTreeMap<(String, u32, String), CellStats> = raw
        .into_iter()
        .map(|(k, ms)| {
            let mut c = CellStats {
                repetitions: ms.len(),
                kind: kinds.get(&k).copied(),
                ..CellStats::default()
            };
            let mut rps = Vec::new();
            let mut p99 = Vec::new();
            let mut noise: Option<CellNoise> = None;
            for m in ms {
                if m.status == MeasurementStatus::Failed {
                    c.failed += 1;
                    if c.failure.is_none() {
                        c.failure = m.failure.clone();
                    }
                    continue;
                }
                let Some(r) = m
                    .result_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str::<LoadResult>(j).ok())
                else {
                    continue;
                };
                rps.push(r.rps);
                c.by_round.push((m.key.repetition, r.rps));
                if let Some(n) = m.noise {
                    let w = noise.get_or_insert_with(CellNoise::default);
                    w.steal = w.steal.max(n.steal);
                    w.other_busy_cores = w.other_busy_cores.max(n.other_busy_cores);
                    w.other_busy_before_cores =
                        w.other_busy_before_cores.max(n.other_busy_before_cores);
                    w.quiet_wait_s += n.quiet_wait_s;
                    if n.probe_drift.abs() > w.probe_drift.abs() {
                        w.probe_drift = n.probe_drift;
                    }
                }
                if r.latency.count > 0 {
                    p99.push(r.latency.p99_ns);
                }
                c.client_bound |= r.verdict.client_bound;
                c.errors += r.errors.total();
            }
            c.rps = summarize(&rps);
            c.rps_values = rps;
            c.noise = noise;
            c.p99_ns = crate::stats::median(&p99);
            (k, c)
        })
        .collect();
    let rankings = rank_rows(&rows, &columns, &mut cells);
    RunTable {
        rows,
        columns,
        cells,
        rankings,
    }
}

pub(crate) fn cell_text(c: Option<&CellStats>) -> String {
    let Some(c) = c else {
        return "-".to_string();
    };
    let Some(rps) = c.rps else {
        return format!(
            "failed {}/{} {}",
            c.failed,
            c.repetitions,
            Flag::Failed.letter()
        );
    };
    let spread = spread_text(c.relative_half_width).map_or(String::new(), |t| format!(" {t}"));
    let rank = rank_text(c.rank).map_or(String::new(), |t| format!(" {t}"));
    let p99 = c
        .p99_ns
        .map_or(String::new(), |p| format!(" p99 {}", format_duration_ns(p)));
    let flags = c.flags();
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" {flags}")
    };
    format!(
        "{}{}{}{spread}{rank}{p99}{flags}",
        standing_mark(c.standing),
        thousands(rps.median.round() as u64),
        tier_mark(c.tier).map_or(String::new(), |t| format!(" {t}"))
    )
}

/// "±2%" (one decimal below 1%): the cell's spread as every table writes it.
pub(crate) fn spread_text(half_width: Option<f64>) -> Option<String> {
    let w = half_width? * 100.0;
    Some(if w < 1.0 {
        format!("±{w:.1}%")
    } else {
        format!("±{w:.0}%")
    })
}

/// "#2–4", or "#1" when the interval is one rank; None without an interval.
pub(crate) fn rank_text(rank: Option<RankInterval>) -> Option<String> {
    let (lo, hi) = rank?.ci95?;
    Some(if lo == hi {
        format!("#{lo}")
    } else {
        format!("#{lo}–{hi}")
    })
}

/// `T2`: a cell's tier as the tables write it beside its figure.
pub(crate) fn tier_mark(tier: Option<usize>) -> Option<String> {
    tier.map(|t| format!("T{t}"))
}

/// What the tiers mean, in one line under every throughput table.
pub(crate) const TIER_LEGEND: &str =
    "T1, T2…: tiers of the row, T1 the fastest, each a run of the \
    ranking: a new tier starts where a server's paired ratio to the one before it (within rounds) \
    is told apart from 1 (rows of fewer than 5 rounds: Scott–Knott on log requests/s); see \
    docs/steady-state.md.";

/// The mark before a cell's figure: ▲ leads its row, = tied for the lead.
pub(crate) fn standing_mark(s: Standing) -> &'static str {
    match s {
        Standing::Leader => "▲",
        Standing::Tied => "=",
        Standing::Behind => "",
    }
}

/// What the leader marks mean.
pub(crate) const STANDING_LEGEND: &str = "▲ leads its row: ahead of every other server beyond \
    noise (the 95% interval of its paired ratio to each, within rounds, above 1; Welch's interval \
    over repetitions in rows of fewer than 5 rounds); = tied for the lead: not told apart from \
    the top.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::load_result as result;
    use crate::terminal_view::write_run_table;
    use netbench_records::{CellKey, Measurement, Noise};

    fn rep(server: &str, rep: u32, rps: f64, probe: Option<f64>) -> Measurement {
        Measurement {
            id: Some(i64::from(rep)),
            key: CellKey {
                server: server.into(),
                variant: String::new(),
                scenario: "blank".into(),
                connections: 100,
                repetition: rep,
            },
            status: MeasurementStatus::Ok,
            failure: None,
            result_json: Some(result(rps)),
            histogram: None,
            client_bound: false,
            started_at: String::new(),
            duration_s: 1.0,
            samples: Vec::new(),
            noise: probe.map(|p| Noise {
                probe_server_ns: p,
                probe_client_ns: p,
                steal: 0.05,
                ..Noise::default()
            }),
            facts: None,
            server_cpu_s: None,
            network: None,
            warmup: None,
            server_output_cut: None,
        }
    }

    fn run(measurements: Vec<Measurement>) -> RunDetail {
        RunDetail {
            events: Vec::new(),
            servers: vec![
                netbench_records::fixtures::server("a", ""),
                netbench_records::fixtures::server("b", ""),
            ],
            measurements,
            ..netbench_records::fixtures::run(1, "t")
        }
    }

    /// Issue 43: ranked over rounds. Round 3 ran at half speed for both
    /// servers (a slow episode of the host); within each round a is 5%
    /// ahead of b. Paired within rounds, a leads beyond noise, each has a
    /// narrow relative interval and a certain rank; the slow round makes
    /// a's own median interval wide and does not make it noisy.
    #[test]
    fn issue43_a_slow_round_cancels_and_five_percent_leads() {
        let speed = [1.0, 1.02, 0.5, 0.99, 1.01, 1.0, 0.98, 1.03];
        let wobble = [1.0, 1.004, 0.997, 1.002, 0.999, 1.001, 0.998, 1.003];
        let mut ms = Vec::new();
        for (i, (s, w)) in speed.iter().zip(wobble).enumerate() {
            let round = i as u32 + 1;
            ms.push(rep("a", round, 105_000.0 * s * w, Some(1000.0)));
            ms.push(rep("b", round, 100_000.0 * s / w, Some(1000.0)));
        }
        let t = run_table(&run(ms));
        let cell = |s: &str| &t.cells[&("blank".to_string(), 100, s.to_string())];
        let (a, b) = (cell("a"), cell("b"));
        assert_eq!(
            (a.standing, b.standing),
            (Standing::Leader, Standing::Behind)
        );
        assert_eq!((a.tier, b.tier), (Some(1), Some(2)));
        assert_eq!(a.rank.unwrap().ci95, Some((1, 1)));
        assert_eq!(b.rank.unwrap().ci95, Some((2, 2)));
        assert!(a.relative_half_width.unwrap() < 0.01, "{:?}", a.relative);
        let (lo, hi) = a.rps_median.unwrap().ci95.unwrap();
        assert!(hi / lo > 1.02, "{lo} {hi}");
        assert!(!a.noisy() && a.flags().is_empty(), "{}", a.flags());
        assert_eq!(a.noise.unwrap().steal, 0.05);
        assert!(a
            .noise
            .unwrap()
            .describe()
            .unwrap()
            .contains("steal up to 5%"));
        assert!(
            cell_text(Some(a)).starts_with("▲105,053 T1 ±0.3% #1 p99"),
            "{}",
            cell_text(Some(a))
        );
        let row = &t.rankings[0];
        assert_eq!(row.method, crate::model::RowMethod::Rounds);
        assert_eq!(
            (row.rounds, row.order.clone()),
            (8, vec!["a".to_string(), "b".into()])
        );
        let pair = &row.adjacent[0];
        assert!(pair.told_apart, "{pair:?}");
        assert!((pair.ratio.unwrap().value - 1.05).abs() < 0.01, "{pair:?}");
    }

    /// Runs stored before rounds (three repetitions): no intervals, and
    /// the older rules over repetitions rank the row.
    #[test]
    fn a_row_of_three_repetitions_keeps_the_rules_over_repetitions() {
        let t = run_table(&run(vec![
            rep("a", 1, 100.0, None),
            rep("a", 2, 80.0, None),
            rep("a", 3, 120.0, None),
            rep("b", 1, 90.0, None),
            rep("b", 2, 91.0, None),
            rep("b", 3, 89.0, None),
        ]));
        let a = &t.cells[&("blank".to_string(), 100, "a".to_string())];
        assert!(a.relative.is_none() && a.rank.is_none() && a.noise.is_none());
        assert_eq!(a.rps_median.unwrap().ci95, None);
        assert_eq!(t.rankings[0].method, crate::model::RowMethod::Repetitions);
        // 100 ± 20 over three repetitions: not told apart from 90 ± 1.
        assert_eq!(a.standing, Standing::Tied);
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].standing,
            Standing::Tied
        );
        // 20% CV: spread, but not past the noisy line; the two share a tier.
        assert_eq!(cell_text(Some(a)), "=100 T1 p99 2.00ms");
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].tier,
            Some(1)
        );
    }

    /// Issue 28: tiers in place of the blanket `~`. Two servers a few
    /// percent apart share T1, one 5x slower is T2, a cell whose own
    /// repetitions spread past 25% is marked `~` and left out of the tiers,
    /// and a failed cell has none.
    #[test]
    fn issue28_a_row_is_cut_into_tiers_and_only_a_spread_cell_is_noisy() {
        let reps = |server: &str, values: &[f64]| -> Vec<Measurement> {
            values
                .iter()
                .zip(1..)
                .map(|(&v, i)| rep(server, i, v, None))
                .collect()
        };
        let mut ms = Vec::new();
        ms.extend(reps("a", &[100_000.0, 104_000.0, 97_000.0]));
        ms.extend(reps("b", &[98_000.0, 101_000.0, 95_000.0]));
        ms.extend(reps("c", &[20_000.0, 21_000.0, 19_500.0]));
        ms.extend(reps("d", &[10_000.0, 60_000.0, 30_000.0]));
        ms.push(Measurement {
            status: MeasurementStatus::Failed,
            failure: Some("crashed".into()),
            result_json: None,
            ..rep("e", 1, 0.0, None)
        });
        let t = run_table(&run(ms));
        let cell = |s: &str| &t.cells[&("blank".to_string(), 100, s.to_string())];
        let tiers: Vec<Option<usize>> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|s| cell(s).tier)
            .collect();
        assert_eq!(tiers, [Some(1), Some(1), Some(2), None, None]);
        let flags: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .map(|s| cell(s).flags())
            .collect();
        assert_eq!(flags, ["", "", "", "~"]);
        assert!(cell_text(Some(cell("c"))).starts_with("20,000 T2 p99"));
        let noisy = cell_text(Some(cell("d")));
        // Tied for the lead by Welch's interval, which its spread makes wide,
        // but without a tier.
        assert_eq!(noisy, "=30,000 p99 2.00ms ~");
        assert_eq!(cell_text(Some(cell("e"))), "failed 1/1 F");
        let mut text = Vec::new();
        write_run_table(&mut text, &crate::build_report(&run(Vec::new()))).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains(TIER_LEGEND), "{text}");
        assert!(
            text.contains("~ too noisy to use, no tier (CV > 25%)"),
            "{text}"
        );
        assert!(
            text.contains("server processes: fixed warm-up, fresh process per cell"),
            "{text}"
        );
    }

    /// Over rounds, a cell whose requests/s swing with the host's speed
    /// (past a CV of 25%) but not against the other servers of its rounds
    /// is not noisy; one that swings against them is, and has no tier.
    #[test]
    fn the_noisy_mark_judges_the_figures_the_row_is_ranked_by() {
        let speed = [1.0, 0.5, 1.6, 1.0, 0.6, 1.5];
        let own = [1.0, 1.0, 1.0, 2.2, 0.45, 1.0];
        let mut ms = Vec::new();
        for (i, (s, o)) in speed.iter().zip(own).enumerate() {
            let round = i as u32 + 1;
            ms.push(rep("a", round, 100.0 * s, None));
            ms.push(rep("b", round, 50.0 * s, None));
            ms.push(rep("c", round, 30.0 * s * o, None));
        }
        let mut r = run(ms);
        r.servers.push(netbench_records::fixtures::server("c", ""));
        let t = run_table(&r);
        let cell = |s: &str| &t.cells[&("blank".to_string(), 100, s.to_string())];
        assert!(cell("a").rps.unwrap().cv > 0.25);
        assert!(!cell("a").noisy() && cell("a").flags().is_empty());
        assert_eq!((cell("a").tier, cell("b").tier), (Some(1), Some(2)));
        assert!(cell("c").noisy() && cell("c").tier.is_none());
    }

    /// Issue 27 item 10: the sampler recorded cores kept busy from outside,
    /// but a cell measured beside another load looked like any other.
    #[test]
    fn issue27_a_cell_loaded_from_outside_is_flagged() {
        let loaded = |server: &str, rep_no: u32, busy: f64| {
            let mut m = rep(server, rep_no, 100.0, Some(1000.0));
            if let Some(n) = m.noise.as_mut() {
                n.other_busy_cores = busy;
            }
            m
        };
        let t = run_table(&run(vec![
            loaded("a", 1, 0.1),
            loaded("a", 2, 0.9),
            loaded("b", 1, 0.1),
            loaded("b", 2, 0.2),
        ]));
        let cell = |s: &str| &t.cells[&("blank".to_string(), 100, s.to_string())];
        assert!(cell("a").flags().contains('L'), "{}", cell("a").flags());
        assert!(!cell("b").flags().contains('L'), "{}", cell("b").flags());
        let mut text = Vec::new();
        write_run_table(
            &mut text,
            &crate::build_report(&run(vec![loaded("a", 1, 0.9), loaded("b", 1, 0.0)])),
        )
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("L other processes kept half a core"),
            "{text}"
        );
        assert!(
            text.contains("other processes kept 0.9 cores busy"),
            "{text}"
        );
    }
}
