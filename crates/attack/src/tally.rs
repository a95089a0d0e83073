//! What an attack counts while it runs (atomics every connection's thread
//! adds to) and the summary made of them at the end: the JSON object the
//! hostile scenarios read, and the one-line text.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::plan::AttackKind;

/// How a connection attempt or an exchange failed, counted per kind (a small
/// Copy enum, never a message: the hot path does not allocate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The connection could not be opened (refused, timed out, no file
    /// descriptor left).
    Connect,
    /// The server reset the connection.
    Reset,
    /// No answer within the answer timeout.
    Timeout,
    /// Anything else the system reported.
    Other,
}

impl Failure {
    /// Reset and broken-pipe errors are the server's doing; the rest is
    /// counted as other.
    pub fn of_io(err: &io::Error) -> Failure {
        match err.kind() {
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted => Failure::Reset,
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Failure::Timeout,
            _ => Failure::Other,
        }
    }
}

/// The live counters, shared by every connection of an attack.
#[derive(Debug, Default)]
pub struct Tally {
    opened: AtomicU64,
    closed_by_server: AtomicU64,
    requests: AtomicU64,
    answers: [AtomicU64; 4],
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    errors: [AtomicU64; 4],
}

impl Tally {
    pub fn opened(&self) {
        self.opened.fetch_add(1, Ordering::Relaxed);
    }

    pub fn closed_by_server(&self) {
        self.closed_by_server.fetch_add(1, Ordering::Relaxed);
    }

    pub fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer with this status code (0: not an HTTP status line).
    pub fn answer(&self, status: u16) {
        self.answers[status_class(status)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn sent(&self, n: usize) {
        self.bytes_sent.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn received(&self, n: usize) {
        self.bytes_received.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn failed(&self, f: Failure) {
        self.errors[f as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn summary(&self, kind: AttackKind, connections: usize, seconds: f64) -> AttackSummary {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        AttackSummary {
            kind: kind.name(),
            connections: connections as u64,
            connections_opened: get(&self.opened),
            closed_by_server: get(&self.closed_by_server),
            requests_sent: get(&self.requests),
            answers: Answers {
                ok: get(&self.answers[0]),
                client_error: get(&self.answers[1]),
                server_error: get(&self.answers[2]),
                other: get(&self.answers[3]),
            },
            bytes_sent: get(&self.bytes_sent),
            bytes_received: get(&self.bytes_received),
            errors: Errors {
                connect: get(&self.errors[Failure::Connect as usize]),
                reset: get(&self.errors[Failure::Reset as usize]),
                timeout: get(&self.errors[Failure::Timeout as usize]),
                other: get(&self.errors[Failure::Other as usize]),
            },
            seconds,
        }
    }
}

/// 2xx, 4xx, 5xx, or other (1xx, 3xx, and answers that are not HTTP).
fn status_class(status: u16) -> usize {
    match status {
        200..=299 => 0,
        400..=499 => 1,
        500..=599 => 2,
        _ => 3,
    }
}

/// The end of an attack, as printed with `--json` (docs/guide/attack.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttackSummary {
    pub kind: &'static str,
    /// The connections asked for (after the open-file limit's cap).
    pub connections: u64,
    /// Connections that were opened, reopened ones included.
    pub connections_opened: u64,
    /// Connections the server ended: a close, a reset, or an answer that
    /// said it would close.
    pub closed_by_server: u64,
    /// Requests written whole; slowloris counts request heads begun.
    pub requests_sent: u64,
    pub answers: Answers,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub errors: Errors,
    /// Wall-clock seconds from the start to the last connection closed.
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answers {
    #[serde(rename = "2xx")]
    pub ok: u64,
    #[serde(rename = "4xx")]
    pub client_error: u64,
    #[serde(rename = "5xx")]
    pub server_error: u64,
    pub other: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Errors {
    pub connect: u64,
    pub reset: u64,
    pub timeout: u64,
    pub other: u64,
}

impl fmt::Display for AttackSummary {
    /// One line: what the attack did and what came back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.answers;
        let e = &self.errors;
        write!(
            f,
            "{}: {} connections opened ({} asked), {} closed by the server, {} requests sent, \
             answers 2xx {} 4xx {} 5xx {} other {}, {} bytes sent, {} received, errors: \
             connect {} reset {} timeout {} other {}, {:.1} s",
            self.kind,
            self.connections_opened,
            self.connections,
            self.closed_by_server,
            self.requests_sent,
            a.ok,
            a.client_error,
            a.server_error,
            a.other,
            self.bytes_sent,
            self.bytes_received,
            e.connect,
            e.reset,
            e.timeout,
            e.other,
            self.seconds
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_has_the_shape_the_hostile_kind_reads() {
        let t = Tally::default();
        t.opened();
        t.answer(200);
        t.answer(404);
        t.answer(431);
        t.answer(503);
        t.answer(101);
        t.answer(0);
        t.failed(Failure::Reset);
        t.sent(10);
        let s = t.summary(AttackKind::Malformed, 4, 1.5);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["kind"], "malformed");
        assert_eq!(v["connections_opened"], 1);
        assert_eq!(v["answers"]["2xx"], 1);
        assert_eq!(v["answers"]["4xx"], 2);
        assert_eq!(v["answers"]["5xx"], 1);
        assert_eq!(v["answers"]["other"], 2);
        assert_eq!(v["errors"]["reset"], 1);
        assert_eq!(v["errors"]["connect"], 0);
        assert_eq!(v["bytes_sent"], 10);
        assert_eq!(v["seconds"], 1.5);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "kind",
                "connections",
                "connections_opened",
                "closed_by_server",
                "requests_sent",
                "answers",
                "bytes_sent",
                "bytes_received",
                "errors",
                "seconds"
            ]
        );
        let line = s.to_string();
        assert!(
            line.starts_with("malformed: 1 connections opened"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn io_errors_are_classed() {
        let e = |k| io::Error::from(k);
        assert_eq!(
            Failure::of_io(&e(io::ErrorKind::BrokenPipe)),
            Failure::Reset
        );
        assert_eq!(
            Failure::of_io(&e(io::ErrorKind::ConnectionReset)),
            Failure::Reset
        );
        assert_eq!(
            Failure::of_io(&e(io::ErrorKind::WouldBlock)),
            Failure::Timeout
        );
        assert_eq!(Failure::of_io(&e(io::ErrorKind::Other)), Failure::Other);
    }
}
