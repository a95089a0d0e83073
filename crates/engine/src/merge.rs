//! Exact merging of results from several processes or machines: counts
//! summed, latency histograms added (never percentiles averaged), throughput
//! over the union of the measured windows, and each part's own verdict kept.

use hdrhistogram::Histogram;

use crate::error::ErrorCounts;
use crate::result::{ClientMemory, LoadResult, PartReport, RateSummary};
use crate::verdict::judge;

/// One result to merge, with where it came from.
#[derive(Debug, Clone)]
pub struct Part {
    /// `process 2/6`, a file's name: what the merged report calls it.
    pub label: String,
    /// Must carry its histograms (a result straight from `run`, or read back
    /// from a histogram file).
    pub result: LoadResult,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give at least one part")]
    NoParts,
    #[error(
        "{0} carries no histograms, so its percentiles cannot be merged exactly; \
         write parts with --histogram-out"
    )]
    NoHistogram(String),
    #[error(
        "the histograms of {0} do not fit the first part's bounds; \
         were the parts written by different netbench versions?"
    )]
    Bounds(String),
}

/// Total length of the union of `[from, to]` windows, in nanoseconds: time
/// covered by at least one part counts once, gaps between parts not at all.
pub fn union_len_ns(windows: &[[u64; 2]]) -> u64 {
    let mut sorted: Vec<[u64; 2]> = windows.iter().filter(|w| w[1] > w[0]).copied().collect();
    sorted.sort_unstable();
    let mut total = 0;
    let mut current: Option<[u64; 2]> = None;
    for w in sorted {
        current = match current {
            Some(c) if w[0] <= c[1] => Some([c[0], c[1].max(w[1])]),
            Some(c) => {
                total += c[1] - c[0];
                Some(w)
            }
            None => Some(w),
        };
    }
    total + current.map_or(0, |c| c[1] - c[0])
}

fn add_all(
    parts: &[Part],
    pick: impl Fn(&LoadResult) -> Option<&Histogram<u64>>,
) -> Result<Histogram<u64>, MergeError> {
    let first =
        pick(&parts[0].result).ok_or_else(|| MergeError::NoHistogram(parts[0].label.clone()))?;
    let mut sum = Histogram::new_from(first);
    for p in parts {
        let h = pick(&p.result).ok_or_else(|| MergeError::NoHistogram(p.label.clone()))?;
        sum.add(h)
            .map_err(|_| MergeError::Bounds(p.label.clone()))?;
    }
    Ok(sum)
}

