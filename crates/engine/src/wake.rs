//! How many completions the io_uring backend lets gather before its worker
//! wakes, sized from the load so the delay it adds stays a small, bounded
//! share of the requests' own latency.
//!
//! Why: when the server is the bottleneck, a client that wakes for every
//! answer pays a cross-CPU wake-up per request, and so does the server that
//! wakes it (on a VM an interrupt through the hypervisor). h2load escapes
//! that by being busy; netbench, being cheaper, slept between answers and
//! cost 1.15x h2load's CPU per request at 100 streams over TLS. Waking once
//! per few completions halves that (docs/results/2026-11-28-h2-clients.md).
//! DEFER_TASKRUN makes the kernel wake the task only when that many are
//! queued, so the saving is real wake-ups, not fewer calls that still sleep.

use std::time::Duration;

/// A batch may add at most this share of the mean latency: with `n`
/// requests in flight the batch is at most `n / LATENCY_SHARE` completions,
/// and its cap at most the mean latency over `LATENCY_SHARE`.
pub(crate) const LATENCY_SHARE: u64 = 32;
/// Beyond this the wake-ups saved no longer show in the client's CPU
/// (4, 8 and 16 measured the same at 10,000 streams in flight).
pub(crate) const MAX_COUNT: u64 = 8;
/// The longest a completion ever waits for the rest of its batch.
pub(crate) const MAX_CAP: Duration = Duration::from_micros(50);
/// A cap shorter than this saves nothing: the wait would end before a
/// second completion could arrive.
pub(crate) const MIN_CAP: Duration = Duration::from_micros(2);

/// What one wait asks of the kernel: wake when `count` completions are
/// queued, or `cap` after the wait began if at least one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WakeBatch {
    pub count: u32,
    pub cap: Duration,
}

impl WakeBatch {
    /// Wake for every completion: light loads, latency runs, the start.
    pub(crate) const EACH: WakeBatch = WakeBatch {
        count: 1,
        cap: Duration::ZERO,
    };

    /// The batch for a worker with `in_flight` requests outstanding that saw
    /// `answers` end (answered or failed) over the last `over_ns`.
    pub(crate) fn for_load(in_flight: u64, answers: u64, over_ns: u64) -> WakeBatch {
        let count = (in_flight / LATENCY_SHARE).min(MAX_COUNT);
        if count < 2 {
            return WakeBatch::EACH;
        }
        // Little's law: the mean time a request spends in flight. With no
        // answer in the window the server is stalled, and the cap is the
        // longest.
        let mean_ns = if answers == 0 {
            u128::MAX
        } else {
            u128::from(in_flight) * u128::from(over_ns) / u128::from(answers)
        };
        let cap_ns = (mean_ns / u128::from(LATENCY_SHARE)).min(MAX_CAP.as_nanos());
        let cap = Duration::from_nanos(cap_ns as u64);
        if cap < MIN_CAP {
            return WakeBatch::EACH;
        }
        WakeBatch {
            count: count as u32,
            cap,
        }
    }

    pub(crate) fn batches(self) -> bool {
        self.count > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn few_requests_in_flight_wake_for_each_completion() {
        assert_eq!(WakeBatch::for_load(0, 0, 50 * MS), WakeBatch::EACH);
        assert_eq!(WakeBatch::for_load(1, 1000, 50 * MS), WakeBatch::EACH);
        // 100 connections of HTTP/1.1: 3 a batch at most.
        assert_eq!(WakeBatch::for_load(63, 5000, 50 * MS), WakeBatch::EACH);
        assert_eq!(WakeBatch::for_load(100, 5000, 50 * MS).count, 3);
    }

    #[test]
    fn the_batch_grows_with_what_is_in_flight_up_to_its_most() {
        let b = WakeBatch::for_load(10_000, 6000, 50 * MS);
        assert_eq!(b.count, MAX_COUNT as u32);
        // 83 ms of mean latency: the cap is the longest.
        assert_eq!(b.cap, MAX_CAP);
    }

    #[test]
    fn the_cap_is_a_share_of_the_mean_latency() {
        // 640 in flight, 50,000 answers in 50 ms: 640 us of mean latency.
        let b = WakeBatch::for_load(640, 50_000, 50 * MS);
        assert_eq!(b.count, 8);
        assert_eq!(b.cap, Duration::from_micros(20));
        // A server answering 64 requests in flight in 53 us on average: a
        // cap of 1.7 us would save nothing, so no batch.
        assert_eq!(WakeBatch::for_load(64, 60_000, 50 * MS), WakeBatch::EACH);
        let b = WakeBatch::for_load(64, 50_000, 50 * MS);
        assert_eq!((b.count, b.cap), (2, MIN_CAP));
    }

    #[test]
    fn a_stalled_server_gets_the_longest_cap_and_no_overflow() {
        let b = WakeBatch::for_load(u64::MAX, 0, u64::MAX);
        assert_eq!(
            b,
            WakeBatch {
                count: 8,
                cap: MAX_CAP
            }
        );
        let b = WakeBatch::for_load(u64::MAX, 1, u64::MAX);
        assert_eq!(b.cap, MAX_CAP);
    }
}
