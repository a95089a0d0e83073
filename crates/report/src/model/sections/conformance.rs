//! The Conformance section (issue 33): a row per probed server with its
//! score and the cases it failed, best first, from `Report::conformance`
//! (conformance.rs reads them from the stored verify results once).

use crate::conformance::LEGEND;
use crate::model::section::{Code, CsvMetric, Section, Table, Value};
use crate::model::Report;

pub(super) fn section(r: &Report) -> Option<Section> {
    if r.conformance.is_empty() {
        return None;
    }
    let mut table = Table::new("", &["server", "passed", "failed cases"]);
    table.class = "conformance";
    let mut csv = Vec::new();
    for row in &r.conformance {
        table.rows.push(vec![
            Value::Server(row.server.clone()),
            Value::Score {
                passed: row.passed,
                total: row.total,
            },
            Value::Codes(
                row.failed
                    .iter()
                    .map(|f| Code {
                        code: f.id.clone(),
                        title: format!("{} · {} · {}", f.rfc, f.title, f.reason),
                    })
                    .collect(),
            ),
        ]);
        for (metric, value) in [
            ("conformance_passed", row.passed),
            ("conformance_total", row.total),
        ] {
            csv.push(CsvMetric {
                test: None,
                connections: None,
                server: Some(row.server.clone()),
                metric: metric.into(),
                unit: "cases",
                value: f64::from(value),
            });
        }
    }
    Some(Section {
        id: "conformance",
        title: "Conformance".into(),
        legend: LEGEND.into(),
        hover: Some("Hover a failed case for its RFC section and what came back."),
        notes: Vec::new(),
        tables: vec![table],
        csv,
        failures: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::conformance::{ConformanceRow, FailedCase};

    fn report() -> crate::Report {
        let mut r = crate::build_report(&netbench_records::fixtures::run(1, "t"));
        r.conformance = vec![ConformanceRow {
            server: "a|b".into(),
            passed: 30,
            total: 31,
            failed: vec![FailedCase {
                id: "cl-te".into(),
                rfc: "RFC 9112 §6.3".into(),
                title: "<t>".into(),
                reason: "200, connection kept".into(),
            }],
        }];
        r.sections = super::super::build(&r);
        r
    }

    #[test]
    fn markdown_lists_score_and_failed_ids_and_html_their_meaning() {
        let r = report();
        let mut out = Vec::new();
        crate::view::markdown::section_by_id(&mut out, &r, "conformance").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("#### Conformance\n\n"), "{text}");
        assert!(
            text.contains("| server | passed | failed cases |\n|---|---:|---|\n"),
            "{text}"
        );
        assert!(text.contains("| a\\|b | 30/31 | cl-te |"), "{text}");
        let mut html = String::new();
        crate::view::html::section_by_id(&mut html, &r, &[], "conformance");
        assert!(
            html.contains("<table class=\"grid conformance\">"),
            "{html}"
        );
        assert!(
            html.contains(
                "<code title=\"RFC 9112 §6.3 · &lt;t&gt; · 200, connection kept\">cl-te</code>"
            ),
            "{html}"
        );
        assert!(html.contains(">30/31 <span class=\"bar\""), "{html}");
        // Without probes, no section.
        let mut empty = report();
        empty.conformance.clear();
        empty.sections = super::super::build(&empty);
        assert!(empty.sections.iter().all(|s| s.id != "conformance"));
    }
}
