//! The protocols section (contract 1.5, issue 32): each server's throughput
//! over TLS, HTTP/2, h2c and gRPC set against its own HTTP/1.1 on cleartext
//! at the same endpoint and connection count, and gRPC also against JSON
//! over the same cleartext HTTP/2 (h2c), so each server is its own baseline
//! and the figure is what the protocol costs or buys it. Computed once into
//! the [`crate::Report`] from its cells; the HTML view
//! (`protocols_view.rs`), Markdown, the terminal, CSV and JSON lay it out.

use std::io::{self, Write};

use netbench_records::{Protocol, ScenarioRecord};
use serde::Serialize;

use crate::format::{cell, thousands};
use crate::model::Cell;
use crate::significance::welch_change_ci;

/// One server's cell over a protocol against the same server's cell of the
/// baseline scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolRow {
    pub server: String,
    /// The protocol's scenario.
    pub test: String,
    pub protocol: Protocol,
    /// HTTP/2 streams in flight per connection (1 for HTTP/1.1 and TLS).
    pub streams: u32,
    pub endpoint: String,
    pub connections: u32,
    /// The scenario it is set against: HTTP/1.1 on cleartext (`h1`), or for
    /// gRPC also JSON over h2c, at the same endpoint, kind, connection count
    /// and placement.
    pub baseline_test: String,
    pub baseline_protocol: Protocol,
    pub baseline_streams: u32,
    /// Median requests/s of the protocol's cell and of the baseline's.
    pub rps: f64,
    pub baseline_rps: f64,
    /// `rps / baseline_rps`: 0.82 is 18% fewer requests/s over the protocol.
    pub ratio: f64,
    /// The 95% interval of the change from the baseline to the protocol
    /// (Welch's t on the logarithms of the repetitions, as `compare`
    /// gives it: -0.22 is 22% fewer); None with fewer than two good
    /// repetitions on a side.
    pub change_ci95: Option<(f64, f64)>,
    /// Whether the interval excludes no change: the repetitions tell the
    /// protocol's figure apart from the baseline's.
    pub told_apart: bool,
    /// The marks of the protocol's cell and of the baseline's (C
    /// client-bound, ~ noisy, ...): a ratio is only as good as both.
    pub flags: String,
    pub baseline_flags: String,
}

impl ProtocolRow {
    /// The change of the medians: `ratio - 1`.
    pub fn change(&self) -> f64 {
        self.ratio - 1.0
    }

    /// The comparison in words, as a cell of the table reads under its
    /// column's head ("TLS against HTTP/1.1"): "costs 18%", "gains 35%",
    /// "≈ −2%" when the repetitions do not tell it from no change, and the
    /// bare change when there is no interval (one repetition).
    pub fn verdict(&self) -> String {
        let pct = percent_size(self.change());
        match self.change_ci95 {
            None => signed_percent(self.change()),
            Some(_) if !self.told_apart => format!("≈ {}", signed_percent(self.change())),
            Some(_) if self.ratio < 1.0 => format!("costs {pct}"),
            Some(_) => format!("gains {pct}"),
        }
    }

    /// "×0.82 · 95%: −22% to −14%", or "×0.82 · one repetition" without an
    /// interval (short: five columns of it fit a page 1280 px wide).
    pub fn detail(&self) -> String {
        let ci = match self.change_ci95 {
            Some((lo, hi)) => format!("95%: {} to {}", signed_percent(lo), signed_percent(hi)),
            None => "one repetition".into(),
        };
        format!("×{:.2} · {ci}", self.ratio)
    }

    /// The marks of both cells, each once.
    pub fn marks(&self) -> String {
        let mut m = self.flags.clone();
        for f in self.baseline_flags.chars() {
            if !m.contains(f) {
                m.push(f);
            }
        }
        m
    }

