//! How each throughput row (a test at one connection count) is ranked,
//! computed once for every output (issue 43). A row measured in
//! [`MIN_ROUNDS`] rounds or more is ranked over its rounds: each cell's
//! median requests/s with its bootstrap interval, its relative figure (its
//! requests/s over the row's geometric mean in the same round) with its
//! interval, its rank interval, the paired ratio of each server to the
//! next in the ranking, the A/A twins' verdict, tiers cut where neighbours
//! are told apart, and the leader marked only when its paired ratio to
//! every other server is told apart from 1. A row of fewer rounds (runs
//! stored before rounds, with 2 or 3 repetitions) keeps the older rules
//! over repetitions: Welch's interval for the leader, Scott–Knott for the
//! tiers ([`crate::ranking`], [`crate::tiers`]), and no intervals.

use std::collections::BTreeMap;

use netbench_stats::{paired_ratio, rank_row, relative, Bootstrap, Estimate, Rounds, MIN_ROUNDS};
use serde::Serialize;

use crate::ranking::{rank_row as welch_standing, Standing};
use crate::suite_table::CellStats;
use crate::tiers::{tiers, TierConfig};

/// The variant a suite gives a server named twice (its A/A twin).
pub const TWIN: &str = "twin";

/// How a row was ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowMethod {
    /// Over paired rounds: rank intervals, relative figures, paired ratios.
    Rounds,
    /// Fewer than [`MIN_ROUNDS`] rounds: Welch's leader and Scott–Knott's
    /// tiers over the repetitions, no intervals.
    Repetitions,
}

/// Two servers of a row and the paired ratio of the first's requests/s
/// over the second's, within rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedRatio {
    pub a: String,
    pub b: String,
    /// The median over rounds of a / b, with its 95% interval; None when
    /// no round has both.
    pub ratio: Option<Estimate>,
    /// Whether the interval lies wholly on one side of 1.
    pub told_apart: bool,
}

/// A server measured twice (`NAME` and `NAME:twin`, the same build and
/// flags in another process): whether the row could tell them apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwinVerdict {
    pub server: String,
    pub twin: String,
    /// The twin over the server, paired within rounds.
    pub ratio: Option<Estimate>,
    /// Whether the ratio's interval contains 1 (None without an interval:
    /// too few rounds).
    pub tied: Option<bool>,
}

/// One throughput row's ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowRanking {
    pub test: String,
    pub connections: u32,
    pub method: RowMethod,
    /// Rounds in which any server of the row has a figure.
    pub rounds: usize,
    /// Servers best first (by the median relative figure over rounds; by
    /// the median requests/s for [`RowMethod::Repetitions`]).
    pub order: Vec<String>,
    /// Each server of `order` over the next one (rounds only).
    pub adjacent: Vec<PairedRatio>,
    /// Each pair of A/A twins in the row.
    pub twins: Vec<TwinVerdict>,
    /// The row's leaders (its first tier, or the leader and those tied
    /// with it) whose cells the client could not saturate (C): their order
    /// here is the client's noise.
    pub client_bound_leaders: Vec<String>,
    /// The rows that rank those servers instead ("fixed-rate c=100": server
    /// CPU per request at a fixed rate), when the run has any.
    pub ranked_by: Vec<String>,
}

impl RowRanking {
    /// The note a reader needs at the top of a row whose leaders are
    /// client-bound; None otherwise.
    pub fn client_bound_note(&self) -> Option<String> {
        if self.client_bound_leaders.is_empty() {
            return None;
        }
        let instead = if self.ranked_by.is_empty() {
            "this run has no fixed-rate row to rank them by server CPU per request".to_string()
        } else {
            format!(
                "server CPU per request at a fixed rate ranks them: {}",
                self.ranked_by.join(", ")
            )
        };
        Some(format!(
            "{} c={}: the leaders ({}) are client-bound (C): the client could not saturate \
             them, so their order here is the client's noise; {instead}.",
            self.test,
            self.connections,
            self.client_bound_leaders.join(", ")
        ))
    }
}

/// The twin of `server` in `columns`, if the suite named it twice.
fn twin_of<'a>(server: &str, columns: &'a [String]) -> Option<&'a String> {
    let want = format!("{server}:{TWIN}");
    columns.iter().find(|c| **c == want)
}

