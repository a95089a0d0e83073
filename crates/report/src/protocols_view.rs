//! The protocols section of the HTML report (issue 32): per endpoint and
//! connection count, a table of servers × protocols whose cells say what
//! the protocol costs or gains each server against its own HTTP/1.1 (gRPC
//! also against JSON over h2c), then a ranked chart per column of the same
//! ratios with their intervals. A view of `Report::protocols`: the rows,
//! their words and their layout come from protocols.rs.

use std::fmt::Write as _;

use netbench_records::Protocol;

use crate::format::thousands;
use crate::html_parts::{esc, flags_html, swatch_html, swatch_of};
use crate::model::Report;
use crate::palette::{model_color, Swatch};
use crate::protocols::{tables, ProtocolRow, ProtocolTable, LEGEND};
use crate::ranked_view::{kind_bar, rank, Measure, RankedCharts};

/// Writes the section; nothing for a run without protocol rows.
pub(crate) fn protocols_html(
    b: &mut String,
    r: &Report,
    colors: &[Swatch],
    out: &mut RankedCharts,
) {
    if r.protocols.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<section id=\"protocols\"><h2>Protocols</h2><p class=\"legend\">{} Hover a cell for \
         the sentence and both medians. The charts below each table rank the same ratios, the \
         most kept first: the bar is the protocol's median requests/s as a share of the \
         server's own baseline (the dashed line at 100% is no change), the whisker its 95% \
         interval.</p>",
        esc(LEGEND)
    );
    for t in tables(&r.protocols) {
        table(b, &t, colors);
        b.push_str("<div class=\"charts\">");
        for (i, column) in t.columns.iter().enumerate() {
            let (title, tests) = t.column_title(i);
            let caption = format!(
                "{title} ({tests}) at {} connections",
                thousands(u64::from(t.connections))
            );
            let bars = t
                .rows
                .iter()
                .filter_map(|(_, cells)| cells[i])
                .map(|row| {
                    let whisker = row.change_ci95.map(|(lo, hi)| (1.0 + lo, 1.0 + hi));
                    kind_bar(colors, &row.server, row.ratio, whisker, &row.marks())
                })
                .collect();
            let measure = if column.baseline_protocol == Protocol::H2c {
                Measure::ProtocolVsH2c
            } else {
                Measure::ProtocolVsH1
            };
            if let Some(chart) = rank(colors, measure, &column.test, t.connections, bars) {
                out.figure(b, chart, &caption);
            }
        }
        b.push_str("</div>");
    }
    b.push_str("</section>");
}

/// One endpoint and connection count: a row per server, a column per
/// comparison.
fn table(b: &mut String, t: &ProtocolTable, colors: &[Swatch]) {
    let _ = write!(
        b,
        "<h3>{} at {} connections</h3><table class=\"grid protocols\"><thead><tr><th>server</th>",
        esc(t.endpoint),
        thousands(u64::from(t.connections))
    );
    for i in 0..t.columns.len() {
        let (title, tests) = t.column_title(i);
        let _ = write!(
            b,
            "<th>{}<br><small>{}</small></th>",
            esc(&title),
            esc(&tests)
        );
    }
    b.push_str("</tr></thead><tbody>");
    for (server, cells) in &t.rows {
        let color = swatch_of(colors, server).map_or(model_color(None), |s| s.color.clone());
        let _ = write!(
            b,
            "<tr data-server=\"{}\"><th>{}{}</th>",
            esc(server),
            swatch_html(&color),
            esc(server)
        );
        for c in cells {
            match c {
                Some(row) => cell(b, row),
                None => b.push_str("<td>-</td>"),
            }
        }
        b.push_str("</tr>");
    }
    b.push_str("</tbody></table>");
}

/// "costs 18%" in red, "gains 35%" in green, "≈ −2%" plain; under it the
/// ratio and the interval; the sentence as the cell's title.
fn cell(b: &mut String, row: &ProtocolRow) {
    let class = match (row.told_apart, row.ratio < 1.0) {
        (true, true) => "bad",
        (true, false) => "good",
        (false, _) => "",
    };
    let _ = write!(
        b,
        "<td title=\"{}\"><span class=\"num {class}\">{}</span>{}<br><small class=\"ci\">{}</small></td>",
        esc(&row.sentence()),
        esc(&row.verdict()),
        flags_html(&row.marks()),
        esc(&row.detail())
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_records::{fixtures, RunDetail, ScenarioRecord};

    #[test]
    fn a_table_and_a_chart_per_comparison_and_nothing_without_protocols() {
        let sc = |pos: u32, name: &str, p: Protocol| ScenarioRecord {
            protocol: p,
            ..fixtures::scenario(pos, name, &[100])
        };
        let reps = |server: &str, test: &str, v: [f64; 2]| {
            v.into_iter()
                .enumerate()
                .map(|(i, rps)| fixtures::ok(fixtures::key(server, test, 100, i as u32 + 1), rps))
                .collect::<Vec<_>>()
        };
        let run = RunDetail {
            events: Vec::new(),
            scenarios: vec![
                sc(0, "blank-h1", Protocol::H1),
                sc(1, "blank-tls", Protocol::Tls),
            ],
            servers: vec![fixtures::server("a", ""), fixtures::server("b", "")],
            measurements: [
                reps("a", "blank-h1", [1000.0, 1000.0]),
                reps("a", "blank-tls", [820.0, 820.0]),
                reps("b", "blank-h1", [500.0, 500.0]),
                reps("b", "blank-tls", [600.0, 600.0]),
            ]
            .concat(),
            ..fixtures::run(1, "protocols")
        };
        let report = crate::model::build_report(&run);
        let colors = crate::palette::swatches(&report);
        let mut html = String::new();
        let mut charts = RankedCharts::default();
        protocols_html(&mut html, &report, &colors, &mut charts);
        assert!(html.contains("<section id=\"protocols\">"), "{html}");
        assert!(
            html.contains("<th>TLS<br><small>blank-tls ÷ blank-h1</small></th>"),
            "{html}"
        );
        assert!(html.contains(">costs 18%</span>"), "{html}");
        assert!(html.contains(">gains 20%</span>"), "{html}");
        assert!(
            html.contains("title=\"TLS costs a 18% of its HTTP/1.1 requests/s"),
            "{html}"
        );
        // One chart, most kept first, a whisker of ratios and the 100% line.
        assert_eq!(charts.charts.len(), 1);
        let chart = &charts.charts[0];
        let order: Vec<&str> = chart.bars.iter().map(|b| b.server.as_str()).collect();
        assert_eq!(order, ["b", "a"]);
        assert_eq!(chart.reference, Some(1.0));
        assert!((chart.bars[1].low.unwrap() - 0.82).abs() < 1e-9);
        assert!(
            html.contains("<canvas id=\"vs-h1-blank-tls-100\""),
            "{html}"
        );

        // Every scenario over HTTP/1.1: no section.
        let mut plain = run.clone();
        plain.scenarios[1].protocol = Protocol::H1;
        let report = crate::model::build_report(&plain);
        let mut html = String::new();
        protocols_html(&mut html, &report, &colors, &mut RankedCharts::default());
        assert!(html.is_empty());
    }
}
