//! The one interface the worker drives a connection through, whatever its
//! protocol: HTTP/1.1 ([`Conn`]) or WebSocket ([`WsConn`](crate::ws::WsConn)),
//! either of them over TLS ([`Tls`](crate::tls::Tls)). The worker is
//! generic over it, and so is the idle loop, so the choice is made once per
//! run, never per event.
//! Implementations never create, configure or close a socket.

use std::io::{Read, Write};

use crate::conn::{AnswerSink, Conn, InFlight};
use crate::error_kind::ErrorKind;
pub(crate) use crate::plan::ConnPlan;
use crate::transport::ReadOutcome;

/// A TLS handshake that finished: how long it took from the connect, and
/// whether it resumed an earlier session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Handshake {
    pub ns: u64,
    pub resumed: bool,
    /// What was agreed, as rustls names it ("TLSv1_3",
    /// "TLS13_AES_128_GCM_SHA256", "http/1.1").
    pub version: &'static str,
    pub cipher: &'static str,
    pub alpn: Option<&'static str>,
}

pub(crate) trait Protocol {
    /// A connection's state machine for `plan`; `seed` varies whatever it
    /// draws at random (WebSocket keys, masks and payloads).
    fn for_plan(plan: &ConnPlan<'_>, seed: u64) -> Self;

    /// The socket just connected: queue what goes first (the WebSocket
    /// upgrade request). `now` starts the set-up's timeout.
    fn on_connected(&mut self, plan: &ConnPlan<'_>, now: u64);

    /// Past its set-up (the WebSocket handshake), so it may carry requests.
    fn set_up(&self) -> bool;

    fn in_flight(&self) -> usize;

    /// How many more requests may start on it now, of `limit` (the plan's
    /// pipeline depth, or streams per connection): HTTP/1.1 and WebSocket
    /// take a new batch only once every answer is in; HTTP/2 starts a
    /// stream whenever one ends.
    fn room(&self, limit: usize) -> usize {
        if self.in_flight() == 0 {
            limit
        } else {
            0
        }
    }

    /// When the oldest request still unanswered was sent, or the set-up
    /// under way started: timeouts and busy time count from here.
    fn oldest_sent(&self) -> Option<u64>;

    /// The server said it will close: send nothing more on this connection.
    fn closing(&self) -> bool;

    fn has_output(&self) -> bool;

    /// Queues the request `req` names; [`Protocol::flush`] writes it.
    fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>);

    /// Writes queued bytes until done or the socket is full; returns the
    /// bytes written.
    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind>;

    /// Reads what the socket has and hands every finished request to `sink`
    /// (see [`Conn::on_readable`] for the reading rules both follow).
    #[allow(clippy::too_many_arguments)]
    fn on_readable<R: Read, S: AnswerSink>(
        &mut self,
        io: &mut R,
        peer_closed: bool,
        scratch: &mut [u8],
        plan: &ConnPlan<'_>,
        now: u64,
        sink: &mut S,
        bytes_read: &mut u64,
    ) -> ReadOutcome;

    /// Fails every request in flight with `kind` and clears the connection
    /// for reuse on a new socket.
    fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S);

    /// Back to a fresh state, keeping buffer capacity. Nothing may be in flight.
    fn reset(&mut self);

    /// A TLS handshake that finished since the last call, once; never for
    /// a cleartext protocol.
    fn take_handshake(&mut self) -> Option<Handshake> {
        None
    }
}

impl Protocol for Conn {
    fn for_plan(plan: &ConnPlan<'_>, _seed: u64) -> Self {
        Conn::for_plan(plan)
    }

    fn on_connected(&mut self, _plan: &ConnPlan<'_>, _now: u64) {}

    fn set_up(&self) -> bool {
        true
    }

    fn in_flight(&self) -> usize {
        Conn::in_flight(self)
    }

    fn oldest_sent(&self) -> Option<u64> {
        Conn::oldest_sent(self)
    }

    fn closing(&self) -> bool {
        Conn::closing(self)
    }

    fn has_output(&self) -> bool {
        Conn::has_output(self)
    }

    fn enqueue(&mut self, req: InFlight, plan: &ConnPlan<'_>) {
        Conn::enqueue_planned(self, req, plan)
    }

    fn flush<W: Write>(&mut self, io: &mut W) -> Result<u64, ErrorKind> {
        Conn::flush(self, io)
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
        Conn::on_readable(self, io, peer_closed, scratch, plan, now, sink, bytes_read)
    }

    fn fail_all<S: AnswerSink>(&mut self, kind: ErrorKind, now: u64, sink: &mut S) {
        Conn::fail_all(self, kind, now, sink)
    }

    fn reset(&mut self) {
        Conn::reset(self)
    }
}
