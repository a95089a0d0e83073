//! One engine run inside a cell: the cell's cancel flag wired in, the
//! warm-up followed until steady where the suite asks for it, and the
//! server's process-tree CPU time read at the edges of the measured window
//! (not from the 10 Hz samples, whose spacing would blur a short window).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use netbench_engine::IoBackend;

use hdrhistogram::Histogram;
use netbench_engine::{
    LoadPlan, LoadResult, RequestTemplate, RunControl, SessionPlan, Stop, TlsOptions, TlsPlan,
};

use super::facts::Facts;
use crate::server::CpuSource;
use crate::store::WarmUp;
use crate::warm::WarmIn;

/// What a kind's measurement is given: the running server and the client's
/// share of the machine.
#[derive(Clone)]
pub struct Measure<'a> {
    pub addr: SocketAddr,
    /// The server's process group.
    pub pgid: i32,
    /// Where the server's CPU time is read (its cgroup, or its group's
    /// /proc ticks).
    pub cpu: CpuSource,
    /// Set when the run is cancelled or the cell's time is up.
    pub cancel: &'a Arc<AtomicBool>,
    /// Client worker threads.
    pub workers: usize,
    /// What the scenario sends this server.
    pub traffic: Traffic,
    /// Sample times count from here.
    pub epoch: Instant,
    /// The network namespace the server runs in (its name), for what is
    /// read of the server's sockets; None on loopback.
    pub netns: Option<&'a str>,
    /// The client's I/O backend: the suite's `io`, or the cheapest.
    pub io: IoBackend,
    /// What carries the requests: TLS, HTTP/2 and its streams.
    pub carrier: Carrier,
}

/// The engine's side of a scenario's protocol (contract 1.5): TLS trusting
/// the run's authority (ALPN the protocol's, the name `localhost` the
/// certificate is for wherever the server runs), and HTTP/2 with its
/// streams per connection.
#[derive(Debug, Clone, Default)]
pub struct Carrier {
    pub tls: Option<TlsPlan>,
    pub h2: bool,
    pub streams: usize,
}

impl Carrier {
    pub fn of(
        scenario: &crate::suite::Scenario,
        ca: Option<&std::path::Path>,
    ) -> Result<Carrier, String> {
        use netbench_records::Protocol;
        let p = scenario.protocol;
        let tls = match p {
            Protocol::Tls | Protocol::H2 => {
                let Some(ca) = ca else {
                    return Err(
                        "a TLS scenario needs the run's authority, and the run made none".into(),
                    );
                };
                let options = TlsOptions {
                    cacert: Some(ca.to_path_buf()),
                    resume: scenario.tls_resume,
                    alpn: vec![if p == Protocol::H2 {
                        b"h2".to_vec()
                    } else {
                        b"http/1.1".to_vec()
                    }],
                    server_name: Some("localhost".to_string()),
                    ..TlsOptions::default()
                };
                Some(TlsPlan::new(&options, "localhost").map_err(|e| e.to_string())?)
            }
            _ => None,
        };
        Ok(Carrier {
            tls,
            h2: p.is_h2(),
            streams: scenario.streams as usize,
        })
    }
}

/// What a scenario sends one server: its requests, and for the contract's
/// `app` the sessions they go in (made together, so the two cannot
/// disagree).
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    pub requests: Vec<RequestTemplate>,
    pub session: Option<SessionPlan>,
}

impl From<Vec<RequestTemplate>> for Traffic {
    fn from(requests: Vec<RequestTemplate>) -> Self {
        Traffic {
            requests,
            session: None,
        }
    }
}

/// What a kind's measurement hands back to the cell.
pub struct Measured {
    pub result_json: String,
    /// The main engine result, for the progress display.
    pub result: Option<LoadResult>,
    pub histogram: Option<Histogram<u64>>,
    pub client_bound: bool,
    pub duration_s: f64,
    pub facts: Option<Facts>,
    /// The server's process-tree CPU seconds over the measured window.
    pub server_cpu_s: Option<f64>,
    /// Samples taken before this (seconds since the epoch) are warm-up and
    /// are not stored.
    pub keep_samples_from_s: f64,
}

/// An engine run's result, the server's CPU seconds over its measured
/// window, and when the window began (seconds since the epoch).
pub type PlanMeasured = (LoadResult, Option<f64>, f64);

/// An engine run with the server's CPU over its measured window.
pub fn measure_plan(plan: &LoadPlan, m: &Measure<'_>) -> Result<PlanMeasured, String> {
    measure_plan_warm(plan, m, None).map(|(measured, _)| measured)
}

