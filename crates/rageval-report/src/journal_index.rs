//! A run's journal read in one streamed pass and kept small, so that the reports of a run
//! of any size hold no more than they show: each sample id once, in the order the journal
//! first names it; per metric, each sample's last score and where its last line is; which
//! samples have a failed cell. The records themselves (their evidence above all) are not
//! kept: a report reads back the outcomes of the samples it shows ([`JournalIndex::reader`]),
//! one sample at a time.
//!
//! Built from the file ([`JournalIndex::read`]) or from records already in memory
//! ([`JournalIndex::of_records`], for a [`crate::RunData`]), it answers the same either
//! way, so the reports written from either are the same bytes. It only reads: the journal
//! is written by [`crate::JournalWriter`].

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use rageval_core::Outcome;

use crate::reader::{for_each_result, merge_metric_names};
use crate::{ReportError, ResultRecord};

/// Where a sample has no line for a metric.
const NO_LINE: u64 = u64::MAX;
/// Where a sample has no score for a metric. A journal read from its file never holds a
/// NaN score (JSON has no such number), so NaN is free to mean "none".
const NO_SCORE: f64 = f64::NAN;

/// The journal of one run, indexed; see the module doc.
pub struct JournalIndex<'a> {
    source: Source<'a>,
    ids: SampleIds,
    /// Metric names in the order the journal first names them.
    metrics: Vec<String>,
    /// Per metric (as `metrics`), per sample: where its last line is ([`Source`]),
    /// [`NO_LINE`] where it has none.
    last_lines: Vec<Positions>,
    /// Per metric, per sample: its last score, [`NO_SCORE`] where it has none.
    last_scores: Vec<Vec<f64>>,
    /// Per sample: whether any of its lines is a failed cell.
    failed: Vec<bool>,
}

/// Where the lines are: a position is a byte offset into the file, or an index into the
/// records.
enum Source<'a> {
    File(PathBuf),
    Records(&'a [ResultRecord]),
}

impl JournalIndex<'static> {
    /// Indexes the journal at `path`, reading it once, one line at a time.
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        let mut index = Self::empty(Source::File(path.to_path_buf()));
        for_each_result(path, |offset, record| {
            index.add(offset, &record);
            Ok(())
        })?;
        index.finish();
        Ok(index)
    }
}

impl<'a> JournalIndex<'a> {
    /// Indexes records already in memory (a [`crate::RunData`]'s).
    pub fn of_records(records: &'a [ResultRecord]) -> Self {
        let mut index = Self::empty(Source::Records(records));
        for (at, record) in (0u64..).zip(records) {
            index.add(at, record);
        }
        index.finish();
        index
    }

    fn empty(source: Source<'a>) -> Self {
        Self {
            source,
            ids: SampleIds::default(),
            metrics: Vec::new(),
            last_lines: Vec::new(),
            last_scores: Vec::new(),
            failed: Vec::new(),
        }
    }

    fn add(&mut self, position: u64, record: &ResultRecord) {
        let sample = self.ids.insert(&record.sample_id);
        let metric = match self.metrics.iter().position(|m| *m == record.metric) {
            Some(metric) => metric,
            None => {
                self.metrics.push(record.metric.clone());
                self.last_lines.push(Positions::default());
                self.last_scores.push(Vec::new());
                self.metrics.len() - 1
            }
        };
        self.last_lines[metric].set(sample, position, NO_LINE);
        if let Some(value) = record.outcome.value() {
            *slot(&mut self.last_scores[metric], sample, NO_SCORE) = value;
        }
        if matches!(record.outcome, Outcome::Failed { .. }) {
            *slot(&mut self.failed, sample, false) = true;
        }
    }

    /// Every per-sample column as long as there are samples.
    fn finish(&mut self) {
        let samples = self.ids.len();
        for lines in &mut self.last_lines {
            lines.resize(samples, NO_LINE);
        }
        self.ids.shrink_to_fit();
        for scores in &mut self.last_scores {
            scores.resize(samples, NO_SCORE);
        }
        self.failed.resize(samples, false);
    }

