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

/// A run ending by request count drains: its last round keeps fewer
/// connections busy, which lowers the in-flight share by up to one round in
/// however many each connection made. With at least 20 attempts per
/// connection that costs at most 5%, inside the 10% [`MIN_IN_FLIGHT`]
/// allows; with fewer the share says more about the count than about the
/// client (`-n 1 -c 100` showed "37% in flight"), so it is not judged.
const MIN_ATTEMPTS_PER_CONNECTION: u64 = 20;

/// A measured window shorter than this is mostly the connections' set-up
/// (connects, handshakes, the first sends): how busy the client was over it
/// says nothing about the pace it could keep (`-n 1 -c 100` measured 1 ms
/// at "95% of 1 core"), so CPU and loop are not judged.
const MIN_WINDOW_S: f64 = 0.1;

/// What a verdict is decided from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Evidence<'a> {
    pub workers: &'a [WorkerReport],
    /// The closed loop's configured connections, which it keeps busy; None
    /// for open loop, and for a plan whose connections end one by one by
    /// design (a storm: no reconnects), where a share in flight says nothing
    /// about the client.
    pub kept_busy: Option<usize>,
    /// Requests each of those connections keeps in flight: HTTP/2's
    /// streams, else 1. The configured concurrency is connections × streams
    /// (issue 42: streams in flight were compared with connections, "799%
    /// of connections in flight", which could never flag a client that
    /// kept too few streams busy).
    pub streams: usize,
    /// Little's law: the time-average in flight.
    pub achieved: f64,
    pub rate: Option<RateSummary>,
    pub error_rate: f64,
    /// Answers plus failures while measuring.
    pub attempts: u64,
    /// The run ended by request count: a rate over it is not the pace asked
    /// for (`-R 10 -n 3` showed "180% of the target rate").
    pub ended_by_count: bool,
    /// Merged parts that did not all run at the same time, named: their
    /// connections were never all open together, so their share in flight
    /// over the union of the windows says nothing about the client.
    pub apart: Option<&'a str>,
}

