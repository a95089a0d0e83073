//! The `upload` checks (CONTRACT.md, "upload"): bodies of 1 KiB to 8 MiB,
//! fresh bytes from the seed each run, answered with their length and
//! SHA-256; no answer before the body is whole; and the refusal (413) of a
//! body over the limit, a 10 GB one included, without reading it.

use std::time::Duration;

use netbench_engine::content_type_matches;
use serde_json::Value;

use super::checks::clip;
use super::{fail, pass, warn, Check, Ctx};
use crate::client::{ClientError, Connection, Response};
use crate::digest::sha256_hex;
use crate::rng::SplitMix64;

/// The smallest and largest body the contract asks a server to take.
pub const MIN_UPLOAD: usize = 1024;
pub const MAX_UPLOAD: usize = 8 << 20;
/// Bodies over this must be refused with 413 (CONTRACT.md, "upload").
pub const UPLOAD_LIMIT: u64 = 16 << 20;
/// The hostile Content-Length: 10 GB, which no server may try to read.
const HUGE: u64 = 10_000_000_000;
/// What `verify` sends of an oversized body before it waits for the 413.
const SENT_OF_OVERSIZED: usize = 64 * 1024;
/// How long `upload-early` waits, the body's last byte held back, for an
/// answer that must not come yet. A server that answers from the head alone
/// does so at once; a correct one never does, so a slow machine can only
/// let a flawed server pass, never fail a correct one.
const EARLY_WAIT: Duration = Duration::from_millis(500);

pub(super) fn checks(ctx: &mut Ctx<'_>) -> Vec<Check> {
    let mut rng = SplitMix64::new(ctx.opts.seed ^ 0x7570_6c6f_6164);
    vec![digests(ctx, &mut rng), early(ctx, &mut rng), too_large(ctx)]
}

