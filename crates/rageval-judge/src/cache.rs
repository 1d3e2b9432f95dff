//! The content-addressed answer cache, in one SQLite file shared across runs.
//!
//! A key is the SHA-256 of a canonical JSON (sorted keys, no whitespace) of everything that
//! decides an answer: backend kind, model, prompt-template id and version, the rendered
//! messages, the sampling parameters and the output schema. The value is the raw answer
//! text, its usage and finish reason, and the *origin* of the answer — a short hash of the
//! endpoint that wrote it, so a run can say when it reuses answers another endpoint serving
//! the same model name wrote — never a header, a key or an endpoint URL. The file is
//! in WAL mode. Answers are written by one thread per handle with its own connection, by
//! group commit: the answers that arrive while a commit runs go into the next transaction
//! together, and each `put` returns once the transaction holding it has committed — so a
//! crash leaves whole entries or none, and a judge with many calls in flight pays one commit
//! per group instead of one per answer (11–13% less wall time for a mock-judged eval at
//! 10,000 and 100,000 samples; BENCHMARKS.md, "eval at scale"). Reads run on tokio's blocking pool so they never stall the
//! runtime; a cancelled caller leaves its write to finish on its own.
//!
//! SQLite's locking needs a local file system: a cache on NFS or another network file
//! system can be corrupted by two machines writing at once. To share answers between
//! machines, export them as JSON lines and import them on the other side (`transfer`).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::chat::{ChatResponse, Usage};
use crate::error::JudgeError;

mod check;
mod schema;
mod transfer;

use schema::{connect, create_schema};
pub use transfer::{CacheLine, Transferred};

/// Bumped when the key recipe or the table changes, so old entries are never misread.
pub const CACHE_FORMAT: u32 = 1;
/// How long a writer waits for another process's lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// The most answers one group commit holds.
const MAX_GROUP: usize = 512;

const INSERT_ANSWER: &str = "INSERT OR REPLACE INTO answers
     (key, template, model, text, prompt_tokens, completion_tokens, finish_reason,
      created_unix, origin, reasoning_tokens, thinking, checksum)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// What the cache file at `path` says of `model`'s thinking, read without writing anything
/// (a dry run writes nothing): `None` when there is no such file, or it cannot be read.
pub fn thinking_profile_at(path: &Path, model: &str) -> Option<ThinkingProfile> {
    if !path.is_file() {
        return None;
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags).ok()?;
    // A file from before reasoning was recorded has answers but no thinking to count.
    let recorded = connection
        .prepare("SELECT 1 FROM pragma_table_info('answers') WHERE name = 'reasoning_tokens'")
        .and_then(|mut s| s.exists([]))
        .unwrap_or(false);
    let sql = if recorded {
        "SELECT count(*), count(reasoning_tokens), coalesce(sum(reasoning_tokens), 0),
                coalesce(sum(completion_tokens), 0) FROM answers WHERE model = ?1"
    } else {
        "SELECT count(*), 0, 0, coalesce(sum(completion_tokens), 0) FROM answers WHERE model = ?1"
    };
    connection
        .query_row(sql, params![model], |row| {
            let count = |i: usize| row.get::<_, i64>(i).map(|n| n.max(0) as u64);
            Ok(ThinkingProfile {
                answers: count(0)?,
                thought: count(1)?,
                reasoning_tokens: count(2)?,
                completion_tokens: count(3)?,
            })
        })
        .ok()
}

/// What a model's cached answers say of its thinking: the dry run estimates from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThinkingProfile {
    /// Cached answers of the model.
    pub answers: u64,
    /// Of them, those that came after thinking.
    pub thought: u64,
    /// Their reasoning tokens, summed.
    pub reasoning_tokens: u64,
    /// Completion tokens of every cached answer, summed (thinking included).
    pub completion_tokens: u64,
}

/// How the judge uses its cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// Read hits, write new answers (the default).
    #[default]
    ReadWrite,
    /// Answer only from the cache; a miss is an error and no request is made.
    Offline,
    /// Neither read nor write.
    Off,
}

