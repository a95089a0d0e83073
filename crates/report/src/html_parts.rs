//! The HTML report's building blocks, shared by the page (html.rs), its
//! section views and the site: escaping, flag marks, colour swatches and the
//! model key, chart canvases, the page shell and its footer. A leaf: it
//! imports no view, so no view imports another through it.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::flag::{titles_json, Flag};
use crate::model::Report;
use crate::palette::{model_color, model_hue, model_meaning, model_name, Swatch};
use crate::vendor::{CHART_JS, ERROR_BARS_JS};

const REPORT_JS: &str = include_str!("../assets/report.js");
pub(crate) const REPORT_CSS: &str = include_str!("../assets/report.css");

/// HTML-escapes text for element content and quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside a `<script>` element: `<` never appears raw, so
/// no string in the data can close the element.
pub(crate) fn script_json(data: &impl Serialize) -> String {
    serde_json::to_string(data)
        .expect("report data serializes")
        .replace('<', "\\u003c")
}

pub(crate) fn flags_html(flags: &str) -> String {
    flags_noted(flags, None)
}

/// The flag marks, the noisy one's title saying what was going on when the
/// run recorded it.
pub(crate) fn flags_noted(flags: &str, noise: Option<&str>) -> String {
    flags
        .chars()
        .map(|f| {
            let flag = Flag::from_letter(f);
            let mut title = flag.map_or("", Flag::title).to_string();
            if let (Some(Flag::Noisy), Some(why)) = (flag, noise) {
                let _ = write!(title, "; {why}");
            }
            format!(
                "<abbr class=\"flag\" title=\"{}\">{}</abbr>",
                esc(&title),
                esc(&f.to_string())
            )
        })
        .collect()
}

pub(crate) fn page(out: &mut impl Write, title: &str, body: &str, data: &str) -> io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{REPORT_CSS}</style>\n</head>\n<body>\n{body}\n\
         <script id=\"report-data\" type=\"application/json\">{data}</script>\n\
         <script id=\"report-flags\" type=\"application/json\">{flags}</script>\n\
         <script>\n{CHART_JS}\n</script>\n<script>\n{ERROR_BARS_JS}\n</script>\n\
         <script>\n{REPORT_JS}</script>\n</body>\n</html>\n",
        title = esc(title),
        flags = script_json(&titles_json()),
    )
}

/// The colour and model of the server labelled `label`.
pub(crate) fn swatch_of<'a>(colors: &'a [Swatch], label: &str) -> Option<&'a Swatch> {
    colors.iter().find(|s| s.label == label)
}

/// A small square of `color`.
pub(crate) fn swatch_html(color: &str) -> String {
    format!(
        "<i class=\"swatch\" style=\"background:{}\"></i>",
        esc(color)
    )
}

/// The key to the charts' colours: each model among the columns with its
/// hue, and its servers with their shades.
pub(crate) fn model_key(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str(
        "<div class=\"model-key\" data-model-key><span class=\"key-title\">Colours by \
         threading model:</span>",
    );
    let shown: Vec<&Swatch> = colors
        .iter()
        .filter(|s| r.columns.contains(&s.label))
        .collect();
    let mut models: Vec<_> = shown.iter().map(|s| s.model).collect();
    models.dedup();
    for model in models {
        let color = model_color(model);
        let _ = write!(
            b,
            "<span class=\"key-model\" data-model=\"{}\" data-color=\"{}\"{} title=\"{}\">{}<b>{}</b>",
            model_name(model),
            esc(&color),
            model_hue(model).map_or(String::new(), |h| format!(" data-hue=\"{h}\"")),
            esc(model_meaning(model)),
            swatch_html(&color),
            model_name(model),
        );
        for s in shown.iter().filter(|s| s.model == model) {
            let _ = write!(
                b,
                " <span class=\"key-server\" data-key-server=\"{}\">{}{}</span>",
                esc(&s.label),
                swatch_html(&s.color),
                esc(&s.label)
            );
        }
        b.push_str("</span>");
    }
    b.push_str("</div>");
}

pub(crate) fn canvas(
    b: &mut String,
    kind: &str,
    test: &str,
    connections: Option<u32>,
    caption: &str,
) {
    figure(b, "", kind, test, connections, caption);
}

/// A chart across the whole row, taller: curves of many servers, whose
/// legend needs the room beside the lines.
pub(crate) fn canvas_full(
    b: &mut String,
    kind: &str,
    test: &str,
    connections: Option<u32>,
    caption: &str,
) {
    figure(b, " class=\"full\"", kind, test, connections, caption);
}

fn figure(
    b: &mut String,
    class: &str,
    kind: &str,
    test: &str,
    connections: Option<u32>,
    caption: &str,
) {
    let id = match connections {
        Some(c) => format!("{kind}-{test}-{c}"),
        None => format!("{kind}-{test}"),
    };
    let _ = write!(
        b,
        "<figure{class}><figcaption>{}</figcaption><div class=\"chart\"><canvas id=\"{}\" data-chart=\"{}\" \
         data-test=\"{}\"{}></canvas></div></figure>",
        esc(caption),
        esc(&id),
        esc(kind),
        esc(test),
        connections.map_or(String::new(), |c| format!(" data-connections=\"{c}\"")),
    );
}

pub(crate) fn no_data(b: &mut String, caption: &str) {
    let _ = write!(
        b,
        "<figure><figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

pub(crate) fn footer(b: &mut String, what: &str) {
    let _ = write!(
        b,
        "<footer>netbench {} · {} · rebuilt from the SQLite store alone · charts by Chart.js \
         (inlined; this file needs no network)</footer>",
        env!("CARGO_PKG_VERSION"),
        esc(what)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_script_closers() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
        let json = script_json(&serde_json::json!({"s": "</script><script>alert(1)"}));
        assert!(!json.contains("</script>"), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["s"], "</script><script>alert(1)");
    }

    #[test]
    fn flag_marks_carry_their_meaning() {
        assert_eq!(
            flags_html("FW"),
            "<abbr class=\"flag\" title=\"a repetition failed\">F</abbr>\
             <abbr class=\"flag\" title=\"the server passed verification with warnings\">W</abbr>"
        );
        // A character that is no flag gets an empty title, not a wrong one.
        assert_eq!(flags_html("?"), "<abbr class=\"flag\" title=\"\">?</abbr>");
    }
}
