//! The table people publish, rebuilt from a stored run: rows are test ×
//! connections, columns are servers, each cell the median requests/s over
//! the repetitions with its spread, p99 latency and every flag that
//! qualifies the number.

use std::collections::BTreeMap;
use std::io::{self, Write};

use netbench_engine::LoadResult;
use netbench_suite::store::{MeasurementStatus, RunDetail};
use netbench_suite::Suite;
use serde::Serialize;

use crate::flag::{marks, measured_legend, Flag};
use crate::format::{first_line_safe, format_duration_ns, thousands, write_columns};
use crate::stats::{summarize, too_noisy, Summary};

/// What a cell of the table shows.
pub(crate) const CELL_LEGEND: &str =
    "cells: median requests/s over the repetitions, ±half the 95% \
    confidence interval of the mean (relative), median p99 latency.";

/// One table cell: the repetitions of one server at one test and
/// connection count.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CellStats {
    pub rps: Option<Summary>,
    pub p99_ns: Option<f64>,
    pub client_bound: bool,
    pub errors: u64,
    pub failed: usize,
    pub repetitions: usize,
    /// The first failure's reason, for the notes under the table.
    pub failure: Option<String>,
}

impl CellStats {
    pub fn noisy(&self) -> bool {
        self.rps.as_ref().is_some_and(too_noisy)
    }

    /// Whether the measurements set `flag` (never [`Flag::VerifyWarnings`],
    /// which comes from verify, not from the measurements).
    pub(crate) fn has(&self, flag: Flag) -> bool {
        match flag {
            Flag::ClientBound => self.client_bound,
            Flag::Noisy => self.noisy(),
            Flag::Errors => self.errors > 0,
            Flag::Failed => self.failed > 0,
            Flag::VerifyWarnings => false,
        }
    }

    /// Flags that qualify the number, as short marks.
    pub fn flags(&self) -> String {
        marks(Flag::MEASURED.into_iter().filter(|&f| self.has(f)))
    }
}

/// The table's content: row keys in suite order, column labels, cells.
#[derive(Debug, Clone)]
pub struct RunTable {
    pub rows: Vec<(String, u32)>,
    pub columns: Vec<String>,
    pub cells: BTreeMap<(String, u32, String), CellStats>,
}

pub(crate) fn label(server: &str, variant: &str) -> String {
    if variant.is_empty() {
        server.to_string()
    } else {
        format!("{server}:{variant}")
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// Groups a run's measurements into table cells.
pub fn run_table(run: &RunDetail) -> RunTable {
    let mut rows: Vec<(String, u32)> = match Suite::parse(&run.suite, &run.suite_toml) {
        Ok(s) => s
            .scenarios
            .iter()
            .flat_map(|sc| sc.connections.iter().map(move |&c| (sc.name.clone(), c)))
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut columns: Vec<String> = run
        .servers
        .iter()
        .filter(|s| s.excluded_reason.is_none())
        .map(|s| label(&s.server, &s.variant))
        .collect();
    let mut raw: BTreeMap<(String, u32, String), Vec<&netbench_suite::store::Measurement>> =
        BTreeMap::new();
    for m in &run.measurements {
        let col = label(&m.key.server, &m.key.variant);
        if !columns.contains(&col) {
            columns.push(col.clone());
        }
        let row = (m.key.scenario.clone(), m.key.connections);
        if !rows.contains(&row) {
            rows.push(row.clone());
        }
        raw.entry((row.0, row.1, col)).or_default().push(m);
    }
    let cells = raw
        .into_iter()
        .map(|(k, ms)| {
            let mut c = CellStats {
                repetitions: ms.len(),
                ..CellStats::default()
            };
            let mut rps = Vec::new();
            let mut p99 = Vec::new();
            for m in ms {
                if m.status == MeasurementStatus::Failed {
                    c.failed += 1;
                    if c.failure.is_none() {
                        c.failure = m.failure.clone();
                    }
                    continue;
                }
                let Some(r) = m
                    .result_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str::<LoadResult>(j).ok())
                else {
                    continue;
                };
                rps.push(r.rps);
                if r.latency.count > 0 {
                    p99.push(r.latency.p99_ns);
                }
                c.client_bound |= r.verdict.client_bound;
                c.errors += r.errors.total();
            }
            c.rps = summarize(&rps);
            c.p99_ns = median(p99);
            (k, c)
        })
        .collect();
    RunTable {
        rows,
        columns,
        cells,
    }
}

pub(crate) fn cell_text(c: Option<&CellStats>) -> String {
    let Some(c) = c else {
        return "-".to_string();
    };
    let Some(rps) = c.rps else {
        return format!(
            "failed {}/{} {}",
            c.failed,
            c.repetitions,
            Flag::Failed.letter()
        );
    };
    let spread = match rps.ci95 {
        Some((lo, hi)) if rps.median > 0.0 => {
            format!(" ±{:.0}%", (hi - lo) / 2.0 / rps.median * 100.0)
        }
        _ => String::new(),
    };
    let p99 = c
        .p99_ns
        .map_or(String::new(), |p| format!(" p99 {}", format_duration_ns(p)));
    let flags = c.flags();
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" {flags}")
    };
    format!(
        "{}{spread}{p99}{flags}",
        thousands(rps.median.round() as u64)
    )
}

