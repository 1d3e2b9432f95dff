//! A loaded checker: its tokenizer and network, and a claim checked against contexts —
//! each context cut into windows of the model's size, every window read with the claim as
//! the second sequence, the windows' scores combined ([`super::windows`]). Blocking: callers
//! run it on the blocking pool.

use tokenizers::{Encoding, Tokenizer};

use super::network::Network;
use super::spec::{CheckerSpec, Family, Head, TOKENIZER_FILE, WEIGHTS_FILE};
use super::windows::{self, WindowScore};
use super::{ClaimCheck, PairLogits};
use crate::error::JudgeError;

/// Tokens kept free in each window beyond the claim and the special tokens: re-tokenising a
/// window's text can give a token or two more than the premise's own tokens there.
const WINDOW_SLACK: usize = 8;

/// A checker ready to run.
pub(crate) struct Engine {
    spec: CheckerSpec,
    tokenizer: Tokenizer,
    network: Network,
}

impl Engine {
    /// Loads the tokenizer and the weights of `spec`'s folder.
    pub(crate) fn load(spec: CheckerSpec) -> Result<Self, JudgeError> {
        let fail = |file: &str, reason: String| JudgeError::LocalModel {
            path: spec.dir.join(file).display().to_string(),
            reason,
        };
        let read =
            |file: &str| std::fs::read(spec.dir.join(file)).map_err(|e| fail(file, e.to_string()));
        let mut tokenizer = Tokenizer::from_bytes(read(TOKENIZER_FILE)?)
            .map_err(|e| fail(TOKENIZER_FILE, format!("not a tokenizer: {e}")))?;
        // Windows are cut here, so the tokenizer must neither cut nor pad.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| fail(TOKENIZER_FILE, e.to_string()))?;
        let network = Network::load(&spec, read(WEIGHTS_FILE)?, &tokenizer)
            .map_err(|e| fail(WEIGHTS_FILE, e))?;
        Ok(Engine {
            spec,
            tokenizer,
            network,
        })
    }

    fn error(&self, reason: impl std::fmt::Display) -> JudgeError {
        JudgeError::LocalModel {
            path: self.spec.dir.display().to_string(),
            reason: reason.to_string(),
        }
    }

    /// The model's input for (context window, claim): the tokenizer's pair template, or for
    /// T5 MiniCheck's prompt, `predict: ` + window + `</s>` + claim (T5's end-of-sequence
    /// token between them, as MiniCheck joins them), then `</s>`.
    fn encode_pair(&self, first: &str, second: &str) -> Result<Encoding, JudgeError> {
        let encoded = if self.spec.family == Family::T5 {
            self.tokenizer
                .encode(format!("predict: {first}</s>{second}"), true)
        } else {
            self.tokenizer.encode((first, second), true)
        };
        encoded.map_err(|e| self.error(format!("tokenizing: {e}")))
    }

    /// The network's raw output for one pair, with the token ids it read.
    pub(crate) fn pair_logits(&self, first: &str, second: &str) -> Result<PairLogits, JudgeError> {
        let encoding = self.encode_pair(first, second)?;
        let rows = self
            .network
            .forward(encoding.get_ids(), encoding.get_type_ids())
            .map_err(|e| self.error(e))?;
        Ok(PairLogits {
            ids: encoding.get_ids().to_vec(),
            rows,
        })
    }

    /// `claim` against `contexts` (blank contexts skipped).
    pub(crate) fn check(&self, contexts: &[String], claim: &str) -> Result<ClaimCheck, JudgeError> {
        let claim_tokens = self
            .tokenizer
            .encode(claim, false)
            .map_err(|e| self.error(format!("tokenizing: {e}")))?
            .len();
        // Special tokens and any prompt: what a pair costs beyond its two texts.
        let specials = self.encode_pair("", "")?.len();
        let budget = self
            .spec
            .window
            .checked_sub(claim_tokens + specials + WINDOW_SLACK)
            .filter(|&budget| budget >= WINDOW_SLACK)
            .ok_or_else(|| {
                self.error(format!(
                    "a claim of {claim_tokens} tokens leaves no room for context in a window of {} tokens",
                    self.spec.window
                ))
            })?;
        let mut scores = Vec::new();
        let mut claim_offsets = Vec::new();
        for (context, text) in contexts.iter().enumerate() {
            let premise = self
                .tokenizer
                .encode(text.as_str(), false)
                .map_err(|e| self.error(format!("tokenizing: {e}")))?;
            for range in
                windows::windows(premise.get_offsets(), budget, windows::overlap_for(budget))
            {
                let Some(window) = text.get(range) else {
                    continue;
                };
                let (score, offsets) = self.score_window(context, window, claim)?;
                claim_offsets = offsets;
                scores.push(score);
            }
        }
        let Some(combined) = windows::combine(&scores) else {
            return Ok(ClaimCheck {
                support: 0.0,
                context: None,
                unsupported_spans: Vec::new(),
                windows: 0,
            });
        };
        let unsupported_spans = combined
            .hallucinated
            .as_deref()
            .map(|p| windows::unsupported_spans(claim, &claim_offsets, p))
            .unwrap_or_default();
        Ok(ClaimCheck {
            support: combined.support.clamp(0.0, 1.0),
            context: combined.context,
            unsupported_spans,
            windows: scores.len(),
        })
    }

    /// One window: its score, and the claim tokens' byte offsets in the claim.
    fn score_window(
        &self,
        context: usize,
        window: &str,
        claim: &str,
    ) -> Result<(WindowScore, Vec<(usize, usize)>), JudgeError> {
        let encoding = self.encode_pair(window, claim)?;
        if encoding.len() > self.spec.window {
            return Err(self.error(format!(
                "a window of {} tokens is longer than the model's {}",
                encoding.len(),
                self.spec.window
            )));
        }
        let rows = self
            .network
            .forward(encoding.get_ids(), encoding.get_type_ids())
            .map_err(|e| self.error(e))?;
        let supported = self.spec.supported;
        let probability = |row: &[f32]| -> f64 {
            if self.network.gives_probabilities() {
                row.get(supported).map_or(0.0, |&p| f64::from(p))
            } else {
                softmax_at(row, supported)
            }
        };
        match self.spec.head {
            Head::Sequence => {
                let support = rows.first().map_or(0.0, |row| probability(row));
                Ok((
                    WindowScore {
                        context,
                        support,
                        hallucinated: None,
                    },
                    Vec::new(),
                ))
            }
            Head::Tokens => {
                let (offsets, hallucinated): (Vec<_>, Vec<_>) = encoding
                    .get_sequence_ids()
                    .into_iter()
                    .zip(encoding.get_offsets())
                    .zip(&rows)
                    .filter(|((sequence, _), _)| *sequence == Some(1))
                    .map(|((_, &offsets), row)| (offsets, 1.0 - probability(row)))
                    .unzip();
                let support = 1.0 - hallucinated.iter().copied().fold(0.0, f64::max);
                Ok((
                    WindowScore {
                        context,
                        support,
                        hallucinated: Some(hallucinated),
                    },
                    offsets,
                ))
            }
        }
    }
}

/// The softmax of `row` at `index`, computed stably.
fn softmax_at(row: &[f32], index: usize) -> f64 {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let total: f64 = row.iter().map(|&x| f64::from(x - max).exp()).sum();
    row.get(index)
        .map_or(0.0, |&x| f64::from(x - max).exp() / total)
}
