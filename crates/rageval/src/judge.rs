//! The judge's command-line flags ([`JudgeArgs`]) as `rageval-run`'s [`JudgeOptions`]:
//! flags over `RAGEVAL_JUDGE_*` over `rageval.toml` over defaults (docs/configuration.md),
//! merged when a command resolves them. Nothing here reads a file or connects.

use rageval_judge::config::JudgeFlags;
use rageval_run::engine::judges::JudgeOptions;

use crate::cli::JudgeArgs;

/// The flags as the judge crate takes them.
pub fn flags(args: &JudgeArgs) -> JudgeFlags {
    JudgeFlags {
        config: args.config.clone(),
        base_url: args.judge_base_url.clone(),
        model: args.judge_model.clone(),
        embedding_model: args.judge_embedding_model.clone(),
        concurrency: args.concurrency,
        rpm: args.rpm,
        tpm: args.tpm,
        timeout: args.timeout,
        no_cache: args.no_cache,
        offline: args.offline,
        cache: args.cache.clone(),
        max_calls: args.max_calls,
        max_cost_usd: args.max_cost,
        temperature: args.judge_temperature,
        max_tokens: args.judge_max_tokens,
        max_tokens_param: args.judge_max_tokens_param,
        reasoning_effort: args.judge_reasoning_effort.clone(),
        thinking: args.judge_thinking,
    }
}

/// The judge options of these flags.
pub fn options(args: &JudgeArgs) -> JudgeOptions {
    JudgeOptions {
        flags: flags(args),
        local: args.local_judge.clone(),
        models_dir: args.models_dir.clone(),
        lang: args.lang,
        context_window: args.context_window,
        batch: false,
        escalate: args.escalate,
    }
}

/// The process environment, as `rageval-run` reads it.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use rageval_judge::config::JudgeSettings;

    use super::*;

    /// The judge settings of these flags, the process environment and the settings file.
    fn settings(args: &JudgeArgs) -> anyhow::Result<JudgeSettings> {
        Ok(rageval_run::engine::judges::settings(&options(args), &env)?)
    }

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        judge: JudgeArgs,
    }

    fn parse(args: &[&str]) -> Result<JudgeArgs, clap::Error> {
        Probe::try_parse_from(std::iter::once("rageval").chain(args.iter().copied()))
            .map(|p| p.judge)
    }

    #[test]
    fn every_flag_reaches_the_judge_settings() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c.sqlite");
        let config = dir.path().join("none.toml");
        std::fs::write(&config, "[judge]\nmodel = \"from-file\"\n").unwrap();
        let args = parse(&[
            "--config",
            config.to_str().unwrap(),
            "--judge-base-url",
            "http://127.0.0.1:9/v1",
            "--judge-model",
            "gpt-4o-mini",
            "--concurrency",
            "4",
            "--rpm",
            "60",
            "--tpm",
            "6000",
            "--timeout",
            "2.5",
            "--offline",
            "--cache",
            cache.to_str().unwrap(),
            "--max-calls",
            "7",
            "--max-cost",
            "0.5",
        ])
        .unwrap();
        // Every value asserted below comes from a flag, so the process environment cannot
        // change the outcome.
        let settings = settings(&args).unwrap();
        assert_eq!(settings.model.as_deref(), Some("gpt-4o-mini"));
        assert_eq!(
            settings.endpoints[0].settings.base_url,
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(
            settings.endpoints[0].settings.request_timeout,
            Duration::from_millis(2500)
        );
        assert_eq!(settings.limits.max_concurrency, 4);
        assert_eq!(settings.limits.requests_per_minute, Some(60));
        assert_eq!(settings.limits.tokens_per_minute, Some(6000));
        assert_eq!(settings.cache_mode, rageval_judge::CacheMode::Offline);
        assert_eq!(settings.cache_path.as_deref(), Some(cache.as_path()));
        assert_eq!(settings.budget.max_calls, Some(7));
        assert_eq!(settings.budget.max_cost_usd, Some(0.5));
        assert_eq!(settings.config_file.as_deref(), Some(config.as_path()));
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for bad in [
            &["--concurrency", "0"][..],
            &["--timeout", "0"],
            &["--timeout", "soon"],
            &["--max-cost", "-1"],
            &["--rpm", "x"],
            &["--offline", "--no-cache"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(&[]).is_ok());
    }
}
