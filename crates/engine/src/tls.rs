//! TLS between the socket and a protocol: [`Tls`] wraps any [`Protocol`]
//! (HTTP/1.1 or WebSocket) and is one itself, so the worker and the idle loop
//! drive `https://` and `wss://` exactly as they drive cleartext. rustls's
//! connection state machine owns the records, the handshake and the keys;
//! this layer only moves bytes: ciphertext between the backend's reader or
//! writer and rustls, plaintext between rustls and the protocol. Like the
//! protocols it never creates, configures or closes a socket.
//!
//! It drives rustls's unbuffered API, not its buffered `ClientConnection`:
//! that one keeps a 4 KiB receive buffer per connection for as long as the
//! connection lives, which alone put an idle TLS connection above 8 KiB.
//! Here ciphertext is read into the first half of the worker's scratch
//! buffer (the shared read loop, one read for many records) and rustls
//! works on it there; a connection keeps only the piece of a record a read
//! cut off (`partial`) and its sealed output until the socket takes it
//! (`out`), and gives both back when they empty. The protocol reads its
//! plaintext into the second half.

use std::io::{self, Read, Write};

use rustls::client::UnbufferedClientConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, EncryptError};
use rustls::{CertificateError, HandshakeKind};

use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::ErrorKind;
use crate::proto::{ConnPlan, Handshake, Protocol};
use crate::transport::{read_turn_keeping, Fed, Outbox, ReadOutcome, Turn};

/// Plaintext sealed a record at a time: TLS's largest.
const RECORD: usize = 16 * 1024;
/// Sealed bytes waiting for the socket past which the protocol's output
/// waits too (backpressure, as on cleartext): a large body is sealed as
/// the socket takes it, not all at once.
const OUT_HIGH: usize = 4 * RECORD;
/// Buffers a connection keeps when they empty; larger ones (a large body's)
/// are given back, so an idle connection holds only its TLS state.
const KEEP: usize = 1024;

