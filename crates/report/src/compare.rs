//! Two runs side by side, in the spirit of benchstat: per cell and metric
//! the change of the median with a 95% interval, and whether it is
//! significant by the Mann–Whitney U test over the repetitions.

use std::io::{self, Write};

use serde::Serialize;

use crate::environment::{differences, EnvDifference};
use crate::flag::short_key;
use crate::format::{format_duration_ns, thousands, write_columns};
use crate::kind_idle::idle_cpu_at_largest;
use crate::kinds::per_connection;
use crate::model::{Repetition, RepetitionFigures, Report, RunInfo};
use crate::significance::{mann_whitney_p, smallest_p, welch_change_ci, ALPHA};
use crate::stats::{summarize, Summary};
use netbench_suite::kinds::Facts;

/// How the comparison decides, in words, for every output.
pub const METHOD: &str = "Mann–Whitney U test (two-sided, exact for small samples) over the \
    repetitions, significant when p < 0.05; change = median B / median A − 1; 95% interval: \
    Welch's t on the logarithms (the change of the geometric means)";

/// A compared figure and which way is better. Each scenario kind has its
/// own (see [`Metric::for_kind`]): throughput cells compare requests/s and
/// p99, the other kinds their primary figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    RequestsPerS,
    LatencyP99,
    /// Idle: the PSS fit's slope, bytes per held connection.
    IdleBytesPerConnection,
    /// Idle: server CPU (cores, mean over the hold) at the largest level.
    IdleCpuCores,
    /// Storm: from the first connect to the last client's end.
    StormAllDone,
    /// Rate sweep: the highest offered rate that met the SLO.
    SweepKnee,
    /// Fixed rate: server CPU per answered request.
    FixedRateCpuPerRequest,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::RequestsPerS,
        Metric::LatencyP99,
        Metric::IdleBytesPerConnection,
        Metric::IdleCpuCores,
        Metric::StormAllDone,
        Metric::SweepKnee,
        Metric::FixedRateCpuPerRequest,
    ];

    /// The metrics a cell of `kind` is compared by, its primary one first.
    pub fn for_kind(kind: &str) -> &'static [Metric] {
        match kind {
            "idle" => &[Metric::IdleBytesPerConnection, Metric::IdleCpuCores],
            "storm" => &[Metric::StormAllDone],
            "rate-sweep" => &[Metric::SweepKnee],
            "fixed-rate" => &[Metric::FixedRateCpuPerRequest],
            // Throughput, short-lived and pipelined.
            _ => &[Metric::RequestsPerS, Metric::LatencyP99],
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "requests/s",
            Metric::LatencyP99 => "p99 latency",
            Metric::IdleBytesPerConnection => "idle memory per connection (lower is better)",
            Metric::IdleCpuCores => "idle CPU at the largest level (lower is better)",
            Metric::StormAllDone => "storm: time until every client is done (lower is better)",
            Metric::SweepKnee => {
                "rate sweep: knee, the highest rate within the SLO (higher is better)"
            }
            Metric::FixedRateCpuPerRequest => {
                "fixed rate: server CPU per request (lower is better)"
            }
        }
    }

    /// The name the JSON gives it (serde's), for the comparison page's charts.
    pub fn key(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "requests_per_s",
            Metric::LatencyP99 => "latency_p99",
            Metric::IdleBytesPerConnection => "idle_bytes_per_connection",
            Metric::IdleCpuCores => "idle_cpu_cores",
            Metric::StormAllDone => "storm_all_done",
            Metric::SweepKnee => "sweep_knee",
            Metric::FixedRateCpuPerRequest => "fixed_rate_cpu_per_request",
        }
    }

    /// The repetition's figure, normalised to a machine whose probe takes
    /// `reference` ns when given: a slower machine (a larger probe) scales
    /// throughput up and latency down by as much.
    fn value(self, f: &RepetitionFigures, reference: Option<f64>) -> f64 {
        let speed = speed(f.probe_server_ns, reference);
        match self {
            Metric::RequestsPerS => f.rps * speed,
            Metric::LatencyP99 => f.latency_p99_ns / speed,
            // Not figures of the engine's result; see `rep_value`.
            _ => f64::NAN,
        }
    }

    /// The figure of one good repetition, None when it has none (an idle
    /// repetition has no engine figures; a sweep without a knee has no
    /// knee, and is left out rather than counted as 0, which the ratio of
    /// medians could not take). Times and rates are normalised like the
    /// throughput figures; memory does not depend on the machine's speed.
    fn rep_value(self, r: &Repetition, reference: Option<f64>) -> Option<f64> {
        let probe = r.result.as_ref().and_then(|f| f.probe_server_ns);
        let speed = speed(probe, reference);
        match (self, r.facts.as_ref()) {
            (Metric::RequestsPerS | Metric::LatencyP99, _) => {
                r.result.as_ref().map(|f| self.value(f, reference))
            }
            (Metric::IdleBytesPerConnection, Some(Facts::Idle(i))) => i.pss_fit.map(|f| f.slope),
            (Metric::IdleCpuCores, Some(Facts::Idle(i))) => idle_cpu_at_largest(i),
            (Metric::StormAllDone, Some(Facts::Storm(s))) => Some(s.all_done_s / speed),
            (Metric::SweepKnee, Some(Facts::RateSweep(s))) => s.knee_per_s.map(|k| k * speed),
            (Metric::FixedRateCpuPerRequest, Some(Facts::FixedRate(x))) => {
                x.server_cpu_us_per_request.map(|c| c / speed)
            }
            _ => None,
        }
    }

    fn higher_is_better(self) -> bool {
        matches!(self, Metric::RequestsPerS | Metric::SweepKnee)
    }

    pub(crate) fn show(self, v: f64) -> String {
        match self {
            Metric::RequestsPerS => thousands(v.round() as u64),
            Metric::LatencyP99 => format_duration_ns(v),
            Metric::IdleBytesPerConnection => per_connection(v),
            Metric::IdleCpuCores => format!("{v:.3} cores"),
            Metric::StormAllDone => format!("{v:.3} s"),
            Metric::SweepKnee => format!("{}/s", thousands(v.round() as u64)),
            Metric::FixedRateCpuPerRequest => format!("{v:.1} µs"),
        }
    }
}

