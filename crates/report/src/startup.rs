//! Start-up and warm-up (issue 28), from the stored warm-up records alone:
//! per run, whether a cell had a fresh server process or one kept warm from
//! the earlier cells of its round; per server, how soon it answered, how fast
//! it was in its first second and its first ten seconds, when it reached its
//! steady state and what shape its warm-up had; and which curve each server
//! draws on the chart of throughput against time since start.
//!
//! A fresh cell's curve starts at its server's start: window `i` begins
//! `since_start_s + i·window_s` seconds after it. A reused cell's curve
//! starts wherever its process happened to be, so only fresh cells say
//! anything about start-up.

use std::collections::BTreeMap;

use netbench_records::{Measurement, ProcessUse, RunDetail, WarmUp};
use serde::Serialize;

use crate::suite_table::label;

/// How the run's cells got their server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessMode {
    /// No warm-up records: a fixed warm-up before each cell, each cell with
    /// a fresh process (every run before warm-until-steady).
    Fixed,
    /// Warmed until steady, a fresh process for each cell.
    Fresh,
    /// Warmed until steady, one process per server and round serving all
    /// its cells (the first of them fresh).
    Reused,
    /// Every server resident for the whole run: started at its first
    /// visit, warmed until steady once per cell, re-warmed briefly at each
    /// later visit (the run has server events).
    Resident,
}

impl ProcessMode {
    /// The mode in words, as every form of the report says it.
    pub fn text(self) -> &'static str {
        match self {
            ProcessMode::Fixed => "fixed warm-up, fresh process per cell",
            ProcessMode::Fresh => "warmed until steady, fresh process per cell",
            ProcessMode::Reused => {
                "warmed until steady, one process per server and round, reused across its cells"
            }
            ProcessMode::Resident => {
                "every server resident for the run: warmed until steady at its first visit of \
                 each cell, re-warmed briefly at each later one"
            }
        }
    }
}

/// The run's process mode: reused as soon as one cell reused its process,
/// fresh when cells have warm-up records and none did, fixed without any.
pub fn process_mode(measurements: &[Measurement]) -> ProcessMode {
    let mut warmed = measurements.iter().filter_map(|m| m.warmup.as_ref());
    match warmed.next() {
        None => ProcessMode::Fixed,
        Some(first) => {
            if std::iter::once(first)
                .chain(warmed)
                .any(|w| w.process == ProcessUse::Reused)
            {
                ProcessMode::Reused
            } else {
                ProcessMode::Fresh
            }
        }
    }
}

/// Slack for window edges summed in floating point (0.5 × 20 may land a
/// hair under 10).
const EDGE_S: f64 = 1e-6;

/// Where "after the first answer" starts on a fresh cell's curve: its
/// `ready_s`, or the curve's own start when the record has none.
fn origin_s(w: &WarmUp) -> f64 {
    w.ready_s.unwrap_or(w.since_start_s)
}

/// How many seconds after the first answer a curve reaches.
pub fn curve_covers_s(w: &WarmUp) -> f64 {
    let end = w.since_start_s + w.curve.len() as f64 * w.window_s;
    (end - origin_s(w)).max(0.0)
}

/// The mean requests/s over the first `span_s` seconds after the first
/// answer: the windows covering that span, each weighted by how much of it
/// it covers (windows are aligned to the curve's start, not to the answer).
/// None when the curve does not reach `span_s` past the first answer, or
/// no usable window (positive and finite) falls within it.
pub fn span_mean(w: &WarmUp, span_s: f64) -> Option<f64> {
    if w.window_s <= 0.0 || curve_covers_s(w) + EDGE_S < span_s {
        return None;
    }
    let (from, to) = (origin_s(w), origin_s(w) + span_s);
    let (mut sum, mut weight) = (0.0, 0.0);
    for (i, &rps) in w.curve.iter().enumerate() {
        let start = w.since_start_s + i as f64 * w.window_s;
        let overlap = (start + w.window_s).min(to) - start.max(from);
        if overlap > EDGE_S && rps.is_finite() && rps >= 0.0 {
            sum += rps * overlap;
            weight += overlap;
        }
    }
    (weight > 0.0).then(|| sum / weight)
}

