//! The static site over a whole store (`netbench site`, issue 29): the site
//! model, built once from one [`Report`] per run, and the list of its pages,
//! each a view of it: the index (`index.html`), each run's report as
//! `netbench report` writes it with a link back to the index
//! (`runs/<id>.html`), and a page per server
//! (`servers/<name>.html`). Every page is self-contained (styles, data and
//! Chart.js inlined), so the folder works offline and from any web host.

mod folder;
mod index;
pub mod score;
mod server_conformance;
mod server_page;
pub mod timeline;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use netbench_records::Model;

use crate::html_parts::{esc, script_json, REPORT_CSS};
use crate::model::{Report, ServerInfo};
use crate::vendor::{CHART_JS, ERROR_BARS_JS};

pub use folder::{write_site, SiteError, Written, MARKER};
pub use score::{run_scores, RunScores, ServerScore};
pub use timeline::{score_text, EnvChange, EnvFacts};

use timeline::Chart;

const SITE_JS: &str = include_str!("../../assets/site.js");
const SITE_CSS: &str = include_str!("../../assets/site.css");

/// Everything the site shows, computed once.
#[derive(Debug, Clone)]
pub struct Site {
    /// One report per run, oldest first (by id: ids only grow).
    pub runs: Vec<Report>,
    /// Each run's composite scores, in the same order.
    pub scores: Vec<RunScores>,
    /// Each run's host, kernel and commit, in the same order.
    pub facts: Vec<EnvFacts>,
    /// What changed between consecutive runs of each suite.
    pub changes: Vec<EnvChange>,
    /// Every server (a folder under `servers/`) any run measured, by name.
    pub servers: Vec<ServerEntry>,
    /// Each server label's colour: a shade of its threading model's hue
    /// (its model in the latest run that has it), the same on every page.
    colors: BTreeMap<String, String>,
}

/// A server across the store: its variants and the runs it took part in.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    /// The folder's name (`servers/<name>`).
    pub name: String,
    /// Its labels (`name`, `name:variant`) seen in any run, sorted.
    pub labels: Vec<String>,
    /// Positions in [`Site::runs`] of the runs that list any of them.
    pub runs: Vec<usize>,
}

/// The folder name of a server label: `go-stdlib:procs-1` → `go-stdlib`.
pub(crate) fn base_name(label: &str) -> &str {
    label.split_once(':').map_or(label, |(name, _)| name)
}

/// Builds the site from every run's report (in any order).
pub fn build_site(mut runs: Vec<Report>) -> Site {
    runs.sort_by_key(|r| r.run.id);
    let scores: Vec<RunScores> = runs.iter().map(run_scores).collect();
    let facts: Vec<EnvFacts> = runs.iter().map(|r| timeline::env_facts(&r.run)).collect();
    let mut suites: BTreeMap<&str, Vec<(i64, &EnvFacts)>> = BTreeMap::new();
    for (r, f) in runs.iter().zip(&facts) {
        suites.entry(&r.run.suite).or_default().push((r.run.id, f));
    }
    let changes = suites
        .iter()
        .flat_map(|(suite, list)| timeline::changes(suite, list))
        .collect();

    let mut servers: BTreeMap<String, ServerEntry> = BTreeMap::new();
    let mut models: BTreeMap<String, Option<Model>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let labels = r
            .servers
            .iter()
            .map(|s| s.label.clone())
            .chain(r.columns.iter().cloned());
        for label in labels {
            let name = base_name(&label).to_string();
            let e = servers.entry(name.clone()).or_insert_with(|| ServerEntry {
                name,
                labels: Vec::new(),
                runs: Vec::new(),
            });
            if !e.labels.contains(&label) {
                e.labels.push(label.clone());
            }
            if e.runs.last() != Some(&i) {
                e.runs.push(i);
            }
            // Later runs overwrite: the latest model a label ran as.
            let model = r
                .servers
                .iter()
                .find(|s| s.label == label)
                .and_then(|s| s.model);
            if model.is_some() || !models.contains_key(&label) {
                models.insert(label, model);
            }
        }
    }
    let mut servers: Vec<ServerEntry> = servers.into_values().collect();
    for s in &mut servers {
        s.labels.sort();
    }
    let colors = crate::palette::swatches_of(models.into_iter().collect())
        .into_iter()
        .map(|s| (s.label, s.color))
        .collect();
    Site {
        runs,
        scores,
        facts,
        changes,
        servers,
        colors,
    }
}

