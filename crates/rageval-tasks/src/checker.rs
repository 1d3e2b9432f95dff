//! Support verdicts from a checker model (`rageval_judge::SupportChecker`): each statement
//! checked against the contexts, P(supported) read as a label. It answers
//! [`SupportVerdicts`] only; statements are still split by whoever splits them (the
//! heuristic's sentence splitter without a chat model).
//!
//! The probability goes into the reason, not into [`SupportVerdict::score`]: that field is
//! a degree of support that graded metrics multiply in, and a classifier's confidence is
//! not one. A token-head model's unsupported spans are named in the reason, as evidence.
//!
//! A [`CheckerCache`] keeps each claim's check in the judge's answer cache, so a rerun or a
//! resumed run reads it instead of running the model again.
//!
//! An [`EscalationBand`] makes the checker the first tier of a cascade: the router sends
//! the statements whose P(supported) falls inside the band to the chat judge and keeps the
//! checker's verdict on the others. This module scores and reads; it asks no chat model.

use rageval_judge::checker::ClaimCheck;
use rageval_judge::{Cache, CacheKey, ChatResponse, SupportChecker, Usage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::TaskError;
use crate::judged::{Implementation, Judged};
use crate::task::{Support, SupportVerdict, SupportVerdicts, TaskKind};

/// A statement is supported when the checker gives it at least this probability.
pub const SUPPORTED_AT: f64 = 0.5;

/// Unsupported spans named in one verdict's reason, at most.
pub const SPANS_SHOWN: usize = 8;

/// A checker model as verdicts and routes name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckerInfo {
    /// `modernbert` or `deberta-v2`.
    pub family: String,
    /// `tokens` or `sequence`.
    pub head: String,
    /// The model folder's name.
    pub model: String,
    /// SHA-256 of its `model.safetensors`.
    pub sha256: String,
}

impl CheckerInfo {
    /// What `checker` is.
    pub fn of(checker: &SupportChecker) -> Self {
        CheckerInfo {
            family: checker.family().name().to_owned(),
            head: checker.head().name().to_owned(),
            model: checker.name().to_owned(),
            sha256: checker.sha256().to_owned(),
        }
    }

    /// `checker deberta-v2 NAME (sha256 0123abcd…)`.
    pub fn who(&self) -> String {
        format!(
            "checker {} {} (sha256 {}…)",
            self.family,
            self.model,
            self.sha256.get(..12).unwrap_or(&self.sha256)
        )
    }
}

/// The P(supported) range, inclusive at both ends, whose statements the checker does not
/// settle: they go to the chat judge (`--escalate LOW,HIGH`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EscalationBand {
    /// Lowest P(supported) escalated.
    pub low: f64,
    /// Highest P(supported) escalated.
    pub high: f64,
}

/// The band when `--escalate` is given without one: the checker settles what it gives at
/// most 0.2 or more than 0.8, a guess to replace with one `judge-check` chose on labels.
pub const DEFAULT_BAND: EscalationBand = EscalationBand {
    low: 0.2,
    high: 0.8,
};

/// The band that escalates every statement, whatever its score: the checker need not run
/// (`--escalate 0,1`).
pub const EVERY_CLAIM: EscalationBand = EscalationBand {
    low: 0.0,
    high: 1.0,
};

impl EscalationBand {
    /// Whether a statement the checker gives `support` goes to the chat judge.
    pub fn escalates(&self, support: f64) -> bool {
        support >= self.low && support <= self.high
    }

    /// Whether every score lies inside, so that no statement is the checker's to settle.
    pub fn escalates_every_claim(&self) -> bool {
        self.low <= 0.0 && self.high >= 1.0
    }
}

impl std::fmt::Display for EscalationBand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.low, self.high)
    }
}

impl std::str::FromStr for EscalationBand {
    type Err = String;

    /// `LOW,HIGH`, two probabilities with `0 <= LOW <= HIGH <= 1`.
    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || format!("expected LOW,HIGH with 0 <= LOW <= HIGH <= 1, got '{text}'");
        let (low, high) = text.split_once(',').ok_or_else(expected)?;
        let read = |part: &str| part.trim().parse::<f64>().map_err(|_| expected());
        let (low, high) = (read(low)?, read(high)?);
        let probability = |p: f64| p.is_finite() && (0.0..=1.0).contains(&p);
        if !(probability(low) && probability(high) && low <= high) {
            return Err(expected());
        }
        Ok(EscalationBand { low, high })
    }
}

/// One statement as the checker read it: its P(supported) and its verdict.
pub(crate) struct Checked {
    pub support: f64,
    pub verdict: SupportVerdict,
}

