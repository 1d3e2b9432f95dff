//! Rubric metrics of one's own: a [`Rubric`] (from `[[metric]]` in `rageval.toml` or a
//! `--metric-file`, parsed by [`file`](mod@file)) becomes a metric like any other once a run's
//! [`MetricCatalogue`](crate::MetricCatalogue) holds it — listed, built from its name,
//! judged through the `custom_rubric` task.
//!
//! There is no process-wide registry: each run makes its catalogue from its own files, so
//! two runs in one process (two `rageval.evaluate` calls) never see each other's rubrics.
//! Each catalogue leaks its rubrics' descriptions (a few strings per rubric, once per run)
//! to give them the `'static` life [`Metric::info`] promises for the built-in table. A
//! rubric is never scored by the heuristic judge: without a chat model its cells are
//! `undefined` with the reason, never a guessed score.

pub mod file;

use std::path::PathBuf;
use std::sync::Arc;

use rageval_core::{Evidence, Outcome, Sample};
use rageval_judge::BoxFuture;
use rageval_tasks::{JudgeRubric, Rubric, RubricField, RubricScale, TaskError, TaskKind};
use serde_json::json;

use crate::metric::{Input, Metric, MetricInfo, Requirements, lacking_input};
use crate::scoring::{ScoringContext, describe};

/// A rubric and where it was defined, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinedRubric {
    pub rubric: Rubric,
    /// The file that defined it.
    pub file: PathBuf,
    /// The 1-based line of its `[[metric]]` header.
    pub line: usize,
}

/// Why a run's rubrics cannot be used: every variant names the file (and the line and
/// field where there is one).
#[derive(Debug, thiserror::Error)]
pub enum RubricError {
    /// A rubric file could not be read.
    #[error("{}: cannot read the rubric file", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A `[[metric]]` table that is not a rubric: `file:line: field `…`: what`.
    #[error(
        "{}{}: field `{field}`: {message}",
        file.display(),
        line.map(|line| format!(":{line}")).unwrap_or_default()
    )]
    Invalid {
        file: PathBuf,
        /// 1-based; `None` when the TOML parser gives no place.
        line: Option<usize>,
        /// `metric[2].scale`: the table's number and the field.
        field: String,
        message: String,
    },

    /// A name the catalogue already uses, or one two rubrics share.
    #[error("{file}:{line}: field `name`: metric `{name}` is already defined {by}")]
    NameTaken {
        file: String,
        line: usize,
        name: String,
        /// "by the catalogue", or the other rubric's place.
        by: String,
    },
}

/// A described rubric with its description.
#[derive(Debug)]
struct Described {
    info: MetricInfo,
    rubric: Arc<Rubric>,
}

/// The rubrics of one run, checked and described.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rubrics {
    entries: Vec<&'static Described>,
}

impl Rubrics {
    /// Checks that no name in `rubrics` is taken by the built-in table or by another of
    /// them, then describes each.
    pub(crate) fn new(rubrics: Vec<DefinedRubric>) -> Result<Self, RubricError> {
        let mut seen: Vec<&DefinedRubric> = Vec::new();
        for defined in &rubrics {
            let name = defined.rubric.name.as_str();
            let taken = |by: String| RubricError::NameTaken {
                file: defined.file.display().to_string(),
                line: defined.line,
                name: name.to_owned(),
                by,
            };
            if crate::catalogue::find_builtin(name).is_some() {
                return Err(taken(
                    "by the catalogue (`rageval metrics` lists it)".into(),
                ));
            }
            if let Some(first) = seen.iter().find(|d| d.rubric.name == name) {
                return Err(taken(format!("at {}:{}", first.file.display(), first.line)));
            }
            seen.push(defined);
        }
        let entries = rubrics
            .into_iter()
            .map(|defined| &*Box::leak(Box::new(describe_rubric(defined))))
            .collect();
        Ok(Rubrics { entries })
    }

    /// Every rubric's description, in the order of the files.
    pub(crate) fn infos(&self) -> impl Iterator<Item = &'static MetricInfo> + '_ {
        self.entries.iter().map(|described| &described.info)
    }

    fn named(&self, name: &str) -> Option<&'static Described> {
        self.entries
            .iter()
            .copied()
            .find(|described| described.info.name == name)
    }

    /// The rubric called `name`, as a metric.
    pub(crate) fn build(&self, name: &str) -> Option<Box<dyn Metric>> {
        self.named(name)
            .map(|described| Box::new(RubricMetric::new(described)) as Box<dyn Metric>)
    }

    /// The rubric called `name`, if any.
    pub(crate) fn rubric(&self, name: &str) -> Option<Arc<Rubric>> {
        self.named(name)
            .map(|described| Arc::clone(&described.rubric))
    }
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn input_of(field: RubricField) -> Input {
    match field {
        RubricField::Question => Input::Question,
        RubricField::Answer => Input::Answer,
        RubricField::Contexts => Input::Contexts,
        RubricField::Reference => Input::Reference,
    }
}

