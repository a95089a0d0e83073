//! The facts each scenario kind stores beside its engine result (the
//! `facts` column, schema 5): plain serde data the reports read back, so
//! every table and chart of a kind can be rebuilt from the store alone.

use netbench_engine::LatencySummary;
use serde::{Deserialize, Serialize};

/// One measurement's kind-specific facts, tagged by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Facts {
    Idle(IdleFacts),
    Storm(StormFacts),
    ShortLived(ShortLivedFacts),
    RateSweep(SweepFacts),
    FixedRate(FixedRateFacts),
    Pipelined(PipelinedFacts),
    /// Boxed: a cell's attacks make it far larger than the other kinds'.
    Hostile(Box<crate::hostile::HostileFacts>),
}

impl Facts {
    /// The kind's name as suite files spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            Facts::Idle(_) => "idle",
            Facts::Storm(_) => "storm",
            Facts::ShortLived(_) => "short-lived",
            Facts::RateSweep(_) => "rate-sweep",
            Facts::FixedRate(_) => "fixed-rate",
            Facts::Pipelined(_) => "pipelined",
            Facts::Hostile(_) => "hostile",
        }
    }

    /// Whether the measurement's requests/s belongs in the throughput tables
    /// (closed loop at saturation); the other kinds have tables of their own.
    pub fn is_throughput(&self) -> bool {
        matches!(self, Facts::ShortLived(_) | Facts::Pipelined(_))
    }
}

/// `y = intercept + slope × x`, least squares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    pub slope: f64,
    pub intercept: f64,
    /// Coefficient of determination; 1 for two points.
    pub r2: f64,
    pub points: u32,
}

/// Least squares over `(x, y)` points; None with fewer than two distinct x.
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let ss_res: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Some(LineFit {
        slope,
        intercept,
        r2,
        points: points.len() as u32,
    })
}

/// An idle run: connections opened in levels and held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleFacts {
    pub hold_s: f64,
    pub heartbeat_s: Option<f64>,
    pub levels: Vec<IdleLevelFacts>,
    /// The server's PSS (bytes) against held connections, over the levels
    /// where every connection was held: the slope is memory per idle
    /// connection.
    pub pss_fit: Option<LineFit>,
}

/// One level of an idle run, with the server's use while it was held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleLevelFacts {
    /// Connections asked for.
    pub connections: u32,
    /// Open with their first answer in when the hold began.
    pub open: u32,
    /// Connects or first requests that failed at this level.
    pub failed: u32,
    /// Closed by the server while held (an idle timeout, a connection limit).
    pub closed_by_server: u32,
    /// Time to open this level's new connections and get their first answers.
    pub open_s: f64,
    /// The server's process tree while held: median PSS and RSS, most threads.
    pub pss_bytes: u64,
    pub rss_bytes: u64,
    pub threads: u32,
    /// Server CPU while held, in cores: over the whole hold, and the busiest
    /// sample interval.
    pub cpu_cores_mean: f64,
    pub cpu_cores_peak: f64,
    pub heartbeats: u64,
    pub heartbeat_errors: u64,
    pub client_cpu_s: f64,
}

/// A connection storm: every client connects at once and sends one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StormFacts {
    pub clients: u32,
    /// Clients whose request got a good answer.
    pub answered: u64,
    /// Connects refused or failed at once (not timeouts).
    pub refused: u64,
    /// Connects not made within the timeout.
    pub connect_timeouts: u64,
    /// Everything else that failed (bad answers, resets, request timeouts).
    pub other_errors: u64,
    /// From the first connect to the last client's end.
    pub all_done_s: f64,
    /// Connections made per second over that time.
    pub connects_per_s: f64,
    pub connect: LatencySummary,
    /// net.core.somaxconn, which caps every listen backlog.
    pub somaxconn: Option<u32>,
    /// The server's own listen backlog as the kernel holds it (ss's Send-Q
    /// of the listening socket), read before the storm.
    pub listen_backlog: Option<u32>,
    /// The machine's TCP ListenOverflows and ListenDrops during the storm
    /// (/proc/net/netstat): SYNs or handshakes dropped on a full queue.
    pub listen_overflows: Option<u64>,
    pub listen_drops: Option<u64>,
    pub client_bound: bool,
}

/// Keep-alive off (K = 1) or a new connection every K requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShortLivedFacts {
    pub requests_per_connection: u32,
}

/// HTTP/1.1 pipelining: a reference figure only (browsers and proxies do
/// not pipeline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelinedFacts {
    pub depth: u32,
}

