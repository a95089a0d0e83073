//! The contract server's HTTP/1.1 request reader, strict where RFC 9112
//! says a server must be (so the correct server passes every conformance
//! probe), with one lax or wrong rule per conformance flaw so each probe
//! has a server that fails it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use crate::contract_server::Flaw;
use crate::{over_limit, BodyLength, Request, BODY_LIMIT};

/// The longest request line read (RFC 9112 §3 asks for at least 8000
/// octets); longer is 414.
pub(crate) const LINE_LIMIT: usize = 8 * 1024;

/// The largest header block read; larger is 431 (RFC 6585 §5).
pub(crate) const HEAD_LIMIT: usize = 64 * 1024;

/// Empty lines skipped before a request line (RFC 9112 §2.2: at least one).
const LEADING_EMPTY: usize = 4;

/// A request refused before its body: the status and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub status: u16,
    pub why: &'static str,
}

fn refuse(status: u16, why: &'static str) -> Refusal {
    Refusal { status, why }
}

/// One read of a request head.
pub(crate) enum Head {
    Request(Request),
    /// The client closed between requests.
    End,
    Refused(Refusal),
}

enum Line {
    /// The line without its terminator (CRLF, or a bare LF).
    Text(Vec<u8>),
    TooLong,
    End,
}

/// Reads one line of at most `max` bytes. A bare LF ends a line (RFC 9112
/// §2.2 lets a recipient take it), unless the flaw waits for CRLF.
fn read_line(r: &mut BufReader<TcpStream>, max: usize, flaw: Flaw) -> io::Result<Line> {
    // Without a limit a line still stops at 16 MiB: the flawed server
    // must not take the test process's memory.
    let cap = if flaw == Flaw::NoHeaderLimit {
        16 * 1024 * 1024
    } else {
        max + 2
    };
    let mut buf = Vec::new();
    loop {
        let room = cap.saturating_sub(buf.len()) as u64;
        if room == 0 {
            return Ok(Line::TooLong);
        }
        if r.by_ref().take(room).read_until(b'\n', &mut buf)? == 0 {
            // The connection ended, between lines or inside one.
            return Ok(Line::End);
        }
        if !buf.ends_with(b"\n") {
            // The room ran out (the next turn says so) or the end came.
            continue;
        }
        if flaw == Flaw::CrlfOnly && !buf.ends_with(b"\r\n") {
            // Reads on, as a server that only knows CRLF would.
            continue;
        }
        buf.pop();
        if buf.ends_with(b"\r") {
            buf.pop();
        }
        if buf.len() > max && flaw != Flaw::NoHeaderLimit {
            return Ok(Line::TooLong);
        }
        return Ok(Line::Text(buf));
    }
}

/// RFC 9110 §5.6.2's tchar.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A Host value: uri-host [":" port] (RFC 3986's reg-name and IP-literal
/// characters), without spaces or controls.
fn valid_host(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:[]%".contains(&b))
}

/// Parses the request line into method, origin-form path and minor version.
fn request_line(line: &[u8], flaw: Flaw) -> Result<(String, String, u8), Refusal> {
    let text = String::from_utf8_lossy(line);
    if flaw == Flaw::LaxRequestLine {
        let mut parts = text.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let minor = u8::from(!text.contains("/1.0"));
        return Ok((method, origin_form(&target), minor));
    }
    if line.iter().any(|&b| b.is_ascii_control()) {
        return Err(refuse(400, "a control character in the request line"));
    }
    let parts: Vec<&str> = text.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(refuse(400, "a request line is method SP target SP version"));
    };
    if method.is_empty() || !method.bytes().all(is_tchar) {
        return Err(refuse(400, "an invalid method"));
    }
    let Some(v) = version.strip_prefix("HTTP/") else {
        return Err(refuse(400, "the version is HTTP/x.y, in capitals"));
    };
    let minor = match v.as_bytes() {
        [b'1', b'.', m] if m.is_ascii_digit() => m - b'0',
        [a, b'.', m] if a.is_ascii_digit() && m.is_ascii_digit() => {
            return Err(refuse(505, "only HTTP/1.x is served here"))
        }
        _ => return Err(refuse(400, "the version is HTTP/x.y")),
    };
    if flaw == Flaw::StrictRequestLine && minor > 1 {
        return Err(refuse(505, "only HTTP/1.0 and HTTP/1.1"));
    }
    if target.starts_with('/') {
        return Ok((method.to_string(), target.to_string(), minor.min(1)));
    }
    if flaw != Flaw::StrictRequestLine
        && (target.starts_with("http://") || target.starts_with("https://"))
    {
        return Ok((method.to_string(), origin_form(target), minor.min(1)));
    }
    Err(refuse(
        400,
        "the target is origin-form (/path) or absolute-form",
    ))
}

