//! Results journals read back one line at a time, and their summary: what `eval` ends with
//! and what `merge` computes over the shards' journals together. Memory holds the values
//! the bootstrap needs (a number per scored cell) and a digest per sample, never the lines.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use rageval_core::{Hop, Sample};
use rageval_report::{Aggregator, ConversationTally, HopTally, ResultRecord, Summary};

use crate::engine::cells::SampleKey;
use crate::engine::error::{Result, RunError};
use crate::engine::resume::{REMOVE_THE_LINE, record_fault};

/// Calls `visit` with every record of the journal at `path` and its line number, in file
/// order (blank lines skipped); a line that is not a record, or one that no metric wrote
/// ([`ResultRecord::fault`]), names the file and line.
pub fn for_each_record(
    path: &Path,
    mut visit: impl FnMut(usize, ResultRecord) -> Result<()>,
) -> Result<()> {
    let file = File::open(path).map_err(RunError::read(path))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(RunError::read(path))? == 0 {
            return Ok(());
        }
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let record: ResultRecord =
            serde_json::from_str(&line).map_err(|source| RunError::Journal {
                path: path.to_path_buf(),
                line: number,
                source,
            })?;
        if let Some(why) = record.fault() {
            return Err(RunError::JournalValue {
                path: path.to_path_buf(),
                line: number,
                why: format!("{why}; {REMOVE_THE_LINE}"),
            });
        }
        visit(number, record)?;
    }
}

/// Summarises records as they come: per metric the outcomes, the samples seen, the turns
/// of conversations by conversation and the retrieval-hop rows by hop.
pub struct Summarising<'a> {
    aggregator: Aggregator,
    samples: HashSet<SampleKey>,
    /// Where the samples sit, as the data says.
    positions: Option<&'a Positions>,
    conversations: ConversationTally,
    hops: HopTally,
}

impl<'a> Summarising<'a> {
    /// A summary of the metrics `names`, in that order.
    pub fn new(names: &[String]) -> Self {
        Summarising {
            aggregator: Aggregator::new(names.to_vec()),
            samples: HashSet::new(),
            positions: None,
            conversations: ConversationTally::default(),
            hops: HopTally::default(),
        }
    }

    /// The same, with per-conversation and per-hop figures for the samples `positions`
    /// names.
    pub fn with_positions(mut self, positions: &'a Positions) -> Self {
        self.positions = Some(positions);
        self
    }

    /// Adds one record.
    pub fn add(&mut self, record: &ResultRecord) {
        self.aggregator.add(&record.metric, &record.outcome);
        self.samples.insert(SampleKey::of(&record.sample_id));
        let Some(positions) = self.positions else {
            return;
        };
        if let Some(conversation) = positions.conversations.get(&record.sample_id) {
            self.conversations
                .add(conversation, &record.metric, &record.outcome);
        }
        if let Some(hop) = positions.hops.get(&record.sample_id) {
            let id = &record.sample_id;
            self.hops
                .add(id, hop.index, &record.metric, &record.outcome);
            self.hops.note_use(id, hop.index, hop.used_by_answer);
        }
    }

    /// The summary, with `resamples` bootstrap draws under `seed`.
    pub fn finish(self, resamples: usize, seed: u64) -> Summary {
        let mut summary = self.aggregator.finish(self.samples.len(), resamples, seed);
        summary.conversations = self.conversations.finish();
        summary.hops = self.hops.finish();
        summary
    }
}

/// What a scoring pass read of the data: each sample's key, and where the samples sit.
#[derive(Debug, Default)]
pub struct SamplesRead {
    pub keys: HashSet<SampleKey>,
    pub positions: Positions,
}

/// Where the samples of a run sit, by sample id: the conversation of each turn, the hop of
/// each retrieval-hop row.
#[derive(Debug, Default)]
pub struct Positions {
    pub conversations: HashMap<String, String>,
    pub hops: HashMap<String, Hop>,
}

/// `samples`, noting into `into` the conversation of each sample that is a turn of one and
/// the hop of each that is a retrieval hop.
pub fn noting_positions<'a, E>(
    samples: impl Iterator<Item = std::result::Result<Sample, E>> + 'a,
    into: &'a mut Positions,
) -> impl Iterator<Item = std::result::Result<Sample, E>> + 'a {
    samples.inspect(move |sample| {
        let Ok(sample) = sample else {
            return;
        };
        if let Some(conversation) = &sample.conversation_id {
            into.conversations
                .insert(sample.id.clone(), conversation.clone());
        }
        if let Some(hop) = sample.hop {
            into.hops.insert(sample.id.clone(), hop);
        }
    })
}

/// The summary of every cell in the journal at `path`, a run of the metrics `names` over
/// the samples `read` (their keys, as the scoring pass read them from the data): a line of
/// another metric, out of its metric's range ([`record_fault`]) or of a sample the data
/// does not hold is refused, naming the file and line, so the summary counts each sample
/// of the data once and nothing else.
pub fn summarise(
    path: &Path,
    names: &[String],
    read: &SamplesRead,
    resamples: usize,
    seed: u64,
) -> Result<Summary> {
    let mut summary = Summarising::new(names).with_positions(&read.positions);
    let read = &read.keys;
    for_each_record(path, |line, record| {
        let fault = record_fault(&record, names).or_else(|| {
            (!read.contains(&SampleKey::of(&record.sample_id))).then(|| {
                format!(
                    "sample `{}` is not in the run's data; {REMOVE_THE_LINE}",
                    record.sample_id
                )
            })
        });
        if let Some(why) = fault {
            return Err(RunError::JournalValue {
                path: path.to_path_buf(),
                line,
                why,
            });
        }
        summary.add(&record);
        Ok(())
    })?;
    Ok(summary.finish(resamples, seed))
}
