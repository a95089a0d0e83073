//! The resolved, typed description of one load run: everything the engine
//! needs, nothing it still has to look up or validate.

use std::net::SocketAddr;
use std::time::Duration;

use crate::check::Expect;

/// One load run, already resolved: the address is a socket address, the
/// request bytes are built, every number is in range (the CLI checks that).
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Where to connect; a host name was resolved once, before the run.
    pub addr: SocketAddr,
    /// Total connections, split as evenly as possible over the workers.
    pub connections: usize,
    /// Worker threads, each with its own event loop; at most `connections`.
    pub workers: usize,
    /// When the measured part of the run ends.
    pub stop: Stop,
    /// When requests are sent.
    pub pacing: Pacing,
    /// A warm-up before measuring; its numbers are dropped.
    pub warmup: Duration,
    /// A request (or a connect) that takes longer than this fails as a timeout.
    pub timeout: Duration,
    /// HTTP/1.1 keep-alive; when false every request gets its own connection.
    pub keepalive: bool,
    /// Requests written back to back on one connection before reading.
    pub pipeline: usize,
    /// The requests, sent round-robin; never empty. Each carries its own
    /// expected answer so a server cannot answer from a cache.
    pub requests: Vec<RequestTemplate>,
}

/// When the measured part of a run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this much time; requests still in flight then are abandoned.
    After(Duration),
    /// After exactly this many attempts (answers plus failures), spread over
    /// the connections.
    Count(u64),
}

/// When requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Closed loop: each connection sends its next request as soon as the
    /// previous answer is in.
    Closed,
    /// Open loop at a constant total rate; latency counts from each request's
    /// intended send time, so a slow server cannot hide its queueing delay
    /// (no coordinated omission).
    Open { per_second: f64 },
}

/// One request, prepared before the run, with the answer it must get.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// The full request as written to the socket.
    pub bytes: Vec<u8>,
    /// A HEAD request's answer has no body whatever its headers say.
    pub is_head: bool,
    pub expect: Expect,
}
