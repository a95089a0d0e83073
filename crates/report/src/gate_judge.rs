//! The regression gate's decision: a finished [`Comparison`] judged by
//! `--fail-on` rules. A row fails only when its change is beyond a rule's
//! threshold *and* compare already calls it significant (its verdict, after
//! the run-wide shift unless the comparison was made `--absolute`): a
//! threshold alone would fail on noise, significance alone on a 0.3% change
//! nobody minds. Plain data; the binary maps the outcome to an exit code.

use serde::Serialize;

use crate::compare::{CompareRow, Comparison, Verdict};
use crate::gate::{GateRule, GateRules};

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
}

/// Why a row of a rule's metric was not judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotJudgedReason {
    /// So few repetitions that the test cannot reach p < 0.05.
    TooFew { a_n: usize, b_n: usize },
    /// The median in A is zero: there is no relative change to take.
    ZeroInA,
}

impl NotJudgedReason {
    pub fn describe(&self) -> String {
        match self {
            NotJudgedReason::TooFew { a_n, b_n } => format!(
                "too few repetitions ({a_n} in A, {b_n} in B; 4 or more a side are needed for \
                 the test to reach p < 0.05)"
            ),
            NotJudgedReason::ZeroInA => "its median in A is 0, so it has no relative change".into(),
        }
    }
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
}

impl Gate {
    pub fn passed(&self) -> bool {
        self.outcome == GateOutcome::Passed
    }
}

fn cell(r: &CompareRow) -> String {
    format!("{} c={} {}", r.test, r.connections, r.server)
}

/// Judges `c` by `rules`.
pub fn judge(c: &Comparison, rules: &GateRules) -> Gate {
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
    };
    for rule in &rules.0 {
        judge_rule(c, rule, &mut gate);
    }
    gate.outcome = if !gate.breaches.is_empty() || !gate.lost.is_empty() {
        GateOutcome::Failed
    } else if gate.judged == 0 {
        GateOutcome::NothingJudged
    } else {
        GateOutcome::Passed
    };
    gate
}

fn judge_rule(c: &Comparison, rule: &GateRule, gate: &mut Gate) {
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
        let reason = if r.verdict == Verdict::TooFew {
            Some(NotJudgedReason::TooFew {
                a_n: r.a.n,
                b_n: r.b.n,
            })
        } else if !r.change.is_finite() {
            Some(NotJudgedReason::ZeroInA)
        } else {
            None
        };
        if let Some(reason) = reason {
            gate.not_judged.push(NotJudged {
                rule: rule.text.clone(),
                cell: cell(r),
                reason,
            });
            continue;
        }
        gate.judged += 1;
        // Better or Worse is p < alpha; the threshold's side says which
        // of the two the rule is about, so the verdict need not.
        let significant = matches!(r.verdict, Verdict::Better | Verdict::Worse);
        if significant && rule.beyond(r.change) {
            gate.breaches.push(Breach {
                rule: rule.text.clone(),
                cell: cell(r),
                change: r.change,
                change_ci95: r.change_ci95,
                p: r.p,
                shift: r.shift,
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
