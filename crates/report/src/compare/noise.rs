//! How far a row's change could move by noise alone: the standard error of
//! `ln(1 + change)`, for the regression gate's noise floor. The
//! Mann–Whitney verdict sees only the repetitions of the one cell and takes
//! the run-wide shift as exact; but the shift is itself a median of other
//! cells' noisy changes, and on the 2-vCPU VM of 2026-11-26 the cells'
//! changes beyond the shift in three A/A pairs were about as large as the
//! repetitions' spread predicts *only* once the shift's own uncertainty was
//! counted (mean z² 0.76 for requests/s and 1.15 for p99 over 22 rows each,
//! against 4.9 and 5.2 as measured). See docs/regression-gate.md.

use serde::Serialize;

use super::CompareRow;

/// The noise of one row's change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangeNoise {
    /// Standard error of `ln(1 + change)`, the run-wide shift's included
    /// when the row was shifted.
    pub se: f64,
    /// The degrees of freedom of the row's own two samples, `nA + nB - 2`:
    /// with as many repetitions a side (as a suite gives), the two-sample t
    /// holds even when the spreads differ, and Welch's estimate, from four
    /// or five values a side, would swing with them. The shift's cells add
    /// more, so this errs wide.
    pub df: f64,
}

/// The variance of a sample median of normal values is about π/2 times
/// the mean's; `change` is a ratio of medians.
const MEDIAN_EFFICIENCY: f64 = std::f64::consts::FRAC_PI_2;

/// The noise of the change from `xs` to `ys`, on the logarithms; None when
/// a side has fewer than two values or one that is not positive.
pub(super) fn own(xs: &[f64], ys: &[f64]) -> Option<ChangeNoise> {
    if xs.len() < 2 || ys.len() < 2 || xs.iter().chain(ys).any(|&v| v.is_nan() || v <= 0.0) {
        return None;
    }
    let var_of_mean = |v: &[f64]| {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        (
            logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0) / n,
            n,
        )
    };
    let ((va, na), (vb, nb)) = (var_of_mean(xs), var_of_mean(ys));
    Some(ChangeNoise {
        se: (MEDIAN_EFFICIENCY * (va + vb)).sqrt(),
        df: na + nb - 2.0,
    })
}

/// Adds to each shifted row of `rows` (one metric's) the variance of its
/// shift: the median of the other cells' changes in its row (test and
/// connections), about π/2 times the variance of their mean.
pub(super) fn add_shift_noise(rows: &mut [CompareRow]) {
    let own: Vec<Option<f64>> = rows.iter().map(|r| r.noise.map(|n| n.se)).collect();
    for i in 0..rows.len() {
        if rows[i].shift.is_none() {
            continue;
        }
        let others: Vec<f64> = (0..rows.len())
            .filter(|&j| {
                j != i
                    && rows[j].shift.is_some()
                    && rows[j].test == rows[i].test
                    && rows[j].connections == rows[i].connections
            })
            .filter_map(|j| own[j])
            .collect();
        let Some(n) = rows[i].noise.as_mut() else {
            continue;
        };
        if others.is_empty() {
            continue;
        }
        let k = others.len() as f64;
        let mean_var = others.iter().map(|s| s * s).sum::<f64>() / k;
        n.se = (n.se * n.se + MEDIAN_EFFICIENCY * mean_var / k).sqrt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_of_a_change_grows_with_the_spread_and_shrinks_with_repetitions() {
        let e = |logs: &[f64]| logs.iter().map(|l| l.exp()).collect::<Vec<f64>>();
        // Logs 0, .1, .2 a side: variance 0.01, of the mean 0.01/3 each.
        let n = own(&e(&[0.0, 0.1, 0.2]), &e(&[0.5, 0.6, 0.7])).unwrap();
        let want = (MEDIAN_EFFICIENCY * 2.0 * 0.01 / 3.0).sqrt();
        assert!((n.se - want).abs() < 1e-12, "{n:?}");
        assert_eq!(n.df, 4.0);
        let six = own(
            &e(&[0.0, 0.1, 0.2, 0.0, 0.1, 0.2]),
            &e(&[0.0, 0.1, 0.2, 0.0, 0.1, 0.2]),
        )
        .unwrap();
        assert!(six.se < n.se, "{six:?}");
        assert_eq!(own(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(own(&[0.0, 1.0], &[1.0, 2.0]), None);
        // Identical repetitions: no noise at all, not a division by zero.
        let flat = own(&[5.0; 4], &[6.0; 4]).unwrap();
        assert_eq!((flat.se, flat.df), (0.0, 6.0));
    }
}
