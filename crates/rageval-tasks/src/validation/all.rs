//! Every figure of the measured table, recomputed from the shared validation folder: what
//! the integration test compares with [`measured`](crate::measured). WikiEval is measured
//! whole through the router, in-set (the heuristic's rules were written with its
//! faithfulness pairs as a gate); the other sets come from the sweep, each held out by set
//! and, where its development half helped choose, in-set.

use std::path::Path;

use super::choose::{measured_rows, read_all, sweep_all};
use super::{PairwiseAgreement, read_wikieval, wikieval};
use crate::error::TaskError;
use crate::heuristic::{HEURISTIC_VERSION, Heuristic};
use crate::measured::{FigureKind, IMPLEMENTATION, Measurement};
use crate::router::{Policy, TaskJudge};
use crate::task::TaskKind;

/// The files read, under the validation folder.
pub const WIKIEVAL_FILE: &str = "wikieval/WikiEval_samples_10.jsonl";
/// RGB's Chinese refine set.
pub const RGB_ZH_REFINE_FILE: &str = "rgb/zh_refine.json";
/// RGB's English counterfactual set.
pub const RGB_EN_FACT_FILE: &str = "rgb/en_fact.json";
/// RGB's Chinese counterfactual set.
pub const RGB_ZH_FACT_FILE: &str = "rgb/zh_fact.json";
/// DuReader's development sample.
pub const DUREADER_FILE: &str = "dureader-2.0-demo-zh/search.dev.slim.jsonl";

/// Every measurement of the measured table, in its order: WikiEval's three figures for the
/// lexical heuristic judge through the router (the whole 10-row sample, in-set), and the
/// sweep's rows among the lexical rules ([`measured_rows`]) over the validation folder
/// `dir` (`shared/validation`).
pub async fn measure_all(dir: &Path) -> Result<Vec<Measurement>, TaskError> {
    let judge = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    let wiki = wikieval(&judge, &read_wikieval(&dir.join(WIKIEVAL_FILE))?).await?;
    let whole = "WikiEval";
    // A figure without pairs has no accuracy and no row.
    let pairs = |task, measure: &str, figure: PairwiseAgreement| {
        figure.accuracy().map(|value| Measurement {
            task,
            implementation: IMPLEMENTATION.to_owned(),
            version: HEURISTIC_VERSION,
            dataset: whole.to_owned(),
            measure: measure.to_owned(),
            value,
            count: figure.pairs,
            unit: "pairs".to_owned(),
            metric: None,
            kind: FigureKind::InSet,
        })
    };
    let data = read_all(dir, None).await?;
    let mut rows: Vec<Measurement> = [
        pairs(
            TaskKind::SupportVerdicts,
            "faithfulness pairwise accuracy",
            wiki.faithfulness,
        ),
        pairs(
            TaskKind::AnswerRubric,
            "answer relevance pairwise accuracy",
            wiki.answer_relevance,
        ),
        pairs(
            TaskKind::PairwisePreference,
            "context relevance pairwise accuracy",
            wiki.context_relevance,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    rows.extend(measured_rows(&sweep_all(&data)));
    // The table's order: by task, WikiEval first within a task.
    rows.sort_by_key(|m| m.task);
    Ok(rows)
}
