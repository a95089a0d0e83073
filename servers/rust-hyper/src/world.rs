//! `GET /queries?queries=N` and `GET /updates?queries=N` (contract 1.3,
//! "queries", "updates"): N random World rows, each read with its own
//! prepared query through the db pool; for updates, each given a new random
//! number and written back, one UPDATE per row.

use deadpool_postgres::Pool;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use rand::Rng;
use serde::Serialize;

use crate::db::{failed, no_database, DbError};
use crate::{respond, JSON};

const ROWS: i32 = 10_000;
const MAX_QUERIES: usize = 500;
const READ: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const WRITE: &str = "UPDATE world SET randomnumber = $1 WHERE id = $2";

#[derive(Serialize)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

/// `queries=N` clamped as TechEmpower does: missing, empty, not an integer
/// or below 1 is 1; above 500 is 500.
fn clamp(query: Option<&str>) -> usize {
    let raw = query
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("queries="));
    match raw.and_then(|v| v.parse::<i64>().ok()) {
        Some(n) if n > MAX_QUERIES as i64 => MAX_QUERIES,
        Some(n) if n >= 1 => n as usize,
        _ => 1,
    }
}

async fn rows(pool: &Pool, n: usize, update: bool) -> Result<Vec<World>, DbError> {
    let client = pool.get().await?;
    let read = client.prepare_cached(READ).await?;
    // Drawn before any await: ThreadRng is not Send.
    let (ids, numbers): (Vec<i32>, Vec<i32>) = {
        let mut rng = rand::rng();
        (0..n)
            .map(|_| (rng.random_range(1..=ROWS), rng.random_range(1..=ROWS)))
            .unzip()
    };
    let mut out = Vec::with_capacity(n);
    for id in ids {
        let row = client.query_one(&read, &[&id]).await?;
        out.push(World {
            id: row.get(0),
            random_number: row.get(1),
        });
    }
    if update {
        let write = client.prepare_cached(WRITE).await?;
        for (row, number) in out.iter_mut().zip(numbers) {
            row.random_number = number;
            client.execute(&write, &[&number, &row.id]).await?;
        }
    }
    Ok(out)
}

/// The answer to `GET /queries?<query>` (`update` false) or `GET
/// /updates?<query>`.
pub async fn answer(
    pool: Option<&Pool>,
    query: Option<&str>,
    update: bool,
) -> Response<Full<Bytes>> {
    let Some(pool) = pool else {
        return no_database();
    };
    match rows(pool, clamp(query), update).await {
        Ok(rows) => respond(
            StatusCode::OK,
            JSON,
            serde_json::to_vec(&rows).expect("rows always serialize"),
        ),
        Err(e) => failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_clamped_as_techempower_does() {
        for (query, want) in [
            (None, 1),
            (Some(""), 1),
            (Some("queries="), 1),
            (Some("queries=foo"), 1),
            (Some("queries=0"), 1),
            (Some("queries=20"), 20),
            (Some("a=1&queries=501"), 500),
        ] {
            assert_eq!(clamp(query), want, "{query:?}");
        }
    }
}
