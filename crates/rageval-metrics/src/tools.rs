//! Tool calls against the expected ones, without a model: did the system pick the right
//! tools (`tool_selection`), and did it give them the right arguments
//! (`tool_argument_correctness`)?
//!
//! Each expected call is paired with at most one call made, of the same tool. In the order
//! the data gives (`tool_call_order: in_order`, the default, as ragas's `strict_order`) the
//! pairs must keep both lists' order (the longest common subsequence of tool names); in any
//! order they need not. Among pairings with the most pairs, the one whose arguments agree
//! most is taken. A sample without expected calls is undefined.
//!
//! Arguments are compared key by key: a call's argument score is the share of the keys of
//! either call whose values are equal (1 when neither call has arguments). Key order never
//! matters (JSON objects are unordered). `exact` compares values as JSON; `normalised` (the
//! default) also takes strings trimmed, case-folded and with runs of white space as one,
//! numbers by value, and a string holding a number as that number.

use rageval_core::conversation::ToolCall;
use rageval_core::{Evidence, Outcome, Sample, ToolCallOrder};
use serde_json::{Map, Value, json};

use crate::metric::{MetricInfo, ModelFree, with_inputs};

/// Which tool-call figure a [`Tools`] metric gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// F1 of paired calls: 2 · pairs ÷ (expected + made).
    Selection,
    /// Mean argument score over the paired calls.
    Arguments(ArgumentMatch),
}

/// How argument values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentMatch {
    Normalised,
    Exact,
}

/// A tool-call metric from the catalogue, in one of its modes.
pub struct Tools {
    info: &'static MetricInfo,
    /// Index into `info.modes` (0 when it has none).
    mode: usize,
    kind: ToolKind,
}

impl Tools {
    pub fn new(info: &'static MetricInfo, mode: usize, kind: ToolKind) -> Self {
        Self { info, mode, kind }
    }
}

impl ModelFree for Tools {
    fn info(&self) -> &'static MetricInfo {
        self.info
    }

    fn mode(&self) -> usize {
        self.mode
    }

    fn score(&self, sample: &Sample) -> Outcome {
        with_inputs(self.info, sample, || score_tools(self.kind, sample))
    }
}

fn score_tools(kind: ToolKind, sample: &Sample) -> Outcome {
    let matching = match kind {
        ToolKind::Arguments(matching) => matching,
        ToolKind::Selection => ArgumentMatch::Normalised,
    };
    let pairs = pair(
        &sample.reference_tool_calls,
        &sample.tool_calls,
        sample.tool_call_order,
        matching,
    );
    let calls = pairs
        .iter()
        .map(|p| pair_details(sample, p, p.arguments, Vec::new()))
        .collect();
    let details = call_details(sample, calls);
    match kind {
        ToolKind::Selection => {
            let calls = sample.reference_tool_calls.len() + sample.tool_calls.len();
            Outcome::score(
                2.0 * pairs.len() as f64 / calls as f64,
                Evidence {
                    verdicts: Vec::new(),
                    details,
                },
            )
        }
        ToolKind::Arguments(_) => {
            mean_over_pairs(pairs.iter().map(|p| p.arguments).collect(), details)
        }
    }
}

/// The evidence every tool-call metric gives: the counts of calls expected, made and
/// paired, the order rule, and one entry per pair (`pairs`).
pub(crate) fn call_details(sample: &Sample, pairs: Vec<Value>) -> Map<String, Value> {
    let mut details = Map::new();
    details.insert(
        "expected_calls".into(),
        json!(sample.reference_tool_calls.len()),
    );
    details.insert("made_calls".into(), json!(sample.tool_calls.len()));
    details.insert("paired_calls".into(), json!(pairs.len()));
    details.insert("order".into(), json!(sample.tool_call_order.name()));
    details.insert("pairs".into(), Value::Array(pairs));
    details
}

/// One pair's entry in the evidence: which calls, the tool, its argument score and, where
/// given, each argument's verdict.
pub(crate) fn pair_details(
    sample: &Sample,
    pair: &Pair,
    score: f64,
    arguments: Vec<Value>,
) -> Value {
    let mut entry = json!({"expected": pair.expected, "made": pair.made,
        "tool": sample.reference_tool_calls[pair.expected].name, "argument_score": score});
    if !arguments.is_empty() {
        entry["arguments"] = Value::Array(arguments);
    }
    entry
}

/// Argument correctness from each pair's score: their mean, undefined when nothing paired.
pub(crate) fn mean_over_pairs(scores: Vec<f64>, details: Map<String, Value>) -> Outcome {
    if scores.is_empty() {
        return Outcome::undefined("no expected tool was called, so no arguments to compare");
    }
    let total: f64 = scores.iter().sum();
    Outcome::score(
        total / scores.len() as f64,
        Evidence {
            verdicts: Vec::new(),
            details,
        },
    )
}

/// The pairing of a sample's calls as `tool_selection` and the normalised argument score
/// make it (what the judged argument metric reuses).
pub(crate) fn paired(sample: &Sample) -> Vec<Pair> {
    pair(
        &sample.reference_tool_calls,
        &sample.tool_calls,
        sample.tool_call_order,
        ArgumentMatch::Normalised,
    )
}