    /// How many samples the journal names.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the journal names no sample.
    pub fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }

    /// The id of the sample at `index` (in the order the journal first names them).
    pub fn id(&self, index: usize) -> &str {
        self.ids.get(index)
    }

    /// The index of the sample called `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.ids.find(id)
    }

    /// `order` (the summary's metric order), then any metric the journal adds, in the
    /// order it first names them.
    pub fn metric_names(&self, order: &[String]) -> Vec<String> {
        merge_metric_names(order, self.metrics.iter())
    }

    /// One metric's scores, `(sample index, score)` in sample order: each sample's last
    /// score line (undefined and failed cells left out).
    pub fn scores(&self, metric: &str) -> impl Iterator<Item = (usize, f64)> + '_ {
        let column = self.metrics.iter().position(|m| m == metric);
        column
            .map(|at| self.last_scores[at].as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
            .filter(|(_, value)| !value.is_nan())
            .map(|(sample, value)| (sample, *value))
    }

    /// The samples with a failed cell, in sample order.
    pub fn failed(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.failed.len()).filter(|&sample| self.failed[sample])
    }

    /// Sample indices in the order of `dataset_ids` (the dataset's ids in its order): the
    /// samples it names by their position there, then the rest in journal order.
    pub fn input_order<I>(&self, dataset_ids: I) -> Vec<usize>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut order = InputOrder::new(self);
        for id in dataset_ids {
            order.place(id.as_ref());
        }
        order.finish()
    }

    /// Calls `visit` with every record in journal order; stops at its first error.
    pub fn for_each_record(
        &self,
        mut visit: impl FnMut(&ResultRecord) -> Result<(), ReportError>,
    ) -> Result<(), ReportError> {
        match &self.source {
            Source::Records(records) => records.iter().try_for_each(visit),
            Source::File(path) => for_each_result(path, |_, record| visit(&record)),
        }
    }

    /// A reader of samples' outcomes, which reads the journal again where needed.
    pub fn reader(&self) -> OutcomeReader<'_, 'a> {
        OutcomeReader {
            index: self,
            file: None,
        }
    }

    /// The outcomes of `samples`, read at once (a report's few hundred).
    pub fn outcomes(
        &self,
        samples: impl IntoIterator<Item = usize>,
    ) -> Result<Outcomes<'_>, ReportError> {
        let mut reader = self.reader();
        let mut by_sample = HashMap::new();
        for sample in samples {
            if let Entry::Vacant(slot) = by_sample.entry(sample) {
                slot.insert(reader.sample(sample)?);
            }
        }
        Ok(Outcomes { by_sample })
    }
}

/// The slot `at` of `column`, which grows (with `fill`) to hold it.
fn slot<T: Clone>(column: &mut Vec<T>, at: usize, fill: T) -> &mut T {
    if column.len() <= at {
        column.resize(at + 1, fill);
    }
    &mut column[at]
}

/// Sample indices placed in a given order, then the rest in journal order.
pub(crate) struct InputOrder<'i, 'a> {
    index: &'i JournalIndex<'a>,
    order: Vec<usize>,
    placed: Vec<bool>,
}

impl<'i, 'a> InputOrder<'i, 'a> {
    pub(crate) fn new(index: &'i JournalIndex<'a>) -> Self {
        Self {
            index,
            order: Vec::with_capacity(index.len()),
            placed: vec![false; index.len()],
        }
    }

    /// Places the sample called `id` next, unless the journal lacks it or it was placed.
    pub(crate) fn place(&mut self, id: &str) {
        if let Some(at) = self.index.index_of(id)
            && !self.placed[at]
        {
            self.placed[at] = true;
            self.order.push(at);
        }
    }

    pub(crate) fn finish(mut self) -> Vec<usize> {
        let placed = self.placed;
        self.order
            .extend((0..placed.len()).filter(|&at| !placed[at]));
        self.order
    }
}

/// One sample's outcomes by metric name: each metric's last line.
pub type SampleOutcomes<'i> = HashMap<&'i str, Outcome>;

/// The outcomes of some samples, by sample index.
#[derive(Debug, Default)]
pub struct Outcomes<'i> {
    by_sample: HashMap<usize, SampleOutcomes<'i>>,
}

