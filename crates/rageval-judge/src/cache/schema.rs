//! How rageval opens a cache file: every connection's settings (the busy timeout, WAL,
//! synchronous NORMAL) and the tables with their columns, made or brought up to date by
//! whichever process opens the file first. It reads and writes no answer.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use super::BUSY_TIMEOUT;

/// Columns added after the first release, each with its type: a file written by an older
/// version gains them when opened (they stay empty for its old answers).
const ADDED_COLUMNS: [(&str, &str); 4] = [
    ("origin", "TEXT"),
    ("reasoning_tokens", "INTEGER"),
    ("thinking", "TEXT"),
    ("checksum", "TEXT"),
];

/// The tables as this version writes them. A file from an older version gains the
/// [`ADDED_COLUMNS`] it lacks in [`create_schema`].
const CREATE_TABLES: &str = "CREATE TABLE IF NOT EXISTS answers (
        key TEXT PRIMARY KEY,
        template TEXT NOT NULL,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        finish_reason TEXT,
        created_unix INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS embeddings (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    ) WITHOUT ROWID;";

/// Creates the tables, and adds the columns a file written before them lacks (its old
/// answers keep them empty). A file already whole is only read. Otherwise the work happens
/// under the write lock, looking again once it is held: processes that open one new file at
/// once (Spark or Ray workers) would each add the same column, and all but one be refused.
pub(super) fn create_schema(connection: &Connection) -> rusqlite::Result<()> {
    if schema_is_whole(connection)? {
        return Ok(());
    }
    let transaction =
        rusqlite::Transaction::new_unchecked(connection, rusqlite::TransactionBehavior::Immediate)?;
    transaction.execute_batch(CREATE_TABLES)?;
    for (name, kind) in ADDED_COLUMNS {
        if !has_column(&transaction, name)? {
            transaction.execute_batch(&format!("ALTER TABLE answers ADD COLUMN {name} {kind}"))?;
        }
    }
    transaction.commit()
}

/// Whether both tables exist and `answers` has every added column.
pub(super) fn schema_is_whole(connection: &Connection) -> rusqlite::Result<bool> {
    let tables: i64 = connection.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('answers', 'embeddings')",
        [],
        |row| row.get(0),
    )?;
    if tables != 2 {
        return Ok(false);
    }
    for (name, _) in ADDED_COLUMNS {
        if !has_column(connection, name)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn has_column(connection: &Connection, name: &str) -> rusqlite::Result<bool> {
    connection
        .prepare("SELECT 1 FROM pragma_table_info('answers') WHERE name = ?1")?
        .exists([name])
}

/// Opens a connection on the cache file with the settings every connection needs.
pub(super) fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    use_write_ahead_log(&connection)?;
    // NORMAL sync is crash-safe in WAL mode (a crash may lose the last commits, never
    // corrupt the file).
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(connection)
}

/// Puts the file in WAL mode (readers never block the writer), which it keeps once set.
/// Switching a new file needs it to itself, and SQLite answers "database is locked" at once
/// rather than waiting while another connection opens it: workers that open one new cache
/// together retry until [`BUSY_TIMEOUT`].
fn use_write_ahead_log(connection: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        let mode = connection
            .pragma_query_value(None, "journal_mode", |row| row.get::<_, String>(0))
            .and_then(|mode| {
                if mode.eq_ignore_ascii_case("wal") {
                    Ok(mode)
                } else {
                    connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| {
                        row.get::<_, String>(0)
                    })
                }
            });
        match mode {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}
