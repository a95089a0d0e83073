//! The contract server's `app` (CONTRACT.md, "app", version 1.4): sessions
//! in memory, each locked while its page renders, the page written from
//! the contract's formula and files, gzip when asked; or broken in one way
//! per `Flaw`, so the tests prove that every `app-*` check of `verify`, and
//! the engine's session check under load, catch the way it names.

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use netbench_contract::app::{item_rows, APP_CSS, APP_JS, MAX_PAGE};

use crate::apps_server::{allows, gzip};
use crate::contract_server::{respond_with, Flaw};
use crate::Request;

/// The cookie's name.
const COOKIE: &str = "sid";

/// One session: what its page shows. Behind its own lock, held from reading
/// `visits` to the end of the render.
struct Session {
    visits: u64,
    since: i64,
}

type Store = Mutex<HashMap<String, Arc<Mutex<Session>>>>;

/// Every test server's sessions, in one map keyed by the server's port and
/// the id, so servers in one test process never see each other's (a flawed
/// one adopts ids a client made up).
fn store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(Store::default)
}

/// The visits counted by `Flaw::AppGlobalCounter`: one count for every
/// session of a server (by its port).
fn global_visits() -> &'static Mutex<HashMap<u16, u64>> {
    static VISITS: OnceLock<Mutex<HashMap<u16, u64>>> = OnceLock::new();
    VISITS.get_or_init(Mutex::default)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// 128 random bits in hex, from the kernel's generator.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The session id the request's `Cookie` header names, if any.
