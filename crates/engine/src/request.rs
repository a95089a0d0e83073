//! Building the bytes of a request once, before the run.

use crate::target::Url;

/// What the user asked to send; turned into bytes by [`build_request`].
#[derive(Debug, Clone)]
pub struct RequestParts<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    /// Extra headers in order; a user-given Host, User-Agent, Content-Length
    /// or Connection replaces the default one.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
    pub keepalive: bool,
}

pub fn build_request(p: &RequestParts<'_>) -> Vec<u8> {
    let has = |name: &str| p.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut out = Vec::with_capacity(128 + p.body.len());
    out.extend_from_slice(format!("{} {} HTTP/1.1\r\n", p.method, p.url.path).as_bytes());
    if !has("host") {
        out.extend_from_slice(format!("Host: {}\r\n", p.url.host_header()).as_bytes());
    }
    if !has("user-agent") {
        out.extend_from_slice(
            concat!("User-Agent: netbench/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes(),
        );
    }
    for (name, value) in p.headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    let sends_body = !p.body.is_empty() || matches!(p.method, "POST" | "PUT" | "PATCH");
    if sends_body && !has("content-length") && !has("transfer-encoding") {
        out.extend_from_slice(format!("Content-Length: {}\r\n", p.body.len()).as_bytes());
    }
    if !p.keepalive && !has("connection") {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(p.body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::parse_url;

    #[test]
    fn get_request() {
        let url = parse_url("http://127.0.0.1:8080/blank").unwrap();
        let bytes = build_request(&RequestParts {
            method: "GET",
            url: &url,
            headers: &[],
            body: b"",
            keepalive: true,
        });
        let text = String::from_utf8(bytes).unwrap();
        assert!(text
            .starts_with("GET /blank HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: netbench/"));
        assert!(text.ends_with("\r\n\r\n"));
        assert!(!text.contains("Content-Length"));
        assert!(!text.contains("Connection"));
    }

    #[test]
    fn post_with_body_and_headers() {
        let url = parse_url("http://h/work").unwrap();
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("host".to_string(), "other".to_string()),
        ];
        let bytes = build_request(&RequestParts {
            method: "POST",
            url: &url,
            headers: &headers,
            body: b"{}",
            keepalive: false,
        });
        let text = String::from_utf8(bytes).unwrap();
        assert!(!text.contains("Host: h"));
        assert!(text.contains("host: other\r\n"));
        assert!(text.contains("Content-Type: application/json\r\n"));
        assert!(text.contains("Content-Length: 2\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.ends_with("\r\n\r\n{}"));
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        assert!(req.parse(text.as_bytes()).unwrap().is_complete());
    }
}
