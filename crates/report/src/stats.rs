//! Statistics over the repetitions of one cell (say the requests/s of three
//! runs): median, mean, spread, a confidence interval, and the tests a table
//! needs to flag noisy cells and differences within noise.

use serde::{Deserialize, Serialize};

/// Coefficient of variation above which a cell's own repetitions are too
/// spread to use (the `~` mark): it gets no tier and is left out of its row's
/// tiers (`crate::tiers`).
///
/// Why 25%: tiers pool the noise of a whole row, which is only fair to a
/// cell about as noisy as the rest; on the shared 2-vCPU VM this project
/// runs on, the median CV over cells is ~15% (issue 28), and a quiet host
/// gives 5–8%. A cell at 25% is well past that (with 3 repetitions its 95%
/// interval of the mean is ±62%), while an ordinary cell of the VM (15%
/// noise) crosses 25% by chance in ~6% of cells at 3 repetitions
/// (`P(χ²₂ > 2·(25/15)²) = e^(−2.78)`). The old 5% line marked 48 of 50
/// cells of a run on that VM and told a reader nothing.
pub const NOISY_CV: f64 = 0.25;

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
/// (df 31: t = 2.040); past 30 repetitions that no longer matters here.
const Z975: f64 = 1.96;

/// The two-sided 95% critical value of Student's t with `df` degrees of
/// freedom (1.96 past 30).
pub fn t975(df: usize) -> f64 {
    T975.get(df.wrapping_sub(1)).copied().unwrap_or(Z975)
}

/// The repetitions of one cell, summarized.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Repetitions counted (NaN ones left out).
    pub n: usize,
    /// The figure to show: robust to one odd repetition.
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (divides by n - 1); 0 when n < 2.
    pub stdev: f64,
    /// `stdev / |mean|`; 0 when n < 2 or when all values are equal,
    /// infinite when the mean is 0 but the values differ.
    pub cv: f64,
    /// The 95% confidence interval of the **mean** (Student's t:
    /// `mean ± t(0.975, n-1)·stdev/√n`), None when n < 2. It is an interval
    /// for the mean, shown next to the median, and reported as computed: it
    /// is not clamped to the range of the data, so it may reach past the
    /// smallest and largest value. With 3 repetitions it is wide by nature
    /// (t = 4.303, so ±2.5 standard deviations); more repetitions, not a
    /// narrower formula, make it narrow.
    pub ci95: Option<(f64, f64)>,
}

/// Summarizes `xs`, ignoring NaN; None when nothing is left. Infinite values
/// are kept and make the mean and spread infinite or NaN, which shows.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
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

/// Whether a cell is too spread to rank: its cv is above [`NOISY_CV`].
pub fn too_noisy(s: &Summary) -> bool {
    s.cv > NOISY_CV
}

/// The half-width of the 95% interval of the mean, relative to the mean:
/// 0.05 means ±5%. None with fewer than two values or a zero mean.
pub fn relative_half_width(s: &Summary) -> Option<f64> {
    let (lo, hi) = s.ci95?;
    (s.mean != 0.0).then(|| (hi - lo) / 2.0 / s.mean.abs())
}

/// Whether `s` has a 95% interval within `target` of its mean.
pub fn within(s: Option<&Summary>, target: f64) -> bool {
    s.and_then(relative_half_width).is_some_and(|w| w <= target)
}

/// Adaptive repetitions' rule (`netbench_suite::SettleRule`): settled when
/// the 95% interval of the mean is within `target` of it.
pub fn settled(values: &[f64], target: f64) -> bool {
    within(summarize(values).as_ref(), target)
}

