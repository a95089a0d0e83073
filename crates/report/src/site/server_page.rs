//! A server's page (`servers/<name>.html`): what its manifest says (build,
//! model, variants, source folder), its composite scores, a timeline per
//! suite and test across runs with the environment changes marked, every
//! figure any run measured of it, and its builds run by run.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::format::{bytes, format_duration_ns, thousands};
use crate::html_parts::{esc, flags_html, swatch_html};
use crate::model::tier_str;
use crate::palette::{model_meaning, model_name};
use crate::startup::{cell_text, class_text, seconds_text, span_text};

use super::timeline::{score_text, score_timeline, throughput_timelines, Chart};
use super::{chart_html, footer, run_path, site_page, ServerEntry, Site};

pub(crate) fn write_server_page(
    out: &mut impl Write,
    site: &Site,
    server: &ServerEntry,
) -> io::Result<()> {
    let mut b = String::new();
    let mut charts: Vec<Chart> = Vec::new();
    header(&mut b, site, server);
    scores_html(&mut b, site, server);
    variants_html(&mut b, site, server);
    timelines_html(&mut b, &mut charts, site, server);
    figures_html(&mut b, site, server);
    kinds_html(&mut b, site, server);
    super::server_conformance::conformance_html(&mut b, site, server);
    builds_html(&mut b, site, server);
    footer(&mut b);
    site_page(out, &format!("netbench · {}", server.name), &b, &charts)
}

fn header(b: &mut String, site: &Site, server: &ServerEntry) {
    let info = site.latest_info(&server.name).map(|(_, i)| i);
    let _ = write!(
        b,
        "<header><p class=\"meta\"><a href=\"../index.html\">← all results</a></p>\
         <h1>{}</h1>",
        esc(&server.name)
    );
    if let Some(i) = info {
        let website = i.website.trim();
        let website = if website.starts_with("https://") || website.starts_with("http://") {
            // The host as the link's text: a documentation URL can be a line long.
            let host = website
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .unwrap_or(website);
            format!(
                " · <a href=\"{}\" rel=\"noopener noreferrer\">{}</a>",
                esc(website),
                esc(host)
            )
        } else {
            String::new()
        };
        let _ = write!(
            b,
            "<p class=\"meta\">{}</p><p class=\"meta\">{} · {}{} · {}{} (<span title=\"{}\">{}</span>) · \
             tier {}</p>",
            esc(&i.description),
            esc(&i.language_shown()),
            esc(&i.framework),
            website,
            swatch_html(&site.color(&server.name)),
            model_name(i.model),
            esc(model_meaning(i.model)),
            esc(model_meaning(i.model)),
            tier_str(i.tier),
        );
    }
    let _ = write!(
        b,
        "<p class=\"meta\">Source: <code>servers/{}/</code> in the netbench repository (its \
         <code>server.toml</code> is the manifest above). Runs that measured it: {} of {}.</p>\
         <nav><a href=\"#scores\">Scores</a><a href=\"#variants\">Variants</a>\
         <a href=\"#timelines\">Timelines</a><a href=\"#figures\">Every figure</a>\
         <a href=\"#kinds\">Other kinds</a><a href=\"#conformance\">Conformance</a>\
         <a href=\"#builds\">Builds</a></nav></header>",
        esc(&server.name),
        server.runs.len(),
        site.runs.len()
    );
}

/// The runs of `server` grouped by suite: each suite's runs (all of them,
/// the axis of its timelines) and whether the server is in any.
fn suites_of<'a>(site: &'a Site, server: &ServerEntry) -> Vec<(&'a str, Vec<usize>)> {
    site.suites()
        .into_iter()
        .filter(|(_, runs)| runs.iter().any(|i| server.runs.contains(i)))
        .collect()
}

