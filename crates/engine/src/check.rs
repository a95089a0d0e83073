//! What an answer must look like, and the pure checks that decide it.

use serde_json::Value;

use crate::app_page::{read_app_page, AppPage};

/// The smallest cap on a JSON answer's kept body.
const JSON_BODY_CAP: usize = 64 * 1024;

/// The answer a request must get. Checks run on every response.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    pub status: StatusExpect,
    /// Compared case-insensitively; when it has no `;` only the media type of
    /// the answer is compared, so `text/plain` accepts `text/plain; charset=utf-8`.
    pub content_type: Option<String>,
    pub body: BodyExpect,
    /// How the answer must be encoded; its body is checked once decoded.
    pub coding: Coding,
}

/// An answer's `Content-Encoding`, as the request asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coding {
    /// Not checked: whatever comes is compared as it is.
    #[default]
    Any,
    /// `Content-Encoding: gzip`, and a body that inflates to the answer.
    Gzip,
    /// `Content-Encoding: br` or `gzip` (the request allows both; a server
    /// with brotli may choose it), and a body that decodes to the answer.
    GzipOrBrotli,
}

/// Whether a `Content-Encoding` value says brotli.
pub(crate) fn is_brotli(header: Option<&[u8]>) -> bool {
    header.is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"br"))
}

fn is_gzip(header: Option<&[u8]>) -> bool {
    header.is_some_and(|v| {
        let v = v.trim_ascii();
        v.eq_ignore_ascii_case(b"gzip") || v.eq_ignore_ascii_case(b"x-gzip")
    })
}

/// The most a compressed answer's body is kept, and inflates to: a bound
/// on the client's memory whatever a server sends (a decompression bomb
/// stops here, as an `encoding` error).
pub(crate) const CODED_BODY_CAP: usize = 256 * 1024;

impl Coding {
    /// Whether a `Content-Encoding` value (absent: `None`) is this one.
    pub(crate) fn matches(self, header: Option<&[u8]>) -> bool {
        match self {
            Coding::Any => true,
            Coding::Gzip => is_gzip(header),
            Coding::GzipOrBrotli => is_gzip(header) || is_brotli(header),
        }
    }

