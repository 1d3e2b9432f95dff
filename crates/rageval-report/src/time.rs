//! UTC timestamps for manifests, without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as RFC 3339 in UTC to the second (`2026-11-22T04:24:33Z`).
pub fn utc_timestamp() -> String {
    format_unix_seconds(unix_now())
}

/// Now, in seconds since 1970-01-01T00:00:00Z.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Seconds since 1970 of a timestamp as [`utc_timestamp`] writes it (`2026-11-22T04:24:33Z`);
/// `None` for any other shape.
pub fn parse_utc_timestamp(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date_parts = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (
        date_parts.next()?.ok()?,
        date_parts.next()?.ok()?,
        date_parts.next()?.ok()?,
    );
    let mut time_parts = time.splitn(3, ':').map(str::parse::<u64>);
    let (hour, minute, second) = (
        time_parts.next()?.ok()?,
        time_parts.next()?.ok()?,
        time_parts.next()?.ok()?,
    );
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second.min(60))
}

/// A duration in words, to the two largest units: `3 days 2 hours`, `5 minutes`.
pub fn duration_words(seconds: u64) -> String {
    let units = [("day", 86_400), ("hour", 3600), ("minute", 60)];
    let mut parts = Vec::new();
    let mut rest = seconds;
    for (name, size) in units {
        let count = rest / size;
        rest %= size;
        if count > 0 || !parts.is_empty() {
            parts.push((count, name));
        }
        if parts.len() == 2 {
            break;
        }
    }
    let words: Vec<String> = parts
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, name)| format!("{count} {name}{}", if count == 1 { "" } else { "s" }))
        .collect();
    if words.is_empty() {
        "under a minute".into()
    } else {
        words.join(" ")
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`,
/// the inverse of [`civil_from_days`]).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn format_unix_seconds(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix_seconds(0), "1970-01-01T00:00:00Z");
        // `date -u -d @1795321473` → 2026-11-22T04:24:33Z
        assert_eq!(format_unix_seconds(1_795_321_473), "2026-11-22T04:24:33Z");
        // A leap day: 2024-02-29T12:00:00Z.
        assert_eq!(format_unix_seconds(1_709_208_000), "2024-02-29T12:00:00Z");
    }

    #[test]
    fn parses_what_it_writes() {
        for seconds in [0, 1_795_321_473, 1_709_208_000, 951_782_400] {
            assert_eq!(
                parse_utc_timestamp(&format_unix_seconds(seconds)),
                Some(seconds)
            );
        }
        assert_eq!(parse_utc_timestamp("2026-11-22 04:24:33"), None);
        assert_eq!(parse_utc_timestamp("2026-13-22T04:24:33Z"), None);
    }

    #[test]
    fn durations_read_in_their_two_largest_units() {
        assert_eq!(duration_words(3 * 86_400 + 2 * 3600 + 59), "3 days 2 hours");
        assert_eq!(duration_words(86_400 + 30), "1 day");
        assert_eq!(duration_words(300), "5 minutes");
        assert_eq!(duration_words(59), "under a minute");
    }
}
