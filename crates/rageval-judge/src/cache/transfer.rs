//! Moving a cache's content between machines: every answer and embedding as one JSON line
//! ([`CacheLine`]), written by [`Cache::export_to`] and read by [`Cache::import_from`], which
//! adds what the cache does not hold yet and keeps what it holds (an entry's key is the hash
//! of everything that decides it, so two entries under one key say the same). Shards of one
//! run on several machines, or a CI job warming its cache, share answers this way; the
//! SQLite file itself must not be shared over a network file system.

use std::io::{BufRead, Write};

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::Cache;
use crate::error::JudgeError;

/// Rows written per transaction while importing.
const IMPORT_BATCH: usize = 10_000;

/// One exported entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CacheLine {
    /// A chat answer.
    Answer {
        /// The cache key (64 hex digits).
        key: String,
        /// Prompt template `id@version`.
        template: String,
        model: String,
        text: String,
        prompt_tokens: u64,
        completion_tokens: u64,
        #[serde(default)]
        finish_reason: Option<String>,
        /// Short hash of the endpoint that wrote it.
        #[serde(default)]
        origin: Option<String>,
        created_unix: i64,
    },
    /// An embedding vector.
    Embedding {
        key: String,
        model: String,
        vector: Vec<f32>,
    },
}

/// What an export or import moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transferred {
    /// Answers written (export) or added (import).
    pub answers: u64,
    /// Embeddings written or added.
    pub embeddings: u64,
    /// Import only: entries the cache held already, kept as they were.
    pub kept: u64,
}

impl Cache {
    /// Writes every entry, answers then embeddings, one JSON line each, to `out` (`name`
    /// names it in errors).
    pub fn export_to(&self, out: &mut dyn Write, name: &str) -> Result<Transferred, JudgeError> {
        let connection = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let fail = |source| JudgeError::Cache {
            path: self.path.display().to_string(),
            source,
        };
        let io = |source| JudgeError::CacheFileIo {
            path: name.to_owned(),
            source,
        };
        let mut moved = Transferred::default();
        let mut write = |line: &CacheLine| -> Result<(), JudgeError> {
            serde_json::to_writer(&mut *out, line).map_err(|e| io(e.into()))?;
            out.write_all(b"\n").map_err(io)
        };
        let mut answers = connection
            .prepare(
                "SELECT key, template, model, text, prompt_tokens, completion_tokens, \
                 finish_reason, origin, created_unix FROM answers ORDER BY key",
            )
            .map_err(fail)?;
        let mut rows = answers.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let line = CacheLine::Answer {
                key: row.get(0).map_err(fail)?,
                template: row.get(1).map_err(fail)?,
                model: row.get(2).map_err(fail)?,
                text: row.get(3).map_err(fail)?,
                prompt_tokens: row.get::<_, i64>(4).map_err(fail)?.max(0) as u64,
                completion_tokens: row.get::<_, i64>(5).map_err(fail)?.max(0) as u64,
                finish_reason: row.get(6).map_err(fail)?,
                origin: row.get(7).map_err(fail)?,
                created_unix: row.get(8).map_err(fail)?,
            };
            write(&line)?;
            moved.answers += 1;
        }
        let mut vectors = connection
            .prepare("SELECT key, model, vector FROM embeddings ORDER BY key")
            .map_err(fail)?;
        let mut rows = vectors.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let bytes: Vec<u8> = row.get(2).map_err(fail)?;
            let line = CacheLine::Embedding {
                key: row.get(0).map_err(fail)?,
                model: row.get(1).map_err(fail)?,
                vector: bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            };
            write(&line)?;
            moved.embeddings += 1;
        }
        out.flush().map_err(io)?;
        Ok(moved)
    }

    /// Adds the entries of `input` (lines written by [`Cache::export_to`]; `name` names it
    /// in errors) that the cache does not hold; those it holds are kept. A malformed line
    /// stops the import, naming it; the entries before it stay imported.
    pub fn import_from(
        &self,
        input: &mut dyn BufRead,
        name: &str,
    ) -> Result<Transferred, JudgeError> {
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let path = self.path.display().to_string();
        let fail = |source| JudgeError::Cache {
            path: path.clone(),
            source,
        };
        let mut moved = Transferred::default();
        let mut number = 0;
        let mut line = String::new();
        let mut finished = false;
        while !finished {
            let transaction = connection.transaction().map_err(fail)?;
            for _ in 0..IMPORT_BATCH {
                line.clear();
                let read =
                    input
                        .read_line(&mut line)
                        .map_err(|source| JudgeError::CacheFileIo {
                            path: name.to_owned(),
                            source,
                        })?;
                if read == 0 {
                    finished = true;
                    break;
                }
                number += 1;
                if line.trim().is_empty() {
                    continue;
                }
                let bad = |message: String| JudgeError::CacheFile {
                    file: name.to_owned(),
                    line: Some(number),
                    message,
                };
                let entry: CacheLine = serde_json::from_str(&line)
                    .map_err(|e| bad(format!("not an exported cache entry: {e}")))?;
                let added = match &entry {
                    CacheLine::Answer {
                        key,
                        template,
                        model,
                        text,
                        prompt_tokens,
                        completion_tokens,
                        finish_reason,
                        origin,
                        created_unix,
                    } => {
                        check_key(key).map_err(bad)?;
                        let added = transaction
                            .execute(
                                "INSERT OR IGNORE INTO answers (key, template, model, text, \
                                 prompt_tokens, completion_tokens, finish_reason, created_unix, \
                                 origin, checksum) \
                                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                                params![
                                    key,
                                    template,
                                    model,
                                    text,
                                    *prompt_tokens as i64,
                                    *completion_tokens as i64,
                                    finish_reason,
                                    created_unix,
                                    origin,
                                    super::check::answer_checksum(&super::check::AnswerRow {
                                        key,
                                        text,
                                        prompt_tokens: *prompt_tokens as i64,
                                        completion_tokens: *completion_tokens as i64,
                                        finish_reason: finish_reason.as_deref(),
                                        reasoning_tokens: None,
                                        thinking: None,
                                    })
                                ],
                            )
                            .map_err(fail)?;
                        moved.answers += added as u64;
                        added
                    }
                    CacheLine::Embedding { key, model, vector } => {
                        check_key(key).map_err(bad)?;
                        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
                        let added = transaction
                            .execute(
                                "INSERT OR IGNORE INTO embeddings (key, model, vector) \
                                 VALUES (?1, ?2, ?3)",
                                params![key, model, bytes],
                            )
                            .map_err(fail)?;
                        moved.embeddings += added as u64;
                        added
                    }
                };
                moved.kept += u64::from(added == 0);
            }
            transaction.commit().map_err(fail)?;
        }
        Ok(moved)
    }
}

