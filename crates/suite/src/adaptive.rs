//! Adaptive repetitions (`repetitions = "auto"`): after the first rounds,
//! only the cells whose spread is still too wide to rank are measured again,
//! round after round, until each settles or the time budget or the maximum
//! count is reached. Which cells have settled is decided by a rule the caller
//! passes in (the reports own the statistics); this module owns the stopping
//! logic and its settings.

use std::collections::{HashMap, HashSet};

use netbench_records::CellId;
use std::time::Duration;

pub use netbench_records::adaptive::Adaptive;
use serde::Deserialize;

/// Decides whether a cell's repetitions (requests/s) are settled: `target`
/// is the largest acceptable half-width of the 95% interval relative to the
/// median (0.05 for ±5%). The binary passes `netbench_stats::settled`: the
/// bootstrap interval the report shows, so never before 5 rounds.
pub type SettleRule = fn(values: &[f64], target: f64) -> bool;

/// The `[auto]` table of a suite file; every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAdaptive {
    min: Option<u32>,
    max: Option<u32>,
    /// `"5%"` or `0.05`.
    target: Option<toml::Value>,
    budget: Option<String>,
}

impl RawAdaptive {
    pub(crate) fn resolve(self) -> Result<Adaptive, String> {
        let d = Adaptive::default();
        let min = self.min.unwrap_or(d.min);
        let max = self.max.unwrap_or(d.max.max(min));
        if min < 2 {
            return Err("`[auto] min` must be at least 2: one repetition has no spread".into());
        }
        if max < min || max > 1000 {
            return Err(format!("`[auto] max` must be between min ({min}) and 1000"));
        }
        let target = match self.target {
            None => d.target,
            Some(toml::Value::Float(f)) => f,
            Some(toml::Value::String(s)) => s
                .trim()
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<f64>().ok())
                .map(|p| p / 100.0)
                .ok_or_else(|| {
                    format!("`[auto] target = \"{s}\"` is not a percentage such as \"5%\"")
                })?,
            Some(other) => {
                return Err(format!(
                    "`[auto] target = {other}` is not a percentage such as \"5%\""
                ))
            }
        };
        if !(target > 0.0 && target < 1.0) {
            return Err("`[auto] target` must be between 0% and 100%".into());
        }
        let budget = match self.budget {
            None => d.budget,
            Some(b) => match crate::suite::parse_duration(&b) {
                Ok(t) if !t.is_zero() => t,
                Ok(_) => return Err("`[auto] budget` must be above zero".into()),
                Err(e) => return Err(format!("`[auto] budget = \"{b}\"` is not a duration: {e}")),
            },
        };
        Ok(Adaptive {
            min,
            max,
            target,
            budget,
        })
    }
}

/// Why adaptive rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Every cell settled.
    Settled,
    /// The budget ran out with cells still unsettled.
    Budget,
    /// The maximum count was reached with cells still unsettled.
    Max,
}

/// The cells (by their key without the repetition) to measure in round
/// `round`, or why there are none: `values` holds each cell's good
/// repetitions so far, `spent` the time the cells have taken so far, and
/// `round_cost` what one more round of every cell would take.
pub fn next_round<K: Clone + Eq + std::hash::Hash + Ord>(
    settings: &Adaptive,
    rule: SettleRule,
    round: u32,
    values: &HashMap<K, Vec<f64>>,
    spent: Duration,
    round_cost: impl Fn(usize) -> Duration,
) -> Result<Vec<K>, Stopped> {
    let mut open: Vec<K> = values
        .iter()
        .filter(|(_, v)| !rule(v, settings.target))
        .map(|(k, _)| k.clone())
        .collect();
    open.sort();
    if open.is_empty() {
        return Err(Stopped::Settled);
    }
    if round > settings.max {
        return Err(Stopped::Max);
    }
    if spent + round_cost(open.len()) > settings.budget {
        return Err(Stopped::Budget);
    }
    Ok(open)
}

