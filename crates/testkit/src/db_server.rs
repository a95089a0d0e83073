//! The contract server's `db` and `fortunes` parts (CONTRACT.md, "db",
//! "fortunes"): each connection's thread reads PostgreSQL through its own
//! connection, opened on first use; or, as a flaw, answers a row or a page
//! it has seen before from a cache.

use netbench_contract::db::{Row, DEFAULT_COUNT, MAX_COUNT, SELECT_ROWS};
use netbench_contract::fortunes::{ADDED, SELECT_FORTUNES};
use netbench_contract::world::{clamp_queries, WORLD_ROWS};
use netbench_contract::SplitMix64;
use serde_json::Value;

use crate::contract_server::{Cache, Flaw};

/// One connection's way to the database.
pub(crate) struct DbConn {
    url: Option<String>,
    client: Option<postgres::Client>,
}

impl DbConn {
    pub(crate) fn new(url: Option<String>) -> Self {
        DbConn { url, client: None }
    }

    fn client(&mut self) -> Result<&mut postgres::Client, String> {
        if self.client.is_none() {
            let url = self.url.as_deref().ok_or("no DATABASE_URL")?;
            let c = postgres::Client::connect(url, postgres::NoTls).map_err(|e| e.to_string())?;
            self.client = Some(c);
        }
        Ok(self.client.as_mut().expect("just set"))
    }

    fn rows(&mut self, filter: &str) -> Result<Vec<Row>, String> {
        let sql = format!("{SELECT_ROWS} {filter}");
        let rows = self.client()?.query(&sql, &[]).map_err(|e| e.to_string())?;
        Ok(rows.iter().map(Row::from_sql).collect())
    }
}