/// [`measure_plan`], warmed until steady on the run's own connections when
/// `warm` says so ([`crate::warm::follow`] ends the warm-up): the measured
/// window then follows the warm-up at once, without new connections, and
/// `plan.warmup` is not used.
pub fn measure_plan_warm(
    plan: &LoadPlan,
    m: &Measure<'_>,
    warm: Option<&WarmIn<'_>>,
) -> Result<(PlanMeasured, Option<WarmUp>), String> {
    let mut plan = plan.clone();
    if let Some(w) = warm {
        plan.warmup = w.longest();
    }
    let plan = &plan;
    let mut control = RunControl::new(plan);
    control.cancel = Arc::clone(m.cancel);
    if m.cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    let done = AtomicBool::new(false);
    // When the measured window begins, once the warm-up has been followed.
    let begin: OnceLock<Option<Instant>> = OnceLock::new();
    let (result, edges, warmed) = std::thread::scope(|scope| {
        let engine = scope.spawn(|| {
            let r = netbench_engine::run(plan, &control);
            done.store(true, Ordering::Relaxed);
            r
        });
        let told = warm.is_some().then_some(&begin);
        let (control, done) = (&control, &done);
        let watcher = scope.spawn(move || window_edges(plan, control, &m.cpu, done, told));
        let warmed = warm.map(|w| {
            let (at, warmup) = crate::warm::follow(control, w, m.cancel, done);
            let _ = begin.set(at);
            warmup
        });
        let result = engine
            .join()
            .unwrap_or(Err(netbench_engine::EngineError::WorkerPanicked));
        (result, watcher.join().unwrap_or_default(), warmed)
    });
    let result = result.map_err(|e| format!("the load could not run: {e}"))?;
    let warmup = warmed.transpose()?;
    let (start, begun) = match edges.start {
        Some(s) => s,
        None => return Ok(((result, None, 0.0), warmup)),
    };
    let end = edges.end.or_else(|| m.cpu.cpu_s());
    let cpu = end.map(|e| (e - start).max(0.0));
    Ok((
        (
            result,
            cpu,
            begun.saturating_duration_since(m.epoch).as_secs_f64(),
        ),
        warmup,
    ))
}

#[derive(Default)]
struct Edges {
    start: Option<(f64, Instant)>,
    end: Option<f64>,
}

/// Reads the server's CPU when warm-up ends and, for a timed run, when the
/// window's deadline passes; the caller reads the end of a counted run.
/// Warm-up ends `plan.warmup` after the start, or where `told` says once
/// the warm-up has been followed (None there: the engine ended first).
fn window_edges(
    plan: &LoadPlan,
    control: &RunControl,
    cpu: &CpuSource,
    done: &AtomicBool,
    told: Option<&OnceLock<Option<Instant>>>,
) -> Edges {
    let mut edges = Edges::default();
    let started = loop {
        if done.load(Ordering::Relaxed) {
            return edges;
        }
        if let Some(s) = control.progress.started() {
            break s;
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    let begin = match told {
        None => started + plan.warmup,
        Some(told) => loop {
            if let Some(at) = told.get() {
                match at {
                    Some(at) => break *at,
                    None => return edges,
                }
            }
            if done.load(Ordering::Relaxed) {
                return edges;
            }
            std::thread::sleep(Duration::from_millis(1));
        },
    };
    if !sleep_until(begin, || done.load(Ordering::Relaxed)) {
        return edges;
    }
    edges.start = cpu.cpu_s().map(|c| (c, Instant::now()));
    if let Stop::After(d) = plan.stop {
        if sleep_until(begin + d, || done.load(Ordering::Relaxed)) {
            edges.end = cpu.cpu_s();
        }
    }
    edges
}

/// Sleeps until `t` unless `stop` says to stop first (asked every 2 ms);
/// true when `t` was reached.
pub(crate) fn sleep_until(t: Instant, stop: impl Fn() -> bool) -> bool {
    loop {
        if stop() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(2)));
    }
}

/// The engine's result with its latency histogram, ready for a cell.
pub(crate) fn from_result(
    result: LoadResult,
    server_cpu_s: Option<f64>,
    keep_samples_from_s: f64,
    facts: Option<Facts>,
) -> Measured {
    Measured {
        result_json: serde_json::to_string(&result).unwrap_or_default(),
        histogram: result.latency_histogram.clone(),
        client_bound: result.verdict.client_bound,
        duration_s: result.duration_s,
        facts,
        server_cpu_s,
        keep_samples_from_s,
        result: Some(result),
    }
}
