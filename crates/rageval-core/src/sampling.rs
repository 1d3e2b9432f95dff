//! Consistent sampling by id: `--sample 10%` keeps the traces (samples) whose id hashes into
//! the first tenth of the hash space, so the same 10% is chosen for every metric, every
//! rerun and every machine, and a trace that arrives later is in or out by its id alone.
//!
//! The rule: the first 8 bytes of the SHA-256 of the id, as a big-endian number, below
//! `rate × 2⁶⁴`. It never depends on order, time or a seed; a larger rate keeps every id a
//! smaller one keeps (the samples nest).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// The share of ids kept, in (0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleRate(f64);

impl SampleRate {
    /// Every id.
    pub const ALL: SampleRate = SampleRate(1.0);

    /// A rate in (0, 1], or why not.
    pub fn new(rate: f64) -> Result<Self, String> {
        if rate.is_finite() && rate > 0.0 && rate <= 1.0 {
            Ok(SampleRate(rate))
        } else {
            Err(format!(
                "a sample rate is a share in (0, 1] or a percentage in (0%, 100%], not {rate}"
            ))
        }
    }

    /// The share, in (0, 1].
    pub fn rate(self) -> f64 {
        self.0
    }

    /// Whether the id `id` is in the sample.
    pub fn holds(self, id: &str) -> bool {
        if self.0 >= 1.0 {
            return true;
        }
        let digest = Sha256::digest(id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        let position = u64::from_be_bytes(first) as f64 / 2f64.powi(64);
        position < self.0
    }
}

impl FromStr for SampleRate {
    type Err = String;

    /// `10%`, `2.5%` or a share such as `0.1`.
    fn from_str(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let malformed = || format!("`{text}` is not a sample rate: expected e.g. 10% or 0.1");
        let rate = match trimmed.strip_suffix('%') {
            Some(percent) => percent.trim().parse::<f64>().map_err(|_| malformed())? / 100.0,
            None => trimmed.parse::<f64>().map_err(|_| malformed())?,
        };
        SampleRate::new(rate)
    }
}

impl fmt::Display for SampleRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0 * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_as_percentages_or_shares() {
        assert_eq!("10%".parse::<SampleRate>().unwrap().rate(), 0.1);
        assert_eq!(" 0.25 ".parse::<SampleRate>().unwrap().rate(), 0.25);
        assert_eq!("100%".parse::<SampleRate>().unwrap(), SampleRate::ALL);
        for bad in ["0%", "150%", "-1", "ten", "NaN"] {
            assert!(bad.parse::<SampleRate>().is_err(), "{bad}");
        }
        assert_eq!(SampleRate::new(0.1).unwrap().to_string(), "10%");
    }

    #[test]
    fn the_sample_is_a_fixed_share_and_nests() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("trace-{i:05}")).collect();
        let tenth = SampleRate::new(0.1).unwrap();
        let half = SampleRate::new(0.5).unwrap();
        let kept = ids.iter().filter(|id| tenth.holds(id)).count();
        assert!((1_800..2_200).contains(&kept), "{kept}");
        assert!(
            ids.iter()
                .filter(|id| tenth.holds(id))
                .all(|id| half.holds(id))
        );
        assert!(ids.iter().all(|id| SampleRate::ALL.holds(id)));
    }

    /// The rule is the SHA-256 prefix: "abc" hashes to ba7816bf…, 0.729 of the space.
    #[test]
    fn the_rule_is_the_sha256_prefix() {
        assert!(SampleRate::new(0.73).unwrap().holds("abc"));
        assert!(!SampleRate::new(0.72).unwrap().holds("abc"));
    }
}