/// Status, content type and body of `GET /fortunes`. The page is written
/// here by hand: this is the contract's reference server in the tests, and
/// its flaws need to reach inside the rendering.
pub(crate) fn fortunes(
    conn: &mut DbConn,
    flaw: Flaw,
    cache: &Cache,
) -> (u16, &'static str, Vec<u8>) {
    const KEY: &str = "fortunes";
    const HTML: &str = "text/html; charset=utf-8";
    if flaw == Flaw::FortunesCached {
        if let Some(hit) = cache.lock().unwrap().get(KEY).cloned() {
            return (200, HTML, hit);
        }
    }
    let read = conn
        .client()
        .and_then(|c| c.query(SELECT_FORTUNES, &[]).map_err(|e| e.to_string()));
    let mut rows: Vec<(i32, String)> = match read {
        Ok(rows) => rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
        Err(e) => return (503, "text/plain", format!("database: {e}").into_bytes()),
    };
    rows.push((0, ADDED.to_string()));
    if flaw != Flaw::FortunesUnsorted {
        rows.sort_by(|a, b| a.1.cmp(&b.1));
    }
    let mut page = String::from(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for (id, message) in &rows {
        let message = if flaw == Flaw::FortunesUnescaped {
            message.clone()
        } else {
            escape_html(message)
        };
        page.push_str(&format!("<tr><td>{id}</td><td>{message}</td></tr>"));
    }
    page.push_str("</table></body></html>");
    if flaw == Flaw::FortunesCached {
        cache
            .lock()
            .unwrap()
            .insert(KEY.to_string(), page.clone().into_bytes());
    }
    (200, HTML, page.into_bytes())
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Status, content type and body of `GET /queries` or `GET /updates`: each
/// row read by its own query, and for updates given a new random number and
/// written back, one statement per row.
pub(crate) fn world(
    conn: &mut DbConn,
    flaw: Flaw,
    cache: &Cache,
    path: &str,
) -> (u16, &'static str, Vec<u8>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DRAWS: AtomicU64 = AtomicU64::new(0x5eed);
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let update = route == "/updates";
    let raw = param(query, "queries");
    let n = if flaw == Flaw::QueriesUnclamped {
        raw.and_then(|v| v.parse().ok()).unwrap_or(1)
    } else {
        clamp_queries(raw)
    };
    let mut rng = SplitMix64::new(DRAWS.fetch_add(1, Ordering::Relaxed));
    let mut draw = || 1 + rng.below(WORLD_ROWS as u64) as i32;
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let id = draw();
        let key = format!("world:{id}");
        let hit = (flaw == Flaw::QueriesCached)
            .then(|| cache.lock().unwrap().get(&key).cloned())
            .flatten();
        let number: i32 = if flaw == Flaw::QueriesFabricated {
            draw()
        } else if let Some(hit) = hit {
            String::from_utf8(hit).unwrap().parse().unwrap()
        } else {
            let read = conn.client().and_then(|c| {
                c.query_one("SELECT randomnumber FROM world WHERE id = $1", &[&id])
                    .map_err(|e| e.to_string())
            });
            match read {
                Ok(r) => r.get(0),
                Err(e) => return (503, "text/plain", format!("database: {e}").into_bytes()),
            }
        };
        if flaw == Flaw::QueriesCached {
            cache
                .lock()
                .unwrap()
                .insert(key, number.to_string().into_bytes());
        }
        let number = if update {
            let new = draw();
            if flaw != Flaw::UpdatesUnwritten {
                let wrote = conn.client().and_then(|c| {
                    c.execute(
                        "UPDATE world SET randomnumber = $1 WHERE id = $2",
                        &[&new, &id],
                    )
                    .map_err(|e| e.to_string())
                });
                if let Err(e) = wrote {
                    return (503, "text/plain", format!("database: {e}").into_bytes());
                }
            }
            new
        } else {
            number
        };
        rows.push(serde_json::json!({"id": id, "randomNumber": number}));
    }
    let body = serde_json::to_vec(&rows).expect("a Value always serializes");
    (200, "application/json", body)
}

/// The value of `name` in a query string, as written.
fn param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A contract integer: decimal digits that fit an i32.
fn int(v: Option<&str>) -> Option<i32> {
    let v = v?;
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// Status, content type and body of a GET of `/db` or `/db/list`.
pub(crate) fn answer(
    conn: &mut DbConn,
    flaw: Flaw,
    cache: &Cache,
    path: &str,
) -> (u16, &'static str, Vec<u8>) {
    let key = format!("db:{path}");
    if flaw == Flaw::CachedDb {
        if let Some(hit) = cache.lock().unwrap().get(&key).cloned() {
            return (200, "application/json", hit);
        }
    }
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let bad = (400, "text/plain", b"bad request".to_vec());
    let result = if route == "/db" {
        let Some(id) = int(param(query, "id")) else {
            return bad;
        };
        conn.rows(&format!("WHERE id = {id}"))
            .map(|mut rows| rows.pop().map(|r| r.to_json()))
    } else {
        let Some(from) = int(param(query, "from")) else {
            return bad;
        };
        let count = match param(query, "count") {
            None => Some(DEFAULT_COUNT as i32),
            c => int(c).filter(|c| (1..=MAX_COUNT as i32).contains(c)),
        };
        let Some(count) = count else { return bad };
        conn.rows(&format!("WHERE id >= {from} ORDER BY id LIMIT {count}"))
            .map(|rows| Some(Value::Array(rows.iter().map(Row::to_json).collect())))
    };
    match result {
        Err(e) => (503, "text/plain", format!("database: {e}").into_bytes()),
        Ok(None) => (404, "text/plain", b"no such row".to_vec()),
        Ok(Some(v)) => {
            let body = serde_json::to_vec(&v).expect("a Value always serializes");
            if flaw == Flaw::CachedDb {
                cache.lock().unwrap().insert(key, body.clone());
            }
            (200, "application/json", body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{int, param};

    #[test]
    fn parameters_follow_the_contract() {
        assert_eq!(param("from=3&count=5", "count"), Some("5"));
        assert_eq!(param("id", "id"), Some(""));
        assert_eq!(param("x=1", "id"), None);
        assert_eq!(int(Some("42")), Some(42));
        for bad in ["", "abc", "1.5", "-1", "+1", "2147483648"] {
            assert_eq!(int(Some(bad)), None, "{bad}");
        }
    }
}
