//! The contract's `db` part (CONTRACT.md, "db"): the items table's rows as
//! values, their JSON, the seeded contents as formulas of the id, and the
//! load requests of `GET /db` and `GET /db/list` with their expected answers.

use netbench_engine::{BodyExpect, Expect, RequestTemplate, StatusExpect, Url};
use serde_json::{json, Value};

use crate::timefmt::format_iso_millis;

/// The schema and seed the runner loads into its PostgreSQL.
pub const SCHEMA_SQL: &str = include_str!("../../../contract/db/schema.sql");
/// Rows in the seeded table: ids 1 to ROWS.
pub const ROWS: i32 = 10_000;
/// `count` of `/db/list` when the request has none.
pub const DEFAULT_COUNT: u32 = 100;
/// The largest `count` a server must accept.
pub const MAX_COUNT: u32 = 1000;

/// 2020-01-01T00:00:00.000Z, the seeded `updated` of id 0.
const EPOCH_2020_MS: i64 = 1_577_836_800_000;

/// One row of `items`, with the decimal and the timestamp as exact integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: i32,
    pub name: String,
    pub description: String,
    pub quantity: i32,
    /// `price` × 100: numeric(8,2) holds it exactly.
    pub price_cents: i64,
    /// `updated` as milliseconds since the epoch, UTC.
    pub updated_ms: i64,
}

impl Row {
    /// The row `id` as contract/db/schema.sql seeds it.
    pub fn seeded(id: i32) -> Row {
        let i = i64::from(id);
        Row {
            id,
            name: format!("item-{id}"),
            description: format!(
                "Row {id} of the netbench items table: \"seeded\", fixed & checked."
            ),
            quantity: ((i * 31) % 1000) as i32,
            price_cents: (i * 7919) % 100_000,
            updated_ms: EPOCH_2020_MS + i * 1_234_567,
        }
    }

    /// The answer of `GET /db?id=N` for this row.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "quantity": self.quantity,
            "price": self.price_cents as f64 / 100.0,
            "updated": format_iso_millis(self.updated_ms),
        })
    }

    /// SQL that sets every column of the row's id to this row's values. The
    /// values are numbers and text this crate made (quotes doubled), so the
    /// statement is safe to send as text.
    pub fn update_sql(&self) -> String {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
        format!(
            "UPDATE items SET name = {}, description = {}, quantity = {}, price = {}.{:02}, \
             updated = to_timestamp({}::numeric / 1000) WHERE id = {}",
            quote(&self.name),
            quote(&self.description),
            self.quantity,
            self.price_cents / 100,
            self.price_cents % 100,
            self.updated_ms,
            self.id
        )
    }
}

#[cfg(feature = "postgres")]
impl Row {
    /// A row read with [`SELECT_ROWS`].
    pub fn from_sql(r: &postgres::Row) -> Row {
        Row {
            id: r.get(0),
            name: r.get(1),
            description: r.get(2),
            quantity: r.get(3),
            price_cents: r.get(4),
            updated_ms: r.get(5),
        }
    }
}

/// SQL that reads rows in the shape [`Row`] holds, for `WHERE` or `ORDER BY`
/// to be appended.
pub const SELECT_ROWS: &str = "SELECT id, name, description, quantity, \
     (price * 100)::int8, (extract(epoch FROM updated) * 1000)::int8 FROM items";

/// The seeded answer of `GET /db/list?from=N&count=M`.
pub fn seeded_list(from: i32, count: u32) -> Value {
    let first = from.max(1);
    let last = (i64::from(from) + i64::from(count) - 1).min(i64::from(ROWS));
    Value::Array(
        (i64::from(first)..=last)
            .map(|id| Row::seeded(id as i32).to_json())
            .collect(),
    )
}

/// The path of one row.
pub fn row_path(id: i32) -> String {
    format!("/db?id={id}")
}

/// The path of a list.
pub fn list_path(from: i32, count: u32) -> String {
    format!("/db/list?from={from}&count={count}")
}

fn json_answer(expected: Value) -> Expect {
    Expect {
        status: StatusExpect::Exact(200),
        content_type: Some("application/json".to_string()),
        body: BodyExpect::json(expected),
        coding: Default::default(),
    }
}

/// `GET /db?id=N` for each id, each answer checked against its seeded row
/// (the data is fixed while a cell is measured).
pub fn db_requests(url: &Url, keepalive: bool, ids: &[i32]) -> Vec<RequestTemplate> {
    ids.iter()
        .map(|&id| {
            let expect = json_answer(Row::seeded(id).to_json());
            crate::requests::get(url, &row_path(id), keepalive, expect)
        })
        .collect()
}