impl Outcomes<'_> {
    /// The outcome of `metric` for the sample at `sample`, when it was read and has one.
    pub fn get(&self, sample: usize, metric: &str) -> Option<&Outcome> {
        self.by_sample.get(&sample)?.get(metric)
    }
}

/// Reads samples' outcomes back from the journal (see [`JournalIndex::reader`]).
pub struct OutcomeReader<'i, 'a> {
    index: &'i JournalIndex<'a>,
    file: Option<LineReader>,
}

impl<'i> OutcomeReader<'i, '_> {
    /// The sample at `sample`'s outcome of each metric it has a line for.
    pub fn sample(&mut self, sample: usize) -> Result<SampleOutcomes<'i>, ReportError> {
        let index = self.index;
        let mut outcomes = SampleOutcomes::new();
        for (metric, lines) in index.metrics.iter().zip(&index.last_lines) {
            let Some(position) = lines.get(sample).filter(|&p| p != NO_LINE) else {
                continue;
            };
            let outcome = self.outcome_at(position, index.id(sample), metric)?;
            outcomes.insert(metric.as_str(), outcome);
        }
        Ok(outcomes)
    }

    /// The outcome on the line at `position`, which must be `sample_id`'s for `metric`.
    fn outcome_at(
        &mut self,
        position: u64,
        sample_id: &str,
        metric: &str,
    ) -> Result<Outcome, ReportError> {
        match &self.index.source {
            Source::Records(records) => usize::try_from(position)
                .ok()
                .and_then(|at| records.get(at))
                .map(|record| record.outcome.clone())
                .ok_or_else(|| ReportError::JournalChanged {
                    path: PathBuf::new(),
                }),
            Source::File(path) => {
                let reader = match &mut self.file {
                    Some(reader) => reader,
                    None => self.file.insert(LineReader::open(path)?),
                };
                let changed = || ReportError::JournalChanged { path: path.clone() };
                let line = reader
                    .line_at(position)
                    .map_err(|source| ReportError::Read {
                        path: path.clone(),
                        source,
                    })?;
                let record: ResultRecord = serde_json::from_str(line).map_err(|_| changed())?;
                if record.sample_id != sample_id || record.metric != metric {
                    return Err(changed());
                }
                Ok(record.outcome)
            }
        }
    }
}

/// Reads lines of a file at given offsets, keeping its buffer when the next line asked for
/// follows the last (a journal written sample by sample is read in order).
struct LineReader {
    reader: BufReader<File>,
    /// The offset the reader stands at.
    at: u64,
    line: String,
}

impl LineReader {
    fn open(path: &Path) -> Result<Self, ReportError> {
        let file = File::open(path).map_err(|source| ReportError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            reader: BufReader::new(file),
            at: 0,
            line: String::new(),
        })
    }

    fn line_at(&mut self, offset: u64) -> std::io::Result<&str> {
        if offset != self.at {
            let ahead = i64::try_from(offset).map_err(std::io::Error::other)?;
            let here = i64::try_from(self.at).map_err(std::io::Error::other)?;
            self.reader.seek_relative(ahead - here)?;
        }
        self.line.clear();
        let read = self.reader.read_line(&mut self.line)?;
        self.at = offset + read as u64;
        Ok(&self.line)
    }
}

/// A column of byte offsets: four bytes each while every offset fits in 32 bits, eight from
/// the first one that does not (a journal or an id text past 4 GiB). A 100,000-sample run's
/// index is mostly these columns, so they are what its reports' memory grows by.
#[derive(Debug)]
enum Positions {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

/// What [`Positions::Narrow`] stores for `u64::MAX` (the columns' "none"): a real position of
/// `u32::MAX` widens the column instead.
const NARROW_NONE: u32 = u32::MAX;

impl Default for Positions {
    fn default() -> Self {
        Positions::Narrow(Vec::new())
    }
}

impl Positions {
    fn len(&self) -> usize {
        match self {
            Positions::Narrow(column) => column.len(),
            Positions::Wide(column) => column.len(),
        }
    }

