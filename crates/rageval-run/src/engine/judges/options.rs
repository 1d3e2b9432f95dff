//! What a user says about the judge: the `--judge-*` flags as the judge crate resolves
//! them, and the choices this crate makes on top of them ([`JudgeOptions`]); a local judge
//! named by `--judge` ([`LocalJudge`]); how the environment is read ([`Env`]).

use std::path::PathBuf;

use rageval_judge::config::JudgeFlags;
use rageval_tasks::{EscalationBand, LangChoice};

/// The judge's context window assumed when none is given (`--context-window`).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;

/// A local judge chosen by name (`--judge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalJudge {
    /// This GGUF chat model answers every task.
    Gguf(PathBuf),
    /// The heuristic judge alone, no model loaded.
    Heuristic,
    /// This checker model folder answers support verdicts; the offline defaults the rest.
    Checker(PathBuf),
}

impl std::str::FromStr for LocalJudge {
    type Err = String;

    /// `gguf:PATH`, `checker:DIR` or `heuristic`: the one parser of `--judge` and of
    /// Python's `Judge(local=...)`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some(("gguf", path)) if !path.is_empty() => Ok(LocalJudge::Gguf(PathBuf::from(path))),
            Some(("checker", dir)) if !dir.is_empty() => {
                Ok(LocalJudge::Checker(PathBuf::from(dir)))
            }
            None if text == "heuristic" => Ok(LocalJudge::Heuristic),
            _ => Err(
                "expected gguf:PATH (a GGUF chat model file), checker:DIR (a checker \
                      model folder) or heuristic"
                    .into(),
            ),
        }
    }
}

/// Everything a user says about the judge: the flags the judge crate resolves, and the
/// choices this crate makes on top of them.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    /// Endpoint, model, limits, cache, caps (merged with the environment and `rageval.toml`).
    pub flags: JudgeFlags,
    /// `--judge gguf:PATH|checker:DIR|heuristic`.
    pub local: Option<LocalJudge>,
    /// `--models-dir`.
    pub models_dir: Option<PathBuf>,
    /// `--lang`.
    pub lang: LangChoice,
    /// `--context-window`, in tokens.
    pub context_window: u64,
    /// Answers come through batch jobs (`eval --batch`, `--export-requests`,
    /// `--import-responses`): batch prices, no requests- or tokens-per-minute limits, and
    /// a cache that is read and written ([`crate::engine::batch`]).
    pub batch: bool,
    /// `--escalate LOW,HIGH`: with `--judge checker:DIR` and an endpoint, a cascade.
    pub escalate: Option<EscalationBand>,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            flags: JudgeFlags::default(),
            local: None,
            models_dir: None,
            lang: LangChoice::Auto,
            context_window: DEFAULT_CONTEXT_WINDOW,
            batch: false,
            escalate: None,
        }
    }
}

/// How the process environment is read (`std::env::var(..).ok()` in the binary; a map in
/// tests and bindings).
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

#[cfg(test)]
mod tests {
    use super::*;

    /// One parser serves `--judge` and Python's `Judge(local=...)` (issue 24, item 7).
    #[test]
    fn a_local_judge_is_a_gguf_path_or_the_heuristic() {
        assert_eq!(
            "gguf:/m/a b.gguf".parse(),
            Ok(LocalJudge::Gguf(PathBuf::from("/m/a b.gguf")))
        );
        assert_eq!("heuristic".parse(), Ok(LocalJudge::Heuristic));
        assert_eq!(
            "checker:/m/lettuce".parse(),
            Ok(LocalJudge::Checker(PathBuf::from("/m/lettuce")))
        );
        for bad in [
            "gguf:",
            "gguf",
            "heuristics",
            "onnx:/m",
            "checker:",
            "checker",
        ] {
            assert!(bad.parse::<LocalJudge>().is_err(), "{bad}");
        }
    }
}
