//! A plan's requests in their HTTP/2 form, made once per run: each
//! template's HTTP/1.1 bytes read back (method, target, Host, headers and
//! body) as header fields with pseudo-headers (RFC 9113 §8.3.1), so every
//! request builder of the contract serves both versions, and each field
//! given the form `encoder.rs` sends it in.
//!
//! A field that is a whole static table entry goes by its index. The others
//! may go into the server's dynamic table: the fields most of the plan's
//! templates share come first, and as many as fit the table's default size
//! are indexed (a plan of a thousand paths indexes its authority and
//! headers, not the paths); the rest go as literals without indexing.

use std::collections::HashMap;
use std::ops::Range;

use super::encoder::{put_literal, Field, SERVER_TABLE};
use super::hpack::STATIC;
use crate::plan::RequestTemplate;

/// A request template in HTTP/2 form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct H2Request {
    /// Its header fields in order, as the encoder sends them.
    pub fields: Vec<Field>,
    /// Where the body is in the template's bytes.
    pub body: Range<usize>,
}

/// Why a template cannot go as HTTP/2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum H2RequestError {
    #[error("a request template is not a whole HTTP/1.1 request head")]
    Head,
    #[error("a request's body is framed by Transfer-Encoding: chunked, which HTTP/2 has no use for: give its length")]
    Chunked,
}

/// Headers that mean something only to an HTTP/1.1 connection (RFC 9113
/// §8.2.2), dropped; Host becomes `:authority`.
const HOP_BY_HOP: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// `templates` in HTTP/2 form, with `scheme` (`http` or `https`).
pub(crate) fn h2_requests(
    templates: &[RequestTemplate],
    scheme: &str,
) -> Result<Vec<H2Request>, H2RequestError> {
    let read: Vec<(Vec<Pair>, Range<usize>)> = templates
        .iter()
        .map(|t| fields(t, scheme))
        .collect::<Result<_, _>>()?;
    let ids: HashMap<&Pair, usize> = indexed_fields(read.iter().map(|(f, _)| f.as_slice()))
        .into_iter()
        .enumerate()
        .map(|(id, p)| (p, id))
        .collect();
    Ok(read
        .iter()
        .map(|(pairs, body)| H2Request {
            fields: pairs
                .iter()
                .map(|p| field(&p.0, &p.1, ids.get(p).copied()))
                .collect(),
            body: body.clone(),
        })
        .collect())
}

/// A header field: name (lower case) and value.
type Pair = (Vec<u8>, Vec<u8>);

/// The fields that are not whole static entries, each once, those most
/// templates share first (then in the order met), as many as fit the
/// server's table at its default size: each one's place is its id.
fn indexed_fields<'a>(templates: impl Iterator<Item = &'a [Pair]>) -> Vec<&'a Pair> {
    let mut met: Vec<(&Pair, usize)> = Vec::new();
    let mut place: HashMap<&Pair, usize> = HashMap::new();
    for pairs in templates {
        let mut seen: Vec<&Pair> = Vec::new();
        for p in pairs {
            if static_index(&p.0, &p.1).1 || seen.contains(&p) {
                continue;
            }
            seen.push(p);
            match place.get(p) {
                Some(&i) => met[i].1 += 1,
                None => {
                    place.insert(p, met.len());
                    met.push((p, 1));
                }
            }
        }
    }
    // Stable: ties keep the order met.
    met.sort_by_key(|m| std::cmp::Reverse(m.1));
    let mut room = SERVER_TABLE;
    let mut out = Vec::new();
    for (p, _) in met {
        let size = p.0.len() + p.1.len() + 32;
        if size <= room && out.len() < usize::from(u16::MAX) {
            room -= size;
            out.push(p);
        }
    }
    out
}

/// The static table index of `name`, or 0, and whether `value` matched
/// there too (then the index is of the whole entry).
fn static_index(name: &[u8], value: &[u8]) -> (usize, bool) {
    let mut by_name = 0;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                return (i + 1, true);
            }
            if by_name == 0 {
                by_name = i + 1;
            }
        }
    }
    (by_name, false)
}

/// One field's form: its static index, or its literals, with an id if it
/// is one of the indexed fields.
fn field(name: &[u8], value: &[u8], id: Option<usize>) -> Field {
    let (index, whole) = static_index(name, value);
    if whole {
        return Field::Static(index as u8);
    }
    let mut literal = Vec::new();
    put_literal(&mut literal, 0x00, 4, index, name, value);
    let Some(id) = id else {
        return Field::Literal(literal);
    };
    let mut insert = Vec::new();
    put_literal(&mut insert, 0x40, 6, index, name, value);
    Field::Indexed {
        id: id as u16,
        size: (name.len() + value.len() + 32) as u32,
        insert,
        literal,
    }
}

