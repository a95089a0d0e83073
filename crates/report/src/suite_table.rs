//! The table people publish, rebuilt from a stored run: rows are test ×
//! connections, columns are servers, each cell the median requests/s over
//! the repetitions with its tier in its row ([`crate::tiers`]), its spread,
//! p99 latency and every flag that qualifies the number.

use std::collections::BTreeMap;

use netbench_engine::LoadResult;
use netbench_records::{MeasurementStatus, RunDetail};
use serde::Serialize;

use crate::flag::{marks, Flag};
use crate::format::{format_duration_ns, thousands};
use crate::kinds::{in_throughput_tables, kind_of, scenarios};
use crate::ranking::{rank_row, Standing};
use crate::stats::{summarize, too_noisy, Summary};
use crate::tiers::{tiers, TierConfig};

/// What a cell of the table shows.
pub(crate) const CELL_LEGEND: &str =
    "cells: median requests/s over the repetitions and its tier, ±half the 95% \
    confidence interval of the mean (relative), median p99 latency.";

/// One table cell: the repetitions of one server at one test and
/// connection count.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CellStats {
    pub rps: Option<Summary>,
    /// The same requests/s normalised by the machine-speed control (each
    /// repetition × its server-CPU probe ÷ the run's median probe); None
    /// when a repetition lacks the control.
    pub rps_normalised: Option<Summary>,
    /// Where the server stands in its row (see [`crate::ranking`]).
    #[serde(serialize_with = "standing_name")]
    pub standing: Standing,
    /// The cell's tier in its row (1 = the fastest group; servers not told
    /// apart share one), from the same figures as the standing; None for a
    /// cell without a good repetition and for a noisy one, which is left
    /// out of its row's tiers.
    pub tier: Option<usize>,
    /// Whether its row is ranked by the normalised figures (every cell of
    /// the row has the machine-speed control), which are then also the
    /// ones whose spread makes a cell noisy.
    #[serde(skip)]
    pub ranked_normalised: bool,
    /// The noise recorded around the cell's repetitions, the worst of them.
    pub noise: Option<CellNoise>,
    /// Each good repetition's requests/s, raw and normalised, in order.
    #[serde(skip)]
    pub rps_values: Vec<f64>,
    #[serde(skip)]
    pub rps_normalised_values: Vec<f64>,
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
    /// is ranked by have a CV above [`crate::stats::NOISY_CV`].
    pub fn noisy(&self) -> bool {
        let ranked = if self.ranked_normalised {
            self.rps_normalised.as_ref()
        } else {
            self.rps.as_ref()
        };
        ranked.is_some_and(too_noisy)
    }

    /// The figures its row ranks it by: each good repetition's requests/s,
    /// normalised when the row is.
    pub fn ranked_values(&self) -> &[f64] {
        if self.ranked_normalised {
            &self.rps_normalised_values
        } else {
            &self.rps_values
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

/// The run's reference for the machine-speed control: the median probe of
/// its measurements, so normalised figures stay in requests/s at the run's
/// typical speed.
pub(crate) fn control_reference(run: &RunDetail) -> Option<f64> {
    median(
        run.measurements
            .iter()
            .filter_map(|m| m.noise.map(|n| n.probe_server_ns))
            .collect(),
    )
}

/// The table's content: row keys in suite order, column labels, cells.
#[derive(Debug, Clone)]
pub struct RunTable {
    pub rows: Vec<(String, u32)>,
    pub columns: Vec<String>,
    pub cells: BTreeMap<(String, u32, String), CellStats>,
}

pub(crate) fn label(server: &str, variant: &str) -> String {
    if variant.is_empty() {
        server.to_string()
    } else {
        format!("{server}:{variant}")
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
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
    let reference = control_reference(run);
    let mut cells: BTreeMap<(String, u32, String), CellStats> = raw
        .into_iter()
        .map(|(k, ms)| {
            let mut c = CellStats {
                repetitions: ms.len(),
                kind: kinds.get(&k).copied(),
                ..CellStats::default()
            };
            let mut rps = Vec::new();
            let mut normalised = Vec::new();
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
                if let (Some(n), Some(reference)) = (m.noise, reference) {
                    normalised.push(r.rps * n.probe_server_ns / reference);
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
            // Normalised only when every good repetition carries the control.
            if normalised.len() == rps.len() {
                c.rps_normalised = summarize(&normalised);
                c.rps_normalised_values = normalised;
            }
            c.rps_values = rps;
            c.noise = noise;
            c.p99_ns = median(p99);
            (k, c)
        })
        .collect();
    rank_rows(&rows, &columns, &mut cells);
    RunTable {
        rows,
        columns,
        cells,
    }
}

/// Marks each row's leader, or its tied leaders, and cuts the row into tiers,
/// by the normalised figures when the whole row has them, else by the raw
/// ones. A noisy cell is left out of the tiers: its spread would enter the
/// row's pooled noise, and it would be placed with more confidence than its
/// own repetitions carry.
fn rank_rows(
    rows: &[(String, u32)],
    columns: &[String],
    cells: &mut BTreeMap<(String, u32, String), CellStats>,
) {
    for (scenario, conns) in rows {
        let keys: Vec<(String, u32, String)> = columns
            .iter()
            .map(|c| (scenario.clone(), *conns, c.clone()))
            .collect();
        let row: Vec<Option<&CellStats>> = keys.iter().map(|k| cells.get(k)).collect();
        let normalised = row
            .iter()
            .flatten()
            .all(|c| c.rps_normalised.is_some() || c.rps_values.is_empty());
        for k in &keys {
            if let Some(c) = cells.get_mut(k) {
                c.ranked_normalised = normalised;
            }
        }
        let row: Vec<Option<&CellStats>> = keys.iter().map(|k| cells.get(k)).collect();
        let values: Vec<Option<&[f64]>> =
            row.iter().map(|c| c.map(|c| c.ranked_values())).collect();
        let standings = rank_row(&values);
        let usable: Vec<Option<&[f64]>> = row
            .iter()
            .map(|c| c.filter(|c| !c.noisy()).map(|c| c.ranked_values()))
            .collect();
        let tiers = tiers(&usable, &TierConfig::default()).tier;
        for ((k, s), tier) in keys.iter().zip(standings).zip(tiers) {
            if let Some(c) = cells.get_mut(k) {
                c.standing = s;
                c.tier = tier;
            }
        }
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
    let spread = match rps.ci95 {
        Some((lo, hi)) if rps.median > 0.0 => {
            format!(" ±{:.0}%", (hi - lo) / 2.0 / rps.median * 100.0)
        }
        _ => String::new(),
    };
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
        "{}{}{}{spread}{p99}{flags}",
        standing_mark(c.standing),
        thousands(rps.median.round() as u64),
        tier_mark(c.tier).map_or(String::new(), |t| format!(" {t}"))
    )
}

/// `T2`: a cell's tier as the tables write it beside its figure.
pub(crate) fn tier_mark(tier: Option<usize>) -> Option<String> {
    tier.map(|t| format!("T{t}"))
}

/// What the tiers mean, in one line under every throughput table.
pub(crate) const TIER_LEGEND: &str = "T1, T2…: tiers of the row, T1 the fastest; servers in one \
    tier are not told apart at these repetitions (Scott–Knott on log requests/s, at most 5% of \
    rows of equal servers split, gaps under 5% never; see docs/steady-state.md).";

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
    noise (Welch's 95% interval of the ratio, on the normalised figures when the run has the \
    machine-speed control); = tied for the lead: not told apart from the top at these \
    repetitions.";

/// The run's cells in normalised form, for the table under the main one:
/// the share of cells whose 95% interval is within ±5%, raw and normalised.
pub(crate) fn settled_shares(t: &RunTable) -> Option<(usize, usize, usize)> {
    let within = |s: &Option<Summary>| crate::stats::within(s.as_ref(), 0.05);
    let judged: Vec<&CellStats> = t
        .cells
        .values()
        .filter(|c| c.rps_normalised.is_some() && c.rps_values.len() >= 2)
        .collect();
    (!judged.is_empty()).then(|| {
        (
            judged.len(),
            judged.iter().filter(|c| within(&c.rps)).count(),
            judged.iter().filter(|c| within(&c.rps_normalised)).count(),
        )
    })
}

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
            servers: vec![
                netbench_records::fixtures::server("a", ""),
                netbench_records::fixtures::server("b", ""),
            ],
            measurements,
            ..netbench_records::fixtures::run(1, "t")
        }
    }

    #[test]
    fn the_control_scales_each_repetition_by_its_probe() {
        // Server a looks noisy raw (100, 80, 120) but each repetition ran at
        // a machine speed that explains it; b is steady but on a steady
        // machine. Probes (ns): median 1000.
        let t = run_table(&run(vec![
            rep("a", 1, 100.0, Some(1000.0)),
            rep("a", 2, 80.0, Some(1250.0)),
            rep("a", 3, 120.0, Some(1000.0 / 1.2)),
            rep("b", 1, 50.0, Some(1000.0)),
            rep("b", 2, 51.0, Some(1000.0)),
            rep("b", 3, 49.0, Some(1000.0)),
        ]));
        let a = &t.cells[&("blank".to_string(), 100, "a".to_string())];
        for v in &a.rps_normalised_values {
            assert!((v - 100.0).abs() < 1e-9, "{:?}", a.rps_normalised_values);
        }
        assert!(a.rps.unwrap().cv > 0.15);
        assert!(a.rps_normalised.unwrap().cv < 1e-9);
        assert_eq!(a.noise.unwrap().steal, 0.05);
        assert!(a
            .noise
            .unwrap()
            .describe()
            .unwrap()
            .contains("steal up to 5%"));
        // On the normalised figures a leads beyond noise; raw it would not.
        assert_eq!(a.standing, Standing::Leader);
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].standing,
            Standing::Behind
        );
        assert_eq!(settled_shares(&t), Some((2, 1, 2)));
    }

    #[test]
    fn without_the_control_the_raw_figures_rank() {
        let t = run_table(&run(vec![
            rep("a", 1, 100.0, None),
            rep("a", 2, 80.0, None),
            rep("a", 3, 120.0, None),
            rep("b", 1, 90.0, None),
            rep("b", 2, 91.0, None),
            rep("b", 3, 89.0, None),
        ]));
        let a = &t.cells[&("blank".to_string(), 100, "a".to_string())];
        assert!(a.rps_normalised.is_none() && a.noise.is_none());
        // 100 ± 20 over three repetitions: not told apart from 90 ± 1.
        assert_eq!(a.standing, Standing::Tied);
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].standing,
            Standing::Tied
        );
        // 20% CV: spread, but not past the noisy line; the two share a tier.
        assert_eq!(cell_text(Some(a)), "=100 T1 ±50% p99 2.00ms");
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].tier,
            Some(1)
        );
        assert_eq!(settled_shares(&t), None);
        let mut text = Vec::new();
        write_run_table(&mut text, &crate::build_report(&run(Vec::new()))).unwrap();
        assert!(!String::from_utf8(text)
            .unwrap()
            .contains("normalised by the machine-speed control"));
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
        assert!(cell_text(Some(cell("c"))).starts_with("20,000 T2 ±"));
        let noisy = cell_text(Some(cell("d")));
        // Tied for the lead by Welch's interval, which its spread makes wide,
        // but without a tier.
        assert_eq!(noisy, "=30,000 ±208% p99 2.00ms ~");
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

    /// With the machine-speed control, a cell that is spread raw but steady
    /// once normalised is ranked by its normalised figures, gets a tier,
    /// and is not noisy.
    #[test]
    fn the_noisy_mark_judges_the_figures_the_row_is_ranked_by() {
        let t = run_table(&run(vec![
            rep("a", 1, 100.0, Some(1000.0)),
            rep("a", 2, 60.0, Some(1000.0 / 0.6)),
            rep("a", 3, 150.0, Some(1000.0 / 1.5)),
            rep("b", 1, 50.0, Some(1000.0)),
            rep("b", 2, 51.0, Some(1000.0)),
            rep("b", 3, 49.0, Some(1000.0)),
        ]));
        let a = &t.cells[&("blank".to_string(), 100, "a".to_string())];
        assert!(a.rps.unwrap().cv > 0.25 && a.ranked_normalised);
        assert!(!a.noisy() && a.flags().is_empty(), "{}", a.flags());
        assert_eq!(a.tier, Some(1));
        assert_eq!(
            t.cells[&("blank".to_string(), 100, "b".to_string())].tier,
            Some(2)
        );
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
