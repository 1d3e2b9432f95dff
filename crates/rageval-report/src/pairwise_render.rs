//! A `pairwise` run as people read it: `report.md` ([`render_pairwise_markdown`]) — the
//! head-to-head table, the length-bias lines, Bradley–Terry strengths, the questions that
//! flipped with both reasons, the failed ones — and one line per pair for a terminal
//! ([`pairwise_line`]).

use crate::escape::escape_markdown_cell;
use crate::pairwise::{PairVerdicts, PairwiseQuestion, PairwiseSummary, VersionPair};

/// Flipped questions shown per pair, at most.
pub const FLIPS_SHOWN: usize = 20;

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "undefined".into(), |v| format!("{v:.3}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "undefined".into(), |v| format!("{:.1}%", 100.0 * v))
}

fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(String::new, |[low, high]| format!(" [{low:.3}, {high:.3}]"))
}

fn p_value(p: Option<f64>) -> String {
    p.map_or_else(
        || "undefined (every question tied)".into(),
        |p| format!("{p:.3}"),
    )
}

/// One pair in one line: wins/ties/losses, the win rate with its interval, p, the reading
/// and the flip rate.
pub fn pairwise_line(pair: &VersionPair) -> String {
    let f = &pair.figures;
    let failed = if pair.failed > 0 {
        format!(", {} failed", pair.failed)
    } else {
        String::new()
    };
    format!(
        "{} vs {}: {} wins, {} ties, {} losses (n {}{failed}); win rate {}{}, sign test p {}; \
         {}; position flips {} of decisive questions",
        pair.a,
        pair.b,
        f.wins,
        f.ties,
        f.losses,
        f.n,
        number(f.win_rate),
        interval(f.win_rate_ci95),
        p_value(f.p_value),
        f.reading.words(&pair.a, &pair.b),
        percent(f.position.flip_rate),
    )
}

/// The length-bias line of one pair.
fn length_line(pair: &VersionPair) -> String {
    let length = &pair.figures.length;
    let held = &length.held_equal;
    let held_text = match (held.win_rate, &held.undefined) {
        (Some(rate), _) => format!("{rate:.3}{}", interval(held.ci95)),
        (None, Some(why)) => format!("undefined ({why})"),
        (None, None) => "undefined".into(),
    };
    format!(
        "{a} vs {b}: {a}'s win rate where its answer is longer {} ({} questions), where \
         {b}'s is {} ({} questions), same length {}; the longer answer won {}; {a}'s win \
         rate with length held equal (logistic fit on the log length ratio) {held_text}",
        number(length.a_longer.win_rate),
        length.a_longer.questions,
        number(length.b_longer.win_rate),
        length.b_longer.questions,
        length.same_length,
        percent(length.longer_win_rate),
        a = pair.a,
        b = pair.b,
    )
}