/// Every cell of each row (scenario and connections) that has a cell in
/// `open`, sorted: rounds of resident servers are compared within each
/// round, server against server, so a row's cells stop together.
pub fn whole_rows<'a>(open: Vec<CellId>, all: impl IntoIterator<Item = &'a CellId>) -> Vec<CellId> {
    let rows: HashSet<(&str, u32)> = open
        .iter()
        .map(|c| (c.scenario.as_str(), c.connections))
        .collect();
    let mut out: Vec<CellId> = all
        .into_iter()
        .filter(|c| rows.contains(&(c.scenario.as_str(), c.connections)))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_with_an_unsettled_cell_goes_on_whole() {
        let id = |server: &str, scenario: &str| CellId {
            server: server.into(),
            variant: String::new(),
            scenario: scenario.into(),
            connections: 100,
        };
        let all = [
            id("a", "blank"),
            id("b", "blank"),
            id("a", "work"),
            id("b", "work"),
        ];
        let open = whole_rows(vec![id("b", "blank")], &all);
        assert_eq!(open, vec![id("a", "blank"), id("b", "blank")]);
        assert!(whole_rows(Vec::new(), &all).is_empty());
    }

    /// Settled when the values spread less than `target` around their mean:
    /// a stand-in for the reports' interval rule.
    fn spread(values: &[f64], target: f64) -> bool {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        values.len() >= 2 && values.iter().all(|v| (v / mean - 1.0).abs() <= target)
    }

    fn table(cells: &[(&'static str, &[f64])]) -> HashMap<&'static str, Vec<f64>> {
        cells.iter().map(|(k, v)| (*k, v.to_vec())).collect()
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn only_unsettled_cells_go_on() {
        let s = Adaptive::default();
        let values = table(&[
            ("a", &[100.0, 101.0, 99.0]),
            ("b", &[100.0, 60.0, 140.0]),
            ("c", &[5.0, 9.0, 7.0]),
        ]);
        let next = next_round(&s, spread, 4, &values, MINUTE, |n| MINUTE * n as u32);
        assert_eq!(next, Ok(vec!["b", "c"]));
    }

    #[test]
    fn stops_when_settled_at_the_maximum_or_out_of_budget() {
        let s = Adaptive {
            min: 3,
            max: 5,
            target: 0.05,
            budget: 10 * MINUTE,
        };
        let settled = table(&[("a", &[100.0, 101.0, 99.0])]);
        assert_eq!(
            next_round(&s, spread, 4, &settled, MINUTE, |_| MINUTE),
            Err(Stopped::Settled)
        );
        let noisy = table(&[("a", &[100.0, 50.0, 150.0])]);
        assert_eq!(
            next_round(&s, spread, 6, &noisy, MINUTE, |_| MINUTE),
            Err(Stopped::Max)
        );
        // One more round would pass the budget: stop before it, not during.
        assert_eq!(
            next_round(
                &s,
                spread,
                4,
                &noisy,
                9 * MINUTE + Duration::from_secs(1),
                |_| MINUTE
            ),
            Err(Stopped::Budget)
        );
        assert_eq!(
            next_round(&s, spread, 5, &noisy, 9 * MINUTE, |_| MINUTE),
            Ok(vec!["a"])
        );
    }

    #[test]
    fn the_auto_table_reads_percentages_and_refuses_nonsense() {
        let read = |text: &str| toml::from_str::<RawAdaptive>(text).unwrap().resolve();
        assert_eq!(read("").unwrap(), Adaptive::default());
        let a = read("min = 4\nmax = 6\ntarget = \"2.5%\"\nbudget = \"10m\"").unwrap();
        assert_eq!((a.min, a.max, a.budget), (4, 6, 10 * MINUTE));
        assert!((a.target - 0.025).abs() < 1e-12);
        assert!((read("target = 0.1").unwrap().target - 0.1).abs() < 1e-12);
        assert!(read("min = 1").unwrap_err().contains("at least 2"));
        assert!(read("min = 5\nmax = 4").unwrap_err().contains("between"));
        assert!(read("target = \"five\"")
            .unwrap_err()
            .contains("percentage"));
        assert!(read("target = \"0%\"").unwrap_err().contains("between 0%"));
        assert!(read("budget = \"0s\"").unwrap_err().contains("above zero"));
    }
}
