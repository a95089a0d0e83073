//! The two study axes a run may hold: the allocator axis (each native server
//! under each malloc, side by side) and the threading-model axis (each
//! server's throughput, threads and memory against connections). Computed
//! from the report's cells; the HTML and Markdown writers lay them out.

use std::fmt::Write as _;

use serde::Serialize;

use crate::format::{bytes, thousands};
use crate::html_parts::{esc, model_key};
use crate::model::{Cell, Report};
use crate::palette::Swatch;

/// The allocators in the order a chart shows them, each with its colour: one
/// fixed colour per allocator, so every chart of the study reads the same.
const ALLOCATORS: [(&str, &str); 4] = [
    ("glibc", "#6b7280"),
    ("jemalloc", "#2563eb"),
    ("mimalloc", "#16a34a"),
    ("tcmalloc", "#d97706"),
];

/// One test at one connection count: per base server (the server as it is
/// without the allocator), one bar per allocator it ran with.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AllocatorChart {
    pub test: String,
    pub connections: u32,
    /// Base servers, in the report's column order.
    pub servers: Vec<String>,
    pub series: Vec<AllocatorSeries>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AllocatorSeries {
    pub allocator: &'static str,
    pub color: &'static str,
    /// Per base server: the variant's label, if it ran with this allocator.
    pub labels: Vec<Option<String>>,
    /// Median requests/s with the 95% interval of the mean.
    pub rps: Vec<Option<Bar>>,
    /// Median over the repetitions of the peak RSS, MiB.
    pub rss_mib: Vec<Option<f64>>,
    /// Each good repetition's requests/s, for telling a change from noise.
    #[serde(skip)]
    pub values: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Bar {
    pub y: f64,
    #[serde(rename = "yMin")]
    pub y_min: f64,
    #[serde(rename = "yMax")]
    pub y_max: f64,
}

/// The server a variant is an allocator variant of: `c-h2o:jemalloc` is
/// `c-h2o`; anything else (the glibc default, another variant) is itself.
fn base_of(label: &str, allocator: &str) -> String {
    label
        .strip_suffix(allocator)
        .and_then(|l| l.strip_suffix(':'))
        .filter(|_| allocator != "glibc")
        .unwrap_or(label)
        .to_string()
}

/// Every (base server, allocator, label) of the run, for the servers that
/// ran with two or more allocators; empty when the run has no allocator axis.
fn members(r: &Report) -> Vec<(String, &'static str, String)> {
    let mut out: Vec<(String, &'static str, String)> = Vec::new();
    for label in &r.columns {
        let Some(info) = r.servers.iter().find(|s| &s.label == label) else {
            continue;
        };
        let Some(a) = info.allocator.as_deref() else {
            continue;
        };
        let Some((name, _)) = ALLOCATORS.iter().find(|(n, _)| *n == a) else {
            continue;
        };
        out.push((base_of(label, a), name, label.clone()));
    }
    let count = |base: &str| out.iter().filter(|(b, _, _)| b == base).count();
    let keep: Vec<bool> = out.iter().map(|(b, _, _)| count(b) >= 2).collect();
    let mut keep = keep.into_iter();
    out.retain(|_| keep.next().unwrap_or(false));
    out
}

fn cell<'a>(r: &'a Report, test: &str, connections: u32, label: &str) -> Option<&'a Cell> {
    r.cells
        .iter()
        .find(|c| c.test == test && c.connections == connections && c.server == label)
}