fn body(rng: &mut SplitMix64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Sizes spread evenly in logarithm between the smallest and the largest,
/// so small bodies are checked as often as large ones.
fn random_size(rng: &mut SplitMix64) -> usize {
    let (lo, hi) = ((MIN_UPLOAD as f64).ln(), (MAX_UPLOAD as f64).ln());
    let unit = rng.next_u64() as f64 / u64::MAX as f64;
    ((lo + unit * (hi - lo)).exp() as usize).clamp(MIN_UPLOAD, MAX_UPLOAD)
}

fn upload_head(conn: &Connection, path: &str, length: Option<u64>) -> Vec<u8> {
    let framing = match length {
        Some(n) => ("Content-Length", n.to_string()),
        None => ("Transfer-Encoding", "chunked".to_string()),
    };
    conn.head_bytes(
        "POST",
        path,
        &[
            ("Content-Type", "application/octet-stream"),
            (framing.0, &framing.1),
        ],
    )
}

/// Why `r` is not the right answer to an upload of `sent`, if it is not.
pub fn upload_problem(sent: &[u8], r: &Response) -> Option<String> {
    if r.status != 200 {
        return Some(format!(
            "answered {} (`{}`), want 200",
            r.status,
            clip(&r.body_text())
        ));
    }
    let ct = r.header("content-type").unwrap_or("(none)");
    if !content_type_matches("application/json", ct.as_bytes()) {
        return Some(format!("Content-Type is `{ct}`, want application/json"));
    }
    let want_digest = sha256_hex(sent);
    let doc: Value = match serde_json::from_slice(&r.body) {
        Ok(v) => v,
        Err(e) => {
            return Some(format!(
                "the answer is not JSON ({e}): `{}`",
                clip(&r.body_text())
            ))
        }
    };
    let Some(obj) = doc.as_object() else {
        return Some(format!(
            "the answer `{}` is not a JSON object",
            clip(&r.body_text())
        ));
    };
    if let Some(extra) = obj.keys().find(|k| *k != "length" && *k != "sha256") {
        return Some(format!(
            "the answer has the key `{extra}`: only length and sha256 are allowed"
        ));
    }
    match obj.get("length").and_then(Value::as_u64) {
        Some(n) if n == sent.len() as u64 => {}
        Some(n) => return Some(format!("length is {n}, want {}", sent.len())),
        None => return Some(format!("no integer length in `{}`", clip(&r.body_text()))),
    }
    match obj.get("sha256").and_then(Value::as_str) {
        Some(d) if d == want_digest => None,
        Some(d) if d.eq_ignore_ascii_case(&want_digest) => {
            Some("sha256 is in capitals: write it in lowercase hex".to_string())
        }
        Some(d) => Some(format!("sha256 is {}, want {want_digest}", clip(d))),
        None => Some(format!("no string sha256 in `{}`", clip(&r.body_text()))),
    }
}

/// Sends `sent` as one upload on `conn`, with a Content-Length or chunked.
fn send_upload(
    conn: &mut Connection,
    path: &str,
    sent: &[u8],
    chunked: bool,
) -> Result<Response, ClientError> {
    if chunked {
        let mut bytes = upload_head(conn, path, None);
        for piece in sent.chunks(64 * 1024) {
            bytes.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            bytes.extend_from_slice(piece);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
        conn.send(&bytes)?;
    } else {
        let head = upload_head(conn, path, Some(sent.len() as u64));
        conn.send(&[head.as_slice(), sent].concat())?;
    }
    conn.read_response(false)
}

fn digests(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    let path = ctx.path("/upload");
    let mut sizes = vec![MIN_UPLOAD, MAX_UPLOAD];
    sizes.extend((0..4).map(|_| random_size(rng)));
    let mut conn: Option<Connection> = None;
    for (i, &len) in sizes.iter().enumerate() {
        // One of the random sizes goes chunked: the contract's bodies may.
        let chunked = i == sizes.len() - 1;
        let what = format!(
            "a {len} B upload{}",
            if chunked { " with a chunked body" } else { "" }
        );
        let sent = body(rng, len);
        if conn.is_none() {
            match ctx.client().connect() {
                Ok(c) => conn = Some(c),
                Err(e) => return fail("upload-digest", format!("POST {path}: {e}")),
            }
        }
        let c = conn.as_mut().expect("connected above");
        let r = match send_upload(c, &path, &sent, chunked) {
            Ok(r) => r,
            Err(e) => return fail("upload-digest", format!("{what}: {e}")),
        };
        ctx.saw("POST /upload", &r);
        if r.close {
            conn = None;
        }
        if let Some(why) = upload_problem(&sent, &r) {
            return fail(
                "upload-digest",
                format!("{what} (seed {}): {why}", ctx.opts.seed),
            );
        }
    }
    pass(
        "upload-digest",
        format!(
            "{} uploads of {sizes:?} B (the last chunked) answered with their length and SHA-256",
            sizes.len()
        ),
    )
}

fn early(ctx: &mut Ctx<'_>, rng: &mut SplitMix64) -> Check {
    let path = ctx.path("/upload");
    let sent = body(rng, 64 * 1024);
    let what = "a 64 KiB upload with its last byte held back";
    let result = ctx.client().connect().and_then(|mut c| {
        let head = upload_head(&c, &path, Some(sent.len() as u64));
        c.send(&[head.as_slice(), &sent[..sent.len() - 1]].concat())?;
        let early = c.early_bytes(EARLY_WAIT);
        if let Ok(0) = early {
            c.send(&sent[sent.len() - 1..])?;
        }
        Ok((early, c.read_response(false)))
    });
    let (early, answer) = match result {
        Ok(r) => r,
        Err(e) => return fail("upload-early", format!("{what}: {e}")),
    };
    match early {
        Ok(0) => {}
        Ok(_) => {
            return fail(
                "upload-early",
                format!(
                    "{what} was answered before the body was all sent: the server must read the whole body, then answer"
                ),
            )
        }
        Err(ClientError::Closed) => {
            return fail(
                "upload-early",
                format!("{what}: the server closed the connection before the body was all sent"),
            )
        }
        Err(e) => return fail("upload-early", format!("{what}: {e}")),
    }
    match answer {
        Err(e) => fail("upload-early", format!("{what}, then the last byte: {e}")),
        Ok(r) => {
            ctx.saw("POST /upload", &r);
            // Whether the answer is right is upload-digest's to say; here
            // only that it came after the body, as a success.
            if r.status == 200 {
                pass(
                    "upload-early",
                    format!(
                        "no answer within {} ms while the body's last byte was held back, 200 after it",
                        EARLY_WAIT.as_millis()
                    ),
                )
            } else {
                fail(
                    "upload-early",
                    format!(
                        "{what}, then the last byte: answered {}, want 200",
                        r.status
                    ),
                )
            }
        }
    }
}

/// An oversized upload: its head and the first 64 KiB of its body, then
/// whatever the server says. Write errors are not failures: a server may
/// answer and close while the body is still coming.
fn oversized(ctx: &Ctx<'_>, length: u64) -> Result<Response, ClientError> {
    let client = ctx.client().detached();
    let mut c = client.connect()?;
    let path = ctx.path("/upload");
    let head = upload_head(&c, &path, Some(length));
    let _ = c.send(&[head, vec![b'x'; SENT_OF_OVERSIZED]].concat());
    c.read_response(false)
}

fn too_large(ctx: &mut Ctx<'_>) -> Check {
    let mut closed = Vec::new();
    for length in [UPLOAD_LIMIT + 1, HUGE] {
        let what = format!("an upload with Content-Length {length}");
        match oversized(ctx, length) {
            Ok(r) if r.status == 413 => ctx.saw("an oversized POST /upload", &r),
            Ok(r) => {
                return fail(
                    "upload-too-large",
                    format!("{what} answered {}, want 413", r.status),
                )
            }
            Err(ClientError::TimedOut(t)) => {
                return fail(
                    "upload-too-large",
                    format!(
                        "{what} got no answer within {t:?}: the server waits for the body; \
                         refuse a body over {UPLOAD_LIMIT} B with 413 from its Content-Length"
                    ),
                )
            }
            Err(ClientError::Closed | ClientError::Read(_)) => closed.push(length),
            Err(e) => return fail("upload-too-large", format!("{what}: {e}")),
        }
    }
    if closed.is_empty() {
        pass(
            "upload-too-large",
            format!(
                "Content-Length {} and {HUGE} each answered 413 at once",
                UPLOAD_LIMIT + 1
            ),
        )
    } else {
        warn(
            "upload-too-large",
            format!(
                "Content-Length {closed:?} refused by closing the connection without an answer: the contract asks for 413"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netbench_engine::Framing;

    fn answer(body: &str) -> Response {
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            framing: Framing::ContentLength(body.len() as u64),
            close: false,
        }
    }

    #[test]
    fn the_right_answer_and_its_near_misses() {
        let d = sha256_hex(b"abc");
        assert_eq!(
            upload_problem(
                b"abc",
                &answer(&format!("{{\"sha256\":\"{d}\",\"length\":3}}"))
            ),
            None
        );
        let upper = format!("{{\"length\":3,\"sha256\":\"{}\"}}", d.to_uppercase());
        assert!(upload_problem(b"abc", &answer(&upper))
            .unwrap()
            .contains("lowercase"));
        let long = format!("{{\"length\":4,\"sha256\":\"{d}\"}}");
        assert!(upload_problem(b"abc", &answer(&long))
            .unwrap()
            .contains("length is 4"));
        let extra = format!("{{\"length\":3,\"sha256\":\"{d}\",\"ok\":true}}");
        assert!(upload_problem(b"abc", &answer(&extra))
            .unwrap()
            .contains("`ok`"));
        let text = format!("{{\"length\":\"3\",\"sha256\":\"{d}\"}}");
        assert!(upload_problem(b"abc", &answer(&text))
            .unwrap()
            .contains("integer length"));
        let right = format!("{{\"length\":3,\"sha256\":\"{d}\"}}");
        assert!(upload_problem(b"abd", &answer(&right))
            .unwrap()
            .starts_with("sha256 is"));
    }

    #[test]
    fn sizes_stay_within_the_contract() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..1000 {
            let n = random_size(&mut rng);
            assert!((MIN_UPLOAD..=MAX_UPLOAD).contains(&n), "{n}");
        }
        assert_eq!(body(&mut rng, 1027).len(), 1027);
    }
}