fn describe_rubric(defined: DefinedRubric) -> Described {
    let rubric = defined.rubric;
    let first_line = rubric
        .criterion_en
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_owned();
    let summary = rubric.summary.clone().unwrap_or(first_line);
    let inputs: Vec<Input> = rubric.reads.iter().copied().map(input_of).collect();
    let scale = match rubric.scale {
        RubricScale::PassFail => "pass = 1, fail = 0",
        RubricScale::OneToFive => "a grade s from 1 to 5, scored (s − 1) / 4",
    };
    let examples = match rubric.examples.len() {
        0 => String::new(),
        n => format!("; {n} worked examples shown"),
    };
    let formula = format!(
        "the judge grades the sample against the criterion «{}»: {scale}{examples}",
        rubric.criterion_en.trim()
    );
    let source = format!(
        "rubric of one's own, {}:{} (hash {}); needs a chat model — the offline heuristic \
         judge cannot judge a free criterion",
        defined.file.display(),
        defined.line,
        rubric.hash()
    );
    Described {
        info: MetricInfo {
            name: leak(rubric.name.clone()),
            aliases: &[],
            summary: leak(summary),
            inputs: Box::leak(inputs.into_boxed_slice()),
            formula: leak(formula),
            source: leak(source),
            takes_cutoff: false,
            needs_model: true,
            modes: &[],
        },
        rubric: Arc::new(rubric),
    }
}

/// A rubric as a metric.
pub struct RubricMetric {
    info: &'static MetricInfo,
    rubric: Arc<Rubric>,
}

impl RubricMetric {
    fn new(described: &'static Described) -> Self {
        RubricMetric {
            info: &described.info,
            rubric: Arc::clone(&described.rubric),
        }
    }

    async fn grade(&self, sample: &Sample, scoring: &ScoringContext) -> Outcome {
        let tasks = match scoring.tasks() {
            Ok(tasks) => tasks,
            Err(failure) => return Outcome::undefined(failure.to_string()),
        };
        let task = JudgeRubric {
            rubric: Arc::clone(&self.rubric),
            question: sample.question.clone(),
            answer: sample.answer.clone().unwrap_or_default(),
            contexts: sample.contexts.iter().map(|c| c.text.clone()).collect(),
            reference: sample.references.join("\n"),
        };
        match tasks.judge_rubric(&task).await {
            Ok(judged) => Outcome::score(
                self.rubric.scale.normalise(judged.value.grade),
                Evidence::details([
                    ("rubric_grade", json!(judged.value.grade)),
                    ("reason", json!(judged.value.reason)),
                    ("rubric_hash", json!(self.rubric.hash())),
                    ("judged_by", json!(describe(&judged.by))),
                ]),
            ),
            // No chat model: the rubric cannot be judged here, which is not a failure of
            // the judge, and must not look like a score.
            Err(TaskError::Unavailable { why, .. }) => Outcome::undefined(why),
            Err(error) => Outcome::failed(crate::scoring::Failure::from_task(&error).to_string()),
        }
    }
}

impl Metric for RubricMetric {
    fn info(&self) -> &'static MetricInfo {
        self.info
    }

    fn requirements(&self) -> Requirements {
        Requirements {
            tasks: vec![TaskKind::CustomRubric],
            ..Requirements::default()
        }
    }

    fn definition(&self) -> Option<String> {
        Some(format!("rubric {}", self.rubric.hash()))
    }

    fn score<'a>(
        &'a self,
        sample: &'a Sample,
        scoring: &'a ScoringContext,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match lacking_input(self.info, sample) {
                Some(undefined) => undefined,
                None => self.grade(sample, scoring).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defined(name: &str, line: usize) -> DefinedRubric {
        DefinedRubric {
            rubric: Rubric {
                name: name.into(),
                summary: None,
                criterion_en: "The answer is kind.".into(),
                criterion_zh: None,
                reads: vec![RubricField::Answer],
                scale: RubricScale::OneToFive,
                examples: Vec::new(),
            },
            file: PathBuf::from("rageval.toml"),
            line,
        }
    }

    #[test]
    fn a_taken_name_is_refused_with_both_places() {
        let builtin = Rubrics::new(vec![defined("faithfulness", 3)]).unwrap_err();
        assert_eq!(
            builtin.to_string(),
            "rageval.toml:3: field `name`: metric `faithfulness` is already defined by the \
             catalogue (`rageval metrics` lists it)"
        );
        let twice = Rubrics::new(vec![defined("kind", 2), defined("kind", 9)]).unwrap_err();
        assert_eq!(
            twice.to_string(),
            "rageval.toml:9: field `name`: metric `kind` is already defined at rageval.toml:2"
        );
    }

    #[test]
    fn two_sets_of_rubrics_do_not_see_each_other() {
        let first = Rubrics::new(vec![defined("kind", 2)]).unwrap_or_else(|e| panic!("{e}"));
        let second = Rubrics::new(vec![defined("brief", 2)]).unwrap_or_else(|e| panic!("{e}"));
        assert!(first.build("kind").is_some());
        assert!(first.build("brief").is_none());
        assert!(second.build("kind").is_none());
        assert!(second.rubric("brief").is_some());
    }

    #[test]
    fn the_description_names_scale_criterion_and_hash() {
        let described = describe_rubric(defined("kind", 4));
        assert_eq!(described.info.summary, "The answer is kind.");
        assert_eq!(described.info.inputs, [Input::Answer]);
        assert!(described.info.formula.contains("«The answer is kind.»"));
        assert!(described.info.formula.contains("(s − 1) / 4"));
        assert!(described.info.source.contains(&described.rubric.hash()));
    }
}
