//! The regression gate's decision: a finished [`Comparison`] judged by
//! `--fail-on` rules. A row fails only when its change is beyond a rule's
//! threshold, compare already calls it significant (its verdict, after the
//! run-wide shift unless the comparison was made `--absolute`), *and* it is
//! beyond the row's noise floor: a threshold alone would fail on noise,
//! significance alone on a 0.3% change nobody minds, and compare's verdict
//! alone on a shared VM's A/A pair (it takes the shift as exact and tests
//! each row at 5% on its own; see `floor` and docs/regression-gate.md).
//! Plain data; the binary maps the outcome to an exit code.

mod floor;

use serde::Serialize;

use crate::compare::{CompareRow, Comparison, Verdict};
use crate::gate::{Direction, GateRule, GateRules};
use crate::significance::ALPHA;

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Rows were judged and none broke a rule; no cell was lost.
    Passed,
    /// A row broke a rule, or a cell measured in A has no good repetition
    /// in B.
    Failed,
    /// No rule had a row it could judge (too few repetitions, or no row of
    /// its metric): a gate that judged nothing must not read as passed.
    NothingJudged,
    /// No row broke a rule, but a row's noise floor is above `--max-floor`:
    /// the gate was asked to see changes of that size and cannot here.
    TooNoisy,
}

/// How the gate draws its noise floor, beyond what the rows' repetitions
/// show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GateOptions {
    /// `--noise-floor`: a size of change (0.25 for 25%, a fall of 25% for
    /// a `<` rule, a rise of 25% for a `>` rule) that no row's change is
    /// called beyond noise within, whatever its repetitions say: the
    /// between-run spread this machine showed in an A/A calibration.
    pub noise_floor: Option<f64>,
    /// `--max-floor`: the largest noise floor (a size, on the rule's side)
    /// a row may have and still be judged; a row whose floor is above it
    /// makes the gate fail as too noisy (it could not see a change of that
    /// size there).
    pub max_floor: Option<f64>,
}

/// A row that broke a rule.
#[derive(Debug, Clone, Serialize)]
pub struct Breach {
    pub rule: String,
    /// "test c=N server".
    pub cell: String,
    /// `median(B) / median(A) - 1`, beyond the run-wide shift when `shift`
    /// is set.
    pub change: f64,
    pub change_ci95: Option<(f64, f64)>,
    pub p: f64,
    /// The run-wide shift B was divided by first (None: as measured).
    pub shift: Option<f64>,
    /// The row's noise floor (see [`RowFloor`]), which the change was beyond.
    pub floor: f64,
}

/// Why a row of a rule's metric was not judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotJudgedReason {
    /// So few repetitions that the test cannot reach p < 0.05.
    TooFew { a_n: usize, b_n: usize },
    /// The median in A is zero: there is no relative change to take.
    ZeroInA,
    /// Its noise floor is above `--max-floor`.
    TooNoisy { floor: f64, max_floor: f64 },
}

