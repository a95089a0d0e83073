//! `GET /ws`: the WebSocket echo. hyper answers the opening handshake with
//! `101` and hands the connection over; tokio-tungstenite speaks RFC 6455 on it.

use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    HeaderMap, HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::WebSocketStream;

use crate::{respond, TEXT};

/// Why a `GET /ws` was not upgraded.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// A plain request, or one asking for another protocol.
    NotWebSocket,
    /// A WebSocket version other than 13.
    Version,
    NoKey,
}

/// Whether a comma-separated header holds `token`, in any case
/// (`Connection: keep-alive, Upgrade`).
fn has_token(headers: &HeaderMap, name: impl hyper::header::AsHeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|value| {
        value
            .to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// The `Sec-WebSocket-Accept` for a valid opening handshake.
fn accept_key(headers: &HeaderMap) -> Result<String, Refused> {
    if !has_token(headers, UPGRADE, "websocket") || !has_token(headers, CONNECTION, "upgrade") {
        return Err(Refused::NotWebSocket);
    }
    if headers
        .get(SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        return Err(Refused::Version);
    }
    match headers.get(SEC_WEBSOCKET_KEY) {
        Some(key) if !key.is_empty() => Ok(derive_accept_key(key.as_bytes())),
        _ => Err(Refused::NoKey),
    }
}

/// The answer to `GET /ws`: `101` and an echo task once hyper has written it,
/// or the reason the handshake was refused.
pub fn upgrade(mut request: Request<Incoming>) -> Response<Full<Bytes>> {
    let accept = match accept_key(request.headers()) {
        Ok(accept) => accept,
        Err(Refused::NoKey) => {
            return respond(
                StatusCode::BAD_REQUEST,
                TEXT,
                "Sec-WebSocket-Key is missing",
            )
        }
        Err(refused) => {
            // RFC 9110 §15.5.22 and RFC 6455 §4.4: say what would be accepted.
            let mut response = respond(
                StatusCode::UPGRADE_REQUIRED,
                TEXT,
                "a WebSocket (version 13) upgrade is required",
            );
            let headers = response.headers_mut();
            headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
            if refused == Refused::NotWebSocket {
                headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
            }
            return response;
        }
    };
    let upgrading = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        // An error here is a client that left before the 101 was written.
        if let Ok(upgraded) = upgrading.await {
            let io = TokioIo::new(upgraded);
            // No config: tungstenite's defaults (messages up to 64 MiB, masked
            // client frames required, no extensions) are what the contract asks.
            echo(WebSocketStream::from_raw_socket(io, Role::Server, None).await).await;
        }
    });
    let mut response = Response::new(Full::default());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(
        SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("base64 is a valid header value"),
    );
    response
}

/// Sends every text and binary message back as it came, until the client
/// closes or breaks the protocol.
async fn echo<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocketStream<S>) {
    // Pongs and the closing handshake need no code here: tungstenite queues
    // the pong (or the answering close) when it reads a ping (or a close) and
    // writes it on the next read, and after answering a close it ends the
    // stream so that the connection is dropped, server side first. An
    // unmasked frame is an error, which also ends the loop and the connection.
    while let Some(Ok(message)) = ws.next().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|&(name, value)| (name.parse().unwrap(), HeaderValue::from_static(value)))
            .collect()
    }

    const HANDSHAKE: [(&str, &str); 4] = [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn accepts_the_rfc_example() {
        // RFC 6455 §1.3.
        assert_eq!(
            accept_key(&headers(&HANDSHAKE)).as_deref(),
            Ok("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        );
        let mut relaxed = HANDSHAKE;
        relaxed[0].1 = "WebSocket";
        relaxed[1].1 = "keep-alive, upgrade";
        assert!(accept_key(&headers(&relaxed)).is_ok());
    }

    #[test]
    fn refuses_other_requests() {
        assert_eq!(accept_key(&headers(&[])), Err(Refused::NotWebSocket));
        assert_eq!(
            accept_key(&headers(&HANDSHAKE[1..])),
            Err(Refused::NotWebSocket)
        );
        let mut h2c = HANDSHAKE;
        h2c[0].1 = "h2c";
        assert_eq!(accept_key(&headers(&h2c)), Err(Refused::NotWebSocket));
        let mut old = HANDSHAKE;
        old[2].1 = "8";
        assert_eq!(accept_key(&headers(&old)), Err(Refused::Version));
        assert_eq!(accept_key(&headers(&HANDSHAKE[..3])), Err(Refused::NoKey));
    }
}
