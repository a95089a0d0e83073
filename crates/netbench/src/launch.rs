//! `netbench load` from a resolved plan to an exit code: the checks that
//! need the machine (ports, file limits, the start time), then one process,
//! or child processes merged, or this process as one of those children.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use netbench_engine::{raise_fd_limit, LoadPlan, LoadResult, RunControl};
use netbench_report::LoadContext;

use crate::cli::LoadArgs;
use crate::exit;
use crate::fanout::{self, processes_needed, run_parts, Role};
use crate::load::{resolve, Resolved};
use crate::output;
use crate::progress::ProgressLine;
use crate::sources::{check_local, check_ports, ephemeral_ports};
use crate::start_at::{ahead_by, late_by, wait_until, MAX_LATE};

pub(crate) fn run(mut args: LoadArgs) -> Result<u8> {
    if let Some(role) = fanout::role_from_env()? {
        if role.seed.is_some() {
            args.seed = role.seed;
        }
        let resolved = resolve(&args)?;
        return run_as_part(&resolved, &role);
    }
    let resolved = resolve(&args)?;
    let plan = &resolved.plan;
    check_local(&plan.sources).map_err(anyhow::Error::msg)?;
    if let Some(ports) = ephemeral_ports() {
        check_ports(
            plan.connections as u64,
            plan.sources.len(),
            ports,
            plan.addr.ip().is_loopback(),
        )
        .map_err(anyhow::Error::msg)?;
    }
    if let Some(t) = args.start_at {
        let late = late_by(t);
        if late > MAX_LATE {
            bail!(
                "--start-at is {:.1}s in the past; give a time ahead (RFC 3339, Unix seconds, or +5s)",
                late.as_secs_f64()
            );
        }
        let ahead = ahead_by(t);
        if !ahead.is_zero() && !args.quiet {
            eprintln!(
                "netbench: waiting {:.1}s for --start-at before connecting",
                ahead.as_secs_f64()
            );
        }
    }
    // Opened before the run, so a path that cannot be written costs no
    // measurement.
    let histogram = args
        .histogram_out
        .as_deref()
        .map(output::HistogramOut::open)
        .transpose()?;
    let limit = raise_fd_limit(1).context("reading the open-file limit")?;
    let per_process = limit.max_connections();
    let processes = match args.processes {
        Some(n) if n as usize > plan.connections => {
            eprintln!(
                "netbench: --processes {n} is more than the {} connections; running {} \
                 (a process needs a connection)",
                plan.connections, plan.connections
            );
            plan.connections
        }
        Some(n) => n as usize,
        None => processes_needed(plan.connections, per_process),
    };
    let biggest = plan.connections.div_ceil(processes) as u64;
    if biggest > per_process {
        bail!(
            "{processes} processes of {biggest} connections each do not fit the open-file limit \
             ({} per process, hard limit {}); drop --processes or give at least {}",
            per_process,
            limit.hard,
            processes_needed(plan.connections, per_process)
        );
    }

    let (result, report_plan) = if processes == 1 {
        let control = RunControl::new(plan);
        crate::signals::stop_on_signals(&control.cancel)?;
        if let Some(t) = args.start_at {
            if !wait_until(t, &control.cancel) {
                eprintln!("netbench: interrupted before the start time; nothing was measured");
                return Ok(exit::INTERRUPTED);
            }
        }
        let rate_unit = if args.ws { "msg/s" } else { "req/s" };
        let progress =
            (!args.quiet).then(|| ProgressLine::start(control.progress.clone(), rate_unit));
        let result = netbench_engine::run(plan, &control);
        if let Some(p) = progress {
            p.stop();
        }
        (
            result.context("the load run could not start")?,
            plan.clone(),
        )
    } else {
        let cancel = Arc::new(AtomicBool::new(false));
        crate::signals::stop_on_signals(&cancel)?;
        let start = args
            .start_at
            .unwrap_or_else(|| SystemTime::now() + fanout::LEAD);
        if !args.quiet {
            eprintln!(
                "netbench: {} connections in {processes} processes of at most {biggest} \
                 (the open-file limit allows {per_process} per process)",
                plan.connections
            );
        }
        let seed = resolved.work.map(|w| w.seed);
        let result = run_parts(plan, processes, start, seed, &cancel, !args.quiet)?;
        let mut report_plan = plan.clone();
        report_plan.workers = result.workers.len();
        (result, report_plan)
    };
    finish(&args, &resolved, &report_plan, &result, histogram)
}

fn context<'a>(resolved: &'a Resolved, plan: &'a LoadPlan) -> LoadContext<'a> {
    LoadContext {
        url: &resolved.url,
        method: &resolved.method,
        plan,
        distinct_requests: resolved.plan.requests.len(),
        work: resolved.work,
    }
}

fn finish(
    args: &LoadArgs,
    resolved: &Resolved,
    plan: &LoadPlan,
    result: &LoadResult,
    histogram: Option<output::HistogramOut>,
) -> Result<u8> {
    let ctx = context(resolved, plan);
    output::print_then_write(args.json, &ctx, result, histogram)?;
    Ok(output::exit_code(
        result,
        args.max_error_rate,
        &resolved.slos,
    ))
}

/// This process is one part of a load its parent split: run the share at
/// the common start and leave the result in the file the parent reads.
fn run_as_part(resolved: &Resolved, role: &Role) -> Result<u8> {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let plan = fanout::part_plan(&resolved.plan, role.index, role.of);
    let control = RunControl::new(&plan);
    crate::signals::stop_on_signals(&control.cancel)?;
    let late = late_by(role.start);
    if late > MAX_LATE {
        eprintln!(
            "netbench: {} starts {:.1}s late (building its plan took longer than the lead)",
            role.label(),
            late.as_secs_f64()
        );
    }
    // A parent that died (its death signal stopped this run) reads no
    // result: leave nothing in its folder, and the folder itself once empty.
    let orphaned = || {
        // SAFETY: getppid cannot fail.
        let gone = unsafe { libc::getppid() } != parent;
        if gone {
            if let Some(dir) = role.out.parent() {
                let _ = std::fs::remove_dir(dir);
            }
        }
        gone
    };
    if !wait_until(role.start, &control.cancel) {
        orphaned();
        return Ok(exit::INTERRUPTED);
    }
    let result = netbench_engine::run(&plan, &control)
        .with_context(|| format!("{} could not start", role.label()))?;
    if orphaned() {
        return Ok(exit::INTERRUPTED);
    }
    let ctx = context(resolved, &plan);
    output::write_histogram(&role.out, output::context_json(&ctx), &plan, &result)?;
    Ok(if result.interrupted {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}
