//! The rate kinds: rate-sweep (the closed-loop peak, then open-loop steps at
//! shares of it, latency from each request's intended send time) and
//! fixed-rate (one rate for every server; the server's CPU per request).

use std::time::Duration;

use netbench_engine::{LoadPlan, LoadResult, Pacing};

use super::engine_run::{from_result, measure_plan, Measure, Measured};
use super::facts::{knee, Facts, FixedRateFacts, SweepFacts, SweepStep};

/// Below this share of its rate achieved, a fixed-rate server is taken to be
/// slower than the rate and measured again at 90% of what it achieved.
const KEPT_UP: f64 = 0.97;

fn per_request_us(cpu_s: Option<f64>, r: &LoadResult) -> Option<f64> {
    cpu_s
        .filter(|_| r.requests > 0)
        .map(|c| c * 1e6 / r.requests as f64)
}

fn open(base: &LoadPlan, per_second: f64) -> LoadPlan {
    LoadPlan {
        pacing: Pacing::Open { per_second },
        ..base.clone()
    }
}

pub(crate) fn measure_sweep(
    base: &LoadPlan,
    steps: &[f64],
    slo_p99: Duration,
    m: &Measure<'_>,
) -> Result<Measured, String> {
    let (peak, peak_cpu, from) = measure_plan(base, m)?;
    if peak.rps <= 0.0 {
        return Err("no good answers in the closed-loop peak run: nothing to sweep".into());
    }
    let mut out = Vec::with_capacity(steps.len());
    for &fraction in steps {
        let offered = fraction * peak.rps;
        let (r, cpu, _) = measure_plan(&open(base, offered), m)?;
        out.push(SweepStep {
            fraction,
            offered_per_s: offered,
            achieved_per_s: r.rate.map_or(0.0, |x| x.achieved_per_s),
            p50_ns: r.latency.p50_ns,
            p99_ns: r.latency.p99_ns,
            p999_ns: r.latency.p999_ns,
            errors: r.errors.total(),
            server_cpu_us_per_request: per_request_us(cpu, &r),
            client_bound: r.verdict.client_bound,
        });
    }
    let slo_p99_ns = slo_p99.as_secs_f64() * 1e9;
    let facts = SweepFacts {
        peak_rps: peak.rps,
        slo_p99_ns,
        knee_per_s: knee(&out, slo_p99_ns),
        steps: out,
    };
    Ok(from_result(
        peak,
        peak_cpu,
        from,
        Some(Facts::RateSweep(facts)),
    ))
}

pub(crate) fn measure_fixed_rate(
    base: &LoadPlan,
    rate: f64,
    m: &Measure<'_>,
) -> Result<Measured, String> {
    let (mut r, mut cpu, mut from) = measure_plan(&open(base, rate), m)?;
    let mut offered = rate;
    let achieved = r.rate.map_or(0.0, |x| x.achieved_per_s);
    if achieved < KEPT_UP * rate && achieved > 0.0 {
        // Slower than the suite's rate: CPU per request at overload would
        // include its queueing, so measure again within what it can do.
        offered = 0.9 * achieved;
        (r, cpu, from) = measure_plan(&open(base, offered), m)?;
    }
    let facts = FixedRateFacts {
        rate_per_s: rate,
        offered_per_s: offered,
        achieved_per_s: r.rate.map_or(0.0, |x| x.achieved_per_s),
        p50_ns: r.latency.p50_ns,
        p99_ns: r.latency.p99_ns,
        server_cpu_us_per_request: per_request_us(cpu, &r),
    };
    Ok(from_result(r, cpu, from, Some(Facts::FixedRate(facts))))
}
