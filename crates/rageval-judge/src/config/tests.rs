use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn resolve(
    flags: &JudgeFlags,
    toml: &str,
    pairs: &[(&str, &str)],
) -> Result<JudgeSettings, JudgeError> {
    JudgeSettings::resolve_with(
        flags,
        Some((Path::new("/etc/rageval/rageval.toml"), toml)),
        env(pairs),
    )
}

const POOL: &str = r#"
[other]
ignored = true

[judge]
model = "qwen2.5-72b"
api_key_env = "FLEET_KEY"
timeout_secs = 30
headers = { "X-Team" = "eval" }

[judge.limits]
rpm = 600

[judge.cache]
path = "cache/judge.sqlite"

[judge.caps]
max_calls = 5000

[judge.prices."qwen2.5-72b"]
prompt_per_million = 0.4
completion_per_million = 1.2

[[judge.endpoints]]
base_url = "http://gpu-a:8000/v1"
weight = 3
concurrency = 24

[[judge.endpoints]]
base_url = "http://gpu-b:8000/v1"
model = "Qwen/Qwen2.5-72B-Instruct"
api_key_env = "GPU_B_KEY"
headers = { "X-Team" = { env = "TEAM" }, "X-Extra" = "1" }
concurrency = 8
tpm = 100000
"#;

#[test]
fn a_pool_resolves_with_weights_limits_keys_and_headers() {
    let s = resolve(
        &JudgeFlags::default(),
        POOL,
        &[
            ("FLEET_KEY", "sk-fleet-secret"),
            ("GPU_B_KEY", "sk-b-secret"),
            ("TEAM", "search"),
            ("HOME", "/home/u"),
        ],
    )
    .unwrap();
    assert_eq!(s.model.as_deref(), Some("qwen2.5-72b"));
    assert_eq!(s.endpoints.len(), 2);
    let (a, b) = (&s.endpoints[0], &s.endpoints[1]);
    assert_eq!((a.weight, b.weight), (3.0, 1.0));
    assert_eq!(a.settings.model, "qwen2.5-72b");
    assert_eq!(b.settings.model, "Qwen/Qwen2.5-72B-Instruct");
    assert_eq!(
        a.settings.api_key.as_ref().unwrap().expose(),
        "sk-fleet-secret"
    );
    assert_eq!(b.settings.api_key.as_ref().unwrap().expose(), "sk-b-secret");
    assert_eq!(
        a.settings.extra_headers,
        vec![("X-Team".into(), "eval".into())]
    );
    assert_eq!(
        b.settings.extra_headers,
        vec![
            ("X-Extra".into(), "1".into()),
            ("X-Team".into(), "search".into())
        ]
    );
    assert_eq!(a.settings.request_timeout, Duration::from_secs(30));
    assert_eq!(
        (a.limits.max_concurrency, b.limits.max_concurrency),
        (24, 8)
    );
    assert_eq!(b.limits.tokens_per_minute, Some(100_000));
    // Global concurrency defaults to the endpoints' total; rpm comes from [judge.limits].
    assert_eq!(s.limits.max_concurrency, 32);
    assert_eq!(s.limits.requests_per_minute, Some(600));
    assert_eq!(s.budget.max_calls, Some(5000));
    assert_eq!(
        s.cache_path,
        Some(PathBuf::from("/etc/rageval/cache/judge.sqlite"))
    );
    assert_eq!(
        s.prices.get("qwen2.5-72b").unwrap().completion_per_million,
        1.2
    );
    // Keys never show in Debug.
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk-fleet-secret") && !shown.contains("sk-b-secret"));
    assert!(
        !shown.contains("search"),
        "header values are hidden: {shown}"
    );
    // The pool builds without touching the network, under the model's name.
    let models = s.models().unwrap();
    let chat = models.chat.unwrap();
    assert_eq!(crate::chat::ChatModel::model(&chat), "qwen2.5-72b");
    assert!(crate::chat::ChatModel::limits_itself(&chat));
}

