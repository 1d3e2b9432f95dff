//! Every figure of the measured table, computed for one [`TaskJudge`] from the shared
//! validation folder: what `examples/measure_heuristic.rs` prints and what the integration
//! test compares with [`measured`](crate::measured).

use std::path::Path;

use super::{
    BinaryAgreement, PairwiseAgreement, dureader_relevance, read_dureader, read_rgb, read_wikieval,
    rgb_counterfactual, rgb_relevance, wikieval,
};
use crate::error::TaskError;
use crate::measured::Measurement;
use crate::router::{Answerer, TaskJudge};
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

/// Every measurement, in the order of the table, for `judge` over the validation folder
/// `dir` (`shared/validation`).
pub async fn measure_all(judge: &TaskJudge, dir: &Path) -> Result<Vec<Measurement>, TaskError> {
    let routes = judge.describe();
    let row =
        |task: TaskKind, dataset: &str, measure: &str, value: f64, count: usize, unit: &str| {
            let (implementation, version) = routes
                .iter()
                .find(|r| r.task == task)
                .and_then(|r| r.answered_by.as_ref())
                .map_or(("unavailable".to_owned(), 0), |who| match who {
                    Answerer::Heuristic(info) => (info.name.clone(), info.version),
                    Answerer::Llm {
                        backend,
                        model,
                        templates,
                    } => (
                        format!("llm {backend}:{model}"),
                        templates.first().map_or(0, |t| t.version),
                    ),
                });
            Measurement {
                task,
                implementation,
                version,
                dataset: dataset.to_owned(),
                measure: measure.to_owned(),
                value,
                count,
                unit: unit.to_owned(),
            }
        };
    let pairs = |task, dataset: &str, measure: &str, figure: PairwiseAgreement| {
        row(
            task,
            dataset,
            measure,
            figure.accuracy(),
            figure.pairs,
            "pairs",
        )
    };
    let binary = |task, dataset: &str, measure: &str, figure: BinaryAgreement, unit: &str| {
        row(
            task,
            dataset,
            measure,
            figure.balanced_accuracy(),
            figure.items(),
            unit,
        )
    };

    let wiki = wikieval(judge, &read_wikieval(&dir.join(WIKIEVAL_FILE))?).await?;
    let refine = rgb_relevance(judge, &read_rgb(&dir.join(RGB_ZH_REFINE_FILE))?).await?;
    let en_fact = rgb_counterfactual(judge, &read_rgb(&dir.join(RGB_EN_FACT_FILE))?).await?;
    let zh_fact = rgb_counterfactual(judge, &read_rgb(&dir.join(RGB_ZH_FACT_FILE))?).await?;
    let dureader = dureader_relevance(judge, &read_dureader(&dir.join(DUREADER_FILE))?).await?;

    let faithfulness = "faithfulness pairwise accuracy";
    let counterfactual = "counterfactual support pairwise accuracy";
    Ok(vec![
        pairs(
            TaskKind::SupportVerdicts,
            "WikiEval",
            faithfulness,
            wiki.faithfulness,
        ),
        pairs(
            TaskKind::SupportVerdicts,
            "RGB en fact",
            counterfactual,
            en_fact,
        ),
        pairs(
            TaskKind::SupportVerdicts,
            "RGB zh fact",
            counterfactual,
            zh_fact,
        ),
        pairs(
            TaskKind::AnswerRubric,
            "WikiEval",
            "answer relevance pairwise accuracy",
            wiki.answer_relevance,
        ),
        pairs(
            TaskKind::PairwisePreference,
            "WikiEval",
            "context relevance pairwise accuracy",
            wiki.context_relevance,
        ),
        pairs(
            TaskKind::PairwisePreference,
            "RGB zh refine",
            "answer-passage preference pairwise accuracy",
            refine.preference,
        ),
        pairs(
            TaskKind::GradeRelevance,
            "RGB zh refine",
            "answer-passage grade pairwise accuracy",
            refine.grade,
        ),
        pairs(
            TaskKind::GradeRelevance,
            "DuReader zh",
            "selected-document grade pairwise accuracy",
            dureader.grade,
        ),
        binary(
            TaskKind::ContextUsefulness,
            "RGB zh refine",
            "usefulness for the reference balanced accuracy",
            refine.usefulness,
            "passages",
        ),
        binary(
            TaskKind::ContextRelevance,
            "DuReader zh",
            "selected-document relevance balanced accuracy",
            dureader.relevance,
            "documents",
        ),
    ])
}
