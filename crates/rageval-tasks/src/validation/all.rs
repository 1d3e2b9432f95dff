//! Every figure of the measured table, recomputed from the shared validation folder: what
//! the integration test compares with [`measured`](crate::measured).

use std::path::Path;

use super::choose::{held_out_rows, read_all, sweep_all};
use super::{PairwiseAgreement, read_wikieval, wikieval};
use crate::error::TaskError;
use crate::heuristic::{HEURISTIC_VERSION, Heuristic};
use crate::measured::Measurement;
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
/// lexical heuristic judge through the router (the whole 10-row sample), and the held-out
/// figures of the defaults the development sweep chooses among the lexical rules
/// ([`choose`](super::choose)) over the validation folder `dir` (`shared/validation`).
pub async fn measure_all(dir: &Path) -> Result<Vec<Measurement>, TaskError> {
    let judge = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    let wiki = wikieval(&judge, &read_wikieval(&dir.join(WIKIEVAL_FILE))?).await?;
    let whole = "WikiEval";
    let measurement = |task, dataset: &str, measure: &str, value, count, unit: &str| Measurement {
        task,
        implementation: "content_word_overlap".to_owned(),
        version: HEURISTIC_VERSION,
        dataset: dataset.to_owned(),
        measure: measure.to_owned(),
        value,
        count,
        unit: unit.to_owned(),
        metric: None,
    };
    let pairs = |task, measure: &str, figure: PairwiseAgreement| {
        measurement(
            task,
            whole,
            measure,
            figure.accuracy(),
            figure.pairs,
            "pairs",
        )
    };
    let data = read_all(dir, None).await?;
    let mut rows = vec![
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
    ];
    rows.extend(held_out_rows(&sweep_all(&data)).into_iter().map(
        |(task, dataset, measure, value, count, unit)| {
            measurement(task, &dataset, &measure, value, count, &unit)
        },
    ));
    // The table's order: by task, WikiEval first within a task.
    rows.sort_by_key(|m| m.task);
    Ok(rows)
}
