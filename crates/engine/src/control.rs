//! The caller's handles on a run in progress: the cancel flag it may set and
//! the progress counters the workers publish a few times a second.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::plan::LoadPlan;

/// Counters one worker publishes a few times a second.
#[derive(Debug, Default)]
pub struct WorkerProgress {
    pub(crate) requests: AtomicU64,
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
    pub requests: u64,
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
            errors: 0,
        };
        for w in &self.workers {
            s.requests += w.requests.load(Ordering::Relaxed);
            s.errors += w.errors.load(Ordering::Relaxed);
            s.measuring &= w.measuring.load(Ordering::Relaxed);
        }
        s
    }
}

/// The caller's handles on a run: set `cancel` to end it early (the result is
/// then marked interrupted), read `progress` to show how it goes.
#[derive(Debug, Clone)]
pub struct RunControl {
    pub cancel: Arc<AtomicBool>,
    pub progress: Arc<Progress>,
}

impl RunControl {
    pub fn new(plan: &LoadPlan) -> Self {
        RunControl {
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
