//! One worker's measurement window: the phases of a run, when each ends, the
//! attempts an exact-count run has left, and what is measured at the window's
//! edges (the thread's CPU time, the time the loop sat in epoll_wait). All
//! instants are nanoseconds on the run's monotonic [`Clock`](crate::clock::Clock);
//! names ending in `_ns` are such instants unless they say `len`.

use std::time::Duration;

use crate::clock::ns;
use crate::plan::Stop;

/// The phases of a run, in order. Only `Measure` sends measured requests;
/// `Drain` waits for the last measured answers of an exact-count run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Warmup,
    Measure,
    Drain,
    Done,
}

#[derive(Debug)]
pub(crate) struct Window {
    phase: Phase,
    /// When warm-up ends and measuring starts.
    warmup_end_ns: u64,
    /// When a timed run stops measuring; `None` for an exact count.
    deadline_ns: Option<u64>,
    /// Measured attempts left, for an exact-count run.
    budget: Option<u64>,
    /// How long a timed run measures, to move its deadline with an early
    /// end of warm-up.
    measure_len_ns: Option<u64>,
    /// When measuring actually started and stopped.
    started_ns: u64,
    stopped_ns: u64,
    /// Thread CPU time when measuring started, then spent while measuring.
    cpu_at_start: Duration,
    cpu_spent: Duration,
    /// Time spent waiting in epoll_wait while measuring or draining.
    idle_len_ns: u64,
}

/// What the window measured, once it is over.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WindowFacts {
    pub started_ns: u64,
    pub stopped_ns: u64,
    /// Thread CPU time spent while measuring.
    pub cpu: Duration,
    /// Time the loop spent working (outside epoll_wait) while measuring.
    pub loop_busy_len_ns: u64,
}

impl WindowFacts {
    pub(crate) fn len_ns(&self) -> u64 {
        self.stopped_ns.saturating_sub(self.started_ns)
    }
}