/// The latest composite score of each of its labels in each suite.
fn scores_html(b: &mut String, site: &Site, server: &ServerEntry) {
    b.push_str("<section id=\"scores\"><h2>Composite score</h2><table class=\"grid\"><thead><tr>\
                <th>suite</th><th>run</th><th>server</th><th>score (95% interval)</th><th>cells</th>\
                <th>rank</th></tr></thead><tbody>");
    let mut any = false;
    for (suite, runs) in suites_of(site, server) {
        let Some(i) = site.latest(&runs) else {
            continue;
        };
        let scores = &site.scores[i];
        for label in &server.labels {
            let Some(s) = scores.of(label) else { continue };
            let rank = scores.scores.iter().position(|x| x.server == *label);
            any = true;
            let _ = write!(
                b,
                "<tr><td class=\"text\">{}</td><td><a href=\"../{}\">#{}</a></td><th>{}</th>\
                 <td class=\"num\">{}</td><td>{} of {}</td><td>{} of {}</td></tr>",
                esc(suite),
                run_path(site.runs[i].run.id),
                site.runs[i].run.id,
                esc(label),
                score_text(s.score, s.low, s.high),
                s.cells,
                scores.rows,
                rank.map_or(0, |r| r + 1),
                scores.scores.len()
            );
        }
    }
    b.push_str("</tbody></table>");
    if !any {
        b.push_str(
            "<p class=\"legend\">Not scored in the latest run of any suite (see why on the \
             front page).</p>",
        );
    }
    b.push_str(
        "<p class=\"legend\">In the latest run of each suite: the geometric mean of its ratios \
         to each cell's best median (1 leads every cell), with a 95% bootstrap interval; \
         <a href=\"../index.html#score\">how it is made</a>.</p></section>",
    );
}

/// Each label as the latest run that has it describes it.
fn variants_html(b: &mut String, site: &Site, server: &ServerEntry) {
    b.push_str(
        "<section id=\"variants\"><h2>Variants</h2><table class=\"grid servers\"><thead><tr>\
         <th>server</th><th>description</th><th>model</th><th>tier</th><th>allocator</th>\
         <th>runs</th></tr></thead><tbody>",
    );
    for label in &server.labels {
        let Some((_, i)) = site.latest_info(label) else {
            continue;
        };
        let runs = server
            .runs
            .iter()
            .filter(|&&r| site.runs[r].servers.iter().any(|s| &s.label == label))
            .count();
        let _ = write!(
            b,
            "<tr><th>{}{}</th><td class=\"text wrap\">{}</td><td class=\"text\">{}</td>\
             <td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td></tr>",
            swatch_html(&site.color(label)),
            esc(label),
            if i.description.is_empty() {
                "-".to_string()
            } else {
                esc(&i.description)
            },
            model_name(i.model),
            tier_str(i.tier),
            esc(i.allocator.as_deref().unwrap_or("runtime's")),
            runs
        );
    }
    b.push_str("</tbody></table></section>");
}

/// Per suite: the score across its runs, then requests/s per test and
/// connection count, every one with the suite's environment changes marked.
fn timelines_html(b: &mut String, charts: &mut Vec<Chart>, site: &Site, server: &ServerEntry) {
    b.push_str("<section id=\"timelines\"><h2>Timelines</h2>");
    for (suite, runs) in suites_of(site, server) {
        let _ = write!(b, "<h3>{}</h3><div class=\"charts\">", esc(suite));
        if let Some(chart) = score_timeline(site, suite, &runs, &server.labels) {
            chart_html(b, charts, "composite score per run (95% interval)", chart);
        }
        for ((test, conns), chart) in throughput_timelines(site, suite, &runs, &server.labels) {
            chart_html(
                b,
                charts,
                &format!(
                    "{test}, {} connection{}: requests/s per run",
                    thousands(u64::from(conns)),
                    if conns == 1 { "" } else { "s" }
                ),
                chart,
            );
        }
        b.push_str("</div>");
        let changes: Vec<String> = site
            .changes
            .iter()
            .filter(|c| c.suite == suite)
            .map(|c| {
                format!(
                    "<li>before run <a href=\"../{}\">#{}</a>: {}</li>",
                    run_path(c.to_run),
                    c.to_run,
                    esc(&c.describe())
                )
            })
            .collect();
        if !changes.is_empty() {
            let _ = write!(
                b,
                "<p class=\"legend\">Dashed lines mark where the environment changed:</p>\
                 <ul class=\"legend\">{}</ul>",
                changes.concat()
            );
        }
    }
    b.push_str(
        "<p class=\"legend\">One point per run of the suite, oldest left; a gap where the run did \
         not measure it. Requests/s: the median of the repetitions, its whisker the 95% \
         confidence interval of the mean (none with one repetition). Runs are spaced evenly, \
         not by date, so runs on one day stay apart.</p></section>",
    );
}