#[test]
fn flags_beat_env_beat_file_beat_defaults() {
    let file = "[judge]\nmodel = \"file-model\"\nbase_url = \"http://file/v1\"\ntimeout_secs = 30\n\
                [judge.limits]\nconcurrency = 4\n";
    let vars = [
        (ENV_JUDGE_MODEL, "env-model"),
        (ENV_JUDGE_CONCURRENCY, "6"),
        (ENV_JUDGE_TIMEOUT, "45"),
        (ENV_OPENAI_BASE_URL, "http://openai-fallback/v1"),
    ];
    let s = resolve(&JudgeFlags::default(), file, &vars).unwrap();
    assert_eq!(s.model.as_deref(), Some("env-model"));
    assert_eq!(s.limits.max_concurrency, 6);
    // OPENAI_BASE_URL is a fallback: below the file.
    assert_eq!(s.endpoints[0].settings.base_url, "http://file/v1");
    assert_eq!(
        s.endpoints[0].settings.request_timeout,
        Duration::from_secs(45)
    );

    let flags = JudgeFlags {
        model: Some("flag-model".into()),
        base_url: Some("http://flag/v1".into()),
        concurrency: Some(9),
        timeout: Some(Duration::from_secs(5)),
        max_calls: Some(10),
        ..JudgeFlags::default()
    };
    let s = resolve(&flags, file, &vars).unwrap();
    assert_eq!(s.model.as_deref(), Some("flag-model"));
    assert_eq!(s.endpoints[0].settings.base_url, "http://flag/v1");
    assert_eq!(s.limits.max_concurrency, 9);
    assert_eq!(
        s.endpoints[0].settings.request_timeout,
        Duration::from_secs(5)
    );
    assert_eq!(s.budget.max_calls, Some(10));

    let s = resolve(&JudgeFlags::default(), "", &[(ENV_JUDGE_MODEL, "m")]).unwrap();
    assert_eq!(s.endpoints[0].settings.base_url, DEFAULT_BASE_URL);
    assert_eq!(
        s.limits.max_concurrency,
        LimiterConfig::default().max_concurrency
    );
    assert_eq!(s.cache_mode, CacheMode::ReadWrite);
}

#[test]
fn an_explicit_base_url_replaces_the_files_endpoint_list() {
    let s = resolve(
        &JudgeFlags::default(),
        POOL,
        &[
            (ENV_JUDGE_BASE_URL, "http://one/v1"),
            ("FLEET_KEY", "k1234"),
        ],
    )
    .unwrap();
    assert_eq!(s.endpoints.len(), 1);
    assert_eq!(s.endpoints[0].settings.base_url, "http://one/v1");
    // The [judge]-level key still applies; RAGEVAL_JUDGE_API_KEY would win over it.
    assert_eq!(
        s.endpoints[0].settings.api_key.as_ref().unwrap().expose(),
        "k1234"
    );
    let s = resolve(
        &JudgeFlags::default(),
        POOL,
        &[
            (ENV_JUDGE_API_KEY, "sk-env"),
            (ENV_OPENAI_API_KEY, "sk-openai"),
            ("TEAM", "t"),
        ],
    )
    .unwrap();
    assert!(
        s.endpoints
            .iter()
            .all(|e| e.settings.api_key.as_ref().unwrap().expose() == "sk-env")
    );
}

#[test]
fn no_model_means_no_endpoint_but_a_url_without_model_is_an_error() {
    let s = resolve(
        &JudgeFlags::default(),
        "",
        &[
            (ENV_OPENAI_BASE_URL, "http://x/v1"),
            (ENV_OPENAI_API_KEY, "sk-x"),
        ],
    )
    .unwrap();
    assert!(!s.has_endpoint());
    assert!(s.models().unwrap().chat.is_none());
    let err = resolve(
        &JudgeFlags::default(),
        "[judge]\nbase_url = \"http://x/v1\"\n",
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("no model"), "{err}");
}

#[test]
fn file_errors_name_file_line_and_key_without_values() {
    let err = resolve(
        &JudgeFlags::default(),
        "[judge]\nmodel = \"m\"\n\n[[judge.endpoints]]\nbase_url = \"http://a/v1\"\nweight = 0\n",
        &[],
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("/etc/rageval/rageval.toml:6: judge.endpoints[1].weight:"),
        "{text}"
    );
    assert!(text.contains("greater than 0"), "{text}");

    let err = resolve(&JudgeFlags::default(), "[judge]\nmodle = \"m\"\n", &[]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(":2: judge.modle: unknown field `modle`"),
        "{text}"
    );
    assert!(
        text.ends_with("(column 1)\n  |\n2 | modle = \"…\"\n  | ^^^^^"),
        "{text}"
    );

    // A secret put where a table belongs is not quoted back.
    let err = resolve(
        &JudgeFlags::default(),
        "[judge]\nmodel = \"m\"\nheaders = \"Authorization: Bearer sk-leaky-secret\"\n",
        &[],
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(":3: judge.headers:"), "{text}");
    assert!(!text.contains("sk-leaky-secret"), "{text}");

    let err = resolve(&JudgeFlags::default(), POOL, &[("FLEET_KEY", "k")]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            ":32: judge.endpoints[2].api_key_env: names variable GPU_B_KEY, which is not set"
        ),
        "{text}"
    );
    // Offline needs no key.
    let offline = JudgeFlags {
        offline: true,
        ..JudgeFlags::default()
    };
    assert!(resolve(&offline, POOL, &[("TEAM", "t")]).is_ok());
}