/// Whether the confidence intervals of two cells overlap, so that a table
/// should call their difference within noise. Overlap is the cautious test:
/// intervals that do not overlap mean a real difference, while overlapping
/// ones do not prove there is none. A cell without an interval (one
/// repetition) has no measure of its noise, so its difference from anything
/// cannot be shown to exceed the noise: that counts as overlapping.
pub fn overlaps(a: &Summary, b: &Summary) -> bool {
    match (a.ci95, b.ci95) {
        (Some((alo, ahi)), Some((blo, bhi))) => alo <= bhi && blo <= ahi,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn settling_follows_the_interval_not_the_spread_alone() {
        // 100 ± 1 over 3 values: t(2) = 4.303, sd 1, half-width 2.48%.
        assert!(settled(&[99.0, 100.0, 101.0], 0.05));
        assert!(!settled(&[99.0, 100.0, 101.0], 0.02));
        // The same spread settles at ±2% with more values: n, not a wider
        // formula, narrows the interval.
        let many: Vec<f64> = (0..12).map(|i| 99.0 + (i % 3) as f64).collect();
        assert!(settled(&many, 0.02));
        assert!(!settled(&[100.0], 0.5), "one value has no interval");
        assert!(!settled(&[], 0.5));
        assert!(!settled(&[0.0, 0.0], 0.5), "no relative width around zero");
    }

    #[test]
    fn three_values() {
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.n, 3);
        assert_eq!(s.median, 2.0);
        assert!(close(s.mean, 2.0));
        assert!(close(s.stdev, 1.0));
        assert!(close(s.cv, 0.5));
        // t(0.975, 2) is 19·√(2/39) exactly (df 2 has a closed form),
        // printed 4.303.
        let t = 19.0 * (2.0f64 / 39.0).sqrt();
        assert!(close(t, 4.302652729749461));
        let (lo, hi) = s.ci95.unwrap();
        assert!(close(lo, 2.0 - t / 3f64.sqrt()), "{lo}");
        assert!(close(hi, 2.0 + t / 3f64.sqrt()), "{hi}");
        // Not clamped: the interval of the mean reaches past the data.
        assert!(lo < 1.0 && hi > 3.0);
    }

    #[test]
    fn one_value() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.stdev, s.cv),
            (1, 5.0, 5.0, 0.0, 0.0)
        );
        assert_eq!(s.ci95, None);
        assert!(!too_noisy(&s));
    }

    #[test]
    fn empty_and_nan() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN, f64::NAN]), None);
        let s = summarize(&[f64::NAN, 4.0, 1.0, f64::NAN, 3.0, 2.0]).unwrap();
        assert_eq!(s.n, 4);
        // Even n: the mean of the two middle values.
        assert_eq!(s.median, 2.5);
        assert!(close(s.mean, 2.5));
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
        let xs: Vec<f64> = (0..100).map(|i| 100.0 + (i % 2) as f64).collect();
        let s = summarize(&xs).unwrap();
        let (lo, hi) = s.ci95.unwrap();
        assert!(close(hi - s.mean, 1.96 * s.stdev / 10.0));
        assert!(close(s.mean - lo, hi - s.mean));
    }

    #[test]
    fn equal_values_and_zero_mean() {
        let s = summarize(&[7.0, 7.0, 7.0]).unwrap();
        assert_eq!((s.stdev, s.cv, s.ci95), (0.0, 0.0, Some((7.0, 7.0))));
        let z = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(z.cv, f64::INFINITY);
        assert!(too_noisy(&z));
    }

    #[test]
    fn noisy_threshold() {
        // mean 100, stdev 25: cv exactly at the threshold is not noisy.
        let at = summarize(&[75.0, 100.0, 125.0]).unwrap();
        assert!(close(at.cv, 0.25));
        let at = Summary { cv: NOISY_CV, ..at };
        assert!(!too_noisy(&at));
        assert!(too_noisy(&Summary { cv: 0.2501, ..at }));
        // The old 5% line no longer marks the shared VM's ordinary spread.
        assert!(!too_noisy(&summarize(&[80.0, 100.0, 120.0]).unwrap()));
        assert!(too_noisy(&summarize(&[60.0, 100.0, 140.0]).unwrap()));
    }

    #[test]
    fn overlapping_intervals() {
        let a = summarize(&[100.0, 101.0, 102.0]).unwrap();
        let near = summarize(&[102.0, 103.0, 104.0]).unwrap();
        let far = summarize(&[200.0, 201.0, 202.0]).unwrap();
        assert!(overlaps(&a, &near) && overlaps(&near, &a));
        assert!(!overlaps(&a, &far) && !overlaps(&far, &a));
        assert!(overlaps(&a, &a));
        // Touching ends count as overlapping.
        let touch = Summary {
            ci95: Some((a.ci95.unwrap().1, 300.0)),
            ..far
        };
        assert!(overlaps(&a, &touch));
        // One repetition: no noise estimate, so no difference can be shown.
        let single = summarize(&[500.0]).unwrap();
        assert!(overlaps(&a, &single) && overlaps(&single, &a));
    }

    #[test]
    fn serializes() {
        let s = summarize(&[1.0, 2.0, 3.0]).unwrap();
        let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
