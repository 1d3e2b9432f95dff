//! One writer per run directory: an OS advisory lock (`flock`, through `fs4`) on the hidden file [`LOCK_FILE`] inside it, held for as long as the
//! [`RunLock`] lives and released by the OS when its holder ends, however it ends (kill -9
//! included): a lock never goes stale. The holder writes its pid, host and start time into
//! the file for the refusal to name; that text may be stale, the OS lock is the truth.
//!
//! On NFS, Linux clients implement `flock` as a whole-file `fcntl` lock the server
//! coordinates (NFSv4 itself, NFSv3 through its lock manager), so two machines writing one
//! run directory are refused as two processes on one machine are; a mount with `nolock` or
//! `local_lock` keeps locks on each client, and there the lock guards one machine only.
//!
//! This module only locks; which paths are run directories is its callers' business.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use fs4::fs_std::FileExt;

use crate::ReportError;

/// The lock file inside a run directory; hidden, so listings of the run do not show it.
pub const LOCK_FILE: &str = ".rageval.lock";

/// The lock on one run directory, held until dropped (or until the process ends).
#[derive(Debug)]
pub struct RunLock {
    /// The open lock file; its open file description holds the lock.
    _file: File,
}

impl RunLock {
    /// Takes the lock on the run directory `dir` (which must exist) without waiting:
    /// [`ReportError::RunLocked`], naming the holder, when another process (or another
    /// open of this process) holds it.
    pub fn take(dir: &Path) -> Result<Self, ReportError> {
        let path = dir.join(LOCK_FILE);
        let write_error = |source| ReportError::Write {
            path: path.clone(),
            source,
        };
        // Not truncated on open: the holder's text stays readable until the lock is ours.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(write_error)?;
        if !file.try_lock_exclusive().map_err(write_error)? {
            return Err(ReportError::RunLocked {
                path: dir.to_path_buf(),
                holder: holder_of(&mut file),
            });
        }
        let holder = format!(
            "pid {}{}, started {}",
            std::process::id(),
            host().map_or_else(String::new, |host| format!(" on {host}")),
            crate::utc_timestamp()
        );
        file.set_len(0)
            .and_then(|()| file.write_all(holder.as_bytes()))
            .and_then(|()| file.flush())
            .map_err(write_error)?;
        Ok(Self { _file: file })
    }
}

/// What the holder of `file`'s lock wrote about itself, or a phrase saying it wrote nothing
/// yet (it took the lock a moment ago).
fn holder_of(file: &mut File) -> String {
    let mut text = String::new();
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.take(512).read_to_string(&mut text));
    match read {
        Ok(_) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => "its pid not yet written".to_owned(),
    }
}

/// This machine's host name, where the OS says it (Linux), so a refusal on a shared
/// filesystem names the machine of the other writer.
fn host() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_when_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::take(dir.path()).unwrap();
        let refused = RunLock::take(dir.path()).unwrap_err();
        let message = refused.to_string();
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        drop(first);
        RunLock::take(dir.path()).expect("the lock is free once its holder ends");
    }
}
