//! Parsing human durations such as `10s`, `250ms`, `1.5m`: the suite
//! crate's parser, so the command line and suite files agree.

pub(crate) use netbench_suite::parse_duration;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
    }
}
