//! Exact merging of results from several processes or machines: counts
//! summed, latency histograms added (never percentiles averaged), throughput
//! over the union of the measured windows, and each part's own verdict kept.

use hdrhistogram::Histogram;

use crate::error_kind::ErrorCounts;
use crate::result::{ClientMemory, LoadResult, PartReport, RateSummary, TlsSummary, Unfinished};
use crate::verdict::{judge, Evidence};

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
    #[error("{0} is the same part as {1} (same window and counts); give each part once")]
    Twice(String, String),
    #[error(
        "the counts of {0} overflow when added to the other parts'; \
         it was edited or damaged: write it again with --histogram-out"
    )]
    Overflow(String),
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

/// What makes a part itself: two files with the same window to the
/// nanosecond and the same counts are one measurement given twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Identity {
    window_unix_ns: [u64; 2],
    requests: u64,
    errors: u64,
    connects: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl Identity {
    fn of(r: &LoadResult) -> Self {
        Identity {
            window_unix_ns: r.window_unix_ns,
            requests: r.requests,
            errors: r.errors.checked_total().unwrap_or(u64::MAX),
            connects: r.connects,
            bytes_read: r.bytes_read,
            bytes_written: r.bytes_written,
        }
    }
}

/// Folds parts in one at a time: their histograms are added at once and
/// dropped, so merging a thousand parts holds two histograms, not two
/// thousand (issue 27); what is kept of each part is its small summary.
/// The result does not depend on the order parts come in.
#[derive(Debug)]
pub struct Merger {
    reconnect: bool,
    ended_by_count: bool,
    /// Requests each connection keeps in flight (HTTP/2's streams, else 1).
    streams: usize,
    latency: Option<Histogram<u64>>,
    connect: Option<Histogram<u64>>,
    /// The TLS parts' handshake times.
    handshake: Option<Histogram<u64>>,
    /// Each part without its histograms, with its identity.
    parts: Vec<(Identity, String, LoadResult)>,
}

impl Merger {
    /// `reconnect` is the plans' (a storm's clients do not reconnect, which
    /// changes what "in flight" means to the verdict), and `ended_by_count`
    /// whether they stopped at a request count (a rate is then not judged),
    /// `streams` the requests each connection keeps in flight
    /// ([`LoadPlan::streams_per_connection`](crate::LoadPlan::streams_per_connection)).
    pub fn new(reconnect: bool, ended_by_count: bool, streams: usize) -> Self {
        Merger {
            reconnect,
            ended_by_count,
            streams,
            latency: None,
            connect: None,
            handshake: None,
            parts: Vec::new(),
        }
    }

    /// Adds one part; refused when it carries no histograms, when they do
    /// not fit, or when the same part was added before.
    pub fn add(&mut self, part: Part) -> Result<(), MergeError> {
        let Part { label, mut result } = part;
        let id = Identity::of(&result);
        if let Some((_, first, _)) = self.parts.iter().find(|(other, _, _)| *other == id) {
            return Err(MergeError::Twice(label, first.clone()));
        }
        let (Some(latency), Some(connect)) = (
            result.latency_histogram.take(),
            result.connect_histogram.take(),
        ) else {
            return Err(MergeError::NoHistogram(label));
        };
        let handshake = result.tls.as_mut().and_then(|t| t.histogram.take());
        let sums = [
            (&mut self.latency, Some(latency)),
            (&mut self.connect, Some(connect)),
            (&mut self.handshake, handshake),
        ];
        for (sum, h) in sums {
            let Some(h) = h else { continue };
            match sum {
                Some(sum) => sum.add(&h).map_err(|_| MergeError::Bounds(label.clone()))?,
                None => *sum = Some(h),
            }
        }
        // Judged again from its own evidence, by this netbench's rules: a
        // file's stored verdict is not taken on trust.
        result.verdict = judge(&Evidence {
            workers: &result.workers,
            kept_busy: self.reconnect.then_some(result.configured_connections),
            streams: self.streams,
            achieved: result.achieved_concurrency,
            rate: result.rate,
            error_rate: error_rate(&result),
            attempts: attempts(&result),
            ended_by_count: self.ended_by_count,
            apart: None,
        });
        self.parts.push((id, label, result));
        Ok(())
    }