/// Every statement of `task` checked by `checker`, one after another (each check fills the
/// blocking pool's thread with the model's own work).
pub(crate) async fn support_verdicts(
    checker: &SupportChecker,
    cache: Option<&CheckerCache>,
    task: &SupportVerdicts,
) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
    let verdicts = check_each(checker, cache, task)
        .await?
        .into_iter()
        .map(|checked| checked.verdict)
        .collect();
    Ok(checker_judged(checker, verdicts))
}

/// What a dry run gives for `task` in place of the checker's verdicts: one placeholder per
/// statement, the model not run (the metrics' scores are not shown by a dry run).
pub(crate) fn planned(
    checker: &SupportChecker,
    task: &SupportVerdicts,
) -> Judged<Vec<SupportVerdict>> {
    let verdicts = task
        .statements
        .iter()
        .map(|_| SupportVerdict::unsupported_by_rule("planned: a dry run does not run the checker"))
        .collect();
    checker_judged(checker, verdicts)
}

/// `verdicts` as the checker's answer.
pub(crate) fn checker_judged(
    checker: &SupportChecker,
    verdicts: Vec<SupportVerdict>,
) -> Judged<Vec<SupportVerdict>> {
    Judged {
        value: verdicts,
        by: Implementation::Checker(CheckerInfo::of(checker)),
        rung: None,
        usage: Usage::default(),
        cached: false,
    }
}

/// Bumped when what a check holds or how the checker reads a pair changes (windows, their
/// combining, the label rule), so a cached check is never one another reading gave.
pub const CHECKER_CACHE_FORMAT: u32 = 1;

/// A checker's checks kept in the judge's answer cache (its `answers` table, template
/// `checker`). A claim's key is the SHA-256 of everything that decides its check: the
/// weights' SHA-256, the tokenizer's, the parsed `config.json`, the window, the label
/// rule, this format and rageval's version, then the contexts and the claim. The folder's
/// path is not in it: the same files elsewhere give the same checks.
#[derive(Debug, Clone)]
pub struct CheckerCache {
    cache: Cache,
    identity: Value,
}

impl CheckerCache {
    /// Checks by `checker` kept in `cache`; reads the checker's `tokenizer.json` once to
    /// hash it.
    pub fn new(cache: Cache, checker: &SupportChecker) -> Result<Self, TaskError> {
        let spec = checker.spec();
        let tokenizer_path = checker.dir().join("tokenizer.json");
        let tokenizer = std::fs::read(&tokenizer_path).map_err(|e| TaskError::Judge {
            task: TaskKind::SupportVerdicts,
            source: rageval_judge::JudgeError::LocalModel {
                path: tokenizer_path.display().to_string(),
                reason: e.to_string(),
            },
        })?;
        let identity = json!({
            "kind": "checker",
            "format": CHECKER_CACHE_FORMAT,
            "rageval": env!("CARGO_PKG_VERSION"),
            "weights": checker.sha256(),
            "tokenizer": sha256_hex(&tokenizer),
            "config": spec.config,
            "window": spec.window,
            "labels": spec.labels,
            "supported": spec.supported,
        });
        Ok(CheckerCache { cache, identity })
    }

    fn key(&self, contexts: &[String], claim: &str) -> CacheKey {
        CacheKey::of(&json!({ "checker": self.identity, "contexts": contexts, "claim": claim }))
    }

    async fn get(&self, key: CacheKey) -> Result<Option<ClaimCheck>, rageval_judge::JudgeError> {
        let Some(answer) = self.cache.get(key).await? else {
            return Ok(None);
        };
        // An entry that does not read as a check is recomputed, not trusted.
        let Ok(stored) = serde_json::from_str::<StoredCheck>(&answer.text) else {
            return Ok(None);
        };
        Ok(Some(ClaimCheck {
            support: stored.support,
            context: stored.context,
            unsupported_spans: stored.unsupported_spans,
            windows: stored.windows,
        }))
    }

    async fn put(
        &self,
        key: CacheKey,
        model: &str,
        check: &ClaimCheck,
    ) -> Result<(), rageval_judge::JudgeError> {
        let stored = StoredCheck {
            support: check.support,
            context: check.context,
            unsupported_spans: check.unsupported_spans.clone(),
            windows: check.windows,
        };
        let answer = ChatResponse {
            text: serde_json::to_string(&stored).unwrap_or_default(),
            usage: Usage::default(),
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        };
        self.cache
            .put(key, "checker".into(), model.to_owned(), answer)
            .await
    }
}

