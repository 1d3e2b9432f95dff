//! [`GgufChat`]: the llama.cpp engine behind the `gguf` feature.
//!
//! The model is loaded once, on a dedicated thread that owns it and decodes one request at
//! a time; requests queue on a channel, so decoding never blocks the async runtime. The
//! prompt is the model's own chat template applied to the messages. When a request carries
//! a `response_schema`, a grammar derived from the JSON schema (llama.cpp's
//! `json_schema_to_grammar`) constrains every sampled token, so the answer is JSON that
//! matches the schema — complete unless `max_tokens` cuts it (`finish_reason` `length`).
//! Temperature 0 decodes greedily: the same request gives the same answer.
//!
//! This module makes exactly one attempt per call and never prints: llama.cpp's own logging
//! is silenced. Schema keywords the grammar converter does not understand are ignored by
//! it; the judge's validator still checks the answer.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use tokio::sync::oneshot;

use super::{DEFAULT_GGUF_MAX_TOKENS, GgufOptions, KIND};
use crate::chat::{ChatModel, ChatRequest, ChatResponse, Role, Usage};
use crate::error::JudgeError;

/// A local GGUF chat model. Cheap to share behind an `Arc`; dropping it stops its thread
/// once queued requests are done.
#[derive(Debug)]
pub struct GgufChat {
    name: String,
    path: PathBuf,
    jobs: mpsc::Sender<Job>,
}

#[derive(Debug)]
struct Job {
    request: ChatRequest,
    reply: oneshot::Sender<Result<ChatResponse, JudgeError>>,
}

