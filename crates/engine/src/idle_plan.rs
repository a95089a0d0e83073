//! The idle scenario's plan: the connection levels to reach and hold, and
//! what each connection sends. Plain data and its rules; `idle.rs` runs it.

use std::net::SocketAddr;
use std::time::Duration;

use crate::plan::{IoBackend, RequestTemplate, WsPlan};
use crate::tls_config::TlsPlan;
use crate::ws::MAX_MESSAGE;

/// An idle run, resolved.
#[derive(Debug, Clone)]
pub struct IdlePlan {
    pub addr: SocketAddr,
    /// Connection counts to reach, in ascending order: each level is opened,
    /// then held, before the next adds its connections.
    pub levels: Vec<usize>,
    /// How long each level is held open.
    pub hold: Duration,
    /// One request (or WebSocket message) per connection this often while
    /// held (keep-alive upkeep); `None` keeps them silent.
    pub heartbeat: Option<Duration>,
    /// A connect, a WebSocket upgrade or an answer that takes longer fails
    /// as a timeout.
    pub timeout: Duration,
    /// The HTTP request sent on each connection (keep-alive), with its check.
    /// Needed for HTTP; a WebSocket run sends messages instead and ignores it.
    pub request: Option<RequestTemplate>,
    /// WebSocket instead of HTTP: each connection upgrades (the `101`
    /// checked), then its first request and each heartbeat is one message
    /// whose echo is compared. `None` for HTTP.
    pub ws: Option<WsPlan>,
    /// TLS under either protocol (`https://`, `wss://`); `None` for
    /// cleartext.
    pub tls: Option<TlsPlan>,
    /// The kernel interface the loop uses; io_uring falls back to epoll
    /// where it is refused (the result says which ran, and why).
    pub io: IoBackend,
}

/// Why an idle plan cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdlePlanError {
    #[error("give at least one connection level, each at least 1, in ascending order")]
    Levels,
    #[error("the hold and the timeout must be above zero")]
    Zero,
    #[error("the heartbeat must be above zero")]
    Heartbeat,
    #[error("an HTTP idle run needs the request to send on each connection")]
    NoRequest,
    #[error("a WebSocket message is at most {MAX_MESSAGE} bytes")]
    WsMessageSize,
}

impl IdlePlan {
    pub fn validate(&self) -> Result<(), IdlePlanError> {
        if self.levels.is_empty()
            || self.levels[0] == 0
            || self.levels.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(IdlePlanError::Levels);
        }
        if self.hold.is_zero() || self.timeout.is_zero() {
            return Err(IdlePlanError::Zero);
        }
        if self.heartbeat.is_some_and(|h| h.is_zero()) {
            return Err(IdlePlanError::Heartbeat);
        }
        match &self.ws {
            None if self.request.is_none() => Err(IdlePlanError::NoRequest),
            Some(ws) if ws.message_size > MAX_MESSAGE => Err(IdlePlanError::WsMessageSize),
            _ => Ok(()),
        }
    }
}
