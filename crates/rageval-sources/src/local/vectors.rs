//! Chunk embeddings beside the full-text index, and the fusion of two rankings.
//!
//! Vectors are stored as one file of little-endian `f32`, one row per chunk in chunk order,
//! each scaled to unit length so that a dot product is the cosine. Search is exhaustive:
//! a corpus that fits one machine's index (10k chunks × 384 dimensions is 15 MB) is scored in
//! milliseconds, and exhaustive search has no recall loss to explain. Rankings are fused with
//! reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): `Σ 1 / (k + rank)` with
//! `k = 60`, which needs no score calibration between BM25 and cosine.

use std::collections::HashMap;
use std::path::Path;

use crate::error::SourceError;

/// File name of the vectors inside an index directory.
pub const VECTORS_FILE: &str = "vectors.f32";
/// The `k` of reciprocal rank fusion.
pub const RRF_K: f64 = 60.0;

/// Unit-length vectors, one row per chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    dims: usize,
    data: Vec<f32>,
}

impl Vectors {
    /// Vectors from rows of equal length; each is scaled to unit length (a zero row stays
    /// zero and scores 0 against everything).
    pub fn from_rows(rows: Vec<Vec<f32>>) -> Result<Vectors, String> {
        let dims = rows.first().map_or(0, Vec::len);
        let mut data = Vec::with_capacity(rows.len() * dims);
        for (i, row) in rows.into_iter().enumerate() {
            if row.len() != dims {
                return Err(format!(
                    "vector {i} has {} dimensions, the first has {dims}",
                    row.len()
                ));
            }
            if row.iter().any(|x| !x.is_finite()) {
                return Err(format!("vector {i} holds a non-finite number"));
            }
            data.extend(normalized(row));
        }
        Ok(Vectors { dims, data })
    }

    /// Dimensions per vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dims).unwrap_or(0)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the rows as little-endian `f32`.
    pub fn write(&self, path: &Path) -> Result<(), SourceError> {
        let bytes: Vec<u8> = self.data.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(path, bytes).map_err(|e| SourceError::io(path, e))
    }

    /// Reads `rows × dims` little-endian `f32` written by [`Vectors::write`].
    pub fn read(path: &Path, rows: usize, dims: usize) -> Result<Vectors, SourceError> {
        let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
        if bytes.len() != rows * dims * 4 {
            return Err(SourceError::Index {
                path: path.to_owned(),
                detail: format!(
                    "{} bytes of vectors, expected {rows} chunks × {dims} dimensions × 4",
                    bytes.len()
                ),
            });
        }
        let data = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(Vectors { dims, data })
    }

    /// The `limit` rows closest to `query` by cosine, best first (ties: lower row first).
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<(usize, f32)> {
        if query.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        let query = normalized(query.to_vec());
        let mut scored: Vec<(usize, f32)> = self
            .data
            .chunks_exact(self.dims)
            .map(|row| row.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>())
            .enumerate()
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
    }
}

fn normalized(mut row: Vec<f32>) -> Vec<f32> {
    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        row.iter_mut().for_each(|x| *x /= norm);
    }
    row
}

/// Reciprocal rank fusion of rankings (each a list of row numbers, best first): the rows
/// with their fused scores, best first; ties keep the order of the first ranking, then row.
pub fn reciprocal_rank_fusion(rankings: &[Vec<usize>]) -> Vec<(usize, f64)> {
    let mut scores: HashMap<usize, (f64, usize)> = HashMap::new();
    for (which, ranking) in rankings.iter().enumerate() {
        for (rank, &row) in ranking.iter().enumerate() {
            let entry = scores.entry(row).or_insert((0.0, usize::MAX));
            entry.0 += 1.0 / (RRF_K + (rank + 1) as f64);
            if which == 0 {
                entry.1 = rank;
            }
        }
    }
    let mut fused: Vec<(usize, f64, usize)> = scores
        .into_iter()
        .map(|(row, (s, first))| (row, s, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(row, s, _)| (row, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_is_cosine_order_and_roundtrips_through_a_file() {
        let v = Vectors::from_rows(vec![vec![1.0, 0.0], vec![0.0, 2.0], vec![1.0, 1.0]]).unwrap();
        let near: Vec<usize> = v.nearest(&[0.0, 1.0], 3).iter().map(|p| p.0).collect();
        assert_eq!(near, [1, 2, 0]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(VECTORS_FILE);
        v.write(&path).unwrap();
        assert_eq!(Vectors::read(&path, 3, 2).unwrap(), v);
        assert!(Vectors::read(&path, 4, 2).is_err());
        assert!(Vectors::from_rows(vec![vec![1.0], vec![1.0, 2.0]]).is_err());
    }

    #[test]
    fn fusion_rewards_agreement() {
        // Row 7 is second in both lists, row 1 first in one and absent from the other.
        let fused = reciprocal_rank_fusion(&[vec![1, 7, 3], vec![9, 7, 3]]);
        assert_eq!(fused[0].0, 7);
        assert!((fused[0].1 - 2.0 / 62.0).abs() < 1e-12);
        assert_eq!(fused[1].0, 3);
        assert_eq!(fused[2].0, 1, "ties keep the first ranking's order");
    }
}
