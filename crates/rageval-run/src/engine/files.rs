//! Run files as every command writes them: whole or not at all (`write_atomically`, over
//! [`rageval_core::files`]), and removed where present ([`remove_if_present`]); the errors
//! name the file.

use std::fs;
use std::path::Path;

use crate::engine::error::{Result, RunError};

/// Writes a run file whole or not at all ([`rageval_core::files`]); the error names it.
pub(crate) fn write_atomically(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    rageval_core::files::write_atomically(path, bytes.as_ref()).map_err(RunError::write(path))
}

/// Removes `path` if it exists.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(RunError::write(path)(error)),
    }
}
