//! Whether two sets of repetitions differ: the Mann–Whitney U rank test (as
//! benchstat uses) for significance, and a bootstrap confidence interval for
//! the size of the change. Both are pure functions of the numbers, so the
//! same store always gives the same comparison.

use netbench_contract::SplitMix64;

/// The significance level: a change is called real when p < ALPHA.
pub const ALPHA: f64 = 0.05;

/// Resamples drawn for the bootstrap interval.
const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Fixed so that a report rebuilt from the same store is the same report.
const BOOTSTRAP_SEED: u64 = 0x6e65_7462_656e_6368;

/// Above this many ways to split the pooled values the exact test would be
/// slow; the normal approximation (with the tie correction) is used instead,
/// and at those sizes it is close.
const EXACT_LIMIT: u64 = 200_000;

/// Two-sided p-value of the Mann–Whitney U test that `a` and `b` come from
/// the same distribution. Exact (every split of the pooled mid-ranks
/// enumerated, so ties are handled exactly) for small samples, normal
/// approximation with tie correction for large ones. None when either side
/// is empty.
///
/// With n values on each side the smallest p it can give is
/// 2 / C(2n, n): 1.0 for 1+1, 0.33 for 2+2, 0.10 for 3+3, 0.029 for 4+4. So a
/// difference between runs of 3 repetitions can never be called significant
/// at 0.05: that is the honest answer for 3 numbers a side, not a flaw.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let ranks = mid_ranks(a, b);
    let total = n1 + n2;
    let observed: f64 = ranks[..n1].iter().sum();
    let mean = n1 as f64 * (total as f64 + 1.0) / 2.0;
    if binomial(total as u64, n1 as u64) <= EXACT_LIMIT {
        let distance = (observed - mean).abs();
        let (mut extreme, mut all) = (0u64, 0u64);
        for_each_subset_sum(&ranks, n1, &mut |sum| {
            all += 1;
            // A tolerance: mid-ranks are halves, sums are exact in f64.
            if (sum - mean).abs() >= distance - 1e-9 {
                extreme += 1;
            }
        });
        return Some(extreme as f64 / all as f64);
    }
    let ties: f64 = tie_groups(&ranks).map(|t| t * t * t - t).sum();
    let nf = total as f64;
    let var = n1 as f64 * n2 as f64 / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    // Continuity correction of one half, as the usual tables do.
    let z = (((observed - mean).abs() - 0.5).max(0.0)) / var.sqrt();
    Some((2.0 * normal_upper_tail(z)).min(1.0))
}

/// The smallest two-sided p the test can give with these sample sizes (no
/// ties): whether significance is reachable at all.
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    (2.0 / binomial((n1 + n2) as u64, n1 as u64) as f64).min(1.0)
}

/// A 95% percentile-bootstrap interval for the relative change of the median
/// from `a` to `b` (`median(b) / median(a) - 1`). None when a side is empty
/// or a resampled median of `a` is 0.
pub fn bootstrap_change_ci(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let mut changes = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for x in ra.iter_mut() {
            *x = a[rng.below(a.len() as u64) as usize];
        }
        for x in rb.iter_mut() {
            *x = b[rng.below(b.len() as u64) as usize];
        }
        let ma = median_in_place(&mut ra);
        if ma == 0.0 {
            return None;
        }
        changes.push(median_in_place(&mut rb) / ma - 1.0);
    }
    changes.sort_by(f64::total_cmp);
    let at = |q: f64| changes[((q * (changes.len() - 1) as f64).round()) as usize];
    Some((at(0.025), at(0.975)))
}

