//! Seeded percentile bootstrap of a median (Efron 1979; the percentile
//! interval as in Efron and Tibshirani 1993, ch. 13): resample the rounds
//! with replacement, take the median of each resample, and read two
//! percentiles of those medians. Deterministic: the same values and the
//! same [`Bootstrap`] always give the same interval.
//!
//! The percentiles are the **expanded** ones (Hesterberg 2015, "What
//! teachers should know about the bootstrap", §5.3): the tails at
//! `Φ(−√(n/(n−1))·t₀.₉₇₅,ₙ₋₁)` instead of 2.5% each, which tends to the
//! plain 2.5th and 97.5th as n grows. The plain percentile interval is too
//! narrow in small samples, and for a median much too narrow: on synthetic
//! log-normal rounds it covered the true median in 90% of 400 seeds at 15
//! rounds (the resampled medians sit on order statistics, and the plain
//! percentiles fall one order statistic short on each side); the expanded
//! one covers about 95% (the tests measure it).
//!
//! # Assumptions and limits
//!
//! - The values (rounds) are independent and alike. Rounds drawn in a fresh
//!   random order each, of servers kept resident, are close to it; a slow
//!   episode of the host that lasts longer than a round makes neighbouring
//!   rounds alike, and then the interval is too narrow. Paired figures
//!   ([`crate::paired_ratio`], [`crate::relative`]) take out what a round
//!   shares across servers, which is most of such an episode.
//! - The interval of a median is discrete: with few values it is bounded
//!   by order statistics. Below [`MIN_ROUNDS`] values no interval is given
//!   (with 3 values the widest possible, smallest to largest, covers the
//!   true median only 75% of the time); at 5 it is the smallest to the
//!   largest (94%), and from 10 rounds on about 95% (the coverage tests
//!   measure it at 15).
//! - An interval is of the figure within this run: another run on another
//!   day, or another process of the same server, can differ by more (issue
//!   43 measured batch medians 24% apart). Relative figures cancel what a
//!   run shares; nothing here samples what a second run would change.

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;
use crate::summary::{median_in_place, quantile_sorted, t975};

/// Fewer values than this get a value but no interval.
pub const MIN_ROUNDS: usize = 5;

/// How the bootstrap resamples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bootstrap {
    /// Resamples per interval. 2,000 puts the Monte Carlo error of a 2.5%
    /// percentile at about a tenth of the interval's own width.
    pub resamples: usize,
    /// The generator's seed: an interval is a function of the data.
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 2000,
            // "nbstats1".
            seed: 0x6e62_7374_6174_7331,
        }
    }
}

/// A figure over rounds with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The median over the rounds (for a ratio: the median of the per-round
    /// ratios, taken on their logarithms so that A over B is exactly the
    /// inverse of B over A).
    pub value: f64,
    /// Rounds counted.
    pub n: usize,
    /// The percentile bootstrap's 95% interval of `value`; None with fewer
    /// than [`MIN_ROUNDS`] rounds.
    pub ci95: Option<(f64, f64)>,
}

impl Estimate {
    /// Half the interval's width relative to the value: 0.05 is "±5%". The
    /// one definition of "±x%" in netbench: relative to the median, never
    /// to the mean. None without an interval or at a value of 0.
    pub fn half_width(&self) -> Option<f64> {
        let (lo, hi) = self.ci95?;
        (self.value != 0.0).then(|| (hi - lo) / 2.0 / self.value.abs())
    }

    /// Whether the interval is within `target` (0.05 for ±5%).
    pub fn within(&self, target: f64) -> bool {
        self.half_width().is_some_and(|w| w <= target)
    }

    /// Whether the interval contains `x`; None without an interval.
    pub fn contains(&self, x: f64) -> Option<bool> {
        self.ci95.map(|(lo, hi)| lo <= x && x <= hi)
    }

    /// Whether the interval lies wholly on one side of `x` (a ratio's
    /// interval that excludes 1: the two are told apart).
    pub fn excludes(&self, x: f64) -> bool {
        self.contains(x) == Some(false)
    }

