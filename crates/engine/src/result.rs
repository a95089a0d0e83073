//! The outcome of a run as plain data: counts, latency summaries, the client's
//! own cost and the verdict on whether it was the bottleneck.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error_kind::ErrorCounts;
use crate::plan::IoBackend;

/// Percentiles of a latency histogram, in nanoseconds. All zero when nothing
/// was recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: f64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub p9999_ns: f64,
    pub max_ns: f64,
}

/// One worker thread's share and cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerReport {
    pub connections: usize,
    pub requests: u64,
    pub errors: u64,
    /// Thread CPU time (user + system) during the measured phase.
    pub cpu_s: f64,
    /// The measured phase as this worker saw it.
    pub wall_s: f64,
    /// Share of the measured phase spent outside epoll_wait: near 1.0 means
    /// the loop never waited for the network, so the client set the pace.
    pub loop_busy: f64,
}

/// Whether the client was the bottleneck, with its evidence (decided by
/// `verdict::judge`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub client_bound: bool,
    /// False when nothing was measured to judge by (no attempt at all):
    /// then `client_bound` is false and the reasons say why.
    #[serde(default = "judged_by_default")]
    pub judged: bool,
    /// The evidence, one short phrase each, the deciding ones first.
    pub reasons: Vec<String>,
    /// Highest worker CPU use as a share of one core.
    pub busiest_cpu: f64,
    /// Highest worker event-loop busy share.
    pub busiest_loop: f64,
    /// Achieved ÷ configured concurrency (closed loop only).
    pub in_flight: Option<f64>,
}

/// Verdicts stored before `judged` existed were all judged.
fn judged_by_default() -> bool {
    true
}

/// Open-loop rate achieved against the target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateSummary {
    pub target_per_s: f64,
    /// Attempts (answers plus failures) per second of the measured phase.
    pub achieved_per_s: f64,
    pub ratio: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadResult {
    /// Ended early by a cancel (Ctrl-C): the numbers cover the time run.
    pub interrupted: bool,
    /// Answers that passed every check during the measured phase.
    pub requests: u64,
    pub errors: ErrorCounts,
    /// Length of the measured phase.
    pub duration_s: f64,
    /// Good answers per second of the measured phase.
    pub rps: f64,
    pub latency: LatencySummary,
    /// Connection set-up times during the measured phase.
    pub connect: LatencySummary,
    pub connects: u64,
    /// Connects that timed out: part of `errors.connect`, whose rest were
    /// refused (a full listen backlog, a closed port) or failed at once.
    #[serde(default)]
    pub connect_timeouts: u64,
    /// Bytes over the whole run, warm-up included.
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes read while measuring: over `requests`, the bytes on the wire
    /// per answer (head and body, as the server coded it), exact up to the
    /// answers of the requests in flight at the window's two edges (0 in
    /// results from before this field).
    #[serde(default)]
    pub measured_bytes_read: u64,
    pub workers: Vec<WorkerReport>,
    /// Sum of the workers' CPU time during the measured phase.
    pub client_cpu_s: f64,
    /// CPU time of the whole process over the whole run (set-up, warm-up and
    /// the calling thread included).
    pub process_cpu_s: f64,
    pub configured_connections: usize,
    /// Little's law: time-average number of requests (and connects) in flight.
    pub achieved_concurrency: f64,
    pub rate: Option<RateSummary>,
    pub verdict: Verdict,
    /// The measured phase on the wall clock, as Unix nanoseconds [from, to],
    /// so results of processes on other machines can be lined up and merged.
    #[serde(default)]
    pub window_unix_ns: [u64; 2],
    /// Connections (slots; a reconnect stays the same slot) that got at least
    /// one good answer while measuring: every connection served, not only
    /// the busiest.
    #[serde(default)]
    pub connections_answered: u64,
    /// What the client's process(es) held in memory.
    #[serde(default)]
    pub memory: ClientMemory,
    /// The kernel interface the workers used.
    #[serde(default)]
    pub io: IoBackend,
    /// Why io_uring was asked for and epoll ran instead.
    #[serde(default)]
    pub io_fallback: Option<String>,
    /// The results merged into this one (child processes, or files given to
    /// `merge`), each with its own verdict; empty for one process.
    #[serde(default)]
    pub parts: Vec<PartReport>,
    /// The merged latency histogram, for stores that keep raw data.
    #[serde(skip)]
    pub latency_histogram: Option<Histogram<u64>>,
    /// The merged connect-time histogram, for stores that keep raw data.
    #[serde(skip)]
    pub connect_histogram: Option<Histogram<u64>>,
    /// TLS as the run saw it; `None` for cleartext.
    #[serde(default)]
    pub tls: Option<TlsSummary>,
    /// Measured requests still in flight when the run ended: neither good
    /// nor errors (issue 42: a server that stalled in a run's last
    /// `--timeout` read "0 errors"). Zero in results from before.
    #[serde(default)]
    pub unfinished: Unfinished,
}

