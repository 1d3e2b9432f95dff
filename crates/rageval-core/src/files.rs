//! Files written whole or not at all: the one temporary-file-and-rename writer that every
//! run file, labels file, dataset and journal rewrite goes through.
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
    fn a_missing_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent/manifest.json");
        assert!(write_atomically(&path, b"{}").is_err());
    }
}
