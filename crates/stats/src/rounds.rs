//! A row's figures round by round (server × round), and what ranks them:
//! each server's relative figure (its value over the row's geometric mean
//! in the same round), rank intervals from resampling whole rounds, the
//! paired ratio of neighbours in the ranking, and tiers cut where a
//! neighbour is told apart. Rounds are resampled whole, so whatever a round
//! shares across servers (a slow episode of the host) stays shared in
//! every resample and cancels from every relative figure and ratio.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{median_interval, paired_ratio, usable};
use crate::bootstrap::{Bootstrap, Estimate, MIN_ROUNDS};
use crate::rng::SplitMix64;
use crate::summary::median_in_place;

/// One row's figures: `values[server][round]`, None where the server has
/// no usable figure in that round (a failed measurement, or a value that is
/// not finite and above zero). Every server has the same number of rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Rounds {
    values: Vec<Vec<Option<f64>>>,
    rounds: usize,
}

impl Rounds {
    /// The row from each server's values by round; shorter lists are
    /// padded with None, unusable values become None.
    pub fn new(values: Vec<Vec<Option<f64>>>) -> Rounds {
        let rounds = values.iter().map(Vec::len).max().unwrap_or(0);
        let values = values
            .into_iter()
            .map(|mut v| {
                v.resize(rounds, None);
                v.into_iter().map(|x| x.filter(|&x| usable(x))).collect()
            })
            .collect();
        Rounds { values, rounds }
    }

    pub fn servers(&self) -> usize {
        self.values.len()
    }

    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// One server's values by round.
    pub fn of(&self, server: usize) -> &[Option<f64>] {
        &self.values[server]
    }

    /// Rounds in which at least one server has a figure.
    pub fn rounds_with_figures(&self) -> usize {
        (0..self.rounds)
            .filter(|&r| self.values.iter().any(|v| v[r].is_some()))
            .count()
    }
}

/// Each server's relative figure in each round: its value over the row's
/// geometric mean in that round. With a server missing from a round (a
/// failed measurement) the plain geometric mean would move with who is
/// missing, so the round's level is taken from those present, each against
/// its own median: in logarithms, `rel = ln x − f_r − G`, where
/// `f_r = mean over the servers present in round r of (ln x − m_s)`, `m_s`
/// is server s's median log over the rounds and `G` the mean of the `m_s`.
/// In a round where every server has a figure this is exactly
/// `x / geometric mean of the round`.
pub fn relative(rounds: &Rounds) -> Vec<Vec<Option<f64>>> {
    let logs: Vec<Vec<Option<f64>>> = rounds
        .values
        .iter()
        .map(|v| v.iter().map(|x| x.map(f64::ln)).collect())
        .collect();
    let medians: Vec<Option<f64>> = logs
        .iter()
        .map(|v| median_in_place(&mut v.iter().flatten().copied().collect::<Vec<_>>()))
        .collect();
    let present: Vec<f64> = medians.iter().flatten().copied().collect();
    if present.is_empty() {
        return vec![vec![None; rounds.rounds]; rounds.servers()];
    }
    let g = present.iter().sum::<f64>() / present.len() as f64;
    let level: Vec<Option<f64>> = (0..rounds.rounds)
        .map(|r| {
            let d: Vec<f64> = logs
                .iter()
                .zip(&medians)
                .filter_map(|(v, m)| Some(v[r]? - (*m)?))
                .collect();
            (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64)
        })
        .collect();
    logs.iter()
        .map(|v| {
            v.iter()
                .zip(&level)
                .map(|(x, f)| Some((x.as_ref()? - f.as_ref()? - g).exp()))
                .collect()
        })
        .collect()
}

/// Each server's relative figure over the rounds: the median of its
/// per-round relative figures with its bootstrap interval; None for a
/// server without a figure.
pub fn relative_figures(rounds: &Rounds, b: &Bootstrap) -> Vec<Option<Estimate>> {
    relative(rounds)
        .iter()
        .map(|v| median_interval(&v.iter().flatten().copied().collect::<Vec<_>>(), b))
        .collect()
}

/// A server's place in its row: its rank by the median relative figure
/// (1 the best; servers with equal medians share the better rank), and the
/// 2.5th to 97.5th percentiles of its rank over resamples of the rounds
/// ("rank 2–4"); None with fewer than [`MIN_ROUNDS`] rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInterval {
    pub rank: usize,
    pub ci95: Option<(usize, usize)>,
}

/// Ranks of `medians` (None: no rank): 1 + how many are strictly better.
fn ranks_of(medians: &[Option<f64>], higher_is_better: bool) -> Vec<Option<usize>> {
    medians
        .iter()
        .map(|m| {
            let m = (*m)?;
            let better = medians
                .iter()
                .flatten()
                .filter(|&&o| if higher_is_better { o > m } else { o < m })
                .count();
            Some(better + 1)
        })
        .collect()
}

/// The nearest-rank percentile of sorted whole numbers.
fn rank_percentile(sorted: &[usize], q: f64, up: bool) -> usize {
    let h = (sorted.len() - 1) as f64 * q;
    sorted[if up { h.ceil() } else { h.floor() } as usize]
}

