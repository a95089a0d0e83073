//! History across runs: each run's host, kernel and commit, what changed
//! between consecutive runs of a suite, and the charts' data the site's
//! script draws (site.js): a timeline per server and test (median
//! requests/s per run with its 95% interval, a mark where the environment
//! changed) and the composite score as bars with their intervals.

use serde::Serialize;

use crate::environment::plain;
use crate::format::thousands;
use crate::model::{Report, RunInfo};

use super::score::RunScores;
use super::Site;

/// The facts of a run's environment whose change the timelines mark: the
/// machine, its kernel, and the code measured with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvFacts {
    pub host: String,
    pub kernel: String,
    /// The project's commit, 12 digits, `+dirty` when the tree had changes.
    pub commit: String,
}

/// What the environment recorded, "?" where a run kept nothing.
pub(crate) fn env_facts(run: &RunInfo) -> EnvFacts {
    let env = &run.environment;
    let text = |key: &str| match &env[key] {
        serde_json::Value::Null => "?".to_string(),
        v => plain(v),
    };
    let mut commit: String = text("project_commit").chars().take(12).collect();
    if env["project_dirty"].as_bool() == Some(true) {
        commit.push_str("+dirty");
    }
    EnvFacts {
        host: text("hostname"),
        kernel: text("kernel"),
        commit,
    }
}

/// A change of host, kernel or commit between a run and the suite's run
/// before it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvChange {
    pub suite: String,
    pub from_run: i64,
    pub to_run: i64,
    /// (what, before, after), in the order host, kernel, commit.
    pub what: Vec<(&'static str, String, String)>,
}

impl EnvChange {
    /// "kernel, commit".
    pub fn keys(&self) -> String {
        self.what.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
    }

