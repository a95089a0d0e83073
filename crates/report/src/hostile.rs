//! The hostile-clients section's model (issue 33), built once from the
//! stored facts: per hostile scenario, a row per server with each attack's
//! figures against the server's own baseline, the conformance score from
//! its verify JSON, the resilience ranking and the worst cases in words.
//! `hostile_view.rs` lays it out; nothing there computes a figure.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use netbench_records::facts::Facts;
use netbench_records::hostile::{AttackFacts, HostileFacts};
use netbench_records::{MeasurementStatus, RunDetail};
use serde::Serialize;

use crate::suite_table::label;

/// How the rows are ranked, as the report states it.
pub const RANK_RULE: &str = "Ranked by the good load's worst success rate under any attack \
(higher first), then by the attacks that crashed the server or stopped it accepting \
connections (fewer first), then by the worst p99 ratio to the baseline (lower first); servers \
whose cell failed come last.";

/// One hostile scenario's table.
#[derive(Debug, Clone, Serialize)]
pub struct HostileTable {
    pub scenario: String,
    /// The attacks in the order they ran: the table's columns.
    pub attacks: Vec<String>,
    /// The good load's rate and each attack's size, from the first row's
    /// facts (a scenario's are the same for every server).
    pub rate_per_s: Option<f64>,
    /// The good load's connections.
    pub connections: Option<u32>,
    pub attack_connections: Option<u32>,
    pub attack_s: Option<f64>,
    pub after_s: Option<f64>,
    /// Ranked: the most resilient first.
    pub rows: Vec<HostileRow>,
    /// The worst server × attack cases, worst first, in words.
    pub worst: Vec<String>,
}

/// One server under every attack.
#[derive(Debug, Clone, Serialize)]
pub struct HostileRow {
    pub server: String,
    /// 1-based place in the ranking.
    pub rank: usize,
    /// Conformance probes passed and run (verify's `conformance`); None
    /// when they were not run.
    pub conformance: Option<(u32, u32)>,
    pub baseline_success: Option<f64>,
    pub baseline_p99_ns: Option<f64>,
    /// The good load's rate for this server when it was lowered because the
    /// server answered under 97% of the suite's rate alone.
    pub lowered_rate_per_s: Option<f64>,
    /// By attack, in the table's column order; None where it did not run.
    pub cells: Vec<Option<AttackCell>>,
    pub worst_success: Option<f64>,
    pub worst_p99_ratio: Option<f64>,
    /// The best attack's p99 ratio: with the worst, the range the chart's
    /// whisker spans.
    pub best_p99_ratio: Option<f64>,
    /// Attacks that crashed the server or stopped it accepting.
    pub broken: usize,
    /// Why the cell failed, when it did.
    pub failure: Option<String>,
}

/// One server under one attack, against its baseline.
#[derive(Debug, Clone, Serialize)]
pub struct AttackCell {
    pub success_rate: f64,
    pub p99_ratio: Option<f64>,
    pub p99_ns: f64,
    pub baseline_p99_ns: f64,
    pub achieved_ratio: Option<f64>,
    pub rss_growth_bytes: Option<i64>,
    pub cpu_ratio: Option<f64>,
    pub crashed: bool,
    pub stopped_accepting: bool,
    pub restarted: bool,
    /// The good load's client was the limit beside the attack (the two
    /// share the client's CPUs): its latency is partly the client's.
    pub client_bound: bool,
    pub recovery_s: Option<f64>,
    /// The after phase's length, for "not within N s".
    pub after_s: f64,
    pub attacker_failure: Option<String>,
}

impl AttackCell {
    fn of(a: &AttackFacts, cell: &HostileFacts) -> AttackCell {
        let base = a.baseline(cell);
        AttackCell {
            success_rate: a.during.success_rate(),
            p99_ratio: a.p99_ratio(cell),
            p99_ns: a.during.p99_ns,
            baseline_p99_ns: base.p99_ns,
            achieved_ratio: (base.achieved_per_s > 0.0)
                .then(|| a.during.achieved_per_s / base.achieved_per_s),
            rss_growth_bytes: a.rss_growth_bytes(cell),
            cpu_ratio: a.cpu_ratio(cell),
            crashed: a.crashed.is_some(),
            stopped_accepting: a.stopped_accepting,
            restarted: a.restarted,
            client_bound: a.during.client_bound,
            recovery_s: a.recovery_s,
            after_s: cell.after_s,
            attacker_failure: a.attacker_failure.clone(),
        }
    }

    /// How bad the case is, for the worst-cases list: broken first, then
    /// the lower success, then the higher p99 ratio.
    fn badness(&self) -> (bool, f64, f64) {
        (
            self.crashed || self.stopped_accepting,
            -self.success_rate,
            self.p99_ratio.unwrap_or(f64::INFINITY),
        )
    }

