//! The WebSocket opening handshake (RFC 6455 section 4): the client's key
//! and upgrade request, the accept value a server must answer with, and the
//! check of the server's `101` answer. Pure functions, shared by the engine,
//! `verify` and the test servers.

use super::sha1::sha1;

/// Appended to the key before hashing (section 1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// A `101` head larger than this is refused rather than buffered without end.
pub const MAX_ANSWER_HEAD: usize = 16 * 1024;

/// A `Sec-WebSocket-Key`: 16 random bytes in base64 (section 4.1).
pub fn key_from(random: [u8; 16]) -> [u8; 24] {
    let mut out = [0u8; 24];
    base64(&random, &mut out);
    out
}

/// The `Sec-WebSocket-Accept` a server answers `key` with: base64 of the
/// SHA-1 of the key and the GUID (section 4.2.2).
pub fn accept_for(key: &[u8]) -> [u8; 28] {
    let mut joined = [0u8; 128];
    let n = key.len().min(128 - GUID.len());
    joined[..n].copy_from_slice(&key[..n]);
    joined[n..n + GUID.len()].copy_from_slice(GUID);
    let mut out = [0u8; 28];
    base64(&sha1(&joined[..n + GUID.len()]), &mut out);
    out
}

/// Standard base64 with padding; `out` is exactly 4 * ceil(len / 3) long.
fn base64(data: &[u8], out: &mut [u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    debug_assert_eq!(out.len(), data.len().div_ceil(3) * 4);
    for (chunk, o) in data.chunks(3).zip(out.chunks_mut(4)) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, c) in o.iter_mut().enumerate() {
            *c = if i <= chunk.len() {
                ALPHABET[(n >> (18 - 6 * i)) as usize & 63]
            } else {
                b'='
            };
        }
    }
}

/// Appends the upgrade request for `path` (with its query) on `host` (the
/// Host header's value). It offers no subprotocol and no extension, so the
/// server must negotiate none.
pub fn write_upgrade_request(out: &mut Vec<u8>, path: &str, host: &str, key: &[u8; 24]) {
    for part in [
        b"GET ".as_slice(),
        path.as_bytes(),
        b" HTTP/1.1\r\nHost: ",
        host.as_bytes(),
        concat!(
            "\r\nUser-Agent: netbench/",
            env!("CARGO_PKG_VERSION"),
            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
        )
        .as_bytes(),
        key,
        b"\r\nSec-WebSocket-Version: 13\r\n\r\n",
    ] {
        out.extend_from_slice(part);
    }
}

/// Why a server's answer to the upgrade request does not open a WebSocket.
/// Small and Copy: the engine counts all of these as one error kind, `verify`
/// shows the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("the answer is not valid HTTP/1.1")]
    Malformed,
    #[error("the answer head is longer than {MAX_ANSWER_HEAD} bytes")]
    TooLong,
    #[error("the server answered {0}, not 101 Switching Protocols")]
    Status(u16),
    #[error("the 101 answer has no `Upgrade: websocket`")]
    Upgrade,
    #[error("the 101 answer has no `Connection: Upgrade`")]
    Connection,
    #[error("the 101 answer's Sec-WebSocket-Accept is missing or wrong")]
    Accept,
    #[error("the server negotiated an extension, but none was offered")]
    Extension,
    #[error("the server chose a subprotocol, but none was offered")]
    Subprotocol,
    #[error("the connection closed before the handshake was complete")]
    Closed,
}

