//! `netbench merge`: histogram files of one load, run in several processes
//! or on several machines, read back and merged into one exact result.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use netbench_engine::{parts_apart, read_part, Merger, Pacing, Part, PlanSummary, Stop};
use netbench_report::LoadContext;

use crate::cli::MergeArgs;
use crate::exit;
use crate::output;

/// What must agree for parts to be one load; the first difference, named.
fn differs(a: &PlanSummary, b: &PlanSummary) -> Option<&'static str> {
    if a.ws.is_some() != b.ws.is_some() {
        return Some("WebSocket and HTTP");
    }
    if a.keepalive != b.keepalive || a.requests_per_connection != b.requests_per_connection {
        return Some("keep-alive");
    }
    if a.pipeline != b.pipeline {
        return Some("the pipeline depth");
    }
    if matches!(a.pacing, Pacing::Open { .. }) != matches!(b.pacing, Pacing::Open { .. }) {
        return Some("open and closed loop");
    }
    if a.reconnect != b.reconnect {
        return Some("reconnecting");
    }
    None
}

/// The plan the parts make together: their connections, workers, counts and
/// rates added; the longest duration.
fn combined(plans: &[PlanSummary]) -> PlanSummary {
    let mut sum = plans[0].clone();
    // Each part's connections agree with its result, which the merge added
    // with checked arithmetic; workers are counted the same way.
    sum.connections = plans
        .iter()
        .fold(0usize, |n, p| n.saturating_add(p.connections));
    sum.workers = plans
        .iter()
        .fold(0usize, |n, p| n.saturating_add(p.workers));
    sum.stop = match plans[0].stop {
        Stop::Count(_) => Stop::Count(
            plans
                .iter()
                .map(|p| match p.stop {
                    Stop::Count(n) => n,
                    Stop::After(_) => 0,
                })
                .fold(0u64, u64::saturating_add),
        ),
        Stop::After(_) => Stop::After(
            plans
                .iter()
                .map(|p| match p.stop {
                    Stop::After(d) => d,
                    Stop::Count(_) => Duration::ZERO,
                })
                .max()
                .unwrap_or_default(),
        ),
    };
    if let Pacing::Open { .. } = plans[0].pacing {
        sum.pacing = Pacing::Open {
            per_second: plans
                .iter()
                .map(|p| match p.pacing {
                    Pacing::Open { per_second } => per_second,
                    Pacing::Closed => 0.0,
                })
                .sum(),
        };
    }
    sum
}

/// Far above any part file netbench writes (a few kilobytes): a bigger file
/// is refused before it is read whole.
const MAX_PART_BYTES: u64 = 64 << 20;

/// What is kept of each part besides what the merger folds in: its plan and
/// context, for the report's header.
struct Kept {
    /// Sorts the parts the same way whatever order they were given in.
    key: ([u64; 2], u64, String),
    label: String,
    plan: PlanSummary,
    context: serde_json::Value,
}