    /// The case in words.
    pub fn sentence(&self, server: &str, attack: &str) -> String {
        let mut s = format!(
            "{server} under {attack}: the good load's success rate was {:.1}%",
            self.success_rate * 100.0
        );
        match self.p99_ratio {
            Some(r) => s.push_str(&format!(
                ", its p99 {} its baseline's ({:.2} ms against {:.2} ms)",
                ratio_words(r),
                self.p99_ns / 1e6,
                self.baseline_p99_ns / 1e6
            )),
            None => s.push_str(", with no answer to time"),
        }
        if self.crashed {
            s.push_str("; the server crashed");
        } else if self.stopped_accepting {
            s.push_str("; the server stopped accepting connections");
        }
        match self.recovery_s {
            Some(r) => s.push_str(&format!("; back to its baseline {r:.1} s after the attack")),
            None if self.crashed => s.push_str("; it was started again for the next attack"),
            None => s.push_str(&format!(
                "; not back to its baseline within the {:.0} s after the attack",
                self.after_s
            )),
        }
        if self.client_bound {
            s.push_str("; the good load's client was short of CPU beside the attacker, so part of that latency is the client's");
        }
        if let Some(g) = self.rss_growth_bytes.filter(|g| *g > 8 << 20) {
            s.push_str(&format!(
                "; its memory grew by {}",
                crate::format::bytes(g as u64)
            ));
        }
        if let Some(why) = &self.attacker_failure {
            s.push_str(&format!(" (the attacker reported no figures: {why})"));
        }
        s.push('.');
        s
    }
}

fn ratio_words(r: f64) -> String {
    if r >= 1.5 {
        format!("{r:.1}× ")
    } else {
        format!("{r:.2}× ")
    }
    .trim_end()
    .to_string()
}

/// The conformance score in a server's verify JSON: `conformance.passed`
/// of `conformance.total`; None when the probes were not run (absent or
/// null) or the JSON does not parse.
pub fn conformance_of(verify_json: &str) -> Option<(u32, u32)> {
    // The Conformance section's own reading, so the two never disagree.
    crate::conformance::parse(verify_json).map(|c| (c.passed, c.total))
}

/// The hostile tables of a run, one per hostile scenario, in the suite's
/// order; empty for a run without one.
pub fn hostile_tables(run: &RunDetail) -> Vec<HostileTable> {
    let conformance: BTreeMap<String, Option<(u32, u32)>> = run
        .servers
        .iter()
        .map(|s| {
            (
                label(&s.server, &s.variant),
                s.verify_json.as_deref().and_then(conformance_of),
            )
        })
        .collect();
    let mut scenarios: Vec<String> = run
        .scenarios
        .iter()
        .filter(|s| s.kind == "hostile")
        .map(|s| s.name.clone())
        .collect();
    // Facts alone tell a stored run's hostile cells apart too.
    for m in &run.measurements {
        if matches!(m.facts, Some(Facts::Hostile(_))) && !scenarios.contains(&m.key.scenario) {
            scenarios.push(m.key.scenario.clone());
        }
    }
    scenarios
        .into_iter()
        .map(|sc| table(run, &sc, &conformance))
        .collect()
}

fn table(
    run: &RunDetail,
    scenario: &str,
    conformance: &BTreeMap<String, Option<(u32, u32)>>,
) -> HostileTable {
    // Per server, its first good repetition; else its first failure.
    let mut found: BTreeMap<String, Result<&HostileFacts, String>> = BTreeMap::new();
    for m in run
        .measurements
        .iter()
        .filter(|m| m.key.scenario == scenario)
    {
        let server = label(&m.key.server, &m.key.variant);
        let this = match (&m.status, &m.facts) {
            (MeasurementStatus::Ok, Some(Facts::Hostile(h))) => Ok(h.as_ref()),
            _ => Err(m
                .failure
                .clone()
                .unwrap_or_else(|| "no hostile facts stored".into())),
        };
        if !matches!(found.get(&server), Some(Ok(_))) {
            found.insert(server, this);
        }
    }
    let mut attacks: Vec<String> = Vec::new();
    for h in found.values().filter_map(|f| f.as_ref().ok()) {
        for a in &h.attacks {
            if !attacks.contains(&a.attack) {
                attacks.push(a.attack.clone());
            }
        }
    }
    let first = found.values().find_map(|f| f.as_ref().ok());
    let mut rows: Vec<HostileRow> = found
        .iter()
        .map(|(server, f)| row(server, f, &attacks, conformance))
        .collect();
    rank(&mut rows);
    let mut cases: Vec<(&HostileRow, &str, &AttackCell)> = rows
        .iter()
        .flat_map(|r| {
            r.cells
                .iter()
                .zip(&attacks)
                .filter_map(move |(c, a)| c.as_ref().map(|c| (r, a.as_str(), c)))
        })
        .filter(|(_, _, c)| {
            c.crashed
                || c.stopped_accepting
                || c.success_rate < 0.99
                || c.p99_ratio.is_some_and(|r| r >= 3.0)
        })
        .collect();
    cases.sort_by(|a, b| {
        b.2.badness()
            .partial_cmp(&a.2.badness())
            .unwrap_or(Ordering::Equal)
    });
    let worst = cases
        .iter()
        .take(WORST_CASES)
        .map(|(r, a, c)| c.sentence(&r.server, a))
        .collect();
    HostileTable {
        scenario: scenario.to_string(),
        attacks,
        rate_per_s: first.map(|h| h.rate_per_s),
        connections: first.map(|h| h.connections),
        attack_connections: first.map(|h| h.attack_connections),
        attack_s: first.map(|h| h.attack_s),
        after_s: first.map(|h| h.after_s),
        rows,
        worst,
    }
}

