//! The critical value of Student's t at any level: the gate's noise floor
//! splits 5% over every row it judges (Bonferroni), so it needs levels such
//! as 0.05 / 16, far past the 95% table in `stats`. The quantile is statrs's.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// `t` such that `P(|T| > t) = alpha` for Student's t with `df` degrees of
/// freedom (`alpha` in (0, 1)); infinite when `df` is not a usable count.
pub(crate) fn t_two_sided(alpha: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(1.0 - alpha / 2.0),
        Err(_) => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::t975;

    #[test]
    fn matches_the_95_percent_table_and_known_quantiles() {
        for df in 1..=30 {
            let t = t_two_sided(0.05, f64::from(df));
            assert!((t - t975(df as usize)).abs() < 1e-6, "df {df}: {t}");
        }
        // Published two-sided 0.01 and 0.001 points.
        assert!((t_two_sided(0.01, 8.0) - 3.355_387).abs() < 1e-5);
        assert!((t_two_sided(0.001, 8.0) - 5.041_305).abs() < 1e-5);
        // Near the normal's 1.959964 at a million degrees of freedom
        // (statrs's search stops about 1e-4 short there; the gate's rows
        // have tens at most).
        assert!((t_two_sided(0.05, 1e6) - 1.959_966).abs() < 1e-3);
        assert_eq!(t_two_sided(0.05, 0.0), f64::INFINITY);
    }
}
