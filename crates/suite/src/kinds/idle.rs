//! The idle kind: levels of connections opened and held on one server
//! (engine::run_idle; HTTP keep-alive, or WebSocket on endpoint ws), then,
//! from the samples taken while each level was held, the server's memory,
//! threads and CPU per level and the least-squares memory per idle
//! connection.

use std::time::Duration;

use netbench_engine::{run_idle, IdleLevel, IdlePlan, IdleResult, WsPlan};

use super::engine_run::{Measure, Measured};
use super::facts::{fit_line, Facts, IdleFacts, IdleLevelFacts};
use crate::sampler::Sample;

/// A connect, upgrade or first answer slower than this fails.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Holds the levels of an idle cell: with `ws`, WebSocket connections that
/// upgrade and echo a message (and one per heartbeat); otherwise the
/// scenario's first request on keep-alive connections.
pub(crate) fn measure_idle(
    levels: &[u32],
    hold: Duration,
    heartbeat: Option<Duration>,
    ws: Option<WsPlan>,
    m: &Measure<'_>,
) -> Result<(Measured, IdleResult), String> {
    let mut levels: Vec<usize> = levels.iter().map(|&n| n as usize).collect();
    levels.sort_unstable();
    levels.dedup();
    // A WebSocket scenario has no HTTP requests: it sends messages.
    let request = m.traffic.requests.first().cloned();
    if request.is_none() && ws.is_none() {
        return Err("the scenario has no request".into());
    }
    let plan = IdlePlan {
        addr: m.addr,
        levels,
        hold,
        heartbeat,
        timeout: TIMEOUT,
        request,
        ws,
        tls: None,
        io: m.io,
    };
    let cpu_before = m.cpu.cpu_s();
    let result = run_idle(&plan, m.epoch, m.cancel).map_err(|e| e.to_string())?;
    let cpu_after = m.cpu.cpu_s();
    let duration_s = result.levels.last().map_or(0.0, |l| {
        l.hold_to_s - result.levels[0].hold_from_s + result.levels[0].open_s
    });
    let measured = Measured {
        result_json: serde_json::to_string(&result).unwrap_or_default(),
        result: None,
        histogram: None,
        client_bound: false,
        duration_s,
        facts: None,
        server_cpu_s: cpu_before.zip(cpu_after).map(|(a, b)| (b - a).max(0.0)),
        keep_samples_from_s: 0.0,
    };
    Ok((measured, result))
}

/// The facts of an idle run, from its levels and the samples of the
/// server (times on the same epoch).
pub fn idle_facts(
    result: &IdleResult,
    samples: &[Sample],
    hold: Duration,
    heartbeat: Option<Duration>,
) -> Facts {
    let levels: Vec<IdleLevelFacts> = result
        .levels
        .iter()
        .map(|l| level_facts(l, samples))
        .collect();
    // Memory per idle connection: only levels where every connection was
    // held, so a server that dropped some is not credited for them.
    let points: Vec<(f64, f64)> = levels
        .iter()
        .filter(|l| l.failed == 0 && l.closed_by_server == 0 && l.pss_bytes > 0)
        .map(|l| (f64::from(l.open), l.pss_bytes as f64))
        .collect();
    Facts::Idle(IdleFacts {
        hold_s: hold.as_secs_f64(),
        heartbeat_s: heartbeat.map(|h| h.as_secs_f64()),
        pss_fit: fit_line(&points),
        levels,
    })
}

