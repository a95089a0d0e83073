//! One median and one summary of a set of values (the requests/s of a
//! cell's repetitions, say): what every crate of netbench takes them from.

use serde::{Deserialize, Serialize};

/// Two-sided 95% critical values of Student's t, `T975[df - 1]` for df 1..=30,
/// five to a row.
#[rustfmt::skip]
const T975: [f64; 30] = [
    12.706204736175, 4.302652729749, 3.182446305284, 2.776445105198, 2.570581835636,
    2.446911851145, 2.364624251593, 2.306004135204, 2.262157162798, 2.228138851986,
    2.200985160092, 2.178812829667, 2.160368656463, 2.144786687918, 2.131449545560,
    2.119905299221, 2.109815577833, 2.100922040241, 2.093024054408, 2.085963447266,
    2.079613844728, 2.073873067904, 2.068657610419, 2.063898561628, 2.059538552753,
    2.055529438643, 2.051830516480, 2.048407141795, 2.045229642133, 2.042272456301,
];

/// The normal value used past the table. It is at most 4% narrower than t
/// (df 31: t = 2.040); past 30 values that no longer matters here.
const Z975: f64 = 1.96;

/// The two-sided 95% critical value of Student's t with `df` degrees of
/// freedom (1.96 past 30).
pub fn t975(df: usize) -> f64 {
    T975.get(df.wrapping_sub(1)).copied().unwrap_or(Z975)
}

/// The median of `xs`, NaN left out; None when nothing is left. With an
/// even count, the mean of the two middle values.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    median_in_place(&mut v)
}

/// [`median`] of values the caller no longer needs in their order (sorts
/// them; NaN must already be out).
pub fn median_in_place(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The `q` quantile (0 to 1) of sorted values, interpolated linearly
/// between the two nearest (Hyndman and Fan's type 7, R's default). None
/// when `sorted` is empty.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// A set of values, summarized.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Values counted (NaN ones left out).
    pub n: usize,
    /// The figure to show: robust to one odd value.
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (divides by n - 1); 0 when n < 2.
    pub stdev: f64,
    /// `stdev / |mean|`; 0 when n < 2 or when all values are equal,
    /// infinite when the mean is 0 but the values differ.
    pub cv: f64,
    /// The 95% confidence interval of the **mean** (Student's t:
    /// `mean ± t(0.975, n-1)·stdev/√n`), None when n < 2. Not clamped to
    /// the range of the data. The figures netbench ranks by carry the
    /// bootstrap interval of the median instead ([`crate::Estimate`]); this
    /// one stays for the JSON of reports that always had it.
    pub ci95: Option<(f64, f64)>,
}

/// Summarizes `xs`, ignoring NaN; None when nothing is left. Infinite values
/// are kept and make the mean and spread infinite or NaN, which shows.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    let median = median_in_place(&mut v)?;
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(Summary {
            n,
            median,
            mean,
            stdev: 0.0,
            cv: 0.0,
            ci95: None,
        });
    }
    // Two passes: summing squares of deviations stays accurate when the
    // values are large and close together (requests/s of repeated runs).
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let stdev = var.sqrt();
    let cv = if stdev == 0.0 {
        0.0
    } else {
        stdev / mean.abs()
    };
    let half = t975(n - 1) * stdev / (n as f64).sqrt();
    Some(Summary {
        n,
        median,
        mean,
        stdev,
        cv,
        ci95: Some((mean - half, mean + half)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, f64::NAN, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(5.0));
        assert_eq!(quantile_sorted(&v, 0.5), Some(3.0));
        assert!(close(quantile_sorted(&v, 0.1).unwrap(), 1.4));
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[7.0], 0.975), Some(7.0));
    }

    #[test]
    fn three_values() {
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.n, 3);
        assert_eq!(s.median, 2.0);
        assert!(close(s.mean, 2.0));
        assert!(close(s.stdev, 1.0));
        assert!(close(s.cv, 0.5));
        // t(0.975, 2) is 19·√(2/39) exactly (df 2 has a closed form).
        let t = 19.0 * (2.0f64 / 39.0).sqrt();
        let (lo, hi) = s.ci95.unwrap();
        assert!(close(lo, 2.0 - t / 3f64.sqrt()), "{lo}");
        assert!(close(hi, 2.0 + t / 3f64.sqrt()), "{hi}");
    }

    #[test]
    fn one_value_empty_and_nan() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.stdev, s.cv, s.ci95),
            (1, 5.0, 5.0, 0.0, 0.0, None)
        );
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN, f64::NAN]), None);
        assert_eq!(
            summarize(&[1.0, f64::NAN, 2.0, 3.0]),
            summarize(&[1.0, 2.0, 3.0])
        );
    }

    #[test]
    fn t_values_past_the_table() {
        assert_eq!(t975(1), 12.706204736175);
        assert_eq!(t975(30), 2.042272456301);
        assert_eq!(t975(31), Z975);
        let z = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(z.cv, f64::INFINITY);
    }
}
