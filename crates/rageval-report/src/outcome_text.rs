//! An outcome's reason as plain text, for a spreadsheet cell or a table: the evidence's
//! details and verdicts for a score, the reason for an undefined one, the error for a
//! failure.

use rageval_core::{Evidence, Outcome, Verdict, VerdictTarget};

use crate::page::shorten;

/// Characters of a statement or question quoted beside its verdict.
const QUOTED_CHARS: usize = 200;

/// Why the outcome is what it is, in plain text (empty for a score without evidence).
pub(crate) fn outcome_reason(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Score { evidence, .. } => evidence_text(evidence),
        Outcome::Undefined { reason } => reason.clone(),
        Outcome::Failed { error } => error.clone(),
    }
}

/// `key = value · key = value`, then one line per verdict:
/// `statement 0 «text»: supported (1) — reason; cites context 1, 2`.
pub(crate) fn evidence_text(evidence: &Evidence) -> String {
    let mut lines = Vec::with_capacity(evidence.verdicts.len() + 1);
    if !evidence.details.is_empty() {
        let details: Vec<String> = evidence
            .details
            .iter()
            .map(|(key, value)| format!("{key} = {}", detail_value(value)))
            .collect();
        lines.push(details.join(" · "));
    }
    lines.extend(evidence.verdicts.iter().map(verdict_line));
    lines.join("\n")
}

/// An evidence detail's value as shown: numbers with four decimals, strings bare.
pub(crate) fn detail_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| format!("{f:.4}")),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn verdict_line(verdict: &Verdict) -> String {
    let about = match verdict.target {
        VerdictTarget::Context(j) => format!("context {j}"),
        VerdictTarget::Statement(j) => format!("statement {j}"),
        VerdictTarget::Question(j) => format!("question {j}"),
    };
    let mut line = match verdict.text.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(text) => format!("{about} «{}»: ", shorten(text, QUOTED_CHARS)),
        None => format!("{about}: "),
    };
    match &verdict.label {
        Some(label) => line.push_str(&format!("{label} ({})", verdict.value)),
        None => line.push_str(&verdict.value.to_string()),
    }
    if let Some(reason) = verdict.reason.as_deref().filter(|r| !r.trim().is_empty()) {
        line.push_str(" — ");
        line.push_str(reason);
    }
    if !verdict.supporting_contexts.is_empty() {
        let cited: Vec<String> = verdict
            .supporting_contexts
            .iter()
            .map(usize::to_string)
            .collect();
        line.push_str(&format!("; cites context {}", cited.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_as_lines() {
        let evidence = Evidence {
            verdicts: vec![
                Verdict {
                    target: VerdictTarget::Statement(0),
                    value: 1.0,
                    label: Some("supported".into()),
                    text: Some("巴黎是法国的首都".into()),
                    reason: Some("context 1 says so".into()),
                    supporting_contexts: vec![1, 2],
                },
                Verdict {
                    target: VerdictTarget::Context(3),
                    value: 0.0,
                    label: None,
                    text: None,
                    reason: None,
                    supporting_contexts: Vec::new(),
                },
            ],
            details: [("threshold".to_string(), serde_json::json!(0.5))]
                .into_iter()
                .collect(),
        };
        assert_eq!(
            outcome_reason(&Outcome::score(0.5, evidence)),
            "threshold = 0.5000\nstatement 0 «巴黎是法国的首都»: supported (1) — context 1 \
             says so; cites context 1, 2\ncontext 3: 0"
        );
        assert_eq!(outcome_reason(&Outcome::bare(1.0)), "");
        assert_eq!(
            outcome_reason(&Outcome::undefined("no answer")),
            "no answer"
        );
        assert_eq!(
            outcome_reason(&Outcome::failed("judge said no")),
            "judge said no"
        );
    }
}
