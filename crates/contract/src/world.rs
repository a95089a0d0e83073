//! The contract's `queries` and `updates` parts (CONTRACT.md, "queries",
//! "updates"): TechEmpower's World table as a formula, the clamping of the
//! `queries` parameter, and the load requests with what their answers must
//! be.

use netbench_engine::{BodyExpect, Expect, RequestTemplate, StatusExpect, Url, WorldValue};

/// Rows in `world`: ids 1 to ROWS.
pub const WORLD_ROWS: i32 = 10_000;
/// The most rows one request asks for; more are clamped to this.
pub const MAX_QUERIES: usize = 500;
/// Rows each load request asks for: TechEmpower's middle step.
pub const LOAD_QUERIES: usize = 20;

/// What contract/db/schema.sql seeds `randomnumber` with for `id`.
pub fn world_seed(id: i64) -> i64 {
    1 + (id * 7919 + 13) % 10_000
}

/// Puts every row back to its seeded value: the runner runs it after each
/// updates cell, `verify` after its own changes.
pub const RESEED_SQL: &str =
    "UPDATE world SET randomnumber = 1 + (id * 7919 + 13) % 10000 WHERE randomnumber <> 1 + (id * 7919 + 13) % 10000";

/// The rows a request with `queries=<raw>` gets, TechEmpower's way: a
/// missing or non-integer value is 1, as is anything below 1; above 500 is
/// 500.
pub fn clamp_queries(raw: Option<&str>) -> usize {
    match raw.and_then(|v| v.parse::<i64>().ok()) {
        Some(n) if n > MAX_QUERIES as i64 => MAX_QUERIES,
        Some(n) if n >= 1 => n as usize,
        _ => 1,
    }
}

/// `/queries?queries=N`.
pub fn queries_path(n: usize) -> String {
    format!("/queries?queries={n}")
}

/// `/updates?queries=N`.
pub fn updates_path(n: usize) -> String {
    format!("/updates?queries={n}")
}

fn rows(count: usize, value: WorldValue) -> Expect {
    Expect {
        status: StatusExpect::Exact(200),
        content_type: Some("application/json".to_string()),
        body: BodyExpect::WorldRows { count, value },
        coding: Default::default(),
    }
}

/// `GET /queries?queries=20`: each row must hold its seeded number (the
/// table is as seeded while a queries cell runs).
pub fn queries_request(url: &Url, keepalive: bool) -> RequestTemplate {
    let expect = rows(LOAD_QUERIES, WorldValue::Seeded(world_seed));
    crate::requests::get(url, &queries_path(LOAD_QUERIES), keepalive, expect)
}

/// `GET /updates?queries=20`: each row a World row with a number in range
/// (what was written is `verify`'s to check, through the database).
pub fn updates_request(url: &Url, keepalive: bool) -> RequestTemplate {
    let expect = rows(LOAD_QUERIES, WorldValue::InRange);
    crate::requests::get(url, &updates_path(LOAD_QUERIES), keepalive, expect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::SCHEMA_SQL;

    #[test]
    fn the_parameter_is_clamped_as_techempower_does() {
        for (raw, want) in [
            (None, 1),
            (Some(""), 1),
            (Some("foo"), 1),
            (Some("0"), 1),
            (Some("-5"), 1),
            (Some("1"), 1),
            (Some("20"), 20),
            (Some("500"), 500),
            (Some("501"), 500),
        ] {
            assert_eq!(clamp_queries(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn the_formula_is_the_schemas_and_stays_in_range() {
        assert!(SCHEMA_SQL.contains("SELECT i, 1 + (i * 7919 + 13) % 10000"));
        assert!(RESEED_SQL.contains("1 + (id * 7919 + 13) % 10000"));
        for id in 1..=i64::from(WORLD_ROWS) {
            assert!((1..=10_000).contains(&world_seed(id)));
        }
    }
}