/// How much slower the repetition's machine was than the reference (1 when
/// either is unknown).
fn speed(probe: Option<f64>, reference: Option<f64>) -> f64 {
    match (reference, probe) {
        (Some(r), Some(p)) => p / r,
        _ => 1.0,
    }
}

/// A cell's figures of `metric` over its good repetitions in one run.
fn values(
    r: &Report,
    t: &str,
    c: u32,
    s: &str,
    metric: Metric,
    reference: Option<f64>,
) -> Vec<f64> {
    r.repetitions
        .iter()
        .filter(|x| x.ok && x.test == t && x.connections == c && x.server == s)
        .filter_map(|x| metric.rep_value(x, reference))
        .collect()
}

/// A cell's kind, as either run stored it.
fn kind_of_cell<'a>(a: &'a Report, b: &'a Report, t: &str, c: u32, s: &str) -> &'a str {
    a.repetitions
        .iter()
        .chain(&b.repetitions)
        .find(|x| x.test == t && x.connections == c && x.server == s)
        .map_or("throughput", |x| x.kind)
}

/// What the test says about a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// p ≥ 0.05: within the noise of the repetitions.
    NoChange,
    /// So few repetitions that no outcome could reach p < 0.05.
    TooFew,
}

impl Verdict {
    fn mark(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoChange => "~",
            Verdict::TooFew => "? too few",
        }
    }
}

/// One cell and metric in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub metric: Metric,
    pub test: String,
    pub connections: u32,
    pub server: String,
    pub a: Summary,
    pub b: Summary,
    /// The cell's flags in each run (C ~ E F W), which qualify its numbers
    /// here as in the report.
    pub a_flags: String,
    pub b_flags: String,
    /// `median(b) / median(a) - 1`.
    pub change: f64,
    pub change_ci95: Option<(f64, f64)>,
    pub p: f64,
    pub verdict: Verdict,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub format: &'static str,
    pub method: &'static str,
    pub alpha: f64,
    pub a: RunInfo,
    pub b: RunInfo,
    pub rows: Vec<CompareRow>,
    /// Cells with good repetitions in only one of the runs, as
    /// "test c=N server".
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// Cells in a run's matrix without a good repetition in either run.
    pub in_neither: Vec<String>,
    /// Environment entries (CPU, kernel, tools, commit, placement) that are
    /// not the same in both runs.
    pub environment_differences: Vec<EnvDifference>,
    /// When both runs carry the machine-speed control, the figures compared
    /// are normalised to run A's median probe (this many ns): B measured on
    /// a slower machine is scaled up by as much. None: raw figures.
    pub normalised_to_probe_ns: Option<f64>,
}