pub(crate) fn judge(e: &Evidence<'_>) -> Verdict {
    let busiest_cpu = e
        .workers
        .iter()
        .filter(|w| w.wall_s > 0.0)
        .map(|w| w.cpu_s / w.wall_s)
        .fold(0.0, f64::max);
    let busiest_loop = e.workers.iter().map(|w| w.loop_busy).fold(0.0, f64::max);
    let configured = e.kept_busy.map(|n| n.max(1) * e.streams.max(1));
    let in_flight = configured
        .filter(|_| e.rate.is_none())
        .map(|n| e.achieved / n as f64);

    let mut deciding = Vec::new();
    let mut context = Vec::new();
    let window_s = e.workers.iter().map(|w| w.wall_s).fold(0.0, f64::max);
    let too_short = !e.workers.is_empty() && window_s < MIN_WINDOW_S;
    let saturated = !too_short && (busiest_loop >= SATURATED || busiest_cpu >= SATURATED);
    let mut loop_phrase = format!("event loop busy {:.0}%", busiest_loop * 100.0);
    let cpu_phrase = format!("client CPU {:.0}% of 1 core", busiest_cpu * 100.0);
    if too_short {
        loop_phrase = format!(
            "{loop_phrase}; neither judged: measured for {:.1} ms, under {:.0} ms",
            window_s * 1e3,
            MIN_WINDOW_S * 1e3
        );
    }
    if e.attempts == 0 {
        // Nothing was sent or nothing measured: no rule has anything to go on.
        return Verdict {
            client_bound: false,
            judged: false,
            reasons: vec![
                "not judged: no request was answered or failed while measuring".into(),
                cpu_phrase,
                loop_phrase,
            ],
            busiest_cpu,
            busiest_loop,
            in_flight,
        };
    }
    if saturated {
        deciding.push(cpu_phrase);
        deciding.push(loop_phrase);
    } else {
        context.push(cpu_phrase);
        context.push(loop_phrase);
    }
    let mut starved = false;
    if let (Some(f), Some(n)) = (in_flight, configured) {
        let what = if e.streams > 1 {
            "streams"
        } else {
            "connections"
        };
        let phrase = format!("{:.0}% of {what} in flight", f * 100.0);
        let rounds = e.attempts / n as u64;
        if e.error_rate > MAX_ERRORS_FOR_IN_FLIGHT {
            context.push(format!(
                "connections in flight not judged: {:.0}% of attempts failed",
                e.error_rate * 100.0
            ));
        } else if let Some(apart) = e.apart {
            context.push(format!("{phrase} not judged: {apart}"));
        } else if rounds < MIN_ATTEMPTS_PER_CONNECTION {
            context.push(format!(
                "{phrase} not judged: {} attempts for {n} {what}, \
                 fewer than {MIN_ATTEMPTS_PER_CONNECTION} each",
                e.attempts
            ));
        } else if f < MIN_IN_FLIGHT {
            starved = true;
            deciding.push(phrase);
        } else {
            context.push(phrase);
        }
    }
    if let Some(r) = e.rate {
        if e.ended_by_count {
            context.push(
                "target rate not judged: the run ended by request count, not after its time".into(),
            );
        } else {
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
    }
    deciding.extend(context);
    Verdict {
        client_bound: saturated || starved,
        judged: true,
        reasons: deciding,
        busiest_cpu,
        busiest_loop,
        in_flight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A duration run's evidence: enough attempts, nothing apart.
    fn ev(
        workers: &[WorkerReport],
        kept_busy: Option<usize>,
        achieved: f64,
        rate: Option<RateSummary>,
        error_rate: f64,
    ) -> Evidence<'_> {
        Evidence {
            workers,
            kept_busy,
            achieved,
            rate,
            error_rate,
            attempts: 1_000_000,
            ended_by_count: false,
            apart: None,
            streams: 1,
        }
    }

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

    /// Issue 42: with HTTP/2 streams, the configured concurrency is
    /// connections × streams. 100 connections of 10 streams with 500 in
    /// flight kept half its streams idle: that is a client that held back,
    /// where "500% of connections in flight" never flagged it.
    #[test]
    fn streams_in_flight_are_judged_against_connections_times_streams() {
        let w = [worker(0.41, 0.45)];
        let mut e = ev(&w, Some(100), 500.0, None, 0.0);
        e.streams = 10;
        let v = judge(&e);
        assert!(v.client_bound, "{:?}", v.reasons);
        assert_eq!(v.reasons[0], "50% of streams in flight");
        assert_eq!(v.in_flight, Some(0.5));
        // Every stream busy: not bound.
        let mut e = ev(&w, Some(100), 995.0, None, 0.0);
        e.streams = 10;
        let v = judge(&e);
        assert!(!v.client_bound, "{:?}", v.reasons);
        assert!(v.reasons.contains(&"100% of streams in flight".to_string()));
    }

    #[test]
    fn idle_client_with_full_pipeline_is_not_bound() {
        let v = judge(&ev(&[worker(0.41, 0.45)], Some(100), 99.0, None, 0.0));
        assert!(!v.client_bound);
        assert_eq!(v.reasons[0], "client CPU 41% of 1 core");
        assert!(v
            .reasons
            .contains(&"99% of connections in flight".to_string()));
    }

    #[test]
    fn a_window_too_short_to_say_judges_neither_cpu_nor_loop() {
        let short = WorkerReport {
            wall_s: 0.001,
            ..worker(0.00095, 0.24)
        };
        let v = judge(&ev(&[short], None, 1.0, None, 0.0));
        assert!(!v.client_bound, "{:?}", v.reasons);
        assert_eq!(
            v.reasons[1],
            "event loop busy 24%; neither judged: measured for 1.0 ms, under 100 ms"
        );
        // The same share over a longer window is judged.
        let long = WorkerReport {
            wall_s: 0.2,
            ..worker(0.19, 0.24)
        };
        assert!(judge(&ev(&[long], None, 1.0, None, 0.0)).client_bound);
    }

    #[test]
    fn a_saturated_loop_is_bound() {
        let v = judge(&ev(
            &[worker(0.3, 0.5), worker(0.5, 0.98)],
            Some(100),
            95.0,
            None,
            0.0,
        ));
        assert!(v.client_bound);
        assert_eq!(v.reasons[1], "event loop busy 98%");
        assert!((v.busiest_cpu - 0.5).abs() < 1e-9);
        // A core fully used is saturated even if epoll_wait took part of it.
        let v = judge(&ev(&[worker(0.96, 0.85)], Some(100), 100.0, None, 0.0));
        assert!(v.client_bound);
        assert_eq!(v.reasons[0], "client CPU 96% of 1 core");
    }

    #[test]
    fn half_the_connections_idle_is_bound() {
        let v = judge(&ev(&[worker(0.6, 0.7)], Some(10_000), 4_900.0, None, 0.0));
        assert!(v.client_bound);
        assert_eq!(v.reasons[0], "49% of connections in flight");
        // A server that refuses most attempts leaves nothing to judge by.
        let v = judge(&ev(&[worker(0.02, 0.02)], Some(10), 0.0, None, 1.0));
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
        let v = judge(&ev(&[worker(0.2, 0.2)], Some(100), 3.0, Some(rate), 0.0));
        assert!(!v.client_bound);
        assert!(v.in_flight.is_none());
        assert!(v.reasons.iter().any(|r| r.contains("server fell behind")));
        let v = judge(&ev(&[worker(0.99, 0.99)], Some(100), 3.0, Some(rate), 0.0));
        assert!(v.client_bound);
    }

    /// Issue 27: rules with too little to go on say so instead of deciding.
    #[test]
    fn issue_27_rules_without_enough_evidence_are_not_judged() {
        let idle = [worker(0.02, 0.05)];
        // -n 1 -c 100: one attempt cannot keep 100 connections busy.
        let mut e = ev(&idle, Some(100), 37.0, None, 0.0);
        e.attempts = 1;
        let v = judge(&e);
        assert!(!v.client_bound && v.judged, "{v:?}");
        assert!(v.reasons.iter().any(|r| r
            == "37% of connections in flight not judged: 1 attempts for 100 connections, fewer than 20 each"), "{v:?}");
        // Parts that never ran together.
        let mut e = ev(&idle, Some(100), 50.0, None, 0.0);
        e.apart = Some("b.hlog started after a.hlog ended");
        let v = judge(&e);
        assert!(!v.client_bound, "{v:?}");
        assert!(v
            .reasons
            .iter()
            .any(|r| r.ends_with("not judged: b.hlog started after a.hlog ended")));
        // No request at all: nothing is judged.
        let mut e = ev(&idle, Some(100), 0.0, None, 0.0);
        e.attempts = 0;
        let v = judge(&e);
        assert!(!v.client_bound && !v.judged, "{v:?}");
        assert!(v.reasons[0].starts_with("not judged: no request"));
        // -R 10 -n 3: the rate of a run cut short by its count.
        let rate = RateSummary {
            target_per_s: 10.0,
            achieved_per_s: 18.0,
            ratio: 1.8,
        };
        let mut e = ev(&idle, Some(1), 0.1, Some(rate), 0.0);
        e.ended_by_count = true;
        let v = judge(&e);
        assert!(!v.reasons.iter().any(|r| r.contains("180%")), "{v:?}");
        assert!(v
            .reasons
            .iter()
            .any(|r| r.starts_with("target rate not judged")));
        // Enough evidence still decides.
        let mut e = ev(&idle, Some(100), 37.0, None, 0.0);
        e.attempts = 2_000;
        assert!(judge(&e).client_bound);
    }
}
