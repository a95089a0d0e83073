//! `GET /db?id=N` and `GET /db/list?from=N&count=M`: the PostgreSQL pool,
//! the query parameters, and the rows rendered as JSON. Every request reads
//! the database; nothing is cached.

use std::fmt;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, Pool};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use serde::{Serialize, Serializer};
use tokio_postgres::{NoTls, Row};

use crate::{respond, JSON, TEXT};

/// Without DATABASE_POOL_SIZE: the contract's floor (the runner always sets it).
const DEFAULT_POOL_SIZE: usize = 4;
const DEFAULT_COUNT: i32 = 100;
const MAX_COUNT: i32 = 1000;

// `price` is numeric(8,2); as float8 it arrives as the double nearest the
// decimal, which serde_json writes in its shortest form (79.19 stays 79.19).
const ONE: &str = "SELECT id, name, description, quantity, price::float8, updated \
                   FROM items WHERE id = $1";
const LIST: &str = "SELECT id, name, description, quantity, price::float8, updated \
                    FROM items WHERE id >= $1 ORDER BY id LIMIT $2";

/// The pool from `DATABASE_URL` and `DATABASE_POOL_SIZE`, or `None` without
/// a URL: the server still serves everything else, and `/db` answers 503.
pub fn pool_from_env() -> Result<Option<Pool>, String> {
    let Some(url) = std::env::var("DATABASE_URL").ok().filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let size = match std::env::var("DATABASE_POOL_SIZE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        None => DEFAULT_POOL_SIZE,
        Some(v) => match v.parse() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("DATABASE_POOL_SIZE: not a positive integer: {v:?}")),
        },
    };
    pool(&url, size).map(Some)
}

/// A pool of at most `size` connections. Connections are opened on demand,
/// so a database that is not up yet only fails the requests that need it.
pub fn pool(url: &str, size: usize) -> Result<Pool, String> {
    let config: tokio_postgres::Config = url.parse().map_err(|e| format!("DATABASE_URL: {e}"))?;
    Pool::builder(Manager::new(config, NoTls))
        .max_size(size)
        .build()
        .map_err(|e| format!("database pool: {e}"))
}

/// A query string that `/db` or `/db/list` refuses with 400, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct BadQuery(&'static str);

impl fmt::Display for BadQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The value of the first `key=` in a query string. A key without `=` counts
/// as present and empty, so `?id` is refused like `?id=`.
pub(crate) fn param<'q>(query: Option<&'q str>, key: &str) -> Option<&'q str> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

/// A 32-bit signed integer; `1.5`, `abc`, the empty string and anything past
/// 2,147,483,647 are refused.
fn int(value: Option<&str>, missing: &'static str, bad: &'static str) -> Result<i32, BadQuery> {
    value
        .ok_or(BadQuery(missing))?
        .parse()
        .map_err(|_| BadQuery(bad))
}

/// `id` of `/db?id=N`.
pub fn parse_id(query: Option<&str>) -> Result<i32, BadQuery> {
    int(
        param(query, "id"),
        "id is required",
        "id must be a 32-bit integer",
    )
}

/// `from` and `count` of `/db/list?from=N&count=M`.
pub fn parse_list(query: Option<&str>) -> Result<(i32, i32), BadQuery> {
    let from = int(
        param(query, "from"),
        "from is required",
        "from must be a 32-bit integer",
    )?;
    const BAD_COUNT: BadQuery = BadQuery("count must be an integer from 1 to 1000");
    let count = match param(query, "count") {
        None => DEFAULT_COUNT,
        Some(v) => v.parse().map_err(|_| BAD_COUNT)?,
    };
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(BAD_COUNT);
    }
    Ok((from, count))
}

/// One row of `items`, as the contract spells it.
#[derive(Serialize)]
struct Item<'r> {
    id: i32,
    name: &'r str,
    description: &'r str,
    quantity: i32,
    price: f64,
    #[serde(serialize_with = "millis")]
    updated: DateTime<Utc>,
}

fn millis<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::work::format_date(*t))
}

impl<'r> Item<'r> {
    fn from_row(row: &'r Row) -> Result<Self, tokio_postgres::Error> {
        Ok(Item {
            id: row.try_get(0)?,
            name: row.try_get(1)?,
            description: row.try_get(2)?,
            quantity: row.try_get(3)?,
            price: row.try_get(4)?,
            updated: row.try_get(5)?,
        })
    }
}

/// Why the database gave no answer: no connection (503) or a failed query (500).
pub(crate) enum DbError {
    Unavailable(String),
    Query(tokio_postgres::Error),
}

impl From<deadpool_postgres::PoolError> for DbError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        DbError::Unavailable(e.to_string())
    }
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        DbError::Query(e)
    }
}

async fn fetch_one(pool: &Pool, id: i32) -> Result<Option<Vec<u8>>, DbError> {
    let client = pool.get().await?;
    // Prepared once per pooled connection, then reused by every request on it.
    let statement = client.prepare_cached(ONE).await?;
    let Some(row) = client.query_opt(&statement, &[&id]).await? else {
        return Ok(None);
    };
    let item = Item::from_row(&row)?;
    Ok(Some(
        serde_json::to_vec(&item).expect("a row always serializes"),
    ))
}

