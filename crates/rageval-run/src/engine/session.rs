//! The judge's books as a run keeps them: what a judge and its task router were asked
//! ([`usage_of`]), this session appended to the manifest's `sessions`
//! ([`SessionOpen::close`]), and the one-line footer under the summary table ([`footer`]),
//! which every judged command prints.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rageval_judge::{CapParam, Judge, LearnedForm, Models, RequestForm};
use rageval_report::{
    CallTally, JudgeAccount, JudgeUsage, Manifest, RequestFormRecord, RunDir, RungTally, Session,
    SessionEnd, TaskTally, utc_timestamp,
};
use rageval_tasks::TaskJudge;

use crate::engine::error::Result;
use crate::engine::judges::JudgeSetup;

/// What `judge` (its calls, tokens, cost, retries, ladder rungs) and `tasks` (who answered
/// each task) were asked so far.
pub fn usage_of(judge: Option<&Judge<Models>>, tasks: Option<&TaskJudge>) -> JudgeUsage {
    let mut usage = JudgeUsage::default();
    if let Some(judge) = judge {
        let report = judge.usage();
        let rungs = judge.rung_counts();
        let names: BTreeSet<&String> = report.templates.keys().chain(rungs.keys()).collect();
        for name in names {
            let t = report.templates.get(name).copied().unwrap_or_default();
            let r = rungs.get(name).copied().unwrap_or_default();
            let tally = CallTally {
                calls: t.calls,
                cached_calls: t.cached_calls,
                merged_calls: t.shared_calls,
                prompt_tokens: t.prompt_tokens,
                completion_tokens: t.completion_tokens,
                reasoning_tokens: t.reasoning_tokens,
                reasoning_calls: t.reasoning_calls,
                counted_calls: t.counted_calls,
                // A call without a price has no known cost: say so rather than guess.
                cost_usd: (t.unpriced_calls == 0).then_some(t.cost_usd),
                rungs: RungTally {
                    direct: r.direct,
                    extracted: r.extracted,
                    repaired: r.repaired,
                    reasked: r.reasked,
                    failed: r.failed,
                    errored: r.errored,
                },
            };
            usage.total.add(&tally);
            usage.templates.insert(name.clone(), tally);
        }
        usage.request_forms = judge
            .learned_forms()
            .into_iter()
            .filter(|learned| !learned.lessons.is_empty() || learned.form != RequestForm::default())
            .map(|learned| RequestFormRecord {
                endpoint: learned.endpoint,
                model: learned.model,
                cap_param: learned.form.cap_param.field().to_owned(),
                left_out: learned.form.dropped.into_iter().collect(),
                learned: learned.lessons.into_iter().map(|l| l.change).collect(),
            })
            .collect();
        let stats = judge.stats();
        usage.attempts = stats.attempts;
        usage.failed_attempts = stats.failed_attempts;
        usage.retries = stats.retries;
        usage.cache_hits_other_endpoint = stats.cache_hits_other_origin;
        usage.cache_write_errors = stats.cache_write_errors;
    }
    for (task, calls) in tasks.map(TaskJudge::calls).unwrap_or_default() {
        let tally = TaskTally {
            llm: calls.llm,
            heuristic: calls.heuristic,
            checker: calls.checker,
            claims_by_checker: calls.claims_by_checker,
            claims_by_chat: calls.claims_by_chat,
        };
        usage.tasks.insert(task.to_string(), tally);
    }
    usage
}

/// This session's usage so far (in batch mode, without what the batch store made the judge
/// count twice).
pub fn session_usage(setup: &JudgeSetup) -> JudgeUsage {
    let mut usage = usage_of(setup.chat.as_ref(), setup.judges.tasks());
    if let Some(store) = &setup.batch {
        let price = setup
            .models()
            .into_iter()
            .find(|model| model.role == "chat")
            .and_then(|model| model.price)
            .map(|price| (price.prompt_per_million, price.completion_per_million));
        crate::engine::batch::judge::correct_books(&mut usage, &store.counts(), price);
    }
    usage
}

/// How often a session under way records its numbers in the manifest, so that a killed
/// process leaves its calls accounted up to then.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// A session under way: the judge it asks, when it started, and its place in the manifest's
/// `sessions`.
pub struct SessionOpen<'a> {
    setup: &'a JudgeSetup,
    /// A second judge of the same models this session also asks (`judge-check --repeat`'s
    /// uncached one), counted with the first.
    also: Option<&'a JudgeSetup>,
    started_at: String,
    index: usize,
    last_checkpoint: Option<Instant>,
    /// The judges' books this session counts from ([`SessionOpen::counting_from_now`]):
    /// empty, unless a judge that served an earlier stage counted that stage's calls.
    before: JudgeUsage,
    also_before: JudgeUsage,
}

