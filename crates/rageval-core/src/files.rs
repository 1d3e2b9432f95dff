//! Files written whole or not at all: the one temporary-file-and-rename writer that every
//! run file, labels file, dataset and journal rewrite goes through; and [`is_disk_full`],
//! the one test of whether a failed write was the machine's (no space, no quota left)
//! rather than the input's.
//!
//! A reader (a resumed run, `serve`, a second process) must never see half a manifest or a
//! truncated journal that looks complete. This module only writes; it knows no format.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` whole or not at all.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// Writes whatever `fill` writes to `path` whole or not at all: into a hidden temporary file
/// in the same directory (so the rename stays on one file system), flushed and synced, then
/// renamed over `path`. On any error the temporary file is removed and `path` is left as it
/// was.
pub fn write_atomically_with(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temporary = temporary_beside(path);
    let written = File::create(&temporary).and_then(|file| {
        let mut out = BufWriter::new(file);
        fill(&mut out)?;
        out.flush()?;
        out.get_ref().sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            // Best effort: the temporary file is ours and incomplete; the error that matters
            // is the one returned.
            let _ = std::fs::remove_file(&temporary);
            Err(error)
        }
    }
}

/// `ENOSPC` on Linux and macOS.
const NO_SPACE: i32 = 28;
/// `EDQUOT`: 122 on Linux, 69 on macOS and the BSDs.
const NO_QUOTA: [i32; 2] = [122, 69];

/// Whether `error` says the disk (or the user's quota on it) is full: a failure of the
/// machine, which clears once space is freed, not of the input.
pub fn is_disk_full(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded
    ) || error
        .raw_os_error()
        .is_some_and(|code| code == NO_SPACE || (cfg!(unix) && NO_QUOTA.contains(&code)))
}

/// Whether `error` or any of its causes is a disk-full [`std::io::Error`]
/// ([`is_disk_full`]).
pub fn caused_by_disk_full(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            // An `io::Error` made from another error hides it from `source`.
            let inner = io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static));
            if is_disk_full(io) || inner.is_some_and(caused_by_disk_full) {
                return true;
            }
        }
        cause = error.source();
    }
    false
}

/// `dir/.name.PID.tmp` for `dir/name`: hidden, so a listing of a run directory does not show
/// it, and per process, so two writers of one file never share a temporary file.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_holds_exactly_what_was_written_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["summary.json"]);
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        std::fs::write(&path, "line 1\n").unwrap();
        let failed = write_atomically_with(&path, |out| {
            out.write_all(b"half a line")?;
            Err(std::io::Error::other("the source ran dry"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "line 1\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn no_space_and_no_quota_are_disk_full_and_nothing_else_is() {
        assert!(is_disk_full(&std::io::Error::from_raw_os_error(28)));
        assert!(is_disk_full(&std::io::Error::from(
            std::io::ErrorKind::QuotaExceeded
        )));
        assert!(!is_disk_full(&std::io::Error::from_raw_os_error(2)));
        let wrapped = std::io::Error::other(std::io::Error::from_raw_os_error(28));
        assert!(caused_by_disk_full(&wrapped));
        assert!(!caused_by_disk_full(&std::io::Error::other("bad input")));
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent/manifest.json");
        assert!(write_atomically(&path, b"{}").is_err());
    }
}
