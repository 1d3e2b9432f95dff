//! What the mock server saw: its counters ([`MockStats`], with the injected faults by kind
//! in [`FaultCounts`]) and their JSON form for `GET /stats`. Only counts live here; the
//! server that keeps them is `server.rs`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Injected faults, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// 500s.
    pub fail: u64,
    /// 429s.
    pub rate_limit: u64,
    /// Hangs.
    pub hang: u64,
    /// Garbage answers.
    pub garbage: u64,
    /// 400s for chat-model parameters (`strict-params` reasoning mode).
    pub param_400: u64,
    /// Answers cut off while thinking (`budget` reasoning mode).
    pub truncated: u64,
}

/// What the mock saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MockStats {
    /// API requests received (chat + embeddings), whatever their outcome.
    pub requests: u64,
    /// Chat requests received.
    pub chat_requests: u64,
    /// Embedding requests received.
    pub embedding_requests: u64,
    /// Strings embedded (answered embedding requests).
    pub embedding_inputs: u64,
    /// Prompt tokens (characters / 4) of answered chat requests, synchronous or in a batch.
    pub prompt_tokens: u64,
    /// Completion tokens (characters / 4) of answered chat requests, synchronous or in a
    /// batch, thinking included.
    pub completion_tokens: u64,
    /// The part of `completion_tokens` spent thinking (reasoning modes).
    pub reasoning_tokens: u64,
    /// HTTP status → count of answers sent.
    pub status_counts: BTreeMap<u16, u64>,
    /// Injected faults.
    pub faults: FaultCounts,
    /// Requests whose client hung up before the answer.
    pub client_disconnects: u64,
    /// Requests in flight now.
    pub in_flight: u64,
    /// Peak requests in flight.
    pub max_in_flight: u64,
    /// Files uploaded to `/v1/files`.
    pub files_uploaded: u64,
    /// Batch jobs created (whether their input was valid or not).
    pub batches_created: u64,
    /// Batch request lines answered with a success (in an output file).
    pub batch_requests_answered: u64,
    /// Batch request lines that failed (in an error file), expired and cancelled included.
    pub batch_requests_failed: u64,
}

impl MockStats {
    /// The counters as the JSON object `GET /stats` returns (field names as here).
    pub fn to_json(&self) -> Value {
        let statuses: serde_json::Map<String, Value> = self
            .status_counts
            .iter()
            .map(|(status, count)| (status.to_string(), json!(count)))
            .collect();
        let f = &self.faults;
        json!({
            "requests": self.requests,
            "chat_requests": self.chat_requests,
            "embedding_requests": self.embedding_requests,
            "embedding_inputs": self.embedding_inputs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "status_counts": statuses,
            "faults": {
                "fail": f.fail, "rate_limit": f.rate_limit, "hang": f.hang,
                "garbage": f.garbage, "param_400": f.param_400, "truncated": f.truncated,
            },
            "client_disconnects": self.client_disconnects,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "files_uploaded": self.files_uploaded,
            "batches_created": self.batches_created,
            "batch_requests_answered": self.batch_requests_answered,
            "batch_requests_failed": self.batch_requests_failed,
        })
    }
}