    /// "kernel 6.1 → 6.18; commit abc → def".
    pub fn describe(&self) -> String {
        self.what
            .iter()
            .map(|(k, a, b)| format!("{k} {a} → {b}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The changes between consecutive runs (in order) of one suite.
pub(crate) fn changes(suite: &str, runs: &[(i64, &EnvFacts)]) -> Vec<EnvChange> {
    runs.windows(2)
        .filter_map(|w| {
            let ((a_id, a), (b_id, b)) = (w[0], w[1]);
            let what: Vec<(&'static str, String, String)> = [
                ("host", &a.host, &b.host),
                ("kernel", &a.kernel, &b.kernel),
                ("commit", &a.commit, &b.commit),
            ]
            .into_iter()
            .filter(|(_, x, y)| x != y)
            .map(|(k, x, y)| (k, x.clone(), y.clone()))
            .collect();
            (!what.is_empty()).then(|| EnvChange {
                suite: suite.to_string(),
                from_run: a_id,
                to_run: b_id,
                what,
            })
        })
        .collect()
}

/// One chart for site.js: categories along x, series of points with
/// optional intervals, and marks between categories.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Chart {
    /// `timeline` (a line per series over runs) or `score` (horizontal
    /// bars, one per category).
    pub kind: &'static str,
    pub y_title: String,
    /// Each category's label, one line per element.
    pub labels: Vec<Vec<String>>,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Series {
    pub label: String,
    pub color: String,
    /// One colour per point (the score bars, each in its server's colour).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub colors: Vec<String>,
    /// One per category; None where there is nothing (a gap).
    pub points: Vec<Option<Point>>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Point {
    pub y: f64,
    /// The 95% interval, when there is one.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Tooltip lines: the run, repetitions, flags.
    pub note: Vec<String>,
}

/// An environment change, drawn before category `at`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Mark {
    pub at: usize,
    /// "kernel, commit": written on the chart.
    pub text: String,
    /// The values, for the tooltip and the list under the chart.
    pub detail: String,
}

/// "#12" over "2026-11-23": a run as a category.
fn run_label(r: &Report) -> Vec<String> {
    vec![
        format!("#{}", r.run.id),
        r.run.started_at.chars().take(10).collect(),
    ]
}

/// The marks of a suite's changes on an axis of its runs.
fn marks(site: &Site, suite: &str, runs: &[usize]) -> Vec<Mark> {
    site.changes
        .iter()
        .filter(|c| c.suite == suite)
        .filter_map(|c| {
            let at = runs.iter().position(|&i| site.runs[i].run.id == c.to_run)?;
            Some(Mark {
                at,
                text: c.keys(),
                detail: format!("before run {}: {}", c.to_run, c.describe()),
            })
        })
        .collect()
}

/// A timeline of `labels` across the suite's `runs`: a series per label
/// with a point per run (`point` of the label and the run's index; None
/// where the run has none), the labels with no point left out; None when
/// no label has any.
fn timeline(
    site: &Site,
    suite: &str,
    runs: &[usize],
    labels: &[String],
    y_title: &str,
    point: impl Fn(&str, usize) -> Option<Point>,
) -> Option<Chart> {
    let series: Vec<Series> = labels
        .iter()
        .map(|label| Series {
            label: label.clone(),
            color: site.color(label),
            colors: Vec::new(),
            points: runs.iter().map(|&i| point(label, i)).collect(),
        })
        .filter(|s| s.points.iter().any(Option::is_some))
        .collect();
    (!series.is_empty()).then(|| Chart {
        kind: "timeline",
        y_title: y_title.into(),
        labels: runs.iter().map(|&i| run_label(&site.runs[i])).collect(),
        series,
        marks: marks(site, suite, runs),
    })
}

/// A server's timelines in one suite: per test and connection count, the
/// median requests/s of each of its variants (`labels`) in each of the
/// suite's runs, with the run's 95% interval of the mean as error bars.
pub(crate) fn throughput_timelines(
    site: &Site,
    suite: &str,
    runs: &[usize],
    labels: &[String],
) -> Vec<((String, u32), Chart)> {
    let mut rows: Vec<(String, u32)> = Vec::new();
    for &i in runs {
        for c in &site.runs[i].cells {
            let row = (c.test.clone(), c.connections);
            if labels.contains(&c.server) && c.stats.rps.is_some() && !rows.contains(&row) {
                rows.push(row);
            }
        }
    }
    rows.into_iter()
        .filter_map(|(test, conns)| {
            let chart = timeline(
                site,
                suite,
                runs,
                labels,
                "requests/s (median, 95% CI)",
                |label, i| {
                    let c = site.runs[i].cell(&test, conns, label)?;
                    let s = c.stats.rps?;
                    let mut note = vec![format!(
                        "{}: {} requests/s ({} of {} repetitions good)",
                        label,
                        thousands(s.median.round() as u64),
                        s.n,
                        c.stats.repetitions
                    )];
                    if let Some((lo, hi)) = s.ci95 {
                        note.push(format!(
                            "95% CI of the mean {} to {}",
                            thousands(lo.max(0.0).round() as u64),
                            thousands(hi.round() as u64)
                        ));
                    }
                    if !c.flags.is_empty() {
                        note.push(format!("flags {}", c.flags));
                    }
                    Some(Point {
                        y: s.median,
                        low: s.ci95.map(|(lo, _)| lo.max(0.0)),
                        high: s.ci95.map(|(_, hi)| hi),
                        note,
                    })
                },
            );
            chart.map(|chart| ((test, conns), chart))
        })
        .collect()
}

/// The composite score of each of `labels` in each of the suite's runs,
/// with its interval; None when no run scored any of them.
pub(crate) fn score_timeline(
    site: &Site,
    suite: &str,
    runs: &[usize],
    labels: &[String],
) -> Option<Chart> {
    timeline(
        site,
        suite,
        runs,
        labels,
        "composite score (1 = leads every cell)",
        |label, i| {
            let scores = &site.scores[i];
            let s = scores.of(label)?;
            Some(Point {
                y: s.score,
                low: Some(s.low),
                high: Some(s.high),
                note: vec![
                    format!("{label}: {}", score_text(s.score, s.low, s.high)),
                    format!("over {} of {} cells", s.cells, scores.rows),
                ],
            })
        },
    )
}

/// A run's scores as bars, best first, each in its server's colour; None
/// when nothing was scored.
pub(crate) fn score_bars(site: &Site, scores: &RunScores) -> Option<Chart> {
    if scores.scores.is_empty() {
        return None;
    }
    let points = scores
        .scores
        .iter()
        .map(|s| {
            Some(Point {
                y: s.score,
                low: Some(s.low),
                high: Some(s.high),
                note: vec![
                    score_text(s.score, s.low, s.high),
                    format!("over {} of {} cells", s.cells, scores.rows),
                ],
            })
        })
        .collect();
    Some(Chart {
        kind: "score",
        y_title: "composite score (1 = leads every cell), 95% bootstrap interval".into(),
        labels: scores
            .scores
            .iter()
            .map(|s| vec![s.server.clone()])
            .collect(),
        series: vec![Series {
            label: "composite score".into(),
            color: "#808080".into(),
            colors: scores
                .scores
                .iter()
                .map(|s| site.color(&s.server))
                .collect(),
            points,
        }],
        marks: Vec::new(),
    })
}

/// "0.83 (0.79–0.86)": a score is never written without its interval. An
/// interval narrower than the hundredths gets a third digit, so that it does
/// not read as none ("0.321 (0.318–0.324)", not "0.32 (0.32–0.32)").
pub fn score_text(score: f64, low: f64, high: f64) -> String {
    let d = if low != high && format!("{low:.2}") == format!("{high:.2}") {
        3
    } else {
        2
    };
    format!("{score:.d$} ({low:.d$}–{high:.d$})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(host: &str, kernel: &str, commit: &str) -> EnvFacts {
        EnvFacts {
            host: host.into(),
            kernel: kernel.into(),
            commit: commit.into(),
        }
    }

    #[test]
    fn a_change_is_marked_between_the_runs_it_separates() {
        let a = facts("vm", "6.1", "abc");
        let b = facts("vm", "6.18", "abc");
        let c = facts("box", "6.18", "def");
        let found = changes("aa", &[(1, &a), (2, &a), (5, &b), (9, &c)]);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].from_run, found[0].to_run), (2, 5));
        assert_eq!(found[0].describe(), "kernel 6.1 → 6.18");
        assert_eq!((found[1].from_run, found[1].to_run), (5, 9));
        assert_eq!(found[1].keys(), "host, commit");
    }

    #[test]
    fn the_facts_come_from_the_recorded_environment() {
        let mut run = crate::environment::tests::run(serde_json::json!({
            "hostname": "vm", "kernel": "6.18.44",
            "project_commit": "e835ea7af2fadd24dcc55ea14e2d5204ad32bf56", "project_dirty": true
        }));
        assert_eq!(
            env_facts(&run),
            facts("vm", "6.18.44", "e835ea7af2fa+dirty")
        );
        run.environment = serde_json::json!({});
        assert_eq!(env_facts(&run), facts("?", "?", "?"));
    }

    #[test]
    fn a_score_is_written_with_its_interval() {
        assert_eq!(score_text(0.8312, 0.79, 0.861), "0.83 (0.79–0.86)");
        assert_eq!(score_text(0.3211, 0.3182, 0.3240), "0.321 (0.318–0.324)");
        assert_eq!(score_text(1.0, 1.0, 1.0), "1.00 (1.00–1.00)");
    }
}
