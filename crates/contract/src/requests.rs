//! The contract's endpoints as prepared load requests, each with the answer
//! it must get, for the engine.

use netbench_engine::{
    build_request, BodyExpect, Coding, Expect, RequestParts, RequestTemplate, StatusExpect, Url,
};

use crate::digest::sha256_hex;
use crate::generator::WorkCase;
use crate::rng::SplitMix64;
use crate::static_files::{static_bytes, StaticFile};

fn template(
    url: &Url,
    method: &str,
    path: &str,
    body: &[u8],
    keepalive: bool,
    expect: Expect,
) -> RequestTemplate {
    template_with(url, method, path, body, keepalive, expect, &[])
}

pub(crate) fn template_with(
    url: &Url,
    method: &str,
    path: &str,
    body: &[u8],
    keepalive: bool,
    expect: Expect,
    extra: &[(&str, &str)],
) -> RequestTemplate {
    let target = Url {
        path: path.to_string(),
        ..url.clone()
    };
    let typed = extra
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    let headers = match (body.is_empty(), path) {
        // The caller says what the body is (gRPC's application/grpc).
        _ if typed => Vec::new(),
        (true, _) => Vec::new(),
        (false, "/upload") => vec![(
            "Content-Type".to_string(),
            "application/octet-stream".to_string(),
        )],
        (false, _) => vec![("Content-Type".to_string(), "application/json".to_string())],
    };
    let headers: Vec<(String, String)> = headers
        .into_iter()
        .chain(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())))
        .collect();
    RequestTemplate {
        bytes: build_request(&RequestParts {
            method,
            url: &target,
            headers: &headers,
            body,
            keepalive,
        }),
        is_head: false,
        expect,
    }
}

/// A GET of `path` on the server of `url`.
pub(crate) fn get(url: &Url, path: &str, keepalive: bool, expect: Expect) -> RequestTemplate {
    template(url, "GET", path, b"", keepalive, expect)
}

fn text(body: &str) -> Expect {
    Expect {
        status: StatusExpect::Exact(200),
        content_type: Some("text/plain".to_string()),
        body: BodyExpect::Exact(body.as_bytes().to_vec()),
        coding: Default::default(),
    }
}

/// `GET /blank`, answer `OK`.
pub fn blank_request(url: &Url, keepalive: bool) -> RequestTemplate {
    template(url, "GET", "/blank", b"", keepalive, text("OK"))
}

/// `GET /echo/netbench`, answer `netbench`.
pub fn echo_request(url: &Url, keepalive: bool) -> RequestTemplate {
    template(
        url,
        "GET",
        "/echo/netbench",
        b"",
        keepalive,
        text("netbench"),
    )
}

/// `POST /work` for each case, each answer checked against its own.
pub fn work_requests(url: &Url, keepalive: bool, cases: Vec<WorkCase>) -> Vec<RequestTemplate> {
    work_templates(url, keepalive, cases, Coding::Any, &[])
}

/// `POST /work` for each case asking for gzip (the optional `json-comp`
/// part): each answer must come gzip-coded and decode to its own answer.
pub fn work_gzip_requests(
    url: &Url,
    keepalive: bool,
    cases: Vec<WorkCase>,
) -> Vec<RequestTemplate> {
    work_templates(url, keepalive, cases, Coding::Gzip, &[])
}

/// `POST /work` for each case allowing brotli and gzip: a server with
/// brotli may answer either, one without it gzip; each answer must come
/// coded and decode to its own answer (bytes per answer show which won).
pub fn work_br_requests(url: &Url, keepalive: bool, cases: Vec<WorkCase>) -> Vec<RequestTemplate> {
    work_templates(url, keepalive, cases, Coding::GzipOrBrotli, &[])
}