impl<'a> SessionOpen<'a> {
    /// Opens a session on a run whose manifest holds the earlier sessions. The judge's
    /// endpoints start in the request forms those sessions settled on, so a server that
    /// refused a form is not asked in it again.
    pub fn new(setup: &'a JudgeSetup, started_at: String, manifest: &Manifest) -> Self {
        if let Some(judge) = &setup.chat {
            judge.adopt_forms(&recorded_forms(manifest));
        }
        SessionOpen {
            setup,
            also: None,
            started_at,
            index: manifest.sessions.len(),
            last_checkpoint: None,
            before: JudgeUsage::default(),
            also_before: JudgeUsage::default(),
        }
    }

    /// Counts only what the judge is asked from now on: for a judge that served an earlier
    /// stage of the same process (`pipeline`'s rank, then reference), whose books hold that
    /// stage's calls. A judge built for this session needs none (its books may already hold
    /// answers imported for this session, which are its own).
    pub fn counting_from_now(mut self) -> Self {
        self.before = session_usage(self.setup);
        self
    }

    /// Counts what `setup` is asked in this session too.
    pub fn also_counting(&mut self, setup: &'a JudgeSetup) {
        self.also = Some(setup);
        self.also_before = session_usage(setup);
    }

    /// After a sample: records this session as `running` with its numbers so far (after the
    /// first sample, then at most every `CHECKPOINT_EVERY`).
    pub fn checkpoint(
        &mut self,
        run: &RunDir,
        manifest: &mut Manifest,
        cells: usize,
    ) -> Result<()> {
        if self
            .last_checkpoint
            .is_some_and(|at| at.elapsed() < CHECKPOINT_EVERY)
        {
            return Ok(());
        }
        self.last_checkpoint = Some(Instant::now());
        self.record(manifest, SessionEnd::Running, None, cells);
        run.write_manifest(manifest)?;
        Ok(())
    }

    /// Puts this session, as it stands, in its place in the manifest's `sessions`.
    fn record(
        &self,
        manifest: &mut Manifest,
        ended: SessionEnd,
        reason: Option<String>,
        cells: usize,
    ) {
        manifest.sessions.truncate(self.index);
        manifest.sessions.push(Session {
            started_at: self.started_at.clone(),
            finished_at: utc_timestamp(),
            ended,
            reason,
            cells,
            judge: self.usage(),
        });
    }

    fn usage(&self) -> JudgeUsage {
        let mut usage = session_usage(self.setup).since(&self.before);
        if let Some(also) = self.also {
            usage.add(&session_usage(also).since(&self.also_before));
        }
        usage
    }

    /// Appends this session (how it `ended`, why, the `cells` it journaled, what it asked
    /// of the judge) to the manifest's `sessions`, and returns the run's account over all of
    /// them — earlier sessions as they were recorded, so no call is counted twice.
    pub fn close(
        &self,
        manifest: &mut Manifest,
        ended: SessionEnd,
        reason: Option<String>,
        cells: usize,
    ) -> JudgeAccount {
        self.record(manifest, ended, reason, cells);
        JudgeAccount::over_sessions(
            self.setup.kind(),
            self.setup.models(),
            self.setup.endpoints.clone(),
            &manifest.sessions,
        )
    }

    /// Ends an incomplete session: appends it to `manifest` and writes that to `run` (the
    /// run still incomplete); returns the footer to show.
    pub fn stop(
        &self,
        run: &RunDir,
        manifest: &mut Manifest,
        ended: SessionEnd,
        reason: String,
        cells: usize,
    ) -> Result<String> {
        let account = self.close(manifest, ended, Some(reason), cells);
        run.write_manifest(manifest)?;
        Ok(footer(&account, &this_session(manifest)))
    }

    /// Whether a model answered a call in this session (answers from the cache cost
    /// nothing now and are not counted): what a failed run must not throw away.
    pub fn asked_a_model(&self) -> bool {
        self.usage().total.calls > 0
    }
}

/// The request forms a run's sessions settled on, the latest per endpoint and model.
fn recorded_forms(manifest: &Manifest) -> Vec<LearnedForm> {
    let mut all = JudgeUsage::default();
    for session in &manifest.sessions {
        all.add(&session.judge);
    }
    all.request_forms
        .into_iter()
        .map(|record| LearnedForm {
            endpoint: record.endpoint,
            model: record.model,
            form: RequestForm {
                cap_param: CapParam::from_field(&record.cap_param).unwrap_or_default(),
                dropped: record.left_out.into_iter().collect(),
            },
            lessons: Vec::new(),
        })
        .collect()
}

