//! `--start-at`: reading a wall-clock time (RFC 3339, Unix seconds, or
//! `+DURATION` from now) and waiting for it, so processes on several
//! machines start their loads together.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::durations::parse_duration;

/// How late a start may be before it is refused: later than this, the
/// parts' windows no longer line up and the merged throughput would be
/// spread over a gap.
pub(crate) const MAX_LATE: Duration = Duration::from_secs(1);

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm), for
/// RFC 3339 without a date library.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &str, what: &str) -> Result<u32, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{s}` is not a {what}"));
    }
    s.parse().map_err(|_| format!("`{s}` is not a {what}"))
}

/// RFC 3339: `2026-11-24T12:00:00Z`, `2026-11-24T12:00:00.250+01:00`.
fn parse_rfc3339(s: &str) -> Result<SystemTime, String> {
    let bad = || format!("`{s}` is not a time: write 2026-11-24T12:00:00Z, Unix seconds, or +30s");
    let (date, rest) = s.split_once(['T', 't', ' ']).ok_or_else(bad)?;
    let mut ymd = date.split('-');
    let (Some(y), Some(mo), Some(d), None) = (ymd.next(), ymd.next(), ymd.next(), ymd.next())
    else {
        return Err(bad());
    };
    let (y, mo, d) = (digits(y, "year")?, digits(mo, "month")?, digits(d, "day")?);
    let (clock, offset_s) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0i64)
    } else {
        let at = rest.rfind(['+', '-']).ok_or_else(bad)?;
        let (c, off) = rest.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':').ok_or_else(bad)?;
        let (oh, om) = (digits(oh, "offset")?, digits(om, "offset")?);
        if oh > 23 || om > 59 {
            return Err(bad());
        }
        (c, sign * i64::from(oh * 3600 + om * 60))
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.split(':');
    let (Some(h), Some(mi), Some(sec), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let (h, mi, sec) = (
        digits(h, "hour")?,
        digits(mi, "minute")?,
        digits(sec, "second")?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let nanos = if frac.is_empty() {
        0
    } else {
        digits(frac, "fraction of a second")?;
        let padded: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
        padded.parse::<u32>().map_err(|_| bad())?
    };
    let secs = days_from_civil(i64::from(y), mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + sec)
        - offset_s;
    let secs = u64::try_from(secs).map_err(|_| format!("`{s}` is before 1970"))?;
    UNIX_EPOCH
        .checked_add(Duration::new(secs, nanos))
        .ok_or_else(|| format!("`{s}` is too far ahead"))
}

/// The latest start accepted: the parts of a load pass the start to each
/// other as Unix nanoseconds in a u64, which end in the year 2554. (Later
/// times used to panic: a float too big for a Duration, a SystemTime
/// overflowing; issue 27.)
const LATEST_UNIX_NS: u64 = u64::MAX;

/// `--start-at`'s value: RFC 3339, Unix seconds (`1795521600` or with a
/// fraction), or `+DURATION` from now (`+5s`).
pub(crate) fn parse_start_at(s: &str) -> Result<SystemTime, String> {
    let too_late = || {
        format!(
            "`{s}` is too far ahead (the latest start is year 2554); \
             give a time such as 2026-11-24T12:00:00Z, Unix seconds, or +30s"
        )
    };
    let t = if let Some(d) = s.strip_prefix('+') {
        SystemTime::now()
            .checked_add(parse_duration(d)?)
            .ok_or_else(too_late)?
    } else if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let secs: f64 = s
            .parse()
            .map_err(|_| format!("`{s}` is not a number of seconds"))?;
        let since = Duration::try_from_secs_f64(secs).map_err(|_| too_late())?;
        UNIX_EPOCH.checked_add(since).ok_or_else(too_late)?
    } else {
        parse_rfc3339(s)?
    };
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) if d.as_nanos() > u128::from(LATEST_UNIX_NS) => Err(too_late()),
        _ => Ok(t),
    }
}