    /// The sentence a reader takes away: "TLS costs go-nethttp 18% of its
    /// HTTP/1.1 requests/s (41,000 against 50,000)".
    pub fn sentence(&self) -> String {
        let what = protocol_phrase(self.protocol, self.streams);
        let against = baseline_title(self.baseline_protocol, self.baseline_streams, self.streams);
        let medians = format!(
            "{} requests/s against {}",
            thousands(self.rps.round() as u64),
            thousands(self.baseline_rps.round() as u64)
        );
        let ci = self
            .change_ci95
            .map_or("one repetition: no interval".to_string(), |(lo, hi)| {
                format!(
                    "95% interval of the change {} to {}",
                    signed_percent(lo),
                    signed_percent(hi)
                )
            });
        let verdict = self.verdict();
        let body = if let Some(rest) = verdict.strip_prefix("costs ") {
            format!(
                "{what} costs {} {rest} of its {against} requests/s",
                self.server
            )
        } else if let Some(rest) = verdict.strip_prefix("gains ") {
            format!(
                "{what} gains {} {rest} over its {against} requests/s",
                self.server
            )
        } else if self.change_ci95.is_some() {
            format!(
                "{what} is not told apart from {}'s {against} ({})",
                self.server,
                signed_percent(self.change())
            )
        } else {
            format!(
                "{what} changes {}'s {against} requests/s by {}",
                self.server,
                signed_percent(self.change())
            )
        };
        format!("{body} ({medians}; {ci})")
    }
}

/// "18%", "2.4%": the size of a change, one decimal under 10%.
fn percent_size(x: f64) -> String {
    let p = (x * 100.0).abs();
    // 9.95 and up rounds to "10.0" at one decimal: whole percents from there.
    let digits = if p < 9.95 { 1 } else { 0 };
    format!("{p:.digits$}%")
}

/// "+12%", "−18%", "−2.4%": a change with its sign (a true minus sign, as
/// the page sets it), one decimal under 10%; a change that rounds to zero
/// has no direction and reads "+0.0%", never "−0.0%".
fn signed_percent(x: f64) -> String {
    let size = percent_size(x);
    let zero = !size.chars().any(|c| matches!(c, '1'..='9'));
    if x < 0.0 && !zero {
        format!("−{size}")
    } else {
        format!("+{size}")
    }
}

/// A protocol as a column's head says it: "TLS", "h2, 100 streams".
pub(crate) fn protocol_title(p: Protocol, streams: u32) -> String {
    protocol_words(p, streams, ", ")
}

/// A protocol as a sentence says it: "TLS", "h2 with 100 streams".
fn protocol_phrase(p: Protocol, streams: u32) -> String {
    protocol_words(p, streams, " with ")
}

fn protocol_words(p: Protocol, streams: u32, with: &str) -> String {
    let streams = if streams == 1 {
        "1 stream".to_string()
    } else {
        format!("{} streams", thousands(u64::from(streams)))
    };
    match p {
        Protocol::H1 => "HTTP/1.1".into(),
        Protocol::Tls => "TLS".into(),
        Protocol::H2 => format!("h2{with}{streams}"),
        Protocol::H2c => format!("h2c{with}{streams}"),
        Protocol::Grpc => format!("gRPC{with}{streams}"),
    }
}

/// The baseline as a sentence names it: "HTTP/1.1", "JSON-over-h2c" (its
/// streams said only when they are not the protocol's own).
fn baseline_title(p: Protocol, streams: u32, own_streams: u32) -> String {
    match p {
        Protocol::H1 => "HTTP/1.1".into(),
        Protocol::H2c if streams == own_streams => "JSON-over-h2c".into(),
        Protocol::H2c => format!("JSON-over-h2c ({})", protocol_phrase(p, streams)),
        other => protocol_phrase(other, streams),
    }
}

