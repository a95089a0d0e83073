//! The start-up section laid out: HTML (a table, a chart of throughput
//! against time since start per test, the unsettled cells) and Markdown
//! (the table, also printed under the terminal's run table). The figures
//! come from [`crate::startup`].

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::format::thousands;
use crate::html_parts::{canvas_full, esc, model_key};
use crate::model::Report;
use crate::palette::Swatch;
use crate::startup::{
    cell_text, class_text, seconds_text, span_text, ProcessMode, ServerStartUp, StartUp,
    STARTUP_LEGEND,
};

/// The cells of one server's row, after its name.
fn row_cells(s: &ServerStartUp) -> [String; 6] {
    [
        seconds_text(s.ready_s),
        span_text(s.first_1s_rps, s.curve_covers_s, 1.0),
        span_text(s.first_10s_rps, s.curve_covers_s, 10.0),
        cell_text(s),
        seconds_text(s.steady_after_s),
        class_text(s),
    ]
}

const HEAD: [&str; 7] = [
    "server",
    "first answer",
    "first 1 s",
    "first 10 s",
    "from cell",
    "steady after",
    "class",
];

/// The cells measured without a steady state, one line each.
fn unsettled_lines(s: &StartUp) -> Vec<String> {
    s.servers
        .iter()
        .flat_map(|server| {
            server.unsettled.iter().map(move |u| {
                format!(
                    "{} {} c={} repetition {}: {}{}",
                    server.server,
                    u.test,
                    thousands(u64::from(u.connections)),
                    u.repetition,
                    u.class,
                    if u.capped {
                        ", measured at the warm-up cap"
                    } else {
                        ""
                    }
                )
            })
        })
        .collect()
}

/// The start-up section of the HTML report.
pub(crate) fn startup_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    let s = &r.startup;
    let _ = write!(
        b,
        "<section id=\"startup\"><h2>Start-up and warm-up</h2><p data-process=\"{}\">Server \
         processes in this run: <b>{}</b>.</p>",
        serde_json::to_value(s.process)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        esc(s.process_text)
    );
    if s.process == ProcessMode::Fixed {
        b.push_str(
            "<p class=\"legend\">This run warmed each cell up for a fixed time and kept no \
             warm-up curves: of start-up it has the time from each server's start to its first \
             answer alone.</p><table class=\"grid\"><thead><tr><th>server</th><th>first \
             answer</th></tr></thead><tbody>",
        );
        for server in &s.servers {
            let _ = write!(
                b,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(&server.server),
                seconds_text(server.ready_s)
            );
        }
        b.push_str("</tbody></table></section>");
        return;
    }
    b.push_str("<table class=\"grid\"><thead><tr>");
    for h in HEAD {
        let _ = write!(b, "<th>{h}</th>");
    }
    b.push_str("</tr></thead><tbody>");
    for server in &s.servers {
        let _ = write!(
            b,
            "<tr data-startup=\"{}\"><th>{}</th>",
            esc(&server.server),
            esc(&server.server)
        );
        for (i, c) in row_cells(server).iter().enumerate() {
            let class = if i >= 3 { " class=\"text\"" } else { "" };
            let _ = write!(b, "<td{class}>{}</td>", esc(c));
        }
        b.push_str("</tr>");
    }
    let _ = write!(
        b,
        "</tbody></table><p class=\"legend\">{}</p>",
        esc(STARTUP_LEGEND)
    );
    let unsettled = unsettled_lines(s);
    if !unsettled.is_empty() {
        let items: Vec<String> = unsettled
            .iter()
            .map(|l| format!("<li>{}</li>", esc(l)))
            .collect();
        let _ = write!(
            b,
            "<p>Cells measured at the cap or without a steady state (their figures are what \
             the server gave then, not a settled level):</p><ul data-unsettled>{}</ul>",
            items.concat()
        );
    }
    let tests = s.chart_tests();
    if !tests.is_empty() {
        b.push_str(
            "<p class=\"legend\">Throughput against time since the server process started, \
             both on log scales: one line per server, from its first fresh cell of the test \
             (named at its end, right of the plot; past 8 servers the legend names the threading \
             models, a click on one hides or shows its servers), a point per warm-up window at \
             its middle. A line starts after the server's first \
             answer and ends where the warm-up judged it steady.</p>",
        );
        model_key(b, r, colors);
        b.push_str("<div class=\"charts\">");
        for test in tests {
            canvas_full(
                b,
                "startup",
                test,
                None,
                &format!("{test}: requests/s against seconds since start"),
            );
        }
        b.push_str("</div>");
    }
    b.push_str("</section>");
}