/// Every cell of every run that measured it, newest run first.
fn figures_html(b: &mut String, site: &Site, server: &ServerEntry) {
    b.push_str(
        "<section id=\"figures\"><h2>Every figure</h2><table class=\"grid\"><thead><tr>\
         <th>run</th><th>suite</th><th>test</th><th>conn.</th><th>server</th><th>requests/s</th>\
         <th>95% CI</th><th>tier</th><th>p99</th><th>server CPU</th><th>requests per CPU-s</th>\
         <th>peak memory</th><th>threads</th><th>flags</th></tr></thead><tbody>",
    );
    for &i in server.runs.iter().rev() {
        let r = &site.runs[i];
        for c in r.cells.iter().filter(|c| server.labels.contains(&c.server)) {
            let (rps, ci) = match c.stats.rps {
                Some(s) => (
                    thousands(s.median.round() as u64),
                    s.ci95.map_or("-".into(), |(lo, hi)| {
                        format!(
                            "{} to {}",
                            thousands(lo.max(0.0).round() as u64),
                            thousands(hi.round() as u64)
                        )
                    }),
                ),
                None => (
                    format!(
                        "<span class=\"bad\">failed {}/{}</span>",
                        c.stats.failed, c.stats.repetitions
                    ),
                    "-".into(),
                ),
            };
            let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
            let _ = write!(
                b,
                "<tr><td><a href=\"../{}\">#{}</a></td><td class=\"text\">{}</td><td class=\"text\">{}</td>\
                 <td>{}</td><th>{}</th><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
                run_path(r.run.id),
                r.run.id,
                esc(&r.run.suite),
                esc(&c.test),
                thousands(u64::from(c.connections)),
                esc(&c.server),
                rps,
                ci,
                c.stats.tier.map_or("-".into(), |t| format!("T{t}")),
                opt(c.stats.p99_ns, &format_duration_ns),
                opt(c.server_cpu_cores, &|x| format!("{x:.2} cores")),
                opt(c.requests_per_cpu_s, &|x| thousands(x.round() as u64)),
                opt(c.peak_rss_bytes, &|x| bytes(x as u64)),
                opt(c.peak_threads, &|x| format!("{x:.0}")),
                flags_html(&c.flags)
            );
        }
    }
    b.push_str(
        "</tbody></table><p class=\"legend\">Throughput cells as each run's report has them \
         (medians over the repetitions; hover a flag for what it means); the other kinds of \
         scenario are in the next section.</p></section>",
    );
}