/// An expected call (index) paired with a call made (index), and their argument score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    pub(crate) expected: usize,
    pub(crate) made: usize,
    pub(crate) arguments: f64,
}

/// The pairing of expected with made calls of the same tool (see the module doc).
fn pair(
    expected: &[ToolCall],
    made: &[ToolCall],
    order: ToolCallOrder,
    matching: ArgumentMatch,
) -> Vec<Pair> {
    let score = |e: usize, m: usize| {
        (expected[e].name == made[m].name)
            .then(|| arguments(&expected[e].arguments, &made[m].arguments, matching))
    };
    match order {
        ToolCallOrder::AnyOrder => {
            let mut taken = vec![false; made.len()];
            let mut pairs = Vec::new();
            for e in 0..expected.len() {
                let best = (0..made.len())
                    .filter(|&m| !taken[m])
                    .filter_map(|m| score(e, m).map(|s| (m, s)))
                    .fold(None, |best: Option<(usize, f64)>, (m, s)| match best {
                        Some((_, b)) if b >= s => best,
                        _ => Some((m, s)),
                    });
                if let Some((m, arguments)) = best {
                    taken[m] = true;
                    pairs.push(Pair {
                        expected: e,
                        made: m,
                        arguments,
                    });
                }
            }
            pairs
        }
        ToolCallOrder::InOrder => in_order(expected.len(), made.len(), score),
    }
}

/// The order-keeping pairing with the most pairs, then the highest argument total: the
/// longest common subsequence by tool name, weighted.
fn in_order(n: usize, m: usize, score: impl Fn(usize, usize) -> Option<f64>) -> Vec<Pair> {
    // best[i][j]: (pairs, argument total) over expected[i..] and made[j..].
    let mut best = vec![vec![(0usize, 0.0f64); m + 1]; n + 1];
    let better = |a: (usize, f64), b: (usize, f64)| a.0 > b.0 || (a.0 == b.0 && a.1 > b.1);
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let mut cell = best[i + 1][j];
            if better(best[i][j + 1], cell) {
                cell = best[i][j + 1];
            }
            if let Some(s) = score(i, j) {
                let taken = (best[i + 1][j + 1].0 + 1, best[i + 1][j + 1].1 + s);
                if better(taken, cell) {
                    cell = taken;
                }
            }
            best[i][j] = cell;
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        match score(i, j) {
            Some(s) if best[i][j] == (best[i + 1][j + 1].0 + 1, best[i + 1][j + 1].1 + s) => {
                pairs.push(Pair {
                    expected: i,
                    made: j,
                    arguments: s,
                });
                (i, j) = (i + 1, j + 1);
            }
            _ if best[i][j] == best[i + 1][j] => i += 1,
            _ => j += 1,
        }
    }
    pairs
}

/// The share of the keys of either call whose values agree; 1 when neither has arguments.
fn arguments(
    expected: &Map<String, Value>,
    made: &Map<String, Value>,
    matching: ArgumentMatch,
) -> f64 {
    let keys = argument_keys(expected, made);
    if keys.is_empty() {
        return 1.0;
    }
    let equal = keys
        .iter()
        .filter(|key| {
            let (a, b) = (expected.get(key.as_str()), made.get(key.as_str()));
            compare(a, b, matching) == Compared::Equal
        })
        .count();
    equal as f64 / keys.len() as f64
}

/// The argument names of either call, sorted, each once.
pub(crate) fn argument_keys<'a>(
    expected: &'a Map<String, Value>,
    made: &'a Map<String, Value>,
) -> Vec<&'a String> {
    let mut keys: Vec<&String> = expected.keys().chain(made.keys()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// How one argument of a pair compares without a judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compared<'a> {
    /// Equal under the matching.
    Equal,
    /// Both calls give it as text, unequal: a judge may still find the two mean the same.
    FreeText { expected: &'a str, made: &'a str },
    /// Unequal and not both text, or given by one call only: why.
    Unequal(&'static str),
}

/// How the values of one argument (absent from a call: `None`) compare under `matching`.
pub(crate) fn compare<'a>(
    expected: Option<&'a Value>,
    made: Option<&'a Value>,
    matching: ArgumentMatch,
) -> Compared<'a> {
    match (expected, made) {
        (Some(a), Some(b)) if same(a, b, matching) => Compared::Equal,
        (Some(Value::String(a)), Some(Value::String(b))) => Compared::FreeText {
            expected: a,
            made: b,
        },
        (Some(_), Some(_)) => Compared::Unequal("the values differ"),
        (Some(_), None) => Compared::Unequal("only the expected call gives it"),
        (None, _) => Compared::Unequal("only the call made gives it"),
    }
}

/// Whether two argument values agree under `matching`.
fn same(a: &Value, b: &Value, matching: ArgumentMatch) -> bool {
    match matching {
        ArgumentMatch::Exact => a == b,
        ArgumentMatch::Normalised => normalised(a) == normalised(b),
    }
}

