//! The HTML sections of the scenario kinds beyond throughput, shown only
//! when the run has such cells: each kind's charts with a caption saying
//! what they show and which way is better (a figure per server at one test
//! and level as a ranked chart, kind_ranked.rs; curves drawn by report.js
//! from the report data's `kinds`), then its tables, the same ones
//! Markdown writes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::format::{format_duration_ns, thousands};
use crate::html_parts::{canvas_full, esc, model_key, no_data};
use crate::kind_ranked;
use crate::kinds::{sections, KindSection};
use crate::model::Report;
use crate::palette::Swatch;
use crate::ranked_view::{RankedChart, RankedCharts};

/// Every kind section of the run, in the order [`sections`] gives.
pub(crate) fn kinds_html(b: &mut String, r: &Report, colors: &[Swatch], out: &mut RankedCharts) {
    for s in sections(&r.kinds) {
        let _ = write!(
            b,
            "<section id=\"{}\"><h2>{}</h2><p class=\"legend\">{}</p>",
            esc(s.id),
            esc(s.title),
            esc(&s.legend)
        );
        model_key(b, r, colors);
        b.push_str("<div class=\"charts wide\">");
        charts(b, r, colors, s.id, out);
        b.push_str("</div>");
        tables(b, &s);
        b.push_str("</section>");
    }
}

/// Test names in the order of the rows.
fn tests<'a>(names: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    names
        .filter(|n| seen.insert(n.as_str()))
        .map(String::as_str)
        .collect()
}

/// A ranked chart, or the caption alone when no server has the figure.
fn ranked(
    b: &mut String,
    out: &mut RankedCharts,
    chart: Option<RankedChart>,
    caption: &str,
    none: &str,
) {
    match chart {
        Some(chart) => out.figure(b, chart, caption),
        None => no_data(b, &format!("{caption}: {none}")),
    }
}

