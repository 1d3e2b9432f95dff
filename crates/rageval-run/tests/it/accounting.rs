//! The accounting types copied across the leaf line, pinned.
//!
//! Why the copies exist: `rageval-judge` depends on no crate of ours and `rageval-report` on
//! `rageval-core` alone (DESIGN.md: the judge knows no run directory, the report knows no
//! model), so the judge's live books (`TemplateUsage`, `RungCounts`, `Price`) and the
//! router's call counts (`rageval-tasks`' `TaskCalls`) cannot be the types a run directory
//! keeps. Each has a twin in `rageval-report`, and `rageval-run`'s `session` copies one into
//! the other field by field. Here each judge-side value goes to JSON, is read as its report
//! twin (which denies unknown fields), and goes back; and the twins' field lists are
//! compared. A field added to, renamed in or dropped from one side only fails these tests
//! (or, on the judge side, the struct literals below fail to compile).

use std::cell::Cell;
use std::collections::BTreeSet;

use rageval_judge::{Price, RungCounts, TemplateUsage};
use rageval_report::{CallTally, ModelPrice, RungTally, TaskTally};
use rageval_tasks::TaskCalls;
use serde::de::{DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Each count different, none zero (a zero may be left out of the JSON).
const RUNGS: RungCounts = RungCounts {
    direct: 1,
    extracted: 2,
    repaired: 3,
    reasked: 4,
    failed: 5,
    errored: 6,
};

#[test]
fn rung_counts_are_kept_as_rung_tallies() {
    assert_twins::<RungCounts, RungTally>(&RUNGS);
}

#[test]
fn task_calls_are_kept_as_task_tallies() {
    let judge_side = TaskCalls {
        llm: 1,
        heuristic: 2,
        checker: 3,
        claims_by_checker: 4,
        claims_by_chat: 5,
    };
    assert_twins::<TaskCalls, TaskTally>(&judge_side);
}

#[test]
fn prices_are_kept_as_model_prices() {
    let judge_side = Price {
        prompt_per_million: 0.25,
        completion_per_million: 1.5,
    };
    let json = serde_json::to_value(judge_side).unwrap();
    let report: ModelPrice = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(report).unwrap(), json);
    assert_eq!(fields_of::<ModelPrice>(), keys(&json));
}

/// How a run keeps each of the judge's per-template numbers (`session::usage_of`): under the
/// same name, under another, or not at all (and why).
const TEMPLATE_USAGE_IN_A_RUN: [(&str, Kept); 12] = [
    ("calls", Kept::Same),
    ("prompt_tokens", Kept::Same),
    ("completion_tokens", Kept::Same),
    ("reasoning_tokens", Kept::Same),
    ("reasoning_calls", Kept::Same),
    ("counted_calls", Kept::Same),
    ("cached_calls", Kept::Same),
    // `null` in the run when any call had no price.
    ("cost_usd", Kept::Same),
    ("shared_calls", Kept::As("merged_calls")),
    (
        "unpriced_calls",
        Kept::Not("a run's cost is null when any call had no price"),
    ),
    (
        "cached_prompt_tokens",
        Kept::Not("cached answers cost nothing now; their tokens were paid when made"),
    ),
    (
        "cached_completion_tokens",
        Kept::Not("cached answers cost nothing now; their tokens were paid when made"),
    ),
];

enum Kept {
    Same,
    As(&'static str),
    Not(&'static str),
}

#[test]
fn template_usage_is_kept_as_a_call_tally_with_its_rungs() {
    let judge_side = TemplateUsage {
        calls: 1,
        prompt_tokens: 2,
        completion_tokens: 3,
        reasoning_tokens: 4,
        reasoning_calls: 5,
        counted_calls: 6,
        unpriced_calls: 0,
        cost_usd: 7.5,
        cached_calls: 8,
        cached_prompt_tokens: 9,
        cached_completion_tokens: 10,
        shared_calls: 11,
    };
    let Value::Object(judge_json) = serde_json::to_value(judge_side).unwrap() else {
        panic!("a template's usage is a JSON object");
    };
    let listed: BTreeSet<&str> = TEMPLATE_USAGE_IN_A_RUN.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys(&Value::Object(judge_json.clone())),
        listed,
        "every field of the judge's TemplateUsage says how a run keeps it"
    );
    let mut kept = Map::new();
    for (name, how) in TEMPLATE_USAGE_IN_A_RUN {
        let as_name = match how {
            Kept::Same => name,
            Kept::As(other) => other,
            Kept::Not(why) => {
                assert!(!why.is_empty(), "{name}: say why a run does not keep it");
                continue;
            }
        };
        kept.insert(as_name.to_owned(), judge_json[name].clone());
    }
    kept.insert("rungs".into(), serde_json::to_value(RUNGS).unwrap());
    let kept = Value::Object(kept);
    let report: CallTally = serde_json::from_value(kept.clone()).unwrap();
    assert_eq!(serde_json::to_value(&report).unwrap(), kept);
    assert_eq!(fields_of::<CallTally>(), keys(&kept));
    let rungs_back: RungCounts = serde_json::from_value(kept["rungs"].clone()).unwrap();
    assert_eq!(rungs_back, RUNGS);
}

#[test]
fn a_field_on_one_side_only_is_caught() {
    #[derive(Serialize)]
    struct JudgeSideWithMore {
        llm: u64,
        heuristic: u64,
        refused: u64,
    }
    let json = serde_json::to_value(JudgeSideWithMore {
        llm: 1,
        heuristic: 2,
        refused: 3,
    })
    .unwrap();
    let error = serde_json::from_value::<TaskTally>(json).unwrap_err();
    assert!(
        error.to_string().contains("unknown field `refused`"),
        "{error}"
    );

    // A report-side field with a default passes the JSON round trip unseen (it reads as 0
    // and is not written when 0), so the field lists are compared too.
    #[derive(Deserialize)]
    #[expect(dead_code, reason = "only its field list is read")]
    struct ReportSideWithMore {
        direct: u64,
        extracted: u64,
        repaired: u64,
        reasked: u64,
        failed: u64,
        errored: u64,
        #[serde(default)]
        abandoned: u64,
    }
    assert_ne!(fields_of::<ReportSideWithMore>(), fields_of::<RungCounts>());
}

/// `J` (the judge side) to JSON, read as `R` (its report twin, which denies unknown
/// fields), back to the same JSON, and read as `J` again; and the two field lists equal.
fn assert_twins<J, R>(judge_side: &J)
where
    J: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
    R: Serialize + DeserializeOwned,
{
    let json = serde_json::to_value(judge_side).unwrap();
    let report: R = serde_json::from_value(json.clone()).unwrap();
    let back = serde_json::to_value(&report).unwrap();
    assert_eq!(back, json);
    assert_eq!(&serde_json::from_value::<J>(back).unwrap(), judge_side);
    assert_eq!(fields_of::<R>(), fields_of::<J>());
    assert_eq!(fields_of::<R>(), keys(&json));
}

fn keys(json: &Value) -> BTreeSet<&str> {
    json.as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect()
}

/// Every field a derived `Deserialize` reads, as serde hands the list to the deserializer
/// (fields skipped when zero on output included).
fn fields_of<T: DeserializeOwned>() -> BTreeSet<&'static str> {
    let seen = Cell::new(&[][..]);
    let _ = T::deserialize(FieldList(&seen));
    seen.get().iter().copied().collect()
}

/// A deserializer that only notes the fields a struct asks for, then stops.
struct FieldList<'a>(&'a Cell<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldList<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("only structs list their fields"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(serde::de::Error::custom("fields noted"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}