fn level_facts(l: &IdleLevel, samples: &[Sample]) -> IdleLevelFacts {
    let held: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t_s >= l.hold_from_s && s.t_s <= l.hold_to_s && s.processes > 0)
        .collect();
    let median = |mut v: Vec<u64>| -> u64 {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let cpu = |s: &Sample| s.cpu_user_s + s.cpu_sys_s;
    let (mean, peak) = match (held.first(), held.last()) {
        (Some(a), Some(b)) if b.t_s > a.t_s => {
            let mean = (cpu(b) - cpu(a)) / (b.t_s - a.t_s);
            let peak = held
                .windows(2)
                .filter(|w| w[1].t_s > w[0].t_s)
                .map(|w| (cpu(w[1]) - cpu(w[0])) / (w[1].t_s - w[0].t_s))
                .fold(0.0, f64::max);
            (mean.max(0.0), peak.max(0.0))
        }
        _ => (0.0, 0.0),
    };
    IdleLevelFacts {
        connections: l.connections as u32,
        open: l.open as u32,
        failed: l.failed as u32,
        closed_by_server: l.closed_by_server as u32,
        open_s: l.open_s,
        pss_bytes: median(held.iter().map(|s| s.pss_bytes).collect()),
        rss_bytes: median(held.iter().map(|s| s.rss_bytes).collect()),
        threads: held.iter().map(|s| s.threads).max().unwrap_or(0),
        cpu_cores_mean: mean,
        cpu_cores_peak: peak,
        heartbeats: l.heartbeats,
        heartbeat_errors: l.heartbeat_errors,
        client_cpu_s: l.client_cpu_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, cpu_s: f64, pss_mib: u64) -> Sample {
        Sample {
            t_s,
            cpu_user_s: cpu_s,
            pss_bytes: pss_mib << 20,
            rss_bytes: pss_mib << 20,
            threads: 4,
            processes: 1,
            ..Sample::default()
        }
    }

    fn level(n: usize, from: f64, to: f64) -> IdleLevel {
        IdleLevel {
            connections: n,
            open: n,
            failed: 0,
            open_s: 0.1,
            hold_from_s: from,
            hold_to_s: to,
            closed_by_server: 0,
            heartbeats: 0,
            heartbeat_errors: 0,
            client_cpu_s: 0.0,
        }
    }

    #[test]
    fn levels_take_their_own_samples_and_the_slope_is_memory_per_connection() {
        // 10 MiB at 100 connections, 19 at 1,000: 1 MiB per 100 connections.
        let samples = vec![
            sample(0.5, 0.00, 10),
            sample(1.0, 0.05, 10),
            sample(1.5, 0.10, 10),
            sample(2.0, 0.20, 19),
            sample(2.5, 0.20, 19),
            sample(3.0, 0.20, 19),
        ];
        let result = IdleResult {
            interrupted: false,
            levels: vec![level(100, 0.4, 1.6), level(1000, 1.9, 3.1)],
            errors: Default::default(),
            connect: Default::default(),
            first_answer: Default::default(),
            io: Default::default(),
            io_fallback: None,
        };
        let Facts::Idle(f) = idle_facts(&result, &samples, Duration::from_secs(1), None) else {
            panic!("not idle facts")
        };
        assert_eq!(f.levels[0].pss_bytes, 10 << 20);
        assert_eq!(f.levels[1].pss_bytes, 19 << 20);
        // 0.1 CPU-seconds over 1 s of the first hold; the busiest interval 0.2 cores.
        assert!((f.levels[0].cpu_cores_mean - 0.1).abs() < 1e-9);
        assert!((f.levels[0].cpu_cores_peak - 0.1).abs() < 1e-9);
        assert_eq!(f.levels[1].cpu_cores_mean, 0.0);
        let fit = f.pss_fit.unwrap();
        assert!((fit.slope - (9u64 << 20) as f64 / 900.0).abs() < 1e-6);
    }

    #[test]
    fn a_level_the_server_cut_short_is_left_out_of_the_fit() {
        let samples = vec![sample(0.5, 0.0, 10), sample(2.0, 0.0, 11)];
        let mut cut = level(1000, 1.9, 3.1);
        cut.closed_by_server = 10;
        let result = IdleResult {
            interrupted: false,
            levels: vec![level(100, 0.4, 1.6), cut],
            errors: Default::default(),
            connect: Default::default(),
            first_answer: Default::default(),
            io: Default::default(),
            io_fallback: None,
        };
        let Facts::Idle(f) = idle_facts(&result, &samples, Duration::from_secs(1), None) else {
            panic!("not idle facts")
        };
        assert!(f.pss_fit.is_none(), "one usable level is no line");
    }
}
