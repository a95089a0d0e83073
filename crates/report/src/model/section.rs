//! A section of the report as data (issue 44 item 1): an id, a title, a
//! legend, notes a reader needs first, tables of typed values, the CSV
//! metrics behind them and the failures they leave out. Every view (HTML,
//! Markdown, terminal, CSV) writes any section with one loop of its own
//! (`crate::view`), so a section is written once, here, and never per view;
//! the model never imports a view.

use netbench_stats::{Estimate, RankInterval};

use crate::format::{format_duration_ns, thousands};

/// One section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The HTML section's id and the anchor the page links to.
    pub id: &'static str,
    pub title: String,
    /// What the figures are and how they were made, under the title
    /// (Markdown's backticks are dropped in HTML).
    pub legend: String,
    /// A sentence only a page with a pointer needs ("Hover a failed case
    /// for ..."), after the legend in HTML.
    pub hover: Option<&'static str>,
    /// What a reader must see before the tables (a row whose leaders are
    /// client-bound, twins that did not tie).
    pub notes: Vec<String>,
    pub tables: Vec<Table>,
    /// The figures behind the tables, one CSV row each.
    pub csv: Vec<CsvMetric>,
    /// Cells the section could not show, with why.
    pub failures: Vec<String>,
}

/// A table of typed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// A line above the table (the row it ranks, say); empty for none.
    pub caption: String,
    /// The HTML table's class beside `grid` (its column widths); empty for
    /// none.
    pub class: &'static str,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

impl Table {
    pub fn new(caption: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            caption: caption.into(),
            class: "",
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

/// One value of a table: what it is, so each view can align, colour and
/// write it, and they all write the same text for it ([`Value::text`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A name or a phrase (left-aligned in Markdown).
    Text(String),
    /// A test's or a group's name (left-aligned in Markdown, a plain cell
    /// in HTML).
    Name(String),
    /// A figure already written ("12,345 (−8% ▼) · 1.20ms"; right-aligned).
    Figure(String),
    /// A whole number: "1,000".
    Count(u64),
    /// A row's heading (an HTML `th`), such as a server without a swatch.
    RowHead(String),
    /// A server's name (left-aligned; the HTML gives it its swatch).
    Server(String),
    /// Requests/s, or any rate per second, rounded to whole units.
    PerSecond(f64),
    /// A figure over rounds with its interval, in `unit`.
    Estimate { estimate: Estimate, unit: Unit },
    /// A rank and its interval.
    Rank(RankInterval),
    /// Flag marks (C ~ E F L P K W).
    Marks(String),
    /// A score: `passed` of `total` ("30/32", a bar of its share in HTML).
    Score { passed: u32, total: u32 },
    /// Short codes, each with what it stands for (hover text in HTML);
    /// "none" when empty.
    Codes(Vec<Code>),
    /// No figure.
    Missing,
}

/// A short code and its meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct Code {
    pub code: String,
    pub title: String,
}

/// How an [`Value::Estimate`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Requests/s: "104,000 [101,200–106,900]".
    PerSecond,
    /// A ratio: "1.052 [1.031–1.074]".
    Ratio,
    /// A ratio read as a share of the row: "1.12 ±1.5%".
    Relative,
    /// Nanoseconds shown as a duration.
    Nanoseconds,
    /// Microseconds: "12.5 µs [12.1–12.9]".
    Microseconds,
}

