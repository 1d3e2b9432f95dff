//! Which cells (sample × metric) a run has finished, kept small: per sample a 128-bit digest
//! of its id ([`SampleKey`]) and one bit per metric, about 40 bytes a sample however long
//! the ids are. A resumed run, or a batch run between passes, holds this set instead of the
//! journal's lines, so its memory stays flat in the number of samples.
//!
//! Two ids with the same digest would be taken for one sample; with 128 bits the chance is
//! about n²/2¹²⁹ (10⁻²⁹ for a million samples).

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

/// A sample id's digest: the first 16 bytes of its SHA-256. Stable across versions and
/// machines, so it also decides a sample's shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleKey(u128);

impl SampleKey {
    /// The key of the sample `id`.
    pub fn of(id: &str) -> Self {
        let digest = Sha256::digest(id.as_bytes());
        let mut first = [0u8; 16];
        first.copy_from_slice(&digest[..16]);
        SampleKey(u128::from_be_bytes(first))
    }

    /// The first 8 bytes of the digest, as a big-endian number (what shards divide).
    pub fn high(self) -> u64 {
        (self.0 >> 64) as u64
    }
}

/// Metrics a sample's bit mask holds; further ones go to an overflow set.
const MASK_BITS: usize = 64;

/// Finished cells.
#[derive(Debug, Clone, Default)]
pub struct Cells {
    /// Metric names in the order first seen: a metric's bit.
    metrics: Vec<String>,
    /// Per sample, the bits of its finished metrics (the first [`MASK_BITS`]).
    samples: HashMap<SampleKey, u64>,
    /// Finished cells of metrics beyond the first [`MASK_BITS`].
    overflow: HashSet<(SampleKey, usize)>,
    len: usize,
}

impl Cells {
    /// An empty set.
    pub fn new() -> Self {
        Cells::default()
    }

    /// Adds a cell; false when it was there already.
    pub fn insert(&mut self, sample: &str, metric: &str) -> bool {
        self.insert_key(SampleKey::of(sample), metric)
    }

    /// Adds a cell of the sample with `key`; false when it was there already.
    pub fn insert_key(&mut self, key: SampleKey, metric: &str) -> bool {
        let index = match self.metrics.iter().position(|m| m == metric) {
            Some(index) => index,
            None => {
                self.metrics.push(metric.to_owned());
                self.metrics.len() - 1
            }
        };
        let added = if index < MASK_BITS {
            let bits = self.samples.entry(key).or_default();
            let bit = 1u64 << index;
            let added = *bits & bit == 0;
            *bits |= bit;
            added
        } else {
            self.overflow.insert((key, index))
        };
        self.len += usize::from(added);
        added
    }

    /// Whether the cell is finished.
    pub fn contains(&self, sample: &str, metric: &str) -> bool {
        !self.is_empty() && self.contains_key(SampleKey::of(sample), metric)
    }

    /// Whether the cell of the sample with `key` is finished.
    pub fn contains_key(&self, key: SampleKey, metric: &str) -> bool {
        let Some(index) = self.metrics.iter().position(|m| m == metric) else {
            return false;
        };
        if index < MASK_BITS {
            self.samples
                .get(&key)
                .is_some_and(|bits| bits & (1u64 << index) != 0)
        } else {
            self.overflow.contains(&(key, index))
        }
    }

    /// Finished cells.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no cell is finished.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Finished cells of `metric`.
    pub fn count_of(&self, metric: &str) -> usize {
        let Some(index) = self.metrics.iter().position(|m| m == metric) else {
            return 0;
        };
        if index < MASK_BITS {
            let bit = 1u64 << index;
            self.samples
                .values()
                .filter(|bits| *bits & bit != 0)
                .count()
        } else {
            self.overflow.iter().filter(|(_, i)| *i == index).count()
        }
    }

    /// Samples with at least one finished cell.
    pub fn samples(&self) -> usize {
        let mut keys: HashSet<SampleKey> = self.samples.keys().copied().collect();
        keys.extend(self.overflow.iter().map(|(key, _)| *key));
        keys.len()
    }

    /// Adds every cell of `other`.
    pub fn absorb(&mut self, other: Cells) {
        for (key, bits) in other.samples {
            for (index, metric) in other.metrics.iter().enumerate().take(MASK_BITS) {
                if bits & (1u64 << index) != 0 {
                    self.insert_key(key, metric);
                }
            }
        }
        for (key, index) in other.overflow {
            self.insert_key(key, &other.metrics[index]);
        }
    }
}

impl FromIterator<(String, String)> for Cells {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(cells: I) -> Self {
        let mut set = Cells::new();
        for (sample, metric) in cells {
            set.insert(&sample, &metric);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_counted_once_per_sample_and_metric() {
        let mut cells = Cells::new();
        assert!(!cells.contains("a", "m"));
        assert!(cells.insert("a", "m"));
        assert!(!cells.insert("a", "m"));
        assert!(cells.insert("a", "k"));
        assert!(cells.insert("b", "m"));
        assert_eq!((cells.len(), cells.samples()), (3, 2));
        assert_eq!((cells.count_of("m"), cells.count_of("k")), (2, 1));
        assert!(cells.contains("a", "k") && !cells.contains("b", "k"));
        assert!(!cells.contains("c", "m") && !cells.contains("a", "other"));
    }

    #[test]
    fn more_metrics_than_mask_bits_still_count() {
        let mut cells = Cells::new();
        for i in 0..70 {
            assert!(cells.insert("s", &format!("m{i}")));
        }
        assert!(!cells.insert("s", "m69"));
        assert!(cells.contains("s", "m68") && !cells.contains("t", "m68"));
        let mut other = Cells::new();
        other.insert("t", "m69");
        other.insert("t", "m1");
        cells.absorb(other);
        assert_eq!((cells.len(), cells.samples()), (72, 2));
        assert_eq!(cells.count_of("m69"), 2);
    }

    #[test]
    fn sample_keys_are_stable() {
        // SHA-256("s1") begins e8bc163c82eee187 (`printf s1 | sha256sum`).
        assert_eq!(SampleKey::of("s1").high(), 0xe8bc_163c_82ee_e187);
    }
}