/// `GET /db/list?from=N&count=M` for each start, each answer checked.
pub fn db_list_requests(
    url: &Url,
    keepalive: bool,
    froms: &[i32],
    count: u32,
) -> Vec<RequestTemplate> {
    froms
        .iter()
        .map(|&from| {
            let expect = json_answer(seeded_list(from, count));
            crate::requests::get(url, &list_path(from, count), keepalive, expect)
        })
        .collect()
}

/// `n` ids drawn from the table with `seed`: the pool a db cell asks from.
pub fn random_ids(seed: u64, n: usize, below: i32) -> Vec<i32> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    (0..n)
        .map(|_| 1 + rng.below(below.max(1) as u64) as i32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_engine::parse_url;

    #[test]
    fn row_one_is_the_contract_example() {
        // The contract's example row, read from CONTRACT.md itself so the
        // two cannot drift apart.
        let contract = include_str!("../../../contract/CONTRACT.md");
        let line = contract
            .lines()
            .find(|l| l.starts_with("{\"id\":1,"))
            .expect("CONTRACT.md shows row 1");
        let example: Value = serde_json::from_str(line).unwrap();
        assert_eq!(Row::seeded(1).to_json(), example);
    }

    #[test]
    fn the_fixtures_are_the_seeded_table() {
        let fixtures = include_str!("../../../contract/fixtures/db.jsonl");
        let mut answered = 0;
        for line in fixtures.lines() {
            let f: Value = serde_json::from_str(line).unwrap();
            if f["status"] != 200 {
                continue;
            }
            let path = f["path"].as_str().unwrap();
            let num = |key: &str| -> i64 {
                let (_, rest) = path.split_once(&format!("{key}=")).unwrap();
                rest.split('&').next().unwrap().parse().unwrap()
            };
            let want = if path.starts_with("/db/list") {
                seeded_list(num("from") as i32, num("count") as u32)
            } else {
                Row::seeded(num("id") as i32).to_json()
            };
            assert_eq!(f["answer"], want, "{}", f["name"]);
            answered += 1;
        }
        assert!(answered >= 5);
    }

    #[test]
    fn the_last_row_wraps_its_formulas() {
        let r = Row::seeded(ROWS);
        assert_eq!(r.quantity, 0);
        assert_eq!(r.price_cents, 90_000);
        assert_eq!(
            r.to_json()["updated"],
            Value::from("2020-05-22T21:21:10.000Z")
        );
    }

    #[test]
    fn lists_stop_at_the_end_of_the_table() {
        assert_eq!(seeded_list(1, 3).as_array().unwrap().len(), 3);
        assert_eq!(seeded_list(9_990, 100).as_array().unwrap().len(), 11);
        assert_eq!(seeded_list(ROWS + 1, 100), Value::Array(vec![]));
        let l = seeded_list(42, 2);
        assert_eq!(l[1]["id"], Value::from(43));
    }

    #[test]
    fn default_list_is_about_eighteen_kilobytes() {
        let bytes = seeded_list(5_000, DEFAULT_COUNT).to_string().len();
        assert!((16_000..20_000).contains(&bytes), "{bytes} bytes");
    }

    #[test]
    fn update_sql_spells_every_column() {
        let mut r = Row::seeded(7);
        r.name = "it's".to_string();
        r.price_cents = 1205;
        let sql = r.update_sql();
        assert!(sql.contains("name = 'it''s'"), "{sql}");
        assert!(sql.contains("price = 12.05"), "{sql}");
        assert!(sql.ends_with("WHERE id = 7"), "{sql}");
    }

    #[test]
    fn requests_carry_their_rows() {
        let url = parse_url("http://127.0.0.1:9/").unwrap();
        let ids = random_ids(3, 50, ROWS);
        assert!(ids.iter().all(|&i| (1..=ROWS).contains(&i)));
        assert_eq!(ids, random_ids(3, 50, ROWS));
        let reqs = db_requests(&url, true, &ids[..2]);
        let text = String::from_utf8_lossy(&reqs[0].bytes);
        assert!(text.starts_with(&format!("GET /db?id={} HTTP/1.1\r\n", ids[0])));
        let lists = db_list_requests(&url, false, &[10], 5);
        assert!(String::from_utf8_lossy(&lists[0].bytes)
            .starts_with("GET /db/list?from=10&count=5 HTTP/1.1\r\n"));
    }
}
