//! The HTML sections of the scenario kinds beyond throughput, shown only
//! when the run has such cells: each kind's charts (drawn by report.js from
//! the report data's `kinds`, coloured by server like every other chart)
//! with a caption saying what they show, then its tables, the same ones
//! Markdown writes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::format::{format_duration_ns, thousands};
use crate::html::{canvas, canvas_full, esc, model_key, no_data};
use crate::kinds::{sections, KindSection};
use crate::model::Report;
use crate::palette::Swatch;

/// Every kind section of the run, in the order [`sections`] gives.
pub(crate) fn kinds_html(b: &mut String, r: &Report, colors: &[Swatch]) {
    for s in sections(&r.kinds) {
        let _ = write!(
            b,
            "<section id=\"{}\"><h2>{}</h2><p class=\"legend\">{}</p>",
            esc(s.id),
            esc(s.title),
            esc(&s.legend)
        );
        model_key(b, r, colors);
        b.push_str("<div class=\"charts\">");
        charts(b, r, s.id);
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

fn charts(b: &mut String, r: &Report, id: &str) {
    let k = &r.kinds;
    match id {
        "idle" => {
            for t in tests(k.idle.iter().map(|x| &x.test)) {
                let rows = || k.idle.iter().filter(|x| x.test == t);
                if rows().any(|x| !x.levels.is_empty()) {
                    canvas_full(
                        b,
                        "idle-pss",
                        t,
                        None,
                        &format!(
                            "{t}: the server's PSS (MiB) against idle connections held; each \
                             legend entry gives the server's memory per connection (the slope \
                             of its least-squares line; past 8 servers the legend names the \
                             models and the table below has the slopes)"
                        ),
                    );
                    canvas(
                        b,
                        "idle-cpu",
                        t,
                        None,
                        &format!(
                            "{t}: server CPU while the connections sit idle (cores, mean over \
                             the hold) at each level"
                        ),
                    );
                } else {
                    no_data(b, &format!("{t}: no level was held"));
                }
            }
        }
        "storm" => {
            for t in tests(k.storm.iter().map(|x| &x.test)) {
                let rows: Vec<_> = k.storm.iter().filter(|x| x.test == t).collect();
                if rows.iter().any(|x| x.all_done_s.is_some()) {
                    canvas(
                        b,
                        "storm-time",
                        t,
                        None,
                        &format!(
                            "{t}: seconds from the first connect until every client was done \
                             (lower is better), by number of clients"
                        ),
                    );
                } else {
                    no_data(b, &format!("{t}: no storm finished"));
                }
                let mut clients: Vec<u32> = rows.iter().map(|x| x.clients).collect();
                clients.dedup();
                for c in clients {
                    if rows
                        .iter()
                        .any(|x| x.clients == c && x.connect_p50_ns.is_some_and(|v| v > 0.0))
                    {
                        canvas(
                            b,
                            "storm-connect",
                            t,
                            Some(c),
                            &format!(
                                "{t} at {} clients: connect latency at p50, p99 and the slowest \
                                 (ms, log scale)",
                                thousands(u64::from(c))
                            ),
                        );
                    }
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
                             per server; a large triangle marks the server's knee, the highest \
                             rate within the SLO{slo}, given in its legend entry (past 8 \
                             servers the legend names the models and the table has the knees)"
                        ),
                    );
                } else {
                    no_data(b, &format!("{t}: no open-loop step was measured"));
                }
            }
        }
        "fixed-rate" => {
            for t in tests(k.fixed_rate.iter().map(|x| &x.test)) {
                if k.fixed_rate
                    .iter()
                    .any(|x| x.test == t && x.server_cpu_us_per_request.is_some())
                {
                    canvas(
                        b,
                        "fixed-cpu",
                        t,
                        None,
                        &format!(
                            "{t}: the server's CPU time per answered request (µs) at the same \
                             offered rate, lowest first (lower is better)"
                        ),
                    );
                } else {
                    no_data(b, &format!("{t}: no server CPU figure"));
                }
            }
        }
        "short-lived" => {
            // A group is an endpoint at a connection count: the chart names
            // it by both.
            for g in k.short_lived.iter().filter(|g| !g.rows.is_empty()) {
                canvas(
                    b,
                    "short-lived",
                    &g.endpoint,
                    Some(g.connections),
                    &format!(
                        "{} at {} connections: requests/s with keep-alive and with a new \
                         connection every K requests",
                        g.endpoint,
                        thousands(u64::from(g.connections))
                    ),
                );
            }
        }
        _ => {}
    }
}

fn tables(b: &mut String, s: &KindSection) {
    for t in &s.tables {
        b.push_str("<table class=\"grid\"><thead><tr>");
        for h in &t.headers {
            let _ = write!(b, "<th>{}</th>", esc(h));
        }
        b.push_str("</tr></thead><tbody>");
        for row in &t.rows {
            b.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                // Names left as headers of their row, figures as data.
                let tag = if i < 2 { "th" } else { "td" };
                let _ = write!(b, "<{tag}>{}</{tag}>", esc(c));
            }
            b.push_str("</tr>");
        }
        b.push_str("</tbody></table>");
    }
}