/// The first `span_s` seconds after the first answer, for a table: the
/// requests/s, or why there is none.
pub fn span_text(rps: Option<f64>, covers_s: Option<f64>, span_s: f64) -> String {
    match (rps, covers_s) {
        (Some(v), _) => format!("{}/s", crate::format::thousands(v.round() as u64)),
        (None, Some(c)) if c + EDGE_S < span_s => format!("n/a (curve covers {c:.1} s)"),
        _ => "n/a".to_string(),
    }
}

/// A cell measured without a steady state: capped, or classified as having
/// none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnsettledCell {
    pub test: String,
    pub connections: u32,
    pub repetition: u32,
    pub class: String,
    /// The warm phase reached its cap without the rule judging it steady.
    pub capped: bool,
}

/// One server's start-up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerStartUp {
    pub server: String,
    /// Cells whose process was started for them, with a warm-up record.
    pub fresh_cells: usize,
    /// From the process's start to its first answer, median over its fresh
    /// cells; the server record's (the start before verification) when it
    /// has none.
    pub ready_s: Option<f64>,
    /// The cell (test, connections) whose fresh repetitions give the
    /// throughput figures: the first in the table's order. Throughput
    /// depends on the test and the connection count, so the figures name it.
    pub test: Option<String>,
    pub connections: Option<u32>,
    /// Mean requests/s over the first second after the first answer
    /// (median over that cell's fresh repetitions).
    pub first_1s_rps: Option<f64>,
    /// The same over the first ten seconds; None when no curve of that cell
    /// reaches that far (then `curve_covers_s` says how far they do).
    pub first_10s_rps: Option<f64>,
    /// How many seconds past the first answer that cell's curves reach
    /// (median).
    pub curve_covers_s: Option<f64>,
    /// From the process's start until the steady-state rule judged it
    /// steady (`since_start_s + settled_s`), median over its fresh cells
    /// that settled.
    pub steady_after_s: Option<f64>,
    /// The same from the first warm window, as stored (median).
    pub settled_s: Option<f64>,
    /// The most common class of its fresh cells' curves (a tie goes to the
    /// worse: no-steady-state, slowdown, warmed, flat).
    pub class: Option<String>,
    /// Its cells, fresh or reused, measured at the cap or without a steady
    /// state.
    pub unsettled: Vec<UnsettledCell>,
}

/// The curve one server draws on a test's start-up chart: its first fresh
/// cell of that test (the repetition's `steady_state` holds the curve).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartCurve {
    pub test: String,
    pub server: String,
    pub connections: u32,
    pub repetition: u32,
}

/// The run's start-up section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartUp {
    pub process: ProcessMode,
    /// The process mode in words.
    pub process_text: &'static str,
    /// In column order; servers with neither a warm-up record nor a ready
    /// time are left out.
    pub servers: Vec<ServerStartUp>,
    /// In the table's test order, then column order: one chart per test.
    pub curves: Vec<StartCurve>,
}

impl StartUp {
    /// The tests that have a start-up chart, in order.
    pub fn chart_tests(&self) -> Vec<&str> {
        let mut tests: Vec<&str> = Vec::new();
        for c in &self.curves {
            if !tests.contains(&c.test.as_str()) {
                tests.push(&c.test);
            }
        }
        tests
    }
}

