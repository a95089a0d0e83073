//! The "Hostile clients" section (issue 33) as HTML and as Markdown (which
//! the terminal shows too): per hostile scenario, servers ranked by
//! resilience × attacks, each cell the good load's success rate and p99
//! ratio beside the attack with its marks and recovery, the conformance
//! score, the ranking rule and the worst cases in words. A view of
//! `Report::hostile`: every figure and word comes from hostile.rs.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::hostile::{AttackCell, HostileRow, HostileTable, RANK_RULE};
use crate::html_parts::{esc, swatch_html, swatch_of};
use crate::model::Report;
use crate::palette::{model_color, Swatch};
use crate::ranked_view::{kind_bar, rank, Measure, RankedCharts};

/// What the marks and figures of a cell mean.
pub const LEGEND: &str = "Each cell: the good load's success rate while the attack ran, its p99 \
latency as a multiple of the same server's baseline (the good load alone, before the attacks), \
and how long after the attack it took to be back within the margin (success within 1 point, p99 \
within 2× + 1 ms of the baseline; \"no rec.\" when not within the after phase). Marks: ✗ the \
server crashed (it was started again for the next attack), ⊘ it stopped accepting connections, \
C the good load's client was short of CPU beside the attacker (both run on the client's CPUs), \
so part of that p99 is the client's. A baseline \
\"at N req/s\": the server answered under 97% of the rate alone, so its good load ran at 90% \
of what it answered. Conformance: the HTTP/1.1 probes verify passed, of those run.";

fn conformance(row: &HostileRow) -> String {
    match row.conformance {
        Some((p, t)) => format!("{p}/{t}"),
        None => "not probed".into(),
    }
}

fn success(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r >= 10.0 => format!("{r:.0}×"),
        Some(r) => format!("{r:.1}×"),
        None => "no answer".into(),
    }
}

fn marks(c: &AttackCell) -> String {
    let mut m = match (c.crashed, c.stopped_accepting) {
        (true, _) => " ✗",
        (false, true) => " ⊘",
        _ => "",
    }
    .to_string();
    if c.client_bound {
        m.push_str(" C");
    }
    m
}

fn recovery(c: &AttackCell) -> String {
    match c.recovery_s {
        Some(r) => format!("rec. {r:.1} s"),
        None => "no rec.".into(),
    }
}

fn heading(t: &HostileTable) -> String {
    let mut s = t.scenario.clone();
    if let (Some(rate), Some(n), Some(a), Some(after)) =
        (t.rate_per_s, t.attack_connections, t.attack_s, t.after_s)
    {
        let _ = write!(
            s,
            ": good load at {} requests/s; each attack {n} connections for {a:.0} s, then {after:.0} s alone",
            crate::format::thousands(rate.round() as u64)
        );
    }
    s
}

/// Writes the section; nothing for a run without hostile cells.
pub(crate) fn hostile_html(b: &mut String, r: &Report, colors: &[Swatch], out: &mut RankedCharts) {
    if r.hostile.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<section id=\"hostile\"><h2>Hostile clients</h2><p class=\"legend\">{} {}</p>",
        esc(LEGEND),
        esc(RANK_RULE)
    );
    for t in &r.hostile {
        let _ = write!(
            b,
            "<h3>{}</h3><table class=\"grid hostile\"><thead><tr><th>#</th><th>server</th>\
             <th>conformance</th><th>baseline<br><small>success · p99</small></th>",
            esc(&heading(t))
        );
        for a in &t.attacks {
            let _ = write!(b, "<th>{}</th>", esc(a));
        }
        b.push_str("</tr></thead><tbody>");
        for row in &t.rows {
            let color =
                swatch_of(colors, &row.server).map_or(model_color(None), |s| s.color.clone());
            let _ = write!(
                b,
                "<tr data-server=\"{}\"><td>{}</td><th>{}{}</th><td>{}</td>",
                esc(&row.server),
                row.rank,
                swatch_html(&color),
                esc(&row.server),
                esc(&conformance(row))
            );
            if let Some(why) = &row.failure {
                let first = why.lines().next().unwrap_or("");
                let _ = write!(
                    b,
                    "<td class=\"wrap text\" colspan=\"{}\"><span class=\"bad\">failed</span>: {}</td></tr>",
                    t.attacks.len() + 1,
                    esc(first)
                );
                continue;
            }
            let _ = write!(
                b,
                "<td>{}<br><small>{:.2} ms</small>{}</td>",
                row.baseline_success.map_or("-".into(), success),
                row.baseline_p99_ns.unwrap_or(0.0) / 1e6,
                row.lowered_rate_per_s.map_or(String::new(), |r| format!(
                    "<br><small class=\"bad\">at {} req/s</small>",
                    crate::format::thousands(r.round() as u64)
                ))
            );
            for (c, attack) in row.cells.iter().zip(&t.attacks) {
                match c {
                    Some(c) => cell_html(b, c, &row.server, attack),
                    None => b.push_str("<td>-</td>"),
                }
            }
            b.push_str("</tr>");
        }
        b.push_str("</tbody></table>");
        chart(b, t, colors, out);
        if !t.worst.is_empty() {
            b.push_str("<h4>The worst cases</h4><ul>");
            for w in &t.worst {
                let _ = write!(b, "<li>{}</li>", esc(w));
            }
            b.push_str("</ul>");
        }
    }
    b.push_str("</section>");
}

