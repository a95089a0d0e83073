//! TLS between the socket and a protocol: [`Tls`] wraps any [`Protocol`]
//! (HTTP/1.1 or WebSocket) and is one itself, so the worker and the idle loop
//! drive `https://` and `wss://` exactly as they drive cleartext. rustls's
//! connection state machine owns the records, the handshake and the keys;
//! this layer only moves bytes: ciphertext between the backend's reader or
//! writer and rustls, plaintext between rustls and the protocol. Like the
//! protocols it never creates, configures or closes a socket.
//!
//! Reading is the shared loop (`transport.rs`) into the first half of the
//! worker's scratch buffer, one read for many records, feeding rustls from
//! there: rustls's own reads are at most 4 KiB, so letting it read the
//! socket would cost a system call per 4 KiB of a large answer. The
//! protocol reads its plaintext into the second half.

use std::io::{self, Read, Write};

use rustls::{CertificateError, ClientConnection, HandshakeKind};

use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::ErrorKind;
use crate::proto::{ConnPlan, Handshake, Protocol};
use crate::transport::{read_turn, Fed, ReadOutcome, Turn};

pub(crate) struct Tls<P> {
    inner: P,
    tls: Option<ClientConnection>,
    /// When the handshake began (the connect finished); `None` once it is
    /// done.
    handshake_since: Option<u64>,
    /// A finished handshake, until the worker takes it.
    finished: Option<Handshake>,
}

impl<P: Protocol> Protocol for Tls<P> {
    fn for_plan(plan: &ConnPlan<'_>, seed: u64) -> Self {
        Tls {
            inner: P::for_plan(plan, seed),
            tls: None,
            handshake_since: None,
            finished: None,
        }
    }

    fn on_connected(&mut self, plan: &ConnPlan<'_>, now: u64) {
        let tls = plan.tls.expect("a TLS connection needs a TLS plan");
        // Making the state fails only on a configuration rustls refuses,
        // which TlsPlan::new already checked; a failure shows at the first
        // flush as a TLS error of the connection, never as a panic.
        self.tls = tls.connect().ok();
        if let Some(conn) = self.tls.as_mut() {
            // The protocol's own output (a WebSocket upgrade) may be written
            // before the handshake ends; rustls holds it until then. No
            // limit: backpressure is `has_output`, as on cleartext.
            conn.set_buffer_limit(None);
        }
        self.handshake_since = Some(now);
        self.finished = None;
        self.inner.on_connected(plan, now);
    }

    fn set_up(&self) -> bool {
        self.handshake_since.is_none() && self.tls.is_some() && self.inner.set_up()
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn oldest_sent(&self) -> Option<u64> {
        self.inner.oldest_sent().or(self.handshake_since)
    }

    fn closing(&self) -> bool {
        self.inner.closing()
    }

    fn has_output(&self) -> bool {
        self.inner.has_output() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>) {
        self.inner.enqueue(req, plan);
    }

    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        let Some(tls) = self.tls.as_mut() else {
            return Err(ErrorKind::TlsProtocol);
        };
        if self.inner.has_output() {
            // Into rustls, which encrypts it (or keeps it until the
            // handshake is done); the socket sees only what follows.
            self.inner.flush(&mut tls.writer())?;
        }
        let mut written = 0;
        while tls.wants_write() {
            match tls.write_tls(io) {
                Ok(0) => return Err(ErrorKind::Write),
                Ok(n) => written += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(ErrorKind::Write),
            }
        }
        Ok(written)
    }

    fn on_readable<R: Read, S: AnswerSink>(
        &mut self,
        io: &mut R,
        peer_closed: bool,
        scratch: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome {
        let (cipher, plain) = scratch.split_at_mut(scratch.len() / 2);
        let turn = read_turn(io, peer_closed, cipher, bytes_read, |bytes| {
            self.take(bytes, false, plain, plan, now, sink)
        });
        match turn {
            Turn::Done(outcome) => outcome,
            // The end reaches rustls too: mid-handshake it is a failure,
            // after it the protocol reads its plaintext to the end.
            Turn::Eof => match self.take(&[], true, plain, plan, now, sink) {
                Ok(_) => ReadOutcome::Eof,
                Err(kind) => ReadOutcome::Failed(kind),
            },
        }
    }

    fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        self.inner.fail_all(kind, now, sink);
        self.clear();
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.clear();
    }

