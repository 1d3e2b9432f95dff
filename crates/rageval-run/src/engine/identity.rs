//! What makes two sessions the same run: a run directory is resumed only by a command with
//! the same [`RunIdentity`] — the same data, metrics (or stages) and settings that change
//! results, and the same judge: kind, model, GGUF file (by its SHA-256) and the prompt-pack
//! and heuristic versions of every task the run asks. Verdicts of two judges are never mixed
//! in one run. The endpoints are recorded too; the same model at another endpoint (a
//! restarted server, another replica) resumes with a note, never silently.
//!
//! The identity is stored in the manifest (`settings.identity`) and read back into these
//! types; runs written before it existed are compared on what their manifest has.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use rageval_judge::{RequestSettings, Temperature};
use rageval_report::sha256_file;
use rageval_tasks::{Answerer, TaskKind};
use serde::{Deserialize, Serialize};

use crate::engine::error::Result;
use crate::engine::judges::JudgeSetup;

/// Who judged a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeIdentity {
    /// `endpoint`, `cascade`, `local`, `offline`, `heuristic` or `checker`.
    pub kind: String,
    /// The chat model's name (an endpoint's model, or the GGUF file's name).
    pub model: Option<String>,
    /// The embedding model's name.
    pub embedding_model: Option<String>,
    /// The endpoints, redacted and sorted (empty for local judges).
    pub endpoints: Vec<String>,
    /// SHA-256 of the GGUF file that answers or writes, when one does.
    pub gguf_sha256: Option<String>,
    /// Per task: who answers it, with its prompt templates' versions or the heuristic's
    /// version (only the tasks the run asks; filled by [`JudgeIdentity::for_tasks`]).
    pub routes: BTreeMap<String, String>,
    /// What the chat judge's requests ask that changes its verdicts (temperature, token
    /// cap, reasoning effort, thinking), where set; how an endpoint wants them spelled
    /// (`max_completion_tokens`, a temperature left out) is not identity.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub request: BTreeMap<String, String>,
    /// Whether the run's metrics embed text: when none does, the embedding model is no part
    /// of who judged it ([`JudgeIdentity::without_embedder`]), so a session without the
    /// embedded models resumes it. Identities stored before this was kept read as `true`.
    #[serde(default = "embeds_by_default", skip_serializing_if = "embeds")]
    pub embeds: bool,
}

fn embeds_by_default() -> bool {
    true
}

fn embeds(embeds: &bool) -> bool {
    *embeds
}

/// The request settings that are part of a run's identity, by name. Destructured whole, so
/// a setting added to [`RequestSettings`] does not compile until it is classified here.
fn request_identity(settings: &RequestSettings) -> BTreeMap<String, String> {
    let RequestSettings {
        temperature,
        max_tokens,
        reasoning_effort,
        thinking,
    } = settings;
    let mut identity = BTreeMap::new();
    if *temperature != Temperature::Task {
        identity.insert("temperature".to_owned(), temperature.to_string());
    }
    if let Some(cap) = max_tokens {
        identity.insert("max_tokens".to_owned(), cap.to_string());
    }
    if let Some(effort) = reasoning_effort {
        identity.insert("reasoning_effort".to_owned(), effort.clone());
    }
    if let Some(on) = thinking {
        identity.insert(
            "thinking".to_owned(),
            if *on { "on" } else { "off" }.to_owned(),
        );
    }
    identity
}

impl JudgeIdentity {
    /// The identity of `setup`'s judges, over every task they route.
    pub fn of(setup: &JudgeSetup) -> Result<Self> {
        let gguf_sha256 = match &setup.gguf {
            Some(path) => Some(sha256_file(path)?),
            None => None,
        };
        let mut endpoints = setup.endpoints.clone();
        endpoints.sort();
        let mut routes: BTreeMap<String, String> = setup
            .routes()
            .into_iter()
            .map(|(task, answerer)| (task.to_string(), describe(answerer.as_ref())))
            .collect();
        // Another band settles other statements by the checker: another judge.
        if let Some(band) = setup.escalation() {
            if let Some(route) = routes.get_mut(&TaskKind::SupportVerdicts.to_string()) {
                route.push_str(&format!(
                    ", escalating P(supported) in {band} to the chat model"
                ));
            }
        }
        let model = setup.model_name().map(str::to_owned).or_else(|| {
            setup
                .models()
                .into_iter()
                .find(|m| m.role == "chat")
                .map(|m| m.model)
        });
        Ok(JudgeIdentity {
            kind: setup.kind().to_owned(),
            model,
            embedding_model: setup
                .embedding_model()
                .map(str::to_owned)
                .or_else(|| chinese_embedding(&setup.models())),
            endpoints,
            gguf_sha256,
            routes,
            request: setup
                .chat
                .as_ref()
                .map(|judge| request_identity(judge.request_settings()))
                .unwrap_or_default(),
            embeds: true,
        })
    }