/// `template`'s header fields and where its body is.
fn fields(
    template: &RequestTemplate,
    scheme: &str,
) -> Result<(Vec<Pair>, Range<usize>), H2RequestError> {
    let bytes = &template.bytes;
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return Err(H2RequestError::Head),
    };
    let (Some(method), Some(path)) = (req.method, req.path) else {
        return Err(H2RequestError::Head);
    };
    let authority = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"))
        .map_or(&b""[..], |h| h.value);
    if req.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("transfer-encoding")
            && !h.value.trim_ascii().eq_ignore_ascii_case(b"identity")
    }) {
        return Err(H2RequestError::Chunked);
    }
    let mut fields: Vec<Pair> = vec![
        (b":method".to_vec(), method.as_bytes().to_vec()),
        (b":scheme".to_vec(), scheme.as_bytes().to_vec()),
        (b":authority".to_vec(), authority.to_vec()),
        (b":path".to_vec(), path.as_bytes().to_vec()),
    ];
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        }
        // Only `te: trailers` may cross into HTTP/2 (§8.2.2).
        if name == "te" && !h.value.trim_ascii().eq_ignore_ascii_case(b"trailers") {
            continue;
        }
        fields.push((name.into_bytes(), h.value.trim_ascii().to_vec()));
    }
    Ok((fields, head_len..bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::super::encoder::Encoder;
    use super::*;
    use crate::check::Expect;

    fn template(bytes: &[u8]) -> RequestTemplate {
        RequestTemplate {
            bytes: bytes.to_vec(),
            is_head: false,
            expect: Expect::default(),
        }
    }

    fn decoded(d: &mut loona_hpack::Decoder<'_>, block: &[u8]) -> Vec<(String, String)> {
        d.decode(block)
            .unwrap()
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn a_request_becomes_pseudo_headers_headers_and_its_body() {
        let t = template(
            b"POST /work HTTP/1.1\r\nHost: h:8080\r\nUser-Agent: nb\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        );
        let r = &h2_requests(std::slice::from_ref(&t), "https").unwrap()[0];
        let want = pairs(&[
            (":method", "POST"),
            (":scheme", "https"),
            (":authority", "h:8080"),
            (":path", "/work"),
            ("user-agent", "nb"),
            ("content-type", "application/json"),
            ("content-length", "2"),
        ]);
        let (mut e, mut d) = (Encoder::new(), loona_hpack::Decoder::new());
        let mut first = Vec::new();
        e.encode(&r.fields, &mut first);
        assert_eq!(decoded(&mut d, &first), want);
        // The second time every field is one index byte.
        let mut again = Vec::new();
        e.encode(&r.fields, &mut again);
        assert_eq!(again.len(), want.len());
        assert!(again.iter().all(|b| b & 0x80 != 0));
        assert_eq!(decoded(&mut d, &again), want);
        assert_eq!(&t.bytes[r.body.clone()], b"{}");
    }

    #[test]
    fn the_fields_templates_share_are_indexed_before_their_paths() {
        let agent = "a".repeat(100);
        let templates: Vec<RequestTemplate> = (0..200)
            .map(|i| {
                template(
                    format!("GET /item/{i:040} HTTP/1.1\r\nHost: h\r\nUser-Agent: {agent}\r\n\r\n")
                        .as_bytes(),
                )
            })
            .collect();
        let requests = h2_requests(&templates, "http").unwrap();
        let kinds = |r: &H2Request| -> Vec<&'static str> {
            r.fields
                .iter()
                .map(|f| match f {
                    Field::Static(_) => "static",
                    Field::Literal(_) => "literal",
                    Field::Indexed { .. } => "indexed",
                })
                .collect()
        };
        // :method, :scheme, :authority, :path, user-agent.
        assert_eq!(
            kinds(&requests[0]),
            ["static", "static", "indexed", "indexed", "indexed"]
        );
        assert_eq!(
            kinds(&requests[199]),
            ["static", "static", "indexed", "literal", "indexed"]
        );
        let (mut e, mut d) = (Encoder::new(), loona_hpack::Decoder::new());
        for (t, r) in templates.iter().zip(&requests).cycle().take(600) {
            let mut block = Vec::new();
            e.encode(&r.fields, &mut block);
            let path = &decoded(&mut d, &block)[3].1;
            assert!(t.bytes.starts_with(format!("GET {path} ").as_bytes()));
        }
    }

    #[test]
    fn chunked_bodies_and_half_heads_are_refused() {
        let chunked = template(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        assert_eq!(
            h2_requests(&[chunked], "http"),
            Err(H2RequestError::Chunked)
        );
        let cut = template(b"GET / HTTP/1.1\r\nHost: h\r\n");
        assert_eq!(h2_requests(&[cut], "http"), Err(H2RequestError::Head));
    }
}