/// The header fields a browser's `fetch()` of a JSON API sends beside the
/// request's own Host, Content-Type and Content-Length (a desktop
/// browser's, client hints left out): 16 fields, 641 bytes. Seed
/// 000's header-parsing question needs requests that carry as many fields
/// as real traffic, or a server that stores every field and one that keeps
/// only what it needs cannot differ. `Accept-Encoding: identity` keeps the
/// answer plain, so the work is the same as `work`'s.
pub const BROWSER_HEADERS: [(&str, &str); 16] = [
    (
        "User-Agent",
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    ),
    ("Accept", "application/json, text/plain, */*"),
    ("Accept-Language", "en-GB,en;q=0.8,de;q=0.5,fr;q=0.3"),
    ("Accept-Encoding", "identity"),
    (
        "Referer",
        "https://shop.example/checkout/cart?step=2&currency=EUR",
    ),
    ("Origin", "https://shop.example"),
    (
        "Cookie",
        "session=9f3c2a7b1e4d4c6f8a0b2d4e6f8a0c1e; theme=dark; consent=analytics%2Cads; cart=7c1d",
    ),
    ("Cache-Control", "no-cache"),
    ("Pragma", "no-cache"),
    ("DNT", "1"),
    ("Sec-Fetch-Dest", "empty"),
    ("Sec-Fetch-Mode", "cors"),
    ("Sec-Fetch-Site", "same-origin"),
    ("X-Request-Id", "5f0c2a9e-1b7d-4c3e-9a8f-0d6e4b2c1a90"),
    ("X-Forwarded-For", "203.0.113.7, 10.0.0.1"),
    ("X-Forwarded-Proto", "https"),
];

/// `POST /work` for each case carrying [`BROWSER_HEADERS`], each answer
/// checked against its own: `work` with a browser's header block.
pub fn work_browser_requests(
    url: &Url,
    keepalive: bool,
    cases: Vec<WorkCase>,
) -> Vec<RequestTemplate> {
    work_templates(url, keepalive, cases, Coding::Any, &BROWSER_HEADERS)
}

fn work_templates(
    url: &Url,
    keepalive: bool,
    cases: Vec<WorkCase>,
    coding: Coding,
    fields: &[(&str, &str)],
) -> Vec<RequestTemplate> {
    let asked: &[(&str, &str)] = match coding {
        Coding::Gzip => &[("Accept-Encoding", "gzip")],
        Coding::GzipOrBrotli => &[("Accept-Encoding", "br, gzip")],
        Coding::Any => &[],
    };
    let extra: Vec<(&str, &str)> = asked.iter().chain(fields).copied().collect();
    cases
        .into_iter()
        .map(|c| {
            let expect = Expect {
                status: StatusExpect::Exact(200),
                content_type: Some("application/json".to_string()),
                body: BodyExpect::json(c.expected),
                coding,
            };
            template_with(url, "POST", "/work", &c.body, keepalive, expect, &extra)
        })
        .collect()
}

/// `GET /static/<name>` (the optional `static` part), the file checked
/// byte for byte as it arrives.
pub fn static_request(url: &Url, keepalive: bool, file: StaticFile) -> RequestTemplate {
    let expect = Expect {
        status: StatusExpect::Exact(200),
        // CONTRACT.md leaves a static file's type to the framework.
        content_type: None,
        body: BodyExpect::Exact(static_bytes(file.size)),
        coding: Default::default(),
    };
    get(url, &format!("/static/{}", file.name), keepalive, expect)
}

/// Upload bodies under load: from 1 KiB to 1 MiB, a factor of 4 apart, so
/// small and large bodies both count; the contract's 8 MiB bodies are
/// `verify`'s (a hundred connections each sending 8 MiB would measure the
/// loopback's memory, not the server).
pub const UPLOAD_SIZES: [usize; 6] = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20];

