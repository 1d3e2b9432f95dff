//! What judged metrics score with: the run's judges ([`Judges`]) and, per sample, a
//! [`ScoringContext`] that computes every intermediate result two metrics share exactly once.
//!
//! Shared per sample (each a `tokio::sync::OnceCell`, so concurrent metrics wait for the one
//! computation instead of repeating it): the answer's statements (faithfulness,
//! answer_correctness, noise_sensitivity), the reference's statements (context_recall,
//! answer_correctness, noise_sensitivity), the usefulness of each context for the reference
//! (both context_precision variants), the questions generated from the answer (both
//! question-based answer_relevance modes), and the support of answer statements by the
//! reference and of reference statements by the answer (answer_correctness,
//! noise_sensitivity). Statements and questions already in the sample are used as given.
//!
//! For a turn of a conversation, the question answer relevance and the context metrics
//! judge is the turn's question made standalone from the history ([`ScoringContext::question`],
//! one `resolve_question` call per sample); a sample without a history is judged with its
//! own question and makes no such call.
//!
//! A planned run ([`Judges::plan_for`]) that needs at least two of the per-context
//! judgements — usefulness for the reference (context precision), the reference's claims
//! (context recall), the answer's claims (faithfulness) — asks them in one `contexts_check`
//! call per sample, which also splits the answer and the reference, so the question, the
//! contexts, the answer and the reference are sent once; the verdicts stay per context and
//! per statement, with reasons. Samples the call cannot take (a blank context, a judge that
//! is not the chat model) use the separate tasks.
//!
//! Contexts of one sample are judged concurrently. A context never holds a score: metrics
//! turn these results into outcomes.

use std::sync::Arc;

use futures_util::future::join_all;
use rageval_core::{Sample, Turn};
use rageval_judge::{Judge, Models};
use rageval_tasks::{
    ContextUsefulness, ContextsCheck, GenerateQuestions, Judged, Lang, LangChoice, Premise,
    ResolveQuestion, SplitStatements, SupportVerdict, SupportVerdicts, TaskError, TaskJudge,
    UsefulnessVerdict,
};
use tokio::sync::OnceCell;

mod failure;
mod judges;

pub use failure::Failure;
use judges::ContextsPlan;
pub use judges::{Judges, describe};

/// Questions generated from an answer for answer relevance (S4 and ragas both use 3).
pub const DEFAULT_GENERATED_QUESTIONS: usize = 3;

/// A result shared between metrics of one sample.
pub type Shared<T> = Result<Arc<T>, Failure>;

/// Statements of an answer or a reference, and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Statements {
    pub items: Vec<String>,
    /// `dataset` when the sample held them, else who split the text.
    pub from: String,
}

/// Questions generated from an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Questions {
    pub items: Vec<String>,
    /// The judge found the answer evasive (never set for questions from the dataset).
    pub noncommittal: bool,
    /// `dataset`, or who wrote them.
    pub from: String,
}

/// The scoring of one sample: the judges, with the sample's prompt pack chosen, and the
/// results its metrics share. Make one per sample.
pub struct ScoringContext {
    tasks: Option<TaskJudge>,
    embedder: Option<Judge<Models>>,
    chinese_embedder: Option<Judge<Models>>,
    questions: usize,
    joint_support: bool,
    /// The parts of this sample's `contexts_check` call, when it makes one.
    check: Option<ContextsPlan>,
    checked: OnceCell<Shared<Checked>>,
    resolved_question: OnceCell<Shared<Judged<String>>>,
    by_contexts: OnceCell<Shared<BothByContexts>>,
    answer_statements: OnceCell<Shared<Statements>>,
    reference_statements: OnceCell<Shared<Statements>>,
    reference_usefulness: OnceCell<Shared<Vec<Judged<UsefulnessVerdict>>>>,
    generated_questions: OnceCell<Shared<Questions>>,
    answer_by_reference: OnceCell<Shared<Judged<Vec<SupportVerdict>>>>,
    reference_by_answer: OnceCell<Shared<Judged<Vec<SupportVerdict>>>>,
}

