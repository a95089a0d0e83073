//! The report as one self-contained HTML file: tables written here, charts
//! drawn in the browser by Chart.js (inlined, as are the styles and the data),
//! so the file works offline and can be mailed or archived as it is.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::flag::{measured_legend, titles_json, warnings_legend, Flag};
use crate::format::{bytes, format_duration_ns, thousands};
use crate::model::{tier_str, Cell, Report, ServerInfo};
use crate::palette::{model_color, model_hue, model_meaning, model_name, swatches, Swatch};
use crate::ranking::Standing;
use crate::stats::relative_half_width;
use crate::suite_table::{
    settled_shares, tier_mark, RunTable, CELL_LEGEND, STANDING_LEGEND, TIER_LEGEND,
};
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
fn flags_noted(flags: &str, noise: Option<&str>) -> String {
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
    let mut b = String::new();
    let title = format!("netbench · run {} · {}", r.run.id, r.run.suite);
    let colors = swatches(r);
    header(&mut b, r, &title);
    summary(&mut b, r, &colors);
    throughput(&mut b, r, &colors);
    latency(&mut b, r, &colors);
    resources(&mut b, r, &colors);
    crate::startup_view::startup_html(&mut b, r, &colors);
    if let Some(p) = crate::markdown::placements(r) {
        crate::network::write_html(&mut b, &p);
    }
    let allocators = crate::axes::allocator_study(r);
    crate::axes::allocators_html(&mut b, &allocators);
    crate::axes::models_html(&mut b, r, &colors);
    crate::kind_html::kinds_html(&mut b, r, &colors);
    servers(&mut b, r, &colors);
    environment(&mut b, r);
    failures(&mut b, r);
    footer(&mut b, &format!("run {} of {}", r.run.id, r.run.suite));
    // Each server's colour, for the charts: the page's one source of them.
    let map: serde_json::Map<String, serde_json::Value> = colors
        .iter()
        .map(|s| (s.label.clone(), s.color.clone().into()))
        .collect();
    let _ = write!(
        b,
        "<script id=\"report-colors\" type=\"application/json\">{}</script>\
         <script id=\"report-normalised\" type=\"application/json\">{}</script>\
         <script id=\"report-allocators\" type=\"application/json\">{}</script>",
        script_json(&map),
        script_json(&normalised_reps(r)),
        script_json(&allocators)
    );
    page(out, &title, &b, &script_json(r))
}

