//! The two time formats of the contract: ISO-8601 UTC timestamps with
//! milliseconds (`2020-01-12T10:53:17.773Z`) in work documents, and
//! IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) in Date headers.

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0')),
    )
}

fn to_millis(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, ms: i64) -> Option<i64> {
    let valid = (1..=12).contains(&mo)
        && d >= 1
        && d <= days_in_month(y, mo)
        && (0..24).contains(&h)
        && (0..60).contains(&mi)
        && (0..60).contains(&s);
    valid.then(|| ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

/// Parses exactly `YYYY-MM-DDTHH:MM:SS.sssZ` into milliseconds since the
/// epoch; anything else (another shape, an impossible date) is `None`.
pub fn parse_iso_millis(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    to_millis(
        digits(&b[0..4])?,
        digits(&b[5..7])?,
        digits(&b[8..10])?,
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
        digits(&b[20..23])?,
    )
}

/// Writes milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn format_iso_millis(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110
/// §5.6.7) into seconds since the epoch, checking the weekday too.
pub fn parse_http_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 29
        || &b[3..5] != b", "
        || b[7] != b' '
        || b[11] != b' '
        || b[16] != b' '
        || b[19] != b':'
        || b[22] != b':'
        || &b[25..] != b" GMT"
    {
        return None;
    }
    let weekday = DAYS.iter().position(|d| d.as_bytes() == &b[0..3])?;
    let month = MONTHS.iter().position(|m| m.as_bytes() == &b[8..11])? as i64 + 1;
    let ms = to_millis(
        digits(&b[12..16])?,
        month,
        digits(&b[5..7])?,
        digits(&b[17..19])?,
        digits(&b[20..22])?,
        digits(&b[23..25])?,
        0,
    )?;
    let days = ms.div_euclid(86_400_000);
    // 1970-01-01 was a Thursday (index 3 from Monday).
    let actual = (days + 3).rem_euclid(7) as usize;
    (actual == weekday).then_some(ms / 1000)
}

/// Writes seconds since the epoch as an IMF-fixdate.
pub fn format_http_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        DAYS[(days + 3).rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        for s in [
            "2020-01-12T10:53:17.773Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
            "2038-01-19T03:14:08.000Z",
        ] {
            let ms = parse_iso_millis(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(format_iso_millis(ms), s);
        }
        assert_eq!(parse_iso_millis("1970-01-01T00:00:01.500Z"), Some(1500));
    }

    #[test]
    fn iso_refusals() {
        for s in [
            "2020-13-45T99:00:00.000Z",
            "2019-02-29T00:00:00.000Z",
            "2020-01-12T24:00:00.000Z",
            "2020-01-12T10:53:17Z",
            "2020-01-12T10:53:17.773+00:00",
            "2020-01-12 10:53:17.773Z",
            "yesterday",
            "",
        ] {
            assert_eq!(parse_iso_millis(s), None, "{s}");
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT"),
            None,
            "wrong weekday"
        );
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), None);
        assert_eq!(
            format_http_date(784_111_777),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        for t in [0, 951_782_400, 1_700_000_000, 4_102_444_800] {
            assert_eq!(parse_http_date(&format_http_date(t)), Some(t));
        }
    }
}
