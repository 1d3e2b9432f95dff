//! The checker networks against the reference implementation: tiny random-weight models
//! (2 layers, hidden 32, seeded) made by `scripts/checker-fixtures.py` with torch 2.15.0,
//! transformers 5.24.0 and tokenizers 0.23.3 (the versions are also recorded in each
//! `reference.json`), loaded here by rageval's code from the same files. Token ids must be
//! equal and every logit within [`TOLERANCE`] of transformers'.

use std::path::PathBuf;

use rageval_judge::SupportChecker;
use rageval_judge::checker::{Family, Head};
use serde::Deserialize;

/// The greatest allowed difference of any one logit from the reference.
const TOLERANCE: f32 = 1e-4;

#[derive(Deserialize)]
struct Reference {
    made_by: String,
    versions: Versions,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Versions {
    torch: String,
    transformers: String,
    tokenizers: String,
}

#[derive(Deserialize)]
struct Case {
    first: String,
    second: String,
    ids: Vec<u32>,
    logits: Value2,
    /// Token heads: the argmax label of each answer token (`None` elsewhere).
    #[serde(default)]
    labels: Vec<Option<usize>>,
}

/// A token head's logits are a matrix, a sequence head's one row.
#[derive(Deserialize)]
#[serde(untagged)]
enum Value2 {
    Matrix(Vec<Vec<f32>>),
    Row(Vec<f32>),
}

impl Value2 {
    fn rows(&self) -> Vec<Vec<f32>> {
        match self {
            Value2::Matrix(rows) => rows.clone(),
            Value2::Row(row) => vec![row.clone()],
        }
    }
}

pub(crate) fn fixture(family: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/checkers/{family}"))
}

fn reference(family: &str) -> Reference {
    let text = std::fs::read_to_string(fixture(family).join("reference.json")).expect("fixture");
    let reference: Reference = serde_json::from_str(&text).expect("fixture is JSON");
    assert_eq!(reference.made_by, "scripts/checker-fixtures.py");
    assert_eq!(
        (
            reference.versions.torch.as_str(),
            reference.versions.transformers.as_str(),
            reference.versions.tokenizers.as_str()
        ),
        ("2.15.0+cu132", "5.24.0", "0.23.3"),
        "the fixtures were remade: update the versions named in this file's doc"
    );
    reference
}

/// Every case's ids and logits; returns the largest difference seen.
fn matches_reference(family: &str) -> f32 {
    let checker = SupportChecker::open(fixture(family)).unwrap_or_else(|e| panic!("{e}"));
    let mut largest = 0f32;
    for case in reference(family).cases {
        let ours = checker
            .pair_logits_blocking(&case.first, &case.second)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ours.ids, case.ids, "token ids of {:?}", case.second);
        let theirs = case.logits.rows();
        assert_eq!(ours.rows.len(), theirs.len());
        for (row, (a, b)) in ours.rows.iter().zip(&theirs).enumerate() {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                let difference = (x - y).abs();
                assert!(
                    difference <= TOLERANCE,
                    "{family}, {:?}, row {row}: {x} against transformers' {y}",
                    case.second
                );
                largest = largest.max(difference);
            }
        }
        for (row, label) in case.labels.iter().enumerate() {
            if let Some(label) = label {
                let argmax = ours.rows[row]
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(b.1))
                    .map(|(i, _)| i);
                assert_eq!(argmax, Some(*label), "{family}, token {row}");
            }
        }
    }
    largest
}