impl Site {
    /// Each suite with the positions of its runs, oldest first; suites by
    /// name.
    pub fn suites(&self) -> Vec<(&str, Vec<usize>)> {
        let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, r) in self.runs.iter().enumerate() {
            out.entry(&r.run.suite).or_default().push(i);
        }
        out.into_iter().collect()
    }

    /// The suite's latest result: its latest complete run, or its latest
    /// run when none completed.
    pub fn latest(&self, runs: &[usize]) -> Option<usize> {
        runs.iter()
            .rev()
            .find(|&&i| self.runs[i].run.status == "complete")
            .or(runs.last())
            .copied()
    }

    /// A label's colour (grey for one the site does not know).
    pub(crate) fn color(&self, label: &str) -> String {
        self.colors
            .get(label)
            .cloned()
            .unwrap_or_else(|| crate::palette::model_color(None))
    }

    /// What the latest run that lists `label` knew of it.
    pub(crate) fn latest_info(&self, label: &str) -> Option<(usize, &ServerInfo)> {
        self.runs
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, r)| r.servers.iter().find(|s| s.label == label).map(|s| (i, s)))
    }
}

/// A page of the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Index,
    /// The report of the run at this position of [`Site::runs`].
    Run(usize),
    /// The page of the server at this position of [`Site::servers`].
    Server(usize),
}

/// `runs/12.html`, relative to the site's folder.
pub(crate) fn run_path(id: i64) -> String {
    format!("runs/{id}.html")
}

/// `servers/go-stdlib.html`; a character a URL or another file system
/// would trip over becomes `_` (server folders are plain names anyway).
pub(crate) fn server_path(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    format!("servers/{}.html", if safe.is_empty() { "_" } else { safe })
}

/// Every page of the site with its path under the site's folder.
pub fn pages(site: &Site) -> Vec<(String, Page)> {
    let mut out = vec![("index.html".to_string(), Page::Index)];
    out.extend(
        site.runs
            .iter()
            .enumerate()
            .map(|(i, r)| (run_path(r.run.id), Page::Run(i))),
    );
    out.extend(
        site.servers
            .iter()
            .enumerate()
            .map(|(i, s)| (server_path(&s.name), Page::Server(i))),
    );
    out
}

/// Writes one page of the site.
pub fn write_page(out: &mut impl Write, site: &Site, page: Page) -> io::Result<()> {
    match page {
        Page::Index => index::write_index(out, site),
        Page::Run(i) => crate::html::write_site_run(out, &site.runs[i], "../index.html"),
        Page::Server(i) => server_page::write_server_page(out, site, &site.servers[i]),
    }
}

/// A page of the site: the report's styles and the site's, the charts' data
/// as JSON (`#report-data`, where the browser test looks for a page's data),
/// Chart.js and its error-bars plugin inlined, then site.js, which draws
/// each `canvas[data-chart]` from `charts[data-index]`.
pub(crate) fn site_page(
    out: &mut impl Write,
    title: &str,
    body: &str,
    charts: &[Chart],
) -> io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{REPORT_CSS}{SITE_CSS}</style>\n</head>\n<body>\n{body}\n\
         <script id=\"report-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{CHART_JS}\n</script>\n<script>\n{ERROR_BARS_JS}\n</script>\n\
         <script>\n{SITE_JS}</script>\n</body>\n</html>\n",
        title = esc(title),
        data = script_json(&serde_json::json!({ "charts": charts })),
    )
}

/// A chart's canvas (drawn by site.js from `charts[index]`) in a figure
/// with its caption.
pub(crate) fn chart_html(b: &mut String, charts: &mut Vec<Chart>, caption: &str, chart: Chart) {
    let tall = if chart.kind == "score" {
        // One bar per server: the height follows their number.
        format!(
            " style=\"height:{}px\"",
            (chart.labels.len() * 24 + 90).max(160)
        )
    } else {
        String::new()
    };
    let _ = write!(
        b,
        "<figure><figcaption>{}</figcaption><div class=\"chart\"{tall}>\
         <canvas data-chart=\"{}\" data-index=\"{}\" id=\"chart-{}\"></canvas></div></figure>",
        esc(caption),
        chart.kind,
        charts.len(),
        charts.len()
    );
    charts.push(chart);
}

/// The page's foot: what it was made from.
pub(crate) fn footer(b: &mut String) {
    let _ = write!(
        b,
        "<footer>netbench {} · a static site rebuilt from the SQLite store alone · charts by \
         Chart.js (inlined; these pages need no network)</footer>",
        env!("CARGO_PKG_VERSION")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_plain_file_names() {
        assert_eq!(server_path("go-stdlib"), "servers/go-stdlib.html");
        assert_eq!(server_path("a/b c"), "servers/a_b_c.html");
        assert_eq!(server_path("..x"), "servers/x.html");
        assert_eq!(server_path(""), "servers/_.html");
        assert_eq!(run_path(7), "runs/7.html");
        assert_eq!(base_name("z:tuned"), "z");
        assert_eq!(base_name("z"), "z");
    }
}
