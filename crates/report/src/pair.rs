//! Paired A/B within one run (issue 43 item 5): two variants of a server
//! (two commits, two allocators, two flags; `rust-hyper` and
//! `rust-hyper:slow`) measured round by round in the same run, compared by
//! their paired ratio in each row: B over A in every round where both have
//! a figure, the median of those ratios with its bootstrap 95% interval.
//! A slow episode of the host slows both sides of a round alike and leaves
//! the ratio alone, which is what two runs compared side by side cannot
//! offer on a noisy machine.
//!
//! `--fail-on` judges it ([`judge_pair`]) with one rule: a row **fails** a
//! `<` rule (`rps<-5%`) when its change is significant in the rule's
//! direction (the interval of B / A − 1 lies wholly below 0) **and** a
//! change as large as the threshold is not ruled out (the interval's far
//! end is below −5%). In words: a gate passes a row when the data show no
//! fall, or show that the fall is smaller than the threshold. So an A/A
//! pair fails only when its interval misses 1, at most about one row in
//! forty; a real 5% slowdown, whose interval is around −5%, fails; a real
//! 2% slowdown measured to ±1% passes (it is shown smaller than 5%). A `>`
//! rule mirrors it (the interval wholly above 0 and its far end above the
//! threshold). Requiring the whole interval beyond the threshold instead
//! would pass a true 5% slowdown almost every time.

use std::io::{self, Write};

use netbench_stats::{paired_ratio, Bootstrap, Estimate, MIN_ROUNDS};
use serde::Serialize;

use crate::compare::{percent, Metric};
use crate::gate::{Direction, GateRule, GateRules};
use crate::gate_judge::GateOutcome;
use crate::model::{Report, RunInfo};
use netbench_records::facts::Facts;

/// The layout of the pair's JSON.
pub const PAIR_FORMAT: &str = "netbench-pair/1";

/// How the pair is compared, in words, for every output.
pub const PAIR_METHOD: &str = "paired within rounds: in each round where both have a figure, B / \
    A; the median of those ratios with its percentile-bootstrap 95% interval (rounds resampled, \
    expanded percentiles; none below 5 rounds); change = ratio − 1";

/// Why the pair cannot be compared; each says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    /// A name in `--pair` is not a server variant of the run.
    #[error("`{name}` is not a server of run {run}; its servers are: {known}")]
    UnknownServer {
        name: String,
        run: i64,
        known: String,
    },
    /// `--pair` named one server twice.
    #[error("--pair names `{0}` twice; give two variants, such as `rust-hyper rust-hyper:slow`")]
    SameServer(String),
}

/// One row and metric of the pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairRow {
    pub metric: Metric,
    pub test: String,
    pub connections: u32,
    /// Rounds in which both have a figure.
    pub rounds: usize,
    /// Rounds in which A has a figure.
    pub a_rounds: usize,
    /// B over A, paired within rounds; None when no round has both.
    pub ratio: Option<Estimate>,
    /// The ratio − 1 with its interval's ends − 1.
    pub change: Option<f64>,
    pub change_ci95: Option<(f64, f64)>,
}

/// Two variants of one run, side by side, row by row.
#[derive(Debug, Clone, Serialize)]
pub struct PairComparison {
    pub format: &'static str,
    pub method: &'static str,
    pub run: RunInfo,
    pub a: String,
    pub b: String,
    pub rows: Vec<PairRow>,
}

/// The per-round figures of `metric` of `server`'s cell at a test and
/// connection count, by round (repetition number − 1).
fn by_round(r: &Report, metric: Metric, test: &str, conns: u32, server: &str) -> Vec<Option<f64>> {
    let reps: Vec<_> = r
        .repetitions
        .iter()
        .filter(|x| x.ok && x.test == test && x.connections == conns && x.server == server)
        .collect();
    let rounds = reps.iter().map(|x| x.repetition).max().unwrap_or(0) as usize;
    let mut v = vec![None; rounds];
    for x in reps {
        let throughput = crate::kinds::in_throughput_tables(x.kind);
        let value = match (metric, x.result.as_ref(), x.facts.as_ref()) {
            (Metric::FixedRateCpuPerRequest, _, Some(Facts::FixedRate(f))) => {
                f.server_cpu_us_per_request
            }
            (Metric::RequestsPerS, Some(f), _) if throughput => Some(f.rps),
            (Metric::LatencyP99, Some(f), _) if throughput => Some(f.latency_p99_ns),
            _ => None,
        };
        if x.repetition >= 1 {
            v[x.repetition as usize - 1] = value;
        }
    }
    v
}