/// Checks the server's answer at the front of `buf` against the accept value
/// the request's key calls for. `Ok(Some(n))`: the handshake is done and its
/// head took `n` bytes (frames may follow); `Ok(None)`: the head is not
/// complete yet.
pub fn check_answer(buf: &[u8], accept: &[u8; 28]) -> Result<Option<usize>, HandshakeError> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_ANSWER_HEAD => {
            return Err(HandshakeError::TooLong)
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(HandshakeError::Malformed),
    };
    let status = resp.code.unwrap_or(0);
    if status != 101 {
        return Err(HandshakeError::Status(status));
    }
    let has_token = |name: &str, token: &str| {
        resp.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .flat_map(|h| h.value.split(|&b| b == b','))
            .any(|v| v.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    };
    let present = |name: &str| {
        resp.headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case(name))
    };
    if !has_token("upgrade", "websocket") {
        return Err(HandshakeError::Upgrade);
    }
    if !has_token("connection", "upgrade") {
        return Err(HandshakeError::Connection);
    }
    // Exactly one accept header, with exactly the value the key calls for.
    let mut accepted = resp
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("sec-websocket-accept"))
        .map(|h| h.value.trim_ascii());
    if accepted.next() != Some(accept.as_slice()) || accepted.next().is_some() {
        return Err(HandshakeError::Accept);
    }
    if present("sec-websocket-extensions") {
        return Err(HandshakeError::Extension);
    }
    if present("sec-websocket-protocol") {
        return Err(HandshakeError::Subprotocol);
    }
    Ok(Some(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_accept_example() {
        // RFC 6455 section 1.3.
        assert_eq!(
            &accept_for(b"dGhlIHNhbXBsZSBub25jZQ=="),
            b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        // The key in that example is the base64 of "the sample nonce".
        assert_eq!(&key_from(*b"the sample nonce"), b"dGhlIHNhbXBsZSBub25jZQ==");
    }

    #[test]
    fn base64_pads_as_the_standard_says() {
        // RFC 4648 section 10.
        for (data, want) in [
            (&b"f"[..], &b"Zg=="[..]),
            (b"fo", b"Zm8="),
            (b"foo", b"Zm9v"),
            (b"foob", b"Zm9vYg=="),
            (b"fooba", b"Zm9vYmE="),
            (b"foobar", b"Zm9vYmFy"),
        ] {
            let mut out = vec![0u8; data.len().div_ceil(3) * 4];
            base64(data, &mut out);
            assert_eq!(out, want);
        }
    }

    fn answer(extra: &str) -> String {
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{extra}\r\n"
        )
    }

    #[test]
    fn the_answer_is_checked() {
        let key = *b"dGhlIHNhbXBsZSBub25jZQ==";
        let accept = accept_for(&key);
        let mut req = Vec::new();
        write_upgrade_request(&mut req, "/ws?x=1", "127.0.0.1:8080", &key);
        let text = String::from_utf8(req).unwrap();
        assert!(text.starts_with("GET /ws?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(text.contains("\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"));
        assert!(text.ends_with("Sec-WebSocket-Version: 13\r\n\r\n"));

        let good = answer("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n");
        let mut bytes = good.clone().into_bytes();
        bytes.extend_from_slice(&[0x81, 0x00]);
        assert_eq!(check_answer(&bytes, &accept), Ok(Some(good.len())));
        assert_eq!(check_answer(&bytes[..good.len() - 1], &accept), Ok(None));
        // Header names and tokens in any case, Connection with other tokens.
        let lower = "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        assert!(matches!(
            check_answer(lower.as_bytes(), &accept),
            Ok(Some(_))
        ));

        let cases = [
            (
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string(),
                HandshakeError::Status(404),
            ),
            ("SPAM\r\n\r\n".to_string(), HandshakeError::Malformed),
            (
                "HTTP/1.1 101 X\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".to_string(),
                HandshakeError::Upgrade,
            ),
            (
                "HTTP/1.1 101 X\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".to_string(),
                HandshakeError::Connection,
            ),
            (answer(""), HandshakeError::Accept),
            (
                answer("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOp=\r\n"),
                HandshakeError::Accept,
            ),
            (
                answer("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate\r\n"),
                HandshakeError::Extension,
            ),
            (
                answer("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n"),
                HandshakeError::Subprotocol,
            ),
        ];
        for (text, err) in cases {
            assert_eq!(check_answer(text.as_bytes(), &accept), Err(err), "{text}");
        }
        let endless = vec![b'a'; MAX_ANSWER_HEAD + 1];
        let mut head = b"HTTP/1.1 101 X\r\nX: ".to_vec();
        head.extend_from_slice(&endless);
        assert_eq!(check_answer(&head, &accept), Err(HandshakeError::TooLong));
    }
}
