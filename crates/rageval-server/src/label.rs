//! `rageval label RUN_DIR`: a page on loopback where a person labels a seeded random sample
//! of a finished run's samples for one metric, one at a time, by keyboard, into a labels
//! file that `judge-check` and `calibrate` read (docs/calibration.md, "Labelling").
//!
//! [`label_server`] prepares the session — the metric and its scale, the sample
//! (`label_sample`), the labels already saved (`label_file`) — and binds the socket;
//! `label_app` answers the page, its script and its two API routes; `label_page` writes the
//! page in English or Chinese. The judge's score for an item is sent only once the item has
//! a label, so the page cannot show it before. This module writes one file, the labels
//! file; it never changes the run.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use rageval_core::stats::DEFAULT_SEED;
use rageval_core::text::{Language, detect_language};
use rageval_core::{Outcome, Sample};
use rageval_report::RunData;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::ServerError;
use crate::label_file::LabelsFile;
use crate::label_sample::choose;

/// How a person labels an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelScale {
    /// Good or not (`y` / `n`), written as `"label": true | false`.
    Binary,
    /// A grade from 1 (worst) to 5 (best), written as `"grade": N`; calibrate reads it with
    /// `--label-scale 1..5`.
    Graded,
}

impl LabelScale {
    /// The highest grade of the graded scale (the lowest is 1).
    pub const TOP_GRADE: u8 = 5;

    pub fn name(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::Graded => "graded",
        }
    }

    /// The field of a labels line that holds a label of this scale.
    pub(crate) fn field(self) -> &'static str {
        match self {
            Self::Binary => "label",
            Self::Graded => "grade",
        }
    }

    /// Binary when every score of the metric is 0 or 1 (a verdict per sample), else graded.
    fn of_scores(scores: impl IntoIterator<Item = f64>) -> Self {
        let mut scores = scores.into_iter().peekable();
        if scores.peek().is_some() && scores.all(|s| s == 0.0 || s == 1.0) {
            Self::Binary
        } else {
            Self::Graded
        }
    }
}

/// One label as the person gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelValue {
    Binary(bool),
    Grade(u8),
}

impl LabelValue {
    /// The label of a labels line of `scale`'s shape: exactly its field, with a valid value.
    pub(crate) fn of_line(line: &Map<String, Value>, scale: LabelScale) -> Option<Self> {
        let other = match scale {
            LabelScale::Binary => "grade",
            LabelScale::Graded => "label",
        };
        if line.contains_key(other) || line.contains_key("preferred") {
            return None;
        }
        Self::of_json(line.get(scale.field())?, scale)
    }

    /// A label sent by the page: `true`/`false`, or a whole grade within the scale.
    pub(crate) fn of_json(value: &Value, scale: LabelScale) -> Option<Self> {
        match scale {
            LabelScale::Binary => value.as_bool().map(Self::Binary),
            LabelScale::Graded => value
                .as_u64()
                .and_then(|g| u8::try_from(g).ok())
                .filter(|g| (1..=LabelScale::TOP_GRADE).contains(g))
                .map(Self::Grade),
        }
    }

    pub(crate) fn to_json(self) -> Value {
        match self {
            Self::Binary(good) => json!(good),
            Self::Grade(grade) => json!(grade),
        }
    }
}

/// The language of the page's own text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageLanguage {
    En,
    Zh,
}

/// What `rageval label` asks for.
#[derive(Debug, Clone)]
pub struct LabelOptions {
    /// The metric labelled; default the run's first metric whose scores carry the judge's
    /// verdicts.
    pub metric: Option<String>,
    /// How many samples to label (all the metric's scored samples when fewer).
    pub samples: usize,
    pub seed: u64,
    /// A dataset field whose values are strata, for a stratified sample.
    pub stratify: Option<String>,
    /// Who labels; their labels go to a file of their own.
    pub labeller: String,
    /// The scale; default binary for a metric whose every score is 0 or 1, else graded.
    pub scale: Option<LabelScale>,
    /// The page's language; default the run's judge language, else that of the questions.
    pub language: Option<PageLanguage>,
    /// The labels file; default `RUN_DIR/labels/LABELLER.METRIC.jsonl`.
    pub labels: Option<PathBuf>,
    /// What each metric asks, in Chinese, by metric name: a Chinese page shows it in place
    /// of the manifest's English formula (the caller knows the metrics; this crate does not).
    pub summaries_zh: BTreeMap<String, String>,
    /// Where to listen: a loopback address (port 0 picks a free port).
    pub bind: SocketAddr,
}

