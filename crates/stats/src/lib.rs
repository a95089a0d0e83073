//! netbench's statistics, in one leaf crate that imports nothing of
//! netbench: the runner's settle rule and the report's figures take them
//! from here, so a "median" or a "±5%" means one thing everywhere.
//!
//! - [`median`], [`summarize`]: one median and one summary of a set of
//!   values (with Student's t interval of the mean, kept for the JSON of
//!   reports that always carried it).
//! - [`median_interval`]: the median with a seeded percentile-bootstrap
//!   95% interval ([`Estimate`]); [`Estimate::half_width`] is the one
//!   "±x%": half the interval's width relative to the median.
//! - Over the rounds of a row (server × round, [`Rounds`]):
//!   [`paired_ratio`] of two servers within rounds, [`relative`] figures (a
//!   server's value over the row's geometric mean in the same round),
//!   [`rank_intervals`] from resampling rounds, and [`rank_row`], which
//!   puts them together with tiers.
//!
//! Why rounds and pairing: on a shared machine whole rounds run slower (a
//! slow episode of the host slows every server measured then). A figure
//! taken relative to the other servers of the same round cancels that; a
//! figure taken alone carries it. The assumptions and limits are in
//! [`bootstrap`] and in docs/method.md.

pub mod bootstrap;
mod rng;
mod rounds;
mod summary;

pub use bootstrap::{
    median_interval, paired_ratio, resample_interval, settled, Bootstrap, Estimate, MIN_ROUNDS,
};
pub use rng::SplitMix64;
pub use rounds::{
    rank_intervals, rank_row, relative, relative_figures, Pair, RankInterval, Rounds, RowRanking,
};
pub use summary::{median, median_in_place, quantile_sorted, summarize, t975, Summary};
