//! Monotonic nanoseconds since a run's start, small enough to keep per request.

use std::time::{Duration, Instant};

/// Converts `Instant`s to u64 nanoseconds from a fixed base, so in-flight
/// records stay small and arithmetic stays cheap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    base: Instant,
}

impl Clock {
    pub(crate) fn new(base: Instant) -> Self {
        Clock { base }
    }

    pub(crate) fn now(&self) -> u64 {
        self.since(Instant::now())
    }

    pub(crate) fn since(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }
}

pub(crate) fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}
