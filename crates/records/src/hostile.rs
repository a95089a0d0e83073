//! The hostile kind's facts (issue 33): a good load at a fixed rate measured
//! alone, beside each attack and alone again, with the server's growth, its
//! crashes and its recovery; and the pure rules the suite and the report
//! both read them by (success rate, p99 ratio, recovery), so the two cannot
//! disagree.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One hostile cell: the good load's baseline, then one entry per attack in
/// the order they ran on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostileFacts {
    /// The good load's open-loop rate (requests/s).
    pub rate_per_s: f64,
    /// The good load's connections.
    pub connections: u32,
    /// Each attack's connections (the attacker's `--connections`).
    pub attack_connections: u32,
    /// How long each attack ran, and the after phase that followed it.
    pub attack_s: f64,
    pub after_s: f64,
    /// The after phase is measured in windows this long: recovery is found
    /// to this resolution.
    pub window_s: f64,
    /// What "back to the baseline" meant for this cell.
    pub margin: RecoveryMargin,
    /// The good load alone on the fresh, warmed server.
    pub baseline: PhaseFigures,
    pub attacks: Vec<AttackFacts>,
}

/// When a window of the after phase counts as recovered: its success rate
/// at most `success_drop` under the baseline's, and its p99 at most
/// `p99_factor` × the baseline's p99 + `p99_slack_ns` (the slack keeps a
/// sub-millisecond baseline from making scheduler noise a failure).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecoveryMargin {
    pub success_drop: f64,
    pub p99_factor: f64,
    pub p99_slack_ns: f64,
}

impl RecoveryMargin {
    /// The suite's default: one percentage point of success, p99 within
    /// twice the baseline's plus a millisecond. A 250-answer window's p99 is
    /// its 3rd-worst answer, so a tighter factor would call noise a failure.
    pub const DEFAULT: RecoveryMargin = RecoveryMargin {
        success_drop: 0.01,
        p99_factor: 2.0,
        p99_slack_ns: 1e6,
    };

    /// Whether `w` is back within the margin of `baseline`.
    pub fn holds(&self, baseline: &PhaseFigures, w: &WindowFigures) -> bool {
        let answered = w.requests + w.errors;
        if answered == 0 {
            return false;
        }
        let success = w.requests as f64 / answered as f64;
        success + 1e-12 >= baseline.success_rate() - self.success_drop
            && w.p99_ns <= self.p99_factor * baseline.p99_ns + self.p99_slack_ns
    }
}

/// The good load over one phase, as the engine measured it: raw counts,
/// the latency summary (from intended send times), and the server's use.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PhaseFigures {
    pub duration_s: f64,
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// Good answers.
    pub requests: u64,
    /// Failed requests and connects, every kind.
    pub errors: u64,
    /// The errors by the engine's kind (`connect`, `timeout`, `status`, ...).
    pub error_kinds: BTreeMap<String, u64>,
    pub connects: u64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
    /// The server's process-tree CPU seconds over the phase.
    pub server_cpu_s: Option<f64>,
    /// The server's resident memory at the phase's start and its highest
    /// reading during it (10 Hz).
    pub rss_start_bytes: Option<u64>,
    pub rss_peak_bytes: Option<u64>,
    /// The engine judged its own client the limit (its CPU is shared with
    /// the attacker): the latency then includes the client's queueing, not
    /// only the server's.
    #[serde(default)]
    pub client_bound: bool,
}

impl PhaseFigures {
    /// Good answers over everything tried; 0 when nothing was tried.
    pub fn success_rate(&self) -> f64 {
        let tried = self.requests + self.errors;
        if tried == 0 {
            0.0
        } else {
            self.requests as f64 / tried as f64
        }
    }

    /// Server CPU in cores over the phase.
    pub fn server_cores(&self) -> Option<f64> {
        self.server_cpu_s
            .filter(|_| self.duration_s > 0.0)
            .map(|c| c / self.duration_s)
    }
}

/// One window of an after phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowFigures {
    /// The window's start, seconds after the attack ended.
    pub start_s: f64,
    pub duration_s: f64,
    pub requests: u64,
    pub errors: u64,
    pub p99_ns: f64,
}

/// One attack against the server, with the good load beside it and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackFacts {
    /// The attacker's kind, as `netbench attack` names it (`slowloris`,
    /// `slow-read`, `malformed`, `oversized`, `conn-flood`, `tcp-frag`).
    pub attack: String,
    /// The server was started again before this attack (the one before
    /// crashed it, or it stopped accepting); `baseline` is then the new
    /// process's own.
    pub restarted: bool,
    /// Set when this attack's server is not the cell's first process.
    pub baseline: Option<PhaseFigures>,
    /// The good load while the attack ran.
    pub during: PhaseFigures,
    /// The good load after it, the windows' sum (None when the server was
    /// gone and there was nothing to measure).
    pub after: Option<PhaseFigures>,
    pub windows: Vec<WindowFigures>,
    /// From the attack's end to the start of the first window back within
    /// the margin; None when none was within the after phase.
    pub recovery_s: Option<f64>,
    /// How the server's process ended, when it did during the attack or
    /// its after phase.
    pub crashed: Option<String>,
    /// After the attack, a fresh connection was refused or not accepted
    /// within a second, or every window's connects failed.
    pub stopped_accepting: bool,
    /// What the attacker printed (its JSON), kept whole.
    pub attacker: Option<serde_json::Value>,
    /// Why the attacker gave no JSON (it could not start, it failed).
    pub attacker_failure: Option<String>,
}

