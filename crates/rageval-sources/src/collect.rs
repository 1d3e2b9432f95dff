//! `rageval collect`: run every question through a retriever and a generator, concurrently,
//! and append one dataset record per question to a JSONL file that `rageval eval` reads.
//!
//! Resumable: the output is scanned first, and only questions whose id is not in it are
//! asked. Each record is one `write` of a complete line followed by a flush, so a crash can
//! at worst leave a last line without its newline; the next run cuts that line off before
//! appending (a line that is not a complete JSON object never counts as done). Records are
//! appended in completion order; once every question has its record, the file is rewritten
//! in question order (a sibling file renamed over it, so it is never half-written), records
//! of ids that are not among the questions last.
//!
//! A question that fails (after the clients' own retries) is reported and left out, so a
//! rerun asks it again. An error that would fail every question — bad credentials, a missing
//! index, a bad template, a placeholder without a value, hits without the text field, a
//! server that refuses connections — stops the run: no new question starts, the ones in
//! flight finish and are written, and the error is returned.
//!
//! Empty results — no contexts from the retriever, an empty answer after the generator's
//! own retries — are written and counted in the report; with
//! [`CollectOptions::fail_on_empty`] they are failures instead (left out, asked again by a
//! rerun).
//!
//! The output file is created with its first record: a run in which every question fails
//! leaves no file (or the earlier run's file as it was), never an empty one that looks like
//! a finished collection. A cancel ([`CollectOptions::cancel`], Ctrl-C in the binary) starts
//! no new question and drops the ones in flight (asked again by the next run); the report
//! says it was [`CollectReport::interrupted`].

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rageval_core::Sample;
use rageval_judge::CancelToken;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use crate::error::SourceError;
use crate::json_path::scalar_text;
use crate::system::{Generated, Generator, Retrieved, Retriever};

/// Questions in flight at once, by default.
pub const DEFAULT_CONCURRENCY: usize = 4;
/// Key of the per-record provenance object.
pub const COLLECTED_KEY: &str = "collected";

/// Where each question's contexts come from.
#[derive(Clone)]
pub enum ContextSource {
    /// A retriever, asked before the generator; its contexts are given to the generator.
    Retriever(Arc<dyn Retriever>),
    /// The generator's own answer (a RAG service that reports the contexts it used).
    Generator,
}

/// How to collect.
#[derive(Debug, Clone)]
pub struct CollectOptions {
    /// Questions in flight at once (at least 1).
    pub concurrency: usize,
    /// Whether a question without contexts or with an empty answer fails instead of being
    /// written (and counted).
    pub fail_on_empty: bool,
    /// Tripped, the run asks no new question, drops those in flight and returns what it
    /// wrote, marked interrupted.
    pub cancel: Option<CancelToken>,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            concurrency: DEFAULT_CONCURRENCY,
            fail_on_empty: false,
            cancel: None,
        }
    }
}

/// Progress after each finished question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Questions finished in this run (written or failed).
    pub finished: usize,
    /// Questions this run set out to ask.
    pub to_ask: usize,
    /// Of the finished, how many failed.
    pub failed: usize,
}

/// What a run did.
#[derive(Debug)]
pub struct CollectReport {
    /// Questions already in the output before this run.
    pub already_done: usize,
    /// Records written by this run.
    pub written: usize,
    /// Questions that failed, with their errors, in completion order.
    pub failed: Vec<(String, SourceError)>,
    /// Records of the output whose id is not among the questions (kept, last).
    pub unknown_ids: usize,
    /// Ids of the records written without contexts (the retriever found nothing), in
    /// completion order.
    pub without_contexts: Vec<String>,
    /// Ids of the records written with an empty answer, in completion order.
    pub empty_answers: Vec<String>,
    /// Whether every question has its record, so the output is complete and in question
    /// order.
    pub complete: bool,
    /// Whether a cancel stopped the run before every question was asked.
    pub interrupted: bool,
}

