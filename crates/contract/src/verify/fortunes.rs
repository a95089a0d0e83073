//! The `fortunes` checks (CONTRACT.md, "fortunes"): the page shows the
//! table as the database holds it plus the added row, sorted, every text
//! escaped; and it follows rows `verify` adds through its own connection, so
//! a server that caches the page, or escapes only the rows it knows, fails.

use netbench_engine::{table_problem, table_rows};
use postgres::{Client as Pg, NoTls};

use super::checks::get_ok;
use super::{fail, pass, Check, Ctx};
use crate::fortunes::{expected_rows, FORTUNES_PATH, SELECT_FORTUNES};
use crate::rng::SplitMix64;

const NAMES: [&str; 3] = ["fortunes-page", "fortunes-escaped", "fortunes-follows"];

/// Every fortunes check, against the database at `url`.
pub(super) fn checks(ctx: &mut Ctx<'_>, url: &str) -> Vec<Check> {
    let mut pg = match Pg::connect(url, NoTls) {
        Ok(pg) => pg,
        Err(e) => {
            let why = format!("cannot connect to the database {url}: {e}");
            return NAMES.iter().map(|n| fail(n, why.clone())).collect();
        }
    };
    let mut rng = SplitMix64::new(ctx.opts.seed ^ 0xf0f7);
    vec![
        page(ctx, &mut pg),
        escaped(ctx),
        follows(ctx, &mut pg, &mut rng),
    ]
}

fn read_table(pg: &mut Pg) -> Result<Vec<(i32, String)>, String> {
    let rows = pg
        .query(SELECT_FORTUNES, &[])
        .map_err(|e| format!("{SELECT_FORTUNES}: {e} (was contract/db/schema.sql loaded?)"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The page's body, or why there is none worth reading.
fn fetch(ctx: &mut Ctx<'_>) -> Result<Vec<u8>, String> {
    get_ok(ctx, FORTUNES_PATH, "text/html").map(|r| r.body)
}

/// Why the page is not the table `rows` makes, if it is not.
fn page_problem(ctx: &mut Ctx<'_>, rows: &[(i32, String)]) -> Option<String> {
    let body = match fetch(ctx) {
        Ok(b) => b,
        Err(e) => return Some(e),
    };
    table_problem(&body, &expected_rows(rows)).map(|m| format!("GET {FORTUNES_PATH}: {m}"))
}

fn page(ctx: &mut Ctx<'_>, pg: &mut Pg) -> Check {
    let rows = match read_table(pg) {
        Ok(r) => r,
        Err(e) => return fail("fortunes-page", e),
    };
    // Twice: the added row is added per request, never kept in the table.
    for _ in 0..2 {
        if let Some(p) = page_problem(ctx, &rows) {
            return fail("fortunes-page", p);
        }
    }
    pass(
        "fortunes-page",
        format!(
            "the {} rows of the table and the added one, sorted by message, twice",
            rows.len()
        ),
    )
}

fn escaped(ctx: &mut Ctx<'_>) -> Check {
    let body = match fetch(ctx) {
        Ok(b) => b,
        Err(e) => return fail("fortunes-escaped", e),
    };
    if body.windows(8).any(|w| w.eq_ignore_ascii_case(b"<script>")) {
        return fail(
            "fortunes-escaped",
            "the page holds a raw <script>: messages must be HTML-escaped",
        );
    }
    match table_rows(&body) {
        Ok(_) => pass(
            "fortunes-escaped",
            "every cell's text is escaped (the <script> row included)",
        ),
        Err(m) => fail("fortunes-escaped", format!("GET {FORTUNES_PATH}: {m}")),
    }
}

/// Adds a row of markup through another connection, reads the page, then
/// takes the row out and reads it again.
fn follows(ctx: &mut Ctx<'_>, pg: &mut Pg, rng: &mut SplitMix64) -> Check {
    let before = match read_table(pg) {
        Ok(r) => r,
        Err(e) => return fail("fortunes-follows", e),
    };
    let id = 1_000 + rng.below(1_000_000) as i32;
    let message = format!(
        "netbench verify {}: <b>bold</b> & \"quoted\" 'too' </td></tr>",
        rng.next_u64() % 1_000_000
    );
    if let Err(e) = pg.execute(
        "INSERT INTO fortune (id, message) VALUES ($1, $2)",
        &[&id, &message],
    ) {
        return fail("fortunes-follows", format!("cannot add row {id}: {e}"));
    }
    let mut with = before.clone();
    with.push((id, message));
    let added = page_problem(ctx, &with);
    let removed = pg.execute("DELETE FROM fortune WHERE id = $1", &[&id]);
    if let Some(p) = added {
        return fail(
            "fortunes-follows",
            format!("after row {id} was added to the database: {p} (a page from a cache?)"),
        );
    }
    if let Err(e) = removed {
        return fail("fortunes-follows", format!("cannot take row {id} out: {e}"));
    }
    if let Some(p) = page_problem(ctx, &before) {
        return fail(
            "fortunes-follows",
            format!("after row {id} was taken out again: {p}"),
        );
    }
    pass(
        "fortunes-follows",
        "a row of markup added through another connection was shown escaped, then gone once taken out",
    )
}
