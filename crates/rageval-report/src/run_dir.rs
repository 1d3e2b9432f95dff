//! Creating, finishing and abandoning a run directory. Files that say a run is finished are
//! written last and atomically (write to a temporary name, then rename). A [`RunDir`] holds
//! the directory's [`RunLock`] from before it looks at the directory's files until it is
//! dropped: a second writer is refused before it reads, removes or appends anything.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::{JournalWriter, Manifest, ReportError, RunLock, RunStatus, Summary};

pub const MANIFEST_FILE: &str = "manifest.json";
pub const RESULTS_FILE: &str = "results.jsonl";
pub const SUMMARY_FILE: &str = "summary.json";

/// A run directory being written.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    /// Whether this run created the directory, so abandoning it may remove it whole.
    created: bool,
    /// This process's lock on the directory, released when the run is dropped.
    _lock: RunLock,
}

impl RunDir {
    /// Prepares `path` for a new run. An existing run there is refused unless `overwrite`,
    /// in which case its files are removed first.
    pub fn create(path: &Path, overwrite: bool) -> Result<Self, ReportError> {
        if path.exists() {
            if !path.is_dir() {
                return Err(ReportError::NotADirectory {
                    path: path.to_path_buf(),
                });
            }
            let lock = RunLock::take(path)?;
            let holds_run = [MANIFEST_FILE, RESULTS_FILE, SUMMARY_FILE]
                .iter()
                .any(|file| path.join(file).exists());
            if holds_run && !overwrite {
                return Err(ReportError::RunExists {
                    path: path.to_path_buf(),
                });
            }
            let run = Self {
                path: path.to_path_buf(),
                created: false,
                _lock: lock,
            };
            run.remove_run_files()?;
            return Ok(run);
        }
        fs::create_dir_all(path).map_err(|source| ReportError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            created: true,
            _lock: RunLock::take(path)?,
        })
    }

    /// Opens the run already in `path` to resume it: its files are kept, new results are
    /// appended to its journal, and abandoning it removes nothing.
    pub fn reopen(path: &Path) -> Result<Self, ReportError> {
        if !path.join(MANIFEST_FILE).is_file() {
            return Err(ReportError::NotARun {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            created: false,
            _lock: RunLock::take(path)?,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), ReportError> {
        write_json_atomically(&self.path.join(MANIFEST_FILE), "the manifest", manifest)
    }

    /// The journal, opened for appending.
    pub fn journal(&self) -> Result<JournalWriter, ReportError> {
        JournalWriter::append_to(&self.path.join(RESULTS_FILE))
    }

    /// Another journal of the run (`file` in its directory), opened for appending: lines
    /// that belong beside `results.jsonl` but not in it, such as `judge-check`'s repeats.
    pub fn side_journal(&self, file: &str) -> Result<JournalWriter, ReportError> {
        JournalWriter::append_to(&self.path.join(file))
    }

    /// Writes the summary, then marks the manifest complete.
    pub fn finish(&self, manifest: &mut Manifest, summary: &Summary) -> Result<(), ReportError> {
        self.finish_with(manifest, summary)
    }

    /// Writes `summary` (a command's own summary shape, e.g. `rank`'s) as `summary.json`,
    /// then marks the manifest complete.
    pub fn finish_with(
        &self,
        manifest: &mut Manifest,
        summary: &impl Serialize,
    ) -> Result<(), ReportError> {
        write_json_atomically(&self.path.join(SUMMARY_FILE), "the summary", summary)?;
        manifest.status = RunStatus::Complete;
        manifest.finished_at = Some(crate::utc_timestamp());
        self.write_manifest(manifest)
    }

    /// Removes what this run wrote (the whole directory if the run created it), so that a
    /// run stopped by bad input leaves nothing behind that looks like results.
    pub fn abandon(&self) -> Result<(), ReportError> {
        if self.created {
            fs::remove_dir_all(&self.path).map_err(|source| ReportError::Write {
                path: self.path.clone(),
                source,
            })
        } else {
            self.remove_run_files()
        }
    }

    fn remove_run_files(&self) -> Result<(), ReportError> {
        for file in [SUMMARY_FILE, MANIFEST_FILE, RESULTS_FILE] {
            let path = self.path.join(file);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(ReportError::Write { path, source }),
            }
        }
        Ok(())
    }
}

fn write_json_atomically(
    path: &Path,
    what: &'static str,
    value: &impl Serialize,
) -> Result<(), ReportError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|source| ReportError::Encode { what, source })?;
    bytes.push(b'\n');
    rageval_core::files::write_atomically(path, &bytes).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// SHA-256 of a file's bytes, or of a directory's files (sorted by name; each name and its
