//! What a cache file must be before rageval reads or writes it, and each answer's checksum.
//!
//! A damaged answer must stop a run, never change its scores: each answer row carries the
//! SHA-256 of what a read gives back ([`answer_checksum`]), checked on every read. Before
//! [`Cache::open`](super::Cache::open) writes anything, [`inspect`] reads the file on a
//! read-only connection: SQLite's `quick_check`, the tables (a file holding any table a
//! rageval cache has not, or `answers`/`embeddings` without their columns, is another
//! program's), the schema version (`PRAGMA user_version`; a newer one is refused) and
//! every stored checksum. A file that fails is refused whole and left as it was found.
//!
//! Caches written before checksums (version 0) have their rows' checksums computed when
//! first opened ([`fill_missing_checksums`]): rewriting every row would cost as much and
//! gain nothing, and a damage done before that moment cannot be told from an answer
//! either way. The same fill covers rows an older rageval writes into the file later.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};
use sha2::{Digest, Sha256};

use crate::error::JudgeError;

/// The cache file's schema version, in `PRAGMA user_version`: 0 before answers carried a
/// checksum, 2 since (1 was the key recipe's [`CACHE_FORMAT`](super::CACHE_FORMAT)).
pub(crate) const SCHEMA_VERSION: i64 = 2;

/// The columns a rageval `answers` table has had since its first release.
const ANSWER_COLUMNS: [&str; 8] = [
    "key",
    "template",
    "model",
    "text",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "created_unix",
];

/// The columns an answer's checksum covers, in the order [`answer_checksum`] takes them.
pub(crate) const ROW_FIELDS: &str = "key, text, prompt_tokens, completion_tokens, finish_reason, \
                          reasoning_tokens, thinking";

/// The columns of the `embeddings` table.
const EMBEDDING_COLUMNS: [&str; 3] = ["key", "model", "vector"];

/// The stored fields of one answer that a read gives back, as the row holds them.
pub(crate) struct AnswerRow<'a> {
    pub(crate) key: &'a str,
    pub(crate) text: &'a str,
    pub(crate) prompt_tokens: i64,
    pub(crate) completion_tokens: i64,
    pub(crate) finish_reason: Option<&'a str>,
    pub(crate) reasoning_tokens: Option<i64>,
    pub(crate) thinking: Option<&'a str>,
}

