//! The contract's endpoints as prepared load requests, each with the answer
//! it must get, for the engine.

use netbench_engine::{
    build_request, BodyExpect, Expect, RequestParts, RequestTemplate, StatusExpect, Url,
};

use crate::generator::WorkCase;

fn template(
    url: &Url,
    method: &str,
    path: &str,
    body: &[u8],
    keepalive: bool,
    expect: Expect,
) -> RequestTemplate {
    let target = Url {
        path: path.to_string(),
        ..url.clone()
    };
    let headers = if body.is_empty() {
        Vec::new()
    } else {
        vec![("Content-Type".to_string(), "application/json".to_string())]
    };
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
    cases
        .into_iter()
        .map(|c| {
            let expect = Expect {
                status: StatusExpect::Exact(200),
                content_type: Some("application/json".to_string()),
                body: BodyExpect::json(c.expected),
            };
            template(url, "POST", "/work", &c.body, keepalive, expect)
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
    }
}
