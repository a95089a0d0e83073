//! The `app` checks (CONTRACT.md, "app"): sessions made, kept apart and
//! ended; every page read back as its session's rows, its 50 escaped items
//! and the two files; gzip only when asked; and the lock, by many
//! connections sharing one session at once, so a counter kept in the cookie,
//! a page for the wrong session, or a race between two requests fails.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use netbench_engine::{content_type_matches, read_app_page, session_cookie, PageSession};

use super::checks::clip;
use super::{fail, pass, Check, Ctx};
use crate::app::{app_page, page_path, LOGOUT_PATH, MAX_PAGE};
use crate::client::{Client, Connection};
use crate::digest::{decode, Coding, MAX_DECODED};
use crate::rng::SplitMix64;

/// Connections that share one session in `app-lock`, and the pages each asks
/// for: enough that requests overlap on any server that does not lock.
const LOCK_CONNECTIONS: usize = 8;
const LOCK_PAGES: usize = 25;

/// New sessions `app-ids` makes.
const IDS: usize = 20;

/// How far a new session's `since` may stand from this machine's clock.
const SINCE_SLACK_MS: i64 = 60_000;

pub(super) fn checks(ctx: &mut Ctx<'_>) -> Vec<Check> {
    let mut rng = SplitMix64::new(ctx.opts.seed ^ 0xa990);
    vec![
        session(ctx, &mut rng),
        page(ctx, &mut rng),
        gzip(ctx, &mut rng),
        ids(ctx, &mut rng),
        lock(ctx, &mut rng),
        logout(ctx, &mut rng),
        errors(ctx),
    ]
}

/// One browser: a connection, reopened when the server closes it, and the
/// cookie it sends (none before its session is made).
struct Browser {
    client: Client,
    prefix: String,
    conn: Option<Connection>,
    cookie: Option<String>,
}

/// A page as it came: the session it shows, the cookies it set (each
/// `Set-Cookie` value as sent), and how it was coded.
struct Page {
    shown: PageSession,
    set: Vec<String>,
    gzip: bool,
    vary: bool,
}

impl Browser {
    fn new(ctx: &Ctx<'_>) -> Browser {
        Browser {
            client: ctx.client().clone(),
            prefix: ctx.opts.prefix.clone(),
            conn: None,
            cookie: None,
        }
    }

    /// Sends `method path` with the cookie and `accept`, and reads the answer.
    fn exchange(
        &mut self,
        method: &str,
        path: &str,
        accept: Option<&str>,
    ) -> Result<crate::client::Response, String> {
        let full = format!("{}{path}", self.prefix);
        let what = format!("{method} {path}");
        if self.conn.is_none() {
            self.conn = Some(self.client.connect().map_err(|e| format!("{what}: {e}"))?);
        }
        let conn = self.conn.as_mut().expect("connected above");
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if let Some(c) = &self.cookie {
            headers.push(("Cookie", c));
        }
        if let Some(a) = accept {
            headers.push(("Accept-Encoding", a));
        }
        if method == "POST" {
            headers.push(("Content-Length", "0"));
        }
        let bytes = conn.head_bytes(method, &full, &headers);
        let answer = conn.send(&bytes).and_then(|()| conn.read_response(false));
        let r = answer.map_err(|e| {
            self.conn = None;
            format!("{what}: {e}")
        })?;
        if r.close {
            self.conn = None;
        }
        Ok(r)
    }