/// How bad a class is, for ties: the worse wins.
fn severity(class: &str) -> usize {
    match class {
        "flat" => 0,
        "warmed" => 1,
        "slowdown" => 2,
        _ => 3,
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    crate::stats::median(&xs)
}

/// The start-up section of `run`: servers in `columns` order, cells in
/// `rows` order (test × connections, as the tables list them; cells of
/// other kinds follow in key order).
pub fn start_up(run: &RunDetail, columns: &[String], rows: &[(String, u32)]) -> StartUp {
    let process = if run.events.is_empty() {
        process_mode(&run.measurements)
    } else {
        ProcessMode::Resident
    };
    // Each warm-up record with where it stands in the table's order.
    let place = |m: &Measurement| {
        let row = rows
            .iter()
            .position(|(t, c)| *t == m.key.scenario && *c == m.key.connections)
            .unwrap_or(rows.len());
        (
            row,
            m.key.scenario.clone(),
            m.key.connections,
            m.key.repetition,
        )
    };
    let mut by_server: BTreeMap<String, Vec<(&Measurement, &WarmUp)>> = BTreeMap::new();
    for m in &run.measurements {
        if let Some(w) = &m.warmup {
            let server = label(&m.key.server, &m.key.variant);
            by_server.entry(server).or_default().push((m, w));
        }
    }
    for cells in by_server.values_mut() {
        cells.sort_by_key(|(m, _)| place(m));
    }
    let record_ready = |server: &str| {
        run.servers
            .iter()
            .find(|s| label(&s.server, &s.variant) == server)
            .and_then(|s| s.ready_s)
    };
    let mut servers = Vec::new();
    let mut curves = Vec::new();
    for server in columns {
        let cells = by_server.get(server).map_or(&[][..], Vec::as_slice);
        let s = server_start_up(server, cells, record_ready(server));
        if s.fresh_cells > 0 || s.ready_s.is_some() || !s.unsettled.is_empty() {
            servers.push(s);
        }
        let mut drawn: Vec<&str> = Vec::new();
        for (m, _) in cells.iter().filter(|(_, w)| w.process == ProcessUse::Fresh) {
            if !drawn.contains(&m.key.scenario.as_str()) {
                drawn.push(&m.key.scenario);
                curves.push(StartCurve {
                    test: m.key.scenario.clone(),
                    server: server.clone(),
                    connections: m.key.connections,
                    repetition: m.key.repetition,
                });
            }
        }
    }
    // Tests in the table's order, servers in column order within each.
    let test_rank = |t: &str| rows.iter().position(|(x, _)| x == t).unwrap_or(rows.len());
    curves.sort_by_key(|c| (test_rank(&c.test), c.test.clone()));
    StartUp {
        process,
        process_text: process.text(),
        servers,
        curves,
    }
}

/// One server's figures from its warm-up records (sorted in table order).
fn server_start_up(
    server: &str,
    cells: &[(&Measurement, &WarmUp)],
    record_ready: Option<f64>,
) -> ServerStartUp {
    let fresh: Vec<&(&Measurement, &WarmUp)> = cells
        .iter()
        .filter(|(_, w)| w.process == ProcessUse::Fresh)
        .collect();
    let reference = fresh
        .first()
        .map(|(m, _)| (m.key.scenario.clone(), m.key.connections));
    let of_reference: Vec<&WarmUp> = fresh
        .iter()
        .filter(|(m, _)| {
            reference
                .as_ref()
                .is_some_and(|(t, c)| *t == m.key.scenario && *c == m.key.connections)
        })
        .map(|(_, w)| *w)
        .collect();
    let span = |s: f64| {
        median(
            of_reference
                .iter()
                .filter_map(|w| span_mean(w, s))
                .collect(),
        )
    };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, w) in &fresh {
        *counts.entry(w.class.as_str()).or_default() += 1;
    }
    let class = counts
        .into_iter()
        .max_by_key(|&(c, n)| (n, severity(c)))
        .map(|(c, _)| c.to_string());
    let ready = median(fresh.iter().filter_map(|(_, w)| w.ready_s).collect());
    ServerStartUp {
        server: server.to_string(),
        fresh_cells: fresh.len(),
        ready_s: ready.or(record_ready),
        test: reference.as_ref().map(|(t, _)| t.clone()),
        connections: reference.as_ref().map(|(_, c)| *c),
        first_1s_rps: span(1.0),
        first_10s_rps: span(10.0),
        curve_covers_s: median(of_reference.iter().map(|w| curve_covers_s(w)).collect()),
        steady_after_s: median(
            fresh
                .iter()
                .filter_map(|(_, w)| w.settled_s.map(|s| w.since_start_s + s))
                .collect(),
        ),
        settled_s: median(fresh.iter().filter_map(|(_, w)| w.settled_s).collect()),
        class,
        unsettled: cells
            .iter()
            .filter(|(_, w)| w.capped || w.class == "no-steady-state")
            .map(|(m, w)| UnsettledCell {
                test: m.key.scenario.clone(),
                connections: m.key.connections,
                repetition: m.key.repetition,
                class: w.class.clone(),
                capped: w.capped,
            })
            .collect(),
    }
}