/// Each server's rank and rank interval, from its per-round figures
/// `relative[server][round]` (see [`relative`]). In each resample the
/// rounds are drawn with replacement, each server's median is taken over
/// the drawn rounds where it has a figure, and the servers are ranked by
/// those medians; a server's interval is the 2.5th and 97.5th percentiles
/// of its ranks (rounded outwards to whole ranks).
pub fn rank_intervals(
    relative: &[Vec<Option<f64>>],
    higher_is_better: bool,
    b: &Bootstrap,
) -> Vec<Option<RankInterval>> {
    let servers = relative.len();
    let rounds = relative.iter().map(Vec::len).max().unwrap_or(0);
    let median_over = |s: usize, picks: &mut dyn Iterator<Item = usize>, buf: &mut Vec<f64>| {
        buf.clear();
        buf.extend(picks.filter_map(|r| relative[s].get(r).copied().flatten()));
        median_in_place(buf)
    };
    let mut buf = Vec::new();
    let point: Vec<Option<f64>> = (0..servers)
        .map(|s| median_over(s, &mut (0..rounds), &mut buf))
        .collect();
    let point_ranks = ranks_of(&point, higher_is_better);
    let with_figure = relative
        .iter()
        .map(|v| v.iter().filter(|x| x.is_some()).count())
        .collect::<Vec<_>>();
    let mut drawn: Vec<Vec<usize>> = vec![Vec::with_capacity(b.resamples); servers];
    if rounds >= MIN_ROUNDS {
        let mut rng = SplitMix64::new(b.seed);
        let mut picks = vec![0usize; rounds];
        for _ in 0..b.resamples {
            for p in picks.iter_mut() {
                *p = rng.below(rounds);
            }
            let medians: Vec<Option<f64>> = (0..servers)
                .map(|s| median_over(s, &mut picks.iter().copied(), &mut buf))
                .collect();
            for (s, rank) in ranks_of(&medians, higher_is_better).into_iter().enumerate() {
                if let Some(rank) = rank {
                    drawn[s].push(rank);
                }
            }
        }
    }
    point_ranks
        .into_iter()
        .enumerate()
        .map(|(s, rank)| {
            let rank = rank?;
            let ranks = &mut drawn[s];
            let ci95 =
                (with_figure[s] >= MIN_ROUNDS && ranks.len() * 10 >= b.resamples * 9).then(|| {
                    ranks.sort_unstable();
                    (
                        rank_percentile(ranks, 0.025, false),
                        rank_percentile(ranks, 0.975, true),
                    )
                });
            Some(RankInterval { rank, ci95 })
        })
        .collect()
}

/// Two servers of a row and the paired ratio of the first over the second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    /// `a` over `b`, paired within rounds (see [`paired_ratio`]); None
    /// when no round has both.
    pub ratio: Option<Estimate>,
}

impl Pair {
    pub fn of(rounds: &Rounds, a: usize, b: usize, boot: &Bootstrap) -> Pair {
        Pair {
            a,
            b,
            ratio: paired_ratio(rounds.of(a), rounds.of(b), boot),
        }
    }

    /// Whether the interval of the ratio lies wholly on one side of 1.
    pub fn told_apart(&self) -> bool {
        self.ratio.is_some_and(|r| r.excludes(1.0))
    }
}

/// Everything that ranks one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRanking {
    /// Servers with a figure, best first by their median relative figure
    /// (equal ones in index order).
    pub order: Vec<usize>,
    /// Each server's relative figure (index order).
    pub relative: Vec<Option<Estimate>>,
    /// Each server's rank and rank interval (index order).
    pub rank: Vec<Option<RankInterval>>,
    /// Each server of `order` over the next one: `order[i]` over
    /// `order[i + 1]`.
    pub adjacent: Vec<Pair>,
    /// Each server's tier (index order; 1 the best), None for a server left
    /// out of the tiers, without a figure, or in a row of fewer than
    /// [`MIN_ROUNDS`] rounds. A tier is a run of `order`: the next tier
    /// starts at the first server (of those tiered) whose paired ratio with
    /// the tiered server before it is told apart from 1.
    pub tier: Vec<Option<usize>>,
    /// Rounds in which any server has a figure.
    pub rounds: usize,
}

/// Ranks one row. `higher_is_better` is false for figures such as CPU per
/// request; `untiered` marks servers left out of the tiers (a cell too
/// noisy to place: with its wide interval it would join tiers that are
/// apart).
pub fn rank_row(
    rounds: &Rounds,
    higher_is_better: bool,
    untiered: &[bool],
    b: &Bootstrap,
) -> RowRanking {
    let rel = relative(rounds);
    let relative: Vec<Option<Estimate>> = rel
        .iter()
        .map(|v| median_interval(&v.iter().flatten().copied().collect::<Vec<_>>(), b))
        .collect();
    let rank = rank_intervals(&rel, higher_is_better, b);
    let mut order: Vec<usize> = (0..rounds.servers())
        .filter(|&s| relative[s].is_some())
        .collect();
    let value = |s: usize| relative[s].map_or(f64::NAN, |e| e.value);
    order.sort_by(|&x, &y| {
        let c = value(x).total_cmp(&value(y));
        (if higher_is_better { c.reverse() } else { c }).then(x.cmp(&y))
    });
    let adjacent: Vec<Pair> = order
        .windows(2)
        .map(|w| Pair::of(rounds, w[0], w[1], b))
        .collect();
    let counted = rounds.rounds_with_figures();
    let mut tier = vec![None; rounds.servers()];
    if counted >= MIN_ROUNDS {
        let mut current = 0;
        let mut previous: Option<usize> = None;
        for &s in order
            .iter()
            .filter(|&&s| !untiered.get(s).copied().unwrap_or(false))
        {
            current += match previous {
                None => 1,
                Some(p) => usize::from(Pair::of(rounds, p, s, b).told_apart()),
            };
            tier[s] = Some(current);
            previous = Some(s);
        }
    }
    RowRanking {
        order,
        relative,
        rank,
        adjacent,
        tier,
        rounds: counted,
    }
}
