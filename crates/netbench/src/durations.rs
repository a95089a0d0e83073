//! Parsing human durations such as `10s`, `250ms`, `1.5m`: the suite
//! crate's parser, so the command line and suite files agree.

use std::time::Duration;

pub(crate) use netbench_suite::parse_duration;

/// A duration that must be above zero (timeouts: zero would fail everything).
pub(crate) fn positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be above zero".to_string()),
        d => Ok(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("100us"), Ok(Duration::from_micros(100)));
    }

    #[test]
    fn refusals() {
        assert!(parse_duration("").is_err());
        assert!(parse_duration("ten seconds").is_err());
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("-1s").is_err());
        assert!(positive_duration("0s").is_err());
        assert_eq!(positive_duration("1ms"), Ok(Duration::from_millis(1)));
    }
}
