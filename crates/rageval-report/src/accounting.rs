//! The judge's accounts as a run directory keeps them: what each `rageval eval` session of a
//! run asked of the judge — model calls, cache hits, merged duplicates, tokens, cost,
//! retries, where structured answers ended on the parse ladder, and which implementation
//! answered each task. Each session is kept in `manifest.json` (`sessions`); `summary.json`
//! (`judge`) holds their sum, so a resumed run counts every call once.
//!
//! Plain numbers: this crate knows no model. `eval` fills them from the judge's books, whose
//! types are `rageval-judge`'s and `rageval-tasks`' own: the judge is a leaf and this crate
//! may use only `rageval-core`, so neither side can name the other's types. `rageval-run`'s
//! `session` copies them field by field, and `rageval-run/tests/it/accounting.rs` fails when
//! the twins drift apart (which is why the twins here deny unknown fields).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where structured answers ended on the judge's parse ladder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungTally {
    /// The text was the JSON.
    pub direct: u64,
    /// The JSON was found inside code fences or prose.
    pub extracted: u64,
    /// The JSON needed repair.
    pub repaired: u64,
    /// Matched only after a re-ask quoting the error.
    pub reasked: u64,
    /// Never matched the schema (the cell failed with the raw answer).
    pub failed: u64,
    /// No answer at all (transport errors after retries, an offline miss).
    pub errored: u64,
}

impl RungTally {
    /// Structured answers asked for.
    pub fn total(&self) -> u64 {
        self.direct + self.extracted + self.repaired + self.reasked + self.failed + self.errored
    }

    /// Answers that never parsed, as a share of those asked for; `None` when none was.
    pub fn parse_failure_rate(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.failed as f64 / total as f64)
    }

    fn add(&mut self, other: &RungTally) {
        self.direct += other.direct;
        self.extracted += other.extracted;
        self.repaired += other.repaired;
        self.reasked += other.reasked;
        self.failed += other.failed;
        self.errored += other.errored;
    }
}

/// Calls, tokens and cost of one prompt template (or of all of them). The default is
/// nothing counted, at no cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallTally {
    /// Requests answered by the model (each re-ask is one more).
    pub calls: u64,
    /// Answers taken from the answer cache, at no cost now.
    pub cached_calls: u64,
    /// Answers shared with an identical request in flight (one request served both).
    pub merged_calls: u64,
    /// Prompt tokens of `calls`.
    pub prompt_tokens: u64,
    /// Completion tokens of `calls` (a reasoning model's thinking included).
    pub completion_tokens: u64,
    /// Of the completion tokens, those spent thinking.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Of `calls`, those whose answer came after thinking.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_calls: u64,
    /// Of `calls`, those whose server sent no usage: their tokens were counted locally.
    pub counted_calls: u64,
    /// Cost of `calls` in US dollars at the run's price table; `null` when a call's model
    /// had no price (never a guess).
    pub cost_usd: Option<f64>,
    /// Where this template's structured answers ended.
    pub rungs: RungTally,
}

impl CallTally {
    /// Adds `other` (a cost stays unknown once either is).
    pub fn add(&mut self, other: &CallTally) {
        self.calls += other.calls;
        self.cached_calls += other.cached_calls;
        self.merged_calls += other.merged_calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.reasoning_calls += other.reasoning_calls;
        self.counted_calls += other.counted_calls;
        self.cost_usd = self.cost_usd.zip(other.cost_usd).map(|(a, b)| a + b);
        self.rungs.add(&other.rungs);
    }
}