fn header(b: &mut String, r: &Report, title: &str) {
    let _ = write!(
        b,
        "<header><h1>{}</h1><p class=\"meta\">{} · started {}{} · <code>{}</code></p>",
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

/// What a standing mark means, for its hover title.
const LEADER_TITLE: &str =
    "leads its row: ahead of every other server beyond noise (Welch's 95% interval)";
const TIED_TITLE: &str =
    "tied for the lead: cannot be told apart from the top at these repetitions";
/// What a tier mark means, for its hover title.
const TIER_TITLE: &str = "tier of its row (T1 the fastest): servers in one tier are not told \
    apart at these repetitions (Scott–Knott on log requests/s)";
/// What "normalised" means, for the second line's hover title.
const NORMALISED_TITLE: &str = "requests/s normalised by the machine-speed control: each \
    repetition × its server-CPU probe ÷ the run's median probe";

/// "±2%": half the 95% interval of the mean, relative to the median.
fn spread_pct(s: &crate::stats::Summary) -> Option<String> {
    relative_half_width(s).map(|w| format!("±{:.0}%", w * 100.0))
}

fn cell_html(c: Option<&Cell>) -> String {
    let Some(c) = c else {
        return "<td class=\"none\">-</td>".to_string();
    };
    let at = format!(
        " data-test=\"{}\" data-connections=\"{}\" data-column=\"{}\"",
        esc(&c.test),
        c.connections,
        esc(&c.server)
    );
    let Some(rps) = c.stats.rps else {
        return format!(
            "<td class=\"failed\"{at} title=\"{}\">failed {}/{} {}</td>",
            esc(c.stats.failure.as_deref().unwrap_or("")),
            c.stats.failed,
            c.stats.repetitions,
            flags_html(&c.flags)
        );
    };
    let spread = match rps.ci95 {
        Some((lo, hi)) if rps.median > 0.0 => format!(
            "<span class=\"ci\" title=\"95% CI of the mean: {} to {}\">±{:.0}%</span>",
            thousands(lo.max(0.0).round() as u64),
            thousands(hi.round() as u64),
            (hi - lo) / 2.0 / rps.median * 100.0
        ),
        _ => String::new(),
    };
    let p99 = c.stats.p99_ns.map_or(String::new(), |p| {
        format!("<span class=\"p99\">p99 {}</span>", format_duration_ns(p))
    });
    let normalised = c.stats.rps_normalised.map_or(String::new(), |n| {
        format!(
            "<br><span class=\"norm\" title=\"{}\">normalised {}{}</span>",
            esc(NORMALISED_TITLE),
            thousands(n.median.round() as u64),
            spread_pct(&n).map_or(String::new(), |p| format!(" {p}"))
        )
    });
    let (class, standing, mark) = match c.stats.standing {
        Standing::Leader => (
            " class=\"best leader\"",
            "leader",
            format!(
                "<abbr class=\"standing\" title=\"{}\">▲</abbr>",
                esc(LEADER_TITLE)
            ),
        ),
        Standing::Tied => (
            " class=\"tied\"",
            "tied",
            format!(
                "<abbr class=\"standing\" title=\"{}\">=</abbr>",
                esc(TIED_TITLE)
            ),
        ),
        Standing::Behind => ("", "behind", String::new()),
    };
    let noise = c.stats.noise.and_then(|n| n.describe());
    let tier = tier_mark(c.stats.tier).map_or(String::new(), |t| {
        format!(
            " <abbr class=\"tier\" data-tier=\"{t}\" title=\"{}\">{t}</abbr>",
            esc(TIER_TITLE)
        )
    });
    format!(
        "<td{class}{at} data-standing=\"{standing}\">{mark}<span class=\"num\">{}</span>{tier} {spread} {}<br>{p99}{normalised}</td>",
        thousands(rps.median.round() as u64),
        flags_noted(&c.flags, noise.as_deref()),
    )
}

/// The report's cells as the terminal table has them, for the figures the
/// table module computes over a whole run.
fn run_table_of(r: &Report) -> RunTable {
    RunTable {
        rows: r
            .tests
            .iter()
            .flat_map(|t| t.connections.iter().map(|&c| (t.name.clone(), c)))
            .collect(),
        columns: r.columns.clone(),
        cells: r
            .cells
            .iter()
            .map(|c| {
                (
                    (c.test.clone(), c.connections, c.server.clone()),
                    c.stats.clone(),
                )
            })
            .collect(),
    }
}

/// The run's median probe, the reference of the normalised figures: read
/// back from a repetition that has its probe, as its requests/s × its probe
/// ÷ its normalised figure (the reference counts failed repetitions' probes
/// too, which the report does not list).
fn control_reference(r: &Report) -> Option<f64> {
    r.cells
        .iter()
        .filter(|c| !c.stats.rps_normalised_values.is_empty())
        .find_map(|c| {
            let reps: Vec<_> = r
                .repetitions
                .iter()
                .filter(|x| x.test == c.test && x.connections == c.connections)
                .filter(|x| x.server == c.server)
                .filter_map(|x| x.result.as_ref())
                .collect();
            if reps.len() != c.stats.rps_normalised_values.len() {
                return None;
            }
            reps.iter()
                .zip(&c.stats.rps_normalised_values)
                .find_map(|(f, &n)| Some(f.rps * f.probe_server_ns? / n).filter(|_| n > 0.0))
        })
}

/// The machine-speed control's paragraph, when the run has it: what the
/// normalised figures are, how many cells settle raw and normalised, and
/// what was going on around the noisy ones.
fn control_html(b: &mut String, r: &Report) {
    if !r.cells.iter().any(|c| c.stats.rps_normalised.is_some()) {
        return;
    }
    b.push_str(
        "<div class=\"control\" data-control><h3>Machine-speed control</h3><p>Before and after \
         each repetition netbench times a fixed piece of CPU work (the probe) on the server's \
         CPUs. A cell's normalised requests/s multiplies each repetition by its probe time and \
         divides by the run's median probe time: the figures a machine running at its typical \
         speed throughout would have given, so a slower or busier stretch of the run does not \
         pass for a slower server.",
    );
    if let Some(reference) = control_reference(r) {
        let _ = write!(
            b,
            " <span data-median-probe>The run's median probe took {:.0} µs.</span>",
            reference / 1e3
        );
    }
    if let Some((n, raw, norm)) = settled_shares(&run_table_of(r)) {
        let _ = write!(
            b,
            " <span data-settled=\"{n} {raw} {norm}\">{raw} of {n} cells within ±5% raw, \
             {norm} of {n} normalised</span> (half the 95% interval of the mean, relative to the \
             median).",
        );
    }
    b.push_str("</p>");
    let noisy: Vec<String> = r
        .cells
        .iter()
        .filter(|c| c.stats.noisy())
        .filter_map(|c| {
            let why = c.stats.noise?.describe()?;
            Some(format!(
                "<li>{} {} c={}: {}</li>",
                esc(&c.server),
                esc(&c.test),
                c.connections,
                esc(&why)
            ))
        })
        .collect();
    if !noisy.is_empty() {
        let _ = write!(
            b,
            "<p>Noisy cells and what was going on:</p><ul>{}</ul>",
            noisy.concat()
        );
    }
    b.push_str("</div>");
}

/// The colour and model of the server labelled `label`.
fn swatch_of<'a>(colors: &'a [Swatch], label: &str) -> Option<&'a Swatch> {
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

fn summary(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str(
        "<section id=\"summary\"><h2>Summary</h2><table class=\"grid\"><thead><tr>\
         <th rowspan=\"2\">test</th><th rowspan=\"2\">connections</th>",
    );
    // The columns are ordered by model: one header over each model's run.
    let mut groups: Vec<(Option<netbench_suite::Model>, usize)> = Vec::new();
    for s in &r.columns {
        let model = swatch_of(colors, s).and_then(|s| s.model);
        match groups.last_mut() {
            Some((m, n)) if *m == model => *n += 1,
            _ => groups.push((model, 1)),
        }
    }
    for (model, n) in groups {
        let _ = write!(
            b,
            "<th colspan=\"{n}\" class=\"model\" style=\"border-top:3px solid {}\" title=\"{}\">{}</th>",
            esc(&model_color(model)),
            esc(model_meaning(model)),
            model_name(model)
        );
    }
    b.push_str("</tr><tr>");
    for s in &r.columns {
        let color = swatch_of(colors, s).map_or(model_color(None), |s| s.color.clone());
        let _ = write!(b, "<th>{}{}</th>", swatch_html(&color), esc(s));
    }
    b.push_str("</tr></thead><tbody>");
    for t in &r.tests {
        for &c in &t.connections {
            let cells: Vec<Option<&Cell>> =
                r.columns.iter().map(|s| r.cell(&t.name, c, s)).collect();
            let _ = write!(
                b,
                "<tr><th>{}</th><td>{}</td>",
                esc(&t.name),
                thousands(u64::from(c))
            );
            for cell in cells {
                b.push_str(&cell_html(cell));
            }
            b.push_str("</tr>");
        }
    }
    let normalised = if r.cells.iter().any(|c| c.stats.rps_normalised.is_some()) {
        " The second line, normalised, is the same figure normalised by the machine-speed \
         control (below): each repetition × its server-CPU probe ÷ the run's median probe."
    } else {
        ""
    };
    let flags: Vec<&str> = r.cells.iter().map(|c| c.flags.as_str()).collect();
    let kinds = crate::flag::kind_legend(&flags).map_or(String::new(), |l| format!(" {l}"));
    let _ = write!(
        b,
        "</tbody></table><p class=\"legend\">{} {} {} Only a leader is bold.{normalised} {} {}{}</p>",
        esc(CELL_LEGEND),
        esc(TIER_LEGEND),
        esc(STANDING_LEGEND),
        esc(&measured_legend()),
        esc(&warnings_legend()),
        esc(&kinds)
    );
    for note in &r.run.notes {
        let _ = write!(b, "<p class=\"legend\">{}</p>", esc(note));
    }
    control_html(b, r);
    b.push_str("</section>");
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

/// Whether any cell of `test` (at `connections`, if given) has what a chart
/// would draw: a chart without data is left out, and says so.
fn any(r: &Report, test: &str, connections: Option<u32>, has: impl Fn(&Cell) -> bool) -> bool {
    r.cells
        .iter()
        .filter(|c| c.test == test && connections.is_none_or(|n| n == c.connections))
        .any(has)
}

/// Whether a cell has what one chart draws.
type HasData = fn(&Cell) -> bool;

pub(crate) fn no_data(b: &mut String, caption: &str) {
    let _ = write!(
        b,
        "<figure><figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

fn throughput(b: &mut String, r: &Report, colors: &[Swatch]) {
    let normalised = r.cells.iter().any(|c| c.stats.rps_normalised.is_some());
    let _ = write!(
        b,
        "<section id=\"throughput\"><h2>Throughput</h2><p class=\"legend\">Median requests/s per \
         server and connection count; the whisker is the 95% confidence interval of the mean over \
         the repetitions, and each dot one repetition, so the spread is seen as well as read. \
         Flag marks above a bar qualify it (hover for details). Servers with the same threading \
         model share a hue.{}</p>",
        if normalised {
            " Beside each test's chart, the same figures normalised by the machine-speed control \
             (each repetition × its server-CPU probe ÷ the run's median probe; see the summary)."
        } else {
            ""
        }
    );
    model_key(b, r, colors);
    b.push_str("<div class=\"charts\">");
    for t in &r.tests {
        if any(r, &t.name, None, |c| c.stats.rps.is_some()) {
            canvas(
                b,
                "throughput",
                &t.name,
                None,
                &format!("{}: requests/s", t.name),
            );
        } else {
            no_data(b, &format!("{}: no server produced a result", t.name));
        }
        if normalised {
            if any(r, &t.name, None, |c| {
                c.stats.rps.is_some() && c.stats.rps_normalised.is_some()
            }) {
                canvas(
                    b,
                    "normalised",
                    &t.name,
                    None,
                    &format!(
                        "{}: requests/s normalised by the machine-speed control",
                        t.name
                    ),
                );
            } else {
                no_data(b, &format!("{}: no normalised figures", t.name));
            }
        }
    }
    b.push_str("</div></section>");
}

/// Each cell's normalised repetitions, for the dots of the normalised
/// charts (the report's JSON carries only their summary).
#[derive(Serialize)]
struct NormalisedReps<'a> {
    test: &'a str,
    connections: u32,
    server: &'a str,
    values: &'a [f64],
}

fn normalised_reps(r: &Report) -> Vec<NormalisedReps<'_>> {
    r.cells
        .iter()
        .filter(|c| c.stats.rps_normalised.is_some())
        .map(|c| NormalisedReps {
            test: &c.test,
            connections: c.connections,
            server: &c.server,
            values: &c.stats.rps_normalised_values,
        })
        .collect()
}

fn latency(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str(
        "<section id=\"latency\"><h2>Latency spectrum</h2><p class=\"legend\">Latency at each \
         percentile from p50 to p99.99, from every answer of every repetition (the stored \
         HdrHistograms added together). The x axis spaces the nines evenly; the y axis is \
         logarithmic. A line stops where the answers run out: p99.99 needs 10,000 answers.</p>",
    );
    model_key(b, r, colors);
    b.push_str("<div class=\"charts\">");
    for t in &r.tests {
        for &c in &t.connections {
            let caption = format!("{} at {} connections", t.name, thousands(u64::from(c)));
            if any(r, &t.name, Some(c), |c| c.latency.is_some()) {
                canvas(b, "latency", &t.name, Some(c), &caption);
            } else {
                no_data(b, &format!("{caption}: no answers"));
            }
        }
    }
    b.push_str("</div></section>");
}

fn resources(b: &mut String, r: &Report, colors: &[Swatch]) {
    b.push_str(
        "<section id=\"resources\"><h2>Server CPU and memory</h2><p class=\"legend\">From /proc \
         samples of the server's whole process tree, 10 a second, during the measured part of \
         each repetition (medians over the repetitions). Requests per CPU-second is requests/s \
         over the cores the server kept busy: how much work each unit of CPU buys. RSS per \
         connection is the growth of peak RSS from the smallest connection count of the test, per \
         added connection.</p>",
    );
    model_key(b, r, colors);
    b.push_str("<div class=\"charts\">");
    for t in &r.tests {
        let charts: [(&str, &str, HasData); 3] = [
            ("cpu", "server CPU (cores)", |c| {
                c.server_cpu_cores.is_some()
            }),
            ("efficiency", "requests per server CPU-second", |c| {
                c.requests_per_cpu_s.is_some()
            }),
            ("memory", "server peak RSS (MiB)", |c| {
                c.peak_rss_bytes.is_some()
            }),
        ];
        for (kind, what, has) in charts {
            let caption = format!("{}: {what}", t.name);
            if any(r, &t.name, None, has) {
                canvas(b, kind, &t.name, None, &caption);
            } else {
                no_data(b, &format!("{caption}: no samples"));
            }
        }
    }
    b.push_str(
        "</div><table class=\"grid\"><thead><tr><th>server</th><th>test</th><th>connections</th>\
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
    b.push_str("</tbody></table></section>");
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
        "<section id=\"servers\"><h2>Servers</h2><table class=\"grid servers\"><thead><tr><th>server</th>\
         <th>language</th><th>framework</th><th>model</th><th>tier</th><th>allocator</th><th>build</th><th>artefact</th>\
         <th>ready after</th><th>peak memory</th><th>verify</th></tr></thead><tbody>",
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
             <td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text nowrap\" title=\"{}\">{}{}</td>\
             <td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"wrap text\">{}</td></tr>",
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

    fn cell(values: &[f64], standing: Standing) -> Cell {
        let stats = crate::suite_table::CellStats {
            rps: crate::stats::summarize(values),
            standing,
            rps_values: values.to_vec(),
            repetitions: values.len(),
            ..Default::default()
        };
        Cell {
            test: "blank".into(),
            connections: 8,
            server: "a".into(),
            flags: stats.flags(),
            stats,
            latency: None,
            server_cpu_cores: None,
            requests_per_cpu_s: None,
            peak_rss_bytes: None,
            rss_per_connection: None,
            peak_threads: None,
        }
    }

    #[test]
    fn only_a_leader_is_bold_and_a_tie_is_marked() {
        let leader = cell_html(Some(&cell(&[999.0, 1001.0], Standing::Leader)));
        assert!(leader.starts_with("<td class=\"best leader\""), "{leader}");
        assert!(leader.contains("data-standing=\"leader\""), "{leader}");
        assert!(
            leader.contains(">▲</abbr><span class=\"num\">1,000</span>"),
            "{leader}"
        );

        let tied = cell_html(Some(&cell(&[999.0, 1001.0], Standing::Tied)));
        assert!(tied.starts_with("<td class=\"tied\""), "{tied}");
        assert!(!tied.contains("best"), "{tied}");
        assert!(
            tied.contains(&format!(
                "<abbr class=\"standing\" title=\"{TIED_TITLE}\">=</abbr><span class=\"num\">"
            )),
            "{tied}"
        );
        assert!(TIED_TITLE.contains("cannot be told apart from the top at these repetitions"));

        let behind = cell_html(Some(&cell(&[500.0, 501.0], Standing::Behind)));
        assert!(behind.starts_with("<td data-test="), "{behind}");
        assert!(behind.contains("data-standing=\"behind\""), "{behind}");
        assert!(!behind.contains("abbr class=\"standing\""), "{behind}");
        assert!(!behind.contains("normalised"), "{behind}");
    }

    #[test]
    fn a_cell_shows_its_normalised_figure_and_why_it_was_noisy() {
        let mut c = cell(&[500.0, 1500.0, 1000.0], Standing::Tied);
        c.stats.rps_normalised = crate::stats::summarize(&[1000.0, 1010.0, 990.0]);
        c.stats.noise = Some(crate::suite_table::CellNoise {
            steal: 0.05,
            other_busy_cores: 0.4,
            ..Default::default()
        });
        assert!(c.flags.contains('~'), "{}", c.flags);
        let html = cell_html(Some(&c));
        assert!(html.contains(">normalised 1,000 ±2%</span></td>"), "{html}");
        assert!(
            html.contains(&format!(
                "title=\"{}; host steal up to 5%, other processes kept 0.4 cores busy\">~</abbr>",
                esc(Flag::Noisy.title())
            )),
            "{html}"
        );
        // A cell that failed has no standing to show.
        let mut failed = cell(&[], Standing::Behind);
        failed.stats.failed = 2;
        failed.stats.repetitions = 2;
        assert!(cell_html(Some(&failed)).starts_with("<td class=\"failed\""));
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