    fn get(&self, at: usize) -> Option<u64> {
        match self {
            Positions::Narrow(column) => column.get(at).map(|&p| widen(p)),
            Positions::Wide(column) => column.get(at).copied(),
        }
    }

    /// Sets slot `at` to `position`, growing the column with `fill` to hold it.
    fn set(&mut self, at: usize, position: u64, fill: u64) {
        if self.len() <= at {
            self.resize(at + 1, fill);
        }
        self.narrow_or_widen(position);
        match self {
            Positions::Narrow(column) => column[at] = narrowed(position).unwrap_or(NARROW_NONE),
            Positions::Wide(column) => column[at] = position,
        }
    }

    fn push(&mut self, position: u64) {
        self.narrow_or_widen(position);
        match self {
            Positions::Narrow(column) => column.push(narrowed(position).unwrap_or(NARROW_NONE)),
            Positions::Wide(column) => column.push(position),
        }
    }

    fn resize(&mut self, len: usize, fill: u64) {
        self.narrow_or_widen(fill);
        match self {
            Positions::Narrow(column) => {
                column.resize(len, narrowed(fill).unwrap_or(NARROW_NONE));
            }
            Positions::Wide(column) => column.resize(len, fill),
        }
    }

    fn shrink_to_fit(&mut self) {
        match self {
            Positions::Narrow(column) => column.shrink_to_fit(),
            Positions::Wide(column) => column.shrink_to_fit(),
        }
    }

    /// Makes the column wide when `position` does not fit a narrow one.
    fn narrow_or_widen(&mut self, position: u64) {
        if let Positions::Narrow(column) = self
            && narrowed(position).is_none()
        {
            *self = Positions::Wide(column.iter().map(|&p| widen(p)).collect());
        }
    }
}

/// `position` as a narrow column stores it, or `None` when it needs eight bytes.
fn narrowed(position: u64) -> Option<u32> {
    if position == u64::MAX {
        return Some(NARROW_NONE);
    }
    u32::try_from(position).ok().filter(|&p| p != NARROW_NONE)
}

fn widen(position: u32) -> u64 {
    if position == NARROW_NONE {
        u64::MAX
    } else {
        u64::from(position)
    }
}

/// Sample ids in the order they were first inserted, each stored once in one string: a
/// 100,000-sample run's ids cost about their bytes, four bytes for where each ends and one
/// word in a hash table.
struct SampleIds {
    text: String,
    /// Where each id ends in `text`.
    ends: Positions,
    /// Each id's index, found by the id's hash.
    table: hashbrown::HashTable<usize>,
    hash: fn(&str) -> u64,
}

impl Default for SampleIds {
    fn default() -> Self {
        Self {
            text: String::new(),
            ends: Positions::default(),
            table: hashbrown::HashTable::new(),
            hash: |id| BuildHasherDefault::<DefaultHasher>::default().hash_one(id),
        }
    }
}

impl SampleIds {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, at: usize) -> &str {
        id_at(&self.text, &self.ends, at)
    }

    fn find(&self, id: &str) -> Option<usize> {
        let (text, ends) = (&self.text, &self.ends);
        self.table
            .find((self.hash)(id), |&at| id_at(text, ends, at) == id)
            .copied()
    }

    /// The index of `id`, inserted at the end when it is new.
    fn insert(&mut self, id: &str) -> usize {
        let hash = (self.hash)(id);
        let (text, ends, rehash) = (&self.text, &self.ends, self.hash);
        match self.table.entry(
            hash,
            |&at| id_at(text, ends, at) == id,
            |&at| rehash(id_at(text, ends, at)),
        ) {
            hashbrown::hash_table::Entry::Occupied(found) => *found.get(),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let at = self.ends.len();
                slot.insert(at);
                self.text.push_str(id);
                self.ends.push(self.text.len() as u64);
                at
            }
        }
    }

    fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// The id at `at` of ids stored as `SampleIds` stores them.