/// Whether two scenarios measure the same thing but for what carries it:
/// kind, endpoint, keep-alive, requests per connection and network path.
fn same_shape(a: &ScenarioRecord, b: &ScenarioRecord) -> bool {
    (
        &a.kind,
        &a.endpoint,
        a.keepalive,
        a.requests_per_connection,
        a.placement,
        a.bandwidth,
    ) == (
        &b.kind,
        &b.endpoint,
        b.keepalive,
        b.requests_per_connection,
        b.placement,
        b.bandwidth,
    )
}

/// The baselines a protocol scenario is set against, in the suite's order
/// of preference: the first HTTP/1.1 scenario of the same shape, and for
/// gRPC the first h2c one (with the same streams when the suite has one).
fn baselines<'a>(s: &ScenarioRecord, all: &'a [ScenarioRecord]) -> Vec<&'a ScenarioRecord> {
    let of = |p: Protocol| {
        all.iter()
            .filter(move |b| b.protocol == p && same_shape(b, s))
    };
    let mut out: Vec<&ScenarioRecord> = of(Protocol::H1).take(1).collect();
    if s.protocol == Protocol::Grpc {
        let h2c = of(Protocol::H2c)
            .find(|b| b.streams == s.streams)
            .or_else(|| of(Protocol::H2c).next());
        out.extend(h2c);
    }
    out
}

/// The section's rows: for every throughput scenario not over HTTP/1.1, each
/// baseline, each connection count both have and each server (in `columns`
/// order) with a good repetition in both cells. A protocol scenario without
/// a baseline in the suite has no rows.
pub(crate) fn protocol_rows(
    scenarios: &[ScenarioRecord],
    columns: &[String],
    cells: &[Cell],
) -> Vec<ProtocolRow> {
    let cell_of = |test: &str, c: u32, server: &str| {
        cells
            .iter()
            .find(|x| x.test == test && x.connections == c && x.server == server)
    };
    let mut rows = Vec::new();
    for s in scenarios
        .iter()
        .filter(|s| s.protocol != Protocol::H1 && s.in_throughput_tables())
    {
        for base in baselines(s, scenarios) {
            for &c in s
                .connections
                .iter()
                .filter(|c| base.connections.contains(c))
            {
                for server in columns {
                    let (Some(p), Some(b)) =
                        (cell_of(&s.name, c, server), cell_of(&base.name, c, server))
                    else {
                        continue;
                    };
                    let (Some(pr), Some(br)) = (p.stats.rps, b.stats.rps) else {
                        continue;
                    };
                    if br.median <= 0.0 || !pr.median.is_finite() {
                        continue;
                    }
                    let ci = welch_change_ci(&b.stats.rps_values, &p.stats.rps_values);
                    rows.push(ProtocolRow {
                        server: server.clone(),
                        test: s.name.clone(),
                        protocol: s.protocol,
                        streams: s.streams,
                        endpoint: s.endpoint.clone(),
                        connections: c,
                        baseline_test: base.name.clone(),
                        baseline_protocol: base.protocol,
                        baseline_streams: base.streams,
                        rps: pr.median,
                        baseline_rps: br.median,
                        ratio: pr.median / br.median,
                        change_ci95: ci,
                        told_apart: ci.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0),
                        flags: p.flags.clone(),
                        baseline_flags: b.flags.clone(),
                    });
                }
            }
        }
    }
    rows
}

/// The rows laid out for reading: a table per endpoint and connection
/// count, a column per comparison (protocol scenario and baseline), a row
/// per server.
#[derive(Debug, Clone)]
pub(crate) struct ProtocolTable<'a> {
    pub endpoint: &'a str,
    pub connections: u32,
    /// Each column's first row, for its titles.
    pub columns: Vec<&'a ProtocolRow>,
    /// Per server (in the report's column order), a row per column.
    pub rows: Vec<(&'a str, Vec<Option<&'a ProtocolRow>>)>,
}

