//! `compare BASELINE CANDIDATE --gate`: a gate on the *difference* between two versions, not
//! on their levels. It fails only on a real regression.
//!
//! Each gated quantity is an estimate with an interval and a p-value, and a value that
//! means "no change":
//! - a metric's paired Δ (candidate − baseline) from the comparison, null 0;
//! - with a `pairwise` run of baseline against candidate, the candidate's head-to-head
//!   win rate with its sign test, null ½.
//!
//! The p-values are Holm-corrected across the gated quantities
//! ([`rageval_core::stats::holm_adjusted`]). A quantity fails the gate only when all three
//! hold:
//! - its 95% interval lies entirely below the null;
//! - its Holm-adjusted p is under the level;
//! - it fell by more than the minimal effect the user set for it.
//!
//! A significant drop within the minimal effect is reported and passes.
//!
//! The gate also says when the two runs were judged differently (their run identities
//! differ: judge model, prompt versions, settings) or on different questions, and how old
//! the baseline is. Whether a mismatch refuses the gate is the caller's choice
//! ([`crate::OnMismatch`]). This module decides and describes; it never prints or exits.

use rageval_core::stats::holm_adjusted;
use serde::Serialize;
use serde_json::Value;

use crate::gate_spec::{GateSpec, HEAD_TO_HEAD};
use crate::time::{duration_words, parse_utc_timestamp};
use crate::{Comparison, Manifest, MetricDelta, PairComparison, PairwiseSummary, ReportError};

/// One quantity the gate decides on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatedQuantity {
    /// The metric's name, or `head_to_head`.
    pub name: String,
    /// The baseline's mean over the paired samples (a metric), or `None`.
    pub baseline: Option<f64>,
    /// The candidate's mean over the paired samples (a metric), or `None`.
    pub candidate: Option<f64>,
    /// A metric's Δ (candidate − baseline), or the candidate's head-to-head win rate.
    pub estimate: Option<f64>,
    /// 95% interval of `estimate`.
    pub ci95: Option<[f64; 2]>,
    /// Raw two-sided p-value of "no change".
    pub p_value: Option<f64>,
    /// The value of `estimate` that means no change: 0 for a Δ, ½ for a win rate.
    pub null: f64,
    /// Paired samples (a metric) or questions judged head to head.
    pub n: usize,
    /// The drop below `null` that must be exceeded to fail.
    pub minimal_effect: f64,
}

impl GatedQuantity {
    /// A metric's paired difference.
    pub fn of_metric(delta: &MetricDelta, minimal_effect: f64) -> Self {
        Self {
            name: delta.metric.clone(),
            baseline: delta.baseline_mean,
            candidate: delta.candidate_mean,
            estimate: delta.delta,
            ci95: delta.ci95,
            p_value: delta.p_value,
            null: 0.0,
            n: delta.n_paired,
            minimal_effect,
        }
    }

    /// How far `estimate` lies below the null (negative: above it).
    pub fn shortfall(&self) -> Option<f64> {
        self.estimate.map(|e| self.null - e)
    }
}

/// What the gate read from one quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    /// Significantly worse, by more than the minimal effect: fails the gate.
    Regressed,
    /// Significantly worse, by no more than the minimal effect.
    WorseWithinEffect,
    /// Significantly better.
    Improved,
    NoSignificantChange,
    /// No estimate, interval or p-value (no paired sample scored).
    NotMeasured,
}

impl GateVerdict {
    pub fn words(self) -> &'static str {
        match self {
            Self::Regressed => "regressed",
            Self::WorseWithinEffect => "worse, within the minimal effect",
            Self::Improved => "improved",
            Self::NoSignificantChange => "no significant change",
            Self::NotMeasured => "not measured",
        }
    }
}

/// One quantity with its Holm-adjusted p and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatedResult {
    #[serde(flatten)]
    pub quantity: GatedQuantity,
    pub holm_p: Option<f64>,
    pub verdict: GateVerdict,
}

/// The gate's decision over every quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    /// Some quantity regressed: exit 1.
    Regressed,
    /// None regressed and some improved.
    Improved,
    NoSignificantChange,
}

