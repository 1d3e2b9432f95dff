//! Before a run that asks an in-process GGUF model, how long it will take here: the model's
//! speed is measured with short generations on this machine (writing, then reading),
//! and the run's plan ([`crate::engine::plan`]) says how many prompt and completion tokens it will
//! send. The embedded model decodes on one thread, one call at a time, so the time is about
//! the tokens over the speed — said before the run starts, so nobody waits hours unawares.

use std::time::{Duration, Instant};

use rageval_judge::{ChatModel, ChatRequest, Message, Sampling};

use crate::engine::error::Result;
use crate::engine::judges::JudgeSetup;
use crate::engine::observe::Observer;
use crate::engine::plan::Estimate;

/// Words of the prompt the reading speed is measured on (a few hundred tokens).
const PROBE_WORDS: usize = 300;
/// Tokens the writing speed is measured on.
const PROBE_ANSWER_TOKENS: u32 = 24;
/// The prompt of the load and of the writing measure: a few tokens that ask for a long
/// answer, so that timing the writing reads next to nothing.
const PROBE_SHORT_PROMPT: &str = "Write the numbers from one to fifty in words.";

/// A GGUF model's measured speed on this machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speed {
    /// Prompt tokens read per second.
    pub read_per_second: f64,
    /// Completion tokens written per second.
    pub write_per_second: f64,
}

/// Measures the chat model's speed when it is an in-process GGUF model (`None` for an
/// endpoint, or when the probe fails). Loads the model if it was not loaded yet.
///
/// The long prompt is read once: reading is what the probe costs (about 100 tokens a
/// second on one core), and each call reads its prompt afresh.
pub fn measure(setup: &JudgeSetup) -> Option<Speed> {
    setup.gguf.as_ref()?;
    let chat = setup.chat.as_ref()?;
    let runtime = crate::engine::shell::runtime().ok()?;
    probe(chat.model(), &runtime)
}

/// The probe itself, over any chat model: four calls, the long prompt in the last alone.
fn probe(model: &impl ChatModel, runtime: &tokio::runtime::Runtime) -> Option<Speed> {
    let long = format!(
        "{}\nRepeat the sentence above.",
        "The quick brown fox jumps over the lazy dog. ".repeat(PROBE_WORDS / 9)
    );
    let ask = |prompt: &str, max_tokens: u32| {
        let request = ChatRequest {
            messages: vec![Message::user(prompt)],
            sampling: Sampling {
                max_tokens: Some(max_tokens),
                ..Sampling::default()
            },
            response_schema: None,
        };
        let started = Instant::now();
        let response = runtime.block_on(model.chat(&request)).ok()?;
        Some((started.elapsed(), response.usage))
    };
    // The first call loads the model; it is not timed.
    ask(PROBE_SHORT_PROMPT, 1)?;
    // Writing: the same short prompt with a long answer, less the time to its first token.
    let (first, first_usage) = ask(PROBE_SHORT_PROMPT, 1)?;
    let (both, write_usage) = ask(PROBE_SHORT_PROMPT, PROBE_ANSWER_TOKENS)?;
    let (read, read_usage) = ask(&long, 1)?;
    let written = write_usage
        .completion_tokens
        .saturating_sub(first_usage.completion_tokens);
    let writing = both.saturating_sub(first).max(Duration::from_millis(1));
    (written > 0).then(|| Speed {
        read_per_second: read_usage.prompt_tokens as f64 / read.as_secs_f64().max(1e-3),
        write_per_second: written as f64 / writing.as_secs_f64(),
    })
}

/// The note said before a run whose plan is `estimate`, at `speed`.
pub fn note(speed: &Speed, estimate: &Estimate) -> String {
    let total = estimate.total().tally;
    let seconds = total.prompt_tokens as f64 / speed.read_per_second
        + total.completion_tokens as f64 / speed.write_per_second;
    format!(
        "the in-process GGUF model reads about {:.0} and writes about {:.0} tokens per second \
         here; this run's {} calls to it ({} prompt + {} completion tokens, as planned) \
         should take about {} (less when answers are already cached)",
        speed.read_per_second,
        speed.write_per_second,
        total.calls,
        total.prompt_tokens,
        total.completion_tokens,
        duration(seconds)
    )
}

