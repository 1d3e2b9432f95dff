//! The evaluation driver: which topics are evaluated, in what order, and how per-topic values
//! become the summary.
//!
//! Topics are walked in qrels order (qid, bytewise). A topic only in the run is ignored. A
//! topic only in the qrels is skipped, unless `-c` is set: then it is evaluated against
//! trec_eval 10's placeholder ranking (one unpooled document) with `num_ret`, `utility`, `unj`
//! and `rbp_resid` reset to 0, so it scores 0 and still counts in `num_q` and every mean
//! (and, as in trec_eval, `num_rel` in the summary counts every positive judgment).
//! (trec_eval 10.0-rc3 exits with an error for such a topic without `-c`; its help text and
//! pytrec_eval skip it, and so do we.) Formulas live in `compute.rs` and `gain.rs`.

use super::compute::{MIN_GEO_MEAN, compute};
use super::error::TrecError;
use super::judge::{Judge, JudgedQuery, NONPOOL};
use super::measures::{Measure, Selection};
use super::qrels::{Qrels, QrelsTopic};
use super::report::{Column, ColumnKind, QueryRow, TrecReport};
use super::run::Run;

/// What to compute, mirroring trec_eval's command line.
#[derive(Debug, Clone, PartialEq)]
pub struct TrecOptions {
    /// Measures as given to `-m`: names, nicknames (`official`, `all_trec`, `set`) and
    /// parameters (`P.5,10`, `ndcg_cut.10`). Empty means `official`.
    pub measures: Vec<String>,
    /// `-q`: also print one block of lines per topic.
    pub per_query: bool,
    /// `-c`: average over every qrels topic, scoring topics without results as 0.
    pub complete: bool,
    /// `-l`: the lowest relevance value that counts as relevant for binary measures.
    pub rel_level: i64,
    /// `-M`: keep only the top N documents of each topic after sorting.
    pub max_docs: Option<usize>,
}

impl Default for TrecOptions {
    fn default() -> Self {
        Self {
            measures: Vec::new(),
            per_query: false,
            complete: false,
            rel_level: 1,
            max_docs: None,
        }
    }
}

/// Evaluate `run` against `qrels` the way trec_eval does.
pub fn evaluate(qrels: &Qrels, run: &Run, options: &TrecOptions) -> Result<TrecReport, TrecError> {
    evaluate_named(qrels, run, options, "the qrels", "the run")
}

