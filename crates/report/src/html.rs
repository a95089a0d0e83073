//! The report as one self-contained HTML file: tables written here, charts
//! drawn in the browser by Chart.js (inlined, as are the styles and the data),
//! so the file works offline and can be mailed or archived as it is.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::flag::Flag;
use crate::format::bytes;
use crate::html_parts::{esc, flags_html, footer, page, script_json, swatch_html, swatch_of};
use crate::model::{tier_str, Report, ServerInfo};
use crate::palette::{model_color, model_meaning, model_name, swatches, Swatch};
use crate::ranked_view::RankedCharts;

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
    crate::view::html::section_by_id(&mut b, r, &colors, "ranking");
    crate::protocols_view::protocols_html(&mut b, r, &colors, &mut ranked);
    crate::ranked_view::latency_html(&mut b, r, &colors, &mut ranked);
    crate::ranked_view::resources_html(&mut b, r, &colors, &mut ranked);
    crate::startup_view::startup_html(&mut b, r, &colors);
    crate::view::html::section_by_id(&mut b, r, &colors, "placements");
    let allocators = crate::axes::allocator_study(r);
    crate::axes::allocators_html(&mut b, &allocators);
    crate::axes::models_html(&mut b, r, &colors);
    crate::kind_html::kinds_html(&mut b, r, &colors, &mut ranked);
    crate::hostile_view::hostile_html(&mut b, r, &colors, &mut ranked);
    crate::view::html::section_by_id(&mut b, r, &colors, "resident");
    crate::view::html::section_by_id(&mut b, r, &colors, "conformance");
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
         <nav><a href=\"#summary\">Summary</a><a href=\"#throughput\">Throughput</a>{}{}\
         <a href=\"#latency\">Latency</a><a href=\"#resources\">Server CPU and memory</a>\
         <a href=\"#startup\">Start-up</a>{}{}\
         <a href=\"#servers\">Servers</a><a href=\"#environment\">Environment</a></nav></header>",
        esc(env["cpu_model"].as_str().unwrap_or("unknown CPU")),
        env["cpus_online"],
        esc(env["os"].as_str().unwrap_or("unknown OS")),
        esc(env["kernel"].as_str().unwrap_or("?")),
        esc(&r.run.placement["server"].to_string()),
        esc(&r.run.placement["client"].to_string()),
        r.sections
            .iter()
            .filter(|s| s.id == "ranking")
            .map(|s| format!("<a href=\"#{}\">{}</a>", esc(s.id), esc(&s.title)))
            .collect::<String>(),
        if r.protocols.is_empty() {
            ""
        } else {
            "<a href=\"#protocols\">Protocols</a>"
        },
        if r.hostile.is_empty() {
            ""
        } else {
            "<a href=\"#hostile\">Hostile clients</a>"
        },
        if r.conformance.is_empty() {
            ""
        } else {
            "<a href=\"#conformance\">Conformance</a>"
        },
    );
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
