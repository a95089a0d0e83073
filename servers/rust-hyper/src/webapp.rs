//! Contract 1.4's `app` part: `GET /app?page=K` (a session found or made,
//! locked, its page rendered by askama and gzipped on request) and
//! `POST /app/logout`, on a small in-memory session store: hyper has no
//! sessions (nor cookies) of its own.

use std::collections::HashMap;
use std::fmt;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use askama::Template;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CACHE_CONTROL, COOKIE, SET_COOKIE};
use hyper::{Response, StatusCode};
use rand::rngs::OsRng;
use rand::TryRngCore;

use crate::db::param;
use crate::{apps, respond, TEXT};

/// contract/app's files, built into the binary: no path to get wrong at
/// run time, and cargo rebuilds when they change.
const CSS: &str = include_str!("../../../contract/app/app.css");
const JS: &str = include_str!("../../../contract/app/app.js");

const COOKIE_NAME: &str = "sid";
const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
const MAX_PAGE: u32 = 100_000;
/// A session idle this long may be dropped (the contract's floor).
const IDLE_MS: u64 = 10 * 60 * 1000;
/// At most one sweep a minute, made by a request that creates a session, so
/// that no task of its own has to outlive the server.
const SWEEP_EVERY_MS: u64 = 60 * 1000;

/// The item texts, chosen by the contract to need escaping.
const LABELS: [&str; 5] = [
    "Tom & Jerry's cheese board",
    "<b>bold</b> move of the week",
    "\"Quoted\" goods, boxed",
    "O'Brien's pick for winter",
    "a < b > c, the ordered set",
];

/// An amount in cents, written as the contract writes money by integer
/// arithmetic alone: 5 is `0.05`.
struct Cents(u32);

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

struct Item {
    number: u32,
    label: &'static str,
    row: u32,
    quantity: u32,
    price: Cents,
    total: Cents,
}

/// The page; askama escapes every value of an `.html` template but the two
/// files, marked `safe`.
#[derive(Template)]
#[template(path = "app.html")]
struct Page {
    page: u32,
    visits: u64,
    since: u64,
    items: Vec<Item>,
    css: &'static str,
    js: &'static str,
}

/// Page `k`'s 50 rows, from the contract's formula (every value fits u32).
fn items(k: u32) -> Vec<Item> {
    (1..=50)
        .map(|i| {
            let quantity = (k * 7 + i * 13) % 100 + 1;
            let cents = (k * 7919 + i * 104_729) % 100_000;
            Item {
                number: (k - 1) * 50 + i,
                label: LABELS[((k + i) % 5) as usize],
                row: i,
                quantity,
                price: Cents(cents),
                total: Cents(quantity * cents),
            }
        })
        .collect()
}

/// One browser's state. `visits`' lock is held from reading it to the end
/// of the render. It is std's mutex, not tokio's: nothing awaits while it is
/// held, and the render is tens of microseconds.
pub struct Session {
    id: String,
    /// Creation, milliseconds since the Unix epoch.
    since: u64,
    /// Read by the sweep without taking `visits`' lock.
    last_used: AtomicU64,
    visits: Mutex<u64>,
}

#[derive(Default)]
struct Store {
    by_id: HashMap<String, Arc<Session>>,
    last_sweep: u64,
}

/// The sessions: a map from id to session under one lock, held only to
/// find, add or remove an entry.
#[derive(Default)]
pub struct Sessions(Mutex<Store>);

/// A fresh id: 128 bits from the operating system's generator (getrandom),
/// in hex.
fn new_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| e.to_string())?;
    let mut id = String::with_capacity(32);
    for b in bytes {
        let _ = write!(id, "{b:02x}");
    }
    Ok(id)
}

impl Sessions {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live session named `sent`, or a new one (`true`) whose id is
    /// never the one sent.
    fn get(&self, sent: Option<&str>, now: u64) -> Result<(Arc<Session>, bool), String> {
        if let Some(sent) = sent {
            if let Some(session) = self.store().by_id.get(sent).cloned() {
                session.last_used.store(now, Ordering::Relaxed);
                return Ok((session, false));
            }
        }
        // Drawn before the store's lock is taken; a clash only redraws.
        let mut id = new_id()?;
        let mut store = self.store();
        if now.saturating_sub(store.last_sweep) >= SWEEP_EVERY_MS {
            store.last_sweep = now;
            store
                .by_id
                .retain(|_, s| now.saturating_sub(s.last_used.load(Ordering::Relaxed)) < IDLE_MS);
        }
        while store.by_id.contains_key(&id) || Some(id.as_str()) == sent {
            id = new_id()?;
        }
        let session = Arc::new(Session {
            id: id.clone(),
            since: now,
            last_used: AtomicU64::new(now),
            visits: Mutex::new(0),
        });
        store.by_id.insert(id, session.clone());
        Ok((session, true))
    }

    fn remove(&self, id: &str) {
        self.store().by_id.remove(id);
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The value of our cookie in the request's `Cookie` header(s), which may
/// carry others.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            (name.trim() == COOKIE_NAME).then(|| value.trim())
        })
}

