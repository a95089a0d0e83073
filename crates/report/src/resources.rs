//! What the server used during one measurement, from its /proc samples:
//! CPU (in cores and per request) and memory (peak RSS and PSS).

use netbench_records::Sample;
use serde::Serialize;

/// The server's use of the machine during one measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServerUse {
    /// CPU time (user + system, the whole process tree) between the first
    /// and the last sample.
    pub cpu_s: f64,
    /// `cpu_s` over the time between those samples: 1.0 is one busy core.
    pub cpu_cores: f64,
    /// Answers per second of server CPU: `rps / cpu_cores`. None when the
    /// server used no measurable CPU.
    pub requests_per_cpu_s: Option<f64>,
    pub peak_rss_bytes: u64,
    pub peak_pss_bytes: u64,
    pub peak_threads: u32,
}

/// The server's use from the samples of one measurement and its rate of
/// answers; None with fewer than two samples (a window is needed).
pub fn server_use(samples: &[Sample], rps: f64) -> Option<ServerUse> {
    let first = samples.first()?;
    let last = samples.last()?;
    let window = last.t_s - first.t_s;
    if samples.len() < 2 || window <= 0.0 {
        return None;
    }
    let cpu = |s: &Sample| s.cpu_user_s + s.cpu_sys_s;
    let cpu_s = (cpu(last) - cpu(first)).max(0.0);
    let cpu_cores = cpu_s / window;
    Some(ServerUse {
        cpu_s,
        cpu_cores,
        requests_per_cpu_s: (cpu_cores > 0.0).then(|| rps / cpu_cores),
        peak_rss_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        peak_pss_bytes: samples.iter().map(|s| s.pss_bytes).max().unwrap_or(0),
        peak_threads: samples.iter().map(|s| s.threads).max().unwrap_or(0),
    })
}

/// The largest RSS in `samples`; None when there is none above zero (no
/// samples, or only ones taken after the server was gone).
pub fn peak_rss(samples: &[Sample]) -> Option<u64> {
    samples
        .iter()
        .map(|s| s.rss_bytes)
        .max()
        .filter(|&rss| rss > 0)
}

/// Memory per connection: the growth of peak RSS from the smallest
/// connection count of the same test to `connections`, per added connection.
/// The runtime's fixed cost cancels out; None at the smallest count itself.
pub fn rss_per_connection(
    base_connections: u32,
    base_rss: f64,
    connections: u32,
    rss: f64,
) -> Option<f64> {
    (connections > base_connections)
        .then(|| (rss - base_rss) / f64::from(connections - base_connections))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, cpu: f64, rss: u64) -> Sample {
        Sample {
            t_s,
            cpu_user_s: cpu * 0.75,
            cpu_sys_s: cpu * 0.25,
            rss_bytes: rss,
            pss_bytes: rss / 2,
            threads: 4,
            ..Sample::default()
        }
    }

    #[test]
    fn cpu_over_the_sampled_window() {
        let s = [
            sample(0.0, 10.0, 100),
            sample(1.0, 10.5, 300),
            sample(2.0, 11.0, 200),
        ];
        let u = server_use(&s, 50_000.0).unwrap();
        assert!((u.cpu_s - 1.0).abs() < 1e-12);
        assert!((u.cpu_cores - 0.5).abs() < 1e-12);
        assert!((u.requests_per_cpu_s.unwrap() - 100_000.0).abs() < 1e-6);
        assert_eq!(u.peak_rss_bytes, 300);
        assert_eq!(u.peak_pss_bytes, 150);
        assert!(server_use(&s[..1], 1.0).is_none());
        let idle = [sample(0.0, 1.0, 1), sample(1.0, 1.0, 1)];
        assert_eq!(server_use(&idle, 10.0).unwrap().requests_per_cpu_s, None);
    }

    #[test]
    fn peak_rss_is_the_largest_sample_even_alone() {
        assert_eq!(peak_rss(&[sample(0.0, 1.0, 7)]), Some(7));
        assert_eq!(
            peak_rss(&[
                sample(0.0, 1.0, 7),
                sample(0.1, 1.0, 9),
                sample(0.2, 1.0, 0)
            ]),
            Some(9)
        );
        assert_eq!(peak_rss(&[]), None);
        assert_eq!(peak_rss(&[sample(0.0, 1.0, 0)]), None, "the group was gone");
    }

    #[test]
    fn memory_per_added_connection() {
        // 10 MB at 100 connections, 110 MB at 10,000: 100 MB / 9,900.
        let per = rss_per_connection(100, 10e6, 10_000, 110e6).unwrap();
        assert!((per - 100e6 / 9_900.0).abs() < 1e-6);
        assert_eq!(rss_per_connection(100, 10e6, 100, 10e6), None);
    }
}