/// "1.2 s" or "85 ms": a time of the start-up table.
pub fn seconds_text(s: Option<f64>) -> String {
    match s {
        None => "-".to_string(),
        Some(s) if s < 1.0 => format!("{:.0} ms", s * 1e3),
        Some(s) => format!("{s:.1} s"),
    }
}

/// A server's class, with its unsettled cells counted: "warmed", "flat (1
/// capped)".
pub fn class_text(s: &ServerStartUp) -> String {
    let class = s.class.clone().unwrap_or_else(|| "-".to_string());
    if s.unsettled.is_empty() {
        class
    } else {
        let capped = s.unsettled.iter().filter(|u| u.capped).count();
        let none = s.unsettled.len() - capped;
        let mut parts = Vec::new();
        if capped > 0 {
            parts.push(format!("{capped} capped"));
        }
        if none > 0 {
            parts.push(format!("{none} without a steady state"));
        }
        format!("{class} ({})", parts.join(", "))
    }
}

/// "blank, 100 conn.": the cell a server's throughput figures come from.
pub fn cell_text(s: &ServerStartUp) -> String {
    match (&s.test, s.connections) {
        (Some(t), Some(c)) => format!("{t}, {} conn.", crate::format::thousands(u64::from(c))),
        _ => "-".to_string(),
    }
}