impl Value {
    /// The value as every view writes it.
    pub fn text(&self) -> String {
        match self {
            Value::Text(t) | Value::Server(t) | Value::Marks(t) => t.clone(),
            Value::Figure(t) | Value::RowHead(t) | Value::Name(t) => t.clone(),
            Value::Count(n) => thousands(*n),
            Value::PerSecond(v) => thousands(v.round().max(0.0) as u64),
            Value::Estimate { estimate, unit } => estimate_text(estimate, *unit),
            Value::Rank(r) => match r.ci95 {
                Some((lo, hi)) if lo == hi => format!("{lo}"),
                Some((lo, hi)) => format!("{lo}–{hi}"),
                None => format!("{}", r.rank),
            },
            Value::Score { passed, total } => format!("{passed}/{total}"),
            Value::Codes(codes) if codes.is_empty() => "none".into(),
            Value::Codes(codes) => codes
                .iter()
                .map(|c| c.code.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            Value::Missing => "-".into(),
        }
    }

    /// Whether it is a figure (right-aligned) rather than a name.
    pub fn is_figure(&self) -> bool {
        !matches!(
            self,
            Value::Text(_)
                | Value::Server(_)
                | Value::Marks(_)
                | Value::Codes(_)
                | Value::RowHead(_)
                | Value::Name(_)
        )
    }
}

fn one(v: f64, unit: Unit) -> String {
    match unit {
        Unit::PerSecond => thousands(v.round().max(0.0) as u64),
        Unit::Ratio => format!("{v:.3}"),
        Unit::Relative => format!("{v:.3}"),
        Unit::Nanoseconds => format_duration_ns(v),
        Unit::Microseconds => format!("{v:.1}"),
    }
}

/// "104,000 [101,200–106,900]", "1.12 ±1.5%", "12.5 µs [12.1–12.9]".
pub fn estimate_text(e: &Estimate, unit: Unit) -> String {
    let suffix = if unit == Unit::Microseconds {
        " µs"
    } else {
        ""
    };
    let value = format!("{}{suffix}", one(e.value, unit));
    match (unit, e.ci95) {
        (Unit::Relative, Some(_)) => match crate::suite_table::spread_text(e.half_width()) {
            Some(s) => format!("{value} {s}"),
            None => value,
        },
        (_, Some((lo, hi))) => format!("{value} [{}–{}]", one(lo, unit), one(hi, unit)),
        (_, None) => value,
    }
}

/// One figure of the CSV's long format: the cell it belongs to (fields
/// that do not apply left empty), the metric's name, unit and value.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvMetric {
    pub test: Option<String>,
    pub connections: Option<u32>,
    pub server: Option<String>,
    pub metric: String,
    pub unit: &'static str,
    pub value: f64,
}

impl CsvMetric {
    /// A figure of one cell.
    pub fn cell(
        test: &str,
        connections: u32,
        server: &str,
        metric: &str,
        unit: &'static str,
        value: f64,
    ) -> CsvMetric {
        CsvMetric {
            test: Some(test.to_string()),
            connections: Some(connections),
            server: Some(server.to_string()),
            metric: metric.to_string(),
            unit,
            value,
        }
    }

    /// An estimate as three metrics: `name`, `name_ci95_low` and
    /// `name_ci95_high` (the last two only with an interval).
    pub fn estimate(
        test: &str,
        connections: u32,
        server: &str,
        name: &str,
        unit: &'static str,
        e: &Estimate,
    ) -> Vec<CsvMetric> {
        let mut out = vec![CsvMetric::cell(
            test,
            connections,
            server,
            name,
            unit,
            e.value,
        )];
        if let Some((lo, hi)) = e.ci95 {
            out.push(CsvMetric::cell(
                test,
                connections,
                server,
                &format!("{name}_ci95_low"),
                unit,
                lo,
            ));
            out.push(CsvMetric::cell(
                test,
                connections,
                server,
                &format!("{name}_ci95_high"),
                unit,
                hi,
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_alike_everywhere() {
        let e = Estimate {
            value: 104_000.4,
            n: 10,
            ci95: Some((101_200.0, 106_900.0)),
        };
        let v = Value::Estimate {
            estimate: e,
            unit: Unit::PerSecond,
        };
        assert_eq!(v.text(), "104,000 [101,200–106,900]");
        let rel = Estimate {
            value: 1.12,
            n: 10,
            ci95: Some((1.10, 1.14)),
        };
        assert_eq!(estimate_text(&rel, Unit::Relative), "1.120 ±2%");
        let cpu = Estimate {
            value: 12.5,
            n: 10,
            ci95: Some((12.1, 12.94)),
        };
        assert_eq!(
            estimate_text(&cpu, Unit::Microseconds),
            "12.5 µs [12.1–12.9]"
        );
        let few = Estimate { ci95: None, ..cpu };
        assert_eq!(estimate_text(&few, Unit::Microseconds), "12.5 µs");
        let rank = RankInterval {
            rank: 2,
            ci95: Some((1, 3)),
        };
        assert_eq!(Value::Rank(rank).text(), "1–3");
        assert_eq!(
            Value::Rank(RankInterval {
                rank: 2,
                ci95: Some((2, 2))
            })
            .text(),
            "2"
        );
        assert!(!Value::Server("a".into()).is_figure());
        assert!(Value::Missing.is_figure());
        let m = CsvMetric::estimate("blank", 100, "a", "relative", "ratio", &rel);
        let names: Vec<&str> = m.iter().map(|m| m.metric.as_str()).collect();
        assert_eq!(
            names,
            ["relative", "relative_ci95_low", "relative_ci95_high"]
        );
    }
}