/// `K` of `?page=K`: decimal digits only (`parse` alone would take a `+`),
/// 1 to 100,000.
fn page_number(query: Option<&str>) -> Option<u32> {
    let v = param(query, "page")?;
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok().filter(|k| (1..=MAX_PAGE).contains(k))
}

/// The answer to `GET /app?<query>`.
pub fn page(
    sessions: &Sessions,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Response<Full<Bytes>> {
    // Checked before the session is touched: a 400 leaves it as it was.
    let Some(k) = page_number(query) else {
        return respond(
            StatusCode::BAD_REQUEST,
            TEXT,
            "page must be an integer from 1 to 100000",
        );
    };
    let (session, created) = match sessions.get(cookie(headers), now_ms()) {
        Ok(found) => found,
        Err(e) => return respond(StatusCode::INTERNAL_SERVER_ERROR, TEXT, e),
    };
    let items = items(k);
    let rendered = {
        let mut visits = session
            .visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *visits += 1;
        Page {
            page: k,
            visits: *visits,
            since: session.since,
            items,
            css: CSS,
            js: JS,
        }
        .render()
    };
    let html = match rendered {
        Ok(html) => html,
        Err(e) => return respond(StatusCode::INTERNAL_SERVER_ERROR, TEXT, e.to_string()),
    };
    let mut r = apps::vary(apps::compressible(headers, HTML, html.into_bytes()));
    let h = r.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if created {
        let value = format!("{COOKIE_NAME}={}; Path=/; HttpOnly", session.id);
        h.insert(
            SET_COOKIE,
            HeaderValue::try_from(value).expect("hex digits"),
        );
    }
    r
}

/// The answer to `POST /app/logout`: the session ends; `200` whether or not
/// there was one.
pub fn logout(sessions: &Sessions, headers: &HeaderMap) -> Response<Full<Bytes>> {
    let mut r = respond(StatusCode::OK, TEXT, "logged out");
    if let Some(id) = cookie(headers) {
        sessions.remove(id);
        r.headers_mut().insert(
            SET_COOKIE,
            HeaderValue::from_static("sid=; Path=/; HttpOnly; Max-Age=0"),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_written_with_two_digits() {
        assert_eq!(Cents(5).to_string(), "0.05");
        assert_eq!(Cents(99_999).to_string(), "999.99");
        assert_eq!(Cents(1_013_558).to_string(), "10135.58");
    }

    #[test]
    fn page_numbers() {
        for (query, want) in [
            (Some("page=1"), Some(1)),
            (Some("x=2&page=100000"), Some(100_000)),
            (Some("page=007"), Some(7)),
        ] {
            assert_eq!(page_number(query), want, "{query:?}");
        }
        for query in [
            None,
            Some(""),
            Some("page"),
            Some("page="),
            Some("page=0"),
            Some("page=100001"),
            Some("page=abc"),
            Some("page=+1"),
            Some("page=-1"),
            Some("page=1.5"),
            Some("page=%201"),
            Some("page=99999999999999999999"),
        ] {
            assert_eq!(page_number(query), None, "{query:?}");
        }
    }

    #[test]
    fn cookies_among_others() {
        let mut h = HeaderMap::new();
        assert_eq!(cookie(&h), None);
        h.insert(COOKIE, HeaderValue::from_static("a=b; sid=abc123 ;c=d"));
        assert_eq!(cookie(&h), Some("abc123"));
        h.insert(COOKIE, HeaderValue::from_static("xsid=1; sidx=2"));
        assert_eq!(cookie(&h), None);
    }

    #[test]
    fn ids_are_fresh_hex() {
        let sessions = Sessions::default();
        let (a, created) = sessions.get(None, 1).unwrap();
        assert!(created);
        assert_eq!(a.id.len(), 32);
        assert!(a.id.bytes().all(|b| b.is_ascii_hexdigit()));
        let (b, created) = sessions.get(Some("not-a-session-id"), 1).unwrap();
        assert!(created && b.id != a.id && b.id != "not-a-session-id");
        let (again, created) = sessions.get(Some(&a.id), 2).unwrap();
        assert!(!created && Arc::ptr_eq(&again, &a));
    }

    #[test]
    fn the_sweep_drops_only_sessions_idle_ten_minutes() {
        let sessions = Sessions::default();
        let t0 = 1_700_000_000_000;
        let (idle, _) = sessions.get(None, t0).unwrap();
        let (busy, _) = sessions.get(None, t0).unwrap();
        assert!(!sessions.get(Some(&busy.id), t0 + 5 * 60_000).unwrap().1);
        // A creation past the sweep interval sweeps.
        sessions.get(None, t0 + IDLE_MS).unwrap();
        assert!(sessions.get(Some(&idle.id), t0 + IDLE_MS).unwrap().1);
        assert!(!sessions.get(Some(&busy.id), t0 + IDLE_MS).unwrap().1);
    }
}