/// The allocator charts of a run: one per test and connection count.
pub(crate) fn allocator_study(r: &Report) -> Vec<AllocatorChart> {
    let members = members(r);
    if members.is_empty() {
        return Vec::new();
    }
    let mut bases: Vec<String> = Vec::new();
    for (b, _, _) in &members {
        if !bases.contains(b) {
            bases.push(b.clone());
        }
    }
    let mut charts = Vec::new();
    for t in &r.tests {
        for &conns in &t.connections {
            let series: Vec<AllocatorSeries> = ALLOCATORS
                .iter()
                .filter(|(a, _)| members.iter().any(|(_, m, _)| m == a))
                .map(|&(allocator, color)| {
                    let labels: Vec<Option<String>> = bases
                        .iter()
                        .map(|b| {
                            members
                                .iter()
                                .find(|(mb, ma, _)| mb == b && *ma == allocator)
                                .map(|(_, _, l)| l.clone())
                        })
                        .collect();
                    let cells: Vec<Option<&Cell>> = labels
                        .iter()
                        .map(|l| l.as_deref().and_then(|l| cell(r, &t.name, conns, l)))
                        .collect();
                    AllocatorSeries {
                        allocator,
                        color,
                        rps: cells
                            .iter()
                            .map(|c| {
                                let s = c.and_then(|c| c.stats.rps)?;
                                let (lo, hi) = s.ci95.unwrap_or((s.median, s.median));
                                Some(Bar {
                                    y: s.median,
                                    y_min: lo.max(0.0),
                                    y_max: hi,
                                })
                            })
                            .collect(),
                        rss_mib: cells
                            .iter()
                            .map(|c| c.and_then(|c| c.peak_rss_bytes).map(|b| b / 1048576.0))
                            .collect(),
                        values: cells
                            .iter()
                            .map(|c| c.map_or_else(Vec::new, |c| c.stats.rps_values.clone()))
                            .collect(),
                        labels,
                    }
                })
                .collect();
            // A study needs another allocator beside glibc at this test: a
            // suite that asks for its variants in one scenario alone (apps'
            // app-alloc) leaves the others glibc's only.
            let measured = |s: &AllocatorSeries| s.rps.iter().any(Option::is_some);
            let compared = series.iter().any(|s| s.allocator != "glibc" && measured(s));
            if compared && series.iter().any(measured) {
                charts.push(AllocatorChart {
                    test: t.name.clone(),
                    connections: conns,
                    servers: bases.clone(),
                    series,
                });
            }
        }
    }
    charts
}

/// The allocator section of the HTML report; nothing for a run without the
/// axis.
pub(crate) fn allocators_html(b: &mut String, charts: &[AllocatorChart]) {
    if charts.is_empty() {
        return;
    }
    b.push_str(
        "<section id=\"allocators\"><h2>Allocators</h2><p class=\"legend\">Each native server \
         with the C library's malloc (glibc) and with jemalloc, mimalloc and tcmalloc preloaded \
         from Debian's packages; the runner checked at every start that the named allocator was \
         the one mapped in every process of the server. Left: median requests/s with the 95% \
         interval of the mean; right: the median of each repetition's peak RSS (the whole \
         process tree). One colour per allocator.</p><div class=\"model-key\">",
    );
    for (a, color) in ALLOCATORS {
        let _ = write!(
            b,
            "<span class=\"key-model\">{}<b>{a}</b></span> ",
            crate::html_parts::swatch_html(color)
        );
    }
    b.push_str("</div><div class=\"charts\">");
    for (i, c) in charts.iter().enumerate() {
        let at = format!(
            "{} at {} connections",
            c.test,
            thousands(u64::from(c.connections))
        );
        for (metric, what) in [("rps", "requests/s"), ("rss", "peak RSS (MiB)")] {
            let _ = write!(
                b,
                "<figure><figcaption>{}</figcaption><div class=\"chart\"><canvas id=\"allocators-{i}-{metric}\" \
                 data-chart=\"allocators\" data-index=\"{i}\" data-metric=\"{metric}\"></canvas></div></figure>",
                esc(&format!("{at}: {what}"))
            );
        }
    }
    b.push_str(
        "</div><table class=\"grid\"><thead><tr><th>test</th><th>connections</th><th>server</th>",
    );
    for (a, _) in ALLOCATORS {
        let _ = write!(b, "<th>{a}</th>");
    }
    b.push_str("</tr></thead><tbody>");
    for row in table_rows(charts) {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><th>{}</th>",
            esc(&row.test),
            thousands(u64::from(row.connections)),
            esc(&row.server)
        );
        for v in &row.values {
            let _ = write!(b, "<td>{}</td>", esc(v));
        }
        b.push_str("</tr>");
    }
    let _ = write!(
        b,
        "</tbody></table><p class=\"legend\">{}</p></section>",
        esc(CHANGE_LEGEND)
    );
}