impl ScoringContext {
    /// The context for `sample`: with `LangChoice::Auto`, every prompt of the sample is in
    /// the language of its question.
    pub fn new(judges: &Judges, sample: &Sample) -> Self {
        let lang = match judges.lang {
            LangChoice::Auto => LangChoice::Force(Lang::detect(&sample.question)),
            forced => forced,
        };
        let tasks = judges.tasks.clone().map(|t| t.with_lang(lang));
        let check = tasks
            .as_ref()
            .and_then(|t| judges.plan.for_sample(t, sample));
        ScoringContext {
            tasks,
            embedder: judges.embedder.clone(),
            chinese_embedder: judges.chinese_embedder.clone(),
            questions: judges.questions,
            joint_support: judges.plan.answer && judges.plan.reference,
            check,
            checked: OnceCell::new(),
            resolved_question: OnceCell::new(),
            by_contexts: OnceCell::new(),
            answer_statements: OnceCell::new(),
            reference_statements: OnceCell::new(),
            reference_usefulness: OnceCell::new(),
            generated_questions: OnceCell::new(),
            answer_by_reference: OnceCell::new(),
            reference_by_answer: OnceCell::new(),
        }
    }

    /// A context with no judges, for model-free metrics.
    pub fn model_free() -> Self {
        ScoringContext::new(&Judges::none(), &Sample::default())
    }

    /// The task router for this sample.
    pub fn tasks(&self) -> Result<&TaskJudge, Failure> {
        self.tasks
            .as_ref()
            .ok_or_else(|| Failure::new("no judge is configured"))
    }

    /// Embeds `texts` (one request for those not cached), in order, all by one model: the
    /// Chinese embedder when there is one and any text is in Chinese script.
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, Failure> {
        self.embed_naming(texts).await.map(|(vectors, _)| vectors)
    }

    /// [`embed`](Self::embed), and the name of the model that embedded them.
    pub async fn embed_naming(
        &self,
        texts: Vec<String>,
    ) -> Result<(Vec<Vec<f32>>, String), Failure> {
        use rageval_judge::Embedder;
        let chinese = self
            .chinese_embedder
            .as_ref()
            .filter(|_| texts.iter().any(|t| Lang::detect(t) == Lang::Zh));
        let judge = chinese
            .or(self.embedder.as_ref())
            .ok_or_else(|| Failure::new("no embedding model is configured"))?;
        let model = judge.model().embedding_model().to_owned();
        // An empty string is embedded as one space, as ragas does.
        let texts: Vec<String> = texts
            .into_iter()
            .map(|t| if t.is_empty() { " ".to_owned() } else { t })
            .collect();
        judge
            .embed(&texts)
            .await
            .map(|embedded| (embedded.vectors, model))
            .map_err(|error| Failure::new(format!("embeddings: {error}")))
    }

    /// The question answer relevance and the context metrics judge: the sample's own, or,
    /// for a turn with a history, that question made standalone from the history by the
    /// judge (one call, shared by the metrics of the sample).
    pub async fn question(&self, sample: &Sample) -> Result<Question, Failure> {
        if sample.history.is_empty() {
            return Ok(Question {
                text: sample.question.clone(),
                resolved: false,
            });
        }
        let judged = self
            .resolved_question
            .get_or_init(|| async {
                let task = ResolveQuestion {
                    question: sample.question.clone(),
                    history: sample.history.clone(),
                };
                Ok(Arc::new(self.tasks()?.resolve_question(&task).await?))
            })
            .await
            .clone()?;
        Ok(Question {
            text: judged.value.clone(),
            resolved: true,
        })
    }

    /// The answer's statements: the sample's own, or split by the judge (in the contexts
    /// check when it judges them).
    pub async fn answer_statements(&self, sample: &Sample) -> Shared<Statements> {
        if self.check_splits_answer(sample) {
            let checked = self.checked(sample).await?;
            return checked_statements(checked.answer.as_ref(), "answer");
        }
        self.answer_statements_apart(sample).await
    }

    /// The answer's statements: the sample's own, or split by a call of their own.
    async fn answer_statements_apart(&self, sample: &Sample) -> Shared<Statements> {
        self.answer_statements
            .get_or_init(|| async {
                let text = sample.answer.clone().unwrap_or_default();
                let question = sample.question.clone();
                self.statements(question, sample.answer_statements.as_ref(), text)
                    .await
            })
            .await
            .clone()
    }

