//! The optional parts of contract 1.2: `GET /static/<name>` (files from the
//! folder the build writes), `POST /upload` (the body's length and SHA-256,
//! hashed as it arrives) and `/work` answers gzip-compressed on request.
//! hyper itself has none of these: each is a few lines on the crates its
//! users reach for (tokio's fs and tokio-util's `ReaderStream`, `httpdate`,
//! which hyper writes its `Date` with, `sha2`, `flate2`).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::Path;
use std::time::UNIX_EPOCH;

use futures_util::stream::{MapOk, TryStreamExt};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{
    HeaderMap, HeaderValue, ACCEPT_ENCODING, CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH,
    CONTENT_TYPE, ETAG, IF_NONE_MATCH, LAST_MODIFIED, VARY,
};
use hyper::{Request, Response, StatusCode};
use sha2::{Digest, Sha256};
use tokio_util::io::ReaderStream;

use crate::{respond, JSON, TEXT};

/// A file streamed from disk as the body of an answer, in reads of
/// `ReaderStream`'s default size (4 KiB).
pub type FileBody = StreamBody<MapOk<ReaderStream<tokio::fs::File>, fn(Bytes) -> Frame<Bytes>>>;

/// An answer to `/static/`: a whole body, or the file streamed.
pub enum StaticAnswer {
    Full(Response<Full<Bytes>>),
    File(Response<FileBody>),
}

/// The names `/static/` serves: one plain path segment, not hidden.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// The opaque part of an entity-tag, without `W/` (for weak comparison).
fn opaque(tag: &str) -> &str {
    let tag = tag.trim();
    tag.strip_prefix("W/").unwrap_or(tag)
}

/// Whether the request's `If-None-Match` names `etag` (weak comparison,
/// RFC 9110 §13.1.2), or is `*`.
pub fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers.get_all(IF_NONE_MATCH).iter().any(|value| {
        value.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|t| t.trim() == "*" || opaque(t) == opaque(etag))
        })
    })
}

fn not_found() -> StaticAnswer {
    StaticAnswer::Full(respond(StatusCode::NOT_FOUND, TEXT, "not found"))
}

/// `GET /static/<name>` from `dir`: the file opened once, its metadata from
/// the open file; an ETag of its modification time and size (as nginx
/// derives one), `Last-Modified`, `304` when `If-None-Match` names the tag,
/// else the file streamed with its `Content-Length` (hyper frames by it).
pub async fn static_file(dir: &Path, name: &str, headers: &HeaderMap, head: bool) -> StaticAnswer {
    if !plain_name(name) {
        return not_found();
    }
    let Ok(file) = tokio::fs::File::open(dir.join(name)).await else {
        return not_found();
    };
    let meta = match file.metadata().await {
        Ok(meta) if meta.is_file() => meta,
        _ => return not_found(),
    };
    let modified = meta.modified().unwrap_or(UNIX_EPOCH);
    let since = modified.duration_since(UNIX_EPOCH).unwrap_or_default();
    let etag = format!(
        "\"{:x}.{:x}-{:x}\"",
        since.as_secs(),
        since.subsec_nanos(),
        meta.len()
    );
    let validators = |h: &mut HeaderMap| {
        h.insert(ETAG, HeaderValue::try_from(&etag).expect("hex digits"));
        let date = httpdate::fmt_http_date(modified);
        h.insert(LAST_MODIFIED, HeaderValue::try_from(date).expect("a date"));
    };
    if none_match(headers, &etag) {
        let mut r = respond(StatusCode::NOT_MODIFIED, TEXT, Bytes::new());
        r.headers_mut().remove(CONTENT_TYPE);
        validators(r.headers_mut());
        return StaticAnswer::Full(r);
    }
    let octets = HeaderValue::from_static("application/octet-stream");
    if head {
        let mut r = respond(StatusCode::OK, octets, Bytes::new());
        validators(r.headers_mut());
        r.headers_mut().insert(CONTENT_LENGTH, meta.len().into());
        return StaticAnswer::Full(r);
    }
    let frames: fn(Bytes) -> Frame<Bytes> = Frame::data;
    let mut r = Response::new(StreamBody::new(ReaderStream::new(file).map_ok(frames)));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, octets);
    // A stream has no length of its own: without this hyper would chunk it.
    h.insert(CONTENT_LENGTH, meta.len().into());
    validators(h);
    StaticAnswer::File(r)
}

/// Bodies over this are refused (CONTRACT.md, "upload"): 16 MiB.
pub const UPLOAD_LIMIT: u64 = 16 << 20;

