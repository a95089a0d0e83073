//! The contract's optional parts in a run (CONTRACT.md, version 1.1): which
//! servers do not offer a part the suite measures (their cells are left out,
//! never failed), and the back end the run started for them.

use netbench_suite::store::RunDetail;
use netbench_suite::{parse_manifest, Suite};

/// One line per server that does not offer a part the run's scenarios
/// need: "java-jdk does not offer ws".
pub(crate) fn not_offered(run: &RunDetail) -> Vec<String> {
    let Ok(suite) = Suite::parse(&run.suite, &run.suite_toml) else {
        return Vec::new();
    };
    let mut parts: Vec<_> = suite
        .scenarios
        .iter()
        .filter_map(|s| s.endpoint.needs())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    let mut out = Vec::new();
    for s in run
        .servers
        .iter()
        .filter(|s| s.excluded_reason.is_none() && s.variant.is_empty())
    {
        let Ok(m) = parse_manifest("server.toml".as_ref(), &s.server, &s.manifest_toml) else {
            continue;
        };
        let missing: Vec<&str> = parts
            .iter()
            .filter(|&&p| !m.offers(p))
            .map(|p| p.as_str())
            .collect();
        if !missing.is_empty() {
            out.push(format!(
                "{} does not offer {}",
                s.server,
                missing.join(" or ")
            ));
        }
    }
    out
}

/// The run's PostgreSQL, as a sentence, when it started one.
pub(crate) fn backend_note(run: &RunDetail) -> Option<String> {
    let pg = run.environment.get("postgresql")?;
    Some(format!(
        "db cells read PostgreSQL {}: {}; its CPU time is not in the server's CPU figures.",
        pg["version"].as_str().unwrap_or("(version unknown)"),
        pg["where"].as_str().unwrap_or("private, on 127.0.0.1")
    ))
}

/// Both, as the lines under a table; empty when the run has neither.
pub(crate) fn notes(run: &RunDetail) -> Vec<String> {
    let mut out: Vec<String> = backend_note(run).into_iter().collect();
    let missing = not_offered(run);
    if !missing.is_empty() {
        out.push(format!(
            "not offered (those cells are left out, not failed): {}.",
            missing.join("; ")
        ));
    }
    out
}