    /// The reference's statements: the sample's own, or split by the judge.
    pub async fn reference_statements(&self, sample: &Sample) -> Shared<Statements> {
        if sample.reference_statements.is_none() && self.check.is_some_and(|p| p.reference) {
            let checked = self.checked(sample).await?;
            return checked_statements(checked.reference.as_ref(), "reference");
        }
        self.reference_statements
            .get_or_init(|| async {
                let text = sample.reference_text().unwrap_or_default();
                let question = match sample.reference_statements {
                    Some(_) => sample.question.clone(),
                    None => self.question(sample).await?.text,
                };
                self.statements(question, sample.reference_statements.as_ref(), text)
                    .await
            })
            .await
            .clone()
    }

    async fn statements(
        &self,
        question: String,
        given: Option<&Vec<String>>,
        text: String,
    ) -> Shared<Statements> {
        if let Some(items) = given {
            let items = items
                .iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            return Ok(Arc::new(Statements {
                items,
                from: "dataset".into(),
            }));
        }
        let task = SplitStatements { question, text };
        let judged = self.tasks()?.split_statements(&task).await?;
        Ok(Arc::new(Statements {
            from: describe(&judged.by),
            items: judged.value,
        }))
    }

    /// Per context, in order: was it useful for arriving at the reference? All contexts are
    /// judged concurrently.
    pub async fn reference_usefulness(
        &self,
        sample: &Sample,
    ) -> Shared<Vec<Judged<UsefulnessVerdict>>> {
        self.reference_usefulness
            .get_or_init(|| async {
                if self.check.is_some_and(|p| p.usefulness) {
                    return Ok(Arc::new(self.checked(sample).await?.usefulness.clone()));
                }
                let reference = sample.reference_text().unwrap_or_default();
                self.usefulness(sample, &reference).await.map(Arc::new)
            })
            .await
            .clone()
    }

    /// Per context, in order: was it useful for arriving at `answer`? Concurrent.
    pub async fn usefulness(
        &self,
        sample: &Sample,
        answer: &str,
    ) -> Result<Vec<Judged<UsefulnessVerdict>>, Failure> {
        let tasks = self.tasks()?;
        let question = self.question(sample).await?.text;
        let asks = sample.contexts.iter().map(|context| {
            let task = ContextUsefulness {
                question: question.clone(),
                answer: answer.to_owned(),
                context: context.text.clone(),
            };
            async move { tasks.context_usefulness(&task).await }
        });
        collect_per_context(join_all(asks).await)
    }

    /// Questions the answer would answer: the sample's own, or written by the judge.
    pub async fn generated_questions(&self, sample: &Sample) -> Shared<Questions> {
        self.generated_questions
            .get_or_init(|| async {
                if let Some(items) = &sample.simulated_questions {
                    return Ok(Arc::new(Questions {
                        items: items.clone(),
                        noncommittal: false,
                        from: "dataset".into(),
                    }));
                }
                let task = GenerateQuestions {
                    answer: sample.answer.clone().unwrap_or_default(),
                    n: self.questions,
                };
                let judged = self.tasks()?.generate_questions(&task).await?;
                Ok(Arc::new(Questions {
                    from: describe(&judged.by),
                    items: judged.value.questions,
                    noncommittal: judged.value.noncommittal,
                }))
            })
            .await
            .clone()
    }

    /// Each answer statement judged against the reference (as its only context).
    pub async fn answer_by_reference(
        &self,
        sample: &Sample,
    ) -> Shared<Judged<Vec<SupportVerdict>>> {
        self.answer_by_reference
            .get_or_init(|| async {
                let statements = self.answer_statements(sample).await?;
                let reference = sample.reference_text().unwrap_or_default();
                self.support(&statements.items, vec![reference], Premise::Reference)
                    .await
            })
            .await
            .clone()
    }

    /// Each reference statement judged against the answer (as its only context).
    pub async fn reference_by_answer(
        &self,
        sample: &Sample,
    ) -> Shared<Judged<Vec<SupportVerdict>>> {
        self.reference_by_answer
            .get_or_init(|| async {
                let statements = self.reference_statements(sample).await?;
                let answer = sample.answer.clone().unwrap_or_default();
                self.support(&statements.items, vec![answer], Premise::Answer)
                    .await
            })
            .await
            .clone()
    }