impl LabelOptions {
    /// The defaults for a labeller: 50 samples, rageval's default seed, port 8322.
    pub fn new(labeller: impl Into<String>) -> Self {
        Self {
            metric: None,
            samples: 50,
            seed: DEFAULT_SEED,
            stratify: None,
            labeller: labeller.into(),
            scale: None,
            language: None,
            labels: None,
            summaries_zh: BTreeMap::new(),
            bind: SocketAddr::from(([127, 0, 0, 1], 8322)),
        }
    }
}

/// Why a labelling session cannot start or a label cannot be saved.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error("the run has no metric named `{metric}` (it has: {known})")]
    UnknownMetric { metric: String, known: String },
    #[error(
        "the run has no metric scored by a judge (hint: name the metric to label with --metric)"
    )]
    NoJudgedMetric,
    #[error("`{metric}` has no scored sample to label (every one is undefined or failed)")]
    NothingToLabel { metric: String },
    #[error(
        "the run's samples have no texts (hint: the dataset the run read must still be readable and unchanged)"
    )]
    NoTexts,
    #[error("no sample has the field `{field}` to stratify by (hint: fields there: {known})")]
    UnknownStratum { field: String, known: String },
    #[error(
        "`{name}` is not a labeller name (hint: letters, digits, `-`, `_` and `.`, not starting with `.`)"
    )]
    BadLabeller { name: String },
    #[error("the labelling page listens on loopback only, not on {addr}")]
    NotLoopback { addr: SocketAddr },
    #[error("cannot read labels file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write labels file {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: not a JSON object", path.display())]
    NotJson {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}:{line}: field `{field}`: {why}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        field: &'static str,
        why: String,
    },
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// One sample to label, as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Item {
    pub id: String,
    pub question: String,
    pub contexts: Vec<String>,
    pub answer: Option<String>,
    pub reference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stratum: Option<String>,
}

impl Item {
    fn of(sample: &Sample, stratum: Option<String>) -> Self {
        Self {
            id: sample.id.clone(),
            question: sample.question.clone(),
            contexts: sample.contexts.iter().map(|c| c.text.clone()).collect(),
            answer: sample.answer.clone(),
            reference: sample.reference_text(),
            stratum,
        }
    }

    /// This item's line in the labels file.
    pub(crate) fn line(&self, session: &Session, label: LabelValue) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("id".into(), json!(self.id));
        line.insert("metric".into(), json!(session.metric));
        line.insert("labeller".into(), json!(session.labeller));
        line.insert(session.scale.field().into(), label.to_json());
        line.insert("question".into(), json!(self.question));
        line.insert("contexts".into(), json!(self.contexts));
        if let Some(answer) = &self.answer {
            line.insert("answer".into(), json!(answer));
        }
        if let Some(reference) = &self.reference {
            line.insert("reference".into(), json!(reference));
        }
        if let Some(stratum) = &self.stratum {
            line.insert("stratum".into(), json!(stratum));
        }
        line
    }
}

/// A labelling session: what is labelled, how, by whom, and the labels so far.
#[derive(Debug)]
pub(crate) struct Session {
    pub run: String,
    pub run_dir: PathBuf,
    pub metric: String,
    /// What the metric measures (the run's manifest, or its Chinese summary on a Chinese
    /// page), shown as the labelling question.
    pub formula: String,
    /// The flags that name the run's judge, for the `judge-check` command shown at the end.
    pub judge_flags: String,
    pub scale: LabelScale,
    pub labeller: String,
    pub language: PageLanguage,
    pub stratify: Option<String>,
    pub items: Vec<Item>,
    /// The judge's outcome per item, sent once the item has a label.
    pub judged: Vec<Outcome>,
    pub file: LabelsFile,
}