    /// `body` decoded into `out` (cleared first), at most `limit` bytes,
    /// as brotli when the answer said `br` (`brotli`), else as gzip;
    /// `false` when it is not valid in that coding or decodes past `limit`.
    pub(crate) fn decode(self, brotli: bool, body: &[u8], limit: usize, out: &mut Vec<u8>) -> bool {
        use std::io::Read;
        out.clear();
        let cap = limit as u64 + 1;
        let read = match self {
            Coding::Any => {
                out.extend_from_slice(body);
                return true;
            }
            Coding::GzipOrBrotli if brotli => brotli_decompressor::Decompressor::new(body, 4096)
                .take(cap)
                .read_to_end(out),
            // Multi-member gzip is one body, as RFC 1952 allows.
            Coding::Gzip | Coding::GzipOrBrotli => flate2::read::MultiGzDecoder::new(body)
                .take(cap)
                .read_to_end(out),
        };
        read.is_ok() && out.len() <= limit
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusExpect {
    /// Any 2xx status.
    #[default]
    Success,
    Exact(u16),
}

#[derive(Debug, Clone, Default)]
pub enum BodyExpect {
    /// The body is read and framed but not compared.
    #[default]
    Any,
    /// The body must be exactly these bytes.
    Exact(Vec<u8>),
    /// The body must be JSON equal to this value. `compact` is its compact
    /// serialization: most servers produce exactly that, so a byte comparison
    /// settles most answers without parsing.
    Json { value: Value, compact: Vec<u8> },
    /// An HTML page whose table rows (`<tr>` with `<td>` cells, in order)
    /// read back as these texts, every `<` and `&` of them escaped
    /// (`html.rs`; the contract's `fortunes`).
    HtmlTable(Vec<Vec<String>>),
    /// A JSON array of exactly `count` rows of TechEmpower's World, each
    /// an object of exactly `id` (1 to 10,000) and `randomNumber` (1 to
    /// 10,000, or the seeded value of its id).
    WorldRows { count: usize, value: WorldValue },
    /// A page of the contract's `app` (`app_page.rs`): two session rows,
    /// then these items, with the verbatim files in it. Which session
    /// values are right is the connection's session to say (`session.rs`);
    /// alone, any whole numbers pass.
    AppPage(AppPage),
    /// A gRPC answer (over HTTP/2): one length-prefixed message (a flag
    /// byte of 0, its length in 4 bytes, the message) that is the same
    /// message as `message` by `same`, the caller's comparison of two
    /// encodings (protobuf's encodings of one message may differ).
    Grpc {
        message: Vec<u8>,
        same: fn(&[u8], &[u8]) -> bool,
    },
    /// A gRPC call the server must refuse: its trailers' `grpc-status` is
    /// `status`; a message, if any, is not read.
    GrpcError { status: u32 },
}

/// What a World row's `randomNumber` must be.
#[derive(Debug, Clone, Copy)]
pub enum WorldValue {
    /// Any number from 1 to 10,000 (rows an update just wrote).
    InRange,
    /// The seeded value of the row's id, by this formula (the table is
    /// unchanged while the cell runs).
    Seeded(fn(i64) -> i64),
}

/// The ids and numbers of a World table.
const WORLD_ROWS: std::ops::RangeInclusive<i64> = 1..=10_000;

/// Why `body` is not `count` World rows as `value` wants, if it is not.
pub fn world_rows_problem(body: &[u8], count: usize, value: WorldValue) -> Option<String> {
    let rows: Vec<Value> = match serde_json::from_slice(body) {
        Ok(Value::Array(rows)) => rows,
        Ok(_) => return Some("not a JSON array".to_string()),
        Err(e) => return Some(format!("not JSON: {e}")),
    };
    if rows.len() != count {
        return Some(format!("{} rows, want {count}", rows.len()));
    }
    for (i, row) in rows.iter().enumerate() {
        let fields = row.as_object().filter(|o| o.len() == 2);
        let get = |k: &str| fields.and_then(|o| o.get(k)).and_then(Value::as_i64);
        let (Some(id), Some(number)) = (get("id"), get("randomNumber")) else {
            return Some(format!(
                "row {} is `{row}`, want an object of exactly two integers, id and randomNumber",
                i + 1
            ));
        };
        if !WORLD_ROWS.contains(&id) || !WORLD_ROWS.contains(&number) {
            return Some(format!(
                "row {} is `{row}`: id and randomNumber go from 1 to 10000",
                i + 1
            ));
        }
        if let WorldValue::Seeded(seed) = value {
            if number != seed(id) {
                return Some(format!(
                    "row {} is `{row}`, but the table holds randomNumber {} for id {id}",
                    i + 1,
                    seed(id)
                ));
            }
        }
    }
    None
}

impl BodyExpect {
    pub fn json(value: Value) -> Self {
        let compact = serde_json::to_vec(&value).expect("a Value always serializes");
        BodyExpect::Json { value, compact }
    }

    /// How many body bytes the check needs kept: 0 for none. A body longer
    /// than this cannot match, so it is read through but not kept, whatever
    /// length a server announces.
    pub(crate) fn keep_limit(&self) -> usize {
        match self {
            // Exact bytes are compared as they arrive (`conn.rs`), never
            // copied: a 1 MB file checked on 1,000 connections would
            // otherwise hold 1 GB.
            BodyExpect::Any | BodyExpect::Exact(_) | BodyExpect::GrpcError { .. } => 0,
            // JSON may be spelled longer than its compact form (spaces,
            // `1.50`, escapes); a cap well above that is still bounded.
            BodyExpect::Json { compact, .. } => (compact.len() * 8).max(JSON_BODY_CAP),
            // Markup, spacing and references may spell a cell several times
            // longer than its text.
            BodyExpect::HtmlTable(rows) => {
                let text: usize = rows.iter().flatten().map(|c| c.len() + 64).sum();
                (text * 8).max(JSON_BODY_CAP)
            }
            // `{"id":10000,"randomNumber":10000}` is 34 bytes; spacing may
            // double it.
            BodyExpect::WorldRows { count, .. } => (count * 80).max(JSON_BODY_CAP),
            BodyExpect::AppPage(page) => {
                let text: usize = page.items.iter().flatten().map(|c| c.len() + 64).sum();
                let files: usize = page.verbatim.iter().map(Vec::len).sum();
                (text * 8 + files * 2).max(JSON_BODY_CAP)
            }
            // Another encoder may spell the message longer (defaults
            // written, fields packed or not).
            BodyExpect::Grpc { message, .. } => (message.len() * 4 + 5).max(JSON_BODY_CAP),
        }
    }

    /// Whether `body` is an acceptable answer.
    pub fn matches(&self, body: &[u8]) -> bool {
        match self {
            BodyExpect::Any | BodyExpect::GrpcError { .. } => true,
            BodyExpect::Exact(want) => body == want.as_slice(),
            BodyExpect::Json { value, compact } => {
                // Many encoders end with a newline; it is not part of the value.
                body.trim_ascii() == compact.as_slice()
                    || serde_json::from_slice::<Value>(body)
                        .is_ok_and(|got| json_equal(&got, value))
            }
            BodyExpect::HtmlTable(rows) => crate::html::table_problem(body, rows).is_none(),
            BodyExpect::WorldRows { count, value } => {
                world_rows_problem(body, *count, *value).is_none()
            }
            BodyExpect::AppPage(page) => read_app_page(body, page, &mut Vec::new()).is_ok(),
            BodyExpect::Grpc { message, same } => {
                grpc_message(body).is_some_and(|got| same(got, message))
            }
        }
    }
}

impl StatusExpect {
    pub(crate) fn matches(self, status: u16) -> bool {
        match self {
            StatusExpect::Success => (200..300).contains(&status),
            StatusExpect::Exact(want) => status == want,
        }
    }
}

/// JSON equality where numbers compare by value (`1.50` equals `1.5`, `2`
/// equals `2.0`), since servers in different languages print numbers
/// differently; object key order never matters.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The message of a gRPC body holding exactly one uncompressed
/// length-prefixed message (gRPC over HTTP/2, "Length-Prefixed-Message").
pub fn grpc_message(body: &[u8]) -> Option<&[u8]> {
    let (&flag, rest) = body.split_first()?;
    let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let message = &rest[4..];
    (flag == 0 && message.len() == len).then_some(message)
}

/// Whether a Content-Type header value satisfies the expected one.
pub fn content_type_matches(expected: &str, actual: &[u8]) -> bool {
    let Ok(actual) = std::str::from_utf8(actual) else {
        return false;
    };
    let expected = expected.trim();
    let actual = actual.trim();
    if expected.contains(';') {
        return normalize(expected) == normalize(actual);
    }
    let media = actual.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case(expected)
}

fn normalize(v: &str) -> String {
    v.split(';')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_rows_are_counted_bounded_and_seeded() {
        fn seed(id: i64) -> i64 {
            id + 1
        }
        let ok = br#"[{"id":1,"randomNumber":2},{"randomNumber":10000,"id":9999}]"#;
        assert_eq!(world_rows_problem(ok, 2, WorldValue::Seeded(seed)), None);
        assert_eq!(world_rows_problem(ok, 2, WorldValue::InRange), None);
        let fabricated = br#"[{"id":1,"randomNumber":7}]"#;
        assert!(world_rows_problem(fabricated, 1, WorldValue::InRange).is_none());
        assert!(world_rows_problem(fabricated, 1, WorldValue::Seeded(seed))
            .unwrap()
            .contains("holds randomNumber 2"));
        for (bad, says) in [
            (&br#"{"id":1}"#[..], "not a JSON array"),
            (b"[", "not JSON"),
            (br#"[{"id":1,"randomNumber":2}]"#, "1 rows, want 2"),
            (
                br#"[{"id":1,"randomNumber":2},{"id":0,"randomNumber":1}]"#,
                "from 1 to 10000",
            ),
            (
                br#"[{"id":1,"randomNumber":2},{"id":2,"randomNumber":3,"x":1}]"#,
                "exactly two",
            ),
            (
                br#"[{"id":1,"randomNumber":2},{"id":"2","randomNumber":3}]"#,
                "exactly two",
            ),
        ] {
            let p = world_rows_problem(bad, 2, WorldValue::InRange).unwrap();
            assert!(p.contains(says), "{p}");
        }
    }

    #[test]
    fn gzip_is_checked_by_its_header_and_inflated_within_a_bound() {
        use std::io::Write;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        assert!(Coding::Gzip.matches(Some(b" gzip")));
        assert!(Coding::Gzip.matches(Some(b"GZIP")));
        assert!(!Coding::Gzip.matches(None));
        assert!(!Coding::Gzip.matches(Some(b"br")));
        assert!(Coding::Any.matches(None));

        let mut out = Vec::new();
        assert!(Coding::Gzip.decode(false, &gz(b"{\"a\":1}"), 100, &mut out));
        assert_eq!(out, b"{\"a\":1}");
        // Plain bytes claimed as gzip, and a cut gzip stream, are not gzip.
        assert!(!Coding::Gzip.decode(false, b"{\"a\":1}", 100, &mut out));
        let whole = gz(&[b'x'; 1000]);
        assert!(!Coding::Gzip.decode(false, &whole[..whole.len() - 4], 2000, &mut out));
        // A bomb: a megabyte of zeros in about a kilobyte stops at the bound.
        let bomb = gz(&vec![0u8; 1 << 20]);
        assert!(bomb.len() < 8 * 1024);
        assert!(!Coding::Gzip.decode(false, &bomb, 1000, &mut out));
        assert!(out.len() <= 1001);
    }

    #[test]
    fn gzip_or_brotli_takes_either_by_its_header_and_bounds_both() {
        use std::io::Write;
        let br = |data: &[u8]| {
            let mut w = brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22);
            w.write_all(data).unwrap();
            w.into_inner()
        };
        let either = Coding::GzipOrBrotli;
        assert!(either.matches(Some(b"br")) && either.matches(Some(b"gzip")));
        assert!(!either.matches(None) && !either.matches(Some(b"deflate")));
        assert!(is_brotli(Some(b" BR ")) && !is_brotli(Some(b"gzip")));

        let mut out = Vec::new();
        assert!(either.decode(true, &br(b"{\"a\":1}"), 100, &mut out));
        assert_eq!(out, b"{\"a\":1}");
        // Brotli bytes said to be gzip, and plain bytes said to be brotli.
        assert!(!either.decode(false, &br(b"{\"a\":1}"), 100, &mut out));
        assert!(!either.decode(true, b"{\"a\":1}", 100, &mut out));
        // A brotli bomb stops at the bound too.
        let bomb = br(&vec![0u8; 1 << 20]);
        assert!(bomb.len() < 1024);
        assert!(!either.decode(true, &bomb, 1000, &mut out));
        assert!(out.len() <= 1001);
    }
    use serde_json::json;

    #[test]
    fn kept_body_is_bounded_by_the_check() {
        assert_eq!(BodyExpect::Any.keep_limit(), 0);
        assert_eq!(BodyExpect::Exact(b"OK".to_vec()).keep_limit(), 0);
        let small = BodyExpect::json(json!({"a": 1}));
        assert_eq!(small.keep_limit(), JSON_BODY_CAP);
        let big = BodyExpect::json(json!({"a": "x".repeat(100_000)}));
        assert!(big.keep_limit() >= 100_000 * 8);
    }

    #[test]
    fn status_classes() {
        assert!(StatusExpect::Success.matches(200));
        assert!(StatusExpect::Success.matches(299));
        assert!(!StatusExpect::Success.matches(301));
        assert!(StatusExpect::Exact(404).matches(404));
        assert!(!StatusExpect::Exact(404).matches(200));
    }

    #[test]
    fn content_type_ignores_parameters_unless_asked() {
        assert!(content_type_matches(
            "text/plain",
            b"text/plain; charset=utf-8"
        ));
        assert!(content_type_matches("text/plain", b"Text/Plain"));
        assert!(!content_type_matches("text/plain", b"text/html"));
        assert!(content_type_matches(
            "text/plain; charset=utf-8",
            b"text/plain;charset=UTF-8"
        ));
        assert!(!content_type_matches(
            "text/plain; charset=utf-8",
            b"text/plain"
        ));
        assert!(!content_type_matches("text/plain", b"\xff"));
    }

    #[test]
    fn json_bodies_compare_by_value() {
        let e = BodyExpect::json(json!({"a": 1.5, "b": [1, 2], "c": "x"}));
        assert!(e.matches(br#"{"a":1.5,"b":[1,2],"c":"x"}"#));
        assert!(e.matches(b"{\"a\":1.5,\"b\":[1,2],\"c\":\"x\"}\n"));
        assert!(e.matches(br#"{ "c": "x", "b": [1.0, 2], "a": 1.50 }"#));
        assert!(!e.matches(br#"{"a":1.5,"b":[2,1],"c":"x"}"#));
        assert!(!e.matches(br#"{"a":1.5,"b":[1,2]}"#));
        assert!(!e.matches(br#"{"a":1.5,"b":[1,2],"c":"x","d":null}"#));
        assert!(!e.matches(b"not json"));
    }

    #[test]
    fn exact_bodies_compare_bytes() {
        let e = BodyExpect::Exact(b"OK".to_vec());
        assert!(e.matches(b"OK"));
        assert!(!e.matches(b"OK\n"));
        assert!(BodyExpect::Any.matches(b"anything"));
    }
}