/// Latency against offered load: the closed-loop peak, then open-loop steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepFacts {
    pub peak_rps: f64,
    /// The p99 a step must stay under to count for the knee.
    pub slo_p99_ns: f64,
    pub steps: Vec<SweepStep>,
    /// The highest offered rate up to which every step met the SLO with at
    /// least 99% of its rate achieved ([`knee`]); None when the first did
    /// not.
    pub knee_per_s: Option<f64>,
}

/// One open-loop step of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// Share of the peak offered.
    pub fraction: f64,
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// Latency from each request's intended send time.
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub errors: u64,
    /// The server's process-tree CPU over the step's measured window per
    /// good answer.
    pub server_cpu_us_per_request: Option<f64>,
    pub client_bound: bool,
}

/// One rate for every server: efficiency at equal work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedRateFacts {
    /// The suite's rate.
    pub rate_per_s: f64,
    /// The rate offered: the suite's, or less where the server could not
    /// keep up with it (then 90% of what it achieved at the suite's rate).
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub server_cpu_us_per_request: Option<f64>,
}

/// The knee of a sweep: the highest offered rate up to which every step
/// kept its p99 under the SLO with at least 99% of its rate achieved. A
/// step that misses ends the curve's good part even when a faster step
/// happens to pass: one good step above a bad one is luck, not capacity.
pub fn knee(steps: &[SweepStep], slo_p99_ns: f64) -> Option<f64> {
    let mut by_rate: Vec<&SweepStep> = steps.iter().collect();
    by_rate.sort_by(|a, b| a.offered_per_s.total_cmp(&b.offered_per_s));
    by_rate
        .into_iter()
        .take_while(|s| {
            s.p99_ns > 0.0
                && s.p99_ns <= slo_p99_ns
                && s.offered_per_s > 0.0
                && s.achieved_per_s / s.offered_per_s >= 0.99
        })
        .map(|s| s.offered_per_s)
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_exactly_and_with_noise() {
        let f = fit_line(&[(100.0, 1.0e6), (1000.0, 1.9e6), (10000.0, 10.9e6)]).unwrap();
        assert!((f.slope - 1000.0).abs() < 1e-6, "{f:?}");
        assert!((f.intercept - 0.9e6).abs() < 1e-3);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        let g = fit_line(&[(0.0, 0.0), (1.0, 2.0), (2.0, 1.0), (3.0, 3.0)]).unwrap();
        // slope 0.8, intercept 0.3: computed by hand.
        assert!((g.slope - 0.8).abs() < 1e-12 && (g.intercept - 0.3).abs() < 1e-12);
        assert!(g.r2 > 0.0 && g.r2 < 1.0);
        assert!(fit_line(&[(5.0, 1.0)]).is_none());
        assert!(fit_line(&[(5.0, 1.0), (5.0, 2.0)]).is_none());
    }

    fn step(offered: f64, achieved: f64, p99_ms: f64) -> SweepStep {
        SweepStep {
            fraction: 0.0,
            offered_per_s: offered,
            achieved_per_s: achieved,
            p50_ns: 0.0,
            p99_ns: p99_ms * 1e6,
            p999_ns: 0.0,
            errors: 0,
            server_cpu_us_per_request: None,
            client_bound: false,
        }
    }

    #[test]
    fn the_knee_needs_the_slo_and_the_rate() {
        let steps = [
            step(1000.0, 1000.0, 1.0),
            step(5000.0, 4999.0, 4.0),
            // Under the SLO but only 95% achieved: not the knee.
            step(8000.0, 7600.0, 9.0),
            // Achieved but over the SLO.
            step(9000.0, 9000.0, 30.0),
        ];
        assert_eq!(knee(&steps, 10e6), Some(5000.0));
        assert_eq!(knee(&steps, 0.5e6), None);
        assert_eq!(knee(&[], 10e6), None);
    }

    #[test]
    fn the_knee_is_before_the_first_miss_in_rate_order() {
        let steps = [
            step(9000.0, 9000.0, 3.0),
            step(1000.0, 1000.0, 1.0),
            // A spike at 5,000/s: the 9,000/s step that passed after it
            // does not count.
            step(5000.0, 5000.0, 40.0),
        ];
        assert_eq!(knee(&steps, 10e6), Some(1000.0));
    }

    #[test]
    fn facts_round_trip_tagged_by_kind() {
        let f = Facts::ShortLived(ShortLivedFacts {
            requests_per_connection: 10,
        });
        let j = serde_json::to_string(&f).unwrap();
        assert_eq!(j, r#"{"kind":"short-lived","requests_per_connection":10}"#);
        assert_eq!(serde_json::from_str::<Facts>(&j).unwrap(), f);
        assert!(f.is_throughput());
    }
}