/// The rows ranked again by their worst p99 ratio alone, the whisker from
/// their best attack to their worst: how far each server's latency moved.
fn chart(b: &mut String, t: &HostileTable, colors: &[Swatch], out: &mut RankedCharts) {
    let bars = t
        .rows
        .iter()
        .filter_map(|row| {
            let worst = row.worst_p99_ratio?;
            let best = row.best_p99_ratio.unwrap_or(worst);
            let client_bound = row.cells.iter().flatten().any(|c| c.client_bound);
            let flags = if client_bound { "C" } else { "" };
            Some(kind_bar(
                colors,
                &row.server,
                worst,
                Some((best, worst)),
                flags,
            ))
        })
        .collect();
    let connections = t.connections.unwrap_or(0);
    if let Some(chart) = rank(colors, Measure::HostileP99, &t.scenario, connections, bars) {
        b.push_str("<div class=\"charts\">");
        let caption = format!(
            "{}: the good load's worst p99 beside an attack, × its baseline (the dashed line: no change)",
            t.scenario
        );
        out.figure(b, chart, &caption);
        b.push_str("</div>");
    }
}

fn cell_html(b: &mut String, c: &AttackCell, server: &str, attack: &str) {
    let class = if c.crashed || c.stopped_accepting || c.success_rate < 0.95 {
        "bad"
    } else if c.success_rate >= 0.99 && c.p99_ratio.is_some_and(|r| r < 2.0) {
        "good"
    } else {
        ""
    };
    let title = c.sentence(server, attack);
    let _ = write!(
        b,
        "<td title=\"{}\"><span class=\"num {class}\">{}{}</span><br><small>p99 {}</small><br><small>{}</small></td>",
        esc(&title),
        success(c.success_rate),
        marks(c),
        ratio(c.p99_ratio),
        recovery(c)
    );
}