    fn take_handshake(&mut self) -> Option<Handshake> {
        self.finished.take()
    }
}

impl<P: Protocol> Tls<P> {
    /// Feeds rustls `bytes` of ciphertext (and, with `eof`, the end of the
    /// stream), handing the protocol its plaintext after each record so
    /// rustls's plaintext buffer never fills. `Closed` once the protocol saw
    /// the end of its stream.
    #[allow(clippy::too_many_arguments)]
    fn take<S: AnswerSink>(
        &mut self,
        mut bytes: &[u8],
        eof: bool,
        plain: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<Fed, ErrorKind> {
        let tls = self.tls.as_mut().ok_or(ErrorKind::TlsProtocol)?;
        loop {
            if !bytes.is_empty() || eof {
                // Fails only on a record longer than TLS allows.
                tls.read_tls(&mut bytes)
                    .map_err(|_| ErrorKind::TlsProtocol)?;
            }
            tls.process_new_packets().map_err(|e| kind_of(&e))?;
            if let Some(since) = self.handshake_since {
                if tls.is_handshaking() {
                    if eof {
                        // Closed before the handshake was done.
                        return Err(ErrorKind::TlsProtocol);
                    }
                    if bytes.is_empty() {
                        return Ok(Fed::More);
                    }
                    continue;
                }
                self.handshake_since = None;
                self.finished = Some(finished(tls, now.saturating_sub(since)));
            }
            loop {
                let mut plain_read = 0;
                match self.inner.on_readable(
                    &mut Plaintext(tls),
                    eof,
                    plain,
                    plan,
                    now,
                    sink,
                    &mut plain_read,
                ) {
                    ReadOutcome::Open => break,
                    // Only its read budget ran out: what rustls holds is the
                    // protocol's still, and must go before more comes.
                    ReadOutcome::More => continue,
                    ReadOutcome::Eof => return Ok(Fed::Closed),
                    ReadOutcome::Failed(kind) => return Err(kind),
                }
            }
            if bytes.is_empty() {
                return Ok(Fed::More);
            }
        }
    }
}

impl<P> Tls<P> {
    fn clear(&mut self) {
        self.tls = None;
        self.handshake_since = None;
        self.finished = None;
    }
}

/// rustls's plaintext as the protocol reads it: a TCP end without TLS's
/// close_notify is the end of the stream, as most HTTP servers close that
/// way (the answers' framing catches a cut body, as on cleartext).
struct Plaintext<'a>(&'a mut ClientConnection);

impl Read for Plaintext<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.reader().read(buf) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        }
    }
}

/// For the fuzzer (`fuzz/fuzz_targets/tls_layer.rs`): a connection of this
/// layer over HTTP/1.1 sends its ClientHello, then reads `server` as the
/// peer's bytes, `piece` bytes a read (the end of the stream after them).
/// Returns how reading ended; it must end, never panic or loop. Not API.
#[doc(hidden)]
pub fn fuzz_feed(server: &[u8], piece: usize) -> Result<(), ErrorKind> {
    use crate::conn::Conn;
    use crate::tls_config::{TlsOptions, TlsPlan};

    struct Pieces<'a>(&'a [u8], usize);
    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1.max(1)).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    struct Nothing;
    impl AnswerSink for Nothing {
        fn answer(&mut self, _: &InFlight, _: Result<(), ErrorKind>, _: u64) {}
    }
    let options = TlsOptions {
        insecure: true,
        alpn: vec![b"http/1.1".to_vec()],
        ..TlsOptions::default()
    };
    let tls = TlsPlan::new(&options, "localhost").expect("a fixed, valid plan");
    let plan = ConnPlan {
        pipeline: 1,
        requests: &[],
        ws: None,
        tls: Some(&tls),
    };
    let mut conn = Tls::<Conn>::for_plan(&plan, 1);
    conn.on_connected(&plan, 0);
    let mut hello = Vec::new();
    conn.flush(&mut hello)?;
    let mut input = Pieces(server, piece);
    let mut scratch = vec![0u8; 8192];
    // Each call reads at least a byte or ends; the bound only guards the
    // fuzzer against a loop this function would have.
    for _ in 0..=server.len() + 1 {
        match conn.on_readable(
            &mut input,
            true,
            &mut scratch,
            &plan,
            0,
            &mut Nothing,
            &mut 0,
        ) {
            ReadOutcome::Failed(kind) => return Err(kind),
            ReadOutcome::Eof => return Ok(()),
            ReadOutcome::Open | ReadOutcome::More => {}
        }
    }
    panic!("reading {} bytes did not end", server.len());
}