    /// The same figure inverted (a ratio seen from its other side).
    pub fn inverse(&self) -> Estimate {
        Estimate {
            value: 1.0 / self.value,
            n: self.n,
            ci95: self.ci95.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
        }
    }
}

/// The lower tail each side of the expanded percentile interval over `n`
/// values: `Φ(−√(n/(n−1))·t₀.₉₇₅,ₙ₋₁)` (0.0132 at 15 values, 0.025 in
/// the limit).
pub fn expanded_tail(n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let nf = n as f64;
    normal_cdf(-(nf / (nf - 1.0)).sqrt() * t975(n - 1))
}

/// Φ(z) for a standard normal (Abramowitz and Stegun 7.1.26 for erfc,
/// error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let upper = 0.5 * poly * (-x * x).exp();
    if z < 0.0 {
        upper
    } else {
        1.0 - upper
    }
}

/// The `tail` and `1 − tail` percentiles of `stat` over resamples of `n`
/// rounds (each resample: `n` round indices drawn with replacement). A
/// resample where `stat` has nothing to say (None) is left out; when more
/// than a tenth are, there is no interval.
pub fn resample_interval(
    n: usize,
    b: &Bootstrap,
    tail: f64,
    mut stat: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<(f64, f64)> {
    if n == 0 || b.resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(b.seed);
    let mut picks = vec![0usize; n];
    let mut stats = Vec::with_capacity(b.resamples);
    for _ in 0..b.resamples {
        for p in picks.iter_mut() {
            *p = rng.below(n);
        }
        if let Some(s) = stat(&picks).filter(|s| !s.is_nan()) {
            stats.push(s);
        }
    }
    if stats.len() * 10 < b.resamples * 9 {
        return None;
    }
    stats.sort_unstable_by(f64::total_cmp);
    Some((
        quantile_sorted(&stats, tail)?,
        quantile_sorted(&stats, 1.0 - tail)?,
    ))
}

/// The median of `xs` (NaN left out) with its bootstrap 95% interval (the
/// expanded percentile interval, see the module's documentation).
pub fn median_interval(xs: &[f64], b: &Bootstrap) -> Option<Estimate> {
    let v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    let value = median_in_place(&mut v.clone())?;
    let n = v.len();
    let ci95 = if n < MIN_ROUNDS {
        None
    } else {
        let mut scratch = Vec::with_capacity(n);
        resample_interval(n, b, expanded_tail(n), |picks| {
            scratch.clear();
            scratch.extend(picks.iter().map(|&i| v[i]));
            median_in_place(&mut scratch)
        })
    };
    Some(Estimate { value, n, ci95 })
}

/// Adaptive repetitions' rule (`netbench_suite::SettleRule`): a cell is
/// settled once the bootstrap 95% interval of its median is within
/// `target` of the median (so never before [`MIN_ROUNDS`] values): the
/// same "±x%" the report shows.
pub fn settled(values: &[f64], target: f64) -> bool {
    median_interval(values, &Bootstrap::default()).is_some_and(|e| e.within(target))
}

/// The paired ratio of `a` over `b`, round by round: in each round where
/// both have a positive value, `a / b`; the median of those ratios with its
/// bootstrap interval (resampling those rounds). Taken on logarithms, so
/// `paired_ratio(b, a)` is exactly its inverse. A slow round of the host
/// that slows both alike leaves the ratio alone; that is the point of
/// pairing. Rounds where either is missing (a failed measurement) are left
/// out. None when no round has both.
pub fn paired_ratio(a: &[Option<f64>], b: &[Option<f64>], boot: &Bootstrap) -> Option<Estimate> {
    let logs: Vec<f64> = a
        .iter()
        .zip(b)
        .filter_map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) if usable(*x) && usable(*y) => Some(x.ln() - y.ln()),
            _ => None,
        })
        .collect();
    let e = median_interval(&logs, boot)?;
    Some(Estimate {
        value: e.value.exp(),
        n: e.n,
        ci95: e.ci95.map(|(lo, hi)| (lo.exp(), hi.exp())),
    })
}

