//! Calendar formatting without a date library: UTC timestamps for results and for the
//! embedded target's `createdAt`, ISO dates for generated metadata, and durations for
//! people. Owns nothing else.

use std::time::{SystemTime, UNIX_EPOCH};

/// (year, month, day) from days since 1970-01-01 (Howard Hinnant's civil_from_days).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = (z - era * 146_097) as u64;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe as i64 + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD` for days since the epoch.
pub fn date(days: i64) -> String {
    let mut s = String::with_capacity(10);
    let _ = write_date(&mut s, days);
    s
}

/// [`date`], written into `out`.
pub fn write_date(out: &mut impl std::fmt::Write, days: i64) -> std::fmt::Result {
    let (y, m, d) = civil_from_days(days);
    write!(out, "{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch.
pub fn datetime_ms(ms: i64) -> String {
    let mut s = String::with_capacity(24);
    let _ = write_datetime_ms(&mut s, ms);
    s
}

/// [`datetime_ms`], written into `out`.
pub fn write_datetime_ms(out: &mut impl std::fmt::Write, ms: i64) -> std::fmt::Result {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (h, mi, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    write_date(out, days)?;
    write!(out, "T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// Alfresco's REST date style: `YYYY-MM-DDTHH:MM:SS.mmm+0000`.
pub fn alfresco_datetime_ms(ms: i64) -> String {
    let mut s = datetime_ms(ms);
    s.pop();
    s.push_str("+0000");
    s
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Compact UTC stamp for directory and folder names: `20261122T001532Z`.
pub fn compact_now() -> String {
    let s = datetime_ms(now_ms());
    let digits: String = s[..19].chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{digits}Z")
}

/// Parses `YYYY-MM-DD` or an ISO-8601 datetime (`Z`, `+hh:mm`, `+hhmm` or no zone) to epoch ms.
pub fn parse_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = s[0..4].parse().ok()?;
    let m: u32 = s[5..7].parse().ok()?;
    let d: u32 = s[8..10].parse().ok()?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    if b.len() == 10 {
        return Some(days * 86_400_000);
    }
    if b[10] != b'T' || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let h: i64 = s[11..13].parse().ok()?;
    let mi: i64 = s[14..16].parse().ok()?;
    let se: i64 = s[17..19].parse().ok()?;
    if h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut ms = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        let digits = &frac[..n.min(3)];
        ms = digits.parse::<i64>().ok()? * 10i64.pow(3 - digits.len() as u32);
        rest = &frac[n..];
    }
    let offset_min = match rest {
        "" | "Z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let z = rest[1..].replace(':', "");
            if z.len() != 4 || !z.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            sign * (z[0..2].parse::<i64>().ok()? * 60 + z[2..4].parse::<i64>().ok()?)
        }
    };
    Some(days * 86_400_000 + (h * 3600 + mi * 60 + se) * 1000 + ms - offset_min * 60_000)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = (y - era * 400) as u64;
    let mp = if m > 2 { m - 3 } else { m + 9 } as u64;
    let doy = (153 * mp + 2) / 5 + d as u64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe as i64 - 719_468
}

/// Hours for people: `31.2 h`, `47 min`, `52 s`.
pub fn human_hours(h: f64) -> String {
    if h >= 1.0 {
        format!("{h:.1} h")
    } else if h * 60.0 >= 1.0 {
        format!("{:.1} min", h * 60.0)
    } else {
        format!("{:.1} s", h * 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(20_000), "2024-10-04");
        for ms in [0i64, 1_700_000_000_123, 951_782_400_000] {
            assert_eq!(parse_iso(&datetime_ms(ms)), Some(ms));
            assert_eq!(parse_iso(&alfresco_datetime_ms(ms)), Some(ms));
        }
        assert_eq!(
            parse_iso("2024-02-29"),
            Some(days_from_civil(2024, 2, 29) * 86_400_000)
        );
        assert_eq!(parse_iso("2023-02-29"), None);
        assert_eq!(
            parse_iso("2024-01-01T01:00:00+01:00"),
            Some(days_from_civil(2024, 1, 1) * 86_400_000)
        );
        assert_eq!(parse_iso("not a date"), None);
    }
}