/// Run A's median probe, when every good repetition of both runs has one.
fn shared_reference(a: &Report, b: &Report) -> Option<f64> {
    let probes = |r: &Report| -> Option<Vec<f64>> {
        r.repetitions
            .iter()
            .filter_map(|x| x.result.as_ref())
            .map(|f| f.probe_server_ns)
            .collect()
    };
    let (pa, pb) = (probes(a)?, probes(b)?);
    if pa.is_empty() || pb.is_empty() {
        return None;
    }
    summarize(&pa).map(|s| s.median)
}

/// Compares run `b` against run `a` cell by cell.
pub fn compare(a: &Report, b: &Report) -> Comparison {
    // Every cell of either run, in A's order and then B's new ones.
    let mut keys: Vec<(&str, u32, &str)> = Vec::new();
    let cells = a.cells.iter().chain(&b.cells);
    let cells = cells.map(|c| (c.test.as_str(), c.connections, c.server.as_str()));
    // The other kinds' cells are not in the throughput table: their
    // repetitions name them.
    let reps = a.repetitions.iter().chain(&b.repetitions);
    let reps = reps.map(|r| (r.test.as_str(), r.connections, r.server.as_str()));
    for k in cells.chain(reps) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut rows = Vec::new();
    let (mut only_in_a, mut only_in_b, mut in_neither) = (Vec::new(), Vec::new(), Vec::new());
    let reference = shared_reference(a, b);
    for metric in Metric::ALL {
        for &(t, c, s) in &keys {
            let metrics = Metric::for_kind(kind_of_cell(a, b, t, c, s));
            if !metrics.contains(&metric) {
                continue;
            }
            let xs = values(a, t, c, s, metric, reference);
            let ys = values(b, t, c, s, metric, reference);
            let name = format!("{t} c={c} {s}");
            match (xs.is_empty(), ys.is_empty()) {
                (false, false) => {
                    let mut r = row(metric, t, c, s, &xs, &ys);
                    let flags = |rep: &Report| rep.cell(t, c, s).map(|x| x.flags.clone());
                    r.a_flags = flags(a).unwrap_or_default();
                    r.b_flags = flags(b).unwrap_or_default();
                    rows.push(r);
                }
                // The lists are per cell, not per metric: by the kind's first.
                _ if metric != metrics[0] => {}
                (false, true) => only_in_a.push(name),
                (true, false) => only_in_b.push(name),
                (true, true) => in_neither.push(name),
            }
        }
    }
    Comparison {
        format: "netbench-compare/1",
        method: METHOD,
        alpha: ALPHA,
        a: a.run.clone(),
        b: b.run.clone(),
        rows,
        only_in_a,
        only_in_b,
        in_neither,
        environment_differences: differences(&a.run, &b.run),
        normalised_to_probe_ns: reference,
    }
}