/// `413` with `Connection: close`: hyper then ends the connection after the
/// answer, reading none of the body.
fn too_large() -> Response<Full<Bytes>> {
    let mut r = respond(StatusCode::PAYLOAD_TOO_LARGE, TEXT, "body too large");
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The answer to an upload of `length` bytes whose SHA-256 is `digest`.
pub fn upload_json(length: u64, digest: &[u8]) -> String {
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    serde_json::json!({ "length": length, "sha256": hex }).to_string()
}

/// `POST /upload`: the body's frames go through SHA-256 as they arrive,
/// none kept. A `Content-Length` over the limit is refused from the head, a
/// chunked body as soon as it passes it.
pub async fn upload(request: Request<Incoming>) -> Response<Full<Bytes>> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > UPLOAD_LIMIT) {
        return too_large();
    }
    let mut body = request.into_body();
    let mut hasher = Sha256::new();
    let mut length = 0u64;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return respond(StatusCode::BAD_REQUEST, TEXT, "cannot read the body");
        };
        if let Ok(data) = frame.into_data() {
            length += data.len() as u64;
            if length > UPLOAD_LIMIT {
                return too_large();
            }
            hasher.update(&data);
        }
    }
    respond(
        StatusCode::OK,
        JSON,
        upload_json(length, &hasher.finalize()),
    )
}

/// Whether an `Accept-Encoding` allows gzip (RFC 9110 §12.5.3): `gzip` (or
/// `x-gzip`) listed, or covered by `*`, without `q=0`.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut star = false;
    for value in headers.get_all(ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("q")
                        && v.trim().parse::<f64>().is_ok_and(|q| q == 0.0)
                })
            });
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                return !refused;
            }
            if coding == "*" {
                star = !refused;
            }
        }
    }
    star
}

fn gzip(data: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data)?;
    encoder.finish()
}

/// A `200` answer of `content_type` (json-comp's JSON, app's page),
/// gzip-compressed by flate2 at its default level, whatever its size, when
/// the request allows gzip. No brotli: a request that allows only `br` gets
/// the plain answer.
pub fn compressible(
    headers: &HeaderMap,
    content_type: HeaderValue,
    body: Vec<u8>,
) -> Response<Full<Bytes>> {
    if accepts_gzip(headers) {
        if let Ok(packed) = gzip(&body) {
            let mut r = respond(StatusCode::OK, content_type, packed);
            r.headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            return r;
        }
    }
    respond(StatusCode::OK, content_type, body)
}

/// Every `/work` and `/app` answer may be compressed or not by
/// `Accept-Encoding`: caches must know, the 400s' too.
pub fn vary(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    response
        .headers_mut()
        .insert(VARY, HeaderValue::from_static("accept-encoding"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: hyper::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(name.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn accept_encoding() {
        for (value, want) in [
            ("gzip", true),
            ("GZIP", true),
            ("x-gzip", true),
            ("deflate, gzip;q=0.5", true),
            ("gzip;q=0.001", true),
            ("*", true),
            ("br;q=1, *;q=0.5", true),
            ("", false),
            ("identity", false),
            ("br", false),
            ("gzip;q=0", false),
            ("gzip; q=0.000, br", false),
            ("gzip;q=0, *", false),
            ("*;q=0", false),
            ("gzipx, xgzip", false),
        ] {
            assert_eq!(
                accepts_gzip(&with(ACCEPT_ENCODING, &[value])),
                want,
                "{value}"
            );
        }
        assert!(accepts_gzip(&with(ACCEPT_ENCODING, &["br", "gzip"])));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn if_none_match_is_weak() {
        let tag = "\"5f.1-3800\"";
        for value in [tag, "W/\"5f.1-3800\"", "\"x\", \"5f.1-3800\"", "*"] {
            assert!(none_match(&with(IF_NONE_MATCH, &[value]), tag), "{value}");
        }
        assert!(!none_match(&with(IF_NONE_MATCH, &["\"other\""]), tag));
        assert!(!none_match(&HeaderMap::new(), tag));
    }

    #[test]
    fn names() {
        for name in ["14k", "1m", "a.b", "x_y-z"] {
            assert!(plain_name(name), "{name}");
        }
        for name in ["", ".", "..", ".hidden", "../x", "a/b", "a%2Fb", "a\\b"] {
            assert!(!plain_name(name), "{name}");
        }
    }

    #[test]
    fn upload_answer() {
        // The contract's example: 1,024 zero bytes.
        assert_eq!(
            upload_json(1024, &Sha256::digest([0u8; 1024])),
            r#"{"length":1024,"sha256":"5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"}"#
        );
    }

    #[test]
    fn gzip_round_trip() {
        let json = br#"{"product":"p"}"#;
        let packed = gzip(json).unwrap();
        assert_eq!(&packed[..2], &[0x1f, 0x8b]);
        let mut out = Vec::new();
        io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut out).unwrap();
        assert_eq!(out, json);
    }
}
