//! The resolved, typed description of one load run: everything the engine
//! needs, nothing it still has to look up or validate.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::check::Expect;
use crate::h2::{h2_requests, H2Request, H2RequestError};
use crate::tls_config::TlsPlan;
use crate::ws::MAX_MESSAGE;

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
    /// Answers after which the client closes a connection and opens a new
    /// one (short-lived connections, K = 10 in the leading suite's profile);
    /// `None` keeps it for as long as the server does. Keep-alive off is
    /// `keepalive: false`, which sends `Connection: close` as ab does.
    pub requests_per_connection: Option<u32>,
    /// Whether a connection that ended (closed, failed or refused) is opened
    /// again. False for a connection storm: each client connects once and
    /// sends one request, and a refused client stays refused.
    pub reconnect: bool,
    /// The requests, sent round-robin; never empty for HTTP. Each carries
    /// its own expected answer so a server cannot answer from a cache. A
    /// WebSocket plan sends messages instead and leaves this empty.
    pub requests: Vec<RequestTemplate>,
    /// WebSocket instead of HTTP requests: each connection upgrades once,
    /// then each request is one message whose echo is checked. `None` for
    /// HTTP.
    pub ws: Option<WsPlan>,
    /// Source addresses, given round-robin to the connections (each one's
    /// own ephemeral ports); empty lets the kernel choose.
    pub sources: Vec<IpAddr>,
    /// The kernel interface the workers use; io_uring falls back to epoll
    /// where it is refused (the result says which ran, and why).
    pub io: IoBackend,
    /// TLS under the protocol (`https://`, `wss://`); `None` for cleartext.
    pub tls: Option<TlsPlan>,
    /// The contract's `app`: each connection keeps a session (its cookie
    /// sent with every page, each page checked against the one before) and
    /// ends it with a logout; `requests` are its pages. `None` otherwise.
    pub session: Option<SessionPlan>,
    /// HTTP/2 instead of HTTP/1.1 (RFC 9113): h2c with prior knowledge on
    /// cleartext, h2 by ALPN under `tls` (whose ALPN then offers `h2`).
    /// Each request is a stream, and `pipeline` is the streams a connection
    /// keeps in flight (h2load's `-m`), each replaced as soon as it ends;
    /// the requests are sent in HTTP/2 form (`h2::request`).
    pub h2: bool,
}

/// How connections of a run with sessions (the contract's `app`) behave as
/// browsers: a page's request goes out with the session's cookie added, and
/// after `pages` pages the session ends with `logout`, so the next page
/// makes a new one.
#[derive(Debug, Clone)]
pub struct SessionPlan {
    /// Pages on one session before its logout; at least 1.
    pub pages: u32,
    /// The logout request (`POST /app/logout`), its cookie added per
    /// connection as the pages' is.
    pub logout: RequestTemplate,
}

/// The part of a run's plan a connection's state machine reads: what it
/// sends and how answers are checked. Borrowed once per run, from a
/// [`LoadPlan`] by the worker or from an [`IdlePlan`](crate::IdlePlan) by the
/// idle loop, so neither loop has to make up the other's plan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnPlan<'a> {
    /// Requests written back to back before reading (HTTP).
    pub pipeline: usize,
    /// The request templates `InFlight::template` indexes; empty for
    /// WebSocket.
    pub requests: &'a [RequestTemplate],
    /// Set for WebSocket, which the worker or the idle loop chose once.
    pub ws: Option<&'a WsPlan>,
    /// Set for TLS (`https://`, `wss://`): what [`crate::tls::Tls`]
    /// connects with.
    pub tls: Option<&'a TlsPlan>,
    /// Set for a run whose connections keep sessions.
    pub session: Option<&'a SessionPlan>,
    /// `requests` in HTTP/2 form, index for index; empty unless the run
    /// speaks HTTP/2 (made once per run by `run`).
    pub h2: &'a [H2Request],
}

impl<'a> ConnPlan<'a> {
    pub(crate) fn of(plan: &'a LoadPlan, h2: &'a [H2Request]) -> Self {
        ConnPlan {
            pipeline: plan.pipeline,
            requests: &plan.requests,
            ws: plan.ws.as_ref(),
            tls: plan.tls.as_ref(),
            session: plan.session.as_ref(),
            h2,
        }
    }

    /// The template a request in flight names: one of `requests`, or the
    /// session's logout.
    pub(crate) fn template(&self, index: u32) -> &'a RequestTemplate {
        match self.session {
            Some(s) if index == crate::session::LOGOUT => &s.logout,
            _ => &self.requests[index as usize],
        }
    }
}

/// Which kernel interface a run's workers use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum IoBackend {
    /// Readiness: epoll_wait, then read and write system calls per socket.
    #[default]
    Epoll,
    /// Completions: multishot receives into a provided buffer ring, sends
    /// and connects submitted in batches, registered files.
    Uring,
}

impl IoBackend {
    /// What `auto` runs (`netbench load --io auto`, and a suite that pins
    /// none): the backend that cost less client CPU per request in `make
    /// bench` on this kind of machine (docs/results/2026-11-24-client-cost.md
    /// and 2026-11-27-https-clients.md). Where the kernel refuses io_uring a
    /// run falls back to epoll and says why.
    pub const CHEAPEST: IoBackend = IoBackend::Uring;

    pub fn name(self) -> &'static str {
        match self {
            IoBackend::Epoll => "epoll",
            IoBackend::Uring => "io_uring",
        }
    }
}