    /// `GET /app?page=k`, asking for gzip or not: the page read back, or
    /// why it is not the page of `k`.
    fn page(&mut self, k: u32, gzip: bool) -> Result<Page, String> {
        let path = page_path(k);
        let r = self.exchange("GET", &path, gzip.then_some("gzip"))?;
        let what = format!("GET {path}");
        if r.status != 200 {
            return Err(format!(
                "{what} answered {} (`{}`), want 200",
                r.status,
                clip(&r.body_text())
            ));
        }
        let ct = r.header("content-type").unwrap_or("(none)");
        if !content_type_matches("text/html", ct.as_bytes()) {
            return Err(format!("{what}: Content-Type is `{ct}`, want text/html"));
        }
        let coding =
            Coding::parse(r.header("content-encoding")).map_err(|e| format!("{what}: {e}"))?;
        let body = match (coding, gzip) {
            (None, _) => r.body.clone(),
            (Some(Coding::Gzip), true) => {
                decode(Coding::Gzip, &r.body, MAX_DECODED).map_err(|e| format!("{what}: {e}"))?
            }
            (Some(c), _) => {
                return Err(format!(
                    "{what}: the page came as {} without the request allowing it",
                    c.as_str()
                ))
            }
        };
        let shown = read_app_page(&body, &app_page(k), &mut Vec::new()).map_err(|m| {
            format!(
                "{what}{}: {m}",
                if coding.is_some() { ", decoded" } else { "" }
            )
        })?;
        let set = r
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .map(|(_, v)| v.clone())
            .collect();
        let vary = r
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("vary"))
            .any(|(_, v)| {
                v.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("accept-encoding") || t.trim() == "*")
            });
        Ok(Page {
            shown,
            set,
            gzip: coding.is_some(),
            vary,
        })
    }

    /// The first page of a new session: one valid cookie, kept, and the
    /// session at 1 near this machine's clock.
    fn start(&mut self, k: u32) -> Result<Page, String> {
        self.cookie = None;
        let p = self.page(k, false)?;
        let pair = match p.set.as_slice() {
            [one] => session_cookie(one.as_bytes())
                .map(|pair| String::from_utf8_lossy(pair).into_owned())
                .ok_or_else(|| {
                    format!(
                        "a new session's Set-Cookie `{}` is not `name=value` with a value of 16 to 128 cookie-octets",
                        clip(one)
                    )
                })?,
            [] => return Err("a page without a cookie made no session: no Set-Cookie".to_string()),
            many => {
                return Err(format!(
                    "a new session set {} cookies, want exactly one",
                    many.len()
                ))
            }
        };
        if p.shown.visits != 1 {
            return Err(format!(
                "a new session's first page shows visits {}, want 1",
                p.shown.visits
            ));
        }
        let off = p.shown.since - now_ms();
        if off.abs() > SINCE_SLACK_MS {
            return Err(format!(
                "a new session's since is {} ms, {} s from this machine's clock: it must be when the session was made, in milliseconds since 1970",
                p.shown.since,
                off / 1000
            ));
        }
        self.cookie = Some(pair);
        Ok(p)
    }

    /// A page on the running session: the counter one more than `last`,
    /// `since` the same, no other cookie.
    fn next(&mut self, k: u32, last: PageSession, gzip: bool) -> Result<Page, String> {
        let p = self.page(k, gzip)?;
        let mine = self.cookie.as_deref().unwrap_or("");
        if let Some(other) = p
            .set
            .iter()
            .find(|v| session_cookie(v.as_bytes()) != Some(mine.as_bytes()))
        {
            return Err(format!(
                "a page on a running session set another cookie, `{}`: the session's state must live on the server",
                clip(other)
            ));
        }
        if p.shown.visits != last.visits + 1 {
            return Err(format!(
                "a page on a session at visits {} shows visits {}, want {} (another session's counter, or none kept)",
                last.visits,
                p.shown.visits,
                last.visits + 1
            ));
        }
        if p.shown.since != last.since {
            return Err(format!(
                "since moved from {} to {} within one session",
                last.since, p.shown.since
            ));
        }
        Ok(p)
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn random_page(rng: &mut SplitMix64) -> u32 {
    1 + rng.below(u64::from(MAX_PAGE)) as u32
}

/// Two sessions, their pages interleaved: each keeps its own counter.
fn session(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    match two_sessions(ctx, rng) {
        Ok(why) => pass("app-session", why),
        Err(why) => fail("app-session", why),
    }
}

fn two_sessions(ctx: &Ctx<'_>, rng: &mut SplitMix64) -> Result<String, String> {
    let (mut a, mut b) = (Browser::new(ctx), Browser::new(ctx));
    let mut last_a = a.start(random_page(rng))?.shown;
    let mut last_b = b.start(random_page(rng))?.shown;
    if a.cookie == b.cookie {
        return Err(format!(
            "two new sessions got the same cookie `{}`",
            a.cookie.unwrap_or_default()
        ));
    }
    for _ in 0..2 {
        // A `since` rendered as the time of each page moves by then.
        std::thread::sleep(std::time::Duration::from_millis(3));
        last_a = a.next(random_page(rng), last_a, false)?.shown;
        last_b = b.next(random_page(rng), last_b, false)?.shown;
    }
    Ok(format!(
            "two sessions, pages interleaved: each set one cookie once and counted 1, 2, 3 on its own (`{}`)",
            clip(a.cookie.as_deref().unwrap_or(""))
        ))
}

/// Pages of three random K, every row and both files.
fn page(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    let mut b = Browser::new(ctx);
    let pages: Vec<u32> = (0..3).map(|_| random_page(rng)).collect();
    let mut last = match b.start(pages[0]) {
        Ok(p) => p.shown,
        Err(e) => return fail("app-page", e),
    };
    for &k in &pages[1..] {
        match b.next(k, last, false) {
            Ok(p) => last = p.shown,
            Err(e) => return fail("app-page", e),
        }
    }
    pass(
        "app-page",
        format!(
            "pages {}, {} and {}: their 50 item rows escaped and right, app.css and app.js byte for byte",
            pages[0], pages[1], pages[2]
        ),
    )
}

/// gzip when asked (with Vary), plain when not.
fn gzip(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    match gzip_pages(ctx, rng) {
        Ok(()) => pass(
            "app-gzip",
            "gzip with Vary: Accept-Encoding when asked, decoding to the page; plain when not",
        ),
        Err(why) => fail("app-gzip", why),
    }
}

fn gzip_pages(ctx: &Ctx<'_>, rng: &mut SplitMix64) -> Result<(), String> {
    let mut b = Browser::new(ctx);
    let mut last = b.start(random_page(rng))?;
    for asked in [true, false, true] {
        let p = b.next(random_page(rng), last.shown, asked)?;
        if asked && !p.gzip {
            return Err("a page asked for with Accept-Encoding: gzip came plain".to_string());
        }
        if asked && !p.vary {
            return Err("a gzip page has no Vary: Accept-Encoding".to_string());
        }
        last = p;
    }
    Ok(())
}

/// Distinct ids for new sessions, and a made-up cookie never adopted.
fn ids(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    let mut b = Browser::new(ctx);
    let mut seen = HashSet::new();
    for _ in 0..IDS {
        if let Err(e) = b.start(random_page(rng)) {
            return fail("app-ids", e);
        }
        let cookie = b.cookie.clone().unwrap_or_default();
        if !seen.insert(cookie.clone()) {
            return fail(
                "app-ids",
                format!(
                    "two of {IDS} new sessions got the same cookie `{}`",
                    clip(&cookie)
                ),
            );
        }
    }
    // A cookie of the server's name with a value it never made.
    let name = b
        .cookie
        .as_deref()
        .and_then(|c| c.split('=').next())
        .unwrap_or("sid")
        .to_string();
    let made_up = format!("{name}={:016x}{:016x}", rng.next_u64(), rng.next_u64());
    b.cookie = Some(made_up.clone());
    let p = match b.page(random_page(rng), false) {
        Ok(p) => p,
        Err(e) => return fail("app-ids", format!("with a made-up cookie: {e}")),
    };
    let adopted = p
        .set
        .iter()
        .any(|v| session_cookie(v.as_bytes()) == Some(made_up.as_bytes()));
    if p.shown.visits != 1 || p.set.is_empty() || adopted {
        return fail(
            "app-ids",
            format!(
                "a made-up cookie `{made_up}` got visits {} and {}: it names no session, so it must get a new one with a new id",
                p.shown.visits,
                if adopted { "was adopted as the id" } else if p.set.is_empty() { "no new cookie" } else { "a new cookie" }
            ),
        );
    }
    pass(
        "app-ids",
        format!(
            "{IDS} new sessions, {IDS} distinct ids; a made-up cookie got a new session and id"
        ),
    )
}

/// Many connections on one session at once: every counter value once.
fn lock(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    let mut first = Browser::new(ctx);
    if let Err(e) = first.start(random_page(rng)) {
        return fail("app-lock", e);
    }
    let cookie = first.cookie.clone();
    let pages: Vec<u32> = (0..LOCK_CONNECTIONS).map(|_| random_page(rng)).collect();
    let results: Vec<Result<Vec<u64>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pages
            .iter()
            .map(|&k| {
                let mut b = Browser {
                    cookie: cookie.clone(),
                    conn: None,
                    client: first.client.clone(),
                    prefix: first.prefix.clone(),
                };
                scope.spawn(move || -> Result<Vec<u64>, String> {
                    (0..LOCK_PAGES)
                        .map(|_| b.page(k, false).map(|p| p.shown.visits))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a checking thread panicked".to_string()))
            })
            .collect()
    });
    let mut visits = Vec::new();
    for r in results {
        match r {
            Ok(v) => visits.extend(v),
            Err(e) => return fail("app-lock", e),
        }
    }
    visits.sort_unstable();
    let want: Vec<u64> = (2..=(LOCK_CONNECTIONS * LOCK_PAGES) as u64 + 1).collect();
    if visits != want {
        let repeated = visits.windows(2).filter(|w| w[0] == w[1]).count();
        return fail(
            "app-lock",
            format!(
                "{LOCK_CONNECTIONS} connections x {LOCK_PAGES} pages on one session saw {} distinct visits of {} ({repeated} repeated, highest {}), want 2 to {} each once: the session is not locked from reading visits to the render",
                visits.iter().collect::<HashSet<_>>().len(),
                visits.len(),
                visits.last().copied().unwrap_or(0),
                want.len() + 1
            ),
        );
    }
    pass(
        "app-lock",
        format!(
            "{LOCK_CONNECTIONS} connections x {LOCK_PAGES} pages at once on one session: visits 2 to {}, each once",
            want.len() + 1
        ),
    )
}

/// A logout ends the session; its cookie then gets a new one.
fn logout(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    match log_out(ctx, rng) {
        Ok(()) => pass(
            "app-logout",
            "POST /app/logout was 200, and the old cookie then got a new session with a new id",
        ),
        Err(why) => fail("app-logout", why),
    }
}

fn log_out(ctx: &Ctx<'_>, rng: &mut SplitMix64) -> Result<(), String> {
    let mut b = Browser::new(ctx);
    let first = b.start(random_page(rng))?;
    b.next(random_page(rng), first.shown, false)?;
    let old = b.cookie.clone();
    let r = b.exchange("POST", LOGOUT_PATH, None)?;
    if r.status != 200 {
        return Err(format!(
            "POST {LOGOUT_PATH} answered {} (`{}`), want 200",
            r.status,
            clip(&r.body_text())
        ));
    }
    // The old cookie, sent again, names no session.
    b.cookie = old.clone();
    let p = b.page(random_page(rng), false)?;
    let fresh: Vec<&[u8]> = p
        .set
        .iter()
        .filter_map(|v| session_cookie(v.as_bytes()))
        .collect();
    let same = old
        .as_deref()
        .is_some_and(|o| fresh.contains(&o.as_bytes()));
    if p.shown.visits != 1 || fresh.len() != 1 || same {
        return Err(format!(
                "after POST {LOGOUT_PATH}, the old cookie got visits {} and {} new cookie(s){}: the session must be gone",
                p.shown.visits,
                fresh.len(),
                if same { ", the old one again" } else { "" }
            ));
    }
    Ok(())
}

/// A page number that is not one is 400.
fn errors(ctx: &mut Ctx<'_>) -> Check {
    let mut b = Browser::new(ctx);
    let beyond = format!("/app?page={}", MAX_PAGE + 1);
    for path in [
        "/app?page=0",
        beyond.as_str(),
        "/app?page=abc",
        "/app?page=",
        "/app",
    ] {
        match b.exchange("GET", path, None) {
            Ok(r) if r.status == 400 => {}
            Ok(r) => {
                return fail(
                    "app-errors",
                    format!("GET {path} answered {}, want 400", r.status),
                )
            }
            Err(e) => return fail("app-errors", e),
        }
    }
    pass(
        "app-errors",
        format!(
            "page=0, page={}, page=abc, page= and no page each answered 400",
            MAX_PAGE + 1
        ),
    )
}
