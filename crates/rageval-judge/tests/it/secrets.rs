//! The API key never shows: not in settings' Debug, not in any error, not in the cache file —
//! whether it came from a struct, the environment or `rageval.toml`, through one endpoint or
//! a pool.

use std::sync::Arc;
use std::time::Duration;

use rageval_judge::config::{JudgeFlags, JudgeSettings};
use rageval_judge::{ApiKey, Cache, CacheMode, JudgeError};
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::Value;

use crate::support::{Verdict, config, judge, request, settings};

const KEY: &str = "sk-live-0123456789abcdef";

#[tokio::test]
async fn the_key_is_absent_from_debug_errors_and_cache_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.sqlite");

    // A server that echoes the key in its error body, as some providers do.
    let echo = MockServer::start(MockConfig {
        script: Some(Arc::new(|_: &Value| {
            Reply::Status(401, format!("invalid api key {KEY} provided"))
        })),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut s = settings(&echo, Duration::from_secs(5));
    s.api_key = Some(ApiKey::new(KEY));
    s.extra_headers = vec![("x-secret-header".into(), KEY.into())];
    assert!(!format!("{s:?}").contains(KEY));
    let j = judge(s.clone(), None, config(CacheMode::Off));
    let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
    let chain = error_chain(&err);
    assert!(chain.contains("invalid api key **** provided"), "{chain}");
    assert!(!chain.contains(KEY), "{chain}");
    assert!(!format!("{err:?}").contains(KEY));

    // Transport and timeout errors, and a base URL that carries credentials.
    let mut hung = s.clone();
    hung.base_url = format!("http://user:{KEY}@127.0.0.1:9/v1?key={KEY}");
    hung.request_timeout = Duration::from_millis(100);
    let mut once = config(CacheMode::Off);
    once.retry.max_attempts = 2;
    let err = judge(hung, None, once)
        .ask::<Verdict>(&request("t", "x"))
        .await
        .unwrap_err();
    let chain = error_chain(&err);
    assert!(!chain.contains(KEY), "{chain}");
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");

    // A normal run with the key writes answers to the cache; the files hold no key.
    let ok = MockServer::start(MockConfig {
        api_key: Some(KEY.into()),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut s = settings(&ok, Duration::from_secs(5));
    s.api_key = Some(ApiKey::new(KEY));
    let cache = Cache::open(&path).unwrap();
    let j = judge(s, Some(cache.clone()), config(CacheMode::ReadWrite));
    for i in 0..20 {
        j.ask::<Verdict>(&request("t", &format!("Item {i} holds.")))
            .await
            .unwrap();
    }
    assert_eq!(cache.len().await.unwrap(), 20);
    drop(j);
    drop(cache);
    let mut scanned = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        scanned += bytes.len();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    }
    assert!(scanned > 0);
}

fn error_chain(err: &JudgeError) -> String {
    let mut out = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        out.push_str(" <- ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_from_rageval_toml_stay_hidden_through_a_pool() {
    // Two endpoints that reject the key and echo it back.
    let echo = || {
        MockServer::start(MockConfig {
            script: Some(Arc::new(|_: &Value| {
                Reply::Status(401, format!("invalid api key {KEY} provided"))
            })),
            ..MockConfig::default()
        })
    };
    let (a, b) = (echo().await.unwrap(), echo().await.unwrap());
    let with_credentials = b
        .base_url
        .replacen("http://", &format!("http://user:{KEY}@"), 1);
    let toml = format!(
        r#"
[judge]
model = "mock-chat"
api_key = "{KEY}"
headers = {{ "X-Secret" = "{KEY}" }}

[judge.cache]
mode = "off"

[[judge.endpoints]]
base_url = "{}"

[[judge.endpoints]]
base_url = "{with_credentials}"
weight = 2
"#,
        a.base_url
    );
    let file = std::path::Path::new("rageval.toml");
    let settings =
        JudgeSettings::resolve_with(&JudgeFlags::default(), Some((file, &toml)), |_| None).unwrap();
    assert!(!format!("{settings:?}").contains(KEY), "{settings:?}");
    let j = settings.build().unwrap();
    assert!(!format!("{:?}", j.model()).contains(KEY));
    for i in 0..4 {
        let err = j
            .ask::<Verdict>(&request("t", &format!("Item {i}.")))
            .await
            .unwrap_err();
        let chain = error_chain(&err);
        assert!(chain.contains("invalid api key ****"), "{chain}");
        assert!(
            !chain.contains(KEY) && !format!("{err:?}").contains(KEY),
            "{chain}"
        );
    }
    // A 401 halts the judge at once: one request reached the pool, and the calls after it
    // repeat the halt's cause, key hidden, without sending anything.
    assert_eq!(a.stats().chat_requests + b.stats().chat_requests, 1);

    // Regression: the endpoint whose URL carries the key, alone (no api_key to redact by),
    // quoted the key from its 401 body; every credential of the URL is redacted now.
    let alone = format!(
        "[judge]\nmodel = \"mock-chat\"\n\n[judge.cache]\nmode = \"off\"\n\n\
         [[judge.endpoints]]\nbase_url = \"{with_credentials}\"\n"
    );
    let settings =
        JudgeSettings::resolve_with(&JudgeFlags::default(), Some((file, &alone)), |_| None)
            .unwrap();
    assert!(!format!("{settings:?}").contains(KEY), "{settings:?}");
    let before = b.stats().chat_requests;
    let err = settings
        .build()
        .unwrap()
        .ask::<Verdict>(&request("t", "Item."))
        .await
        .unwrap_err();
    let chain = error_chain(&err);
    assert!(
        !chain.contains(KEY) && !format!("{err:?}").contains(KEY),
        "{chain}"
    );
    assert_eq!(b.stats().chat_requests, before + 1);

    // A malformed file that holds the key: the error points at the line, not the value.
    let broken = format!("[judge]\nmodel = \"m\"\napi_key = [\"{KEY}\"]\n");
    let err = JudgeSettings::resolve_with(&JudgeFlags::default(), Some((file, &broken)), |_| None)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("rageval.toml:3: judge.api_key:"),
        "{err}"
    );
    assert!(
        !err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY),
        "{err}"
    );
}