/// The path of an absolute-form target (RFC 9112 §3.2.2), or the target.
fn origin_form(target: &str) -> String {
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    else {
        return target.to_string();
    };
    match rest.find('/') {
        Some(i) => rest[i..].to_string(),
        None => "/".to_string(),
    }
}

/// Reads one request's head, leaving its body unread.
pub(crate) fn read_head(r: &mut BufReader<TcpStream>, flaw: Flaw) -> io::Result<Head> {
    let mut leading = 0;
    let line = loop {
        match read_line(r, LINE_LIMIT, flaw)? {
            Line::End => return Ok(Head::End),
            Line::TooLong => return Ok(Head::Refused(refuse(414, "a request line over 8 KiB"))),
            Line::Text(l) if l.is_empty() && flaw != Flaw::StrictRequestLine => {
                leading += 1;
                if leading > LEADING_EMPTY {
                    return Ok(Head::Refused(refuse(400, "empty lines, no request")));
                }
            }
            Line::Text(l) => break l,
        }
    };
    let (method, path, minor) = match request_line(&line, flaw) {
        Ok(parts) => parts,
        Err(refusal) => return Ok(Head::Refused(refusal)),
    };
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut size = 0usize;
    loop {
        let max = HEAD_LIMIT.saturating_sub(size);
        let l = match read_line(r, max, flaw)? {
            Line::End => return Ok(Head::End),
            Line::TooLong => {
                return Ok(Head::Refused(refuse(431, "a header block over 64 KiB")));
            }
            Line::Text(l) => l,
        };
        size += l.len() + 2;
        if l.is_empty() {
            break;
        }
        let mut l = String::from_utf8_lossy(&l).into_owned();
        if l.starts_with([' ', '\t']) {
            if flaw != Flaw::LaxHeaders {
                // obs-fold (§5.2), or whitespace before the first field (§2.2).
                return Ok(Head::Refused(refuse(
                    400,
                    "a line that starts with whitespace",
                )));
            }
            l = l.trim_start().to_string();
        }
        let Some((name, value)) = l.split_once(':') else {
            return Ok(Head::Refused(refuse(400, "a field line without a colon")));
        };
        let name = if flaw == Flaw::LaxHeaders {
            name.trim()
        } else {
            name
        };
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Ok(Head::Refused(refuse(
                400,
                "a field name that is not a token",
            )));
        }
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Ok(Head::Refused(refuse(
                400,
                "a control character in a field value",
            )));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    Ok(match check_fields(method, path, minor, headers, flaw) {
        Ok(req) => Head::Request(req),
        Err(refusal) => Head::Refused(refusal),
    })
}

