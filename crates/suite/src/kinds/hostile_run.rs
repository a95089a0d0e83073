//! One hostile cell (issue 33): the good load at a fixed open-loop rate
//! (latency from intended send times) measured alone, then beside each
//! attack (an attacker process, `attacker.rs`), then alone again in short
//! windows until the after phase ends; the server's memory and CPU per
//! phase, its crash or its refusal to accept, and a fresh process before
//! the next attack when it crashed or stopped accepting.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use netbench_engine::{LoadPlan, LoadResult, Pacing, Stop};
use netbench_records::hostile::{
    recovery_s, AttackFacts, HostileFacts, PhaseFigures, RecoveryMargin, WindowFigures,
};

use super::attacker::Attacker;
use super::engine_run::{from_result, measure_plan, Measure, Measured, Traffic};
use super::hostile::{Attack, HostilePlan};
use super::Facts;
use crate::sampler::Sampler;

/// A connect to the server after an attack not accepted within this long
/// counts as "stopped accepting".
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Below this share of the rate answered alone, a server is slower than the
/// good load and its baseline would be a queue growing for the whole
/// phase: the good load then runs at 90% of what it answered (as the
/// fixed-rate kind does), for this server only, and its phases say so.
const KEPT_UP: f64 = 0.97;

/// The cell's server as the hostile kind needs it: where it is, whether it
/// died, and a fresh one when it did.
pub trait ServerSlot {
    fn addr(&self) -> SocketAddr;
    fn pgid(&self) -> i32;
    /// Where its CPU time is read.
    fn cpu_source(&self) -> crate::server::CpuSource;
    /// How the process ended, if it has.
    fn exited(&mut self) -> Option<String>;
    /// Stops what is left of it and starts a fresh process, ready.
    fn restart(&mut self) -> Result<(), String>;
}

/// What a hostile cell is given beside the kind's usual [`Measure`].
pub struct HostileIn<'a> {
    pub plan: &'a HostilePlan,
    /// The good load's closed-loop plan (the scenario's endpoint and
    /// connections, its `warmup` and `duration`), which the cell paces.
    pub base: LoadPlan,
    /// The program whose `attack` subcommand attacks (netbench itself).
    pub attacker: Option<&'a Path>,
    /// The server's runtime compiles while it runs: warm it first.
    pub jit: bool,
    /// What the scenario sends a server at an address.
    pub traffic: &'a dyn Fn(SocketAddr) -> Traffic,
}

/// Measures one hostile cell; the baseline's engine result is the cell's
/// result, every phase's figures are its facts.
pub fn measure_hostile(
    h: &HostileIn<'_>,
    m: &Measure<'_>,
    server: &mut dyn ServerSlot,
) -> Result<Measured, String> {
    let Some(attacker) = h.attacker else {
        return Err(
            "no attacker program: the hostile kind runs `netbench attack`, so run it through \
             `netbench run`"
                .into(),
        );
    };
    let plan = h.plan;
    let mut m = m.clone();
    let (baseline, base_result, base_cpu, from) = warm_and_baseline(h, &m)?;
    let mut facts = HostileFacts {
        rate_per_s: plan.rate,
        connections: h.base.connections as u32,
        attack_connections: plan.attack_connections,
        attack_s: plan.attack_for.as_secs_f64(),
        after_s: plan.after.as_secs_f64(),
        window_s: plan.window.as_secs_f64(),
        margin: RecoveryMargin::DEFAULT,
        baseline,
        attacks: Vec::with_capacity(plan.attacks.len()),
    };
    let mut fresh_baseline: Option<PhaseFigures> = None;
    let mut restart = false;
    for &attack in &plan.attacks {
        let mut restarted = false;
        if restart {
            server.restart()?;
            m.addr = server.addr();
            m.pgid = server.pgid();
            m.cpu = server.cpu_source();
            m.traffic = (h.traffic)(m.addr);
            fresh_baseline = Some(warm_and_baseline(h, &m)?.0);
            restarted = true;
        }
        let baseline = fresh_baseline.as_ref().unwrap_or(&facts.baseline).clone();
        let mut a = one_attack(h, &m, attacker, attack, &baseline, server)?;
        a.restarted = restarted;
        a.baseline = fresh_baseline.clone();
        restart = a.crashed.is_some() || a.stopped_accepting;
        facts.attacks.push(a);
    }
    Ok(from_result(
        base_result,
        base_cpu,
        from,
        Some(Facts::Hostile(Box::new(facts))),
    ))
}

