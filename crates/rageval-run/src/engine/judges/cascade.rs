//! The cascade (`--judge checker:DIR --escalate LOW,HIGH` with a chat endpoint): the checker
//! model scores every support-verdict statement and the endpoint's chat model is asked only
//! those scored inside the band (`rageval_tasks::EscalationBand`); every other task goes to
//! the endpoint as usual. This module checks that the flags make a cascade and says what the
//! manifest records of one; the routing itself is the task router's.

use rageval_judge::{JudgeSettings, SupportChecker};
use rageval_tasks::EscalationBand;
use serde_json::{Value, json};

use super::{JudgeOptions, LocalJudge};
use crate::engine::error::{Result, RunError};

/// The checker and its band when the options ask for a cascade; an error when `--escalate`
/// is given without both a checker and a chat endpoint to escalate to.
pub(super) fn requested(
    options: &JudgeOptions,
    settings: &JudgeSettings,
) -> Result<Option<(SupportChecker, EscalationBand)>> {
    let named_endpoint = options.flags.base_url.is_some() || options.flags.model.is_some();
    let Some(band) = options.escalate else {
        if options.local.is_some() && named_endpoint {
            return Err(RunError::Usage(
                "--judge names a local judge and --judge-base-url / --judge-model an endpoint: \
                 drop one, or add --escalate LOW,HIGH to have a checker escalate to the endpoint"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let Some(LocalJudge::Checker(dir)) = &options.local else {
        return Err(RunError::Usage(
            "--escalate needs a checker model to escalate from: add --judge checker:DIR".into(),
        ));
    };
    if settings.model.is_none() || !settings.has_endpoint() {
        return Err(RunError::Usage(
            "--escalate needs a chat endpoint to escalate to: add --judge-base-url URL and \
             --judge-model NAME (or RAGEVAL_JUDGE_BASE_URL and RAGEVAL_JUDGE_MODEL)"
                .into(),
        ));
    }
    let checker = open_checker(dir)?;
    Ok(Some((checker, band)))
}

/// The files a checker folder holds, as a Hugging Face checkpoint has them.
const CHECKER_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// Opens the checker model in `dir` (`--judge checker:DIR`). A folder that is not there, or
/// lacks one of [`CHECKER_FILES`], is a usage error that names what is missing, what a
/// checker folder holds and how to get one.
pub(super) fn open_checker(dir: &std::path::Path) -> Result<SupportChecker> {
    let missing: Vec<&str> = CHECKER_FILES
        .into_iter()
        .filter(|file| !dir.join(file).is_file())
        .collect();
    if missing.is_empty() {
        return SupportChecker::open(dir).map_err(RunError::Checker);
    }
    let what = match dir.is_dir() {
        true => format!("{} has no {}", dir.display(), missing.join(", ")),
        false => format!("{} is not a folder", dir.display()),
    };
    Err(RunError::Usage(format!(
        "--judge checker:{}: {what}. A checker folder holds config.json (the model's \
         configuration), model.safetensors (its weights) and tokenizer.json (its tokenizer), \
         as a Hugging Face checkpoint has them; download one on a machine with network, e.g. \
         `huggingface-cli download KRLabsOrg/lettucedect-base-modernbert-en-v1 --local-dir \
         models/lettucedect-base`, then pass --judge checker:models/lettucedect-base \
         (docs/judges.md lists the checkers rageval runs and their licences)",
        dir.display()
    )))
}

/// The escalation band as the manifest records it.
pub(super) fn band_json(band: EscalationBand) -> Value {
    json!({
        "low": band.low,
        "high": band.high,
        "escalated": "support-verdict statements the checker scores inside [low, high], \
            both ends included, go to the chat judge; the checker settles the others",
        "agreement": "unmeasured for either tier: run rageval judge-check on labelled data",
    })
}

/// A checker model as the manifest records it.
pub(super) fn checker_json(checker: &SupportChecker) -> Value {
    json!({
        "dir": checker.dir().display().to_string(),
        "family": checker.family().name(),
        "head": checker.head().name(),
        "model": checker.name(),
        "sha256": checker.sha256(),
        "agreement": "unmeasured: run rageval judge-check on labelled data",
    })
}