    /// The same identity with only the routes of `tasks`.
    pub fn for_tasks(mut self, tasks: &[TaskKind]) -> Self {
        let wanted: Vec<String> = tasks.iter().map(ToString::to_string).collect();
        self.routes.retain(|task, _| wanted.contains(task));
        self
    }

    /// The same identity for a run whose metrics embed nothing: no embedding model.
    pub fn without_embedder(mut self) -> Self {
        self.embedding_model = None;
        self.embeds = false;
        self
    }
}

/// One route as text: `llm openai gpt-4o-mini [support_verdicts@3, …]`, `heuristic v2 …`.
fn describe(answerer: Option<&Answerer>) -> String {
    match answerer {
        None => "unanswered".into(),
        Some(Answerer::Llm {
            backend,
            model,
            templates,
        }) => {
            let templates: Vec<String> = templates.iter().map(ToString::to_string).collect();
            format!("llm {backend} {model} [{}]", templates.join(", "))
        }
        Some(Answerer::Heuristic(info)) => format!(
            "heuristic {}",
            serde_json::to_string(info).unwrap_or_default()
        ),
        // The full SHA-256 of the weights: another model file is another judge.
        Some(Answerer::Checker(info)) => format!(
            "checker {} {} {} sha256 {}",
            info.family, info.head, info.model, info.sha256
        ),
    }
}

/// What a run is: resumed only by a session with an equal identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// The command (`eval`, `judge-check`, `rank`, `reference`).
    pub command: String,
    /// SHA-256 of the data the run reads (for judge-check: its samples).
    pub dataset_sha256: String,
    /// The metrics, in order (empty for commands without metrics).
    pub metrics: Vec<String>,
    /// Who judges.
    pub judge: JudgeIdentity,
    /// SHA-256 of the labels file, for judge-check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_sha256: Option<String>,
    /// The labels file as it was named, for messages only (not compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_file: Option<String>,
    /// Other settings that change results (algorithm, seed, top-k, window), as text; numbers
    /// as their digits.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

/// The setting under which `eval` keeps its `--top-k`.
pub const TOP_K_SETTING: &str = "top_k";

/// `--top-k` as an identity keeps it: the number, or `all` when every context is scored.
pub fn top_k_setting(top_k: Option<NonZeroUsize>) -> String {
    top_k.map_or_else(|| "all".to_owned(), |k| k.to_string())
}

impl RunIdentity {
    /// This identity as the current version writes it, from one an earlier version stored:
    /// before `--top-k` was a number, `eval` kept it as Rust's debug text (`Some(5)`,
    /// `None`), which names the same setting as `5` and `all`. Anything else is left as it
    /// is, so a setting that really differs is still told apart.
    pub fn upgraded(mut self) -> Self {
        if self.command == "eval" {
            if let Some(value) = self.settings.get_mut(TOP_K_SETTING) {
                let debug_some = value
                    .strip_prefix("Some(")
                    .and_then(|rest| rest.strip_suffix(')'))
                    .and_then(|k| k.parse::<NonZeroUsize>().ok());
                if let Some(k) = debug_some {
                    *value = top_k_setting(Some(k));
                } else if value == "None" {
                    *value = top_k_setting(None);
                }
            }
        }
        self
    }

    /// When the same judge now answers at other endpoints (a restarted server, another
    /// replica of the same model): what to tell the person, since the run resumes.
    pub fn endpoint_change(&self, now: &RunIdentity) -> Option<String> {
        (self.judge.endpoints != now.judge.endpoints).then(|| {
            format!(
                "the same judge model now answers at {} (the run was judged at {}); its \
                 verdicts are the model's, so the run resumes, and each session's endpoints \
                 are kept in the manifest",
                list(&now.judge.endpoints),
                list(&self.judge.endpoints)
            )
        })
    }