pub(crate) struct Tls<P> {
    inner: P,
    tls: Option<UnbufferedClientConnection>,
    /// The start of a record that the last read cut off.
    partial: Vec<u8>,
    /// Sealed records (handshake or data) the socket has not taken yet.
    out: Outbox,
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
            partial: Vec::new(),
            out: Outbox::default(),
            handshake_since: None,
            finished: None,
        }
    }

    fn on_connected(&mut self, plan: &ConnPlan<'_>, now: u64) {
        let tls = plan.tls.expect("a TLS connection needs a TLS plan");
        // Making the state fails only on a configuration rustls refuses,
        // which TlsPlan::new already checked; a failure shows at the first
        // flush as a TLS error of the connection, never as a panic. So does
        // a ClientHello rustls cannot make.
        self.tls = tls.connect().ok();
        self.partial.clear();
        self.out.clear();
        if let Some(conn) = self.tls.as_mut() {
            if advance(conn, &mut self.out).is_err() {
                self.tls = None;
            }
        }
        self.handshake_since = Some(now);
        self.finished = None;
        // The protocol's own output (a WebSocket upgrade) waits in the
        // protocol until the handshake is done.
        self.inner.on_connected(plan, now);
    }

    fn set_up(&self) -> bool {
        self.handshake_since.is_none() && self.tls.is_some() && self.inner.set_up()
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn room(&self, limit: usize) -> usize {
        self.inner.room(limit)
    }

    fn oldest_sent(&self) -> Option<u64> {
        self.inner.oldest_sent().or(self.handshake_since)
    }

    fn closing(&self) -> bool {
        self.inner.closing()
    }

    fn has_output(&self) -> bool {
        !self.out.is_empty() || (self.writable() && self.inner.has_output())
    }

    fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>) {
        self.inner.enqueue(req, plan);
    }

    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        let writable = self.writable();
        let Tls {
            inner, tls, out, ..
        } = self;
        let Some(conn) = tls.as_mut() else {
            return Err(ErrorKind::TlsProtocol);
        };
        let mut written = 0;
        loop {
            let sealed_before = out.pending().len();
            if writable && inner.has_output() && sealed_before < OUT_HIGH {
                // Into rustls, which seals it into `out`; the socket sees
                // only what follows.
                inner.flush(&mut Sealer { conn, out })?;
            }
            let sealed = out.pending().len() > sealed_before;
            written += out.flush(io)?;
            // Done when the socket is full, or nothing more was sealed.
            if !out.is_empty() || !sealed || !inner.has_output() {
                break;
            }
        }
        out.give_back_over(KEEP);
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
        // A record is at most ~16.6 KiB and the half at least 4 KiB larger
        // (the worker's is 32 KiB), so a cut-off record always fits.
        let mut kept = self.partial.len().min(cipher.len());
        cipher[..kept].copy_from_slice(&self.partial[..kept]);
        let turn = read_turn_keeping(io, peer_closed, cipher, &mut kept, bytes_read, |bytes| {
            self.take(bytes, plain, plan, now, sink)
        });
        self.partial.clear();
        if kept == 0 {
            if self.partial.capacity() > KEEP {
                self.partial = Vec::new();
            }
        } else {
            self.partial.extend_from_slice(&cipher[..kept]);
        }
        match turn {
            Turn::Done(outcome) => outcome,
            // The end: mid-handshake it is a failure, after it the protocol
            // reads its plaintext to the end (a TCP end without TLS's
            // close_notify is the end of the stream, as most HTTP servers
            // close that way; the answers' framing catches a cut body, as
            // on cleartext).
            Turn::Eof if self.handshake_since.is_some() => {
                ReadOutcome::Failed(ErrorKind::TlsProtocol)
            }
            Turn::Eof => match end_of_stream(&mut self.inner, plain, plan, now, sink) {
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
    /// Past the handshake: the protocol's bytes may be sealed.
    fn writable(&self) -> bool {
        self.handshake_since.is_none() && self.tls.is_some()
    }

    /// Has rustls work through `bytes` of ciphertext, handing the protocol
    /// its plaintext a record at a time. Returns how much of `bytes` rustls
    /// used (the rest is the start of a record still to come), and `Closed`
    /// once the protocol saw the end of its stream.
    fn take<S: AnswerSink>(
        &mut self,
        bytes: &mut [u8],
        plain: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
    ) -> Result<(Fed, usize), ErrorKind> {
        let Tls {
            inner,
            tls,
            out,
            handshake_since,
            finished,
            ..
        } = self;
        let conn = tls.as_mut().ok_or(ErrorKind::TlsProtocol)?;
        let mut used = 0;
        loop {
            let status = conn.process_tls_records(&mut bytes[used..]);
            let mut discard = status.discard;
            let step = match status.state.map_err(|e| kind_of(&e))? {
                ConnectionState::EncodeTlsData(mut data) => {
                    seal(out.queue(), 512, |b| data.encode(b).map_err(needed_encode))?;
                    Step::Again
                }
                // `out` holds it until the socket takes it, in order.
                ConnectionState::TransmitTlsData(sent) => {
                    sent.done();
                    Step::Again
                }
                ConnectionState::ReadTraffic(mut records) => {
                    let mut fed = Fed::More;
                    while let Some(record) = records.next_record() {
                        let record = record.map_err(|e| kind_of(&e))?;
                        discard += record.discard;
                        if fed == Fed::More && !record.payload.is_empty() {
                            fed = hand_over(inner, record.payload, plain, plan, now, sink)?;
                        }
                    }
                    match fed {
                        Fed::More => Step::Again,
                        Fed::Closed => Step::Closed,
                    }
                }
                // Nothing whole is left: the rest needs more bytes.
                ConnectionState::BlockedHandshake | ConnectionState::WriteTraffic(_) => {
                    Step::NeedMore
                }
                // The server's close_notify: the end of its stream.
                ConnectionState::PeerClosed | ConnectionState::Closed => Step::Ended,
                // Early data is a server's to read.
                _ => return Err(ErrorKind::TlsProtocol),
            };
            used += discard;
            if let Some(since) = *handshake_since {
                if !conn.is_handshaking() {
                    // HTTP/2 over TLS only once ALPN agreed h2 (RFC 9113
                    // §3.2): a server that agreed none speaks something
                    // else, and refusing it is the alert's case (issue 42:
                    // it was counted as h2_protocol).
                    if !plan.h2.is_empty() && conn.alpn_protocol() != Some(b"h2") {
                        return Err(ErrorKind::TlsAlert);
                    }
                    *handshake_since = None;
                    *finished = Some(agreed(conn, now.saturating_sub(since)));
                }
            }
            match step {
                Step::Again => {}
                Step::NeedMore => return Ok((Fed::More, used)),
                Step::Closed => return Ok((Fed::Closed, used)),
                Step::Ended => {
                    end_of_stream(inner, plain, plan, now, sink)?;
                    return Ok((Fed::Closed, used));
                }
            }
        }
    }
}

impl<P> Tls<P> {
    fn clear(&mut self) {
        self.tls = None;
        self.partial = Vec::new();
        self.out.clear();
        self.out.give_back_over(KEEP);
        self.handshake_since = None;
        self.finished = None;
    }
}

/// What to do after a state of rustls's.
enum Step {
    /// Ask rustls again.
    Again,
    /// Read more ciphertext first.
    NeedMore,
    /// The protocol ended its conversation.
    Closed,
    /// The server ended the TLS stream.
    Ended,
}

/// Runs rustls until it needs bytes from the peer or has nothing to send,
/// sealing what it has for the peer (the ClientHello) into `out`.
fn advance(conn: &mut UnbufferedClientConnection, out: &mut Outbox) -> Result<(), ErrorKind> {
    loop {
        match conn.process_tls_records(&mut []).state {
            Ok(ConnectionState::EncodeTlsData(mut data)) => {
                seal(out.queue(), 512, |b| data.encode(b).map_err(needed_encode))?;
            }
            Ok(ConnectionState::TransmitTlsData(sent)) => sent.done(),
            Ok(_) => return Ok(()),
            Err(e) => return Err(kind_of(&e)),
        }
    }
}

/// Hands one record's plaintext to the protocol, which reads it as it
/// reads a socket.
fn hand_over<P: Protocol, S: AnswerSink>(
    inner: &mut P,
    payload: &[u8],
    plain: &mut [u8],
    plan: &ConnPlan<'_>,
    now: u64,
    sink: &mut S,
) -> Result<Fed, ErrorKind> {
    let mut record = Record(payload);
    while !record.0.is_empty() {
        match inner.on_readable(&mut record, false, plain, plan, now, sink, &mut 0) {
            // All of it read (a record is smaller than `plain`).
            ReadOutcome::Open | ReadOutcome::More => {}
            ReadOutcome::Eof => return Ok(Fed::Closed),
            ReadOutcome::Failed(kind) => return Err(kind),
        }
    }
    Ok(Fed::More)
}

/// A record's plaintext as the protocol reads it: once read, there is
/// nothing more for now (not the end of the stream).
struct Record<'a>(&'a [u8]);

