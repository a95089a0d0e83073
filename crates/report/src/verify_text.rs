//! The result of `netbench verify`, as lines a person reads and as JSON.

use std::io::{self, Write};

use netbench_contract::{CheckStatus, ConformanceReport, VerifyReport, CONTRACT_VERSION};
use serde_json::{json, Value};

use crate::format::first_line_safe;

fn label(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Pass => "PASS",
        CheckStatus::Warn => "WARN",
        CheckStatus::Fail => "FAIL",
    }
}

pub fn write_verify_text(out: &mut impl Write, url: &str, r: &VerifyReport) -> io::Result<()> {
    writeln!(
        out,
        "netbench verify {url} (contract v{CONTRACT_VERSION}, seed {})",
        r.seed
    )?;
    let width = r.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &r.checks {
        writeln!(
            out,
            "  {}  {:<width$}  {}",
            label(c.status),
            c.name,
            first_line_safe(&c.reason)
        )?;
    }
    for part in &r.skipped {
        writeln!(out, "  skipped: {}", first_line_safe(part))?;
    }
    if let Some(c) = &r.conformance {
        write_conformance_cases(out, c)?;
    }
    writeln!(
        out,
        "verify: {} checks passed, {} warned, {} failed: {}",
        r.count(CheckStatus::Pass),
        r.count(CheckStatus::Warn),
        r.count(CheckStatus::Fail),
        if r.ok() {
            "conforms"
        } else {
            "does NOT conform"
        }
    )
}

pub fn verify_json(url: &str, r: &VerifyReport) -> Value {
    json!({
        "schema_version": 1,
        "contract_version": CONTRACT_VERSION,
        "url": url,
        "seed": r.seed,
        "conforms": r.ok(),
        "passed": r.count(CheckStatus::Pass),
        "warned": r.count(CheckStatus::Warn),
        "failed": r.count(CheckStatus::Fail),
        "checks": r.checks,
        "skipped": r.skipped,
        "conformance": r.conformance,
    })
}

/// The score line and every failed case, one line each.
fn write_conformance_cases(out: &mut impl Write, c: &ConformanceReport) -> io::Result<()> {
    writeln!(
        out,
        "  conformance: {}/{} HTTP/1.1 cases passed (a score, not a check)",
        c.passed, c.total
    )?;
    let width = c.failed().map(|f| f.id.len()).max().unwrap_or(0);
    for f in c.failed() {
        writeln!(
            out,
            "    FAIL  {:<width$}  {}  {}",
            f.id,
            f.rfc,
            first_line_safe(&f.reason)
        )?;
    }
    Ok(())
}

/// `verify --conformance-only`: the probes' score and failed cases.
pub fn write_conformance_text(
    out: &mut impl Write,
    url: &str,
    path: &str,
    c: &ConformanceReport,
) -> io::Result<()> {
    writeln!(
        out,
        "netbench verify --conformance-only {url} (probing {})",
        first_line_safe(path)
    )?;
    write_conformance_cases(out, c)?;
    writeln!(
        out,
        "conformance: {} of {} cases passed, {} failed",
        c.passed,
        c.total,
        c.total - c.passed
    )
}

pub fn conformance_json(url: &str, path: &str, c: &ConformanceReport) -> Value {
    json!({
        "schema_version": 1,
        "url": url,
        "path": path,
        "conformance": c,
    })
}
