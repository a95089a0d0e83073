//! What one worker records while it runs: answers, errors and latencies of the
//! measured phase only. Owned by the worker, merged once at the end.

use crate::conn::{AnswerSink, InFlight};
use crate::error_kind::{ErrorCounts, ErrorKind};
use crate::histogram::LatencyHistogram;
use crate::proto::Handshake;

#[derive(Debug)]
pub(crate) struct WorkerStats {
    /// Answers that passed every check.
    pub ok: u64,
    /// Good answers to warm-up requests: not measured, only published, so
    /// that a caller can follow the warm-up (netbench run's steady state).
    pub warm_ok: u64,
    pub errors: ErrorCounts,
    /// From intended send time to the last byte of a good answer.
    pub latency: LatencyHistogram,
    /// From `connect()` to the connection being usable.
    pub connect: LatencyHistogram,
    pub bytes_read: u64,
    /// Bytes read while the window was open (measuring, or draining the
    /// last measured answers): the answers of warm-up left out.
    pub measured_bytes_read: u64,
    pub bytes_written: u64,
    /// Measured requests sent and not yet answered or failed; a run with an
    /// exact count is over when this reaches zero after the last send.
    pub measured_inflight: u64,
    /// When the last measured request ended (answer or failure).
    pub last_answer_ns: u64,
    /// Connection-time spent busy during the measured phase (a request in
    /// flight or a connect under way), summed over connections: Little's law
    /// over every attempt, failures included, so a server that makes
    /// requests time out does not look like a client that left connections
    /// idle.
    pub conn_busy_len_ns: u64,
    /// Connections made during the measured phase.
    pub connects: u64,
    /// Connects of the measured phase that timed out (a subset of the
    /// `connect` errors: the rest were refused or failed at once).
    pub connect_timeouts: u64,
    /// Connection slots that got a good answer while measuring.
    pub connections_answered: u64,
    /// TLS handshakes finished while measuring: from the connect to the
    /// handshake's end, apart from request latency.
    pub tls_handshake: LatencyHistogram,
    pub tls_resumed: u64,
    /// The first handshake seen (measured or not): what was agreed.
    pub tls_first: Option<Handshake>,
    /// Measured requests still in flight when the window ended, and how
    /// long the oldest request then in flight had waited.
    pub unfinished: u64,
    pub unfinished_oldest_ns: u64,
}

impl WorkerStats {
    pub(crate) fn new() -> Self {
        WorkerStats {
            ok: 0,
            warm_ok: 0,
            errors: ErrorCounts::default(),
            latency: LatencyHistogram::new(),
            connect: LatencyHistogram::new(),
            bytes_read: 0,
            measured_bytes_read: 0,
            bytes_written: 0,
            measured_inflight: 0,
            last_answer_ns: 0,
            conn_busy_len_ns: 0,
            connects: 0,
            connect_timeouts: 0,
            connections_answered: 0,
            tls_handshake: LatencyHistogram::new(),
            tls_resumed: 0,
            tls_first: None,
            unfinished: 0,
            unfinished_oldest_ns: 0,
        }
    }
}

/// Hands answers to the stats together with when measuring started (`None`
/// during warm-up), so warm-up requests still in flight then count as busy
/// connection-time from that moment on.
pub(crate) struct Recorder<'a> {
    pub stats: &'a mut WorkerStats,
    pub measuring_since: Option<u64>,
}

impl AnswerSink for Recorder<'_> {
    fn answer(&mut self, req: &InFlight, outcome: Result<(), ErrorKind>, now: u64) {
        let stats = &mut *self.stats;
        if !req.measured {
            if let Some(start) = self.measuring_since {
                stats.conn_busy_len_ns += now.saturating_sub(req.sent_ns.max(start));
            }
            if outcome.is_ok() {
                stats.warm_ok += 1;
            }
            return;
        }
        stats.answered(req, outcome, now);
    }
}

impl WorkerStats {
    /// A TLS handshake finished; counted when `measured`.
    pub(crate) fn handshake(&mut self, h: Handshake, measured: bool) {
        if self.tls_first.is_none() {
            self.tls_first = Some(h);
        }
        if measured {
            self.tls_handshake.record(h.ns);
            self.tls_resumed += u64::from(h.resumed);
        }
    }

    fn answered(&mut self, req: &InFlight, outcome: Result<(), ErrorKind>, now: u64) {
        self.conn_busy_len_ns += now.saturating_sub(req.sent_ns);
        self.measured_inflight -= 1;
        self.last_answer_ns = now;
        match outcome {
            Ok(()) => {
                self.ok += 1;
                self.latency.record(now.saturating_sub(req.intended_ns));
            }
            Err(kind) => self.errors.add(kind),
        }
    }
}
