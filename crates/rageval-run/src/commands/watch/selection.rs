//! The rolling run's dataset: every sample a watch has chosen so far (new to it, and in the
//! sample), in the order they arrived, as JSON Lines of our own sample shape
//! (`watch-samples.jsonl` in the run directory). It is what each poll's scoring reads, and
//! with the journal it is the watch's memory: a restart reads which samples it has already
//! chosen from here and scores only what the journal lacks.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use rageval_core::Sample;

use crate::engine::error::{Result, RunError};

/// The file in the run directory.
pub const SELECTION_FILE: &str = "watch-samples.jsonl";

/// The samples chosen so far.
#[derive(Debug)]
pub struct Selection {
    path: PathBuf,
    ids: HashSet<String>,
}

impl Selection {
    /// The selection in the run directory `dir` (empty when there is none yet). A last line
    /// cut short by a crash is dropped, so its sample is chosen again.
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join(SELECTION_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => return Err(RunError::Read { path, source }),
        };
        let mut ids = HashSet::new();
        let mut whole = 0;
        for line in text.split_inclusive('\n') {
            let parsed = line
                .ends_with('\n')
                .then(|| serde_json::from_str::<Sample>(line).ok())
                .flatten();
            let Some(sample) = parsed else {
                break;
            };
            ids.insert(sample.id);
            whole += line.len();
        }
        if whole < text.len() {
            rageval_core::files::write_atomically(&path, &text.as_bytes()[..whole]).map_err(
                |source| RunError::Write {
                    path: path.clone(),
                    source,
                },
            )?;
        }
        Ok(Selection { path, ids })
    }

    /// Where the selection is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the sample `id` was chosen before.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// Samples chosen so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing was chosen yet.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Appends `samples` (each line whole, flushed before this returns).
    pub fn append(&mut self, samples: &[Sample]) -> Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        let io = |source| RunError::Write {
            path: self.path.clone(),
            source,
        };
        let mut text = String::new();
        for sample in samples {
            let line =
                serde_json::to_string(sample).map_err(RunError::encode("a watched sample"))?;
            text.push_str(&line);
            text.push('\n');
        }
        let mut file = File::options()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        self.ids.extend(samples.iter().map(|s| s.id.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: &str) -> Sample {
        Sample {
            id: id.into(),
            question: format!("question {id}?"),
            ..Sample::default()
        }
    }

    #[test]
    fn chosen_samples_are_remembered_and_a_torn_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut selection = Selection::open(dir.path()).unwrap();
        assert!(selection.is_empty());
        selection.append(&[sample("a"), sample("b")]).unwrap();
        let path = dir.path().join(SELECTION_FILE);
        let mut file = File::options().append(true).open(&path).unwrap();
        file.write_all(br#"{"id": "c", "quest"#).unwrap();
        let reopened = Selection::open(dir.path()).unwrap();
        assert_eq!(reopened.len(), 2);
        assert!(reopened.contains("a") && !reopened.contains("c"));
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    }
}