/// Ranks every row of `cells` (rows and columns in the table's order),
/// setting each cell's standing, tier, intervals and rank, and returns
/// each row's ranking.
pub(crate) fn rank_rows(
    rows: &[(String, u32)],
    columns: &[String],
    cells: &mut BTreeMap<(String, u32, String), CellStats>,
) -> Vec<RowRanking> {
    let boot = Bootstrap::default();
    let mut out = Vec::new();
    for (test, connections) in rows {
        let keys: Vec<(String, u32, String)> = columns
            .iter()
            .map(|c| (test.clone(), *connections, c.clone()))
            .collect();
        let present: Vec<usize> = (0..keys.len())
            .filter(|&i| cells.contains_key(&keys[i]))
            .collect();
        let servers: Vec<&String> = present.iter().map(|&i| &columns[i]).collect();
        let rounds_max = present
            .iter()
            .flat_map(|&i| cells[&keys[i]].by_round.iter().map(|(r, _)| *r))
            .max()
            .unwrap_or(0) as usize;
        let table = Rounds::new(
            present
                .iter()
                .map(|&i| {
                    let mut v = vec![None; rounds_max];
                    for &(r, x) in &cells[&keys[i]].by_round {
                        if r >= 1 {
                            v[r as usize - 1] = Some(x);
                        }
                    }
                    v
                })
                .collect(),
        );
        // Each cell's median over rounds, with its interval.
        for &i in &present {
            let c = cells.get_mut(&keys[i]).expect("present");
            let values: Vec<f64> = c.by_round.iter().map(|(_, x)| *x).collect();
            c.rps_median = netbench_stats::median_interval(&values, &boot);
        }
        let counted = table.rounds_with_figures();
        let mut row = RowRanking {
            test: test.clone(),
            connections: *connections,
            method: RowMethod::Repetitions,
            rounds: counted,
            order: Vec::new(),
            adjacent: Vec::new(),
            twins: Vec::new(),
            client_bound_leaders: Vec::new(),
            ranked_by: Vec::new(),
        };
        if counted >= MIN_ROUNDS {
            row.method = RowMethod::Rounds;
            let rel = relative(&table);
            for (k, &i) in present.iter().enumerate() {
                let c = cells.get_mut(&keys[i]).expect("present");
                c.relative_values = rel[k].iter().flatten().copied().collect();
            }
            let untiered: Vec<bool> = present.iter().map(|&i| cells[&keys[i]].noisy()).collect();
            let ranking = rank_row(&table, true, &untiered, &boot);
            let name = |k: usize| servers[k].clone();
            // The leader: ahead of every other server beyond noise.
            let top = ranking.order.first().copied();
            let standing: Vec<Standing> = (0..present.len())
                .map(|k| match top {
                    Some(t) if k == t => {
                        let alone =
                            ranking.order.iter().skip(1).all(|&o| {
                                paired(&table, t, o, &boot).is_some_and(|e| e.excludes(1.0))
                            });
                        if alone {
                            Standing::Leader
                        } else {
                            Standing::Tied
                        }
                    }
                    Some(t) if ranking.relative[k].is_some() => {
                        if paired(&table, t, k, &boot).is_some_and(|e| e.excludes(1.0)) {
                            Standing::Behind
                        } else {
                            Standing::Tied
                        }
                    }
                    _ => Standing::Behind,
                })
                .collect();
            for (k, &i) in present.iter().enumerate() {
                let c = cells.get_mut(&keys[i]).expect("present");
                c.relative = ranking.relative[k];
                c.relative_half_width = c.relative.and_then(|e| e.half_width());
                c.rank = ranking.rank[k];
                c.tier = ranking.tier[k];
                c.standing = standing[k];
            }
            row.order = ranking.order.iter().map(|&k| name(k)).collect();
            row.adjacent = ranking
                .adjacent
                .iter()
                .map(|p| PairedRatio {
                    a: name(p.a),
                    b: name(p.b),
                    ratio: p.ratio,
                    told_apart: p.told_apart(),
                })
                .collect();
        } else {
            let values: Vec<Option<Vec<f64>>> = present
                .iter()
                .map(|&i| Some(cells[&keys[i]].rps_values.clone()))
                .collect();
            let slices: Vec<Option<&[f64]>> = values.iter().map(|v| v.as_deref()).collect();
            let standings = welch_standing(&slices);
            let usable: Vec<Option<&[f64]>> = present
                .iter()
                .zip(&slices)
                .map(|(&i, v)| v.filter(|_| !cells[&keys[i]].noisy()))
                .collect();
            let tiered = tiers(&usable, &TierConfig::default()).tier;
            for (k, &i) in present.iter().enumerate() {
                let c = cells.get_mut(&keys[i]).expect("present");
                c.standing = standings[k];
                c.tier = tiered[k];
            }
            let mut order: Vec<usize> = (0..present.len())
                .filter(|&k| cells[&keys[present[k]]].rps.is_some())
                .collect();
            let median = |k: usize| cells[&keys[present[k]]].rps.map_or(f64::NAN, |s| s.median);
            order.sort_by(|&x, &y| median(y).total_cmp(&median(x)).then(x.cmp(&y)));
            row.order = order.iter().map(|&k| servers[k].clone()).collect();
        }
        // A/A twins.
        for (k, s) in servers.iter().enumerate() {
            if let Some(twin) = twin_of(s, columns) {
                if let Some(t) = servers.iter().position(|x| *x == twin) {
                    let ratio = paired_ratio(table.of(t), table.of(k), &boot);
                    row.twins.push(TwinVerdict {
                        server: (*s).clone(),
                        twin: twin.clone(),
                        ratio,
                        tied: ratio.and_then(|e| e.contains(1.0)),
                    });
                }
            }
        }
        // Leaders the client could not saturate.
        let leaders: Vec<&String> = match row.method {
            RowMethod::Rounds => row
                .order
                .iter()
                .filter(|s| {
                    let c = &cells[&(test.clone(), *connections, (*s).clone())];
                    c.tier == Some(1) || matches!(c.standing, Standing::Leader | Standing::Tied)
                })
                .collect(),
            RowMethod::Repetitions => row
                .order
                .iter()
                .filter(|s| {
                    let c = &cells[&(test.clone(), *connections, (*s).clone())];
                    matches!(c.standing, Standing::Leader | Standing::Tied)
                })
                .collect(),
        };
        row.client_bound_leaders = leaders
            .into_iter()
            .filter(|s| cells[&(test.clone(), *connections, (*s).clone())].client_bound)
            .cloned()
            .collect();
        out.push(row);
    }
    out
}

