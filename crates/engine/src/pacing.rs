//! When the next request may be sent: the one strategy the worker loop asks,
//! whatever the load model.

/// A worker's pacing. Closed loop sends whenever a connection is free; open
/// loop follows a fixed schedule of intended send times.
#[derive(Debug, Clone)]
pub(crate) enum Pacer {
    Closed,
    Open {
        /// Intended time of the first request, ns from the run's start.
        first_ns: u64,
        interval_ns: f64,
        /// How many scheduled requests were handed out.
        sent: u64,
    },
}

impl Pacer {
    pub(crate) fn open(per_second: f64, first_ns: u64) -> Self {
        Pacer::Open {
            first_ns,
            interval_ns: 1e9 / per_second,
            sent: 0,
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        matches!(self, Pacer::Open { .. })
    }

    /// The intended send time of the next request if it is due at `now`.
    /// Closed loop: always due, intended now.
    pub(crate) fn due(&self, now: u64) -> Option<u64> {
        match *self {
            Pacer::Closed => Some(now),
            Pacer::Open { .. } => {
                let at = self.next_at();
                (at <= now).then_some(at)
            }
        }
    }

    /// When the next scheduled request is due (open loop only).
    pub(crate) fn next_at(&self) -> u64 {
        match *self {
            Pacer::Closed => 0,
            // Computed from the start rather than accumulated, so rounding
            // never drifts the rate.
            Pacer::Open {
                first_ns,
                interval_ns,
                sent,
            } => first_ns + (sent as f64 * interval_ns) as u64,
        }
    }

    /// Marks the due request as handed out.
    pub(crate) fn take(&mut self) {
        if let Pacer::Open { sent, .. } = self {
            *sent += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_is_always_due() {
        let p = Pacer::Closed;
        assert_eq!(p.due(42), Some(42));
    }

    #[test]
    fn open_follows_the_schedule_without_drift() {
        let mut p = Pacer::open(3.0, 100);
        assert_eq!(p.due(99), None);
        assert_eq!(p.due(100), Some(100));
        p.take();
        assert_eq!(p.next_at(), 100 + 333_333_333);
        for _ in 0..2_999 {
            p.take();
        }
        // 3,000 requests at 3/s take exactly 1,000 s.
        assert_eq!(p.next_at(), 100 + 1_000_000_000_000);
        // A late loop sees every missed request as due at its own time.
        assert_eq!(p.due(u64::MAX / 2), Some(100 + 1_000_000_000_000));
    }
}
