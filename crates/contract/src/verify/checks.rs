//! The individual conformance checks. Each sends real requests and turns
//! whatever happens into one `Check`.

use std::time::Duration;

use netbench_engine::{content_type_matches, BodyExpect, Framing};
use serde_json::Value;

use super::{fail, pass, warn, Check, Ctx};
use crate::client::{ClientError, Connection, Response};
use crate::generator::WorkCase;
use crate::timefmt::parse_http_date;

/// Long answers are cut in reasons so each stays one line.
pub(super) fn clip(s: &str) -> String {
    let s = s.replace(['\r', '\n'], " ");
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// GET `path` (under the server's prefix), kept for the framing and Date
/// checks: the answer when it is `200` with `want_type`, else why not.
pub(super) fn get_ok(ctx: &mut Ctx<'_>, path: &str, want_type: &str) -> Result<Response, String> {
    let full = ctx.path(path);
    let r = ctx
        .client()
        .request("GET", &full, None)
        .map_err(|e| format!("GET {path}: {e}"))?;
    ctx.saw(&format!("GET {path}"), &r);
    if r.status != 200 {
        return Err(format!(
            "GET {path} answered {} (`{}`), want 200",
            r.status,
            clip(&r.body_text())
        ));
    }
    let ct = content_type(&r);
    if !content_type_matches(want_type, ct.as_bytes()) {
        return Err(format!(
            "GET {path}: Content-Type is `{ct}`, want {want_type}"
        ));
    }
    Ok(r)
}

fn content_type(r: &Response) -> String {
    r.header("content-type").unwrap_or("(none)").to_string()
}

/// Why an answer to a work case is wrong, if it is.
pub(super) fn work_problem(case: &WorkCase, r: &Response) -> Option<String> {
    if r.status != 200 {
        return Some(format!(
            "answered {} (`{}`), want 200",
            r.status,
            clip(&r.body_text())
        ));
    }
    if !BodyExpect::json(case.expected.clone()).matches(&r.body) {
        return Some(format!(
            "expected {}, got `{}`",
            case.expected,
            clip(&r.body_text())
        ));
    }
    None
}

fn plain_text_problem(r: &Response, want_body: &str) -> Option<String> {
    if r.status != 200 {
        return Some(format!("answered {}, want 200", r.status));
    }
    if !r
        .header("content-type")
        .is_some_and(|ct| content_type_matches("text/plain", ct.as_bytes()))
    {
        return Some(format!(
            "Content-Type is `{}`, want text/plain",
            content_type(r)
        ));
    }
    if r.body != want_body.as_bytes() {
        return Some(format!(
            "body is {:?}, want {:?}",
            clip(&r.body_text()),
            want_body
        ));
    }
    None
}

pub(super) fn blank(ctx: &mut Ctx<'_>) -> Check {
    let path = ctx.path("/blank");
    match ctx.client().request("GET", &path, None) {
        Err(e) => fail("blank", format!("GET {path}: {e}")),
        Ok(r) => {
            ctx.saw("GET /blank", &r);
            match plain_text_problem(&r, "OK") {
                Some(p) => fail("blank", format!("GET {path} {p}")),
                None => pass("blank", format!("200 {} \"OK\"", content_type(&r))),
            }
        }
    }
}

pub(super) fn echo(ctx: &mut Ctx<'_>) -> Check {
    let token = format!("n{:x}", ctx.opts.seed);
    for text in ["abc", "a-b.c_d~e", "0123456789", token.as_str()] {
        let path = ctx.path(&format!("/echo/{text}"));
        match ctx.client().request("GET", &path, None) {
            Err(e) => return fail("echo", format!("GET {path}: {e}")),
            Ok(r) => {
                ctx.saw("GET /echo", &r);
                if let Some(p) = plain_text_problem(&r, text) {
                    return fail("echo", format!("GET {path} {p}"));
                }
            }
        }
    }
    pass("echo", "4 paths echoed back")
}

pub(super) fn not_found(ctx: &mut Ctx<'_>) -> Check {
    let path = ctx.path(&format!("/netbench-no-such-path-{:x}", ctx.opts.seed));
    match ctx.client().request("GET", &path, None) {
        Err(e) => fail("not-found", format!("GET {path}: {e}")),
        Ok(r) => {
            ctx.saw("an unknown path", &r);
            if r.status == 404 {
                pass("not-found", "404 for an unknown path")
            } else {
                fail(
                    "not-found",
                    format!("GET {path} answered {}, want 404", r.status),
                )
            }
        }
    }
}

/// Sends work cases on one connection, reconnecting when the server closes.
fn send_work(
    ctx: &Ctx<'_>,
    conn: &mut Option<Connection>,
    case: &WorkCase,
) -> Result<Response, ClientError> {
    let path = ctx.path("/work");
    if conn.is_none() {
        *conn = Some(ctx.client().connect()?);
    }
    let c = conn.as_mut().expect("connected above");
    let result = c.request("POST", &path, Some(&case.body));
    if result.as_ref().map_or(true, |r| r.close) {
        *conn = None;
    }
    result
}

/// The randomized work documents, and the Content-Type of their answers.
pub(super) fn work(ctx: &mut Ctx<'_>) -> [Check; 2] {
    let n = ctx.opts.documents.max(1);
    let cases = ctx.work.cases(n);
    let mut conn = None;
    let mut wrong_type = None;
    for (i, case) in cases.iter().enumerate() {
        let r = match send_work(ctx, &mut conn, case) {
            Ok(r) => r,
            Err(e) => {
                return [
                    fail("work", format!("document {} of {n}: {e}", i + 1)),
                    fail("work-content-type", "no work answer to check"),
                ]
            }
        };
        ctx.saw("POST /work", &r);
        if let Some(p) = work_problem(case, &r) {
            return [
                fail(
                    "work",
                    format!("document {} of {n} (seed {}): {p}", i + 1, ctx.opts.seed),
                ),
                match content_type_matches("application/json", content_type(&r).as_bytes()) {
                    true => pass("work-content-type", "application/json"),
                    false => fail(
                        "work-content-type",
                        format!("Content-Type is `{}`", content_type(&r)),
                    ),
                },
            ];
        }
        if wrong_type.is_none()
            && !r
                .header("content-type")
                .is_some_and(|ct| content_type_matches("application/json", ct.as_bytes()))
        {
            wrong_type = Some(content_type(&r));
        }
    }
    [
        pass(
            "work",
            format!(
                "{n} random documents answered right (seed {})",
                ctx.opts.seed
            ),
        ),
        match wrong_type {
            None => pass("work-content-type", "application/json"),
            Some(ct) => fail(
                "work-content-type",
                format!("Content-Type is `{ct}`, want application/json"),
            ),
        },
    ]
}

/// A work request sent in an unusual but valid way by `send`, which must
/// still get its right answer.
fn unusual_work_request(
    ctx: &mut Ctx<'_>,
    name: &'static str,
    what: &str,
    send: impl FnOnce(&mut Connection, &str, &[u8]) -> Result<(), ClientError>,
) -> Check {
    let case = ctx.work.next_case();
    let path = ctx.path("/work");
    let result = ctx.client().connect().and_then(|mut c| {
        send(&mut c, &path, &case.body)?;
        c.read_response(false)
    });
    match result {
        Err(e) => fail(name, format!("{what}: {e}")),
        Ok(r) => {
            ctx.saw(what, &r);
            match work_problem(&case, &r) {
                Some(p) => fail(name, format!("{what}: {p}")),
                None => pass(name, format!("{what} answered right")),
            }
        }
    }
}

pub(super) fn split_request(ctx: &mut Ctx<'_>) -> Check {
    unusual_work_request(
        ctx,
        "split-request",
        "a request in 3 writes, 50 ms apart",
        |c, path, body| {
            let bytes = c.request_bytes("POST", path, Some(body));
            c.send_split(&bytes, 3, Duration::from_millis(50))
        },
    )
}

pub(super) fn chunked_request(ctx: &mut Ctx<'_>) -> Check {
    unusual_work_request(
        ctx,
        "chunked-request",
        "a chunked request body",
        |c, path, body| {
            let bytes = c.chunked_request_bytes(path, body, 64);
            c.send(&bytes)
        },
    )
}

/// Documents that must be refused with 400, each its own check.
pub(super) fn rejections(ctx: &mut Ctx<'_>) -> Vec<Check> {
    let case = ctx.work.next_case();
    let doc: Value = serde_json::from_slice(&case.body).expect("generated documents are JSON");
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut d = doc.clone();
        f(&mut d);
        serde_json::to_vec(&d).expect("a Value always serializes")
    };
    let bodies: [(&'static str, &str, Vec<u8>); 4] = [
        (
            "bad-json",
            "a body that is not JSON",
            b"{\"product\": \"x\", ".to_vec(),
        ),
        (
            "missing-field",
            "a document without requestId",
            edit(&|d| {
                d.as_object_mut().unwrap().remove("requestId");
            }),
        ),
        (
            "wrong-type",
            "group.default as a string",
            edit(&|d| d["group"]["default"] = "yes".into()),
        ),
        (
            "empty-dates",
            "an empty dates list",
            edit(&|d| d["group"]["dates"] = Value::Array(vec![])),
        ),
    ];
    let path = ctx.path("/work");
    let mut out = Vec::new();
    for (name, what, body) in bodies {
        out.push(match ctx.client().request("POST", &path, Some(&body)) {
            Err(e) => fail(name, format!("{what}: {e}")),
            Ok(r) => {
                ctx.saw(what, &r);
                if r.status == 400 {
                    pass(name, format!("400 for {what}"))
                } else {
                    fail(name, format!("{what} answered {}, want 400", r.status))
                }
            }
        });
    }
    out.push(bad_dates(ctx, &doc));
    out
}

/// Dates that look nearly right: each is a way a lax parser lets a wrong
/// date through (a string compare, a library that accepts signs or offsets,
/// calendar arithmetic that rolls over).
const NEAR_MISS_DATES: [&str; 9] = [
    "2020-13-45T99:00:00.000Z",
    "2021-02-29T00:00:00.000Z",
    "2020-01-01T24:00:00.000Z",
    "2020-01-01T00:00:60.000Z",
    "2020-01-01T00:00:00.+01Z",
    "2020-01-01T00:00:00.000+00:00",
    "2020-01-01T00:00:00Z",
    "2020-1-01T00:00:00.000Z",
    "2020-01-01 00:00:00.000Z",
];

/// `bad-date`: every near-miss date is answered 400.
/// `doc` is a good document; each attempt replaces its second date.
fn bad_dates(ctx: &mut Ctx<'_>, doc: &Value) -> Check {
    let path = ctx.path("/work");
    for date in NEAR_MISS_DATES {
        let what = format!("the date {date}");
        let mut d = doc.clone();
        d["group"]["dates"][1] = date.into();
        let body = serde_json::to_vec(&d).expect("a Value always serializes");
        match ctx.client().request("POST", &path, Some(&body)) {
            Err(e) => return fail("bad-date", format!("{what}: {e}")),
            Ok(r) => {
                ctx.saw(&what, &r);
                if r.status != 400 {
                    return fail(
                        "bad-date",
                        format!("{what} answered {}, want 400", r.status),
                    );
                }
            }
        }
    }
    pass(
        "bad-date",
        format!("400 for each of {} near-miss dates", NEAR_MISS_DATES.len()),
    )
}

pub(super) fn keep_alive(ctx: &mut Ctx<'_>) -> Check {
    const N: usize = 100;
    let mut conn = match ctx.client().connect() {
        Ok(c) => c,
        Err(e) => return fail("keep-alive", e.to_string()),
    };
    let (blank, work, echo) = (
        ctx.path("/blank"),
        ctx.path("/work"),
        ctx.path("/echo/keep-alive"),
    );
    for i in 0..N {
        let (what, result) = match i % 3 {
            0 => (
                "GET /blank",
                conn.request("GET", &blank, None)
                    .map(|r| (plain_text_problem(&r, "OK"), r)),
            ),
            1 => {
                let case = ctx.work.next_case();
                (
                    "POST /work",
                    conn.request("POST", &work, Some(&case.body))
                        .map(|r| (work_problem(&case, &r), r)),
                )
            }
            _ => (
                "GET /echo",
                conn.request("GET", &echo, None)
                    .map(|r| (plain_text_problem(&r, "keep-alive"), r)),
            ),
        };
        match result {
            Err(e) => {
                return fail(
                    "keep-alive",
                    format!("request {} of {N} on one connection ({what}): {e}", i + 1),
                )
            }
            Ok((Some(p), _)) => {
                return fail(
                    "keep-alive",
                    format!("request {} of {N} ({what}) {p}", i + 1),
                )
            }
            Ok((None, r)) if r.close && i + 1 < N => {
                return fail(
                    "keep-alive",
                    format!("the server closed the connection after {} requests", i + 1),
                )
            }
            Ok(_) => {}
        }
    }
    pass("keep-alive", format!("{N} requests on one connection"))
}

pub(super) fn framing(ctx: &Ctx<'_>) -> Check {
    match ctx.seen.iter().find(|s| s.framing == Framing::UntilClose) {
        Some(s) => fail(
            "framing",
            format!(
                "the answer to {} has neither Content-Length nor chunked encoding",
                s.what
            ),
        ),
        None if ctx.seen.is_empty() => fail("framing", "no answers to check"),
        None => pass(
            "framing",
            format!("{} answers framed by length or chunks", ctx.seen.len()),
        ),
    }
}

pub(super) fn date(ctx: &mut Ctx<'_>) -> Check {
    for s in &ctx.seen {
        match &s.date {
            None => {
                return fail(
                    "date",
                    format!("no Date header on the answer to {}", s.what),
                )
            }
            Some(d) if parse_http_date(d).is_none() => {
                return fail(
                    "date",
                    format!("Date `{d}` on {} is not an IMF-fixdate", s.what),
                )
            }
            Some(_) => {}
        }
    }
    let path = ctx.path("/blank");
    let (a, ta) = match date_of(ctx, &path) {
        Ok(d) => d,
        Err(e) => return fail("date", e),
    };
    // The Date must move within the window, asked every DATE_POLL: a server
    // that caches its Date and refreshes it once a second from its event
    // loop's tick (uvicorn, nginx, h2o, fasthttp) refreshes late when a busy
    // machine delays the tick, so one look after 1.1 s failed correct servers
    // under load. RFC 9110 §6.6.1 asks for the best available approximation
    // of the time; TechEmpower's verification allowed 3 s. A Date that does
    // not move in the whole window is frozen, not late.
    let started = std::time::Instant::now();
    let (b, tb) = loop {
        std::thread::sleep(DATE_POLL);
        let (b, tb) = match date_of(ctx, &path) {
            Ok(d) => d,
            Err(e) => return fail("date", e),
        };
        if tb != ta {
            break (b, tb);
        }
        if started.elapsed() >= ctx.opts.date_window {
            return fail(
                "date",
                format!(
                    "Date stayed `{a}` over {:.1} s: it must be the current time",
                    started.elapsed().as_secs_f64()
                ),
            );
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if (tb - now).abs() > 60 {
        return warn(
            "date",
            format!(
                "Date `{b}` is {} s away from this machine's clock",
                tb - now
            ),
        );
    }
    pass(
        "date",
        "a valid Date on every answer, and it moves with time",
    )
}

/// How often the Date check asks again while it waits for the Date to move.
const DATE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// One GET of `path`: its Date header as sent and as seconds since the epoch.
fn date_of(ctx: &Ctx<'_>, path: &str) -> Result<(String, i64), String> {
    let r = ctx
        .client()
        .request("GET", path, None)
        .map_err(|e| format!("GET {path}: {e}"))?;
    let d = r
        .header("date")
        .ok_or_else(|| format!("no Date header on GET {path}"))?;
    let t = parse_http_date(d).ok_or_else(|| format!("Date `{d}` is not an IMF-fixdate"))?;
    Ok((d.to_string(), t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_near_miss_date_is_one_the_contract_rejects() {
        for date in NEAR_MISS_DATES {
            assert_eq!(crate::parse_iso_millis(date), None, "{date}");
        }
    }
}
