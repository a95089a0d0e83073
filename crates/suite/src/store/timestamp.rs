//! RFC 3339 UTC text for the store's timestamps, computed from `SystemTime`
//! without a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// `2024-05-01T12:34:56.789Z`: UTC, millisecond precision, fixed width for
/// years 0000-9999, so the text sorts in time order and SQL can compare it.
pub fn rfc3339(t: SystemTime) -> String {
    // A clock before 1970 is a broken clock; the epoch is as good a lie as any
    // and keeps the fixed-width format.
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian (year, month, day) of a count of days since
/// 1970-01-01; Howard Hinnant's `civil_from_days`, which counts in 400-year
/// eras starting on 1 March so that leap days fall at the end of a year.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction.
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(at(951_782_400, 0)), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(at(951_868_799, 999)), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(at(1_700_000_000, 42)), "2023-11-14T22:13:20.042Z");
        assert_eq!(rfc3339(at(4_107_542_400, 0)), "2100-03-01T00:00:00.000Z");
        assert_eq!(rfc3339(at(253_402_300_799, 0)), "9999-12-31T23:59:59.000Z");
    }

    #[test]
    fn before_the_epoch_is_the_epoch() {
        let early = UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(rfc3339(early), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn every_day_for_four_centuries_follows_the_previous_one() {
        let mut prev = civil_from_days(-1);
        for days in 0..146_097 {
            let cur = civil_from_days(days);
            let next_day = (prev.0, prev.1, prev.2 + 1);
            let next_month = (prev.0, prev.1 + 1, 1);
            let next_year = (prev.0 + 1, 1, 1);
            assert!(
                cur == next_day || cur == next_month || cur == next_year,
                "{prev:?} -> {cur:?}"
            );
            prev = cur;
        }
    }
}