fn named<'a>(headers: &'a [(String, String)], name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .iter()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Host, framing and persistence from the fields (RFC 9112 §3.2, §6.3, §9.3).
fn check_fields(
    method: String,
    path: String,
    minor: u8,
    headers: Vec<(String, String)>,
    flaw: Flaw,
) -> Result<Request, Refusal> {
    let hosts: Vec<&str> = named(&headers, "host").collect();
    if flaw != Flaw::LaxHost {
        match hosts[..] {
            [] if minor == 1 => return Err(refuse(400, "HTTP/1.1 without Host")),
            [_, _, ..] => return Err(refuse(400, "more than one Host")),
            [h] if !valid_host(h) => return Err(refuse(400, "an invalid Host")),
            _ => {}
        }
    }
    let lengths: Vec<&str> = named(&headers, "content-length").collect();
    let codings: Vec<&str> = named(&headers, "transfer-encoding").collect();
    let chunked = codings.last().is_some_and(|v| {
        v.rsplit(',')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("chunked")
    });
    let lax = flaw == Flaw::LaxFraming;
    if !codings.is_empty() && !chunked && !lax {
        return Err(refuse(
            400,
            "a Transfer-Encoding whose last coding is not chunked",
        ));
    }
    let length = if lax {
        lengths
            .last()
            .map_or(0, |v| v.trim().parse::<u64>().unwrap_or(0))
    } else {
        let mut values = lengths
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .peekable();
        let first = values.peek().copied();
        let mut length = None;
        for v in values {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) || Some(v) != first {
                return Err(refuse(400, "an invalid or conflicting Content-Length"));
            }
            length = Some(
                v.parse::<u64>()
                    .map_err(|_| refuse(400, "a Content-Length too large"))?,
            );
        }
        length.unwrap_or(0)
    };
    let connection: Vec<String> = named(&headers, "connection")
        .flat_map(|v| v.split(','))
        .map(|o| o.trim().to_ascii_lowercase())
        .collect();
    let close_asked = connection.iter().any(|o| o == "close");
    let keep_alive = connection.iter().any(|o| o == "keep-alive");
    let mut close = close_asked || (minor == 0 && !keep_alive);
    // RFC 9112 §6.3: both given, the body is read as chunked and the
    // connection closed after the answer.
    if chunked && !lengths.is_empty() && !lax {
        close = true;
    }
    if flaw == Flaw::KeepsOpen {
        close = false;
    }
    let upgrade_ws = named(&headers, "upgrade").any(|v| v.eq_ignore_ascii_case("websocket"));
    let ws_key = named(&headers, "sec-websocket-key")
        .next()
        .map(str::to_string)
        .filter(|_| upgrade_ws);
    Ok(Request {
        method,
        path,
        body: Vec::new(),
        close,
        ws_key,
        headers,
        body_length: if chunked {
            BodyLength::Chunked
        } else {
            BodyLength::Known(length)
        },
        http10: minor == 0,
    })
}

/// Whether to send `100 Continue` before reading `req`'s body (RFC 9110
/// §10.1.1: only to HTTP/1.1, only when a body is still to come).
pub(crate) fn wants_continue(req: &Request, flaw: Flaw) -> bool {
    let asked = req
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
    let body = req.body_length != BodyLength::Known(0);
    match flaw {
        Flaw::No100Continue => false,
        Flaw::ContinueHttp10 => asked && body,
        _ => asked && body && !req.http10,
    }
}

/// Reads a chunked body of at most `limit` bytes (RFC 9112 §7.1): sizes
/// of 1 to 16 hex digits, extensions ignored, CRLF after each chunk's data.
pub(crate) fn read_chunked(
    r: &mut BufReader<TcpStream>,
    limit: u64,
    flaw: Flaw,
) -> io::Result<Vec<u8>> {
    let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
    let mut body = Vec::new();
    loop {
        let Line::Text(line) = read_line(r, LINE_LIMIT, Flaw::None)? else {
            return Err(bad("a chunk size line too long or cut"));
        };
        let line = String::from_utf8_lossy(&line).into_owned();
        let (digits, ext) = match line.split_once(';') {
            Some((d, e)) => (d, Some(e)),
            None => (line.as_str(), None),
        };
        if ext.is_some() && flaw == Flaw::ChunkExtRejected {
            return Err(bad("a chunk extension"));
        }
        let digits = digits.trim_end_matches([' ', '\t']);
        let size = if flaw == Flaw::LaxChunks {
            // Leading hex digits, wrapping: as a careless parser would.
            digits
                .chars()
                .map_while(|c| c.to_digit(16))
                .fold(0u64, |n, d| n.wrapping_mul(16).wrapping_add(u64::from(d)))
        } else {
            if digits.is_empty()
                || digits.len() > 16
                || !digits.bytes().all(|b| b.is_ascii_hexdigit())
            {
                return Err(bad("a chunk size of 1 to 16 hex digits"));
            }
            u64::from_str_radix(digits, 16).map_err(|_| bad("a chunk size that is not hex"))?
        };
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                match read_line(r, LINE_LIMIT, Flaw::None)? {
                    Line::Text(l) if l.is_empty() => return Ok(body),
                    Line::Text(_) => {}
                    _ => return Err(bad("trailers cut")),
                }
            }
        }
        if body.len() as u64 + size > limit {
            return Err(over_limit());
        }
        let start = body.len();
        body.resize(start + size as usize, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" && flaw != Flaw::LaxChunks {
            return Err(bad("chunk data not followed by CRLF"));
        }
    }
}