#[test]
fn cache_flags_and_cost_caps_are_checked() {
    let both = JudgeFlags {
        offline: true,
        no_cache: true,
        ..JudgeFlags::default()
    };
    assert!(resolve(&both, "", &[]).is_err());
    let off = JudgeFlags {
        no_cache: true,
        cache: Some("/tmp/x.sqlite".into()),
        ..JudgeFlags::default()
    };
    let s = resolve(&off, "[judge.cache]\nmode = \"offline\"\n", &[]).unwrap();
    assert_eq!(s.cache_mode, CacheMode::Off);
    assert_eq!(s.cache_path, Some(PathBuf::from("/tmp/x.sqlite")));
    let s = resolve(
        &JudgeFlags::default(),
        "[judge.cache]\nmode = \"offline\"\n",
        &[],
    )
    .unwrap();
    assert_eq!(s.cache_mode, CacheMode::Offline);

    let capped = JudgeFlags {
        max_cost_usd: Some(2.0),
        ..JudgeFlags::default()
    };
    let err = resolve(&capped, "[judge]\nmodel = \"my-llama\"\n", &[]).unwrap_err();
    assert!(
        err.to_string().contains("[judge.prices.\"my-llama\"]"),
        "{err}"
    );
    let priced = "[judge]\nmodel = \"my-llama\"\n[judge.prices.my-llama]\n\
                  prompt_per_million = 0.1\ncompletion_per_million = 0.2\n";
    let s = resolve(&capped, priced, &[]).unwrap();
    assert_eq!(s.budget.max_cost_usd, Some(2.0));
    let s = resolve(&capped, "[judge]\nmodel = \"gpt-4o-mini\"\n", &[]).unwrap();
    assert!(s.judge_config().prices.get("gpt-4o-mini").is_some());
}

#[test]
fn bad_environment_numbers_name_the_variable() {
    let err = resolve(
        &JudgeFlags::default(),
        "",
        &[(ENV_JUDGE_MODEL, "m"), (ENV_JUDGE_RPM, "lots")],
    )
    .unwrap_err();
    assert!(err.to_string().contains(ENV_JUDGE_RPM), "{err}");
}

#[test]
fn the_config_file_is_found_by_flag_or_env_and_missing_ones_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("custom.toml");
    std::fs::write(&path, "[judge]\nmodel = \"from-file\"\n").unwrap();
    let by_env = JudgeSettings::resolve(
        &JudgeFlags::default(),
        env(&[(ENV_CONFIG, path.to_str().unwrap())]),
    )
    .unwrap();
    assert_eq!(by_env.model.as_deref(), Some("from-file"));
    assert_eq!(by_env.config_file.as_deref(), Some(path.as_path()));
    let missing = JudgeFlags {
        config: Some(dir.path().join("absent.toml")),
        ..JudgeFlags::default()
    };
    let err = JudgeSettings::resolve(&missing, env(&[])).unwrap_err();
    assert!(
        err.to_string()
            .contains("absent.toml: no such settings file (named by --config or RAGEVAL_CONFIG)"),
        "{err}"
    );
}

