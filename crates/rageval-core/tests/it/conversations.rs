//! Whole conversations on one line (ragas multi-turn, OpenAI messages, DeepEval turns) read
//! into one sample per assistant turn, with history, conversation id, turn and tool calls.

use std::path::{Path, PathBuf};

use rageval_core::dataset::{ReadOptions, read_all};
use rageval_core::{Role, Sample};

fn read(name: &str) -> Vec<Sample> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/datasets/good")
        .join(name);
    read_all(&path, &ReadOptions::default()).expect("good fixture reads")
}

/// (role, turn, content) of each history message.
fn history(sample: &Sample) -> Vec<(Role, usize, &str)> {
    sample
        .history
        .iter()
        .map(|t| (t.role, t.turn, t.content.as_str()))
        .collect()
}

#[test]
fn a_ragas_multi_turn_sample_is_read_as_is_one_row_per_answered_turn() {
    let samples = read("ragas_multi_turn.jsonl");
    let ids: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    // The second conversation has no id (line 2) and its last question no answer.
    assert_eq!(ids, ["weather:1", "weather:2", "2:1"]);

    let first = &samples[0];
    assert_eq!(first.conversation_id.as_deref(), Some("weather"));
    assert_eq!(first.turn, Some(1));
    assert_eq!(first.question, "What's the weather in New York?");
    assert_eq!(
        first.answer.as_deref(),
        Some("It is 75°F and partly cloudy in New York.")
    );
    assert_eq!(first.contexts[0].text, "It is 75°F and partly cloudy.");
    assert!(first.history.is_empty());
    assert_eq!(first.tool_calls.len(), 1);
    assert!(first.references.is_empty() && first.reference_tool_calls.is_empty());
    assert_eq!(first.metadata["topic"], "weather");

    let second = &samples[1];
    assert_eq!(second.turn, Some(2));
    assert_eq!(
        history(second),
        [
            (Role::User, 1, "What's the weather in New York?"),
            (
                Role::Assistant,
                1,
                "It is 75°F and partly cloudy in New York."
            ),
        ]
    );
    assert_eq!(
        second.history[1].contexts[0].text,
        "It is 75°F and partly cloudy."
    );
    // The conversation's reference and expected calls go to its last turn, checked against
    // every call the conversation made.
    assert_eq!(second.references, ["About 23.9°C."]);
    let names = |calls: &[rageval_core::ToolCall]| -> Vec<String> {
        calls.iter().map(|c| c.name.clone()).collect()
    };
    assert_eq!(
        names(&second.reference_tool_calls),
        ["weather_check", "temperature_conversion"]
    );
    assert_eq!(
        names(&second.tool_calls),
        ["weather_check", "temperature_conversion"]
    );
    assert_eq!(second.tool_calls[1].arguments["temperature_fahrenheit"], 75);
}

#[test]
fn openai_messages_keep_the_greeting_and_read_tool_results_as_contexts() {
    let samples = read("openai_messages.jsonl");
    let ids: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["7:1", "7:2"]);
    let first = &samples[0];
    assert_eq!(first.question, "How many vacation days do I get?");
    assert_eq!(
        first.answer.as_deref(),
        Some("You get 25 vacation days a year.")
    );
    assert_eq!(first.tool_calls[0].name, "search_handbook");
    assert_eq!(first.tool_calls[0].arguments["query"], "vacation days");
    assert_eq!(
        first.contexts[0].text,
        "Employees get 25 vacation days a year."
    );
    // The greeting before the first question is history; the system prompt is not.
    assert_eq!(
        history(first),
        [(Role::Assistant, 1, "Hello, ask me anything.")]
    );
    let second = &samples[1];
    assert_eq!(second.contexts[0].id.as_deref(), Some("h-12"));
    assert_eq!(history(second).len(), 3);
    assert_eq!(second.conversation_id.as_deref(), Some("7"));
}

#[test]
fn a_deepeval_conversational_test_case_reads_its_turns_contexts_and_tools() {
    let samples = read("deepeval_turns.json");
    assert_eq!(samples.len(), 2);
    assert_eq!(
        samples[0].id, "2:1",
        "no id: the record's line names the conversation"
    );
    assert_eq!(
        samples[0].contexts[0].text,
        "Returns are accepted within 30 days of purchase."
    );
    assert_eq!(samples[0].tool_calls[0].name, "policy_lookup");
    assert_eq!(samples[0].tool_calls[0].arguments["topic"], "returns");
    assert_eq!(samples[1].question, "Do I pay for shipping?");
    assert_eq!(samples[1].history[1].contexts.len(), 1);
    assert_eq!(
        samples[1].metadata["scenario"],
        "A customer asks about refunds."
    );
}
