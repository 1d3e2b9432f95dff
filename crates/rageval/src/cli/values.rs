//! Value parsers the flags share: whole numbers with a floor, dollars. Values with a type of
//! their own (a format, a share of failed cells, seconds) parse by that type's rule, which
//! the Python package follows too.
//! Each says what it expected; clap names the flag and the value given.

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

pub(super) fn non_negative_dollars(raw: &str) -> Result<f64, String> {
    match raw.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err("expected a number of dollars ≥ 0".into()),
    }
}