impl CallTally {
    /// What was counted after `earlier` (see [`JudgeUsage::since`]).
    fn since(&self, earlier: &CallTally) -> CallTally {
        CallTally {
            calls: self.calls.saturating_sub(earlier.calls),
            cached_calls: self.cached_calls.saturating_sub(earlier.cached_calls),
            merged_calls: self.merged_calls.saturating_sub(earlier.merged_calls),
            prompt_tokens: self.prompt_tokens.saturating_sub(earlier.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(earlier.completion_tokens),
            reasoning_tokens: self
                .reasoning_tokens
                .saturating_sub(earlier.reasoning_tokens),
            reasoning_calls: self.reasoning_calls.saturating_sub(earlier.reasoning_calls),
            counted_calls: self.counted_calls.saturating_sub(earlier.counted_calls),
            cost_usd: self
                .cost_usd
                .zip(earlier.cost_usd)
                .map(|(now, before)| (now - before).max(0.0)),
            rungs: RungTally {
                direct: self.rungs.direct.saturating_sub(earlier.rungs.direct),
                extracted: self.rungs.extracted.saturating_sub(earlier.rungs.extracted),
                repaired: self.rungs.repaired.saturating_sub(earlier.rungs.repaired),
                reasked: self.rungs.reasked.saturating_sub(earlier.rungs.reasked),
                failed: self.rungs.failed.saturating_sub(earlier.rungs.failed),
                errored: self.rungs.errored.saturating_sub(earlier.rungs.errored),
            },
        }
    }

    /// Whether nothing at all was counted.
    fn is_empty(&self) -> bool {
        self.calls + self.cached_calls + self.merged_calls + self.counted_calls == 0
            && self.prompt_tokens + self.completion_tokens == 0
            && self.rungs.total() == 0
    }
}

impl Default for CallTally {
    fn default() -> Self {
        CallTally {
            calls: 0,
            cached_calls: 0,
            merged_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            reasoning_tokens: 0,
            reasoning_calls: 0,
            counted_calls: 0,
            cost_usd: Some(0.0),
            rungs: RungTally::default(),
        }
    }
}

/// How often each implementation was asked one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskTally {
    /// Asked of the chat model.
    pub llm: u64,
    /// Answered by the offline heuristic judge (no cost, but a call).
    pub heuristic: u64,
    /// Answered by a checker model (`--judge checker:DIR`; no cost, but a call).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checker: u64,
    /// Statements a cascade's checker settled (its score outside the escalation band).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub claims_by_checker: u64,
    /// Statements a cascade escalated to the chat model (the checker's score inside the
    /// band).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub claims_by_chat: u64,
}

/// Everything one session (or, summed, a whole run) asked of the judge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeUsage {
    /// All templates together.
    pub total: CallTally,
    /// HTTP attempts, retries included.
    pub attempts: u64,
    /// Attempts that failed (and were retried or gave up).
    pub failed_attempts: u64,
    /// Retries scheduled after a retryable failure.
    pub retries: u64,
    /// Answers taken from the cache that another endpoint wrote (another server under the
    /// same model name).
    #[serde(default)]
    pub cache_hits_other_endpoint: u64,
    /// Answers (and embeddings) the judge got but the answer cache failed to store (a full
    /// disk, a file made read-only): the journal keeps their scores, a later run asks again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_errors: u64,
    /// Per prompt template, `id@version` (embeddings under `embedding`).
    pub templates: BTreeMap<String, CallTally>,
    /// Per task: how many times each implementation answered it.
    pub tasks: BTreeMap<String, TaskTally>,
    /// How requests were written at each endpoint whose form is not the default or was
    /// learned from its refusals (a reasoning model's `max_completion_tokens`, a temperature
    /// left out): what was sent, so a run directory says it, and what a resumed run starts
    /// from instead of being refused again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_forms: Vec<RequestFormRecord>,
}

/// How requests to one endpoint were written (`rageval_judge::LearnedForm`, as a run keeps
/// it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFormRecord {
    /// The endpoint, without credentials.
    pub endpoint: String,
    /// The model.
    pub model: String,
    /// The name the token cap went under (`max_tokens`, `max_completion_tokens`).
    pub cap_param: String,
    /// Parameters not sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// What the endpoint's refusals taught, in order (`max_tokens sent as
    /// max_completion_tokens`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<String>,
}

impl JudgeUsage {
    /// Adds another session's usage.
    pub fn add(&mut self, other: &JudgeUsage) {
        self.total.add(&other.total);
        self.attempts += other.attempts;
        self.failed_attempts += other.failed_attempts;
        self.retries += other.retries;
        self.cache_hits_other_endpoint += other.cache_hits_other_endpoint;
        self.cache_write_errors += other.cache_write_errors;
        for (name, tally) in &other.templates {
            self.templates.entry(name.clone()).or_default().add(tally);
        }
        for (task, tally) in &other.tasks {
            let entry = self.tasks.entry(task.clone()).or_default();
            entry.llm += tally.llm;
            entry.heuristic += tally.heuristic;
            entry.checker += tally.checker;
            entry.claims_by_checker += tally.claims_by_checker;
            entry.claims_by_chat += tally.claims_by_chat;
        }
        // A later session's form replaces an earlier one's for the same endpoint and model;
        // what each learned is kept, in order, once.
        for form in &other.request_forms {
            match self
                .request_forms
                .iter_mut()
                .find(|f| f.endpoint == form.endpoint && f.model == form.model)
            {
                Some(known) => {
                    known.cap_param.clone_from(&form.cap_param);
                    known.left_out.clone_from(&form.left_out);
                    for lesson in &form.learned {
                        if !known.learned.contains(lesson) {
                            known.learned.push(lesson.clone());
                        }
                    }
                }
                None => self.request_forms.push(form.clone()),
            }
        }
    }