/// A 32-byte content address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// Hashes the canonical JSON of `parts`.
    pub fn of(parts: &Value) -> Self {
        let mut text = String::new();
        write_canonical(parts, &mut text);
        CacheKey(Sha256::digest(text.as_bytes()).into())
    }

    /// Lowercase hex.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// JSON with object keys sorted at every level and no insignificant whitespace, whatever
/// order the map kept them in — the key must not depend on serde_json's features.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The origin recorded with an answer: the first 16 hex digits of the SHA-256 of the
/// endpoint as [`ChatModel::endpoint`](crate::ChatModel::endpoint) names it (redacted), so
/// the cache holds no URL.
pub fn origin_of(endpoint: &str) -> String {
    Sha256::digest(endpoint.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An answer on its way to the writer thread, and where to say whether it was stored.
#[derive(Debug)]
struct PendingAnswer {
    key: CacheKey,
    template: String,
    model: String,
    origin: Option<String>,
    answer: ChatResponse,
    created_unix: i64,
    stored: tokio::sync::oneshot::Sender<rusqlite::Result<()>>,
}

/// The writer thread's loop: waits for an answer, takes every other one already waiting
/// (up to [`MAX_GROUP`]), stores them in one transaction and tells each caller. When the
/// group's transaction fails, each answer is tried alone so each caller gets its own
/// outcome. Ends when every handle is gone.
fn write_answers(connection: Connection, queue: Receiver<PendingAnswer>) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        if insert_answers(&connection, &group).is_ok() {
            for pending in group {
                let _ = pending.stored.send(Ok(()));
            }
        } else {
            for pending in group {
                let outcome = insert_answers(&connection, std::slice::from_ref(&pending));
                let _ = pending.stored.send(outcome);
            }
        }
    }
}

fn insert_answers(connection: &Connection, group: &[PendingAnswer]) -> rusqlite::Result<()> {
    let transaction = connection.unchecked_transaction()?;
    {
        let mut insert = transaction.prepare_cached(INSERT_ANSWER)?;
        for pending in group {
            let answer = &pending.answer;
            let key = pending.key.hex();
            let thinking = answer
                .thinking
                .as_ref()
                .and_then(|t| serde_json::to_string(t).ok());
            let row = check::AnswerRow {
                key: &key,
                text: &answer.text,
                prompt_tokens: answer.usage.prompt_tokens as i64,
                completion_tokens: answer.usage.completion_tokens as i64,
                finish_reason: answer.finish_reason.as_deref(),
                reasoning_tokens: answer.usage.reasoning_tokens.map(|n| n as i64),
                thinking: thinking.as_deref(),
            };
            insert.execute(params![
                key,
                pending.template,
                pending.model,
                row.text,
                row.prompt_tokens,
                row.completion_tokens,
                row.finish_reason,
                pending.created_unix,
                pending.origin,
                row.reasoning_tokens,
                row.thinking,
                check::answer_checksum(&row),
            ])?;
        }
    }
    transaction.commit()
}