#[test]
fn a_batch_price_overrides_half_the_price_and_needs_both_parts() {
    let file = "[judge]\nmodel = \"my-llama\"\n[judge.prices.\"my-llama\"]\n\
                prompt_per_million = 1.0\ncompletion_per_million = 2.0\n\
                batch_prompt_per_million = 0.25\nbatch_completion_per_million = 0.75\n";
    let s = resolve(&JudgeFlags::default(), file, &[]).unwrap();
    let batch = s.prices.batch_price("my-llama").unwrap();
    assert_eq!(
        (batch.prompt_per_million, batch.completion_per_million),
        (0.25, 0.75)
    );
    // Without batch keys, the batch price is half the price.
    let plain = "[judge.prices.other]\nprompt_per_million = 1.0\ncompletion_per_million = 2.0\n";
    let s = resolve(&JudgeFlags::default(), plain, &[]).unwrap();
    assert_eq!(
        s.prices
            .batch_price("other")
            .unwrap()
            .completion_per_million,
        1.0
    );
    let half = "[judge.prices.other]\nprompt_per_million = 1.0\ncompletion_per_million = 2.0\n\
                batch_prompt_per_million = 0.5\n";
    let err = resolve(&JudgeFlags::default(), half, &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(":4:") && err.contains("batch_completion_per_million"),
        "{err}"
    );
}

/// Issue 40 item 10: an error about `temperature`, `schema_mode`, `max_tokens_param` or a
/// numeric `api_key` (in the file or in a variable) named the field but quoted the value,
/// which may be a misplaced secret.
#[test]
fn config_errors_name_the_field_and_never_quote_the_value() {
    const SECRET: &str = "sk-misplaced-4417";
    const NUMBER: &str = "4417";
    let model = "[judge]\nmodel = \"m\"\n";
    let endpoint = "[[judge.endpoints]]\nbase_url = \"http://a/v1\"\n";
    let in_file = [
        (
            format!("{model}temperature = \"{SECRET}\"\n"),
            "judge.temperature",
            SECRET,
        ),
        (
            format!("{model}temperature = {NUMBER}\n"),
            "judge.temperature",
            NUMBER,
        ),
        (
            format!("{model}schema_mode = \"{SECRET}\"\n"),
            "judge.schema_mode",
            SECRET,
        ),
        (
            format!("{model}max_tokens_param = \"{SECRET}\"\n"),
            "judge.max_tokens_param",
            SECRET,
        ),
        (
            format!("{model}api_key = {NUMBER}\n"),
            "judge.api_key",
            NUMBER,
        ),
        (
            format!("{model}api_key = {NUMBER}.5\n"),
            "judge.api_key",
            NUMBER,
        ),
        (
            format!("{model}{endpoint}schema_mode = \"{SECRET}\"\n"),
            "judge.endpoints[1].schema_mode",
            SECRET,
        ),
        (
            format!("{model}{endpoint}max_tokens_param = \"{SECRET}\"\n"),
            "judge.endpoints[1].max_tokens_param",
            SECRET,
        ),
        (
            format!("{model}{endpoint}api_key = {NUMBER}\n"),
            "judge.endpoints[1].api_key",
            NUMBER,
        ),
    ];
    for (toml, field, value) in &in_file {
        let err = resolve(&JudgeFlags::default(), toml, &[]).unwrap_err();
        for text in [err.to_string(), format!("{err:?}")] {
            assert!(text.contains(field), "{field}: {text}");
            assert!(!text.contains(value), "{field} quotes its value: {text}");
        }
    }
    let in_variables = [
        ENV_JUDGE_TEMPERATURE,
        ENV_JUDGE_MAX_TOKENS_PARAM,
        ENV_JUDGE_MAX_TOKENS,
        ENV_JUDGE_THINKING,
        ENV_JUDGE_TIMEOUT,
        ENV_JUDGE_CONCURRENCY,
        ENV_JUDGE_RPM,
        ENV_JUDGE_TPM,
    ];
    for name in in_variables {
        let err = resolve(
            &JudgeFlags::default(),
            "",
            &[(ENV_JUDGE_MODEL, "m"), (name, SECRET)],
        )
        .unwrap_err();
        for text in [err.to_string(), format!("{err:?}")] {
            assert!(text.contains(name), "{name}: {text}");
            assert!(!text.contains(SECRET), "{name} quotes its value: {text}");
        }
    }
}

#[test]
fn a_flag_overrides_a_variable_that_does_not_read() {
    let flags = JudgeFlags {
        model: Some("m".into()),
        rpm: Some(60),
        timeout: Some(Duration::from_secs(5)),
        ..JudgeFlags::default()
    };
    let s = resolve(
        &flags,
        "",
        &[(ENV_JUDGE_RPM, "lots"), (ENV_JUDGE_TIMEOUT, "soon")],
    )
    .unwrap();
    assert_eq!(s.limits.requests_per_minute, Some(60));
    assert_eq!(
        s.endpoints[0].settings.request_timeout,
        Duration::from_secs(5)
    );
}