/// One line of the allocator table: per allocator, "requests/s · peak RSS"
/// and the change against glibc.
pub(crate) struct TableRow {
    pub test: String,
    pub connections: u32,
    pub server: String,
    /// In [`ALLOCATORS`] order; "-" where it did not run.
    pub values: Vec<String>,
}

pub(crate) fn table_rows(charts: &[AllocatorChart]) -> Vec<TableRow> {
    let mut rows = Vec::new();
    for c in charts {
        for (k, server) in c.servers.iter().enumerate() {
            let of = |a: &str| c.series.iter().find(|s| s.allocator == a);
            let glibc = of("glibc").filter(|s| s.rps[k].is_some());
            let values = ALLOCATORS
                .iter()
                .map(|(a, _)| {
                    let Some(s) = of(a) else {
                        return "-".to_string();
                    };
                    let Some(rps) = s.rps[k] else {
                        return "-".to_string();
                    };
                    let mut v = format!("{} req/s", thousands(rps.y.round() as u64));
                    if let (Some(g), false) = (glibc, *a == "glibc") {
                        let base = g.rps[k].map_or(0.0, |b| b.y);
                        if base > 0.0 {
                            let _ = write!(
                                v,
                                " ({:+.0}% {})",
                                (rps.y / base - 1.0) * 100.0,
                                change_mark(&g.values[k], &s.values[k])
                            );
                        }
                    }
                    if let Some(m) = s.rss_mib[k] {
                        let _ = write!(v, " · {}", bytes((m * 1048576.0) as u64));
                    }
                    v
                })
                .collect();
            rows.push(TableRow {
                test: c.test.clone(),
                connections: c.connections,
                server: server.clone(),
                values,
            });
        }
    }
    rows
}

/// What the allocator table's marks mean.
pub(crate) const CHANGE_LEGEND: &str = "The change is against glibc's median: ▲ or ▼ beyond \
    noise (Welch's 95% interval of the change, over the repetitions, excludes 0), ≈ not told \
    apart from glibc at these repetitions.";

/// ▲ or ▼ when the change from `base` to `other` is beyond noise, else ≈.
pub(crate) fn change_mark(base: &[f64], other: &[f64]) -> &'static str {
    match crate::significance::welch_change_ci(base, other) {
        Some((lo, _)) if lo > 0.0 => "▲",
        Some((_, hi)) if hi < 0.0 => "▼",
        _ => "≈",
    }
}

/// The header of the allocator table, for the Markdown writer.
pub(crate) fn allocator_names() -> impl Iterator<Item = &'static str> {
    ALLOCATORS.iter().map(|(a, _)| *a)
}

/// Whether the run measured enough connection counts to draw each server's
/// figures against them (three or more in some test).
pub(crate) fn has_curves(r: &Report) -> bool {
    r.tests.iter().any(|t| t.connections.len() >= 3)
}