impl Session {
    /// The label of item `index`, if saved.
    pub(crate) fn label(&self, index: usize) -> Option<LabelValue> {
        self.file.get(&self.items[index].id, self.scale)
    }

    /// The first item without a label (the number of items when all have one).
    pub(crate) fn resume_at(&self) -> usize {
        (0..self.items.len())
            .find(|&index| self.label(index).is_none())
            .unwrap_or(self.items.len())
    }

    /// The commands that read the file, for the page and the terminal.
    pub fn next_commands(&self) -> Vec<String> {
        let file = shell_word(&self.file.path().display().to_string());
        let run = shell_word(&self.run_dir.display().to_string());
        let scale = match self.scale {
            LabelScale::Binary => String::new(),
            LabelScale::Graded => format!(" --label-scale 1..{}", LabelScale::TOP_GRADE),
        };
        vec![
            format!("rageval calibrate {run} --labels {file}{scale}"),
            format!(
                "rageval judge-check {file} --metric {}{}",
                shell_word(&self.metric),
                self.judge_flags
            ),
        ]
    }
}

/// The flags that name again the judge a run's manifest records (`settings.judge`), each
/// with a leading space, so that `judge-check` measures the judge that scored the run: the
/// endpoint and model, the GGUF file, or the heuristic judge, and a forced prompt language.
/// A pool of endpoints comes from `rageval.toml`, which names them without flags; a key is
/// never in a manifest, so never here.
fn judge_flags(settings: &Value) -> String {
    let judge = &settings["judge"];
    let mut flags: Vec<(&str, String)> = Vec::new();
    match judge["kind"].as_str() {
        Some("endpoint") => {
            let endpoints = judge["endpoints"].as_array().map(Vec::as_slice);
            if let Some([endpoint]) = endpoints
                && let Some(url) = endpoint.as_str()
            {
                flags.push(("--judge-base-url", url.to_owned()));
            }
            for (flag, key) in [
                ("--judge-model", "model"),
                ("--judge-embedding-model", "embedding_model"),
            ] {
                if let Some(model) = judge[key].as_str() {
                    flags.push((flag, model.to_owned()));
                }
            }
        }
        Some("local") => {
            if let Some(path) = judge["models"]["chat_model"].as_str() {
                flags.push(("--judge", format!("gguf:{path}")));
            }
        }
        Some("heuristic") => flags.push(("--judge", "heuristic".into())),
        _ => {}
    }
    if let Some(lang @ ("en" | "zh")) = judge["lang"].as_str() {
        flags.push(("--lang", lang.to_owned()));
    }
    flags
        .iter()
        .map(|(flag, value)| format!(" {flag} {}", shell_word(value)))
        .collect()
}

/// `text` as one word for a POSIX shell: as it is when it needs no quoting.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:=@,+".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Whether a person's name fits in a file name (labels and review files are named by it).
pub(crate) fn fits_file_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.chars().count() <= 64
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A labeller name fit for a file name.
fn check_labeller(name: &str) -> Result<(), LabelError> {
    if fits_file_name(name) {
        Ok(())
    } else {
        Err(LabelError::BadLabeller { name: name.into() })
    }
}

/// The metric to label: the one named, or the first whose scores carry verdicts.
fn choose_metric(run: &RunData, named: Option<&str>) -> Result<String, LabelError> {
    let metrics = run.metric_names();
    if let Some(metric) = named {
        return if metrics.iter().any(|m| m == metric) {
            Ok(metric.to_owned())
        } else {
            Err(LabelError::UnknownMetric {
                metric: metric.into(),
                known: metrics.join(", "),
            })
        };
    }
    metrics
        .into_iter()
        .find(|metric| {
            run.records.iter().any(|record| {
                &record.metric == metric
                    && matches!(&record.outcome, Outcome::Score { evidence, .. }
                        if !evidence.verdicts.is_empty())
            })
        })
        .ok_or(LabelError::NoJudgedMetric)
}