    /// The merged result, its parts in a stable order (by window, then
    /// counts, then label), however they were added.
    pub fn finish(mut self) -> Result<LoadResult, MergeError> {
        let (Some(latency), Some(connect)) = (self.latency.take(), self.connect.take()) else {
            return Err(MergeError::NoParts);
        };
        let handshake = self.handshake.take();
        self.parts.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let parts: Vec<(&str, &LoadResult)> =
            self.parts.iter().map(|(_, l, r)| (l.as_str(), r)).collect();
        combine(&parts, &self, latency, connect, handshake)
    }
}

/// Answers plus failures, saturating (a part read from a file was checked
/// not to overflow; one from a run cannot).
fn attempts(r: &LoadResult) -> u64 {
    r.requests
        .saturating_add(r.errors.checked_total().unwrap_or(u64::MAX))
}

fn error_rate(r: &LoadResult) -> f64 {
    match attempts(r) {
        0 => 0.0,
        n => r.errors.checked_total().unwrap_or(u64::MAX) as f64 / n as f64,
    }
}

/// When merged parts were not all measuring at one moment: which started
/// after which had ended (their connections were never all open together).
pub fn parts_apart(parts: &[PartReport]) -> Option<String> {
    let recorded = || parts.iter().filter(|p| p.window_unix_ns != [0, 0]);
    let late = recorded().max_by_key(|p| p.window_unix_ns[0])?;
    let early = recorded().min_by_key(|p| p.window_unix_ns[1])?;
    (late.window_unix_ns[0] >= early.window_unix_ns[1])
        .then(|| format!("{} started after {} ended", late.label, early.label))
}

/// Merges parts into one result (see [`Merger`]).
pub fn merge_parts(
    parts: Vec<Part>,
    reconnect: bool,
    ended_by_count: bool,
    streams: usize,
) -> Result<LoadResult, MergeError> {
    let mut merger = Merger::new(reconnect, ended_by_count, streams);
    for p in parts {
        merger.add(p)?;
    }
    merger.finish()
}

/// Sums a count over the parts, refusing one that overflows.
fn checked_sum(
    parts: &[(&str, &LoadResult)],
    f: impl Fn(&LoadResult) -> u64,
) -> Result<u64, MergeError> {
    let mut sum = 0u64;
    for (label, r) in parts {
        sum = sum
            .checked_add(f(r))
            .ok_or_else(|| MergeError::Overflow(label.to_string()))?;
    }
    Ok(sum)
}