impl GgufChat {
    /// Loads the GGUF file at `path` on a new decoding thread, blocking until it is ready
    /// (about a second for a 100 MB model; call it from `spawn_blocking` inside a runtime).
    /// A missing, unreadable or corrupt file fails with an error naming the path.
    pub fn open(path: impl AsRef<Path>, options: GgufOptions) -> Result<Self, JudgeError> {
        let path = path.as_ref().to_path_buf();
        check_gguf_header(&path)?;
        let name = model_name(&path);
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread_path = path.clone();
        std::thread::Builder::new()
            .name(format!("gguf {name}"))
            .spawn(move || serve(&thread_path, &options, &ready_tx, &queue))
            .map_err(|e| local_error(&path, format!("cannot start the decoding thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(GgufChat { name, path, jobs }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(local_error(&path, "the loading thread stopped".into())),
        }
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ChatModel for GgufChat {
    fn kind(&self) -> &str {
        KIND
    }
    fn model(&self) -> &str {
        &self.name
    }
    fn endpoint(&self) -> String {
        self.path.display().to_string()
    }
    fn supports_response_schema(&self) -> bool {
        true
    }
    /// Every request gets a fresh sampler: greedy, or seeded with the request's seed (0
    /// when none), over a cleared cache.
    fn answers_repeat(&self) -> bool {
        true
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        let stopped = || local_error(&self.path, "the decoding thread stopped".into());
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                request: request.clone(),
                reply,
            })
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// Why the decoding thread gave no answer to one request.
enum Failure {
    /// The prompt leaves too little room for the answer in the window.
    PromptTooLong {
        prompt: usize,
        answer: usize,
        window: usize,
    },
    /// Anything else llama.cpp or the grammar reported.
    Reason(String),
}

impl From<String> for Failure {
    fn from(reason: String) -> Self {
        Failure::Reason(reason)
    }
}

impl Failure {
    fn into_error(self, path: &Path) -> JudgeError {
        let tokens = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        match self {
            Failure::PromptTooLong {
                prompt,
                answer,
                window,
            } => JudgeError::PromptTooLong {
                model: path.display().to_string(),
                prompt_tokens: tokens(prompt),
                answer_tokens: tokens(answer),
                window: tokens(window),
            },
            Failure::Reason(reason) => local_error(path, reason),
        }
    }
}

fn local_error(path: &Path, reason: String) -> JudgeError {
    JudgeError::LocalModel {
        path: path.display().to_string(),
        reason,
    }
}

/// The model name a GGUF file is known by (in cache keys and manifests): its file stem.
pub(crate) fn model_name(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "gguf".to_owned(), |s| s.to_string_lossy().into_owned())
}

/// Fails early, with a plain message, on a file that is missing or is no GGUF model (llama.cpp
/// itself would only say that loading failed).
pub(crate) fn check_gguf_header(path: &Path) -> Result<(), JudgeError> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .map_err(|e| local_error(path, format!("cannot read the model file: {e}")))?;
    if &magic != b"GGUF" {
        return Err(local_error(
            path,
            "not a GGUF file (it does not start with the GGUF magic bytes)".into(),
        ));
    }
    Ok(())
}

/// llama.cpp's process-wide backend, initialised once with its logging silenced.
fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
            backend.void_logs();
            Ok(backend)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The decoding thread: loads the model, reports readiness, then answers jobs in order
/// until every [`GgufChat`] handle is gone.
fn serve(
    path: &Path,
    options: &GgufOptions,
    ready: &mpsc::SyncSender<Result<(), JudgeError>>,
    queue: &mpsc::Receiver<Job>,
) {
    let loaded = (|| {
        let backend = backend().map_err(|e| format!("cannot start llama.cpp: {e}"))?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| format!("llama.cpp cannot load it ({e}); is the file complete?"))?;
        let window = options.context_tokens.min(model.n_ctx_train()).max(16);
        let threads = i32::try_from(options.threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(window))
            .with_n_batch(window.min(512))
            .with_n_ubatch(window.min(512))
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        Ok::<_, String>((backend, model, params))
    })();
    let (backend, model, params) = match loaded {
        Ok(parts) => parts,
        Err(reason) => {
            let _ = ready.send(Err(local_error(path, reason)));
            return;
        }
    };
    let mut context = match model.new_context(backend, params) {
        Ok(context) => context,
        Err(e) => {
            let reason = format!("cannot create a llama.cpp context: {e}");
            let _ = ready.send(Err(local_error(path, reason)));
            return;
        }
    };
    // GGUF files without a template get ChatML, the most common instruct format.
    let template = model
        .chat_template(None)
        .or_else(|_| LlamaChatTemplate::new("chatml"));
    let template = match template {
        Ok(template) => template,
        Err(e) => {
            let _ = ready.send(Err(local_error(path, format!("no chat template: {e}"))));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut decoder = Decoder {
        model: &model,
        template,
        grammars: HashMap::new(),
    };
    while let Ok(job) = queue.recv() {
        if job.reply.is_closed() {
            continue;
        }
        let answer = std::panic::catch_unwind(AssertUnwindSafe(|| {
            decoder.answer(&mut context, &job.request, &job.reply)
        }));
        let answer = match answer {
            Ok(Some(answer)) => answer.map_err(|failure| failure.into_error(path)),
            Ok(None) => continue,
            Err(_) => Err(local_error(
                path,
                "llama.cpp panicked on this request".into(),
            )),
        };
        let _ = job.reply.send(answer);
    }
}

/// Tokens looked back on by the repetition penalty.
const REPEAT_PENALTY_LAST_N: i32 = 64;
/// Divisor of a recently seen token's logit (llama.cpp's long-standing default).
const REPEAT_PENALTY: f32 = 1.1;

/// How many tokens pass between checks that the caller still waits for the answer.
const CANCEL_CHECK_EVERY: usize = 16;

struct Decoder<'m> {
    model: &'m LlamaModel,
    template: LlamaChatTemplate,
    /// Grammar text per schema text: converting is cheap, but a judge asks the same schema
    /// hundreds of times.
    grammars: HashMap<String, String>,
}

impl Decoder<'_> {
    /// One request, start to finish; `None` when the caller gave up before the answer.
    fn answer(
        &mut self,
        context: &mut LlamaContext<'_>,
        request: &ChatRequest,
        reply: &oneshot::Sender<Result<ChatResponse, JudgeError>>,
    ) -> Option<Result<ChatResponse, Failure>> {
        let prompt = match self.prompt_tokens(request) {
            Ok(prompt) => prompt,
            Err(reason) => return Some(Err(reason.into())),
        };
        let window = context.n_ctx() as usize;
        // A small model can loop inside a string the grammar leaves open; without a caller's
        // bound, answers stop at DEFAULT_GGUF_MAX_TOKENS (a cut answer is re-asked, then
        // fails with its reason) rather than filling the whole window.
        let limit = request
            .sampling
            .max_tokens
            .map_or(DEFAULT_GGUF_MAX_TOKENS, |m| m as usize);
        // A prompt that leaves less than this for the answer is refused before decoding: the
        // answer would be cut off, and the caller can ask again with less material.
        let answer_room = limit.min(window / 2).max(1);
        if prompt.len() + answer_room > window {
            return Some(Err(Failure::PromptTooLong {
                prompt: prompt.len(),
                answer: answer_room,
                window,
            }));
        }
        let limit = limit.min(window - prompt.len());
        let mut sampling = match self.samplers(request) {
            Ok(sampling) => sampling,
            Err(reason) => return Some(Err(reason.into())),
        };
        context.clear_kv_cache();
        let mut batch = LlamaBatch::new(context.n_batch() as usize, 1);
        if let Err(reason) = feed(context, &mut batch, &prompt, 0) {
            return Some(Err(reason.into()));
        }
        let vocab = self.model.vocab();
        let mut generated: Vec<LlamaToken> = Vec::new();
        let mut finish = "length";
        while generated.len() < limit {
            if generated.len() % CANCEL_CHECK_EVERY == 0 && reply.is_closed() {
                return None;
            }
            let token = match sampling.next(context, batch.n_tokens() - 1) {
                Ok(token) => token,
                Err(reason) => return Some(Err(reason.into())),
            };
            if vocab.is_eog(token) {
                finish = "stop";
                break;
            }
            generated.push(token);
            if generated.len() == limit {
                break;
            }
            let position = prompt.len() + generated.len() - 1;
            if let Err(reason) = feed(context, &mut batch, &[token], position) {
                return Some(Err(reason.into()));
            }
        }
        let bytes = vocab.detokenize(&generated, false, false);
        Some(Ok(ChatResponse {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            usage: Usage {
                prompt_tokens: prompt.len() as u64,
                completion_tokens: generated.len() as u64,
                reasoning_tokens: None,
            },
            finish_reason: Some(finish.to_owned()),
            thinking: None,
            thinking_text: String::new(),
        }))
    }

    /// The conversation through the chat template, tokenized.
    fn prompt_tokens(&self, request: &ChatRequest) -> Result<Vec<LlamaToken>, String> {
        let messages = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                LlamaChatMessage::new(role.to_owned(), m.content.clone())
                    .map_err(|e| format!("a {role} message cannot be passed to llama.cpp: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let text = self
            .model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(|e| format!("cannot apply the chat template: {e}"))?;
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(text.as_bytes(), true, true);
        // Templates that write the BOS text themselves would otherwise get it twice.
        let bos = vocab.bos();
        if tokens.len() > 1 && tokens[0] == bos && tokens[1] == bos {
            tokens.remove(0);
        }
        Ok(tokens)
    }

    fn samplers(&mut self, request: &ChatRequest) -> Result<Sampling, String> {
        let sampling = &request.sampling;
        // Greedy decoding of a small model falls into loops ("2022 年，2022 年，…") that fill
        // the answer budget; a mild penalty on the last tokens breaks them. The grammar still
        // decides what may follow, so JSON punctuation is never penalised out.
        let penalties = LlamaSampler::penalties(
            self.model.n_vocab(),
            REPEAT_PENALTY_LAST_N,
            REPEAT_PENALTY,
            0.0,
            0.0,
        );
        // No temperature asked (a setting for servers that refuse one) decodes greedily too:
        // repeatable verdicts are the judge's default.
        let temperature = sampling.temperature.unwrap_or(0.0);
        let picker = if temperature <= 0.0 {
            LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
        } else {
            let mut chain = vec![penalties];
            if let Some(p) = sampling.top_p {
                chain.push(LlamaSampler::top_p(p, 1));
            }
            chain.push(LlamaSampler::temp(temperature));
            // The seed keeps sampled answers repeatable too; u32 is llama.cpp's seed width.
            chain.push(LlamaSampler::dist(sampling.seed.unwrap_or(0) as u32));
            LlamaSampler::chain_simple(chain)
        };
        let grammar = match &request.response_schema {
            None => None,
            Some(schema) => {
                let schema_text = bounded(&schema.schema).to_string();
                let grammar_text = match self.grammars.get(&schema_text) {
                    Some(grammar) => grammar.clone(),
                    None => {
                        let grammar =
                            llama_cpp_2::json_schema_to_grammar(&schema_text).map_err(|e| {
                                format!("cannot turn the JSON schema into a grammar: {e}")
                            })?;
                        self.grammars.insert(schema_text, grammar.clone());
                        grammar
                    }
                };
                let sampler = LlamaSampler::grammar(self.model, &grammar_text, "root")
                    .map_err(|e| format!("llama.cpp rejects the schema's grammar: {e}"))?;
                Some(sampler)
            }
        };
        Ok(Sampling { picker, grammar })
    }
}

/// Decodes `tokens` at positions from `start`, in chunks of the batch size, asking for the
/// logits of the last one.
fn feed(
    context: &mut LlamaContext<'_>,
    batch: &mut LlamaBatch<'_>,
    tokens: &[LlamaToken],
    start: usize,
) -> Result<(), String> {
    let size = context.n_batch() as usize;
    for (chunk_index, chunk) in tokens.chunks(size).enumerate() {
        batch.clear();
        for (offset, &token) in chunk.iter().enumerate() {
            let index = chunk_index * size + offset;
            let position = i32::try_from(start + index).map_err(|e| e.to_string())?;
            batch
                .add(token, position, &[0], index + 1 == tokens.len())
                .map_err(|e| format!("cannot batch the prompt: {e}"))?;
        }
        context
            .decode(batch)
            .map_err(|e| format!("llama.cpp failed to decode: {e}"))?;
    }
    Ok(())
}

/// The samplers of one request: `picker` chooses among candidates (greedy, or temperature
/// sampling), `grammar` (when a schema was asked for) rules candidates out.
struct Sampling {
    picker: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl Sampling {
    /// The next token. The picker's choice is checked against the grammar first and the
    /// grammar is applied to the whole vocabulary only when it rejects that choice — most
    /// tokens of a JSON answer are allowed, and masking 50k candidates per token is the
    /// slow part of constrained decoding.
    fn next(&mut self, context: &LlamaContext<'_>, index: i32) -> Result<LlamaToken, String> {
        let choice = pick(&mut self.picker, context.token_data_array_ith(index))?;
        let Some(grammar) = self.grammar.as_mut() else {
            self.picker.accept(choice);
            return Ok(choice);
        };
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(choice, 0.0, 0.0)], false);
        single.apply_sampler(grammar);
        let token = if single.data.first().is_some_and(|d| d.logit().is_finite()) {
            choice
        } else {
            let mut all = context.token_data_array_ith(index);
            all.apply_sampler(grammar);
            if !all.data.iter().any(|d| d.logit().is_finite()) {
                return Err("the grammar allows no next token".into());
            }
            pick(&mut self.picker, all)?
        };
        grammar
            .try_accept(token)
            .map_err(|e| format!("the grammar rejected a token it allowed: {e}"))?;
        self.picker.accept(token);
        Ok(token)
    }
}

fn pick(
    picker: &mut LlamaSampler,
    mut candidates: LlamaTokenDataArray,
) -> Result<LlamaToken, String> {
    candidates.apply_sampler(picker);
    candidates
        .selected_token()
        .ok_or_else(|| "the sampler selected no token".to_owned())
}

/// Characters a string may hold in a local model's answer when its schema sets no bound.
const STRING_BOUND: u64 = 400;
/// Items a list may hold in a local model's answer when its schema sets no bound.
const LIST_BOUND: u64 = 24;

/// `schema` with every open string and list bounded, for the grammar only (answers are still
/// validated against the caller's schema): a small model can otherwise stay inside a string
/// or keep adding items until the token limit cuts the JSON off.
fn bounded(schema: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> = map
                .iter()
                .map(|(key, value)| (key.clone(), bounded(value)))
                .collect();
            let is = |kind: &str| {
                map.get("type").is_some_and(|t| {
                    t == kind
                        || t.as_array()
                            .is_some_and(|all| all.iter().any(|t| t == kind))
                })
            };
            if is("string") && !map.contains_key("maxLength") && !map.contains_key("enum") {
                out.insert("maxLength".into(), STRING_BOUND.into());
            }
            if is("array") && !map.contains_key("maxItems") {
                out.insert("maxItems".into(), LIST_BOUND.into());
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(bounded).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_strings_and_lists_are_bounded_for_the_grammar_only_where_unbounded() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "minLength": 1},
                "label": {"type": "string", "enum": ["a", "b"]},
                "short": {"type": "string", "maxLength": 5},
                "items": {"type": "array", "items": {"type": "string"}}
            }
        });
        let out = bounded(&schema);
        assert_eq!(out["properties"]["reason"]["maxLength"], STRING_BOUND);
        assert!(out["properties"]["label"].get("maxLength").is_none());
        assert_eq!(out["properties"]["short"]["maxLength"], 5);
        assert_eq!(out["properties"]["items"]["maxItems"], LIST_BOUND);
        assert_eq!(
            out["properties"]["items"]["items"]["maxLength"],
            STRING_BOUND
        );
    }
}
