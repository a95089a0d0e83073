//! The Conformance section's rows (issue 33), built once from each server's
//! stored verify JSON (`servers.verify`'s `conformance` object): per server
//! its HTTP/1.1 probes' score and the cases it failed, best score first.
//! A score beside the measurements, never a reason a server was left out.

use netbench_contract::ConformanceReport;
use netbench_records::RunDetail;
use serde::Serialize;

use crate::suite_table::label;

/// One server's conformance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConformanceRow {
    pub server: String,
    pub passed: u32,
    pub total: u32,
    /// The cases it failed, in the probes' order.
    pub failed: Vec<FailedCase>,
}

/// A case a server failed, with the section it comes from and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedCase {
    pub id: String,
    pub rfc: String,
    pub title: String,
    pub reason: String,
}

impl ConformanceRow {
    /// The share of cases passed, 0 to 1.
    pub fn share(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            f64::from(self.passed) / f64::from(self.total)
        }
    }

    /// The failed cases' ids, comma-separated ("none" when there are none).
    pub fn failed_ids(&self) -> String {
        if self.failed.is_empty() {
            return "none".to_string();
        }
        let ids: Vec<&str> = self.failed.iter().map(|f| f.id.as_str()).collect();
        ids.join(", ")
    }
}

/// What the section says the score is.
pub const LEGEND: &str = "HTTP/1.1 conformance probes (RFC 9112/9110 cases sent as raw bytes by \
`netbench verify --conformance`): cases passed of those run, and the ids of the cases failed. \
A score, not a gate: a server that fails cases is still measured.";

/// The conformance of `verify_json` (a stored VerifyReport), when it ran.
pub fn parse(verify_json: &str) -> Option<ConformanceReport> {
    let v: serde_json::Value = serde_json::from_str(verify_json).ok()?;
    let c = v.get("conformance")?;
    if c.is_null() {
        return None;
    }
    serde_json::from_value(c.clone()).ok()
}

/// Every server's row that has conformance results, best share first,
/// then by name.
pub fn conformance_rows(run: &RunDetail) -> Vec<ConformanceRow> {
    let mut rows: Vec<ConformanceRow> = run
        .servers
        .iter()
        .filter_map(|s| {
            let report = parse(s.verify_json.as_deref()?)?;
            Some(ConformanceRow {
                server: label(&s.server, &s.variant),
                passed: report.passed,
                total: report.total,
                failed: report
                    .failed()
                    .map(|c| FailedCase {
                        id: c.id.clone(),
                        rfc: c.rfc.clone(),
                        title: c.title.clone(),
                        reason: c.reason.clone(),
                    })
                    .collect(),
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.share()
            .total_cmp(&a.share())
            .then_with(|| a.server.cmp(&b.server))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORED: &str = r#"{"seed":1,"checks":[],"skipped":[],"conformance":{"passed":1,"total":2,
        "cases":[{"id":"cl-te","rfc":"RFC 9112 §6.3","title":"t","status":"fail","reason":"200, connection kept"},
                 {"id":"bare-lf","rfc":"RFC 9112 §2.2","title":"t","status":"pass","reason":"ok"}]}}"#;

    #[test]
    fn stored_conformance_is_read_and_absent_or_null_is_none() {
        let c = parse(STORED).unwrap();
        assert_eq!((c.passed, c.total), (1, 2));
        assert_eq!(
            c.failed().map(|f| f.id.as_str()).collect::<Vec<_>>(),
            ["cl-te"]
        );
        assert!(parse(r#"{"seed":1,"checks":[]}"#).is_none());
        assert!(parse(r#"{"seed":1,"checks":[],"conformance":null}"#).is_none());
        assert!(parse("not json").is_none());
    }

    #[test]
    fn rows_rank_by_share_then_name() {
        let row = |server: &str, passed| ConformanceRow {
            server: server.into(),
            passed,
            total: 4,
            failed: Vec::new(),
        };
        let mut rows = [row("b", 4), row("a", 2), row("c", 4)];
        rows.sort_by(|a, b| {
            b.share()
                .total_cmp(&a.share())
                .then_with(|| a.server.cmp(&b.server))
        });
        let names: Vec<&str> = rows.iter().map(|r| r.server.as_str()).collect();
        assert_eq!(names, ["b", "c", "a"]);
        assert_eq!(row("x", 0).failed_ids(), "none");
    }
}