fn row(metric: Metric, test: &str, conns: u32, server: &str, xs: &[f64], ys: &[f64]) -> CompareRow {
    let (sa, sb) = (
        summarize(xs).expect("non-empty"),
        summarize(ys).expect("non-empty"),
    );
    let change = if sa.median == 0.0 {
        f64::NAN
    } else {
        sb.median / sa.median - 1.0
    };
    let p = mann_whitney_p(xs, ys).unwrap_or(1.0);
    let verdict = if smallest_p(xs.len(), ys.len()) >= ALPHA {
        Verdict::TooFew
    } else if p >= ALPHA {
        Verdict::NoChange
    } else if (change > 0.0) == metric.higher_is_better() {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    CompareRow {
        metric,
        test: test.to_string(),
        connections: conns,
        server: server.to_string(),
        a: sa,
        b: sb,
        a_flags: String::new(),
        b_flags: String::new(),
        change,
        change_ci95: welch_change_ci(xs, ys),
        p,
        verdict,
    }
}

fn with_flags(text: String, flags: &str) -> String {
    if flags.is_empty() {
        text
    } else {
        format!("{text} {flags}")
    }
}

/// `+12.3%`, `-0.4%`.
pub fn percent(x: f64) -> String {
    let p = x * 100.0;
    // Rounds to zero without a sign: "-0.0%" reads as a change.
    if p.abs() < 0.05 {
        return "0.0%".to_string();
    }
    format!("{p:+.1}%")
}

/// Writes the comparison as aligned text tables, one per metric.
/// Which figures the comparison uses, in a sentence.
pub fn normalisation_note(c: &Comparison) -> String {
    match c.normalised_to_probe_ns {
        Some(ns) => format!(
            "Figures normalised by the machine-speed control (both runs carry it): each \
             repetition scaled to a machine whose CPU probe takes {:.0} µs (run A's median), so \
             a host that ran faster or slower does not read as a change of the server.",
            ns / 1e3
        ),
        None => "Raw figures: the runs do not both carry the machine-speed control, so a \
                 faster or slower host shows as a change."
            .to_string(),
    }
}

pub fn write_compare_text(out: &mut impl Write, c: &Comparison) -> io::Result<()> {
    writeln!(
        out,
        "A: run {} ({}, {})\nB: run {} ({}, {})\n{}\n",
        c.a.id, c.a.suite, c.a.started_at, c.b.id, c.b.suite, c.b.started_at, c.method
    )?;
    writeln!(out, "{}\n", normalisation_note(c))?;
    if !c.environment_differences.is_empty() {
        writeln!(out, "Not the same in both runs:")?;
        for d in &c.environment_differences {
            writeln!(out, "  {}", d.describe())?;
        }
        writeln!(out)?;
    }
    for metric in Metric::ALL {
        let mut lines = vec![vec![
            metric.title().to_string(),
            "A".into(),
            "B".into(),
            "change".into(),
            "95% interval".into(),
            "p".into(),
            String::new(),
        ]];
        for r in c.rows.iter().filter(|r| r.metric == metric) {
            lines.push(vec![
                format!("{} c={} {}", r.test, r.connections, r.server),
                with_flags(
                    format!("{} n={}", metric.show(r.a.median), r.a.n),
                    &r.a_flags,
                ),
                with_flags(
                    format!("{} n={}", metric.show(r.b.median), r.b.n),
                    &r.b_flags,
                ),
                percent(r.change),
                r.change_ci95.map_or("-".into(), |(lo, hi)| {
                    format!("[{}, {}]", percent(lo), percent(hi))
                }),
                format!("{:.3}", r.p),
                r.verdict.mark().to_string(),
            ]);
        }
        if lines.len() == 1 {
            continue;
        }
        let last = lines[0].len() - 1;
        write_columns(out, &lines, |i| i == 0 || i == last, false)?;
        writeln!(out)?;
    }
    let few = c.rows.iter().any(|r| r.verdict == Verdict::TooFew);
    writeln!(
        out,
        "~ not significant (p ≥ {}). better/worse: significant, in the direction that is better \
         or worse for that metric. Flags after a median are the cell's in that run: {}.",
        c.alpha,
        short_key()
    )?;
    if let Some(note) = chance_note(c) {
        writeln!(out, "{note}")?;
    }
    if few {
        writeln!(out, "{TOO_FEW_NOTE}")?;
    }
    for (which, cells) in not_compared(c) {
        writeln!(out, "{which}: {}", cells.join(", "))?;
    }
    Ok(())
}

pub(crate) const TOO_FEW_NOTE: &str = "? too few: with 3 or fewer repetitions a side the \
    smallest p this test can give is 0.100 or more, so no change can be called significant; run \
    with 4 or more (`netbench run SUITE --repetitions 5`, or `repetitions` in the suite).";

/// How many of the tests would pass for significant by chance alone: each
/// cell and metric is its own test at `alpha`, with no correction for their
/// number, as in benchstat; the reader should know what a lone verdict is
/// worth. None when fewer than two tests could reach `alpha`.
pub(crate) fn chance_note(c: &Comparison) -> Option<String> {
    let tested = c
        .rows
        .iter()
        .filter(|r| r.verdict != Verdict::TooFew)
        .count();
    (tested >= 2).then(|| {
        format!(
            "{tested} tests at p < {}: even with no change at all about {:.1} of them would come \
             out better or worse by chance, so weigh a lone verdict accordingly.",
            c.alpha,
            tested as f64 * c.alpha
        )
    })
}

/// The cells that could not be compared, by reason, leaving out empty lists.
pub(crate) fn not_compared(c: &Comparison) -> Vec<(&'static str, &[String])> {
    [
        ("measured only in A", c.only_in_a.as_slice()),
        ("measured only in B", c.only_in_b.as_slice()),
        ("no good repetition in either run", c.in_neither.as_slice()),
    ]
    .into_iter()
    .filter(|(_, cells)| !cells.is_empty())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_of_better_depends_on_the_metric() {
        let slow = [100.0, 101.0, 99.0, 100.5];
        let fast = [120.0, 121.0, 119.0, 120.5];
        let r = row(Metric::RequestsPerS, "blank", 1, "s", &slow, &fast);
        assert_eq!(r.verdict, Verdict::Better);
        assert!((r.change - 120.25 / 100.25 + 1.0).abs() < 1e-12);
        assert!((r.p - 2.0 / 70.0).abs() < 1e-9);
        let (lo, hi) = r.change_ci95.unwrap();
        assert!(lo > 0.0 && lo <= r.change && r.change <= hi, "[{lo}, {hi}]");
        // The same numbers as latencies: higher is worse.
        let r = row(Metric::LatencyP99, "blank", 1, "s", &slow, &fast);
        assert_eq!(r.verdict, Verdict::Worse);
    }

    #[test]
    fn overlap_is_no_change_and_three_a_side_is_too_few() {
        let a = [100.0, 104.0, 98.0, 102.0];
        let b = [101.0, 97.0, 103.0, 99.0];
        assert_eq!(
            row(Metric::RequestsPerS, "t", 1, "s", &a, &b).verdict,
            Verdict::NoChange
        );
        let r = row(
            Metric::RequestsPerS,
            "t",
            1,
            "s",
            &a[..3],
            &[200.0, 201.0, 202.0],
        );
        assert_eq!(r.verdict, Verdict::TooFew);
        assert!((r.p - 0.1).abs() < 1e-9);
    }

    #[test]
    fn the_chance_note_counts_only_tests_that_could_reach_alpha() {
        let run = crate::environment::tests::run(serde_json::Value::Null);
        let four = [100.0, 104.0, 98.0, 102.0];
        let testable = row(Metric::RequestsPerS, "t", 1, "s", &four, &four);
        let too_few = row(Metric::RequestsPerS, "t", 2, "s", &four[..2], &four[..2]);
        let mut c = Comparison {
            format: "netbench-compare/1",
            method: METHOD,
            alpha: ALPHA,
            a: run.clone(),
            b: run,
            rows: vec![testable.clone(), too_few],
            only_in_a: vec![],
            only_in_b: vec![],
            in_neither: vec![],
            environment_differences: vec![],
            normalised_to_probe_ns: None,
        };
        assert_eq!(chance_note(&c), None);
        c.rows
            .extend([testable.clone(), testable.clone(), testable]);
        let note = chance_note(&c).unwrap();
        assert!(note.starts_with("4 tests at p < 0.05"), "{note}");
        assert!(note.contains("about 0.2 of them"), "{note}");
    }

    fn figures(rps: f64, p99: f64, probe: Option<f64>) -> RepetitionFigures {
        RepetitionFigures {
            rps,
            requests: 1,
            errors: Default::default(),
            latency_mean_ns: p99,
            latency_p50_ns: p99,
            latency_p90_ns: p99,
            latency_p99_ns: p99,
            latency_p999_ns: p99,
            latency_p9999_ns: p99,
            latency_max_ns: p99,
            client_cpu_s: 0.0,
            achieved_concurrency: 1.0,
            client_bound: false,
            server: None,
            probe_server_ns: probe,
        }
    }

    #[test]
    fn the_control_takes_the_host_out_of_the_figures() {
        // B ran on a host 25% slower (probe 1250 ns against 1000): 80
        // requests/s there is 100 at A's speed, and 5 ms p99 is 4 ms.
        let f = figures(80.0, 5e6, Some(1250.0));
        assert!((Metric::RequestsPerS.value(&f, Some(1000.0)) - 100.0).abs() < 1e-9);
        assert!((Metric::LatencyP99.value(&f, Some(1000.0)) - 4e6).abs() < 1e-3);
        assert_eq!(Metric::RequestsPerS.value(&f, None), 80.0);
        // Without a probe on the repetition the figure stays as measured.
        assert_eq!(
            Metric::RequestsPerS.value(&figures(80.0, 1.0, None), Some(1000.0)),
            80.0
        );
    }

    #[test]
    fn percent_has_no_negative_zero() {
        assert_eq!(percent(-0.0001), "0.0%");
        assert_eq!(percent(0.123), "+12.3%");
        assert_eq!(percent(-0.05), "-5.0%");
    }

    #[test]
    fn every_kind_is_compared_by_its_own_figure_in_the_right_direction() {
        use crate::kinds::testing::{measurement, run};
        use netbench_suite::kinds::{
            FixedRateFacts, IdleFacts, IdleLevelFacts, LineFit, StormFacts, SweepFacts,
        };
        let suite =
            "[[scenarios]]\nname = \"held\"\nendpoint = \"blank\"\nconnections = [10, 100]\n\
            kind = \"idle\"\nhold = \"1s\"\n\
            [[scenarios]]\nname = \"burst\"\nendpoint = \"blank\"\nconnections = [100]\n\
            kind = \"storm\"\n\
            [[scenarios]]\nname = \"sweep\"\nendpoint = \"blank\"\nconnections = [10]\n\
            kind = \"rate-sweep\"\n\
            [[scenarios]]\nname = \"fixed\"\nendpoint = \"blank\"\nconnections = [10]\n\
            kind = \"fixed-rate\"\nrate = 1000\n";
        // Run B: less memory, faster storm, higher knee, more CPU per request.
        let make = |scale: f64| {
            let mut ms = Vec::new();
            for rep in 1..=4u32 {
                let jitter = 1.0 + f64::from(rep) * 0.001;
                let level = IdleLevelFacts {
                    connections: 100,
                    open: 100,
                    failed: 0,
                    closed_by_server: 0,
                    open_s: 0.1,
                    pss_bytes: 1,
                    rss_bytes: 1,
                    threads: 1,
                    cpu_cores_mean: 0.01 * jitter,
                    cpu_cores_peak: 0.1,
                    heartbeats: 0,
                    heartbeat_errors: 0,
                    client_cpu_s: 0.0,
                };
                let idle = Facts::Idle(IdleFacts {
                    hold_s: 1.0,
                    heartbeat_s: None,
                    levels: vec![level],
                    pss_fit: Some(LineFit {
                        slope: 2000.0 * jitter / scale,
                        intercept: 0.0,
                        r2: 1.0,
                        points: 2,
                    }),
                });
                let storm = Facts::Storm(StormFacts {
                    clients: 100,
                    answered: 100,
                    refused: 0,
                    connect_timeouts: 0,
                    other_errors: 0,
                    all_done_s: 1.0 * jitter / scale,
                    connects_per_s: 100.0,
                    connect: Default::default(),
                    somaxconn: None,
                    listen_backlog: None,
                    listen_overflows: None,
                    listen_drops: None,
                    client_bound: false,
                });
                let sweep = Facts::RateSweep(SweepFacts {
                    peak_rps: 1e4,
                    slo_p99_ns: 1e7,
                    steps: vec![],
                    knee_per_s: Some(4000.0 * jitter * scale),
                });
                let fixed = Facts::FixedRate(FixedRateFacts {
                    rate_per_s: 1000.0,
                    offered_per_s: 1000.0,
                    achieved_per_s: 1000.0,
                    p50_ns: 1.0,
                    p99_ns: 1.0,
                    server_cpu_us_per_request: Some(20.0 * jitter * scale),
                });
                for (name, conns, f) in [
                    ("held", 100, idle),
                    ("burst", 100, storm),
                    ("sweep", 10, sweep),
                    ("fixed", 10, fixed),
                ] {
                    ms.push(measurement("a", name, conns, rep, Some(f), None));
                }
            }
            crate::build_report(&run(suite, ms))
        };
        let c = compare(&make(1.0), &make(2.0));
        let verdict = |m: Metric| {
            let rows: Vec<_> = c.rows.iter().filter(|r| r.metric == m).collect();
            assert_eq!(rows.len(), 1, "{m:?}: {:?}", c.rows);
            rows[0].verdict
        };
        assert_eq!(verdict(Metric::IdleBytesPerConnection), Verdict::Better);
        assert_eq!(verdict(Metric::IdleCpuCores), Verdict::NoChange);
        assert_eq!(verdict(Metric::StormAllDone), Verdict::Better);
        assert_eq!(verdict(Metric::SweepKnee), Verdict::Better);
        assert_eq!(verdict(Metric::FixedRateCpuPerRequest), Verdict::Worse);
        // No throughput figure for these cells, and none is missing.
        assert!(c.rows.iter().all(|r| r.metric != Metric::RequestsPerS));
        assert!(c.only_in_a.is_empty() && c.only_in_b.is_empty() && c.in_neither.is_empty());
        let mut text = Vec::new();
        write_compare_text(&mut text, &c).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("2.0 KiB/conn n=4  1002 B/conn n=4"), "{text}");
    }
}