/// The section as Markdown tables (also the terminal's).
pub(crate) fn write_markdown(out: &mut impl Write, tables: &[HostileTable]) -> io::Result<()> {
    if tables.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Hostile clients\n\n{LEGEND} {RANK_RULE}\n")?;
    for t in tables {
        writeln!(out, "### {}\n", heading(t))?;
        let mut head = "| # | server | conformance | baseline |".to_string();
        let mut rule = "|---:|---|---:|---:|".to_string();
        for a in &t.attacks {
            head.push_str(&format!(" {a} |"));
            rule.push_str("---:|");
        }
        writeln!(out, "{head}\n{rule}")?;
        for row in &t.rows {
            let mut line = format!(
                "| {} | {} | {} |",
                row.rank,
                md(&row.server),
                conformance(row)
            );
            match &row.failure {
                Some(why) => {
                    line.push_str(&format!(
                        " failed: {} |",
                        md(why.lines().next().unwrap_or(""))
                    ));
                    for _ in &t.attacks {
                        line.push_str(" |");
                    }
                }
                None => {
                    line.push_str(&format!(
                        " {} p99 {:.2} ms{} |",
                        row.baseline_success.map_or("-".into(), success),
                        row.baseline_p99_ns.unwrap_or(0.0) / 1e6,
                        row.lowered_rate_per_s.map_or(String::new(), |r| format!(
                            " at {} req/s",
                            crate::format::thousands(r.round() as u64)
                        ))
                    ));
                    for c in &row.cells {
                        match c {
                            Some(c) => line.push_str(&format!(
                                " {}{} p99 {} {} |",
                                success(c.success_rate),
                                marks(c),
                                ratio(c.p99_ratio),
                                recovery(c)
                            )),
                            None => line.push_str(" - |"),
                        }
                    }
                }
            }
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
        if !t.worst.is_empty() {
            writeln!(out, "The worst cases:\n")?;
            for w in &t.worst {
                writeln!(out, "- {}", md(w))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// A table cell's text: a `|` would end the cell.
fn md(s: &str) -> String {
    crate::format::terminal_safe(s).replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_records::facts::Facts;
    use netbench_records::fixtures::{self, hostile, hostile_attack};

    fn report() -> Report {
        let mut run = fixtures::run(1, "hostile");
        let mut sc = fixtures::scenario(0, "abuse", &[8]);
        sc.kind = "hostile".into();
        run.scenarios.push(sc);
        let mut down = hostile_attack("slowloris", 0.4, 30.0);
        down.stopped_accepting = true;
        down.recovery_s = None;
        let cells: [(&str, Facts); 2] = [
            ("a", hostile(vec![hostile_attack("slowloris", 1.0, 1.2)])),
            ("b", hostile(vec![down])),
        ];
        for (server, f) in cells {
            let mut s = fixtures::server(server, "");
            if server == "a" {
                s.verify_json =
                    Some(r#"{"conformance": {"passed": 20, "total": 27, "cases": []}}"#.into());
            }
            run.servers.push(s);
            let mut m = fixtures::ok(fixtures::key(server, "abuse", 8, 1), 1000.0);
            m.facts = Some(f);
            run.measurements.push(m);
        }
        crate::model::build_report(&run)
    }

    #[test]
    fn html_and_markdown_carry_the_same_rows_marks_and_worst_cases() {
        let r = report();
        let colors = crate::palette::swatches(&r);
        let mut html = String::new();
        let mut charts = RankedCharts::default();
        hostile_html(&mut html, &r, &colors, &mut charts);
        // One chart: the worst p99 ratio, lowest first, the 1× line drawn.
        assert_eq!(charts.charts.len(), 1);
        let order: Vec<&str> = charts.charts[0]
            .bars
            .iter()
            .map(|b| b.server.as_str())
            .collect();
        assert_eq!(order, ["a", "b"]);
        assert_eq!(charts.charts[0].reference, Some(1.0));
        assert!(html.contains("<section id=\"hostile\"><h2>Hostile clients</h2>"));
        assert!(html.contains("<th>slowloris</th>"), "{html}");
        assert!(
            html.contains(">100.0%</span><br><small>p99 1.2×</small>"),
            "{html}"
        );
        assert!(
            html.contains(">40.0% ⊘</span><br><small>p99 30×</small><br><small>no rec.</small>"),
            "{html}"
        );
        assert!(html.contains("<td>20/27</td>") && html.contains("<td>not probed</td>"));
        assert!(
            html.contains("<li>b under slowloris: the good load&#39;s success rate was 40.0%")
                || html.contains("<li>b under slowloris: the good load's success rate was 40.0%"),
            "{html}"
        );
        let mut md = Vec::new();
        write_markdown(&mut md, &r.hostile).unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains("| 1 | a | 20/27 | 100.0% p99 1.00 ms | 100.0% p99 1.2× rec. 0.0 s |"),
            "{md}"
        );
        assert!(
            md.contains("| 2 | b | not probed | 100.0% p99 1.00 ms | 40.0% ⊘ p99 30× no rec. |"),
            "{md}"
        );
        assert!(md.contains("- b under slowloris"), "{md}");
    }

    #[test]
    fn nothing_without_hostile_cells() {
        let r = crate::model::build_report(&fixtures::run(1, "quick"));
        let mut html = String::new();
        hostile_html(&mut html, &r, &[], &mut RankedCharts::default());
        assert!(html.is_empty());
        let mut md = Vec::new();
        write_markdown(&mut md, &r.hostile).unwrap();
        assert!(md.is_empty());
    }
}