/// The start-up section as Markdown: the process mode, then the table (the
/// time to first answer alone for a run without warm-up records).
pub(crate) fn write_markdown(out: &mut impl Write, s: &StartUp) -> io::Result<()> {
    writeln!(out, "#### Start-up\n")?;
    writeln!(out, "Server processes: {}.\n", s.process_text)?;
    if s.servers.is_empty() {
        return Ok(());
    }
    if s.process == ProcessMode::Fixed {
        writeln!(out, "| server | first answer |\n|---|---:|")?;
        for server in &s.servers {
            writeln!(
                out,
                "| {} | {} |",
                md_cell(&server.server),
                seconds_text(server.ready_s)
            )?;
        }
        return writeln!(out);
    }
    writeln!(out, "| {} |", HEAD.join(" | "))?;
    writeln!(out, "|---|---:|---:|---:|---|---:|---|")?;
    for server in &s.servers {
        let cells: Vec<String> = row_cells(server).iter().map(|c| md_cell(c)).collect();
        writeln!(
            out,
            "| {} | {} |",
            md_cell(&server.server),
            cells.join(" | ")
        )?;
    }
    writeln!(out, "\n{STARTUP_LEGEND}\n")?;
    let unsettled = unsettled_lines(s);
    if !unsettled.is_empty() {
        writeln!(
            out,
            "Cells measured at the cap or without a steady state:\n"
        )?;
        for line in unsettled {
            writeln!(out, "- {}", md_cell(&line))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn md_cell(text: &str) -> String {
    crate::format::cell(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::startup::{StartCurve, UnsettledCell};

    fn server(name: &str) -> ServerStartUp {
        ServerStartUp {
            server: name.into(),
            fresh_cells: 2,
            ready_s: Some(2.5),
            test: Some("blank".into()),
            connections: Some(100),
            first_1s_rps: Some(812.4),
            first_10s_rps: None,
            curve_covers_s: Some(6.0),
            steady_after_s: Some(21.0),
            settled_s: Some(18.5),
            class: Some("warmed".into()),
            unsettled: vec![UnsettledCell {
                test: "work".into(),
                connections: 1,
                repetition: 2,
                class: "no-steady-state".into(),
                capped: true,
            }],
        }
    }

    #[test]
    fn the_markdown_table_gives_each_figure_or_why_not() {
        let s = StartUp {
            process: ProcessMode::Fresh,
            process_text: ProcessMode::Fresh.text(),
            servers: vec![server("java|x")],
            curves: vec![StartCurve {
                test: "blank".into(),
                server: "java|x".into(),
                connections: 100,
                repetition: 1,
            }],
        };
        let mut out = Vec::new();
        write_markdown(&mut out, &s).unwrap();
        let md = String::from_utf8(out).unwrap();
        assert!(
            md.contains("Server processes: warmed until steady, fresh process per cell."),
            "{md}"
        );
        assert!(
            md.contains(
                "| java\\|x | 2.5 s | 812/s | n/a (curve covers 6.0 s) | blank, 100 conn. | \
                 21.0 s | warmed (1 capped) |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "- java\\|x work c=1 repetition 2: no-steady-state, measured at the warm-up cap"
            ),
            "{md}"
        );
        // A run without warm-up records: the time to first answer alone.
        let fixed = StartUp {
            process: ProcessMode::Fixed,
            process_text: ProcessMode::Fixed.text(),
            servers: vec![server("a")],
            curves: Vec::new(),
        };
        let mut out = Vec::new();
        write_markdown(&mut out, &fixed).unwrap();
        let md = String::from_utf8(out).unwrap();
        assert!(md.contains("fixed warm-up, fresh process per cell"), "{md}");
        assert!(md.contains("| a | 2.5 s |"), "{md}");
        assert!(!md.contains("first 10 s"), "{md}");
    }
}
