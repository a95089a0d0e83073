//! One engine run inside a cell: the cell's cancel flag wired in, and the
//! server's process-tree CPU time read at the edges of the measured window
//! (not from the 10 Hz samples, whose spacing would blur a short window).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use netbench_engine::{LoadPlan, LoadResult, RequestTemplate, RunControl, Stop};

use super::facts::Facts;
use crate::sampler::sample_group;

/// What a kind's measurement is given: the running server and the client's
/// share of the machine.
pub struct Measure<'a> {
    pub addr: SocketAddr,
    /// The server's process group, whose CPU time is read.
    pub pgid: i32,
    /// Set when the run is cancelled or the cell's time is up.
    pub cancel: &'a Arc<AtomicBool>,
    /// Client worker threads.
    pub workers: usize,
    /// The scenario's requests for this server.
    pub requests: Vec<RequestTemplate>,
    /// Sample times count from here.
    pub epoch: Instant,
    /// The network namespace the server runs in (its name), for what is
    /// read of the server's sockets; None on loopback.
    pub netns: Option<&'a str>,
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

/// The server group's CPU seconds so far (user + system).
pub(crate) fn tree_cpu(pgid: i32) -> Option<f64> {
    sample_group(pgid)
        .ok()
        .filter(|s| s.processes > 0)
        .map(|s| s.cpu_user_s + s.cpu_sys_s)
}

/// An engine run with the server's CPU over its measured window: the result,
/// that CPU time, and when the window began (seconds since the epoch).
pub fn measure_plan(
    plan: &LoadPlan,
    m: &Measure<'_>,
) -> Result<(LoadResult, Option<f64>, f64), String> {
    let mut control = RunControl::new(plan);
    control.cancel = Arc::clone(m.cancel);
    if m.cancel.load(Ordering::Relaxed) {
        return Err("cancelled".into());
    }
    let done = AtomicBool::new(false);
    let (result, edges) = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| window_edges(plan, &control, m.pgid, &done));
        let result = netbench_engine::run(plan, &control);
        done.store(true, Ordering::Relaxed);
        (result, watcher.join().unwrap_or_default())
    });
    let result = result.map_err(|e| format!("the load could not run: {e}"))?;
    let (start, begun) = match edges.start {
        Some(s) => s,
        None => return Ok((result, None, 0.0)),
    };
    let end = edges.end.or_else(|| tree_cpu(m.pgid));
    let cpu = end.map(|e| (e - start).max(0.0));
    Ok((
        result,
        cpu,
        begun.saturating_duration_since(m.epoch).as_secs_f64(),
    ))
}

#[derive(Default)]
struct Edges {
    start: Option<(f64, Instant)>,
    end: Option<f64>,
}

/// Reads the server's CPU when warm-up ends and, for a timed run, when the
/// window's deadline passes; the caller reads the end of a counted run.
fn window_edges(plan: &LoadPlan, control: &RunControl, pgid: i32, done: &AtomicBool) -> Edges {
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
    let begin = started + plan.warmup;
    if !sleep_until(begin, done) {
        return edges;
    }
    edges.start = tree_cpu(pgid).map(|c| (c, Instant::now()));
    if let Stop::After(d) = plan.stop {
        if sleep_until(begin + d, done) {
            edges.end = tree_cpu(pgid);
        }
    }
    edges
}

/// Sleeps until `t` unless the run ends first; true when `t` was reached.
fn sleep_until(t: Instant, done: &AtomicBool) -> bool {
    loop {
        if done.load(Ordering::Relaxed) {
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
