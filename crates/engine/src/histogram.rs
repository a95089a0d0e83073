//! Latency histograms: one per worker, recorded in nanoseconds, merged once at
//! the end. Memory is fixed however long the run.

use hdrhistogram::Histogram;

use crate::result::LatencySummary;

/// The largest value kept exactly: one hour. Larger values (possible only in
/// open loop, where queueing delay counts) are clamped to it.
pub(crate) const MAX_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 45.3 µs stays 45.3 µs.
pub(crate) const DIGITS: u8 = 3;

#[derive(Debug, Clone)]
pub(crate) struct LatencyHistogram(Histogram<u64>);

impl LatencyHistogram {
    pub(crate) fn new() -> Self {
        LatencyHistogram(
            Histogram::new_with_bounds(1, MAX_NS, DIGITS).expect("constant bounds are valid"),
        )
    }

    pub(crate) fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    pub(crate) fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    #[cfg(test)]
    pub(crate) fn count(&self) -> u64 {
        self.0.len()
    }

    pub(crate) fn into_inner(self) -> Histogram<u64> {
        self.0
    }

    pub(crate) fn summary(&self) -> LatencySummary {
        summarize(&self.0)
    }
}

/// The percentiles of a latency histogram: of one run, or of several added.
pub(crate) fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let q = |p: f64| h.value_at_quantile(p) as f64;
    LatencySummary {
        count: h.len(),
        min_ns: h.min() as f64,
        mean_ns: h.mean(),
        stdev_ns: h.stdev(),
        p50_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        p9999_ns: q(0.9999),
        max_ns: h.max() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for i in 1..=500u64 {
            a.record(i * 1000);
        }
        for i in 501..=1000u64 {
            b.record(i * 1000);
        }
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ns - 500_000.0).abs() <= 500.0, "{}", s.p50_ns);
        assert!((s.p99_ns - 990_000.0).abs() <= 1000.0, "{}", s.p99_ns);
        assert!((s.mean_ns - 500_500.0).abs() <= 500.0);
        assert_eq!(s.min_ns, 1000.0);
        assert!((s.max_ns - 1_000_000.0).abs() <= 1000.0);
    }

    #[test]
    fn empty_and_huge_values() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.summary(), LatencySummary::default());
        h.record(u64::MAX);
        h.record(0);
        assert_eq!(h.count(), 2);
    }
}