/// A value as [`ArgumentMatch::Normalised`] compares it.
fn normalised(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            let text = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            match text.parse::<f64>() {
                Ok(number) if number.is_finite() => json!(number),
                _ => Value::String(text),
            }
        }
        Value::Number(number) => number.as_f64().map_or_else(|| value.clone(), |n| json!(n)),
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| (k.clone(), normalised(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        ToolCall::new(name, arguments)
    }

    fn sample(expected: Vec<ToolCall>, made: Vec<ToolCall>, order: ToolCallOrder) -> Sample {
        Sample {
            reference_tool_calls: expected,
            tool_calls: made,
            tool_call_order: order,
            ..Sample::default()
        }
    }

    fn value(outcome: &Outcome) -> f64 {
        match outcome {
            Outcome::Score { value, .. } => *value,
            other => panic!("expected a score, got {other:?}"),
        }
    }

    const NORMALISED: ToolKind = ToolKind::Arguments(ArgumentMatch::Normalised);
    const EXACT: ToolKind = ToolKind::Arguments(ArgumentMatch::Exact);

    /// Six calls made against four expected:
    /// - A1 weather_check {location: "new york "}: the right tool, its argument equal only
    ///   once normalised (exact 0/1, normalised 1/1);
    /// - A2 temperature_conversion with its two arguments reordered: 2/2 either way;
    /// - A3 search_flights {from: JFK, to: OPO}: a wrong argument, 1/2;
    /// - A4 book_car where book_hotel was expected: the wrong tool, unpaired;
    /// - A5 a second weather_check and A6 get_time: extra calls, unpaired (A1's arguments
    ///   agree better than A5's, so A1 is the pair).
    ///
    /// tool_selection = 2 · 3 pairs ÷ (4 expected + 6 made) = 0.6 in either order (the
    /// pairs keep both orders); argument correctness = (1 + 1 + 0.5) ÷ 3 = 0.8333
    /// normalised, (0 + 1 + 0.5) ÷ 3 = 0.5 exact.
    #[test]
    fn six_calls_hand_worked() {
        let expected = vec![
            call("weather_check", json!({"location": "New York"})),
            call(
                "temperature_conversion",
                json!({"temperature_fahrenheit": 75, "unit": "C"}),
            ),
            call("search_flights", json!({"from": "JFK", "to": "LIS"})),
            call("book_hotel", json!({"city": "Lisbon", "nights": 3})),
        ];
        let made = vec![
            call("weather_check", json!({"location": "new york "})),
            call(
                "temperature_conversion",
                json!({"unit": "C", "temperature_fahrenheit": 75}),
            ),
            call("search_flights", json!({"from": "JFK", "to": "OPO"})),
            call("book_car", json!({"city": "Lisbon"})),
            call("weather_check", json!({"location": "Boston"})),
            call("get_time", json!({})),
        ];
        for order in [ToolCallOrder::InOrder, ToolCallOrder::AnyOrder] {
            let s = sample(expected.clone(), made.clone(), order);
            assert_eq!(value(&score_tools(ToolKind::Selection, &s)), 0.6);
            assert!((value(&score_tools(NORMALISED, &s)) - 2.5 / 3.0).abs() < 1e-12);
            assert_eq!(value(&score_tools(EXACT, &s)), 0.5);
        }
    }

    /// Two calls swapped: in order only one pair keeps both orders, 2 · 2 ÷ (3 + 3) = 0.6667;
    /// in any order all three pair, 1.
    #[test]
    fn swapped_calls_count_only_in_any_order() {
        let expected = vec![
            call("a", json!({})),
            call("b", json!({})),
            call("c", json!({})),
        ];
        let made = vec![
            call("b", json!({})),
            call("a", json!({})),
            call("c", json!({})),
        ];
        let strict = sample(expected.clone(), made.clone(), ToolCallOrder::InOrder);
        assert!((value(&score_tools(ToolKind::Selection, &strict)) - 2.0 / 3.0).abs() < 1e-12);
        let any = sample(expected, made, ToolCallOrder::AnyOrder);
        assert_eq!(value(&score_tools(ToolKind::Selection, &any)), 1.0);
    }

    #[test]
    fn no_call_made_scores_zero_and_leaves_arguments_undefined() {
        let s = sample(
            vec![call("a", json!({}))],
            Vec::new(),
            ToolCallOrder::InOrder,
        );
        assert_eq!(value(&score_tools(ToolKind::Selection, &s)), 0.0);
        assert!(matches!(
            score_tools(NORMALISED, &s),
            Outcome::Undefined { .. }
        ));
    }

    #[test]
    fn normalising_folds_case_space_and_numbers() {
        let n = ArgumentMatch::Normalised;
        assert!(same(
            &json!(" Lisbon  Portela"),
            &json!("lisbon portela"),
            n
        ));
        assert!(same(&json!(75), &json!(75.0), n));
        assert!(same(&json!("75"), &json!(75), n));
        assert!(!same(&json!("75"), &json!(75), ArgumentMatch::Exact));
        assert!(!same(&json!("Lisbon"), &json!("Porto"), n));
    }
}