    /// Why a session with identity `now` may not resume the run of `self`, in words; empty
    /// when it may.
    pub fn differences(&self, now: &RunIdentity) -> Vec<String> {
        let mut why = Vec::new();
        if self.command != now.command {
            why.push(format!("it holds a `{}` run", self.command));
            return why;
        }
        if self.labels_sha256 != now.labels_sha256 {
            // Other labels make other samples: say it once, by the labels.
            let named = |file: &Option<String>, sha: &Option<String>| {
                format!(
                    "{} (SHA-256 {}…)",
                    file.as_deref().unwrap_or("?"),
                    short(sha.as_deref().unwrap_or("-"))
                )
            };
            why.push(format!(
                "it checked the labels {}, now the labels are {}",
                named(&self.labels_file, &self.labels_sha256),
                named(&now.labels_file, &now.labels_sha256)
            ));
        } else if self.dataset_sha256 != now.dataset_sha256 {
            why.push(format!(
                "it was run over other data (SHA-256 {}…, now {}…)",
                short(&self.dataset_sha256),
                short(&now.dataset_sha256)
            ));
        }
        if self.metrics != now.metrics {
            why.push(format!(
                "it was run with the metrics {}, now {} are asked for",
                self.metrics.join(","),
                now.metrics.join(",")
            ));
        }
        for (name, before) in &self.settings {
            let after = now.settings.get(name).map_or("-", String::as_str);
            if before != after {
                why.push(format!("its {name} was {before}, now {after}"));
            }
        }
        why.extend(judge_differences(&self.judge, &now.judge));
        why
    }
}

