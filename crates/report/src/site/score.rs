//! The composite score of a run (docs/site.md): per server, the geometric
//! mean over the run's throughput cells of its median over the best median
//! of that cell, with a bootstrap 95% interval. Pure: figures in, scores
//! out, the same every time for the same run.

use serde::Serialize;

use crate::model::Report;

/// Bootstrap resamples per run. 2,000 puts the 2.5% and 97.5% points on
/// the 50th and 1,951st sorted value: a Monte Carlo error well under the
/// spread of a few repetitions, and a standard run's 25 servers × 4 cells
/// take a few milliseconds.
pub const RESAMPLES: usize = 2_000;

/// A cell needs this many good repetitions to be scored: with one there is
/// nothing to resample, and an interval of width zero would claim a
/// precision the run does not have.
pub const MIN_REPETITIONS: usize = 2;

/// Seeds the resampling with the run's id, so the same store always gives
/// the same intervals, and two runs do not share their random draws.
const SEED: u64 = 0x6e65_7462_656e_6368; // "netbench"

/// One server's composite score in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerScore {
    pub server: String,
    /// The geometric mean of its ratios to each scored cell's best median:
    /// 1 when it leads every cell it was scored on.
    pub score: f64,
    /// The bootstrap 95% interval (2.5th and 97.5th percentiles of the
    /// resampled scores), widened to reach the point where the resamples
    /// all fall on one side of it (see [`score_rows`]). Never shown apart
    /// from the score.
    pub low: f64,
    pub high: f64,
    /// The cells it was scored on, of the run's scored cells (`rows`).
    pub cells: usize,
}

/// The scores of one run, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunScores {
    pub run: i64,
    pub scores: Vec<ServerScore>,
    /// Cells (test × connections) with two or more servers that have
    /// [`MIN_REPETITIONS`]: the cells a score can be taken over.
    pub rows: usize,
    /// Servers measured in the run but not scored, each with why.
    pub unscored: Vec<(String, String)>,
}

impl RunScores {
    pub fn of(&self, server: &str) -> Option<&ServerScore> {
        self.scores.iter().find(|s| s.server == server)
    }
}

/// The composite scores of a run's servers, from each cell's requests/s
/// over its repetitions.
pub fn run_scores(r: &Report) -> RunScores {
    let servers = &r.columns;
    let mut rows: Vec<Vec<(usize, Vec<f64>)>> = Vec::new();
    for t in &r.tests {
        for &conns in &t.connections {
            let row: Vec<(usize, Vec<f64>)> = servers
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    let c = r.cell(&t.name, conns, s)?;
                    let v = &c.stats.rps_values;
                    (v.len() >= MIN_REPETITIONS && v.iter().all(|x| x.is_finite() && *x > 0.0))
                        .then(|| (i, v.to_vec()))
                })
                .collect();
            rows.push(row);
        }
    }
    let seed = SEED ^ (r.run.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let (scored, used_rows) = score_rows(&rows, servers.len(), RESAMPLES, seed);
    let mut scores = Vec::new();
    let mut unscored = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        match scored[i] {
            Some((score, low, high, cells)) => scores.push(ServerScore {
                server: s.clone(),
                score,
                low,
                high,
                cells,
            }),
            None => {
                let measured = r
                    .cells
                    .iter()
                    .any(|c| &c.server == s && c.stats.rps.is_some());
                let why = if measured {
                    format!("no cell with {MIN_REPETITIONS} or more good repetitions beside another server's")
                } else {
                    "no good repetition of a throughput cell".to_string()
                };
                unscored.push((s.clone(), why));
            }
        }
    }
    scores.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.server.cmp(&b.server)));
    RunScores {
        run: r.run.id,
        scores,
        rows: used_rows,
        unscored,
    }
}

/// The score of each of `servers` over `rows` (each row: the servers that
/// have a usable cell, with its values): `(score, low, high, cells)`, None
/// for a server with no scored cell; and how many rows were scored.
///
/// A row with fewer than two servers is left out: being the only one
/// measured says nothing about speed. A server missing from a row is scored
/// over the rows it has, and the count says so.
///
/// Each resample draws every cell's repetitions again with replacement and
/// takes the medians, the best of each row and the ratios anew, so the
/// leader's own noise enters every ratio. The best of noisy medians is
/// biased upwards, so a server that leads every row of the run can lead all
/// of them in few resamples, and the percentile interval would then lie
/// wholly below its point of 1; the interval is widened to reach the point
/// rather than shown beside a point it excludes.
pub(crate) fn score_rows(
    rows: &[Vec<(usize, Vec<f64>)>],
    servers: usize,
    resamples: usize,
    seed: u64,
) -> (Vec<Option<Scored>>, usize) {
    let rows: Vec<&Vec<(usize, Vec<f64>)>> = rows.iter().filter(|r| r.len() >= 2).collect();
    let mut counts = vec![0usize; servers];
    for row in &rows {
        for (s, _) in row.iter() {
            counts[*s] += 1;
        }
    }
    let geomean = |medians: &dyn Fn(usize, usize) -> f64| -> Vec<f64> {
        let mut logs = vec![0.0f64; servers];
        for (ri, row) in rows.iter().enumerate() {
            let best = (0..row.len())
                .map(|ci| medians(ri, ci))
                .fold(f64::MIN, f64::max);
            for (ci, (s, _)) in row.iter().enumerate() {
                logs[*s] += (medians(ri, ci) / best).ln();
            }
        }
        logs.iter()
            .zip(&counts)
            .map(|(l, &n)| {
                if n == 0 {
                    f64::NAN
                } else {
                    (l / n as f64).exp()
                }
            })
            .collect()
    };
    let point = geomean(&|ri, ci| median(&rows[ri][ci].1));

    let mut rng = netbench_stats::SplitMix64::new(seed);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); servers];
    let mut scratch = Vec::new();
    for _ in 0..resamples {
        let medians: Vec<Vec<f64>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|(_, values)| {
                        scratch.clear();
                        scratch.extend((0..values.len()).map(|_| values[rng.below(values.len())]));
                        median(&scratch)
                    })
                    .collect()
            })
            .collect();
        for (s, g) in geomean(&|ri, ci| medians[ri][ci]).into_iter().enumerate() {
            if counts[s] > 0 {
                draws[s].push(g);
            }
        }
    }
    let scores = (0..servers)
        .map(|s| {
            if counts[s] == 0 {
                return None;
            }
            let d = &mut draws[s];
            d.sort_by(f64::total_cmp);
            let n = d.len();
            // Nearest rank: the 2.5% and 97.5% points of the sorted draws.
            let low = d[((0.025 * n as f64).ceil() as usize).clamp(1, n) - 1];
            let high = d[((0.975 * n as f64).ceil() as usize).clamp(1, n) - 1];
            Some((point[s], low.min(point[s]), high.max(point[s]), counts[s]))
        })
        .collect();
    (scores, rows.len())
}