/// What a handshake that took `ns` agreed.
fn finished(tls: &ClientConnection, ns: u64) -> Handshake {
    Handshake {
        ns,
        resumed: tls.handshake_kind() == Some(HandshakeKind::Resumed),
        version: tls
            .protocol_version()
            .and_then(|v| v.as_str())
            .unwrap_or("unknown"),
        cipher: tls
            .negotiated_cipher_suite()
            .and_then(|c| c.suite().as_str())
            .unwrap_or("unknown"),
        alpn: tls.alpn_protocol().map(alpn_name),
    }
}

/// An agreed ALPN protocol's name, from the ones netbench offers.
fn alpn_name(id: &[u8]) -> &'static str {
    match id {
        b"http/1.1" => "http/1.1",
        b"h2" => "h2",
        _ => "other",
    }
}

/// The counted kind of a TLS failure.
pub(crate) fn kind_of(e: &rustls::Error) -> ErrorKind {
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                ErrorKind::TlsName
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => ErrorKind::TlsExpired,
            _ => ErrorKind::TlsUntrusted,
        },
        rustls::Error::AlertReceived(_)
        | rustls::Error::PeerIncompatible(_)
        | rustls::Error::NoApplicationProtocol => ErrorKind::TlsAlert,
        _ => ErrorKind::TlsProtocol,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_or_an_early_end_is_a_protocol_error_in_any_pieces() {
        for piece in [1, 3, 5000] {
            let garbage = b"HTTP/1.1 400 Bad Request\r\n\r\n";
            assert_eq!(fuzz_feed(garbage, piece), Err(ErrorKind::TlsProtocol));
            assert_eq!(fuzz_feed(b"", piece), Err(ErrorKind::TlsProtocol));
        }
        // A fatal alert record (handshake_failure) is the server refusing.
        assert_eq!(
            fuzz_feed(&[21, 3, 3, 0, 2, 2, 40], 2),
            Err(ErrorKind::TlsAlert)
        );
    }

    #[test]
    fn certificate_failures_have_kinds_of_their_own() {
        let cert = |c| kind_of(&rustls::Error::InvalidCertificate(c));
        assert_eq!(
            cert(CertificateError::UnknownIssuer),
            ErrorKind::TlsUntrusted
        );
        assert_eq!(
            cert(CertificateError::BadSignature),
            ErrorKind::TlsUntrusted
        );
        assert_eq!(cert(CertificateError::NotValidForName), ErrorKind::TlsName);
        assert_eq!(cert(CertificateError::Expired), ErrorKind::TlsExpired);
        assert_eq!(cert(CertificateError::NotValidYet), ErrorKind::TlsExpired);
        assert_eq!(
            kind_of(&rustls::Error::AlertReceived(
                rustls::AlertDescription::HandshakeFailure
            )),
            ErrorKind::TlsAlert
        );
        assert_eq!(
            kind_of(&rustls::Error::InvalidMessage(
                rustls::InvalidMessage::InvalidContentType
            )),
            ErrorKind::TlsProtocol
        );
    }
}
