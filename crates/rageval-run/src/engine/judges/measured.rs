//! How well the judges were measured to agree with people, as the judge lines and the
//! default metric choice use it: who answers each task a metric asks with the figures
//! measured for it ([`JudgeSetup::metric_judges`]), and whether every verdict task's judge
//! is above chance on a script ([`JudgeSetup::agreement_above_chance`]).

use rageval_tasks::{Answerer, Lang, TaskJudge};

use super::JudgeSetup;

impl JudgeSetup {
    /// Who answers each task `metric` asks, with the figures measured for that
    /// implementation in the metric's setting (`rageval_metrics::measured_for`): the
    /// manifest's `metrics[].judges`, which the reports show beside the metric's score.
    pub fn metric_judges(
        &self,
        metric: &dyn rageval_metrics::Metric,
    ) -> Vec<rageval_report::TaskJudgeRecord> {
        // The embedders, by the text they embed: a score of Chinese text can come from
        // another model than one of English text, and the record says which.
        let requirements = metric.requirements();
        let embedders = if requirements.embeddings {
            self.judges.embedders()
        } else {
            Vec::new()
        };
        let embedders =
            embedders
                .into_iter()
                .map(|(text, model)| rageval_report::TaskJudgeRecord {
                    task: format!("embeddings of {text}"),
                    answered_by: format!("embedder {model}"),
                    measured: Vec::new(),
                });
        let Some(tasks) = self.judges.tasks() else {
            return embedders.collect();
        };
        let routes = tasks.describe();
        let judged = requirements
            .tasks
            .iter()
            .filter_map(|task| routes.iter().find(|route| route.task == *task))
            .map(|route| rageval_report::TaskJudgeRecord {
                task: route.task.to_string(),
                answered_by: route.who(),
                measured: rageval_metrics::measured_for(metric, route.measured.clone())
                    .into_iter()
                    .map(|m| rageval_report::MeasuredFigure {
                        dataset: m.dataset,
                        measure: m.measure,
                        value: m.value,
                        count: m.count,
                        unit: m.unit,
                        kind: m.kind,
                    })
                    .collect(),
            });
        judged.chain(embedders).collect()
    }

    /// Whether the judge behind every verdict task of `metric` has measured agreement above
    /// chance on text of `lang`'s script, counting only the figures that speak for this
    /// metric (`rageval_metrics::measured_for`, the rule the reports' judge lines use):
    /// `Ok(())`, or why not. A task answered by a model has no figures here (`rageval
    /// judge-check` measures it), so it is unmeasured.
    pub fn agreement_above_chance(
        &self,
        metric: &dyn rageval_metrics::Metric,
        lang: Lang,
    ) -> Result<(), String> {
        let routes = self
            .judges
            .tasks()
            .map(TaskJudge::describe)
            .unwrap_or_default();
        for task in &metric.requirements().tasks {
            if task.family() != rageval_tasks::TaskFamily::Verdict {
                continue;
            }
            let Some(route) = routes.iter().find(|r| r.task == *task) else {
                continue;
            };
            let figures: Vec<_> = rageval_metrics::measured_for(metric, route.measured.clone())
                .into_iter()
                .filter(|m| measured_script(&m.dataset) == lang)
                .collect();
            if figures.is_empty() {
                return Err(match &route.answered_by {
                    // A checker's figures are judge-check's to measure; none are published.
                    Some(Answerer::Checker(_)) => format!(
                        "{task} by {}: agreement with people unmeasured",
                        route.who()
                    ),
                    _ => format!("{task}: agreement with people unmeasured for this metric"),
                });
            }
            if let Some(chance) = figures.iter().find(|m| !above_chance(m.value, m.count)) {
                return Err(format!("{task}: {chance}, at chance"));
            }
        }
        Ok(())
    }
}

/// The script a measured figure was taken on: `(zh script` or `(en script` in its data
/// set's name, else English (WikiEval, Cranfield).
fn measured_script(dataset: &str) -> Lang {
    if dataset.contains("(zh script") {
        Lang::Zh
    } else {
        Lang::En
    }
}

/// Whether an accuracy-like figure `value` over `count` items is above chance (0.5): the
/// lower end of its 95% Wilson interval is.
pub fn above_chance(value: f64, count: usize) -> bool {
    rageval_core::stats::wilson(value, count).is_some_and(|interval| interval.low > 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wilson lower bounds worked by hand: 10/10 → 0.722; 0.86 of 52 → 0.737; 0.50 of 514
    /// → 0.457; 0.52 of 3,844 pairs → 0.504.
    #[test]
    fn above_chance_means_the_interval_clears_one_half() {
        assert!(above_chance(1.0, 10));
        assert!(above_chance(0.86, 52));
        assert!(!above_chance(0.50, 514));
        assert!(above_chance(0.52, 3_844));
        assert!(!above_chance(0.7, 5));
        assert!(!above_chance(0.9, 0));
    }

    #[test]
    fn figures_name_their_script() {
        assert_eq!(
            measured_script("RGB zh refine (zh script, held-out)"),
            Lang::Zh
        );
        assert_eq!(
            measured_script("UHGEval zh (en script, held-out)"),
            Lang::En
        );
        assert_eq!(measured_script("WikiEval"), Lang::En);
    }
}
