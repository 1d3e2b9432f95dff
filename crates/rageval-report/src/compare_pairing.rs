//! Which samples of two runs are the same question, and how the two datasets differ on them.
//!
//! Two versions of a system (seed S4's V1.0 and V1.1) are evaluated on two collected
//! datasets: the same questions, with different contexts and answers, so the dataset hashes
//! always differ. Samples are paired by id first; where both datasets are at hand, an id pair
//! counts only when its two questions are the same text (white space collapsed), since a
//! renumbered dataset may give id 1 to another question. Samples left over are paired by
//! question text, in order of appearance when a question repeats. Without the datasets
//! (moved, changed or not readable), ids alone pair the samples.
//!
//! The overlap of two runs is `paired / |baseline ∪ candidate|` (1 when both hold the same
//! questions).

use std::collections::{HashMap, HashSet, VecDeque};

use rageval_core::Sample;
use serde::Serialize;

use crate::RunData;

/// One run's samples as pairing sees them: ids in journal order and, when its dataset was
/// read, each id's sample.
pub(crate) struct RunSamples<'a> {
    pub(crate) ids: Vec<&'a str>,
    by_id: HashMap<&'a str, &'a Sample>,
}

impl<'a> RunSamples<'a> {
    pub(crate) fn new(run: &'a RunData, samples: &'a [Sample]) -> Self {
        Self {
            ids: run.sample_ids(),
            ..Self::of_samples(samples)
        }
    }

    /// A dataset's samples alone, in its order (`pairwise` reads datasets, not runs).
    fn of_samples(samples: &'a [Sample]) -> Self {
        Self {
            ids: samples.iter().map(|s| s.id.as_str()).collect(),
            by_id: samples.iter().map(|s| (s.id.as_str(), s)).collect(),
        }
    }

    /// Whether the dataset's samples are at hand.
    pub(crate) fn known(&self) -> bool {
        !self.by_id.is_empty()
    }

    fn sample(&self, id: &str) -> Option<&'a Sample> {
        self.by_id.get(id).copied()
    }

    fn question(&self, id: &str) -> Option<String> {
        self.sample(id).map(|s| normalised(&s.question))
    }

    /// The conversation sample `id` is a turn of, when the dataset says.
    pub(crate) fn conversation_of(&self, id: &str) -> Option<&'a str> {
        self.sample(id)?.conversation_id.as_deref()
    }

    /// The question of sample `id` as the dataset has it, white space collapsed.
    pub(crate) fn question_text(&self, id: &str) -> Option<String> {
        self.question(id)
    }
}

/// White space collapsed and trimmed: how two questions are compared.
fn normalised(question: &str) -> String {
    question.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How many paired questions differ between the two datasets, over the pairs whose samples
/// both datasets gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DataDifferences {
    /// Pairs whose two samples were compared.
    pub compared: usize,
    pub answers: usize,
    /// Different context texts or ids, or a different order.
    pub contexts: usize,
    /// Different reference answers: reference-based scores then measure against different
    /// references.
    pub references: usize,
}

/// How two runs' samples were paired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pairing {
    /// Questions in both runs.
    pub paired: usize,
    /// Of those, paired by a shared id.
    pub by_id: usize,
    /// Of those, paired by question text under different ids.
    pub by_question: usize,
    /// Ids in both runs that name different questions there.
    pub id_conflicts: usize,
    /// Baseline sample ids with no partner.
    pub only_baseline: Vec<String>,
    /// Candidate sample ids with no partner.
    pub only_candidate: Vec<String>,
    /// `paired / |baseline ∪ candidate|`.
    pub overlap: f64,
    /// Whether both runs' datasets were read, so questions could be compared.
    pub questions_known: bool,
    /// Whether both manifests name the same dataset hash.
    pub same_dataset: bool,
    /// How the paired samples differ (`null` unless both datasets were read).
    pub differences: Option<DataDifferences>,
    /// (baseline id, candidate id), in baseline journal order.
    #[serde(skip)]
    pub(crate) pairs: Vec<(String, String)>,
}

