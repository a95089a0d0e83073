//! The table of HTTP/1.1 conformance cases: for each, the RFC section it
//! comes from, the exact bytes sent (malformed ones on purpose) and the
//! outcome that section asks for. Where the RFC allows two outcomes the
//! expectation accepts both (judge.rs).

/// What one case sends and what it expects back.
#[derive(Debug, Clone)]
pub struct Case {
    /// Short stable name (`cl-te`), the key in reports and in tests.
    pub id: &'static str,
    /// The section the expectation comes from, as "RFC 9112 §6.3".
    pub rfc: &'static str,
    pub title: &'static str,
    pub send: Send,
    pub expect: Expect,
    /// After the case, a fresh connection must still be answered: a limit
    /// probe that crashed the server fails on this.
    pub alive_after: bool,
}

/// How the bytes go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Send {
    /// All at once, in one write.
    Once(Vec<u8>),
    /// The head with `Expect: 100-continue`, then the body only once an
    /// interim 100 came (RFC 9110 §10.1.1).
    AwaitContinue { head: Vec<u8>, body: Vec<u8> },
}

/// The outcome a case asks for; judge.rs decides from what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A final answer with one of `statuses`, and, when `close`, the
    /// connection closed after it.
    Reject {
        statuses: &'static [u16],
        close: bool,
    },
    /// Broken framing: 400, or any answer after which the server closes
    /// (it did not read on from bytes it could not frame).
    RejectOrClose,
    /// Any answer, then the connection closed.
    AnswerThenClose,
    /// A final answer below 400.
    Accept,
    /// Either outcome the RFC allows (reject or accept), but an answer: a
    /// server that read a line as something it is not waits for more.
    Answered,
    /// A body-carrying request not refused as malformed (no 400), and the
    /// request pipelined behind it answered too (the body was framed right).
    BodyThenNext,
    /// 400, 413, 414 or 431, or the connection closed without an answer;
    /// never the request served (no limit) nor silence.
    Limit,
    /// HTTP/1.0: answered without chunked coding (RFC 9112 §6.1); with
    /// `keep_alive` both pipelined requests answered or the first and then
    /// a close, without it the first answered and the connection closed.
    Http10 { keep_alive: bool },
    /// A 100 Continue and then a final answer, or a final answer at once.
    Continue,
    /// A final answer with no interim 1xx before it.
    NoInterim,
    /// Answers in the order asked: contract servers' `/echo/` bodies, or
    /// for any server the statuses' pattern (ok, 404, ok).
    InOrder(Order),
    /// A HEAD answer without content, then the pipelined GET's answer.
    HeadThenGet,
}

/// What tells the pipelined answers apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    Bodies(Vec<String>),
    /// The middle request asks for a path that does not exist.
    Statuses,
}

/// Where and how to probe.
#[derive(Debug, Clone)]
pub struct Target {
    /// The Host header's value.
    pub host: String,
    /// A cheap GET that answers below 400 (`/` for any server, the
    /// contract's `/blank`).
    pub path: String,
    /// Pipelined order told by the contract's `/echo/` bodies (under
    /// `echo_prefix`), else by statuses.
    pub echo_prefix: Option<String>,
}

/// Bytes past any limit a server should hold: Go's default header limit
/// is 1 MiB, nginx's 8 KiB per line and 32 KiB in all.
pub const OVERSIZE: usize = 2 * 1024 * 1024;

/// A path no server serves, for the pipelined order by statuses.
pub const MISSING_PATH: &str = "/netbench-conformance-missing";

