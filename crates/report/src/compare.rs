//! Two runs side by side, in the spirit of benchstat: per cell and metric
//! the change of the median with a 95% interval, and whether it is
//! significant by the Mann–Whitney U test over the repetitions.

use std::io::{self, Write};

use serde::Serialize;

pub use self::noise::ChangeNoise;
use crate::compare_shift::{leave_one_out, overall, RunShift};
use crate::environment::{differences, EnvDifference};
use crate::flag::short_key;
use crate::format::{format_duration_ns, thousands, write_columns};
use crate::kind_idle::idle_cpu_at_largest;
use crate::kinds::{median, per_connection};
use crate::model::{Repetition, RepetitionFigures, Report, RunInfo};
use crate::significance::{mann_whitney_p, smallest_p, welch_change_ci, ALPHA};
use crate::stats::{summarize, Summary};
use netbench_records::facts::Facts;

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

    /// Whether the run-wide shift is taken out of this metric: the figures
    /// every throughput cell has and a drifting host moves together.
    fn shifts(self) -> bool {
        matches!(self, Metric::RequestsPerS | Metric::LatencyP99)
    }

    pub(crate) fn higher_is_better(self) -> bool {
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
    /// The run-wide shift B's figures were divided by before the change
    /// and the test (the median change of the other servers in its row);
    /// None: not shifted.
    pub shift: Option<f64>,
    /// How far the change could move by noise alone (the shift's
    /// uncertainty included): what the regression gate's noise floor is
    /// made of. None when a side has fewer than two usable figures.
    pub noise: Option<ChangeNoise>,
}

/// The run-wide shift of one metric in one row of the table (see
/// `compare_shift`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricShift {
    pub metric: Metric,
    pub test: String,
    pub connections: u32,
    #[serde(flatten)]
    pub shift: RunShift,
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
    /// a slower machine is scaled up by as much. None: raw figures. Not
    /// used for the metrics the run-wide shift was taken out of.
    pub normalised_to_probe_ns: Option<f64>,
    /// The rows and metrics judged beyond the run-wide shift, and the
    /// shift of each; empty when compared as measured (`--absolute`, or
    /// too few servers in every row to take a shift from).
    pub run_shift: Vec<MetricShift>,
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

/// Compares run `b` against run `a` cell by cell, each throughput cell
/// beyond the run-wide shift (see [`compare_with`]).
pub fn compare(a: &Report, b: &Report) -> Comparison {
    compare_with(a, b, true)
}

/// One cell's figures of a metric in both runs.
struct Pair<'k> {
    key: (&'k str, u32, &'k str),
    xs: Vec<f64>,
    ys: Vec<f64>,
}

/// The cells of `metric`, in `keys`' order, with their figures.
fn pairs<'k>(
    a: &Report,
    b: &Report,
    keys: &[(&'k str, u32, &'k str)],
    metric: Metric,
    reference: Option<f64>,
) -> Vec<Pair<'k>> {
    keys.iter()
        .filter(|&&(t, c, s)| Metric::for_kind(kind_of_cell(a, b, t, c, s)).contains(&metric))
        .map(|&(t, c, s)| Pair {
            key: (t, c, s),
            xs: values(a, t, c, s, metric, reference),
            ys: values(b, t, c, s, metric, reference),
        })
        .collect()
}

