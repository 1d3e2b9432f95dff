//! Batch answers kept in the run directory (`batches/NAME.answers.jsonl`), written in the
//! OpenAI batch output format so that the judge crate's reader reads them back unchanged:
//! an answer as a `200` response with one choice and its usage, a failure as an `error`
//! with its code and message (and the response's status, when it had one).

use std::io::Write;
use std::path::Path;

use rageval_judge::batch::{BatchItem, ItemOutcome, read_output_file};
use serde_json::{Value, json};

use crate::engine::error::{Result, RunError};
use crate::engine::files::write_atomically;

/// Writes `items` to `path` (atomically).
pub fn keep(path: &Path, items: &[BatchItem]) -> Result<()> {
    let mut text = Vec::new();
    for item in items {
        serde_json::to_writer(&mut text, &output_line(item))
            .map_err(RunError::encode("a batch answer"))?;
        text.write_all(b"\n").map_err(RunError::write(path))?;
    }
    write_atomically(path, &text)
}

/// The answers kept at `path`.
pub fn read(path: &Path) -> Result<Vec<BatchItem>> {
    read_output_file(path).map_err(super::batch_error(format!(
        "cannot read the batch answers kept in {}",
        path.display()
    )))
}

/// `item` as a line of an OpenAI batch output file.
fn output_line(item: &BatchItem) -> Value {
    match &item.outcome {
        ItemOutcome::Answered(answer) => json!({
            "custom_id": item.custom_id,
            "response": {
                "status_code": 200,
                "body": {
                    "object": "chat.completion",
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": answer.text},
                        "finish_reason": answer.finish_reason,
                    }],
                    "usage": {
                        "prompt_tokens": answer.usage.prompt_tokens,
                        "completion_tokens": answer.usage.completion_tokens,
                        "total_tokens": answer.usage.total(),
                    },
                },
            },
            "error": null,
        }),
        ItemOutcome::Failed(failure) => json!({
            "custom_id": item.custom_id,
            "response": failure.status.map(|status| json!({"status_code": status, "body": null})),
            "error": {"code": failure.code, "message": failure.message},
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_judge::batch::ItemFailure;
    use rageval_judge::{ChatResponse, Usage};

    #[test]
    fn kept_answers_read_back_as_they_were() {
        let items = vec![
            BatchItem {
                custom_id: "a".into(),
                outcome: ItemOutcome::Answered(ChatResponse {
                    text: "{\"verdict\": 1}\n".into(),
                    usage: Usage {
                        prompt_tokens: 12,
                        completion_tokens: 3,
                        reasoning_tokens: None,
                    },
                    finish_reason: Some("stop".into()),
                    thinking: None,
                    thinking_text: String::new(),
                }),
            },
            BatchItem {
                custom_id: "b".into(),
                outcome: ItemOutcome::Failed(ItemFailure {
                    status: Some(500),
                    code: Some("server_error".into()),
                    message: "boom".into(),
                }),
            },
            BatchItem {
                custom_id: "c".into(),
                outcome: ItemOutcome::Failed(ItemFailure {
                    status: None,
                    code: Some("batch_expired".into()),
                    message: "too late".into(),
                }),
            },
            BatchItem {
                custom_id: "d".into(),
                outcome: ItemOutcome::Failed(ItemFailure {
                    status: Some(400),
                    code: None,
                    message: "bad request".into(),
                }),
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.answers.jsonl");
        keep(&path, &items).unwrap();
        assert_eq!(read(&path).unwrap(), items);
    }
}