/// A WebSocket run (RFC 6455): after the upgrade every "request" is one
/// message of `message_size` bytes with a fresh random payload, sent masked,
/// and its answer is the server's echo, compared byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WsPlan {
    /// Path and query of the upgrade request (`/ws`).
    pub path: String,
    /// The upgrade request's Host header.
    pub host: String,
    /// Payload bytes of each message, at most [`MAX_MESSAGE`].
    pub message_size: usize,
    /// Binary messages of random bytes; otherwise text messages of random
    /// ASCII letters (text must be valid UTF-8).
    pub binary: bool,
}

/// Why a plan cannot run. The rules live here alone: the command line builds
/// a plan and asks it, and [`run`](crate::run) asks again before starting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("at least one connection is needed")]
    NoConnections,
    #[error("workers must be between 1 and the number of connections")]
    Workers,
    #[error("at least one request is needed")]
    NoRequests,
    #[error("at most 2^32 distinct requests fit a plan")]
    TooManyRequests,
    #[error("the pipeline depth must be at least 1")]
    NoPipeline,
    #[error("pipelining needs keep-alive")]
    PipelineWithoutKeepalive,
    #[error("pipelining works with the closed loop only")]
    PipelineOpenLoop,
    #[error("the rate must be a positive number of requests per second")]
    Rate,
    #[error("the timeout must be above zero")]
    Timeout,
    #[error("the duration must be above zero")]
    Duration,
    #[error("requests per connection must be at least 1")]
    RequestsPerConnection,
    #[error("a WebSocket message is at most {MAX_MESSAGE} bytes")]
    WsMessageSize,
    #[error("WebSocket messages are sent one at a time on a connection (no pipelining)")]
    WsPipeline,
    #[error("a WebSocket connection stays open (keep-alive)")]
    WsKeepalive,
    #[error("a source address is not of the target's family (IPv4 or IPv6)")]
    SourceFamily,
    #[error(
        "a session's pages are sent one at a time on a connection (no pipelining), with keep-alive"
    )]
    SessionPipeline,
    #[error("a session's requests have no body (its cookie goes at the end of the head) and it has at least one page before its logout")]
    SessionRequests,
    #[error("sessions are HTTP's, not WebSocket's")]
    SessionWs,
    #[error("HTTP/2 carries HTTP requests with keep-alive, without WebSocket or sessions")]
    H2Mode,
    #[error("a request cannot go as HTTP/2: {0}")]
    H2Request(H2RequestError),
}

impl LoadPlan {
    /// Checks every rule a runnable plan keeps.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.connections == 0 {
            return Err(PlanError::NoConnections);
        }
        if self.workers == 0 || self.workers > self.connections {
            return Err(PlanError::Workers);
        }
        if self.requests.is_empty() && self.ws.is_none() {
            return Err(PlanError::NoRequests);
        }
        if let Some(ws) = &self.ws {
            if ws.message_size > MAX_MESSAGE {
                return Err(PlanError::WsMessageSize);
            }
            if self.pipeline > 1 {
                return Err(PlanError::WsPipeline);
            }
            if !self.keepalive {
                return Err(PlanError::WsKeepalive);
            }
        }
        if self.h2 {
            if self.ws.is_some() || self.session.is_some() || !self.keepalive {
                return Err(PlanError::H2Mode);
            }
            h2_requests(&self.requests, self.scheme()).map_err(PlanError::H2Request)?;
        }
        if let Some(session) = &self.session {
            if self.ws.is_some() {
                return Err(PlanError::SessionWs);
            }
            if self.pipeline > 1 || !self.keepalive {
                return Err(PlanError::SessionPipeline);
            }
            let bodiless = |t: &RequestTemplate| t.bytes.ends_with(b"\r\n\r\n");
            if session.pages == 0
                || !bodiless(&session.logout)
                || !self.requests.iter().all(bodiless)
            {
                return Err(PlanError::SessionRequests);
            }
        }
        if self
            .sources
            .iter()
            .any(|s| s.is_ipv4() != self.addr.is_ipv4())
        {
            return Err(PlanError::SourceFamily);
        }
        if self.requests.len() > u32::MAX as usize {
            return Err(PlanError::TooManyRequests);
        }
        if self.pipeline == 0 {
            return Err(PlanError::NoPipeline);
        }
        if self.pipeline > 1 && !self.keepalive {
            return Err(PlanError::PipelineWithoutKeepalive);
        }
        if let Pacing::Open { per_second } = self.pacing {
            // HTTP/2's streams are no pipeline: each request is sent when it
            // is due, on any connection with a stream free.
            if self.pipeline > 1 && !self.h2 {
                return Err(PlanError::PipelineOpenLoop);
            }
            if !(per_second.is_finite() && per_second > 0.0 && per_second <= 1e9) {
                return Err(PlanError::Rate);
            }
        }
        if self.requests_per_connection == Some(0) {
            return Err(PlanError::RequestsPerConnection);
        }
        if self.timeout.is_zero() {
            return Err(PlanError::Timeout);
        }
        if self.stop == Stop::After(Duration::ZERO) {
            return Err(PlanError::Duration);
        }
        Ok(())
    }
}

impl LoadPlan {
    /// Requests each connection keeps in flight at once by design: HTTP/2's
    /// streams, else one (HTTP/1.1's pipeline sends a batch and waits for
    /// all of it, so it is not kept full).
    pub fn streams_per_connection(&self) -> usize {
        if self.h2 {
            self.pipeline.max(1)
        } else {
            1
        }
    }

    /// The URL scheme the requests carry (`:scheme` in HTTP/2).
    pub(crate) fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }
}

/// When the measured part of a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Stop {
    /// After this much time; requests still in flight then are abandoned.
    After(Duration),
    /// After exactly this many attempts (answers plus failures), spread over
    /// the connections.
    Count(u64),
}

/// When requests are sent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