/// Merges parts into one result. `reconnect` is the plans' (a storm's
/// clients do not reconnect, which changes what "in flight" means to the
/// verdict).
pub fn merge_parts(parts: Vec<Part>, reconnect: bool) -> Result<LoadResult, MergeError> {
    if parts.is_empty() {
        return Err(MergeError::NoParts);
    }
    let latency = add_all(&parts, |r| r.latency_histogram.as_ref())?;
    let connect = add_all(&parts, |r| r.connect_histogram.as_ref())?;

    let windows: Vec<[u64; 2]> = parts.iter().map(|p| p.result.window_unix_ns).collect();
    let duration_s = union_len_ns(&windows) as f64 / 1e9;
    let per_s = |n: f64| {
        if duration_s > 0.0 {
            n / duration_s
        } else {
            0.0
        }
    };
    let sum = |f: &dyn Fn(&LoadResult) -> u64| parts.iter().map(|p| f(&p.result)).sum::<u64>();

    let mut errors = ErrorCounts::default();
    for p in &parts {
        errors.merge(&p.result.errors);
    }
    let requests = sum(&|r| r.requests);
    let configured: usize = parts.iter().map(|p| p.result.configured_connections).sum();
    // Little's law per part gives its busy connection-time; summed, over the
    // union, it is the merged time-average in flight.
    let busy_s: f64 = parts
        .iter()
        .map(|p| p.result.achieved_concurrency * p.result.duration_s)
        .sum();
    let achieved_concurrency = per_s(busy_s);
    let attempts = requests + errors.total();
    let rate = if parts.iter().all(|p| p.result.rate.is_some()) {
        let target: f64 = parts
            .iter()
            .filter_map(|p| p.result.rate)
            .map(|r| r.target_per_s)
            .sum();
        let achieved = per_s(attempts as f64);
        Some(RateSummary {
            target_per_s: target,
            achieved_per_s: achieved,
            ratio: if target > 0.0 { achieved / target } else { 0.0 },
        })
    } else {
        None
    };
    let error_rate = if attempts == 0 {
        0.0
    } else {
        errors.total() as f64 / attempts as f64
    };
    let workers: Vec<_> = parts
        .iter()
        .flat_map(|p| p.result.workers.clone())
        .collect();
    let mut verdict = judge(
        &workers,
        reconnect.then_some(configured),
        achieved_concurrency,
        rate,
        error_rate,
    );
    // A part that set its own pace stays a flag on the whole, even when the
    // others dilute its evidence.
    for p in parts.iter().filter(|p| p.result.verdict.client_bound) {
        if !verdict.client_bound {
            verdict.client_bound = true;
            verdict
                .reasons
                .insert(0, format!("{} was client-bound", p.label));
        } else {
            verdict
                .reasons
                .push(format!("{} was client-bound", p.label));
        }
    }
    let memory = ClientMemory {
        peak_rss_bytes: sum(&|r| r.memory.peak_rss_bytes),
        run_growth_bytes: sum(&|r| r.memory.run_growth_bytes),
        processes: parts.iter().map(|p| p.result.memory.processes.max(1)).sum(),
    };
    let reports = parts
        .iter()
        .map(|p| PartReport {
            label: p.label.clone(),
            connections: p.result.configured_connections,
            requests: p.result.requests,
            errors: p.result.errors.total(),
            rps: p.result.rps,
            window_unix_ns: p.result.window_unix_ns,
            connections_answered: p.result.connections_answered,
            peak_rss_bytes: p.result.memory.peak_rss_bytes,
            verdict: p.result.verdict.clone(),
        })
        .collect();
    let window_unix_ns = [
        windows.iter().map(|w| w[0]).min().unwrap_or(0),
        windows.iter().map(|w| w[1]).max().unwrap_or(0),
    ];
    Ok(LoadResult {
        interrupted: parts.iter().any(|p| p.result.interrupted),
        requests,
        errors,
        duration_s,
        rps: per_s(requests as f64),
        latency: crate::histogram::summarize(&latency),
        connect: crate::histogram::summarize(&connect),
        connects: sum(&|r| r.connects),
        connect_timeouts: sum(&|r| r.connect_timeouts),
        bytes_read: sum(&|r| r.bytes_read),
        bytes_written: sum(&|r| r.bytes_written),
        client_cpu_s: parts.iter().map(|p| p.result.client_cpu_s).sum(),
        process_cpu_s: parts.iter().map(|p| p.result.process_cpu_s).sum(),
        workers,
        configured_connections: configured,
        achieved_concurrency,
        rate,
        verdict,
        window_unix_ns,
        connections_answered: sum(&|r| r.connections_answered),
        memory,
        io: parts[0].result.io,
        io_fallback: parts.iter().find_map(|p| p.result.io_fallback.clone()),
        parts: reports,
        latency_histogram: Some(latency),
        connect_histogram: Some(connect),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_counts_overlap_once_and_gaps_never() {
        assert_eq!(union_len_ns(&[]), 0);
        assert_eq!(union_len_ns(&[[10, 20]]), 10);
        assert_eq!(union_len_ns(&[[10, 20], [15, 30]]), 20);
        assert_eq!(union_len_ns(&[[15, 30], [10, 20], [40, 45]]), 25);
        assert_eq!(union_len_ns(&[[10, 20], [12, 18]]), 10, "nested");
        assert_eq!(union_len_ns(&[[10, 20], [20, 30]]), 20, "touching");
        assert_eq!(union_len_ns(&[[10, 10], [5, 3]]), 0, "empty windows");
    }
}
