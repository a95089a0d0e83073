//! The `queries` and `updates` checks (CONTRACT.md, "queries", "updates"):
//! rows equal to what the database holds, TechEmpower's clamping of the
//! `queries` parameter, answers that follow the table when `verify` changes
//! it through its own connection, and updates that are written.

use std::collections::HashMap;

use netbench_engine::{world_rows_problem, WorldValue};
use postgres::{Client as Pg, NoTls};
use serde_json::Value;

use super::checks::{clip, get_ok};
use super::{fail, pass, Check, Ctx};
use crate::world::{queries_path, updates_path, world_seed, MAX_QUERIES, RESEED_SQL};

const QUERIES: [&str; 3] = ["queries-rows", "queries-clamp", "queries-follows"];
const UPDATES: [&str; 2] = ["updates-rows", "updates-written"];

fn connect(url: &str, names: &[&'static str]) -> Result<Pg, Vec<Check>> {
    Pg::connect(url, NoTls).map_err(|e| {
        let why = format!("cannot connect to the database {url}: {e}");
        names.iter().map(|n| fail(n, why.clone())).collect()
    })
}

/// Every queries check, against the database at `url`.
pub(super) fn queries_checks(ctx: &mut Ctx<'_>, url: &str) -> Vec<Check> {
    let mut pg = match connect(url, &QUERIES) {
        Ok(pg) => pg,
        Err(checks) => return checks,
    };
    vec![
        queries_rows(ctx, &mut pg),
        clamp(ctx, "queries-clamp", queries_path),
        follows(ctx, &mut pg),
    ]
}

/// Every updates check, against the database at `url`.
pub(super) fn updates_checks(ctx: &mut Ctx<'_>, url: &str) -> Vec<Check> {
    let mut pg = match connect(url, &UPDATES) {
        Ok(pg) => pg,
        Err(checks) => return checks,
    };
    vec![
        clamp(ctx, "updates-rows", updates_path),
        written(ctx, &mut pg),
    ]
}

fn table(pg: &mut Pg) -> Result<HashMap<i64, i64>, String> {
    let rows = pg
        .query("SELECT id, randomnumber FROM world", &[])
        .map_err(|e| format!("reading world: {e} (was contract/db/schema.sql loaded?)"))?;
    Ok(rows
        .iter()
        .map(|r| (i64::from(r.get::<_, i32>(0)), i64::from(r.get::<_, i32>(1))))
        .collect())
}

/// The rows of GET `path`, checked for shape and count (`count`), or why
/// the answer is wrong.
fn fetch_rows(ctx: &mut Ctx<'_>, path: &str, count: usize) -> Result<Vec<(i64, i64)>, String> {
    let r = get_ok(ctx, path, "application/json")?;
    if let Some(p) = world_rows_problem(&r.body, count, WorldValue::InRange) {
        return Err(format!("GET {path}: {p} (`{}`)", clip(&r.body_text())));
    }
    let rows: Vec<Value> = serde_json::from_slice(&r.body).map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .map(|o| {
            (
                o["id"].as_i64().unwrap_or(0),
                o["randomNumber"].as_i64().unwrap_or(0),
            )
        })
        .collect())
}

/// Why `rows` are not what `table` holds, if they are not.
fn against(table: &HashMap<i64, i64>, rows: &[(i64, i64)]) -> Option<String> {
    rows.iter().find_map(|(id, n)| {
        let want = table.get(id).copied().unwrap_or(-1);
        (want != *n).then(|| format!("row {id} answered randomNumber {n}, the table holds {want}"))
    })
}

fn queries_rows(ctx: &mut Ctx<'_>, pg: &mut Pg) -> Check {
    let world = match table(pg) {
        Ok(t) => t,
        Err(e) => return fail("queries-rows", e),
    };
    let mut distinct = std::collections::HashSet::new();
    for n in [1, 5, 20, 20] {
        let path = queries_path(n);
        let rows = match fetch_rows(ctx, &path, n) {
            Ok(r) => r,
            Err(e) => return fail("queries-rows", e),
        };
        if let Some(p) = against(&world, &rows) {
            return fail("queries-rows", format!("GET {path}: {p}"));
        }
        distinct.extend(rows.iter().map(|(id, _)| *id));
    }
    // 46 ids drawn from 10,000: a server that always answers the same few
    // rows has not drawn them at random.
    if distinct.len() < 30 {
        return fail(
            "queries-rows",
            format!(
                "46 rows asked for gave only {} distinct ids: ids must be random",
                distinct.len()
            ),
        );
    }
    pass(
        "queries-rows",
        format!(
            "1, 5, 20 and 20 rows, each what the table holds ({} distinct ids)",
            distinct.len()
        ),
    )
}