/// The worst cases told in words: enough to name the zoo's weak spots,
/// few enough to read.
const WORST_CASES: usize = 6;

fn row(
    server: &str,
    f: &Result<&HostileFacts, String>,
    attacks: &[String],
    conformance: &BTreeMap<String, Option<(u32, u32)>>,
) -> HostileRow {
    let mut row = HostileRow {
        server: server.to_string(),
        rank: 0,
        conformance: conformance.get(server).copied().flatten(),
        baseline_success: None,
        baseline_p99_ns: None,
        lowered_rate_per_s: None,
        cells: vec![None; attacks.len()],
        worst_success: None,
        worst_p99_ratio: None,
        best_p99_ratio: None,
        broken: 0,
        failure: None,
    };
    let h = match f {
        Ok(h) => *h,
        Err(why) => {
            row.failure = Some(why.clone());
            return row;
        }
    };
    row.baseline_success = Some(h.baseline.success_rate());
    row.baseline_p99_ns = Some(h.baseline.p99_ns);
    row.lowered_rate_per_s =
        Some(h.baseline.offered_per_s).filter(|r| *r > 0.0 && *r < 0.99 * h.rate_per_s);
    for a in &h.attacks {
        if let Some(i) = attacks.iter().position(|x| *x == a.attack) {
            row.cells[i] = Some(AttackCell::of(a, h));
        }
    }
    let cells: Vec<&AttackCell> = row.cells.iter().flatten().collect();
    row.worst_success = cells.iter().map(|c| c.success_rate).reduce(f64::min);
    // An attack with no answer to time has no ratio: it is already the
    // worst success.
    row.worst_p99_ratio = cells.iter().filter_map(|c| c.p99_ratio).reduce(f64::max);
    row.best_p99_ratio = cells.iter().filter_map(|c| c.p99_ratio).reduce(f64::min);
    row.broken = cells
        .iter()
        .filter(|c| c.crashed || c.stopped_accepting)
        .count();
    row
}

/// Sorts by [`RANK_RULE`] and numbers the rows.
pub(crate) fn rank(rows: &mut [HostileRow]) {
    rows.sort_by(|a, b| {
        let failed = a.failure.is_some().cmp(&b.failure.is_some());
        let success = b
            .worst_success
            .unwrap_or(-1.0)
            .partial_cmp(&a.worst_success.unwrap_or(-1.0))
            .unwrap_or(Ordering::Equal);
        let p99 = a
            .worst_p99_ratio
            .unwrap_or(f64::INFINITY)
            .partial_cmp(&b.worst_p99_ratio.unwrap_or(f64::INFINITY))
            .unwrap_or(Ordering::Equal);
        failed
            .then(success)
            .then(a.broken.cmp(&b.broken))
            .then(p99)
            .then_with(|| a.server.cmp(&b.server))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
}

/// A repetition's hostile figures as CSV metrics (name, unit, value): the
/// baseline's, and per attack its success rate, p99 ratio, recovery and
/// marks.
pub(crate) fn metrics(h: &HostileFacts) -> Vec<(String, &'static str, f64)> {
    let mut m = vec![
        ("hostile_rate".to_string(), "1/s", h.rate_per_s),
        (
            "hostile_baseline_success_rate".into(),
            "ratio",
            h.baseline.success_rate(),
        ),
        ("hostile_baseline_p99".into(), "ns", h.baseline.p99_ns),
    ];
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    for a in &h.attacks {
        let p = format!("hostile_{}", a.attack.replace('-', "_"));
        m.push((
            format!("{p}_success_rate"),
            "ratio",
            a.during.success_rate(),
        ));
        m.push((format!("{p}_p99"), "ns", a.during.p99_ns));
        if let Some(r) = a.p99_ratio(h) {
            m.push((format!("{p}_p99_ratio"), "ratio", r));
        }
        m.push((format!("{p}_achieved"), "1/s", a.during.achieved_per_s));
        if let Some(g) = a.rss_growth_bytes(h) {
            m.push((format!("{p}_rss_growth"), "bytes", g as f64));
        }
        if let Some(c) = a.cpu_ratio(h) {
            m.push((format!("{p}_cpu_ratio"), "ratio", c));
        }
        if let Some(r) = a.recovery_s {
            m.push((format!("{p}_recovery"), "s", r));
        }
        m.push((format!("{p}_crashed"), "bool", flag(a.crashed.is_some())));
        m.push((
            format!("{p}_stopped_accepting"),
            "bool",
            flag(a.stopped_accepting),
        ));
    }
    m
}

#[cfg(test)]
#[path = "hostile_tests.rs"]
mod tests;