/// Answers a refused request and closes as a careful server does: the
/// answer, then the write side shut, then the client's bytes read and
/// dropped until it closes (a close with unread bytes would reset the
/// connection and could lose the answer), for at most a few seconds.
pub(crate) fn refuse_and_close(
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
    refusal: Refusal,
) -> io::Result<()> {
    let body = refusal.why.as_bytes();
    let head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        refusal.status,
        body.len()
    );
    w.write_all(head.as_bytes())?;
    w.write_all(body)?;
    w.shutdown(Shutdown::Write)?;
    linger(r)
}

/// Reads and drops what the client still sends, until it closes or goes
/// quiet for 5 s, or 16 MiB have come.
pub(crate) fn linger(r: &mut BufReader<TcpStream>) -> io::Result<()> {
    r.get_ref().set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut sink = [0u8; 64 * 1024];
    let mut total = 0usize;
    while total < 16 * 1024 * 1024 {
        match r.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    Ok(())
}

/// Reads the body `req`'s head announced, refusing one over `BODY_LIMIT`.
pub(crate) fn read_body(
    r: &mut BufReader<TcpStream>,
    req: &mut Request,
    flaw: Flaw,
) -> io::Result<()> {
    req.body = match req.body_length {
        BodyLength::Chunked => read_chunked(r, BODY_LIMIT, flaw)?,
        BodyLength::Known(n) if n > BODY_LIMIT => return Err(over_limit()),
        BodyLength::Known(n) => {
            let mut body = vec![0; n as usize];
            r.read_exact(&mut body)?;
            body
        }
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_read_strictly_unless_a_flaw_says_otherwise() {
        let ok = |l: &str, f| request_line(l.as_bytes(), f);
        assert_eq!(
            ok("GET /a HTTP/1.1", Flaw::None),
            Ok(("GET".into(), "/a".into(), 1))
        );
        assert_eq!(ok("GET /a HTTP/1.9", Flaw::None).unwrap().2, 1);
        assert_eq!(
            ok("GET http://h:1/a?b HTTP/1.1", Flaw::None).unwrap().1,
            "/a?b"
        );
        assert_eq!(ok("GET /a HTTP/3.0", Flaw::None).unwrap_err().status, 505);
        for bad in [
            "GET /a http/1.1",
            "GET a HTTP/1.1",
            "GET /a\rb HTTP/1.1",
            "GET  /a HTTP/1.1",
        ] {
            assert_eq!(ok(bad, Flaw::None).unwrap_err().status, 400, "{bad:?}");
            assert!(ok(bad, Flaw::LaxRequestLine).is_ok(), "{bad:?}");
        }
        assert!(ok("GET /a HTTP/1.9", Flaw::StrictRequestLine).is_err());
        assert!(ok("GET http://h/a HTTP/1.1", Flaw::StrictRequestLine).is_err());
    }

    #[test]
    fn hosts_are_checked() {
        assert!(valid_host("127.0.0.1:8080"));
        assert!(valid_host("[::1]:80"));
        assert!(!valid_host("bad host"));
        assert!(!valid_host("a/b"));
    }
}