/// The usage of the manifest's last session (the one just closed).
pub fn this_session(manifest: &Manifest) -> JudgeUsage {
    manifest
        .sessions
        .last()
        .map(|session| session.judge.clone())
        .unwrap_or_default()
}

/// `412 model calls (37 cached, 5 merged), 183201 prompt + 20113 completion tokens,
/// $0.031800, 12 heuristic answers`.
pub fn describe(usage: &JudgeUsage) -> String {
    let t = &usage.total;
    let mut text = format!("{} model calls", t.calls);
    if t.cached_calls + t.merged_calls > 0 {
        text.push_str(&format!(
            " ({} cached, {} merged)",
            t.cached_calls, t.merged_calls
        ));
    }
    if t.calls > 0 {
        text.push_str(&format!(
            ", {} prompt + {} completion tokens",
            t.prompt_tokens, t.completion_tokens
        ));
        if t.reasoning_tokens > 0 {
            text.push_str(&format!(" ({} of them thinking)", t.reasoning_tokens));
        }
    }
    match t.cost_usd {
        Some(usd) => text.push_str(&format!(", ${usd:.6}")),
        None => text.push_str(", cost unknown (no price for the model)"),
    }
    if usage.cache_hits_other_endpoint > 0 {
        text.push_str(&format!(
            "; {} of the cached answers were written by another endpoint serving the same \
             model name",
            usage.cache_hits_other_endpoint
        ));
    }
    if usage.cache_write_errors > 0 {
        text.push_str(&format!(
            "; {} answers could not be stored in the answer cache (a later run asks for them \
             again)",
            usage.cache_write_errors
        ));
    }
    let heuristic = usage.heuristic_calls();
    if heuristic > 0 {
        text.push_str(&format!(", {heuristic} heuristic answers"));
    }
    let checker = usage.checker_calls();
    if checker > 0 {
        text.push_str(&format!(", {checker} checker answers"));
    }
    if let Some(line) = rageval_report::cascade_line(usage) {
        text.push_str(&format!("; {line}"));
    }
    for form in usage.request_forms.iter().filter(|f| !f.learned.is_empty()) {
        text.push_str(&format!(
            "; {} at {} refused this run's first requests, so: {}",
            form.model,
            form.endpoint,
            form.learned.join(", ")
        ));
    }
    text
}

/// The footer line: this session, and the whole run when it took more than one.
pub fn footer(account: &JudgeAccount, this: &JudgeUsage) -> String {
    if account.sessions <= 1 {
        return format!("judge: {}", describe(this));
    }
    format!(
        "judge, this session: {}; whole run ({} sessions): {}",
        describe(this),
        account.sessions,
        describe(&account.usage)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_says_this_session_and_the_whole_run() {
        let this = JudgeUsage {
            total: CallTally {
                calls: 10,
                cached_calls: 2,
                prompt_tokens: 1000,
                completion_tokens: 100,
                cost_usd: Some(0.0012),
                ..CallTally::default()
            },
            ..JudgeUsage::default()
        };
        let single = JudgeAccount {
            kind: "endpoint".into(),
            models: Vec::new(),
            endpoints: Vec::new(),
            sessions: 1,
            usage: this.clone(),
        };
        assert_eq!(
            footer(&single, &this),
            "judge: 10 model calls (2 cached, 0 merged), 1000 prompt + 100 completion \
             tokens, $0.001200"
        );
        let mut whole = single.clone();
        whole.sessions = 2;
        whole.usage.total.calls = 25;
        whole.usage.total.cost_usd = None;
        let line = footer(&whole, &this);
        assert!(
            line.starts_with("judge, this session: 10 model calls"),
            "{line}"
        );
        assert!(
            line.contains("whole run (2 sessions): 25 model calls")
                && line.ends_with("cost unknown (no price for the model)"),
            "{line}"
        );
        let mut offline = JudgeUsage::default();
        offline.tasks.insert(
            "support_verdicts".into(),
            TaskTally {
                llm: 0,
                heuristic: 30,
                checker: 0,
                ..TaskTally::default()
            },
        );
        assert_eq!(
            describe(&offline),
            "0 model calls, $0.000000, 30 heuristic answers"
        );
        offline.tasks.insert(
            "support_verdicts".into(),
            TaskTally {
                llm: 0,
                heuristic: 0,
                checker: 12,
                ..TaskTally::default()
            },
        );
        offline.tasks.insert(
            "split_statements".into(),
            TaskTally {
                llm: 0,
                heuristic: 5,
                checker: 0,
                ..TaskTally::default()
            },
        );
        assert_eq!(
            describe(&offline),
            "0 model calls, $0.000000, 5 heuristic answers, 12 checker answers"
        );
    }
}
