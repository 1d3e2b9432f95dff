//! Seed S3's top-k rule: score a sample's first K contexts, lowering K until the largest
//! judge prompt fits the judge model's context window.
//!
//! Tokens are estimated, not counted: one per Chinese, Japanese or Korean character and one
//! per four other characters (the same chars/4 ruler the bench mock bills by). The largest
//! prompt is the one call that sends every context with the reference and the answer, or
//! its statements (`contexts_check`, or the support call that checks both statement lists);
//! its answer (a reason per statement and per context) is budgeted at the size of answer and
//! reference again.

use rageval_core::Sample;

/// Instructions, fences and the output schema of the largest prompt, in tokens.
pub const PROMPT_OVERHEAD_TOKENS: usize = 1_024;

/// Estimated tokens of `text`: CJK characters count one each, other characters a quarter.
pub fn estimate_tokens(text: &str) -> usize {
    let (cjk, other) = text.chars().fold((0usize, 0usize), |(cjk, other), c| {
        if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        }
    });
    cjk + other.div_ceil(4)
}

fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x3040..=0x30ff      // kana
        | 0x3400..=0x4dbf    // CJK extension A
        | 0x4e00..=0x9fff    // CJK unified ideographs
        | 0xac00..=0xd7af    // Hangul syllables
        | 0xf900..=0xfaff    // compatibility ideographs
        | 0xff00..=0xffef    // full-width forms
        | 0x20000..=0x2fa1f) // extensions B–F
}

/// How many of `sample`'s contexts to score: at most `top_k`, then fewer while the largest
/// prompt would exceed `window` tokens (never fewer than one). `window = None` when no chat
/// model reads the prompts.
pub fn contexts_to_score(sample: &Sample, top_k: Option<usize>, window: Option<usize>) -> usize {
    let available = sample.contexts.len();
    let mut k = top_k.map_or(available, |k| k.min(available));
    let Some(window) = window else {
        return k;
    };
    let statements = estimate_tokens(sample.answer.as_deref().unwrap_or_default())
        + sample
            .references
            .iter()
            .map(|r| estimate_tokens(r))
            .sum::<usize>();
    let fixed = PROMPT_OVERHEAD_TOKENS + estimate_tokens(&sample.question) + 2 * statements;
    let mut contexts: usize = sample.contexts[..k]
        .iter()
        .map(|c| estimate_tokens(&c.text))
        .sum();
    while k > 1 && fixed + contexts > window {
        k -= 1;
        contexts -= estimate_tokens(&sample.contexts[k].text);
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::Context;

    #[test]
    fn chinese_counts_a_token_per_character() {
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("少儿编程"), 4);
        assert_eq!(estimate_tokens("AI编程 ok"), 2 + 2);
    }

    #[test]
    fn k_is_lowered_until_the_prompt_fits() {
        let sample = Sample {
            question: "q".repeat(40),
            answer: Some("a".repeat(240)),
            references: vec!["r".repeat(160)],
            contexts: (0..10).map(|_| Context::text("c".repeat(4_000))).collect(),
            ..Sample::default()
        };
        // Each context is 1,000 tokens; fixed = 1,024 + 10 + 2·(60 + 40) = 1,234.
        assert_eq!(contexts_to_score(&sample, None, None), 10);
        assert_eq!(contexts_to_score(&sample, Some(5), None), 5);
        assert_eq!(contexts_to_score(&sample, Some(5), Some(100_000)), 5);
        assert_eq!(contexts_to_score(&sample, None, Some(4_300)), 3);
        assert_eq!(contexts_to_score(&sample, None, Some(10)), 1);
    }
}