/// Nanoseconds since the Unix epoch.
pub(crate) fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// How far in the past `t` is (zero when it is still ahead).
pub(crate) fn late_by(t: SystemTime) -> Duration {
    SystemTime::now().duration_since(t).unwrap_or_default()
}

/// How far ahead `t` is (zero when it has passed).
pub(crate) fn ahead_by(t: SystemTime) -> Duration {
    t.duration_since(SystemTime::now()).unwrap_or_default()
}

/// Sleeps until `t`, waking every 50 ms for the cancel flag; false when
/// cancelled first.
pub(crate) fn wait_until(t: SystemTime, cancel: &AtomicBool) -> bool {
    loop {
        if cancel.load(Ordering::Relaxed) {
            return false;
        }
        let Ok(left) = t.duration_since(SystemTime::now()) else {
            return true;
        };
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(s: &str) -> u64 {
        parse_start_at(s)
            .unwrap()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[test]
    fn rfc3339_in_utc_and_with_offsets() {
        // `date -u -d 2026-11-24T12:00:00Z +%s`
        assert_eq!(unix("2026-11-24T12:00:00Z"), 1_795_521_600);
        assert_eq!(unix("2026-11-24T13:00:00+01:00"), 1_795_521_600);
        assert_eq!(unix("2026-11-24T11:30:00-00:30"), 1_795_521_600);
        assert_eq!(unix("1970-01-01T00:00:00Z"), 0);
        assert_eq!(unix("2000-02-29T00:00:00Z"), 951_782_400, "a leap day");
        let t = parse_start_at("2026-11-24T12:00:00.25Z").unwrap();
        assert_eq!(unix_ns(t) % 1_000_000_000, 250_000_000);
    }

    #[test]
    fn unix_seconds_and_relative() {
        assert_eq!(unix("1795521600"), 1_795_521_600);
        assert_eq!(unix_ns(parse_start_at("1.5").unwrap()), 1_500_000_000);
        let ahead = parse_start_at("+10s").unwrap();
        let left = ahead.duration_since(SystemTime::now()).unwrap();
        assert!(left > Duration::from_secs(9) && left <= Duration::from_secs(10));
    }

    #[test]
    fn nonsense_is_refused_with_the_forms_that_work() {
        for bad in [
            "tomorrow",
            "2026-13-01T00:00:00Z",
            "2026-11-24T25:00:00Z",
            "2026-11-24T12:00:00",
            "2026-11-24",
            "+soon",
            "1969-12-31T23:59:59Z",
        ] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
        assert!(parse_start_at("noon")
            .unwrap_err()
            .contains("2026-11-24T12:00:00Z"));
    }

    /// Issue 27: these panicked ("cannot convert float seconds to
    /// Duration", "overflow when adding duration to instant").
    #[test]
    fn issue_27_times_past_the_clock_s_range_are_refused_not_panics() {
        for far in [
            "99999999999999999999",
            "18446744073709551616",
            "9300000000000000000",
            "18446744074",
            "9999-12-31T23:59:59Z",
        ] {
            let e = parse_start_at(far).unwrap_err();
            assert!(e.contains("too far ahead"), "{far}: {e}");
        }
        assert!(parse_start_at("+9999999999999h").is_err());
        assert!(
            parse_start_at("18446744073").is_ok(),
            "year 2554 still fits"
        );
    }

    #[test]
    fn waiting_ends_at_the_time_or_on_cancel() {
        let cancel = AtomicBool::new(false);
        let t = SystemTime::now() + Duration::from_millis(30);
        assert!(wait_until(t, &cancel));
        assert!(SystemTime::now() >= t);
        cancel.store(true, Ordering::Relaxed);
        assert!(!wait_until(
            SystemTime::now() + Duration::from_secs(60),
            &cancel
        ));
        assert!(late_by(SystemTime::now() + Duration::from_secs(60)).is_zero());
    }
}