    /// What was asked after `earlier`, a reading of the same books taken before: a judge
    /// that serves two stages (`pipeline`'s rank and reference) counts from its start, and
    /// each stage's session must count its own calls only. The request forms are the
    /// latest's (they are a state, not a count).
    pub fn since(&self, earlier: &JudgeUsage) -> JudgeUsage {
        let mut templates = BTreeMap::new();
        for (name, tally) in &self.templates {
            let left = match earlier.templates.get(name) {
                Some(before) => tally.since(before),
                None => tally.clone(),
            };
            if !left.is_empty() {
                templates.insert(name.clone(), left);
            }
        }
        let mut tasks = BTreeMap::new();
        for (task, tally) in &self.tasks {
            let before = earlier.tasks.get(task).copied().unwrap_or_default();
            let left = TaskTally {
                llm: tally.llm.saturating_sub(before.llm),
                heuristic: tally.heuristic.saturating_sub(before.heuristic),
                checker: tally.checker.saturating_sub(before.checker),
                claims_by_checker: tally
                    .claims_by_checker
                    .saturating_sub(before.claims_by_checker),
                claims_by_chat: tally.claims_by_chat.saturating_sub(before.claims_by_chat),
            };
            if left.llm
                + left.heuristic
                + left.checker
                + left.claims_by_checker
                + left.claims_by_chat
                > 0
            {
                tasks.insert(task.clone(), left);
            }
        }
        JudgeUsage {
            total: self.total.since(&earlier.total),
            attempts: self.attempts.saturating_sub(earlier.attempts),
            failed_attempts: self.failed_attempts.saturating_sub(earlier.failed_attempts),
            retries: self.retries.saturating_sub(earlier.retries),
            cache_hits_other_endpoint: self
                .cache_hits_other_endpoint
                .saturating_sub(earlier.cache_hits_other_endpoint),
            cache_write_errors: self
                .cache_write_errors
                .saturating_sub(earlier.cache_write_errors),
            templates,
            tasks,
            request_forms: self.request_forms.clone(),
        }
    }

    /// Heuristic answers over every task.
    pub fn heuristic_calls(&self) -> u64 {
        self.tasks.values().map(|t| t.heuristic).sum()
    }

    /// Statements a cascade settled, by the checker and by the chat model, over every task.
    pub fn cascade_claims(&self) -> (u64, u64) {
        self.tasks.values().fold((0, 0), |(checker, chat), t| {
            (checker + t.claims_by_checker, chat + t.claims_by_chat)
        })
    }

    /// Checker-model answers over every task.
    pub fn checker_calls(&self) -> u64 {
        self.tasks.values().map(|t| t.checker).sum()
    }
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEnd {
    /// Still running at its last record: a session killed before it could record its end
    /// keeps this, with its numbers as of that record (written after its first sample and
    /// then every few seconds).
    Running,
    /// Every cell was scored; the run is complete.
    Complete,
    /// `--max-calls` or `--max-cost` refused a call: the run stopped, resumable.
    CapReached,
    /// Ctrl-C: the run stopped, resumable.
    Interrupted,
    /// An error (bad data, a file that cannot be written) ended the session; the run's
    /// finished units are kept, unfinished.
    Failed,
    /// The judge refused or could not answer calls (unreachable, 401/403/404, every call of
    /// a stage failing): the run stopped with the cause, resumable.
    JudgeUnavailable,
    /// Batch mode: the next stage's requests were written out for another engine to
    /// answer (`--export-requests`); resumable with their answers.
    RequestsExported,
}

/// One `rageval eval` invocation on a run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// UTC, as `started_at` in the manifest.
    pub started_at: String,
    pub finished_at: String,
    pub ended: SessionEnd,
    /// What stopped it, when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cells this session wrote to the journal.
    pub cells: usize,
    /// What this session asked of the judge.
    pub judge: JudgeUsage,
}

/// A model's price, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub prompt_per_million: f64,
    pub completion_per_million: f64,
}

/// A model the judge used, and its price (`null`: none known, so its cost is unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeModel {
    /// `chat` or `embedding`.
    pub role: String,
    pub model: String,
    pub price: Option<ModelPrice>,
}