/// The writer thread and the way to it. Dropped with the last handle: closing the queue lets
/// the thread store what is still queued and close its connection, and the drop waits for
/// that, so once the last handle is gone the files are closed and whole (SQLite removes the
/// WAL files when the last connection closes; a caller that reads or copies the directory
/// right after must not race that).
#[derive(Debug)]
struct CacheWriter {
    queue: Option<Sender<PendingAnswer>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CacheWriter {
    /// Queues `pending`; false when the thread has stopped.
    fn send(&self, pending: PendingAnswer) -> bool {
        self.queue
            .as_ref()
            .is_some_and(|queue| queue.send(pending).is_ok())
    }
}

impl Drop for CacheWriter {
    fn drop(&mut self) {
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A handle on the cache file; clones share one reading connection and one writer thread.
#[derive(Debug, Clone)]
pub struct Cache {
    // Declared before `writer` so the reading connection closes first and the writer's
    // connection, closing last, checkpoints the WAL into the file.
    connection: Arc<Mutex<Connection>>,
    writer: Arc<CacheWriter>,
    path: PathBuf,
}

impl Cache {
    /// Opens (creating it and its directory if needed) the cache at `path`. A file that is
    /// damaged (SQLite's `quick_check`, or an answer that does not match its checksum), of
    /// another program's schema, or of a newer rageval's is refused with
    /// [`JudgeError::CacheRefused`] before anything is written to it. Answers stored before
    /// checksums get theirs here.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JudgeError> {
        let path = path.as_ref().to_path_buf();
        let fail = |source| JudgeError::Cache {
            path: path.display().to_string(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| JudgeError::CacheDir {
                path: parent.display().to_string(),
                source: e,
            })?;
        }
        check::inspect(&path)?;
        let connection = connect(&path).map_err(fail)?;
        create_schema(&connection).map_err(fail)?;
        check::fill_missing_checksums(&connection).map_err(fail)?;
        let writer_connection = connect(&path).map_err(fail)?;
        let (sender, queue) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("rageval-cache-writer".into())
            .spawn(move || write_answers(writer_connection, queue))
            .map_err(|e| JudgeError::Task(format!("cannot start the cache writer: {e}")))?;
        Ok(Cache {
            connection: Arc::new(Mutex::new(connection)),
            writer: Arc::new(CacheWriter {
                queue: Some(sender),
                thread: Some(thread),
            }),
            path,
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored answer for `key`, if any.
    pub async fn get(&self, key: CacheKey) -> Result<Option<ChatResponse>, JudgeError> {
        Ok(self.get_with_origin(key).await?.map(|(answer, _)| answer))
    }

    /// The stored answer for `key` and its origin ([`origin_of`] of the endpoint that wrote
    /// it; `None` for answers stored without one), if any.
    pub async fn get_with_origin(
        &self,
        key: CacheKey,
    ) -> Result<Option<(ChatResponse, Option<String>)>, JudgeError> {
        let path = self.path.clone();
        let found = self
            .blocking(move |connection| {
                connection
                    .prepare_cached(&format!(
                        "SELECT {}, checksum, origin FROM answers WHERE key = ?1",
                        check::ROW_FIELDS
                    ))?
                    .query_row(params![key.hex()], |row| {
                        let thinking: Option<String> = row.get(6)?;
                        let answer = ChatResponse {
                            text: row.get(1)?,
                            usage: Usage {
                                prompt_tokens: row.get::<_, i64>(2)?.max(0) as u64,
                                completion_tokens: row.get::<_, i64>(3)?.max(0) as u64,
                                reasoning_tokens: row
                                    .get::<_, Option<i64>>(5)?
                                    .map(|n| n.max(0) as u64),
                            },
                            finish_reason: row.get(4)?,
                            thinking: thinking.and_then(|t| serde_json::from_str(&t).ok()),
                            thinking_text: String::new(),
                        };
                        Ok((check::row_matches(row)?, answer, row.get(8)?))
                    })
                    .optional()
            })
            .await?;
        match found {
            None => Ok(None),
            Some((Ok(()), answer, origin)) => Ok(Some((answer, origin))),
            Some((Err(key), _, _)) => Err(check::refused(
                &path,
                format!(
                    "is damaged: the answer under key {} does not match its checksum",
                    check::short(&key)
                ),
            )),
        }
    }

    /// Stores `answer` under `key` (replacing an older one), in one transaction, with no
    /// origin.
    pub async fn put(
        &self,
        key: CacheKey,
        template: String,
        model: String,
        answer: ChatResponse,
    ) -> Result<(), JudgeError> {
        self.put_with_origin(key, template, model, None, answer)
            .await
    }

    /// Stores `answer` under `key` with its origin ([`origin_of`] the endpoint that wrote
    /// it), in one transaction.
    pub async fn put_with_origin(
        &self,
        key: CacheKey,
        template: String,
        model: String,
        origin: Option<String>,
        answer: ChatResponse,
    ) -> Result<(), JudgeError> {
        let created_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let stopped = || JudgeError::Task("the cache writer has stopped".into());
        let (stored, outcome) = tokio::sync::oneshot::channel();
        let queued = self.writer.send(PendingAnswer {
            key,
            template,
            model,
            origin,
            answer,
            created_unix,
            stored,
        });
        if !queued {
            return Err(stopped());
        }
        outcome
            .await
            .map_err(|_| stopped())?
            .map_err(|source| JudgeError::Cache {
                path: self.path.display().to_string(),
                source,
            })
    }

    /// The stored embedding for `key`, if any.
    pub async fn get_vector(&self, key: CacheKey) -> Result<Option<Vec<f32>>, JudgeError> {
        self.blocking(move |connection| {
            connection
                .query_row(
                    "SELECT vector FROM embeddings WHERE key = ?1",
                    params![key.hex()],
                    |row| row.get::<_, Vec<u8>>(0),
                )
                .optional()
        })
        .await
        .map(|bytes| {
            bytes.map(|bytes| {
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
        })
    }

    /// Stores embeddings (little-endian f32) in one transaction.
    pub async fn put_vectors(
        &self,
        model: String,
        entries: Vec<(CacheKey, Vec<f32>)>,
    ) -> Result<(), JudgeError> {
        self.blocking(move |connection| {
            let transaction = connection.unchecked_transaction()?;
            {
                let mut insert = transaction.prepare(
                    "INSERT OR REPLACE INTO embeddings (key, model, vector) VALUES (?1, ?2, ?3)",
                )?;
                for (key, vector) in &entries {
                    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
                    insert.execute(params![key.hex(), model, bytes])?;
                }
            }
            transaction.commit()
        })
        .await
    }

    /// Number of stored answers.
    pub async fn len(&self) -> Result<u64, JudgeError> {
        self.blocking(|connection| {
            connection.query_row("SELECT COUNT(*) FROM answers", [], |row| {
                row.get::<_, i64>(0).map(|n| n.max(0) as u64)
            })
        })
        .await
    }

    /// Whether the cache holds no answer.
    pub async fn is_empty(&self) -> Result<bool, JudgeError> {
        Ok(self.len().await? == 0)
    }

    async fn blocking<R: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<R> + Send + 'static,
    ) -> Result<R, JudgeError> {
        let connection = Arc::clone(&self.connection);
        let path = self.path.display().to_string();
        tokio::task::spawn_blocking(move || {
            let connection = connection
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&connection).map_err(|source| JudgeError::Cache { path, source })
        })
        .await
        .map_err(|e| JudgeError::Task(format!("cache task: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_ignores_object_key_order_but_not_content() {
        let a =
            CacheKey::of(&json!({"model": "m", "messages": [{"role": "user", "content": "x"}]}));
        let b =
            CacheKey::of(&json!({"messages": [{"content": "x", "role": "user"}], "model": "m"}));
        let c =
            CacheKey::of(&json!({"model": "m", "messages": [{"role": "user", "content": "y"}]}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.hex().len(), 64);
    }

    #[tokio::test]
    async fn round_trip_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        let key = CacheKey::of(&json!({"k": 1}));
        let answer = ChatResponse {
            text: "{\"verdict\": 1}".into(),
            usage: Usage {
                prompt_tokens: 7,
                completion_tokens: 3,
                reasoning_tokens: None,
            },
            finish_reason: Some("stop".into()),
            thinking: None,
            thinking_text: String::new(),
        };
        {
            let cache = Cache::open(&path).unwrap();
            assert!(cache.get(key).await.unwrap().is_none());
            cache
                .put(key, "t@1".into(), "m".into(), answer.clone())
                .await
                .unwrap();
            // The writer thread has its own connection: once `put` returns, the reading
            // connection sees the answer.
            assert_eq!(cache.get(key).await.unwrap(), Some(answer.clone()));
        }
        let cache = Cache::open(&path).unwrap();
        assert_eq!(cache.get(key).await.unwrap(), Some(answer));
        assert_eq!(cache.len().await.unwrap(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_last_handle_dropped_leaves_the_file_closed_and_whole() {
        // SQLite deletes the WAL files when the last connection closes; the writer thread
        // holds one, so dropping the last handle must wait for it, or a caller listing the
        // directory right after sees files vanish under it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        for round in 0..20 {
            let cache = Cache::open(&path).unwrap();
            let copy = cache.clone();
            let key = CacheKey::of(&json!({ "round": round }));
            let answer = ChatResponse {
                text: format!("answer {round}"),
                usage: Usage::default(),
                finish_reason: None,
                thinking: None,
                thinking_text: String::new(),
            };
            copy.put(key, "t@1".into(), "m".into(), answer)
                .await
                .unwrap();
            drop(copy);
            drop(cache);
            let names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, ["cache.sqlite"], "round {round}");
        }
        assert_eq!(Cache::open(&path).unwrap().len().await.unwrap(), 20);
    }

    #[test]
    fn a_group_that_fails_is_stored_answer_by_answer() {
        // Five answers queued before the writer runs form one group; a trigger rejects the
        // third, so the group's transaction fails and each answer is tried alone: the other
        // four are stored and told so, the third gets its own error.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        drop(Cache::open(&path).unwrap());
        let connection = connect(&path).unwrap();
        connection
            .execute_batch(
                "CREATE TRIGGER reject BEFORE INSERT ON answers WHEN NEW.text = 'bad'
                 BEGIN SELECT RAISE(ABORT, 'rejected'); END;",
            )
            .unwrap();
        let (queue, waiting) = std::sync::mpsc::channel();
        let mut outcomes = Vec::new();
        for i in 0..5 {
            let (stored, outcome) = tokio::sync::oneshot::channel();
            let text = if i == 2 {
                "bad".into()
            } else {
                format!("answer {i}")
            };
            queue
                .send(PendingAnswer {
                    key: CacheKey::of(&json!({ "i": i })),
                    template: "t@1".into(),
                    model: "m".into(),
                    origin: None,
                    answer: ChatResponse {
                        text,
                        usage: Usage::default(),
                        finish_reason: None,
                        thinking: None,
                        thinking_text: String::new(),
                    },
                    created_unix: 0,
                    stored,
                })
                .unwrap();
            outcomes.push(outcome);
        }
        drop(queue);
        write_answers(connection, waiting);
        let told: Vec<bool> = outcomes
            .into_iter()
            .map(|mut outcome| outcome.try_recv().unwrap().is_ok())
            .collect();
        assert_eq!(told, [true, true, false, true, true]);
        let stored: i64 = connect(&path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM answers", [], |row| row.get(0))
            .unwrap();
        assert_eq!(stored, 4);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_handles_on_one_file_write_concurrently() {
        // Two connections stand in for two rageval processes sharing the cache.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.sqlite");
        let (a, b) = (Cache::open(&path).unwrap(), Cache::open(&path).unwrap());
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..200 {
            let cache = if i % 2 == 0 { a.clone() } else { b.clone() };
            tasks.spawn(async move {
                let answer = ChatResponse {
                    text: format!("answer {i}"),
                    usage: Usage::default(),
                    finish_reason: None,
                    thinking: None,
                    thinking_text: String::new(),
                };
                let key = CacheKey::of(&json!({ "i": i }));
                cache.put(key, "t@1".into(), "m".into(), answer).await
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap().unwrap();
        }
        assert_eq!(a.len().await.unwrap(), 200);
        let hit = b.get(CacheKey::of(&json!({ "i": 7 }))).await.unwrap();
        assert_eq!(hit.map(|h| h.text), Some("answer 7".to_string()));
    }

    #[test]
    fn workers_opening_one_new_file_at_once_all_get_it() {
        // Spark and Ray start their workers together, each opening the same new cache; every
        // one must get a whole file (a race on the added columns refused all but one with
        // "duplicate column name").
        for round in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(format!("shared-{round}.sqlite"));
            let start = Arc::new(std::sync::Barrier::new(8));
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    let (path, start) = (path.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        Cache::open(&path).map(|_| ())
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap().unwrap();
            }
            let connection = Connection::open(&path).unwrap();
            assert!(schema::schema_is_whole(&connection).unwrap());
        }
    }
}
