//! `netbench merge`: histogram files of one load, run in several processes
//! or on several machines, read back and merged into one exact result.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use netbench_engine::{merge_parts, read_part, Pacing, Part, PartFile, PlanSummary, Stop};
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
    sum.connections = plans.iter().map(|p| p.connections).sum();
    sum.workers = plans.iter().map(|p| p.workers).sum();
    sum.stop = match plans[0].stop {
        Stop::Count(_) => Stop::Count(
            plans
                .iter()
                .map(|p| match p.stop {
                    Stop::Count(n) => n,
                    Stop::After(_) => 0,
                })
                .sum(),
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

pub(crate) fn run(args: MergeArgs) -> Result<u8> {
    let histogram = args
        .histogram_out
        .as_deref()
        .map(output::HistogramOut::open)
        .transpose()?;
    let mut files: Vec<(String, PartFile)> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let part = read_part(&bytes).with_context(|| format!("reading {}", path.display()))?;
        if let Some((first_name, first)) = files.first() {
            if let Some(what) = differs(&first.plan, &part.plan) {
                bail!(
                    "{} and {first_name} ran different loads ({what} differ); merge only the parts of one load",
                    path.display()
                );
            }
        }
        files.push((path.display().to_string(), part));
    }
    let url = |p: &PartFile| {
        p.context
            .get("url")
            .and_then(|u| u.as_str())
            .unwrap_or("?")
            .to_string()
    };
    let first_url = url(&files[0].1);
    if let Some((name, _)) = files.iter().find(|(_, p)| url(p) != first_url) {
        eprintln!("netbench: note: {name} loaded another URL than the first part ({first_url})");
    }
    let method = files[0]
        .1
        .context
        .get("method")
        .and_then(|m| m.as_str())
        .unwrap_or("GET")
        .to_string();
    let work = output::work_of(&files[0].1.context);
    let plans: Vec<PlanSummary> = files.iter().map(|(_, p)| p.plan.clone()).collect();
    let plan = combined(&plans);
    let distinct_requests = plans[0].distinct_requests;
    let reconnect = plan.reconnect;
    let parts = files
        .into_iter()
        .map(|(label, p)| Part {
            label,
            result: p.result,
        })
        .collect();
    let result = merge_parts(parts, reconnect)?;
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