/// `summary.json`'s `judge`: who judged the run and, summed over its sessions, what it
/// asked of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeAccount {
    /// `endpoint` (a model behind an OpenAI-compatible endpoint), `local` (a GGUF file for
    /// every task), `offline` (the heuristic judge with the embedded models) or `heuristic`
    /// (the heuristic judge alone).
    pub kind: String,
    pub models: Vec<JudgeModel>,
    /// Endpoints as shown in the manifest (no credentials).
    pub endpoints: Vec<String>,
    /// `eval` invocations summed here (more than one when the run was resumed).
    pub sessions: usize,
    /// The sum over sessions.
    #[serde(flatten)]
    pub usage: JudgeUsage,
}

impl JudgeAccount {
    /// The account of a run judged by `models` at `endpoints` over `sessions`.
    pub fn over_sessions(
        kind: &str,
        models: Vec<JudgeModel>,
        endpoints: Vec<String>,
        sessions: &[Session],
    ) -> Self {
        let mut usage = JudgeUsage::default();
        for session in sessions {
            usage.add(&session.judge);
        }
        JudgeAccount {
            kind: kind.to_owned(),
            models,
            endpoints,
            sessions: sessions.len(),
            usage,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(calls: u64, cost: Option<f64>) -> CallTally {
        CallTally {
            calls,
            prompt_tokens: 10 * calls,
            cost_usd: cost,
            rungs: RungTally {
                direct: calls,
                failed: 1,
                ..RungTally::default()
            },
            ..CallTally::default()
        }
    }

    fn usage(calls: u64, cost: Option<f64>) -> JudgeUsage {
        let mut usage = JudgeUsage {
            total: tally(calls, cost),
            retries: 1,
            ..JudgeUsage::default()
        };
        usage.templates.insert("t@1".into(), tally(calls, cost));
        usage.tasks.insert(
            "support_verdicts".into(),
            TaskTally {
                llm: calls,
                heuristic: 2,
                checker: 0,
                ..TaskTally::default()
            },
        );
        usage
    }

    fn session(usage: JudgeUsage) -> Session {
        Session {
            started_at: "a".into(),
            finished_at: "b".into(),
            ended: SessionEnd::Complete,
            reason: None,
            cells: 1,
            judge: usage,
        }
    }

    #[test]
    fn sessions_add_up_and_an_unknown_cost_stays_unknown() {
        let priced = [session(usage(3, Some(0.5))), session(usage(2, Some(0.25)))];
        let account = JudgeAccount::over_sessions("endpoint", Vec::new(), Vec::new(), &priced);
        assert_eq!(account.sessions, 2);
        assert_eq!(account.usage.total.calls, 5);
        assert_eq!(account.usage.total.cost_usd, Some(0.75));
        assert_eq!(account.usage.templates["t@1"].prompt_tokens, 50);
        assert_eq!(account.usage.retries, 2);
        assert_eq!(account.usage.tasks["support_verdicts"].heuristic, 4);
        assert_eq!(account.usage.heuristic_calls(), 4);
        let rate = account.usage.total.rungs.parse_failure_rate().unwrap();
        assert!((rate - 2.0 / 7.0).abs() < 1e-12);

        let mixed = [session(usage(3, Some(0.5))), session(usage(2, None))];
        let account = JudgeAccount::over_sessions("endpoint", Vec::new(), Vec::new(), &mixed);
        assert_eq!(account.usage.total.cost_usd, None);
        // Nothing asked: no rate, and no sessions cost nothing.
        assert_eq!(RungTally::default().parse_failure_rate(), None);
        let none = JudgeAccount::over_sessions("offline", Vec::new(), Vec::new(), &[]);
        assert_eq!(none.usage.total.cost_usd, Some(0.0));
    }

    #[test]
    fn the_summary_key_reads_back() {
        let account = JudgeAccount::over_sessions(
            "endpoint",
            vec![JudgeModel {
                role: "chat".into(),
                model: "m".into(),
                price: None,
            }],
            vec!["http://127.0.0.1:1/v1".into()],
            &[session(usage(1, None))],
        );
        let json = serde_json::to_value(&account).unwrap();
        assert_eq!(json["total"]["calls"], 1);
        assert_eq!(json["total"]["cost_usd"], serde_json::Value::Null);
        assert_eq!(json["models"][0]["price"], serde_json::Value::Null);
        let back: JudgeAccount = serde_json::from_value(json).unwrap();
        assert_eq!(back, account);
    }
}
