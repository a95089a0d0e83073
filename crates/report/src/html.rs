//! The report as one self-contained HTML file: tables written here, charts
//! drawn in the browser by Chart.js (inlined, as are the styles and the data),
//! so the file works offline and can be mailed or archived as it is.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::flag::{titles_json, Flag};
use crate::format::{bytes, thousands};
use crate::model::{tier_str, Report, ServerInfo};
use crate::palette::{model_color, model_hue, model_meaning, model_name, swatches, Swatch};
use crate::ranked_view::RankedCharts;
use crate::suite_table::tier_mark;
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

/// Writes the run's report.
pub fn write_html(out: &mut impl Write, r: &Report) -> io::Result<()> {
    write_report(out, r, None)
}

/// The run's report as a page of the static site: the same report with a
/// link back to the site's index (`up`, relative to the page) above its
/// title, so a reader who followed a run's link is not stranded there.
pub(crate) fn write_site_run(out: &mut impl Write, r: &Report, up: &str) -> io::Result<()> {
    write_report(out, r, Some(up))
}

fn write_report(out: &mut impl Write, r: &Report, up: Option<&str>) -> io::Result<()> {
    let mut b = String::new();
    let title = format!("netbench · run {} · {}", r.run.id, r.run.suite);
    let colors = swatches(r);
    header(&mut b, r, &title, up);
    crate::summary_view::summary_html(&mut b, r, &colors);
    let mut ranked = RankedCharts::default();
    crate::ranked_view::throughput_html(&mut b, r, &colors, &mut ranked);
    crate::ranked_view::latency_html(&mut b, r, &colors, &mut ranked);
    crate::ranked_view::resources_html(&mut b, r, &colors, &mut ranked);
    crate::startup_view::startup_html(&mut b, r, &colors);
    if let Some(p) = crate::markdown::placements(r) {
        crate::network::write_html(&mut b, &p);
    }
    let allocators = crate::axes::allocator_study(r);
    crate::axes::allocators_html(&mut b, &allocators);
    crate::axes::models_html(&mut b, r, &colors);
    crate::kind_html::kinds_html(&mut b, r, &colors, &mut ranked);
    servers(&mut b, r, &colors);
    environment(&mut b, r);
    failures(&mut b, r);
    footer(&mut b, &format!("run {} of {}", r.run.id, r.run.suite));
    // Each server's colour, for the charts: the page's one source of them;
    // and each model's, for the legends that name models instead of servers.
    let map: serde_json::Map<String, serde_json::Value> = colors
        .iter()
        .map(|s| (s.label.clone(), s.color.clone().into()))
        .collect();
    let models: serde_json::Map<String, serde_json::Value> = netbench_records::Model::ALL
        .iter()
        .map(|&m| Some(m))
        .chain([None])
        .map(|m| (model_name(m).to_string(), model_color(m).into()))
        .collect();
    let _ = write!(
        b,
        "<script id=\"report-colors\" type=\"application/json\">{}</script>\
         <script id=\"report-model-colors\" type=\"application/json\">{}</script>\
         <script id=\"report-ranked\" type=\"application/json\">{}</script>\
         <script id=\"report-allocators\" type=\"application/json\">{}</script>",
        script_json(&map),
        script_json(&models),
        script_json(&ranked.charts),
        script_json(&allocators)
    );
    page(out, &title, &b, &script_json(r))
}