fn cookie_id(req: &Request) -> Option<String> {
    req.header("cookie")?
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

/// `page` of the query, when it is one the contract allows.
fn page_number(path: &str, flaw: Flaw) -> Option<u32> {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    let raw = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .unwrap_or("");
    let digits = !raw.is_empty() && raw.len() <= 6 && raw.bytes().all(|b| b.is_ascii_digit());
    let k: u32 = if digits { raw.parse().ok()? } else { 0 };
    match flaw {
        // Clamps what it cannot read to the first page, as a lax parser does.
        Flaw::AppLax400 => Some(k.clamp(1, MAX_PAGE)),
        _ => (1..=MAX_PAGE).contains(&k).then_some(k),
    }
}

fn escape(text: &str, flaw: Flaw) -> String {
    if flaw == Flaw::AppUnescaped {
        return text.to_string();
    }
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page of `k` for a session at `visits` made at `since`, as a template
/// would render it.
fn render(k: u32, visits: u64, since: i64, flaw: Flaw) -> String {
    let mut rows = String::new();
    for row in item_rows(k) {
        rows.push_str("<tr>");
        for cell in &row {
            rows.push_str(&format!("<td>{}</td>", escape(cell, flaw)));
        }
        rows.push_str("</tr>\n");
    }
    let script = if flaw == Flaw::AppNoFiles {
        String::new()
    } else {
        format!("<script>\n{APP_JS}</script>\n")
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Orders, page {k}</title>\n\
         <style>\n{APP_CSS}</style></head><body>\n\
         <header><h1>Orders, page {k}</h1><form method=\"post\" action=\"/app/logout\"><button type=\"submit\">Log out</button></form></header>\n\
         <table class=\"session\"><tr><td>visits</td><td>{visits}</td></tr><tr><td>since</td><td>{since}</td></tr></table>\n\
         <table class=\"items\"><thead><tr><th>#</th><th>item</th><th>quantity</th><th>price</th><th>total</th></tr></thead><tbody>\n\
         {rows}</tbody></table>\n{script}</body></html>\n"
    )
}

/// The session a page is for, made when the cookie names none (the
/// cookie to set then), its visits counted under its lock: `(visits,
/// since, set-cookie)`.
fn visit(req: &Request, flaw: Flaw, port: u16) -> (u64, i64, Option<String>) {
    if flaw == Flaw::AppCookieState {
        // The counter and the time live in the cookie, as a signed-cookie
        // "session" keeps them: no server state, a new cookie each page. The
        // nonce stands for a signature: two sessions made in one millisecond
        // still differ, so the check this flaw fails is always the same one.
        static NONCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nonce = NONCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (visits, since) = cookie_id(req)
            .and_then(|v| {
                let (a, b) = v.split_once('-')?;
                Some((
                    a.parse::<u64>().ok()?,
                    b.split('x').next()?.parse::<i64>().ok()?,
                ))
            })
            .unwrap_or((0, now_ms()));
        let cookie = format!("{COOKIE}={}-{since}x{nonce:010}", visits + 1);
        return (visits + 1, since, Some(cookie));
    }
    let key = |id: &str| format!("{port}/{id}");
    let known = cookie_id(req).and_then(|id| store().lock().unwrap().get(&key(&id)).cloned());
    let (session, set) = match known {
        Some(s) => (s, None),
        None => {
            let id = match (flaw, cookie_id(req)) {
                // Takes the id the client sent (session fixation).
                (Flaw::AppAdoptsCookie, Some(sent)) => sent,
                _ => new_id(),
            };
            let s = Arc::new(Mutex::new(Session {
                visits: 0,
                since: now_ms(),
            }));
            store().lock().unwrap().insert(key(&id), Arc::clone(&s));
            let set = (flaw != Flaw::AppNoCookie).then(|| format!("{COOKIE}={id}"));
            (s, set)
        }
    };
    if flaw == Flaw::AppGlobalCounter {
        let mut all = global_visits().lock().unwrap();
        let visits = all.entry(port).or_insert(0);
        *visits += 1;
        let since = session.lock().unwrap().since;
        return (*visits, since, set);
    }
    if flaw == Flaw::AppNoLock {
        // Reads, waits as a slow render would, writes: two requests at once
        // count the same visit.
        let seen = session.lock().unwrap().visits;
        std::thread::sleep(Duration::from_millis(2));
        let mut s = session.lock().unwrap();
        s.visits = seen + 1;
        return (s.visits, s.since, set);
    }
    let mut s = session.lock().unwrap();
    s.visits += 1;
    let since = if flaw == Flaw::AppSinceNow {
        now_ms()
    } else {
        s.since
    };
    (s.visits, since, set)
}

/// `GET /app?page=K`.
pub(crate) fn page(w: &mut TcpStream, flaw: Flaw, req: &Request) -> io::Result<()> {
    let Some(k) = page_number(&req.path, flaw) else {
        return respond_with(w, flaw, 400, "text/plain", &[], b"page must be 1 to 100000");
    };
    let port = w.local_addr().map_or(0, |a| a.port());
    let (visits, since, set) = visit(req, flaw, port);
    let html = render(k, visits, since, flaw);
    let mut headers = vec![("Vary", "Accept-Encoding"), ("Cache-Control", "no-store")];
    let cookie = set.map(|c| format!("{c}; Path=/; HttpOnly"));
    if let Some(c) = &cookie {
        headers.push(("Set-Cookie", c));
    }
    let asked = req
        .header("accept-encoding")
        .is_some_and(|a| allows(a, "gzip"));
    let body = match (asked, flaw) {
        (true, Flaw::GzipClaimPlain) => html.into_bytes(),
        (true, _) => gzip(html.as_bytes()),
        (false, _) => html.into_bytes(),
    };
    if asked {
        headers.push(("Content-Encoding", "gzip"));
    }
    respond_with(w, flaw, 200, "text/html; charset=utf-8", &headers, &body)
}

/// `POST /app/logout`.
pub(crate) fn logout(w: &mut TcpStream, flaw: Flaw, req: &Request) -> io::Result<()> {
    if flaw != Flaw::AppLogoutIgnored {
        if let Some(id) = cookie_id(req) {
            let port = w.local_addr().map_or(0, |a| a.port());
            store().lock().unwrap().remove(&format!("{port}/{id}"));
        }
    }
    let clear = format!("{COOKIE}=; Max-Age=0; Path=/");
    respond_with(
        w,
        flaw,
        200,
        "text/plain",
        &[("Set-Cookie", &clear)],
        b"bye",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rendered_page_reads_back_as_the_contracts_page() {
        let html = render(4711, 3, 1_764_315_969_123, Flaw::None);
        let page = netbench_contract::app::app_page(4711);
        let shown = netbench_engine::read_app_page(html.as_bytes(), &page, &mut Vec::new());
        assert_eq!(
            shown.map(|s| (s.visits, s.since)),
            Ok((3, 1_764_315_969_123))
        );
        assert!((9_000..11_000).contains(&html.len()), "{}", html.len());
    }
}