/// `report.md` of a `pairwise` run.
pub fn render_pairwise_markdown(
    summary: &PairwiseSummary,
    questions: &[PairwiseQuestion],
) -> String {
    let names: Vec<&str> = summary.versions.iter().map(|v| v.name.as_str()).collect();
    let mut md = format!(
        "# Head to head: {}\n\n{} questions every version answered ({} with a reference \
         answer the judge saw); criterion `{}`; each pair asked in both seat orders, orders \
         that disagree count as a tie.\n\n",
        names.join(" vs "),
        summary.questions,
        summary.with_reference,
        summary.criterion,
    );
    md.push_str("| Version | Source |\n|---|---|\n");
    for version in &summary.versions {
        md.push_str(&format!(
            "| {} | {} |\n",
            escape_markdown_cell(&version.name),
            escape_markdown_cell(&version.source)
        ));
    }
    md.push_str(
        "\n## Head to head\n\n| A | B | n | wins | ties | losses | failed | win rate [95% CI] | \
         sign test p | reading | flips / decisive | flips / all | first-seat share |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for pair in &summary.pairs {
        let f = &pair.figures;
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {}{} | {} | {} | {} | {} | {} |\n",
            escape_markdown_cell(&pair.a),
            escape_markdown_cell(&pair.b),
            f.n,
            f.wins,
            f.ties,
            f.losses,
            pair.failed,
            number(f.win_rate),
            interval(f.win_rate_ci95),
            p_value(f.p_value),
            escape_markdown_cell(&f.reading.words(&pair.a, &pair.b)),
            percent(f.position.flip_rate),
            percent(f.position.flip_rate_all),
            percent(f.position.first_seat_share),
        ));
    }
    md.push_str("\n## Length bias\n\n");
    for pair in &summary.pairs {
        md.push_str(&format!("- {}\n", length_line(pair)));
    }
    if !summary.strengths.is_empty() {
        md.push_str(
            "\n## Bradley–Terry strengths\n\n| Version | log-strength [95% CI] |\n|---|---|\n",
        );
        for strength in &summary.strengths {
            md.push_str(&format!(
                "| {} | {:.3}{} |\n",
                escape_markdown_cell(&strength.name),
                strength.strength,
                interval(strength.ci95)
            ));
        }
    }
    md.push_str(&flipped_section(summary, questions));
    md.push_str(&failed_section(summary, questions));
    md.push_str(&format!(
        "\n## Judge\n\n{} model calls ({} from the cache), {} prompt and {} completion \
         tokens.\n",
        summary.judge.usage.total.calls,
        summary.judge.usage.total.cached_calls,
        summary.judge.usage.total.prompt_tokens,
        summary.judge.usage.total.completion_tokens
    ));
    md
}

fn version_name(summary: &PairwiseSummary, index: usize) -> &str {
    summary.versions.get(index).map_or("?", |v| v.name.as_str())
}

fn flipped_section(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> String {
    let flips: Vec<(&PairwiseQuestion, &PairVerdicts)> = questions
        .iter()
        .flat_map(|q| q.pairs.iter().filter(|p| p.flipped).map(move |p| (q, p)))
        .collect();
    if flips.is_empty() {
        return "\n## Questions that flipped\n\nNone: no verdict followed the seat.\n".into();
    }
    let mut md = format!(
        "\n## Questions that flipped\n\nThe two verdicts named opposite versions (the judge \
         followed the seat, not the answer): {} in all, the first {} shown.\n\n| Question | \
         A | B | with A first | with B first |\n|---|---|---|---|---|\n",
        flips.len(),
        flips.len().min(FLIPS_SHOWN)
    );
    for (question, pair) in flips.into_iter().take(FLIPS_SHOWN) {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            escape_markdown_cell(&question.question),
            escape_markdown_cell(version_name(summary, pair.a)),
            escape_markdown_cell(version_name(summary, pair.b)),
            escape_markdown_cell(pair.a_first.words()),
            escape_markdown_cell(pair.b_first.words()),
        ));
    }
    md
}

fn failed_section(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> String {
    let failed: Vec<(&PairwiseQuestion, &PairVerdicts, &str)> = questions
        .iter()
        .flat_map(|q| {
            q.pairs
                .iter()
                .filter_map(move |p| p.error().map(|error| (q, p, error)))
        })
        .collect();
    if failed.is_empty() {
        return String::new();
    }
    let mut md = format!(
        "\n## Failed\n\n{} version pairs × questions whose calls failed, left out of the \
         figures (run again with --retry-failed):\n\n| Question | A | B | error |\n\
         |---|---|---|---|\n",
        failed.len()
    );
    for (question, pair, error) in failed.into_iter().take(FLIPS_SHOWN) {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            escape_markdown_cell(&question.question),
            escape_markdown_cell(version_name(summary, pair.a)),
            escape_markdown_cell(version_name(summary, pair.b)),
            escape_markdown_cell(error),
        ));
    }
    md
}