fn id_at<'t>(text: &'t str, ends: &Positions, at: usize) -> &'t str {
    let end = |at: usize| {
        ends.get(at)
            .and_then(|e| usize::try_from(e).ok())
            .unwrap_or(0)
    };
    let start = at.checked_sub(1).map_or(0, end);
    text.get(start..end(at)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use crate::{RESULTS_FILE, RunData};

    #[test]
    fn ids_that_share_a_hash_stay_apart() {
        let mut ids = SampleIds {
            hash: |_| 7,
            ..SampleIds::default()
        };
        for id in ["a", "bb", "a", "", "c", "bb"] {
            ids.insert(id);
        }
        assert_eq!(ids.len(), 4);
        let all: Vec<&str> = (0..ids.len()).map(|at| ids.get(at)).collect();
        assert_eq!(all, vec!["a", "bb", "", "c"]);
        assert_eq!(ids.find("c"), Some(3));
        assert_eq!(ids.find("bb"), Some(1));
        assert_eq!(ids.find("d"), None);
    }

    #[test]
    fn a_position_past_32_bits_widens_the_column_and_keeps_every_value() {
        let far = u64::from(u32::MAX) + 10;
        let mut column = Positions::default();
        column.push(7);
        column.set(3, 9, NO_LINE);
        assert!(matches!(column, Positions::Narrow(_)));
        // u32::MAX itself is a real offset, not the narrow column's "none".
        column.set(4, u64::from(u32::MAX), NO_LINE);
        assert!(matches!(column, Positions::Wide(_)));
        column.set(5, far, NO_LINE);
        let all: Vec<Option<u64>> = (0..7).map(|at| column.get(at)).collect();
        let none = Some(NO_LINE);
        let max = Some(u64::from(u32::MAX));
        assert_eq!(
            all,
            vec![Some(7), none, none, Some(9), max, Some(far), None]
        );
    }

    #[test]
    fn the_file_and_the_records_give_the_same_answers() {
        let dir = tempfile::tempdir().unwrap();
        write_run(
            dir.path(),
            "sha",
            &[
                ("s1", "m", Outcome::bare(0.5)),
                ("s2", "m", Outcome::failed("judge down")),
                ("s1", "k", Outcome::bare(1.0)),
                // A later line for the same cell wins; a later non-score keeps the score.
                ("s2", "m", Outcome::bare(0.25)),
                ("s1", "m", Outcome::undefined("retried")),
            ],
        );
        let run = RunData::load(dir.path()).unwrap();
        let from_file = JournalIndex::read(&dir.path().join(RESULTS_FILE)).unwrap();
        let in_memory = JournalIndex::of_records(&run.records);
        for index in [&from_file, &in_memory] {
            assert_eq!(index.len(), 2);
            assert_eq!((index.id(0), index.id(1)), ("s1", "s2"));
            assert_eq!(index.index_of("s2"), Some(1));
            assert_eq!(index.metric_names(&["k".into()]), vec!["k", "m"]);
            let scores: Vec<(usize, f64)> = index.scores("m").collect();
            assert_eq!(scores, vec![(0, 0.5), (1, 0.25)]);
            assert_eq!(index.failed().collect::<Vec<_>>(), vec![1]);
            assert_eq!(index.input_order(["s2"]), vec![1, 0]);
            let outcomes = index.outcomes([1, 0, 1]).unwrap();
            assert_eq!(outcomes.get(0, "m"), Some(&Outcome::undefined("retried")));
            assert_eq!(outcomes.get(0, "k"), Some(&Outcome::bare(1.0)));
            assert_eq!(outcomes.get(1, "m"), Some(&Outcome::bare(0.25)));
            assert_eq!(outcomes.get(1, "k"), None);
            let mut lines = 0;
            index
                .for_each_record(|_| {
                    lines += 1;
                    Ok(())
                })
                .unwrap();
            assert_eq!(lines, 5);
        }
    }

    #[test]
    fn a_journal_rewritten_under_the_reader_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        write_run(
            dir.path(),
            "sha",
            &[
                ("s1", "m", Outcome::bare(0.5)),
                ("s2", "m", Outcome::bare(0.75)),
            ],
        );
        let path = dir.path().join(RESULTS_FILE);
        let index = JournalIndex::read(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("s2", "s3")).unwrap();
        let error = index.outcomes([1]).err().unwrap();
        assert!(
            matches!(error, ReportError::JournalChanged { .. }),
            "{error}"
        );
    }
}