/// What the start-up table's columns mean, under it.
pub const STARTUP_LEGEND: &str = "First answer: from the server process's start to its first \
    good answer (median of its fresh cells). First 1 s, first 10 s: mean requests/s of the warm-up \
    windows covering the first second and the first ten seconds after the first answer, in the \
    cell named (median of its fresh repetitions); n/a when the warm-up stopped sooner (it stops \
    once steady). Steady after: from the process's start until the steady-state rule judged the \
    throughput settled (median of its fresh cells). Class: the shape of the warm-up curve (flat, \
    warmed, slowdown, no-steady-state; the most common of its fresh cells), with its cells \
    measured at the cap or without a steady state counted. See docs/steady-state.md.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::testing::measurement;

    fn warm(process: ProcessUse, ready: Option<f64>, since: f64, curve: &[f64]) -> WarmUp {
        WarmUp {
            process,
            ready_s: ready,
            since_start_s: since,
            window_s: 0.5,
            curve: curve.to_vec(),
            settled_s: Some(curve.len() as f64 * 0.5),
            capped: false,
            class: "flat".into(),
            steady_from_s: Some(0.0),
        }
    }

    fn cell(server: &str, test: &str, conns: u32, rep: u32, w: WarmUp) -> Measurement {
        let mut m = measurement(server, test, conns, rep, None, None);
        m.warmup = Some(w);
        m
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn the_first_second_and_ten_seconds_are_means_of_the_windows_after_the_first_answer() {
        // Answers 0.2 s after start, warm windows from 0.5 s: the first
        // second after the answer (0.2–1.2 s) is window 0 (0.5–1.0) whole
        // and 0.2 s of window 1 (1.0–1.5).
        let curve: Vec<f64> = (1..=30).map(|i| f64::from(i) * 100.0).collect();
        let w = warm(ProcessUse::Fresh, Some(0.2), 0.5, &curve);
        let first = span_mean(&w, 1.0).unwrap();
        assert!(
            (first - (100.0 * 0.5 + 200.0 * 0.2) / 0.7).abs() < 1e-9,
            "{first}"
        );
        // Ten seconds: 0.2–10.2 s, windows 0..=18 whole and 0.2 s of 19.
        let sum: f64 = (1..=19).map(|i| f64::from(i) * 100.0 * 0.5).sum::<f64>() + 2000.0 * 0.2;
        assert!(close(span_mean(&w, 10.0), sum / 9.7));
        assert!(close(Some(curve_covers_s(&w)), 15.3));
        // Aligned to the answer: the plain mean of the first two windows.
        let aligned = warm(ProcessUse::Fresh, Some(0.5), 0.5, &[10.0, 30.0, 99.0]);
        assert!(close(span_mean(&aligned, 1.0), 20.0));
        // A hole (NaN) is skipped; the span still counts as covered.
        let holed = warm(ProcessUse::Fresh, Some(0.5), 0.5, &[f64::NAN, 30.0, 99.0]);
        assert!(close(span_mean(&holed, 1.0), 30.0));
    }

    #[test]
    fn a_curve_shorter_than_the_span_says_how_far_it_reaches() {
        // 7 windows of 0.5 s from 0.4 s, the first answer at 0.3 s: the
        // curve reaches 3.6 s past it.
        let w = warm(ProcessUse::Fresh, Some(0.3), 0.4, &[500.0; 7]);
        assert!(close(span_mean(&w, 1.0), 500.0));
        assert_eq!(span_mean(&w, 10.0), None);
        let covers = curve_covers_s(&w);
        assert!(close(Some(covers), 3.6));
        assert_eq!(
            span_text(None, Some(covers), 10.0),
            "n/a (curve covers 3.6 s)"
        );
        assert_eq!(span_text(Some(1234.4), Some(covers), 1.0), "1,234/s");
        // Exactly 10 s of windows from the answer is enough, float sums
        // notwithstanding.
        let exact = warm(ProcessUse::Fresh, Some(0.1), 0.1, &[7.0; 20]);
        assert!(close(span_mean(&exact, 10.0), 7.0));
        // Without a ready time the curve's own start is the origin.
        let unready = warm(ProcessUse::Fresh, None, 2.0, &[8.0; 4]);
        assert!(close(span_mean(&unready, 1.0), 8.0));
        assert!(close(Some(curve_covers_s(&unready)), 2.0));
    }

    #[test]
    fn the_process_mode_comes_from_the_warm_up_records() {
        let fresh = || warm(ProcessUse::Fresh, Some(0.1), 0.2, &[1.0; 6]);
        let reused = || warm(ProcessUse::Reused, None, 30.0, &[1.0; 6]);
        let plain = measurement("a", "blank", 1, 1, None, None);
        assert_eq!(process_mode(&[]), ProcessMode::Fixed);
        assert_eq!(
            process_mode(std::slice::from_ref(&plain)),
            ProcessMode::Fixed
        );
        let all_fresh = [cell("a", "blank", 1, 1, fresh()), plain.clone()];
        assert_eq!(process_mode(&all_fresh), ProcessMode::Fresh);
        let round = [
            cell("a", "blank", 1, 1, fresh()),
            cell("a", "blank", 100, 1, reused()),
        ];
        assert_eq!(process_mode(&round), ProcessMode::Reused);
        assert_eq!(
            ProcessMode::Fixed.text(),
            "fixed warm-up, fresh process per cell"
        );
        let json = serde_json::to_value(ProcessMode::Reused).unwrap();
        assert_eq!(json, "reused");
    }

    fn run(measurements: Vec<Measurement>, ready: Option<f64>) -> RunDetail {
        let mut r = crate::kinds::testing::run("", measurements);
        for s in &mut r.servers {
            s.ready_s = ready;
        }
        r
    }

    #[test]
    fn per_server_figures_come_from_its_fresh_cells() {
        let rows = [("blank".to_string(), 1), ("blank".to_string(), 100)];
        let columns = ["b".to_string(), "a".to_string()];
        let mut slow = warm(ProcessUse::Fresh, Some(2.0), 2.5, &[100.0; 40]);
        slow.class = "warmed".into();
        slow.settled_s = Some(12.0);
        let mut slow2 = slow.clone();
        slow2.ready_s = Some(3.0);
        slow2.since_start_s = 3.5;
        slow2.curve = vec![300.0; 40];
        slow2.settled_s = Some(14.0);
        let mut capped = warm(ProcessUse::Reused, None, 40.0, &[50.0; 120]);
        capped.capped = true;
        capped.settled_s = None;
        capped.class = "no-steady-state".into();
        let quick = warm(ProcessUse::Fresh, Some(0.01), 0.02, &[9000.0; 6]);
        let r = run(
            vec![
                // Listed out of table order: c=100 first, then c=1.
                cell(
                    "a",
                    "blank",
                    100,
                    1,
                    warm(ProcessUse::Fresh, Some(2.4), 2.5, &[1.0; 40]),
                ),
                cell("a", "blank", 1, 1, slow),
                cell("a", "blank", 1, 2, slow2),
                cell("a", "blank", 100, 2, capped),
                cell("b", "blank", 1, 1, quick),
            ],
            Some(0.5),
        );
        let s = start_up(&r, &columns, &rows);
        assert_eq!(s.process, ProcessMode::Reused);
        let servers: Vec<&str> = s.servers.iter().map(|x| x.server.as_str()).collect();
        assert_eq!(servers, ["b", "a"]);
        let a = &s.servers[1];
        assert_eq!(a.fresh_cells, 3);
        // Ready: the median of the three fresh cells (2.0, 3.0, 2.4), not
        // the server record's 0.5.
        assert!(close(a.ready_s, 2.4));
        // The figures come from blank c=1, the first in table order: its two
        // fresh repetitions at 100 and 300 requests/s.
        assert_eq!((a.test.as_deref(), a.connections), (Some("blank"), Some(1)));
        assert!(close(a.first_1s_rps, 200.0));
        assert!(close(a.first_10s_rps, 200.0));
        // Steady after start: 2.5 + 12 and 3.5 + 14, and 2.5 + 20 for the
        // c=100 cell.
        assert!(close(a.steady_after_s, 17.5), "{:?}", a.steady_after_s);
        assert!(close(a.settled_s, 14.0));
        // Two warmed, one flat.
        assert_eq!(a.class.as_deref(), Some("warmed"));
        assert_eq!(a.unsettled.len(), 1);
        assert_eq!(class_text(a), "warmed (1 capped)");
        assert_eq!(cell_text(a), "blank, 1 conn.");
        // b settled within 3 s: no ten-second figure, and it says why.
        let b = &s.servers[0];
        assert!(close(b.first_1s_rps, 9000.0));
        assert_eq!(b.first_10s_rps, None);
        assert_eq!(
            span_text(b.first_10s_rps, b.curve_covers_s, 10.0),
            "n/a (curve covers 3.0 s)"
        );
        assert_eq!(seconds_text(b.ready_s), "10 ms");
        assert_eq!(seconds_text(a.steady_after_s), "17.5 s");
        // One curve per server and test: the first fresh cell in table order.
        let curves: Vec<(&str, u32, u32)> = s
            .curves
            .iter()
            .map(|c| (c.server.as_str(), c.connections, c.repetition))
            .collect();
        assert_eq!(curves, [("b", 1, 1), ("a", 1, 1)]);
        assert_eq!(s.chart_tests(), ["blank"]);
    }

    #[test]
    fn a_run_without_warm_up_records_has_only_the_time_to_first_answer() {
        let r = run(
            vec![measurement("a", "blank", 1, 1, None, None)],
            Some(0.25),
        );
        let s = start_up(&r, &["a".to_string(), "b".to_string()], &[]);
        assert_eq!(s.process, ProcessMode::Fixed);
        assert!(s.curves.is_empty());
        assert_eq!(s.servers.len(), 2);
        for server in &s.servers {
            assert!(close(server.ready_s, 0.25));
            assert_eq!(server.fresh_cells, 0);
            assert_eq!((server.first_1s_rps, server.class.clone()), (None, None));
        }
    }

    #[test]
    fn a_tie_of_classes_goes_to_the_worse() {
        let mut slow = warm(ProcessUse::Fresh, Some(0.1), 0.2, &[1.0; 6]);
        slow.class = "slowdown".into();
        let r = run(
            vec![
                cell(
                    "a",
                    "blank",
                    1,
                    1,
                    warm(ProcessUse::Fresh, Some(0.1), 0.2, &[1.0; 6]),
                ),
                cell("a", "blank", 1, 2, slow),
            ],
            None,
        );
        let s = start_up(&r, &["a".to_string()], &[]);
        assert_eq!(s.servers[0].class.as_deref(), Some("slowdown"));
    }
}