fn header(b: &mut String, r: &Report, title: &str, up: Option<&str>) {
    b.push_str("<header>");
    if let Some(up) = up {
        let _ = write!(
            b,
            "<p class=\"meta\"><a href=\"{}\">← all results</a></p>",
            esc(up)
        );
    }
    let _ = write!(
        b,
        "<h1>{}</h1><p class=\"meta\">{} · started {}{} · <code>{}</code></p>",
        esc(title),
        esc(&r.run.status),
        esc(&r.run.started_at),
        r.run
            .finished_at
            .as_deref()
            .map(|f| format!(", finished {}", esc(f)))
            .unwrap_or_default(),
        esc(&r.run.command),
    );
    let env = &r.run.environment;
    let _ = write!(
        b,
        "<p class=\"meta\">{} · {} CPUs online · {} · Linux {} · server on CPUs {}, client on CPUs {}</p>\
         <nav><a href=\"#summary\">Summary</a><a href=\"#throughput\">Throughput</a>\
         <a href=\"#latency\">Latency</a><a href=\"#resources\">Server CPU and memory</a>\
         <a href=\"#startup\">Start-up</a>\
         <a href=\"#servers\">Servers</a><a href=\"#environment\">Environment</a></nav></header>",
        esc(env["cpu_model"].as_str().unwrap_or("unknown CPU")),
        env["cpus_online"],
        esc(env["os"].as_str().unwrap_or("unknown OS")),
        esc(env["kernel"].as_str().unwrap_or("?")),
        esc(&r.run.placement["server"].to_string()),
        esc(&r.run.placement["client"].to_string()),
    );
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

/// Every cell's server CPU and memory figures, under the section's charts.
pub(crate) fn resources_table(b: &mut String, r: &Report) {
    b.push_str(
        "<table class=\"grid\"><thead><tr><th>server</th><th>test</th><th>connections</th>\
        <th>requests/s</th><th>server CPU</th><th>requests per CPU-s</th><th>peak RSS</th>\
        <th>RSS per connection</th></tr></thead><tbody>",
    );
    for c in &r.cells {
        let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        let _ = write!(
            b,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.server),
            esc(&c.test),
            thousands(u64::from(c.connections)),
            opt(c.stats.rps.map(|s| s.median), &|v| thousands(v.round() as u64)),
            tier_mark(c.stats.tier).map_or(String::new(), |t| format!(" {t}")),
            flags_html(&c.flags),
            opt(c.server_cpu_cores, &|v| format!("{v:.2} cores")),
            opt(c.requests_per_cpu_s, &|v| thousands(v.round() as u64)),
            opt(c.peak_rss_bytes, &|v| bytes(v as u64)),
            opt(c.rss_per_connection, &|v| if v < 0.0 {
                format!("{:.1} KiB (shrank)", v / 1024.0)
            } else {
                format!("{:.1} KiB", v / 1024.0)
            }),
        );
    }
    b.push_str("</tbody></table>");
}

/// A server's name, linked to its website when that is a web address.
fn server_name_html(s: &ServerInfo) -> String {
    let site = s.website.trim();
    if site.starts_with("https://") || site.starts_with("http://") {
        format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\">{}</a>",
            esc(site),
            esc(&s.label)
        )
    } else {
        esc(&s.label)
    }
}