fn duration(seconds: f64) -> String {
    let seconds = seconds.max(0.0).round() as u64;
    match seconds {
        0..=89 => format!("{seconds} s"),
        90..=5399 => format!("{} min", (seconds + 30) / 60),
        _ => format!("{:.1} h", seconds as f64 / 3600.0),
    }
}

/// Says, before a run, how long the in-process GGUF model of `setup` will take over the
/// plan `estimate` makes (nothing when no GGUF model answers, or the plan asks it nothing).
pub(crate) fn announce(
    setup: &JudgeSetup,
    estimate: impl FnOnce() -> Result<Estimate>,
    observer: &dyn Observer,
) -> Result<()> {
    if setup.gguf.is_none() || setup.chat.is_none() {
        return Ok(());
    }
    let estimate = estimate()?;
    if estimate.total().tally.calls == 0 {
        return Ok(());
    }
    if let Some(speed) = measure(setup) {
        observer.note(note(&speed, &estimate));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rageval_judge::{ChatResponse, JudgeError, Usage};
    use rageval_report::CallTally;

    use super::*;
    use crate::engine::plan::{EstimateRow, StageEstimate};

    /// Answers every call at once, counting a prompt's words as its tokens and writing as
    /// many tokens as asked; keeps each prompt's word count.
    #[derive(Default)]
    struct WordCounter {
        prompts: Mutex<Vec<u64>>,
    }

    impl ChatModel for WordCounter {
        fn kind(&self) -> &str {
            "test"
        }
        fn model(&self) -> &str {
            "word-counter"
        }
        fn endpoint(&self) -> String {
            "in memory".into()
        }
        fn supports_response_schema(&self) -> bool {
            false
        }
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
            let words: usize = request
                .messages
                .iter()
                .map(|m| m.content.split_whitespace().count())
                .sum();
            self.prompts.lock().unwrap().push(words as u64);
            Ok(ChatResponse {
                text: "one two three".into(),
                usage: Usage {
                    prompt_tokens: words as u64,
                    completion_tokens: u64::from(request.sampling.max_tokens.unwrap_or(1)),
                    ..Usage::default()
                },
                finish_reason: None,
                thinking: None,
                thinking_text: String::new(),
            })
        }
    }

    /// The probe reads its long prompt once: reading is what it costs on a local model
    /// (it read it three times before, about 1,000 tokens of a GGUF model's 100 a second).
    #[test]
    fn the_probe_reads_its_long_prompt_once_and_gives_both_speeds() {
        let model = WordCounter::default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let speed = probe(&model, &runtime).expect("a speed");
        assert!(speed.read_per_second > 0.0 && speed.write_per_second > 0.0);
        let prompts = model.prompts.into_inner().unwrap();
        let long = prompts.iter().filter(|&&w| w >= PROBE_WORDS as u64).count();
        assert_eq!(long, 1, "{prompts:?}");
        let short: u64 = prompts.iter().filter(|&&w| w < PROBE_WORDS as u64).sum();
        assert!(short < 40, "{prompts:?}");
    }

    #[test]
    fn the_time_is_the_tokens_over_the_speed() {
        let stage = StageEstimate {
            stage: "eval",
            units: 10,
            unit_name: "samples",
            least: None,
            rows: vec![EstimateRow {
                label: "whole run".into(),
                tally: CallTally {
                    calls: 20,
                    prompt_tokens: 40_000,
                    completion_tokens: 3_000,
                    ..CallTally::default()
                },
                heuristic: 0,
                checker_claims: 0,
            }],
            templates: Default::default(),
            method: "",
        };
        let estimate = Estimate::new(Vec::new(), vec![stage]);
        let speed = Speed {
            read_per_second: 400.0,
            write_per_second: 50.0,
        };
        // 40,000 / 400 + 3,000 / 50 = 100 + 60 = 160 s.
        let note = note(&speed, &estimate);
        assert!(note.contains("about 3 min"), "{note}");
        assert!(note.contains("20 calls"), "{note}");
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(7_200.0), "2.0 h");
    }
}
