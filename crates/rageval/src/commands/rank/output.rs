//! An output directory that is complete or absent: files are written into a sibling
//! `<name>.partial` directory, which replaces the target only on [`OutputDir::commit`]; a
//! command that fails or is interrupted leaves no directory that looks finished.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The directory being written.
#[derive(Debug)]
pub struct OutputDir {
    target: PathBuf,
    partial: PathBuf,
    committed: bool,
}

impl OutputDir {
    /// Starts writing `target`. Refuses a non-empty `target` unless `overwrite`.
    pub fn create(target: &Path, overwrite: bool) -> anyhow::Result<OutputDir> {
        let occupied = target.is_file()
            || fs::read_dir(target).is_ok_and(|mut entries| entries.next().is_some());
        if occupied && !overwrite {
            bail!(
                "{} already exists; pass --overwrite to replace it, or --out with a new directory",
                target.display()
            );
        }
        let mut name = target
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "out".into());
        name.push(".partial");
        let partial = target.with_file_name(name);
        if partial.exists() {
            fs::remove_dir_all(&partial)
                .with_context(|| format!("cannot remove {}", partial.display()))?;
        }
        fs::create_dir_all(&partial)
            .with_context(|| format!("cannot create {}", partial.display()))?;
        Ok(OutputDir {
            target: target.to_path_buf(),
            partial,
            committed: false,
        })
    }

    /// Where files go until the commit.
    pub fn path(&self) -> &Path {
        &self.partial
    }

    /// Writes `bytes` to `name` inside the directory.
    pub fn write(&self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        write_file(&self.partial, name, bytes)
    }

    /// Replaces the target with what was written; returns the target's path.
    pub fn commit(mut self) -> anyhow::Result<PathBuf> {
        if self.target.is_dir() {
            fs::remove_dir_all(&self.target)
                .with_context(|| format!("cannot replace {}", self.target.display()))?;
        } else if self.target.exists() {
            fs::remove_file(&self.target)
                .with_context(|| format!("cannot replace {}", self.target.display()))?;
        }
        fs::rename(&self.partial, &self.target)
            .with_context(|| format!("cannot write {}", self.target.display()))?;
        self.committed = true;
        Ok(self.target.clone())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.partial);
        }
    }
}

/// Writes `bytes` to `dir/name`.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_appears_until_the_commit_and_a_full_directory_needs_overwrite() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("run");
        let dir = OutputDir::create(&target, false).unwrap();
        dir.write("a.json", b"{}").unwrap();
        assert!(!target.exists());
        drop(dir);
        assert!(!target.exists() && !root.path().join("run.partial").exists());

        let dir = OutputDir::create(&target, false).unwrap();
        dir.write("a.json", b"{}").unwrap();
        assert_eq!(dir.commit().unwrap(), target);
        assert!(target.join("a.json").is_file());
        assert!(OutputDir::create(&target, false).is_err());
        let again = OutputDir::create(&target, true).unwrap();
        again.write("b.json", b"{}").unwrap();
        again.commit().unwrap();
        assert!(target.join("b.json").is_file() && !target.join("a.json").exists());
    }
}