impl AttackFacts {
    /// The baseline this attack is judged against.
    pub fn baseline<'a>(&'a self, cell: &'a HostileFacts) -> &'a PhaseFigures {
        self.baseline.as_ref().unwrap_or(&cell.baseline)
    }

    /// The good load's p99 during the attack over its baseline's; None when
    /// either has no answer.
    pub fn p99_ratio(&self, cell: &HostileFacts) -> Option<f64> {
        let base = self.baseline(cell);
        (base.requests > 0 && self.during.requests > 0 && base.p99_ns > 0.0)
            .then(|| self.during.p99_ns / base.p99_ns)
    }

    /// The server's RSS growth during the attack: its peak over the
    /// baseline's peak, in bytes (negative when it shrank).
    pub fn rss_growth_bytes(&self, cell: &HostileFacts) -> Option<i64> {
        let start = self.baseline(cell).rss_peak_bytes?;
        Some(self.during.rss_peak_bytes? as i64 - start as i64)
    }

    /// The server's CPU during the attack over its baseline's (cores /
    /// cores).
    pub fn cpu_ratio(&self, cell: &HostileFacts) -> Option<f64> {
        let base = self.baseline(cell).server_cores()?;
        (base > 0.0).then_some(self.during.server_cores()? / base)
    }
}

/// The start of the first window within `margin` of `baseline`, in seconds
/// after the attack ended; None when no window is.
pub fn recovery_s(
    baseline: &PhaseFigures,
    windows: &[WindowFigures],
    margin: &RecoveryMargin,
) -> Option<f64> {
    windows
        .iter()
        .find(|w| margin.holds(baseline, w))
        .map(|w| w.start_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(requests: u64, errors: u64, p99_ms: f64) -> PhaseFigures {
        PhaseFigures {
            duration_s: 1.0,
            requests,
            errors,
            p99_ns: p99_ms * 1e6,
            ..PhaseFigures::default()
        }
    }

    fn window(start_s: f64, requests: u64, errors: u64, p99_ms: f64) -> WindowFigures {
        WindowFigures {
            start_s,
            duration_s: 0.5,
            requests,
            errors,
            p99_ns: p99_ms * 1e6,
        }
    }

    #[test]
    fn recovery_is_the_first_window_back_on_both_counts() {
        let b = base(1000, 0, 1.0);
        let m = RecoveryMargin::DEFAULT;
        let windows = [
            window(0.0, 100, 400, 1.0), // failing
            window(0.5, 500, 0, 50.0),  // answered, but slow
            window(1.0, 500, 0, 3.0),   // within 2 × 1 ms + 1 ms
            window(1.5, 500, 100, 1.0), // worse again: recovery stays at 1.0
        ];
        assert_eq!(recovery_s(&b, &windows, &m), Some(1.0));
        assert_eq!(recovery_s(&b, &windows[..2], &m), None);
        // A window in which nothing was tried is not a recovery.
        assert_eq!(recovery_s(&b, &[window(0.0, 0, 0, 0.0)], &m), None);
        // Just past the p99 bound.
        assert_eq!(recovery_s(&b, &[window(0.0, 500, 0, 3.01)], &m), None);
        // One point of success lower is still within the margin.
        assert_eq!(recovery_s(&b, &[window(0.0, 990, 10, 1.0)], &m), Some(0.0));
        assert_eq!(recovery_s(&b, &[window(0.0, 980, 20, 1.0)], &m), None);
    }

    #[test]
    fn ratios_against_the_attacks_own_baseline_after_a_restart() {
        let cell_base = PhaseFigures {
            rss_peak_bytes: Some(10_000),
            server_cpu_s: Some(0.1),
            ..base(1000, 0, 1.0)
        };
        let during = PhaseFigures {
            rss_peak_bytes: Some(25_000),
            server_cpu_s: Some(0.4),
            ..base(500, 500, 8.0)
        };
        let mut a = AttackFacts {
            attack: "slowloris".into(),
            restarted: false,
            baseline: None,
            during,
            after: None,
            windows: Vec::new(),
            recovery_s: None,
            crashed: None,
            stopped_accepting: false,
            attacker: None,
            attacker_failure: None,
        };
        let cell = HostileFacts {
            rate_per_s: 1000.0,
            connections: 8,
            attack_connections: 100,
            attack_s: 3.0,
            after_s: 3.0,
            window_s: 0.5,
            margin: RecoveryMargin::DEFAULT,
            baseline: cell_base,
            attacks: Vec::new(),
        };
        assert_eq!(a.p99_ratio(&cell), Some(8.0));
        assert_eq!(a.rss_growth_bytes(&cell), Some(15_000));
        assert!((a.cpu_ratio(&cell).unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(a.during.success_rate(), 0.5);
        a.baseline = Some(base(1000, 0, 2.0));
        assert_eq!(a.p99_ratio(&cell), Some(4.0));
        // No memory reading on the restarted process: no growth figure.
        assert_eq!(a.rss_growth_bytes(&cell), None);
        a.during.requests = 0;
        assert_eq!(a.p99_ratio(&cell), None);
        assert_eq!(base(0, 0, 0.0).success_rate(), 0.0);
    }
}
