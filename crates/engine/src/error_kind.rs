//! The hot path's error kinds and their counts: small Copy values the event
//! loops count, never messages. A leaf: it imports nothing of the engine, so
//! every module may name a kind without importing the plans.

use serde::{Deserialize, Serialize};

/// Why one request (or one connection attempt) failed. Small and Copy: the hot
/// path counts these, it never builds messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The connection could not be made (refused, unreachable, or not made
    /// within the timeout).
    Connect,
    /// Reading failed (for example the server reset the connection).
    Read,
    /// Writing the request failed.
    Write,
    /// No complete answer within the timeout.
    Timeout,
    /// The status code was not the expected one.
    Status,
    /// The Content-Type was missing or not the expected one.
    ContentType,
    /// The body was not the expected one.
    Body,
    /// The answer was not valid HTTP/1.x or its framing was broken.
    Malformed,
    /// The server closed the connection before the answer was complete.
    ClosedEarly,
    /// The WebSocket upgrade failed: no `101`, a wrong `Sec-WebSocket-Accept`,
    /// an extension nobody offered, or the connection ended first. Counted
    /// once per connection attempt.
    WsHandshake,
    /// A WebSocket frame broke RFC 6455 (masked by the server, reserved bits
    /// or opcodes, a message nobody asked for).
    WsProtocol,
    /// A WebSocket echo differed from the message sent (bytes, length or
    /// message type).
    WsEchoMismatch,
    /// TLS: the server's certificate chain does not lead to a trusted
    /// authority (a self-signed or private CA not given with `--cacert`).
    TlsUntrusted,
    /// TLS: the certificate is valid but for other names than the one
    /// connected to.
    TlsName,
    /// TLS: the certificate has expired or is not valid yet.
    TlsExpired,
    /// TLS: the server ended the handshake with an alert (no common protocol
    /// version, cipher suite or ALPN protocol, or it refused the client).
    TlsAlert,
    /// TLS: what came was not TLS (garbage instead of a record), the
    /// connection closed mid-handshake, or the peer broke the protocol.
    TlsProtocol,
    /// A compressed answer was asked for and did not come as one: no
    /// `Content-Encoding: gzip`, or a body that is not valid gzip, or one
    /// that inflates past the check's bound (a decompression bomb).
    Encoding,
    /// A page of the contract's `app` broke its session: a new session
    /// without exactly one valid cookie, a cookie changed later, a counter
    /// that did not move by one, or a time of creation that moved.
    Session,
    /// HTTP/2: the server broke the protocol (a malformed frame, a header
    /// block that would not decode or ran past its bound, a frame where
    /// none may be, a window past its largest): the connection ended with
    /// a GOAWAY. Counted once per connection when nothing was in flight.
    H2Protocol,
    /// HTTP/2: the server reset the request's stream (RST_STREAM).
    H2Reset,
    /// HTTP/2: the server's GOAWAY named a last stream below the request's,
    /// so it was never taken.
    H2Goaway,
    /// gRPC: the answer's trailers carried a `grpc-status` other than 0 (OK),
    /// or none.
    GrpcStatus,
    /// HTTP/2: the server sent control frames that each ask for an answer
    /// (PING, SETTINGS) faster than it read the answers: more were owed
    /// than a peer that reads can be owed, so the connection ended with a
    /// GOAWAY (ENHANCE_YOUR_CALM, RFC 9113 §10.5) instead of queuing them
    /// without bound.
    H2Flood,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; KINDS] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::ContentType,
        ErrorKind::Body,
        ErrorKind::Malformed,
        ErrorKind::ClosedEarly,
        ErrorKind::WsHandshake,
        ErrorKind::WsProtocol,
        ErrorKind::WsEchoMismatch,
        ErrorKind::TlsUntrusted,
        ErrorKind::TlsName,
        ErrorKind::TlsExpired,
        ErrorKind::TlsAlert,
        ErrorKind::TlsProtocol,
        ErrorKind::Encoding,
        ErrorKind::Session,
        ErrorKind::H2Protocol,
        ErrorKind::H2Reset,
        ErrorKind::H2Goaway,
        ErrorKind::GrpcStatus,
        ErrorKind::H2Flood,
    ];

    /// The stable name used in output and in the JSON schema.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Read => "read",
            ErrorKind::Write => "write",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Status => "status",
            ErrorKind::ContentType => "content_type",
            ErrorKind::Body => "body",
            ErrorKind::Malformed => "malformed",
            ErrorKind::ClosedEarly => "closed_early",
            ErrorKind::WsHandshake => "ws_handshake",
            ErrorKind::WsProtocol => "ws_protocol",
            ErrorKind::WsEchoMismatch => "ws_echo_mismatch",
            ErrorKind::TlsUntrusted => "tls_untrusted",
            ErrorKind::TlsName => "tls_name",
            ErrorKind::TlsExpired => "tls_expired",
            ErrorKind::TlsAlert => "tls_alert",
            ErrorKind::TlsProtocol => "tls_protocol",
            ErrorKind::Encoding => "encoding",
            ErrorKind::Session => "session",
            ErrorKind::H2Protocol => "h2_protocol",
            ErrorKind::H2Reset => "h2_reset",
            ErrorKind::H2Goaway => "h2_goaway",
            ErrorKind::GrpcStatus => "grpc_status",
            ErrorKind::H2Flood => "h2_flood",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const KINDS: usize = 24;

