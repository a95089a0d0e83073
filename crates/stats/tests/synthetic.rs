//! The statistics on synthetic rows with known answers (issue 43): an A/A
//! pair must tie, a 5% difference must split, slow rounds of the host must
//! cancel from paired figures, missing cells must not move the others, and
//! on plain noise a 95% interval must cover the true value in about 95% of
//! seeds.

use netbench_stats::{
    median_interval, paired_ratio, rank_intervals, rank_row, relative, relative_figures, Bootstrap,
    Rounds, SplitMix64,
};

/// A row of `truth.len()` servers over `rounds` rounds: each value the
/// server's true figure × the round's speed × log-normal noise of `cv`.
/// `slow` rounds run at half speed for every server (a slow host episode).
fn row(truth: &[f64], rounds: usize, cv: f64, slow: &[usize], seed: u64) -> Vec<Vec<Option<f64>>> {
    let mut rng = SplitMix64::new(seed);
    let speed: Vec<f64> = (0..rounds)
        .map(|r| if slow.contains(&r) { 0.5 } else { 1.0 } * (0.1 * rng.normal()).exp())
        .collect();
    truth
        .iter()
        .map(|t| {
            speed
                .iter()
                .map(|s| Some(t * s * (cv * rng.normal()).exp()))
                .collect()
        })
        .collect()
}

fn fast() -> Bootstrap {
    Bootstrap {
        resamples: 1000,
        ..Bootstrap::default()
    }
}

#[test]
fn an_aa_pair_ties_and_a_five_percent_pair_splits() {
    // 15 rounds of 1 s windows at the 5-6% CV issue 43 measured, with two
    // slow episodes of the host that halve whole rounds.
    let aa = Rounds::new(row(&[100_000.0, 100_000.0], 15, 0.06, &[3, 4], 1));
    let ratio = paired_ratio(aa.of(1), aa.of(0), &Bootstrap::default()).unwrap();
    assert_eq!(ratio.contains(1.0), Some(true), "{ratio:?}");
    assert!(ratio.half_width().unwrap() < 0.05, "{ratio:?}");

    let ab = Rounds::new(row(&[100_000.0, 95_000.0], 15, 0.03, &[3, 4], 2));
    let ratio = paired_ratio(ab.of(0), ab.of(1), &Bootstrap::default()).unwrap();
    assert!(ratio.excludes(1.0), "{ratio:?}");
    let (lo, hi) = ratio.ci95.unwrap();
    assert!(lo < 1.0 / 0.95 && 1.0 / 0.95 < hi, "{ratio:?}");
    let ranking = rank_row(&ab, true, &[], &Bootstrap::default());
    assert_eq!(ranking.order, [0, 1]);
    assert_eq!(ranking.tier, [Some(1), Some(2)]);
    let ranks: Vec<_> = ranking.rank.iter().map(|r| r.unwrap().ci95).collect();
    assert_eq!(ranks, [Some((1, 1)), Some((2, 2))]);
    // The same 5% unpaired would not split: the slow rounds widen each
    // server's own median interval past the gap.
    let a = median_interval(&flat(ab.of(0)), &Bootstrap::default()).unwrap();
    let b = median_interval(&flat(ab.of(1)), &Bootstrap::default()).unwrap();
    assert!(a.ci95.unwrap().0 < b.ci95.unwrap().1, "{a:?} {b:?}");
}

fn flat(v: &[Option<f64>]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
}

#[test]
fn aa_twins_tie_in_about_95_percent_of_rows() {
    let ties = (0..200)
        .filter(|&seed| {
            let r = Rounds::new(row(&[50_000.0, 50_000.0], 12, 0.05, &[], seed));
            paired_ratio(r.of(1), r.of(0), &fast())
                .unwrap()
                .contains(1.0)
                .unwrap()
        })
        .count();
    eprintln!("{ties} of 200 A/A twins tied");
    assert!((180..=200).contains(&ties), "{ties} of 200 tied");
}

#[test]
fn slow_rounds_cancel_from_relative_figures() {
    let truth = [200.0, 100.0, 50.0];
    let r = Rounds::new(row(&truth, 12, 0.0, &[0, 5, 6], 3));
    // Without noise of its own, every round gives each server exactly its
    // share of the row's geometric mean (100): 2, 1 and 0.5.
    for (s, want) in [2.0, 1.0, 0.5].iter().enumerate() {
        let e = relative_figures(&r, &Bootstrap::default())[s].unwrap();
        assert!((e.value - want).abs() < 1e-9, "{e:?}");
        let (lo, hi) = e.ci95.unwrap();
        assert!((hi - lo).abs() < 1e-9, "{e:?}");
    }
}

#[test]
fn a_missing_cell_leaves_the_rounds_figures_of_the_others_alone() {
    // Complete rounds: the plain definition, x over the round's geometric mean.
    // Round 2 (index 1) ran at half speed for everyone.
    let complete = vec![
        vec![Some(400.0), Some(200.0), Some(400.0)],
        vec![Some(100.0), Some(50.0), Some(100.0)],
        vec![Some(25.0), Some(12.5), Some(25.0)],
    ];
    let rel = relative(&Rounds::new(complete.clone()));
    for (server, want) in [4.0, 1.0, 0.25].into_iter().enumerate() {
        for x in &rel[server] {
            assert!((x.unwrap() - want).abs() < 1e-12, "{rel:?}");
        }
    }
    // The fastest server failed in round 2: a plain geometric mean of the
    // two left would call the others 2x faster that round.
    let mut missing = complete;
    missing[0][1] = None;
    let rel = relative(&Rounds::new(missing));
    assert_eq!(rel[0][1], None);
    assert!((rel[1][1].unwrap() - 1.0).abs() < 1e-12, "{rel:?}");
    assert!((rel[2][1].unwrap() - 0.25).abs() < 1e-12, "{rel:?}");
}