fn combine(
    parts: &[(&str, &LoadResult)],
    how: &Merger,
    latency: Histogram<u64>,
    connect: Histogram<u64>,
    handshake: Option<Histogram<u64>>,
) -> Result<LoadResult, MergeError> {
    let windows: Vec<[u64; 2]> = parts.iter().map(|(_, r)| r.window_unix_ns).collect();
    let duration_s = union_len_ns(&windows) as f64 / 1e9;
    let per_s = |n: f64| {
        if duration_s > 0.0 {
            n / duration_s
        } else {
            0.0
        }
    };
    let sum = |f: &dyn Fn(&LoadResult) -> u64| checked_sum(parts, f);

    let mut errors = ErrorCounts::default();
    for (label, r) in parts {
        errors
            .checked_merge(&r.errors)
            .ok_or_else(|| MergeError::Overflow(label.to_string()))?;
    }
    let requests = sum(&|r| r.requests)?;
    let error_total = errors
        .checked_total()
        .ok_or_else(|| MergeError::Overflow(parts[parts.len() - 1].0.to_string()))?;
    let attempts = requests
        .checked_add(error_total)
        .ok_or_else(|| MergeError::Overflow(parts[parts.len() - 1].0.to_string()))?;
    let mut configured = 0usize;
    for (label, r) in parts {
        configured = configured
            .checked_add(r.configured_connections)
            .ok_or_else(|| MergeError::Overflow(label.to_string()))?;
    }
    // Little's law per part gives its busy connection-time; summed, over the
    // union, it is the merged time-average in flight.
    let busy_s: f64 = parts
        .iter()
        .map(|(_, r)| r.achieved_concurrency * r.duration_s)
        .sum();
    let achieved_concurrency = per_s(busy_s);
    let rate = if parts.iter().all(|(_, r)| r.rate.is_some()) {
        let target: f64 = parts
            .iter()
            .filter_map(|(_, r)| r.rate)
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
        error_total as f64 / attempts as f64
    };
    let workers: Vec<_> = parts.iter().flat_map(|(_, r)| r.workers.clone()).collect();
    let reports: Vec<PartReport> = parts
        .iter()
        .map(|(label, r)| PartReport {
            label: label.to_string(),
            connections: r.configured_connections,
            requests: r.requests,
            errors: r.errors.checked_total().unwrap_or(u64::MAX),
            rps: r.rps,
            window_unix_ns: r.window_unix_ns,
            connections_answered: r.connections_answered,
            peak_rss_bytes: r.memory.peak_rss_bytes,
            verdict: r.verdict.clone(),
        })
        .collect();
    let apart = parts_apart(&reports);
    let mut verdict = judge(&Evidence {
        workers: &workers,
        kept_busy: how.reconnect.then_some(configured),
        streams: how.streams,
        achieved: achieved_concurrency,
        rate,
        error_rate,
        attempts,
        ended_by_count: how.ended_by_count,
        apart: apart.as_deref(),
    });
    // A part that set its own pace stays a flag on the whole, even when the
    // others dilute its evidence.
    for (label, _) in parts.iter().filter(|(_, r)| r.verdict.client_bound) {
        if !verdict.client_bound {
            verdict.client_bound = true;
            verdict
                .reasons
                .insert(0, format!("{label} was client-bound"));
        } else {
            verdict.reasons.push(format!("{label} was client-bound"));
        }
    }
    let memory = ClientMemory {
        peak_rss_bytes: sum(&|r| r.memory.peak_rss_bytes)?,
        run_growth_bytes: sum(&|r| r.memory.run_growth_bytes)?,
        processes: parts.iter().fold(0u32, |n, (_, r)| {
            n.saturating_add(r.memory.processes.max(1))
        }),
    };
    let window_unix_ns = [
        windows.iter().map(|w| w[0]).min().unwrap_or(0),
        windows.iter().map(|w| w[1]).max().unwrap_or(0),
    ];
    // What was agreed is the first TLS part's (every part ran one plan).
    let tls = match parts.iter().find_map(|(_, r)| r.tls.as_ref()) {
        None => None,
        Some(first) => Some(TlsSummary {
            handshake: handshake
                .as_ref()
                .map(crate::histogram::summarize)
                .unwrap_or_default(),
            resumed: sum(&|r| r.tls.as_ref().map_or(0, |t| t.resumed))?,
            histogram: handshake,
            ..first.clone()
        }),
    };
    Ok(LoadResult {
        interrupted: parts.iter().any(|(_, r)| r.interrupted),
        requests,
        errors,
        duration_s,
        rps: per_s(requests as f64),
        latency: crate::histogram::summarize(&latency),
        connect: crate::histogram::summarize(&connect),
        connects: sum(&|r| r.connects)?,
        connect_timeouts: sum(&|r| r.connect_timeouts)?,
        bytes_read: sum(&|r| r.bytes_read)?,
        bytes_written: sum(&|r| r.bytes_written)?,
        measured_bytes_read: sum(&|r| r.measured_bytes_read)?,
        client_cpu_s: parts.iter().map(|(_, r)| r.client_cpu_s).sum(),
        process_cpu_s: parts.iter().map(|(_, r)| r.process_cpu_s).sum(),
        workers,
        configured_connections: configured,
        achieved_concurrency,
        rate,
        verdict,
        window_unix_ns,
        connections_answered: sum(&|r| r.connections_answered)?,
        memory,
        io: parts[0].1.io,
        io_fallback: parts.iter().find_map(|(_, r)| r.io_fallback.clone()),
        parts: reports,
        latency_histogram: Some(latency),
        connect_histogram: Some(connect),
        tls,
        unfinished: Unfinished {
            requests: sum(&|r| r.unfinished.requests)?,
            oldest_s: parts
                .iter()
                .map(|(_, r)| r.unfinished.oldest_s)
                .fold(0.0, f64::max),
        },
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

    fn part(label: &str, requests: u64, from: u64) -> Part {
        Part {
            label: label.into(),
            result: crate::part::tests::result(requests, from),
        }
    }

    /// Issue 27: `merge a.hlog a.hlog` doubled everything silently.
    #[test]
    fn issue_27_the_same_part_twice_is_refused() {
        let err = merge_parts(
            vec![part("a", 5, 1_000), part("copy of a", 5, 1_000)],
            true,
            false,
            1,
        )
        .unwrap_err();
        assert!(matches!(err, MergeError::Twice(..)), "{err}");
        assert!(
            err.to_string().contains("copy of a is the same part as a"),
            "{err}"
        );
    }

    /// Issue 27: counts that wrap when added are refused, not wrapped.
    #[test]
    fn issue_27_counts_that_overflow_when_added_are_refused() {
        let mut a = part("a", 5, 1_000);
        let mut b = part("b", 5, 2_000);
        a.result.bytes_read = u64::MAX - 1;
        b.result.bytes_read = 10;
        let err = merge_parts(vec![a.clone(), b.clone()], true, false, 1).unwrap_err();
        assert!(matches!(err, MergeError::Overflow(_)), "{err}");
        a.result.bytes_read = 0;
        a.result.configured_connections = usize::MAX;
        let err = merge_parts(vec![a, b], true, false, 1).unwrap_err();
        assert!(matches!(err, MergeError::Overflow(_)), "{err}");
    }

    /// Issue 27 (low): the result does not depend on the order of the parts.
    #[test]
    fn issue_27_the_order_of_the_parts_does_not_matter() {
        let parts = vec![
            part("a", 5, 3_000),
            part("b", 7, 1_000),
            part("c", 2, 2_000),
        ];
        let forward = merge_parts(parts.clone(), true, false, 1).unwrap();
        let mut reversed = parts;
        reversed.reverse();
        let backward = merge_parts(reversed, true, false, 1).unwrap();
        let json = |r: &LoadResult| serde_json::to_string(r).unwrap();
        assert_eq!(json(&forward), json(&backward));
        let labels: Vec<&str> = forward.parts.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["b", "c", "a"], "by window");
    }

    /// Issue 27: parts that never ran together are not judged by their
    /// share in flight ("client-bound: YES" though neither part was).
    #[test]
    fn issue_27_parts_apart_in_time_leave_in_flight_not_judged() {
        let mut a = part("a", 100, 1_000);
        let mut b = part("b", 100, 5_000_000_000);
        for p in [&mut a, &mut b] {
            p.result.achieved_concurrency = 1.0;
            p.result.requests = 100;
        }
        let merged = merge_parts(vec![a, b], true, false, 1).unwrap();
        assert!(!merged.verdict.client_bound, "{:?}", merged.verdict);
        assert!(
            merged
                .verdict
                .reasons
                .iter()
                .any(|r| r.ends_with("not judged: b started after a ended")),
            "{:?}",
            merged.verdict
        );
        assert_eq!(
            parts_apart(&merged.parts).as_deref(),
            Some("b started after a ended")
        );
    }
}