/// Lowercase hex SHA-256 of the JSON array of the row's fields (JSON gives each field
/// its own unambiguous bounds).
pub(crate) fn answer_checksum(row: &AnswerRow<'_>) -> String {
    let fields = serde_json::json!([
        row.key,
        row.text,
        row.prompt_tokens,
        row.completion_tokens,
        row.finish_reason,
        row.reasoning_tokens,
        row.thinking,
    ]);
    Sha256::digest(fields.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The error refusing the cache at `path` for `problem` ("is damaged: …", "is not a
/// rageval answer cache: …").
pub(crate) fn refused(path: &Path, problem: impl Into<String>) -> JudgeError {
    JudgeError::CacheRefused {
        path: path.display().to_string(),
        problem: problem.into(),
    }
}

fn damaged(path: &Path, why: impl std::fmt::Display) -> JudgeError {
    refused(path, format!("is damaged: {why}"))
}

fn foreign(path: &Path, why: impl std::fmt::Display) -> JudgeError {
    refused(path, format!("is not a rageval answer cache: {why}"))
}

/// Checks the file at `path`, if there is one, without writing to it: `Ok` when it is
/// absent, empty, or a sound rageval cache; [`JudgeError::CacheRefused`] otherwise.
pub(crate) fn inspect(path: &Path) -> Result<(), JudgeError> {
    if std::fs::metadata(path).map_or(true, |meta| meta.len() == 0) {
        return Ok(());
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags).map_err(|e| damaged(path, e))?;
    // Another process writing the cache is no damage: wait for it as every connection does.
    connection
        .busy_timeout(super::BUSY_TIMEOUT)
        .map_err(|e| damaged(path, e))?;
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| damaged(path, e))?;
    if version > SCHEMA_VERSION {
        return Err(refused(
            path,
            format!(
                "was written by a newer rageval (schema {version}; this one reads up to \
                 {SCHEMA_VERSION})"
            ),
        ));
    }
    let verdict: String = connection
        .query_row("PRAGMA quick_check", [], |row| row.get(0))
        .map_err(|e| damaged(path, e))?;
    if verdict != "ok" {
        return Err(damaged(
            path,
            format!("SQLite's quick_check says {verdict}"),
        ));
    }
    check_tables(&connection, path)?;
    check_checksums(&connection, path)
}

/// Every table is one a rageval cache has, with its columns.
fn check_tables(connection: &Connection, path: &Path) -> Result<(), JudgeError> {
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
        .map_err(|e| damaged(path, e))?;
    for table in tables {
        let needed: &[&str] = match table.as_str() {
            "answers" => &ANSWER_COLUMNS,
            "embeddings" => &EMBEDDING_COLUMNS,
            other => return Err(foreign(path, format!("it holds a table `{other}`"))),
        };
        let columns = columns_of(connection, &table).map_err(|e| damaged(path, e))?;
        if let Some(missing) = needed
            .iter()
            .find(|c| !columns.iter().any(|have| have == *c))
        {
            return Err(foreign(
                path,
                format!("its `{table}` table has no column `{missing}`"),
            ));
        }
    }
    Ok(())
}

/// The column names of `table`.
pub(crate) fn columns_of(connection: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    connection
        .prepare("SELECT name FROM pragma_table_info(?1)")?
        .query_map([table], |row| row.get(0))?
        .collect()
}

/// Every answer that carries a checksum matches it.
fn check_checksums(connection: &Connection, path: &Path) -> Result<(), JudgeError> {
    let has_checksums = columns_of(connection, "answers")
        .map_err(|e| damaged(path, e))?
        .iter()
        .any(|c| c == "checksum");
    if !has_checksums {
        return Ok(());
    }
    let mut statement = connection
        .prepare(&format!(
            "SELECT {ROW_FIELDS}, checksum FROM answers WHERE checksum IS NOT NULL"
        ))
        .map_err(|e| damaged(path, e))?;
    let mut rows = statement.query([]).map_err(|e| damaged(path, e))?;
    let (mut checked, mut bad, mut first_bad) = (0u64, 0u64, None);
    while let Some(row) = rows.next().map_err(|e| damaged(path, e))? {
        checked += 1;
        let sound = row_matches(row).map_err(|e| damaged(path, e))?;
        if let Err(key) = sound {
            bad += 1;
            first_bad.get_or_insert(key);
        }
    }
    match first_bad {
        None => Ok(()),
        Some(key) => Err(damaged(
            path,
            format!(
                "{bad} of {checked} answers do not match their checksums (the first under \
                 key {})",
                short(&key)
            ),
        )),
    }
}

/// The key of a row of `key, text, prompt_tokens, completion_tokens, finish_reason,
/// reasoning_tokens, thinking` (the columns [`ROW_FIELDS`] selects) and its checksum.
fn checksum_of_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(String, String)> {
    let key: String = row.get(0)?;
    let text: String = row.get(1)?;
    let finish_reason: Option<String> = row.get(4)?;
    let thinking: Option<String> = row.get(6)?;
    let checksum = answer_checksum(&AnswerRow {
        key: &key,
        text: &text,
        prompt_tokens: row.get(2)?,
        completion_tokens: row.get(3)?,
        finish_reason: finish_reason.as_deref(),
        reasoning_tokens: row.get(5)?,
        thinking: thinking.as_deref(),
    });
    Ok((key, checksum))
}

/// Whether a row of [`ROW_FIELDS`] and then `checksum` matches its checksum: `Err(key)`
/// when not. A row without one (an older rageval wrote it since the file was opened) is
/// taken as it is; the next open gives it one.
pub(crate) fn row_matches(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<(), String>> {
    let Some(stored) = row.get::<_, Option<String>>(7)? else {
        return Ok(Ok(()));
    };
    let (key, computed) = checksum_of_row(row)?;
    Ok(if computed == stored { Ok(()) } else { Err(key) })
}

/// The first 12 hex digits of a key and an ellipsis, enough to find its row.
pub(crate) fn short(key: &str) -> String {
    format!("{}…", key.get(..12).unwrap_or(key))
}

/// Gives each answer without a checksum (written before checksums) its checksum, and
/// marks the file with [`SCHEMA_VERSION`], in one transaction.
///
/// Several processes open one cache at once (Ray or Spark workers): a file with nothing to
/// fill is not written at all, and one with work takes the write lock first (`BEGIN
/// IMMEDIATE`, which waits out the busy timeout) rather than reading and then asking to
/// write, which SQLite refuses at once when another process wrote in between.
pub(crate) fn fill_missing_checksums(connection: &Connection) -> rusqlite::Result<()> {
    if !needs_filling(connection)? {
        return Ok(());
    }
    let transaction =
        rusqlite::Transaction::new_unchecked(connection, rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut select = transaction.prepare(&format!(
            "SELECT {ROW_FIELDS} FROM answers WHERE checksum IS NULL"
        ))?;
        let mut update = transaction.prepare("UPDATE answers SET checksum = ?2 WHERE key = ?1")?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let (key, checksum) = checksum_of_row(row)?;
            update.execute(params![key, checksum])?;
        }
    }
    transaction.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    transaction.commit()
}

/// Whether any answer lacks its checksum or the file is not yet marked [`SCHEMA_VERSION`].
fn needs_filling(connection: &Connection) -> rusqlite::Result<bool> {
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let missing: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM answers WHERE checksum IS NULL)",
        [],
        |row| row.get(0),
    )?;
    Ok(missing || version != SCHEMA_VERSION)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Cache, CacheKey};
    use super::*;
    use crate::chat::{ChatResponse, Usage};

    fn answer(text: &str) -> ChatResponse {
        ChatResponse {
            text: text.into(),
            usage: Usage::new(7, 3),
            finish_reason: Some("stop".into()),
            thinking: None,
            thinking_text: String::new(),
        }
    }

    /// A cache holding `n` answers, closed.
    async fn filled(path: &Path, n: u32) {
        let cache = Cache::open(path).unwrap();
        for i in 0..n {
            let key = CacheKey::of(&json!({ "i": i }));
            let text = format!("{{\"verdict\": {}, \"reason\": \"answer {i}\"}}", i % 2);
            cache
                .put(key, "t@1".into(), "m".into(), answer(&text))
                .await
                .unwrap();
        }
    }

    fn problem(error: JudgeError) -> String {
        match error {
            JudgeError::CacheRefused { problem, .. } => problem,
            other => panic!("not a refusal: {other}"),
        }
    }

    #[tokio::test]
    async fn issue_40_13_an_answer_changed_behind_the_cache_is_refused_at_open_and_on_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        filled(&path, 4).await;
        // A handle opened before the damage reads the damaged row and refuses it.
        let open = Cache::open(&path).unwrap();
        Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE answers SET text = substr(text, 1, length(text) / 2)
                 WHERE key = (SELECT min(key) FROM answers)",
                [],
            )
            .unwrap();
        let mut refused_reads = 0;
        for i in 0..4 {
            match open.get(CacheKey::of(&json!({ "i": i }))).await {
                Ok(found) => assert!(found.is_some()),
                Err(error) => {
                    assert!(problem(error).contains("does not match its checksum"));
                    refused_reads += 1;
                }
            }
        }
        assert_eq!(refused_reads, 1);
        drop(open);
        let before = std::fs::read(&path).unwrap();
        let error = Cache::open(&path).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "the answer cache {} is damaged: 1 of 4 answers do not match their checksums \
                 (the first under key {})",
                path.display(),
                short(&first_key(&path))
            )
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    }

    fn first_key(path: &Path) -> String {
        Connection::open(path)
            .unwrap()
            .query_row("SELECT min(key) FROM answers", [], |row| row.get(0))
            .unwrap()
    }

    #[tokio::test]
    async fn issue_40_13_a_cache_from_before_checksums_gets_them_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        filled(&path, 3).await;
        // As a rageval before checksums left it: no checksums, schema version 0.
        let connection = Connection::open(&path).unwrap();
        connection
            .execute_batch("UPDATE answers SET checksum = NULL; PRAGMA user_version = 0;")
            .unwrap();
        drop(connection);
        let cache = Cache::open(&path).unwrap();
        let key = CacheKey::of(&json!({ "i": 1 }));
        assert!(cache.get(key).await.unwrap().is_some());
        drop(cache);
        let connection = Connection::open(&path).unwrap();
        let (unsummed, version): (i64, i64) = connection
            .query_row(
                "SELECT (SELECT count(*) FROM answers WHERE checksum IS NULL),
                        (SELECT user_version FROM pragma_user_version)",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert_eq!((unsummed, version), (0, SCHEMA_VERSION));
    }

    #[test]
    fn issue_40_13_foreign_newer_and_broken_files_are_refused_as_found() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "CREATE TABLE answers (id INTEGER PRIMARY KEY, question TEXT, answer TEXT);",
                "is not a rageval answer cache: its `answers` table has no column `key`",
            ),
            (
                "CREATE TABLE notes (body TEXT);",
                "is not a rageval answer cache: it holds a table `notes`",
            ),
            (
                "PRAGMA user_version = 9;",
                "was written by a newer rageval (schema 9; this one reads up to 2)",
            ),
        ];
        for (i, (sql, expected)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("{i}.sqlite"));
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            let before = std::fs::read(&path).unwrap();
            assert_eq!(problem(Cache::open(&path).unwrap_err()), expected);
            assert_eq!(std::fs::read(&path).unwrap(), before, "{expected}");
        }
        let garbage = dir.path().join("garbage.sqlite");
        std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
        assert!(problem(Cache::open(&garbage).unwrap_err()).starts_with("is damaged: "));
        assert_eq!(std::fs::read(&garbage).unwrap(), vec![0x5a; 8192]);
        // An empty file is a new cache.
        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, b"").unwrap();
        assert!(Cache::open(&empty).is_ok());
    }

    #[test]
    fn the_checksum_covers_each_field_a_read_gives_back() {
        let row = AnswerRow {
            key: "k",
            text: "t",
            prompt_tokens: 1,
            completion_tokens: 2,
            finish_reason: Some("stop"),
            reasoning_tokens: None,
            thinking: None,
        };
        let base = answer_checksum(&row);
        assert_eq!(base.len(), 64);
        let changed = [
            AnswerRow { text: "u", ..row },
            AnswerRow {
                prompt_tokens: 3,
                ..row
            },
            AnswerRow {
                completion_tokens: 3,
                ..row
            },
            AnswerRow {
                finish_reason: None,
                ..row
            },
            AnswerRow {
                reasoning_tokens: Some(0),
                ..row
            },
            AnswerRow {
                thinking: Some(""),
                ..row
            },
            AnswerRow { key: "j", ..row },
        ];
        for other in changed {
            assert_ne!(answer_checksum(&other), base);
        }
    }
}