fn judge_differences(before: &JudgeIdentity, now: &JudgeIdentity) -> Vec<String> {
    let mut why = Vec::new();
    let show = |value: &Option<String>| value.clone().unwrap_or_else(|| "none".into());
    if before.kind != now.kind || before.model != now.model {
        why.push(format!(
            "it was judged by the {} judge {}, now by the {} judge {}",
            before.kind,
            show(&before.model),
            now.kind,
            show(&now.model)
        ));
    }
    // Metrics that embed nothing (the same metrics, or another difference says so) make
    // the embedding model nobody's business: the earlier one, recorded or not, is ignored.
    if now.embeds && before.embedding_model != now.embedding_model {
        why.push(format!(
            "its embedding model was {}, now {}",
            show(&before.embedding_model),
            show(&now.embedding_model)
        ));
    }
    if before.gguf_sha256 != now.gguf_sha256 {
        why.push(format!(
            "its GGUF model file had SHA-256 {}…, now {}…",
            short(before.gguf_sha256.as_deref().unwrap_or("-")),
            short(now.gguf_sha256.as_deref().unwrap_or("-"))
        ));
    }
    if before.request != now.request {
        let show = |request: &BTreeMap<String, String>| {
            if request.is_empty() {
                "the defaults".to_owned()
            } else {
                let pairs: Vec<String> = request.iter().map(|(k, v)| format!("{k} {v}")).collect();
                pairs.join(", ")
            }
        };
        why.push(format!(
            "its judge requests asked {}, now {}",
            show(&before.request),
            show(&now.request)
        ));
    }
    for (task, route) in &before.routes {
        match now.routes.get(task) {
            Some(now_route) if now_route == route => {}
            now_route => why.push(format!(
                "task {task} was answered by {route}, now by {}",
                now_route.map_or("nothing", String::as_str)
            )),
        }
    }
    why
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "no endpoint".into()
    } else {
        items.join(", ")
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// An offline run whose Chinese text is embedded by multilingual-e5-small names both
/// embedders, so resuming it without e5 (or a run made before e5) is another judge. Without
/// e5 the field stays empty, as offline runs have always recorded it.
fn chinese_embedding(models: &[rageval_report::JudgeModel]) -> Option<String> {
    let named = |role: &str| {
        models
            .iter()
            .find(|m| m.role == role)
            .map(|m| m.model.clone())
    };
    let chinese = named("embedding:zh")?;
    let other = named("embedding").unwrap_or_else(|| "-".to_owned());
    Some(format!("{other}; {chinese} for Chinese text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> RunIdentity {
        RunIdentity {
            command: "eval".into(),
            dataset_sha256: "a".repeat(64),
            metrics: vec!["faithfulness".into()],
            judge: JudgeIdentity {
                kind: "local".into(),
                model: Some("small.gguf".into()),
                embedding_model: None,
                endpoints: Vec::new(),
                gguf_sha256: Some("1".repeat(64)),
                routes: BTreeMap::from([(
                    "support_verdicts".into(),
                    "llm gguf small.gguf [support@3]".into(),
                )]),
                request: BTreeMap::new(),
                embeds: true,
            },
            labels_sha256: None,
            labels_file: None,
            settings: BTreeMap::new(),
        }
    }

    /// Regression (issue 40, item 14): a run of metrics that embed nothing depends on no
    /// embedding model; one whose metrics embed still does. An identity stored before
    /// `embeds` was kept reads as embedding.
    #[test]
    fn regression_issue_40_an_embedding_model_matters_only_to_metrics_that_embed() {
        let mut with_models = identity();
        with_models.judge.embedding_model = Some("all-MiniLM-L6-v2".into());
        let mut without = identity();
        without.judge = without.judge.clone().without_embedder();
        assert!(with_models.differences(&without).is_empty());
        let mut embeds_none = identity();
        embeds_none.judge.embedding_model = None;
        assert_eq!(
            with_models.differences(&embeds_none),
            ["its embedding model was all-MiniLM-L6-v2, now none"]
        );
        let stored = serde_json::to_value(&with_models).unwrap();
        assert!(stored["judge"].get("embeds").is_none());
        let read: RunIdentity = serde_json::from_value(stored).unwrap();
        assert!(read.judge.embeds);
        let written = serde_json::to_value(&without).unwrap();
        assert_eq!(written["judge"]["embeds"], false);
    }

    /// Regression: two different `--judge gguf:` files of the same name shared one run.
    #[test]
    fn an_eval_identity_with_a_debug_top_k_reads_as_the_number_it_meant() {
        let written = |top_k: &str| {
            let mut written = identity();
            written.settings.insert(TOP_K_SETTING.into(), top_k.into());
            written
        };
        let five = NonZeroUsize::new(5);
        assert_eq!(written("Some(5)").upgraded(), written(&top_k_setting(five)));
        assert_eq!(written("None").upgraded(), written("all"));
        assert!(
            written("Some(5)").upgraded().differences(&written("3"))[0]
                .contains("its top_k was 5, now 3")
        );
        // What never was debug text stays as it is, so it still differs where it differs.
        for kept in ["5", "all", "Some(0)", "Some(x)"] {
            assert_eq!(written(kept).upgraded(), written(kept));
        }
        // Another command's `top_k` (rank's cut-off) was always a number.
        let mut rank = written("Some(5)");
        rank.command = "rank".into();
        assert_eq!(rank.clone().upgraded(), rank);
    }

    #[test]
    fn another_gguf_file_of_the_same_name_is_another_judge() {
        let before = identity();
        let mut now = identity();
        assert!(before.differences(&now).is_empty());
        now.judge.gguf_sha256 = Some("2".repeat(64));
        let why = before.differences(&now);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("GGUF model file"), "{why:?}");
    }

    #[test]
    fn prompt_versions_endpoints_and_settings_are_part_of_the_identity() {
        let before = identity();
        let mut now = identity();
        now.judge.routes.insert(
            "support_verdicts".into(),
            "llm gguf small.gguf [support@4]".into(),
        );
        now.judge.endpoints = vec!["http://127.0.0.1:9/v1".into()];
        let mut settings_before = before.clone();
        settings_before.settings.insert("seed".into(), "1".into());
        now.settings.insert("seed".into(), "2".into());
        let why = settings_before.differences(&now);
        assert_eq!(why.len(), 2, "{why:?}");
        // Another endpoint of the same model resumes, with a note.
        let note = before.endpoint_change(&now).unwrap();
        assert!(
            note.contains("now answers at http://127.0.0.1:9/v1"),
            "{note}"
        );
        assert!(why.iter().any(|w| w.contains("support@4")));
        assert!(why.iter().any(|w| w.contains("its seed was 1, now 2")));
    }
}