impl NotJudgedReason {
    pub fn describe(&self) -> String {
        match self {
            NotJudgedReason::TooFew { a_n, b_n } => format!(
                "too few repetitions ({a_n} in A, {b_n} in B; 4 or more a side are needed for \
                 the test to reach p < 0.05)"
            ),
            NotJudgedReason::ZeroInA => "its median in A is 0, so it has no relative change".into(),
            NotJudgedReason::TooNoisy { max_floor, .. } => format!(
                "too noisy to see a change of {} (noise floor above --max-floor)",
                pct(*max_floor)
            ),
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A row of a rule's metric that could not be judged.
#[derive(Debug, Clone, Serialize)]
pub struct NotJudged {
    pub rule: String,
    pub cell: String,
    #[serde(flatten)]
    pub reason: NotJudgedReason,
}

/// A whole row (test and connections) whose servers all moved beyond a
/// rule's threshold together: taken as the machine's (the run-wide shift),
/// so no cell breaks the rule for it, and the gate says so.
#[derive(Debug, Clone, Serialize)]
pub struct RowMoved {
    pub rule: String,
    pub test: String,
    pub connections: u32,
    /// The shift's factor minus one: -0.2 is every server 20% lower in B.
    pub change: f64,
    /// The servers it was taken over.
    pub servers: usize,
}

/// The smallest change a judged row could be called beyond noise by: the
/// larger of what its repetitions allow and `--noise-floor`.
#[derive(Debug, Clone, Serialize)]
pub struct RowFloor {
    pub rule: String,
    pub cell: String,
    /// The change on the rule's side that a change must pass: -0.3 for a
    /// `<` rule is a fall of more than 30%.
    pub floor: f64,
    /// From the repetitions of both runs and the shift: the half-width of
    /// an interval of the change at 5% split over every row judged
    /// (Bonferroni), so an A/A pair fails the gate by chance at most one
    /// time in twenty. None when the row has too few usable figures.
    pub measured: Option<f64>,
}

/// The gate's decision with everything it rests on.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    /// The rules, as given (`rps<-5%,p99>+10%`).
    pub rules: String,
    pub outcome: GateOutcome,
    /// Row and rule pairs judged (a row judged by two rules counts twice).
    pub judged: usize,
    pub breaches: Vec<Breach>,
    /// Cells with good repetitions in A and none in B: a server that broke
    /// (or a cell B did not run) cannot be called no regression.
    pub lost: Vec<String>,
    pub not_judged: Vec<NotJudged>,
    pub rows_moved: Vec<RowMoved>,
    /// Rules with no row of their metric, and rules that fail on an
    /// improvement, in words.
    pub notes: Vec<String>,
    /// Whether the comparison took the run-wide shift out of any row.
    pub beyond_shift: bool,
    #[serde(flatten)]
    pub options: GateOptions,
    /// The row and rule pairs the 5% of the floor is split over: every
    /// pair that had enough repetitions to be judged.
    pub family: usize,
    /// Each row judged, with its noise floor.
    pub floors: Vec<RowFloor>,
    /// Each rule's threshold, for [`Gate::blind`].
    #[serde(skip)]
    rule_thresholds: Vec<(String, f64)>,
}

impl Gate {
    pub fn passed(&self) -> bool {
        self.outcome == GateOutcome::Passed
    }

    /// The judged rows whose noise floor is above their rule's threshold:
    /// a change between the two passes unseen there.
    pub fn blind(&self) -> Vec<&RowFloor> {
        self.floors
            .iter()
            .filter(|f| f.floor.abs() > self.threshold_of(&f.rule).abs())
            .collect()
    }

    fn threshold_of(&self, rule: &str) -> f64 {
        self.rule_thresholds
            .iter()
            .find(|(r, _)| r == rule)
            .map_or(0.0, |(_, t)| *t)
    }
}

fn cell(r: &CompareRow) -> String {
    format!("{} c={} {}", r.test, r.connections, r.server)
}

/// Judges `c` by `rules`, with the floor from the repetitions alone.
pub fn judge(c: &Comparison, rules: &GateRules) -> Gate {
    judge_with(c, rules, GateOptions::default())
}

/// Judges `c` by `rules` and `options`.
pub fn judge_with(c: &Comparison, rules: &GateRules, options: GateOptions) -> Gate {
    let mut gate = Gate {
        rules: rules.to_string(),
        outcome: GateOutcome::Passed,
        judged: 0,
        breaches: Vec::new(),
        lost: c.only_in_a.clone(),
        not_judged: Vec::new(),
        rows_moved: Vec::new(),
        notes: Vec::new(),
        beyond_shift: !c.run_shift.is_empty(),
        options,
        family: 0,
        floors: Vec::new(),
        rule_thresholds: rules
            .0
            .iter()
            .map(|r| (r.text.clone(), r.threshold))
            .collect(),
    };
    // The family the 5% is split over: every row and rule pair that
    // could be judged at all.
    let family = rules
        .0
        .iter()
        .map(|rule| {
            c.rows
                .iter()
                .filter(|r| r.metric == rule.metric && unjudgeable(r).is_none())
                .count()
        })
        .sum::<usize>()
        .max(1);
    gate.family = family;
    for rule in &rules.0 {
        judge_rule(c, rule, family, &mut gate);
    }
    let too_noisy = gate
        .not_judged
        .iter()
        .any(|n| matches!(n.reason, NotJudgedReason::TooNoisy { .. }));
    gate.outcome = if !gate.breaches.is_empty() || !gate.lost.is_empty() {
        GateOutcome::Failed
    } else if too_noisy {
        GateOutcome::TooNoisy
    } else if gate.judged == 0 {
        GateOutcome::NothingJudged
    } else {
        GateOutcome::Passed
    };
    gate
}

fn unjudgeable(r: &CompareRow) -> Option<NotJudgedReason> {
    if r.verdict == Verdict::TooFew {
        Some(NotJudgedReason::TooFew {
            a_n: r.a.n,
            b_n: r.b.n,
        })
    } else if !r.change.is_finite() {
        Some(NotJudgedReason::ZeroInA)
    } else {
        None
    }
}

/// The row's noise floor as a size on `rule`'s side (0.3: a fall of 30%
/// for a `<` rule, a rise of 30% for a `>` one), and the part its
/// repetitions gave. The interval is symmetric in `ln(1 + change)`, so the
/// same noise is a smaller fall than rise.
fn floor_of(
    r: &CompareRow,
    rule: &GateRule,
    family: usize,
    options: GateOptions,
) -> (f64, Option<f64>) {
    let measured = r.noise.map(|n| {
        let half = floor::t_two_sided(ALPHA / family as f64, n.df) * n.se;
        match rule.direction {
            Direction::Below => -(-half).exp_m1(),
            Direction::Above => half.exp_m1(),
        }
    });
    let given = options.noise_floor.unwrap_or(0.0);
    (measured.unwrap_or(0.0).max(given), measured)
}

/// A size on `rule`'s side as a signed change.
fn signed(rule: &GateRule, size: f64) -> f64 {
    match rule.direction {
        Direction::Below => -size,
        Direction::Above => size,
    }
}

fn judge_rule(c: &Comparison, rule: &GateRule, family: usize, gate: &mut Gate) {
    if rule.flags_improvement() {
        gate.notes.push(format!(
            "{rule} fails on a change compare calls better ({}): it catches a change too good \
             to be true, such as a server that stopped doing its work, not a regression",
            rule.metric.title()
        ));
    }
    let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| r.metric == rule.metric).collect();
    if rows.is_empty() {
        gate.notes.push(format!(
            "{rule}: neither run has a cell of {} in both runs, so it judged nothing",
            rule.metric.title()
        ));
    }
    for r in rows {
        if let Some(reason) = unjudgeable(r) {
            gate.not_judged.push(NotJudged {
                rule: rule.text.clone(),
                cell: cell(r),
                reason,
            });
            continue;
        }
        let (size, measured) = floor_of(r, rule, family, gate.options);
        let floor = signed(rule, size);
        if let Some(max_floor) = gate.options.max_floor.filter(|&m| size > m) {
            gate.not_judged.push(NotJudged {
                rule: rule.text.clone(),
                cell: cell(r),
                reason: NotJudgedReason::TooNoisy { floor, max_floor },
            });
            continue;
        }
        gate.judged += 1;
        gate.floors.push(RowFloor {
            rule: rule.text.clone(),
            cell: cell(r),
            floor,
            measured: measured.map(|m| signed(rule, m)),
        });
        // Better or Worse is p < alpha; the threshold's side says which
        // of the two the rule is about, so the verdict need not.
        let significant = matches!(r.verdict, Verdict::Better | Verdict::Worse);
        let beyond_floor = r.change.abs() > size;
        if significant && beyond_floor && rule.beyond(r.change) {
            gate.breaches.push(Breach {
                rule: rule.text.clone(),
                cell: cell(r),
                change: r.change,
                change_ci95: r.change_ci95,
                p: r.p,
                shift: r.shift,
                floor,
            });
        }
    }
    for m in c.run_shift.iter().filter(|m| m.metric == rule.metric) {
        let change = m.shift.factor - 1.0;
        if rule.beyond(change) {
            gate.rows_moved.push(RowMoved {
                rule: rule.text.clone(),
                test: m.test.clone(),
                connections: m.connections,
                change,
                servers: m.shift.cells,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, compare_with, Metric, METHOD};
    use crate::significance::ALPHA;
    use crate::stats::summarize;

    fn rules(s: &str) -> GateRules {
        s.parse().unwrap()
    }

    fn row(metric: Metric, server: &str, n: usize, change: f64, verdict: Verdict) -> CompareRow {
        let a = summarize(&vec![100.0; n]).unwrap();
        let b = summarize(&vec![100.0 * (1.0 + change); n]).unwrap();
        CompareRow {
            metric,
            test: "blank".into(),
            connections: 100,
            server: server.into(),
            a,
            b,
            a_flags: String::new(),
            b_flags: String::new(),
            change,
            change_ci95: Some((change - 0.01, change + 0.01)),
            p: if matches!(verdict, Verdict::Better | Verdict::Worse) {
                0.008
            } else {
                0.6
            },
            verdict,
            shift: None,
            noise: None,
        }
    }

    fn comparison(rows: Vec<CompareRow>) -> Comparison {
        let run = crate::environment::tests::run(serde_json::Value::Null);
        Comparison {
            format: "netbench-compare/1",
            method: METHOD,
            alpha: ALPHA,
            a: run.clone(),
            b: run,
            rows,
            only_in_a: vec![],
            only_in_b: vec![],
            in_neither: vec![],
            environment_differences: vec![],
            normalised_to_probe_ns: None,
            run_shift: vec![],
        }
    }

    #[test]
    fn a_row_fails_only_beyond_the_threshold_and_beyond_noise() {
        let c = comparison(vec![
            // Significant and beyond: fails.
            row(Metric::RequestsPerS, "slow", 5, -0.2, Verdict::Worse),
            // Beyond the threshold but within the noise: passes.
            row(Metric::RequestsPerS, "noisy", 5, -0.2, Verdict::NoChange),
            // Significant but within the threshold: passes.
            row(Metric::RequestsPerS, "tight", 5, -0.02, Verdict::Worse),
            // Significant, beyond, the other way: passes.
            row(Metric::RequestsPerS, "fast", 5, 0.3, Verdict::Better),
            // p99 up 25%, significant: fails the p99 rule.
            row(Metric::LatencyP99, "slow", 5, 0.25, Verdict::Worse),
        ]);
        let g = judge(&c, &rules("rps<-5%,p99>+10%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert_eq!(g.judged, 5);
        let broke: Vec<(&str, &str)> = g
            .breaches
            .iter()
            .map(|b| (b.rule.as_str(), b.cell.as_str()))
            .collect();
        assert_eq!(
            broke,
            [
                ("rps<-5%", "blank c=100 slow"),
                ("p99>+10%", "blank c=100 slow")
            ]
        );
        assert!(g.notes.is_empty(), "{:?}", g.notes);
    }

    #[test]
    fn the_floor_widens_with_every_row_the_gate_judges() {
        use crate::compare::ChangeNoise;
        let noisy = |server: &str, change: f64, verdict: Verdict| CompareRow {
            noise: Some(ChangeNoise { se: 0.05, df: 8.0 }),
            ..row(Metric::RequestsPerS, server, 5, change, verdict)
        };
        // Alone, a 20% fall is beyond a floor of t(5%, 8) * 0.05 in ln.
        let g = judge(
            &comparison(vec![noisy("slow", -0.2, Verdict::Worse)]),
            &rules("rps<-5%"),
        );
        assert_eq!(g.outcome, GateOutcome::Failed, "{g:?}");
        let floor = -(-floor::t_two_sided(0.05, 8.0) * 0.05).exp_m1();
        assert!((g.breaches[0].floor + floor).abs() < 1e-12, "{g:?}");
        // Among 40 rows the same fall is one chance in 40: within the floor.
        let mut rows = vec![noisy("slow", -0.2, Verdict::Worse)];
        rows.extend((0..39).map(|i| noisy(&format!("s{i}"), 0.0, Verdict::NoChange)));
        let g = judge(&comparison(rows.clone()), &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Passed, "{g:?}");
        assert_eq!(g.family, 40);
        assert!(g.floors[0].floor < -0.2, "{:?}", g.floors[0]);
        assert_eq!(g.blind().len(), 40);
        // Asked to see 20%, it cannot, and fails as too noisy.
        let opts = GateOptions {
            max_floor: Some(0.2),
            ..GateOptions::default()
        };
        let g = judge_with(&comparison(rows), &rules("rps<-5%"), opts);
        assert_eq!(g.outcome, GateOutcome::TooNoisy, "{g:?}");
        assert_eq!(g.judged, 0);
    }

    #[test]
    fn nothing_judged_is_not_a_pass() {
        let c = comparison(vec![
            row(Metric::RequestsPerS, "a", 3, -0.5, Verdict::TooFew),
            row(Metric::RequestsPerS, "b", 1, 0.0, Verdict::TooFew),
        ]);
        let g = judge(&c, &rules("rps<-5%,knee<-5%"));
        assert_eq!(g.outcome, GateOutcome::NothingJudged);
        assert!(!g.passed());
        assert_eq!(g.judged, 0);
        assert_eq!(g.not_judged.len(), 2);
        assert_eq!(
            g.not_judged[0].reason,
            NotJudgedReason::TooFew { a_n: 3, b_n: 3 }
        );
        assert!(
            g.notes.iter().any(|n| n.starts_with("knee<-5%: ")),
            "{:?}",
            g.notes
        );
        // One row that could be judged is enough for a verdict.
        let mut c = c;
        c.rows
            .push(row(Metric::RequestsPerS, "c", 5, -0.01, Verdict::NoChange));
        assert_eq!(judge(&c, &rules("rps<-5%")).outcome, GateOutcome::Passed);
    }

    #[test]
    fn a_cell_lost_in_b_fails_and_a_new_one_does_not() {
        let mut c = comparison(vec![row(
            Metric::RequestsPerS,
            "a",
            5,
            0.0,
            Verdict::NoChange,
        )]);
        c.only_in_b.push("blank c=100 new".into());
        assert!(judge(&c, &rules("rps<-5%")).passed());
        c.only_in_a.push("blank c=100 gone".into());
        let g = judge(&c, &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert_eq!(g.lost, ["blank c=100 gone"]);
    }

    #[test]
    fn a_zero_baseline_is_not_judged() {
        let mut r = row(Metric::FixedRateCpuPerRequest, "a", 5, 0.0, Verdict::Worse);
        r.change = f64::NAN;
        let g = judge(&comparison(vec![r]), &rules("cpu_per_req>+5%"));
        assert_eq!(g.outcome, GateOutcome::NothingJudged);
        assert_eq!(g.not_judged[0].reason, NotJudgedReason::ZeroInA);
    }

    #[test]
    fn a_rule_on_an_improvement_says_what_it_means() {
        let c = comparison(vec![row(
            Metric::RequestsPerS,
            "a",
            5,
            0.6,
            Verdict::Better,
        )]);
        let g = judge(&c, &rules("rps>+50%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert!(g.notes[0].contains("too good to be true"), "{:?}", g.notes);
    }

    #[test]
    fn every_server_slower_together_is_the_machine_unless_absolute() {
        let (a, b) = crate::compare::tests::drifted(0.8, 1.0);
        let g = judge(&compare(&a, &b), &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Passed, "{g:?}");
        assert!(g.beyond_shift);
        assert_eq!(g.rows_moved.len(), 1);
        let moved = &g.rows_moved[0];
        assert!(
            (moved.change + 0.2).abs() < 1e-9 && moved.servers == 6,
            "{moved:?}"
        );
        let g = judge(&compare_with(&a, &b, false), &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert_eq!(g.breaches.len(), 6);
        assert!(!g.beyond_shift && g.rows_moved.is_empty());
        // A shift within the threshold is not news.
        let (a, b) = crate::compare::tests::drifted(0.97, 1.0);
        assert!(judge(&compare(&a, &b), &rules("rps<-5%"))
            .rows_moved
            .is_empty());
    }

    #[test]
    fn one_server_slower_stands_out_from_the_shift() {
        // s0 20% slower while the host drifted 3% up.
        let (a, b) = crate::compare::tests::drifted(1.03, 0.8);
        let g = judge(&compare(&a, &b), &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert_eq!(g.breaches.len(), 1);
        let b = &g.breaches[0];
        assert_eq!(b.cell, "blank c=100 s0");
        assert!((b.change + 0.2).abs() < 1e-9, "{b:?}");
        assert!(b.shift.is_some_and(|s| (s - 1.03).abs() < 1e-9));
    }
}
