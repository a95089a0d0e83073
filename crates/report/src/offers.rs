//! The contract's optional parts in a run (CONTRACT.md, version 1.1): which
//! servers do not offer a part the suite measures (their cells are left out,
//! never failed), and the back end the run started for them.

use netbench_records::RunDetail;

/// One line per server that does not offer a part the run's scenarios
/// need: "java-jdk does not offer ws".
pub(crate) fn not_offered(run: &RunDetail) -> Vec<String> {
    let mut parts: Vec<_> = run.scenarios.iter().filter_map(|s| s.needs).collect();
    parts.sort_unstable();
    parts.dedup();
    run.servers
        .iter()
        .filter(|s| s.excluded_reason.is_none() && s.variant.is_empty())
        .filter_map(|s| {
            let missing: Vec<&str> = parts
                .iter()
                .filter(|p| !s.facts.offers.contains(p))
                .map(|p| p.as_str())
                .collect();
            (!missing.is_empty())
                .then(|| format!("{} does not offer {}", s.server, missing.join(" or ")))
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_records::{fixtures, Offer};

    #[test]
    fn a_server_that_does_not_offer_a_measured_part_is_named_with_it() {
        let mut run = fixtures::run(1, "t");
        let mut ws = fixtures::scenario(0, "ws", &[10]);
        ws.needs = Some(Offer::Ws);
        let mut db = fixtures::scenario(1, "db", &[10]);
        db.needs = Some(Offer::Db);
        run.scenarios = vec![ws, db, fixtures::scenario(2, "blank", &[10])];
        let mut both = fixtures::server("both", "");
        both.facts.offers = vec![Offer::Db, Offer::Ws];
        let mut db_only = fixtures::server("db-only", "");
        db_only.facts.offers = vec![Offer::Db];
        let neither = fixtures::server("neither", "");
        let mut left_out = fixtures::server("left-out", "");
        left_out.excluded_reason = Some("build failed".into());
        run.servers = vec![both, db_only, neither, left_out];
        assert_eq!(
            not_offered(&run),
            [
                "db-only does not offer ws",
                "neither does not offer db or ws"
            ]
        );
        // A run that measures no optional part names nobody.
        run.scenarios.truncate(0);
        assert!(not_offered(&run).is_empty());
    }
}