fn paired(table: &Rounds, a: usize, b: usize, boot: &Bootstrap) -> Option<Estimate> {
    paired_ratio(table.of(a), table.of(b), boot)
}

/// How precise the run's ranking came out, for its summary line: how many
/// cells reached ±5% (the relative figure's interval) and what the twins
/// did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Precision {
    /// Cells with a relative figure's interval (rows of 5 rounds or more).
    pub cells: usize,
    /// Of those, cells whose relative interval is within ±5%.
    pub within_5pct: usize,
    /// Twin pairs with an interval, and how many of them tied.
    pub twin_rows: usize,
    pub twins_tied: usize,
    /// The widest half-width of a twin ratio's interval (relative to its
    /// median), when there is one.
    pub twins_widest: Option<f64>,
}

impl Precision {
    pub(crate) fn of(
        cells: &BTreeMap<(String, u32, String), CellStats>,
        rows: &[RowRanking],
    ) -> Precision {
        let judged: Vec<f64> = cells
            .values()
            .filter_map(|c| c.relative_half_width)
            .collect();
        let twins: Vec<&TwinVerdict> = rows
            .iter()
            .flat_map(|r| &r.twins)
            .filter(|t| t.tied.is_some())
            .collect();
        Precision {
            cells: judged.len(),
            within_5pct: judged.iter().filter(|&&w| w <= 0.05).count(),
            twin_rows: twins.len(),
            twins_tied: twins.iter().filter(|t| t.tied == Some(true)).count(),
            twins_widest: twins
                .iter()
                .filter_map(|t| t.ratio.and_then(|e| e.half_width()))
                .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w)))),
        }
    }

    /// The summary line: "cells within ±5% ...; twins ...". None when no
    /// row had enough rounds for intervals.
    pub fn line(&self) -> Option<String> {
        if self.cells == 0 && self.twin_rows == 0 {
            return None;
        }
        let mut s = format!(
            "{} of {} cells within ±5% (half the 95% interval of the relative figure, over its \
             median)",
            self.within_5pct, self.cells
        );
        if self.twin_rows > 0 {
            s.push_str(&format!(
                "; A/A twins tied in {} of {} rows",
                self.twins_tied, self.twin_rows
            ));
            if let Some(w) = self.twins_widest {
                s.push_str(&format!(" (ratio intervals within ±{:.1}%)", w * 100.0));
            }
        }
        Some(s)
    }
}