    /// The answer's statements and their support by the retrieved contexts — and, for a
    /// turn of a conversation, by the turns before it, in a call of its own (the shared
    /// calls of a question asked alone never carry a history).
    pub async fn answer_by_contexts(&self, sample: &Sample) -> Shared<SupportedStatements> {
        if !sample.history.is_empty() {
            let statements = self.answer_statements(sample).await?;
            let verdicts = self
                .support_in_conversation(
                    &statements.items,
                    context_texts(sample),
                    sample.history.clone(),
                )
                .await?;
            return Ok(Arc::new(SupportedStatements {
                statements,
                verdicts,
            }));
        }
        if self.check.is_some_and(|p| p.answer) {
            return checked_part(self.checked(sample).await?.answer.as_ref());
        }
        if self.joint_support {
            return self
                .both_by_contexts(sample)
                .await
                .map(|both| Arc::new(both.answer.clone()));
        }
        let statements = self.answer_statements(sample).await?;
        self.by_contexts_alone(sample, statements).await
    }

    /// The reference's statements and their support by the retrieved contexts.
    pub async fn reference_by_contexts(&self, sample: &Sample) -> Shared<SupportedStatements> {
        if self.check.is_some_and(|p| p.reference) {
            return checked_part(self.checked(sample).await?.reference.as_ref());
        }
        if self.joint_support && sample.history.is_empty() {
            return self
                .both_by_contexts(sample)
                .await
                .map(|both| Arc::new(both.reference.clone()));
        }
        let statements = self.reference_statements(sample).await?;
        self.by_contexts_alone(sample, statements).await
    }

    async fn by_contexts_alone(
        &self,
        sample: &Sample,
        statements: Arc<Statements>,
    ) -> Shared<SupportedStatements> {
        let verdicts = self
            .support(&statements.items, context_texts(sample), Premise::Contexts)
            .await?;
        Ok(Arc::new(SupportedStatements {
            statements,
            verdicts,
        }))
    }

    /// Answer and reference statements judged against the contexts in one call (their
    /// splits run concurrently first).
    async fn both_by_contexts(&self, sample: &Sample) -> Shared<BothByContexts> {
        self.by_contexts
            .get_or_init(|| async {
                let (answer, reference) = futures_util::future::join(
                    self.answer_statements(sample),
                    self.reference_statements(sample),
                )
                .await;
                let (answer, reference) = (answer?, reference?);
                let mut all = answer.items.clone();
                all.extend(reference.items.iter().cloned());
                let joint = self
                    .support(&all, context_texts(sample), Premise::Contexts)
                    .await?;
                let split = |range: std::ops::Range<usize>, statements: Arc<Statements>| {
                    SupportedStatements {
                        statements,
                        verdicts: Arc::new(share_of(&joint, joint.value[range].to_vec())),
                    }
                };
                let n = answer.items.len();
                Ok(Arc::new(BothByContexts {
                    answer: split(0..n, answer),
                    reference: split(n..all.len(), reference),
                }))
            })
            .await
            .clone()
    }

    /// Whether this sample's contexts check splits the answer itself: it judges the answer's
    /// statements, the dataset gives none and the answer is not blank (a blank answer
    /// states nothing, with no call).
    fn check_splits_answer(&self, sample: &Sample) -> bool {
        self.check.is_some_and(|p| p.answer)
            && sample.answer_statements.is_none()
            && sample
                .answer
                .as_deref()
                .is_some_and(|a| !a.trim().is_empty())
    }