/// The plan of the good load at the cell's rate for `length`, without a
/// warm-up of its own.
fn paced(base: &LoadPlan, m: &Measure<'_>, rate: f64, length: Duration) -> LoadPlan {
    LoadPlan {
        addr: m.addr,
        requests: m.traffic.requests.clone(),
        session: m.traffic.session.clone(),
        pacing: Pacing::Open { per_second: rate },
        stop: Stop::After(length),
        warmup: Duration::ZERO,
        ..base.clone()
    }
}

/// A JIT server's closed-loop warm-up, then the baseline (after the
/// scenario's own open-loop `warmup`): its figures, its engine result,
/// the server's CPU over it and when it began.
fn warm_and_baseline(
    h: &HostileIn<'_>,
    m: &Measure<'_>,
) -> Result<(PhaseFigures, LoadResult, Option<f64>, f64), String> {
    if h.jit && !h.plan.jit_warmup.is_zero() {
        let warm = LoadPlan {
            addr: m.addr,
            requests: m.traffic.requests.clone(),
            session: m.traffic.session.clone(),
            stop: Stop::After(h.plan.jit_warmup),
            warmup: Duration::ZERO,
            ..h.base.clone()
        };
        measure_plan(&warm, m)?;
    }
    let length = match h.base.stop {
        Stop::After(d) => d,
        Stop::Count(_) => Duration::from_secs(3),
    };
    let mut plan = paced(&h.base, m, h.plan.rate, length);
    plan.warmup = h.base.warmup;
    let (figures, result, cpu, from) = phase(&plan, m)?;
    let answered_per_s = if figures.duration_s > 0.0 {
        figures.requests as f64 / figures.duration_s
    } else {
        0.0
    };
    if answered_per_s > 0.0 && answered_per_s < KEPT_UP * h.plan.rate {
        let slower = paced(&h.base, m, 0.9 * answered_per_s, length);
        return phase(&slower, m);
    }
    Ok((figures, result, cpu, from))
}

/// One engine run with the server sampled: its figures, its result, the
/// server's CPU seconds and the window's start (seconds since the epoch).
fn phase(
    plan: &LoadPlan,
    m: &Measure<'_>,
) -> Result<(PhaseFigures, LoadResult, Option<f64>, f64), String> {
    let sampler = Sampler::start(m.pgid, SAMPLE_EVERY);
    let measured = measure_plan(plan, m);
    let samples = sampler.stop();
    let (r, cpu, from) = measured?;
    let alive: Vec<_> = samples.iter().filter(|s| s.processes > 0).collect();
    let mut f = figures(&r, cpu);
    f.rss_start_bytes = alive.first().map(|s| s.rss_bytes);
    f.rss_peak_bytes = alive.iter().map(|s| s.rss_bytes).max();
    Ok((f, r, cpu, from))
}

/// An engine result's figures (memory left to the caller).
pub(crate) fn figures(r: &LoadResult, cpu: Option<f64>) -> PhaseFigures {
    PhaseFigures {
        duration_s: r.duration_s,
        offered_per_s: r.rate.map_or(0.0, |x| x.target_per_s),
        achieved_per_s: r.rate.map_or(r.rps, |x| x.achieved_per_s),
        requests: r.requests,
        errors: r.errors.total(),
        error_kinds: r
            .errors
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.name().to_string(), n))
            .collect(),
        connects: r.connects,
        p50_ns: r.latency.p50_ns,
        p99_ns: r.latency.p99_ns,
        p999_ns: r.latency.p999_ns,
        max_ns: r.latency.max_ns,
        server_cpu_s: cpu,
        rss_start_bytes: None,
        rss_peak_bytes: None,
        client_bound: r.verdict.client_bound,
    }
}

