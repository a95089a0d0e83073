//! Whether the client was the bottleneck, decided from evidence that every
//! result carries: how busy each worker's event loop was, what share of the
//! connections were in flight, and for open loop how much of the target rate
//! was reached.

use crate::result::{RateSummary, Verdict, WorkerReport};

/// A loop busier than this hardly waited for the network, and a worker using
/// this much of a core had little time to spare: either way the client may
/// have set the pace. Kept on the cautious side: a flag on a number that was
/// fine costs less than a ranking decided by the client.
const SATURATED: f64 = 0.85;
/// Closed loop keeps every connection busy; fewer in flight means the client
/// was slow to send the next request.
const MIN_IN_FLIGHT: f64 = 0.90;
const MIN_RATE: f64 = 0.95;
/// Above this share of failed attempts, throughput × latency of the good
/// answers no longer describes how busy the connections were.
const MAX_ERRORS_FOR_IN_FLIGHT: f64 = 0.10;

/// `kept_busy` is the closed loop's configured connections, which it keeps
/// busy; None for open loop, and for a plan whose connections end one by one
/// by design (a storm: no reconnects), where a share in flight says nothing
/// about the client.
pub(crate) fn judge(
    workers: &[WorkerReport],
    kept_busy: Option<usize>,
    achieved: f64,
    rate: Option<RateSummary>,
    error_rate: f64,
) -> Verdict {
    let busiest_cpu = workers
        .iter()
        .filter(|w| w.wall_s > 0.0)
        .map(|w| w.cpu_s / w.wall_s)
        .fold(0.0, f64::max);
    let busiest_loop = workers.iter().map(|w| w.loop_busy).fold(0.0, f64::max);
    let in_flight = kept_busy
        .filter(|_| rate.is_none())
        .map(|n| achieved / n.max(1) as f64);

    let mut deciding = Vec::new();
    let mut context = Vec::new();
    let saturated = busiest_loop >= SATURATED || busiest_cpu >= SATURATED;
    let loop_phrase = format!("event loop busy {:.0}%", busiest_loop * 100.0);
    let cpu_phrase = format!("client CPU {:.0}% of 1 core", busiest_cpu * 100.0);
    if saturated {
        deciding.push(cpu_phrase);
        deciding.push(loop_phrase);
    } else {
        context.push(cpu_phrase);
        context.push(loop_phrase);
    }
    let mut starved = false;
    if error_rate > MAX_ERRORS_FOR_IN_FLIGHT {
        context.push(format!(
            "connections in flight not judged: {:.0}% of attempts failed",
            error_rate * 100.0
        ));
    } else if let Some(f) = in_flight {
        let phrase = format!("{:.0}% of connections in flight", f * 100.0);
        if f < MIN_IN_FLIGHT {
            starved = true;
            deciding.push(phrase);
        } else {
            context.push(phrase);
        }
    }
    if let Some(r) = rate {
        let phrase = format!("{:.0}% of the target rate", r.ratio * 100.0);
        if r.ratio < MIN_RATE {
            if saturated {
                deciding.push(phrase);
            } else {
                context.push(format!("{phrase}: the server fell behind"));
            }
        } else {
            context.push(phrase);
        }
    }
    deciding.extend(context);
    Verdict {
        client_bound: saturated || starved,
        reasons: deciding,
        busiest_cpu,
        busiest_loop,
        in_flight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(cpu_s: f64, loop_busy: f64) -> WorkerReport {
        WorkerReport {
            connections: 10,
            requests: 100,
            errors: 0,
            cpu_s,
            wall_s: 1.0,
            loop_busy,
        }
    }

    #[test]
    fn idle_client_with_full_pipeline_is_not_bound() {
        let v = judge(&[worker(0.41, 0.45)], Some(100), 99.0, None, 0.0);
        assert!(!v.client_bound);
        assert_eq!(v.reasons[0], "client CPU 41% of 1 core");
        assert!(v
            .reasons
            .contains(&"99% of connections in flight".to_string()));
    }

    #[test]
    fn a_saturated_loop_is_bound() {
        let v = judge(
            &[worker(0.3, 0.5), worker(0.5, 0.98)],
            Some(100),
            95.0,
            None,
            0.0,
        );
        assert!(v.client_bound);
        assert_eq!(v.reasons[1], "event loop busy 98%");
        assert!((v.busiest_cpu - 0.5).abs() < 1e-9);
        // A core fully used is saturated even if epoll_wait took part of it.
        let v = judge(&[worker(0.96, 0.85)], Some(100), 100.0, None, 0.0);
        assert!(v.client_bound);
        assert_eq!(v.reasons[0], "client CPU 96% of 1 core");
    }

    #[test]
    fn half_the_connections_idle_is_bound() {
        let v = judge(&[worker(0.6, 0.7)], Some(10_000), 4_900.0, None, 0.0);
        assert!(v.client_bound);
        assert_eq!(v.reasons[0], "49% of connections in flight");
        // A server that refuses most attempts leaves nothing to judge by.
        let v = judge(&[worker(0.02, 0.02)], Some(10), 0.0, None, 1.0);
        assert!(!v.client_bound);
        assert!(v
            .reasons
            .iter()
            .any(|r| r.contains("not judged: 100% of attempts failed")));
    }

    #[test]
    fn open_loop_shortfall_blames_the_server_when_the_client_idles() {
        let rate = RateSummary {
            target_per_s: 1000.0,
            achieved_per_s: 500.0,
            ratio: 0.5,
        };
        let v = judge(&[worker(0.2, 0.2)], Some(100), 3.0, Some(rate), 0.0);
        assert!(!v.client_bound);
        assert!(v.in_flight.is_none());
        assert!(v.reasons.iter().any(|r| r.contains("server fell behind")));
        let v = judge(&[worker(0.99, 0.99)], Some(100), 3.0, Some(rate), 0.0);
        assert!(v.client_bound);
    }
}
