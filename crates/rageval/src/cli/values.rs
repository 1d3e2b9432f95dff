//! Value parsers the flags share: whole numbers with a floor, seconds, dollars, shares.
//! Each says what it expected; clap names the flag and the value given.

/// `--max-failed`: a share of judged cells, as a percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxFailed(pub f64);

pub(super) fn parse_max_failed(raw: &str) -> Result<MaxFailed, String> {
    let number = raw.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(percent) if (0.0..=100.0).contains(&percent) => Ok(MaxFailed(percent / 100.0)),
        _ => Err("expected a percentage from 0 to 100, e.g. 10%".into()),
    }
}

pub(super) fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(
    raw: &str,
) -> Result<T, String> {
    match raw.parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        _ => Err("expected a whole number ≥ 1".into()),
    }
}

pub(super) fn at_least_two(raw: &str) -> Result<usize, String> {
    match raw.parse::<usize>() {
        Ok(n) if n >= 2 => Ok(n),
        _ => Err("expected a whole number ≥ 2".into()),
    }
}

pub(super) fn positive_seconds(raw: &str) -> Result<std::time::Duration, String> {
    raw.parse::<f64>()
        .ok()
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "expected a positive number of seconds".into())
}

pub(super) fn non_negative_dollars(raw: &str) -> Result<f64, String> {
    match raw.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err("expected a number of dollars ≥ 0".into()),
    }
}