/// Collects a record for every sample whose id is not yet in `out`.
pub async fn collect(
    samples: Vec<Sample>,
    contexts: ContextSource,
    generator: Arc<dyn Generator>,
    out: &Path,
    options: &CollectOptions,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<CollectReport, SourceError> {
    let done = scan_output(out)?;
    let known: HashSet<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    let unknown_ids = done
        .iter()
        .filter(|id| !known.contains(id.as_str()))
        .count();
    let todo: Vec<Sample> = samples
        .iter()
        .filter(|s| !done.contains(&s.id))
        .cloned()
        .collect();
    let already_done = samples.len() - todo.len();
    let mut writer = RecordWriter::append_on_first_write(out);
    let provenance = Provenance {
        retriever: match &contexts {
            ContextSource::Retriever(r) => r.describe(),
            ContextSource::Generator => format!("{} (its contexts)", generator.describe()),
        },
        generator: generator.describe(),
    };
    let mut report = CollectReport {
        already_done,
        written: 0,
        failed: Vec::new(),
        unknown_ids,
        without_contexts: Vec::new(),
        empty_answers: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let to_ask = todo.len();
    let mut queue = todo.into_iter();
    let mut running = JoinSet::new();
    let mut fatal: Option<SourceError> = None;
    let concurrency = options.concurrency.max(1);
    let cancel = options.cancel.as_ref();
    let is_cancelled = || cancel.is_some_and(CancelToken::is_cancelled);
    loop {
        while fatal.is_none() && !is_cancelled() && running.len() < concurrency {
            let Some(sample) = queue.next() else { break };
            let contexts = contexts.clone();
            let generator = Arc::clone(&generator);
            running.spawn(async move {
                let result = ask(&sample, &contexts, generator.as_ref()).await;
                (sample, result)
            });
        }
        let joined = tokio::select! {
            biased;
            () = cancelled(cancel) => {
                // Dropped, not awaited: a question in flight may wait minutes for its
                // answer, and the next run asks it again.
                running.abort_all();
                report.interrupted = true;
                break;
            }
            joined = running.join_next() => joined,
        };
        let Some(joined) = joined else {
            break;
        };
        let (sample, result) = joined.map_err(|e| SourceError::Config {
            origin: "collect".into(),
            detail: format!("a question's task failed: {e}"),
        })?;
        match result.and_then(|asked| empty_as_error(asked, options, &provenance)) {
            Ok(asked) => {
                writer.write(&record(&sample, &asked, &provenance))?;
                report.written += 1;
                if asked.contexts.is_empty() {
                    report.without_contexts.push(sample.id.clone());
                }
                if asked.generated.answer.trim().is_empty() {
                    report.empty_answers.push(sample.id.clone());
                }
            }
            Err(error) if error.is_fatal() => {
                fatal.get_or_insert(error);
            }
            Err(error) => report.failed.push((sample.id.clone(), error)),
        }
        on_progress(Progress {
            finished: report.written + report.failed.len(),
            to_ask,
            failed: report.failed.len(),
        });
    }
    if let Some(error) = fatal {
        return Err(error);
    }
    drop(writer);
    if report.interrupted {
        return Ok(report);
    }
    if report.failed.is_empty() && out.exists() {
        let order: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
        order_output(out, &order)?;
        report.complete = true;
    }
    Ok(report)
}

/// Resolves when `cancel` is tripped; never without one.
async fn cancelled(cancel: Option<&CancelToken>) {
    match cancel {
        Some(cancel) => cancel.cancelled().await,
        None => std::future::pending().await,
    }
}

/// An empty result as the error it is when `options` says so: no contexts from the
/// retriever, or an empty answer.
fn empty_as_error(
    asked: Asked,
    options: &CollectOptions,
    provenance: &Provenance,
) -> Result<Asked, SourceError> {
    if !options.fail_on_empty {
        return Ok(asked);
    }
    if asked.generated.answer.trim().is_empty() {
        return Err(SourceError::EmptyAnswer {
            endpoint: provenance.generator.clone(),
            attempts: asked.empty_answers.max(1),
            requests: asked.generated.attempts,
        });
    }
    if asked.contexts.is_empty() {
        return Err(SourceError::NoContexts {
            retriever: provenance.retriever.clone(),
        });
    }
    Ok(asked)
}

/// One question's contexts and answer, and how long they took.
struct Asked {
    contexts: Vec<Retrieved>,
    generated: Generated,
    /// Empty answers the generator gave up on (0 when it answered).
    empty_answers: u32,
    millis: u64,
}

async fn ask(
    sample: &Sample,
    source: &ContextSource,
    generator: &dyn Generator,
) -> Result<Asked, SourceError> {
    let started = Instant::now();
    let (contexts, generated) = match source {
        ContextSource::Retriever(retriever) => {
            let retrieved = retriever.retrieve(sample).await?;
            let generated = answer_or_empty(generator.generate(sample, &retrieved).await)?;
            // A generator that says which contexts it answered from (e.g. the baseline after
            // leaving some out to fit its window) is judged against those.
            let contexts = generated.0.contexts.clone().unwrap_or(retrieved);
            (contexts, generated)
        }
        ContextSource::Generator => {
            let generated = answer_or_empty(generator.generate(sample, &[]).await)?;
            if generated.0.answer.is_empty() && generated.0.contexts.is_none() {
                return Ok(Asked {
                    contexts: Vec::new(),
                    empty_answers: generated.1,
                    generated: generated.0,
                    millis: started.elapsed().as_millis() as u64,
                });
            }
            let contexts = generated.0.contexts.clone().ok_or_else(|| SourceError::Config {
                origin: generator.describe(),
                detail: "contexts were to come from the generator, and it reports none (set a contexts path for a JSON response)".into(),
            })?;
            (contexts, generated)
        }
    };
    let (generated, empty_answers) = generated;
    Ok(Asked {
        contexts,
        generated,
        empty_answers,
        millis: started.elapsed().as_millis() as u64,
    })
}

/// A generator's empty answer (after its own retries) as an empty answer, for `collect` to
/// count or fail on, with the number of empty answers it gave up on (0 for an answer). The
/// record's `attempts` are the requests made.
fn answer_or_empty(
    result: Result<Generated, SourceError>,
) -> Result<(Generated, u32), SourceError> {
    match result {
        Err(SourceError::EmptyAnswer {
            attempts, requests, ..
        }) => Ok((
            Generated {
                answer: String::new(),
                contexts: None,
                attempts: requests,
                details: Map::new(),
            },
            attempts,
        )),
        other => other.map(|generated| (generated, 0)),
    }
}

#[derive(Serialize)]
struct Provenance {
    retriever: String,
    generator: String,
}

#[derive(Serialize)]
struct Collected<'a> {
    #[serde(flatten)]
    provenance: &'a Provenance,
    millis: u64,
    attempts: u32,
    #[serde(skip_serializing_if = "Map::is_empty")]
    generation: &'a Map<String, Value>,
}

/// One output record: the question's sample with the collected answer and contexts, and
/// the provenance under [`COLLECTED_KEY`]. Statements and questions derived from an earlier
/// answer are dropped (they describe another answer); everything else is kept as read.
fn record(sample: &Sample, asked: &Asked, provenance: &Provenance) -> Sample {
    let collected = Collected {
        provenance,
        millis: asked.millis,
        attempts: asked.generated.attempts,
        generation: &asked.generated.details,
    };
    let mut metadata = sample.metadata.clone();
    metadata.insert(
        COLLECTED_KEY.into(),
        serde_json::to_value(&collected).unwrap_or(Value::Null),
    );
    Sample {
        answer: Some(asked.generated.answer.clone()),
        contexts: asked.contexts.iter().map(Retrieved::to_context).collect(),
        answer_statements: None,
        simulated_questions: None,
        metadata,
        ..sample.clone()
    }
}

/// Appends complete lines to the output, which it opens (creating it and its folder) at
/// the first record: no record, no file.
struct RecordWriter {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl RecordWriter {
    fn append_on_first_write(path: &Path) -> Self {
        RecordWriter {
            path: path.to_owned(),
            file: None,
        }
    }

    fn open(path: &Path) -> Result<std::fs::File, SourceError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| SourceError::io(path, e))
    }

    fn write(&mut self, record: &impl Serialize) -> Result<(), SourceError> {
        let mut line = serde_json::to_string(record).map_err(|e| SourceError::Output {
            path: self.path.clone(),
            line: 0,
            detail: format!("cannot encode a record: {e}"),
        })?;
        line.push('\n');
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(Self::open(&self.path)?),
        };
        // One write of the whole line: a crash leaves a prefix without a newline at most.
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| SourceError::io(&self.path, e))
    }
}

