//! The report as Markdown: the run's table ready to paste into a README,
//! with the legend, what each server used, and how each was built.

use std::io::{self, Write};

use crate::flag::{measured_legend, warnings_legend, Flag};
use crate::format::{bytes, cell, thousands};
use crate::model::{tier_str, Report};
use crate::palette::model_name;
use crate::suite_table::{cell_text, CELL_LEGEND, STANDING_LEGEND, TIER_LEGEND};

/// Writes the Markdown report.
pub fn write_markdown(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "### netbench run {} (suite {}, {})\n",
        r.run.id, r.run.suite, r.run.started_at
    )?;
    let env = &r.run.environment;
    writeln!(
        out,
        "{} · {} CPUs · {} · {}\n",
        env["cpu_model"].as_str().unwrap_or("unknown CPU"),
        env["cpus_online"],
        env["os"].as_str().unwrap_or("unknown OS"),
        env["kernel"].as_str().unwrap_or("unknown kernel"),
    )?;
    for note in r.rows.iter().filter_map(|row| row.client_bound_note()) {
        writeln!(out, "**Note:** {}\n", cell(&note))?;
    }
    table_head(out, &r.columns)?;
    for t in &r.tests {
        for &c in &t.connections {
            let mut line = vec![t.name.clone(), thousands(u64::from(c))];
            for server in &r.columns {
                let cell = r.cell(&t.name, c, server);
                let mut text = cell_text(cell.map(|c| &c.stats));
                let warned = Flag::VerifyWarnings.letter();
                if cell.is_some_and(|c| c.flags.contains(warned)) {
                    text.push(warned);
                }
                line.push(text);
            }
            row(out, &line)?;
        }
    }
    let flags: Vec<&str> = r.cells.iter().map(|c| c.flags.as_str()).collect();
    writeln!(
        out,
        "\n{CELL_LEGEND} {TIER_LEGEND} {} {} {STANDING_LEGEND}{}\n",
        measured_legend(),
        warnings_legend(),
        crate::flag::kind_legend(&flags).map_or(String::new(), |l| format!(" {l}"))
    )?;
    if let Some(line) = r.precision.line() {
        writeln!(out, "{}.\n", cell(&line))?;
    }
    for note in &r.run.notes {
        writeln!(out, "{note}\n")?;
    }
    crate::view::markdown::section_by_id(out, r, "ranking")?;
    crate::protocols::write_markdown(out, &r.protocols)?;
    write_allocators(out, r)?;
    write_models(out, r)?;
    crate::view::markdown::section_by_id(out, r, "placements")?;
    crate::kinds::write_markdown(out, &r.kinds)?;
    crate::hostile_view::write_markdown(out, &r.hostile)?;
    crate::startup_view::write_markdown(out, &r.startup)?;
    crate::view::markdown::section_by_id(out, r, "resident")?;
    crate::view::markdown::section_by_id(out, r, "conformance")?;

    writeln!(
        out,
        "| server | language | framework | framework version | model | tier | allocator | build | artefact | ready | peak memory | verify |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---:|---:|---:|---:|---|")?;
    for s in &r.servers {
        let verify = match (&s.verify, &s.excluded_reason) {
            (_, Some(why)) => format!("left out: {}", why.lines().next().unwrap_or("")),
            (Some(v), None) => format!("{} pass, {} warn, {} fail", v.pass, v.warn, v.fail),
            (None, None) => "-".to_string(),
        };
        let name = cell(&s.label);
        let name = match link_target(&s.website) {
            Some(url) => format!("[{}]({url})", name.replace('[', "\\[").replace(']', "\\]")),
            None => name,
        };
        let cells = [
            s.language_shown(),
            s.framework_name.clone(),
            s.framework_version.clone(),
            model_name(s.model).to_string(),
            tier_str(s.tier).to_string(),
            s.allocator.clone().unwrap_or_else(|| "runtime's".into()),
            s.build_s.map_or("(shared)".into(), |b| format!("{b:.1} s")),
            s.artefact_bytes.map_or("-".into(), bytes),
            s.ready_s
                .map_or("-".into(), |x| format!("{:.0} ms", x * 1e3)),
            s.peak_rss_bytes.map_or("-".into(), bytes),
            verify,
        ];
        let rest: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        writeln!(out, "| {name} | {} |", rest.join(" | "))?;
    }
    Ok(())
}

