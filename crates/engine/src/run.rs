//! Running a plan: splits it over worker threads, starts them together, merges
//! their outcomes once at the end.

use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::clock::Clock;
use crate::control::RunControl;
use crate::cpu::{peak_rss_bytes, process_cpu, rss_bytes};
use crate::error::EngineError;
use crate::error_kind::ErrorCounts;
use crate::h2::{h2_requests, H2Request};
use crate::histogram::LatencyHistogram;
use crate::limits::raise_fd_limit;
use crate::pacing::Pacer;
use crate::plan::IoBackend;
use crate::plan::{LoadPlan, Pacing, PlanError, Stop};
use crate::result::{ClientMemory, LoadResult, RateSummary, TlsSummary, Unfinished, WorkerReport};
use crate::uring::uring_refusal;
use crate::verdict::{judge, Evidence};
use crate::worker::{run_worker, Shared, WorkerOutcome, WorkerSetup};

/// Splits `total` in proportion to `weights` (which sum to `of`), exactly.
fn split(total: u64, weights: &[usize], of: usize) -> Vec<u64> {
    let mut shares: Vec<u64> = weights
        .iter()
        .map(|&w| (total as u128 * w as u128 / of as u128) as u64)
        .collect();
    let mut left = total - shares.iter().sum::<u64>();
    for s in shares.iter_mut() {
        if left == 0 {
            break;
        }
        *s += 1;
        left -= 1;
    }
    shares
}

/// Runs the plan to the end (or until cancelled) and returns its result.
pub fn run(plan: &LoadPlan, control: &RunControl) -> Result<LoadResult, EngineError> {
    plan.validate()?;
    if control.progress.workers.len() != plan.workers {
        return Err(EngineError::ForeignControl);
    }
    raise_fd_limit(plan.connections)?;

    let w = plan.workers;
    let conns: Vec<usize> = (0..w)
        .map(|i| plan.connections / w + usize::from(i < plan.connections % w))
        .collect();
    let budgets: Vec<Option<u64>> = match plan.stop {
        Stop::Count(n) => split(n, &conns, plan.connections)
            .into_iter()
            .map(Some)
            .collect(),
        Stop::After(_) => vec![None; w],
    };

    // io_uring where asked and allowed; epoll, with the reason, where not.
    let (io, io_fallback) = match plan.io {
        IoBackend::Epoll => (IoBackend::Epoll, None),
        IoBackend::Uring => match uring_refusal() {
            None => (IoBackend::Uring, None),
            Some(why) => (IoBackend::Epoll, Some(why)),
        },
    };
    let cpu_before = process_cpu();
    let rss_before = rss_bytes();
    let start = Instant::now();
    let start_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let _ = control.progress.started.set(start);
    let clock = Clock::new(start);
    // Each request in HTTP/2 form, once for every worker (validate made
    // sure each converts).
    let h2: Vec<H2Request> = if plan.h2 {
        h2_requests(&plan.requests, plan.scheme()).map_err(PlanError::H2Request)?
    } else {
        Vec::new()
    };
    let outcomes: Vec<Result<WorkerOutcome, EngineError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(w);
        for i in 0..w {
            let pacer = match plan.pacing {
                Pacing::Closed => Pacer::Closed,
                // Each worker paces its share; offsets interleave their
                // schedules instead of sending in lockstep.
                Pacing::Open { per_second } => {
                    let share = per_second * conns[i] as f64 / plan.connections as f64;
                    Pacer::open(share, (i as f64 * 1e9 / per_second) as u64)
                }
            };
            let setup = WorkerSetup {
                connections: conns[i],
                budget: budgets[i],
                pacer,
                first_template: i * plan.requests.len() / w,
                first_conn: conns[..i].iter().sum(),
            };
            let shared = Shared {
                plan,
                h2: &h2,
                clock,
                cancel: &control.cancel,
                warmup_end_ns: &control.warmup_end_ns,
                progress: &control.progress.workers[i],
            };
            let handle = std::thread::Builder::new()
                .name(format!("netbench-worker-{i}"))
                .spawn_scoped(scope, move || run_worker(setup, shared, io));
            handles.push(handle);
        }
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(EngineError::WorkerPanicked)),
                Err(e) => {
                    // Let the workers that did start end quickly.
                    control.cancel.store(true, Ordering::Relaxed);
                    Err(EngineError::Spawn(e))
                }
            })
            .collect()
    });
    let process_cpu_s = (process_cpu().saturating_sub(cpu_before)).as_secs_f64();
    let outcomes = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    let peak = peak_rss_bytes();
    let memory = ClientMemory {
        peak_rss_bytes: peak,
        run_growth_bytes: peak.saturating_sub(rss_before),
        processes: 1,
    };
    let mut result = merge(plan, outcomes, process_cpu_s);
    result.memory = memory;
    result.io = io;
    result.io_fallback = io_fallback;
    result.window_unix_ns = [
        start_unix_ns + result.window_unix_ns[0],
        start_unix_ns + result.window_unix_ns[1],
    ];
    Ok(result)
}

