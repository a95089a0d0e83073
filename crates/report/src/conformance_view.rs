//! The Conformance section (issue 33) as HTML, Markdown and terminal text:
//! a row per server with its score and the cases it failed. A view of
//! `Report::conformance`; the rows and their order come from conformance.rs.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::conformance::{ConformanceRow, LEGEND};
use crate::format::first_line_safe;
use crate::html_parts::{esc, swatch_html, swatch_of};
use crate::model::Report;
use crate::palette::Swatch;

/// Writes the section; nothing for a run whose servers were not probed.
pub(crate) fn conformance_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    if r.conformance.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<section id=\"conformance\"><h2>Conformance</h2><p class=\"legend\">{} Hover a failed \
         case for its RFC section and what came back.</p><table class=\"grid conformance\">\
         <thead><tr><th>server</th><th>passed</th><th>failed cases</th></tr></thead><tbody>",
        esc(&LEGEND.replace('`', ""))
    );
    for row in &r.conformance {
        let swatch = swatch_of(colors, &row.server)
            .map(|s| swatch_html(&s.color))
            .unwrap_or_default();
        let failed = if row.failed.is_empty() {
            "none".to_string()
        } else {
            row.failed
                .iter()
                .map(|f| {
                    format!(
                        "<code title=\"{}\">{}</code>",
                        esc(&format!("{} · {} · {}", f.rfc, f.title, f.reason)),
                        esc(&f.id)
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = write!(
            b,
            "<tr><td>{swatch}{}</td><td class=\"num\">{}/{} \
             <span class=\"bar\" style=\"display:inline-block;width:{:.0}px;height:0.6em;\
             background:currentColor;opacity:0.35\"></span></td><td class=\"text\">{failed}</td></tr>",
            esc(&row.server),
            row.passed,
            row.total,
            row.share() * 60.0,
        );
    }
    b.push_str("</tbody></table></section>");
}

fn cell(s: &str) -> String {
    first_line_safe(s).replace('|', "\\|")
}

/// The section as a Markdown table (also the terminal's, as the other
/// sections' are).
pub(crate) fn write_markdown(out: &mut impl Write, rows: &[ConformanceRow]) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "#### Conformance\n\n{LEGEND}\n")?;
    writeln!(out, "| server | passed | failed cases |")?;
    writeln!(out, "|---|---:|---|")?;
    for row in rows {
        writeln!(
            out,
            "| {} | {}/{} | {} |",
            cell(&row.server),
            row.passed,
            row.total,
            cell(&row.failed_ids())
        )?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::FailedCase;

    fn rows() -> Vec<ConformanceRow> {
        vec![ConformanceRow {
            server: "a|b".into(),
            passed: 30,
            total: 31,
            failed: vec![FailedCase {
                id: "cl-te".into(),
                rfc: "RFC 9112 §6.3".into(),
                title: "<t>".into(),
                reason: "200, connection kept".into(),
            }],
        }]
    }

    #[test]
    fn markdown_lists_score_and_failed_ids() {
        let mut out = Vec::new();
        write_markdown(&mut out, &rows()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("| a\\|b | 30/31 | cl-te |"), "{text}");
        let mut empty = Vec::new();
        write_markdown(&mut empty, &[]).unwrap();
        assert!(empty.is_empty());
    }
}
