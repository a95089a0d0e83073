//! The `static` checks (CONTRACT.md, "static"): both files byte for byte
//! against the contract's formula, framed by a Content-Length that leaves the
//! connection usable, with validators, and the 304 of `If-None-Match`.

use netbench_engine::Framing;

use super::checks::clip;
use super::{fail, pass, Check, Ctx};
use crate::client::{ClientError, Response};
use crate::static_files::{static_bytes, StaticFile, STATIC_FILES};
use crate::timefmt::parse_http_date;

/// How far a Last-Modified may be ahead of the answer's Date (clocks of
/// a file system and a cached Date differ by a second or so).
const FUTURE_SLACK_S: i64 = 60;

/// One file asked for, then `/blank` on the same connection.
struct Fetched {
    file: StaticFile,
    want: Vec<u8>,
    answer: Response,
    /// What the connection answered next: wrong when the file's answer
    /// sent more or fewer bytes than it said.
    next: Result<Response, ClientError>,
}

pub(super) const NAMES: [&str; 4] = [
    "static-content",
    "static-length",
    "static-headers",
    "static-304",
];

pub(super) fn checks(ctx: &mut Ctx<'_>) -> Vec<Check> {
    let mut first = Vec::new();
    let mut again = Vec::new();
    for file in STATIC_FILES {
        for into in [&mut first, &mut again] {
            match fetch(ctx, file) {
                Ok(f) => into.push(f),
                Err(why) => {
                    return NAMES
                        .iter()
                        .map(|&n| fail(n, format!("not checked: {why}")))
                        .collect()
                }
            }
        }
    }
    let both: Vec<&Fetched> = first.iter().chain(&again).collect();
    vec![
        content(&both),
        length(&both),
        headers(&first, &again),
        not_modified(ctx, &first),
    ]
}

fn fetch(ctx: &mut Ctx<'_>, file: StaticFile) -> Result<Fetched, String> {
    let path = ctx.path(&format!("/static/{}", file.name));
    let mut conn = ctx
        .client()
        .connect()
        .map_err(|e| format!("GET {path}: {e}"))?;
    let answer = conn
        .request("GET", &path, None)
        .map_err(|e| format!("GET {path}: {e}"))?;
    ctx.saw(&format!("GET /static/{}", file.name), &answer);
    let next = if answer.close {
        Err(ClientError::Closed)
    } else {
        conn.request("GET", &ctx.path("/blank"), None)
    };
    Ok(Fetched {
        file,
        want: static_bytes(file.size),
        answer,
        next,
    })
}

/// Why `got` is not the file `want`, if it is not.
fn differs(want: &[u8], got: &[u8]) -> Option<String> {
    if let Some(at) = want.iter().zip(got).position(|(a, b)| a != b) {
        return Some(format!(
            "byte {at} is {:?}, want {:?} (the formula of CONTRACT.md, \"static\")",
            char::from(got[at]),
            char::from(want[at])
        ));
    }
    match got.len().cmp(&want.len()) {
        std::cmp::Ordering::Less => Some(format!(
            "the body stops after {} of its {} bytes",
            got.len(),
            want.len()
        )),
        std::cmp::Ordering::Greater => Some(format!(
            "the body has {} bytes, {} more than the file",
            got.len(),
            got.len() - want.len()
        )),
        std::cmp::Ordering::Equal => None,
    }
}

fn content(all: &[&Fetched]) -> Check {
    for f in all {
        let r = &f.answer;
        if r.status != 200 {
            return fail(
                "static-content",
                format!(
                    "GET /static/{} answered {} (`{}`), want 200",
                    f.file.name,
                    r.status,
                    clip(&r.body_text())
                ),
            );
        }
        if let Some(why) = differs(&f.want, &r.body) {
            return fail("static-content", format!("/static/{}: {why}", f.file.name));
        }
    }
    pass(
        "static-content",
        format!(
            "{} answers, each the file byte for byte ({})",
            all.len(),
            sizes()
        ),
    )
}