impl ProtocolTable<'_> {
    /// The comparison of column `i` as its head says it: "TLS" over
    /// "blank-tls ÷ blank-h1".
    pub fn column_title(&self, i: usize) -> (String, String) {
        let c = self.columns[i];
        let what = protocol_title(c.protocol, c.streams);
        let title = if c.baseline_protocol == Protocol::H1 {
            what
        } else {
            format!(
                "{what}, against {}",
                baseline_title(c.baseline_protocol, c.baseline_streams, c.streams)
                    .replace('-', " ")
            )
        };
        (title, format!("{} ÷ {}", c.test, c.baseline_test))
    }
}

/// The section's tables, in the order the rows come (the suite's).
pub(crate) fn tables(rows: &[ProtocolRow]) -> Vec<ProtocolTable<'_>> {
    let mut out: Vec<ProtocolTable> = Vec::new();
    for r in rows {
        let t = match out
            .iter_mut()
            .position(|t| t.endpoint == r.endpoint && t.connections == r.connections)
        {
            Some(i) => &mut out[i],
            None => {
                out.push(ProtocolTable {
                    endpoint: &r.endpoint,
                    connections: r.connections,
                    columns: Vec::new(),
                    rows: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        if !t
            .columns
            .iter()
            .any(|c| c.test == r.test && c.baseline_test == r.baseline_test)
        {
            t.columns.push(r);
        }
    }
    for t in &mut out {
        // Servers in the order the rows name them: the report's columns.
        let mut servers: Vec<&str> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.endpoint == t.endpoint && r.connections == t.connections)
        {
            if !servers.contains(&r.server.as_str()) {
                servers.push(&r.server);
            }
        }
        t.rows = servers
            .into_iter()
            .map(|server| {
                let cells = t
                    .columns
                    .iter()
                    .map(|c| {
                        rows.iter().find(|r| {
                            r.server == server
                                && r.connections == t.connections
                                && r.test == c.test
                                && r.baseline_test == c.baseline_test
                        })
                    })
                    .collect();
                (server, cells)
            })
            .collect();
    }
    out
}

/// What the section shows, for the Markdown, the terminal and the page.
pub(crate) const LEGEND: &str = "Each server against its own HTTP/1.1 on cleartext at the same \
    endpoint and connection count (gRPC also against JSON over the same cleartext HTTP/2, h2c): \
    the change of its median requests/s. \"costs 18%\": 18% fewer requests/s over the protocol; \
    \"gains\": more; \"≈\": the repetitions do not tell it from no change. Then the ratio of the \
    medians (×0.82) and the 95% interval of the change (Welch's t on the logarithms of the \
    repetitions, as compare gives it; wide with 2 or 3 repetitions). A bare change (−9.0%, \
    \"one repetition\") has no interval: a cell had fewer than two good repetitions. \
    Marks after a figure are its two cells' (C client-bound, ~ noisy, …).";

/// The section as Markdown (also the terminal's): a table per endpoint and
/// connection count; nothing for a run without protocol rows.
pub(crate) fn write_markdown(out: &mut impl Write, rows: &[ProtocolRow]) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "#### Protocols\n\n{LEGEND}\n")?;
    for t in tables(rows) {
        let heads: Vec<String> = (0..t.columns.len())
            .map(|i| {
                let (title, tests) = t.column_title(i);
                cell(&format!("{title} ({tests})"))
            })
            .collect();
        writeln!(
            out,
            "| server ({} at {} conn.) | {} |",
            cell(t.endpoint),
            thousands(u64::from(t.connections)),
            heads.join(" | ")
        )?;
        writeln!(out, "|---|{}", "---:|".repeat(heads.len()))?;
        for (server, row) in &t.rows {
            let values: Vec<String> = row
                .iter()
                .map(|r| match r {
                    None => "-".into(),
                    Some(r) => {
                        let marks = r.marks();
                        let marks = if marks.is_empty() {
                            String::new()
                        } else {
                            format!(" {marks}")
                        };
                        cell(&format!("{} ({}){marks}", r.verdict(), r.detail()))
                    }
                })
                .collect();
            writeln!(out, "| {} | {} |", cell(server), values.join(" | "))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
