//! The site's front page (`index.html`): the latest result of each suite
//! with its composite scores, every run in the store, what changed between
//! runs, and every server with a link to its page.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::html_parts::{esc, swatch_html};
use crate::palette::model_name;

use super::timeline::{score_bars, score_text, Chart};
use super::{chart_html, footer, run_path, server_path, site_page, Site};

/// What the composite score is, said wherever a score is shown.
const SCORE_LEGEND: &str = "Composite score: per run, the geometric mean over the \
    run's throughput cells (test × connections) of the server's median requests/s over the best \
    median of that cell, so 1 means it led every cell it was measured in; by the figures the \
    run's table ranks each row by (normalised by the machine-speed control when the whole row \
    has it). Its 95% interval comes from a bootstrap: each cell's repetitions are drawn again \
    with replacement 2,000 times (seeded by the run's id, so the site is the same every time it \
    is written) and the score taken anew; the interval is never left out, because with a few \
    repetitions two scores a few hundredths apart are often the same. A server is scored only \
    over the cells it has (the count is given: scores over fewer cells compare less well); a \
    cell needs 2 good repetitions, and a cell with one server measured is not scored.";

pub(crate) fn write_index(out: &mut impl Write, site: &Site) -> io::Result<()> {
    let mut b = String::new();
    let mut charts: Vec<Chart> = Vec::new();
    let suites = site.suites();
    let day = |r: &crate::model::Report| r.run.started_at.chars().take(10).collect::<String>();
    let (first, last) = (site.runs.first().map(day), site.runs.last().map(day));
    let _ = write!(
        b,
        "<header><h1>netbench results</h1><p class=\"meta\">{} of {}, {}{}</p>\
         <nav><a href=\"#latest\">Latest per suite</a><a href=\"#runs\">Runs</a>\
         <a href=\"#changes\">Environment changes</a><a href=\"#servers\">Servers</a>\
         <a href=\"#score\">The composite score</a></nav></header>",
        count(site.runs.len(), "run"),
        count(suites.len(), "suite"),
        count(site.servers.len(), "server"),
        match (first, last) {
            (Some(a), Some(b)) if a == b => format!(", on {}", esc(&a)),
            (Some(a), Some(b)) => format!(", from {} to {}", esc(&a), esc(&b)),
            _ => String::new(),
        }
    );

    b.push_str("<section id=\"latest\"><h2>Latest result per suite</h2>");
    for (suite, runs) in &suites {
        let Some(i) = site.latest(runs) else { continue };
        latest_html(&mut b, &mut charts, site, suite, i);
    }
    b.push_str("</section>");

    runs_html(&mut b, site, &suites);
    changes_html(&mut b, site);
    servers_html(&mut b, site);
    let _ = write!(
        b,
        "<section id=\"score\"><h2>The composite score</h2><p class=\"legend\">{}</p></section>",
        esc(SCORE_LEGEND)
    );
    footer(&mut b);
    site_page(out, "netbench results", &b, &charts)
}

/// "1 run", "4 runs".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// A suite's latest run: where and when, its report, its scores.
fn latest_html(b: &mut String, charts: &mut Vec<Chart>, site: &Site, suite: &str, i: usize) {
    let r = &site.runs[i];
    let f = &site.facts[i];
    let _ = write!(
        b,
        "<div class=\"suite\" data-suite=\"{s}\"><h3>{s}: run <a href=\"{}\">#{}</a></h3>\
         <p class=\"meta\">{} · started {} · host {} · Linux {} · commit <code>{}</code> · \
         <a href=\"{}\">the full report</a></p>",
        run_path(r.run.id),
        r.run.id,
        esc(&r.run.status),
        esc(&r.run.started_at),
        esc(&f.host),
        esc(&f.kernel),
        esc(&f.commit),
        run_path(r.run.id),
        s = esc(suite),
    );
    let scores = &site.scores[i];
    match score_bars(site, scores) {
        Some(chart) => {
            b.push_str("<div class=\"charts wide\">");
            chart_html(
                b,
                charts,
                &format!(
                    "Composite score of run {} (95% bootstrap interval)",
                    r.run.id
                ),
                chart,
            );
            b.push_str("<div>");
            scores_table(b, site, i);
            b.push_str("</div></div>");
        }
        None => {
            b.push_str(
                "<p class=\"legend\">No composite score: no throughput cell of this run has 2 \
                 good repetitions beside another server's (a run of 1 repetition cannot give \
                 an interval, and a score is not shown without one).</p>",
            );
        }
    }
    b.push_str("</div>");
}

/// The run's scores as a table: rank, server, score with its interval,
/// cells; then the servers that were not scored and why.
fn scores_table(b: &mut String, site: &Site, i: usize) {
    let scores = &site.scores[i];
    b.push_str(
        "<table class=\"grid\"><thead><tr><th>#</th><th>server</th><th>score (95% interval)</th>\
         <th>cells</th></tr></thead><tbody>",
    );
    for (rank, s) in scores.scores.iter().enumerate() {
        let _ = write!(
            b,
            "<tr data-score-server=\"{}\"><td>{}</td><th>{}<a href=\"{}\">{}</a></th>\
             <td class=\"num\">{}</td><td>{} of {}</td></tr>",
            esc(&s.server),
            rank + 1,
            swatch_html(&site.color(&s.server)),
            server_path(super::base_name(&s.server)),
            esc(&s.server),
            score_text(s.score, s.low, s.high),
            s.cells,
            scores.rows
        );
    }
    b.push_str("</tbody></table>");
    if !scores.unscored.is_empty() {
        b.push_str("<p class=\"legend\">Not scored: ");
        let list: Vec<String> = scores
            .unscored
            .iter()
            .map(|(s, why)| format!("{} ({})", esc(s), esc(why)))
            .collect();
        b.push_str(&list.join("; "));
        b.push_str(".</p>");
    }
}

