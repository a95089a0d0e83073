//! Whether two sets of repetitions differ: the Mann–Whitney U rank test (as
//! benchstat uses) for significance, and Welch's t interval on the
//! logarithms for the size of the change. Both are pure functions of the
//! numbers, so the same store always gives the same comparison.

use crate::stats::t975;

/// The significance level: a change is called real when p < ALPHA.
pub const ALPHA: f64 = 0.05;

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

/// A 95% confidence interval for the relative change from `a` to `b`:
/// Welch's t interval for the difference of the mean logarithms, turned back
/// into a ratio (`exp(d ± t·se) - 1`), so it is the change of the geometric
/// means. Throughput varies by ratios, and the logarithm makes the interval
/// symmetric in them. Welch's degrees of freedom are rounded down, which
/// widens the interval. It grows wide with few repetitions, as it should:
/// a percentile bootstrap of 3 values would look precise while covering far
/// less than 95%. None when a side has fewer than two values or a value is
/// not positive.
pub fn welch_change_ci(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|&x| x.is_nan() || x <= 0.0) {
        return None;
    }
    let moments = |xs: &[f64]| {
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var / n, n)
    };
    let (ma, va, na) = moments(a);
    let (mb, vb, nb) = moments(b);
    let d = mb - ma;
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some((d.exp() - 1.0, d.exp() - 1.0));
    }
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let half = t975((df.floor() as usize).max(1)) * se2.sqrt();
    Some(((d - half).exp() - 1.0, (d + half).exp() - 1.0))
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
    fn welch_interval_on_known_inputs() {
        let e = |logs: &[f64]| logs.iter().map(|l| l.exp()).collect::<Vec<f64>>();
        // Logs 0, .1, .2 against .5, .6, .7: d = 0.5, se = 0.0816, df = 4
        // (t = 2.776), so exp(0.5 ± 0.2267) - 1.
        let (lo, hi) = welch_change_ci(&e(&[0.0, 0.1, 0.2]), &e(&[0.5, 0.6, 0.7])).unwrap();
        assert!(close(lo, 0.314_300) && close(hi, 1.068_235), "[{lo}, {hi}]");
        // Unequal sizes and spreads: df = 1.90, rounded down to 1 (t = 12.71).
        let (lo, hi) = welch_change_ci(&e(&[0.0, 0.1, 0.2, 0.3]), &e(&[0.5, 0.7])).unwrap();
        assert!(
            close(lo, -0.654_354) && close(hi, 6.115_965),
            "[{lo}, {hi}]"
        );
    }

    #[test]
    fn welch_interval_edges() {
        let (lo, hi) = welch_change_ci(&[100.0; 3], &[110.0; 3]).unwrap();
        assert!(close(lo, 0.1) && close(hi, 0.1), "[{lo}, {hi}]");
        assert_eq!(welch_change_ci(&[100.0], &[110.0, 111.0]), None);
        assert_eq!(welch_change_ci(&[0.0, 1.0], &[1.0, 2.0]), None);
        // Disjoint, tight samples: the interval excludes no change.
        let (lo, _) = welch_change_ci(&[100.0, 101.0, 99.0], &[120.0, 121.0, 119.0]).unwrap();
        assert!(lo > 0.0);
    }
}