/// Writes the run's header, the table, the legend and the notes (excluded
/// servers and failed cells, each with its reason).
pub fn write_run_table(out: &mut impl Write, run: &RunDetail) -> io::Result<()> {
    let t = run_table(run);
    let ok = run
        .measurements
        .iter()
        .filter(|m| m.status == MeasurementStatus::Ok)
        .count();
    writeln!(
        out,
        "run {} · suite {} · {} · started {}{} · {} measurements, {} failed",
        run.id,
        run.suite,
        run.status.as_str(),
        run.started_at,
        run.finished_at
            .as_deref()
            .map(|f| format!(", finished {f}"))
            .unwrap_or_default(),
        run.measurements.len(),
        run.measurements.len() - ok
    )?;
    if let Some(note) = run.placement.get("note").and_then(|n| n.as_str()) {
        writeln!(
            out,
            "CPUs: server {}, client {} ({note})",
            run.placement["server"], run.placement["client"]
        )?;
    }
    writeln!(out)?;
    let mut header = vec!["test".to_string(), "connections".to_string()];
    header.extend(t.columns.iter().cloned());
    let mut lines = vec![header];
    for (scenario, conns) in &t.rows {
        let mut line = vec![scenario.clone(), thousands(u64::from(*conns))];
        for col in &t.columns {
            line.push(cell_text(t.cells.get(&(
                scenario.clone(),
                *conns,
                col.clone(),
            ))));
        }
        lines.push(line);
    }
    write_columns(out, &lines, |i| i == 0, true)?;
    writeln!(out)?;
    writeln!(out, "{CELL_LEGEND}\n{}", measured_legend())?;
    let excluded: Vec<_> = run
        .servers
        .iter()
        .filter(|s| s.excluded_reason.is_some())
        .collect();
    if !excluded.is_empty() {
        writeln!(out, "\nleft out:")?;
        for s in excluded {
            let first = first_line_safe(s.excluded_reason.as_deref().unwrap_or(""));
            writeln!(out, "  {}: {first}", label(&s.server, &s.variant))?;
        }
    }
    let failures: Vec<_> = t
        .cells
        .iter()
        .filter(|(_, c)| c.failure.is_some())
        .collect();
    if !failures.is_empty() {
        writeln!(out, "\nfailed measurements:")?;
        for ((scenario, conns, col), c) in failures {
            let first = first_line_safe(c.failure.as_deref().unwrap_or(""));
            writeln!(out, "  {col} {scenario} c={conns}: {first}")?;
        }
    }
    Ok(())
}