/// `POST /upload` (the optional `upload` part) of a seeded random body of
/// each of [`UPLOAD_SIZES`], each answer checked against the body's own
/// length and SHA-256. The bodies are made once, here, not per request.
pub fn upload_requests(url: &Url, keepalive: bool, seed: u64) -> Vec<RequestTemplate> {
    let mut rng = SplitMix64::new(seed);
    UPLOAD_SIZES
        .iter()
        .map(|&size| {
            let body: Vec<u8> = (0..size.div_ceil(8))
                .flat_map(|_| rng.next_u64().to_le_bytes())
                .take(size)
                .collect();
            let expect = Expect {
                status: StatusExpect::Exact(200),
                content_type: Some("application/json".to_string()),
                body: BodyExpect::json(serde_json::json!({
                    "length": size,
                    "sha256": sha256_hex(&body),
                })),
                coding: Default::default(),
            };
            template(url, "POST", "/upload", &body, keepalive, expect)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::WorkGenerator;
    use netbench_engine::parse_url;

    #[test]
    fn requests_for_each_endpoint() {
        let url = parse_url("http://127.0.0.1:8080/").unwrap();
        let b = blank_request(&url, true);
        assert!(b
            .bytes
            .starts_with(b"GET /blank HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(echo_request(&url, false)
            .bytes
            .windows(17)
            .any(|w| w == b"Connection: close"));
        let work = work_requests(&url, true, WorkGenerator::new(1, 3).cases(4));
        assert_eq!(work.len(), 4);
        let text = String::from_utf8_lossy(&work[0].bytes);
        assert!(text.starts_with("POST /work HTTP/1.1\r\n"));
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(matches!(work[0].expect.body, BodyExpect::Json { .. }));

        let file = crate::static_files::STATIC_FILES[0];
        let st = static_request(&url, true, file);
        assert!(st.bytes.starts_with(b"GET /static/14k HTTP/1.1\r\n"));
        assert!(matches!(&st.expect.body, BodyExpect::Exact(b) if b.len() == file.size));

        let up = upload_requests(&url, true, 9);
        assert_eq!(up.len(), UPLOAD_SIZES.len());
        let text = String::from_utf8_lossy(&up[0].bytes[..200]);
        assert!(text.starts_with("POST /upload HTTP/1.1\r\n"), "{text}");
        assert!(text.contains("Content-Type: application/octet-stream\r\n"));
        assert!(text.contains("Content-Length: 1024\r\n"));
        // The same seed makes the same bodies; another seed others.
        assert_eq!(upload_requests(&url, true, 9)[3].bytes, up[3].bytes);
        assert_ne!(upload_requests(&url, true, 10)[3].bytes, up[3].bytes);

        let gz = work_gzip_requests(&url, true, WorkGenerator::new(1, 3).cases(2));
        let text = String::from_utf8_lossy(&gz[0].bytes);
        assert!(text.contains("Accept-Encoding: gzip\r\n"), "{text}");
        assert_eq!(gz[0].expect.coding, Coding::Gzip);
    }

    #[test]
    fn browser_work_requests_carry_every_browser_field_and_the_work_body() {
        let url = parse_url("http://127.0.0.1:8080/").unwrap();
        let cases = WorkGenerator::new(3, 3).cases(2);
        let plain = work_requests(&url, true, cases.clone());
        let browser = work_browser_requests(&url, true, cases);
        let text = String::from_utf8_lossy(&browser[1].bytes);
        let head = text.split("\r\n\r\n").next().unwrap();
        for (name, value) in BROWSER_HEADERS {
            assert_eq!(
                head.matches(&format!("\r\n{name}: {value}")).count(),
                1,
                "{name} once in {head}"
            );
        }
        // Host, Content-Type, Content-Length and the 16.
        assert_eq!(
            head.lines().count() - 1,
            3 + BROWSER_HEADERS.len(),
            "{head}"
        );
        // The same body and the same plain answer expected as `work`'s.
        assert!(browser[1]
            .bytes
            .ends_with(&plain[1].bytes[plain[1].bytes.len() - 40..]));
        assert_eq!(
            format!("{:?}", browser[1].expect),
            format!("{:?}", plain[1].expect)
        );
        let fields: usize = BROWSER_HEADERS
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        assert_eq!(fields, 641, "the size the docs give");
    }

    #[test]
    fn an_upload_answer_must_name_the_body_s_own_digest() {
        let url = parse_url("http://127.0.0.1:8080/").unwrap();
        let up = &upload_requests(&url, true, 1)[0];
        let body = &up.bytes[up.bytes.len() - 1024..];
        let right = format!(r#"{{"sha256":"{}","length":1024}}"#, sha256_hex(body));
        assert!(up.expect.body.matches(right.as_bytes()));
        let wrong = format!(r#"{{"length":1024,"sha256":"{}"}}"#, sha256_hex(&body[1..]));
        assert!(!up.expect.body.matches(wrong.as_bytes()));
        assert!(!up.expect.body.matches(br#"{"length":1023}"#));
    }
}
