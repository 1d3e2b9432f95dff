//! `compare --gate --comment PATH`: the gate as a Markdown pull-request comment.
//!
//! The comment opens with a hidden marker ([`GATE_COMMENT_MARKER`]) so a CI step can find
//! the comment it posted before and update it in place instead of adding one per push.
//! Then one verdict line, the gated quantities' table (baseline, candidate, Δ with its
//! 95% interval, p, Holm p, minimal effect, verdict), the head-to-head line of a pairwise
//! run, what makes the two runs hard to compare and the baseline's age, the samples that
//! moved most with their questions, the candidate's judge calls and cost, and where the
//! reports are. This module renders text only; the binary writes the file.

use std::fmt::Write as _;

use crate::regression_gate::{GateDecision, GatedResult, RegressionGate, p_text};
use crate::{Comparison, SampleFlip, escape_markdown_cell};

/// The hidden first line of every gate comment.
pub const GATE_COMMENT_MARKER: &str = "<!-- rageval-gate -->";
/// Samples the comment lists as moving most.
pub const MOVED_SAMPLES_SHOWN: usize = 5;
/// Characters of a question shown before it is cut.
const QUESTION_CHARS: usize = 120;

/// Where the comment says the full reports are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportLocation {
    /// A link (`--report-url`), e.g. a CI artifact's page.
    pub url: Option<String>,
    /// Otherwise: the reports' paths as the CI job sees them.
    pub paths: Vec<String>,
}

/// The comment for `gate` over `comparison` (the two runs it gated).
pub fn render_gate_comment(
    gate: &RegressionGate,
    comparison: &Comparison,
    reports: &ReportLocation,
) -> String {
    let mut md = String::new();
    let mark = match gate.decision() {
        GateDecision::Regressed => "❌",
        GateDecision::Improved | GateDecision::NoSignificantChange => "✅",
    };
    let _ = writeln!(md, "{GATE_COMMENT_MARKER}");
    let _ = writeln!(md, "**rageval gate {mark} {}**\n", gate.verdict_line());
    if let Some(confirmation) = &gate.confirmation {
        let _ = writeln!(md, "{}\n", escape_markdown_cell(&confirmation.line()));
    }
    let _ = writeln!(
        md,
        "Baseline **{}** → candidate **{}**; p-values Holm-corrected across the {} gated \
         quantities at level {}.\n",
        escape_markdown_cell(&gate.baseline),
        escape_markdown_cell(&gate.candidate),
        gate.results.len(),
        gate.level
    );
    md.push_str(
        "| gated | n | baseline | candidate | Δ [95% interval] | p | Holm p | minimal effect | \
         verdict |\n|---|---:|---:|---:|---|---:|---:|---:|---|\n",
    );
    for result in &gate.results {
        md.push_str(&table_row(result));
    }
    if let Some(h2h) = &gate.head_to_head {
        let flips = h2h.flip_rate.map_or(String::new(), |r| {
            format!("; the judge's seat flips {r:.2}")
        });
        let _ = writeln!(
            md,
            "\n**Head to head** ({} against {}, both seat orders): {} wins, {} ties, {} losses \
             over {} questions{flips}.",
            escape_markdown_cell(&h2h.candidate),
            escape_markdown_cell(&h2h.baseline),
            h2h.wins,
            h2h.ties,
            h2h.losses,
            h2h.n
        );
    }
    let mut notes: Vec<String> = gate
        .mismatches
        .iter()
        .chain(&gate.blind_spots)
        .map(|m| format!("⚠️ {}", escape_markdown_cell(m)))
        .collect();
    if let Some(age) = &gate.baseline_age {
        notes.push(age.line());
    }
    if !notes.is_empty() {
        md.push('\n');
        for note in notes {
            let _ = writeln!(md, "> {note}  ");
        }
    }
    let moved = moved_most(gate, comparison);
    if !moved.is_empty() {
        md.push_str(
            "\n**Samples that moved most**\n\n| sample | question | metric | baseline → \
             candidate |\n|---|---|---|---|\n",
        );
        for (metric, flip) in moved {
            let question = flip.question.as_deref().map_or("—".into(), |q| {
                escape_markdown_cell(&cut(q, QUESTION_CHARS))
            });
            let _ = writeln!(
                md,
                "| `{}` | {question} | `{metric}` | {:.4} → {:.4} ({:+.4}) |",
                escape_markdown_cell(&flip.sample_id),
                flip.baseline,
                flip.candidate,
                flip.delta
            );
        }
    }
    md.push('\n');
    md.push_str(&judge_line(comparison));
    let reports = reports_line(reports);
    if !reports.is_empty() {
        md.push('\n');
        md.push_str(&reports);
    }
    md
}