/// The median, sorting the slice.
pub fn median_in_place(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Ranks of the pooled values (a first, then b), ties sharing their mean rank.
fn mid_ranks(a: &[f64], b: &[f64]) -> Vec<f64> {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && pooled[order[j + 1]] == pooled[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Sizes of the groups of equal ranks.
fn tie_groups(ranks: &[f64]) -> impl Iterator<Item = f64> {
    let mut sorted = ranks.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|&&r| r == sorted[i]).count();
        groups.push(j as f64);
        i += j;
    }
    groups.into_iter()
}

/// Calls `f` with the sum of every `k`-element subset of `values`.
fn for_each_subset_sum(values: &[f64], k: usize, f: &mut impl FnMut(f64)) {
    fn go(values: &[f64], k: usize, sum: f64, f: &mut impl FnMut(f64)) {
        if k == 0 {
            f(sum);
            return;
        }
        if values.len() < k {
            return;
        }
        go(&values[1..], k - 1, sum + values[0], f);
        go(&values[1..], k, sum, f);
    }
    go(values, k, 0.0, f);
}

fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = r.saturating_mul(n - i) / (i + 1);
        if r > EXACT_LIMIT * 1000 {
            return u64::MAX;
        }
    }
    r
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26 for erfc,
/// error below 1.5e-7: far finer than any p-value is read).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn separated_samples_reach_the_smallest_p() {
        // All of b above all of a: 2 of the C(8,4) = 70 splits are as extreme.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!(close(p, 2.0 / 70.0), "p = {p}");
        assert!(close(smallest_p(4, 4), 2.0 / 70.0));
        // The order of the arguments does not matter to a two-sided test.
        let q = mann_whitney_p(&[5.0, 6.0, 7.0, 8.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!(close(p, q));
    }

    #[test]
    fn three_a_side_cannot_be_significant() {
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]).unwrap();
        assert!(close(p, 0.1), "p = {p}");
        assert!(p >= ALPHA);
        assert!(close(smallest_p(3, 3), 0.1));
    }

    #[test]
    fn known_exact_value() {
        // U = 1 for a = {1, 2, 4}, b = {3, 5, 6, 7}: P(U <= 1) = 2/35 one-sided,
        // so the two-sided p is 4/35 (standard Mann–Whitney tables).
        let p = mann_whitney_p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0, 7.0]).unwrap();
        assert!(close(p, 4.0 / 35.0), "p = {p}");
    }

    #[test]
    fn equal_samples_are_not_different() {
        let p = mann_whitney_p(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert!(close(p, 1.0));
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(p > 0.5, "interleaved samples gave p = {p}");
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        // 20 + 20 values: C(40, 20) splits, far past the exact limit.
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = (0..20).map(|i| f64::from(i) + 10.0).collect();
        let p = mann_whitney_p(&a, &b).unwrap();
        // Rank sum 260 against a mean of 410, ten pairs of ties: variance
        // 1365.38, z = (150 - 0.5) / 36.95 = 4.046, p = 2·P(Z > z) = 5.21e-5.
        assert!((p - 5.2125e-5).abs() < 1e-6, "p = {p}");
        let same = mann_whitney_p(&a, &a).unwrap();
        assert!(same > 0.9, "p = {same}");
    }

    #[test]
    fn normal_tail_matches_tables() {
        assert!(close(normal_upper_tail(0.0), 0.5));
        assert!(close(normal_upper_tail(1.96), 0.024998));
        assert!(close(normal_upper_tail(3.0), 0.0013499));
    }

    #[test]
    fn bootstrap_interval_of_constant_samples_is_the_change() {
        let (lo, hi) = bootstrap_change_ci(&[100.0; 3], &[110.0; 3]).unwrap();
        assert!(close(lo, 0.1) && close(hi, 0.1), "[{lo}, {hi}]");
    }

    #[test]
    fn bootstrap_interval_brackets_the_change_and_stays_in_range() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [120.0, 118.0, 122.0, 119.0, 121.0];
        let (lo, hi) = bootstrap_change_ci(&a, &b).unwrap();
        assert!(lo <= 0.2 && 0.2 <= hi, "[{lo}, {hi}]");
        // The extremes a resample can reach: 118/102 - 1 and 122/98 - 1.
        assert!(lo >= 118.0 / 102.0 - 1.0 - 1e-12 && hi <= 122.0 / 98.0 - 1.0 + 1e-12);
        assert!(lo > 0.0, "disjoint samples must exclude no change");
        // Deterministic: the same inputs give the same interval.
        assert_eq!(bootstrap_change_ci(&a, &b), Some((lo, hi)));
        assert_eq!(bootstrap_change_ci(&[0.0], &[1.0]), None);
    }
}