impl Window {
    pub(crate) fn new(warmup: Duration, stop: Stop, budget: Option<u64>) -> Self {
        let warmup_end_ns = ns(warmup);
        Window {
            phase: Phase::Warmup,
            warmup_end_ns,
            deadline_ns: match stop {
                Stop::After(d) => Some(warmup_end_ns.saturating_add(ns(d))),
                Stop::Count(_) => None,
            },
            budget,
            measure_len_ns: match stop {
                Stop::After(d) => Some(ns(d)),
                Stop::Count(_) => None,
            },
            started_ns: 0,
            stopped_ns: 0,
            cpu_at_start: Duration::ZERO,
            cpu_spent: Duration::ZERO,
            idle_len_ns: 0,
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    pub(crate) fn measuring(&self) -> bool {
        self.phase == Phase::Measure
    }

    /// Measured requests may be in flight: measuring or draining.
    pub(crate) fn open(&self) -> bool {
        matches!(self.phase, Phase::Measure | Phase::Drain)
    }

    /// New requests may be sent.
    pub(crate) fn may_send(&self) -> bool {
        matches!(self.phase, Phase::Warmup | Phase::Measure)
    }

    /// When measuring started (0 before it has).
    pub(crate) fn started_ns(&self) -> u64 {
        self.started_ns
    }

    /// Ends warm-up at `at_ns` rather than later (the caller's
    /// [`RunControl::end_warmup_at`](crate::RunControl::end_warmup_at)); a
    /// timed run's deadline moves with it. Nothing changes once measuring
    /// has started.
    pub(crate) fn end_warmup_at(&mut self, at_ns: u64) {
        if self.phase == Phase::Warmup && at_ns < self.warmup_end_ns {
            self.warmup_end_ns = at_ns;
            if let Some(len) = self.measure_len_ns {
                self.deadline_ns = Some(at_ns.saturating_add(len));
            }
        }
    }

    /// Moves through the phases on time: measuring starts when warm-up ends
    /// (`cpu` is read then). Returns the deadline once a timed run has
    /// passed it: the caller settles what is still in flight, then calls
    /// [`Window::end`] with it.
    pub(crate) fn advance(&mut self, now: u64, cpu: impl FnOnce() -> Duration) -> Option<u64> {
        match self.phase {
            Phase::Warmup if now >= self.warmup_end_ns => {
                self.phase = Phase::Measure;
                self.started_ns = now;
                self.cpu_at_start = cpu();
                self.idle_len_ns = 0;
                if self.budget == Some(0) {
                    self.phase = Phase::Drain;
                }
                None
            }
            Phase::Measure => self.deadline_ns.filter(|&d| now >= d),
            _ => None,
        }
    }

    /// One measured attempt spent; the last one moves an exact-count run to
    /// draining.
    pub(crate) fn spend(&mut self) {
        if let Some(left) = self.budget.as_mut() {
            *left = left.saturating_sub(1);
            if *left == 0 && self.phase == Phase::Measure {
                self.phase = Phase::Drain;
            }
        }
    }

    /// Time the loop waited for events, counted while the window is open.
    pub(crate) fn add_idle(&mut self, len_ns: u64) {
        if self.open() {
            self.idle_len_ns += len_ns;
        }
    }

    /// Ends the run: measuring stops at `at` (never before it started).
    pub(crate) fn end(&mut self, at: u64, cpu: impl FnOnce() -> Duration) {
        if self.open() {
            self.cpu_spent = cpu().saturating_sub(self.cpu_at_start);
            self.stopped_ns = at.max(self.started_ns);
        }
        self.phase = Phase::Done;
    }

    /// The next instant the window itself changes phase, if it will.
    pub(crate) fn next_change_ns(&self) -> Option<u64> {
        match self.phase {
            Phase::Warmup => Some(self.warmup_end_ns),
            Phase::Measure => self.deadline_ns,
            _ => None,
        }
    }

    pub(crate) fn facts(&self) -> WindowFacts {
        let len = self.stopped_ns.saturating_sub(self.started_ns);
        WindowFacts {
            started_ns: self.started_ns,
            stopped_ns: self.stopped_ns,
            cpu: self.cpu_spent,
            loop_busy_len_ns: len.saturating_sub(self.idle_len_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn cpu(ms: u64) -> impl FnOnce() -> Duration {
        move || Duration::from_millis(ms)
    }

    #[test]
    fn a_timed_run_measures_from_warmup_end_to_its_deadline() {
        let mut w = Window::new(
            Duration::from_millis(100),
            Stop::After(Duration::from_millis(500)),
            None,
        );
        assert_eq!(w.phase(), Phase::Warmup);
        assert_eq!(w.next_change_ns(), Some(100 * MS));
        w.add_idle(50 * MS); // warm-up idle time is not counted
        w.advance(99 * MS, cpu(1));
        assert_eq!(w.phase(), Phase::Warmup);
        // The loop may look at the clock late: measuring starts when it does.
        w.advance(103 * MS, cpu(10));
        assert!(w.measuring() && w.may_send());
        assert_eq!(w.started_ns(), 103 * MS);
        assert_eq!(w.next_change_ns(), Some(600 * MS));
        w.add_idle(200 * MS);
        assert_eq!(w.advance(599 * MS, cpu(50)), None);
        assert!(w.measuring());
        // Seen late, the deadline still ends the window at the deadline.
        let end = w.advance(650 * MS, cpu(70));
        assert_eq!(end, Some(600 * MS));
        assert!(w.measuring(), "ended by the caller");
        w.end(end.unwrap(), cpu(70));
        assert_eq!(w.phase(), Phase::Done);
        assert!(!w.may_send());
        let f = w.facts();
        assert_eq!((f.started_ns, f.stopped_ns), (103 * MS, 600 * MS));
        assert_eq!(f.len_ns(), 497 * MS);
        assert_eq!(f.cpu, Duration::from_millis(60));
        assert_eq!(f.loop_busy_len_ns, 297 * MS);
    }

    #[test]
    fn an_exact_count_drains_after_its_last_attempt() {
        let mut w = Window::new(Duration::ZERO, Stop::Count(2), Some(2));
        assert_eq!(w.next_change_ns(), Some(0));
        w.advance(5, cpu(0));
        assert!(w.measuring());
        assert_eq!(w.next_change_ns(), None, "no deadline");
        w.spend();
        assert!(w.measuring());
        w.spend();
        assert_eq!(w.phase(), Phase::Drain);
        assert!(w.open() && !w.may_send());
        w.spend(); // a failure counted while draining changes nothing
        assert_eq!(w.phase(), Phase::Drain);
        w.end(40, cpu(3));
        assert_eq!(w.phase(), Phase::Done);
        assert_eq!(w.facts().len_ns(), 35);
    }

    #[test]
    fn a_worker_with_no_attempts_drains_at_once() {
        let mut w = Window::new(Duration::ZERO, Stop::Count(0), Some(0));
        w.advance(0, cpu(0));
        assert_eq!(w.phase(), Phase::Drain);
    }

    #[test]
    fn an_early_end_of_warm_up_moves_the_deadline_with_it() {
        let mut w = Window::new(
            Duration::from_secs(60),
            Stop::After(Duration::from_secs(2)),
            None,
        );
        w.end_warmup_at(3_000 * MS);
        assert_eq!(w.next_change_ns(), Some(3_000 * MS));
        assert_eq!(w.advance(2_999 * MS, cpu(0)), None);
        assert!(!w.measuring());
        assert_eq!(w.advance(3_001 * MS, cpu(10)), None);
        assert!(w.measuring());
        assert_eq!(w.next_change_ns(), Some(5_000 * MS));
        // Once measuring, a later call changes nothing.
        w.end_warmup_at(4_000 * MS);
        assert_eq!(w.next_change_ns(), Some(5_000 * MS));
        assert_eq!(w.advance(5_000 * MS, cpu(20)), Some(5_000 * MS));
        // An instant after the plan's own end of warm-up is ignored.
        let mut late = Window::new(
            Duration::from_secs(1),
            Stop::After(Duration::from_secs(2)),
            None,
        );
        late.end_warmup_at(5_000 * MS);
        assert_eq!(late.next_change_ns(), Some(1_000 * MS));
    }

    #[test]
    fn a_cancel_in_warmup_measures_nothing() {
        let mut w = Window::new(
            Duration::from_secs(1),
            Stop::After(Duration::from_secs(1)),
            None,
        );
        w.end(10, cpu(5));
        assert_eq!(w.phase(), Phase::Done);
        let f = w.facts();
        assert_eq!(
            (f.len_ns(), f.cpu, f.loop_busy_len_ns),
            (0, Duration::ZERO, 0)
        );
    }

    #[test]
    fn an_end_before_the_start_is_clamped() {
        let mut w = Window::new(Duration::ZERO, Stop::Count(5), Some(5));
        w.advance(100, cpu(0));
        w.end(50, cpu(0));
        assert_eq!(w.facts().len_ns(), 0);
    }
}