/// One attack: the attacker started, the good load beside it for the
/// attack's length, then the after phase in windows.
fn one_attack(
    h: &HostileIn<'_>,
    m: &Measure<'_>,
    program: &Path,
    attack: Attack,
    baseline: &PhaseFigures,
    server: &mut dyn ServerSlot,
) -> Result<AttackFacts, String> {
    let plan = h.plan;
    // The baseline's rate: the suite's, or less for a slower server.
    let rate = if baseline.offered_per_s > 0.0 {
        baseline.offered_per_s
    } else {
        plan.rate
    };
    // The attacker on this thread's CPUs, which are the client's.
    let attacker = Attacker::start(
        program,
        attack.name(),
        m.addr,
        plan.attack_connections,
        plan.attack_for,
        None,
    );
    let (during, _, _, _) = phase(&paced(&h.base, m, rate, plan.attack_for), m)?;
    let (report, attacker_failure) = match attacker.map(Attacker::finish) {
        Ok(Ok(v)) => (Some(v), None),
        Ok(Err(e)) | Err(e) => (None, Some(e)),
    };
    let ended = Instant::now();
    let mut crashed = server.exited();
    let mut windows = Vec::new();
    let mut after_hist: Option<Histogram<u64>> = None;
    let mut after: Option<PhaseFigures> = None;
    let mut probe_refused = false;
    if crashed.is_none() {
        probe_refused = TcpStream::connect_timeout(&m.addr, PROBE_TIMEOUT).is_err();
        let sampler = Sampler::start(m.pgid, SAMPLE_EVERY);
        let mut sum = PhaseFigures::default();
        // Windows until the next would end past the after phase.
        while ended.elapsed() + plan.window <= plan.after + plan.window / 4 {
            let start_s = ended.elapsed().as_secs_f64();
            let (r, cpu, _) = measure_plan(&paced(&h.base, m, rate, plan.window), m)?;
            add(&mut sum, &figures(&r, cpu));
            if let Some(w) = &r.latency_histogram {
                match &mut after_hist {
                    Some(a) => {
                        let _ = a.add(w);
                    }
                    None => after_hist = Some(w.clone()),
                }
            }
            windows.push(WindowFigures {
                start_s,
                duration_s: r.duration_s,
                requests: r.requests,
                errors: r.errors.total(),
                p99_ns: r.latency.p99_ns,
            });
            if server.exited().is_some() {
                break;
            }
        }
        let samples = sampler.stop();
        let alive: Vec<_> = samples.iter().filter(|s| s.processes > 0).collect();
        sum.rss_start_bytes = alive.first().map(|s| s.rss_bytes);
        sum.rss_peak_bytes = alive.iter().map(|s| s.rss_bytes).max();
        if let Some(hist) = &after_hist {
            sum.p50_ns = hist.value_at_quantile(0.5) as f64;
            sum.p99_ns = hist.value_at_quantile(0.99) as f64;
            sum.p999_ns = hist.value_at_quantile(0.999) as f64;
            sum.max_ns = hist.max() as f64;
        }
        sum.offered_per_s = rate;
        sum.achieved_per_s = if sum.duration_s > 0.0 {
            sum.requests as f64 / sum.duration_s
        } else {
            0.0
        };
        after = Some(sum);
        crashed = server.exited();
    }
    let margin = RecoveryMargin::DEFAULT;
    let recovery = recovery_s(baseline, &windows, &margin);
    Ok(AttackFacts {
        attack: attack.name().to_string(),
        restarted: false,
        baseline: None,
        during,
        after,
        recovery_s: recovery,
        stopped_accepting: crashed.is_none() && (probe_refused || refused_throughout(&windows)),
        windows,
        crashed,
        attacker: report,
        attacker_failure,
    })
}

/// Every window tried and none was answered: the server took no new
/// connection through the after phase.
pub(crate) fn refused_throughout(windows: &[WindowFigures]) -> bool {
    !windows.is_empty() && windows.iter().all(|w| w.requests == 0 && w.errors > 0)
}

/// Adds a window's counts and CPU to the after phase's sum.
fn add(sum: &mut PhaseFigures, w: &PhaseFigures) {
    sum.duration_s += w.duration_s;
    sum.requests += w.requests;
    sum.errors += w.errors;
    sum.connects += w.connects;
    for (k, n) in &w.error_kinds {
        *sum.error_kinds.entry(k.clone()).or_default() += n;
    }
    sum.client_bound |= w.client_bound;
    sum.server_cpu_s = match (sum.server_cpu_s, w.server_cpu_s) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(requests: u64, errors: u64) -> WindowFigures {
        WindowFigures {
            start_s: 0.0,
            duration_s: 0.5,
            requests,
            errors,
            p99_ns: 1e6,
        }
    }

    #[test]
    fn refused_throughout_needs_every_window_failing() {
        assert!(!refused_throughout(&[]));
        assert!(refused_throughout(&[w(0, 5), w(0, 3)]));
        assert!(!refused_throughout(&[w(0, 5), w(1, 3)]));
        // Nothing tried at all is not a refusal.
        assert!(!refused_throughout(&[w(0, 0)]));
    }

    #[test]
    fn the_after_phase_sums_its_windows() {
        let mut sum = PhaseFigures::default();
        let one = PhaseFigures {
            duration_s: 0.5,
            requests: 10,
            errors: 2,
            error_kinds: [("connect".to_string(), 2)].into(),
            server_cpu_s: Some(0.1),
            ..PhaseFigures::default()
        };
        add(&mut sum, &one);
        add(
            &mut sum,
            &PhaseFigures {
                server_cpu_s: None,
                ..one.clone()
            },
        );
        assert_eq!((sum.requests, sum.errors), (20, 4));
        assert_eq!(sum.error_kinds["connect"], 4);
        assert_eq!(sum.server_cpu_s, Some(0.1));
        assert_eq!(sum.duration_s, 1.0);
    }
}
