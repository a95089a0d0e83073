//! Sections as HTML: a `<section>` each with its title, legend, notes and
//! tables; figures right-aligned, servers with their swatch.

use std::fmt::Write as _;

use crate::html_parts::{esc, flags_html, swatch_html, swatch_of};
use crate::model::section::{Section, Value};
use crate::model::Report;
use crate::palette::Swatch;

/// Writes the section `id`, when the run has it (while the views still
/// place some sections themselves).
pub(crate) fn section_by_id(b: &mut String, r: &Report, colors: &[Swatch], id: &str) {
    if let Some(s) = r.sections.iter().find(|s| s.id == id) {
        section(b, s, colors);
    }
}

/// Writes one section.
pub(crate) fn section(b: &mut String, s: &Section, colors: &[Swatch]) {
    let _ = write!(
        b,
        "<section id=\"{}\"><h2>{}</h2><p class=\"legend\">{}{}</p>",
        esc(s.id),
        esc(&s.title),
        esc(&s.legend.replace('`', "")),
        s.hover.map_or(String::new(), |h| format!(" {}", esc(h)))
    );
    for note in &s.notes {
        let _ = write!(b, "<p class=\"note\">{}</p>", esc(note));
    }
    for t in &s.tables {
        if !t.caption.is_empty() {
            let _ = write!(b, "<h3>{}</h3>", esc(&t.caption));
        }
        if t.class.is_empty() {
            b.push_str("<table class=\"grid\"><thead><tr>");
        } else {
            let _ = write!(b, "<table class=\"grid {}\"><thead><tr>", esc(t.class));
        }
        for h in &t.headers {
            let _ = write!(b, "<th>{}</th>", esc(h));
        }
        b.push_str("</tr></thead><tbody>");
        for row in &t.rows {
            b.push_str("<tr>");
            for v in row {
                b.push_str(&value(v, colors));
            }
            b.push_str("</tr>");
        }
        b.push_str("</tbody></table>");
    }
    if !s.failures.is_empty() {
        b.push_str("<ul class=\"failures\">");
        for f in &s.failures {
            let _ = write!(b, "<li>{}</li>", esc(f));
        }
        b.push_str("</ul>");
    }
    b.push_str("</section>");
}

/// Pixels of a score's bar at a full score.
const SCORE_PX: f64 = 60.0;

fn value(v: &Value, colors: &[Swatch]) -> String {
    match v {
        Value::Server(name) => {
            let swatch = swatch_of(colors, name)
                .map(|s| swatch_html(&s.color))
                .unwrap_or_default();
            format!("<td>{swatch}{}</td>", esc(name))
        }
        Value::Score { passed, total } => {
            let share = if *total == 0 {
                0.0
            } else {
                f64::from(*passed) / f64::from(*total)
            };
            format!(
                "<td class=\"num\">{passed}/{total} <span class=\"bar\" style=\"display:inline-block;\
                 width:{:.0}px;height:0.6em;background:currentColor;opacity:0.35\"></span></td>",
                share * SCORE_PX
            )
        }
        Value::Codes(codes) if codes.is_empty() => "<td class=\"text\">none</td>".into(),
        Value::Codes(codes) => format!(
            "<td class=\"text\">{}</td>",
            codes
                .iter()
                .map(|c| format!("<code title=\"{}\">{}</code>", esc(&c.title), esc(&c.code)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Value::Marks(m) => format!("<td class=\"text\">{}</td>", flags_html(m)),
        Value::Text(t) => format!("<td class=\"text\">{}</td>", esc(t)),
        Value::RowHead(t) => format!("<th>{}</th>", esc(t)),
        Value::Figure(t) | Value::Name(t) => format!("<td>{}</td>", esc(t)),
        other => format!("<td>{}</td>", esc(&other.text())),
    }
}