/// The head-to-head counts of a pairwise run, from the candidate's side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadToHeadCounts {
    /// The pairwise run's names of the baseline and the candidate.
    pub baseline: String,
    pub candidate: String,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    pub n: usize,
    /// Share of decisive questions whose two seat orders named opposite versions.
    pub flip_rate: Option<f64>,
}

/// How old the baseline is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineAge {
    /// The baseline manifest's finish time.
    pub finished_at: String,
    /// Seconds from then to the gate's now.
    pub seconds: u64,
}

impl BaselineAge {
    pub fn line(&self) -> String {
        format!(
            "the baseline finished {}, {} ago",
            self.finished_at,
            duration_words(self.seconds)
        )
    }
}

/// A baseline and a candidate gated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegressionGate {
    /// The versions' names.
    pub baseline: String,
    pub candidate: String,
    /// The family-wise level of the Holm correction.
    pub level: f64,
    pub results: Vec<GatedResult>,
    /// With a pairwise run: its counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_to_head: Option<HeadToHeadCounts>,
    /// How the two runs were judged differently or on other questions, one line each.
    pub mismatches: Vec<String>,
    /// Gated quantities on too few questions for the gate ever to fail on them, one line
    /// each: the smallest p a two-sided sign test can reach on them is above what the Holm
    /// correction asks of the first quantity.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blind_spots: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_age: Option<BaselineAge>,
    /// With `--confirm`: the cells judged again before this decision, and the one before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<crate::GateConfirmation>,
}

impl RegressionGate {
    /// Gates `comparison` of two runs (`manifests`: baseline's, candidate's) by `spec`, with
    /// the head-to-head result of `pairwise` (a run of baseline against candidate) when
    /// given; `now` in seconds since 1970, for the baseline's age.
    pub fn check(
        comparison: &Comparison,
        manifests: [&Manifest; 2],
        spec: &GateSpec,
        pairwise: Option<&PairwiseSummary>,
        now: u64,
    ) -> Result<Self, ReportError> {
        if comparison.runs.len() != 2 {
            return Err(ReportError::GateRunCount {
                count: comparison.runs.len(),
            });
        }
        let pair = comparison
            .against_first(1)
            .ok_or(ReportError::GateRunCount { count: 1 })?;
        let mut quantities = Vec::new();
        for metric in &comparison.metrics {
            if let Some(effect) = spec.effect_of(metric) {
                if let Some(delta) = pair.deltas.iter().find(|d| &d.metric == metric) {
                    quantities.push(GatedQuantity::of_metric(delta, effect));
                }
            }
        }
        let mut head_to_head = None;
        if let Some(summary) = pairwise {
            let effect = spec.effect_of(HEAD_TO_HEAD).unwrap_or(0.0);
            let (quantity, counts) = head_to_head_quantity(summary, effect)?;
            quantities.push(quantity);
            head_to_head = Some(counts);
        }
        for effect in &spec.effects {
            if !quantities.iter().any(|q| q.name == effect.name) {
                return Err(ReportError::UngatedName {
                    name: effect.name.clone(),
                    why: if effect.name == HEAD_TO_HEAD {
                        "which needs a pairwise run of the baseline against the candidate \
                         (--gate-pairwise DIR)"
                            .into()
                    } else {
                        format!(
                            "which is not a metric the runs are compared on ({})",
                            comparison.metrics.join(", ")
                        )
                    },
                });
            }
        }
        let mut mismatches = judging_differences(manifests[0], manifests[1]);
        mismatches.extend(coverage_differences(pair, &quantities));
        let baseline_age = manifests[0]
            .finished_at
            .as_deref()
            .and_then(|at| Some((at, parse_utc_timestamp(at)?)))
            .map(|(at, then)| BaselineAge {
                finished_at: at.to_owned(),
                seconds: now.saturating_sub(then),
            });
        let blind_spots = blind_spots(&quantities, spec.level);
        Ok(Self {
            baseline: comparison.version_of(0).to_owned(),
            candidate: comparison.version_of(1).to_owned(),
            level: spec.level,
            results: judge_quantities(quantities, spec.level),
            blind_spots,
            head_to_head,
            mismatches,
            baseline_age,
            confirmation: None,
        })
    }