    /// This sample's one `contexts_check` call, which splits the answer too unless the
    /// dataset gives its statements; call only when `check` is set.
    async fn checked(&self, sample: &Sample) -> Shared<Checked> {
        self.checked
            .get_or_init(|| async {
                let plan = self.check.unwrap_or_default();
                let split_answer = self.check_splits_answer(sample);
                let answer = match plan.answer && !split_answer {
                    true => Some(self.answer_statements_apart(sample).await?),
                    false => None,
                };
                // Statements the dataset gives for the reference are checked as given.
                let given = match (plan.reference, &sample.reference_statements) {
                    (true, Some(given)) => {
                        Some((self.statements(String::new(), Some(given), String::new())).await?)
                    }
                    _ => None,
                };
                let mut statements = answer.as_ref().map_or_else(Vec::new, |a| a.items.clone());
                let n = statements.len();
                if let Some(given) = &given {
                    statements.extend(given.items.iter().cloned());
                }
                let task = ContextsCheck {
                    question: sample.question.clone(),
                    contexts: context_texts(sample),
                    reference: sample.reference_text(),
                    split_reference: plan.reference && given.is_none(),
                    usefulness: plan.usefulness,
                    answer: split_answer.then(|| sample.answer.clone().unwrap_or_default()),
                    statements,
                };
                let judged = self.tasks()?.contexts_check(&task).await?;
                let value = &judged.value;
                let answer = match answer {
                    Some(statements) => Some(SupportedStatements {
                        statements,
                        verdicts: Arc::new(share_of(&judged, value.verdicts[..n].to_vec())),
                    }),
                    None => split_answer.then(|| SupportedStatements {
                        statements: Arc::new(Statements {
                            items: value.answer_statements.clone(),
                            from: describe(&judged.by),
                        }),
                        verdicts: Arc::new(share_of(&judged, value.answer_verdicts.clone())),
                    }),
                };
                let reference = plan.reference.then(|| {
                    let (statements, verdicts) = match given {
                        Some(given) => (given, value.verdicts[n..].to_vec()),
                        None => (
                            Arc::new(Statements {
                                items: value.reference_statements.clone(),
                                from: describe(&judged.by),
                            }),
                            value.reference_verdicts.clone(),
                        ),
                    };
                    SupportedStatements {
                        statements,
                        verdicts: Arc::new(share_of(&judged, verdicts)),
                    }
                });
                Ok(Arc::new(Checked {
                    usefulness: (value.usefulness.iter())
                        .map(|v| share_of(&judged, v.clone()))
                        .collect(),
                    answer,
                    reference,
                }))
            })
            .await
            .clone()
    }

    /// All `statements` judged against `contexts` (which are `premise`) in one call.
    pub async fn support(
        &self,
        statements: &[String],
        contexts: Vec<String>,
        premise: Premise,
    ) -> Shared<Judged<Vec<SupportVerdict>>> {
        self.ask_support(SupportVerdicts {
            statements: statements.to_vec(),
            contexts,
            premise,
            history: Vec::new(),
        })
        .await
    }

    /// All `statements` judged against `contexts` and the conversation before them.
    async fn support_in_conversation(
        &self,
        statements: &[String],
        contexts: Vec<String>,
        history: Vec<Turn>,
    ) -> Shared<Judged<Vec<SupportVerdict>>> {
        self.ask_support(SupportVerdicts {
            statements: statements.to_vec(),
            contexts,
            premise: Premise::Contexts,
            history,
        })
        .await
    }

    async fn ask_support(&self, task: SupportVerdicts) -> Shared<Judged<Vec<SupportVerdict>>> {
        let judged = self.tasks()?.support_verdicts(&task).await?;
        Ok(Arc::new(judged))
    }
}

/// The question a metric judges ([`ScoringContext::question`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question as the judge reads it.
    pub text: String,
    /// Made standalone from the sample's history (then recorded in the evidence).
    pub resolved: bool,
}

impl Question {
    /// `outcome` with this question under `resolved_question` in its evidence, when it was
    /// resolved through the history.
    pub fn recorded_in(&self, mut outcome: rageval_core::Outcome) -> rageval_core::Outcome {
        if let (true, rageval_core::Outcome::Score { evidence, .. }) = (self.resolved, &mut outcome)
        {
            evidence
                .details
                .insert(RESOLVED_QUESTION.into(), self.text.clone().into());
        }
        outcome
    }
}

/// The evidence key of the question a turn was judged with, made standalone.
pub const RESOLVED_QUESTION: &str = "resolved_question";

/// Statements and the judge's verdict on each.
#[derive(Debug, Clone)]
pub struct SupportedStatements {
    pub statements: Arc<Statements>,
    pub verdicts: Arc<Judged<Vec<SupportVerdict>>>,
}

