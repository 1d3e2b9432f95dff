//! Tool argument correctness with a judge for free text: calls are paired as
//! `tool_argument_correctness` pairs them (`crate::tools`, one pairing for both), each
//! argument is compared as its `normalised` mode compares it, and where both calls give an
//! argument as text that still differs, the judge says whether the two mean the same — one
//! `tool_argument_meaning` call per paired call, for all of that call's free-text
//! arguments. A pair whose arguments all agree or differ without text asks nothing.

use futures_util::future::join_all;
use rageval_core::{Outcome, Sample};
use rageval_tasks::{Implementation, ToolArgumentMeaning};
use serde_json::{Value, json};

use super::evidence::judged_by;
use crate::scoring::{Failure, ScoringContext, collect_numbered};
use crate::tools::{
    ArgumentMatch, Compared, Pair, argument_keys, call_details, compare, mean_over_pairs,
    pair_details, paired,
};

/// The cell of one sample: the mean over paired calls of the share of arguments that agree,
/// a free-text argument agreeing when the judge finds it means the same; undefined when no
/// expected tool was called.
pub async fn tool_argument_meaning(
    sample: &Sample,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let pairs = paired(sample);
    let compared: Vec<Vec<(&String, Compared<'_>)>> =
        pairs.iter().map(|p| arguments(sample, p)).collect();
    let tasks: Vec<Option<ToolArgumentMeaning>> = pairs
        .iter()
        .zip(&compared)
        .map(|(p, arguments)| free_text_task(sample, p, arguments))
        .collect();
    let answers = if tasks.iter().any(Option::is_some) {
        let judge = scoring.tasks()?;
        join_all(tasks.iter().map(|task| async move {
            match task {
                Some(task) => judge.tool_argument_meaning(task).await.map(Some),
                None => Ok(None),
            }
        }))
        .await
    } else {
        tasks.iter().map(|_| Ok(None)).collect()
    };
    let answers = collect_numbered("paired call", answers)?;

    let mut scores = Vec::with_capacity(pairs.len());
    let mut entries = Vec::with_capacity(pairs.len());
    for ((p, arguments), answer) in pairs.iter().zip(&compared).zip(&answers) {
        let mut verdicts = answer.iter().flat_map(|judged| judged.value.iter());
        let described: Vec<Value> = arguments
            .iter()
            .map(|(name, compared)| {
                let (same, by, reason) = match compared {
                    Compared::Equal => (true, "rule", "equal once normalised".to_owned()),
                    Compared::Unequal(why) => (false, "rule", (*why).to_owned()),
                    Compared::FreeText { .. } => {
                        // The task's answer has one verdict per argument asked, or it failed.
                        let verdict = verdicts.next().ok_or_else(|| {
                            Failure::new(format!("the judge gave no verdict on `{name}`"))
                        })?;
                        (verdict.same, "judge", verdict.reason.clone())
                    }
                };
                let value =
                    |call: &serde_json::Map<String, Value>| call.get(name.as_str()).cloned();
                Ok(json!({"name": name,
                       "expected": value(&sample.reference_tool_calls[p.expected].arguments),
                       "made": value(&sample.tool_calls[p.made].arguments),
                       "same": same, "by": by, "reason": reason}))
            })
            .collect::<Result<_, Failure>>()?;
        let agreed = described.iter().filter(|a| a["same"] == true).count();
        let score = match described.len() {
            0 => 1.0,
            n => agreed as f64 / n as f64,
        };
        scores.push(score);
        entries.push(pair_details(sample, p, score, described));
    }
    let judged = answers.iter().flatten().count();
    let mut details = call_details(sample, entries);
    details.insert("judged_calls".into(), json!(judged));
    if judged > 0 {
        let by: Vec<&Implementation> = answers.iter().flatten().map(|j| &j.by).collect();
        details.insert("judged_by".into(), json!(judged_by(by.into_iter())));
    }
    Ok(mean_over_pairs(scores, details))
}

/// Each argument of a pair, by name, compared without a judge.
fn arguments<'a>(sample: &'a Sample, pair: &Pair) -> Vec<(&'a String, Compared<'a>)> {
    let expected = &sample.reference_tool_calls[pair.expected].arguments;
    let made = &sample.tool_calls[pair.made].arguments;
    argument_keys(expected, made)
        .into_iter()
        .map(|key| {
            let compared = compare(
                expected.get(key.as_str()),
                made.get(key.as_str()),
                ArgumentMatch::Normalised,
            );
            (key, compared)
        })
        .collect()
}

/// The judge task of a pair's free-text arguments, in key order; `None` when it has none.
fn free_text_task(
    sample: &Sample,
    pair: &Pair,
    arguments: &[(&String, Compared<'_>)],
) -> Option<ToolArgumentMeaning> {
    let free: Vec<(String, String, String)> = arguments
        .iter()
        .filter_map(|(name, compared)| match compared {
            Compared::FreeText { expected, made } => {
                Some(((*name).clone(), (*expected).to_owned(), (*made).to_owned()))
            }
            _ => None,
        })
        .collect();
    (!free.is_empty()).then(|| {
        ToolArgumentMeaning::new(
            sample.reference_tool_calls[pair.expected].name.clone(),
            free,
        )
    })
}
