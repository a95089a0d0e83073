//! The run as the terminal shows it at the end of `netbench run` and in
//! `netbench show`: a header, the rows whose leaders are client-bound, the
//! throughput table with its legends and notes, the run's precision (cells
//! within ±5%, the A/A twins), what was left out, and the other kinds' and
//! start-up tables. A view of the one [`Report`] model: it
//! computes nothing the HTML, Markdown, CSV and JSON do not also show.

use std::io::{self, Write};

use crate::flag::{measured_legend, Flag};
use crate::format::{first_line_safe, rest_lines_safe, terminal_safe, thousands, write_columns};
use crate::model::Report;
use crate::suite_table::{
    cell_text, CellStats, RunTable, CELL_LEGEND, STANDING_LEGEND, TIER_LEGEND,
};

/// Writes the run's header, the table, the legend and the notes (excluded
/// servers and failed cells, each with its reason).
pub fn write_run_table(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let run = &r.run;
    let t = r.table();
    writeln!(
        out,
        "run {} · suite {} · {} · started {}{} · {} measurements, {} failed",
        run.id,
        terminal_safe(&run.suite),
        run.status,
        run.started_at,
        run.finished_at
            .as_deref()
            .map(|f| format!(", finished {f}"))
            .unwrap_or_default(),
        run.measurements,
        run.failed_measurements
    )?;
    if let Some(note) = run.placement.get("note").and_then(|n| n.as_str()) {
        writeln!(
            out,
            "CPUs: server {}, client {} ({note})",
            run.placement["server"], run.placement["client"]
        )?;
    }
    writeln!(out, "server processes: {}", r.startup.process_text)?;
    for note in r.rows.iter().filter_map(|row| row.client_bound_note()) {
        writeln!(out, "note: {}", terminal_safe(&note))?;
    }
    writeln!(out)?;
    write_columns(out, &grid(&t, cell_text), |i| i == 0, true)?;
    writeln!(out)?;
    writeln!(
        out,
        "{CELL_LEGEND}\n{TIER_LEGEND}\n{}\n{STANDING_LEGEND}",
        measured_legend()
    )?;
    let flags: Vec<String> = t.cells.values().map(CellStats::flags).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    if let Some(legend) = crate::flag::kind_legend(&flags) {
        writeln!(out, "{legend}")?;
    }
    for note in &run.notes {
        writeln!(out, "{note}")?;
    }
    if let Some(line) = r.precision.line() {
        writeln!(out, "\n{}", terminal_safe(&line))?;
    }
    write_noisy(out, &t)?;
    crate::view::terminal::section_by_id(out, r, "ranking")?;
    let excluded: Vec<_> = r
        .servers
        .iter()
        .filter(|s| s.excluded_reason.is_some())
        .collect();
    if !excluded.is_empty() {
        writeln!(out, "\nleft out:")?;
        for s in excluded {
            let reason = s.excluded_reason.as_deref().unwrap_or("");
            let first = first_line_safe(reason);
            let name = terminal_safe(&s.label);
            writeln!(out, "  {name}: {first}")?;
            // A failed build's output, which its first line announces.
            write!(out, "{}", rest_lines_safe(reason, "    | "))?;
        }
    }
    crate::view::terminal::section_by_id(out, r, "placements")?;
    if !r.protocols.is_empty() {
        writeln!(out)?;
        crate::protocols::write_markdown(out, &r.protocols)?;
    }
    crate::view::terminal::section_by_id(out, r, "resident")?;
    crate::view::terminal::section_by_id(out, r, "conformance")?;
    // The other kinds' tables.
    if !r.kinds.is_empty() {
        writeln!(out)?;
        crate::kinds::write_markdown(out, &r.kinds)?;
    }
    if !r.hostile.is_empty() {
        writeln!(out)?;
        crate::hostile_view::write_markdown(out, &r.hostile)?;
    }
    if r.startup.process != crate::startup::ProcessMode::Fixed {
        writeln!(out)?;
        crate::startup_view::write_markdown(out, &r.startup)?;
    }
    let failures: Vec<_> = t
        .cells
        .iter()
        .filter(|(_, c)| c.failure.is_some())
        .collect();
    let kind_failures = r.kinds.failures();
    if !failures.is_empty() || !kind_failures.is_empty() {
        writeln!(out, "\nfailed measurements:")?;
        for ((scenario, conns, col), c) in failures {
            let first = first_line_safe(c.failure.as_deref().unwrap_or(""));
            let (col, scenario) = (terminal_safe(col), terminal_safe(scenario));
            writeln!(out, "  {col} {scenario} c={conns}: {first}")?;
        }
        for (test, conns, server, failure) in kind_failures {
            writeln!(
                out,
                "  {} {} c={conns}: {}",
                terminal_safe(server),
                terminal_safe(test),
                first_line_safe(failure)
            )?;
        }
    }
    Ok(())
}

/// What was going on around the noisy or loaded cells.
fn write_noisy(out: &mut impl Write, t: &RunTable) -> io::Result<()> {
    let noisy: Vec<String> = t
        .cells
        .iter()
        .filter(|(_, c)| c.noisy() || c.has(Flag::Loaded))
        .filter_map(|((s, conns, col), c)| {
            Some(format!(
                "  {} {} c={conns}: {}",
                terminal_safe(col),
                terminal_safe(s),
                c.noise?.describe()?
            ))
        })
        .collect();
    if !noisy.is_empty() {
        writeln!(out, "noisy or loaded cells and what was going on:")?;
        for line in noisy {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// The table as text lines: a header, then a line per test × connections
/// with `text` of each server's cell.
fn grid(t: &RunTable, text: impl Fn(Option<&CellStats>) -> String) -> Vec<Vec<String>> {
    // Names are the servers' folders and the suite's: shown, never obeyed.
    let mut header = vec!["test".to_string(), "connections".to_string()];
    header.extend(t.columns.iter().map(|c| terminal_safe(c)));
    let mut lines = vec![header];
    for (scenario, conns) in &t.rows {
        let mut line = vec![terminal_safe(scenario), thousands(u64::from(*conns))];
        for col in &t.columns {
            line.push(text(t.cells.get(&(scenario.clone(), *conns, col.clone()))));
        }
        lines.push(line);
    }
    lines
}