#[test]
fn pairs_use_only_the_rounds_both_have() {
    let mut values = row(&[110.0, 100.0], 10, 0.01, &[], 4);
    values[0][2] = None;
    values[1][7] = None;
    let r = Rounds::new(values);
    let e = paired_ratio(r.of(0), r.of(1), &Bootstrap::default()).unwrap();
    assert_eq!(e.n, 8);
    assert!(e.excludes(1.0) && (e.value - 1.1).abs() < 0.02, "{e:?}");
}

#[test]
fn rank_intervals_on_known_rows() {
    // Far apart: each rank is certain.
    let far = Rounds::new(row(&[300.0, 200.0, 100.0], 10, 0.03, &[], 5));
    let ranks = rank_intervals(&relative(&far), true, &Bootstrap::default());
    let ci: Vec<_> = ranks.iter().map(|r| r.unwrap().ci95.unwrap()).collect();
    assert_eq!(ci, [(1, 1), (2, 2), (3, 3)]);
    // Lower is better (CPU per request): the order turns round.
    let ranks = rank_intervals(&relative(&far), false, &Bootstrap::default());
    let point: Vec<_> = ranks.iter().map(|r| r.unwrap().rank).collect();
    assert_eq!(point, [3, 2, 1]);
    // Two the same and one far behind: the two share ranks 1 to 2.
    let two = Rounds::new(row(&[200.0, 200.0, 100.0], 15, 0.05, &[], 6));
    let ranks = rank_intervals(&relative(&two), true, &Bootstrap::default());
    let ci: Vec<_> = ranks.iter().map(|r| r.unwrap().ci95.unwrap()).collect();
    assert_eq!(ci, [(1, 2), (1, 2), (3, 3)]);
    // Too few rounds: a rank, no interval.
    let few = Rounds::new(row(&[2.0, 1.0], 4, 0.05, &[], 7));
    let ranks = rank_intervals(&relative(&few), true, &Bootstrap::default());
    assert_eq!(ranks[0].unwrap().rank, 1);
    assert_eq!(ranks[0].unwrap().ci95, None);
}

#[test]
fn tiers_split_real_gaps_and_rarely_an_aa_row() {
    let bands = Rounds::new(row(&[100.0, 99.0, 80.0, 79.5, 50.0], 15, 0.03, &[2], 8));
    let ranking = rank_row(&bands, true, &[], &Bootstrap::default());
    // 100 and 99 (or 80 and 79.5) may come either way round; not apart.
    assert_eq!(ranking.tier, [Some(1), Some(1), Some(2), Some(2), Some(3)]);
    // A server left out of the tiers keeps its place in the order.
    let ranking = rank_row(&bands, true, &[false, false, true], &Bootstrap::default());
    assert_eq!(ranking.tier, [Some(1), Some(1), None, Some(2), Some(3)]);
    // Ten copies of one server: the row stays one tier in at least 95% of
    // seeds (neighbours in the order are the closest pairs, so the cut
    // rarely fires by chance).
    let split = (0..100)
        .filter(|&seed| {
            let r = Rounds::new(row(&[1000.0; 10], 12, 0.05, &[1], 100 + seed));
            let tiers = rank_row(&r, true, &[], &fast()).tier;
            tiers.iter().any(|t| *t != Some(1))
        })
        .count();
    eprintln!("{split} of 100 A/A rows of ten servers split");
    assert!(split <= 5, "{split} of 100 A/A rows split");
}

/// The share of `seeds` rows whose interval covers the true value.
fn coverage(seeds: u64, covers: impl Fn(u64) -> bool) -> f64 {
    (0..seeds).filter(|&s| covers(s)).count() as f64 / seeds as f64
}

#[test]
fn intervals_cover_the_true_value_about_95_percent_of_the_time() {
    let n = 15;
    // The median of one server's windows (log-normal around 1,000: the
    // true median is 1,000 × the median round speed, 1 here as the rounds
    // carry no shared factor in this check).
    let median = coverage(400, |seed| {
        let mut rng = SplitMix64::new(seed);
        let xs: Vec<f64> = (0..n)
            .map(|_| 1000.0 * (0.06 * rng.normal()).exp())
            .collect();
        median_interval(&xs, &fast())
            .unwrap()
            .contains(1000.0)
            .unwrap()
    });
    // A paired ratio whose truth is 0.95, with slow rounds in the way.
    let ratio = coverage(400, |seed| {
        let r = Rounds::new(row(&[95.0, 100.0], n, 0.05, &[2, 9], 1000 + seed));
        paired_ratio(r.of(0), r.of(1), &fast())
            .unwrap()
            .contains(0.95)
            .unwrap()
    });
    // A relative figure: four servers, the first at 2x the row's
    // geometric mean of true figures (400, 200, 200, 100 → 200).
    let rel = coverage(400, |seed| {
        let r = Rounds::new(row(
            &[400.0, 200.0, 200.0, 100.0],
            n,
            0.05,
            &[4],
            5000 + seed,
        ));
        relative_figures(&r, &fast())[0]
            .unwrap()
            .contains(2.0)
            .unwrap()
    });
    for (what, c) in [("median", median), ("ratio", ratio), ("relative", rel)] {
        eprintln!("coverage of the {what}'s 95% interval over 400 seeds: {c:.3}");
        assert!((0.92..=0.985).contains(&c), "{what}: {c}");
    }
}