    pub fn decision(&self) -> GateDecision {
        let any = |verdict| self.results.iter().any(|r| r.verdict == verdict);
        if any(GateVerdict::Regressed) {
            GateDecision::Regressed
        } else if any(GateVerdict::Improved) {
            GateDecision::Improved
        } else {
            GateDecision::NoSignificantChange
        }
    }

    /// The results with `verdict`.
    pub fn with_verdict(&self, verdict: GateVerdict) -> impl Iterator<Item = &GatedResult> {
        self.results.iter().filter(move |r| r.verdict == verdict)
    }

    /// One line: `regression: …`, `improved: …` or `no significant change`.
    pub fn verdict_line(&self) -> String {
        let names = |verdict| {
            self.with_verdict(verdict)
                .map(|r| r.quantity.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.decision() {
            GateDecision::Regressed => format!(
                "regression: {} significantly worse than {} by more than the minimal effect \
                 ({})",
                self.candidate,
                self.baseline,
                names(GateVerdict::Regressed)
            ),
            GateDecision::Improved => format!("improved: {}", names(GateVerdict::Improved)),
            GateDecision::NoSignificantChange => "no significant change".into(),
        }
    }

    /// The gate as text for a terminal: the verdict line, then one line per gated quantity
    /// (its change, interval, raw and Holm p, verdict).
    pub fn render_text(&self) -> String {
        let mut text = format!("gate: {}\n", self.verdict_line());
        if let Some(confirmation) = &self.confirmation {
            text.push_str(&format!("  {}\n", confirmation.line()));
        }
        for result in &self.results {
            text.push_str(&format!("  {}\n", result_line(result, self.level)));
        }
        text
    }
}

/// One quantity's change in words: `faithfulness: down 0.1234 (0.6544 → 0.5310), Δ -0.1234,
/// 95% interval [-0.18, -0.07], p 0.0001, Holm p 0.0002 — regressed (minimal effect 0.02)`.
pub fn result_line(result: &GatedResult, level: f64) -> String {
    let q = &result.quantity;
    let Some(estimate) = q.estimate else {
        return format!("{}: {}", q.name, result.verdict.words());
    };
    let interval = q
        .ci95
        .map_or("—".into(), |[l, h]| format!("[{l:+.4}, {h:+.4}]"));
    let change = if q.null == 0.0 {
        let means = match (q.baseline, q.candidate) {
            (Some(a), Some(b)) => format!(" ({a:.4} → {b:.4})"),
            _ => String::new(),
        };
        let direction = if estimate < 0.0 {
            format!("down {:.4}", -estimate)
        } else if estimate > 0.0 {
            format!("up {estimate:.4}")
        } else {
            "unchanged".to_owned()
        };
        format!("{direction}{means}, Δ {estimate:+.4}, 95% interval {interval}")
    } else {
        let interval = q
            .ci95
            .map_or("—".into(), |[l, h]| format!("[{l:.4}, {h:.4}]"));
        format!("win rate {estimate:.4}, 95% interval {interval}")
    };
    format!(
        "{}: {change}, p {}, Holm p {} (level {level}) — {} (minimal effect {})",
        q.name,
        p_text(q.p_value),
        p_text(result.holm_p),
        result.verdict.words(),
        q.minimal_effect
    )
}

/// A p-value as the tables show it.
pub fn p_text(p: Option<f64>) -> String {
    p.map_or("—".into(), |p| format!("{p:.4}"))
}

/// Holm-adjusts the quantities that have a p-value and reads each one.
fn judge_quantities(quantities: Vec<GatedQuantity>, level: f64) -> Vec<GatedResult> {
    let tested: Vec<f64> = quantities.iter().filter_map(|q| q.p_value).collect();
    let mut adjusted = holm_adjusted(&tested).into_iter();
    quantities
        .into_iter()
        .map(|quantity| {
            let holm_p = quantity.p_value.and_then(|_| adjusted.next());
            let verdict = verdict(&quantity, holm_p, level);
            GatedResult {
                quantity,
                holm_p,
                verdict,
            }
        })
        .collect()
}

fn verdict(q: &GatedQuantity, holm_p: Option<f64>, level: f64) -> GateVerdict {
    let (Some(shortfall), Some([low, high]), Some(holm_p)) = (q.shortfall(), q.ci95, holm_p) else {
        return GateVerdict::NotMeasured;
    };
    let significant = holm_p < level;
    if significant && high < q.null {
        if shortfall > q.minimal_effect {
            GateVerdict::Regressed
        } else {
            GateVerdict::WorseWithinEffect
        }
    } else if significant && low > q.null {
        GateVerdict::Improved
    } else {
        GateVerdict::NoSignificantChange
    }
}

/// The candidate's win rate against the baseline in a pairwise run of the two (its first
/// version the baseline, its second the candidate).
fn head_to_head_quantity(
    summary: &PairwiseSummary,
    minimal_effect: f64,
) -> Result<(GatedQuantity, HeadToHeadCounts), ReportError> {
    if summary.versions.len() != 2 {
        return Err(ReportError::GatePairwise {
            why: format!(
                "the pairwise run judged {} versions; the gate reads one of the baseline \
                 (first) against the candidate (second)",
                summary.versions.len()
            ),
        });
    }
    let pair = summary
        .pair(1, 0)
        .ok_or_else(|| ReportError::GatePairwise {
            why: "the pairwise run holds no result for its two versions".into(),
        })?;
    let figures = &pair.figures;
    let quantity = GatedQuantity {
        name: HEAD_TO_HEAD.into(),
        baseline: None,
        candidate: None,
        estimate: figures.win_rate,
        ci95: figures.win_rate_ci95,
        p_value: figures.p_value,
        null: 0.5,
        n: figures.n,
        minimal_effect,
    };
    let counts = HeadToHeadCounts {
        baseline: pair.b.clone(),
        candidate: pair.a.clone(),
        wins: figures.wins,
        ties: figures.ties,
        losses: figures.losses,
        n: figures.n,
        flip_rate: figures.position.flip_rate,
    };
    Ok((quantity, counts))
}

/// How the two runs' identities (`settings.identity` of their manifests) differ in who
/// judged and how: one line per part that differs.
pub fn judging_differences(baseline: &Manifest, candidate: &Manifest) -> Vec<String> {
    let identity = |m: &Manifest| m.settings.get("identity").cloned();
    let (Some(a), Some(b)) = (identity(baseline), identity(candidate)) else {
        return vec![
            "judged alike? unknown: a run records no identity (written before rageval kept \
             one)"
                .into(),
        ];
    };
    let mut lines = Vec::new();
    let (judge_a, judge_b) = (&a["judge"], &b["judge"]);
    let model: Vec<String> = ["kind", "model", "embedding_model", "gguf_sha256"]
        .iter()
        .filter(|field| judge_a[**field] != judge_b[**field])
        .map(|field| {
            format!(
                "{field} {} → {}",
                shown(&judge_a[*field]),
                shown(&judge_b[*field])
            )
        })
        .collect();
    if !model.is_empty() {
        lines.push(format!(
            "judged differently: judge model ({})",
            model.join("; ")
        ));
    }
    // Only the tasks both runs ask: a metric one run lacks is no difference in judging.
    let prompts: Vec<String> = map_differences(&judge_a["routes"], &judge_b["routes"], true);
    if !prompts.is_empty() {
        lines.push(format!(
            "judged differently: prompt versions ({})",
            prompts.join("; ")
        ));
    }
    let mut settings = map_differences(&judge_a["request"], &judge_b["request"], false);
    settings.extend(map_differences(&a["settings"], &b["settings"], false));
    if !settings.is_empty() {
        lines.push(format!(
            "judged differently: settings ({})",
            settings.join("; ")
        ));
    }
    lines
}

/// `key a → b` for each key whose values differ; with `shared_only`, keys in both alone.
fn map_differences(a: &Value, b: &Value, shared_only: bool) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| !shared_only || (a.contains_key(*key) && b.contains_key(*key)))
        .filter(|key| a.get(*key) != b.get(*key))
        .map(|key| {
            let side =
                |m: &serde_json::Map<String, Value>| m.get(key).map_or("unset".into(), shown);
            format!("{key} {} → {}", side(a), side(b))
        })
        .collect()
}