/// The threading-model section: per test, requests/s, threads and peak
/// memory against connections, a line per server in its model's colour.
pub(crate) fn models_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    if !has_curves(r) {
        return;
    }
    b.push_str(
        "<section id=\"models\"><h2>Threading models against connections</h2><p class=\"legend\">\
         Each server's median requests/s, the most threads its process tree had, and its peak \
         RSS, at each connection count of the test (log scales for threads and memory): how \
         each threading model pays for connections. A line per server, in its model's hue, named at its \
         end; past 8 servers the legend names the models (a click on one hides or shows its \
         servers).</p>",
    );
    model_key(b, r, colors);
    b.push_str("<div class=\"charts wide\">");
    for t in r.tests.iter().filter(|t| t.connections.len() >= 3) {
        for (field, what) in [
            ("rps", "requests/s"),
            ("threads", "threads (peak)"),
            ("rss", "peak RSS (MiB)"),
        ] {
            let _ = write!(
                b,
                "<figure><figcaption>{}</figcaption><div class=\"chart tall\"><canvas id=\"curve-{field}-{}\" \
                 data-chart=\"curve-{field}\" data-test=\"{}\"></canvas></div></figure>",
                esc(&format!("{}: {what} against connections", t.name)),
                esc(&t.name),
                esc(&t.name),
            );
        }
    }
    b.push_str(
        "</div><table class=\"grid\"><thead><tr><th>server</th><th>model</th><th>test</th>\
         <th>connections</th><th>requests/s</th><th>threads</th><th>peak RSS</th>\
         <th>per connection</th><th>server CPU</th><th>flags</th></tr></thead><tbody>",
    );
    for label in &r.columns {
        let model = r
            .servers
            .iter()
            .find(|s| &s.label == label)
            .map_or("-", |s| crate::palette::model_name(s.model));
        for c in r.cells.iter().filter(|c| &c.server == label) {
            let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
            let _ = write!(
                b,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(label),
                esc(model),
                esc(&c.test),
                thousands(u64::from(c.connections)),
                opt(c.stats.rps.map(|s| s.median), &|v| thousands(v.round() as u64)),
                opt(c.peak_threads, &|v| thousands(v.round() as u64)),
                opt(c.peak_rss_bytes, &|v| bytes(v as u64)),
                opt(c.rss_per_connection, &|v| if v < 0.0 {
                    format!("{:.1} KiB (shrank)", v / 1024.0)
                } else {
                    format!("{:.1} KiB", v / 1024.0)
                }),
                opt(c.server_cpu_cores, &|v| format!("{v:.2} cores")),
                crate::html_parts::flags_html(&c.flags),
            );
        }
    }
    b.push_str("</tbody></table></section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_marked_only_beyond_noise() {
        let base = [100.0, 101.0, 99.0];
        assert_eq!(change_mark(&base, &[120.0, 121.0, 119.0]), "▲");
        assert_eq!(change_mark(&base, &[80.0, 81.0, 79.0]), "▼");
        // Spread wider than the change: not told apart.
        assert_eq!(change_mark(&base, &[60.0, 140.0, 110.0]), "≈");
        // One repetition has no interval.
        assert_eq!(change_mark(&base, &[150.0]), "≈");
    }

    #[test]
    fn a_test_without_another_allocator_than_glibc_is_no_study() {
        use netbench_records::fixtures;
        let mut run = fixtures::run(1, "apps");
        run.scenarios = vec![
            fixtures::scenario(0, "work", &[100]),
            fixtures::scenario(1, "app-alloc", &[100]),
        ];
        let mut glibc = fixtures::server("s", "");
        glibc.allocator = Some("glibc".into());
        let mut jemalloc = fixtures::server("s", "jemalloc");
        jemalloc.allocator = Some("jemalloc".into());
        run.servers = vec![glibc, jemalloc];
        let at = |variant: &str, scenario: &str| {
            let mut key = fixtures::key("s", scenario, 100, 1);
            key.variant = variant.into();
            fixtures::ok(key, 1000.0)
        };
        run.measurements = vec![
            at("", "work"),
            at("", "app-alloc"),
            at("jemalloc", "app-alloc"),
        ];
        let charts = allocator_study(&crate::build_report(&run));
        let tests: Vec<&str> = charts.iter().map(|c| c.test.as_str()).collect();
        assert_eq!(tests, ["app-alloc"]);
    }

    #[test]
    fn an_allocator_variant_belongs_to_its_server() {
        assert_eq!(base_of("c-h2o:jemalloc", "jemalloc"), "c-h2o");
        assert_eq!(base_of("c-h2o", "glibc"), "c-h2o");
        // A variant that is not the allocator's is its own base.
        assert_eq!(base_of("c-h2o:loops-1", "glibc"), "c-h2o:loops-1");
        assert_eq!(base_of("c-h2o:xjemalloc", "jemalloc"), "c-h2o:xjemalloc");
    }
}