fn table_row(result: &GatedResult) -> String {
    let q = &result.quantity;
    let number = |value: Option<f64>| value.map_or("—".into(), |v| format!("{v:.4}"));
    let change = match (q.estimate, q.ci95) {
        (Some(estimate), Some([low, high])) if q.null == 0.0 => {
            format!("{estimate:+.4} [{low:+.4}, {high:+.4}]")
        }
        (Some(rate), Some([low, high])) => {
            format!("win rate {rate:.4} [{low:.4}, {high:.4}] vs {}", q.null)
        }
        _ => "—".into(),
    };
    let verdict = result.verdict.words();
    let verdict = if result.verdict == crate::GateVerdict::Regressed {
        format!("**{verdict}**")
    } else {
        verdict.to_owned()
    };
    format!(
        "| `{}` | {} | {} | {} | {change} | {} | {} | {} | {verdict} |\n",
        q.name,
        q.n,
        number(q.baseline),
        number(q.candidate),
        p_text(q.p_value),
        p_text(result.holm_p),
        q.minimal_effect
    )
}

/// The gated metrics' moved samples, largest |Δ| first, each sample once (its largest move).
fn moved_most<'c>(
    gate: &RegressionGate,
    comparison: &'c Comparison,
) -> Vec<(&'c str, &'c SampleFlip)> {
    let Some(pair) = comparison.against_first(1) else {
        return Vec::new();
    };
    let mut moved: Vec<(&str, &SampleFlip)> = pair
        .deltas
        .iter()
        .filter(|d| gate.results.iter().any(|r| r.quantity.name == d.metric))
        .flat_map(|d| d.flips.iter().map(move |f| (d.metric.as_str(), f)))
        .collect();
    moved.sort_by(|(m1, a), (m2, b)| {
        b.delta
            .abs()
            .total_cmp(&a.delta.abs())
            .then_with(|| a.sample_id.cmp(&b.sample_id))
            .then_with(|| m1.cmp(m2))
    });
    let mut seen: Vec<&str> = Vec::new();
    moved.retain(|(_, flip)| {
        let first = !seen.contains(&flip.sample_id.as_str());
        seen.push(&flip.sample_id);
        first
    });
    moved.truncate(MOVED_SAMPLES_SHOWN);
    moved
}

fn judge_line(comparison: &Comparison) -> String {
    let Some(candidate) = comparison.runs.get(1) else {
        return String::new();
    };
    match &candidate.judge {
        None => "**Judge** (candidate run): no judge accounts recorded.\n".into(),
        Some(tally) => {
            let cost = tally
                .cost_usd
                .map_or("cost unknown (a model without a price)".into(), |c| {
                    format!("${c:.4}")
                });
            format!(
                "**Judge** (candidate run): {} model calls ({} from the cache), {} prompt + {} \
                 completion tokens, {cost}.\n",
                tally.calls, tally.cached_calls, tally.prompt_tokens, tally.completion_tokens
            )
        }
    }
}

fn reports_line(reports: &ReportLocation) -> String {
    if let Some(url) = &reports.url {
        return format!("**Reports**: {url}\n");
    }
    if reports.paths.is_empty() {
        return String::new();
    }
    let paths: Vec<String> = reports.paths.iter().map(|p| format!("`{p}`")).collect();
    format!("**Reports**: {}\n", paths.join(", "))
}

/// `text` cut to `chars` characters, with `…` where it was cut.
fn cut(text: &str, chars: usize) -> String {
    let mut shown: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunData;
    use crate::gate_spec::{GateSpec, MinimalEffect, OnMismatch};
    use crate::testing::{scores, write_run};

    #[test]
    fn the_comment_carries_marker_verdict_table_and_moved_samples() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("v1"), dir.path().join("v2"));
        write_run(&a, "d", &scores(0.0));
        let mut worse = scores(-0.1);
        // One sample falls far: it heads the moved samples.
        for (id, metric, outcome) in &mut worse {
            if id == "q7" && *metric == "faithfulness" {
                *outcome = rageval_core::Outcome::bare(0.0);
            }
        }
        write_run(&b, "d", &worse);
        let runs = [a, b].map(|p| RunData::load(&p).unwrap());
        let spec = GateSpec {
            effects: vec![MinimalEffect {
                name: "faithfulness".into(),
                effect: 0.02,
            }],
            level: 0.05,
            on_mismatch: OnMismatch::Warn,
        };
        let (comparison, gate) = crate::testing::gated(&runs, &spec);
        let md = render_gate_comment(
            &gate,
            &comparison,
            &ReportLocation {
                url: Some("https://ci.example/artifacts/1".into()),
                paths: Vec::new(),
            },
        );
        assert!(
            md.starts_with("<!-- rageval-gate -->\n**rageval gate ❌ regression:"),
            "{md}"
        );
        assert!(md.contains("| `faithfulness` | 40 |"), "{md}");
        assert!(md.contains("| **regressed** |"), "{md}");
        assert!(md.contains("| `q7` | — | `faithfulness` |"), "{md}");
        assert_eq!(md.matches("| `q").count(), MOVED_SAMPLES_SHOWN, "{md}");
        assert!(md.contains("**Judge** (candidate run): no judge accounts recorded."));
        assert!(
            md.ends_with("**Reports**: https://ci.example/artifacts/1\n"),
            "{md}"
        );
    }

    #[test]
    fn long_questions_are_cut() {
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("abc", 3), "abc");
    }
}