/// A JSON value as a person reads it: strings bare, null as `none`.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The quantities the gate can never fail on. With n questions the smallest two-sided p a
/// sign test (or the sign-flip test on n non-zero differences) can give is 2 / 2ⁿ; Holm's
/// adjusted p-values only grow with the raw ones, so a quantity whose adjusted p stays at or
/// above the level when every quantity has its smallest p cannot fail, however large its
/// drop. Six questions and three gated metrics: each 2 / 2⁶ = 0.031, adjusted 0.094.
fn blind_spots(quantities: &[GatedQuantity], level: f64) -> Vec<String> {
    let measured: Vec<&GatedQuantity> = quantities.iter().filter(|q| q.n > 0).collect();
    let smallest: Vec<f64> = measured
        .iter()
        .map(|q| 2.0 / 2f64.powi(q.n.min(1000) as i32))
        .collect();
    let adjusted = holm_adjusted(&smallest);
    measured
        .iter()
        .zip(smallest.iter().zip(&adjusted))
        .filter(|(_, (_, adjusted))| **adjusted >= level)
        .map(|(q, (smallest, adjusted))| {
            format!(
                "{}: with {} questions the smallest p a two-sided sign test can give is \
                 {smallest:.4}, {adjusted:.4} after Holm across {} gated quantities, not under \
                 the level {level}: the gate cannot fail on it; evaluate more questions or gate \
                 fewer quantities",
                q.name,
                q.n,
                measured.len()
            )
        })
        .collect()
}