fn charts(b: &mut String, r: &Report, colors: &[Swatch], id: &str, out: &mut RankedCharts) {
    let k = &r.kinds;
    match id {
        "idle" => {
            for t in tests(k.idle.iter().map(|x| &x.test)) {
                let rows = || k.idle.iter().filter(|x| x.test == t);
                if !rows().any(|x| !x.levels.is_empty()) {
                    no_data(b, &format!("{t}: no level was held"));
                    continue;
                }
                canvas_full(
                    b,
                    "idle-pss",
                    t,
                    None,
                    &format!(
                        "{t}: the server's PSS (MiB) against idle connections held, each line \
                         named at its end with the server's memory per connection (the slope of \
                         its least-squares line)"
                    ),
                );
                ranked(
                    b,
                    out,
                    kind_ranked::idle_memory(k, colors, t),
                    &format!(
                        "{t}: memory per idle connection (KiB), lowest first (lower is better)"
                    ),
                    "no server held two full levels",
                );
                for level in kind_ranked::idle_levels(k, t) {
                    ranked(
                        b,
                        out,
                        kind_ranked::idle_cpu(k, colors, t, level),
                        &format!(
                            "{t} at {} idle connections: server CPU while they sit idle (cores, \
                             mean over the hold), lowest first (lower is better)",
                            thousands(u64::from(level))
                        ),
                        "no server held the level",
                    );
                }
            }
        }
        "storm" => {
            for t in tests(k.storm.iter().map(|x| &x.test)) {
                let rows: Vec<_> = k.storm.iter().filter(|x| x.test == t).collect();
                let mut clients: Vec<u32> = rows.iter().map(|x| x.clients).collect();
                clients.sort_unstable();
                clients.dedup();
                for c in clients {
                    let at = format!("{t} at {} clients", thousands(u64::from(c)));
                    ranked(
                        b,
                        out,
                        kind_ranked::storm_done(k, colors, t, c),
                        &format!(
                            "{at}: seconds from the first connect until every client was done, \
                             fastest first (lower is better)"
                        ),
                        "no storm finished",
                    );
                    ranked(
                        b,
                        out,
                        kind_ranked::storm_connect(k, colors, t, c),
                        &format!(
                            "{at}: p99 connect latency (ms, log scale; the whisker from p50 to \
                             the slowest connect), lowest first (lower is better)"
                        ),
                        "no connect latency",
                    );
                }
            }
        }
        "rate-sweep" => {
            for t in tests(k.rate_sweep.iter().map(|x| &x.test)) {
                let slo = k
                    .rate_sweep
                    .iter()
                    .find(|x| x.test == t)
                    .and_then(|x| x.slo_p99_ns)
                    .map_or(String::new(), |s| {
                        format!(" (p99 ≤ {})", format_duration_ns(s))
                    });
                if k.rate_sweep
                    .iter()
                    .any(|x| x.test == t && !x.steps.is_empty())
                {
                    canvas_full(
                        b,
                        "sweep",
                        t,
                        None,
                        &format!(
                            "{t}: p99 latency (ms, log scale) against the offered rate, a line \
                             per server named at its end; a large triangle marks the server's \
                             knee, the highest rate within the SLO{slo}, given with its name"
                        ),
                    );
                } else {
                    no_data(b, &format!("{t}: no open-loop step was measured"));
                }
            }
        }
        "fixed-rate" => {
            for t in tests(k.fixed_rate.iter().map(|x| &x.test)) {
                ranked(
                    b,
                    out,
                    kind_ranked::fixed_cpu(k, colors, t),
                    &format!(
                        "{t}: the server's CPU time per answered request (µs) at the same \
                         offered rate, lowest first (lower is better)"
                    ),
                    "no server CPU figure",
                );
            }
        }
        "short-lived" => {
            // A group is an endpoint at a connection count; a chart per
            // K, each server's figure a share of its own keep-alive one.
            for g in k.short_lived.iter().filter(|g| !g.rows.is_empty()) {
                for (i, col) in g.columns.iter().enumerate() {
                    let Some(n) = col.requests_per_connection else {
                        continue;
                    };
                    let caption = format!(
                        "{} at {} connections, {} ({}): requests/s as a share of the server's \
                         own keep-alive figure, most kept first (higher is better)",
                        g.endpoint,
                        thousands(u64::from(g.connections)),
                        col.title(),
                        col.test
                    );
                    match kind_ranked::short_kept(g, colors, i) {
                        Some(chart) => out.figure(b, chart, &caption),
                        None => no_data(
                            b,
                            &format!(
                                "{} at {} connections, a new connection every {n} requests: no \
                                 keep-alive figure to compare with (the throughput section ranks \
                                 its requests/s)",
                                g.endpoint,
                                thousands(u64::from(g.connections))
                            ),
                        ),
                    }
                }
            }
        }
        _ => {}
    }
}

/// A cell: a figure of several parts (p50 / p99 / max) may break after
/// a " / " and nowhere else, so with headers that wrap too a storm's 14
/// columns fit 1280 px (issue 29) without a figure split from its unit.
fn cell(tag: &str, text: &str) -> String {
    if !text.contains(" / ") {
        return format!("<{tag}>{}</{tag}>", esc(text));
    }
    let parts: Vec<String> = text
        .split(" / ")
        .map(|p| format!("<span>{}</span>", esc(p)))
        .collect();
    format!("<{tag} class=\"parts\">{}</{tag}>", parts.join(" / "))
}

fn tables(b: &mut String, s: &KindSection) {
    for t in &s.tables {
        b.push_str("<table class=\"grid kind\"><thead><tr>");
        for h in &t.headers {
            let _ = write!(b, "<th>{}</th>", esc(h));
        }
        b.push_str("</tr></thead><tbody>");
        for row in &t.rows {
            b.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                // Names left as headers of their row, figures as data.
                let tag = if i < 2 { "th" } else { "td" };
                b.push_str(&cell(tag, c));
            }
            b.push_str("</tr>");
        }
        b.push_str("</tbody></table>");
    }
}
