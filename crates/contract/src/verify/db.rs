//! The `db` checks (CONTRACT.md, "db"): answers equal to what the database
//! holds, lists, error statuses, and answers that follow rows `verify`
//! changes through its own connection, so a server that caches is caught.

use netbench_engine::BodyExpect;
use postgres::{Client as Pg, NoTls};
use serde_json::Value;

use super::checks::{clip, get_ok};
use super::{fail, pass, Check, Ctx};
use crate::db::{list_path, row_path, Row, DEFAULT_COUNT, ROWS, SELECT_ROWS};
use crate::rng::SplitMix64;

const NAMES: [&str; 4] = ["db-row", "db-list", "db-follows", "db-errors"];

/// Every db check, against the database at `url`. A database that cannot be
/// reached fails each check with the reason (the server cannot be judged).
pub(super) fn checks(ctx: &mut Ctx<'_>, url: &str) -> Vec<Check> {
    let mut pg = match Pg::connect(url, NoTls) {
        Ok(pg) => pg,
        Err(e) => {
            let why = format!("cannot connect to the database {url}: {e}");
            return NAMES.iter().map(|n| fail(n, why.clone())).collect();
        }
    };
    let mut rng = SplitMix64::new(ctx.opts.seed ^ 0xdb);
    vec![
        rows(ctx, &mut pg, &mut rng),
        lists(ctx, &mut pg, &mut rng),
        follows(ctx, &mut pg, &mut rng),
        errors(ctx),
    ]
}

fn read_rows(pg: &mut Pg, filter: &str) -> Result<Vec<Row>, String> {
    let sql = format!("{SELECT_ROWS} {filter}");
    let rows = pg.query(&sql, &[]).map_err(|e| format!("{sql}: {e}"))?;
    Ok(rows.iter().map(Row::from_sql).collect())
}

fn read_row(pg: &mut Pg, id: i32) -> Result<Row, String> {
    read_rows(pg, &format!("WHERE id = {id}"))?
        .pop()
        .ok_or_else(|| format!("the database has no row {id}: was contract/db/schema.sql loaded?"))
}

/// Why the answer to GET `path` is not `want`, if it is not.
fn answer_problem(ctx: &mut Ctx<'_>, path: &str, want: &Value) -> Option<String> {
    let r = match get_ok(ctx, path, "application/json") {
        Ok(r) => r,
        Err(e) => return Some(e),
    };
    if !BodyExpect::json(want.clone()).matches(&r.body) {
        return Some(format!(
            "GET {path}: expected {}, got `{}`",
            clip(&want.to_string()),
            clip(&r.body_text())
        ));
    }
    None
}

fn rows(ctx: &mut Ctx<'_>, pg: &mut Pg, rng: &mut SplitMix64) -> Check {
    const N: usize = 20;
    for _ in 0..N {
        let id = 1 + rng.below(ROWS as u64) as i32;
        let want = match read_row(pg, id) {
            Ok(r) => r.to_json(),
            Err(e) => return fail("db-row", e),
        };
        if let Some(p) = answer_problem(ctx, &row_path(id), &want) {
            return fail("db-row", p);
        }
    }
    pass(
        "db-row",
        format!("{N} random ids each answered their own row"),
    )
}

fn lists(ctx: &mut Ctx<'_>, pg: &mut Pg, rng: &mut SplitMix64) -> Check {
    let from = 1 + rng.below((ROWS - DEFAULT_COUNT as i32) as u64) as i32;
    let cases: [(i32, Option<u32>); 3] = [
        (from, None),
        (1 + rng.below(ROWS as u64) as i32, Some(1)),
        (ROWS - 9, Some(DEFAULT_COUNT)),
    ];
    for (from, count) in cases {
        let n = count.unwrap_or(DEFAULT_COUNT);
        let want = match read_rows(pg, &format!("WHERE id >= {from} ORDER BY id LIMIT {n}")) {
            Ok(rows) => Value::Array(rows.iter().map(Row::to_json).collect()),
            Err(e) => return fail("db-list", e),
        };
        let path = match count {
            Some(c) => list_path(from, c),
            None => format!("/db/list?from={from}"),
        };
        if let Some(p) = answer_problem(ctx, &path, &want) {
            return fail("db-list", p);
        }
    }
    pass(
        "db-list",
        format!("the default count ({DEFAULT_COUNT} rows), count=1 and the last 10 rows"),
    )
}

/// Reads a row, changes it in the database, reads it again, and puts it
/// back: a server that kept the first answer shows the old row.
fn follows(ctx: &mut Ctx<'_>, pg: &mut Pg, rng: &mut SplitMix64) -> Check {
    const N: usize = 5;
    for round in 0..N {
        let id = 1 + rng.below(ROWS as u64) as i32;
        let original = match read_row(pg, id) {
            Ok(r) => r,
            Err(e) => return fail("db-follows", e),
        };
        if let Some(p) = answer_problem(ctx, &row_path(id), &original.to_json()) {
            return fail("db-follows", p);
        }
        let changed = Row {
            id,
            name: format!("changed-{}", rng.next_u64() % 1_000_000),
            description: format!("changed by netbench verify, round {round}"),
            quantity: (rng.below(1000)) as i32,
            price_cents: rng.below(10_000_000) as i64,
            updated_ms: original.updated_ms + 1 + rng.below(86_400_000) as i64,
        };
        if let Err(e) = pg.batch_execute(&changed.update_sql()) {
            return fail("db-follows", format!("cannot change row {id}: {e}"));
        }
        let after = answer_problem(ctx, &row_path(id), &changed.to_json());
        let restored = pg.batch_execute(&original.update_sql());
        if let Some(p) = after {
            return fail(
                "db-follows",
                format!(
                    "after row {id} was changed in the database: {p} (an answer from a cache?)"
                ),
            );
        }
        if let Err(e) = restored {
            return fail("db-follows", format!("cannot put row {id} back: {e}"));
        }
        if let Some(p) = answer_problem(ctx, &row_path(id), &original.to_json()) {
            return fail("db-follows", format!("after row {id} was put back: {p}"));
        }
    }
    pass(
        "db-follows",
        format!("{N} rows changed through another connection were answered as changed, then as put back"),
    )
}

fn errors(ctx: &mut Ctx<'_>) -> Check {
    let cases: [(&str, u16); 9] = [
        ("/db?id=0", 404),
        ("/db?id=10001", 404),
        ("/db?id=abc", 400),
        ("/db?id=1.5", 400),
        ("/db?id=", 400),
        ("/db", 400),
        ("/db?id=2147483648", 400),
        ("/db/list?from=1&count=0", 400),
        ("/db/list?from=1&count=1001", 400),
    ];
    for (path, want) in cases {
        let full = ctx.path(path);
        match ctx.client().request("GET", &full, None) {
            Err(e) => return fail("db-errors", format!("GET {path}: {e}")),
            Ok(r) if r.status != want => {
                return fail(
                    "db-errors",
                    format!("GET {path} answered {}, want {want}", r.status),
                )
            }
            Ok(r) => ctx.saw(&format!("GET {path}"), &r),
        }
    }
    pass(
        "db-errors",
        "missing ids are 404; bad ids and counts are 400",
    )
}
