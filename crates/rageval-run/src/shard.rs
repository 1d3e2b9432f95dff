//! Shards: `eval --shard i/n` scores the samples whose id falls in shard `i` of `n`, so `n`
//! machines (a Kubernetes Indexed Job, a CI matrix) each score a part of one dataset, and
//! `rageval merge` joins their run directories into the run one machine would have written
//! ([`crate::merge`]).
//!
//! A sample's shard is decided by its id alone: the first 8 bytes of the SHA-256 of the id,
//! as a big-endian number, modulo `n`, plus one. The rule never changes with the order of
//! the data, the machine or the version, and spreads ids evenly. Shards are numbered from 1.

use std::fmt;
use std::str::FromStr;

use crate::cells::SampleKey;

/// Shard `index` of `count` (1 ≤ index ≤ count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`, or why not.
    pub fn new(index: u32, count: u32) -> Result<Self, String> {
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "shard {index}/{count} does not exist: shards are numbered 1 to n, n ≥ 1"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard (of `count`) the sample `id` belongs to.
    pub fn of(id: &str, count: u32) -> u32 {
        (SampleKey::of(id).high() % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether the sample `id` is in this shard.
    pub fn holds(&self, id: &str) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `i/n`, e.g. `2/8`.
    fn from_str(text: &str) -> Result<Self, String> {
        let malformed = || format!("`{text}` is not a shard: expected i/n, e.g. 2/8");
        let (index, count) = text.split_once('/').ok_or_else(malformed)?;
        let index: u32 = index.trim().parse().map_err(|_| malformed())?;
        let count: u32 = count.trim().parse().map_err(|_| malformed())?;
        Shard::new(index, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_does_not_exist() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(Shard { index: 2, count: 8 }.to_string(), "2/8");
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/-2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_id_is_in_exactly_one_shard_and_shards_are_even() {
        let count = 4;
        let mut sizes = [0usize; 4];
        for i in 0..4_000 {
            let id = format!("sample-{i}");
            let holders: Vec<u32> = (1..=count)
                .filter(|&index| Shard { index, count }.holds(&id))
                .collect();
            assert_eq!(holders.len(), 1, "{id}");
            sizes[holders[0] as usize - 1] += 1;
        }
        assert!(
            sizes.iter().all(|&n| (900..1_100).contains(&n)),
            "{sizes:?}"
        );
        // "s1": SHA-256 begins e8bc163c82eee187; that number mod 4 is 3, so shard 4.
        assert_eq!(Shard::of("s1", 4), 4);
    }
}