fn servers(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str(
        // Eleven columns of 30 servers scrolled inside the table at 1280 px
        // (issue 29): pairs of facts share a cell, a line each, so the
        // table fits a laptop's width with every fact still there.
        "<section id=\"servers\"><h2>Servers</h2><table class=\"grid servers\"><thead><tr><th>server</th>\
         <th>language<br>framework</th><th>model<br>tier</th><th>allocator</th><th>build<br>artefact</th>\
         <th>ready after<br>peak memory</th><th>verify</th></tr></thead><tbody>",
    );
    for s in &r.servers {
        let verify = match (&s.verify, &s.excluded_reason) {
            (_, Some(why)) => format!("<span class=\"bad\">left out</span>: {}", esc(why)),
            (Some(v), None) => {
                let mut t = format!("{} pass", v.pass);
                if v.warn > 0 {
                    let mark = Flag::VerifyWarnings.letter().to_string();
                    let _ = write!(t, ", {} warn {}", v.warn, flags_html(&mark));
                }
                if v.fail > 0 {
                    let _ = write!(t, ", <span class=\"bad\">{} fail</span>", v.fail);
                }
                for n in &v.notes {
                    let _ = write!(t, "<br><small>{}</small>", esc(n));
                }
                t
            }
            (None, None) => "-".to_string(),
        };
        let color = swatch_of(colors, &s.label).map_or(model_color(None), |c| c.color.clone());
        let _ = write!(
            b,
            "<tr data-server=\"{}\" data-model=\"{}\" data-color=\"{}\"><th title=\"{}\">{}{}</th>\
             <td class=\"text\">{}<br><small>{}</small></td><td class=\"text nowrap\" title=\"{}\">{}{}<br><small>{}</small></td>\
             <td class=\"text\">{}</td><td>{}<br><small>{}</small></td><td>{}<br><small>{}</small></td><td class=\"wrap text\">{}</td></tr>",
            esc(&s.label),
            model_name(s.model),
            esc(&color),
            esc(&s.description),
            swatch_html(&color),
            server_name_html(s),
            esc(&s.language_shown()),
            esc(&s.framework),
            esc(model_meaning(s.model)),
            swatch_html(&model_color(s.model)),
            model_name(s.model),
            tier_str(s.tier),
            esc(s.allocator.as_deref().unwrap_or("runtime's")),
            match s.build_s {
                Some(x) => format!("{} {x:.1} s", esc(&s.build_status)),
                None => "shares its server's build".to_string(),
            },
            s.artefact_bytes.map_or("-".into(), bytes),
            s.ready_s.map_or("-".into(), |x| format!("{:.0} ms", x * 1e3)),
            s.peak_rss_bytes.map_or("-".into(), bytes),
            verify
        );
    }
    b.push_str(
        "</tbody></table><p class=\"legend\">Servers by threading model (hover a model for what \
         it means), then by name; a server's name links to its framework's website, hover it for \
         its description. Tier: <i>default</i> runs with the framework's defaults, <i>tuned</i> \
         with documented production tuning. Allocator: the C-level malloc a native server ran \
         with, checked in every process at start; <i>runtime's</i> for a runtime with its own \
         allocator (Go, the JVM, V8, CPython, GHC). Build: how long the build of the artefact in use \
         took (in this run, or in the earlier run whose artefact was reused because the sources \
         had not changed; the language tools' own caches may make it short). Artefact: the size of \
         the file the manifest names. Ready after: from start to the first good answer. Peak \
         memory: the largest RSS of the server's process tree in any sample of any of its \
         measurements in this run (failed measurements keep no samples).</p></section>",
    );
}

fn environment(b: &mut String, r: &Report) {
    b.push_str("<section id=\"environment\"><h2>Environment</h2><table class=\"kv\"><tbody>");
    let rows = crate::environment::rows(&r.run);
    for (k, v) in rows {
        let _ = write!(b, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    let _ = write!(
        b,
        "</tbody></table><details><summary>The suite file as this run used it</summary>\
         <pre>{}</pre></details></section>",
        esc(r.run.suite_toml.trim_end())
    );
}

fn failures(b: &mut String, r: &Report) {
    // Grouped by server and the reason's first line: a server that crashes
    // in every cell is one entry listing the cells, not one entry per cell.
    // The details after the first line (the server's last output) differ
    // from cell to cell; the group shows its first cell's.
    let mut groups: Vec<(&str, &str, &str, Vec<String>)> = Vec::new();
    for f in r.repetitions.iter().filter(|x| !x.ok) {
        let why = f.failure.as_deref().unwrap_or("");
        let headline = why.lines().next().unwrap_or("");
        let cell = format!("{} c={} rep {}", f.test, f.connections, f.repetition);
        match groups
            .iter_mut()
            .find(|(s, h, _, _)| *s == f.server && *h == headline)
        {
            Some(g) => g.3.push(cell),
            None => groups.push((&f.server, headline, why, vec![cell])),
        }
    }
    if groups.is_empty() {
        return;
    }
    // In column order, like everything else that lists servers.
    let place = |server: &str| r.columns.iter().position(|c| c == server);
    groups.sort_by_key(|g| place(g.0).unwrap_or(usize::MAX));
    b.push_str("<section id=\"failures\"><h2>Failed measurements</h2><ul>");
    for (server, _, why, cells) in groups {
        let _ = write!(
            b,
            "<li><b>{}</b>, {} measurement{} ({}): <pre>{}</pre></li>",
            esc(server),
            cells.len(),
            if cells.len() == 1 { "" } else { "s" },
            esc(&cells.join(", ")),
            esc(why)
        );
    }
    b.push_str("</ul></section>");
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
