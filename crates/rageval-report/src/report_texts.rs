//! Where a run's reports get the texts they show beside its verdicts (question, reference,
//! answer, contexts): nowhere, samples already in memory, or the run's dataset file, read
//! again one sample at a time each time a report needs it — so writing the reports of a
//! 100,000-sample run never holds its dataset in memory.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rageval_core::Sample;

use crate::journal_index::InputOrder;
use crate::{JournalIndex, Manifest, ReportError, locate_dataset, open_run_dataset};

/// The texts a run's reports show.
#[derive(Debug, Clone)]
pub enum ReportTexts<'a> {
    /// No texts: reports show ids and indices, rows in the journal's order.
    Absent,
    /// Samples in memory, in the dataset's order.
    Samples(&'a [Sample]),
    /// The run's dataset at `path` (found and checked against its recorded hash by
    /// [`ReportTexts::dataset`]), streamed with the options the run used.
    Dataset {
        manifest: Box<Manifest>,
        path: PathBuf,
    },
}

impl ReportTexts<'_> {
    /// The dataset of the run in `run_dir` that `manifest` describes, when it is still
    /// there with the same hash and reads whole with the run's options. It is read through
    /// once here, so that a file this version cannot parse (a run written by an older
    /// rageval) is refused before any report is written, not halfway through one.
    pub fn dataset(manifest: &Manifest, run_dir: &Path) -> Result<Self, ReportError> {
        let path = locate_dataset(manifest, run_dir)?;
        let texts = Self::Dataset {
            manifest: Box::new(manifest.clone()),
            path,
        };
        texts.for_each(|_| Ok(()))?;
        Ok(texts)
    }

    /// Whether there are no texts to show.
    pub fn is_absent(&self) -> bool {
        match self {
            Self::Absent => true,
            Self::Samples(samples) => samples.is_empty(),
            Self::Dataset { .. } => false,
        }
    }

    /// Calls `visit` with each sample in the dataset's order; stops at its first error.
    pub fn for_each(
        &self,
        mut visit: impl FnMut(&Sample) -> Result<(), ReportError>,
    ) -> Result<(), ReportError> {
        match self {
            Self::Absent => Ok(()),
            Self::Samples(samples) => samples.iter().try_for_each(visit),
            Self::Dataset { manifest, path } => {
                let unreadable = |error: &dyn std::fmt::Display| ReportError::DatasetUnavailable {
                    path: path.clone(),
                    why: error.to_string(),
                };
                for sample in open_run_dataset(manifest, path).map_err(|e| unreadable(&e))? {
                    visit(&sample.map_err(|e| unreadable(&e))?)?;
                }
                Ok(())
            }
        }
    }

    /// [`JournalIndex::input_order`] of the dataset's ids: the order reports list rows in.
    /// The dataset's ids are placed as they are read, never held.
    pub fn order(&self, journal: &JournalIndex) -> Result<Vec<usize>, ReportError> {
        let mut order = InputOrder::new(journal);
        self.for_each(|sample| {
            order.place(&sample.id);
            Ok(())
        })?;
        Ok(order.finish())
    }

    /// The samples whose ids are in `wanted`, by id.
    pub fn pick(&self, wanted: &HashSet<&str>) -> Result<HashMap<String, Sample>, ReportError> {
        let mut picked = HashMap::new();
        self.for_each(|sample| {
            if wanted.contains(sample.id.as_str()) && !picked.contains_key(&sample.id) {
                picked.insert(sample.id.clone(), sample.clone());
            }
            Ok(())
        })?;
        Ok(picked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunData;
    use crate::testing::write_run;
    use rageval_core::Outcome;

    #[test]
    fn the_dataset_is_streamed_in_its_order_and_only_the_wanted_samples_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        let text = concat!(
            "{\"id\": \"b\", \"question\": \"second?\"}\n",
            "{\"id\": \"a\", \"question\": \"first?\"}\n",
            "{\"id\": \"c\", \"question\": \"not in the run?\"}\n",
        );
        std::fs::write(&data, text).unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            &crate::sha256_bytes(text.as_bytes()),
            &[
                ("a", "m", Outcome::bare(1.0)),
                ("x", "m", Outcome::bare(0.0)),
                ("b", "m", Outcome::bare(0.5)),
            ],
        );
        let mut run = RunData::load(&path).unwrap();
        run.manifest.dataset.path = data.display().to_string();
        let texts = ReportTexts::dataset(&run.manifest, &run.path).unwrap();
        assert!(!texts.is_absent());
        // Journal indices: a 0, x 1, b 2. The dataset's order first, then the rest.
        let journal = JournalIndex::of_records(&run.records);
        assert_eq!(texts.order(&journal).unwrap(), vec![2, 0, 1]);
        assert_eq!(ReportTexts::Absent.order(&journal).unwrap(), vec![0, 1, 2]);
        let picked = texts.pick(&HashSet::from(["a", "x"])).unwrap();
        assert_eq!(picked.len(), 1);
        assert_eq!(picked["a"].question, "first?");

        // A dataset edited since the run is refused, not shown beside the old scores.
        std::fs::write(&data, text.replace("first", "edited")).unwrap();
        let error = ReportTexts::dataset(&run.manifest, &run.path).unwrap_err();
        assert!(error.to_string().contains("sha256 differs"), "{error}");

        // One that hashes as recorded but does not parse is refused up front, naming the line.
        let broken = "{\"id\": \"a\", \"question\": \"first?\"}\n{not json\n";
        std::fs::write(&data, broken).unwrap();
        run.manifest.dataset.sha256 = crate::sha256_bytes(broken.as_bytes());
        let error =
            crate::error_chain(&ReportTexts::dataset(&run.manifest, &run.path).unwrap_err());
        assert!(error.contains("data.jsonl:2: invalid json"), "{error}");
    }
}
