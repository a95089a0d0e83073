//! The `json-comp` checks (CONTRACT.md, "json-comp"): `/work` answers
//! compressed when `Accept-Encoding` allows it and plain when it does not,
//! each decoded (within `MAX_DECODED`, so a decompression bomb is refused,
//! not swallowed) and checked as the `work` check checks a plain one.

use super::checks::{clip, work_problem};
use super::{fail, pass, Check, Ctx};
use crate::client::{ClientError, Connection, Response};
use crate::digest::{decode, Coding, MAX_DECODED};
use crate::generator::WorkCase;

/// Work documents per check.
const DOCUMENTS: usize = 10;

pub(super) fn checks(ctx: &mut Ctx<'_>) -> Vec<Check> {
    vec![gzip(ctx), plain(ctx), brotli(ctx)]
}

/// One work answer as it came and as it decodes.
struct Compressed {
    coding: Option<Coding>,
    /// The body's bytes on the wire.
    wire: usize,
    /// The answer with its body decoded.
    decoded: Response,
}

/// Sends `case` with `accept` (no Accept-Encoding when None) on `conn`,
/// reconnecting when the server closed it, and decodes the answer.
fn ask(
    ctx: &mut Ctx<'_>,
    conn: &mut Option<Connection>,
    case: &WorkCase,
    accept: Option<&str>,
) -> Result<Compressed, String> {
    let path = ctx.path("/work");
    let what = match accept {
        Some(a) => format!("POST {path} with Accept-Encoding: {a}"),
        None => format!("POST {path} without Accept-Encoding"),
    };
    if conn.is_none() {
        *conn = Some(ctx.client().connect().map_err(|e| format!("{what}: {e}"))?);
    }
    let c = conn.as_mut().expect("connected above");
    let length = case.body.len().to_string();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Content-Length", length.as_str()),
    ];
    if let Some(a) = accept {
        headers.push(("Accept-Encoding", a));
    }
    let mut bytes = c.head_bytes("POST", &path, &headers);
    bytes.extend_from_slice(&case.body);
    let sent: Result<Response, ClientError> = c.send(&bytes).and_then(|_| c.read_response(false));
    let r = sent.map_err(|e| {
        *conn = None;
        format!("{what}: {e}")
    })?;
    if r.close {
        *conn = None;
    }
    ctx.saw("POST /work", &r);
    let coding = Coding::parse(r.header("content-encoding")).map_err(|e| format!("{what}: {e}"))?;
    let wire = r.body.len();
    let mut decoded = r;
    if let Some(coding) = coding {
        decoded.body =
            decode(coding, &decoded.body, MAX_DECODED).map_err(|e| format!("{what}: {e}"))?;
    }
    if let Some(p) = work_problem(case, &decoded) {
        return Err(format!("{what}, decoded: {p}"));
    }
    Ok(Compressed {
        coding,
        wire,
        decoded,
    })
}

/// Whether a `Vary` value lists `Accept-Encoding` (or is `*`).
fn varies_on_encoding(vary: Option<&str>) -> bool {
    vary.is_some_and(|v| {
        v.split(',')
            .map(str::trim)
            .any(|f| f == "*" || f.eq_ignore_ascii_case("accept-encoding"))
    })
}

fn gzip(ctx: &mut Ctx<'_>) -> Check {
    let cases = ctx.work.cases(DOCUMENTS);
    let mut conn = None;
    let (mut wire, mut plain) = (0, 0);
    for case in &cases {
        let got = match ask(ctx, &mut conn, case, Some("gzip")) {
            Ok(g) => g,
            Err(why) => return fail("json-comp-gzip", why),
        };
        if got.coding != Some(Coding::Gzip) {
            return fail(
                "json-comp-gzip",
                format!(
                    "Accept-Encoding: gzip was answered with Content-Encoding `{}`, want gzip",
                    got.decoded.header("content-encoding").unwrap_or("(none)")
                ),
            );
        }
        let vary = got.decoded.header("vary");
        if !varies_on_encoding(vary) {
            return fail(
                "json-comp-gzip",
                format!(
                    "a gzip answer has Vary `{}`: it must list Accept-Encoding, so caches keep the plain and the compressed answer apart",
                    clip(vary.unwrap_or("(none)"))
                ),
            );
        }
        wire += got.wire;
        plain += got.decoded.body.len();
    }
    pass(
        "json-comp-gzip",
        format!(
            "{DOCUMENTS} documents answered gzip with Vary: Accept-Encoding, each right once decoded ({} B on the wire for {} B of JSON, on average)",
            wire / DOCUMENTS,
            plain / DOCUMENTS
        ),
    )
}

fn plain(ctx: &mut Ctx<'_>) -> Check {
    let cases = ctx.work.cases(DOCUMENTS);
    let mut conn = None;
    for (i, case) in cases.iter().enumerate() {
        let accept = if i % 2 == 0 { None } else { Some("identity") };
        let got = match ask(ctx, &mut conn, case, accept) {
            Ok(g) => g,
            Err(why) => return fail("json-comp-plain", why),
        };
        if let Some(coding) = got.coding {
            return fail(
                "json-comp-plain",
                format!(
                    "{} was answered with Content-Encoding {}: compress only what the client asks for",
                    match accept {
                        Some(a) => format!("Accept-Encoding: {a}"),
                        None => "a request without Accept-Encoding".to_string(),
                    },
                    coding.as_str()
                ),
            );
        }
    }
    pass(
        "json-comp-plain",
        format!("{DOCUMENTS} documents without Accept-Encoding or with identity answered plain"),
    )
}

fn brotli(ctx: &mut Ctx<'_>) -> Check {
    let cases = ctx.work.cases(4);
    let mut conn = None;
    let mut used = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (accept, allowed): (&str, &[Coding]) = if i % 2 == 0 {
            ("br", &[Coding::Brotli])
        } else {
            ("gzip, br", &[Coding::Gzip, Coding::Brotli])
        };
        let got = match ask(ctx, &mut conn, case, Some(accept)) {
            Ok(g) => g,
            Err(why) => return fail("json-comp-br", why),
        };
        // Brotli is optional: plain is a right answer to `br` alone.
        match got.coding {
            Some(c) if !allowed.contains(&c) => {
                return fail(
                    "json-comp-br",
                    format!(
                        "Accept-Encoding: {accept} was answered with Content-Encoding {}, which it does not allow",
                        c.as_str()
                    ),
                )
            }
            None if i % 2 == 1 => {
                return fail(
                    "json-comp-br",
                    "Accept-Encoding: gzip, br was answered plain: it allows gzip",
                )
            }
            _ => {}
        }
        used.push(format!(
            "{accept}: {}",
            got.coding.map_or("plain", Coding::as_str)
        ));
    }
    used.sort();
    used.dedup();
    pass(
        "json-comp-br",
        format!("answered right ({})", used.join("; ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_lists() {
        assert!(varies_on_encoding(Some("Accept-Encoding")));
        assert!(varies_on_encoding(Some("Origin, accept-encoding")));
        assert!(varies_on_encoding(Some("*")));
        assert!(!varies_on_encoding(Some("Origin")));
        assert!(!varies_on_encoding(None));
    }
}