/// The metrics a pair is compared by.
const PAIR_METRICS: [Metric; 3] = [
    Metric::RequestsPerS,
    Metric::LatencyP99,
    Metric::FixedRateCpuPerRequest,
];

/// Compares `b` against `a`, two server variants of the run `r`, in every
/// test and connection count where either has a good round.
pub fn compare_pair(r: &Report, a: &str, b: &str) -> Result<PairComparison, PairError> {
    if a == b {
        return Err(PairError::SameServer(a.to_string()));
    }
    let known: Vec<&str> = r.servers.iter().map(|s| s.label.as_str()).collect();
    for name in [a, b] {
        if !known.contains(&name) {
            return Err(PairError::UnknownServer {
                name: name.to_string(),
                run: r.run.id,
                known: known.join(", "),
            });
        }
    }
    let mut keys: Vec<(String, u32)> = Vec::new();
    for x in r
        .repetitions
        .iter()
        .filter(|x| x.server == a || x.server == b)
    {
        let k = (x.test.clone(), x.connections);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let boot = Bootstrap::default();
    let mut rows = Vec::new();
    for metric in PAIR_METRICS {
        for (test, conns) in &keys {
            let xa = by_round(r, metric, test, *conns, a);
            let xb = by_round(r, metric, test, *conns, b);
            let a_rounds = xa.iter().flatten().count();
            if a_rounds == 0 && xb.iter().flatten().count() == 0 {
                continue;
            }
            let ratio = paired_ratio(&xb, &xa, &boot);
            rows.push(PairRow {
                metric,
                test: test.clone(),
                connections: *conns,
                rounds: ratio.map_or(0, |e| e.n),
                a_rounds,
                change: ratio.map(|e| e.value - 1.0),
                change_ci95: ratio
                    .and_then(|e| e.ci95)
                    .map(|(lo, hi)| (lo - 1.0, hi - 1.0)),
                ratio,
            });
        }
    }
    Ok(PairComparison {
        format: PAIR_FORMAT,
        method: PAIR_METHOD,
        run: r.run.clone(),
        a: a.to_string(),
        b: b.to_string(),
        rows,
    })
}

/// A row that broke a rule.
#[derive(Debug, Clone, Serialize)]
pub struct PairBreach {
    pub rule: String,
    /// "test c=N".
    pub row: String,
    pub change: f64,
    pub change_ci95: (f64, f64),
}

/// What the gate decided about a pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairGate {
    pub rules: String,
    pub outcome: GateOutcome,
    /// Row and rule pairs judged.
    pub judged: usize,
    pub breaches: Vec<PairBreach>,
    /// Rows where A has good rounds and B none: B broke, or was not run.
    pub lost: Vec<String>,
    /// Rows of a rule's metric that could not be judged, with why.
    pub not_judged: Vec<String>,
    /// Rules with no row of their metric, and rules on an improvement.
    pub notes: Vec<String>,
}

impl PairGate {
    pub fn passed(&self) -> bool {
        self.outcome == GateOutcome::Passed
    }
}

/// Whether `change_ci95` breaks `rule` by the pair's rule (module
/// documentation): significant in the rule's direction, and the threshold
/// within reach.
pub fn breaks(rule: &GateRule, (lo, hi): (f64, f64)) -> bool {
    match rule.direction {
        Direction::Below => hi < 0.0 && lo < rule.threshold,
        Direction::Above => lo > 0.0 && hi > rule.threshold,
    }
}