/// One table of the kinds section: a kind's table as the run reports
/// write it, its rows of this server only, each after its run and date.
struct KindRows {
    title: String,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Every figure of the other kinds of scenario any run measured of it
/// (idle, storm, rate sweep, fixed rate, short-lived, start-up), newest run
/// first: a table per kind, from the same tables the run's report has, so
/// the two cannot disagree. A kind whose table changed shape between runs
/// (the short-lived columns follow the suite's K) gets a table per shape.
fn kinds_html(b: &mut String, site: &Site, server: &ServerEntry) {
    let mut tables: Vec<KindRows> = Vec::new();
    let mut add = |title: &str, headers: &[String], row: Vec<String>| match tables
        .iter_mut()
        .find(|t| t.title == title && t.headers == headers)
    {
        Some(t) => t.rows.push(row),
        None => tables.push(KindRows {
            title: title.to_string(),
            headers: headers.to_vec(),
            rows: vec![row],
        }),
    };
    for &i in server.runs.iter().rev() {
        let r = &site.runs[i];
        let run = format!("<a href=\"../{}\">#{}</a>", run_path(r.run.id), r.run.id);
        let day: String = r.run.started_at.chars().take(10).collect();
        let lead = |mut row: Vec<String>| {
            let mut line = vec![run.clone(), esc(&day)];
            line.append(&mut row);
            line
        };
        for section in crate::kinds::sections(&r.kinds) {
            for t in &section.tables {
                // The server's column: "server", or "server (blank at 100
                // conn.)" in a short-lived table.
                let Some(at) = t.headers.iter().position(|h| h.starts_with("server")) else {
                    continue;
                };
                for row in t
                    .rows
                    .iter()
                    .filter(|row| row.get(at).is_some_and(|name| server.labels.contains(name)))
                {
                    add(
                        section.title,
                        &t.headers,
                        lead(row.iter().map(|c| esc(c)).collect()),
                    );
                }
            }
        }
        let start_up = [
            "server",
            "first answer",
            "first 1 s",
            "first 10 s",
            "from cell",
            "steady after",
            "class",
        ]
        .map(String::from);
        for s in r
            .startup
            .servers
            .iter()
            .filter(|s| server.labels.contains(&s.server))
        {
            let cells = vec![
                esc(&s.server),
                esc(&seconds_text(s.ready_s)),
                esc(&span_text(s.first_1s_rps, s.curve_covers_s, 1.0)),
                esc(&span_text(s.first_10s_rps, s.curve_covers_s, 10.0)),
                esc(&cell_text(s)),
                esc(&seconds_text(s.steady_after_s)),
                esc(&class_text(s)),
            ];
            add("Start-up", &start_up, lead(cells));
        }
    }
    b.push_str("<section id=\"kinds\"><h2>Other kinds of scenario</h2>");
    if tables.is_empty() {
        b.push_str(
            "<p class=\"legend\">No run measured it in a scenario beyond throughput (idle, \
             storm, rate sweep, fixed rate, short-lived) or recorded its start-up.</p>",
        );
    }
    for t in &tables {
        let _ = write!(
            b,
            "<h3>{}</h3><table class=\"grid kind\" data-kind=\"{}\"><thead><tr><th>run</th>\
             <th>date</th>",
            esc(&t.title),
            esc(&t.title)
        );
        for h in &t.headers {
            let _ = write!(b, "<th>{}</th>", esc(h));
        }
        b.push_str("</tr></thead><tbody>");
        for row in &t.rows {
            b.push_str("<tr>");
            for c in row {
                let _ = write!(b, "<td>{c}</td>");
            }
            b.push_str("</tr>");
        }
        b.push_str("</tbody></table>");
    }
    b.push_str(
        "<p class=\"legend\">Each kind's figures as its run's report has them (medians over \
         the repetitions), newest run first; the run's report has the charts and what each \
         column means.</p></section>",
    );
}

/// How each run built and checked it.
fn builds_html(b: &mut String, site: &Site, server: &ServerEntry) {
    b.push_str(
        "<section id=\"builds\"><h2>Builds</h2><table class=\"grid\"><thead><tr><th>run</th>\
         <th>server</th><th>build</th><th>artefact</th><th>ready after</th><th>peak memory</th>\
         <th>verify</th></tr></thead><tbody>",
    );
    for &i in server.runs.iter().rev() {
        let r = &site.runs[i];
        for s in r
            .servers
            .iter()
            .filter(|s| server.labels.contains(&s.label))
        {
            let verify = match (&s.verify, &s.excluded_reason) {
                (_, Some(why)) => format!("<span class=\"bad\">left out</span>: {}", esc(why)),
                (Some(v), None) => format!("{} pass, {} warn, {} fail", v.pass, v.warn, v.fail),
                (None, None) => "-".into(),
            };
            let _ = write!(
                b,
                "<tr><td><a href=\"../{}\">#{}</a></td><th>{}</th><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td class=\"text wrap\">{}</td></tr>",
                run_path(r.run.id),
                r.run.id,
                esc(&s.label),
                match s.build_s {
                    Some(x) => format!("{} {x:.1} s", esc(&s.build_status)),
                    None => "shares its server's build".into(),
                },
                s.artefact_bytes.map_or("-".into(), bytes),
                s.ready_s.map_or("-".into(), |x| format!("{:.0} ms", x * 1e3)),
                s.peak_rss_bytes.map_or("-".into(), bytes),
                verify
            );
        }
    }
    b.push_str(
        "</tbody></table><p class=\"legend\">Build: its status and how long the build of the \
         artefact in use took (a build reused while the sources were unchanged keeps its time).\
         </p></section>",
    );
}