impl Pairing {
    /// (baseline id, candidate id) of every pair, in baseline order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

/// Pairs two datasets' samples as [`crate::Comparison`] pairs two runs' (by id, then by
/// question text): `pairwise`'s versions.
pub fn pair_datasets(baseline: &[Sample], candidate: &[Sample]) -> Pairing {
    pair_samples(
        &RunSamples::of_samples(baseline),
        &RunSamples::of_samples(candidate),
        false,
    )
}

/// Pairs `baseline`'s samples with `candidate`'s.
pub(crate) fn pair_samples(
    baseline: &RunSamples<'_>,
    candidate: &RunSamples<'_>,
    same_dataset: bool,
) -> Pairing {
    let candidate_ids: HashSet<&str> = candidate.ids.iter().copied().collect();
    let mut pairs: Vec<(usize, &str, &str)> = Vec::new();
    let mut taken: HashSet<&str> = HashSet::new();
    let mut id_conflicts = 0;
    for (position, &id) in baseline.ids.iter().enumerate() {
        if !candidate_ids.contains(id) {
            continue;
        }
        match (baseline.question(id), candidate.question(id)) {
            (Some(a), Some(b)) if a != b => id_conflicts += 1,
            _ => {
                pairs.push((position, id, id));
                taken.insert(id);
            }
        }
    }
    let by_id = pairs.len();
    let mut waiting: HashMap<String, VecDeque<&str>> = HashMap::new();
    for &id in &candidate.ids {
        if taken.contains(id) {
            continue;
        }
        if let Some(question) = candidate.question(id) {
            waiting.entry(question).or_default().push_back(id);
        }
    }
    let paired_baseline: HashSet<&str> = pairs.iter().map(|p| p.1).collect();
    for (position, &id) in baseline.ids.iter().enumerate() {
        if paired_baseline.contains(id) {
            continue;
        }
        let partner = baseline
            .question(id)
            .and_then(|question| waiting.get_mut(&question)?.pop_front());
        if let Some(partner) = partner {
            pairs.push((position, id, partner));
            taken.insert(partner);
        }
    }
    pairs.sort_by_key(|p| p.0);
    let paired_baseline: HashSet<&str> = pairs.iter().map(|p| p.1).collect();
    let only_baseline: Vec<String> = baseline
        .ids
        .iter()
        .filter(|id| !paired_baseline.contains(*id))
        .map(|id| id.to_string())
        .collect();
    let only_candidate: Vec<String> = candidate
        .ids
        .iter()
        .filter(|id| !taken.contains(*id))
        .map(|id| id.to_string())
        .collect();
    let union = baseline.ids.len() + candidate.ids.len() - pairs.len();
    let questions_known = baseline.known() && candidate.known();
    let differences = questions_known.then(|| differences(baseline, candidate, &pairs));
    Pairing {
        paired: pairs.len(),
        by_id,
        by_question: pairs.len() - by_id,
        id_conflicts,
        only_baseline,
        only_candidate,
        overlap: if union == 0 {
            0.0
        } else {
            pairs.len() as f64 / union as f64
        },
        questions_known,
        same_dataset,
        differences,
        pairs: pairs
            .into_iter()
            .map(|(_, a, b)| (a.to_string(), b.to_string()))
            .collect(),
    }
}

fn differences(
    baseline: &RunSamples<'_>,
    candidate: &RunSamples<'_>,
    pairs: &[(usize, &str, &str)],
) -> DataDifferences {
    let mut counts = DataDifferences {
        compared: 0,
        answers: 0,
        contexts: 0,
        references: 0,
    };
    for &(_, a, b) in pairs {
        let (Some(a), Some(b)) = (baseline.sample(a), candidate.sample(b)) else {
            continue;
        };
        counts.compared += 1;
        counts.answers += usize::from(a.answer != b.answer);
        counts.contexts += usize::from(a.contexts != b.contexts);
        counts.references += usize::from(a.references != b.references);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use rageval_core::{Context, Outcome};

    fn run(dir: &std::path::Path, name: &str, ids: &[&str]) -> RunData {
        let path = dir.join(name);
        let results: Vec<(&str, &str, Outcome)> = ids
            .iter()
            .map(|id| (*id, "m", Outcome::bare(0.5)))
            .collect();
        write_run(&path, name, &results);
        RunData::load(&path).unwrap()
    }

    fn sample(id: &str, question: &str, answer: &str) -> Sample {
        Sample {
            id: id.into(),
            question: question.into(),
            answer: Some(answer.into()),
            contexts: vec![Context::text(format!("context for {answer}"))],
            references: vec!["the same reference".into()],
            ..Sample::default()
        }
    }

    #[test]
    fn ids_pair_first_then_questions_where_ids_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = run(dir.path(), "a", &["1", "2", "3", "4"]);
        let b = run(dir.path(), "b", &["1", "2", "x", "y"]);
        let a_samples = vec![
            sample("1", "q one", "a1"),
            sample("2", "q two", "a2"),
            sample("3", "q three", "a3"),
            sample("4", "q four", "a4"),
        ];
        let b_samples = vec![
            sample("1", "q  one ", "a1"),
            // Id 2 names another question here: a renumbered dataset.
            sample("2", "q three", "b3"),
            sample("x", "q two", "b2"),
            sample("y", "q five", "b5"),
        ];
        let pairing = pair_samples(
            &RunSamples::new(&a, &a_samples),
            &RunSamples::new(&b, &b_samples),
            false,
        );
        assert_eq!(
            pairing.pairs,
            [("1", "1"), ("2", "x"), ("3", "2")].map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!((pairing.by_id, pairing.by_question), (1, 2));
        assert_eq!(pairing.id_conflicts, 1);
        assert_eq!(pairing.only_baseline, vec!["4"]);
        assert_eq!(pairing.only_candidate, vec!["y"]);
        assert!((pairing.overlap - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(
            pairing.differences,
            Some(DataDifferences {
                compared: 3,
                answers: 2,
                contexts: 2,
                references: 0
            })
        );

        // Without the datasets, ids alone pair.
        let blind = pair_samples(&RunSamples::new(&a, &[]), &RunSamples::new(&b, &[]), false);
        assert_eq!((blind.paired, blind.by_id, blind.id_conflicts), (2, 2, 0));
        assert!(!blind.questions_known && blind.differences.is_none());
    }

    #[test]
    fn a_repeated_question_pairs_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = run(dir.path(), "a", &["1", "2"]);
        let b = run(dir.path(), "b", &["p", "q"]);
        let same = |id: &str| sample(id, "same question", id);
        let pairing = pair_samples(
            &RunSamples::new(&a, &[same("1"), same("2")]),
            &RunSamples::new(&b, &[same("p"), same("q")]),
            false,
        );
        assert_eq!(
            pairing.pairs,
            [("1", "p"), ("2", "q")].map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!(pairing.overlap, 1.0);
    }
}