/// [`evaluate`], naming the inputs (for instance by path) in error messages.
pub fn evaluate_named(
    qrels: &Qrels,
    run: &Run,
    options: &TrecOptions,
    qrels_name: &str,
    run_name: &str,
) -> Result<TrecReport, TrecError> {
    let selection = Selection::parse(&options.measures)?;
    let columns = columns(&selection);
    let topics = qrels.topics();
    // Topics are independent: on large inputs, evaluate contiguous slices on scoped threads
    // and concatenate, which keeps qid order and the summation order of the summary.
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(topics.len() / MIN_TOPICS_PER_THREAD)
        .max(1);
    let chunk = topics.len().div_ceil(threads).max(1);
    let evaluate_slice = |slice: &[QrelsTopic]| {
        evaluate_topics(slice, qrels, run, options, &selection, &columns, run_name)
    };
    let parts: Vec<Result<Vec<QueryRow>, TrecError>> = if threads == 1 {
        vec![evaluate_slice(topics)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = topics
                .chunks(chunk)
                .map(|slice| scope.spawn(move || evaluate_slice(slice)))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    };
    let mut queries = Vec::with_capacity(topics.len());
    for part in parts {
        queries.extend(part?);
    }
    if queries.is_empty() {
        return Err(TrecError::NoQueries {
            qrels: qrels_name.to_owned(),
            run: run_name.to_owned(),
        });
    }
    let mut summary = summarise(&columns, &queries);
    if options.complete {
        // With -c, trec_eval 10.0 reports as `num_rel` the judgments with a positive value in
        // the whole qrels, whatever `-l` says (see the `-c -l2` edge-case fixture).
        for (column, value) in columns.iter().zip(summary.iter_mut()) {
            if column.name == "num_rel" {
                *value = qrels.positive_judgments() as f64;
            }
        }
    }
    Ok(TrecReport {
        run_id: run.run_id().to_owned(),
        per_query: options.per_query,
        columns,
        queries,
        summary,
    })
}

/// Below this many topics per thread, threads cost more than they save.
const MIN_TOPICS_PER_THREAD: usize = 512;

/// Evaluate a slice of qrels topics, in order.
fn evaluate_topics(
    topics: &[QrelsTopic],
    qrels: &Qrels,
    run: &Run,
    options: &TrecOptions,
    selection: &Selection,
    columns: &[Column],
    run_name: &str,
) -> Result<Vec<QueryRow>, TrecError> {
    let mut judge = Judge::default();
    let mut queries = Vec::with_capacity(topics.len());
    for topic in topics {
        let (judged, placeholder) = match run.topic(&topic.qid) {
            Some(ranked) => {
                let judged = judge.judge(run, &ranked.entries, qrels, topic, options, run_name)?;
                (judged, false)
            }
            None if options.complete => {
                let judged =
                    JudgedQuery::new(vec![NONPOOL], topic.level_counts(), options.rel_level);
                (judged, true)
            }
            None => continue,
        };
        let mut values = Vec::with_capacity(columns.len());
        let mut relstring = None;
        for selected in &selection.measures {
            compute(selected, &judged, &mut values, &mut relstring);
        }
        if placeholder {
            reset_placeholder(columns, &mut values, &mut relstring);
        }
        queries.push(QueryRow {
            qid: topic.qid.clone(),
            values,
            relstring,
        });
    }
    Ok(queries)
}

/// trec_eval 10 resets some values computed on its placeholder ranking, matching them by
/// printed name: so `utility` is reset but `utility_2,-1,0,0` is not, and `relstring` is
/// emptied but `relstring_5` keeps the placeholder's `-`. We follow it to the byte.
fn reset_placeholder(columns: &[Column], values: &mut [f64], relstring: &mut Option<String>) {
    for (column, value) in columns.iter().zip(values.iter_mut()) {
        let name = column.name.as_str();
        if matches!(name, "num_ret" | "utility" | "rbp_resid") || name.starts_with("unj") {
            *value = 0.0;
        }
        if name == "relstring" {
            *relstring = Some(String::new());
        }
    }
}

fn columns(selection: &Selection) -> Vec<Column> {
    let mut columns = Vec::new();
    for selected in &selection.measures {
        let kind = match selected.measure {
            Measure::RunId => ColumnKind::RunId,
            Measure::NumQ => ColumnKind::NumQ,
            Measure::NumRet
            | Measure::NumRel
            | Measure::NumRelRet
            | Measure::NumNonrelJudgedRet => ColumnKind::Count,
            Measure::GmMap | Measure::GmBpref => ColumnKind::GeoMean,
            Measure::Relstring => ColumnKind::Text,
            _ => ColumnKind::Mean,
        };
        columns.extend(selected.names.iter().map(|name| Column {
            name: name.clone(),
            kind,
        }));
    }
    columns
}

/// Sums in topic order then divides, like trec_eval, so the last digit agrees.
fn summarise(columns: &[Column], queries: &[QueryRow]) -> Vec<f64> {
    let count = queries.len() as f64;
    columns
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let values = queries.iter().map(|query| query.values[index]);
            match column.kind {
                ColumnKind::RunId | ColumnKind::Text => 0.0,
                ColumnKind::NumQ => count,
                ColumnKind::Count => total(values),
                ColumnKind::Mean => total(values) / count,
                ColumnKind::GeoMean => {
                    (total(values.map(|value| value.max(MIN_GEO_MEAN).ln())) / count).exp()
                }
            }
        })
        .collect()
}