/// Every run, newest first; the latest result of each suite marked.
fn runs_html(b: &mut String, site: &Site, suites: &[(&str, Vec<usize>)]) {
    let latest: Vec<usize> = suites
        .iter()
        .filter_map(|(_, runs)| site.latest(runs))
        .collect();
    b.push_str(
        "<section id=\"runs\"><h2>Runs</h2><table class=\"grid runs\"><thead><tr><th>run</th>\
         <th>suite</th><th>started</th><th>host</th><th>kernel</th><th>commit</th><th>status</th>\
         <th>servers</th><th>cells</th><th>report</th></tr></thead><tbody>",
    );
    for (i, r) in site.runs.iter().enumerate().rev() {
        let f = &site.facts[i];
        let is_latest = latest.contains(&i);
        let cells = r.cells.iter().filter(|c| c.stats.rps.is_some()).count();
        let _ = write!(
            b,
            "<tr data-run=\"{id}\"{class}><th>#{id}{mark}</th><td class=\"text\">{}</td>\
             <td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>\
             <td class=\"text\"><code>{}</code></td><td class=\"text{status_class}\">{}</td>\
             <td>{}</td><td>{cells} of {}</td><td class=\"text\"><a href=\"{}\">report</a></td></tr>",
            esc(&r.run.suite),
            esc(&r.run.started_at),
            esc(&f.host),
            esc(&f.kernel),
            esc(&f.commit),
            esc(&r.run.status),
            r.columns.len(),
            r.cells.len(),
            run_path(r.run.id),
            id = r.run.id,
            class = if is_latest { " class=\"latest\"" } else { "" },
            mark = if is_latest {
                " <span class=\"badge\" title=\"the latest result of its suite\">latest</span>"
            } else {
                ""
            },
            status_class = if r.run.status == "complete" { "" } else { " bad" },
        );
    }
    b.push_str(
        "</tbody></table><p class=\"legend\">Newest first. <i>latest</i>: the latest complete \
         run of its suite (or its latest run when none completed), whose scores are above. \
         Cells: those with a good repetition, of all the run's throughput cells.</p></section>",
    );
}

/// Each change of host, kernel or commit between consecutive runs of a
/// suite: what the timelines mark.
fn changes_html(b: &mut String, site: &Site) {
    b.push_str("<section id=\"changes\"><h2>Environment changes</h2>");
    if site.changes.is_empty() {
        b.push_str(
            "<p class=\"legend\">Between consecutive runs of each suite the host, the kernel and \
             the commit stayed the same.</p></section>",
        );
        return;
    }
    b.push_str(
        "<table class=\"grid\"><thead><tr><th>suite</th><th>between runs</th><th>what changed</th>\
         </tr></thead><tbody>",
    );
    for c in &site.changes {
        let _ = write!(
            b,
            "<tr><td class=\"text\">{}</td><td><a href=\"{}\">#{}</a> → <a href=\"{}\">#{}</a></td>\
             <td class=\"text wrap\">{}</td></tr>",
            esc(&c.suite),
            run_path(c.from_run),
            c.from_run,
            run_path(c.to_run),
            c.to_run,
            esc(&c.describe())
        );
    }
    b.push_str(
        "</tbody></table><p class=\"legend\">Each is marked on the timelines of the servers' \
         pages: a figure that moves across one of these lines may have moved with the machine, \
         the kernel or the code rather than with the server.</p></section>",
    );
}

/// Every server with what its latest run knew of it.
fn servers_html(b: &mut String, site: &Site) {
    b.push_str(
        "<section id=\"servers\"><h2>Servers</h2><table class=\"grid\"><thead><tr><th>server</th>\
         <th>language</th><th>framework</th><th>model</th><th>variants</th><th>runs</th>\
         <th>last run</th></tr></thead><tbody>",
    );
    for s in &site.servers {
        let info = site.latest_info(&s.name).map(|(_, i)| i);
        let last = s.runs.last().map(|&i| site.runs[i].run.id);
        let variants = s.labels.iter().filter(|l| l.contains(':')).count();
        let _ = write!(
            b,
            "<tr data-site-server=\"{}\"><th>{}<a href=\"{}\">{}</a></th>\
             <td class=\"text wrap\">{}</td><td class=\"text wrap\">{}</td>\
             <td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.name),
            swatch_html(&site.color(&s.name)),
            server_path(&s.name),
            esc(&s.name),
            esc(&info.map_or(String::new(), |i| i.language_shown())),
            esc(info.map_or("", |i| i.framework.as_str())),
            model_name(info.and_then(|i| i.model)),
            variants,
            s.runs.len(),
            last.map_or("-".into(), |id| format!(
                "<a href=\"{}\">#{id}</a>",
                run_path(id)
            )),
        );
    }
    b.push_str("</tbody></table></section>");
}