/// TechEmpower's clamping on `path_of(n)`'s endpoint.
fn clamp(ctx: &mut Ctx<'_>, name: &'static str, path_of: fn(usize) -> String) -> Check {
    let base = path_of(1);
    let (route, _) = base.split_once('?').unwrap_or((&base, ""));
    let cases: [(String, usize); 6] = [
        (route.to_string(), 1),
        (format!("{route}?queries="), 1),
        (format!("{route}?queries=foo"), 1),
        (format!("{route}?queries=0"), 1),
        (path_of(MAX_QUERIES + 1), MAX_QUERIES),
        (path_of(2), 2),
    ];
    for (path, want) in &cases {
        if let Err(e) = fetch_rows(ctx, path, *want) {
            return fail(name, e);
        }
    }
    pass(
        name,
        format!("no value, an empty one, foo and 0 each gave 1 row, 501 gave {MAX_QUERIES}"),
    )
}

/// Changes every row through another connection, asks again, and puts the
/// table back: a server that kept rows shows the old numbers.
fn follows(ctx: &mut Ctx<'_>, pg: &mut Pg) -> Check {
    const SHIFT: &str = "UPDATE world SET randomnumber = 1 + (randomnumber + 4999) % 10000";
    // 500 rows before and 500 after share about 25 ids: a server that keeps
    // rows it has read answers some of them from before the change.
    if let Err(e) = fetch_rows(ctx, &queries_path(MAX_QUERIES), MAX_QUERIES) {
        return fail("queries-follows", e);
    }
    if let Err(e) = pg.batch_execute(SHIFT) {
        return fail("queries-follows", format!("cannot change world: {e}"));
    }
    let after = table(pg).and_then(|world| {
        let rows = fetch_rows(ctx, &queries_path(MAX_QUERIES), MAX_QUERIES)?;
        match against(&world, &rows) {
            Some(p) => Err(format!(
                "after every row was changed in the database: {p} (rows from a cache?)"
            )),
            None => Ok(()),
        }
    });
    let restored = pg.batch_execute(RESEED_SQL);
    if let Err(e) = after {
        return fail("queries-follows", e);
    }
    if let Err(e) = restored {
        return fail("queries-follows", format!("cannot put world back: {e}"));
    }
    pass(
        "queries-follows",
        "500 rows asked for after every row was changed through another connection showed the change",
    )
}

/// Updates 20 rows, then reads the table: each answered row must be in it,
/// as answered. Then the table is put back.
fn written(ctx: &mut Ctx<'_>, pg: &mut Pg) -> Check {
    // From the seeded table, so that a row left unchanged shows.
    if let Err(e) = pg.batch_execute(RESEED_SQL) {
        return fail("updates-written", format!("cannot seed world: {e}"));
    }
    let result = (|| {
        let rows = fetch_rows(ctx, &updates_path(20), 20)?;
        let world = table(pg)?;
        // An id drawn twice was written twice: either number may be last.
        let mut answered: HashMap<i64, Vec<i64>> = HashMap::new();
        for (id, n) in &rows {
            answered.entry(*id).or_default().push(*n);
        }
        for (id, numbers) in &answered {
            let now = world.get(id).copied().unwrap_or(-1);
            if !numbers.contains(&now) {
                return Err(format!(
                    "row {id} was answered with randomNumber {numbers:?}, but the table holds {now}: \
                     the update was not written"
                ));
            }
        }
        let changed = answered
            .iter()
            .filter(|(id, _)| world.get(id).copied() != Some(world_seed(**id)))
            .count();
        // A new random number equals the old one 1 time in 10,000.
        if changed + 1 < answered.len() {
            return Err(format!(
                "only {changed} of the {} rows answered hold a new number: each must get a new random one",
                answered.len()
            ));
        }
        Ok(answered.len())
    })();
    let restored = pg.batch_execute(RESEED_SQL);
    match (result, restored) {
        (Err(e), _) => fail("updates-written", e),
        (Ok(_), Err(e)) => fail("updates-written", format!("cannot put world back: {e}")),
        (Ok(n), Ok(())) => pass(
            "updates-written",
            format!("the {n} rows an update answered hold the new numbers in the database"),
        ),
    }
}