fn sizes() -> String {
    STATIC_FILES
        .iter()
        .map(|f| format!("{} B", f.size))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn length(all: &[&Fetched]) -> Check {
    for f in all {
        let name = f.file.name;
        match f.answer.framing {
            Framing::ContentLength(_) => {}
            other => {
                return fail(
                    "static-length",
                    format!("/static/{name} is framed by {other:?}, want Content-Length"),
                )
            }
        }
        match &f.next {
            Ok(r) if r.status == 200 && r.body == b"OK" => {}
            Ok(r) => {
                return fail(
                    "static-length",
                    format!(
                        "GET /blank after /static/{name} on its connection answered {} `{}`: \
                         the file's answer sent other bytes than its Content-Length said",
                        r.status,
                        clip(&r.body_text())
                    ),
                )
            }
            Err(ClientError::Closed) => {
                return fail(
                    "static-length",
                    format!("the server closed the connection after /static/{name}"),
                )
            }
            Err(e) => {
                return fail(
                    "static-length",
                    format!(
                        "GET /blank after /static/{name} on its connection: {e} \
                         (the file's answer sent other bytes than its Content-Length said)"
                    ),
                )
            }
        }
    }
    pass(
        "static-length",
        "every file framed by Content-Length, and the connection answers right after it",
    )
}

/// An entity-tag as RFC 9110 §8.8.3 writes it: `"..."` or `W/"..."`.
fn is_entity_tag(v: &str) -> bool {
    let tag = v.strip_prefix("W/").unwrap_or(v);
    tag.len() >= 2
        && tag.starts_with('"')
        && tag.ends_with('"')
        && !tag[1..tag.len() - 1].contains('"')
}

fn headers(first: &[Fetched], again: &[Fetched]) -> Check {
    for (a, b) in first.iter().zip(again) {
        let name = a.file.name;
        let Some(etag) = a.answer.header("etag") else {
            return fail("static-headers", format!("/static/{name} has no ETag"));
        };
        if !is_entity_tag(etag) {
            return fail(
                "static-headers",
                format!("/static/{name} has ETag `{}`: an entity-tag is quoted, `\"...\"` or `W/\"...\"`", clip(etag)),
            );
        }
        if b.answer.header("etag") != Some(etag) {
            return fail(
                "static-headers",
                format!(
                    "/static/{name} changed its ETag from `{etag}` to `{}` between two requests: the file did not change",
                    b.answer.header("etag").unwrap_or("(none)")
                ),
            );
        }
        let Some(modified) = a.answer.header("last-modified") else {
            return fail(
                "static-headers",
                format!("/static/{name} has no Last-Modified"),
            );
        };
        let Some(when) = parse_http_date(modified) else {
            return fail(
                "static-headers",
                format!(
                    "/static/{name} has Last-Modified `{}`: not an IMF-fixdate",
                    clip(modified)
                ),
            );
        };
        let date = a.answer.header("date").and_then(parse_http_date);
        if date.is_some_and(|d| when > d + FUTURE_SLACK_S) {
            return fail(
                "static-headers",
                format!("/static/{name} was Last-Modified `{modified}`, after the answer's Date"),
            );
        }
    }
    pass(
        "static-headers",
        "each file has a valid ETag, the same on every request, and a Last-Modified",
    )
}

/// `If-None-Match` with the file's ETag gets 304 and no body; with another
/// tag, the whole file. Both on one connection, which must carry on.
fn not_modified(ctx: &mut Ctx<'_>, first: &[Fetched]) -> Check {
    let mut told = Vec::new();
    for f in first {
        let name = f.file.name;
        let Some(etag) = f.answer.header("etag") else {
            return fail(
                "static-304",
                format!("/static/{name} has no ETag to send back"),
            );
        };
        let path = ctx.path(&format!("/static/{name}"));
        let other = format!("\"netbench-not-this-{:x}\"", ctx.opts.seed);
        let result = ctx.client().connect().and_then(|mut c| {
            let same = c.head_bytes("GET", &path, &[("If-None-Match", etag)]);
            c.send(&same)?;
            let same = c.read_response(false)?;
            if same.close {
                return Ok((same, None));
            }
            let changed = c.head_bytes("GET", &path, &[("If-None-Match", &other)]);
            c.send(&changed)?;
            Ok((same, Some(c.read_response(false)?)))
        });
        let (same, changed) = match result {
            Ok(r) => r,
            Err(e) => return fail("static-304", format!("GET {path} with If-None-Match: {e}")),
        };
        ctx.saw(&format!("a conditional GET /static/{name}"), &same);
        if same.status != 304 {
            return fail(
                "static-304",
                format!(
                    "/static/{name} with If-None-Match: {etag} (its own ETag) answered {}, want 304",
                    same.status
                ),
            );
        }
        if !same.body.is_empty() {
            return fail(
                "static-304",
                format!("the 304 for /static/{name} has a body"),
            );
        }
        let Some(changed) = changed else {
            told.push(name);
            continue;
        };
        ctx.saw(&format!("a conditional GET /static/{name}"), &changed);
        if changed.status != 200 {
            return fail(
                "static-304",
                format!(
                    "/static/{name} with If-None-Match: {other} (not its ETag) answered {}, want 200",
                    changed.status
                ),
            );
        }
        // Its bytes are static-content's to check; here only that it came.
        if changed.body.is_empty() {
            return fail(
                "static-304",
                format!("/static/{name} with If-None-Match: {other} (not its ETag) answered 200 without a body"),
            );
        }
    }
    let mut reason =
        "its own ETag in If-None-Match gets 304 without a body, another ETag a 200 with the file"
            .to_string();
    if !told.is_empty() {
        reason.push_str(&format!(
            " (the server closed the connection after the 304 of {})",
            told.join(", ")
        ));
    }
    pass("static-304", reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_tags() {
        for ok in ["\"abc\"", "W/\"abc\"", "\"\"", "\"5f-3a\""] {
            assert!(is_entity_tag(ok), "{ok}");
        }
        for bad in ["abc", "W/abc", "\"", "\"a\"b\"", "'abc'"] {
            assert!(!is_entity_tag(bad), "{bad}");
        }
    }

    #[test]
    fn differences_name_the_first_wrong_byte_or_the_length() {
        assert_eq!(differs(b"abc", b"abc"), None);
        assert!(differs(b"abc", b"abd")
            .unwrap()
            .starts_with("byte 2 is 'd'"));
        assert!(differs(b"abc", b"ab").unwrap().contains("after 2 of its 3"));
        assert!(differs(b"abc", b"abcd").unwrap().contains("1 more"));
    }
}