/// Questions the gate does not compare: one run's alone, with other references, or scored
/// in one run only for a gated metric.
fn coverage_differences(pair: &PairComparison, quantities: &[GatedQuantity]) -> Vec<String> {
    let pairing = &pair.pairing;
    let mut lines = Vec::new();
    if !pairing.only_baseline.is_empty() || !pairing.only_candidate.is_empty() {
        lines.push(format!(
            "on different questions: {} only in the baseline, {} only in the candidate; the \
             gate compares the {} paired",
            pairing.only_baseline.len(),
            pairing.only_candidate.len(),
            pairing.paired
        ));
    }
    if let Some(differences) = &pairing.differences {
        if differences.references > 0 {
            lines.push(format!(
                "on different references: {} of the {} paired questions have other reference \
                 answers",
                differences.references, differences.compared
            ));
        }
    }
    for delta in &pair.deltas {
        if delta.n_unpaired > 0 && quantities.iter().any(|q| q.name == delta.metric) {
            lines.push(format!(
                "{}: {} questions scored in one run only (undefined or failed in the other), \
                 left out",
                delta.metric, delta.n_unpaired
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate_spec::{MinimalEffect, OnMismatch};

    fn quantity(name: &str, estimate: f64, ci95: [f64; 2], p: f64, effect: f64) -> GatedQuantity {
        GatedQuantity {
            name: name.into(),
            baseline: Some(0.7),
            candidate: Some(0.7 + estimate),
            estimate: Some(estimate),
            ci95: Some(ci95),
            p_value: Some(p),
            null: 0.0,
            n: 40,
            minimal_effect: effect,
        }
    }

    /// Worked by hand, level 0.05, each quantity at its smallest p (2 / 2ⁿ). Six, seven and
    /// forty questions: [0.03125, 0.015625, ~0]; Holm: the smallest ×3 ≈ 0, then 0.015625 ×2
    /// = 0.03125, then 0.03125 ×1 = 0.03125 — all under 0.05, every one can fail. Three
    /// metrics on six questions: 0.03125 ×3 = 0.09375 for all — none can. One metric on six
    /// questions alone: 0.03125 — it can.
    #[test]
    fn too_few_questions_for_the_gate_to_fail_are_said() {
        let with_n = |name: &str, n: usize| GatedQuantity {
            n,
            ..quantity(name, -0.3, [-0.5, -0.1], 0.03, 0.02)
        };
        let mixed = [with_n("a", 6), with_n("b", 7), with_n("c", 40)];
        assert!(blind_spots(&mixed, 0.05).is_empty());
        let six = [with_n("a", 6), with_n("b", 6), with_n("c", 6)];
        let spots = blind_spots(&six, 0.05);
        assert_eq!(spots.len(), 3, "{spots:?}");
        assert!(
            spots[0].starts_with(
                "a: with 6 questions the smallest p a two-sided sign test can give is 0.0312, \
                 0.0938 after Holm across 3 gated quantities"
            ),
            "{}",
            spots[0]
        );
        assert!(blind_spots(&[with_n("a", 6)], 0.05).is_empty());
    }

    /// Three gated metrics, p = [0.01, 0.04, 0.03]: Holm gives [0.03, 0.06, 0.06]. `a`
    /// dropped 0.05 beyond its 0.02 effect: regressed. `b`'s interval is below zero but its
    /// Holm p (0.06) is not under 0.05: no significant change. `c` improved by its interval
    /// but not by Holm either.
    #[test]
    fn a_drop_fails_only_when_interval_holm_and_effect_all_say_so() {
        let results = judge_quantities(
            vec![
                quantity("a", -0.05, [-0.08, -0.02], 0.01, 0.02),
                quantity("b", -0.04, [-0.07, -0.01], 0.04, 0.0),
                quantity("c", 0.03, [0.01, 0.05], 0.03, 0.0),
            ],
            0.05,
        );
        let holm: Vec<f64> = results.iter().map(|r| r.holm_p.unwrap()).collect();
        for (got, want) in holm.iter().zip([0.03, 0.06, 0.06]) {
            assert!((got - want).abs() < 1e-12, "{holm:?}");
        }
        let verdicts: Vec<GateVerdict> = results.iter().map(|r| r.verdict).collect();
        assert_eq!(
            verdicts,
            [
                GateVerdict::Regressed,
                GateVerdict::NoSignificantChange,
                GateVerdict::NoSignificantChange
            ]
        );
        // The same drop within a 0.1 effect passes, said so.
        let within = judge_quantities(vec![quantity("a", -0.05, [-0.08, -0.02], 0.01, 0.1)], 0.05);
        assert_eq!(within[0].verdict, GateVerdict::WorseWithinEffect);
        let up = judge_quantities(vec![quantity("a", 0.05, [0.02, 0.08], 0.001, 0.0)], 0.05);
        assert_eq!(up[0].verdict, GateVerdict::Improved);
    }

    #[test]
    fn a_line_names_the_change_interval_and_both_p_values() {
        let results = judge_quantities(
            vec![quantity(
                "faithfulness",
                -0.125,
                [-0.2, -0.05],
                0.0002,
                0.02,
            )],
            0.05,
        );
        assert_eq!(
            result_line(&results[0], 0.05),
            "faithfulness: down 0.1250 (0.7000 → 0.5750), Δ -0.1250, 95% interval [-0.2000, \
             -0.0500], p 0.0002, Holm p 0.0002 (level 0.05) — regressed (minimal effect 0.02)"
        );
    }

    fn manifest(identity: Value, finished_at: &str) -> Manifest {
        let mut manifest = Manifest::start(
            "eval",
            crate::DatasetInfo {
                path: "d.jsonl".into(),
                sha256: "x".into(),
                format: "jsonl".into(),
                samples: None,
            },
            Vec::new(),
            serde_json::json!({ "identity": identity }),
        );
        manifest.finished_at = Some(finished_at.into());
        manifest
    }

    #[test]
    fn runs_judged_differently_are_told_apart_part_by_part() {
        let identity = |model: &str, template: &str, top_k: &str| {
            serde_json::json!({
                "judge": {
                    "kind": "endpoint", "model": model, "embedding_model": null,
                    "gguf_sha256": null,
                    "routes": { "support_verdicts": template, "only_here": "x" },
                    "request": { "temperature": "0" },
                },
                "settings": { "top_k": top_k },
            })
        };
        let a = manifest(identity("m1", "llm m1 [support_verdicts@3]", "5"), "t");
        let same = manifest(identity("m1", "llm m1 [support_verdicts@3]", "5"), "t");
        assert!(judging_differences(&a, &same).is_empty());
        let mut other = identity("m2", "llm m2 [support_verdicts@4]", "all");
        other["judge"]["routes"]
            .as_object_mut()
            .unwrap()
            .remove("only_here");
        let b = manifest(other, "t");
        assert_eq!(
            judging_differences(&a, &b),
            [
                "judged differently: judge model (model m1 → m2)",
                "judged differently: prompt versions (support_verdicts llm m1 \
                 [support_verdicts@3] → llm m2 [support_verdicts@4])",
                "judged differently: settings (top_k 5 → all)",
            ]
        );
        let mut old = manifest(Value::Null, "t");
        old.settings = serde_json::json!({});
        assert!(judging_differences(&a, &old)[0].starts_with("judged alike? unknown"));
    }

    #[test]
    fn the_gate_over_a_comparison_names_unknown_metrics_and_the_baseline_age() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        crate::testing::write_run(&a, "d", &crate::testing::scores(0.0));
        crate::testing::write_run(&b, "d", &crate::testing::scores(-0.1));
        let runs = [a, b].map(|p| crate::RunData::load(&p).unwrap());
        let comparison = Comparison::build(&runs, crate::CompareSettings::default()).unwrap();
        let spec = |names: &[(&str, f64)]| GateSpec {
            effects: names
                .iter()
                .map(|(name, effect)| MinimalEffect {
                    name: (*name).into(),
                    effect: *effect,
                })
                .collect(),
            level: 0.05,
            on_mismatch: OnMismatch::Warn,
        };
        let mut manifests = [runs[0].manifest.clone(), runs[1].manifest.clone()];
        manifests[0].finished_at = Some("2026-12-01T00:00:00Z".into());
        let now = parse_utc_timestamp("2026-12-04T02:30:00Z").unwrap();
        let gate = RegressionGate::check(
            &comparison,
            [&manifests[0], &manifests[1]],
            &spec(&[("faithfulness", 0.02), ("context_recall", 0.0)]),
            None,
            now,
        )
        .unwrap();
        assert_eq!(gate.decision(), GateDecision::Regressed);
        assert_eq!(
            gate.verdict_line(),
            "regression: b significantly worse than a by more than the minimal effect \
             (faithfulness)"
        );
        assert_eq!(
            gate.baseline_age.as_ref().unwrap().line(),
            "the baseline finished 2026-12-01T00:00:00Z, 3 days 2 hours ago"
        );
        // The shift is 0.1 on faithfulness: within a 0.2 effect it passes.
        let lenient = RegressionGate::check(
            &comparison,
            [&manifests[0], &manifests[1]],
            &spec(&[("faithfulness", 0.2)]),
            None,
            now,
        )
        .unwrap();
        assert_eq!(lenient.decision(), GateDecision::NoSignificantChange);
        assert!(
            lenient
                .render_text()
                .contains("worse, within the minimal effect")
        );
        for (name, expected) in [
            (
                "faithfulnes",
                "--gate names `faithfulnes`, which is not a metric",
            ),
            (
                HEAD_TO_HEAD,
                "--gate names `head_to_head`, which needs a pairwise run",
            ),
        ] {
            let error = RegressionGate::check(
                &comparison,
                [&manifests[0], &manifests[1]],
                &spec(&[(name, 0.0)]),
                None,
                now,
            )
            .unwrap_err()
            .to_string();
            assert!(error.starts_with(expected), "{error}");
        }
    }
}