/// The run's judge language when it is fixed, else the language of most questions.
fn page_language(run: &RunData, items: &[Item]) -> PageLanguage {
    match run.manifest.settings["judge"]["lang"].as_str() {
        Some("zh") => return PageLanguage::Zh,
        Some("en") => return PageLanguage::En,
        _ => {}
    }
    let chinese = items
        .iter()
        .filter(|item| detect_language(&item.question) == Language::Chinese)
        .count();
    if chinese * 2 > items.len() {
        PageLanguage::Zh
    } else {
        PageLanguage::En
    }
}

/// A metadata value as a stratum name.
fn stratum_of(sample: &Sample, field: &str) -> Option<String> {
    match sample.metadata.get(field)? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The session for `run` (its dataset's `samples`, in any order) and `options`.
pub(crate) fn prepare(
    run: &RunData,
    samples: &[Sample],
    options: &LabelOptions,
) -> Result<Session, LabelError> {
    check_labeller(&options.labeller)?;
    if samples.is_empty() {
        return Err(LabelError::NoTexts);
    }
    let metric = choose_metric(run, options.metric.as_deref())?;
    let outcomes = run.outcomes();
    let by_id: std::collections::HashMap<&str, &Sample> =
        samples.iter().map(|s| (s.id.as_str(), s)).collect();
    // Candidates: the run's samples the judge scored for the metric, in the run's order.
    let candidates: Vec<(&Sample, &Outcome)> = run
        .sample_ids()
        .into_iter()
        .filter_map(|id| {
            let outcome = *outcomes.get(&(id, metric.as_str()))?;
            outcome.value()?;
            Some((*by_id.get(id)?, outcome))
        })
        .collect();
    if candidates.is_empty() {
        return Err(LabelError::NothingToLabel { metric });
    }
    let strata: Option<Vec<String>> = match &options.stratify {
        None => None,
        Some(field) => {
            let keys: Vec<Option<String>> = candidates
                .iter()
                .map(|(sample, _)| stratum_of(sample, field))
                .collect();
            if keys.iter().all(Option::is_none) {
                let mut known: Vec<&str> = samples
                    .iter()
                    .flat_map(|s| s.metadata.keys().map(String::as_str))
                    .collect();
                known.sort_unstable();
                known.dedup();
                return Err(LabelError::UnknownStratum {
                    field: field.clone(),
                    known: if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
            Some(
                keys.into_iter()
                    .map(|k| k.unwrap_or_else(|| "(none)".into()))
                    .collect(),
            )
        }
    };
    let chosen = choose(
        candidates.len(),
        options.samples,
        options.seed,
        strata.as_deref(),
    );
    let items: Vec<Item> = chosen
        .iter()
        .map(|&i| {
            let stratum = strata.as_ref().map(|keys| keys[i].clone());
            Item::of(candidates[i].0, stratum)
        })
        .collect();
    let judged = chosen.iter().map(|&i| candidates[i].1.clone()).collect();
    let scale = options
        .scale
        .unwrap_or_else(|| LabelScale::of_scores(candidates.iter().filter_map(|(_, o)| o.value())));
    let path = options
        .labels
        .clone()
        .unwrap_or_else(|| default_labels_path(&run.path, &options.labeller, &metric));
    let file = LabelsFile::open(&path, &metric, scale, &options.labeller)?;
    let language = options
        .language
        .unwrap_or_else(|| page_language(run, &items));
    let in_chinese = options
        .summaries_zh
        .get(&metric)
        .filter(|_| language == PageLanguage::Zh);
    let formula = match in_chinese {
        Some(summary) => summary.clone(),
        None => run
            .manifest
            .metrics
            .iter()
            .find(|m| m.name == metric)
            .map(|m| m.formula.clone())
            .unwrap_or_default(),
    };
    Ok(Session {
        run: run.name(),
        run_dir: run.path.clone(),
        language,
        judge_flags: judge_flags(&run.manifest.settings),
        metric,
        formula,
        scale,
        labeller: options.labeller.clone(),
        stratify: options.stratify.clone(),
        items,
        judged,
        file,
    })
}

/// `RUN_DIR/labels/LABELLER.METRIC.jsonl`: one file per labeller and metric, so labellers
/// stay apart and every file has one shape.
pub fn default_labels_path(run_dir: &Path, labeller: &str, metric: &str) -> PathBuf {
    run_dir
        .join("labels")
        .join(format!("{labeller}.{metric}.jsonl"))
}

#[cfg(test)]
pub(crate) mod tests {
    use rageval_core::{Evidence, Verdict, VerdictTarget};
    use rageval_report::testing::write_run;

    use super::*;

    /// A run of 12 samples: `rouge_l` (no verdicts), then `faithfulness` (judged, scores
    /// 0.5 and 1.0; undefined on `s11`); samples `s0..s11` in topics a (8) and b (4).
    pub(crate) fn run_and_samples(dir: &Path) -> (RunData, Vec<Sample>) {
        let verdict = Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 1.0,
                label: None,
                text: None,
                reason: None,
                supporting_contexts: Vec::new(),
            }],
            ..Evidence::default()
        };
        let mut results = Vec::new();
        for i in 0..12 {
            let id = format!("s{i}");
            results.push((id.clone(), "rouge_l", Outcome::bare(0.3)));
            let judged = if i == 11 {
                Outcome::undefined("no claims")
            } else {
                Outcome::score(if i % 2 == 0 { 0.5 } else { 1.0 }, verdict.clone())
            };
            results.push((id, "faithfulness", judged));
        }
        let path = dir.join("run");
        write_run(&path, "abc", &results);
        let samples = (0..12)
            .map(|i| {
                let mut sample = Sample {
                    id: format!("s{i}"),
                    question: format!("question {i}"),
                    answer: Some("an answer".into()),
                    ..Sample::default()
                };
                let topic = if i < 8 { "a" } else { "b" };
                sample.metadata.insert("topic".into(), json!(topic));
                sample
            })
            .collect();
        (RunData::load(&path).unwrap(), samples)
    }

    #[test]
    fn a_session_labels_the_first_judged_metric_on_its_scored_samples() {
        let dir = tempfile::tempdir().unwrap();
        let (run, samples) = run_and_samples(dir.path());
        let mut options = LabelOptions::new("lin");
        options.samples = 6;
        let session = prepare(&run, &samples, &options).unwrap();
        assert_eq!(session.metric, "faithfulness");
        assert_eq!(session.scale, LabelScale::Graded);
        assert_eq!(session.language, PageLanguage::En);
        assert_eq!(session.items.len(), 6);
        assert!(
            session.items.iter().all(|item| item.id != "s11"),
            "undefined left out"
        );
        assert_eq!(
            session.file.path(),
            dir.path().join("run/labels/lin.faithfulness.jsonl")
        );
        assert_eq!(session.resume_at(), 0);
        // All 11 scored samples when more are asked for; the undefined one never.
        options.samples = 50;
        assert_eq!(prepare(&run, &samples, &options).unwrap().items.len(), 11);
    }

    #[test]
    fn a_stratified_session_gives_each_value_its_share() {
        let dir = tempfile::tempdir().unwrap();
        let (run, samples) = run_and_samples(dir.path());
        let mut options = LabelOptions::new("lin");
        options.samples = 6;
        options.stratify = Some("topic".into());
        let session = prepare(&run, &samples, &options).unwrap();
        // 8 of topic a and 3 scored of topic b: 6 × 8/11 = 4.36 → 4, 6 × 3/11 = 1.64 → 2.
        let of = |topic: &str| {
            session
                .items
                .iter()
                .filter(|item| item.stratum.as_deref() == Some(topic))
                .count()
        };
        assert_eq!((of("a"), of("b")), (4, 2));
        options.stratify = Some("colour".into());
        let error = prepare(&run, &samples, &options).unwrap_err().to_string();
        assert!(
            error.contains("`colour`") && error.contains("topic"),
            "{error}"
        );
    }

    #[test]
    fn a_metric_not_in_the_run_or_a_run_without_texts_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (run, samples) = run_and_samples(dir.path());
        let mut options = LabelOptions::new("lin");
        options.metric = Some("bleu".into());
        let error = prepare(&run, &samples, &options).unwrap_err().to_string();
        assert!(error.contains("no metric named `bleu`"), "{error}");
        options.metric = None;
        let error = prepare(&run, &[], &options).unwrap_err().to_string();
        assert!(error.contains("no texts"), "{error}");
    }

    /// Regression (issue 25 item 8): the Chinese page showed the metric's English formula,
    /// and the `judge-check` command it printed measured the default judge, not the run's.
    #[test]
    fn a_chinese_page_asks_in_chinese_and_judge_check_names_the_run_s_judge() {
        let dir = tempfile::tempdir().unwrap();
        let (mut run, samples) = run_and_samples(dir.path());
        run.manifest.settings = json!({"judge": {
            "kind": "endpoint", "endpoints": ["http://127.0.0.1:8000/v1"],
            "model": "qwen3:8b", "embedding_model": null, "lang": "zh",
        }});
        let mut options = LabelOptions::new("wu");
        options.language = Some(PageLanguage::Zh);
        options.summaries_zh.insert(
            "faithfulness".into(),
            "回答中的陈述有多大比例被支持？".into(),
        );
        let session = prepare(&run, &samples, &options).unwrap();
        assert_eq!(session.formula, "回答中的陈述有多大比例被支持？");
        let commands = session.next_commands();
        assert!(
            commands[1].ends_with(
                "--metric faithfulness --judge-base-url http://127.0.0.1:8000/v1 \
                 --judge-model qwen3:8b --lang zh"
            ),
            "{commands:?}"
        );
        // In English the manifest's formula stays; a GGUF or heuristic judge is named too.
        options.language = Some(PageLanguage::En);
        run.manifest.settings = json!({"judge": {"kind": "local",
            "models": {"chat_model": "/m/a b.gguf"}, "lang": "auto"}});
        let session = prepare(&run, &samples, &options).unwrap();
        assert_ne!(session.formula, "回答中的陈述有多大比例被支持？");
        assert!(
            session.next_commands()[1].ends_with("--judge 'gguf:/m/a b.gguf'"),
            "{:?}",
            session.next_commands()
        );
        run.manifest.settings = json!({"judge": {"kind": "heuristic", "lang": "auto"}});
        let session = prepare(&run, &samples, &options).unwrap();
        assert!(session.next_commands()[1].ends_with(" --judge heuristic"));
    }

    #[test]
    fn a_metric_of_zeros_and_ones_is_labelled_yes_or_no() {
        assert_eq!(LabelScale::of_scores([1.0, 0.0, 1.0]), LabelScale::Binary);
        assert_eq!(LabelScale::of_scores([1.0, 0.5]), LabelScale::Graded);
        assert_eq!(LabelScale::of_scores([]), LabelScale::Graded);
    }

    #[test]
    fn labels_outside_the_scale_are_refused() {
        let graded = LabelScale::Graded;
        assert_eq!(
            LabelValue::of_json(&json!(5), graded),
            Some(LabelValue::Grade(5))
        );
        for bad in [json!(0), json!(6), json!(2.5), json!(true), json!("3")] {
            assert_eq!(LabelValue::of_json(&bad, graded), None, "{bad}");
        }
        let binary = LabelScale::Binary;
        assert_eq!(
            LabelValue::of_json(&json!(false), binary),
            Some(LabelValue::Binary(false))
        );
        assert_eq!(LabelValue::of_json(&json!(1), binary), None);
    }

    #[test]
    fn labeller_names_fit_a_file_name() {
        for good in ["lin", "wu.2", "标注员_1"] {
            assert!(check_labeller(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "a b", "../x"] {
            assert!(check_labeller(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        assert_eq!(shell_word("runs/fiqa"), "runs/fiqa");
        assert_eq!(shell_word("my runs/it's"), "'my runs/it'\\''s'");
    }
}