impl Read for Record<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.0.read(buf)
    }
}

/// The protocol reads the end of its stream.
fn end_of_stream<P: Protocol, S: AnswerSink>(
    inner: &mut P,
    plain: &mut [u8],
    plan: &ConnPlan<'_>,
    now: u64,
    sink: &mut S,
) -> Result<(), ErrorKind> {
    match inner.on_readable(&mut io::empty(), true, plain, plan, now, sink, &mut 0) {
        ReadOutcome::Failed(kind) => Err(kind),
        _ => Ok(()),
    }
}

/// The protocol's plaintext, sealed into records as it writes: at most a
/// record a call, and none while `OUT_HIGH` bytes wait for the socket.
struct Sealer<'a> {
    conn: &'a mut UnbufferedClientConnection,
    out: &'a mut Outbox,
}

impl Write for Sealer<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.out.pending().len() >= OUT_HIGH {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let data = &data[..data.len().min(RECORD)];
        let failed = |_| io::Error::from(io::ErrorKind::BrokenPipe);
        loop {
            match self.conn.process_tls_records(&mut []).state {
                Ok(ConnectionState::WriteTraffic(mut traffic)) => {
                    // A record's header, tag and content type: 22 bytes.
                    seal(self.out.queue(), data.len() + 64, |b| {
                        traffic.encrypt(data, b).map_err(needed_encrypt)
                    })
                    .map_err(failed)?;
                    return Ok(data.len());
                }
                // A key update rustls wants sent first.
                Ok(ConnectionState::EncodeTlsData(mut hs)) => {
                    seal(self.out.queue(), 512, |b| {
                        hs.encode(b).map_err(needed_encode)
                    })
                    .map_err(failed)?;
                }
                Ok(ConnectionState::TransmitTlsData(sent)) => sent.done(),
                Ok(ConnectionState::BlockedHandshake) => {
                    return Err(io::ErrorKind::WouldBlock.into())
                }
                _ => return Err(io::ErrorKind::BrokenPipe.into()),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Appends what `fill` writes to `buf`, starting with `room` bytes of room
/// and growing to what rustls says it needs (`Err(Some(size))`).
fn seal(
    buf: &mut Vec<u8>,
    mut room: usize,
    mut fill: impl FnMut(&mut [u8]) -> Result<usize, Option<usize>>,
) -> Result<(), ErrorKind> {
    let start = buf.len();
    loop {
        buf.resize(start + room, 0);
        match fill(&mut buf[start..]) {
            Ok(n) => {
                buf.truncate(start + n);
                return Ok(());
            }
            Err(Some(needed)) if needed > room => room = needed,
            Err(_) => {
                buf.truncate(start);
                return Err(ErrorKind::TlsProtocol);
            }
        }
    }
}

fn needed_encode(e: EncodeError) -> Option<usize> {
    match e {
        EncodeError::InsufficientSize(s) => Some(s.required_size),
        _ => None,
    }
}

fn needed_encrypt(e: EncryptError) -> Option<usize> {
    match e {
        EncryptError::InsufficientSize(s) => Some(s.required_size),
        _ => None,
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
        session: None,
        h2: &[],
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
fn agreed(tls: &UnbufferedClientConnection, ns: u64) -> Handshake {
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