/// What was still waiting when a run ended: a timed run stops at its
/// deadline, and an interrupted one at once, with requests sent and not yet
/// answered, failed or timed out. Every closed-loop run ends with about a
/// request per connection in flight; one that waited longer than the
/// slowest answer is a stall the answers do not show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Unfinished {
    pub requests: u64,
    /// How long the oldest had waited (from when it was sent, or its
    /// connection's set-up began), in seconds; 0 when none.
    pub oldest_s: f64,
}

/// A TLS run's handshakes (`https://`, `wss://`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TlsSummary {
    /// Handshakes finished while measuring, timed from the connect's end to
    /// the handshake's: apart from the connect time and from request latency.
    pub handshake: LatencySummary,
    /// Of those, the ones that resumed an earlier session.
    pub resumed: u64,
    /// What the first connection agreed, as rustls names it: "TLSv1_3",
    /// "TLS13_AES_256_GCM_SHA384", "http/1.1". Empty when no handshake
    /// finished.
    pub version: String,
    pub cipher: String,
    pub alpn: Option<String>,
    /// Whether sessions were offered for resumption (`--tls-resume`).
    pub resume: bool,
    /// Whether certificates went unchecked (`--insecure`).
    pub insecure: bool,
    /// The merged handshake-time histogram, for part files and merges.
    #[serde(skip)]
    pub histogram: Option<Histogram<u64>>,
}

/// The client's resident memory: the peak, and how much the peak is above
/// what the process held before the connections were made (the cost of the
/// connections and their buffers, not of the program and its request
/// templates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientMemory {
    pub peak_rss_bytes: u64,
    pub run_growth_bytes: u64,
    /// Processes the figures add up over.
    pub processes: u32,
}

impl ClientMemory {
    /// Growth per configured connection, in bytes.
    pub fn per_connection(&self, connections: usize) -> f64 {
        self.run_growth_bytes as f64 / connections.max(1) as f64
    }
}

/// One part of a merged result, as it stood on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartReport {
    /// Where it came from: `process 2/6`, or a file's name.
    pub label: String,
    pub connections: usize,
    pub requests: u64,
    pub errors: u64,
    pub rps: f64,
    pub window_unix_ns: [u64; 2],
    pub connections_answered: u64,
    pub peak_rss_bytes: u64,
    pub verdict: Verdict,
}

impl LoadResult {
    /// Requests still in flight at the end that had waited longer than the
    /// slowest answer (all of them when nothing was answered): a stall the
    /// latency figures cannot show.
    pub fn stalled_at_end(&self) -> bool {
        self.unfinished.requests > 0
            && (self.requests == 0 || self.unfinished.oldest_s * 1e9 > self.latency.max_ns)
    }

    pub fn attempts(&self) -> u64 {
        self.requests + self.errors.total()
    }

    /// Failed attempts as a share of all attempts; 0 when there were none.
    pub fn error_rate(&self) -> f64 {
        match self.attempts() {
            0 => 0.0,
            n => self.errors.total() as f64 / n as f64,
        }
    }

    /// Client CPU per good answer, in microseconds.
    pub fn cpu_us_per_request(&self) -> f64 {
        match self.requests {
            0 => 0.0,
            n => self.client_cpu_s * 1e6 / n as f64,
        }
    }
}
