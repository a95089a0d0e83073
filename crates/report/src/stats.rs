//! The report's rules over a cell's repetitions: when a cell is too noisy
//! to rank, and when two summaries overlap. The median, the summary and the
//! intervals themselves are netbench-stats' (re-exported here), shared with
//! the runner.

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

pub use netbench_stats::{median, settled, summarize, t975, Summary};

/// Whether a cell is too spread to rank: its cv is above [`NOISY_CV`].
pub fn too_noisy(s: &Summary) -> bool {
    s.cv > NOISY_CV
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
}