/// The answer's and the reference's statements judged in one call.
#[derive(Debug, Clone)]
struct BothByContexts {
    answer: SupportedStatements,
    reference: SupportedStatements,
}

/// What one `contexts_check` call answered for a sample, split by the metric it serves.
#[derive(Debug)]
struct Checked {
    /// Per context, for the reference (empty when not asked).
    usefulness: Vec<Judged<UsefulnessVerdict>>,
    answer: Option<SupportedStatements>,
    reference: Option<SupportedStatements>,
}

/// A part of a shared call's answer, with the call's provenance.
fn share_of<T, U>(whole: &Judged<T>, value: U) -> Judged<U> {
    Judged {
        value,
        by: whole.by.clone(),
        rung: whole.rung,
        usage: whole.usage,
        cached: whole.cached,
    }
}

/// A statements part of the contexts check, which the plan asked for.
fn checked_part(part: Option<&SupportedStatements>) -> Shared<SupportedStatements> {
    part.cloned()
        .map(Arc::new)
        .ok_or_else(|| Failure::new("the contexts check did not judge these statements"))
}

/// The statements of a part of the contexts check that split `text` (the plan asked it).
fn checked_statements(part: Option<&SupportedStatements>, text: &str) -> Shared<Statements> {
    part.map(|p| Arc::clone(&p.statements))
        .ok_or_else(|| Failure::new(format!("the contexts check split no {text}")))
}

fn context_texts(sample: &Sample) -> Vec<String> {
    sample.contexts.iter().map(|c| c.text.clone()).collect()
}

/// One result per context, or the first failure named by its context's position.
pub fn collect_per_context<T>(results: Vec<Result<T, TaskError>>) -> Result<Vec<T>, Failure> {
    collect_numbered("context", results)
}

/// One result per item, or the first failure named `NOUN POSITION` (1-based).
pub fn collect_numbered<T>(
    noun: &str,
    results: Vec<Result<T, TaskError>>,
) -> Result<Vec<T>, Failure> {
    results
        .into_iter()
        .enumerate()
        .map(|(index, result)| {
            result.map_err(|error| {
                Failure::new(format!(
                    "{noun} {}: {}",
                    index + 1,
                    Failure::from_task(&error)
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rageval_judge::{CacheMode, Embedder, JudgeConfig, JudgeError};

    use super::*;

    /// An embedder whose every vector is `[mark]`, so a test sees which model answered.
    struct Marked(&'static str, f32);

    impl Embedder for Marked {
        fn embedding_kind(&self) -> &str {
            "marked"
        }
        fn embedding_model(&self) -> &str {
            self.0
        }
        async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
            Ok(inputs.iter().map(|_| vec![self.1]).collect())
        }
    }

    fn judge(embedder: Marked) -> Judge<Models> {
        let config = JudgeConfig {
            cache_mode: CacheMode::Off,
            ..JudgeConfig::default()
        };
        Judge::new(Models::embedder(embedder), None, config)
    }

    #[tokio::test]
    async fn a_call_with_any_chinese_text_goes_whole_to_the_chinese_embedder() {
        let judges = Judges::none()
            .with_embedder(judge(Marked("english", 1.0)))
            .with_chinese_embedder(judge(Marked("chinese", 2.0)));
        let scoring = ScoringContext::new(&judges, &Sample::default());
        let texts = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let english = scoring.embed(texts(&["a cat", "a dog"])).await;
        assert_eq!(english.ok(), Some(vec![vec![1.0], vec![1.0]]));
        let mixed = scoring
            .embed(texts(&["The Great Wall", "长城有多长"]))
            .await;
        assert_eq!(mixed.ok(), Some(vec![vec![2.0], vec![2.0]]));
    }

    #[tokio::test]
    async fn without_a_chinese_embedder_chinese_text_goes_to_the_embedder() {
        let judges = Judges::none().with_embedder(judge(Marked("english", 1.0)));
        let scoring = ScoringContext::new(&judges, &Sample::default());
        let embedded = scoring.embed(vec!["长城有多长".to_owned()]).await;
        assert_eq!(embedded.ok(), Some(vec![vec![1.0]]));
    }
}