/// A server's (score, low, high, cells scored).
pub(crate) type Scored = (f64, f64, f64, usize);

/// The median of a cell's values (never empty here).
fn median(xs: &[f64]) -> f64 {
    netbench_stats::median(xs).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[(usize, &[f64])]) -> Vec<(usize, Vec<f64>)> {
        cells.iter().map(|(s, v)| (*s, v.to_vec())).collect()
    }

    #[test]
    fn a_server_that_leads_every_cell_scores_one() {
        let rows = vec![
            row(&[(0, &[100.0, 102.0, 101.0]), (1, &[50.0, 51.0, 49.0])]),
            row(&[(0, &[200.0, 198.0, 205.0]), (1, &[150.0, 149.0, 151.0])]),
        ];
        let (s, used) = score_rows(&rows, 2, RESAMPLES, 1);
        assert_eq!(used, 2);
        let (score, low, high, cells) = s[0].unwrap();
        assert_eq!((score, high, cells), (1.0, 1.0, 2));
        assert!(low > 0.95 && low <= 1.0, "{low}");
        // The other: its medians over the leader's, its interval around it.
        let (score, low, high, _) = s[1].unwrap();
        assert!((score - (50.0f64 / 101.0 * 150.0 / 200.0).sqrt()).abs() < 1e-12);
        assert!(low < score && score < high, "{low} {score} {high}");
    }

    #[test]
    fn the_interval_contains_the_point_even_when_the_leader_is_close() {
        // Two servers that noise cannot tell apart, over many cells: the
        // leader of the point leads all cells in few resamples.
        let rows: Vec<_> = (0..6)
            .map(|i| {
                let a = [100.0 + i as f64, 95.0, 104.0];
                let b = [99.0, 103.0, 96.0 + i as f64];
                row(&[(0, &a), (1, &b)])
            })
            .collect();
        let (s, _) = score_rows(&rows, 2, RESAMPLES, 7);
        for (score, low, high, _) in s.into_iter().flatten() {
            assert!(low <= score && score <= high, "{low} {score} {high}");
            assert!(score <= 1.0 && high <= 1.0);
        }
    }

    #[test]
    fn the_same_figures_give_the_same_interval() {
        let rows = vec![row(&[
            (0, &[10.0, 12.0]),
            (1, &[11.0, 9.0]),
            (2, &[5.0, 7.0]),
        ])];
        let a = score_rows(&rows, 3, RESAMPLES, 42);
        assert_eq!(a, score_rows(&rows, 3, RESAMPLES, 42));
        // Another seed draws other resamples; the point does not move.
        let b = score_rows(&rows, 3, RESAMPLES, 43);
        assert_eq!(a.0[2].unwrap().0, b.0[2].unwrap().0);
    }

    #[test]
    fn missing_cells_and_lone_rows_are_counted_not_guessed() {
        let rows = vec![
            // Server 2 was not measured here.
            row(&[(0, &[100.0, 100.0]), (1, &[50.0, 50.0])]),
            row(&[(0, &[100.0, 100.0]), (1, &[50.0, 50.0]), (2, &[25.0, 25.0])]),
            // Alone in its row: leaves the score as it was.
            row(&[(3, &[1.0, 1.0])]),
        ];
        let (s, used) = score_rows(&rows, 4, 200, 1);
        assert_eq!(used, 2);
        for (server, expected, cells) in [(0, 1.0, 2), (1, 0.5, 2), (2, 0.25, 1)] {
            let (score, low, high, n) = s[server].unwrap();
            assert_eq!(n, cells, "server {server}");
            // Repetitions that never differ: nothing to resample.
            for x in [score, low, high] {
                assert!((x - expected).abs() < 1e-12, "server {server}: {x}");
            }
        }
        assert_eq!(s[3], None);
    }
}