/// The allocator study, when the run has one: per server, each allocator's
/// median requests/s (its change against glibc) and peak RSS.
fn write_allocators(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let charts = crate::axes::allocator_study(r);
    if charts.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = crate::axes::allocator_names().collect();
    writeln!(
        out,
        "Allocators: median requests/s (change against glibc) · median peak RSS.\n"
    )?;
    writeln!(
        out,
        "| test | connections | server | {} |",
        names.join(" | ")
    )?;
    writeln!(out, "|---|---:|---|{}", "---:|".repeat(names.len()))?;
    for row in crate::axes::table_rows(&charts) {
        let values: Vec<String> = row.values.iter().map(|v| cell(v)).collect();
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&row.test),
            thousands(u64::from(row.connections)),
            cell(&row.server),
            values.join(" | ")
        )?;
    }
    writeln!(out, "\n{}\n", crate::axes::CHANGE_LEGEND)
}

/// The threading-model figures against connections, when the run measured
/// three or more connection counts: requests/s, peak threads and peak RSS.
fn write_models(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if !crate::axes::has_curves(r) {
        return Ok(());
    }
    writeln!(
        out,
        "Against connections: median requests/s (with its flags) · peak threads · peak RSS.\n"
    )?;
    for t in r.tests.iter().filter(|t| t.connections.len() >= 3) {
        let conns: Vec<String> = t
            .connections
            .iter()
            .map(|c| format!("{} conn.", thousands(u64::from(*c))))
            .collect();
        writeln!(out, "| {} | model | {} |", cell(&t.name), conns.join(" | "))?;
        writeln!(out, "|---|---|{}", "---:|".repeat(conns.len()))?;
        for label in &r.columns {
            let model = r
                .servers
                .iter()
                .find(|s| &s.label == label)
                .map_or("-", |s| model_name(s.model));
            let values: Vec<String> = t
                .connections
                .iter()
                .map(|&n| {
                    let Some(c) = r.cell(&t.name, n, label) else {
                        return "-".to_string();
                    };
                    let mut rps = c
                        .stats
                        .rps
                        .map_or("-".to_string(), |s| thousands(s.median.round() as u64));
                    if !c.flags.is_empty() {
                        rps = format!("{rps} {}", c.flags);
                    }
                    let threads = c
                        .peak_threads
                        .map_or("-".to_string(), |v| thousands(v.round() as u64));
                    let rss = c
                        .peak_rss_bytes
                        .map_or("-".to_string(), |v| bytes(v as u64));
                    format!("{rps} · {threads} · {rss}")
                })
                .collect();
            writeln!(
                out,
                "| {} | {model} | {} |",
                cell(label),
                values.join(" | ")
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The head of a test × connections table: its header and alignment rows.
fn table_head(out: &mut impl Write, columns: &[String]) -> io::Result<()> {
    let mut header = vec!["test".to_string(), "connections".to_string()];
    header.extend(columns.iter().cloned());
    row(out, &header)?;
    let align: Vec<String> = (0..header.len())
        .map(|i| if i == 0 { "---" } else { "---:" }.to_string())
        .collect();
    row(out, &align)
}

fn row(out: &mut impl Write, cells: &[String]) -> io::Result<()> {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    writeln!(out, "| {} |", cells.join(" | "))
}

/// A website as a Markdown link target: only a plain http(s) address, which
/// nothing in it can end early or turn into markup.
fn link_target(url: &str) -> Option<&str> {
    let url = url.trim();
    let plain = url
        .chars()
        .all(|c| c.is_ascii_graphic() && !"()<>[]|\\`\"'".contains(c));
    ((url.starts_with("https://") || url.starts_with("http://")) && plain).then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_web_addresses_become_links() {
        assert_eq!(
            link_target(" https://pkg.go.dev/net/http "),
            Some("https://pkg.go.dev/net/http")
        );
        assert_eq!(
            link_target("http://x.org/a?b=c#d"),
            Some("http://x.org/a?b=c#d")
        );
        for bad in [
            "",
            "javascript:alert(1)",
            "pkg.go.dev",
            "https://x.org/a b",
            "https://x.org/(a)",
            "https://x.org/a|b",
            "https://x.org/<b>",
        ] {
            assert_eq!(link_target(bad), None, "{bad}");
        }
    }

    #[test]
    fn cells_are_inert() {
        assert_eq!(
            cell("a|b <script>&x\nnext\u{1b}[31m"),
            "a\\|b &lt;script>&amp;x\\nnext\\u{1b}[31m"
        );
    }
}
