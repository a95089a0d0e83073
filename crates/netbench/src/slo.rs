//! `load --slo-p50/--slo-p99/--slo-p999`: latency objectives read from the
//! command line and judged against a finished result, one line for each
//! one missed. Exit code 1 like `--max-error-rate` (`output::exit_code`).

use std::time::Duration;

use anyhow::{bail, Result};
use netbench_engine::LoadResult;
use netbench_report::format_duration_ns;

use crate::cli::LoadArgs;
use crate::durations::parse_duration;

/// A percentile of the measured latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Percentile {
    P50,
    P99,
    P999,
}

impl Percentile {
    fn flag(self) -> &'static str {
        match self {
            Percentile::P50 => "--slo-p50",
            Percentile::P99 => "--slo-p99",
            Percentile::P999 => "--slo-p999",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P99 => "p99",
            Percentile::P999 => "p99.9",
        }
    }

    fn of(self, result: &LoadResult) -> f64 {
        match self {
            Percentile::P50 => result.latency.p50_ns,
            Percentile::P99 => result.latency.p99_ns,
            Percentile::P999 => result.latency.p999_ns,
        }
    }
}

/// One objective: the percentile must not be above `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatencySlo {
    pub percentile: Percentile,
    pub limit: Duration,
    /// The limit as the user wrote it, for the message.
    pub given: String,
}

/// The SLOs given, checked: a latency above zero with its unit. A bare
/// number would be seconds to the duration parser, and `--slo-p99 5` meant
/// as milliseconds would pass everything, so the unit is required.
pub(crate) fn slos(args: &LoadArgs) -> Result<Vec<LatencySlo>> {
    let given = [
        (Percentile::P50, &args.slo_p50),
        (Percentile::P99, &args.slo_p99),
        (Percentile::P999, &args.slo_p999),
    ];
    let mut out = Vec::new();
    for (percentile, text) in given {
        let Some(text) = text else { continue };
        out.push(LatencySlo {
            percentile,
            limit: parse_limit(percentile.flag(), text)?,
            given: text.trim().to_string(),
        });
    }
    Ok(out)
}

fn parse_limit(flag: &str, text: &str) -> Result<Duration> {
    let t = text.trim();
    if t.starts_with('-') {
        bail!("{flag} `{text}` is negative; give a latency above zero, such as 5ms");
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        bail!("{flag} `{text}` has no unit; write it as {t}ms, {t}us or {t}s");
    }
    match parse_duration(t) {
        Ok(d) if d.is_zero() => {
            bail!("{flag} `{text}` is zero, which no answer can meet; give a latency above zero, such as 5ms")
        }
        Ok(d) => Ok(d),
        Err(e) => bail!("{flag}: {e}"),
    }
}

/// A line for each SLO the result missed, empty when all were met.
pub(crate) fn missed(result: &LoadResult, slos: &[LatencySlo]) -> Vec<String> {
    slos.iter()
        .filter_map(|slo| {
            let limit_ns = slo.limit.as_nanos() as f64;
            let name = slo.percentile.name();
            let flag = slo.percentile.flag();
            let limit = &slo.given;
            if result.latency.count == 0 {
                return Some(format!(
                    "no good answer was measured, so there is no {name} latency to meet {flag} {limit}"
                ));
            }
            let measured = slo.percentile.of(result);
            (measured > limit_ns).then(|| {
                format!(
                    "{name} latency {} is above {flag} {limit} by {} ({:+.1}%)",
                    format_duration_ns(measured),
                    format_duration_ns(measured - limit_ns),
                    (measured / limit_ns - 1.0) * 100.0
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::load_args as args;

    #[test]
    fn every_slo_is_read_with_its_unit() {
        let s = slos(&args(
            "netbench load --slo-p50 250us --slo-p99 5ms --slo-p999 1s http://h/",
        ))
        .unwrap();
        assert_eq!(
            s,
            [
                LatencySlo {
                    percentile: Percentile::P50,
                    limit: Duration::from_micros(250),
                    given: "250us".into(),
                },
                LatencySlo {
                    percentile: Percentile::P99,
                    limit: Duration::from_millis(5),
                    given: "5ms".into(),
                },
                LatencySlo {
                    percentile: Percentile::P999,
                    limit: Duration::from_secs(1),
                    given: "1s".into(),
                },
            ]
        );
        assert!(slos(&args("netbench load http://h/")).unwrap().is_empty());
    }

    #[test]
    fn zero_negative_unitless_and_garbage_are_refused_in_one_line() {
        for (value, says) in [
            ("0ms", "is zero"),
            ("0", "has no unit"),
            ("-1ms", "is negative"),
            ("5", "has no unit; write it as 5ms"),
            ("fast", "not a duration"),
            ("5parsecs", "unknown unit"),
        ] {
            let a = args(&format!("netbench load --slo-p99 {value} http://h/"));
            let e = slos(&a).expect_err(value).to_string();
            assert!(e.starts_with("--slo-p99"), "{value}: {e}");
            assert!(e.contains(says), "{value}: {e}");
            assert!(!e.contains('\n'), "{value}: {e}");
        }
    }

    fn result(count: u64, p99_ns: f64) -> LoadResult {
        let latency = serde_json::json!({"count": count, "min_ns": 1.0, "mean_ns": 1.0,
            "stdev_ns": 0.0, "p50_ns": 1.0e6, "p90_ns": 1.0, "p99_ns": p99_ns,
            "p999_ns": 9.0e6, "p9999_ns": 1.0, "max_ns": 1.0});
        serde_json::from_value(serde_json::json!({
            "interrupted": false, "requests": count, "errors": [], "duration_s": 1.0,
            "rps": 1.0, "latency": latency, "connect": latency, "connects": 1,
            "bytes_read": 0, "bytes_written": 0, "workers": [], "client_cpu_s": 0.1,
            "process_cpu_s": 0.1, "configured_connections": 1, "achieved_concurrency": 1.0,
            "rate": null, "verdict": {"client_bound": false, "reasons": [], "busiest_cpu": 0.1,
            "busiest_loop": 0.1, "in_flight": 1.0}
        }))
        .unwrap()
    }

    #[test]
    fn a_missed_slo_says_by_how_much_and_a_met_one_says_nothing() {
        let s = slos(&args(
            "netbench load --slo-p50 2ms --slo-p99 5ms --slo-p999 10ms http://h/",
        ))
        .unwrap();
        assert_eq!(
            missed(&result(100, 7.31e6), &s),
            ["p99 latency 7.31ms is above --slo-p99 5ms by 2.31ms (+46.2%)"]
        );
        assert!(
            missed(&result(100, 5.0e6), &s).is_empty(),
            "at the limit is met"
        );
        let none = missed(&result(0, 0.0), &s);
        assert_eq!(none.len(), 3);
        assert_eq!(
            none[1],
            "no good answer was measured, so there is no p99 latency to meet --slo-p99 5ms"
        );
    }
}
