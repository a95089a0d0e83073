//! The caller's handles on a run in progress: the cancel flag it may set, the
//! early end of warm-up it may ask for, and the progress counters the workers
//! publish a few times a second.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::plan::LoadPlan;

/// Counters one worker publishes a few times a second.
#[derive(Debug, Default)]
pub struct WorkerProgress {
    pub(crate) requests: AtomicU64,
    pub(crate) answered: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) measuring: AtomicBool,
}

/// Progress of a run, readable from any thread while it runs.
#[derive(Debug)]
pub struct Progress {
    pub(crate) workers: Vec<WorkerProgress>,
    pub(crate) started: std::sync::OnceLock<Instant>,
}

/// A reading of [`Progress`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressSnapshot {
    /// Since the run started (warm-up included).
    pub elapsed: Duration,
    /// False during warm-up.
    pub measuring: bool,
    /// Measured good answers.
    pub requests: u64,
    /// Every good answer, warm-up's included.
    pub answered: u64,
    pub errors: u64,
}

impl Progress {
    /// When the run started (its clock's zero), once it has: warm-up ends
    /// `plan.warmup` later.
    pub fn started(&self) -> Option<Instant> {
        self.started.get().copied()
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        let mut s = ProgressSnapshot {
            elapsed: self.started.get().map_or(Duration::ZERO, |t| t.elapsed()),
            measuring: !self.workers.is_empty(),
            requests: 0,
            answered: 0,
            errors: 0,
        };
        for w in &self.workers {
            s.requests += w.requests.load(Ordering::Relaxed);
            s.answered += w.answered.load(Ordering::Relaxed);
            s.errors += w.errors.load(Ordering::Relaxed);
            s.measuring &= w.measuring.load(Ordering::Relaxed);
        }
        s
    }
}

/// The caller's handles on a run: set `cancel` to end it early (the result is
/// then marked interrupted), call [`RunControl::end_warmup_at`] to start
/// measuring before `plan.warmup` is over, read `progress` to show how it
/// goes.
#[derive(Debug, Clone)]
pub struct RunControl {
    pub cancel: Arc<AtomicBool>,
    pub progress: Arc<Progress>,
    /// When warm-up ends, in nanoseconds on the run's clock; `NOT_SET`
    /// leaves it at `plan.warmup`.
    pub(crate) warmup_end_ns: Arc<AtomicU64>,
}

/// [`RunControl::warmup_end_ns`] when the caller has not moved it.
pub(crate) const NOT_SET: u64 = u64::MAX;

impl RunControl {
    pub fn new(plan: &LoadPlan) -> Self {
        RunControl {
            warmup_end_ns: Arc::new(AtomicU64::new(NOT_SET)),
            cancel: Arc::new(AtomicBool::new(false)),
            progress: Arc::new(Progress {
                workers: (0..plan.workers)
                    .map(|_| WorkerProgress::default())
                    .collect(),
                started: std::sync::OnceLock::new(),
            }),
        }
    }
}

impl RunControl {
    /// Ends warm-up at `at` instead of at `plan.warmup`, on the connections
    /// already open: every worker starts measuring at that same instant (or
    /// as soon after it as its loop looks, within 20 ms), and a timed run
    /// measures its whole `stop` duration from there. A caller that warms
    /// until some condition holds (netbench run's steady state) gives the
    /// plan a warm-up as long as it may wait and calls this once it holds.
    /// Returns false, and changes nothing, before the run has started, once
    /// warm-up is over, or for an instant later than `plan.warmup`.
    pub fn end_warmup_at(&self, at: Instant) -> bool {
        let Some(start) = self.progress.started() else {
            return false;
        };
        if self.progress.snapshot().measuring {
            return false;
        }
        let at_ns = at
            .saturating_duration_since(start)
            .as_nanos()
            .min(u128::from(NOT_SET - 1)) as u64;
        self.warmup_end_ns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                (v == NOT_SET).then_some(at_ns)
            })
            .is_ok()
    }
}