/// Adds the workers' outcomes up. The window comes back relative to the
/// run's start; `run` places it on the wall clock.
fn merge(plan: &LoadPlan, outcomes: Vec<WorkerOutcome>, process_cpu_s: f64) -> LoadResult {
    let mut latency = LatencyHistogram::new();
    let mut connect = LatencyHistogram::new();
    let mut handshake = LatencyHistogram::new();
    let mut resumed = 0;
    let mut errors = ErrorCounts::default();
    let (mut requests, mut connects, mut bytes_read, mut bytes_written) = (0, 0, 0, 0);
    let mut measured_bytes_read = 0;
    let mut connect_timeouts = 0;
    let mut connections_answered = 0;
    let mut unfinished = Unfinished::default();
    let mut workers = Vec::with_capacity(outcomes.len());
    let mut interrupted = false;
    let start = outcomes
        .iter()
        .map(|o| o.window.started_ns)
        .min()
        .unwrap_or(0);
    let end = outcomes
        .iter()
        .map(|o| o.window.stopped_ns)
        .max()
        .unwrap_or(0);
    for o in &outcomes {
        latency.merge(&o.stats.latency);
        connect.merge(&o.stats.connect);
        handshake.merge(&o.stats.tls_handshake);
        resumed += o.stats.tls_resumed;
        errors.merge(&o.stats.errors);
        requests += o.stats.ok;
        connects += o.stats.connects;
        connect_timeouts += o.stats.connect_timeouts;
        connections_answered += o.stats.connections_answered;
        unfinished.requests += o.stats.unfinished;
        unfinished.oldest_s = unfinished
            .oldest_s
            .max(o.stats.unfinished_oldest_ns as f64 / 1e9);
        bytes_read += o.stats.bytes_read;
        measured_bytes_read += o.stats.measured_bytes_read;
        bytes_written += o.stats.bytes_written;
        interrupted |= o.interrupted;
        let len_ns = o.window.len_ns();
        workers.push(WorkerReport {
            connections: o.connections,
            requests: o.stats.ok,
            errors: o.stats.errors.total(),
            cpu_s: o.window.cpu.as_secs_f64(),
            wall_s: len_ns as f64 / 1e9,
            loop_busy: if len_ns > 0 {
                o.window.loop_busy_len_ns as f64 / len_ns as f64
            } else {
                0.0
            },
        });
    }
    let duration_s = end.saturating_sub(start) as f64 / 1e9;
    let per_s = |n: u64| {
        if duration_s > 0.0 {
            n as f64 / duration_s
        } else {
            0.0
        }
    };
    let rps = per_s(requests);
    // Little's law measured directly: connection-time spent with a request in
    // flight or a connect under way, over the measured phase. Failed
    // attempts count too, so a server whose requests time out is not taken
    // for a client that left its connections idle.
    let busy_s: f64 = outcomes
        .iter()
        .map(|o| o.stats.conn_busy_len_ns as f64 / 1e9)
        .sum();
    let achieved_concurrency = if duration_s > 0.0 {
        busy_s / duration_s
    } else {
        0.0
    };
    let rate = match plan.pacing {
        Pacing::Closed => None,
        Pacing::Open { per_second } => {
            let achieved = per_s(requests + errors.total());
            Some(RateSummary {
                target_per_s: per_second,
                achieved_per_s: achieved,
                ratio: achieved / per_second,
            })
        }
    };
    let attempts = requests + errors.total();
    let error_rate = if attempts == 0 {
        0.0
    } else {
        errors.total() as f64 / attempts as f64
    };
    let verdict = judge(&Evidence {
        workers: &workers,
        kept_busy: plan.reconnect.then_some(plan.connections),
        streams: plan.streams_per_connection(),
        achieved: achieved_concurrency,
        rate,
        error_rate,
        attempts: requests.saturating_add(errors.total()),
        ended_by_count: matches!(plan.stop, Stop::Count(_)),
        apart: None,
    });
    let first = outcomes.iter().find_map(|o| o.stats.tls_first);
    let tls = plan.tls.as_ref().map(|t| TlsSummary {
        handshake: handshake.summary(),
        resumed,
        version: first.map(|h| h.version.to_string()).unwrap_or_default(),
        cipher: first.map(|h| h.cipher.to_string()).unwrap_or_default(),
        alpn: first.and_then(|h| h.alpn).map(str::to_string),
        resume: t.resume,
        insecure: t.insecure,
        histogram: Some(handshake.into_inner()),
    });
    LoadResult {
        interrupted,
        requests,
        errors,
        duration_s,
        rps,
        latency: latency.summary(),
        connect: connect.summary(),
        connects,
        connect_timeouts,
        bytes_read,
        bytes_written,
        measured_bytes_read,
        client_cpu_s: workers.iter().map(|w| w.cpu_s).sum(),
        workers,
        process_cpu_s,
        configured_connections: plan.connections,
        achieved_concurrency,
        rate,
        verdict,
        window_unix_ns: [start, end],
        connections_answered,
        memory: ClientMemory::default(),
        io: IoBackend::Epoll,
        io_fallback: None,
        parts: Vec::new(),
        latency_histogram: Some(latency.into_inner()),
        connect_histogram: Some(connect.into_inner()),
        tls,
        unfinished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_exact_and_proportional() {
        assert_eq!(split(100_000, &[5, 5], 10), vec![50_000, 50_000]);
        assert_eq!(split(7, &[2, 1], 3), vec![5, 2]);
        assert_eq!(split(1, &[1, 1, 1], 3), vec![1, 0, 0]);
        let s = split(1_000_003, &[3334, 3333, 3333], 10_000);
        assert_eq!(s.iter().sum::<u64>(), 1_000_003);
    }
}