pub(crate) fn run(args: MergeArgs) -> Result<u8> {
    let histogram = args
        .histogram_out
        .as_deref()
        .map(output::HistogramOut::open)
        .transpose()?;
    let mut seen: Vec<(std::path::PathBuf, String)> = Vec::with_capacity(args.files.len());
    let mut kept: Vec<Kept> = Vec::with_capacity(args.files.len());
    let mut merger: Option<Merger> = None;
    // Parts are read and folded in one at a time: their histograms are not
    // all held at once (issue 27).
    for path in &args.files {
        let label = path.display().to_string();
        let real = std::fs::canonicalize(path).with_context(|| format!("reading {label}"))?;
        if let Some((_, first)) = seen.iter().find(|(p, _)| *p == real) {
            bail!("{label} is the same file as {first}; give each part once");
        }
        seen.push((real, label.clone()));
        let size = std::fs::metadata(path)
            .with_context(|| format!("reading {label}"))?
            .len();
        if size > MAX_PART_BYTES {
            bail!(
                "{label} is {size} bytes, far more than a part file (a few kilobytes); \
                 give the files `netbench load --histogram-out` wrote"
            );
        }
        let bytes = std::fs::read(path).with_context(|| format!("reading {label}"))?;
        let part = read_part(&bytes).with_context(|| format!("reading {label}"))?;
        drop(bytes);
        if let Some(first) = kept.first() {
            if let Some(what) = differs(&first.plan, &part.plan) {
                bail!(
                    "{label} and {} ran different loads ({what} differ); merge only the parts of one load",
                    first.label
                );
            }
        }
        kept.push(Kept {
            key: (
                part.result.window_unix_ns,
                part.result.requests,
                label.clone(),
            ),
            label: label.clone(),
            plan: part.plan.clone(),
            context: part.context,
        });
        merger
            .get_or_insert_with(|| {
                Merger::new(
                    part.plan.reconnect,
                    matches!(part.plan.stop, Stop::Count(_)),
                    part.plan.to_plan().streams_per_connection(),
                )
            })
            .add(Part {
                label,
                result: part.result,
            })?;
    }
    let merger = merger.context("nothing to merge: give at least one part")?;
    kept.sort_by(|a, b| a.key.cmp(&b.key));
    let url = |p: &Kept| {
        p.context
            .get("url")
            .and_then(|u| u.as_str())
            .unwrap_or("?")
            .to_string()
    };
    let first_url = url(&kept[0]);
    if let Some(other) = kept.iter().find(|p| url(p) != first_url) {
        eprintln!(
            "netbench: note: {} loaded another URL than {} ({first_url})",
            other.label, kept[0].label
        );
    }
    let method = kept[0]
        .context
        .get("method")
        .and_then(|m| m.as_str())
        .unwrap_or("GET")
        .to_string();
    let work = output::work_of(&kept[0].context);
    let plans: Vec<PlanSummary> = kept.iter().map(|k| k.plan.clone()).collect();
    let plan = combined(&plans);
    let distinct_requests = plans[0].distinct_requests;
    let result = merger.finish()?;
    if let Some(apart) = parts_apart(&result.parts) {
        eprintln!(
            "netbench: warning: the parts did not all run at the same time ({apart}); \
             throughput is over the time any of them ran, and connections in flight are not judged"
        );
    }
    let plan = plan.to_plan();
    let ctx = LoadContext {
        url: &first_url,
        method: &method,
        plan: &plan,
        distinct_requests,
        work,
    };
    output::print_then_write(args.json, &ctx, &result, histogram)?;
    Ok(if result.interrupted {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(connections: usize, stop: Stop, pacing: Pacing) -> PlanSummary {
        PlanSummary {
            addr: "127.0.0.1:1".parse().unwrap(),
            connections,
            workers: 1,
            stop,
            pacing,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(5),
            keepalive: true,
            pipeline: 1,
            requests_per_connection: None,
            reconnect: true,
            distinct_requests: 1,
            ws: None,
            h2: false,
        }
    }

    #[test]
    fn parts_add_up_to_one_plan() {
        let a = summary(10, Stop::Count(100), Pacing::Open { per_second: 50.0 });
        let b = summary(30, Stop::Count(300), Pacing::Open { per_second: 150.0 });
        let c = combined(&[a.clone(), b.clone()]);
        assert_eq!((c.connections, c.workers), (40, 2));
        assert_eq!(c.stop, Stop::Count(400));
        assert_eq!(c.pacing, Pacing::Open { per_second: 200.0 });
        assert_eq!(differs(&a, &b), None);
        let mut closed = b.clone();
        closed.pacing = Pacing::Closed;
        assert_eq!(differs(&a, &closed), Some("open and closed loop"));
        let mut nk = b;
        nk.keepalive = false;
        assert_eq!(differs(&a, &nk), Some("keep-alive"));
    }
}