/// A count per error kind, serialized as an array in [`ErrorKind::ALL`]'s
/// order. Kinds are only ever appended, so a shorter array (a result stored
/// before a kind existed) reads with zeros for the kinds it lacks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ErrorCounts([u64; KINDS]);

impl<'de> Deserialize<'de> for ErrorCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = Vec::<u64>::deserialize(d)?;
        if stored.len() > KINDS {
            return Err(serde::de::Error::invalid_length(
                stored.len(),
                &"at most one count per error kind",
            ));
        }
        let mut counts = [0; KINDS];
        counts[..stored.len()].copy_from_slice(&stored);
        Ok(ErrorCounts(counts))
    }
}

impl ErrorCounts {
    pub(crate) fn add(&mut self, kind: ErrorKind) {
        self.0[kind.index()] += 1;
    }

    pub(crate) fn merge(&mut self, other: &ErrorCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// Adds `other` in, or None (and self unchanged) when a count would
    /// overflow: merged counts come from files, which may lie.
    pub(crate) fn checked_merge(&mut self, other: &ErrorCounts) -> Option<()> {
        let mut sum = self.0;
        for (a, b) in sum.iter_mut().zip(other.0) {
            *a = a.checked_add(b)?;
        }
        self.0 = sum;
        Some(())
    }

    /// The total, or None when it overflows.
    pub(crate) fn checked_total(&self) -> Option<u64> {
        self.0.iter().try_fold(0u64, |t, &n| t.checked_add(n))
    }

    pub fn get(&self, kind: ErrorKind) -> u64 {
        self.0[kind.index()]
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Every kind with its count, zeros included, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL.iter().map(|&k| (k, self.get(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_kind() {
        let mut c = ErrorCounts::default();
        c.add(ErrorKind::Timeout);
        c.add(ErrorKind::Timeout);
        c.add(ErrorKind::Body);
        let mut d = ErrorCounts::default();
        d.add(ErrorKind::Body);
        c.merge(&d);
        assert_eq!(c.get(ErrorKind::Timeout), 2);
        assert_eq!(c.get(ErrorKind::Body), 2);
        assert_eq!(c.total(), 4);
        assert_eq!(c.iter().count(), ErrorKind::ALL.len());
    }

    #[test]
    fn counts_stored_before_the_websocket_kinds_still_read() {
        let old: ErrorCounts = serde_json::from_str("[1, 2, 3, 4, 5, 6, 7, 8, 9]").unwrap();
        assert_eq!(old.get(ErrorKind::ClosedEarly), 9);
        assert_eq!(old.get(ErrorKind::WsEchoMismatch), 0);
        let mut c = ErrorCounts::default();
        c.add(ErrorKind::WsHandshake);
        let again: ErrorCounts = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(again, c);
        // Counts stored before the encoding kind (17 of them) read too; more
        // counts than kinds do not.
        let tls_era: ErrorCounts = serde_json::from_str(&format!("{:?}", [1u64; 17])).unwrap();
        assert_eq!(
            (
                tls_era.get(ErrorKind::TlsProtocol),
                tls_era.get(ErrorKind::Encoding)
            ),
            (1, 0)
        );
        assert!(serde_json::from_str::<ErrorCounts>(&format!("{:?}", [0u64; KINDS + 1])).is_err());
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