/// bytes are hashed) for datasets that are directories.
pub fn sha256_file(path: &Path) -> Result<String, ReportError> {
    let mut hasher = Sha256::new();
    let read_error = |source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        let mut files: Vec<PathBuf> = fs::read_dir(path)
            .map_err(read_error)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            hasher.update(file.file_name().unwrap_or_default().as_encoded_bytes());
            hash_bytes_of(&file, &mut hasher)?;
        }
    } else {
        hash_bytes_of(path, &mut hasher)?;
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// SHA-256 of bytes in memory, as [`sha256_file`] gives it for a file holding them.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

fn hash_bytes_of(path: &Path, hasher: &mut Sha256) -> Result<(), ReportError> {
    let read_error = |source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::File::open(path).map_err(read_error)?;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer).map_err(read_error)?;
        if read == 0 {
            return Ok(());
        }
        hasher.update(&buffer[..read]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aggregator, DatasetInfo, ResultRecord};
    use rageval_core::Outcome;

    #[test]
    fn bytes_hash_as_the_file_holding_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.jsonl");
        fs::write(&file, "{\"id\": 1}\n").unwrap();
        assert_eq!(sha256_bytes(b"{\"id\": 1}\n"), sha256_file(&file).unwrap());
    }

    fn manifest() -> Manifest {
        Manifest::start(
            "eval",
            DatasetInfo {
                path: "data.jsonl".into(),
                sha256: "00".into(),
                format: "jsonl".into(),
                samples: None,
            },
            Vec::new(),
            serde_json::json!({}),
        )
    }

    #[test]
    fn a_finished_run_has_every_file_and_says_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let run = RunDir::create(&path, false).unwrap();
        let mut manifest = manifest();
        run.write_manifest(&manifest).unwrap();
        let mut journal = run.journal().unwrap();
        journal
            .append(&ResultRecord {
                sample_id: "1".into(),
                metric: "bleu".into(),
                outcome: Outcome::bare(0.5),
            })
            .unwrap();
        journal.flush().unwrap();
        let mut aggregator = Aggregator::new(vec!["bleu".into()]);
        aggregator.add("bleu", &Outcome::bare(0.5));
        run.finish(&mut manifest, &aggregator.finish(1, 100, 7))
            .unwrap();
        let written: Manifest =
            serde_json::from_slice(&fs::read(path.join(MANIFEST_FILE)).unwrap()).unwrap();
        assert_eq!(written.status, RunStatus::Complete);
        assert!(path.join(SUMMARY_FILE).exists());
        let line = fs::read_to_string(path.join(RESULTS_FILE)).unwrap();
        assert_eq!(
            line.trim(),
            r#"{"sample_id":"1","metric":"bleu","status":"score","value":0.5}"#
        );
        // While the run is written, a second writer is refused, naming it.
        assert!(matches!(
            RunDir::create(&path, true),
            Err(ReportError::RunLocked { .. })
        ));
        drop(run);
        // A second run into the same directory is refused without --overwrite.
        assert!(matches!(
            RunDir::create(&path, false),
            Err(ReportError::RunExists { .. })
        ));
        RunDir::create(&path, true).unwrap();
        assert!(!path.join(SUMMARY_FILE).exists());
    }

    #[test]
    fn abandoning_removes_what_the_run_created() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh");
        let run = RunDir::create(&fresh, false).unwrap();
        run.write_manifest(&manifest()).unwrap();
        run.abandon().unwrap();
        assert!(!fresh.exists());

        let kept = dir.path().join("kept");
        fs::create_dir(&kept).unwrap();
        fs::write(kept.join("notes.txt"), "mine").unwrap();
        let run = RunDir::create(&kept, false).unwrap();
        run.write_manifest(&manifest()).unwrap();
        run.abandon().unwrap();
        assert!(kept.join("notes.txt").exists());
        assert!(!kept.join(MANIFEST_FILE).exists());
    }

    #[test]
    fn hashes_are_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("abc.txt");
        fs::write(&file, "abc").unwrap();
        // FIPS 180-2 test vector for "abc".
        assert_eq!(
            sha256_file(&file).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