async fn fetch_list(pool: &Pool, from: i32, count: i32) -> Result<Vec<u8>, DbError> {
    let client = pool.get().await?;
    let statement = client.prepare_cached(LIST).await?;
    // LIMIT's parameter is a bigint to PostgreSQL.
    let rows = client
        .query(&statement, &[&from, &i64::from(count)])
        .await?;
    let items = rows
        .iter()
        .map(Item::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(serde_json::to_vec(&items).expect("rows always serialize"))
}

pub(crate) fn failed(e: DbError) -> Response<Full<Bytes>> {
    match e {
        DbError::Unavailable(e) => respond(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            format!("database unavailable: {e}"),
        ),
        DbError::Query(e) => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            TEXT,
            format!("database error: {e}"),
        ),
    }
}

pub(crate) fn no_database() -> Response<Full<Bytes>> {
    respond(
        StatusCode::SERVICE_UNAVAILABLE,
        TEXT,
        "no database: DATABASE_URL is not set",
    )
}

/// The answer to `GET /db?<query>`.
pub async fn one(pool: Option<&Pool>, query: Option<&str>) -> Response<Full<Bytes>> {
    let Some(pool) = pool else {
        return no_database();
    };
    let id = match parse_id(query) {
        Ok(id) => id,
        Err(e) => return respond(StatusCode::BAD_REQUEST, TEXT, e.to_string()),
    };
    match fetch_one(pool, id).await {
        Ok(Some(json)) => respond(StatusCode::OK, JSON, json),
        Ok(None) => respond(StatusCode::NOT_FOUND, TEXT, "no such item"),
        Err(e) => failed(e),
    }
}

/// The answer to `GET /db/list?<query>`.
pub async fn list(pool: Option<&Pool>, query: Option<&str>) -> Response<Full<Bytes>> {
    let Some(pool) = pool else {
        return no_database();
    };
    let (from, count) = match parse_list(query) {
        Ok(params) => params,
        Err(e) => return respond(StatusCode::BAD_REQUEST, TEXT, e.to_string()),
    };
    match fetch_list(pool, from, count).await {
        Ok(json) => respond(StatusCode::OK, JSON, json),
        Err(e) => failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::{json, Value};

    #[test]
    fn id_is_a_32_bit_integer() {
        assert_eq!(parse_id(Some("id=1")), Ok(1));
        assert_eq!(parse_id(Some("id=10001")), Ok(10001));
        assert_eq!(parse_id(Some("id=2147483647")), Ok(i32::MAX));
        assert_eq!(parse_id(Some("other=x&id=7")), Ok(7));
        for query in [
            None,
            Some(""),
            Some("id="),
            Some("id"),
            Some("id=abc"),
            Some("id=1.5"),
            Some("id=1e3"),
            Some("id= 1"),
            Some("id=2147483648"),
            Some("id=99999999999999999999"),
            Some("ID=1"),
            Some("from=1"),
        ] {
            assert!(parse_id(query).is_err(), "accepted {query:?}");
        }
    }

    #[test]
    fn list_takes_from_and_an_optional_count() {
        assert_eq!(parse_list(Some("from=1")), Ok((1, 100)));
        assert_eq!(parse_list(Some("from=9999&count=1")), Ok((9999, 1)));
        assert_eq!(parse_list(Some("from=1&count=1000")), Ok((1, 1000)));
        assert_eq!(parse_list(Some("from=20000&count=5")), Ok((20000, 5)));
        for query in [
            None,
            Some("count=5"),
            Some("from="),
            Some("from=x"),
            Some("from=2147483648"),
            Some("from=1&count=0"),
            Some("from=1&count=1001"),
            Some("from=1&count="),
            Some("from=1&count=-1"),
            Some("from=1&count=2.5"),
            Some("from=1&count=4294967296"),
        ] {
            assert!(parse_list(query).is_err(), "accepted {query:?}");
        }
    }

    /// Row 1 as contract/db/schema.sql seeds it.
    fn row_one() -> Item<'static> {
        Item {
            id: 1,
            name: "item-1",
            description: r#"Row 1 of the netbench items table: "seeded", fixed & checked."#,
            quantity: 31,
            price: 79.19,
            updated: Utc
                .timestamp_millis_opt(1_577_836_800_000 + 1_234_567)
                .unwrap(),
        }
    }

    #[test]
    fn renders_the_contract_example_row() {
        let example = r#"{"id":1,"name":"item-1","description":"Row 1 of the netbench items table: \"seeded\", fixed & checked.","quantity":31,"price":79.19,"updated":"2020-01-01T00:20:34.567Z"}"#;
        let rendered = serde_json::to_string(&row_one()).unwrap();
        assert_eq!(rendered, example);
        let value: Value = serde_json::from_str(&rendered).unwrap();
        assert_eq!(value["price"], json!(79.19));
    }

    #[test]
    fn timestamps_keep_three_millisecond_digits() {
        let mut item = row_one();
        item.updated = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
        item.price = 1000.0;
        let value = serde_json::to_value(&item).unwrap();
        assert_eq!(value["updated"], "2020-01-01T00:00:00.000Z");
        assert_eq!(value["price"], json!(1000.0));
    }
}
