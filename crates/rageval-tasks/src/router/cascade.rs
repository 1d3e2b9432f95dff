//! Support verdicts by a checker model, as the router sends them: alone, planned (a dry
//! run, which counts the checker's work and does none of it), or as the first tier of a
//! cascade whose statements scored inside the [`EscalationBand`] go to the chat judge in one
//! call; each verdict's reason then says which tier gave it.

use rageval_judge::SupportChecker;

use super::TaskJudge;
use crate::checker::{self, EscalationBand};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::task::{SupportVerdict, SupportVerdicts, TaskKind};

impl TaskJudge {
    /// [`SupportVerdicts`] on the checker route: the cascade with an escalation band, else
    /// the checker's verdicts (planned in a dry run).
    pub(crate) async fn support_by_checker(
        &self,
        task: &SupportVerdicts,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        let Some(checker) = &self.checker else {
            return Err(TaskError::Unavailable {
                task: TaskKind::SupportVerdicts,
                why: "no checker model is configured".into(),
            });
        };
        match self.escalation() {
            Some(band) => self.cascade(checker, band, task).await,
            None if self.checker_planned => {
                self.count_claims(task.statements.len(), 0);
                Ok(checker::planned(checker, task))
            }
            None => checker::support_verdicts(checker, self.checker_cache.as_ref(), task).await,
        }
    }

    fn count_claims(&self, by_checker: usize, by_chat: usize) {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = calls.entry(TaskKind::SupportVerdicts).or_default();
        entry.claims_by_checker += by_checker as u64;
        entry.claims_by_chat += by_chat as u64;
    }

    /// Support verdicts by the checker, except those of the statements it scores inside
    /// `band`, which the chat model answers in one call. The answer is the chat model's
    /// (its usage, its template) when it was asked, else the checker's; each reason names
    /// its tier.
    async fn cascade(
        &self,
        checker: &SupportChecker,
        band: EscalationBand,
        task: &SupportVerdicts,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        if band.escalates_every_claim() || self.checker_planned {
            // No score can keep a statement from the chat model, or a dry run plans the
            // most the cascade can send: the checker is not run.
            let answered = self.run_llm(task).await?;
            self.count_claims(0, task.statements.len());
            return Ok(answered.map(|verdicts| {
                verdicts
                    .into_iter()
                    .map(|verdict| SupportVerdict {
                        reason: format!(
                            "escalated to the chat judge (the band {band} escalates every \
                             claim, so the checker was not run): {}",
                            verdict.reason
                        ),
                        ..verdict
                    })
                    .collect()
            }));
        }
        let checked = checker::check_each(checker, self.checker_cache.as_ref(), task).await?;
        let escalated: Vec<usize> = (0..checked.len())
            .filter(|&i| band.escalates(checked[i].support))
            .collect();
        let mut verdicts: Vec<SupportVerdict> = checked
            .iter()
            .map(|checked| SupportVerdict {
                reason: format!(
                    "settled by the checker, outside the escalation band {band}: {}",
                    checked.verdict.reason
                ),
                ..checked.verdict.clone()
            })
            .collect();
        if escalated.is_empty() {
            self.count_claims(verdicts.len(), 0);
            return Ok(checker::checker_judged(checker, verdicts));
        }
        let asked = SupportVerdicts {
            statements: escalated
                .iter()
                .map(|&i| task.statements[i].clone())
                .collect(),
            contexts: task.contexts.clone(),
            premise: task.premise,
            history: task.history.clone(),
        };
        let answered = self.run_llm(&asked).await?;
        self.count_claims(verdicts.len() - escalated.len(), escalated.len());
        let chat_verdicts = answered.value.iter().cloned();
        for (&i, verdict) in escalated.iter().zip(chat_verdicts) {
            verdicts[i] = SupportVerdict {
                reason: format!(
                    "escalated to the chat judge (checker P(supported) {:.3}, inside the band \
                     {band}): {}",
                    checked[i].support, verdict.reason
                ),
                ..verdict
            };
        }
        Ok(answered.map(|_| verdicts))
    }
}