/// A key is 64 lowercase hex digits, as [`CacheKey::hex`](super::CacheKey::hex) writes it.
fn check_key(key: &str) -> Result<(), String> {
    let hex = key.len() == 64 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if hex {
        Ok(())
    } else {
        Err(format!("`{key}` is not a cache key (64 hex digits)"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cache::CacheKey;
    use crate::chat::{ChatResponse, Usage};

    #[tokio::test]
    async fn an_exported_cache_imports_whole_and_keeps_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let from = Cache::open(dir.path().join("a.sqlite")).unwrap();
        for i in 0..3 {
            let answer = ChatResponse {
                text: format!("answer {i}"),
                usage: Usage {
                    prompt_tokens: 10 + i,
                    completion_tokens: i,
                    reasoning_tokens: None,
                },
                finish_reason: Some("stop".into()),
                thinking: None,
                thinking_text: String::new(),
            };
            let key = CacheKey::of(&json!({ "i": i }));
            from.put_with_origin(key, "t@1".into(), "m".into(), Some("0a1b".into()), answer)
                .await
                .unwrap();
        }
        let vector = vec![0.1f32, -2.5, 1e-7];
        from.put_vectors(
            "e".into(),
            vec![(CacheKey::of(&json!("v")), vector.clone())],
        )
        .await
        .unwrap();
        let mut exported = Vec::new();
        let moved = from.export_to(&mut exported, "out.jsonl").unwrap();
        assert_eq!((moved.answers, moved.embeddings), (3, 1));

        let to = Cache::open(dir.path().join("b.sqlite")).unwrap();
        let kept = ChatResponse {
            text: "already here".into(),
            usage: Usage::default(),
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        };
        let key0 = CacheKey::of(&json!({ "i": 0 }));
        to.put(key0, "t@1".into(), "m".into(), kept.clone())
            .await
            .unwrap();
        let moved = to
            .import_from(&mut exported.as_slice(), "out.jsonl")
            .unwrap();
        assert_eq!((moved.answers, moved.embeddings, moved.kept), (2, 1, 1));
        assert_eq!(to.get(key0).await.unwrap(), Some(kept));
        let (answer, origin) = to
            .get_with_origin(CacheKey::of(&json!({ "i": 2 })))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (answer.text.as_str(), answer.usage.prompt_tokens),
            ("answer 2", 12)
        );
        assert_eq!(origin.as_deref(), Some("0a1b"));
        let back = to.get_vector(CacheKey::of(&json!("v"))).await.unwrap();
        assert_eq!(back, Some(vector));
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path().join("c.sqlite")).unwrap();
        let text = "\n{\"kind\":\"embedding\",\"key\":\"xyz\",\"model\":\"e\",\"vector\":[]}\n";
        let error = cache
            .import_from(&mut text.as_bytes(), "in.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("in.jsonl:2: `xyz` is not a cache key"),
            "{error}"
        );
    }
}