/// A sum starting from +0.0 (`Sum for f64` starts from -0.0, which prints as "-0.0000").
fn total(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |sum, value| sum + value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(qrels: &str, run: &str, options: &TrecOptions) -> Result<TrecReport, TrecError> {
        let qrels = Qrels::parse(qrels.as_bytes(), "q")?;
        let run = Run::parse(run.as_bytes(), "r")?;
        evaluate(&qrels, &run, options)
    }

    const QRELS: &str = "a 0 d1 1\na 0 d2 0\nb 0 e1 1\n";
    const RUN: &str = "a Q0 d1 1 0.9 sys\na Q0 d2 2 0.1 sys\nz Q0 x 1 1 sys\n";

    #[test]
    fn topics_without_results_are_skipped_or_zeroed() {
        let options = TrecOptions {
            measures: vec!["num_q".into(), "map".into(), "num_ret".into()],
            ..TrecOptions::default()
        };
        let skipped = report(QRELS, RUN, &options).unwrap();
        assert_eq!(skipped.summary("num_q"), Some(1.0));
        assert_eq!(skipped.summary("map"), Some(1.0));
        let complete = TrecOptions {
            complete: true,
            ..options
        };
        let zeroed = report(QRELS, RUN, &complete).unwrap();
        assert_eq!(zeroed.summary("num_q"), Some(2.0));
        assert_eq!(zeroed.summary("map"), Some(0.5));
        assert_eq!(zeroed.query_value("b", "num_ret"), Some(0.0));
    }

    #[test]
    fn geometric_mean_floors_zero() {
        let options = TrecOptions {
            measures: vec!["gm_map".into()],
            complete: true,
            ..TrecOptions::default()
        };
        let value = report(QRELS, RUN, &options)
            .unwrap()
            .summary("gm_map")
            .unwrap();
        assert!((value - (MIN_GEO_MEAN.ln() / 2.0).exp()).abs() < 1e-15);
    }

    #[test]
    fn many_topics_keep_qid_order_and_values() {
        let mut qrels = String::new();
        let mut run = String::new();
        for topic in 0..3000 {
            qrels.push_str(&format!("t{topic:04} 0 rel 1\nt{topic:04} 0 non 0\n"));
            // Odd topics rank the relevant document second.
            let (first, second) = if topic % 2 == 0 {
                ("rel", "non")
            } else {
                ("non", "rel")
            };
            run.push_str(&format!(
                "t{topic:04} Q0 {first} 1 2 r\nt{topic:04} Q0 {second} 2 1 r\n"
            ));
        }
        let options = TrecOptions {
            measures: vec!["map".into()],
            ..TrecOptions::default()
        };
        let report = report(&qrels, &run, &options).unwrap();
        let ids: Vec<&str> = report.query_ids().collect();
        assert_eq!(ids.len(), 3000);
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(report.query_value("t0001", "map"), Some(0.5));
        assert_eq!(report.summary("map"), Some(0.75));
    }

    #[test]
    fn topic_with_only_unjudged_documents_scores_zero() {
        // trec_eval reads uninitialised memory here; we give every measure 0.
        let options = TrecOptions {
            measures: vec!["all_trec".into()],
            ..TrecOptions::default()
        };
        let report = report("a 0 d1 -1\n", "a Q0 d1 1 1 r\n", &options).unwrap();
        assert_eq!(report.summary("ndcg"), Some(0.0));
        assert_eq!(report.summary("map"), Some(0.0));
    }

    #[test]
    fn no_common_topic_is_an_error() {
        let error = report("a 0 d 1\n", "b Q0 d 1 1 r\n", &TrecOptions::default()).unwrap_err();
        assert!(matches!(error, TrecError::NoQueries { .. }));
    }
}