fn req(line: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut out = format!("{line}\r\n");
    for h in headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

fn once(b: Vec<u8>) -> Send {
    Send::Once(b)
}

const REJECT_400: Expect = Expect::Reject {
    statuses: &[400],
    close: false,
};
const REJECT_400_CLOSE: Expect = Expect::Reject {
    statuses: &[400],
    close: true,
};

/// Every case, built for `t`.
pub fn cases(t: &Target) -> Vec<Case> {
    let p = t.path.as_str();
    let host = format!("Host: {}", t.host);
    let h = host.as_str();
    let get = format!("GET {p} HTTP/1.1");
    let get = get.as_str();
    let post = format!("POST {p} HTTP/1.1");
    let post = post.as_str();
    // The request pipelined behind a body, to see its framing held.
    let next = req(get, &[h], "");
    let next = String::from_utf8(next).expect("ASCII");
    let with_next = |head: Vec<u8>| {
        let mut b = head;
        b.extend_from_slice(next.as_bytes());
        b
    };
    let case = |id, rfc, title, send, expect| Case {
        id,
        rfc,
        title,
        send,
        expect,
        alive_after: false,
    };
    let relative = match p.trim_start_matches('/') {
        "" => "netbench-conformance",
        rest => rest,
    };
    let long_target = format!("GET {p}?{} HTTP/1.1", "a".repeat(OVERSIZE));
    let value = "v".repeat(4000);
    let mut long_headers: Vec<String> = vec![host.clone()];
    long_headers.extend((0..OVERSIZE / 4000).map(|i| format!("X-Fill-{i}: {value}")));
    let long_headers: Vec<&str> = long_headers.iter().map(String::as_str).collect();
    let order = match &t.echo_prefix {
        Some(prefix) => {
            let bodies: Vec<String> = ["p1", "p2", "p3"].iter().map(|s| s.to_string()).collect();
            let bytes: Vec<u8> = bodies
                .iter()
                .flat_map(|b| req(&format!("GET {prefix}/echo/{b} HTTP/1.1"), &[h], ""))
                .collect();
            (bytes, Order::Bodies(bodies))
        }
        None => {
            let mut bytes = req(get, &[h], "");
            bytes.extend(req(&format!("GET {MISSING_PATH} HTTP/1.1"), &[h], ""));
            bytes.extend(req(get, &[h], ""));
            (bytes, Order::Statuses)
        }
    };
    vec![
        // Framing (RFC 9112 §6).
        case(
            "cl-te",
            "RFC 9112 §6.3",
            "Content-Length with Transfer-Encoding: rejected or read as chunked, then closed",
            once(req(
                post,
                &[h, "Content-Length: 5", "Transfer-Encoding: chunked"],
                "0\r\n\r\n",
            )),
            Expect::AnswerThenClose,
        ),
        case(
            "cl-double",
            "RFC 9112 §6.3",
            "two different Content-Lengths: 400, then closed",
            once(req(
                post,
                &[h, "Content-Length: 3", "Content-Length: 5"],
                "hello",
            )),
            REJECT_400_CLOSE,
        ),
        case(
            "cl-invalid",
            "RFC 9112 §6.3",
            "a Content-Length that is not a number: 400, then closed",
            once(req(post, &[h, "Content-Length: abc"], "hello")),
            REJECT_400_CLOSE,
        ),
        case(
            "cl-sign",
            "RFC 9110 §8.6",
            "Content-Length with a plus sign (1*DIGIT only): 400, then closed",
            once(req(post, &[h, "Content-Length: +5"], "hello")),
            REJECT_400_CLOSE,
        ),
        case(
            "te-not-chunked",
            "RFC 9112 §6.3",
            "a Transfer-Encoding whose last coding is not chunked: 400 (or 501), then closed",
            once(req(post, &[h, "Transfer-Encoding: gzip"], "")),
            Expect::Reject {
                statuses: &[400, 501],
                close: true,
            },
        ),
        // Field syntax (RFC 9112 §5, §2.2).
        case(
            "space-before-colon",
            "RFC 9112 §5.1",
            "whitespace between a field name and the colon: 400",
            once(req(get, &[h, "X-Probe : 1"], "")),
            REJECT_400,
        ),
        case(
            "obs-fold",
            "RFC 9112 §5.2",
            "a folded line: 400, or the fold read as a space (never as a field of its own)",
            once(req(get, &[h, "X-Probe: a", " Content-Length: 5"], "")),
            Expect::Answered,
        ),
        case(
            "ws-first-line",
            "RFC 9112 §2.2",
            "whitespace before the first field: rejected, or the line skipped unread",
            once(req(get, &[" Content-Length: 5", h], "")),
            Expect::Answered,
        ),
        case(
            "bare-lf",
            "RFC 9112 §2.2",
            "lines ended by a bare LF: accepted (MAY) or rejected, not waited on",
            once(format!("GET {p} HTTP/1.1\n{h}\n\n").into_bytes()),
            Expect::Answered,
        ),
        // Host (RFC 9112 §3.2).
        case(
            "host-missing",
            "RFC 9112 §3.2",
            "an HTTP/1.1 request without Host: 400",
            once(req(get, &[], "")),
            REJECT_400,
        ),
        case(
            "host-double",
            "RFC 9112 §3.2",
            "two Host lines: 400",
            once(req(get, &[h, h], "")),
            REJECT_400,
        ),
        case(
            "host-invalid",
            "RFC 9112 §3.2",
            "a Host with a space in it: 400",
            once(req(get, &["Host: bad host"], "")),
            REJECT_400,
        ),
        // The request line (RFC 9112 §2-3).
        case(
            "bare-cr-line",
            "RFC 9112 §2.2",
            "a bare CR in the target: invalid, or a space that breaks the line: 400",
            once(req(&format!("GET {p}a\rb HTTP/1.1"), &[h], "")),
            REJECT_400,
        ),
        case(
            "version-major",
            "RFC 9110 §15.6.6",
            "HTTP/3.0 on an HTTP/1.1 connection: 505 (or 400)",
            once(req(&format!("GET {p} HTTP/3.0"), &[h], "")),
            Expect::Reject {
                statuses: &[505, 400],
                close: false,
            },
        ),
        case(
            "version-minor",
            "RFC 9110 §2.5",
            "HTTP/1.9: served as the highest 1.x the server knows",
            once(req(&format!("GET {p} HTTP/1.9"), &[h], "")),
            Expect::Accept,
        ),
        case(
            "version-case",
            "RFC 9112 §2.3",
            "a lower-case http/1.1 (HTTP-name is case-sensitive): 400",
            once(req(&format!("GET {p} http/1.1"), &[h], "")),
            Expect::Reject {
                statuses: &[400, 505],
                close: false,
            },
        ),
        case(
            "target-no-slash",
            "RFC 9112 §3",
            "an origin-form target without its leading slash: 400 (or 301)",
            once(req(&format!("GET {relative} HTTP/1.1"), &[h], "")),
            Expect::Reject {
                statuses: &[400, 301],
                close: false,
            },
        ),
        case(
            "leading-crlf",
            "RFC 9112 §2.2",
            "an empty line before the request line: ignored",
            once([b"\r\n".as_slice(), &req(get, &[h], "")].concat()),
            Expect::Accept,
        ),
        case(
            "absolute-form",
            "RFC 9112 §3.2.2",
            "an absolute-form target: accepted",
            once(req(&format!("GET http://{}{p} HTTP/1.1", t.host), &[h], "")),
            Expect::Accept,
        ),
        // Limits (RFC 9112 §3, RFC 9110 §15.5.15, RFC 6585 §5).
        Case {
            alive_after: true,
            ..case(
                "long-target",
                "RFC 9112 §3",
                "a 2 MiB request target: 414 (or 400/431), not served, no crash",
                once(req(&long_target, &[h], "")),
                Expect::Limit,
            )
        },
        Case {
            alive_after: true,
            ..case(
                "long-headers",
                "RFC 9110 §5.4",
                "a 2 MiB header block: 431 (or 400/413), not served, no crash",
                once(req(get, &long_headers, "")),
                Expect::Limit,
            )
        },
        // Persistence (RFC 9112 §9).
        case(
            "http10-close",
            "RFC 9112 §9.3",
            "HTTP/1.0 without keep-alive: answered unchunked, then closed",
            once(req(&format!("GET {p} HTTP/1.0"), &[h], "")),
            Expect::Http10 { keep_alive: false },
        ),
        case(
            "http10-keep-alive",
            "RFC 9112 §9.3",
            "HTTP/1.0 with keep-alive: both answered unchunked, or the first and a close",
            once(
                [
                    req(
                        &format!("GET {p} HTTP/1.0"),
                        &[h, "Connection: keep-alive"],
                        "",
                    ),
                    req(
                        &format!("GET {p} HTTP/1.0"),
                        &[h, "Connection: keep-alive"],
                        "",
                    ),
                ]
                .concat(),
            ),
            Expect::Http10 { keep_alive: true },
        ),
        case(
            "conn-close",
            "RFC 9112 §9.6",
            "Connection: close: the answer, then closed",
            once(req(get, &[h, "Connection: close"], "")),
            Expect::AnswerThenClose,
        ),
        // Expect (RFC 9110 §10.1.1).
        case(
            "expect-continue",
            "RFC 9110 §10.1.1",
            "Expect: 100-continue with the body held back: a 100 or a final answer",
            Send::AwaitContinue {
                head: req(post, &[h, "Content-Length: 5", "Expect: 100-continue"], ""),
                body: b"hello".to_vec(),
            },
            Expect::Continue,
        ),
        case(
            "expect-http10",
            "RFC 9110 §10.1.1",
            "Expect: 100-continue in HTTP/1.0: ignored (no 100)",
            once(req(
                &format!("POST {p} HTTP/1.0"),
                &[h, "Content-Length: 5", "Expect: 100-continue"],
                "hello",
            )),
            Expect::NoInterim,
        ),
        // Pipelining (RFC 9112 §9.3.2) and HEAD (RFC 9110 §9.3.2).
        case(
            "pipeline-order",
            "RFC 9112 §9.3.2",
            "three pipelined requests: answered in the order sent",
            once(order.0),
            Expect::InOrder(order.1),
        ),
        case(
            "head-no-body",
            "RFC 9110 §9.3.2",
            "HEAD then GET pipelined: the HEAD answer without content",
            once(
                [
                    req(&format!("HEAD {p} HTTP/1.1"), &[h], ""),
                    next.clone().into_bytes(),
                ]
                .concat(),
            ),
            Expect::HeadThenGet,
        ),
        // Chunked coding (RFC 9112 §7.1).
        case(
            "chunk-size-invalid",
            "RFC 9112 §7.1",
            "a chunk size that is not hex: 400, or closed",
            once(req(
                post,
                &[h, "Transfer-Encoding: chunked"],
                "zz\r\nhello\r\n0\r\n\r\n",
            )),
            Expect::RejectOrClose,
        ),
        case(
            "chunk-size-overflow",
            "RFC 9112 §7.1",
            "a chunk size of 2^64 + 5: 400, or closed (never read as 5)",
            once(req(
                post,
                &[h, "Transfer-Encoding: chunked"],
                "10000000000000005\r\nhello\r\n0\r\n\r\n",
            )),
            Expect::RejectOrClose,
        ),
        case(
            "chunk-data-overrun",
            "RFC 9112 §7.1",
            "chunk data longer than its size (no CRLF after it): 400, or closed",
            once(req(
                post,
                &[h, "Transfer-Encoding: chunked"],
                "3\r\nhello\r\n0\r\n\r\n",
            )),
            Expect::RejectOrClose,
        ),
        case(
            "chunk-ext",
            "RFC 9112 §7.1.1",
            "a chunk extension: ignored, and the next request answered",
            once(with_next(req(
                post,
                &[h, "Transfer-Encoding: chunked"],
                "5;name=value\r\nhello\r\n0\r\n\r\n",
            ))),
            Expect::BodyThenNext,
        ),
    ]
}

/// How many final answers a case waits for before it stops reading (or,
/// when the case asks for a close, goes on reading for the end).
pub fn answers_wanted(e: &Expect) -> usize {
    match e {
        Expect::InOrder(_) => 3,
        Expect::HeadThenGet | Expect::BodyThenNext => 2,
        Expect::Http10 { keep_alive: true } => 2,
        _ => 1,
    }
}

/// Whether the case must see the connection's end after its answers.
pub fn wants_end(e: &Expect) -> bool {
    match e {
        Expect::Reject { close, .. } => *close,
        Expect::RejectOrClose | Expect::AnswerThenClose | Expect::Limit => true,
        Expect::Http10 { keep_alive } => !keep_alive,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            host: "127.0.0.1:8080".into(),
            path: "/".into(),
            echo_prefix: None,
        }
    }

    #[test]
    fn ids_are_unique_and_every_case_names_its_rfc_section() {
        let all = cases(&target());
        assert!(all.len() >= 25, "issue 33 asks for at least 25 cases");
        let mut ids: Vec<_> = all.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        for c in &all {
            assert!(
                c.rfc.starts_with("RFC 91") && c.rfc.contains('§'),
                "{}",
                c.id
            );
        }
    }

    #[test]
    fn oversize_cases_pass_every_common_limit() {
        let all = cases(&target());
        for id in ["long-target", "long-headers"] {
            let c = all.iter().find(|c| c.id == id).unwrap();
            let Send::Once(bytes) = &c.send else { panic!() };
            assert!(bytes.len() > OVERSIZE, "{id}: {}", bytes.len());
            assert!(c.alive_after);
        }
    }

    #[test]
    fn contract_servers_are_told_apart_by_echo_bodies() {
        let t = Target {
            echo_prefix: Some("/api".into()),
            ..target()
        };
        let c = cases(&t)
            .into_iter()
            .find(|c| c.id == "pipeline-order")
            .unwrap();
        let Send::Once(bytes) = &c.send else { panic!() };
        let text = String::from_utf8_lossy(bytes);
        assert_eq!(text.matches("GET /api/echo/p").count(), 3);
        assert!(matches!(c.expect, Expect::InOrder(Order::Bodies(_))));
    }
}
