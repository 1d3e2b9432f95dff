//! The judge of a batch run: the configured endpoint's chat model wrapped in a
//! [`BatchModel`] over the run's [`BatchStore`], booking at batch prices, with no
//! requests- or tokens-per-minute limits (a batch job is not rate-limited per call), and a
//! cache that is read and written (answers handed out by the store reach the cache once
//! they parse, so later passes read them back instead of booking them again). Embedding
//! calls stay synchronous: batch jobs here carry chat requests only.

use rageval_judge::batch::{BatchCounts, BatchOptions};
use rageval_judge::config::JudgeSettings;
use rageval_judge::{AnyChatModel, BatchClient, BatchModel, BatchStore, CacheMode, Models};
use rageval_report::JudgeUsage;

use super::BatchMode;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};

/// Settings changed for batch mode: batch prices (`[judge.prices]`'s `batch_*` keys, else
/// half the price), no per-minute limits; refused unless the cache is read and written.
pub(crate) fn for_batch(settings: &mut JudgeSettings) -> Result<()> {
    if settings.cache_mode != CacheMode::ReadWrite {
        return Err(RunError::Usage(
            "batch mode needs the judge cache read and written (answers of one pass are read \
             back by the next): drop --no-cache / --offline"
                .into(),
        ));
    }
    settings.prices = settings.prices.for_batch();
    settings.limits.requests_per_minute = None;
    settings.limits.tokens_per_minute = None;
    for endpoint in &mut settings.endpoints {
        endpoint.limits.requests_per_minute = None;
        endpoint.limits.tokens_per_minute = None;
    }
    Ok(())
}

/// The judges of a batch run over `store`, and a client for the endpoint's batch jobs when
/// `mode` sends them. Needs exactly one endpoint: a batch job is one provider's.
pub(crate) fn resolve(
    options: &JudgeOptions,
    env: Env<'_>,
    mode: &BatchMode,
    store: &BatchStore,
) -> Result<(JudgeSetup, Option<BatchClient>)> {
    let mut options = options.clone();
    options.batch = true;
    let mut endpoint = None;
    let batch_options = BatchOptions {
        failed_items: mode.failed_items,
        ..BatchOptions::default()
    };
    let mut setup = judges::resolve_with(&options, env, |settings, local| {
        if local.is_some() {
            return Err(needs_endpoint());
        }
        let [only] = settings.endpoints.as_slice() else {
            return Err(RunError::Usage(format!(
                "batch jobs go to one endpoint, and the judge settings name {}: keep one",
                settings.endpoints.len()
            )));
        };
        endpoint = Some(only.settings.clone());
        let models = settings.models().map_err(RunError::Judge)?;
        let chat = models.chat.map(|chat| {
            AnyChatModel::new(BatchModel::with_options(chat, store.clone(), batch_options))
        });
        settings
            .build_with(Models {
                chat,
                embedder: models.embedder,
            })
            .map_err(RunError::Judge)
    })?;
    let Some(endpoint) = endpoint.filter(|_| setup.kind() == "endpoint") else {
        return Err(needs_endpoint());
    };
    setup.batch = Some(store.clone());
    let client = match mode.submit {
        true => Some(BatchClient::new(endpoint).map_err(RunError::Judge)?),
        false => None,
    };
    Ok((setup, client))
}

fn needs_endpoint() -> RunError {
    RunError::Usage(
        "batch mode needs a judge endpoint (--judge-model and --judge-base-url, or [judge] in \
         rageval.toml): local and offline judges answer at once"
            .into(),
    )
}

/// Takes off the books what batch mode counts twice: answers the store handed out again
/// (booked as answered calls each time; `replayed`, priced at the chat model's batch price
/// `price`) from the totals, and calls that found their request pending (counted as failed
/// attempts) from the attempts. Per-template tallies keep the replays.
pub(crate) fn correct_books(
    usage: &mut JudgeUsage,
    counts: &BatchCounts,
    price: Option<(f64, f64)>,
) {
    let total = &mut usage.total;
    total.calls = total.calls.saturating_sub(counts.replayed);
    let replayed = counts.replayed_usage;
    total.prompt_tokens = total.prompt_tokens.saturating_sub(replayed.prompt_tokens);
    total.completion_tokens = total
        .completion_tokens
        .saturating_sub(replayed.completion_tokens);
    if let (Some(cost), Some((prompt, completion))) = (total.cost_usd.as_mut(), price) {
        let off = (replayed.prompt_tokens as f64 * prompt
            + replayed.completion_tokens as f64 * completion)
            / 1e6;
        *cost = (*cost - off).max(0.0);
    }
    usage.attempts = usage.attempts.saturating_sub(counts.pending_calls);
    usage.failed_attempts = usage.failed_attempts.saturating_sub(counts.pending_calls);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_judge::Usage;
    use rageval_report::CallTally;

    #[test]
    fn replays_and_pending_calls_come_off_the_books() {
        let mut usage = JudgeUsage {
            total: CallTally {
                calls: 10,
                prompt_tokens: 1_000,
                completion_tokens: 100,
                cost_usd: Some(0.002),
                ..CallTally::default()
            },
            attempts: 25,
            failed_attempts: 15,
            ..JudgeUsage::default()
        };
        let counts = BatchCounts {
            replayed: 2,
            replayed_usage: Usage {
                prompt_tokens: 200,
                completion_tokens: 20,
                reasoning_tokens: None,
            },
            pending_calls: 15,
            ..BatchCounts::default()
        };
        correct_books(&mut usage, &counts, Some((1.0, 2.0)));
        assert_eq!(
            (
                usage.total.calls,
                usage.total.prompt_tokens,
                usage.total.completion_tokens
            ),
            (8, 800, 80)
        );
        // 200 × $1 + 20 × $2 per million tokens.
        assert!((usage.total.cost_usd.unwrap() - (0.002 - 0.00024)).abs() < 1e-12);
        assert_eq!((usage.attempts, usage.failed_attempts), (10, 0));
    }
}
