//! A plan's requests in their HTTP/2 form, made once per run: each
//! template's HTTP/1.1 bytes read back (method, target, Host, headers and
//! body) and encoded as an HPACK header block with pseudo-headers (RFC 9113
//! §8.3.1), so every request builder of the contract serves both versions
//! and a request costs a copy of its block on the hot path.
//!
//! Each block is encoded by loona-hpack's encoder with a table of its own,
//! so it references only the static table (a name found there with another
//! value is sent as an indexed name and a literal without indexing; a name
//! not found, such as gRPC's `te`, as a literal with indexing) and means the
//! same on every connection whatever went before it.

use std::ops::Range;

use crate::plan::RequestTemplate;

/// A request template in HTTP/2 form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct H2Request {
    /// The HPACK header block.
    pub block: Vec<u8>,
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

/// `template` in HTTP/2 form, with `scheme` (`http` or `https`).
pub(crate) fn h2_request(
    template: &RequestTemplate,
    scheme: &str,
) -> Result<H2Request, H2RequestError> {
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
    let mut fields: Vec<(Vec<u8>, Vec<u8>)> = vec![
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
    let mut encoder = loona_hpack::Encoder::new();
    let block = encoder.encode(fields.iter().map(|(n, v)| (&n[..], &v[..])));
    Ok(H2Request {
        block,
        body: head_len..bytes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Expect;

    fn template(bytes: &[u8]) -> RequestTemplate {
        RequestTemplate {
            bytes: bytes.to_vec(),
            is_head: false,
            expect: Expect::default(),
        }
    }

    fn decoded(r: &H2Request) -> Vec<(String, String)> {
        loona_hpack::Decoder::new()
            .decode(&r.block)
            .unwrap()
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    #[test]
    fn a_request_becomes_pseudo_headers_headers_and_its_body() {
        let t = template(
            b"POST /work HTTP/1.1\r\nHost: h:8080\r\nUser-Agent: nb\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        );
        let r = h2_request(&t, "https").unwrap();
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            decoded(&r),
            pairs(&[
                (":method", "POST"),
                (":scheme", "https"),
                (":authority", "h:8080"),
                (":path", "/work"),
                ("user-agent", "nb"),
                ("content-type", "application/json"),
                ("content-length", "2"),
            ])
        );
        assert_eq!(&t.bytes[r.body.clone()], b"{}");
        // The same block again: nothing it says depends on a table.
        assert_eq!(h2_request(&t, "https").unwrap(), r);
    }

    #[test]
    fn chunked_bodies_and_half_heads_are_refused() {
        let chunked = template(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        assert_eq!(h2_request(&chunked, "http"), Err(H2RequestError::Chunked));
        let cut = template(b"GET / HTTP/1.1\r\nHost: h\r\n");
        assert_eq!(h2_request(&cut, "http"), Err(H2RequestError::Head));
    }
}