/// `fixture` matches the reference and opens as `family` with `head`.
fn matches_as(fixture_name: &str, family: Family, head: Head) -> SupportChecker {
    let largest = matches_reference(fixture_name);
    assert!(largest < TOLERANCE);
    let checker = SupportChecker::open(fixture(fixture_name)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((checker.family(), checker.head()), (family, head));
    checker
}

#[test]
fn modernbert_token_classification_matches_transformers() {
    matches_as("modernbert-tokens", Family::ModernBert, Head::Tokens);
}

#[test]
fn deberta_v2_sequence_classification_matches_transformers() {
    let checker = matches_as("deberta-v2-nli", Family::DebertaV2, Head::Sequence);
    assert_eq!(checker.spec().supported, 0, "entailment");
}

#[test]
fn xlm_roberta_sequence_classification_matches_transformers() {
    let checker = matches_as("xlm-roberta-nli", Family::XlmRoberta, Head::Sequence);
    // XNLI's label order: contradiction, neutral, entailment.
    assert_eq!(checker.spec().supported, 2, "entailment");
    // 514 positions, the first two never given to a token.
    assert_eq!(checker.spec().window, 512);
}

#[test]
fn t5_is_read_as_minicheck_reads_it() {
    // The reference holds the logits of the first tokens of "0" and "1" at the first
    // decoder step, for MiniCheck's prompt.
    let checker = matches_as("t5-minicheck", Family::T5, Head::Sequence);
    assert_eq!(checker.spec().labels, ["0", "1"]);
    assert_eq!(checker.spec().supported, 1);
}

/// Every committed fixture.
const FIXTURES: [&str; 4] = [
    "modernbert-tokens",
    "deberta-v2-nli",
    "xlm-roberta-nli",
    "t5-minicheck",
];

#[test]
fn the_reference_logits_are_not_trivial() {
    for family in FIXTURES {
        let spread = reference(family)
            .cases
            .iter()
            .flat_map(|case| case.logits.rows().into_iter().flatten())
            .fold(0f32, |m, x| m.max(x.abs()));
        assert!(
            spread > 100.0 * TOLERANCE,
            "{family}: logits up to {spread}"
        );
    }
}

#[tokio::test]
async fn a_claim_is_checked_over_windows_of_a_long_context() {
    let english = (
        "The river flows north through the valley before it reaches the sea. ",
        "Water boils at 100 degrees.",
        "Water boils at 90 degrees.",
    );
    // XLM-R's multilingual case: Chinese context and claim.
    let chinese = (
        "这条河向北流经山谷，然后流入大海。",
        "水在海平面的沸点是摄氏100度。",
        "水的沸点是摄氏90度。",
    );
    let cases = FIXTURES
        .map(|family| (family, english))
        .into_iter()
        .chain([("xlm-roberta-nli", chinese)]);
    for (family, (sentence, evidence, claim)) in cases {
        let checker = SupportChecker::open(fixture(family)).unwrap();
        // Far longer than the 512-token window: read in several windows.
        let contexts = vec![String::new(), sentence.repeat(60), evidence.to_owned()];
        let check = checker
            .check(&contexts, claim)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!((0.0..=1.0).contains(&check.support), "{family}: {check:?}");
        assert!(check.windows >= 3, "{family}: {check:?}");
        assert!(matches!(check.context, Some(1 | 2)), "{family}: {check:?}");
        if family != "modernbert-tokens" {
            assert!(check.unsupported_spans.is_empty());
        }
        for span in &check.unsupported_spans {
            assert!(claim.contains(span.as_str()), "{span}");
        }
    }
}

#[test]
fn the_weights_hash_names_the_model() {
    let checker = SupportChecker::open(fixture("deberta-v2-nli")).unwrap();
    assert_eq!(checker.sha256().len(), 64);
    let other = SupportChecker::open(fixture("modernbert-tokens")).unwrap();
    assert_ne!(checker.sha256(), other.sha256());
}

/// Speed per family, for BENCHMARKS.md rather than as a gate: ignored by default. Each
/// folder in `$RAGEVAL_CHECKER_BENCH` (`:`-separated; random-weight models of the published
/// shapes, made by `benches/checker/shapes.py`) reads one full window — about 500 tokens of
/// context and a claim — three times; prints the median time per 1,000 tokens read.
#[test]
#[ignore = "a measurement, not a gate: needs $RAGEVAL_CHECKER_BENCH"]
fn checker_speed() {
    let Ok(dirs) = std::env::var("RAGEVAL_CHECKER_BENCH") else {
        panic!("set RAGEVAL_CHECKER_BENCH to checker folders, `:`-separated");
    };
    let context = "The river flows north through the valley before it reaches the sea. ".repeat(80);
    let claim = "The river flows south through the valley.";
    for dir in dirs.split(':') {
        let checker = SupportChecker::open(dir).unwrap_or_else(|e| panic!("{e}"));
        let started = std::time::Instant::now();
        let _ = checker
            .pair_logits_blocking("load", claim)
            .unwrap_or_else(|e| panic!("{e}"));
        let load = started.elapsed().as_secs_f64();
        // One window: cut the context so that the pair fits the model's window.
        let mut words: Vec<&str> = context.split(' ').collect();
        let (mut tokens, mut times) = (0, Vec::new());
        for _ in 0..3 {
            loop {
                let text = words.join(" ");
                let started = std::time::Instant::now();
                let logits = checker.pair_logits_blocking(&text, claim);
                let seconds = started.elapsed().as_secs_f64();
                match logits {
                    Ok(logits) if logits.ids.len() <= checker.spec().window => {
                        tokens = logits.ids.len();
                        times.push(seconds);
                        break;
                    }
                    _ => words.truncate(words.len() * 9 / 10),
                }
            }
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "bench: checker {} {} ({}): load {load:.2} s; one window of {tokens} tokens {median:.3} s; {:.2} s per 1k tokens",
            checker.family().name(),
            checker.head().name(),
            checker.name(),
            median * 1000.0 / tokens as f64
        );
    }
}