/// A check as the cache holds it.
#[derive(Serialize, Deserialize)]
struct StoredCheck {
    support: f64,
    context: Option<usize>,
    unsupported_spans: Vec<String>,
    windows: usize,
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `claim` against `contexts` by `checker`, from `cache` when it holds it (else checked and
/// stored there).
async fn check_claim(
    checker: &SupportChecker,
    cache: Option<&CheckerCache>,
    contexts: &[String],
    claim: &str,
) -> Result<ClaimCheck, rageval_judge::JudgeError> {
    let Some(cache) = cache else {
        return checker.check(contexts, claim).await;
    };
    let key = cache.key(contexts, claim);
    if let Some(check) = cache.get(key).await? {
        return Ok(check);
    }
    let check = checker.check(contexts, claim).await?;
    cache.put(key, checker.name(), &check).await?;
    Ok(check)
}

/// Each statement of `task` with the checker's P(supported) and verdict, in order.
pub(crate) async fn check_each(
    checker: &SupportChecker,
    cache: Option<&CheckerCache>,
    task: &SupportVerdicts,
) -> Result<Vec<Checked>, TaskError> {
    let mut verdicts = Vec::with_capacity(task.statements.len());
    for statement in &task.statements {
        let check = check_claim(checker, cache, &task.contexts, statement)
            .await
            .map_err(|source| TaskError::Judge {
                task: TaskKind::SupportVerdicts,
                source,
            })?;
        let supported = check.support >= SUPPORTED_AT;
        let mut reason = format!(
            "checker P(supported) {:.3}, {} the threshold {SUPPORTED_AT}, best of {} window{}",
            check.support,
            if supported { "at or above" } else { "below" },
            check.windows,
            if check.windows == 1 { "" } else { "s" }
        );
        if !check.unsupported_spans.is_empty() {
            let spans: Vec<String> = check
                .unsupported_spans
                .iter()
                .take(SPANS_SHOWN)
                .map(|span| format!("\u{ab}{span}\u{bb}"))
                .collect();
            let more = check.unsupported_spans.len().saturating_sub(SPANS_SHOWN);
            reason.push_str(&format!("; unsupported spans: {}", spans.join(", ")));
            if more > 0 {
                reason.push_str(&format!(" and {more} more"));
            }
        }
        verdicts.push(Checked {
            support: check.support,
            verdict: SupportVerdict {
                support: if supported {
                    Support::FullySupported
                } else {
                    Support::NotSupported
                },
                context: check.context.filter(|_| supported),
                reason,
                score: None,
                turn: None,
            },
        });
    }
    Ok(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Premise;

    fn fixture(name: &str) -> SupportChecker {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rageval-judge/tests/fixtures/checkers")
            .join(name);
        SupportChecker::open(dir).unwrap()
    }

    /// A rerun reads a claim's check from the answer cache instead of running the model:
    /// a check planted under the claim's key is what comes back, and another checker's
    /// weights key another entry.
    #[tokio::test]
    async fn a_cached_check_is_read_not_recomputed() {
        let path = std::env::temp_dir().join(format!(
            "rageval-checker-cache-{}.sqlite",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let checker = fixture("modernbert-tokens");
        let cache = CheckerCache::new(Cache::open(&path).unwrap(), &checker).unwrap();
        let task = SupportVerdicts {
            statements: vec!["Paris is in France.".into()],
            contexts: vec!["Paris is the capital of France.".into()],
            premise: Premise::Contexts,
            history: Vec::new(),
        };
        let first = check_each(&checker, Some(&cache), &task).await.unwrap();
        assert_eq!(
            cache.cache.len().await.unwrap(),
            1,
            "the check was not stored"
        );
        let uncached = check_each(&checker, None, &task).await.unwrap();
        assert_eq!(first[0].support, uncached[0].support);

        let key = cache.key(&task.contexts, &task.statements[0]);
        let planted = ClaimCheck {
            support: 0.987_654,
            context: None,
            unsupported_spans: Vec::new(),
            windows: 7,
        };
        cache.put(key, checker.name(), &planted).await.unwrap();
        let read = check_each(&checker, Some(&cache), &task).await.unwrap();
        assert_eq!(read[0].support, 0.987_654);
        assert!(read[0].verdict.reason.contains("best of 7 windows"));

        let other = fixture("deberta-v2-nli");
        let other_cache = CheckerCache::new(cache.cache.clone(), &other).unwrap();
        assert_ne!(other_cache.key(&task.contexts, &task.statements[0]), key);
        assert_ne!(cache.key(&task.contexts, "Paris is in Spain."), key);
        drop((cache, other_cache));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_band_is_two_ordered_probabilities() {
        assert_eq!(
            "0.2,0.8".parse(),
            Ok(EscalationBand {
                low: 0.2,
                high: 0.8
            })
        );
        for bad in ["0.8,0.2", "0.2", "-0.1,0.5", "0.5,1.5", "NaN,0.5", "a,b"] {
            assert!(bad.parse::<EscalationBand>().is_err(), "{bad}");
        }
        assert!(DEFAULT_BAND.escalates(0.2) && DEFAULT_BAND.escalates(0.8));
        assert!(!DEFAULT_BAND.escalates(0.19) && !DEFAULT_BAND.escalates(0.81));
    }
}
