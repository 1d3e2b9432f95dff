//! The development / held-out split of the shared sets: the heuristic judge's defaults are
//! chosen on the development part and reported on the held-out part, which plays no role in
//! the choice. Items are split by their question (a news item for UHGEval, a query for
//! Cranfield), so the same question never lands on both sides. The split is a seeded hash,
//! stable across machines and runs.

use sha2::{Digest, Sha256};

/// The seed of the split; changing it changes every reported figure.
pub const SPLIT_SEED: &str = "rageval-heuristic-split-1";

/// The part of the data an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// Where candidates are compared and the defaults chosen.
    Dev,
    /// Where the chosen defaults' figures are reported.
    HeldOut,
}

impl Part {
    /// The part of the item whose question (or other grouping key) is `key`: about half of
    /// the keys each way (the first byte of SHA-256 over the seed and the key).
    pub fn of(key: &str) -> Part {
        let digest = Sha256::new()
            .chain_update(SPLIT_SEED.as_bytes())
            .chain_update([0u8])
            .chain_update(key.trim().as_bytes())
            .finalize();
        if digest[0] < 128 {
            Part::Dev
        } else {
            Part::HeldOut
        }
    }

    /// `dev` or `held-out`.
    pub fn name(self) -> &'static str {
        match self {
            Part::Dev => "dev",
            Part::HeldOut => "held-out",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_stable_and_roughly_even() {
        let dev = (0..1000)
            .filter(|i| Part::of(&format!("question {i}")) == Part::Dev)
            .count();
        assert!((400..600).contains(&dev), "{dev}");
        assert_eq!(Part::of(" same "), Part::of("same"));
    }
}
