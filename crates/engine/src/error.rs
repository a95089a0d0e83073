//! Errors: the per-request kinds counted on the hot path, and the few that stop
//! a run before it starts.

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
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::ContentType,
        ErrorKind::Body,
        ErrorKind::Malformed,
        ErrorKind::ClosedEarly,
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
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A count per error kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts([u64; 9]);

impl ErrorCounts {
    pub(crate) fn add(&mut self, kind: ErrorKind) {
        self.0[kind.index()] += 1;
    }

    pub(crate) fn merge(&mut self, other: &ErrorCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
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

/// Why a run could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "{needed} open files are needed for {connections} connections but the hard limit is \
         {hard}; raise it (as root: `ulimit -Hn {needed}`, or LimitNOFILE= for a service) \
         or use fewer connections"
    )]
    TooFewFiles {
        connections: usize,
        needed: u64,
        hard: u64,
    },
    #[error("could not set up the event loop: {0}; check the limits on epoll instances and file descriptors")]
    EventLoop(#[source] std::io::Error),
    #[error("the plan is not runnable: {0}")]
    Plan(#[from] crate::plan::PlanError),
    #[error("the idle plan is not runnable: {0}")]
    IdlePlan(crate::idle::IdlePlanError),
    #[error("the RunControl was made for another plan (another worker count); make one with RunControl::new(&plan)")]
    ForeignControl,
    #[error("a worker thread panicked; this is a bug in netbench, please report it")]
    WorkerPanicked,
    #[error("a worker thread could not be started: {0}")]
    Spawn(#[source] std::io::Error),
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
    fn names_are_unique() {
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