/// Judges the pair by `rules`.
pub fn judge_pair(p: &PairComparison, rules: &GateRules) -> PairGate {
    let mut gate = PairGate {
        rules: rules.to_string(),
        outcome: GateOutcome::Passed,
        judged: 0,
        breaches: Vec::new(),
        lost: Vec::new(),
        not_judged: Vec::new(),
        notes: Vec::new(),
    };
    for r in &p.rows {
        let row = format!("{} c={}", r.test, r.connections);
        if r.a_rounds > 0
            && r.rounds == 0
            && r.metric == first_metric(p, r)
            && !gate.lost.contains(&row)
        {
            gate.lost.push(row);
        }
    }
    for rule in &rules.0 {
        let rows: Vec<&PairRow> = p.rows.iter().filter(|r| r.metric == rule.metric).collect();
        if rows.is_empty() {
            gate.notes.push(format!(
                "{}: neither {} nor {} has a row of its metric",
                rule.text, p.a, p.b
            ));
        }
        if rule.flags_improvement() {
            gate.notes.push(format!(
                "{}: fails on a change compare calls better, not on a regression",
                rule.text
            ));
        }
        for r in rows {
            let row = format!("{} c={}", r.test, r.connections);
            let Some(ci) = r.change_ci95 else {
                if r.rounds > 0 {
                    gate.not_judged.push(format!(
                        "{}: {row}: {} paired rounds, {MIN_ROUNDS} or more are needed for an \
                         interval",
                        rule.text, r.rounds
                    ));
                }
                continue;
            };
            gate.judged += 1;
            if breaks(rule, ci) {
                gate.breaches.push(PairBreach {
                    rule: rule.text.clone(),
                    row,
                    change: r.change.unwrap_or(f64::NAN),
                    change_ci95: ci,
                });
            }
        }
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

/// The metric a row is listed as lost under: its kind's first.
fn first_metric(p: &PairComparison, r: &PairRow) -> Metric {
    p.rows
        .iter()
        .find(|x| x.test == r.test && x.connections == r.connections)
        .map_or(r.metric, |x| x.metric)
}

/// "+1.2% [−0.4%, +2.9%]".
fn change_text(r: &PairRow) -> String {
    match (r.change, r.change_ci95) {
        (Some(c), Some((lo, hi))) => format!("{} [{}, {}]", percent(c), percent(lo), percent(hi)),
        (Some(c), None) => format!("{} (no interval: {} rounds)", percent(c), r.rounds),
        _ => "-".into(),
    }
}

/// Writes the pair as text, and the gate's decision when there is one.
pub fn write_pair_text(
    out: &mut impl Write,
    p: &PairComparison,
    gate: Option<&PairGate>,
) -> io::Result<()> {
    writeln!(
        out,
        "run {} ({}, {}): {} (B) against {} (A)\n{}\n",
        p.run.id, p.run.suite, p.run.started_at, p.b, p.a, p.method
    )?;
    for metric in PAIR_METRICS {
        let rows: Vec<&PairRow> = p.rows.iter().filter(|r| r.metric == metric).collect();
        if rows.is_empty() {
            continue;
        }
        let mut lines = vec![vec![
            metric.title().to_string(),
            "rounds".into(),
            "B / A".into(),
            "change [95% interval]".into(),
        ]];
        for r in rows {
            lines.push(vec![
                format!("{} c={}", r.test, r.connections),
                r.rounds.to_string(),
                r.ratio.map_or("-".into(), |e| format!("{:.4}", e.value)),
                change_text(r),
            ]);
        }
        crate::format::write_columns(out, &lines, |i| i == 0, false)?;
        writeln!(out)?;
    }
    if let Some(g) = gate {
        write_pair_gate(out, g)?;
    }
    Ok(())
}

/// The gate's part: each breach, lost row and row not judged, then one
/// headline.
pub fn write_pair_gate(out: &mut impl Write, g: &PairGate) -> io::Result<()> {
    writeln!(
        out,
        "Regression gate (--fail-on {}), paired within rounds:",
        g.rules
    )?;
    for b in &g.breaches {
        writeln!(
            out,
            "  FAIL {}: {} {} [{}, {}]",
            b.row,
            b.rule,
            percent(b.change),
            percent(b.change_ci95.0),
            percent(b.change_ci95.1)
        )?;
    }
    for l in &g.lost {
        writeln!(out, "  LOST {l}: A has good rounds, B none")?;
    }
    for n in &g.not_judged {
        writeln!(out, "  not judged: {n}")?;
    }
    for n in &g.notes {
        writeln!(out, "  note: {n}")?;
    }
    writeln!(out, "{}", pair_headline(g))
}

/// The gate's one-line decision.
pub fn pair_headline(g: &PairGate) -> String {
    match g.outcome {
        GateOutcome::Passed => format!(
            "gate passed: no row of B moved beyond {} against A (a fall shown smaller than the \
             threshold, or none shown; {} rows judged)",
            g.rules, g.judged
        ),
        GateOutcome::Failed => {
            let mut parts = Vec::new();
            if !g.breaches.is_empty() {
                parts.push(format!(
                    "{} row{} moved beyond {} and beyond noise",
                    g.breaches.len(),
                    if g.breaches.len() == 1 { "" } else { "s" },
                    g.rules
                ));
            }
            if !g.lost.is_empty() {
                parts.push(format!("{} row(s) lost in B", g.lost.len()));
            }
            format!("gate FAILED: {}", parts.join("; "))
        }
        GateOutcome::NothingJudged | GateOutcome::TooNoisy => format!(
            "gate FAILED: nothing could be judged by {} (a row needs {MIN_ROUNDS} or more rounds \
             with both variants)",
            g.rules
        ),
    }
}

/// The pair, and the gate when there is one, as one JSON object.
pub fn pair_json(p: &PairComparison, gate: Option<&PairGate>) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    if let Some(g) = gate {
        v["gate"] = serde_json::to_value(g).unwrap_or_default();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_records::{fixtures, RunDetail};

    /// A run of `rounds` rounds of `a` and `b` (b at `factor` of a), a slow
    /// round at half speed, a small wobble.
    fn run(rounds: u32, factor: f64) -> RunDetail {
        let mut ms = Vec::new();
        for round in 1..=rounds {
            let speed = if round == 3 { 0.5 } else { 1.0 };
            let wobble = 1.0 + 0.004 * f64::from(round % 3) - 0.004;
            ms.push(fixtures::ok(
                fixtures::key("a", "blank", 100, round),
                1000.0 * speed * wobble,
            ));
            let mut m = fixtures::ok(
                fixtures::key("a", "blank", 100, round),
                1000.0 * factor * speed / wobble,
            );
            m.key.variant = "slow".into();
            ms.push(m);
        }
        RunDetail {
            events: Vec::new(),
            scenarios: vec![fixtures::scenario(0, "blank", &[100])],
            servers: vec![fixtures::server("a", ""), fixtures::server("a", "slow")],
            measurements: ms,
            ..fixtures::run(1, "t")
        }
    }

    fn rules(s: &str) -> GateRules {
        s.parse().unwrap()
    }

    #[test]
    fn an_aa_pair_passes_and_a_five_percent_slowdown_fails() {
        let aa = crate::build_report(&run(10, 1.0));
        let p = compare_pair(&aa, "a", "a:slow").unwrap();
        let rps = &p.rows[0];
        assert_eq!((rps.metric, rps.rounds), (Metric::RequestsPerS, 10));
        assert_eq!(rps.ratio.unwrap().contains(1.0), Some(true));
        let g = judge_pair(&p, &rules("rps<-5%"));
        assert!(g.passed(), "{g:?}");
        assert_eq!(g.judged, 1);

        let slow = crate::build_report(&run(10, 0.95));
        let p = compare_pair(&slow, "a", "a:slow").unwrap();
        let g = judge_pair(&p, &rules("rps<-5%,p99>+10%"));
        assert_eq!(g.outcome, GateOutcome::Failed, "{g:?}");
        assert_eq!(g.breaches.len(), 1, "{g:?}");
        assert_eq!(g.breaches[0].row, "blank c=100");
        let mut text = Vec::new();
        write_pair_text(&mut text, &p, Some(&g)).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("  FAIL blank c=100: rps<-5% -5.0% ["),
            "{text}"
        );
        assert!(
            text.ends_with("gate FAILED: 1 row moved beyond rps<-5%,p99>+10% and beyond noise\n"),
            "{text}"
        );
        let json = pair_json(&p, Some(&g));
        assert_eq!(json["format"], PAIR_FORMAT);
        assert_eq!(json["gate"]["outcome"], "failed");
    }

    #[test]
    fn a_fall_shown_smaller_than_the_threshold_passes() {
        let rule = &rules("rps<-5%").0[0];
        assert!(breaks(rule, (-0.065, -0.035)), "a 5% fall");
        assert!(!breaks(rule, (-0.03, -0.01)), "a 2% fall shown under 5%");
        assert!(!breaks(rule, (-0.08, 0.01)), "no fall shown");
        let rise = &rules("p99>+10%").0[0];
        assert!(breaks(rise, (0.05, 0.12)) && !breaks(rise, (0.02, 0.08)));
    }

    #[test]
    fn too_few_rounds_judge_nothing_and_unknown_names_are_refused() {
        let few = crate::build_report(&run(4, 0.5));
        let p = compare_pair(&few, "a", "a:slow").unwrap();
        let g = judge_pair(&p, &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::NothingJudged);
        assert_eq!(g.not_judged.len(), 1, "{g:?}");
        assert!(pair_headline(&g).starts_with("gate FAILED: nothing could be judged"));
        let err = compare_pair(&few, "a", "b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`b` is not a server of run 1; its servers are: a, a:slow"
        );
        assert!(matches!(
            compare_pair(&few, "a", "a"),
            Err(PairError::SameServer(_))
        ));
    }

    #[test]
    fn a_variant_lost_in_b_fails() {
        let mut r = run(10, 1.0);
        for m in r
            .measurements
            .iter_mut()
            .filter(|m| m.key.variant == "slow")
        {
            *m = fixtures::failed(m.key.clone(), "server exited");
        }
        let p = compare_pair(&crate::build_report(&r), "a", "a:slow").unwrap();
        let g = judge_pair(&p, &rules("rps<-5%"));
        assert_eq!(g.outcome, GateOutcome::Failed);
        assert_eq!(g.lost, ["blank c=100"]);
    }
}