/// Whether a figure can enter a ratio: finite and above zero.
pub(crate) fn usable(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expanded_tails_shrink_to_the_plain_ones() {
        // n = 15: √(15/14)·2.145 = 2.220, Φ(−2.220) = 0.0132.
        assert!(
            (expanded_tail(15) - 0.0132).abs() < 2e-4,
            "{}",
            expanded_tail(15)
        );
        assert!(expanded_tail(5) < 0.001);
        assert!((expanded_tail(1000) - 0.025).abs() < 1e-3);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-5);
        // 15 values 1..15: the median's interval runs from the 4th to the
        // 12th, as the order-statistic interval at 96.5% does.
        let xs: Vec<f64> = (1..=15).map(f64::from).collect();
        let e = median_interval(&xs, &Bootstrap::default()).unwrap();
        assert_eq!(e.ci95, Some((4.0, 12.0)));
    }

    #[test]
    fn too_few_values_have_no_interval() {
        let e = median_interval(&[1.0, 2.0, 3.0, 4.0], &Bootstrap::default()).unwrap();
        assert_eq!((e.value, e.n, e.ci95), (2.5, 4, None));
        assert_eq!(e.half_width(), None);
        assert!(!e.within(1.0));
        assert_eq!(median_interval(&[f64::NAN], &Bootstrap::default()), None);
    }

    #[test]
    fn the_interval_is_a_function_of_the_data_and_the_seed() {
        let xs: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i % 5)).collect();
        let b = Bootstrap::default();
        let one = median_interval(&xs, &b).unwrap();
        assert_eq!(one, median_interval(&xs, &b).unwrap());
        let (lo, hi) = one.ci95.unwrap();
        assert!(lo <= one.value && one.value <= hi, "{one:?}");
        assert!(lo >= 100.0 && hi <= 104.0, "{one:?}");
        // Equal values: an interval of no width.
        let flat = median_interval(&[7.0; 6], &b).unwrap();
        assert_eq!(flat.ci95, Some((7.0, 7.0)));
        assert_eq!(flat.half_width(), Some(0.0));
    }

    #[test]
    fn a_ratio_and_its_inverse_agree() {
        let a: Vec<Option<f64>> = (0..10).map(|i| Some(100.0 + f64::from(i))).collect();
        let b: Vec<Option<f64>> = (0..10).map(|i| Some(90.0 + f64::from(i * i % 7))).collect();
        let ab = paired_ratio(&a, &b, &Bootstrap::default()).unwrap();
        let ba = paired_ratio(&b, &a, &Bootstrap::default()).unwrap();
        assert!((ab.value * ba.value - 1.0).abs() < 1e-12);
        let (lo, hi) = ab.ci95.unwrap();
        let inv = ba.inverse();
        let (ilo, ihi) = inv.ci95.unwrap();
        assert!((lo - ilo).abs() < 1e-9 && (hi - ihi).abs() < 1e-9);
    }

    #[test]
    fn missing_rounds_are_left_out_of_a_pair() {
        let a = [Some(110.0), None, Some(110.0), Some(0.0), Some(110.0)];
        let b = [Some(100.0), Some(100.0), None, Some(100.0), Some(100.0)];
        let e = paired_ratio(&a, &b, &Bootstrap::default()).unwrap();
        assert_eq!(e.n, 2, "rounds 1 and 5 only: 0 is no figure");
        assert!((e.value - 1.1).abs() < 1e-12);
        assert_eq!(
            paired_ratio(&[None], &[Some(1.0)], &Bootstrap::default()),
            None
        );
    }

    #[test]
    fn settling_needs_enough_rounds_and_a_narrow_interval() {
        let steady: Vec<f64> = (0..8).map(|i| 100.0 + f64::from(i % 3)).collect();
        assert!(settled(&steady, 0.05));
        assert!(!settled(&steady[..4], 0.5), "four values: no interval");
        let wide: Vec<f64> = (0..8).map(|i| 100.0 * f64::from(1 + i % 3)).collect();
        assert!(!settled(&wide, 0.05));
        assert!(!settled(&[], 0.5));
    }
}