/// For each cell of `raw` (unnormalised figures), the factor its B figures
/// are divided by (None: not shifted), and the shift of each row (test and
/// connections) with enough servers in both runs. Each row is its own
/// group: in one A/A pair here the host's drift moved blank's p99 by a
/// fifth and work's not at all.
fn shifts_by_row(raw: &[Pair<'_>], metric: Metric) -> (Vec<Option<f64>>, Vec<MetricShift>) {
    let mut groups: Vec<((&str, u32), Vec<usize>)> = Vec::new();
    for (i, p) in raw.iter().enumerate() {
        if p.xs.is_empty() || p.ys.is_empty() {
            continue;
        }
        let row = (p.key.0, p.key.1);
        match groups.iter_mut().find(|(r, _)| *r == row) {
            Some((_, members)) => members.push(i),
            None => groups.push((row, vec![i])),
        }
    }
    let mut factors = vec![None; raw.len()];
    let mut shifts = Vec::new();
    for ((test, connections), members) in groups {
        let ratios: Vec<f64> = members
            .iter()
            .map(|&i| {
                let (ma, mb) = (median(raw[i].xs.clone()), median(raw[i].ys.clone()));
                mb.zip(ma).map_or(f64::NAN, |(mb, ma)| mb / ma)
            })
            .collect();
        let Some(shift) = overall(&ratios) else {
            continue;
        };
        shifts.push(MetricShift {
            metric,
            test: test.to_string(),
            connections,
            shift,
        });
        for (&i, f) in members.iter().zip(leave_one_out(&ratios)) {
            factors[i] = f;
        }
    }
    (factors, shifts)
}

/// Compares run `b` against run `a` cell by cell. With `run_shift`,
/// requests/s and p99 of each cell are judged beyond the run-wide shift
/// (B divided by the median change of the other servers in its row) in
/// rows with enough servers; without it, or with too few, the figures
/// are compared as measured, normalised by the CPU probe when both runs
/// carry it.
pub fn compare_with(a: &Report, b: &Report, run_shift: bool) -> Comparison {
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
    let mut shifts = Vec::new();
    for metric in Metric::ALL {
        let first_row = rows.len();
        let mut cells = pairs(a, b, &keys, metric, reference);
        let mut factors: Vec<Option<f64>> = vec![None; cells.len()];
        if run_shift && metric.shifts() {
            let mut raw = pairs(a, b, &keys, metric, None);
            let (row_factors, row_shifts) = shifts_by_row(&raw, metric);
            for (i, f) in row_factors.iter().enumerate() {
                if f.is_some() {
                    std::mem::swap(&mut cells[i], &mut raw[i]);
                }
            }
            factors = row_factors;
            shifts.extend(row_shifts);
        }
        for (cell, factor) in cells.iter_mut().zip(factors) {
            let (t, c, s) = cell.key;
            let name = format!("{t} c={c} {s}");
            let first = Metric::for_kind(kind_of_cell(a, b, t, c, s))[0];
            match (cell.xs.is_empty(), cell.ys.is_empty()) {
                (false, false) => {
                    if let Some(f) = factor {
                        cell.ys.iter_mut().for_each(|y| *y /= f);
                    }
                    let mut r = row(metric, t, c, s, &cell.xs, &cell.ys);
                    r.shift = factor;
                    let flags = |rep: &Report| rep.cell(t, c, s).map(|x| x.flags.clone());
                    r.a_flags = flags(a).unwrap_or_default();
                    r.b_flags = flags(b).unwrap_or_default();
                    rows.push(r);
                }
                // The lists are per cell, not per metric: by the kind's first.
                _ if metric != first => {}
                (false, true) => only_in_a.push(name),
                (true, false) => only_in_b.push(name),
                (true, true) => in_neither.push(name),
            }
        }
        noise::add_shift_noise(&mut rows[first_row..]);
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
        run_shift: shifts,
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
        shift: None,
        noise: noise::own(xs, ys),
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

/// Which figures the comparison uses, in a sentence or two.
pub fn normalisation_note(c: &Comparison) -> String {
    let probe = match c.normalised_to_probe_ns {
        Some(ns) => format!(
            "Figures normalised by the machine-speed control (both runs carry it): each \
             repetition scaled to a machine whose CPU probe takes {:.0} µs (run A's median), so \
             a host that ran faster or slower does not read as a change of the server.",
            ns / 1e3
        ),
        None => "Raw figures: the runs do not both carry the machine-speed control, so a \
                 faster or slower host shows as a change."
            .to_string(),
    };
    if c.run_shift.is_empty() {
        return probe;
    }
    let moved: Vec<String> = c
        .run_shift
        .iter()
        .map(|m| {
            format!(
                "{} at {} c={} by {} (median of {} servers)",
                m.metric.title(),
                m.test,
                m.connections,
                percent(m.shift.factor - 1.0),
                m.shift.cells
            )
        })
        .collect();
    let others = if c.rows.iter().any(|r| r.shift.is_none()) {
        format!(" Figures not shifted (other kinds, rows of fewer servers): {probe}")
    } else {
        String::new()
    };
    format!(
        "Changes beyond the run-wide shift: from A to B every server moved, {}. A shift shared \
         by the servers of a row is taken as the machine's (a shared host drifts between runs \
         by more than its repetitions vary, and the CPU probe does not see it), so each cell's \
         B figures are divided by the median change of the other servers in its row before \
         the change and the test. A change common to every server shows only here; `--absolute` compares the \
         figures as measured.{others}",
        moved.join(", ")
    )
}

/// Writes the comparison as aligned text tables, one per metric.
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

mod noise;
#[cfg(test)]
pub(crate) mod tests;