/// The ids already in `path` (none when it does not exist). A last line without its newline
/// (a write cut short) is removed from the file; any other line that is not a JSON object
/// with an id is an error naming the line.
pub fn scan_output(path: &Path) -> Result<HashSet<String>, SourceError> {
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(SourceError::io(path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| SourceError::io(path, e))?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        file.set_len(complete as u64)
            .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
            .map_err(|e| SourceError::io(path, e))?;
    }
    let text = String::from_utf8_lossy(&bytes[..complete]);
    let mut ids = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |detail: String| SourceError::Output {
            path: path.to_owned(),
            line: i + 1,
            detail,
        };
        let value: Value = serde_json::from_str(line).map_err(|e| {
            bad(format!(
                "not a json record ({e}); is this the output of `rageval collect`?"
            ))
        })?;
        let id = value
            .get("id")
            .and_then(scalar_text)
            .ok_or_else(|| bad("a record without an `id`".into()))?;
        ids.insert(id);
    }
    Ok(ids)
}

/// Rewrites `path` with its records in the order of `ids` (records of other ids last, in
/// their order; blank lines dropped), through a sibling file renamed over it. Does nothing
/// when the records are in that order already.
pub fn order_output(path: &Path, ids: &[&str]) -> Result<(), SourceError> {
    let text = std::fs::read_to_string(path).map_err(|e| SourceError::io(path, e))?;
    let position: std::collections::HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| (*id, i))
        .collect();
    let mut lines: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let id = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("id").and_then(scalar_text))
            .ok_or_else(|| SourceError::Output {
                path: path.to_owned(),
                line: i + 1,
                detail: "not a json record with an `id`".into(),
            })?;
        let key = position.get(id.as_str()).copied().unwrap_or(usize::MAX);
        lines.push((key, line));
    }
    let in_order = lines.windows(2).all(|w| w[0].0 <= w[1].0);
    if in_order && lines.len() == text.lines().count() {
        return Ok(());
    }
    lines.sort_by_key(|(key, _)| *key);
    let mut ordered = String::with_capacity(text.len());
    for (_, line) in lines {
        ordered.push_str(line);
        ordered.push('\n');
    }
    rageval_core::files::write_atomically(path, ordered.as_bytes())
        .map_err(|e| SourceError::io(path, e))?;
    Ok(())
}
